//! The box a part draws: its CFrame and Size, or, for a part carrying a procmodel mesh (the
//! `ProcmodelMesh` attribute of a MeshPart built from an EditableMesh or of a solid-modelling
//! result), the box of the triangles it draws there ([`procmodel_mesh::TriangleMesh::fit`]).
//! A GeometryService result's triangles lie off its CFrame (its CFrame is the main part's),
//! so bounding boxes, pivots and spatial bodies go by this box.
//!
//! Each attribute text is decoded once ([`carried`]) and kept in a per-thread cache, checked
//! against the text itself on every use; the cache only saves time. The Luau host's rays
//! against the triangles use the same decoded mesh and its sphere tree.

use crate::geometry::{cframe_to_affine, to_vec3};
use crate::keys::KEYS;
use glam::{Affine3A, Vec3};
use rbx_dom_weak::Instance;
use rbx_types::{Ref, Variant};
use std::cell::RefCell;
use std::rc::Rc;

/// A part's CFrame (identity when unset).
pub fn part_cframe(inst: &Instance) -> Affine3A {
    match inst.properties.get(&KEYS.cframe) {
        Some(Variant::CFrame(cf)) => cframe_to_affine(cf),
        _ => Affine3A::IDENTITY,
    }
}

/// A part's Size (Roblox default 4×1×2 when unset).
pub fn part_size(inst: &Instance) -> Vec3 {
    match inst.properties.get(&KEYS.size) {
        Some(Variant::Vector3(v)) => to_vec3(*v),
        _ => Vec3::new(4.0, 1.2, 2.0),
    }
}

/// The text of a part's mesh attribute ([`procmodel_mesh::ATTRIBUTE`]), if it has one.
pub fn mesh_text(inst: &Instance) -> Option<&str> {
    match inst.properties.get(&KEYS.attributes) {
        Some(Variant::Attributes(a)) => crate::attrs::string(a.get(procmodel_mesh::ATTRIBUTE)?),
        _ => None,
    }
}

/// Whether parts of `class` draw a procmodel mesh they carry, and how: `Some(true)` centred
/// (MeshPart), `Some(false)` about the part's origin (a solid-modelling result), None not at
/// all (every other class draws its own shape).
pub fn mesh_centred(class: &str) -> Option<bool> {
    match class {
        "MeshPart" => Some(true),
        "PartOperation" | "UnionOperation" | "IntersectOperation" => Some(false),
        _ => None,
    }
}

/// A part's procmodel mesh, decoded once per attribute text (see [`carried`]).
pub struct CarriedMesh {
    text: String,
    pub mesh: procmodel_mesh::TriangleMesh,
    /// Over the triangles' bounding spheres (item `i` is triangle `i`), built the first time
    /// a ray needs it.
    tree: std::cell::OnceCell<crate::bvh::SphereTree>,
}

impl CarriedMesh {
    /// The sphere tree over the triangles, in the mesh's own space.
    pub fn tree(&self) -> &crate::bvh::SphereTree {
        self.tree.get_or_init(|| {
            let p = |i: u32| Vec3::from(self.mesh.positions[i as usize]);
            let spheres: Vec<(Vec3, f32)> = self
                .mesh
                .triangles
                .iter()
                .map(|t| {
                    let [a, b, c] = t.vertices.map(p);
                    let (lo, hi) = (a.min(b).min(c), a.max(b).max(c));
                    ((lo + hi) * 0.5, (hi - lo).length() * 0.5)
                })
                .collect();
            crate::bvh::SphereTree::build(&spheres)
        })
    }
}

/// Entries kept per thread; past it the cache starts again.
const CACHE_LIMIT: usize = 256;

thread_local! {
    static CACHE: RefCell<rustc_hash::FxHashMap<Ref, Rc<CarriedMesh>>> = RefCell::default();
}

/// The procmodel mesh `inst` draws and whether it draws it centred ([`mesh_centred`]): None
/// for a class that draws its own shape, or a missing, broken or empty mesh. Decoded once per
/// attribute text, kept in a per-thread cache checked against the text on every use (a text
/// rewritten in place is never taken for the old one); the cache only saves time.
pub fn carried(inst: &Instance) -> Option<(Rc<CarriedMesh>, bool)> {
    let centred = mesh_centred(inst.class.as_str())?;
    let text = mesh_text(inst)?;
    let r = inst.referent();
    CACHE.with(|cache| {
        if let Some(m) = cache.borrow().get(&r)
            && m.text == text
        {
            return Some((m.clone(), centred));
        }
        let mesh = procmodel_mesh::TriangleMesh::from_attribute(text).ok()?;
        if mesh.triangles.is_empty() {
            return None;
        }
        let m = Rc::new(CarriedMesh {
            text: text.to_owned(),
            mesh,
            tree: std::cell::OnceCell::new(),
        });
        let mut cache = cache.borrow_mut();
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(r, m.clone());
        Some((m, centred))
    })
}

/// The box of the triangles `inst` draws, in the part's space: (centre, full size); None for
/// a part without a usable procmodel mesh (it draws its own shape: its CFrame and Size).
pub fn mesh_box(inst: &Instance, size: Vec3) -> Option<(Vec3, Vec3)> {
    let (m, centred) = carried(inst)?;
    let (offset, stretch) = m.mesh.fit(size.to_array(), centred)?;
    let (lo, hi) = m.mesh.bounds()?;
    let (offset, stretch) = (Vec3::from(offset), Vec3::from(stretch));
    let lo = (Vec3::from(lo) - offset) * stretch;
    let hi = (Vec3::from(hi) - offset) * stretch;
    Some(((lo + hi) * 0.5, (hi - lo).abs()))
}

/// The box `inst` draws in the world: (its centre and turn, full size) — its CFrame and Size,
/// or the box of the procmodel mesh it carries ([`mesh_box`]).
pub fn drawn_box(inst: &Instance) -> (Affine3A, Vec3) {
    let (cframe, size) = (part_cframe(inst), part_size(inst));
    match mesh_box(inst, size.abs()) {
        Some((centre, size)) => (cframe * Affine3A::from_translation(centre), size),
        None => (cframe, size),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use procmodel_mesh::{Triangle, TriangleMesh};
    use rbx_dom_weak::{InstanceBuilder, WeakDom};

    /// A one-triangle mesh spanning (1, 2, 3)..(3, 4, 3): off its origin, flat in Z.
    fn attributes() -> rbx_types::Attributes {
        let mesh = TriangleMesh {
            positions: vec![[1.0, 2.0, 3.0], [3.0, 2.0, 3.0], [1.0, 4.0, 3.0]],
            normals: vec![[0.0, 0.0, 1.0]],
            uvs: vec![[0.0, 0.0]],
            colors: vec![[1.0; 4]],
            triangles: vec![Triangle {
                vertices: [0, 1, 2],
                ..Triangle::default()
            }],
        };
        let mut a = rbx_types::Attributes::new();
        a.insert(
            procmodel_mesh::ATTRIBUTE.to_owned(),
            mesh.to_attribute().into(),
        );
        a
    }

    #[test]
    fn a_mesh_part_draws_the_box_of_its_triangles() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let at = rbx_types::CFrame::new(
            rbx_types::Vector3::new(10.0, 0.0, 0.0),
            rbx_types::Matrix3::identity(),
        );
        let part = |class: &str| {
            InstanceBuilder::new(class)
                .with_property("Size", rbx_types::Vector3::new(4.0, 4.0, 1.0))
                .with_property("CFrame", at)
                .with_property("Attributes", attributes())
        };
        let meshpart = dom.insert(root, part("MeshPart"));
        let union = dom.insert(root, part("UnionOperation"));
        let plain = dom.insert(root, part("Part"));
        let mut a = rbx_types::Attributes::new();
        a.insert(
            procmodel_mesh::ATTRIBUTE.to_owned(),
            "garbage".to_owned().into(),
        );
        let broken = dom.insert(root, part("UnionOperation").with_property("Attributes", a));
        let boxed = |r| {
            let (cf, size) = drawn_box(dom.get_by_ref(r).unwrap());
            (Vec3::from(cf.translation), size)
        };
        // Centred on the part, stretched ×2 in X and Y; Z has no extent: 0.
        assert_eq!(
            boxed(meshpart),
            (Vec3::new(10.0, 0.0, 0.0), Vec3::new(4.0, 4.0, 0.0))
        );
        // About the part's origin: the triangles' centre (2, 3, 3), stretched.
        assert_eq!(
            boxed(union),
            (Vec3::new(14.0, 6.0, 3.0), Vec3::new(4.0, 4.0, 0.0))
        );
        // A Part draws its own shape, whatever its attributes say.
        assert_eq!(
            boxed(plain),
            (Vec3::new(10.0, 0.0, 0.0), Vec3::new(4.0, 4.0, 1.0))
        );
        // A broken attribute: the part's own box.
        assert_eq!(
            boxed(broken),
            (Vec3::new(10.0, 0.0, 0.0), Vec3::new(4.0, 4.0, 1.0))
        );
    }
}
