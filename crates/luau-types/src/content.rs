//! `Content`: a reference to asset content: nothing, an asset URI, or an object of the
//! script's own (`Content.fromObject(editableMesh)`, `Content.fromObject(editableImage)`).
//!
//! An object Content lives only in the VM: `AssetService:CreateMeshPartAsync` reads its
//! mesh; a property cannot hold one (Roblox files cannot keep the object either), so storing
//! one in a property is an error.

use mlua::{Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value};

use crate::args::{Args, impl_from_lua};
use crate::enums::{EnumItem, enum_item_value};

/// A Roblox `Content` value this crate can represent: `None`, a URI or an object.
#[derive(Clone, Debug, PartialEq, Eq, Default, Hash)]
pub enum Content {
    /// `Content.none` (`SourceType` None).
    #[default]
    None,
    /// An asset URI (`SourceType` Uri).
    Uri(String),
    /// `Content.fromObject` (`SourceType` Object): an `EditableMesh` or `EditableImage` of
    /// this VM.
    Object(ObjectRef),
}

/// The object of an object [`Content`]; two are equal when they are the same object.
#[derive(Clone, Debug)]
pub struct ObjectRef(pub mlua::AnyUserData);

impl PartialEq for ObjectRef {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_pointer() == other.0.to_pointer()
    }
}

impl Eq for ObjectRef {}

impl std::hash::Hash for ObjectRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_pointer().hash(state);
    }
}

impl_from_lua!(Content => "Content");

impl Content {
    /// `Content.fromUri`: an empty URI is `Content.none`, as in Roblox.
    pub fn from_uri(uri: impl Into<String>) -> Self {
        let uri = uri.into();
        if uri.is_empty() {
            Content::None
        } else {
            Content::Uri(uri)
        }
    }

    /// A `Content` argument: a Content, or a string asset URI (a ContentId, as these
    /// methods took before Roblox introduced Content, and as older scripts still pass).
    pub fn from_arg(v: &mlua::Value) -> Option<Content> {
        match v {
            mlua::Value::String(s) => Some(Content::from_uri(s.to_string_lossy())),
            other => crate::FromValue::from_value(other),
        }
    }

    fn source_type(&self) -> &'static str {
        match self {
            Content::None => "None",
            Content::Uri(_) => "Uri",
            Content::Object(_) => "Object",
        }
    }
}

impl TryFrom<Content> for rbx_types::Content {
    type Error = crate::ConvertError;
    fn try_from(c: Content) -> Result<Self, Self::Error> {
        match c {
            Content::None => Ok(rbx_types::Content::none()),
            Content::Uri(u) => Ok(rbx_types::Content::from_uri(u)),
            Content::Object(_) => Err(crate::ConvertError::message(
                "a Content made by Content.fromObject cannot be stored in a property here (Roblox \
                 files cannot keep the object); use AssetService:CreateMeshPartAsync",
            )),
        }
    }
}

impl TryFrom<&rbx_types::Content> for Content {
    type Error = crate::ConvertError;
    fn try_from(c: &rbx_types::Content) -> Result<Self, Self::Error> {
        match c.value() {
            rbx_types::ContentType::None => Ok(Content::None),
            rbx_types::ContentType::Uri(u) => Ok(Content::from_uri(u.as_str())),
            _ => Err(crate::ConvertError::message(
                "object Content values are handled by the host",
            )),
        }
    }
}

impl UserData for Content {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Content");
        f.add_field_method_get("SourceType", |lua, c| {
            match EnumItem::from_name("ContentSourceType", c.source_type()) {
                Some(item) => enum_item_value(lua, item),
                None => Ok(Value::Nil),
            }
        });
        f.add_field_method_get("Uri", |_, c| {
            Ok(match c {
                Content::Uri(u) => Some(u.clone()),
                _ => None,
            })
        });
        f.add_field_method_get("Object", |_, c| {
            Ok(match c {
                Content::Object(o) => Value::UserData(o.0.clone()),
                _ => Value::Nil,
            })
        });
        // Opaque values are never made by this crate.
        f.add_field_method_get("Opaque", |_, _| Ok(Value::Nil));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, c, ()| {
            Ok(match c {
                Content::None => String::new(),
                Content::Uri(u) => u.clone(),
                Content::Object(_) => "Object".to_owned(),
            })
        });
        crate::args::value_meta::<Content, M>(m, "Content");
    }
}

/// Installs the `Content` table: `fromUri`, `fromAssetId` and the `none` constant.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let t = lua.create_table()?;
    t.raw_set(
        "fromUri",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("fromUri", a);
            Ok(Content::from_uri(a.string(1)?))
        })?,
    )?;
    t.raw_set(
        "fromAssetId",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("fromAssetId", a);
            let id = a.number(1)?;
            if !id.is_finite() {
                return Err(a.error(1, "asset id must be finite"));
            }
            if id == 0.0 {
                return Ok(Content::None);
            }
            // `"rbxassetid://" .. tostring(id)`: integers print without a fraction.
            let text = if id.fract() == 0.0 && id.abs() < 1e15 {
                format!("{}", id as i64)
            } else {
                format!("{id}")
            };
            Ok(Content::Uri(format!("rbxassetid://{text}")))
        })?,
    )?;
    t.raw_set(
        "fromObject",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("fromObject", a);
            match a.get(1) {
                Value::UserData(ud)
                    if ud.is::<crate::editable_mesh::EditableMesh>()
                        || ud.is::<crate::editable_image::EditableImage>() =>
                {
                    Ok(Content::Object(ObjectRef(ud.clone())))
                }
                _ => Err(a.bad(1, "EditableMesh or EditableImage")),
            }
        })?,
    )?;
    t.raw_set("none", Content::None)?;
    crate::args::install_global(lua, "Content", t)
}
