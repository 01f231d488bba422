//! Images drawn by scripts (Roblox reference): `AssetService:CreateEditableImage`,
//! `CreateEditableImageAsync`, and Content properties set to one
//! (`meshPart.TextureContent = Content.fromObject(image)`).
//!
//! The `EditableImage` object is `procmodel_luau_types::editable_image`. A Content property
//! set to one keeps the object (reading the property gives it back, and it stays alive while
//! the property holds it), stores none in the DOM (Roblox files cannot keep the object),
//! and the instance carries a PNG of the pixels in the attribute named after the property
//! ([`procmodel_mesh::texture::attribute_name`]: `ProcmodelTexture` for `TextureContent`).
//! The glTF export paints a MeshPart's mesh with its `ProcmodelTexture`. As with meshes,
//! the instance shows the image as it keeps changing: the host rewrites the attribute of a
//! changed image whenever the DOM is read from outside ([`flush_images`]). A copy made by
//! `Clone` shows the same image ([`cloned`]), as the property copies its object in Roblox.

use crate::context::{Ctx, ctx};
use crate::methods::MethodTable;
use mlua::{AnyUserData, MultiValue, Value};
use procmodel_luau_types::content::{Content, ObjectRef};
use procmodel_luau_types::editable_image::{DEFAULT_BUDGET, EditableImage, ImageBudget};
use rbx_dom_weak::Ustr;
use rbx_types::{Ref, Variant};

/// Content properties that do not take an image.
const NOT_IMAGES: [&str; 3] = ["MeshContent", "AudioContent", "VideoContent"];

/// Writes `text` into attribute `name` of `r` in place (its other attributes are not copied).
pub(crate) fn carry_attribute(c: &mut Ctx, r: Ref, name: &str, text: Option<String>) {
    let Some(inst) = c.dom.get_by_ref_mut(r) else {
        return;
    };
    match (inst.properties.get_mut(&crate::keys::KEYS.attributes), text) {
        (Some(Variant::Attributes(a)), Some(text)) => {
            a.insert(name.to_owned(), text.into());
        }
        (Some(Variant::Attributes(a)), None) => {
            a.remove(name);
        }
        (_, Some(text)) => {
            let mut a = rbx_types::Attributes::new();
            a.insert(name.to_owned(), text.into());
            inst.properties
                .insert(crate::keys::KEYS.attributes, Variant::Attributes(a));
        }
        (_, None) => {}
    }
}

/// The image object of a Content value, if it holds an EditableImage.
pub(crate) fn image_of(value: &Value) -> Option<AnyUserData> {
    match procmodel_luau_types::FromValue::from_value(value) {
        Some(Content::Object(ObjectRef(ud))) if ud.is::<EditableImage>() => Some(ud),
        _ => None,
    }
}

/// Sets Content property `key` of `r` to show `image` (the write path's Content case).
pub(crate) fn assign(
    c: &mut Ctx,
    r: Ref,
    class: Ustr,
    key: Ustr,
    image: AnyUserData,
) -> mlua::Result<()> {
    let attribute = procmodel_mesh::texture::attribute_name(key.as_str())
        .filter(|_| !NOT_IMAGES.contains(&key.as_str()))
        .ok_or_else(|| {
            mlua::Error::runtime(format!(
                "unable to assign property {key}: {class}.{key} does not take an EditableImage"
            ))
        })?;
    let (text, version) = {
        let i = image.borrow::<EditableImage>()?;
        let text = encoded(c, &i).ok_or_else(|| {
            mlua::Error::runtime(format!(
                "unable to assign property {key}: the EditableImage has been destroyed"
            ))
        })?;
        (text, i.version())
    };
    c.charge_bytes(text.len())?;
    if let Some(inst) = c.dom.get_by_ref_mut(r) {
        // The DOM keeps no object: files cannot.
        inst.properties
            .insert(key, Variant::Content(rbx_types::Content::none()));
    }
    carry_attribute(c, r, &attribute, Some(text));
    match c.images.position(r, key) {
        Some(i) => c.images.0[i] = (r, key, image, version),
        None => c.images.0.push((r, key, image, version)),
    }
    if c.signals.watch.any {
        crate::signals::prop_changed(c, r, key.as_str());
    }
    Ok(())
}

/// Property `key` of `r` was set to a value that is not an image: it no longer shows one.
pub(crate) fn unlink(c: &mut Ctx, r: Ref, key: Ustr) {
    if let Some(i) = c.images.position(r, key) {
        c.images.0.remove(i);
    } else {
        return;
    }
    if let Some(attribute) = procmodel_mesh::texture::attribute_name(key.as_str()) {
        carry_attribute(c, r, &attribute, None);
    }
}

/// `copy` was made by cloning `original`: its instances that stand for ones showing an image
/// show it too (a Content property copies its object, as in Roblox), from the state their
/// copied attribute holds.
pub(crate) fn cloned(c: &mut Ctx, original: Ref, copy: Ref) {
    if c.images.0.is_empty() {
        return;
    }
    let mut added = Vec::new();
    for (r, key, ud, shown) in &c.images.0 {
        if let Some(twin) = counterpart(&c.dom, original, copy, *r) {
            added.push((twin, *key, ud.clone(), *shown));
        }
    }
    c.images.0.extend(added);
}

/// The instance of `copy` (a clone of `original`, without its non-archivable instances)
/// that stands for `r`, when `r` is `original` or under it and was copied.
pub(crate) fn counterpart(
    dom: &rbx_dom_weak::WeakDom,
    original: Ref,
    copy: Ref,
    r: Ref,
) -> Option<Ref> {
    // The path from `original` down to `r`: each step's index among archivable siblings.
    let mut path = Vec::new();
    let mut at = r;
    while at != original {
        let inst = dom.get_by_ref(at)?;
        if !procmodel_dom::is_archivable(inst) {
            return None;
        }
        let parent = dom.get_by_ref(inst.parent())?;
        let index = parent
            .children()
            .iter()
            .filter(|&&s| dom.get_by_ref(s).is_some_and(procmodel_dom::is_archivable))
            .position(|&s| s == at)?;
        path.push(index);
        at = inst.parent();
    }
    let mut twin = copy;
    for &index in path.iter().rev() {
        twin = *dom.get_by_ref(twin)?.children().get(index)?;
    }
    Some(twin)
}

/// The image Content property `key` of `r` shows, as a Content value.
pub(crate) fn shown(c: &Ctx, r: Ref, key: Ustr) -> Option<Content> {
    if c.images.0.is_empty() {
        return None;
    }
    let i = c.images.position(r, key)?;
    Some(Content::Object(ObjectRef(c.images.0[i].2.clone())))
}

/// Rewrites the attribute of every instance showing an image that changed since, and drops
/// the links of instances no longer in the DOM, of destroyed images and, with `forget` (the
/// DOM is replaced), all of them. A destroyed image's instances keep what they showed.
pub(crate) fn flush_images(lua: &mlua::Lua, forget: bool) -> mlua::Result<()> {
    let mut c = ctx(lua)?;
    if c.images.0.is_empty() {
        return Ok(());
    }
    let links = std::mem::take(&mut c.images.0);
    let mut kept = Vec::new();
    for (r, key, ud, shown) in links {
        if c.dom.get_by_ref(r).is_none() {
            continue;
        }
        let Ok(image) = ud.borrow::<EditableImage>() else {
            continue;
        };
        if image.is_destroyed() {
            continue;
        }
        let version = image.version();
        if version != shown
            && let (Some(text), Some(attribute)) = (
                encoded(&mut c, &image),
                procmodel_mesh::texture::attribute_name(key.as_str()),
            )
        {
            carry_attribute(&mut c, r, &attribute, Some(text));
        }
        drop(image);
        if !forget {
            kept.push((r, key, ud, version));
        }
    }
    c.images.0 = kept;
    if forget {
        c.images.1 = None;
    }
    Ok(())
}

/// The attribute text of `image` as it is now (None once destroyed), made once per version.
fn encoded(c: &mut Ctx, image: &EditableImage) -> Option<String> {
    let key = (image.uid(), image.version());
    if let Some((k, text)) = &c.images.1
        && *k == key
    {
        return Some(text.clone());
    }
    let text = image.snapshot()?.to_attribute();
    c.images.1 = Some((key, text.clone()));
    Some(text)
}

fn budget(lua: &mlua::Lua) -> ImageBudget {
    if let Some(b) = lua.app_data_ref::<ImageBudget>() {
        return b.clone();
    }
    let b = ImageBudget::new(DEFAULT_BUDGET);
    lua.set_app_data(b.clone());
    b
}

/// Images the script dropped give their pixels back when collected: a full collection
/// before the budget is said to be spent.
fn make(
    lua: &mlua::Lua,
    new: impl Fn(&ImageBudget) -> Option<EditableImage>,
) -> mlua::Result<Value> {
    let budget = budget(lua);
    let image = match new(&budget) {
        Some(i) => Some(i),
        None => {
            crate::ffi::collect_garbage(lua)?;
            crate::ffi::collect_garbage(lua)?;
            new(&budget)
        }
    };
    match image {
        Some(i) => lua.create_userdata(i).map(Value::UserData),
        // The reference: nil once the editable-memory budget is exhausted.
        None => Ok(Value::Nil),
    }
}

pub fn register(m: &mut MethodTable) {
    m.class("AssetService");
    m.add_method("CreateEditableImage", |lua, _, a: MultiValue| {
        const F: &str = "CreateEditableImage";
        let options = a.front().cloned().unwrap_or(Value::Nil);
        let (w, h) = procmodel_luau_types::editable_image::size_option(F, &options)?;
        make(lua, |b| EditableImage::new(w, h, b))
    });
    m.add_method("CreateEditableImageAsync", |lua, _, a: MultiValue| {
        const F: &str = "CreateEditableImageAsync";
        let arg = a.front().cloned().unwrap_or(Value::Nil);
        match a.get(1) {
            None | Some(Value::Nil) | Some(Value::Table(_)) => {}
            Some(other) => {
                return Err(mlua::Error::runtime(format!(
                    "invalid argument #2 to '{F}' (table expected, got {})",
                    procmodel_luau_types::type_name(other)
                )));
            }
        }
        match Content::from_arg(&arg) {
            Some(Content::Object(o)) if o.0.is::<EditableImage>() => {
                let source = o.0.borrow::<EditableImage>()?;
                if source.is_destroyed() {
                    return Err(mlua::Error::runtime(format!(
                        "{F}: the EditableImage has been destroyed"
                    )));
                }
                make(lua, |_| source.duplicate())
            }
            Some(Content::Object(_)) => Err(mlua::Error::runtime(format!(
                "{F}: the Content holds an EditableMesh, not an image"
            ))),
            Some(Content::Uri(uri)) => Err(mlua::Error::runtime(format!(
                "{F}: cannot load {uri}: procmodel does not fetch assets (draw the image with CreateEditableImage)"
            ))),
            Some(Content::None) => Err(mlua::Error::runtime(format!(
                "{F}: the Content is empty (Content.none)"
            ))),
            None => Err(mlua::Error::runtime(format!(
                "invalid argument #1 to '{F}' (Content expected, got {})",
                procmodel_luau_types::type_name(&arg)
            ))),
        }
    });
}
