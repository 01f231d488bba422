//! Convex polygons in f64 and the one operation the BSP trees are made of: splitting a
//! polygon by a plane.

use glam::DVec3;

/// How far (studs) a point may lie from a plane and still count as on it.
pub(crate) const EPSILON: f64 = 1e-5;

/// A corner of a polygon: where it is and the (unit) normal it is shaded with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Vertex {
    pub pos: DVec3,
    pub normal: DVec3,
}

/// The points `p` with `normal · p = w`; `normal` is unit length and points to the front
/// (outside of the surface the plane came from).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Plane {
    pub normal: DVec3,
    pub w: f64,
}

impl Plane {
    /// The plane through a triangle, facing the side it winds counter-clockwise on; None when
    /// the triangle has no usable area (or a coordinate is not finite).
    pub fn from_triangle(a: DVec3, b: DVec3, c: DVec3) -> Option<Plane> {
        let cross = (b - a).cross(c - a);
        let len = cross.length();
        let longest = (b - a)
            .length_squared()
            .max((c - b).length_squared())
            .max((a - c).length_squared());
        // Relative to the longest edge: a needle's normal is noise.
        if !(len.is_finite() && len > 0.0 && len > 1e-10 * longest) {
            return None;
        }
        let normal = cross / len;
        let w = normal.dot(a);
        w.is_finite().then_some(Plane { normal, w })
    }

    pub fn flipped(self) -> Plane {
        Plane {
            normal: -self.normal,
            w: -self.w,
        }
    }

    /// Signed distance of `p`: positive in front.
    pub fn distance(&self, p: DVec3) -> f64 {
        self.normal.dot(p) - self.w
    }
}

/// A planar convex polygon, counter-clockwise seen from the front of its plane, with one
/// color (RGBA 0–1).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Polygon {
    pub vertices: Vec<Vertex>,
    pub plane: Plane,
    pub color: [f32; 4],
}

impl Polygon {
    /// Turns the polygon inside out: reversed corners, negated plane and normals.
    pub fn flip(&mut self) {
        self.vertices.reverse();
        for v in &mut self.vertices {
            v.normal = -v.normal;
        }
        self.plane = self.plane.flipped();
    }

    /// The polygon's area.
    pub fn area(&self) -> f64 {
        let Some((first, rest)) = self.vertices.split_first() else {
            return 0.0;
        };
        let mut sum = glam::DVec3::ZERO;
        for w in rest.windows(2) {
            sum += (w[0].pos - first.pos).cross(w[1].pos - first.pos);
        }
        sum.length() / 2.0
    }

    /// The distance from `p` to the nearest point of the polygon.
    pub fn distance_to(&self, p: DVec3) -> f64 {
        let Some((first, rest)) = self.vertices.split_first() else {
            return f64::INFINITY;
        };
        rest.windows(2)
            .map(|w| (closest_on_triangle(p, first.pos, w[0].pos, w[1].pos) - p).length())
            .fold(f64::INFINITY, f64::min)
    }

    /// Six times the signed volume of the cone from the origin to the polygon (its share of
    /// the divergence theorem).
    pub fn volume6(&self) -> f64 {
        let Some(first) = self.vertices.first() else {
            return 0.0;
        };
        let p0 = first.pos;
        self.vertices
            .windows(2)
            .skip(1)
            .map(|w| p0.dot(w[0].pos.cross(w[1].pos)))
            .sum()
    }
}

/// The point of triangle `abc` nearest to `p` (by the triangle's Voronoi regions: a corner,
/// an edge, or the inside).
pub(crate) fn closest_on_triangle(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> DVec3 {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = va + vb + vc;
    if denom.abs() < f64::MIN_POSITIVE {
        return a;
    }
    a + ab * (vb / denom) + ac * (vc / denom)
}

/// Where a polygon lies relative to a plane.
pub(crate) enum Split {
    /// In the plane, facing the same way.
    CoplanarFront(Polygon),
    /// In the plane, facing the other way.
    CoplanarBack(Polygon),
    Front(Polygon),
    Back(Polygon),
    /// Across the plane: its front and back parts (None only for a part too thin to be a
    /// polygon, which cannot happen for a convex polygon but is never trusted).
    Spanning(Option<Polygon>, Option<Polygon>),
}

const COPLANAR: u8 = 0;
const FRONT: u8 = 1;
const BACK: u8 = 2;
const SPANNING: u8 = 3;

/// Classifies `polygon` against `plane`, cutting it in two when it spans the plane. The
/// cut points are interpolated from the edge's end points in a fixed order (the smaller
/// position first), so two polygons sharing the edge get the same bits.
pub(crate) fn split(plane: &Plane, polygon: Polygon) -> Split {
    let mut kinds = Vec::with_capacity(polygon.vertices.len());
    let mut all = COPLANAR;
    for v in &polygon.vertices {
        let t = plane.distance(v.pos);
        let kind = if t < -EPSILON {
            BACK
        } else if t > EPSILON {
            FRONT
        } else {
            COPLANAR
        };
        all |= kind;
        kinds.push(kind);
    }
    match all {
        COPLANAR => {
            if plane.normal.dot(polygon.plane.normal) > 0.0 {
                Split::CoplanarFront(polygon)
            } else {
                Split::CoplanarBack(polygon)
            }
        }
        FRONT => Split::Front(polygon),
        BACK => Split::Back(polygon),
        _ => {
            let n = polygon.vertices.len();
            let mut front = Vec::with_capacity(n + 1);
            let mut back = Vec::with_capacity(n + 1);
            for i in 0..n {
                let j = (i + 1) % n;
                let (ki, kj) = (kinds[i], kinds[j]);
                let vi = polygon.vertices[i];
                if ki != BACK {
                    front.push(vi);
                }
                if ki != FRONT {
                    back.push(vi);
                }
                if ki | kj == SPANNING {
                    let v = cut(plane, vi, polygon.vertices[j], polygon.plane.normal);
                    front.push(v);
                    back.push(v);
                }
            }
            let piece = |vertices: Vec<Vertex>| {
                (vertices.len() >= 3).then_some(Polygon {
                    vertices,
                    plane: polygon.plane,
                    color: polygon.color,
                })
            };
            Split::Spanning(piece(front), piece(back))
        }
    }
}

/// The point where edge `a`–`b` (one end strictly on each side) crosses `plane`, its normal
/// interpolated and renormalised (`fallback` when the two cancel out).
fn cut(plane: &Plane, a: Vertex, b: Vertex, fallback: DVec3) -> Vertex {
    let (a, b) = if less(b.pos, a.pos) { (b, a) } else { (a, b) };
    let d = b.pos - a.pos;
    let t = ((plane.w - plane.normal.dot(a.pos)) / plane.normal.dot(d)).clamp(0.0, 1.0);
    // NaN cannot get past the classification (the ends are more than EPSILON apart along
    // the normal), but a NaN `t` would survive `clamp`: fall back to the midpoint.
    let t = if t.is_nan() { 0.5 } else { t };
    let normal = (a.normal + (b.normal - a.normal) * t).normalize_or_zero();
    Vertex {
        pos: a.pos + d * t,
        normal: if normal == DVec3::ZERO {
            fallback
        } else {
            normal
        },
    }
}

/// A total order on positions (x, then y, then z).
fn less(p: DVec3, q: DVec3) -> bool {
    p.x.total_cmp(&q.x)
        .then(p.y.total_cmp(&q.y))
        .then(p.z.total_cmp(&q.z))
        .is_lt()
}
