//! Solid modelling: what Roblox's `UnionAsync`, `SubtractAsync` and `IntersectAsync` do to
//! parts, on closed polygon surfaces.
//!
//! A [`Solid`] is a closed surface of convex polygons in f64 (each corner with its own
//! normal, each polygon one color). Boolean operations merge BSP trees in the classic way
//! (Naylor, Thibault): build a tree per solid, clip each solid's polygons against the other's
//! tree, and invert a solid (turn it inside out) to subtract or intersect. The trees only
//! classify space: what is clipped is each solid's own polygons, and a polygon that loses no
//! area comes out whole, so a result is cut only where the solids meet (a chain of
//! operations does not fragment the earlier results again and again). Per-vertex normals are
//! interpolated through every cut, so curved surfaces stay smoothly shaded.
//!
//! Owns: boolean operations on closed surfaces ([`Solid::union`], [`Solid::subtract`],
//! [`Solid::intersect`]), splitting a solid into its connected bodies
//! ([`Solid::split_apart`]), convex hulls ([`Solid::convex_hull`], what a sweep is made of),
//! half-space clips ([`Solid::clip_half_space`], the walls of Voronoi fragments),
//! and conversion from and to `procmodel_mesh` meshes ([`Solid::from_shape`],
//! [`Solid::from_triangle_mesh`], [`Solid::to_triangle_mesh`]).
//!
//! Must never: touch the DOM or Luau; panic on any input (degenerate or non-finite input
//! triangles are skipped, a result that grows past [`MAX_POLYGONS`] is an error); recurse
//! without bound (the trees live in an arena and every walk uses an explicit stack); depend
//! on hash-map order, threads or clocks — the same input gives the same output bits.
//!
//! Numerics: points within 1e-5 studs of a plane count as on it, so
//! faces that are meant to be flush (a window cut level with a wall's face, two boxes
//! stacked on a shared face) are handled as coplanar: a coplanar polygon goes with the front
//! when it faces the same way as the plane, with the back otherwise.

mod bsp;
mod geom;
mod hull;
mod merge;

#[cfg(test)]
mod tests;

pub use glam::{DAffine3, DVec3};

use bsp::Tree;
use geom::{EPSILON, Plane, Polygon, Vertex};
use glam::{DMat3, Vec3};
use procmodel_mesh::{Triangle, TriangleMesh};
use std::collections::HashMap;

/// Why a boolean operation has no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CsgError {
    /// An operation's polygons grew past the limit (a generator must not hang the host).
    #[error("the solid grew to more than {limit} polygons")]
    TooComplex { limit: usize },
    /// The caller's `stop` said to stop (a time limit, a cancellation).
    #[error("the operation was stopped")]
    Interrupted,
}

/// Polygons any one operation (and its intermediate trees) may hold.
pub const MAX_POLYGONS: usize = 200_000;

/// A closed surface: convex polygons, each corner with a position and a unit normal, each
/// polygon one RGBA color (0–1), counter-clockwise seen from outside.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Solid {
    polygons: Vec<Polygon>,
}

impl Solid {
    /// A closed mesh of `shapes::build`, placed by `transform` (rotation + translation; may
    /// also scale or mirror), every face `color` (RGBA 0–1).
    pub fn from_shape(
        mesh: &procmodel_mesh::shapes::MeshData,
        transform: DAffine3,
        color: [f32; 4],
    ) -> Solid {
        let placer = Placer::new(transform);
        let mut polygons = Vec::with_capacity(mesh.indices.len() / 3);
        let corner = |i: u32| {
            let position = *mesh.positions.get(i as usize)?;
            let normal = mesh.normals.get(i as usize).copied().unwrap_or(Vec3::ZERO);
            Some((position.as_dvec3(), normal.as_dvec3()))
        };
        for t in mesh.indices.chunks_exact(3) {
            let (Some(a), Some(b), Some(c)) = (corner(t[0]), corner(t[1]), corner(t[2])) else {
                continue;
            };
            polygons.extend(placer.triangle([a, b, c], color));
        }
        Solid { polygons }
    }

    /// A TriangleMesh (a script-built mesh or an earlier union's result), placed by
    /// `transform`; its own per-corner colors (a polygon takes its first corner's color), or
    /// `color` for every face when Some. Triangles with an index out of range are skipped; a
    /// normal index out of range or a zero normal falls back to the face normal, a color
    /// index out of range to opaque white.
    pub fn from_triangle_mesh(
        mesh: &TriangleMesh,
        transform: DAffine3,
        color: Option<[f32; 4]>,
    ) -> Solid {
        let placer = Placer::new(transform);
        let mut polygons = Vec::with_capacity(mesh.triangles.len());
        for t in &mesh.triangles {
            let corner = |c: usize| {
                let p = *mesh.positions.get(t.vertices[c] as usize)?;
                let n = mesh
                    .normals
                    .get(t.normals[c] as usize)
                    .copied()
                    .unwrap_or([0.0; 3]);
                Some((
                    Vec3::from_array(p).as_dvec3(),
                    Vec3::from_array(n).as_dvec3(),
                ))
            };
            let (Some(a), Some(b), Some(c)) = (corner(0), corner(1), corner(2)) else {
                continue;
            };
            let color = color.unwrap_or_else(|| {
                mesh.colors
                    .get(t.colors[0] as usize)
                    .copied()
                    .unwrap_or([1.0; 4])
            });
            polygons.extend(placer.triangle([a, b, c], color));
        }
        Solid { polygons }
    }

    /// The convex hull of `points`, every face `color` (RGBA 0–1), corners shaded smooth
    /// across faces less than 40° apart; empty when the points span no volume (fewer than
    /// four, all within 1e-7 of their extent of one plane, or not finite).
    pub fn convex_hull(points: &[DVec3], color: [f32; 4]) -> Solid {
        Solid {
            polygons: hull::hull_polygons(points, sanitize(color)),
        }
    }

    /// The same surface with the pieces boolean operations cut merged back where they can
    /// be: adjacent polygons of one plane and color sharing an edge exactly, whose union is
    /// convex, become one (grouped by plane, in order of first appearance).
    pub fn merged(self) -> Solid {
        Solid {
            polygons: merge::merge_coplanar(self.polygons),
        }
    }

    /// What lies behind the plane through `point` facing `outward` (the half-space
    /// `(x - point) · outward <= 0`), its cut faces in `color`: one cell wall of a Voronoi
    /// fragment. A solid wholly behind comes back as it is, one wholly in front as empty.
    pub fn clip_half_space(
        &self,
        point: DVec3,
        outward: DVec3,
        color: [f32; 4],
        stop: &dyn Fn() -> bool,
    ) -> Result<Solid, CsgError> {
        let n = outward.normalize_or_zero();
        let Some((lo, hi)) = self.bounds() else {
            return Ok(Solid::default());
        };
        if n == DVec3::ZERO || !n.is_finite() || !point.is_finite() {
            return Ok(self.clone());
        }
        let side = |p: DVec3| (p - point).dot(n);
        let mut points = self.polygons.iter().flat_map(|p| &p.vertices);
        if points.clone().all(|v| side(v.pos) <= EPSILON) {
            return Ok(self.clone());
        }
        if points.all(|v| side(v.pos) >= -EPSILON) {
            return Ok(Solid::default());
        }
        // A block behind the plane, one face on it, larger than the solid wherever it is.
        let reach = (hi - lo).length() + (point - (lo + hi) * 0.5).length() + 1.0;
        let u = n.any_orthonormal_vector();
        let rotation = DMat3::from_cols(u, n.cross(u), n);
        // A block of corners ±1 (exact in f32) scaled in f64: the face lands on the plane.
        let block = procmodel_mesh::shapes::build(
            procmodel_mesh::shapes::Shape::Block,
            Vec3::splat(2.0),
            1,
        );
        let scale = DMat3::from_diagonal(DVec3::splat(reach));
        let place = DAffine3::from_mat3_translation(rotation * scale, point - n * reach);
        self.intersect_until(&Solid::from_shape(&block, place, color), stop)
    }

    /// The color covering the most surface (first of equals), None when empty: what new
    /// faces cut into the solid are painted (a MeshPart's own color is white; its faces
    /// carry the colors).
    pub fn main_color(&self) -> Option<[f32; 4]> {
        let mut areas: Vec<([f32; 4], f64)> = Vec::new();
        for p in &self.polygons {
            let area = p.area();
            match areas.iter_mut().find(|(c, _)| *c == p.color) {
                Some((_, a)) => *a += area,
                None => areas.push((p.color, area)),
            }
        }
        let mut best: Option<([f32; 4], f64)> = None;
        for (c, a) in areas {
            if best.is_none_or(|(_, b)| a > b) {
                best = Some((c, a));
            }
        }
        best.map(|(c, _)| c)
    }

    /// Whether `point` is inside the closed surface (its winding number is about 1).
    pub fn contains(&self, point: DVec3) -> bool {
        winding_number(&self.polygons, point) > 0.5
    }

    /// The distance from `point` to the nearest point of the surface (inside or outside);
    /// infinite for an empty solid.
    pub fn surface_distance(&self, point: DVec3) -> f64 {
        self.polygons
            .iter()
            .map(|p| p.distance_to(point))
            .fold(f64::INFINITY, f64::min)
    }

    /// Every corner position of every polygon, in polygon order (repeats included).
    pub fn points(&self) -> Vec<DVec3> {
        self.polygons
            .iter()
            .flat_map(|p| p.vertices.iter().map(|v| v.pos))
            .collect()
    }

    /// Everything in either solid.
    pub fn union(&self, other: &Solid) -> Result<Solid, CsgError> {
        self.union_until(other, &|| false)
    }

    /// What of `self` is not in `other`.
    pub fn subtract(&self, other: &Solid) -> Result<Solid, CsgError> {
        self.subtract_until(other, &|| false)
    }

    /// What is in both solids.
    pub fn intersect(&self, other: &Solid) -> Result<Solid, CsgError> {
        self.intersect_until(other, &|| false)
    }

    /// [`Solid::union`], stopping with [`CsgError::Interrupted`] as soon as `stop` returns
    /// true (it is asked often: a time limit's flag is what it should read).
    pub fn union_until(&self, other: &Solid, stop: &dyn Fn() -> bool) -> Result<Solid, CsgError> {
        // Disjoint (or empty) solids just sit side by side.
        if !self.bounds_overlap(other) {
            return concat(&self.polygons, &other.polygons);
        }
        let a_tree = Tree::new(&self.polygons, stop)?;
        let b_tree = Tree::new(&other.polygons, stop)?;
        let a = b_tree.clip(&self.polygons, stop)?;
        let b = a_tree.clip(&other.polygons, stop)?;
        // Of surfaces both solids have (in one plane, facing the same way), keep only
        // `self`'s: turned around, `other`'s copy counts as inside `self`.
        let b = flipped(a_tree.clip(&flipped(b), stop)?);
        finish(a, b, false)
    }

    /// [`Solid::subtract`], stopping as [`Solid::union_until`] does.
    pub fn subtract_until(
        &self,
        other: &Solid,
        stop: &dyn Fn() -> bool,
    ) -> Result<Solid, CsgError> {
        if self.is_empty() || other.is_empty() || !self.bounds_overlap(other) {
            return Ok(self.clone());
        }
        // self − other = ¬(¬self ∪ other).
        let mut not_a = Tree::new(&self.polygons, stop)?;
        not_a.invert();
        let b_tree = Tree::new(&other.polygons, stop)?;
        let a = b_tree.clip(&flipped(self.polygons.clone()), stop)?;
        let b = not_a.clip(&other.polygons, stop)?;
        let b = flipped(not_a.clip(&flipped(b), stop)?);
        finish(a, b, true)
    }

    /// [`Solid::intersect`], stopping as [`Solid::union_until`] does.
    pub fn intersect_until(
        &self,
        other: &Solid,
        stop: &dyn Fn() -> bool,
    ) -> Result<Solid, CsgError> {
        if self.is_empty() || other.is_empty() || !self.bounds_overlap(other) {
            return Ok(Solid::default());
        }
        // self ∩ other = ¬(¬self ∪ ¬other).
        let mut not_a = Tree::new(&self.polygons, stop)?;
        not_a.invert();
        let mut not_b = Tree::new(&other.polygons, stop)?;
        not_b.invert();
        let b = not_a.clip(&other.polygons, stop)?;
        let a = not_b.clip(&flipped(self.polygons.clone()), stop)?;
        let b = not_a.clip(&flipped(b), stop)?;
        finish(a, b, true)
    }

    /// The union of all `solids` (empty for none), merged pairwise in a balanced order:
    /// each merge builds the trees of two solids of similar size, where merging one by one
    /// would rebuild the tree of a growing result for every solid. Disjoint neighbours are
    /// only put side by side. The result is the same solid as merging one by one, up to the
    /// order of its polygons; this order is fixed by the order of `solids`.
    pub fn union_all(solids: Vec<Solid>, stop: &dyn Fn() -> bool) -> Result<Solid, CsgError> {
        let mut level = solids;
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len().div_ceil(2));
            let mut items = level.into_iter();
            while let Some(a) = items.next() {
                next.push(match items.next() {
                    Some(b) => a.union_until(&b, stop)?,
                    None => a,
                });
            }
            level = next;
        }
        Ok(level.pop().unwrap_or_default())
    }

    pub fn is_empty(&self) -> bool {
        self.polygons.is_empty()
    }

    pub fn polygon_count(&self) -> usize {
        self.polygons.len()
    }

    /// Axis-aligned bounds of the vertices (None when empty).
    pub fn bounds(&self) -> Option<(DVec3, DVec3)> {
        let mut points = self.polygons.iter().flat_map(|p| &p.vertices);
        let first = points.next()?.pos;
        Some(points.fold((first, first), |(lo, hi), v| (lo.min(v.pos), hi.max(v.pos))))
    }

    /// Enclosed volume (divergence theorem over the polygons).
    pub fn volume(&self) -> f64 {
        self.polygons.iter().map(Polygon::volume6).sum::<f64>() / 6.0
    }

    /// The connected bodies (polygons joined when they share a vertex position, after
    /// snapping positions to a 1e-5 grid), in a deterministic order (by first polygon
    /// index); each body keeps its polygons in their order here.
    ///
    /// A shell that faces inward (negative volume: the surface of a cavity) is no body of
    /// its own: it goes with the smallest body that encloses it.
    pub fn split_apart(&self) -> Vec<Solid> {
        let n = self.polygons.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        // Lookups only: the map's order never shows.
        let mut owner: HashMap<[i64; 3], usize> = HashMap::new();
        for (i, polygon) in self.polygons.iter().enumerate() {
            for v in &polygon.vertices {
                let key = v.pos.to_array().map(|x| (x * 1e5).round() as i64);
                let j = *owner.entry(key).or_insert(i);
                let (ri, rj) = (root(&mut parent, i), root(&mut parent, j));
                // The smaller index becomes the root, so roots are first polygons.
                if ri != rj {
                    let (lo, hi) = if ri < rj { (ri, rj) } else { (rj, ri) };
                    parent[hi] = lo;
                }
            }
        }
        // Shells in order of their first polygon.
        let mut shell_of_root: Vec<usize> = vec![usize::MAX; n];
        let mut shells: Vec<Solid> = Vec::new();
        for (i, polygon) in self.polygons.iter().enumerate() {
            let r = root(&mut parent, i);
            if shell_of_root[r] == usize::MAX {
                shell_of_root[r] = shells.len();
                shells.push(Solid::default());
            }
            shells[shell_of_root[r]].polygons.push(polygon.clone());
        }
        if shells.len() < 2 {
            return shells;
        }
        // Each cavity joins the smallest enclosing body; polygons are kept by index so a
        // body's polygons stay in their order here.
        let volumes: Vec<f64> = shells.iter().map(Solid::volume).collect();
        let bounds: Vec<Option<(DVec3, DVec3)>> = shells.iter().map(Solid::bounds).collect();
        let mut joins: Vec<usize> = (0..shells.len()).collect();
        for (c, cavity) in shells.iter().enumerate() {
            let (Some((clo, chi)), Some(point)) = (bounds[c], cavity.first_position()) else {
                continue;
            };
            if volumes[c] >= 0.0 {
                continue;
            }
            let mut best: Option<usize> = None;
            for (b, body) in shells.iter().enumerate() {
                let Some((lo, hi)) = bounds[b] else {
                    continue;
                };
                let encloses = volumes[b] > 0.0
                    && best.is_none_or(|k| volumes[b] < volumes[k])
                    && lo.cmple(clo + EPSILON).all()
                    && hi.cmpge(chi - EPSILON).all()
                    && winding_number(&body.polygons, point) > 0.5;
                if encloses {
                    best = Some(b);
                }
            }
            if let Some(b) = best {
                joins[c] = b;
            }
        }
        let mut body_of_shell: Vec<usize> = vec![usize::MAX; shells.len()];
        let mut bodies: Vec<Solid> = Vec::new();
        for (s, &to) in joins.iter().enumerate() {
            if to == s {
                body_of_shell[s] = bodies.len();
                bodies.push(Solid::default());
            }
        }
        for (i, polygon) in self.polygons.iter().enumerate() {
            let shell = shell_of_root[root(&mut parent, i)];
            bodies[body_of_shell[joins[shell]]]
                .polygons
                .push(polygon.clone());
        }
        bodies
    }

    /// Moves every vertex by `transform` (normals by its inverse transpose, renormalised).
    /// A mirroring transform reverses every polygon's corners so the outside stays outside;
    /// a transform that is not invertible (it would flatten the solid) gives an empty solid,
    /// and polygons whose positions stop being finite are dropped.
    pub fn transformed(&self, transform: DAffine3) -> Solid {
        let Some(placer) = Placer::invertible(transform) else {
            return Solid::default();
        };
        let mut polygons = Vec::with_capacity(self.polygons.len());
        for polygon in &self.polygons {
            let mut vertices: Vec<Vertex> = polygon
                .vertices
                .iter()
                .map(|v| {
                    let pos = transform.transform_point3(v.pos);
                    Vertex {
                        pos,
                        normal: placer.normal(v.normal).unwrap_or(DVec3::ZERO),
                    }
                })
                .collect();
            let Some(normal) = placer.normal(polygon.plane.normal) else {
                continue;
            };
            let Some(first) = vertices.first() else {
                continue;
            };
            let plane = Plane {
                normal,
                w: normal.dot(first.pos),
            };
            if !plane.w.is_finite() || vertices.iter().any(|v| !v.pos.is_finite()) {
                continue;
            }
            for v in &mut vertices {
                if v.normal == DVec3::ZERO {
                    v.normal = normal;
                }
            }
            if placer.mirrors {
                vertices.reverse();
            }
            polygons.push(Polygon {
                vertices,
                plane,
                color: polygon.color,
            });
        }
        Solid { polygons }
    }

    /// Fan-triangulated TriangleMesh in f32: positions, normals and colors deduplicated by
    /// exact bits (deterministic order of first use), one UV `[0, 0]` used by every corner.
    /// Drops degenerate (zero-area once in f32) triangles. The mesh is not held to
    /// `procmodel_mesh`'s size limits; the caller checks them.
    pub fn to_triangle_mesh(&self) -> TriangleMesh {
        let mut mesh = TriangleMesh {
            uvs: vec![[0.0, 0.0]],
            ..TriangleMesh::default()
        };
        let mut positions: HashMap<[u32; 3], u32> = HashMap::new();
        let mut normals: HashMap<[u32; 3], u32> = HashMap::new();
        let mut colors: HashMap<[u32; 4], u32> = HashMap::new();
        fn index<const N: usize>(
            map: &mut HashMap<[u32; N], u32>,
            list: &mut Vec<[f32; N]>,
            value: [f32; N],
        ) -> u32 {
            *map.entry(value.map(f32::to_bits)).or_insert_with(|| {
                list.push(value);
                list.len() as u32 - 1
            })
        }
        for polygon in &self.polygons {
            let color = polygon.color;
            let corners: Vec<([f32; 3], [f32; 3])> = polygon
                .vertices
                .iter()
                .map(|v| {
                    let n = v.normal.normalize_or_zero();
                    let n = if n == DVec3::ZERO {
                        polygon.plane.normal
                    } else {
                        n
                    };
                    (v.pos.as_vec3().to_array(), n.as_vec3().to_array())
                })
                .collect();
            for k in 1..corners.len().saturating_sub(1) {
                let tri = [corners[0], corners[k], corners[k + 1]];
                let p = tri.map(|(p, _)| Vec3::from_array(p).as_dvec3());
                let area2 = (p[1] - p[0]).cross(p[2] - p[0]);
                if area2 == DVec3::ZERO || !area2.is_finite() {
                    continue;
                }
                let vertices = tri.map(|(p, _)| index(&mut positions, &mut mesh.positions, p));
                let normals = tri.map(|(_, n)| index(&mut normals, &mut mesh.normals, n));
                let c = index(&mut colors, &mut mesh.colors, color);
                mesh.triangles.push(Triangle {
                    vertices,
                    normals,
                    uvs: [0; 3],
                    colors: [c; 3],
                });
            }
        }
        if mesh.triangles.is_empty() {
            mesh.uvs.clear();
        }
        mesh
    }

    /// The position of the first corner of the first polygon.
    fn first_position(&self) -> Option<DVec3> {
        Some(self.polygons.first()?.vertices.first()?.pos)
    }

    /// Whether the two solids' bounds come within [`EPSILON`] of each other.
    fn bounds_overlap(&self, other: &Solid) -> bool {
        match (self.bounds(), other.bounds()) {
            (Some((lo_a, hi_a)), Some((lo_b, hi_b))) => {
                (lo_a - hi_b).max_element() <= EPSILON && (lo_b - hi_a).max_element() <= EPSILON
            }
            _ => false,
        }
    }
}

fn concat(a: &[Polygon], b: &[Polygon]) -> Result<Solid, CsgError> {
    if a.len() + b.len() > MAX_POLYGONS {
        return Err(CsgError::TooComplex {
            limit: MAX_POLYGONS,
        });
    }
    Ok(Solid {
        polygons: a.iter().chain(b).cloned().collect(),
    })
}

/// How many times the polygons wind around `point`: about 1 inside a closed outward
/// surface, 0 outside (the solid angles of the fan triangles over 4π).
fn winding_number(polygons: &[Polygon], point: DVec3) -> f64 {
    let mut total = 0.0;
    for polygon in polygons {
        let Some((first, rest)) = polygon.vertices.split_first() else {
            continue;
        };
        let a = first.pos - point;
        let la = a.length();
        for w in rest.windows(2) {
            let (b, c) = (w[0].pos - point, w[1].pos - point);
            let (lb, lc) = (b.length(), c.length());
            // Van Oosterom and Strackee's solid angle of a triangle.
            let det = a.dot(b.cross(c));
            let div = la * lb * lc + a.dot(b) * lc + a.dot(c) * lb + b.dot(c) * la;
            total += 2.0 * det.atan2(div);
        }
    }
    total / (4.0 * std::f64::consts::PI)
}

/// Every polygon turned inside out.
fn flipped(mut polygons: Vec<Polygon>) -> Vec<Polygon> {
    for p in &mut polygons {
        p.flip();
    }
    polygons
}

/// The polygons the clips kept, `a`'s first, turned inside out when `flip`.
fn finish(mut a: Vec<Polygon>, b: Vec<Polygon>, flip: bool) -> Result<Solid, CsgError> {
    a.extend(b);
    if a.len() > MAX_POLYGONS {
        return Err(CsgError::TooComplex {
            limit: MAX_POLYGONS,
        });
    }
    let polygons = if flip { flipped(a) } else { a };
    Ok(Solid { polygons })
}

/// Places input triangles: positions by an affine transform, normals by the inverse
/// transpose of its linear part.
struct Placer {
    transform: DAffine3,
    /// None when the transform is not invertible (normals then come from the faces).
    normal_matrix: Option<DMat3>,
    mirrors: bool,
}

impl Placer {
    fn new(transform: DAffine3) -> Placer {
        Placer::invertible(transform).unwrap_or(Placer {
            transform,
            normal_matrix: None,
            mirrors: false,
        })
    }

    fn invertible(transform: DAffine3) -> Option<Placer> {
        let det = transform.matrix3.determinant();
        if !(det.is_finite() && det != 0.0 && transform.translation.is_finite()) {
            return None;
        }
        let normal_matrix = transform.matrix3.inverse().transpose();
        normal_matrix.is_finite().then_some(Placer {
            transform,
            normal_matrix: Some(normal_matrix),
            mirrors: det < 0.0,
        })
    }

    /// A unit normal placed, or None when it is zero or not finite (before or after).
    fn normal(&self, n: DVec3) -> Option<DVec3> {
        let n = self.normal_matrix? * n;
        let n = n.normalize_or_zero();
        (n != DVec3::ZERO).then_some(n)
    }

    /// One input triangle (local positions and normals, counter-clockwise seen from
    /// outside) as a placed polygon, or None when it is degenerate or not finite.
    fn triangle(&self, corners: [(DVec3, DVec3); 3], color: [f32; 4]) -> Option<Polygon> {
        let mut corners = corners.map(|(p, n)| (self.transform.transform_point3(p), n));
        if self.mirrors {
            corners.reverse();
        }
        let [a, b, c] = corners.map(|(p, _)| p);
        let plane = Plane::from_triangle(a, b, c)?;
        let vertices = corners
            .map(|(pos, n)| Vertex {
                pos,
                normal: self.normal(n).unwrap_or(plane.normal),
            })
            .to_vec();
        Some(Polygon {
            vertices,
            plane,
            color: sanitize(color),
        })
    }
}

/// Colors as they travel: non-finite channels become 0 (a mesh must hold finite values).
fn sanitize(color: [f32; 4]) -> [f32; 4] {
    color.map(|c| if c.is_finite() { c } else { 0.0 })
}
