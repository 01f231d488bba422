//! Triangle meshes of Roblox's primitive part shapes, in the part's local space.
//!
//! Every mesh is centred on the part's origin with extents `Size / 2`, triangles
//! wind counter-clockwise seen from outside, and normals are unit length.
//!
//! Shapes follow Roblox's own geometry (cross-checked against the engine's
//! `Mesh::makeWedge` / `Mesh::makeCornerWedge` collision meshes):
//!
//! - **Block**: a box, 24 vertices with flat normals.
//! - **Ball**: a UV sphere whose diameter is `min(Size)`.
//! - **Cylinder**: axis along local **X**, length `Size.X`, diameter
//!   `min(Size.Y, Size.Z)`.
//! - **Wedge**: the bottom (−Y) and back (+Z) faces are full rectangles; the
//!   slope runs from the top-back edge down to the bottom-front (−Z) edge, so
//!   it faces up and towards the part's LookVector.
//! - **CornerWedge**: a pyramid on the full bottom rectangle whose apex sits
//!   above the right-front corner `(+X/2, +Y/2, −Z/2)`. The right (+X) and
//!   front (−Z) faces are vertical triangles; the two sloped triangles face
//!   back (+Z) and left (−X).
//!
//! Two more come from mesh children (`SpecialMesh`, `CylinderMesh`), whose
//! shapes stretch with the part where the part's own do not:
//!
//! - **Ellipsoid** (`SpecialMesh` of MeshType Sphere): the ball's sphere
//!   stretched to fill the whole `Size`.
//! - **UprightCylinder** (`CylinderMesh`): axis along local **Y**, height
//!   `Size.Y`, diameter `min(Size.X, Size.Z)`.

use glam::Vec3;

/// The primitive a part is drawn as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Shape {
    /// A box filling `Size`.
    Block,
    /// A sphere of diameter `min(Size)`.
    Ball,
    /// A cylinder along local X.
    Cylinder,
    /// Roblox's WedgePart shape.
    Wedge,
    /// Roblox's CornerWedgePart shape.
    CornerWedge,
    /// A sphere stretched to fill `Size` (a `SpecialMesh` of MeshType Sphere).
    Ellipsoid,
    /// A cylinder along local Y (a `CylinderMesh`).
    UprightCylinder,
    /// A cylinder along local Y with rounded top and bottom edges, its diameter the smaller
    /// of `Size.X` and `Size.Z` (a `SpecialMesh` of MeshType Head, the classic character
    /// head, round seen from above on its 2 × 1 × 1 part; its rounding is an approximation
    /// of Roblox's mesh: half the radius and a quarter of the height).
    Head,
}

impl Shape {
    /// The shape's name: the `Enum.PartType` name of a part's own shape.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Block => "Block",
            Shape::Ball => "Ball",
            Shape::Cylinder => "Cylinder",
            Shape::Wedge => "Wedge",
            Shape::CornerWedge => "CornerWedge",
            Shape::Ellipsoid => "Ellipsoid",
            Shape::UprightCylinder => "UprightCylinder",
            Shape::Head => "Head",
        }
    }

    /// The extents that actually determine the mesh: a ball only depends on
    /// `min(Size)`, a cylinder on its length and `min(Size.Y, Size.Z)`. Parts
    /// whose effective sizes are equal share one mesh.
    pub fn effective_size(self, size: Vec3) -> Vec3 {
        match self {
            Shape::Ball => Vec3::splat(size.min_element()),
            Shape::Cylinder => {
                let d = size.y.min(size.z);
                Vec3::new(size.x, d, d)
            }
            Shape::UprightCylinder | Shape::Head => {
                let d = size.x.min(size.z);
                Vec3::new(d, size.y, d)
            }
            Shape::Block | Shape::Wedge | Shape::CornerWedge | Shape::Ellipsoid => size,
        }
    }
}

/// An indexed triangle list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MeshData {
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    /// Linear RGBA per vertex, or empty (the primitives have none).
    pub colors: Vec<[f32; 4]>,
    /// Texture coordinates per vertex, or empty (the primitives have none).
    pub uvs: Vec<[f32; 2]>,
    pub indices: Vec<u32>,
}

impl MeshData {
    fn push_vertex(&mut self, position: Vec3, normal: Vec3) -> u32 {
        let index = u32::try_from(self.positions.len()).expect("primitive meshes are small");
        self.positions.push(position);
        self.normals.push(normal);
        index
    }

    /// Adds a flat convex polygon given counter-clockwise seen from outside.
    fn push_flat_polygon(&mut self, corners: &[Vec3]) {
        let normal = (corners[1] - corners[0])
            .cross(corners[2] - corners[0])
            .normalize();
        let first = self.push_vertex(corners[0], normal);
        for &corner in &corners[1..] {
            self.push_vertex(corner, normal);
        }
        for i in 1..corners.len() as u32 - 1 {
            self.indices.extend([first, first + i, first + i + 1]);
        }
    }

    /// Smallest and largest coordinate of every axis.
    pub fn bounds(&self) -> (Vec3, Vec3) {
        self.positions.iter().fold(
            (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
            |(lo, hi), &p| (lo.min(p), hi.max(p)),
        )
    }
}

/// Builds the mesh of `shape` for a part of the given size. `segments` is the
/// number of subdivisions around a ball or cylinder (at least 3).
pub fn build(shape: Shape, size: Vec3, segments: u32) -> MeshData {
    let h = size * 0.5;
    match shape {
        Shape::Block => block(h),
        Shape::Ball => ball(h.min_element(), segments),
        Shape::Cylinder => cylinder(h.x, h.y.min(h.z), segments),
        Shape::Wedge => wedge(h),
        Shape::CornerWedge => corner_wedge(h),
        Shape::Ellipsoid => {
            // The unit sphere scaled per axis; normals by the inverse scale.
            let mut mesh = ball(1.0, segments);
            for (p, n) in mesh.positions.iter_mut().zip(&mut mesh.normals) {
                *p *= h;
                *n = (*n / h).normalize();
            }
            mesh
        }
        Shape::Head => {
            let r = h.x.min(h.z);
            head(Vec3::new(r, h.y, r), segments)
        }
        Shape::UprightCylinder => {
            // The X-axis cylinder turned a quarter about Z: (x, y, z) → (−y, x, z).
            let mut mesh = cylinder(h.y, h.x.min(h.z), segments);
            let turn = |v: Vec3| Vec3::new(-v.y, v.x, v.z);
            for (p, n) in mesh.positions.iter_mut().zip(&mut mesh.normals) {
                *p = turn(*p);
                *n = turn(*n);
            }
            mesh
        }
    }
}

fn corner(h: Vec3, sx: f32, sy: f32, sz: f32) -> Vec3 {
    Vec3::new(sx * h.x, sy * h.y, sz * h.z)
}

fn block(h: Vec3) -> MeshData {
    let c = |sx, sy, sz| corner(h, sx, sy, sz);
    let mut mesh = MeshData::default();
    // +X, -X, +Y, -Y, +Z, -Z
    mesh.push_flat_polygon(&[
        c(1., -1., 1.),
        c(1., -1., -1.),
        c(1., 1., -1.),
        c(1., 1., 1.),
    ]);
    mesh.push_flat_polygon(&[
        c(-1., -1., -1.),
        c(-1., -1., 1.),
        c(-1., 1., 1.),
        c(-1., 1., -1.),
    ]);
    mesh.push_flat_polygon(&[
        c(-1., 1., 1.),
        c(1., 1., 1.),
        c(1., 1., -1.),
        c(-1., 1., -1.),
    ]);
    mesh.push_flat_polygon(&[
        c(-1., -1., -1.),
        c(1., -1., -1.),
        c(1., -1., 1.),
        c(-1., -1., 1.),
    ]);
    mesh.push_flat_polygon(&[
        c(-1., -1., 1.),
        c(1., -1., 1.),
        c(1., 1., 1.),
        c(-1., 1., 1.),
    ]);
    mesh.push_flat_polygon(&[
        c(1., -1., -1.),
        c(-1., -1., -1.),
        c(-1., 1., -1.),
        c(1., 1., -1.),
    ]);
    mesh
}

fn wedge(h: Vec3) -> MeshData {
    let c = |sx, sy, sz| corner(h, sx, sy, sz);
    let mut mesh = MeshData::default();
    // Bottom (-Y) and back (+Z): full rectangles.
    mesh.push_flat_polygon(&[
        c(-1., -1., -1.),
        c(1., -1., -1.),
        c(1., -1., 1.),
        c(-1., -1., 1.),
    ]);
    mesh.push_flat_polygon(&[
        c(-1., -1., 1.),
        c(1., -1., 1.),
        c(1., 1., 1.),
        c(-1., 1., 1.),
    ]);
    // Slope from the top-back edge to the bottom-front edge, facing up and -Z.
    mesh.push_flat_polygon(&[
        c(-1., 1., 1.),
        c(1., 1., 1.),
        c(1., -1., -1.),
        c(-1., -1., -1.),
    ]);
    // Right (+X) and left (-X) triangles.
    mesh.push_flat_polygon(&[c(1., -1., 1.), c(1., -1., -1.), c(1., 1., 1.)]);
    mesh.push_flat_polygon(&[c(-1., -1., -1.), c(-1., -1., 1.), c(-1., 1., 1.)]);
    mesh
}

fn corner_wedge(h: Vec3) -> MeshData {
    let c = |sx, sy, sz| corner(h, sx, sy, sz);
    let apex = c(1., 1., -1.);
    let mut mesh = MeshData::default();
    // Bottom (-Y): full rectangle.
    mesh.push_flat_polygon(&[
        c(-1., -1., -1.),
        c(1., -1., -1.),
        c(1., -1., 1.),
        c(-1., -1., 1.),
    ]);
    // Vertical right (+X) and front (-Z) triangles meeting in the apex column.
    mesh.push_flat_polygon(&[c(1., -1., 1.), c(1., -1., -1.), apex]);
    mesh.push_flat_polygon(&[c(1., -1., -1.), c(-1., -1., -1.), apex]);
    // Sloped triangles facing back (+Z) and left (-X).
    mesh.push_flat_polygon(&[c(-1., -1., 1.), c(1., -1., 1.), apex]);
    mesh.push_flat_polygon(&[c(-1., -1., -1.), c(-1., -1., 1.), apex]);
    mesh
}

fn ball(radius: f32, segments: u32) -> MeshData {
    let rings = (segments / 2).max(2);
    let mut mesh = MeshData::default();
    let top = mesh.push_vertex(Vec3::new(0., radius, 0.), Vec3::Y);
    for ring in 1..rings {
        let polar = std::f32::consts::PI * ring as f32 / rings as f32;
        let (sin_p, cos_p) = polar.sin_cos();
        for seg in 0..segments {
            let azimuth = std::f32::consts::TAU * seg as f32 / segments as f32;
            let (sin_a, cos_a) = azimuth.sin_cos();
            let normal = Vec3::new(sin_p * cos_a, cos_p, -sin_p * sin_a);
            mesh.push_vertex(normal * radius, normal);
        }
    }
    let bottom = mesh.push_vertex(Vec3::new(0., -radius, 0.), Vec3::NEG_Y);
    let at = |ring: u32, seg: u32| 1 + (ring - 1) * segments + seg % segments;
    for seg in 0..segments {
        mesh.indices.extend([top, at(1, seg), at(1, seg + 1)]);
        mesh.indices
            .extend([bottom, at(rings - 1, seg + 1), at(rings - 1, seg)]);
    }
    for ring in 1..rings - 1 {
        for seg in 0..segments {
            let (a, b) = (at(ring, seg), at(ring, seg + 1));
            let (c, d) = (at(ring + 1, seg), at(ring + 1, seg + 1));
            mesh.indices.extend([a, c, d, a, d, b]);
        }
    }
    mesh
}

/// Quarter-circle steps of each rounded edge of [`Shape::Head`].
const HEAD_ARC_STEPS: u32 = 4;

/// [`Shape::Head`] in the box of half-extents `h`: a surface of revolution about Y built in
/// the unit cylinder (radius 1, half-height 1) and stretched, its normals by the inverse
/// stretch. The profile runs from the bottom pole along a quarter circle (centre r 0.5,
/// y −0.5, radius 0.5) to the side, up the side, and along the mirrored arc to the top pole
/// (flat discs of radius 0.5 around the poles).
fn head(h: Vec3, segments: u32) -> MeshData {
    // (r, y, normal r, normal y) of the profile's rings, bottom to top, poles excluded.
    let mut profile: Vec<(f32, f32, f32, f32)> = Vec::new();
    for (centre_y, from, to) in [
        (-0.5, -std::f32::consts::FRAC_PI_2, 0.0),
        (0.5, 0.0, std::f32::consts::FRAC_PI_2),
    ] {
        for step in 0..=HEAD_ARC_STEPS {
            let a = from + (to - from) * step as f32 / HEAD_ARC_STEPS as f32;
            let (sin, cos) = a.sin_cos();
            profile.push((0.5 + 0.5 * cos, centre_y + 0.5 * sin, cos, sin));
        }
    }
    let mut mesh = MeshData::default();
    let stretch = |p: Vec3| p * h;
    let normal = |n: Vec3| (n / h).normalize();
    let bottom = mesh.push_vertex(stretch(Vec3::NEG_Y), normal(Vec3::NEG_Y));
    for &(r, y, nr, ny) in &profile {
        for seg in 0..segments {
            let azimuth = std::f32::consts::TAU * seg as f32 / segments as f32;
            let (sin_a, cos_a) = azimuth.sin_cos();
            let p = Vec3::new(r * cos_a, y, -r * sin_a);
            let n = Vec3::new(nr * cos_a, ny, -nr * sin_a);
            mesh.push_vertex(stretch(p), normal(n));
        }
    }
    let top = mesh.push_vertex(stretch(Vec3::Y), normal(Vec3::Y));
    let rings = profile.len() as u32;
    let at = |ring: u32, seg: u32| 1 + ring * segments + seg % segments;
    for seg in 0..segments {
        mesh.indices.extend([bottom, at(0, seg + 1), at(0, seg)]);
        mesh.indices
            .extend([top, at(rings - 1, seg), at(rings - 1, seg + 1)]);
    }
    for ring in 0..rings - 1 {
        for seg in 0..segments {
            // Ring `ring` is below ring `ring + 1`.
            let (a, b) = (at(ring + 1, seg), at(ring + 1, seg + 1));
            let (c, d) = (at(ring, seg), at(ring, seg + 1));
            mesh.indices.extend([a, c, d, a, d, b]);
        }
    }
    mesh
}

fn cylinder(half_length: f32, radius: f32, segments: u32) -> MeshData {
    let mut mesh = MeshData::default();
    let ring: Vec<(f32, f32)> = (0..segments)
        .map(|seg| {
            let angle = std::f32::consts::TAU * seg as f32 / segments as f32;
            let (sin, cos) = angle.sin_cos();
            (cos, sin)
        })
        .collect();
    // Side: pairs (left, right) of smooth-shaded vertices.
    let side = mesh.positions.len() as u32;
    for &(cos, sin) in &ring {
        let normal = Vec3::new(0., cos, sin);
        mesh.push_vertex(Vec3::new(-half_length, cos * radius, sin * radius), normal);
        mesh.push_vertex(Vec3::new(half_length, cos * radius, sin * radius), normal);
    }
    for seg in 0..segments {
        let next = (seg + 1) % segments;
        let (l0, r0) = (side + 2 * seg, side + 2 * seg + 1);
        let (l1, r1) = (side + 2 * next, side + 2 * next + 1);
        mesh.indices.extend([l0, l1, r1, l0, r1, r0]);
    }
    // Caps: a centre vertex and a fan on each end.
    for (x, normal) in [(half_length, Vec3::X), (-half_length, Vec3::NEG_X)] {
        let centre = mesh.push_vertex(Vec3::new(x, 0., 0.), normal);
        for &(cos, sin) in &ring {
            mesh.push_vertex(Vec3::new(x, cos * radius, sin * radius), normal);
        }
        for seg in 0..segments {
            let (a, b) = (centre + 1 + seg, centre + 1 + (seg + 1) % segments);
            if normal.x > 0. {
                mesh.indices.extend([centre, a, b]);
            } else {
                mesh.indices.extend([centre, b, a]);
            }
        }
    }
    mesh
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    const ALL: [Shape; 8] = [
        Shape::Block,
        Shape::Ball,
        Shape::Cylinder,
        Shape::Wedge,
        Shape::CornerWedge,
        Shape::Ellipsoid,
        Shape::UprightCylinder,
        Shape::Head,
    ];

    /// Every triangle faces away from the solid's interior, its vertex normals
    /// agree with its winding, normals are unit length, and the surface is
    /// closed (each edge is used once in each direction).
    fn check_solid(mesh: &MeshData) {
        assert_eq!(mesh.positions.len(), mesh.normals.len());
        assert_eq!(mesh.indices.len() % 3, 0);
        for n in &mesh.normals {
            assert!(
                (n.length() - 1.0).abs() < 1e-5,
                "normal {n} is not unit length"
            );
        }
        // A point strictly inside every convex shape: the mean of the distinct corners.
        let mut distinct: Vec<[u32; 3]> = mesh
            .positions
            .iter()
            .map(|p| p.to_array().map(f32::to_bits))
            .collect();
        distinct.sort_unstable();
        distinct.dedup();
        let inside = distinct
            .iter()
            .map(|b| Vec3::from_array(b.map(f32::from_bits)))
            .sum::<Vec3>()
            / distinct.len() as f32;
        let mut edges: BTreeMap<([u32; 3], [u32; 3]), i32> = BTreeMap::new();
        for tri in mesh.indices.chunks(3) {
            let [a, b, c] = [0, 1, 2].map(|i| mesh.positions[tri[i] as usize]);
            let face_normal = (b - a).cross(c - a);
            assert!(face_normal.length() > 1e-6, "degenerate triangle {tri:?}");
            let centroid = (a + b + c) / 3.0;
            assert!(
                face_normal.dot(centroid - inside) > 0.0,
                "triangle {tri:?} winds clockwise seen from outside"
            );
            for &i in tri {
                assert!(
                    mesh.normals[i as usize].dot(face_normal) > 0.0,
                    "vertex normal of {i} disagrees with triangle {tri:?}"
                );
            }
            for (p, q) in [(a, b), (b, c), (c, a)] {
                let key = |v: Vec3| v.to_array().map(f32::to_bits);
                let (lo, hi, dir) = if key(p) < key(q) {
                    (key(p), key(q), 1)
                } else {
                    (key(q), key(p), -1)
                };
                *edges.entry((lo, hi)).or_default() += dir;
            }
        }
        assert!(
            edges.values().all(|&balance| balance == 0),
            "surface is not closed or has inconsistent winding"
        );
    }

    fn check(shape: Shape, size: Vec3, vertices: usize, triangles: usize, lo: Vec3, hi: Vec3) {
        let mesh = build(shape, size, 24);
        assert_eq!(mesh.positions.len(), vertices, "{shape:?} vertex count");
        assert_eq!(
            mesh.indices.len() / 3,
            triangles,
            "{shape:?} triangle count"
        );
        let (min, max) = mesh.bounds();
        assert!(min.abs_diff_eq(lo, 1e-5), "{shape:?} min {min} != {lo}");
        assert!(max.abs_diff_eq(hi, 1e-5), "{shape:?} max {max} != {hi}");
        check_solid(&mesh);
    }

    #[test]
    fn head_fills_the_whole_size_with_rounded_edges() {
        // The classic head's part: round, its diameter the smaller of X and Z.
        let size = Vec3::new(2., 1., 1.);
        let fills = Vec3::new(1., 1., 1.);
        // 2 poles + 10 rings of 24; 2 fans of 24 + 9 bands of 48 triangles.
        check(
            Shape::Head,
            size,
            2 + 10 * 24,
            48 + 9 * 48,
            -fills / 2.,
            fills / 2.,
        );
        let mesh = build(Shape::Head, size, 24);
        // Vertical sides between a quarter and three quarters of the height, rounded above
        // and below: the widest point at the top is half the radius from the axis.
        let widest = |at_y: f32| {
            mesh.positions
                .iter()
                .filter(|p| (p.y - at_y).abs() < 1e-4)
                .map(|p| p.x.abs())
                .fold(0.0f32, f32::max)
        };
        assert!((widest(0.25) - 0.5).abs() < 1e-5 && (widest(-0.25) - 0.5).abs() < 1e-5);
        assert!((widest(0.5) - 0.25).abs() < 1e-5, "{}", widest(0.5));
    }

    #[test]
    fn block_is_a_box_of_size() {
        let size = Vec3::new(4., 1., 2.);
        check(Shape::Block, size, 24, 12, -size / 2., size / 2.);
    }

    #[test]
    fn ball_uses_smallest_extent_as_diameter() {
        // 24 segments, 12 rings: 2 poles + 11 rings of 24.
        let r = Vec3::splat(1.5);
        check(
            Shape::Ball,
            Vec3::new(3., 5., 4.),
            2 + 11 * 24,
            2 * 24 + 10 * 48,
            -r,
            r,
        );
    }

    #[test]
    fn cylinder_runs_along_x() {
        let lo = Vec3::new(-3., -1., -1.);
        check(
            Shape::Cylinder,
            Vec3::new(6., 2., 3.),
            2 * 24 + 2 * 25,
            48 + 48,
            lo,
            -lo,
        );
    }

    #[test]
    fn ellipsoid_fills_the_whole_size() {
        let size = Vec3::new(2., 6., 4.);
        check(
            Shape::Ellipsoid,
            size,
            2 + 11 * 24,
            2 * 24 + 10 * 48,
            -size / 2.,
            size / 2.,
        );
        // Every vertex is on the surface x²/a² + y²/b² + z²/c² = 1, and its normal is
        // the gradient there (p / h²), not the sphere's (p / |p|).
        let h = size / 2.;
        let mesh = build(Shape::Ellipsoid, size, 24);
        for (p, n) in mesh.positions.iter().zip(&mesh.normals) {
            assert!(((*p / h).length_squared() - 1.0).abs() < 1e-5, "{p}");
            assert!(n.abs_diff_eq((*p / (h * h)).normalize(), 1e-5), "{p}: {n}");
        }
    }

    #[test]
    fn upright_cylinder_runs_along_y() {
        let lo = Vec3::new(-1., -3., -1.);
        check(
            Shape::UprightCylinder,
            Vec3::new(2., 6., 3.),
            2 * 24 + 2 * 25,
            48 + 48,
            lo,
            -lo,
        );
        let mesh = build(Shape::UprightCylinder, Vec3::new(2., 6., 3.), 24);
        assert!(mesh.normals.contains(&Vec3::Y) && mesh.normals.contains(&Vec3::NEG_Y));
    }

    #[test]
    fn wedge_slopes_down_towards_front() {
        let size = Vec3::new(2., 4., 6.);
        check(Shape::Wedge, size, 18, 8, -size / 2., size / 2.);
        let mesh = build(Shape::Wedge, size, 24);
        // Top vertices only at the back (+Z).
        for p in &mesh.positions {
            if p.y > 0. {
                assert_eq!(p.z, 3., "top vertex {p} not at the back");
            }
        }
        // The slope rises along (0, Size.Y, Size.Z), so it faces (0, Size.Z, -Size.Y):
        // up and towards the front.
        let expected = Vec3::new(0., 6., -4.).normalize();
        assert!(mesh.normals.iter().any(|n| n.abs_diff_eq(expected, 1e-6)));
    }

    #[test]
    fn corner_wedge_apex_is_above_right_front_corner() {
        let size = Vec3::new(2., 4., 6.);
        check(Shape::CornerWedge, size, 16, 6, -size / 2., size / 2.);
        let mesh = build(Shape::CornerWedge, size, 24);
        let top: Vec<Vec3> = mesh
            .positions
            .iter()
            .copied()
            .filter(|p| p.y > 0.)
            .collect();
        assert!(!top.is_empty());
        assert!(top.iter().all(|&p| p == Vec3::new(1., 2., -3.)));
        // Vertical faces on +X and -Z only.
        for axis in [Vec3::X, Vec3::NEG_Z] {
            assert!(mesh.normals.contains(&axis), "no face along {axis}");
        }
        for axis in [Vec3::NEG_X, Vec3::Z, Vec3::Y] {
            assert!(
                mesh.normals.iter().all(|&n| n != axis),
                "unexpected face along {axis}"
            );
        }
    }

    #[test]
    fn all_shapes_are_closed_at_odd_sizes_and_tessellations() {
        for shape in ALL {
            // An ellipsoid at 3 or 5 segments is a bipyramid on one ring: at this
            // aspect its faces lean away from the ellipsoid's normals at that ring.
            let counts: &[u32] = match shape {
                // (A head stretched this far leans the same way at 3 segments.)
                Shape::Ellipsoid | Shape::Head => &[4, 7, 64],
                _ => &[3, 7, 64],
            };
            for &segments in counts {
                check_solid(&build(shape, Vec3::new(0.3, 7.25, 1.0), segments));
            }
        }
    }

    #[test]
    fn effective_size_ignores_what_the_shape_ignores() {
        let size = Vec3::new(3., 5., 4.);
        assert_eq!(Shape::Ball.effective_size(size), Vec3::splat(3.));
        assert_eq!(Shape::Cylinder.effective_size(size), Vec3::new(3., 4., 4.));
        assert_eq!(Shape::Wedge.effective_size(size), size);
        assert_eq!(Shape::Ellipsoid.effective_size(size), size);
        assert_eq!(Shape::Head.effective_size(size), Vec3::new(3., 5., 3.));
        assert_eq!(
            Shape::UprightCylinder.effective_size(size),
            Vec3::new(3., 5., 3.)
        );
    }
}
