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
//! Not available: bones, FACS poses, the `Batch*` methods, `MergeVertices`, `RaycastLocal`
//! and `FindClosestPointOnSurface` (they say so when called).

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
/// when it is cleared, destroyed or collected.
#[derive(Clone, Debug)]
pub struct MeshBudget(Rc<Cell<usize>>);

impl MeshBudget {
    pub fn new(elements: usize) -> Self {
        MeshBudget(Rc::new(Cell::new(elements)))
    }

    /// Elements still available.
    pub fn remaining(&self) -> usize {
        self.0.get()
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
    budget: MeshBudget,
    /// Elements taken from the budget.
    charged: usize,
}

impl Drop for EditableMesh {
    fn drop(&mut self) {
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
            budget,
            charged: 0,
        }
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

    fn alive(&self, func: &str) -> R<()> {
        if self.destroyed {
            return Err(mlua::Error::runtime(format!(
                "{func}: this EditableMesh has been destroyed"
            )));
        }
        Ok(())
    }

    fn exists(&self, kind: Kind, slot: usize) -> bool {
        match kind {
            Kind::Vertex => self.vertices.get(slot).is_some_and(Option::is_some),
            Kind::Face => self.faces.get(slot).is_some_and(Option::is_some),
            Kind::Normal => self.normals.get(slot).is_some_and(Option::is_some),
            Kind::Uv => self.uvs.get(slot).is_some_and(Option::is_some),
            Kind::Color => self.colors.get(slot).is_some_and(Option::is_some),
        }
    }

    /// The slot of argument `pos`, which must be a live ID of `kind`.
    fn slot(&self, a: &Args, pos: usize, kind: Kind) -> R<usize> {
        let Some(n) = as_number(a.get(pos)) else {
            return Err(a.bad(pos, "number"));
        };
        let valid = n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n < 2f64.powi(53);
        let raw = n as u64;
        if valid && raw % 8 == kind as u64 {
            let slot = (raw / 8) as usize;
            if self.exists(kind, slot) {
                return Ok(slot);
            }
        }
        Err(a.error(
            pos,
            &format!("{} is not a {} ID of this mesh", fmt_id(n), kind.noun()),
        ))
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
                let c = other
                    .vertices
                    .iter()
                    .position(|&x| x == vk)
                    .expect("a corner");
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

    /// The face normal (unnormalised: twice the area) of face `f`.
    fn face_normal(&self, f: &Face) -> Vec3 {
        let p = f
            .vertices
            .map(|v| self.vertices[v as usize].expect("live face, live vertices"));
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
                let (v, n, uv, col) = (f.vertices[c], f.normals[c], f.uvs[c], f.colors[c]);
                let m = &mut maps[0][v as usize];
                if *m == u32::MAX {
                    *m = mesh.positions.len() as u32;
                    mesh.positions
                        .push(self.vertices[v as usize].expect("live").to_array());
                }
                t.vertices[c] = *m;
                let m = &mut maps[1][n as usize];
                if *m == u32::MAX {
                    *m = mesh.normals.len() as u32;
                    mesh.normals.push(normals[n as usize].to_array());
                }
                t.normals[c] = *m;
                let m = &mut maps[2][uv as usize];
                if *m == u32::MAX {
                    *m = mesh.uvs.len() as u32;
                    mesh.uvs
                        .push(self.uvs[uv as usize].expect("live").to_array());
                }
                t.uvs[c] = *m;
                let m = &mut maps[3][col as usize];
                if *m == u32::MAX {
                    *m = mesh.colors.len() as u32;
                    let (c3, a) = self.colors[col as usize].expect("live");
                    mesh.colors.push([c3.r, c3.g, c3.b, a]);
                }
                t.colors[c] = *m;
            }
            mesh.triangles.push(t);
        }
        mesh
    }

    fn ids_of(&self, kind: Kind) -> Vec<f64> {
        let flags: Vec<bool> = match kind {
            Kind::Vertex => self.vertices.iter().map(Option::is_some).collect(),
            Kind::Face => self.faces.iter().map(Option::is_some).collect(),
            Kind::Normal => self.normals.iter().map(Option::is_some).collect(),
            Kind::Uv => self.uvs.iter().map(Option::is_some).collect(),
            Kind::Color => self.colors.iter().map(Option::is_some).collect(),
        };
        flags
            .into_iter()
            .enumerate()
            .filter(|(_, live)| *live)
            .map(|(i, _)| id(kind, i))
            .collect()
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
        out.sort_unstable();
        out.into_iter()
            .map(|v| id(Kind::Vertex, v as usize))
            .collect()
    }

    /// The corner of face `f` at vertex `v` (argument error if `v` is not a corner of it).
    fn corner(&self, a: &Args, v: usize, f: usize) -> R<usize> {
        let face = self.faces[f].expect("checked live");
        face.vertices
            .iter()
            .position(|&x| x as usize == v)
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
        for (i, v) in self.vertices.iter_mut().enumerate() {
            if v.is_some() && !used[0][i] {
                *v = None;
                self.live_vertices -= 1;
                removed.push(id(Kind::Vertex, i));
            }
        }
        fn sweep<T>(slots: &mut [Option<T>], used: &[bool], kind: Kind, removed: &mut Vec<f64>) {
            for (i, s) in slots.iter_mut().enumerate() {
                if s.is_some() && !used[i] {
                    *s = None;
                    removed.push(id(kind, i));
                }
            }
        }
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
                let c = face
                    .vertices
                    .iter()
                    .position(|&x| x as usize == v)
                    .expect("corner");
                id(kind, face.ids(kind)[c] as usize)
            })
            .collect()
    }
}

fn fmt_id(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
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
    "BatchAdd",
    "BatchGetFaceAttributes",
    "BatchGetValues",
    "BatchGetVertexAttributes",
    "BatchGetVertexFaceAttributes",
    "BatchRemove",
    "BatchSetFaceAttributes",
    "BatchSetValues",
    "BatchSetVertexFaceAttributes",
    "FindClosestPointOnSurface",
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
    "MergeVertices",
    "RaycastLocal",
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
        f.add_field_method_get("FixedSize", |_, _| Ok(false));
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
        m.add_method_mut("Destroy", |_, this, ()| {
            this.clear();
            this.destroyed = true;
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
                let old = this.faces[f].expect("live");
                if kind == Kind::Vertex {
                    this.detach(f as u32, old.vertices);
                    this.attach(f as u32, ids);
                }
                *this.faces[f].as_mut().expect("live").ids_mut(kind) = ids;
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
            out.sort_unstable();
            Ok(out
                .into_iter()
                .map(|w| id(Kind::Vertex, w as usize))
                .collect::<Vec<_>>())
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
            out.sort_unstable();
            Ok(out
                .into_iter()
                .map(|g| id(Kind::Face, g as usize))
                .collect::<Vec<_>>())
        });
        method!(m, "RemoveFace", |this, a| {
            let f = this.slot(&a, 1, Kind::Face)?;
            let face = this.faces[f].take().expect("live");
            this.detach(f as u32, face.vertices);
            this.live_faces -= 1;
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
        method!(m, "GetCenter", |this, a| Ok(Vector3(this.center())));
        method!(m, "GetSize", |this, a| Ok(Vector3(this.size())));
        method!(m, "IdDebugString", |this, a| {
            let n = a.number(1)?;
            let raw = n as u64;
            let letter = match raw % 8 {
                1 => "v",
                2 => "f",
                3 => "n",
                4 => "u",
                5 => "c",
                _ => "?",
            };
            Ok(format!("{letter}{}", raw / 8))
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
