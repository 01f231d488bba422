//! `EditableMesh`: Roblox's object for building a mesh at run time (vertices, triangles and
//! per-corner normals, UVs and colors, all named by stable IDs), and the snapshot of it that
//! a `MeshPart` carries ([`EditableMesh::snapshot`], a [`procmodel_mesh::TriangleMesh`]).
//!
//! Follows the engine reference: `AddTriangle` gives each corner the normal, UV and color
//! IDs the vertex already has on another face, or new ones (an automatic normal, UV (0, 0),
//! white, alpha 1); an automatic normal is the area-weighted sum of the normals of the faces
//! using it, normalised; at most 60,000 vertices and 20,000 triangles. Counter-clockwise
//! corners face the viewer. Every mesh of a VM draws on one shared [`MeshBudget`], so a
//! script cannot escape the VM's memory limit through meshes: `AssetService:CreateEditableMesh`
//! returns nil once it is spent, as Roblox does when its editable-memory budget is.
//!
//! IDs are numbers: the element's slot times 8 plus its kind. A removed element's slot is
//! never reused, so an ID stays unique for the mesh's life.
//!
//! The `Batch*` methods stop at the first bad ID after applying the elements before it, as
//! the reference says. `RaycastLocal` takes the direction's length as the ray's, as
//! `WorldRoot:Raycast` does. Not available: bones and FACS poses (they say so when called).

use std::cell::Cell;
use std::rc::Rc;

use glam::{Vec2, Vec3};
use mlua::{MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value};
use procmodel_mesh::{MAX_ATTRIBUTES, MAX_TRIANGLES, MAX_VERTICES, Triangle, TriangleMesh};

use crate::args::{Args, as_number};
use crate::color3::Color3;
use crate::vector2::Vector2;
use crate::vector3::Vector3;

/// How many mesh elements (vertices, faces, normals, UVs, colors, removed ones included) the
/// meshes of one VM may hold at once: about 100 MB at most, room for seven meshes at
/// Roblox's limits (260,000 elements each).
pub const DEFAULT_BUDGET: usize = 2_000_000;

/// The element allowance every mesh of one VM draws on; a mesh gives its elements back
/// when it is cleared or collected. It also numbers the VM's meshes and keeps the last state
/// of linked meshes collected before their parts were updated ([`MeshBudget::take_orphans`]).
#[derive(Clone, Debug)]
pub struct MeshBudget(Rc<Cell<usize>>, Rc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    next_uid: Cell<u64>,
    orphans: std::cell::RefCell<Vec<(u64, TriangleMesh)>>,
}

impl MeshBudget {
    pub fn new(elements: usize) -> Self {
        MeshBudget(Rc::new(Cell::new(elements)), Rc::default())
    }

    /// Elements still available.
    pub fn remaining(&self) -> usize {
        self.0.get()
    }

    /// The last state of each linked mesh that was collected with changes its parts have
    /// not shown yet: (its [`EditableMesh::uid`], the mesh), in the order collected.
    pub fn take_orphans(&self) -> Vec<(u64, TriangleMesh)> {
        std::mem::take(&mut *self.1.orphans.borrow_mut())
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Vertex = 1,
    Face = 2,
    Normal = 3,
    Uv = 4,
    Color = 5,
}

impl Kind {
    /// The letter `IdDebugString` names the kind by.
    fn letter(self) -> &'static str {
        match self {
            Kind::Vertex => "v",
            Kind::Face => "f",
            Kind::Normal => "n",
            Kind::Uv => "u",
            Kind::Color => "c",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Kind::Vertex => "vertex",
            Kind::Face => "face",
            Kind::Normal => "normal",
            Kind::Uv => "UV",
            Kind::Color => "color",
        }
    }
}

fn id(kind: Kind, slot: usize) -> f64 {
    (slot as u64 * 8 + kind as u64) as f64
}

/// The IDs of `kind` of the live slots among `slots`, in ID order.
fn live_ids<T>(slots: &[Option<T>], kind: Kind) -> Vec<f64> {
    let live = slots.iter().enumerate().filter(|(_, s)| s.is_some());
    live.map(|(i, _)| id(kind, i)).collect()
}

/// `slots` as IDs of `kind`, sorted.
fn sorted_ids(kind: Kind, mut slots: Vec<u32>) -> Vec<f64> {
    slots.sort_unstable();
    slots.into_iter().map(|s| id(kind, s as usize)).collect()
}

/// The index `slot` of `map` renumbers to: the next index of `out` the first time (pushing
/// `value()` there), its number since then.
fn first_use<T>(map: &mut [u32], slot: u32, out: &mut Vec<T>, value: impl FnOnce() -> T) -> u32 {
    let m = &mut map[slot as usize];
    if *m == u32::MAX {
        *m = out.len() as u32;
        out.push(value());
    }
    *m
}

/// The kind an ID names by its form (not whether it is live).
fn kind_of(v: &Value) -> Option<Kind> {
    let n = as_number(v)?;
    if !(n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n < 2f64.powi(53)) {
        return None;
    }
    Some(match n as u64 % 8 {
        1 => Kind::Vertex,
        2 => Kind::Face,
        3 => Kind::Normal,
        4 => Kind::Uv,
        5 => Kind::Color,
        _ => return None,
    })
}

/// Argument `pos` as an `Enum.MeshAttribute` item.
fn mesh_attribute(a: &Args, pos: usize) -> R<Kind> {
    match crate::args::as_ud::<crate::enums::EnumItem>(a.get(pos)) {
        Some(item) if item.enum_name == "MeshAttribute" => Ok(match item.name {
            "Vertex" => Kind::Vertex,
            "Face" => Kind::Face,
            "Normal" => Kind::Normal,
            "UV" => Kind::Uv,
            _ => Kind::Color,
        }),
        _ => Err(a.bad(pos, "Enum.MeshAttribute")),
    }
}

/// The values of array argument `pos`, 1 to its length.
fn array(a: &Args, pos: usize) -> R<Vec<Value>> {
    let t = a.table(pos)?;
    (1..=t.raw_len()).map(|i| t.raw_get::<Value>(i)).collect()
}

/// Element `i` (0-based) of an array argument as its own one-argument list, so the
/// singular checks name it: `invalid argument #2 to 'BatchSetValues' (entry 3: …)`.
fn entry_error(a: &Args, pos: usize, i: usize, e: mlua::Error) -> mlua::Error {
    let text = e.to_string();
    let detail = text
        .split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .unwrap_or(&text);
    a.error(pos, &format!("entry {}: {detail}", i + 1))
}

#[derive(Clone, Copy, Debug)]
struct Face {
    vertices: [u32; 3],
    normals: [u32; 3],
    uvs: [u32; 3],
    colors: [u32; 3],
}

impl Face {
    fn ids(&self, kind: Kind) -> [u32; 3] {
        match kind {
            Kind::Vertex => self.vertices,
            Kind::Normal => self.normals,
            Kind::Uv => self.uvs,
            Kind::Color => self.colors,
            Kind::Face => unreachable!("a face has no face IDs"),
        }
    }

    /// The corner at vertex slot `v`, if it is one of this face's.
    fn corner_of(&self, v: u32) -> Option<usize> {
        self.vertices.iter().position(|&x| x == v)
    }

    fn ids_mut(&mut self, kind: Kind) -> &mut [u32; 3] {
        match kind {
            Kind::Vertex => &mut self.vertices,
            Kind::Normal => &mut self.normals,
            Kind::Uv => &mut self.uvs,
            Kind::Color => &mut self.colors,
            Kind::Face => unreachable!("a face has no face IDs"),
        }
    }
}

/// A Roblox `EditableMesh` (module docs).
#[derive(Debug)]
pub struct EditableMesh {
    vertices: Vec<Option<Vec3>>,
    /// `Some(None)`: an automatic normal.
    normals: Vec<Option<Option<Vec3>>>,
    uvs: Vec<Option<Vec2>>,
    colors: Vec<Option<(Color3, f32)>>,
    faces: Vec<Option<Face>>,
    /// The faces each vertex slot is a corner of, in the order they were attached.
    vertex_faces: Vec<Vec<u32>>,
    live_vertices: usize,
    live_faces: usize,
    destroyed: bool,
    /// Made by `CreateEditableMeshAsync` without `FixedSize = false`: values may change,
    /// elements may not be added or removed.
    fixed_size: bool,
    /// Counts the calls that may have changed the mesh (parts showing it re-read it).
    version: u64,
    /// This mesh's number in its VM.
    uid: u64,
    /// The oldest version a part linked to it shows (`u64::MAX`: no part is linked).
    shown: u64,
    budget: MeshBudget,
    /// Elements taken from the budget.
    charged: usize,
}

impl Drop for EditableMesh {
    fn drop(&mut self) {
        if !self.destroyed {
            self.leave_last_state();
        }
        self.refund();
    }
}

type R<T> = mlua::Result<T>;

impl EditableMesh {
    /// An empty mesh drawing on `budget`.
    pub fn new(budget: MeshBudget) -> Self {
        EditableMesh {
            vertices: Vec::new(),
            normals: Vec::new(),
            uvs: Vec::new(),
            colors: Vec::new(),
            faces: Vec::new(),
            vertex_faces: Vec::new(),
            live_vertices: 0,
            live_faces: 0,
            destroyed: false,
            fixed_size: false,
            version: 0,
            uid: {
                let n = budget.1.next_uid.get() + 1;
                budget.1.next_uid.set(n);
                n
            },
            shown: u64::MAX,
            budget,
            charged: 0,
        }
    }

    /// A copy drawing on the same budget (`CreateEditableMeshAsync` of an object Content),
    /// fixed-size or not, or None when the budget cannot hold it. IDs stay the same in the
    /// copy.
    pub fn duplicate(&self, fixed_size: bool) -> Option<EditableMesh> {
        let left = self.budget.0.get();
        if left < self.charged {
            return None;
        }
        self.budget.0.set(left - self.charged);
        let mut copy = EditableMesh::new(self.budget.clone());
        copy.vertices = self.vertices.clone();
        copy.normals = self.normals.clone();
        copy.uvs = self.uvs.clone();
        copy.colors = self.colors.clone();
        copy.faces = self.faces.clone();
        copy.vertex_faces = self.vertex_faces.clone();
        copy.live_vertices = self.live_vertices;
        copy.live_faces = self.live_faces;
        copy.charged = self.charged;
        copy.fixed_size = fixed_size;
        Some(copy)
    }

    fn refund(&mut self) {
        self.budget.0.set(self.budget.0.get() + self.charged);
        self.charged = 0;
    }

    fn clear(&mut self) {
        self.vertices = Vec::new();
        self.normals = Vec::new();
        self.uvs = Vec::new();
        self.colors = Vec::new();
        self.faces = Vec::new();
        self.vertex_faces = Vec::new();
        self.live_vertices = 0;
        self.live_faces = 0;
        self.refund();
    }

    fn charge(&mut self, func: &str) -> R<()> {
        let left = self.budget.0.get();
        if left == 0 {
            return Err(mlua::Error::runtime(format!(
                "{func}: the EditableMesh memory budget is spent ({DEFAULT_BUDGET} elements in all \
                 meshes of this script); destroy meshes you no longer need"
            )));
        }
        self.budget.0.set(left - 1);
        self.charged += 1;
        Ok(())
    }

    /// Refuses a destroyed mesh; counts a call that may change the mesh in [`Self::version`].
    fn alive(&mut self, func: &str) -> R<()> {
        if self.destroyed {
            return Err(mlua::Error::runtime(format!(
                "{func}: this EditableMesh has been destroyed"
            )));
        }
        const TOPOLOGY: [&str; 11] = [
            "AddVertex",
            "AddTriangle",
            "AddNormal",
            "AddUV",
            "AddColor",
            "RemoveFace",
            "RemoveUnused",
            "Clear",
            "BatchAdd",
            "BatchRemove",
            "MergeVertices",
        ];
        if self.fixed_size && TOPOLOGY.contains(&func) {
            return Err(mlua::Error::runtime(format!(
                "{func}: this EditableMesh is fixed-size (FixedSize): its values can change, but \
                 nothing can be added or removed (make it with {{FixedSize = false}})"
            )));
        }
        let reads = ["Get", "Find", "BatchGet", "RaycastLocal", "IdDebugString"];
        if !reads.iter().any(|r| func.starts_with(r)) {
            self.version += 1;
        }
        Ok(())
    }

    /// Changes with every call that may have changed the mesh.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// This mesh's number among its VM's meshes.
    pub fn uid(&self) -> u64 {
        self.uid
    }

    /// Destroyed or collected with changes the parts showing it have not taken: keeps them
    /// in the budget's orphans for the host's next update of those parts.
    fn leave_last_state(&mut self) {
        if self.shown != u64::MAX && self.shown != self.version {
            let last = self.snapshot();
            self.budget.1.orphans.borrow_mut().push((self.uid, last));
            self.shown = self.version;
        }
    }

    /// Records that a part now shows this mesh as it is, keeping track of parts linked
    /// earlier that still show an older version.
    pub fn note_linked(&mut self) {
        if self.shown == u64::MAX {
            self.shown = self.version;
        }
    }

    /// Records that every part showing this mesh shows its current version (the host calls
    /// it when it has updated the parts).
    pub fn mark_shown(&mut self) {
        self.shown = self.version;
    }

    fn exists(&self, kind: Kind, slot: usize) -> bool {
        fn live<T>(slots: &[Option<T>], slot: usize) -> bool {
            slots.get(slot).is_some_and(Option::is_some)
        }
        match kind {
            Kind::Vertex => live(&self.vertices, slot),
            Kind::Face => live(&self.faces, slot),
            Kind::Normal => live(&self.normals, slot),
            Kind::Uv => live(&self.uvs, slot),
            Kind::Color => live(&self.colors, slot),
        }
    }

    /// The slot of argument `pos`, which must be a live ID of `kind`.
    fn slot(&self, a: &Args, pos: usize, kind: Kind) -> R<usize> {
        let Some(n) = as_number(a.get(pos)) else {
            return Err(a.bad(pos, "number"));
        };
        if kind_of(a.get(pos)) == Some(kind) {
            let slot = (n as u64 / 8) as usize;
            if self.exists(kind, slot) {
                return Ok(slot);
            }
        }
        Err(a.error(
            pos,
            &format!("{} is not a {} ID of this mesh", fmt_id(n), kind.noun()),
        ))
    }

    /// The live slot `v` names, of `kind` (a one-value [`EditableMesh::slot`]).
    fn slot_of(&self, v: &Value, kind: Kind) -> R<usize> {
        self.slot(
            &Args::new("", MultiValue::from_vec(vec![v.clone()])),
            1,
            kind,
        )
    }

    /// Sets the `kind` IDs of face `f`'s corners (the vertex lists follow a vertex change).
    fn set_face_ids(&mut self, f: usize, kind: Kind, ids: [u32; 3]) {
        if kind == Kind::Vertex {
            let old = self.faces[f].expect("live").vertices;
            self.detach(f as u32, old);
            self.attach(f as u32, ids);
        }
        *self.faces[f].as_mut().expect("live").ids_mut(kind) = ids;
    }

    fn remove_face(&mut self, f: usize) {
        let face = self.faces[f].take().expect("live");
        self.detach(f as u32, face.vertices);
        self.live_faces -= 1;
    }

    /// The nearest face `origin + t·direction` (0 ≤ t ≤ 1) crosses, front or back (the
    /// mesh's own space): (point, face slot, barycentric weights of its three vertices).
    fn raycast(&self, origin: Vec3, direction: Vec3) -> Option<(Vec3, usize, Vec3)> {
        let mut best: Option<(f32, usize, Vec3)> = None;
        for (i, f) in self.live_faces_iter() {
            let p = self.corners(f);
            // Möller–Trumbore.
            let (e1, e2) = (p[1] - p[0], p[2] - p[0]);
            let h = direction.cross(e2);
            let det = e1.dot(h);
            if det.abs() < 1e-12 {
                continue;
            }
            let s = origin - p[0];
            let u = s.dot(h) / det;
            let q = s.cross(e1);
            let v = direction.dot(q) / det;
            let t = e2.dot(q) / det;
            if !(0.0..=1.0).contains(&u) || v < 0.0 || u + v > 1.0 || !(0.0..=1.0).contains(&t) {
                continue;
            }
            if best.is_none_or(|(bt, _, _)| t < bt) {
                best = Some((t, i, Vec3::new(1.0 - u - v, u, v)));
            }
        }
        best.map(|(t, i, w)| (origin + direction * t, i, w))
    }

    /// The point of the mesh's surface nearest `q`: (face slot, point, barycentric weights);
    /// the first face in ID order wins a tie.
    fn closest_point(&self, q: Vec3) -> Option<(usize, Vec3, Vec3)> {
        let mut best: Option<(f32, usize, Vec3, Vec3)> = None;
        for (i, f) in self.live_faces_iter() {
            let p = self.corners(f);
            let (point, w) = closest_on_triangle(q, p);
            let d = point.distance_squared(q);
            if best.is_none_or(|(bd, ..)| d < bd) {
                best = Some((d, i, point, w));
            }
        }
        best.map(|(_, i, point, w)| (i, point, w))
    }

    /// Merges each vertex into the first earlier vertex (in ID order) still standing within
    /// `tolerance`; faces take the kept vertex, their other attributes stay. Returns (merged
    /// slot, kept slot) pairs.
    fn merge_vertices(&mut self, tolerance: f32) -> Vec<(usize, usize)> {
        let cell = tolerance.max(1e-6);
        let key = |p: Vec3| (p / cell).floor().as_ivec3();
        let mut grid: std::collections::HashMap<glam::IVec3, Vec<usize>> =
            std::collections::HashMap::new();
        let mut merged = Vec::new();
        for i in 0..self.vertices.len() {
            let Some(p) = self.vertices[i] else { continue };
            let k = key(p);
            let mut into: Option<usize> = None;
            for dz in -1..=1 {
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        let near = grid.get(&(k + glam::IVec3::new(dx, dy, dz)));
                        for &j in near.into_iter().flatten() {
                            let q = self.vertices[j].expect("kept vertices are live");
                            if q.distance(p) <= tolerance && into.is_none_or(|b| j < b) {
                                into = Some(j);
                            }
                        }
                    }
                }
            }
            match into {
                None => grid.entry(k).or_default().push(i),
                Some(j) => {
                    for f in std::mem::take(&mut self.vertex_faces[i]) {
                        let face = self.faces[f as usize].as_mut().expect("live");
                        for v in face.vertices.iter_mut() {
                            if *v as usize == i {
                                *v = j as u32;
                            }
                        }
                        if !self.vertex_faces[j].contains(&f) {
                            self.vertex_faces[j].push(f);
                        }
                    }
                    self.vertices[i] = None;
                    self.live_vertices -= 1;
                    merged.push((i, j));
                }
            }
        }
        merged
    }

    /// Argument `pos` as an array of exactly three live IDs of `kind`.
    fn three(&self, a: &Args, pos: usize, kind: Kind) -> R<[u32; 3]> {
        let t = a.table(pos)?;
        if t.raw_len() != 3 {
            return Err(a.error(
                pos,
                &format!("a face takes 3 {} IDs, got {}", kind.noun(), t.raw_len()),
            ));
        }
        let mut out = [0u32; 3];
        for (k, o) in out.iter_mut().enumerate() {
            let v: Value = t.raw_get(k + 1)?;
            let inner = Args::new("", MultiValue::from_vec(vec![v]));
            *o = self.slot(&inner, 1, kind).map_err(|_| {
                a.error(
                    pos,
                    &format!("entry {} is not a {} ID of this mesh", k + 1, kind.noun()),
                )
            })? as u32;
        }
        Ok(out)
    }

    fn push_vertex(&mut self, p: Vec3, func: &str) -> R<f64> {
        if self.live_vertices >= MAX_VERTICES {
            return Err(mlua::Error::runtime(format!(
                "{func}: an EditableMesh holds at most {MAX_VERTICES} vertices"
            )));
        }
        self.charge(func)?;
        self.vertices.push(Some(p));
        self.vertex_faces.push(Vec::new());
        self.live_vertices += 1;
        Ok(id(Kind::Vertex, self.vertices.len() - 1))
    }

    fn attribute_room(&mut self, len: usize, func: &str) -> R<()> {
        if len >= MAX_ATTRIBUTES {
            return Err(mlua::Error::runtime(format!(
                "{func}: an EditableMesh holds at most {MAX_ATTRIBUTES} normals, UVs or colors each"
            )));
        }
        self.charge(func)
    }

    fn push_normal(&mut self, n: Option<Vec3>, func: &str) -> R<u32> {
        self.attribute_room(self.normals.len(), func)?;
        self.normals.push(Some(n));
        Ok(self.normals.len() as u32 - 1)
    }

    fn push_uv(&mut self, uv: Vec2, func: &str) -> R<u32> {
        self.attribute_room(self.uvs.len(), func)?;
        self.uvs.push(Some(uv));
        Ok(self.uvs.len() as u32 - 1)
    }

    fn push_color(&mut self, c: Color3, alpha: f32, func: &str) -> R<u32> {
        self.attribute_room(self.colors.len(), func)?;
        self.colors.push(Some((c, alpha)));
        Ok(self.colors.len() as u32 - 1)
    }

    fn add_triangle(&mut self, v: [u32; 3], func: &str) -> R<f64> {
        if self.live_faces >= MAX_TRIANGLES {
            return Err(mlua::Error::runtime(format!(
                "{func}: an EditableMesh holds at most {MAX_TRIANGLES} triangles"
            )));
        }
        let mut face = Face {
            vertices: v,
            normals: [0; 3],
            uvs: [0; 3],
            colors: [0; 3],
        };
        for (k, &vk) in v.iter().enumerate() {
            // The corner this vertex has on another face (the first it was attached to).
            let shared = self.vertex_faces[vk as usize].first().map(|&f| {
                let other = self.faces[f as usize].expect("vertex_faces lists live faces");
                let c = other.corner_of(vk).expect("a corner");
                (other.normals[c], other.uvs[c], other.colors[c])
            });
            let (n, uv, c) = match shared {
                Some(ids) => ids,
                None => (
                    self.push_normal(None, func)?,
                    self.push_uv(Vec2::ZERO, func)?,
                    self.push_color(Color3::new(1.0, 1.0, 1.0), 1.0, func)?,
                ),
            };
            face.normals[k] = n;
            face.uvs[k] = uv;
            face.colors[k] = c;
        }
        self.charge(func)?;
        let f = self.faces.len() as u32;
        self.faces.push(Some(face));
        self.attach(f, v);
        self.live_faces += 1;
        Ok(id(Kind::Face, f as usize))
    }

    /// Lists face `f` (just added, or just detached) under its vertices, once each: it is
    /// the last face attached, so a repeat can only be at the end of a list.
    fn attach(&mut self, f: u32, vertices: [u32; 3]) {
        for v in vertices {
            let list = &mut self.vertex_faces[v as usize];
            if list.last() != Some(&f) {
                list.push(f);
            }
        }
    }

    fn detach(&mut self, f: u32, vertices: [u32; 3]) {
        for v in vertices {
            self.vertex_faces[v as usize].retain(|&x| x != f);
        }
    }

    fn live_faces_iter(&self) -> impl Iterator<Item = (usize, &Face)> {
        self.faces
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.as_ref().map(|f| (i, f)))
    }

    /// The positions of face `f`'s corners.
    fn corners(&self, f: &Face) -> [Vec3; 3] {
        f.vertices
            .map(|v| self.vertices[v as usize].expect("live face, live vertices"))
    }

    /// The face normal (unnormalised: twice the area) of face `f`.
    fn face_normal(&self, f: &Face) -> Vec3 {
        let p = self.corners(f);
        (p[1] - p[0]).cross(p[2] - p[0])
    }

    /// Every normal slot's value, automatic ones computed from the faces using them.
    fn resolved_normals(&self) -> Vec<Vec3> {
        let mut sums = vec![Vec3::ZERO; self.normals.len()];
        for (_, f) in self.live_faces_iter() {
            let n = self.face_normal(f);
            for &k in &f.normals {
                sums[k as usize] += n;
            }
        }
        self.normals
            .iter()
            .zip(sums)
            .map(|(slot, sum)| match slot {
                Some(Some(n)) => *n,
                _ => sum.normalize_or_zero(),
            })
            .collect()
    }

    fn bounds(&self) -> Option<(Vec3, Vec3)> {
        let mut it = self.vertices.iter().flatten();
        let first = *it.next()?;
        Some(it.fold((first, first), |(lo, hi), &p| (lo.min(p), hi.max(p))))
    }

    /// The center of the bounding box of the vertices (zero for a mesh without any).
    pub fn center(&self) -> Vec3 {
        self.bounds().map_or(Vec3::ZERO, |(lo, hi)| (lo + hi) * 0.5)
    }

    /// The size of the bounding box of the vertices.
    pub fn size(&self) -> Vec3 {
        self.bounds().map_or(Vec3::ZERO, |(lo, hi)| hi - lo)
    }

    /// Whether `Destroy` was called.
    pub fn is_destroyed(&self) -> bool {
        self.destroyed
    }

    /// The triangles and what they use, renumbered in order of first use by the faces in ID
    /// order; automatic normals resolved. Vertices no face uses are left out.
    pub fn snapshot(&self) -> TriangleMesh {
        let normals = self.resolved_normals();
        let mut mesh = TriangleMesh::default();
        let mut maps: [Vec<u32>; 4] = [
            vec![u32::MAX; self.vertices.len()],
            vec![u32::MAX; self.normals.len()],
            vec![u32::MAX; self.uvs.len()],
            vec![u32::MAX; self.colors.len()],
        ];
        for (_, f) in self.live_faces_iter() {
            let mut t = Triangle::default();
            for c in 0..3 {
                t.vertices[c] = first_use(&mut maps[0], f.vertices[c], &mut mesh.positions, || {
                    self.vertices[f.vertices[c] as usize]
                        .expect("live")
                        .to_array()
                });
                t.normals[c] = first_use(&mut maps[1], f.normals[c], &mut mesh.normals, || {
                    normals[f.normals[c] as usize].to_array()
                });
                t.uvs[c] = first_use(&mut maps[2], f.uvs[c], &mut mesh.uvs, || {
                    self.uvs[f.uvs[c] as usize].expect("live").to_array()
                });
                t.colors[c] = first_use(&mut maps[3], f.colors[c], &mut mesh.colors, || {
                    let (c3, a) = self.colors[f.colors[c] as usize].expect("live");
                    [c3.r, c3.g, c3.b, a]
                });
            }
            mesh.triangles.push(t);
        }
        mesh
    }

    fn ids_of(&self, kind: Kind) -> Vec<f64> {
        match kind {
            Kind::Vertex => live_ids(&self.vertices, kind),
            Kind::Face => live_ids(&self.faces, kind),
            Kind::Normal => live_ids(&self.normals, kind),
            Kind::Uv => live_ids(&self.uvs, kind),
            Kind::Color => live_ids(&self.colors, kind),
        }
    }

    /// The faces whose corners use attribute `slot` of `kind`, in ID order.
    fn faces_with(&self, kind: Kind, slot: u32) -> Vec<f64> {
        self.live_faces_iter()
            .filter(|(_, f)| f.ids(kind).contains(&slot))
            .map(|(i, _)| id(Kind::Face, i))
            .collect()
    }

    fn vertices_with(&self, kind: Kind, slot: u32) -> Vec<f64> {
        let mut out: Vec<u32> = Vec::new();
        for (_, f) in self.live_faces_iter() {
            for c in 0..3 {
                if f.ids(kind)[c] == slot && !out.contains(&f.vertices[c]) {
                    out.push(f.vertices[c]);
                }
            }
        }
        sorted_ids(Kind::Vertex, out)
    }

    /// The corner of face `f` at vertex `v` (argument error if `v` is not a corner of it).
    fn corner(&self, a: &Args, v: usize, f: usize) -> R<usize> {
        let face = self.faces[f].expect("checked live");
        face.corner_of(v as u32)
            .ok_or_else(|| a.error(1, &format!("vertex v{v} is not a corner of face f{f}")))
    }

    fn remove_unused(&mut self) -> Vec<f64> {
        let mut used = [
            vec![false; self.vertices.len()],
            vec![false; self.normals.len()],
            vec![false; self.uvs.len()],
            vec![false; self.colors.len()],
        ];
        for (_, f) in self.live_faces_iter() {
            for (k, kind) in [Kind::Vertex, Kind::Normal, Kind::Uv, Kind::Color]
                .iter()
                .enumerate()
            {
                for i in f.ids(*kind) {
                    used[k][i as usize] = true;
                }
            }
        }
        let mut removed = Vec::new();
        fn sweep<T>(slots: &mut [Option<T>], used: &[bool], kind: Kind, removed: &mut Vec<f64>) {
            for (i, s) in slots.iter_mut().enumerate() {
                if s.is_some() && !used[i] {
                    *s = None;
                    removed.push(id(kind, i));
                }
            }
        }
        sweep(&mut self.vertices, &used[0], Kind::Vertex, &mut removed);
        self.live_vertices -= removed.len();
        sweep(&mut self.normals, &used[1], Kind::Normal, &mut removed);
        sweep(&mut self.uvs, &used[2], Kind::Uv, &mut removed);
        sweep(&mut self.colors, &used[3], Kind::Color, &mut removed);
        removed
    }

    /// Attribute `kind` of every face vertex `v` is a corner of, in face order.
    fn vertex_attributes(&self, v: usize, kind: Kind) -> Vec<f64> {
        self.vertex_faces[v]
            .iter()
            .map(|&f| {
                let face = self.faces[f as usize].expect("live");
                let c = face.corner_of(v as u32).expect("corner");
                id(kind, face.ids(kind)[c] as usize)
            })
            .collect()
    }
}

/// The point of triangle `p` nearest `q` and its barycentric weights (Ericson, Real-Time
/// Collision Detection, 5.1.5).
fn closest_on_triangle(q: Vec3, p: [Vec3; 3]) -> (Vec3, Vec3) {
    let [a, b, c] = p;
    let (ab, ac, ap) = (b - a, c - a, q - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, Vec3::X);
    }
    let bp = q - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return (b, Vec3::Y);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (a + ab * v, Vec3::new(1.0 - v, v, 0.0));
    }
    let cp = q - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return (c, Vec3::Z);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (a + ac * w, Vec3::new(1.0 - w, 0.0, w));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + (c - b) * w, Vec3::new(0.0, 1.0 - w, w));
    }
    let denom = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denom, vc * denom);
    (a + ab * v + ac * w, Vec3::new(1.0 - v - w, v, w))
}

fn fmt_id(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// A finite Vector3 value.
fn vec3_value(v: &Value) -> Option<Vec3> {
    crate::args::as_ud::<Vector3>(v)
        .map(|v| v.0)
        .filter(|v| v.is_finite())
}

/// The one kind the IDs of array argument `pos` name (None for an empty array).
fn same_kind(a: &Args, pos: usize, ids: &[Value]) -> R<Option<Kind>> {
    let mut kind = None;
    for (i, v) in ids.iter().enumerate() {
        let k =
            kind_of(v).ok_or_else(|| a.error(pos, &format!("entry {} is not a mesh ID", i + 1)))?;
        if kind.is_some_and(|first| first != k) {
            return Err(a.error(
                pos,
                &format!(
                    "entry {} is a {} ID; the others are not: one kind per call",
                    i + 1,
                    k.noun()
                ),
            ));
        }
        kind = Some(k);
    }
    Ok(kind)
}

fn vec3(a: &Args, pos: usize) -> R<Vec3> {
    let v = a.ud::<Vector3>(pos, "Vector3")?.0;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(a.error(pos, "the vector is not finite"))
    }
}

const NOT_AVAILABLE: &[&str] = &[
    "AddBone",
    "GetBoneByName",
    "GetBoneCFrame",
    "GetBoneIsVirtual",
    "GetBoneName",
    "GetBoneParent",
    "GetBones",
    "GetFacsCorrectivePose",
    "GetFacsCorrectivePoses",
    "GetFacsPose",
    "GetFacsPoses",
    "GetVertexBones",
    "GetVertexBoneWeights",
    "RemoveBone",
    "SetBoneCFrame",
    "SetBoneIsVirtual",
    "SetBoneName",
    "SetBoneParent",
    "SetFacsBonePose",
    "SetFacsCorrectivePose",
    "SetFacsPose",
    "SetVertexBones",
    "SetVertexBoneWeights",
];

macro_rules! method {
    ($m:ident, $name:literal, |$this:ident, $a:ident| $body:expr) => {
        $m.add_method_mut($name, |_, $this: &mut EditableMesh, args: MultiValue| {
            #[allow(unused_variables)]
            let $a = Args::new($name, args);
            $this.alive($name)?;
            $body
        });
    };
}

impl UserData for EditableMesh {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        // An Object, not an Instance (the engine reference's class tree).
        f.add_meta_field(MetaMethod::Type, "Object");
        f.add_field_method_get("ClassName", |_, _| Ok("EditableMesh"));
        f.add_field_method_get("FixedSize", |_, this| Ok(this.fixed_size));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, _, ()| Ok("EditableMesh"));
        for &name in NOT_AVAILABLE {
            m.add_method(name, move |_, _, _: MultiValue| -> R<()> {
                Err(mlua::Error::runtime(format!(
                    "EditableMesh:{name} is a Roblox method that procmodel does not implement"
                )))
            });
        }
        m.add_method("IsA", |_, _, class: String| {
            Ok(class == "EditableMesh" || class == "Object")
        });
        // Parts showing the mesh keep its last state (see `procmodel_luau`'s mesh links);
        // its elements return to the budget now.
        m.add_method_mut("Destroy", |_, this, ()| {
            if !this.destroyed {
                this.leave_last_state();
                this.clear();
                this.destroyed = true;
            }
            Ok(())
        });
        method!(m, "Clear", |this, a| {
            this.clear();
            Ok(())
        });
        method!(m, "Triangulate", |this, a| Ok(()));
        method!(m, "AddVertex", |this, a| {
            let p = vec3(&a, 1)?;
            this.push_vertex(p, "AddVertex")
        });
        method!(m, "AddTriangle", |this, a| {
            let v = [
                this.slot(&a, 1, Kind::Vertex)? as u32,
                this.slot(&a, 2, Kind::Vertex)? as u32,
                this.slot(&a, 3, Kind::Vertex)? as u32,
            ];
            this.add_triangle(v, "AddTriangle")
        });
        method!(m, "AddNormal", |this, a| {
            let n = if a.is_nil(1) {
                None
            } else {
                Some(vec3(&a, 1)?)
            };
            Ok(id(Kind::Normal, this.push_normal(n, "AddNormal")? as usize))
        });
        method!(m, "AddUV", |this, a| {
            let uv = a.ud::<Vector2>(1, "Vector2")?.0;
            Ok(id(Kind::Uv, this.push_uv(uv, "AddUV")? as usize))
        });
        method!(m, "AddColor", |this, a| {
            let c = a.ud::<Color3>(1, "Color3")?;
            let alpha = a.f32(2)?;
            Ok(id(
                Kind::Color,
                this.push_color(c, alpha, "AddColor")? as usize,
            ))
        });
        method!(m, "GetPosition", |this, a| {
            let v = this.slot(&a, 1, Kind::Vertex)?;
            Ok(Vector3(this.vertices[v].expect("live")))
        });
        method!(m, "SetPosition", |this, a| {
            let v = this.slot(&a, 1, Kind::Vertex)?;
            this.vertices[v] = Some(vec3(&a, 2)?);
            Ok(())
        });
        method!(m, "GetNormal", |this, a| {
            let n = this.slot(&a, 1, Kind::Normal)?;
            Ok(Vector3(this.resolved_normals()[n]))
        });
        method!(m, "SetNormal", |this, a| {
            let n = this.slot(&a, 1, Kind::Normal)?;
            this.normals[n] = Some(Some(vec3(&a, 2)?));
            Ok(())
        });
        method!(m, "ResetNormal", |this, a| {
            let n = this.slot(&a, 1, Kind::Normal)?;
            this.normals[n] = Some(None);
            Ok(())
        });
        method!(m, "GetUV", |this, a| {
            let uv = this.slot(&a, 1, Kind::Uv)?;
            Ok(Vector2(this.uvs[uv].expect("live")))
        });
        method!(m, "SetUV", |this, a| {
            let uv = this.slot(&a, 1, Kind::Uv)?;
            this.uvs[uv] = Some(a.ud::<Vector2>(2, "Vector2")?.0);
            Ok(())
        });
        method!(m, "GetColor", |this, a| {
            let c = this.slot(&a, 1, Kind::Color)?;
            Ok(this.colors[c].expect("live").0)
        });
        method!(m, "SetColor", |this, a| {
            let c = this.slot(&a, 1, Kind::Color)?;
            let color = a.ud::<Color3>(2, "Color3")?;
            let slot = this.colors[c].as_mut().expect("live");
            slot.0 = color;
            Ok(())
        });
        method!(m, "GetColorAlpha", |this, a| {
            let c = this.slot(&a, 1, Kind::Color)?;
            Ok(this.colors[c].expect("live").1)
        });
        method!(m, "SetColorAlpha", |this, a| {
            let c = this.slot(&a, 1, Kind::Color)?;
            let alpha = a.f32(2)?;
            this.colors[c].as_mut().expect("live").1 = alpha;
            Ok(())
        });
        method!(m, "GetVertices", |this, a| Ok(this.ids_of(Kind::Vertex)));
        method!(m, "GetFaces", |this, a| Ok(this.ids_of(Kind::Face)));
        method!(m, "GetNormals", |this, a| Ok(this.ids_of(Kind::Normal)));
        method!(m, "GetUVs", |this, a| Ok(this.ids_of(Kind::Uv)));
        method!(m, "GetColors", |this, a| Ok(this.ids_of(Kind::Color)));
        for (get, set, kind) in [
            ("GetFaceVertices", "SetFaceVertices", Kind::Vertex),
            ("GetFaceNormals", "SetFaceNormals", Kind::Normal),
            ("GetFaceUVs", "SetFaceUVs", Kind::Uv),
            ("GetFaceColors", "SetFaceColors", Kind::Color),
        ] {
            m.add_method_mut(get, move |_, this, args: MultiValue| {
                let a = Args::new(get, args);
                this.alive(get)?;
                let f = this.slot(&a, 1, Kind::Face)?;
                let face = this.faces[f].expect("live");
                Ok(face.ids(kind).map(|i| id(kind, i as usize)).to_vec())
            });
            m.add_method_mut(set, move |_, this, args: MultiValue| {
                let a = Args::new(set, args);
                this.alive(set)?;
                let f = this.slot(&a, 1, Kind::Face)?;
                let ids = this.three(&a, 2, kind)?;
                this.set_face_ids(f, kind, ids);
                Ok(())
            });
        }
        for (get, set, with_f, with_v, kind) in [
            (
                "GetVertexFaceNormal",
                "SetVertexFaceNormal",
                "GetFacesWithNormal",
                "GetVerticesWithNormal",
                Kind::Normal,
            ),
            (
                "GetVertexFaceUV",
                "SetVertexFaceUV",
                "GetFacesWithUV",
                "GetVerticesWithUV",
                Kind::Uv,
            ),
            (
                "GetVertexFaceColor",
                "SetVertexFaceColor",
                "GetFacesWithColor",
                "GetVerticesWithColor",
                Kind::Color,
            ),
        ] {
            m.add_method_mut(get, move |_, this, args: MultiValue| {
                let a = Args::new(get, args);
                this.alive(get)?;
                let v = this.slot(&a, 1, Kind::Vertex)?;
                let f = this.slot(&a, 2, Kind::Face)?;
                let c = this.corner(&a, v, f)?;
                Ok(id(kind, this.faces[f].expect("live").ids(kind)[c] as usize))
            });
            m.add_method_mut(set, move |_, this, args: MultiValue| {
                let a = Args::new(set, args);
                this.alive(set)?;
                let v = this.slot(&a, 1, Kind::Vertex)?;
                let f = this.slot(&a, 2, Kind::Face)?;
                let attr = this.slot(&a, 3, kind)? as u32;
                let c = this.corner(&a, v, f)?;
                this.faces[f].as_mut().expect("live").ids_mut(kind)[c] = attr;
                Ok(())
            });
            m.add_method_mut(with_f, move |_, this, args: MultiValue| {
                let a = Args::new(with_f, args);
                this.alive(with_f)?;
                let s = this.slot(&a, 1, kind)? as u32;
                Ok(this.faces_with(kind, s))
            });
            m.add_method_mut(with_v, move |_, this, args: MultiValue| {
                let a = Args::new(with_v, args);
                this.alive(with_v)?;
                let s = this.slot(&a, 1, kind)? as u32;
                Ok(this.vertices_with(kind, s))
            });
        }
        for (name, kind) in [
            ("GetVertexNormals", Kind::Normal),
            ("GetVertexUVs", Kind::Uv),
            ("GetVertexColors", Kind::Color),
        ] {
            m.add_method_mut(name, move |_, this, args: MultiValue| {
                let a = Args::new(name, args);
                this.alive(name)?;
                let v = this.slot(&a, 1, Kind::Vertex)?;
                Ok(this.vertex_attributes(v, kind))
            });
        }
        method!(m, "GetVertexFaces", |this, a| {
            let v = this.slot(&a, 1, Kind::Vertex)?;
            Ok(this.vertex_faces[v]
                .iter()
                .map(|&f| id(Kind::Face, f as usize))
                .collect::<Vec<_>>())
        });
        method!(m, "GetAdjacentVertices", |this, a| {
            let v = this.slot(&a, 1, Kind::Vertex)?;
            let mut out: Vec<u32> = Vec::new();
            for &f in &this.vertex_faces[v] {
                for w in this.faces[f as usize].expect("live").vertices {
                    if w as usize != v && !out.contains(&w) {
                        out.push(w);
                    }
                }
            }
            Ok(sorted_ids(Kind::Vertex, out))
        });
        method!(m, "GetAdjacentFaces", |this, a| {
            let f = this.slot(&a, 1, Kind::Face)?;
            let face = this.faces[f].expect("live");
            let mut out: Vec<u32> = Vec::new();
            for k in 0..3 {
                let (p, q) = (face.vertices[k], face.vertices[(k + 1) % 3]);
                for &g in &this.vertex_faces[p as usize] {
                    if g as usize != f
                        && !out.contains(&g)
                        && this.faces[g as usize].expect("live").vertices.contains(&q)
                    {
                        out.push(g);
                    }
                }
            }
            Ok(sorted_ids(Kind::Face, out))
        });
        method!(m, "RemoveFace", |this, a| {
            let f = this.slot(&a, 1, Kind::Face)?;
            this.remove_face(f);
            Ok(())
        });
        method!(m, "RemoveUnused", |this, a| Ok(this.remove_unused()));
        method!(m, "FindClosestVertex", |this, a| {
            let p = vec3(&a, 1)?;
            let best = this
                .vertices
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.map(|v| (i, v.distance_squared(p))))
                .fold(None, |best: Option<(usize, f32)>, (i, d)| match best {
                    Some((_, bd)) if bd <= d => best,
                    _ => Some((i, d)),
                });
            Ok(best.map(|(i, _)| id(Kind::Vertex, i)))
        });
        method!(m, "FindVerticesWithinSphere", |this, a| {
            let c = vec3(&a, 1)?;
            let r = a.f32(2)?;
            Ok(this
                .vertices
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    v.filter(|v| v.distance(c) <= r)
                        .map(|_| id(Kind::Vertex, i))
                })
                .collect::<Vec<_>>())
        });
        method!(m, "RaycastLocal", |this, a| {
            let (origin, direction) = (vec3(&a, 1)?, vec3(&a, 2)?);
            Ok(match this.raycast(origin, direction) {
                Some((p, f, w)) => (Some(Vector3(p)), Some(id(Kind::Face, f)), Some(Vector3(w))),
                None => (None, None, None),
            })
        });
        method!(m, "FindClosestPointOnSurface", |this, a| {
            let q = vec3(&a, 1)?;
            Ok(match this.closest_point(q) {
                Some((f, p, w)) => (Some(id(Kind::Face, f)), Some(Vector3(p)), Some(Vector3(w))),
                None => (None, None, None),
            })
        });
        m.add_method_mut("MergeVertices", |lua, this, args: MultiValue| {
            let a = Args::new("MergeVertices", args);
            this.alive("MergeVertices")?;
            let tolerance = a.f32(1)?;
            if !(tolerance >= 0.0 && tolerance.is_finite()) {
                return Err(a.error(1, "the tolerance must be a finite number, 0 or more"));
            }
            let map = lua.create_table()?;
            for (from, to) in this.merge_vertices(tolerance) {
                map.raw_set(id(Kind::Vertex, from), id(Kind::Vertex, to))?;
            }
            Ok(map)
        });
        method!(m, "BatchAdd", |this, a| {
            let kind = mesh_attribute(&a, 1)?;
            let data = array(&a, 2)?;
            let alphas = if kind == Kind::Color && !a.is_nil(3) {
                array(&a, 3)?
            } else {
                Vec::new()
            };
            let mut out = Vec::with_capacity(data.len());
            for (i, v) in data.iter().enumerate() {
                let bad = |what: &str| {
                    a.error(
                        2,
                        &format!(
                            "entry {}: {what} expected, got {}",
                            i + 1,
                            crate::type_name(v)
                        ),
                    )
                };
                let new = match kind {
                    Kind::Vertex => {
                        let p = vec3_value(v).ok_or_else(|| bad("finite Vector3"))?;
                        this.push_vertex(p, "BatchAdd")?
                    }
                    Kind::Normal => {
                        let n = vec3_value(v).ok_or_else(|| bad("finite Vector3"))?;
                        id(
                            Kind::Normal,
                            this.push_normal(Some(n), "BatchAdd")? as usize,
                        )
                    }
                    Kind::Uv => {
                        let uv = crate::args::as_ud::<Vector2>(v)
                            .ok_or_else(|| bad("Vector2"))?
                            .0;
                        id(Kind::Uv, this.push_uv(uv, "BatchAdd")? as usize)
                    }
                    Kind::Color => {
                        let c = crate::args::as_ud::<Color3>(v).ok_or_else(|| bad("Color3"))?;
                        let alpha = match alphas.get(i) {
                            None | Some(Value::Nil) => 1.0,
                            Some(x) => as_number(x).ok_or_else(|| {
                                a.error(
                                    3,
                                    &format!(
                                        "entry {}: number expected, got {}",
                                        i + 1,
                                        crate::type_name(x)
                                    ),
                                )
                            })? as f32,
                        };
                        id(Kind::Color, this.push_color(c, alpha, "BatchAdd")? as usize)
                    }
                    Kind::Face => {
                        let inner = Args::new("BatchAdd", MultiValue::from_vec(vec![v.clone()]));
                        let vs = this
                            .three(&inner, 1, Kind::Vertex)
                            .map_err(|e| entry_error(&a, 2, i, e))?;
                        this.add_triangle(vs, "BatchAdd")?
                    }
                };
                out.push(new);
            }
            Ok(out)
        });
        m.add_method_mut("BatchGetValues", |lua, this, args: MultiValue| {
            let a = Args::new("BatchGetValues", args);
            this.alive("BatchGetValues")?;
            let ids = array(&a, 1)?;
            let kind = same_kind(&a, 1, &ids)?;
            let values = lua.create_table()?;
            let alphas = lua.create_table()?;
            let normals = if kind == Some(Kind::Normal) {
                this.resolved_normals()
            } else {
                Vec::new()
            };
            for (i, v) in ids.iter().enumerate() {
                let kind = kind.expect("an entry has a kind");
                let s = this
                    .slot_of(v, kind)
                    .map_err(|e| entry_error(&a, 1, i, e))?;
                match kind {
                    Kind::Vertex => {
                        values.raw_set(i + 1, Vector3(this.vertices[s].expect("live")))?
                    }
                    Kind::Normal => values.raw_set(i + 1, Vector3(normals[s]))?,
                    Kind::Uv => values.raw_set(i + 1, Vector2(this.uvs[s].expect("live")))?,
                    Kind::Color => {
                        let (c, alpha) = this.colors[s].expect("live");
                        values.raw_set(i + 1, c)?;
                        alphas.raw_set(i + 1, alpha)?;
                    }
                    Kind::Face => {
                        return Err(a.error(1, "faces have no values (use BatchGetFaceAttributes)"));
                    }
                }
            }
            Ok((values, (kind == Some(Kind::Color)).then_some(alphas)))
        });
        method!(m, "BatchSetValues", |this, a| {
            let ids = array(&a, 1)?;
            let kind = same_kind(&a, 1, &ids)?;
            let values = if a.is_nil(2) {
                None
            } else {
                Some(array(&a, 2)?)
            };
            if values.as_ref().is_some_and(|v| v.len() != ids.len()) {
                return Err(a.error(2, "the arrays must be the same length"));
            }
            if values.is_none() && kind.is_some_and(|k| k != Kind::Normal) {
                return Err(a.bad(2, "table"));
            }
            let alphas = kind == Some(Kind::Color)
                && values
                    .as_ref()
                    .and_then(|v| v.first())
                    .is_some_and(|v| as_number(v).is_some());
            for (i, v) in ids.iter().enumerate() {
                let kind = kind.expect("an entry has a kind");
                let s = this
                    .slot_of(v, kind)
                    .map_err(|e| entry_error(&a, 1, i, e))?;
                let Some(values) = &values else {
                    this.normals[s] = Some(None);
                    continue;
                };
                let x = &values[i];
                let bad = |what: &str| {
                    a.error(
                        2,
                        &format!(
                            "entry {}: {what} expected, got {}",
                            i + 1,
                            crate::type_name(x)
                        ),
                    )
                };
                match kind {
                    Kind::Vertex => {
                        this.vertices[s] = Some(vec3_value(x).ok_or_else(|| bad("finite Vector3"))?)
                    }
                    Kind::Normal => {
                        this.normals[s] =
                            Some(Some(vec3_value(x).ok_or_else(|| bad("finite Vector3"))?))
                    }
                    Kind::Uv => {
                        this.uvs[s] = Some(
                            crate::args::as_ud::<Vector2>(x)
                                .ok_or_else(|| bad("Vector2"))?
                                .0,
                        )
                    }
                    Kind::Color if alphas => {
                        this.colors[s].as_mut().expect("live").1 =
                            as_number(x).ok_or_else(|| bad("number"))? as f32;
                    }
                    Kind::Color => {
                        this.colors[s].as_mut().expect("live").0 =
                            crate::args::as_ud::<Color3>(x).ok_or_else(|| bad("Color3"))?;
                    }
                    Kind::Face => {
                        return Err(a.error(1, "faces have no values (use BatchSetFaceAttributes)"));
                    }
                }
            }
            Ok(())
        });
        method!(m, "BatchRemove", |this, a| {
            for (i, v) in array(&a, 1)?.iter().enumerate() {
                let f = this
                    .slot_of(v, Kind::Face)
                    .map_err(|e| entry_error(&a, 1, i, e))?;
                this.remove_face(f);
            }
            Ok(())
        });
        method!(m, "BatchGetFaceAttributes", |this, a| {
            let kind = mesh_attribute(&a, 1)?;
            if kind == Kind::Face {
                return Err(a.error(1, "a face's corners have vertices, normals, UVs and colors"));
            }
            let mut out = Vec::new();
            for (i, v) in array(&a, 2)?.iter().enumerate() {
                let f = this
                    .slot_of(v, Kind::Face)
                    .map_err(|e| entry_error(&a, 2, i, e))?;
                let face = this.faces[f].expect("live");
                out.push(face.ids(kind).map(|x| id(kind, x as usize)).to_vec());
            }
            Ok(out)
        });
        method!(m, "BatchSetFaceAttributes", |this, a| {
            let faces = array(&a, 1)?;
            let lists = array(&a, 2)?;
            if faces.len() != lists.len() {
                return Err(a.error(2, "the arrays must be the same length"));
            }
            for (i, (fv, list)) in faces.iter().zip(&lists).enumerate() {
                let f = this
                    .slot_of(fv, Kind::Face)
                    .map_err(|e| entry_error(&a, 1, i, e))?;
                let first = match list {
                    Value::Table(t) => t.raw_get::<Value>(1)?,
                    _ => Value::Nil,
                };
                let kind = kind_of(&first)
                    .filter(|k| *k != Kind::Face)
                    .ok_or_else(|| {
                        a.error(
                            2,
                            &format!(
                                "entry {}: an array of 3 vertex, normal, UV or color IDs expected",
                                i + 1
                            ),
                        )
                    })?;
                let inner = Args::new(
                    "BatchSetFaceAttributes",
                    MultiValue::from_vec(vec![list.clone()]),
                );
                let ids = this
                    .three(&inner, 1, kind)
                    .map_err(|e| entry_error(&a, 2, i, e))?;
                this.set_face_ids(f, kind, ids);
            }
            Ok(())
        });
        method!(m, "BatchGetVertexAttributes", |this, a| {
            let kind = mesh_attribute(&a, 1)?;
            let mut out = Vec::new();
            for (i, v) in array(&a, 2)?.iter().enumerate() {
                let s = this
                    .slot_of(v, Kind::Vertex)
                    .map_err(|e| entry_error(&a, 2, i, e))?;
                out.push(match kind {
                    Kind::Face => this.vertex_faces[s]
                        .iter()
                        .map(|&f| id(Kind::Face, f as usize))
                        .collect(),
                    Kind::Vertex => {
                        return Err(a.error(1, "a vertex has faces, normals, UVs and colors"));
                    }
                    other => this.vertex_attributes(s, other),
                });
            }
            Ok(out)
        });
        method!(m, "BatchGetVertexFaceAttributes", |this, a| {
            let kind = mesh_attribute(&a, 1)?;
            if kind == Kind::Face || kind == Kind::Vertex {
                return Err(a.error(1, "a corner has a normal, a UV and a color"));
            }
            let (vs, fs) = (array(&a, 2)?, array(&a, 3)?);
            if vs.len() != fs.len() {
                return Err(a.error(3, "the arrays must be the same length"));
            }
            let mut out = Vec::new();
            for (i, (v, f)) in vs.iter().zip(&fs).enumerate() {
                let v = this
                    .slot_of(v, Kind::Vertex)
                    .map_err(|e| entry_error(&a, 2, i, e))?;
                let f = this
                    .slot_of(f, Kind::Face)
                    .map_err(|e| entry_error(&a, 3, i, e))?;
                let c = this.corner(&a, v, f)?;
                out.push(id(kind, this.faces[f].expect("live").ids(kind)[c] as usize));
            }
            Ok(out)
        });
        method!(m, "BatchSetVertexFaceAttributes", |this, a| {
            let (vs, fs, xs) = (array(&a, 1)?, array(&a, 2)?, array(&a, 3)?);
            if vs.len() != fs.len() || vs.len() != xs.len() {
                return Err(a.error(3, "the arrays must be the same length"));
            }
            let kind = same_kind(&a, 3, &xs)?;
            if kind.is_some_and(|k| k == Kind::Face || k == Kind::Vertex) {
                return Err(a.error(3, "a corner takes normal, UV or color IDs"));
            }
            for (i, ((v, f), x)) in vs.iter().zip(&fs).zip(&xs).enumerate() {
                let kind = kind.expect("an entry has a kind");
                let v = this
                    .slot_of(v, Kind::Vertex)
                    .map_err(|e| entry_error(&a, 1, i, e))?;
                let f = this
                    .slot_of(f, Kind::Face)
                    .map_err(|e| entry_error(&a, 2, i, e))?;
                let x = this
                    .slot_of(x, kind)
                    .map_err(|e| entry_error(&a, 3, i, e))? as u32;
                let c = this.corner(&a, v, f)?;
                this.faces[f].as_mut().expect("live").ids_mut(kind)[c] = x;
            }
            Ok(())
        });
        method!(m, "GetCenter", |this, a| Ok(Vector3(this.center())));
        method!(m, "GetSize", |this, a| Ok(Vector3(this.size())));
        method!(m, "IdDebugString", |this, a| {
            let n = a.number(1)?;
            let letter = kind_of(a.get(1)).map_or("?", Kind::letter);
            Ok(format!("{letter}{}", n as u64 / 8))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh() -> EditableMesh {
        EditableMesh::new(MeshBudget::new(DEFAULT_BUDGET))
    }

    #[test]
    fn triangles_share_attributes_at_shared_vertices_and_normals_are_computed() {
        let mut m = mesh();
        let v: Vec<u32> = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(1.0, 1.0, 0.0)]
            .into_iter()
            .map(|p| (m.push_vertex(p, "t").unwrap() as u64 / 8) as u32)
            .collect();
        m.add_triangle([v[0], v[1], v[2]], "t").unwrap();
        m.add_triangle([v[1], v[3], v[2]], "t").unwrap();
        // Four vertices, each given one set of attributes the first time it is used.
        assert_eq!((m.normals.len(), m.uvs.len(), m.colors.len()), (4, 4, 4));
        let s = m.snapshot();
        assert_eq!(s.positions.len(), 4);
        assert_eq!(s.triangles.len(), 2);
        for n in &s.normals {
            assert_eq!(
                *n,
                [0.0, 0.0, 1.0],
                "counter-clockwise seen from +Z faces +Z"
            );
        }
        assert_eq!(m.size(), Vec3::new(1.0, 1.0, 0.0));
        assert_eq!(m.center(), Vec3::new(0.5, 0.5, 0.0));
    }

    #[test]
    fn the_budget_is_shared_and_given_back() {
        let budget = MeshBudget::new(3);
        let mut a = EditableMesh::new(budget.clone());
        a.push_vertex(Vec3::ZERO, "t").unwrap();
        a.push_vertex(Vec3::ZERO, "t").unwrap();
        let mut b = EditableMesh::new(budget.clone());
        b.push_vertex(Vec3::ZERO, "t").unwrap();
        let err = b
            .push_vertex(Vec3::ZERO, "AddVertex")
            .unwrap_err()
            .to_string();
        assert!(err.contains("budget"), "{err}");
        drop(a);
        assert_eq!(budget.remaining(), 2);
        b.clear();
        assert_eq!(budget.remaining(), 3);
    }
}
