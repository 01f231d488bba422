//! Spatial queries of WorldRoot (`Workspace`, `WorldModel`): `Raycast`,
//! `GetPartBoundsInBox`, `GetPartBoundsInRadius`, `GetPartsInPart`, the deprecated
//! `FindPartOnRay*`, `FindPartsInRegion3*` and `IsRegion3Empty*` old scripts use, the shape
//! casts (`Spherecast`, `Blockcast`, `Shapecast`), `ArePartsTouchingOthers`, `BulkMoveTo`, `BasePart:GetTouchingParts`, `GetMass` and `GetClosestPointOnSurface`, and
//! `Model:MoveTo` (which climbs over what is in the way); with the `RaycastParams`,
//! `OverlapParams` and `RaycastResult` datatypes they take and give.
//!
//! Rules (Roblox reference, WorldRoot and the two params datatypes):
//! - A query sees the BaseParts under its WorldRoot, in pre-order (results keep that
//!   order; ties go to the earlier part); parts under a nested WorldModel belong to that
//!   world. `workspace` queries see `workspace.Terrain`'s voxels too.
//! - A part is queried when `CanCollide` or `CanQuery` is true (`RespectCanCollide`: when
//!   `CanCollide` is); `BruteForceAllSlow` queries every part. A part whose collision group
//!   does not collide with the query's `CollisionGroup` is not seen (`physics.rs`).
//! - `FilterDescendantsInstances` with `FilterType` Exclude (default) or Include acts on the
//!   listed instances and their descendants; Terrain counts as a descendant of `workspace`.
//!   The newer `ExcludeInstances` and `IncludeInstances` (each nil by default) filter on
//!   top of that: an instance under one listed in `ExcludeInstances` is never seen, and
//!   when `IncludeInstances` is an array only instances under one listed in it are (an
//!   empty array includes nothing). Exclusion wins over inclusion.
//! - `OverlapParams.Tolerance` (clamped to 0–0.05 studs) grows the box of
//!   `GetPartBoundsInBox` by it on every side and the radius of `GetPartBoundsInRadius`.
//! - Rays detect the surfaces they enter: a ray starting inside a part does not hit it.
//!   The direction's length is the ray's length, at most 15,000 studs (longer ones are cut).
//! - Geometry: `procmodel_dom::spatial` (part shapes, AABBs, exact overlap); terrain:
//!   `procmodel_terrain`'s raycast (the meshes' 0.5 level of the occupancy).
//! - Speed, not rules: a query of a world in the scene goes through that world's index
//!   (`query_index.rs`) while nothing was written to the scene since it was built, and
//!   walks the world otherwise; both give the same parts in the same order (the index only
//!   narrows down which parts get the exact tests).
//! - In a generation, a query of the scene is watched like a write outside the
//!   container ([`Ctx::scene_query`]): its answer depends on more than the run's inputs. The
//!   model's current results (which the run replaces) are not seen.

use crate::context::{Ctx, Instance, ctx};
use crate::methods::MethodTable;
use mlua::{
    FromLua, Lua, MetaMethod, MultiValue, Table, UserData, UserDataFields, UserDataMethods, Value,
};
use procmodel_dom::is_a;
use procmodel_dom::spatial::{Body, body, box_overlaps_aabb, overlaps, sphere_overlaps_aabb};
use procmodel_luau_types::{CFrame, EnumItem, Ray, Region3, Vector3, enum_item_value};
use procmodel_terrain::TerrainRay;
use rbx_dom_weak::Ustr;
use rbx_types::{Ref, Variant};
use rustc_hash::FxHashSet;
use std::sync::LazyLock;

/// Roblox's cap on a ray's length (studs).
const MAX_RAY: f32 = 15_000.0;
/// `FindPartsInRegion3`'s default `maxParts`.
const REGION3_MAX_PARTS: u32 = 20;

struct Keys {
    can_collide: Ustr,
    can_query: Ustr,
}

static KEYS: LazyLock<Keys> = LazyLock::new(|| Keys {
    can_collide: Ustr::from("CanCollide"),
    can_query: Ustr::from("CanQuery"),
});

/// How many times `Model:MoveTo` lifts a model over what is in its way before it stops.
const MOVE_TO_STEPS: usize = 256;

/// Which of the two params datatypes a [`QueryParams`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Raycast,
    Overlap,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Raycast => "RaycastParams",
            Kind::Overlap => "OverlapParams",
        }
    }
}

/// `RaycastParams` and `OverlapParams`: mutable objects a script fills and reuses.
#[derive(Clone, Debug)]
pub struct QueryParams {
    kind: Kind,
    filter: Vec<Ref>,
    include: bool,
    ignore_water: bool,
    collision_group: String,
    respect_can_collide: bool,
    brute_force: bool,
    /// OverlapParams only; 0 is no limit.
    max_parts: u32,
    /// `ExcludeInstances` and `IncludeInstances`: None while nil.
    exclude: Option<Vec<Ref>>,
    include_only: Option<Vec<Ref>>,
    /// OverlapParams only, 0–0.05 studs.
    tolerance: f32,
}

impl QueryParams {
    fn new(kind: Kind) -> QueryParams {
        QueryParams {
            kind,
            filter: Vec::new(),
            include: false,
            ignore_water: false,
            collision_group: "Default".into(),
            respect_can_collide: false,
            brute_force: false,
            max_parts: 0,
            exclude: None,
            include_only: None,
            tolerance: 0.0,
        }
    }

    /// The settings of the deprecated methods' ignore and inclusion lists.
    fn list(filter: Vec<Ref>, include: bool) -> QueryParams {
        QueryParams {
            filter,
            include,
            ..QueryParams::new(Kind::Raycast)
        }
    }

    fn member_error(&self, key: &str) -> mlua::Error {
        mlua::Error::runtime(format!(
            "{key} is not a valid member of {}",
            self.kind.name()
        ))
    }
}

/// Reads a list of instances (an Instance or an array of them, up to the first nil) for
/// `what`; anything else in it is an error naming its index.
pub(super) fn instance_list(
    c: &Ctx,
    v: &Value,
    what: &str,
    single: bool,
) -> mlua::Result<Vec<Ref>> {
    if single && let Some(i) = c.instance(v) {
        return Ok(vec![i.r]);
    }
    let Value::Table(t) = v else {
        return Err(mlua::Error::runtime(format!(
            "{what}: expected {}an array of Instances, got {}",
            if single { "an Instance or " } else { "" },
            procmodel_luau_types::type_name(v)
        )));
    };
    let mut out = Vec::new();
    for (k, item) in t.clone().sequence_values::<Value>().enumerate() {
        let item = item?;
        match c.instance(&item) {
            Some(i) => out.push(i.r),
            None => {
                return Err(mlua::Error::runtime(format!(
                    "{what}: item {} is a {}, expected an Instance",
                    k + 1,
                    procmodel_luau_types::type_name(&item)
                )));
            }
        }
    }
    Ok(out)
}

fn filter_type_item(include: bool) -> EnumItem {
    EnumItem::from_name(
        "RaycastFilterType",
        if include { "Include" } else { "Exclude" },
    )
    .expect("the database has RaycastFilterType")
}

/// The Luau object of a [`QueryParams`]: `Params<false>` is a `RaycastParams`,
/// `Params<true>` an `OverlapParams` (`typeof` tells them apart).
struct Params<const OVERLAP: bool>(QueryParams);

impl<const OVERLAP: bool> std::ops::Deref for Params<OVERLAP> {
    type Target = QueryParams;
    fn deref(&self) -> &QueryParams {
        &self.0
    }
}

impl<const OVERLAP: bool> std::ops::DerefMut for Params<OVERLAP> {
    fn deref_mut(&mut self) -> &mut QueryParams {
        &mut self.0
    }
}

impl<const OVERLAP: bool> UserData for Params<OVERLAP> {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field_with(MetaMethod::Type, |_| {
            Ok(if OVERLAP {
                "OverlapParams"
            } else {
                "RaycastParams"
            })
        });
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method_mut("AddToFilter", |lua, this, v: Value| {
            let c = ctx(lua)?;
            let what = format!("{}:AddToFilter", this.kind.name());
            let refs = instance_list(&c, &v, &what, true)?;
            this.filter.extend(refs);
            Ok(())
        });
        m.add_meta_method(MetaMethod::Index, |lua, this, key: String| {
            Ok(match key.as_str() {
                "FilterDescendantsInstances" => live_list(lua, &this.filter)?,
                "FilterType" => enum_item_value(lua, filter_type_item(this.include))?,
                "ExcludeInstances" => match &this.exclude {
                    Some(list) => live_list(lua, list)?,
                    None => Value::Nil,
                },
                "IncludeInstances" => match &this.include_only {
                    Some(list) => live_list(lua, list)?,
                    None => Value::Nil,
                },
                "Tolerance" if this.kind == Kind::Overlap => Value::Number(this.tolerance.into()),
                "IgnoreWater" if this.kind == Kind::Raycast => Value::Boolean(this.ignore_water),
                "CollisionGroup" => Value::String(lua.create_string(&this.collision_group)?),
                "RespectCanCollide" => Value::Boolean(this.respect_can_collide),
                "BruteForceAllSlow" => Value::Boolean(this.brute_force),
                "MaxParts" if this.kind == Kind::Overlap => Value::Number(this.max_parts.into()),
                _ => return Err(this.member_error(&key)),
            })
        });
        m.add_meta_method_mut(
            MetaMethod::NewIndex,
            |lua, this, (key, v): (String, Value)| {
                let name = this.kind.name();
                let bad = |expected: &str| {
                    mlua::Error::runtime(format!(
                        "{name}.{key}: expected {expected}, got {}",
                        procmodel_luau_types::type_name(&v)
                    ))
                };
                match key.as_str() {
                    "FilterDescendantsInstances" => {
                        let c = ctx(lua)?;
                        this.0.filter = instance_list(&c, &v, &format!("{name}.{key}"), false)?;
                    }
                    "ExcludeInstances" | "IncludeInstances" => {
                        let list = match v {
                            Value::Nil => None,
                            _ => {
                                let c = ctx(lua)?;
                                Some(instance_list(&c, &v, &format!("{name}.{key}"), false)?)
                            }
                        };
                        match key.as_str() {
                            "ExcludeInstances" => this.exclude = list,
                            _ => this.include_only = list,
                        }
                    }
                    "Tolerance" if this.kind == Kind::Overlap => {
                        let n = number_arg(&v)
                            .filter(|n| !n.is_nan())
                            .ok_or_else(|| bad("a number"))?;
                        this.tolerance = n.clamp(0.0, 0.05) as f32;
                    }
                    "FilterType" => {
                        let item = procmodel_luau_types::lua_to_variant(
                            &v,
                            &rbx_reflection::DataType::Enum("RaycastFilterType"),
                        )
                        .map_err(|e| mlua::Error::runtime(format!("{name}.{key}: {e}")))?;
                        let Variant::Enum(e) = item else {
                            return Err(bad("an Enum.RaycastFilterType item"));
                        };
                        // Exclude (and the legacy Blacklist) is 0, Include (Whitelist) 1.
                        this.include = e.to_u32() == 1;
                    }
                    "IgnoreWater" if this.kind == Kind::Raycast => {
                        this.ignore_water = bool_arg(&v).ok_or_else(|| bad("a boolean"))?;
                    }
                    "RespectCanCollide" => {
                        this.respect_can_collide = bool_arg(&v).ok_or_else(|| bad("a boolean"))?;
                    }
                    "BruteForceAllSlow" => {
                        this.brute_force = bool_arg(&v).ok_or_else(|| bad("a boolean"))?;
                    }
                    "CollisionGroup" => match &v {
                        Value::String(s) => this.collision_group = s.to_str()?.to_string(),
                        _ => return Err(bad("a string")),
                    },
                    "MaxParts" if this.kind == Kind::Overlap => {
                        let n = number_arg(&v).ok_or_else(|| bad("a number"))?;
                        if !(n.is_finite() && n >= 0.0) {
                            return Err(mlua::Error::runtime(format!(
                                "{name}.MaxParts must be a non-negative number, got {n}"
                            )));
                        }
                        this.max_parts = n.min(f64::from(u32::MAX)) as u32;
                    }
                    _ => return Err(this.member_error(&key)),
                }
                Ok(())
            },
        );
        m.add_meta_method(MetaMethod::ToString, |_, this, ()| {
            Ok(format!(
                "{}{{FilterType={}, FilterDescendantsInstances={} instances, CollisionGroup={}, RespectCanCollide={}}}",
                this.kind.name(),
                filter_type_item(this.include).name,
                this.filter.len(),
                this.collision_group,
                this.respect_can_collide
            ))
        });
    }
}

fn number_arg(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(n) => Some(*n),
        _ => None,
    }
}

/// A Luau array of handles to the instances of `list` that still exist (destroyed ones drop
/// out of a params list).
fn live_list(lua: &Lua, list: &[Ref]) -> mlua::Result<Value> {
    let mut c = ctx(lua)?;
    let t = lua.create_table_with_capacity(list.len(), 0)?;
    for &r in list {
        if c.dom.get_by_ref(r).is_some() {
            t.raw_push(c.push(r)?)?;
        }
    }
    Ok(Value::Table(t))
}

fn bool_arg(v: &Value) -> Option<bool> {
    match v {
        Value::Boolean(b) => Some(*b),
        _ => None,
    }
}

/// What a ray hit: a part or the Terrain.
#[derive(Clone, Debug)]
struct Hit {
    instance: Ref,
    position: glam::Vec3,
    normal: glam::Vec3,
    /// `Enum.Material` value.
    material: u32,
    distance: f32,
    /// The fraction of the cast's direction travelled (what the nearest hit is chosen by).
    t: f32,
}

impl Hit {
    /// A part's hit, the cast's direction `len` studs long.
    fn part(c: &Ctx, r: Ref, h: &procmodel_dom::spatial::RayHit, len: f32) -> Hit {
        Hit {
            instance: r,
            position: h.position,
            normal: h.normal,
            material: c
                .dom
                .get_by_ref(r)
                .map_or(256, crate::assembly::part_material),
            distance: h.t * len,
            t: h.t,
        }
    }

    /// A terrain cell's hit at `t`, the cast's direction `len` studs long.
    fn terrain(
        terrain: Ref,
        t: f32,
        position: glam::Vec3,
        normal: glam::Vec3,
        material: procmodel_terrain::Material,
        len: f32,
    ) -> Hit {
        Hit {
            instance: terrain,
            position,
            normal,
            material: u32::from(material.enum_value()),
            distance: t * len,
            t,
        }
    }

    /// Keeps `hit` in `best` when it is strictly nearer (ties go to the earlier one).
    fn keep_nearer(best: &mut Option<Hit>, hit: Hit) {
        if best.as_ref().is_none_or(|b| hit.t < b.t) {
            *best = Some(hit);
        }
    }
}

/// `RaycastResult`: read-only.
struct RaycastResult(Hit);

impl UserData for RaycastResult {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field_with(MetaMethod::Type, |_| Ok("RaycastResult"));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::Index, |lua, this, key: String| {
            let h = &this.0;
            Ok(match key.as_str() {
                "Instance" => {
                    let mut c = ctx(lua)?;
                    if c.dom.get_by_ref(h.instance).is_some() {
                        c.push(h.instance)?
                    } else {
                        Value::Nil
                    }
                }
                "Position" => Vector3(h.position).value(),
                "Normal" => Vector3(h.normal).value(),
                "Material" => material_value(lua, h.material)?,
                "Distance" => Value::Number(f64::from(h.distance)),
                _ => {
                    return Err(mlua::Error::runtime(format!(
                        "{key} is not a valid member of RaycastResult"
                    )));
                }
            })
        });
        m.add_meta_method(MetaMethod::NewIndex, |_, _, (key, _): (String, Value)| {
            Err::<(), _>(mlua::Error::runtime(format!(
                "{key} cannot be assigned to: RaycastResult is read-only"
            )))
        });
        m.add_meta_method(MetaMethod::ToString, |lua, this, ()| {
            let h = &this.0;
            let name = ctx(lua)?
                .dom
                .get_by_ref(h.instance)
                .map(|i| i.name.clone())
                .unwrap_or_default();
            let material = EnumItem::from_value("Material", h.material).map_or("?", |e| e.name);
            Ok(format!(
                "RaycastResult{{{name} @ {}, {}, {}; normal = {}, {}, {}; material = {material}}}",
                h.position.x, h.position.y, h.position.z, h.normal.x, h.normal.y, h.normal.z
            ))
        });
    }
}

fn material_value(lua: &Lua, value: u32) -> mlua::Result<Value> {
    match EnumItem::from_value("Material", value) {
        Some(item) => enum_item_value(lua, item),
        None => Ok(Value::Nil),
    }
}

/// `RaycastParams.new()` and `OverlapParams.new()`.
pub(crate) fn register_globals(lua: &Lua, globals: &Table) -> mlua::Result<()> {
    constructor::<false>(lua, globals, Kind::Raycast)?;
    constructor::<true>(lua, globals, Kind::Overlap)
}

/// The global table of one params datatype, with its `new`.
fn constructor<const OVERLAP: bool>(lua: &Lua, globals: &Table, kind: Kind) -> mlua::Result<()> {
    let t = lua.create_table()?;
    t.raw_set(
        "new",
        lua.create_function(move |_, ()| Ok(Params::<OVERLAP>(QueryParams::new(kind))))?,
    )?;
    t.set_readonly(true);
    globals.raw_set(kind.name(), t)
}

// ----- the world a query sees -----

fn bool_prop(inst: &rbx_dom_weak::Instance, key: Ustr, name: &str) -> bool {
    match inst.properties.get(&key) {
        Some(Variant::Bool(b)) => *b,
        _ => matches!(
            procmodel_dom::db_default(&inst.class, name),
            Some(Variant::Bool(true))
        ),
    }
}

/// Where a query looks: the parts whose bounding sphere (centre, radius) it may reach are
/// looked at further, the others not at all.
#[derive(Clone, Copy)]
enum Region {
    /// A ray or sweep centre line: `origin` to `origin + dir`.
    Segment(glam::Vec3, glam::Vec3),
    /// An axis-aligned box.
    Box(glam::Vec3, glam::Vec3),
}

impl Region {
    /// The cheap first test on a part's bounding sphere.
    fn near(&self, centre: glam::Vec3, radius: f32) -> bool {
        match *self {
            Region::Segment(origin, dir) => {
                procmodel_dom::bvh::segment_meets_sphere(origin, dir, centre, radius)
            }
            Region::Box(lo, hi) => sphere_touches_box(centre, radius, lo, hi),
        }
    }

    /// The index's candidates (a superset of the parts [`Region::near`] accepts).
    fn candidates(&self, tree: &procmodel_dom::bvh::SphereTree, out: &mut Vec<u32>) {
        match *self {
            Region::Segment(origin, dir) => tree.query_segment(origin, dir, out),
            Region::Box(lo, hi) => tree.query_box(lo, hi, out),
        }
    }
}

/// A part's bounding sphere (centre, radius), as queries test it first.
fn bounding_sphere(inst: &rbx_dom_weak::Instance) -> (glam::Vec3, f32) {
    // Around the box the part draws (a GeometryService piece's triangles lie off its CFrame).
    let (cframe, size) = procmodel_dom::drawn::drawn_box(inst);
    (cframe.translation.into(), size.abs().length() * 0.5 + 1e-3)
}

/// The filters every query of one world applies, gathered once per query.
struct Filters<'a> {
    p: &'a QueryParams,
    filter: FxHashSet<Ref>,
    exclude: FxHashSet<Ref>,
    include_only: Option<FxHashSet<Ref>>,
    hidden: FxHashSet<Ref>,
    groups: super::physics::Registry,
    by_group: bool,
    skip: Option<Ref>,
}

impl<'a> Filters<'a> {
    fn new(c: &Ctx, p: &'a QueryParams, skip: Option<Ref>) -> Filters<'a> {
        // Parts whose collision group does not collide with the query's are not seen.
        let groups = super::physics::registry(c);
        Filters {
            p,
            filter: p.filter.iter().copied().collect(),
            exclude: p.exclude.iter().flatten().copied().collect(),
            include_only: p.include_only.as_ref().map(|l| l.iter().copied().collect()),
            hidden: c.query_hidden.iter().copied().collect(),
            by_group: !groups.all_collide(),
            groups,
            skip,
        }
    }

    /// What the lists say of `r` itself, as [`Mark`] bits (an instance inherits its
    /// ancestors' bits).
    fn mark(&self, r: Ref) -> Mark {
        let mut m = 0;
        if self.filter.contains(&r) {
            m |= LISTED;
        }
        if self.exclude.contains(&r) {
            m |= EXCLUDED;
        }
        if self.include_only.as_ref().is_some_and(|l| l.contains(&r)) {
            m |= INCLUDED;
        }
        m
    }

    /// Whether an instance with the bits `m` (its own and its ancestors') passes the lists.
    fn passes(&self, m: Mark) -> bool {
        (m & LISTED != 0) == self.p.include
            && m & EXCLUDED == 0
            && (self.include_only.is_none() || m & INCLUDED != 0)
    }

    /// Whether the part `inst` (already found in the region) is seen.
    fn sees(&self, r: Ref, inst: &rbx_dom_weak::Instance) -> bool {
        Some(r) != self.skip
            && queryable(inst, self.p)
            && (!self.by_group
                || self
                    .groups
                    .collide(super::physics::group_of(inst), &self.p.collision_group))
    }
}

/// Where an instance or an ancestor of it is listed: `FilterDescendantsInstances`,
/// `ExcludeInstances`, `IncludeInstances`.
type Mark = u8;
const LISTED: Mark = 1;
const EXCLUDED: Mark = 2;
const INCLUDED: Mark = 4;

/// The parts (and the Terrain) a query of the world rooted at `root` considers.
struct World {
    parts: Vec<(Ref, Body)>,
    terrain: Option<Instance>,
}

/// Collects the world under `root` that `p` lets a query see in `region`, leaving out `skip`
/// (the part a `GetPartsInPart` asks about) and the running generation's hidden results, in
/// pre-order: through the world's index while the scene has not changed since it was built
/// (`query_index.rs`), else by a walk of the world.
fn world(c: &Ctx, root: Ref, p: &QueryParams, skip: Option<Ref>, region: Region) -> World {
    let f = Filters::new(c, p, skip);
    if let Some(w) = indexed_world(c, root, &f, region) {
        return w;
    }
    let mut out = World {
        parts: Vec::new(),
        terrain: None,
    };
    let Some(root_inst) = c.dom.get_by_ref(root) else {
        return out;
    };
    let root_is_workspace = is_a(&root_inst.class, "Workspace");
    // (instance, inside a filtered subtree)
    let in_root = f.mark(root);
    let mut stack: Vec<(Ref, Mark)> = root_inst
        .children()
        .iter()
        .rev()
        .map(|&r| (r, in_root))
        .collect();
    while let Some((r, parent_mark)) = stack.pop() {
        if f.hidden.contains(&r) {
            continue;
        }
        let Some(inst) = c.dom.get_by_ref(r) else {
            continue;
        };
        let listed = parent_mark | f.mark(r);
        let passes = f.passes(listed);
        if inst.class == "Terrain" {
            if root_is_workspace && passes {
                out.terrain = Some(Instance {
                    r,
                    class: inst.class,
                });
            }
            continue;
        }
        // A nested WorldModel is a world of its own.
        if is_a(&inst.class, "WorldModel") {
            continue;
        }
        if passes
            && is_a(&inst.class, "BasePart")
            && {
                let (centre, radius) = bounding_sphere(inst);
                region.near(centre, radius)
            }
            && f.sees(r, inst)
        {
            out.parts.push((r, body(inst)));
        }
        stack.extend(inst.children().iter().rev().map(|&ch| (ch, listed)));
    }
    out
}

/// [`world`] through the index of `root`'s world, building it at the second query that
/// finds the scene unchanged; None when there is no usable index (the caller walks). Only
/// worlds in the scene are indexed: writes elsewhere do not move the write count.
fn indexed_world(c: &Ctx, root: Ref, f: &Filters, region: Region) -> Option<World> {
    // From now on writes date what this query scans or builds.
    c.query_watch.set(true);
    let epoch = c.query_epoch.get();
    let mut state = c.query_index.borrow_mut();
    let fresh = |ix: &crate::query_index::QueryIndex| ix.root == root && ix.epoch == epoch;
    if !state.index.as_ref().is_some_and(fresh) {
        if state.last_scan != Some((root, epoch)) || !c.in_scene(root) {
            state.last_scan = Some((root, epoch));
            return None;
        }
        state.index = Some(build_index(c, root, epoch));
    }
    let ix = state.index.as_ref()?;
    let root_inst = c.dom.get_by_ref(root)?;
    let root_is_workspace = is_a(&root_inst.class, "Workspace");
    let mut out = World {
        parts: Vec::new(),
        terrain: None,
    };
    // Whether `r` is seen by the filter lists: not under a hidden folder, and what the lists
    // say of it and its ancestors up to the root passes them.
    let passes = |r: Ref| {
        let mut listed = 0;
        let mut cur = r;
        loop {
            if f.hidden.contains(&cur) {
                return false;
            }
            listed |= f.mark(cur);
            if cur == root {
                break;
            }
            match c.dom.get_by_ref(cur) {
                Some(i) => cur = i.parent(),
                None => return false,
            }
        }
        f.passes(listed)
    };
    let mut candidates = Vec::new();
    region.candidates(&ix.tree, &mut candidates);
    for i in candidates {
        let r = ix.parts[i as usize];
        let Some(inst) = c.dom.get_by_ref(r) else {
            continue;
        };
        let (centre, radius) = bounding_sphere(inst);
        if region.near(centre, radius) && passes(r) && f.sees(r, inst) {
            out.parts.push((r, body(inst)));
        }
    }
    if root_is_workspace {
        // The last Terrain in pre-order that passes, as the walk finds it.
        out.terrain = ix
            .terrains
            .iter()
            .rev()
            .find(|&&t| passes(t))
            .map(|&r| Instance {
                r,
                class: c
                    .dom
                    .get_by_ref(r)
                    .map_or(Ustr::from("Terrain"), |i| i.class),
            });
    }
    Some(out)
}

/// The index of the world under `root` as the scene is now: its BaseParts in pre-order
/// (none under a nested WorldModel, none under a Terrain) and its Terrains.
fn build_index(c: &Ctx, root: Ref, epoch: u64) -> crate::query_index::QueryIndex {
    let mut parts = Vec::new();
    let mut spheres = Vec::new();
    let mut terrains = Vec::new();
    let mut stack: Vec<Ref> = c
        .dom
        .get_by_ref(root)
        .map(|i| i.children().iter().rev().copied().collect())
        .unwrap_or_default();
    while let Some(r) = stack.pop() {
        let Some(inst) = c.dom.get_by_ref(r) else {
            continue;
        };
        if inst.class == "Terrain" {
            terrains.push(r);
            continue;
        }
        if is_a(&inst.class, "WorldModel") {
            continue;
        }
        if is_a(&inst.class, "BasePart") {
            parts.push(r);
            spheres.push(bounding_sphere(inst));
        }
        stack.extend(inst.children().iter().rev());
    }
    crate::query_index::QueryIndex {
        root,
        epoch,
        tree: procmodel_dom::bvh::SphereTree::build(&spheres),
        parts,
        terrains,
    }
}

fn queryable(inst: &rbx_dom_weak::Instance, p: &QueryParams) -> bool {
    if p.brute_force {
        return true;
    }
    let can_collide = bool_prop(inst, KEYS.can_collide, "CanCollide");
    if p.respect_can_collide {
        can_collide
    } else {
        can_collide || bool_prop(inst, KEYS.can_query, "CanQuery")
    }
}

/// The world root `this` is, checked for a query named `what`: a query of the scene is
/// watched ([`Ctx::scene_query`]).
fn begin(c: &Ctx, this: &Instance, what: &str) -> mlua::Result<()> {
    if c.in_scene(this.r) {
        c.scene_query(|| format!("{}:{what}", this.class))?;
    }
    Ok(())
}

fn finite(v: glam::Vec3, method: &str, what: &str) -> mlua::Result<glam::Vec3> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(mlua::Error::runtime(format!(
            "{method}: {what} must be finite, got {}, {}, {}",
            v.x, v.y, v.z
        )))
    }
}

/// The first part or terrain surface the ray from `origin` along `dir` enters.
fn cast(
    lua: &Lua,
    this: &Instance,
    origin: glam::Vec3,
    dir: glam::Vec3,
    p: &QueryParams,
    cubes: bool,
    method: &str,
) -> mlua::Result<Option<Hit>> {
    let origin = finite(origin, method, "the origin")?;
    let mut dir = finite(dir, method, "the direction")?;
    let len = dir.length();
    if len > MAX_RAY {
        dir *= MAX_RAY / len;
    }
    let (mut best, terrain) = {
        let c = ctx(lua)?;
        begin(&c, this, method)?;
        let w = world(&c, this.r, p, None, Region::Segment(origin, dir));
        let mut best: Option<Hit> = None;
        for (r, b) in &w.parts {
            // A part carrying a procmodel mesh is hit where its triangles are.
            let hit = match c.dom.get_by_ref(*r).and_then(crate::mesh_query::placed) {
                Some(mesh) => mesh.raycast(origin, dir),
                None => b.raycast(origin, dir),
            };
            if let Some(h) = hit {
                Hit::keep_nearer(&mut best, Hit::part(&c, *r, &h, dir.length()));
            }
        }
        (best, w.terrain)
    };
    if let Some(t) = terrain {
        let opts = TerrainRay {
            ignore_water: p.ignore_water,
            cubes,
        };
        let hit = crate::classes::read_voxels(lua, &t, method, |voxels| {
            voxels.raycast(origin, dir, opts)
        })?;
        if let Some(h) = hit {
            let hit = Hit::terrain(t.r, h.t, h.position, h.normal, h.material, dir.length());
            Hit::keep_nearer(&mut best, hit);
        }
    }
    Ok(best)
}

/// The parts of the world under `this` whose box passes `keep`, in pre-order, at most
/// `max` (0: all).
/// `bounds`: the query's own axis-aligned box (parts whose bounding sphere misses it are
/// skipped without a closer look).
#[allow(clippy::too_many_arguments)]
fn overlap(
    lua: &Lua,
    this: &Instance,
    p: &QueryParams,
    skip: Option<Ref>,
    method: &str,
    max: u32,
    bounds: (glam::Vec3, glam::Vec3),
    keep: impl Fn(&Body) -> bool,
) -> mlua::Result<Table> {
    let mut c = ctx(lua)?;
    begin(&c, this, method)?;
    let (lo, hi) = bounds;
    let w = world(&c, this.r, p, skip, Region::Box(lo, hi));
    let t = lua.create_table()?;
    let mut n = 0u32;
    for (r, b) in &w.parts {
        if max != 0 && n >= max {
            break;
        }
        if keep(b) {
            t.raw_push(c.push(*r)?)?;
            n += 1;
        }
    }
    Ok(t)
}

/// The optional params argument: nil or a params object of `kind`.
fn params_arg(v: Value, kind: Kind, method: &str) -> mlua::Result<QueryParams> {
    match v {
        Value::Nil => Ok(QueryParams::new(kind)),
        Value::UserData(ud) => {
            let found = match kind {
                Kind::Raycast => ud.borrow::<Params<false>>().map(|p| p.0.clone()),
                Kind::Overlap => ud.borrow::<Params<true>>().map(|p| p.0.clone()),
            };
            found.map_err(|_| {
                mlua::Error::runtime(format!(
                    "{method}: the params must be a {}, got {}",
                    kind.name(),
                    procmodel_luau_types::type_name(&Value::UserData(ud.clone()))
                ))
            })
        }
        other => Err(mlua::Error::runtime(format!(
            "{method}: the params must be a {}, got {}",
            kind.name(),
            procmodel_luau_types::type_name(&other)
        ))),
    }
}

/// The deprecated methods' result tuple: part (or nil), point, normal, material.
fn ray_tuple(lua: &Lua, hit: Option<Hit>, ray: &Ray) -> mlua::Result<MultiValue> {
    let mut c = ctx(lua)?;
    Ok(match hit {
        Some(h) => MultiValue::from_iter([
            c.push(h.instance)?,
            Vector3(h.position).value(),
            Vector3(h.normal).value(),
            {
                drop(c);
                material_value(lua, h.material)?
            },
        ]),
        None => {
            let end = ray.origin + ray.direction.clamp_length_max(MAX_RAY);
            drop(c);
            MultiValue::from_iter([
                Value::Nil,
                Vector3(end).value(),
                Vector3(glam::Vec3::ZERO).value(),
                enum_item_value(
                    lua,
                    EnumItem::from_name("Material", "Air").expect("the database has Air"),
                )?,
            ])
        }
    })
}

fn opt_instance_list(lua: &Lua, v: &Value, method: &str) -> mlua::Result<Vec<Ref>> {
    match v {
        Value::Nil => Ok(Vec::new()),
        v => instance_list(&*ctx(lua)?, v, method, true),
    }
}

fn opt_bool(v: Option<bool>) -> bool {
    v.unwrap_or(false)
}

fn max_parts(v: Option<f64>, method: &str) -> mlua::Result<u32> {
    match v {
        None => Ok(REGION3_MAX_PARTS),
        Some(n) if n.is_finite() && n >= 0.0 => Ok(n.min(f64::from(u32::MAX)) as u32),
        Some(n) => Err(mlua::Error::runtime(format!(
            "{method}: maxParts must be a non-negative number, got {n}"
        ))),
    }
}

/// Whether a sphere reaches a box (inclusive: a first test, not the query's rule).
fn sphere_touches_box(centre: glam::Vec3, radius: f32, lo: glam::Vec3, hi: glam::Vec3) -> bool {
    centre.clamp(lo, hi).distance_squared(centre) <= radius * radius
}

/// The world-space box around a query box (CFrame, size).
fn box_bounds(cf: &glam::Affine3A, size: glam::Vec3) -> (glam::Vec3, glam::Vec3) {
    let half = size * 0.5;
    let m = cf.matrix3;
    let ext = m.x_axis.abs() * half.x + m.y_axis.abs() * half.y + m.z_axis.abs() * half.z;
    let c: glam::Vec3 = cf.translation.into();
    (c - glam::Vec3::from(ext), c + glam::Vec3::from(ext))
}

/// The deprecated Region3 methods' parts: those whose axis-aligned boxes touch the region.
fn parts_in_region(
    lua: &Lua,
    this: &Instance,
    p: &QueryParams,
    region: Region3,
    max: u32,
    method: &str,
) -> mlua::Result<Table> {
    overlap(
        lua,
        this,
        p,
        None,
        method,
        max,
        (region.min, region.max),
        |b| {
            let (lo, hi) = b.aabb();
            lo.cmple(region.max).all() && hi.cmpge(region.min).all()
        },
    )
}

/// The deprecated ray methods' cast and answer, with their terrain options.
fn find_part_on_ray(
    lua: &Lua,
    this: &Instance,
    ray: &Ray,
    mut p: QueryParams,
    cubes: Option<bool>,
    water: Option<bool>,
    method: &str,
) -> mlua::Result<MultiValue> {
    p.ignore_water = opt_bool(water);
    let hit = cast(
        lua,
        this,
        ray.origin,
        ray.direction,
        &p,
        opt_bool(cubes),
        method,
    )?;
    ray_tuple(lua, hit, ray)
}

/// Whether a part's solid shares volume with `query`'s (its box first, as a quick test).
fn shares_volume(query: &Body) -> impl Fn(&Body) -> bool + '_ {
    let (qlo, qhi) = query.aabb();
    move |b: &Body| {
        let (lo, hi) = b.aabb();
        lo.cmple(qhi).all() && hi.cmpge(qlo).all() && overlaps(query, b)
    }
}

pub fn register(m: &mut MethodTable) {
    m.class("WorldRoot");
    m.add_method(
        "Raycast",
        |lua, this, (origin, dir, params): (Vector3, Vector3, Value)| {
            let p = params_arg(params, Kind::Raycast, "Raycast")?;
            let hit = cast(lua, this, origin.0, dir.0, &p, false, "Raycast")?;
            result_value(lua, hit)
        },
    );
    m.add_method(
        "GetPartBoundsInBox",
        |lua, this, (cf, size, params): (CFrame, Vector3, Value)| {
            let p = params_arg(params, Kind::Overlap, "GetPartBoundsInBox")?;
            let cf = procmodel_dom::cframe_to_affine(&rbx_types::CFrame::from(cf));
            let size = finite(size.0, "GetPartBoundsInBox", "the size")?.abs()
                + glam::Vec3::splat(2.0 * p.tolerance);
            overlap(
                lua,
                this,
                &p,
                None,
                "GetPartBoundsInBox",
                p.max_parts,
                box_bounds(&cf, size),
                |b| {
                    let (lo, hi) = b.aabb();
                    box_overlaps_aabb(&cf, size, lo, hi)
                },
            )
        },
    );
    m.add_method(
        "GetPartBoundsInRadius",
        |lua, this, (center, radius, params): (Vector3, f64, Value)| {
            let p = params_arg(params, Kind::Overlap, "GetPartBoundsInRadius")?;
            let center = finite(center.0, "GetPartBoundsInRadius", "the position")?;
            if !(radius.is_finite() && radius >= 0.0) {
                return Err(mlua::Error::runtime(format!(
                    "GetPartBoundsInRadius: the radius must be a non-negative number, got {radius}"
                )));
            }
            let radius = radius as f32 + p.tolerance;
            let r = glam::Vec3::splat(radius);
            overlap(
                lua,
                this,
                &p,
                None,
                "GetPartBoundsInRadius",
                p.max_parts,
                (center - r, center + r),
                |b| {
                    let (lo, hi) = b.aabb();
                    sphere_overlaps_aabb(center, radius, lo, hi)
                },
            )
        },
    );
    m.add_method(
        "GetPartsInPart",
        |lua, this, (part, params): (Instance, Value)| {
            let p = params_arg(params, Kind::Overlap, "GetPartsInPart")?;
            let query = {
                let c = ctx(lua)?;
                let inst = c
                    .dom
                    .get_by_ref(part.r)
                    .filter(|i| is_a(&i.class, "BasePart"));
                let Some(inst) = inst else {
                    return Err(mlua::Error::runtime(format!(
                        "GetPartsInPart: expected a BasePart, got {}",
                        part.class
                    )));
                };
                body(inst)
            };
            let (qlo, qhi) = query.aabb();
            overlap(
                lua,
                this,
                &p,
                Some(part.r),
                "GetPartsInPart",
                p.max_parts,
                (qlo, qhi),
                shares_volume(&query),
            )
        },
    );
    // The deprecated ray methods: a Ray, an ignore or inclusion list, the old terrain
    // options; (part, point, normal, material).
    for name in ["FindPartOnRay", "findPartOnRay"] {
        m.add_method(
            name,
            |lua, this, (ray, ignore, cubes, water): (Ray, Value, Option<bool>, Option<bool>)| {
                let list = opt_instance_list(lua, &ignore, "FindPartOnRay")?;
                let p = QueryParams::list(list, false);
                find_part_on_ray(lua, this, &ray, p, cubes, water, "FindPartOnRay")
            },
        );
    }
    m.add_method(
        "FindPartOnRayWithIgnoreList",
        |lua, this, (ray, ignore, cubes, water): (Ray, Value, Option<bool>, Option<bool>)| {
            let method = "FindPartOnRayWithIgnoreList";
            let list = instance_list(&*ctx(lua)?, &ignore, method, false)?;
            let p = QueryParams::list(list, false);
            find_part_on_ray(lua, this, &ray, p, cubes, water, method)
        },
    );
    m.add_method(
        "FindPartOnRayWithWhitelist",
        |lua, this, (ray, list, water): (Ray, Value, Option<bool>)| {
            let method = "FindPartOnRayWithWhitelist";
            let list = instance_list(&*ctx(lua)?, &list, method, false)?;
            let p = QueryParams::list(list, true);
            find_part_on_ray(lua, this, &ray, p, None, water, method)
        },
    );
    // The deprecated Region3 methods: parts whose axis-aligned boxes touch the region.
    for name in ["FindPartsInRegion3", "findPartsInRegion3"] {
        m.add_method(
            name,
            |lua, this, (region, ignore, max): (Region3, Value, Option<f64>)| {
                let list = opt_instance_list(lua, &ignore, "FindPartsInRegion3")?;
                let max = max_parts(max, "FindPartsInRegion3")?;
                let p = QueryParams::list(list, false);
                parts_in_region(lua, this, &p, region, max, "FindPartsInRegion3")
            },
        );
    }
    for (name, include) in [
        ("FindPartsInRegion3WithIgnoreList", false),
        ("FindPartsInRegion3WithWhiteList", true),
    ] {
        m.add_method(
            name,
            move |lua, this, (region, list, max): (Region3, Value, Option<f64>)| {
                let list = instance_list(&*ctx(lua)?, &list, name, false)?;
                let max = max_parts(max, name)?;
                let p = QueryParams::list(list, include);
                parts_in_region(lua, this, &p, region, max, name)
            },
        );
    }
    m.add_method(
        "IsRegion3Empty",
        |lua, this, (region, ignore): (Region3, Value)| {
            let list = opt_instance_list(lua, &ignore, "IsRegion3Empty")?;
            let p = QueryParams::list(list, false);
            let found = parts_in_region(lua, this, &p, region, 1, "IsRegion3Empty")?;
            Ok(found.raw_len() == 0)
        },
    );
    m.add_method(
        "IsRegion3EmptyWithIgnoreList",
        |lua, this, (region, list): (Region3, Value)| {
            let list = instance_list(&*ctx(lua)?, &list, "IsRegion3EmptyWithIgnoreList", false)?;
            let p = QueryParams::list(list, false);
            let found = parts_in_region(lua, this, &p, region, 1, "IsRegion3EmptyWithIgnoreList")?;
            Ok(found.raw_len() == 0)
        },
    );
    m.add_method(
        "Spherecast",
        |lua, this, (center, radius, dir, params): (Vector3, f64, Vector3, Value)| {
            let p = params_arg(params, Kind::Raycast, "Spherecast")?;
            let center = finite(center.0, "Spherecast", "the position")?;
            if !(radius.is_finite() && radius > 0.0 && radius as f32 <= MAX_SPHERE_RADIUS) {
                return Err(mlua::Error::runtime(format!(
                    "Spherecast: the radius must be over 0 and at most {MAX_SPHERE_RADIUS} studs, got {radius}"
                )));
            }
            let moving = Body::new(
                procmodel_dom::spatial::PartShape::Ball,
                glam::Affine3A::from_translation(center),
                glam::Vec3::splat(radius as f32 * 2.0),
            );
            let hit = shape_cast(lua, this, moving, dir.0, &p, None, "Spherecast")?;
            result_value(lua, hit)
        },
    );
    m.add_method(
        "Blockcast",
        |lua, this, (cf, size, dir, params): (CFrame, Vector3, Vector3, Value)| {
            let p = params_arg(params, Kind::Raycast, "Blockcast")?;
            let cf = procmodel_dom::cframe_to_affine(&rbx_types::CFrame::from(cf));
            if !(cf.translation.is_finite() && cf.matrix3.is_finite()) {
                return Err(mlua::Error::runtime("Blockcast: the CFrame must be finite"));
            }
            let size = finite(size.0, "Blockcast", "the size")?;
            if size.min_element() <= 0.0 || size.max_element() > MAX_BLOCK_SIZE {
                return Err(mlua::Error::runtime(format!(
                    "Blockcast: each side of the size must be over 0 and at most {MAX_BLOCK_SIZE} studs, got {}, {}, {}",
                    size.x, size.y, size.z
                )));
            }
            let moving = Body::new(procmodel_dom::spatial::PartShape::Block, cf, size);
            let hit = shape_cast(lua, this, moving, dir.0, &p, None, "Blockcast")?;
            result_value(lua, hit)
        },
    );
    m.add_method(
        "Shapecast",
        |lua, this, (part, dir, params): (Instance, Vector3, Value)| {
            let p = params_arg(params, Kind::Raycast, "Shapecast")?;
            let moving = {
                let c = ctx(lua)?;
                match c
                    .dom
                    .get_by_ref(part.r)
                    .filter(|i| is_a(&i.class, "BasePart"))
                {
                    Some(i) => body(i),
                    None => {
                        return Err(mlua::Error::runtime(format!(
                            "Shapecast: expected a BasePart, got {}",
                            part.class
                        )));
                    }
                }
            };
            let hit = shape_cast(lua, this, moving, dir.0, &p, Some(part.r), "Shapecast")?;
            result_value(lua, hit)
        },
    );
    // Whether any of the parts shares more than `overlapIgnored` studs of depth with a part
    // outside the list (false for an empty list).
    m.add_method(
        "ArePartsTouchingOthers",
        |lua, this, (list, ignored): (Value, Option<f64>)| {
            let ignored = ignored.unwrap_or(0.000_199_999_995);
            if !ignored.is_finite() {
                return Err(mlua::Error::runtime(format!(
                    "ArePartsTouchingOthers: overlapIgnored must be finite, got {ignored}"
                )));
            }
            let (bodies, refs) = {
                let c = ctx(lua)?;
                let refs = instance_list(&c, &list, "ArePartsTouchingOthers", false)?;
                let mut bodies = Vec::new();
                for (i, &r) in refs.iter().enumerate() {
                    match c.dom.get_by_ref(r).filter(|p| is_a(&p.class, "BasePart")) {
                        Some(p) => bodies.push(body(p)),
                        None => {
                            return Err(mlua::Error::runtime(format!(
                                "ArePartsTouchingOthers: partList item {} is not a BasePart",
                                i + 1
                            )));
                        }
                    }
                }
                (bodies, refs)
            };
            let Some((lo, hi)) = bodies
                .iter()
                .map(Body::aabb)
                .reduce(|(a, b), (x, y)| (a.min(x), b.max(y)))
            else {
                return Ok(false);
            };
            let c = ctx(lua)?;
            begin(&c, this, "ArePartsTouchingOthers")?;
            let p = QueryParams {
                brute_force: true,
                ..QueryParams::new(Kind::Overlap)
            };
            let listed: FxHashSet<Ref> = refs.iter().copied().collect();
            let w = world(&c, this.r, &p, None, Region::Box(lo, hi));
            Ok(w.parts.iter().any(|(r, other)| {
                !listed.contains(r)
                    && bodies
                        .iter()
                        .any(|b| procmodel_dom::spatial::overlaps_by(b, other, ignored as f32))
            }))
        },
    );
    // Sets each part's CFrame, as `part.CFrame = cframe` does (the event mode only changes
    // which Changed events Roblox fires; here the CFrame write fires what it always does).
    m.add_method(
        "BulkMoveTo",
        |lua, _this, (parts, cframes, _mode): (Table, Table, Value)| {
            let (n, m) = (parts.raw_len(), cframes.raw_len());
            if n != m {
                return Err(mlua::Error::runtime(format!(
                    "BulkMoveTo: partList has {n} parts but cframeList has {m} CFrames"
                )));
            }
            {
                let c = ctx(lua)?;
                for (i, v) in parts.clone().sequence_values::<Value>().enumerate() {
                    let v = v?;
                    if !c.instance(&v).is_some_and(|p| is_a(&p.class, "BasePart")) {
                        return Err(mlua::Error::runtime(format!(
                            "BulkMoveTo: partList item {} is not a BasePart ({})",
                            i + 1,
                            procmodel_luau_types::type_name(&v)
                        )));
                    }
                }
            }
            for (i, (part, cf)) in parts
                .sequence_values::<Value>()
                .zip(cframes.sequence_values::<Value>())
                .enumerate()
            {
                let (part, cf) = (part?, cf?);
                if CFrame::from_lua(cf.clone(), lua).is_err() {
                    return Err(mlua::Error::runtime(format!(
                        "BulkMoveTo: cframeList item {} is not a CFrame ({})",
                        i + 1,
                        procmodel_luau_types::type_name(&cf)
                    )));
                }
                set_cframe(lua, part, cf)?;
            }
            Ok(())
        },
    );
    m.class("BasePart");
    // The point of the part's solid nearest to `position`: the position itself when inside,
    // else the nearest point of its surface (MeshParts and unions as their boxes).
    m.add_method(
        "GetClosestPointOnSurface",
        |lua, this, position: Vector3| {
            let c = ctx(lua)?;
            let p = finite(position.0, "GetClosestPointOnSurface", "the position")?;
            let inst = c.dom.get_by_ref(this.r).ok_or_else(|| {
                mlua::Error::runtime("GetClosestPointOnSurface: the part no longer exists")
            })?;
            Ok(Vector3(body(inst).closest_point(p)))
        },
    );
    // The parts this one shares volume with, in the world it is in (none outside a world);
    // adjacent parts do not touch.
    m.add_method("GetTouchingParts", |lua, this, ()| {
        let root = {
            let c = ctx(lua)?;
            let Some(inst) = c.dom.get_by_ref(this.r) else {
                return lua.create_table();
            };
            // A part that does not collide touches nothing, unless something listens to its
            // Touched event (Roblox's TouchInterest).
            if !bool_prop(inst, KEYS.can_collide, "CanCollide")
                && !c.signals.listens_to_never(this.r, "Touched")
            {
                return lua.create_table();
            }
            match world_root_of(&c, this.r) {
                Some(r) => (r, body(inst), super::physics::group_of(inst).to_owned()),
                None => return lua.create_table(),
            }
        };
        let (root, query, group) = root;
        let mut p = QueryParams::new(Kind::Overlap);
        p.respect_can_collide = true;
        p.collision_group = group;
        let (qlo, qhi) = query.aabb();
        overlap(
            lua,
            &root,
            &p,
            Some(this.r),
            "GetTouchingParts",
            0,
            (qlo, qhi),
            shares_volume(&query),
        )
    });
    // Volume times density: CustomPhysicalProperties' when set, else the material's.
    m.add_method("GetMass", |lua, this, ()| {
        let c = ctx(lua)?;
        let Some(inst) = c.dom.get_by_ref(this.r) else {
            return Err(mlua::Error::runtime("instance no longer exists"));
        };
        Ok(crate::assembly::mass(inst))
    });
    // Grows (or shrinks) the part on one face, the opposite face staying where it is, as
    // Studio's resize tool does; refused (false, nothing changed) when the resized part
    // would share volume with another colliding part of its world.
    m.add_method("Resize", |lua, this, (face, delta): (Value, f64)| {
        let face = super::instance::enum_arg(&face, "NormalId", "Resize", 1)?;
        if !delta.is_finite() {
            return Err(mlua::Error::runtime(
                "invalid argument #2 to 'Resize' (number must be finite)",
            ));
        }
        let mut c = ctx(lua)?;
        c.check_write(this.r, || "Resize".into())?;
        let Some(inst) = c.dom.get_by_ref(this.r) else {
            return Err(mlua::Error::runtime("instance no longer exists"));
        };
        // NormalId: Right, Top, Back, Left, Bottom, Front = +X, +Y, +Z, -X, -Y, -Z.
        let axis = (face % 3) as usize;
        let sign = if face < 3 { 1.0 } else { -1.0 };
        let size = procmodel_dom::part_size(inst);
        let cf = procmodel_dom::part_cframe(inst);
        let mut new_size = size;
        new_size[axis] = (size[axis] + delta as f32).max(procmodel_dom::spatial::MIN_SIZE);
        let grown = new_size[axis] - size[axis];
        let mut normal = glam::Vec3::ZERO;
        normal[axis] = sign;
        let mut new_cf = cf;
        new_cf.translation += cf.matrix3 * glam::Vec3A::from(normal * (grown * 0.5));
        let resized = Body::new(procmodel_dom::spatial::part_shape(inst), new_cf, new_size);
        if bool_prop(inst, KEYS.can_collide, "CanCollide")
            && let Some(root) = world_root_of(&c, this.r)
        {
            c.scene_query(|| format!("{}:Resize", this.class))?;
            let mut p = QueryParams::new(Kind::Overlap);
            p.respect_can_collide = true;
            p.collision_group = super::physics::group_of(inst).to_owned();
            let (lo, hi) = resized.aabb();
            let w = world(&c, root.r, &p, Some(this.r), Region::Box(lo, hi));
            let touches = shares_volume(&resized);
            if w.parts.iter().any(|(_, b)| touches(b)) {
                return Ok(false);
            }
        }
        let inst = c.dom.get_by_ref_mut(this.r).expect("looked up above");
        inst.properties.insert(
            crate::keys::KEYS.size,
            Variant::Vector3(rbx_types::Vector3::new(new_size.x, new_size.y, new_size.z)),
        );
        inst.properties.insert(
            crate::keys::KEYS.cframe,
            Variant::CFrame(procmodel_dom::affine_to_cframe(&new_cf)),
        );
        if c.signals.watch.any {
            crate::signals::prop_changed(&mut c, this.r, "Size");
            crate::signals::prop_changed(&mut c, this.r, "CFrame");
        }
        Ok(true)
    });
    m.class("Workspace");
    // The virtual clock, as `os.clock`/`time` (a headless session is its own server).
    m.add_method("GetServerTimeNow", |lua, _this, ()| {
        Ok(crate::sched::now(lua))
    });
    // The physics solver is PGS (Roblox's only one since the spring solver was retired), and
    // in edit mode nothing simulates, so no part is awake.
    m.add_method("PGSIsEnabled", |_lua, _this, ()| Ok(true));
    m.add_method("GetNumAwakeParts", |_lua, _this, ()| Ok(0));
    m.class("Model");
    for name in ["MoveTo", "moveTo"] {
        m.add_method(name, |lua, this, target: Vector3| {
            move_to(lua, this, target.0)
        });
    }
}

/// Roblox's limits on shape casts: the distance, a sphere's radius, a block's size (studs).
const MAX_SHAPE_CAST: f32 = 1024.0;
const MAX_SPHERE_RADIUS: f32 = 256.0;
const MAX_BLOCK_SIZE: f32 = 512.0;
/// Terrain cells a shape cast looks at, at most (a longer or wider sweep skips the terrain).
const MAX_CAST_CELLS: i64 = 1 << 20;

/// The first part or terrain cell `moving` runs into when swept along `dir` (parts it
/// overlaps at the start are not hit). Terrain cells whose solid occupancy (or, unless
/// ignored, water) is over half count as 4-stud cubes.
fn shape_cast(
    lua: &Lua,
    this: &Instance,
    moving: Body,
    dir: glam::Vec3,
    p: &QueryParams,
    skip: Option<Ref>,
    method: &str,
) -> mlua::Result<Option<Hit>> {
    let mut dir = finite(dir, method, "the direction")?;
    let len = dir.length();
    if len > MAX_SHAPE_CAST {
        dir *= MAX_SHAPE_CAST / len;
    }
    let (mlo, mhi) = moving.aabb();
    let (lo, hi) = (mlo.min(mlo + dir), mhi.max(mhi + dir));
    let (mut best, terrain) = {
        let c = ctx(lua)?;
        begin(&c, this, method)?;
        let w = world(&c, this.r, p, skip, Region::Box(lo, hi));
        let mut best: Option<Hit> = None;
        for (r, b) in &w.parts {
            if let Some(h) = procmodel_dom::spatial::sweep(&moving, dir, b) {
                Hit::keep_nearer(&mut best, Hit::part(&c, *r, &h, dir.length()));
            }
        }
        (best, w.terrain)
    };
    if let Some(t) = terrain {
        let ignore_water = p.ignore_water;
        let hit = crate::classes::read_voxels(lua, &t, method, |voxels| {
            let min = (lo / 4.0).floor().as_ivec3();
            let max = (hi / 4.0).floor().as_ivec3() + glam::IVec3::ONE;
            let n = (max - min).max(glam::IVec3::ZERO).as_i64vec3();
            if n.x * n.y * n.z > MAX_CAST_CELLS {
                return None;
            }
            let mut found: Option<(
                f32,
                procmodel_dom::spatial::RayHit,
                procmodel_terrain::Material,
            )> = None;
            voxels.visit(procmodel_terrain::CellRegion { min, max }, |cell, v| {
                let water = !ignore_water && v.liquid > 127 && v.liquid > v.occupancy;
                if v.occupancy <= 127 && !water {
                    return;
                }
                let cube = Body::new(
                    procmodel_dom::spatial::PartShape::Block,
                    glam::Affine3A::from_translation(procmodel_terrain::cell_center_to_world(cell)),
                    glam::Vec3::splat(4.0),
                );
                if let Some(h) = procmodel_dom::spatial::sweep(&moving, dir, &cube)
                    && found.as_ref().is_none_or(|(t, _, _)| h.t < *t)
                {
                    let material = if water {
                        procmodel_terrain::Material::Water
                    } else {
                        v.material
                    };
                    found = Some((h.t, h, material));
                }
            });
            found
        })?;
        if let Some((t_hit, h, material)) = hit {
            let hit = Hit::terrain(t.r, t_hit, h.position, h.normal, material, dir.length());
            Hit::keep_nearer(&mut best, hit);
        }
    }
    Ok(best)
}

fn result_value(lua: &Lua, hit: Option<Hit>) -> mlua::Result<Value> {
    match hit {
        Some(h) => Ok(Value::UserData(lua.create_userdata(RaycastResult(h))?)),
        None => Ok(Value::Nil),
    }
}

/// `part.CFrame = cf` through the instance's own property write (its checks and events).
fn set_cframe(lua: &Lua, part: Value, cf: Value) -> mlua::Result<()> {
    let f = crate::methods::luau_function(
        lua,
        "procmodel.set_cframe",
        "=[BulkMoveTo]",
        "return function(p, cf) p.CFrame = cf end",
        || Ok(()),
    )?;
    f.call((part, cf))
}

/// `Model:MoveTo`: translates the model (its rotation kept) so that its PrimaryPart's
/// position, or its pivot's without one, is at `target`; then, in a world, lifts it until
/// none of its parts' boxes overlap another part's box or a solid terrain cell.
fn move_to(lua: &Lua, this: &Instance, target: glam::Vec3) -> mlua::Result<()> {
    let target = finite(target, "MoveTo", "the position")?;
    let root = {
        let mut c = ctx(lua)?;
        c.check_write(this.r, || "MoveTo".into())?;
        let from = match procmodel_dom::primary_part_of(&c.dom, this.r) {
            Some(p) => c
                .dom
                .get_by_ref(p)
                .map(|i| glam::Vec3::from(procmodel_dom::part_cframe(i).translation)),
            None => procmodel_dom::get_pivot(&c.dom, this.r).map(|p| p.translation.into()),
        }
        .unwrap_or(target);
        procmodel_dom::move_by(
            &mut c.dom,
            this.r,
            glam::Affine3A::from_translation(target - from),
        );
        world_root_of(&c, this.r)
    };
    let Some(root) = root else {
        return Ok(());
    };
    // The Workspace's Terrain (a child of it), without a walk of the world.
    let terrain = {
        let c = ctx(lua)?;
        begin(&c, &root, "MoveTo")?;
        c.dom
            .get_by_ref(root.r)
            .filter(|w| is_a(&w.class, "Workspace"))
            .and_then(|w| {
                w.children().iter().find_map(|&r| {
                    let t = c.dom.get_by_ref(r)?;
                    (t.class == "Terrain").then_some(Instance { r, class: t.class })
                })
            })
    };
    for _ in 0..MOVE_TO_STEPS {
        let (own, mut lift) = {
            let c = ctx(lua)?;
            let own = model_boxes(&c, this.r);
            let Some((lo, hi)) = own
                .iter()
                .copied()
                .reduce(|(a, b), (x, y)| (a.min(x), b.max(y)))
            else {
                return Ok(());
            };
            let p = QueryParams::list(vec![this.r], false);
            let w = world(&c, root.r, &p, None, Region::Box(lo, hi));
            let mut lift = 0.0f32;
            for (_, b) in &w.parts {
                let (blo, bhi) = b.aabb();
                for &(alo, ahi) in &own {
                    if boxes_overlap(alo, ahi, blo, bhi) {
                        lift = lift.max(bhi.y - alo.y);
                    }
                }
            }
            (own, lift)
        };
        if let Some(t) = &terrain {
            let cells = crate::classes::read_voxels(lua, t, "MoveTo", |v| terrain_lift(v, &own))?;
            lift = lift.max(cells);
        }
        if lift <= 0.0 {
            break;
        }
        let mut c = ctx(lua)?;
        procmodel_dom::move_by(
            &mut c.dom,
            this.r,
            glam::Affine3A::from_translation(glam::Vec3::Y * lift),
        );
    }
    Ok(())
}

/// The nearest WorldRoot ancestor of `r`.
fn world_root_of(c: &Ctx, r: Ref) -> Option<Instance> {
    let mut cur = c.dom.get_by_ref(r)?.parent();
    while let Some(i) = c.dom.get_by_ref(cur) {
        if is_a(&i.class, "WorldRoot") {
            return Some(Instance {
                r: cur,
                class: i.class,
            });
        }
        cur = i.parent();
    }
    None
}

/// The world boxes of the BaseParts in the subtree of `r`.
fn model_boxes(c: &Ctx, r: Ref) -> Vec<(glam::Vec3, glam::Vec3)> {
    let mut out = Vec::new();
    let mut stack = vec![r];
    while let Some(cur) = stack.pop() {
        let Some(i) = c.dom.get_by_ref(cur) else {
            continue;
        };
        if is_a(&i.class, "BasePart") {
            out.push(body(i).aabb());
        }
        stack.extend(i.children().iter().copied());
    }
    out
}

/// Whether two boxes overlap by more than the spatial tolerance on every axis (touching is
/// not in the way).
fn boxes_overlap(alo: glam::Vec3, ahi: glam::Vec3, blo: glam::Vec3, bhi: glam::Vec3) -> bool {
    let tol = procmodel_dom::spatial::TOLERANCE;
    (ahi.min(bhi) - alo.max(blo))
        .cmpgt(glam::Vec3::splat(tol))
        .all()
}

/// How far `boxes` must rise to clear the solid terrain cells (occupancy over half) they
/// overlap, each cell taken as a 4-stud cube: the highest such cell's top above each box's
/// bottom. Boxes spanning more than 2^22 cells are not checked.
fn terrain_lift(t: &procmodel_terrain::Terrain, boxes: &[(glam::Vec3, glam::Vec3)]) -> f32 {
    let tol = procmodel_dom::spatial::TOLERANCE;
    let mut lift = 0.0f32;
    for &(lo, hi) in boxes {
        let min = ((lo + tol) / 4.0).floor().as_ivec3();
        let max = ((hi - tol) / 4.0).floor().as_ivec3() + glam::IVec3::ONE;
        let n = (max - min).max(glam::IVec3::ZERO).as_i64vec3();
        if n.x * n.y * n.z > 1 << 22 {
            continue;
        }
        let mut top: Option<i32> = None;
        t.visit(procmodel_terrain::CellRegion { min, max }, |cell, v| {
            if v.occupancy > 127 {
                top = Some(top.map_or(cell.y, |y| y.max(cell.y)));
            }
        });
        if let Some(y) = top {
            lift = lift.max((y + 1) as f32 * 4.0 - lo.y);
        }
    }
    lift
}
