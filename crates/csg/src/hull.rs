//! Convex hulls of point sets, as closed solids: what `GeometryService:SweepPartAsync`
//! builds a sweep from (the union of the hulls of a shape at each adjacent pair of places).
//!
//! Incremental construction in f64: a first tetrahedron from extreme points, then each
//! remaining point, in input order, replaces the faces it sees (found by a walk from one
//! visible face across shared edges, so the visible region is always connected) by a fan
//! to the horizon, farthest points first. A point within a tolerance of the hull (relative
//! to the points' extent) is inside. The same points in the same order give the same hull bits.

use crate::geom::{Plane, Polygon, Vertex};
use glam::DVec3;
use std::collections::HashMap;

/// Faces whose normals differ by less than this angle share smoothed corner normals
/// (a swept ball is shaded round; a swept box keeps its edges).
const SMOOTH_COS: f64 = 0.766; // cos 40°

struct Face {
    v: [usize; 3],
    plane: Plane,
    alive: bool,
}

/// The hull's triangles (indices into `points`, counter-clockwise from outside), or None
/// when the points span no volume (fewer than four, or all within the tolerance of one
/// plane) or a coordinate is not finite.
pub(crate) fn hull_triangles(points: &[DVec3]) -> Option<Vec<[usize; 3]>> {
    if points.len() < 4 || points.iter().any(|p| !p.is_finite()) {
        return None;
    }
    let (lo, hi) = points.iter().fold((points[0], points[0]), |(lo, hi), p| {
        (lo.min(*p), hi.max(*p))
    });
    let extent = (hi - lo).max_element();
    if extent <= 0.0 {
        return None;
    }
    let eps = extent * 1e-7;
    // The first tetrahedron: the lowest x, the farthest from it, the farthest from their
    // line, the farthest from their plane (first of equals: deterministic).
    let farthest = |score: &dyn Fn(DVec3) -> f64| -> (usize, f64) {
        let mut best = (0, f64::NEG_INFINITY);
        for (i, p) in points.iter().enumerate() {
            let s = score(*p);
            if s > best.1 {
                best = (i, s);
            }
        }
        best
    };
    let a = farthest(&|p| -p.x).0;
    let (b, d_ab) = farthest(&|p| (p - points[a]).length());
    if d_ab <= eps {
        return None;
    }
    let axis = (points[b] - points[a]) / d_ab;
    let (c, d_c) = farthest(&|p| {
        let w = p - points[a];
        (w - axis * w.dot(axis)).length()
    });
    if d_c <= eps {
        return None;
    }
    let n = (points[b] - points[a])
        .cross(points[c] - points[a])
        .normalize();
    let (d, d_d) = farthest(&|p| (p - points[a]).dot(n).abs());
    if d_d <= eps {
        return None;
    }
    let mut faces: Vec<Face> = Vec::new();
    // Directed edge (from, to) → the alive face that has it.
    let mut edges: HashMap<(usize, usize), usize> = HashMap::new();
    let inside = (points[a] + points[b] + points[c] + points[d]) / 4.0;
    let add = |faces: &mut Vec<Face>,
               edges: &mut HashMap<(usize, usize), usize>,
               mut v: [usize; 3]|
     -> Option<()> {
        let mut plane = Plane::from_triangle(points[v[0]], points[v[1]], points[v[2]])?;
        if plane.distance(inside) > 0.0 {
            v.swap(1, 2);
            plane = plane.flipped();
        }
        let id = faces.len();
        for k in 0..3 {
            edges.insert((v[k], v[(k + 1) % 3]), id);
        }
        faces.push(Face {
            v,
            plane,
            alive: true,
        });
        Some(())
    };
    for v in [[a, b, c], [a, b, d], [a, c, d], [b, c, d]] {
        add(&mut faces, &mut edges, v)?;
    }
    let mut stack = Vec::new();
    let mut visible: Vec<usize> = Vec::new();
    let mut seen: Vec<bool> = Vec::new();
    // Farthest from the tetrahedron first (ties in input order): extreme points go in
    // before the points between them, which then fall inside instead of staying behind
    // as needless vertices of flat faces.
    let mut order: Vec<usize> = (0..points.len())
        .filter(|i| ![a, b, c, d].contains(i))
        .collect();
    order.sort_by(|&i, &j| {
        let (di, dj) = (
            (points[i] - inside).length_squared(),
            (points[j] - inside).length_squared(),
        );
        dj.total_cmp(&di).then(i.cmp(&j))
    });
    for i in order {
        let p = points[i];
        // One face the point sees, the farthest (first of equals).
        let mut start = None;
        let mut best = eps;
        for (f, face) in faces.iter().enumerate() {
            if face.alive {
                let dist = face.plane.distance(p);
                if dist > best {
                    best = dist;
                    start = Some(f);
                }
            }
        }
        let Some(start) = start else { continue };
        // The visible region, connected, by a walk across shared edges.
        seen.clear();
        seen.resize(faces.len(), false);
        visible.clear();
        stack.push(start);
        seen[start] = true;
        while let Some(f) = stack.pop() {
            visible.push(f);
            let v = faces[f].v;
            for k in 0..3 {
                if let Some(&g) = edges.get(&(v[(k + 1) % 3], v[k]))
                    && !seen[g]
                    && faces[g].plane.distance(p) > eps
                {
                    seen[g] = true;
                    stack.push(g);
                }
            }
        }
        visible.sort_unstable();
        // The horizon: edges of visible faces whose other face is not visible.
        let mut horizon = Vec::new();
        for &f in &visible {
            let v = faces[f].v;
            for k in 0..3 {
                let (from, to) = (v[k], v[(k + 1) % 3]);
                let other = edges.get(&(to, from)).copied();
                if other.is_none_or(|g| !seen[g]) {
                    horizon.push((from, to));
                }
            }
        }
        for &f in &visible {
            faces[f].alive = false;
            let v = faces[f].v;
            for k in 0..3 {
                let key = (v[k], v[(k + 1) % 3]);
                if edges.get(&key) == Some(&f) {
                    edges.remove(&key);
                }
            }
        }
        for (from, to) in horizon {
            // A sliver the tolerance let through has no plane: the point counts as inside
            // that edge (the surface stays closed through the neighbouring faces).
            let id = faces.len();
            let Some(plane) = Plane::from_triangle(points[from], points[to], p) else {
                continue;
            };
            for (x, y) in [(from, to), (to, i), (i, from)] {
                edges.insert((x, y), id);
            }
            faces.push(Face {
                v: [from, to, i],
                plane,
                alive: true,
            });
        }
    }
    let out: Vec<[usize; 3]> = faces.iter().filter(|f| f.alive).map(|f| f.v).collect();
    // Closed: every edge has its reverse (a sliver skipped above may have left a hole).
    let closed = out
        .iter()
        .all(|v| (0..3).all(|k| edges.contains_key(&(v[(k + 1) % 3], v[k]))));
    (closed && out.len() >= 4).then_some(out)
}

/// The convex hull of `points` as polygons of one `color`, corner normals smoothed across
/// faces less than 40° apart; empty when the points span no volume.
pub(crate) fn hull_polygons(points: &[DVec3], color: [f32; 4]) -> Vec<Polygon> {
    let Some(triangles) = hull_triangles(points) else {
        return Vec::new();
    };
    let planes: Vec<(Plane, f64)> = triangles
        .iter()
        .filter_map(|t| {
            let [a, b, c] = t.map(|i| points[i]);
            let area = (b - a).cross(c - a).length();
            Some((Plane::from_triangle(a, b, c)?, area))
        })
        .collect();
    if planes.len() != triangles.len() {
        return Vec::new();
    }
    // Faces around each point, in face order.
    let mut around: HashMap<usize, Vec<usize>> = HashMap::new();
    for (f, t) in triangles.iter().enumerate() {
        for &i in t {
            around.entry(i).or_default().push(f);
        }
    }
    let mut polygons = Vec::with_capacity(triangles.len());
    for (f, t) in triangles.iter().enumerate() {
        let plane = planes[f].0;
        let vertices = t
            .map(|i| {
                let mut sum = DVec3::ZERO;
                for &g in &around[&i] {
                    let (other, area) = planes[g];
                    if other.normal.dot(plane.normal) >= SMOOTH_COS {
                        sum += other.normal * area;
                    }
                }
                let normal = sum.normalize_or_zero();
                Vertex {
                    pos: points[i],
                    normal: if normal == DVec3::ZERO {
                        plane.normal
                    } else {
                        normal
                    },
                }
            })
            .to_vec();
        polygons.push(Polygon {
            vertices,
            plane,
            color,
        });
    }
    polygons
}
