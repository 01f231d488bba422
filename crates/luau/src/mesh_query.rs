//! Rays against the triangles of parts that carry a procmodel mesh (a MeshPart built from an
//! EditableMesh, a solid-modelling result), where the part draws them
//! ([`procmodel_mesh::TriangleMesh::fit`]). Every other query takes such a part as the box of
//! those triangles (`procmodel_dom::drawn`, through `procmodel_dom::spatial::body`).
//!
//! The decoded mesh and its sphere tree are `procmodel_dom::drawn::carried`'s (one per-thread
//! cache, checked against the attribute text on every use).

use glam::{Affine3A, Vec3};
use procmodel_dom::drawn::CarriedMesh;
use procmodel_dom::spatial::RayHit;
use rbx_dom_weak::Instance;
use std::rc::Rc;

/// A part's mesh where the part draws it.
pub(crate) struct Placed {
    shape: Rc<CarriedMesh>,
    /// The part's CFrame (rotation made orthonormal, as the queries' bodies have it).
    cframe: Affine3A,
    offset: Vec3,
    stretch: Vec3,
}

/// The mesh `inst` draws, if it is a MeshPart or a PartOperation carrying a usable one (a
/// part without one, or with a broken one, is its box to the queries, as to the export).
pub(crate) fn placed(inst: &Instance) -> Option<Placed> {
    let (shape, centred) = procmodel_dom::drawn::carried(inst)?;
    // The part's own frame and size, made valid as every part's body is (not the body the
    // queries use, which is the box of the triangles).
    let body = procmodel_dom::spatial::Body::new(
        procmodel_dom::spatial::PartShape::Block,
        procmodel_dom::part_cframe(inst),
        procmodel_dom::part_size(inst),
    );
    let (offset, stretch) = shape.mesh.fit(body.size.to_array(), centred)?;
    Some(Placed {
        shape,
        cframe: body.cframe,
        offset: Vec3::from(offset),
        stretch: Vec3::from(stretch),
    })
}

impl Placed {
    /// Where the ray from `origin` along `dir` first enters the triangles from their front
    /// (counter-clockwise) side, as a ray enters a part's solid; the nearest, the lowest
    /// triangle first on a tie.
    pub(crate) fn raycast(&self, origin: Vec3, dir: Vec3) -> Option<RayHit> {
        // Into the mesh's own space: the part's frame undone, then the stretch. The ray's
        // parameter is the same in both spaces (the map is affine).
        let inv = self.cframe.inverse();
        let o = inv.transform_point3(origin) / self.stretch + self.offset;
        let d = inv.transform_vector3(dir) / self.stretch;
        let mut candidates = Vec::new();
        self.shape.tree().query_segment(o, d, &mut candidates);
        let mut best: Option<(f32, Vec3)> = None;
        let mesh = &self.shape.mesh;
        for i in candidates {
            let [a, b, c] = mesh.triangles[i as usize]
                .vertices
                .map(|k| Vec3::from(mesh.positions[k as usize]));
            let Some((t, n)) = ray_triangle(o, d, a, b, c) else {
                continue;
            };
            if best.is_none_or(|(bt, _)| t < bt) {
                best = Some((t, n));
            }
        }
        let (t, n) = best?;
        // Normals go by the inverse transpose of the stretch, then the part's rotation.
        let normal = (self.cframe.matrix3 * (n / self.stretch)).normalize_or(Vec3::Y);
        Some(RayHit {
            t,
            position: origin + dir * t,
            normal,
        })
    }
}

/// Where the segment `o + t d` (`t` in 0..=1) crosses triangle `a b c` from its front side:
/// (t, the triangle's unnormalised normal). Möller and Trumbore's test.
fn ray_triangle(o: Vec3, d: Vec3, a: Vec3, b: Vec3, c: Vec3) -> Option<(f32, Vec3)> {
    let e1 = b - a;
    let e2 = c - a;
    let n = e1.cross(e2);
    // Only the front: the ray must run against the normal.
    if n.dot(d) >= 0.0 {
        return None;
    }
    let p = d.cross(e2);
    let det = e1.dot(p);
    if det.abs() <= f32::EPSILON * e1.length() * e2.length() * d.length() {
        return None;
    }
    let inv = 1.0 / det;
    let s = o - a;
    let u = s.dot(p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = s.cross(e1);
    let v = d.dot(q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = e2.dot(q) * inv;
    (0.0..=1.0).contains(&t).then_some((t, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ray_meets_a_triangle_from_the_front_only() {
        let (a, b, c) = (Vec3::ZERO, Vec3::X, Vec3::Y); // faces +Z
        let down = ray_triangle(
            Vec3::new(0.25, 0.25, 1.0),
            Vec3::new(0.0, 0.0, -2.0),
            a,
            b,
            c,
        );
        assert_eq!(down.map(|(t, _)| t), Some(0.5));
        // From behind, past the edge, or too short: no hit.
        assert!(
            ray_triangle(
                Vec3::new(0.25, 0.25, -1.0),
                Vec3::new(0.0, 0.0, 2.0),
                a,
                b,
                c
            )
            .is_none()
        );
        assert!(
            ray_triangle(
                Vec3::new(0.75, 0.75, 1.0),
                Vec3::new(0.0, 0.0, -2.0),
                a,
                b,
                c
            )
            .is_none()
        );
        assert!(
            ray_triangle(
                Vec3::new(0.25, 0.25, 1.0),
                Vec3::new(0.0, 0.0, -0.5),
                a,
                b,
                c
            )
            .is_none()
        );
        // Along its plane: no hit.
        assert!(
            ray_triangle(
                Vec3::new(-1.0, 0.25, 0.0),
                Vec3::new(3.0, 0.0, 0.0),
                a,
                b,
                c
            )
            .is_none()
        );
    }
}
