//! Methods of every Instance (Roblox names and semantics): tree queries, Clone/Destroy,
//! attributes and tags, the property and attribute signals.

use crate::context::{Ctx, Instance, Lookup, ctx};
use crate::instance::{inst_mut, opt_instance, set_parent};
use crate::methods::MethodTable;
use mlua::{Lua, Value};
use procmodel_dom::is_a;
use rbx_dom_weak::Ustr;
use rbx_types::{Attributes, Ref, Tags, Variant};

fn children(c: &Ctx, r: Ref) -> Vec<Ref> {
    c.dom
        .get_by_ref(r)
        .map(|i| i.children().to_vec())
        .unwrap_or_default()
}

/// Pre-order descendants, the order Roblox's GetDescendants uses.
fn descendants(c: &Ctx, r: Ref) -> Vec<Ref> {
    let mut out = Vec::new();
    let mut stack: Vec<Ref> = children(c, r);
    stack.reverse();
    while let Some(cur) = stack.pop() {
        out.push(cur);
        if let Some(i) = c.dom.get_by_ref(cur) {
            stack.extend(i.children().iter().rev());
        }
    }
    out
}

/// Registry name of the Luau half of `IsPropertyModified`/`ResetPropertyToDefault`.
const DEFAULT_COMPARE: &str = "procmodel.default_compare";

/// Given a function making a bare instance of an instance's class: a function of (instance,
/// property, reset) that compares the property with, or sets it to, what a fresh instance of
/// the class reads — through the ordinary property paths, so derived properties (Position,
/// BrickColor, ClockTime, ...) and change signals behave as any read and write.
const DEFAULT_COMPARE_LUAU: &str = r#"
local bare = ...
return function(self, name, reset)
    local ok, fresh = pcall(Instance.new, self.ClassName)
    if not ok then
        fresh = bare(self)
    end
    local default = fresh[name]
    fresh:Destroy()
    if reset then
        if self[name] ~= default then
            self[name] = default
        end
        return nil
    end
    return self[name] ~= default
end
"#;

fn default_compare(lua: &Lua) -> mlua::Result<mlua::Function> {
    crate::methods::luau_function(
        lua,
        DEFAULT_COMPARE,
        "=[ResetPropertyToDefault]",
        DEFAULT_COMPARE_LUAU,
        || {
            lua.create_function(|lua, of: Value| {
                let mut c = ctx(lua)?;
                let class = c
                    .instance(&of)
                    .ok_or_else(|| mlua::Error::runtime("expected an Instance"))?
                    .class;
                count_new_instance(&mut c)?;
                let builder = rbx_dom_weak::InstanceBuilder::empty()
                    .with_class(class)
                    .with_name(class.as_str());
                Ok(c.create(class, builder).1)
            })
        },
    )
}

/// An enum argument as its value: an item of `Enum.<name>`, its number or its name, as
/// Roblox reads enum arguments; anything else fails in Roblox's words for argument `pos` of
/// `method` (its bare name: "invalid argument #1 to 'Resize' (Enum.NormalId expected, got
/// string)").
pub(super) fn enum_arg(
    v: &Value,
    name: &'static str,
    method: &str,
    pos: usize,
) -> mlua::Result<u32> {
    use procmodel_luau_types::ConvertError;
    match procmodel_luau_types::lua_to_variant(v, &rbx_reflection::DataType::Enum(name)) {
        Ok(rbx_types::Variant::Enum(e)) => Ok(e.to_u32()),
        // A name or number that is no item of the enum says so ("Topp is not a valid member
        // of Enum.NormalId").
        Err(ConvertError::Invalid(why)) => Err(mlua::Error::runtime(format!(
            "invalid argument #{pos} to '{method}' ({why})"
        ))),
        _ => Err(mlua::Error::runtime(format!(
            "invalid argument #{pos} to '{method}' (Enum.{name} expected, got {})",
            procmodel_luau_types::type_name(v)
        ))),
    }
}

/// A Luau array of handles to `refs`, in order.
pub(super) fn push_list(lua: &Lua, c: &mut Ctx, refs: &[Ref]) -> mlua::Result<mlua::Table> {
    let t = lua.create_table_with_capacity(refs.len(), 0)?;
    for (i, &r) in refs.iter().enumerate() {
        t.raw_set(i + 1, c.push(r)?)?;
    }
    Ok(t)
}

fn push_opt(c: &mut Ctx, r: Option<Ref>) -> mlua::Result<Value> {
    match r {
        Some(r) => c.push(r),
        None => Ok(Value::Nil),
    }
}

fn find_child(
    c: &Ctx,
    r: Ref,
    recursive: bool,
    pred: impl Fn(&rbx_dom_weak::Instance) -> bool,
) -> Option<Ref> {
    if recursive {
        descendants(c, r)
            .into_iter()
            .find(|&d| c.dom.get_by_ref(d).is_some_and(&pred))
    } else {
        children(c, r)
            .into_iter()
            .find(|&d| c.dom.get_by_ref(d).is_some_and(&pred))
    }
}

fn find_ancestor(c: &Ctx, r: Ref, pred: impl Fn(&rbx_dom_weak::Instance) -> bool) -> Option<Ref> {
    let root = c.dom.root_ref();
    let mut cur = c.dom.get_by_ref(r)?.parent();
    while cur.is_some() {
        let inst = c.dom.get_by_ref(cur)?;
        if cur != root && pred(inst) {
            return Some(cur);
        }
        cur = inst.parent();
    }
    None
}

/// True when `ancestor` is a strict ancestor of `r`.
fn is_ancestor(c: &Ctx, ancestor: Ref, r: Ref) -> bool {
    let parent = |x: Ref| {
        c.dom
            .get_by_ref(x)
            .map(|i| i.parent())
            .unwrap_or_else(Ref::none)
    };
    let mut cur = parent(r);
    while cur.is_some() {
        if cur == ancestor {
            return true;
        }
        cur = parent(cur);
    }
    false
}

fn check_limit(c: &mut Ctx, extra: usize) -> mlua::Result<()> {
    c.created += extra;
    if let Some(limit) = c.instance_limit
        && c.created > limit
    {
        return Err(mlua::Error::runtime(format!(
            "{}: a run may create at most {limit} instances (--max-instances)",
            crate::error::INSTANCE_LIMIT
        )));
    }
    c.charge_bytes(extra * crate::context::INSTANCE_BYTES)
}

pub(crate) fn count_new_instance(c: &mut Ctx) -> mlua::Result<()> {
    check_limit(c, 1)
}

/// A script's destruction of `r` by `method`: the write is checked, then [`destroy`].
pub(crate) fn destroy_as(c: &mut Ctx, r: Ref, method: &str) -> mlua::Result<()> {
    c.check_write(r, || method.into())?;
    if let Some(e) = crate::services::locked_parent(c, r) {
        return Err(e);
    }
    destroy(c, r);
    Ok(())
}

/// `Instance:Destroy()` of `r`: `Destroying` fires for `r` and its descendants, `r`'s Parent
/// is set to nil (with the events of that), and `r` and every descendant are left without
/// a parent, their Parent locked and their connections cut (Roblox: Destroy "calls
/// Destroy() on all children"). Linear in the size of the tree.
pub(crate) fn destroy(c: &mut Ctx, r: Ref) {
    if r == c.dom.root_ref() || c.dom.get_by_ref(r).is_none() {
        return;
    }
    let parent = c.dom.get_by_ref(r).map_or(Ref::none(), |i| i.parent());
    if parent.is_some() {
        c.dom.transfer_within(r, Ref::none());
    }
    let all = subtree_of(c, r);
    destroyed_tree(c, r, parent, &all);
    orphan_tree(&mut c.dom, r, &all);
    c.tree_changed();
    c.destroyed.extend(all);
}

/// The signals of destroying the tree `all` of `r`, which had `parent` (`r` already
/// detached): `Destroying`, the Parent change's events, and the connections cut.
fn destroyed_tree(c: &mut Ctx, r: Ref, parent: Ref, all: &[Ref]) {
    if !c.signals.watch.any {
        return;
    }
    crate::signals::destroying(c, r);
    if parent.is_some() {
        crate::signals::reparented(c, r, parent, Ref::none());
    }
    c.signals.cut_targets(all);
}

/// Leaves every instance of the tree `all` of the parentless `root` without a parent.
/// rbx-dom unlinks a child by a scan of its parent's children, quadratic for a wide tree, so
/// such a tree is taken out of the DOM whole and its instances put back one by one as they
/// were (same referents, names, classes and properties), parentless; a narrow one (a part
/// and its welds) is unlinked child by child.
fn orphan_tree(dom: &mut rbx_dom_weak::WeakDom, root: Ref, all: &[Ref]) {
    if all.len() <= 1 {
        return;
    }
    let scans: usize = all
        .iter()
        .filter_map(|&m| dom.get_by_ref(m))
        .map(|i| i.children().len() * i.children().len())
        .sum();
    if scans <= 8 * all.len() {
        for &m in all {
            if m != root {
                dom.transfer_within(m, Ref::none());
            }
        }
        return;
    }
    let mut kept = Vec::with_capacity(all.len());
    for &m in all {
        let Some(inst) = dom.get_by_ref_mut(m) else {
            continue;
        };
        let mut properties = std::mem::take(&mut inst.properties);
        // Put back, it would collide with the id rbx_dom_weak still counts as taken, and get
        // one made from the clock: a destroyed instance is never saved, so it goes without.
        properties.remove(&crate::keys::KEYS.unique_id);
        let name = std::mem::take(&mut inst.name);
        kept.push((m, inst.class, name, properties));
    }
    dom.destroy(root);
    for (m, class, name, properties) in kept {
        let builder =
            rbx_dom_weak::InstanceBuilder::with_property_capacity(class, properties.len())
                .with_referent(m)
                .with_name(name)
                .with_properties(properties);
        dom.insert(Ref::none(), builder);
    }
}

/// `Instance:ClearAllChildren()`: destroys every child of `r` (see [`destroy`]), each with
/// its events, in time linear in the size of the trees (and of `r`'s later siblings).
fn clear_all_children(c: &mut Ctx, r: Ref) -> mlua::Result<()> {
    c.check_write(r, || "ClearAllChildren".into())?;
    let kids = children(c, r);
    if kids.is_empty() {
        return Ok(());
    }
    for &k in &kids {
        c.check_write(k, || "ClearAllChildren".into())?;
        if let Some(e) = crate::services::locked_parent(c, k) {
            return Err(e);
        }
    }
    let parent = c.dom.get_by_ref(r).map_or(Ref::none(), |i| i.parent());
    let (later, siblings) = c.dom.get_by_ref(parent).map_or((Vec::new(), 0), |p| {
        let all = p.children();
        let at = all.iter().position(|&x| x == r).unwrap_or(all.len());
        (all[(at + 1).min(all.len())..].to_vec(), all.len())
    });
    // Unlinking the children one by one scans `r`'s children each time; taking `r`'s whole
    // tree out and putting `r` back in its place among its siblings scans those instead.
    let n = kids.len();
    let whole = r != c.dom.root_ref() && n > 16 && (later.len() + 1) * siblings < n * n / 2;
    // Each child's tree, walked once.
    let trees: Vec<Vec<Ref>> = kids.iter().map(|&k| subtree_of(c, k)).collect();
    if whole {
        // The events first, while `r` is in its place (DescendantRemoving of its ancestors).
        for (&k, tree) in kids.iter().zip(&trees) {
            destroyed_tree(c, k, r, tree);
        }
        if parent.is_some() {
            c.dom.transfer_within(r, Ref::none());
        }
        let mut all = trees.concat();
        all.push(r);
        orphan_tree(&mut c.dom, r, &all);
        if parent.is_some() {
            c.dom.transfer_within(r, parent);
            for s in later {
                c.dom.transfer_within(s, parent);
            }
        }
    } else {
        for (&k, tree) in kids.iter().zip(&trees) {
            c.dom.transfer_within(k, Ref::none());
            destroyed_tree(c, k, r, tree);
            orphan_tree(&mut c.dom, k, tree);
        }
    }
    c.tree_changed();
    c.destroyed.extend(trees.into_iter().flatten());
    Ok(())
}

/// `r` and its descendants.
fn subtree_of(c: &Ctx, r: Ref) -> Vec<Ref> {
    let mut all = descendants(c, r);
    all.push(r);
    all
}

fn attributes_of(inst: &rbx_dom_weak::Instance) -> Option<&Attributes> {
    attribute_map(inst, crate::keys::KEYS.attributes)
}

/// The attributes-typed property `key` of `inst` (its `Attributes`, a StyleRule's
/// `Properties`).
pub(super) fn attribute_map(inst: &rbx_dom_weak::Instance, key: Ustr) -> Option<&Attributes> {
    match inst.properties.get(&key) {
        Some(Variant::Attributes(a)) => Some(a),
        _ => None,
    }
}

/// Reads the attributes-typed property `key` of `this` as a script sees it: the entry
/// `name` (nil when absent), or, without a name, every entry as a table.
pub(super) fn read_attribute_map(
    lua: &Lua,
    this: &Instance,
    key: Ustr,
    name: Option<&str>,
) -> mlua::Result<Value> {
    let c = ctx(lua)?;
    c.note_state_read(*this);
    let inst = c
        .dom
        .get_by_ref(this.r)
        .ok_or_else(|| mlua::Error::runtime("instance no longer exists"))?;
    let map = attribute_map(inst, key);
    match name {
        Some(name) => match map.and_then(|a| a.get(name)) {
            Some(v) => procmodel_luau_types::variant_to_lua(lua, v, None),
            None => Ok(Value::Nil),
        },
        None => {
            let t = lua.create_table()?;
            for (k, v) in map.into_iter().flat_map(|a| a.iter()) {
                t.raw_set(
                    k.as_str(),
                    procmodel_luau_types::variant_to_lua(lua, v, None)?,
                )?;
            }
            Ok(Value::Table(t))
        }
    }
}

fn tags_of(inst: &rbx_dom_weak::Instance) -> Vec<String> {
    match inst.properties.get(&crate::keys::KEYS.tags) {
        Some(Variant::Tags(t)) => t.iter().map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

fn set_tags(inst: &mut rbx_dom_weak::Instance, tags: Vec<String>) {
    let mut t = Tags::new();
    for tag in &tags {
        t.push(tag);
    }
    inst.properties
        .insert(crate::keys::KEYS.tags, Variant::Tags(t));
}

/// Adds `tag` to `this` (Instance:AddTag, CollectionService:AddTag).
pub(crate) fn add_tag(lua: &Lua, this: &Instance, tag: String) -> mlua::Result<()> {
    let mut c = ctx(lua)?;
    c.check_write(this.r, || "AddTag".into())?;
    let inst = inst_mut(&mut c, this)?;
    let mut tags = tags_of(inst);
    if tags.contains(&tag) {
        return Ok(());
    }
    tags.push(tag.clone());
    set_tags(inst, tags);
    if c.signals.watch.any {
        crate::signals::tag_changed(&mut c, this.r, &tag, true);
        crate::signals::prop_changed(&mut c, this.r, "Tags");
    }
    Ok(())
}

/// Removes `tag` from `this`.
pub(crate) fn remove_tag(lua: &Lua, this: &Instance, tag: String) -> mlua::Result<()> {
    let mut c = ctx(lua)?;
    c.check_write(this.r, || "RemoveTag".into())?;
    let inst = inst_mut(&mut c, this)?;
    let mut tags = tags_of(inst);
    if !tags.contains(&tag) {
        return Ok(());
    }
    tags.retain(|t| *t != tag);
    set_tags(inst, tags);
    if c.signals.watch.any {
        crate::signals::tag_changed(&mut c, this.r, &tag, false);
        crate::signals::prop_changed(&mut c, this.r, "Tags");
    }
    Ok(())
}

fn class_arg(name: &str, lua_fn: &str) -> mlua::Result<()> {
    if procmodel_dom::db().classes.contains_key(name) {
        Ok(())
    } else {
        Err(mlua::Error::runtime(format!(
            "{lua_fn}: '{name}' is not a valid class name"
        )))
    }
}

pub fn register(m: &mut MethodTable) {
    m.class("Instance");
    // IsPropertyModified / ResetPropertyToDefault: against the value a fresh instance of the
    // class reads (what `Instance.new` gives; for a class scripts cannot create, a service,
    // an instance of it with no properties set).
    for (name, reset) in [
        ("IsPropertyModified", false),
        ("ResetPropertyToDefault", true),
    ] {
        m.add_method(name, move |lua, this, prop: Value| {
            let Value::String(prop) = prop else {
                return Err(mlua::Error::runtime(format!(
                    "{name}: the property name must be a string, got {}",
                    procmodel_luau_types::type_name(&prop)
                )));
            };
            let handle = {
                let mut c = ctx(lua)?;
                if !c.props.is_property(this.class, &prop.as_bytes()) {
                    return Err(mlua::Error::runtime(format!(
                        "{name}: {} is not a valid property of {}",
                        prop.to_string_lossy(),
                        this.class
                    )));
                }
                c.push(this.r)?
            };
            default_compare(lua)?.call::<Value>((handle, prop, reset))
        });
    }
    m.add_method("GetChildren", |lua, this, ()| {
        let mut c = ctx(lua)?;
        let refs = children(&c, this.r);
        c.note_lookup(this.r, &refs, Lookup::Subtree);
        push_list(lua, &mut c, &refs)
    });
    m.add_method("GetDescendants", |lua, this, ()| {
        let mut c = ctx(lua)?;
        let refs = descendants(&c, this.r);
        c.note_lookup(this.r, &refs, Lookup::Subtree);
        push_list(lua, &mut c, &refs)
    });
    m.add_method(
        "FindFirstChild",
        |lua, this, (name, recursive): (String, Option<bool>)| {
            let mut c = ctx(lua)?;
            let recursive = recursive.unwrap_or(false);
            let found = find_child(&c, this.r, recursive, |i| i.name == name)
                .or_else(|| crate::services::always_there(&mut c, this, &name));
            let how = match recursive {
                true => Lookup::Subtree,
                false => Lookup::Child(&name),
            };
            c.push_found(this.r, found, how)
        },
    );
    m.add_method("FindFirstChildOfClass", |lua, this, class: String| {
        let mut c = ctx(lua)?;
        let found = find_child(&c, this.r, false, |i| i.class == class.as_str())
            .or_else(|| crate::services::always_there(&mut c, this, &class));
        c.push_found(this.r, found, Lookup::Subtree)
    });
    m.add_method(
        "FindFirstChildWhichIsA",
        |lua, this, (class, recursive): (String, Option<bool>)| {
            class_arg(&class, "FindFirstChildWhichIsA")?;
            let mut c = ctx(lua)?;
            let found = find_child(&c, this.r, recursive.unwrap_or(false), |i| {
                is_a(&i.class, &class)
            })
            .or_else(|| crate::services::always_there(&mut c, this, &class));
            c.push_found(this.r, found, Lookup::Subtree)
        },
    );
    m.add_method("FindFirstDescendant", |lua, this, name: String| {
        let mut c = ctx(lua)?;
        let found = find_child(&c, this.r, true, |i| i.name == name);
        c.push_found(this.r, found, Lookup::Subtree)
    });
    m.add_method("FindFirstAncestor", |lua, this, name: String| {
        let mut c = ctx(lua)?;
        let found = find_ancestor(&c, this.r, |i| i.name == name);
        c.push_found(this.r, found, Lookup::Other)
    });
    m.add_method("FindFirstAncestorOfClass", |lua, this, class: String| {
        let mut c = ctx(lua)?;
        let found = find_ancestor(&c, this.r, |i| i.class == class.as_str());
        c.push_found(this.r, found, Lookup::Other)
    });
    m.add_method("FindFirstAncestorWhichIsA", |lua, this, class: String| {
        class_arg(&class, "FindFirstAncestorWhichIsA")?;
        let mut c = ctx(lua)?;
        let found = find_ancestor(&c, this.r, |i| is_a(&i.class, &class));
        c.push_found(this.r, found, Lookup::Other)
    });
    // The Actor this instance is, or its nearest Actor ancestor.
    m.add_method("GetActor", |lua, this, ()| {
        let mut c = ctx(lua)?;
        let found = if is_a(&this.class, "Actor") {
            Some(this.r)
        } else {
            find_ancestor(&c, this.r, |i| is_a(&i.class, "Actor"))
        };
        push_opt(&mut c, found)
    });
    m.add_method("IsA", |_, this, class: String| {
        Ok(is_a(&this.class, &class))
    });
    m.add_method("IsDescendantOf", |lua, this, other: Value| {
        let c = ctx(lua)?;
        Ok(opt_instance(&c, &other)?.is_some_and(|o| is_ancestor(&c, o.r, this.r)))
    });
    m.add_method("IsAncestorOf", |lua, this, other: Value| {
        let c = ctx(lua)?;
        Ok(opt_instance(&c, &other)?.is_some_and(|o| is_ancestor(&c, this.r, o.r)))
    });
    m.add_method("GetFullName", |lua, this, ()| {
        Ok(ctx(lua)?.full_name(this.r))
    });
    m.add_method("Clone", |lua, this, ()| {
        let mut c = ctx(lua)?;
        // Not archivable: nothing is cloned. Non-archivable descendants are left out.
        if !c
            .dom
            .get_by_ref(this.r)
            .is_some_and(procmodel_dom::is_archivable)
        {
            return Ok(Value::Nil);
        }
        let mut subtree = descendants(&c, this.r);
        subtree.push(this.r);
        check_limit(&mut c, subtree.len())?;
        // The copy's text (names, strings, attributes) counts as a write of it would.
        let text: usize = subtree
            .iter()
            .filter_map(|&r| c.dom.get_by_ref(r))
            .map(|i| {
                let props = i.properties.values().map(crate::context::text_bytes);
                i.name.len() + props.sum::<usize>()
            })
            .sum();
        c.charge_bytes(text)?;
        let copy = procmodel_dom::clone_archivable(&mut c.dom, this.r);
        if c.handles.in_run() {
            let mut copies = Vec::with_capacity(subtree.len());
            procmodel_dom::preorder(&c.dom, &[copy], |r, _| {
                copies.push(r);
                true
            });
            c.handles.note_cloned(copies);
        }
        crate::classes::image::cloned(&mut c, this.r, copy);
        if subtree.iter().any(|&r| {
            c.dom
                .get_by_ref(r)
                .is_some_and(|i| crate::assembly::joins_rigidly(i.class.as_str()))
        }) {
            crate::assembly::note_joints(&mut c, copy);
        }
        let value = c.push(copy);
        drop(c);
        crate::classes::cloned_meshes(lua, this.r, copy)?;
        value
    });
    m.add_method("Destroy", |lua, this, ()| {
        destroy_as(&mut *ctx(lua)?, this.r, "Destroy")
    });
    m.add_method("ClearAllChildren", |lua, this, ()| {
        clear_all_children(&mut *ctx(lua)?, this.r)
    });
    m.add_method("GetAttribute", |lua, this, name: String| {
        read_attribute_map(lua, this, crate::keys::KEYS.attributes, Some(&name))
    });
    m.add_method("GetAttributes", |lua, this, ()| {
        read_attribute_map(lua, this, crate::keys::KEYS.attributes, None)
    });
    m.add_method(
        "SetAttribute",
        |lua, this, (name, value): (String, Value)| {
            procmodel_luau_types::validate_attribute_name(&name)
                .map_err(|e| mlua::Error::runtime(format!("SetAttribute: {e}")))?;
            let variant =
                match value {
                    Value::Nil => None,
                    ref v => Some(procmodel_luau_types::lua_to_attribute(v).map_err(|e| {
                        mlua::Error::runtime(format!("SetAttribute \"{name}\": {e}"))
                    })?),
                };
            let mut c = ctx(lua)?;
            c.check_write(this.r, || "SetAttribute".into())?;
            // Text counts towards the output limit as a string property's does (a mesh's
            // attribute can be megabytes).
            if let Some(v) = &variant {
                c.charge_text(v)?;
            }
            let flag = c.managed_flag(this.class);
            let listens = c.signals.watch.any
                && c.signals
                    .watch
                    .listens(this.r, crate::signals::ATTRIBUTE_KINDS);
            let inst = inst_mut(&mut c, this)?;
            let mut attrs = attributes_of(inst).cloned().unwrap_or_default();
            let old = match variant {
                Some(v) => attrs.insert(name.clone(), v),
                None => attrs.remove(name.as_str()),
            };
            // Roblox fires the change signals only for a change.
            let changed = listens && old.as_ref() != attrs.get(name.as_str());
            inst.properties
                .insert(crate::keys::KEYS.attributes, Variant::Attributes(attrs));
            if let Some(flag) = flag {
                // An input of the managed class changed: it is processed at the next frame.
                inst.properties.insert(flag, Variant::Bool(true));
            }
            if changed {
                crate::signals::attribute_changed(&mut c, this.r, &name);
            }
            Ok(())
        },
    );
    m.add_method("Remove", |lua, this, ()| {
        let mut c = ctx(lua)?;
        set_parent(&mut c, this.r, Ref::none())
    });
    // The deprecated lower-case spellings Roblox still accepts.
    for (old, new) in [
        ("clearAllChildren", "ClearAllChildren"),
        ("children", "GetChildren"),
        ("getChildren", "GetChildren"),
        ("clone", "Clone"),
        ("destroy", "Destroy"),
        ("remove", "Remove"),
        ("isA", "IsA"),
        ("isDescendantOf", "IsDescendantOf"),
        ("isAncestorOf", "IsAncestorOf"),
        ("findFirstChild", "FindFirstChild"),
        ("getFullName", "GetFullName"),
        ("getService", "GetService"),
        ("findFirstChildOfClass", "FindFirstChildOfClass"),
        ("findFirstAncestor", "FindFirstAncestor"),
        ("service", "GetService"),
    ] {
        m.alias(old, new);
    }
    m.add_method("GetPropertyChangedSignal", |lua, this, name: String| {
        crate::signals::property_signal(lua, this, &name)
    });
    m.add_method("GetAttributeChangedSignal", |lua, this, name: String| {
        crate::signals::attribute_signal(lua, this, &name)
    });
}
