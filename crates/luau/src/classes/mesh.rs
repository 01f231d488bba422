//! Meshes built by scripts (Roblox reference): `AssetService:CreateEditableMesh`,
//! `AssetService:CreateMeshPartAsync` and `MeshPart:ApplyMesh`.
//!
//! The `EditableMesh` object is `procmodel_luau_types::editable_mesh`. A `MeshPart` made
//! from one carries a snapshot of its triangles in the attribute
//! [`procmodel_mesh::ATTRIBUTE`], sized to the mesh's bounding box; the glTF export draws it
//! centred on the part and stretched to the part's `Size`. The part shows the mesh as it
//! changes, as in Roblox: the host links them and rewrites the attribute of a changed mesh
//! whenever the DOM is read from outside ([`flush_meshes`]); a mesh destroyed or collected
//! first leaves its parts its last state. A MeshPart made from an asset URI
//! gets that `MeshContent` and the default size: procmodel cannot fetch assets.

use crate::context::ctx;
use crate::methods::MethodTable;
use mlua::{MultiValue, Value};
use procmodel_luau_types::content::Content;
use procmodel_luau_types::editable_mesh::{DEFAULT_BUDGET, EditableMesh, MeshBudget};
use procmodel_luau_types::{EnumItem, Vector3};
use rbx_types::{Ref, Variant};

/// The MeshParts showing an EditableMesh: (key of the mesh in the weak-valued registry table
/// [`LINKED`], the mesh's uid, the part, the mesh version it shows). The table does not keep
/// a mesh alive, so a link never holds a mesh's share of the budget; a mesh collected with
/// changes its parts have not taken leaves them in the budget's orphans.
#[derive(Default)]
struct Links {
    links: Vec<(i64, u64, Ref, u64)>,
    next: i64,
}

/// Registry key of the weak-valued table of linked meshes.
const LINKED: &str = "procmodel.mesh.linked";

fn linked_table(lua: &mlua::Lua) -> mlua::Result<mlua::Table> {
    if let Value::Table(t) = lua.named_registry_value::<Value>(LINKED)? {
        return Ok(t);
    }
    let t = lua.create_table()?;
    let meta = lua.create_table()?;
    meta.raw_set("__mode", "v")?;
    t.set_metatable(Some(meta))?;
    lua.set_named_registry_value(LINKED, t.clone())?;
    Ok(t)
}

/// Links `part` to `mesh`, which it shows as it is now.
fn link(lua: &mlua::Lua, mesh: &mlua::AnyUserData, part: Ref) -> mlua::Result<()> {
    let table = linked_table(lua)?;
    let (uid, version) = {
        let mut m = mesh.borrow_mut::<EditableMesh>()?;
        m.note_linked();
        (m.uid(), m.version())
    };
    if lua.app_data_ref::<Links>().is_none() {
        lua.set_app_data(Links::default());
    }
    let mut links = lua.app_data_mut::<Links>().expect("just set");
    links.next += 1;
    table.raw_set(links.next, mesh.clone())?;
    let key = links.next;
    links.links.push((key, uid, part, version));
    Ok(())
}

/// Writes `mesh` into `part`'s mesh attribute.
fn show(c: &mut crate::context::Ctx, part: Ref, mesh: &procmodel_mesh::TriangleMesh) {
    super::image::carry_attribute(
        c,
        part,
        procmodel_mesh::ATTRIBUTE,
        Some(mesh.to_attribute()),
    );
}

/// `copy` was made by cloning `original`: its MeshParts that stand for ones showing an
/// EditableMesh show it too (the mesh content is the same object, as in Roblox), from the
/// state their copied attribute holds.
pub(crate) fn cloned_meshes(lua: &mlua::Lua, original: Ref, copy: Ref) -> mlua::Result<()> {
    let pairs: Vec<(Value, u64, Ref, u64)> = {
        let Some(links) = lua.app_data_ref::<Links>() else {
            return Ok(());
        };
        if links.links.is_empty() {
            return Ok(());
        }
        let table = linked_table(lua)?;
        let c = ctx(lua)?;
        let mut out = Vec::new();
        for &(key, uid, part, version) in &links.links {
            if let Some(twin) = super::image::counterpart(&c.dom, original, copy, part) {
                out.push((table.raw_get::<Value>(key)?, uid, twin, version));
            }
        }
        out
    };
    let table = linked_table(lua)?;
    for (mesh, uid, twin, version) in pairs {
        if mesh.is_nil() {
            continue;
        }
        let mut links = lua.app_data_mut::<Links>().expect("read above");
        links.next += 1;
        let key = links.next;
        links.links.push((key, uid, twin, version));
        drop(links);
        table.raw_set(key, mesh)?;
    }
    Ok(())
}

/// Rewrites the mesh attribute of every linked MeshPart whose EditableMesh changed since
/// (in link order; a collected mesh by its last state), and drops the links of parts no
/// longer in the DOM, of destroyed or collected meshes and, with `forget` (the DOM is
/// replaced), all of them.
pub(crate) fn flush_meshes(lua: &mlua::Lua, forget: bool) -> mlua::Result<()> {
    let Some(mut links) = lua.app_data_mut::<Links>() else {
        return Ok(());
    };
    if links.links.is_empty() {
        return Ok(());
    }
    let orphans = lua
        .app_data_ref::<MeshBudget>()
        .map(|b| b.take_orphans())
        .unwrap_or_default();
    let table = linked_table(lua)?;
    let mut c = ctx(lua)?;
    let mut kept = Vec::new();
    for (key, uid, part, shown) in std::mem::take(&mut links.links) {
        let alive = c.dom.get_by_ref(part).is_some();
        let orphan = || {
            orphans
                .iter()
                .rev()
                .find(|(u, _)| *u == uid)
                .map(|(_, m)| m)
        };
        let Value::UserData(ud) = table.raw_get::<Value>(key)? else {
            // Collected: its last state, if its parts had not taken it.
            if let Some(last) = orphan() {
                show(&mut c, part, last);
            }
            continue;
        };
        let Ok(mut mesh) = ud.borrow_mut::<EditableMesh>() else {
            continue;
        };
        if mesh.is_destroyed() {
            // Its last state before `Destroy`, if its parts had not taken it.
            if let (true, Some(last)) = (alive, orphan()) {
                show(&mut c, part, last);
            }
        } else if alive && mesh.version() != shown {
            show(&mut c, part, &mesh.snapshot());
        }
        mesh.mark_shown();
        if forget || !alive || mesh.is_destroyed() {
            table.raw_set(key, Value::Nil)?;
        } else {
            kept.push((key, uid, part, mesh.version()));
        }
    }
    links.links = kept;
    Ok(())
}

/// The options `CreateMeshPartAsync` takes, each an item of the enum of the same name.
const FIDELITIES: [&str; 3] = ["CollisionFidelity", "RenderFidelity", "FluidFidelity"];

/// The MeshPart properties `ApplyMesh` copies besides the mesh (reference).
const APPLIED: [&str; 6] = [
    "MeshContent",
    "TextureContent",
    "CollisionFidelity",
    "RenderFidelity",
    "FluidFidelity",
    "InitialSize",
];

const CREATE_LUAU: &str = r#"
local check, apply, attribute = ...
return function(service, content, options)
    local size, mesh = check(content, options)
    local part = Instance.new("MeshPart")
    apply(part, content, options, size)
    if mesh then
        part.Size = size
        part:SetAttribute(attribute, mesh)
    end
    return part
end
"#;

const APPLY_LUAU: &str = r#"
local copy, attribute = ...
return function(target, source)
    copy(target, source)
    target:SetAttribute(attribute, source:GetAttribute(attribute))
end
"#;

fn budget(lua: &mlua::Lua) -> MeshBudget {
    if let Some(b) = lua.app_data_ref::<MeshBudget>() {
        return b.clone();
    }
    let b = MeshBudget::new(DEFAULT_BUDGET);
    lua.set_app_data(b.clone());
    b
}

/// Meshes the script dropped give their elements back when collected: a full collection
/// before the budget is said to be spent.
fn collect_dropped_meshes(lua: &mlua::Lua) -> mlua::Result<()> {
    crate::ffi::collect_garbage(lua)?;
    crate::ffi::collect_garbage(lua)
}

/// The fidelity options, checked: (property, item) pairs in [`FIDELITIES`] order.
fn options(v: &Value) -> mlua::Result<Vec<(&'static str, EnumItem)>> {
    const METHOD: &str = "CreateMeshPartAsync";
    let Some(t) = crate::methods::options_table(METHOD, 2, v, &FIDELITIES)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for name in FIDELITIES {
        if let Some(item) = crate::methods::enum_option(METHOD, name, &t.raw_get(name)?)? {
            out.push((name, item));
        }
    }
    Ok(out)
}

pub fn register(m: &mut MethodTable) {
    m.class("AssetService");
    m.add_method("CreateEditableMesh", |lua, _, a: MultiValue| {
        match a.front() {
            None | Some(Value::Nil) | Some(Value::Table(_)) => {}
            Some(other) => {
                return Err(mlua::Error::runtime(format!(
                    "invalid argument #1 to 'CreateEditableMesh' (table expected, got {})",
                    procmodel_luau_types::type_name(other)
                )));
            }
        }
        let budget = budget(lua);
        if budget.remaining() == 0 {
            collect_dropped_meshes(lua)?;
        }
        if budget.remaining() == 0 {
            // The reference: nil once the editable-memory budget is exhausted.
            return Ok(Value::Nil);
        }
        lua.create_userdata(EditableMesh::new(budget))
            .map(Value::UserData)
    });
    m.add_method("CreateEditableMeshAsync", |lua, _, a: MultiValue| {
        let arg = a.front().cloned().unwrap_or(Value::Nil);
        // The reference: FixedSize (default true) keeps the topology.
        let fixed_size = match a.get(1) {
            None | Some(Value::Nil) => true,
            Some(Value::Table(t)) => match t.raw_get::<Value>("FixedSize")? {
                Value::Nil => true,
                Value::Boolean(b) => b,
                other => {
                    return Err(mlua::Error::runtime(format!(
                        "CreateEditableMeshAsync: option FixedSize must be a boolean, got {}",
                        procmodel_luau_types::type_name(&other)
                    )));
                }
            },
            Some(other) => {
                return Err(mlua::Error::runtime(format!(
                    "invalid argument #2 to 'CreateEditableMeshAsync' (table expected, got {})",
                    procmodel_luau_types::type_name(other)
                )));
            }
        };
        match Content::from_arg(&arg) {
            Some(Content::Object(o)) => {
                let copy = || -> mlua::Result<Option<EditableMesh>> {
                    let mesh = o.0.borrow::<EditableMesh>()?;
                    if mesh.is_destroyed() {
                        return Err(mlua::Error::runtime(
                            "CreateEditableMeshAsync: the EditableMesh has been destroyed",
                        ));
                    }
                    Ok(mesh.duplicate(fixed_size))
                };
                let copy = match copy()? {
                    Some(c) => Some(c),
                    None => {
                        collect_dropped_meshes(lua)?;
                        copy()?
                    }
                };
                match copy {
                    Some(copy) => lua.create_userdata(copy).map(Value::UserData),
                    // The reference: nil once the editable-memory budget is exhausted.
                    None => Ok(Value::Nil),
                }
            }
            Some(Content::Uri(uri)) => Err(mlua::Error::runtime(format!(
                "CreateEditableMeshAsync: cannot load {uri}: procmodel does not fetch assets (build the mesh with CreateEditableMesh)"
            ))),
            Some(Content::None) => Err(mlua::Error::runtime(
                "CreateEditableMeshAsync: the Content is empty (Content.none)",
            )),
            None => Err(mlua::Error::runtime(format!(
                "invalid argument #1 to 'CreateEditableMeshAsync' (Content expected, got {})",
                procmodel_luau_types::type_name(&arg)
            ))),
        }
    });
    m.add_method("CreateMeshPartAsync", |lua, this, a: MultiValue| {
        crate::methods::call_luau_method::<_, _, Value>(
            lua,
            this,
            ("procmodel.mesh.create", "=[AssetService]", CREATE_LUAU),
            || {
                let check = lua.create_function(|lua, (content, opts): (Value, Value)| {
                    options(&opts)?;
                    let content = match Content::from_arg(&content) {
                        Some(c) => c,
                        None => {
                            return Err(mlua::Error::runtime(format!(
                                "invalid argument #1 to 'CreateMeshPartAsync' (Content expected, got {})",
                                procmodel_luau_types::type_name(&content)
                            )));
                        }
                    };
                    match content {
                        Content::None => Err(mlua::Error::runtime(
                            "CreateMeshPartAsync: the Content is empty (Content.none)",
                        )),
                        Content::Uri(_) => Ok((Value::Nil, Value::Nil)),
                        Content::Object(o) => {
                            let mesh = o.0.borrow::<EditableMesh>()?;
                            if mesh.is_destroyed() {
                                return Err(mlua::Error::runtime(
                                    "CreateMeshPartAsync: the EditableMesh has been destroyed",
                                ));
                            }
                            let snapshot = mesh.snapshot();
                            let Some((lo, hi)) = snapshot.bounds() else {
                                return Err(mlua::Error::runtime(
                                    "CreateMeshPartAsync: the EditableMesh has no triangles",
                                ));
                            };
                            let size = glam::Vec3::from(hi) - glam::Vec3::from(lo);
                            Ok((
                                mlua::IntoLua::into_lua(Vector3(size), lua)?,
                                Value::String(lua.create_string(snapshot.to_attribute())?),
                            ))
                        }
                    }
                })?;
                let apply = lua.create_function(|lua, (part, content, opts, size): (Value, Value, Value, Option<Vector3>)| {
                    let mut c = ctx(lua)?;
                    let Some(part) = c.instance(&part) else {
                        return Ok(());
                    };
                    // The mesh's own size (`MeshSize`; files keep it as `InitialSize`).
                    if let Some(Vector3(v)) = size {
                        crate::instance::store_raw(
                            &mut c,
                            &part,
                            "InitialSize",
                            Variant::Vector3(rbx_types::Vector3::new(v.x, v.y, v.z)),
                        )?;
                    }
                    match Content::from_arg(&content) {
                        Some(Content::Uri(uri)) => crate::instance::store_raw(
                            &mut c,
                            &part,
                            "MeshContent",
                            Variant::Content(rbx_types::Content::from_uri(uri)),
                        )?,
                        Some(Content::Object(o)) => {
                            // The part shows the mesh as it changes (see `flush_meshes`).
                            link(lua, &o.0, part.r)?;
                        }
                        _ => {}
                    }
                    for (name, item) in options(&opts)? {
                        crate::instance::store_raw(
                            &mut c,
                            &part,
                            name,
                            Variant::Enum(rbx_types::Enum::from_u32(item.value)),
                        )?;
                    }
                    Ok(())
                })?;
                Ok((check, apply, procmodel_mesh::ATTRIBUTE))
            },
            a,
        )
    });
    m.class("MeshPart");
    m.add_method("ApplyMesh", |lua, this, a: MultiValue| {
        crate::methods::call_luau_method::<_, _, ()>(
            lua,
            this,
            ("procmodel.mesh.apply", "=[MeshPart]", APPLY_LUAU),
            || {
                let copy = lua.create_function(|lua, (target, source): (Value, Value)| {
                    let mut c = ctx(lua)?;
                    let target = c.instance(&target).expect("called on an instance");
                    let source = match c.instance(&source) {
                        Some(s) if procmodel_dom::is_a(s.class.as_str(), "MeshPart") => s,
                        _ => {
                            return Err(mlua::Error::runtime(format!(
                                "invalid argument #1 to 'ApplyMesh' (MeshPart expected, got {})",
                                procmodel_luau_types::type_name(&source)
                            )));
                        }
                    };
                    for name in APPLIED {
                        let value = c
                            .dom
                            .get_by_ref(source.r)
                            .and_then(|i| i.properties.get(&rbx_dom_weak::ustr(name)).cloned());
                        match value {
                            Some(v) => crate::instance::store_raw(&mut c, &target, name, v)?,
                            None => crate::instance::remove_raw(&mut c, &target, name)?,
                        }
                    }
                    Ok(())
                })?;
                Ok((copy, procmodel_mesh::ATTRIBUTE))
            },
            a,
        )
    });
}
