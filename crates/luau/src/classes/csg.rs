//! Solid modelling (Roblox reference): `BasePart:UnionAsync`/`SubtractAsync`/`IntersectAsync`,
//! `GeometryService:UnionAsync`/`SubtractAsync`/`IntersectAsync` and
//! `GeometryService:SweepPartAsync` (the union of the convex hulls of the part's shape at
//! each adjacent pair of CFrames: one MeshPart at the centre of its bounds),
//! `GeometryService:FragmentAsync` (the part cut into the Voronoi cells of sites, as
//! MeshParts), `GenerateFragmentSites` and `CalculateConstraintsToPreserve` (what becomes
//! of the source's attachments and constraints).
//!
//! The inputs' solids — primitive parts by their shape, and parts carrying a procmodel mesh
//! (earlier results, script-built MeshParts) by that mesh — are combined by `procmodel_csg`
//! in the main part's space. A result is a new part without a Parent: a `UnionOperation`
//! (`IntersectOperation` for an intersection) at the centre of its bounds for the `BasePart`
//! methods; for `GeometryService`, `PartOperation`s with the main part's CFrame and their
//! triangles where the operation left them (`MeshPart`s when an input was one, centred as
//! procmodel draws MeshParts, pivoted on the main part), one per connected body unless
//! `SplitApart = false`. It carries its triangles in the attribute
//! [`procmodel_mesh::ATTRIBUTE`], like a MeshPart built from an EditableMesh: the export and
//! the studio draw it, face colours from the inputs' colours unless `UsePartColor` is set;
//! Roblox Studio, which keeps a union's geometry in data only Roblox can make, shows the
//! part and ignores the attribute. Every other property goes through the ordinary paths.

use crate::context::ctx;
use crate::methods::{MethodTable, enum_option};
use glam::{Affine3A, Vec3};
use mlua::{MultiValue, Value};
use procmodel_csg::{CsgError, DAffine3, DVec3, Solid};
use procmodel_luau_types::{EnumItem, Vector3};
use procmodel_mesh::shapes::{self, Shape};
use rbx_types::Variant;

/// The method, for the result table's fields and the properties it copies.
const CSG_LUAU: &str = r#"
local solve, attribute = ...
-- What every result takes from the main part (reference).
local COPIED = { "Color", "Material", "MaterialVariant", "Reflectance", "Transparency",
    "CanCollide", "AudioCanCollide", "Anchored", "CustomPhysicalProperties" }
return function(method, main, parts, options, collisionFidelity, renderFidelity)
    local results = solve(method, main, parts, options, collisionFidelity, renderFidelity)
    local out = {}
    for i, r in results do
        local part = Instance.new(r.Class)
        part.Name = r.Name
        for _, name in COPIED do
            part[name] = main[name]
        end
        part.Size = r.Size
        part.CFrame = r.CFrame
        if r.PivotOffset then
            part.PivotOffset = r.PivotOffset
        end
        -- Files do not keep CollisionFidelity (its write warns so): set only when it is
        -- not already the value asked for (the guide's options pass Default).
        if r.CollisionFidelity and r.CollisionFidelity ~= part.CollisionFidelity then
            part.CollisionFidelity = r.CollisionFidelity
        end
        if r.RenderFidelity then
            part.RenderFidelity = r.RenderFidelity
        end
        if r.Class == "MeshPart" then
            -- A MeshPart result shows its face colours tinted by Color (reference).
            part.Color = Color3.new(1, 1, 1)
        end
        part:SetAttribute(attribute, r.Mesh)
        if r.Index then
            -- FragmentAsync: each piece with the index of the sites it came from.
            out[i] = { Instance = part, Index = r.Index }
        else
            out[i] = part
        end
    end
    return out
end
"#;

/// `PartOperation:SubstituteGeometry(source)`: the geometry (triangles, Size, and the CFrame
/// and PivotOffset that place them, so the pivot stays where the operation put it) from
/// `source`; every other property, attribute, tag and child stays.
const SUBSTITUTE_LUAU: &str = r#"
local check, attribute = ...
return function(target, source)
    check(target, source)
    target.Size = source.Size
    target.CFrame = source.CFrame
    target.PivotOffset = source.PivotOffset
    target:SetAttribute(attribute, source:GetAttribute(attribute))
end
"#;

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Union,
    Subtract,
    Intersect,
}

/// The options of a `GeometryService` method (reference), checked.
struct Options {
    collision: Option<EnumItem>,
    render: Option<EnumItem>,
    split_apart: bool,
}

const OPTIONS: [&str; 4] = [
    "CollisionFidelity",
    "RenderFidelity",
    "FluidFidelity",
    "SplitApart",
];

fn geometry_options(method: &str, v: &Value, known: &[&str]) -> mlua::Result<Options> {
    let mut o = Options {
        collision: None,
        render: None,
        split_apart: true,
    };
    let Some(t) = crate::methods::options_table(method, 3, v, known)? else {
        return Ok(o);
    };
    o.collision = enum_option(
        method,
        "CollisionFidelity",
        &t.raw_get("CollisionFidelity")?,
    )?;
    o.render = enum_option(method, "RenderFidelity", &t.raw_get("RenderFidelity")?)?;
    enum_option(method, "FluidFidelity", &t.raw_get("FluidFidelity")?)?;
    match t.raw_get::<Value>("SplitApart")? {
        Value::Nil => {}
        Value::Boolean(b) => o.split_apart = b,
        other => {
            return Err(mlua::Error::runtime(format!(
                "{method}: SplitApart must be a boolean, got {}",
                procmodel_luau_types::type_name(&other)
            )));
        }
    }
    Ok(o)
}

/// Segments around a ball or cylinder for a `RenderFidelity` (Automatic when unset).
fn segments(render: Option<&EnumItem>) -> u32 {
    match render.map(|r| r.name) {
        Some("Precise") => 48,
        Some("Performance") => 12,
        _ => 24,
    }
}

fn to_daffine(a: &Affine3A) -> DAffine3 {
    DAffine3::from_cols_array(&a.to_cols_array().map(f64::from))
}

fn color_of(inst: &rbx_dom_weak::Instance) -> [f32; 4] {
    let v = inst
        .properties
        .get(&rbx_dom_weak::ustr("Color"))
        .or_else(|| procmodel_dom::db_default(inst.class.as_str(), "Color"));
    match v {
        Some(Variant::Color3uint8(c)) => [
            f32::from(c.r) / 255.0,
            f32::from(c.g) / 255.0,
            f32::from(c.b) / 255.0,
            1.0,
        ],
        Some(Variant::Color3(c)) => [c.r, c.g, c.b, 1.0],
        _ => [163.0 / 255.0, 162.0 / 255.0, 165.0 / 255.0, 1.0],
    }
}

fn uses_part_color(inst: &rbx_dom_weak::Instance) -> bool {
    matches!(
        inst.properties.get(&rbx_dom_weak::ustr("UsePartColor")),
        Some(Variant::Bool(true))
    )
}

/// One input part as a solid in the space `frame` (the main part's), or why it cannot be.
fn solid_of(
    c: &crate::context::Ctx,
    r: rbx_types::Ref,
    frame: &Affine3A,
    segments: u32,
    meshes_allowed: bool,
) -> Result<(Solid, bool), String> {
    let inst = c
        .dom
        .get_by_ref(r)
        .ok_or_else(|| "has been destroyed".to_owned())?;
    let class = inst.class.as_str();
    let local = frame.inverse() * procmodel_dom::part_cframe(inst);
    let size = procmodel_dom::part_size(inst);
    if !size.is_finite() || !local.is_finite() {
        return Err("has a Size or CFrame that is not finite".into());
    }
    let color = color_of(inst);
    let is_mesh_part = procmodel_dom::is_a(class, "MeshPart");
    if is_mesh_part || procmodel_dom::is_a(class, "PartOperation") {
        if class == "NegateOperation" {
            return Err("is a NegateOperation, which procmodel cannot combine".into());
        }
        if is_mesh_part && !meshes_allowed {
            return Err("is a MeshPart: BasePart's solid modelling takes Parts and unions (GeometryService's takes MeshParts)".into());
        }
        let Some(text) = procmodel_dom::drawn::mesh_text(inst) else {
            return Err(format!(
                "is a {class} without geometry procmodel can read (only the results of solid modelling and EditableMeshes made here carry it)"
            ));
        };
        let mut mesh = procmodel_mesh::TriangleMesh::from_attribute(text)
            .map_err(|e| format!("has a broken {} attribute: {e}", procmodel_mesh::ATTRIBUTE))?;
        // Placed as the export draws it: stretched to the part's Size, a MeshPart's mesh
        // centred on the part, a PartOperation's from the part's origin.
        let (offset, stretch) = mesh
            .fit(size.to_array(), is_mesh_part)
            .ok_or_else(|| "has a mesh without triangles".to_owned())?;
        let fit = Affine3A::from_scale(Vec3::from(stretch))
            * Affine3A::from_translation(-Vec3::from(offset));
        // Face colours: a union's own unless UsePartColor paints it in its Color; a
        // MeshPart's vertex colours tinted (multiplied) by its Color, as it shows them.
        let tint = if is_mesh_part {
            for c in &mut mesh.colors {
                for k in 0..3 {
                    c[k] *= color[k];
                }
            }
            None
        } else {
            uses_part_color(inst).then_some(color)
        };
        return Ok((
            Solid::from_triangle_mesh(&mesh, to_daffine(&(local * fit)), tint),
            is_mesh_part,
        ));
    }
    if !procmodel_dom::is_a(class, "BasePart") || class == "Terrain" {
        return Err(format!("is a {class}, not a part"));
    }
    let shape = match procmodel_dom::spatial::part_shape(inst) {
        procmodel_dom::spatial::PartShape::Ball => Shape::Ball,
        procmodel_dom::spatial::PartShape::Cylinder => Shape::Cylinder,
        procmodel_dom::spatial::PartShape::Wedge => Shape::Wedge,
        procmodel_dom::spatial::PartShape::CornerWedge => Shape::CornerWedge,
        procmodel_dom::spatial::PartShape::Block => Shape::Block,
    };
    let mesh = shapes::build(shape, size.max(Vec3::splat(0.001)), segments);
    Ok((Solid::from_shape(&mesh, to_daffine(&local), color), false))
}

fn csg_error(method: &str, e: CsgError) -> mlua::Error {
    mlua::Error::runtime(format!("{method}: {e}; use fewer or simpler parts"))
}

/// `solve(method, main, parts, options, collisionFidelity, renderFidelity)`: the results'
/// fields, one table per result part.
fn solve(lua: &mlua::Lua, a: MultiValue) -> mlua::Result<mlua::Table> {
    let mut args = a.into_iter();
    let method: String = match args.next() {
        Some(Value::String(s)) => s.to_str()?.to_owned(),
        _ => return Err(mlua::Error::runtime("solid modelling: no method name")),
    };
    let main_v = args.next().unwrap_or(Value::Nil);
    let parts_v = args.next().unwrap_or(Value::Nil);
    let options_v = args.next().unwrap_or(Value::Nil);
    let collision_v = args.next().unwrap_or(Value::Nil);
    let render_v = args.next().unwrap_or(Value::Nil);
    let (service, name) = method.split_once(':').unwrap_or(("", method.as_str()));
    let geometry_service = service == "GeometryService";
    let op = match name {
        "UnionAsync" => Op::Union,
        "SubtractAsync" => Op::Subtract,
        _ => Op::Intersect,
    };
    if name == "SweepPartAsync" {
        return sweep(lua, &method, &main_v, &parts_v, &options_v);
    }
    if name == "FragmentAsync" {
        return fragment(lua, &method, &main_v, &parts_v, &options_v);
    }
    let options = if geometry_service {
        geometry_options(&method, &options_v, &OPTIONS)?
    } else {
        Options {
            collision: enum_option(&method, "CollisionFidelity", &collision_v)?,
            render: enum_option(&method, "RenderFidelity", &render_v)?,
            split_apart: false,
        }
    };
    // The argument numbers as a script sees them.
    let (main_arg, parts_arg) = if geometry_service { (1, 2) } else { (0, 1) };
    let c = ctx(lua)?;
    check_capability(&c, &method)?;
    let main = part_arg(&c, name, main_arg, &main_v)?;
    let list = list_arg(name, parts_arg, &parts_v, "array of parts")?;
    let mut others = Vec::new();
    for i in 1..=list.raw_len() {
        let v: Value = list.raw_get(i)?;
        match c.instance(&v) {
            Some(p) => others.push((i, p)),
            None => {
                return Err(mlua::Error::runtime(format!(
                    "{method}: parts[{i}] is not an Instance (got {})",
                    procmodel_luau_types::type_name(&v)
                )));
            }
        }
    }
    let main_inst = c.dom.get_by_ref(main.r).ok_or_else(|| {
        mlua::Error::runtime(format!("{method}: the main part has been destroyed"))
    })?;
    let frame = procmodel_dom::part_cframe(main_inst);
    let segments = segments(options.render.as_ref());
    let describe = |r: rbx_types::Ref, what: &str, why: String| {
        mlua::Error::runtime(format!(
            "{method}: {what} ({} \"{}\") {why}",
            c.dom.get_by_ref(r).map_or("Instance", |i| i.class.as_str()),
            c.full_name(r)
        ))
    };
    let (main_solid, mut any_mesh_part) = solid_of(&c, main.r, &frame, segments, geometry_service)
        .map_err(|why| describe(main.r, "the main part", why))?;
    let mut solids = Vec::with_capacity(others.len());
    for (i, p) in &others {
        let (other, mesh_part) = solid_of(&c, p.r, &frame, segments, geometry_service)
            .map_err(|why| describe(p.r, &format!("parts[{i}]"), why))?;
        any_mesh_part |= mesh_part;
        solids.push(other);
    }
    drop(c);
    // The time limits and cancellation stop the work as they stop Luau code.
    let stopper = Stopper::new(lua);
    let stop = || stopper.stop();
    let solid = match op {
        // The other parts merged first, in a balanced order, then with the main part:
        // A ∪ B ∪ C and A − B − C are A ∪ (B ∪ C) and A − (B ∪ C).
        Op::Union => Solid::union_all(solids, &stop)
            .and_then(|others| main_solid.union_until(&others, &stop)),
        Op::Subtract => Solid::union_all(solids, &stop)
            .and_then(|others| main_solid.subtract_until(&others, &stop)),
        Op::Intersect => solids
            .iter()
            .try_fold(main_solid, |acc, other| acc.intersect_until(other, &stop)),
    }
    .map_err(|e| stopper.error(&method, e))?;
    if solid.is_empty() {
        return Err(mlua::Error::runtime(format!(
            "{method}: the result would be empty{}",
            match op {
                Op::Subtract => " (the parts subtracted cover the whole main part)",
                Op::Intersect => " (the parts do not all overlap)",
                Op::Union => "",
            }
        )));
    }
    let bodies = if options.split_apart {
        solid.split_apart()
    } else {
        vec![solid]
    };
    let (class, result_name) = match (geometry_service, any_mesh_part, op) {
        (true, true, _) => ("MeshPart", "MeshPart"),
        (true, false, _) => ("PartOperation", "PartOperation"),
        (false, _, Op::Intersect) => ("IntersectOperation", "Intersection"),
        (false, _, _) => ("UnionOperation", "Union"),
    };
    let out = lua.create_table()?;
    for (k, body) in bodies.iter().enumerate() {
        let Some((lo, hi)) = body.bounds() else {
            continue;
        };
        // GeometryService's PartOperations are in the main part's space (reference: their
        // (0, 0, 0) need not be the centre of their body): its CFrame, the triangles where
        // the operation left them. BasePart's results, and MeshParts (which procmodel
        // always draws centred), sit at the centre of their bounds; a MeshPart from
        // GeometryService keeps the main part's pivot through its PivotOffset.
        let in_main_space = geometry_service && class == "PartOperation";
        let center = if in_main_space {
            DVec3::ZERO
        } else {
            (lo + hi) * 0.5
        };
        let body = body.transformed(DAffine3::from_translation(-center));
        let mesh = body.to_triangle_mesh();
        check_mesh_limits(&method, &mesh)?;
        let size = (hi - lo).as_vec3();
        let offset = Affine3A::from_translation(center.as_vec3());
        let r = lua.create_table()?;
        r.raw_set("Class", class)?;
        r.raw_set("Name", result_name)?;
        r.raw_set("Size", Vector3(size))?;
        r.raw_set(
            "CFrame",
            crate::instance::cframe_value(lua, &(frame * offset))?,
        )?;
        if geometry_service && !in_main_space {
            r.raw_set(
                "PivotOffset",
                crate::instance::cframe_value(lua, &offset.inverse())?,
            )?;
        }
        if let Some(item) = &options.collision {
            r.raw_set("CollisionFidelity", *item)?;
        }
        if let Some(item) = &options.render {
            r.raw_set("RenderFidelity", *item)?;
        }
        r.raw_set("Mesh", lua.create_string(mesh.to_attribute())?)?;
        out.raw_set(k + 1, r)?;
    }
    Ok(out)
}

/// Refuses solid modelling to a generator sandboxed without the CSG capability.
fn check_capability(c: &crate::context::Ctx, method: &str) -> mlua::Result<()> {
    if c.csg_locked {
        return Err(mlua::Error::runtime(format!(
            "{method} needs the CSG capability: the generator is sandboxed without it (add CSG to its Capabilities)"
        )));
    }
    Ok(())
}

/// Argument `arg` of method `name`: a part, or the reference's "invalid argument" error.
fn part_arg(
    c: &crate::context::Ctx,
    name: &str,
    arg: usize,
    v: &Value,
) -> mlua::Result<crate::context::Instance> {
    c.instance(v).ok_or_else(|| {
        mlua::Error::runtime(format!(
            "invalid argument #{arg} to '{name}' (BasePart expected, got {})",
            procmodel_luau_types::type_name(v)
        ))
    })
}

/// Argument `arg` of method `name`: a table (`what` says of what).
fn list_arg<'v>(name: &str, arg: usize, v: &'v Value, what: &str) -> mlua::Result<&'v mlua::Table> {
    match v {
        Value::Table(t) => Ok(t),
        other => Err(mlua::Error::runtime(format!(
            "invalid argument #{arg} to '{name}' ({what} expected, got {})",
            procmodel_luau_types::type_name(other)
        ))),
    }
}

/// The VM's time limits and cancellation, as a `stop` for the solid operations, and the
/// error an operation's failure becomes (the limit's own message when it stopped one).
struct Stopper(Option<crate::watchdog::Probe>);

impl Stopper {
    fn new(lua: &mlua::Lua) -> Stopper {
        Stopper(
            lua.app_data_ref::<crate::watchdog::Probe>()
                .map(|p| p.clone()),
        )
    }

    fn stop(&self) -> bool {
        self.0.as_ref().is_some_and(|p| p.stop_message().is_some())
    }

    fn error(&self, method: &str, e: CsgError) -> mlua::Error {
        match (e, self.0.as_ref().and_then(|p| p.stop_message())) {
            (CsgError::Interrupted, Some(message)) => mlua::Error::runtime(message),
            (e, _) => csg_error(method, e),
        }
    }
}

/// The instance of `part` in the DOM, or an error saying it was destroyed.
fn live_part<'c>(
    c: &'c crate::context::Ctx,
    method: &str,
    part: &crate::context::Instance,
) -> mlua::Result<&'c rbx_dom_weak::Instance> {
    c.dom
        .get_by_ref(part.r)
        .ok_or_else(|| mlua::Error::runtime(format!("{method}: the part has been destroyed")))
}

/// The solid of the one part a GeometryService method works on, in the space `frame`
/// (any part, MeshParts too), or an error naming the part and why.
fn part_solid(
    c: &crate::context::Ctx,
    method: &str,
    part: &crate::context::Instance,
    frame: &Affine3A,
    segments: u32,
) -> mlua::Result<Solid> {
    solid_of(c, part.r, frame, segments, true)
        .map(|(solid, _)| solid)
        .map_err(|why| {
            mlua::Error::runtime(format!(
                "{method}: the part ({} \"{}\") {why}",
                part.class,
                c.full_name(part.r)
            ))
        })
}

/// The fields of one MeshPart result (sweeps, fragments): `body` re-centred at the centre
/// of its bounds, placed there unrotated, with the fidelities asked for.
fn mesh_part_result(
    lua: &mlua::Lua,
    method: &str,
    body: &Solid,
    collision: Option<&EnumItem>,
    render: Option<&EnumItem>,
) -> mlua::Result<Option<mlua::Table>> {
    let Some((lo, hi)) = body.bounds() else {
        return Ok(None);
    };
    let center = (lo + hi) * 0.5;
    let mesh = body
        .transformed(DAffine3::from_translation(-center))
        .to_triangle_mesh();
    check_mesh_limits(method, &mesh)?;
    let r = lua.create_table()?;
    r.raw_set("Class", "MeshPart")?;
    r.raw_set("Name", "MeshPart")?;
    r.raw_set("Size", Vector3((hi - lo).as_vec3()))?;
    r.raw_set(
        "CFrame",
        crate::instance::cframe_value(lua, &Affine3A::from_translation(center.as_vec3()))?,
    )?;
    if let Some(item) = collision {
        r.raw_set("CollisionFidelity", *item)?;
    }
    if let Some(item) = render {
        r.raw_set("RenderFidelity", *item)?;
    }
    r.raw_set("Mesh", lua.create_string(mesh.to_attribute())?)?;
    Ok(Some(r))
}

/// `GeometryService:SweepPartAsync(part, cframes, options)` (reference): the part's shape
/// placed at each CFrame, the convex hull of each adjacent pair (of the one place when
/// there is one), their union; one MeshPart at the centre of its bounds, in the part's
/// colour.
fn sweep(
    lua: &mlua::Lua,
    method: &str,
    part_v: &Value,
    cframes_v: &Value,
    options_v: &Value,
) -> mlua::Result<mlua::Table> {
    // Every option but SplitApart (a sweep is one part).
    let options = geometry_options(method, options_v, &OPTIONS[..3])?;
    let c = ctx(lua)?;
    check_capability(&c, method)?;
    let part = part_arg(&c, "SweepPartAsync", 1, part_v)?;
    let list = list_arg("SweepPartAsync", 2, cframes_v, "array of CFrames")?;
    let mut places = Vec::new();
    for i in 1..=list.raw_len() {
        let v: Value = list.raw_get(i)?;
        let Ok(cf) = lua.unpack::<procmodel_luau_types::CFrame>(v.clone()) else {
            return Err(mlua::Error::runtime(format!(
                "{method}: cframes[{i}] is not a CFrame (got {})",
                procmodel_luau_types::type_name(&v)
            )));
        };
        let placed = procmodel_dom::cframe_to_affine(&rbx_types::CFrame::from(cf));
        if !placed.is_finite() {
            return Err(mlua::Error::runtime(format!(
                "{method}: cframes[{i}] is not finite"
            )));
        }
        places.push(to_daffine(&placed));
    }
    if places.is_empty() {
        return Err(mlua::Error::runtime(format!(
            "{method}: cframes is empty (give the CFrames to sweep the part through)"
        )));
    }
    // The part's shape in its own space.
    let inst = live_part(&c, method, &part)?;
    let own = procmodel_dom::part_cframe(inst);
    // Every place adds its ball's or cylinder's rings to the hulls: Automatic sweeps use the
    // Performance tessellation, so the reference's 50-place spiral stays within a part's
    // triangles; Precise keeps the finer one.
    let segments = match options.render.as_ref().map(|r| r.name) {
        Some("Precise") => segments(options.render.as_ref()),
        _ => 12,
    };
    let shape = part_solid(&c, method, &part, &own, segments)?;
    // The hulls in the colour of most of the surface (a MeshPart's own Color is white).
    let color = shape.main_color().unwrap_or_else(|| color_of(inst));
    drop(c);
    let points = shape.points();
    let at = |place: DAffine3| points.iter().map(move |p| place.transform_point3(*p));
    let hulls: Vec<Solid> = if places.len() == 1 {
        vec![Solid::convex_hull(
            &at(places[0]).collect::<Vec<_>>(),
            color,
        )]
    } else {
        places
            .windows(2)
            .map(|pair| {
                let both: Vec<DVec3> = at(pair[0]).chain(at(pair[1])).collect();
                Solid::convex_hull(&both, color)
            })
            .filter(|h| !h.is_empty())
            .collect()
    };
    let stopper = Stopper::new(lua);
    let solid = Solid::union_all(hulls, &|| stopper.stop())
        .map_err(|e| stopper.error(method, e))?
        .merged();
    let collision = options.collision.as_ref();
    let Some(r) = mesh_part_result(lua, method, &solid, collision, options.render.as_ref())? else {
        return Err(mlua::Error::runtime(format!(
            "{method}: the sweep has no volume (the part is flat or has no geometry)"
        )));
    };
    let out = lua.create_table()?;
    out.raw_set(1, r)?;
    Ok(out)
}

/// A site of `FragmentAsync`'s list: a Vector3, finite; or why not.
fn site(lua: &mlua::Lua, v: &Value) -> Result<DVec3, String> {
    let Ok(p) = lua.unpack::<Vector3>(v.clone()) else {
        return Err(format!(
            "is not a Vector3 (got {})",
            procmodel_luau_types::type_name(v)
        ));
    };
    let p = p.0.as_dvec3();
    if p.is_finite() {
        Ok(p)
    } else {
        Err("is not finite".into())
    }
}

/// `GeometryService:FragmentAsync(part, sites, options)` (reference): the part cut into the
/// Voronoi cells of the sites; an inner array of sites is one piece (its cells merged). Each
/// piece is a MeshPart at the centre of its bounds, split into bodies unless `SplitApart =
/// false`, returned as `{ Instance = part, Index = i }` with `i` its entry in `sites`.
fn fragment(
    lua: &mlua::Lua,
    method: &str,
    part_v: &Value,
    sites_v: &Value,
    options_v: &Value,
) -> mlua::Result<mlua::Table> {
    let options = geometry_options(method, options_v, &OPTIONS)?;
    let c = ctx(lua)?;
    check_capability(&c, method)?;
    let part = part_arg(&c, "FragmentAsync", 1, part_v)?;
    let list = list_arg("FragmentAsync", 2, sites_v, "array of Vector3 sites")?;
    let mut groups: Vec<Vec<DVec3>> = Vec::new();
    let mut jagged = false;
    for i in 1..=list.raw_len() {
        let v: Value = list.raw_get(i)?;
        if let Value::Table(inner) = &v {
            jagged = true;
            let mut group = Vec::new();
            for k in 1..=inner.raw_len() {
                let w: Value = inner.raw_get(k)?;
                group.push(site(lua, &w).map_err(|why| {
                    mlua::Error::runtime(format!("{method}: sites[{i}][{k}] {why}"))
                })?);
            }
            groups.push(group);
        } else {
            groups.push(vec![site(lua, &v).map_err(|why| {
                mlua::Error::runtime(format!(
                    "{method}: sites[{i}] {why} (a site is a Vector3, or an array of them)"
                ))
            })?]);
        }
    }
    let count: usize = groups.iter().map(Vec::len).sum();
    if count == 0 {
        return Err(mlua::Error::runtime(format!(
            "{method}: sites is empty (GenerateFragmentSites makes a list for the part)"
        )));
    }
    if count > MAX_SITES {
        return Err(mlua::Error::runtime(format!(
            "{method}: {count} sites, more than the {MAX_SITES} procmodel cuts a part into"
        )));
    }
    let inst = live_part(&c, method, &part)?;
    let world = Affine3A::IDENTITY;
    let shape = part_solid(&c, method, &part, &world, segments(options.render.as_ref()))?;
    // Cut faces in the colour of most of the surface (a MeshPart's own Color is white).
    let color = shape.main_color().unwrap_or_else(|| color_of(inst));
    drop(c);
    let stopper = Stopper::new(lua);
    let stop = || stopper.stop();
    let failed = |e: CsgError| stopper.error(method, e);
    let all: Vec<(usize, DVec3)> = groups
        .iter()
        .enumerate()
        .flat_map(|(g, sites)| sites.iter().map(move |p| (g, *p)))
        .collect();
    let out = lua.create_table()?;
    let mut n = 0;
    // The entry with the most sites (the unbroken rest of a local fracture) is what the
    // others leave of the part: one subtraction, where the union of its many cells would
    // cut its faces into pieces.
    let rest = (groups.len() > 1)
        .then(|| {
            let most = groups.iter().map(Vec::len).max().unwrap_or(0);
            groups.iter().position(|g| g.len() == most)
        })
        .flatten()
        .filter(|&g| groups[g].len() > 1);
    let mut regions: Vec<Solid> = Vec::with_capacity(groups.len());
    for (g, sites) in groups.iter().enumerate() {
        if Some(g) == rest {
            regions.push(Solid::default());
            continue;
        }
        // Each site's cell: the part behind every wall to a site of another entry.
        let mut cells = Vec::new();
        for &s in sites {
            let mut cell = shape.clone();
            for &(h, t) in &all {
                if h == g || cell.is_empty() || t == s {
                    continue;
                }
                cell = cell
                    .clip_half_space((s + t) * 0.5, t - s, color, &stop)
                    .map_err(failed)?;
            }
            if !cell.is_empty() {
                cells.push(cell);
            }
        }
        regions.push(Solid::union_all(cells, &stop).map_err(failed)?.merged());
    }
    if let Some(g) = rest {
        let others = Solid::union_all(regions.clone(), &stop).map_err(failed)?;
        regions[g] = if others.is_empty() {
            shape.clone()
        } else {
            shape
                .subtract_until(&others, &stop)
                .map_err(failed)?
                .merged()
        };
    }
    for (g, (sites, region)) in groups.iter().zip(regions).enumerate() {
        if region.is_empty() {
            continue;
        }
        let bodies = if options.split_apart {
            region.split_apart()
        } else {
            vec![region]
        };
        // Reference: with a jagged list, the option applies to the pieces of several sites
        // only (the others get Hull, which files do not keep: left unset here).
        let collision = options
            .collision
            .as_ref()
            .filter(|_| !(jagged && sites.len() == 1));
        for body in bodies {
            let render = options.render.as_ref();
            let Some(r) = mesh_part_result(lua, method, &body, collision, render)? else {
                continue;
            };
            r.raw_set("Index", g + 1)?;
            n += 1;
            out.raw_set(n, r)?;
        }
    }
    Ok(out)
}

/// `GeometryService:GenerateFragmentSites(part, options)` (reference): sites for
/// `FragmentAsync` — a jittered grid through the part (its own axes), `SiteSpacing` apart
/// (about a fifth of the part's size when unset), only the points inside it. With `Origin`
/// and `Radius`, the sites within the radius one by one, and first an inner array of those
/// outside it (the unbroken rest). The jitter is seeded, so the same part gives the same sites.
fn fragment_sites(lua: &mlua::Lua, part_v: &Value, options_v: &Value) -> mlua::Result<mlua::Table> {
    const METHOD: &str = "GeometryService:GenerateFragmentSites";
    let t =
        crate::methods::options_table(METHOD, 2, options_v, &["SiteSpacing", "Origin", "Radius"])?;
    let number = |name: &str| -> mlua::Result<Option<f64>> {
        let Some(t) = &t else { return Ok(None) };
        match t.raw_get::<Value>(name)? {
            Value::Nil => Ok(None),
            Value::Integer(i) if i > 0 => Ok(Some(i as f64)),
            Value::Number(x) if x > 0.0 && x.is_finite() => Ok(Some(x)),
            other => Err(mlua::Error::runtime(format!(
                "{METHOD}: {name} must be a positive number, got {}",
                procmodel_luau_types::type_name(&other)
            ))),
        }
    };
    let spacing = number("SiteSpacing")?;
    let radius = number("Radius")?;
    let origin = match t
        .as_ref()
        .map(|t| t.raw_get::<Value>("Origin"))
        .transpose()?
    {
        None | Some(Value::Nil) => None,
        Some(v) => Some(
            site(lua, &v).map_err(|why| mlua::Error::runtime(format!("{METHOD}: Origin {why}")))?,
        ),
    };
    let area = match (origin, radius) {
        (Some(o), Some(r)) => Some((o, r)),
        (None, None) => None,
        _ => {
            return Err(mlua::Error::runtime(format!(
                "{METHOD}: give Origin and Radius together, or neither"
            )));
        }
    };
    let c = ctx(lua)?;
    let part = part_arg(&c, "GenerateFragmentSites", 1, part_v)?;
    let inst = live_part(&c, METHOD, &part)?;
    let frame = procmodel_dom::part_cframe(inst);
    let size = procmodel_dom::part_size(inst).as_dvec3();
    let shape = part_solid(&c, METHOD, &part, &Affine3A::IDENTITY, 12)?;
    drop(c);
    let step = spacing
        .or(area.map(|(_, r)| r / 2.0))
        .unwrap_or_else(|| size.max_element() / 5.0)
        .max(1e-3);
    let cells = (size / step).round().max(DVec3::ONE);
    if cells.x * cells.y * cells.z > MAX_SITES as f64 {
        return Err(mlua::Error::runtime(format!(
            "{METHOD}: SiteSpacing {step} makes more than {MAX_SITES} sites in this part; use a larger spacing"
        )));
    }
    let cell = size / cells;
    let place = to_daffine(&frame);
    let mut rng = procmodel_base::Pcg32::new(0x5eed);
    let mut sites = Vec::new();
    for z in 0..cells.z as u32 {
        for y in 0..cells.y as u32 {
            for x in 0..cells.x as u32 {
                let jitter = DVec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64()) - 0.5;
                let local = -size / 2.0
                    + (DVec3::new(f64::from(x), f64::from(y), f64::from(z)) + 0.5 + jitter * 0.6)
                        * cell;
                let p = place.transform_point3(local);
                if shape.contains(p) {
                    sites.push(p);
                }
            }
        }
    }
    if sites.is_empty() {
        sites.push(place.translation);
    }
    let out = lua.create_table()?;
    let vector = |p: DVec3| Vector3(p.as_vec3());
    match area {
        None => {
            for p in sites {
                out.raw_push(vector(p))?;
            }
        }
        Some((o, r)) => {
            let rest = lua.create_table()?;
            out.raw_push(&rest)?;
            for p in sites {
                if (p - o).length() <= r {
                    out.raw_push(vector(p))?;
                } else {
                    rest.raw_push(vector(p))?;
                }
            }
        }
    }
    Ok(out)
}

/// Options of `CalculateConstraintsToPreserve` (reference).
const PRESERVE_OPTIONS: [&str; 3] = [
    "tolerance",
    "weldConstraintPreserve",
    "dropAttachmentsWithoutConstraints",
];

/// The tolerance when the options give none: the reference names no default; this is the
/// value its solid modelling guide passes.
const PRESERVE_TOLERANCE: f64 = 0.1;

/// How far apart (studs) the boxes of a result and a welded part may be and still touch.
const TOUCHING: f64 = 1e-3;

/// The world box of a part (its CFrame and Size).
fn part_box(inst: &rbx_dom_weak::Instance) -> (DVec3, DVec3) {
    let frame = to_daffine(&procmodel_dom::part_cframe(inst));
    let half = procmodel_dom::part_size(inst).as_dvec3() / 2.0;
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for i in 0..8 {
        let corner = DVec3::new(
            if i & 1 == 0 { -half.x } else { half.x },
            if i & 2 == 0 { -half.y } else { half.y },
            if i & 4 == 0 { -half.z } else { half.z },
        );
        let p = frame.transform_point3(corner);
        lo = lo.min(p);
        hi = hi.max(p);
    }
    (lo, hi)
}

/// The gap between two boxes (0 when they overlap or touch).
fn box_gap(a: (DVec3, DVec3), b: (DVec3, DVec3)) -> f64 {
    (a.0 - b.1).max(b.0 - a.1).max(DVec3::ZERO).length()
}

/// `GeometryService:CalculateConstraintsToPreserve(source, destination, options)`
/// (reference): what to do with the attachments, constraints, WeldConstraints and
/// NoCollisionConstraints of `source` once solid modelling replaced it by the parts of
/// `destination`. An attachment of the source goes to the result whose surface is nearest
/// to it — unless its distance to that surface differs from its distance to the source's
/// surface by more than `tolerance` (the part of the surface it sat on is gone), or it has
/// no constraint and `dropAttachmentsWithoutConstraints` is true: then its parent, and its
/// constraints', is nil. A WeldConstraint or NoCollisionConstraint naming the source names
/// the result nearest the other part instead (WeldConstraints as `weldConstraintPreserve`
/// says: all, none, or those whose result touches the other part).
fn constraints_to_preserve(
    lua: &mlua::Lua,
    (source_v, destination_v, options_v): (Value, Value, Value),
) -> mlua::Result<mlua::Table> {
    const METHOD: &str = "GeometryService:CalculateConstraintsToPreserve";
    const NAME: &str = "CalculateConstraintsToPreserve";
    let options = crate::methods::options_table(METHOD, 3, &options_v, &PRESERVE_OPTIONS)?;
    let option = |name: &str| -> mlua::Result<Value> {
        options
            .as_ref()
            .map_or(Ok(Value::Nil), |t| t.raw_get::<Value>(name))
    };
    let tolerance = match option("tolerance")? {
        Value::Nil => PRESERVE_TOLERANCE,
        Value::Integer(i) if i >= 0 => i as f64,
        Value::Number(x) if x >= 0.0 && x.is_finite() => x,
        other => {
            return Err(mlua::Error::runtime(format!(
                "{METHOD}: tolerance must be a number of studs, 0 or more, got {}",
                procmodel_luau_types::type_name(&other)
            )));
        }
    };
    let welds = match option("weldConstraintPreserve")? {
        Value::Nil => "Touching",
        v => match procmodel_luau_types::FromValue::from_value(&v) {
            Some(EnumItem {
                enum_name: "WeldConstraintPreserve",
                name,
                ..
            }) => name,
            _ => {
                return Err(mlua::Error::runtime(format!(
                    "{METHOD}: weldConstraintPreserve must be an Enum.WeldConstraintPreserve item, got {}",
                    procmodel_luau_types::type_name(&v)
                )));
            }
        },
    };
    let drop_bare = match option("dropAttachmentsWithoutConstraints")? {
        Value::Nil => true,
        Value::Boolean(b) => b,
        other => {
            return Err(mlua::Error::runtime(format!(
                "{METHOD}: dropAttachmentsWithoutConstraints must be a boolean, got {}",
                procmodel_luau_types::type_name(&other)
            )));
        }
    };
    let list = list_arg(NAME, 2, &destination_v, "Array")?;
    let mut c = ctx(lua)?;
    check_capability(&c, METHOD)?;
    let source = part_arg(&c, NAME, 1, &source_v)?;
    live_part(&c, METHOD, &source)?;
    let source_solid = part_solid(&c, METHOD, &source, &Affine3A::IDENTITY, 24)?;
    let mut pieces: Vec<(rbx_types::Ref, Solid)> = Vec::new();
    for (i, v) in list.clone().sequence_values::<Value>().enumerate() {
        let v = v?;
        let piece = c.instance(&v).ok_or_else(|| {
            mlua::Error::runtime(format!(
                "{METHOD}: destination item {} is not a part ({})",
                i + 1,
                procmodel_luau_types::type_name(&v)
            ))
        })?;
        let solid = solid_of(&c, piece.r, &Affine3A::IDENTITY, 24, true).map_err(|why| {
            mlua::Error::runtime(format!(
                "{METHOD}: destination item {} ({} \"{}\") {why}",
                i + 1,
                piece.class,
                c.full_name(piece.r)
            ))
        })?;
        pieces.push((piece.r, solid.0));
    }
    let source_ref = source.r;
    let dom = &c.dom;
    let source_inst = live_part(&c, METHOD, &source)?;
    let source_frame = procmodel_dom::part_cframe(source_inst);
    // Everything that may name the source or its attachments: the tree it is in.
    let mut top = source_ref;
    while let Some(p) = dom
        .get_by_ref(top)
        .map(|i| i.parent())
        .filter(|p| p.is_some())
    {
        top = p;
    }
    let tree: Vec<rbx_types::Ref> = std::iter::once(top)
        .chain(dom.descendants_of(top).map(|i| i.referent()))
        .collect();
    let kind_of = |inst: &rbx_dom_weak::Instance| match inst.class.as_str() {
        "WeldConstraint" => 1,
        "NoCollisionConstraint" => 2,
        class if procmodel_dom::is_a(class, "Constraint") => 0,
        _ => 3,
    };
    let parent_for = |inst: &rbx_dom_weak::Instance, piece: rbx_types::Ref| {
        if inst.parent() == source_ref {
            piece
        } else {
            inst.parent()
        }
    };
    // (attachment, constraint or none, attachment parent, constraint parent)
    let mut attachments = Vec::new();
    for &a in source_inst.children() {
        let Some(att) = dom.get_by_ref(a).filter(|i| i.class == "Attachment") else {
            continue;
        };
        let p = to_daffine(&(source_frame * procmodel_dom::part_cframe(att))).translation;
        let before = source_solid.surface_distance(p);
        let mut best: Option<(rbx_types::Ref, f64)> = None;
        for (r, solid) in &pieces {
            let d = solid.surface_distance(p);
            if best.is_none_or(|(_, b)| d < b) {
                best = Some((*r, d));
            }
        }
        let kept = best
            .filter(|(_, d)| (d - before).abs() <= tolerance)
            .map_or(rbx_types::Ref::none(), |(r, _)| r);
        let constraints: Vec<&rbx_dom_weak::Instance> = tree
            .iter()
            .filter_map(|&r| dom.get_by_ref(r))
            .filter(|i| {
                kind_of(i) == 0
                    && (crate::assembly::ref_prop(i, "Attachment0") == a
                        || crate::assembly::ref_prop(i, "Attachment1") == a)
            })
            .collect();
        if constraints.is_empty() {
            let parent = if drop_bare {
                rbx_types::Ref::none()
            } else {
                kept
            };
            attachments.push((a, rbx_types::Ref::none(), parent, rbx_types::Ref::none()));
        }
        for con in constraints {
            let con_parent = if kept.is_some() {
                parent_for(con, kept)
            } else {
                rbx_types::Ref::none()
            };
            attachments.push((a, con.referent(), kept, con_parent));
        }
    }
    // (kind, constraint, parent, part0, part1)
    let mut pairs = Vec::new();
    for inst in tree.iter().filter_map(|&r| dom.get_by_ref(r)) {
        let kind = kind_of(inst);
        if kind != 1 && kind != 2 || kind == 1 && welds == "None" {
            continue;
        }
        let (p0, p1) = (
            crate::assembly::ref_prop(inst, "Part0"),
            crate::assembly::ref_prop(inst, "Part1"),
        );
        let other = match (p0 == source_ref, p1 == source_ref) {
            (true, false) => p1,
            (false, true) => p0,
            _ => continue,
        };
        let Some(other_box) = dom.get_by_ref(other).map(part_box) else {
            continue;
        };
        let mut best: Option<(rbx_types::Ref, f64)> = None;
        for (r, solid) in &pieces {
            let Some(bounds) = solid.bounds() else {
                continue;
            };
            let gap = box_gap(bounds, other_box);
            if best.is_none_or(|(_, b)| gap < b) {
                best = Some((*r, gap));
            }
        }
        let Some((piece, gap)) = best else { continue };
        if kind == 1 && welds == "Touching" && gap > TOUCHING {
            continue;
        }
        let swap = |p: rbx_types::Ref| if p == source_ref { piece } else { p };
        pairs.push((
            kind,
            inst.referent(),
            parent_for(inst, piece),
            swap(p0),
            swap(p1),
        ));
    }
    let out = lua.create_table()?;
    let handle = |c: &mut crate::context::Ctx, r: rbx_types::Ref| -> mlua::Result<Value> {
        if r.is_some() {
            c.push(r)
        } else {
            Ok(Value::Nil)
        }
    };
    for (a, con, a_parent, con_parent) in attachments {
        let t = lua.create_table()?;
        t.raw_set("Attachment", handle(&mut c, a)?)?;
        t.raw_set("Constraint", handle(&mut c, con)?)?;
        t.raw_set("AttachmentParent", handle(&mut c, a_parent)?)?;
        t.raw_set("ConstraintParent", handle(&mut c, con_parent)?)?;
        out.raw_push(t)?;
    }
    for (kind, con, parent, p0, p1) in pairs {
        let t = lua.create_table()?;
        let prefix = if kind == 1 {
            "WeldConstraint"
        } else {
            "NoCollisionConstraint"
        };
        t.raw_set(prefix, handle(&mut c, con)?)?;
        let fields = [("Parent", parent), ("Part0", p0), ("Part1", p1)];
        for (field, r) in fields {
            let v = handle(&mut c, r)?;
            t.raw_set(format!("{prefix}{field}"), v.clone())?;
            if kind == 2 {
                // The reference's guide reads these as NoCollisionParent, NoCollisionPart0
                // and NoCollisionPart1; its method page says NoCollisionConstraint...: both.
                t.raw_set(format!("NoCollision{field}"), v)?;
            }
        }
        out.raw_push(t)?;
    }
    Ok(out)
}

/// Most sites `FragmentAsync` takes (each is a cell cut from the part).
const MAX_SITES: usize = 4096;

/// A result's triangles and vertices within what a part may hold.
fn check_mesh_limits(method: &str, mesh: &procmodel_mesh::TriangleMesh) -> mlua::Result<()> {
    if mesh.triangles.len() > procmodel_mesh::MAX_TRIANGLES {
        return Err(mlua::Error::runtime(format!(
            "{method}: the result has {} triangles, more than the {} a part may have (Roblox simplifies it; procmodel does not): {}",
            mesh.triangles.len(),
            procmodel_mesh::MAX_TRIANGLES,
            if method.ends_with("SweepPartAsync") {
                "sweep through fewer CFrames (a straight run needs only its two ends)"
            } else if method.ends_with("FragmentAsync") {
                "use fewer sites in that piece"
            } else {
                "use fewer or simpler parts, or RenderFidelity Performance"
            }
        )));
    }
    if mesh.positions.len() > procmodel_mesh::MAX_VERTICES {
        return Err(mlua::Error::runtime(format!(
            "{method}: the result has {} vertices, more than the {} a part may have",
            mesh.positions.len(),
            procmodel_mesh::MAX_VERTICES
        )));
    }
    Ok(())
}

fn call(lua: &mlua::Lua, method: String, args: MultiValue) -> mlua::Result<Value> {
    let f = crate::methods::luau_function(
        lua,
        "procmodel.csg",
        "=[GeometryService]",
        CSG_LUAU,
        || {
            Ok((
                lua.create_function(|lua, a: MultiValue| solve(lua, a))?,
                procmodel_mesh::ATTRIBUTE,
            ))
        },
    )?;
    let mut all = args;
    all.push_front(Value::String(lua.create_string(&method)?));
    f.call(all)
}

pub fn register(m: &mut MethodTable) {
    m.class("BasePart");
    for name in ["UnionAsync", "SubtractAsync", "IntersectAsync"] {
        m.add_method(name, move |lua, this, a: MultiValue| {
            // part:UnionAsync(parts, collisionFidelity, renderFidelity)
            let handle = ctx(lua)?.push(this.r)?;
            let mut args = a.into_iter();
            let parts = args.next().unwrap_or(Value::Nil);
            let collision = args.next().unwrap_or(Value::Nil);
            let render = args.next().unwrap_or(Value::Nil);
            let all = MultiValue::from_iter([handle, parts, Value::Nil, collision, render]);
            let results = call(lua, format!("BasePart:{name}"), all)?;
            match results {
                Value::Table(t) => t.raw_get::<Value>(1),
                other => Ok(other),
            }
        });
    }
    m.class("PartOperation");
    m.add_method("SubstituteGeometry", |lua, this, a: MultiValue| {
        crate::methods::call_luau_method::<_, _, ()>(
            lua,
            this,
            ("procmodel.csg.substitute", "=[PartOperation]", SUBSTITUTE_LUAU),
            || {
                let check = lua.create_function(|lua, (_target, source): (Value, Value)| {
                    let c = ctx(lua)?;
                    check_capability(&c, "PartOperation:SubstituteGeometry")?;
                    let Some(src) = c.instance(&source) else {
                        return Err(mlua::Error::runtime(format!(
                            "invalid argument #1 to 'SubstituteGeometry' (PartOperation expected, got {})",
                            procmodel_luau_types::type_name(&source)
                        )));
                    };
                    let has_mesh = c.dom.get_by_ref(src.r).and_then(procmodel_dom::drawn::mesh_text).is_some();
                    if !procmodel_dom::is_a(src.class.as_str(), "PartOperation") || !has_mesh {
                        return Err(mlua::Error::runtime(format!(
                            "SubstituteGeometry: the source ({} \"{}\") is not a PartOperation made by solid modelling here",
                            src.class,
                            c.full_name(src.r)
                        )));
                    }
                    Ok(())
                })?;
                Ok((check, procmodel_mesh::ATTRIBUTE))
            },
            a,
        )
    });
    m.class("GeometryService");
    for name in ["UnionAsync", "SubtractAsync", "IntersectAsync"] {
        m.add_method(name, move |lua, _this, a: MultiValue| {
            // GeometryService:UnionAsync(part, parts, options)
            let mut args = a.into_iter();
            let main = args.next().unwrap_or(Value::Nil);
            let parts = args.next().unwrap_or(Value::Nil);
            let options = args.next().unwrap_or(Value::Nil);
            let all = MultiValue::from_iter([main, parts, options]);
            call(lua, format!("GeometryService:{name}"), all)
        });
    }
    m.add_method("FragmentAsync", |lua, _this, a: MultiValue| {
        // GeometryService:FragmentAsync(part, sites, options): { Instance, Index } per piece.
        let mut args = a.into_iter();
        let part = args.next().unwrap_or(Value::Nil);
        let sites = args.next().unwrap_or(Value::Nil);
        let options = args.next().unwrap_or(Value::Nil);
        let all = MultiValue::from_iter([part, sites, options]);
        call(lua, "GeometryService:FragmentAsync".into(), all)
    });
    m.add_method(
        "CalculateConstraintsToPreserve",
        |lua, _this, a: (Value, Value, Value)| constraints_to_preserve(lua, a),
    );
    m.add_method(
        "GenerateFragmentSites",
        |lua, _this, (part, options): (Value, Value)| fragment_sites(lua, &part, &options),
    );
    m.add_method("SweepPartAsync", |lua, _this, a: MultiValue| {
        // GeometryService:SweepPartAsync(part, cframes, options): one MeshPart.
        let mut args = a.into_iter();
        let part = args.next().unwrap_or(Value::Nil);
        let cframes = args.next().unwrap_or(Value::Nil);
        let options = args.next().unwrap_or(Value::Nil);
        let all = MultiValue::from_iter([part, cframes, options]);
        match call(lua, "GeometryService:SweepPartAsync".into(), all)? {
            Value::Table(t) => t.raw_get::<Value>(1),
            other => Ok(other),
        }
    });
}
