//! The geometry behind Roblox's spatial queries over BaseParts (`WorldRoot:Raycast`,
//! `GetPartBoundsInBox`, `GetPartBoundsInRadius`, `GetPartsInPart`): a part's collision solid,
//! a segment cast against it, its world bounding box, and overlap tests.
//!
//! Owns: which solid a part is ([`part_shape`]: its class and `Shape`), that solid's shape in
//! the part's space (centred on the origin, extents `Size / 2`, as `crates/export/src/shapes.rs`
//! draws it), and the rules at the edges of a query, chosen where Roblox documents none:
//!
//! - **Starting inside.** A ray hits only a surface it enters. One whose origin is inside the
//!   solid misses it; one whose origin is on the surface (within [`TOLERANCE`] studs past the
//!   entry point, so rounding does not matter) and heading inwards hits it at `t = 0`, at the
//!   origin. Heading outwards (nearer the exit than the entry) it misses. The solid is closed:
//!   a ray grazing an edge or sliding along a face hits it.
//! - **Touching is not overlapping.** Solids overlap ([`overlaps`]), and a query box or sphere
//!   overlaps a bounding box ([`box_overlaps_aabb`], [`sphere_overlaps_aabb`]), only when they
//!   interpenetrate by more than [`TOLERANCE`] (1e-3 studs): their penetration depth, the
//!   shortest move that separates them, exceeds it. Stacked bricks sharing a face do not
//!   overlap; a thin plate sunk into a block does.
//! - **Degenerate parts.** Each axis of a part's Size is read as at least [`MIN_SIZE`] (Roblox's
//!   smallest part, 0.001 studs): a zero-thick part is a 0.001-stud plate that rays hit; a
//!   negative size counts by its magnitude, a non-finite one as [`MIN_SIZE`]. The CFrame's
//!   rotation is re-orthonormalised (X kept, Y made square to it; a degenerate one reads as
//!   no rotation); a part at a non-finite position is never hit and overlaps nothing.
//!
//! - **Sweeps.** A solid swept along a segment ([`sweep`], for `Spherecast`, `Blockcast` and
//!   `Shapecast`) hits a target at its first contact. A target it starts overlapping (by more
//!   than [`TOLERANCE`]) is not hit; one it starts touching is hit at `t = 0` only when the
//!   sweep carries it more than [`TOLERANCE`] into the target along their contact normal, so
//!   a part resting on another and slid along it, or lifted off, hits nothing.
//!
//! Rays and overlaps compute in f64 about a local origin, so parts far from the world's origin
//! keep their precision; the API is f32 like the rest of the crate.
//!
//! Must never: walk the DOM tree or filter instances (which parts a query considers is the
//! caller's business: this module reads one instance at a time), run Luau, or allocate per ray.

use crate::classes::{db_default, is_a};
use crate::keys::KEYS;
use glam::{Affine3A, DMat3, DVec2, DVec3, Mat3A, Vec3};
use rbx_dom_weak::Instance;
use rbx_types::Variant;

/// How far (studs) two solids must interpenetrate to overlap, and how far past a surface a
/// ray's origin may be and still count as on it (see the module doc).
pub const TOLERANCE: f32 = 1e-3;

/// Roblox's smallest part size along an axis (studs); thinner parts read as this thick.
pub const MIN_SIZE: f32 = 1e-3;

/// A part's collision solid, in its own space: centred on the origin, extents `Size / 2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PartShape {
    /// The box filling `Size`.
    Block,
    /// A sphere of diameter `min(Size.X, Size.Y, Size.Z)`.
    Ball,
    /// Axis along X, length `Size.X`, diameter `min(Size.Y, Size.Z)`.
    Cylinder,
    /// The box cut by the slope from the top-back edge (+Y, +Z) to the bottom-front edge
    /// (−Y, −Z): `y / Size.Y ≤ z / Size.Z`; the slope faces up and towards −Z.
    Wedge,
    /// The hull of the four bottom corners and the apex `(+X/2, +Y/2, −Z/2)`.
    CornerWedge,
}

/// A part's collision shape from its class and `Shape` property: WedgePart → Wedge,
/// CornerWedgePart → CornerWedge; Part and its subclasses (Seat, SpawnLocation, ...) → its
/// `Shape` (`Enum.PartType`: Ball 0, Block 1, Cylinder 2, Wedge 3, CornerWedge 4; missing →
/// the class default, Block; an unknown value → Block); every other class (MeshPart,
/// UnionOperation, TrussPart, ...) → Block, its bounding box.
pub fn part_shape(inst: &Instance) -> PartShape {
    let class = inst.class.as_str();
    match class {
        "WedgePart" => PartShape::Wedge,
        "CornerWedgePart" => PartShape::CornerWedge,
        _ if is_a(class, "Part") => {
            let value = inst
                .properties
                .get(&KEYS.shape)
                .or_else(|| db_default(class, "Shape"));
            match value {
                Some(Variant::Enum(e)) => part_type(e.to_u32()),
                Some(Variant::EnumItem(item)) => part_type(item.value),
                _ => PartShape::Block,
            }
        }
        _ => PartShape::Block,
    }
}

fn part_type(value: u32) -> PartShape {
    match value {
        0 => PartShape::Ball,
        2 => PartShape::Cylinder,
        3 => PartShape::Wedge,
        4 => PartShape::CornerWedge,
        _ => PartShape::Block,
    }
}

/// A part's solid placed in the world.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Body {
    pub shape: PartShape,
    /// Where the solid's centre is and how it is turned (rigid).
    pub cframe: Affine3A,
    /// Full extents (studs) along the part's axes.
    pub size: Vec3,
}

/// The solid of a part: [`part_shape`], its `CFrame` and `Size`, made valid by [`Body::new`];
/// for a part carrying a procmodel mesh, the box of the triangles it draws
/// ([`crate::drawn::drawn_box`]).
pub fn body(inst: &Instance) -> Body {
    let (cframe, size) = crate::drawn::drawn_box(inst);
    Body::new(part_shape(inst), cframe, size)
}

/// Where a ray enters a solid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RayHit {
    /// The fraction of the ray's direction travelled, in `0..=1`.
    pub t: f32,
    /// The world point entered.
    pub position: Vec3,
    /// The outward surface normal there, in world space, unit length.
    pub normal: Vec3,
}

impl Body {
    /// A body with each size axis at least [`MIN_SIZE`] (magnitude of a negative one,
    /// [`MIN_SIZE`] for a non-finite one) and an orthonormal rotation (see the module doc).
    pub fn new(shape: PartShape, cframe: Affine3A, size: Vec3) -> Body {
        Body {
            shape,
            cframe: Affine3A {
                matrix3: Mat3A::from(rotation(cframe.matrix3).as_mat3()),
                translation: cframe.translation,
            },
            size: valid_size(size),
        }
    }

    /// The first point where the segment `origin..origin + dir` enters the solid. A segment
    /// starting inside misses it; one starting on the surface and heading inwards hits it at
    /// `t = 0` (the module doc has the rule). A zero or non-finite `dir` hits nothing.
    pub fn raycast(&self, origin: Vec3, dir: Vec3) -> Option<RayHit> {
        if !origin.is_finite() || !dir.is_finite() || dir == Vec3::ZERO {
            return None;
        }
        let o = origin.as_dvec3();
        let d = dir.as_dvec3();
        let solid = Solid::new(self, o)?;
        let to_local = solid.rot.transpose();
        let c = solid.chord(to_local * -solid.pos, to_local * d)?;
        if c.t0 > 1.0 {
            return None;
        }
        let t = if c.t0 >= 0.0 {
            c.t0
        } else if -c.t0 < c.t1 && -c.t0 * d.length() <= f64::from(TOLERANCE) {
            // On the surface (to within rounding) and heading in.
            0.0
        } else {
            return None;
        };
        let normal = (solid.rot * c.n0).try_normalize()?;
        Some(RayHit {
            t: t as f32,
            position: (o + d * t).as_vec3(),
            normal: normal.as_vec3(),
        })
    }

    /// The world axis-aligned bounding box `(min, max)` of the part's box (`Size` under
    /// `CFrame`), whatever its shape: what "bounds" means in `GetPartBoundsInBox`/`InRadius`.
    pub fn aabb(&self) -> (Vec3, Vec3) {
        let origin = Vec3::from(self.cframe.translation).as_dvec3();
        let s = Solid::at(self, origin);
        let ext = s.rot.abs() * s.half;
        ((origin - ext).as_vec3(), (origin + ext).as_vec3())
    }

    /// The solid's volume (cubic studs): a box, a sphere of diameter `min(Size)`, a cylinder
    /// of diameter `min(Size.Y, Size.Z)` and length `Size.X`, half a box for a wedge, a third
    /// of one for a corner wedge (a pyramid on the bottom face).
    pub fn volume(&self) -> f32 {
        let s = self.size;
        let boxed = s.x * s.y * s.z;
        match self.shape {
            PartShape::Block => boxed,
            PartShape::Ball => {
                let r = s.min_element() * 0.5;
                4.0 / 3.0 * std::f32::consts::PI * r * r * r
            }
            PartShape::Cylinder => {
                let r = s.y.min(s.z) * 0.5;
                std::f32::consts::PI * r * r * s.x
            }
            PartShape::Wedge => boxed * 0.5,
            PartShape::CornerWedge => boxed / 3.0,
        }
    }

    /// A ball of radius `radius` (its magnitude; at least [`MIN_SIZE`] / 2) centred on
    /// `center`: the moving solid of `WorldRoot:Spherecast`.
    pub fn sphere(center: Vec3, radius: f32) -> Body {
        Body::new(
            PartShape::Ball,
            Affine3A::from_translation(center),
            Vec3::splat(2.0 * radius),
        )
    }

    /// The point of the solid nearest to `p` (world space): `p` itself when it is inside (or
    /// not finite), else the nearest point of the surface — `BasePart:GetClosestPointOnSurface`.
    pub fn closest_point(&self, p: Vec3) -> Vec3 {
        if !p.is_finite() {
            return p;
        }
        let origin = Vec3::from(self.cframe.translation).as_dvec3();
        let s = Solid::at(self, origin);
        let local = s.rot.transpose() * (p.as_dvec3() - origin);
        let h = s.half;
        let q = match s.shape {
            PartShape::Block => local.clamp(-h, h),
            PartShape::Ball => {
                let r = h.min_element();
                let len = local.length();
                if len <= r { local } else { local * (r / len) }
            }
            PartShape::Cylinder => {
                let r = h.y.min(h.z);
                let radial = DVec2::new(local.y, local.z);
                let len = radial.length();
                let radial = if len <= r { radial } else { radial * (r / len) };
                DVec3::new(local.x.clamp(-h.x, h.x), radial.x, radial.y)
            }
            PartShape::Wedge | PartShape::CornerWedge => {
                closest_on_polyhedron(local, &planes(s.shape, h), &vertices(s.shape, h))
            }
        };
        if q == local {
            return p;
        }
        (origin + s.rot * q).as_vec3()
    }

    /// The solid's farthest point along `d`, in world space (some point of the solid when `d`
    /// is zero).
    pub fn support(&self, d: Vec3) -> Vec3 {
        let origin = Vec3::from(self.cframe.translation).as_dvec3();
        (origin + Solid::at(self, origin).support(d.as_dvec3())).as_vec3()
    }
}

/// Whether two solids share volume: their penetration depth (the shortest move that separates
/// them) exceeds [`TOLERANCE`]. Exact up to rounding for these convex solids (GJK, then EPA
/// on the support functions). Solids that only touch, like stacked bricks sharing a face, do
/// not overlap.
/// Symmetric: `overlaps(a, b) == overlaps(b, a)`, bit for bit.
pub fn overlaps(a: &Body, b: &Body) -> bool {
    overlaps_by(a, b, TOLERANCE)
}

/// [`overlaps`] with another depth to exceed (`ArePartsTouchingOthers`' `overlapIgnored`);
/// a negative or non-finite `tolerance` counts as 0.
pub fn overlaps_by(a: &Body, b: &Body, tolerance: f32) -> bool {
    // One order for either call, so rounding cannot make the answer depend on it.
    let (a, b) = if order_key(a) <= order_key(b) {
        (a, b)
    } else {
        (b, a)
    };
    let origin = Vec3::from(a.cframe.translation).as_dvec3();
    let (Some(sa), Some(sb)) = (Solid::new(a, origin), Solid::new(b, origin)) else {
        return false;
    };
    let tol = if tolerance.is_finite() {
        f64::from(tolerance.max(0.0))
    } else {
        0.0
    };
    // The boxes bound the solids: along each world axis, how far their extents overlap bounds
    // the depth from above.
    let (ea, eb) = (sa.rot.abs() * sa.half, sb.rot.abs() * sb.half);
    let bound = ((sa.pos + ea) - (sb.pos - eb))
        .min((sb.pos + eb) - (sa.pos - ea))
        .min_element();
    if bound <= tol {
        return false;
    }
    penetrates(&sa, &sb, tol)
}

/// Whether an oriented query box (centre CFrame, full `size`) overlaps the box `min..max` by
/// more than [`TOLERANCE`] (separating axis test on the 15 axes of two boxes). A zero `size`
/// is a point, which must be that far inside.
pub fn box_overlaps_aabb(cframe: &Affine3A, size: Vec3, min: Vec3, max: Vec3) -> bool {
    box_aabb_depth(cframe, size, min, max) > f64::from(TOLERANCE)
}

/// Whether a query sphere overlaps the box `min..max` by more than [`TOLERANCE`] (a zero
/// radius is a point, which must be that far inside).
pub fn sphere_overlaps_aabb(center: Vec3, radius: f32, min: Vec3, max: Vec3) -> bool {
    sphere_aabb_depth(center, radius, min, max) > f64::from(TOLERANCE)
}

/// Penetration depth of an oriented box and an axis-aligned one (negative: apart).
fn box_aabb_depth(cframe: &Affine3A, size: Vec3, min: Vec3, max: Vec3) -> f64 {
    if !(cframe.is_finite() && size.is_finite() && min.cmple(max).all()) {
        return f64::NEG_INFINITY;
    }
    let (lo, hi) = (min.as_dvec3(), max.as_dvec3());
    let hb = (hi - lo) * 0.5;
    let t = Vec3::from(cframe.translation).as_dvec3() - (lo + hi) * 0.5;
    let rot = rotation(cframe.matrix3);
    let ha = size.abs().as_dvec3() * 0.5;
    let axes_a = [rot.x_axis, rot.y_axis, rot.z_axis];
    let mut depth = f64::INFINITY;
    let mut test = |axis: DVec3| {
        let len2 = axis.length_squared();
        // A cross product of (nearly) parallel edges: the face axes already cover it.
        if len2 < 1e-12 {
            return;
        }
        let u = axis / len2.sqrt();
        let ra = rot.transpose().mul_vec3(u).abs().dot(ha);
        let rb = u.abs().dot(hb);
        depth = depth.min(ra + rb - t.dot(u).abs());
    };
    for e in [DVec3::X, DVec3::Y, DVec3::Z] {
        test(e);
    }
    for a in axes_a {
        test(a);
    }
    for a in axes_a {
        for e in [DVec3::X, DVec3::Y, DVec3::Z] {
            test(a.cross(e));
        }
    }
    depth
}

/// Penetration depth of a sphere and an axis-aligned box (negative: apart).
fn sphere_aabb_depth(center: Vec3, radius: f32, min: Vec3, max: Vec3) -> f64 {
    if !(center.is_finite() && radius.is_finite() && radius >= 0.0 && min.cmple(max).all()) {
        return f64::NEG_INFINITY;
    }
    let (c, lo, hi, r) = (
        center.as_dvec3(),
        min.as_dvec3(),
        max.as_dvec3(),
        f64::from(radius),
    );
    if c.cmpge(lo).all() && c.cmple(hi).all() {
        // The centre inside: the box must move past the nearest face, then the radius.
        r + (c - lo).min(hi - c).min_element()
    } else {
        r - (c - c.max(lo).min(hi)).length()
    }
}

/// `Size` as the module doc says it reads.
fn valid_size(size: Vec3) -> Vec3 {
    Vec3::from_array(size.to_array().map(|s| {
        if s.is_finite() {
            s.abs().max(MIN_SIZE)
        } else {
            MIN_SIZE
        }
    }))
}

/// The rotation of a CFrame matrix, orthonormal (X kept, Y squared to it); identity when
/// degenerate or not finite.
fn rotation(m: Mat3A) -> DMat3 {
    let x = Vec3::from(m.x_axis).as_dvec3().normalize_or_zero();
    let z = x.cross(Vec3::from(m.y_axis).as_dvec3()).normalize_or_zero();
    if x == DVec3::ZERO || z == DVec3::ZERO {
        return DMat3::IDENTITY;
    }
    DMat3::from_cols(x, z.cross(x), z)
}

/// A total order on bodies (by their bits), to run [`overlaps`] the same way either way round.
fn order_key(b: &Body) -> (PartShape, [u32; 15]) {
    let (s, t, m) = (b.size, b.cframe.translation, b.cframe.matrix3);
    let f = [
        s.x, s.y, s.z, t.x, t.y, t.z, m.x_axis.x, m.x_axis.y, m.x_axis.z, m.y_axis.x, m.y_axis.y,
        m.y_axis.z, m.z_axis.x, m.z_axis.y, m.z_axis.z,
    ];
    (b.shape, f.map(f32::to_bits))
}

/// A body in f64, positioned relative to a chosen origin.
struct Solid {
    shape: PartShape,
    rot: DMat3,
    pos: DVec3,
    half: DVec3,
}

/// A plane of a polyhedron: the solid is `n · x ≤ d` (unit `n`).
#[derive(Clone, Copy)]
struct Plane {
    n: DVec3,
    d: f64,
}

/// Where a line (`o + t·d`) is inside a solid: `t0..=t1`, entering through a surface whose
/// outward normal (local) is `n0`.
struct Chord {
    t0: f64,
    t1: f64,
    n0: DVec3,
}

impl Solid {
    /// `None` when the body's position is not finite.
    fn new(body: &Body, origin: DVec3) -> Option<Solid> {
        body.cframe
            .translation
            .is_finite()
            .then(|| Solid::at(body, origin))
    }

    fn at(body: &Body, origin: DVec3) -> Solid {
        Solid {
            shape: body.shape,
            rot: rotation(body.cframe.matrix3),
            pos: Vec3::from(body.cframe.translation).as_dvec3() - origin,
            half: valid_size(body.size).as_dvec3() * 0.5,
        }
    }

    /// The farthest point along `d` (relative to the origin the solid was placed about).
    fn support(&self, d: DVec3) -> DVec3 {
        self.pos + self.rot * self.local_support(self.rot.transpose() * d)
    }

    fn local_support(&self, d: DVec3) -> DVec3 {
        let h = self.half;
        let side = |d: f64, h: f64| if d < 0.0 { -h } else { h };
        match self.shape {
            PartShape::Block => DVec3::new(side(d.x, h.x), side(d.y, h.y), side(d.z, h.z)),
            PartShape::Ball => d.normalize_or_zero() * h.min_element(),
            PartShape::Cylinder => {
                let yz = DVec2::new(d.y, d.z).normalize_or_zero() * h.y.min(h.z);
                DVec3::new(side(d.x, h.x), yz.x, yz.y)
            }
            PartShape::Wedge | PartShape::CornerWedge => {
                let vs = vertices(self.shape, h);
                let mut best = vs[0];
                for v in &vs[1..] {
                    if v.dot(d) > best.dot(d) {
                        best = *v;
                    }
                }
                best
            }
        }
    }

    /// The chord of the line `o + t·d` (local space, `d` not zero) through the solid.
    fn chord(&self, o: DVec3, d: DVec3) -> Option<Chord> {
        let h = self.half;
        match self.shape {
            PartShape::Block | PartShape::Wedge | PartShape::CornerWedge => {
                clip(&planes(self.shape, h), o, d).filter(|c| c.t0.is_finite())
            }
            PartShape::Ball => {
                let (t0, t1) = round_chord(o.to_array(), d.to_array(), h.min_element())?;
                let n0 = (o + d * t0).try_normalize()?;
                Some(Chord { t0, t1, n0 })
            }
            PartShape::Cylinder => {
                let ends = [
                    Plane {
                        n: DVec3::X,
                        d: h.x,
                    },
                    Plane {
                        n: DVec3::NEG_X,
                        d: h.x,
                    },
                ];
                let along = clip(&ends, o, d)?;
                let (r0, r1) = round_chord([o.y, o.z], [d.y, d.z], h.y.min(h.z))?;
                let c = if r0 > along.t0 {
                    let at = o + d * r0;
                    Chord {
                        t0: r0,
                        t1: along.t1.min(r1),
                        n0: DVec3::new(0.0, at.y, at.z).try_normalize()?,
                    }
                } else {
                    Chord {
                        t1: along.t1.min(r1),
                        ..along
                    }
                };
                (c.t0.is_finite() && c.t0 <= c.t1).then_some(c)
            }
        }
    }
}

/// The chord of the line `o + t·d` through the ball of radius `r` about the origin (in 2 or 3
/// dimensions); unbounded when `d` is zero and `o` inside.
fn round_chord<const N: usize>(o: [f64; N], d: [f64; N], r: f64) -> Option<(f64, f64)> {
    let dot = |a: &[f64; N], b: &[f64; N]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let dd = dot(&d, &d);
    if dd == 0.0 {
        return (dot(&o, &o) <= r * r).then_some((f64::NEG_INFINITY, f64::INFINITY));
    }
    // From the closest approach, which keeps its precision far from the ball.
    let tc = -dot(&o, &d) / dd;
    let mut q = o;
    for (q, d) in q.iter_mut().zip(d) {
        *q += tc * d;
    }
    let h2 = r * r - dot(&q, &q);
    if h2 < 0.0 {
        return None;
    }
    let half = (h2 / dd).sqrt();
    Some((tc - half, tc + half))
}

/// Cyrus–Beck: the chord of `o + t·d` through the intersection of half-spaces (unbounded
/// when no plane bounds it on a side).
fn clip(planes: &[Plane], o: DVec3, d: DVec3) -> Option<Chord> {
    let (mut t0, mut t1, mut n0) = (f64::NEG_INFINITY, f64::INFINITY, DVec3::ZERO);
    for p in planes {
        let num = p.d - p.n.dot(o);
        let den = p.n.dot(d);
        if den == 0.0 {
            if num < 0.0 {
                return None;
            }
            continue;
        }
        let t = num / den;
        if den < 0.0 {
            if t > t0 {
                t0 = t;
                n0 = p.n;
            }
        } else if t < t1 {
            t1 = t;
        }
    }
    (t0 <= t1).then_some(Chord { t0, t1, n0 })
}

/// The faces of a polyhedral shape as half-spaces (a Wedge's and a CornerWedge's five, the
/// last repeated).
fn planes(shape: PartShape, h: DVec3) -> [Plane; 6] {
    let plane = |n: DVec3, d: f64| Plane { n, d };
    let (px, nx) = (plane(DVec3::X, h.x), plane(DVec3::NEG_X, h.x));
    let (py, ny) = (plane(DVec3::Y, h.y), plane(DVec3::NEG_Y, h.y));
    let (pz, nz) = (plane(DVec3::Z, h.z), plane(DVec3::NEG_Z, h.z));
    match shape {
        PartShape::Wedge => {
            // y·Size.Z − z·Size.Y ≤ 0: through the top-back and bottom-front edges.
            let slope = plane(DVec3::new(0.0, h.z, -h.y).normalize(), 0.0);
            [ny, pz, px, nx, slope, slope]
        }
        PartShape::CornerWedge => {
            // Through the back bottom edge and the apex, facing up and back.
            let back = plane(DVec3::new(0.0, h.z, h.y).normalize(), 0.0);
            // Through the left bottom edge and the apex, facing up and left.
            let left = plane(DVec3::new(-h.y, h.x, 0.0).normalize(), 0.0);
            [ny, px, nz, back, left, left]
        }
        PartShape::Block | PartShape::Ball | PartShape::Cylinder => [px, nx, py, ny, pz, nz],
    }
}

/// The corners of a Wedge (six) or a CornerWedge (five, the apex repeated).
fn vertices(shape: PartShape, h: DVec3) -> [DVec3; 6] {
    let v = DVec3::new;
    let bottom = [
        v(-h.x, -h.y, -h.z),
        v(h.x, -h.y, -h.z),
        v(h.x, -h.y, h.z),
        v(-h.x, -h.y, h.z),
    ];
    let [b0, b1, b2, b3] = bottom;
    match shape {
        PartShape::CornerWedge => {
            let apex = v(h.x, h.y, -h.z);
            [b0, b1, b2, b3, apex, apex]
        }
        _ => [b0, b1, b2, b3, v(h.x, h.y, h.z), v(-h.x, h.y, h.z)],
    }
}

/// The point of the convex polyhedron `planes` (with corners `corners`; repeats allowed)
/// nearest to `p`: `p` when inside, else the nearest of the projections onto each face that
/// land in the solid, the nearest points of its edges (two corners sharing two planes) and
/// its corners — one of which is the answer for a convex solid.
fn closest_on_polyhedron(p: DVec3, planes: &[Plane], corners: &[DVec3]) -> DVec3 {
    const EPS: f64 = 1e-9;
    let mut unique: Vec<Plane> = Vec::with_capacity(planes.len());
    for pl in planes {
        if !unique.iter().any(|u| u.n == pl.n && u.d == pl.d) {
            unique.push(*pl);
        }
    }
    let planes = unique.as_slice();
    let inside = |q: DVec3, slack: f64| planes.iter().all(|pl| pl.n.dot(q) <= pl.d + slack);
    let scale = corners
        .iter()
        .fold(1.0f64, |m, c| m.max(c.abs().max_element()));
    if inside(p, 0.0) {
        return p;
    }
    let mut best = corners[0];
    let mut best_d = f64::INFINITY;
    let mut consider = |q: DVec3| {
        let d = q.distance_squared(p);
        if d < best_d {
            best_d = d;
            best = q;
        }
    };
    for pl in planes {
        let q = p - pl.n * (pl.n.dot(p) - pl.d);
        if inside(q, EPS * scale) {
            consider(q);
        }
    }
    let on = |c: DVec3, pl: &Plane| (pl.n.dot(c) - pl.d).abs() <= EPS * scale;
    for (i, &a) in corners.iter().enumerate() {
        consider(a);
        for &b in &corners[i + 1..] {
            if a == b {
                continue;
            }
            let shared = planes.iter().filter(|pl| on(a, pl) && on(b, pl)).count();
            if shared >= 2 {
                let ab = b - a;
                let t = ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
                consider(a + ab * t);
            }
        }
    }
    best
}

const GJK_ITERATIONS: usize = 64;
const EPA_ITERATIONS: usize = 128;

/// Whether the penetration depth of `a` and `b` exceeds `tol`. The depth is the least
/// support value of the Minkowski difference `a − b` over unit directions (negative when
/// apart), so any direction whose support is at most `tol` answers no; GJK looks for a
/// tetrahedron of `a − b` around the origin, EPA then bounds the depth from both sides.
fn penetrates(a: &Solid, b: &Solid, tol: f64) -> bool {
    let support = |u: DVec3| a.support(u) - b.support(-u);
    let mut simplex = [DVec3::ZERO; 4];
    let mut len = 0;
    let mut dir = a.pos - b.pos;
    for _ in 0..GJK_ITERATIONS {
        let u = dir.try_normalize().unwrap_or(DVec3::X);
        let p = support(u);
        if p.dot(u) <= tol {
            return false;
        }
        // Every point is more than `tol` beyond the simplex it joins, so no simplex is flat.
        simplex[len] = p;
        len += 1;
        let (keep, closest) = closest_feature(&simplex[..len]);
        let mut kept = 0;
        for i in 0..len {
            if keep & (1 << i) != 0 {
                simplex[kept] = simplex[i];
                kept += 1;
            }
        }
        len = kept;
        if len == 4 {
            return epa(simplex, &support, tol);
        }
        dir = if closest.length() > feature_eps(&simplex[..len]) {
            -closest
        } else {
            // The origin lies on the simplex: leave its affine hull.
            normal_of(&simplex[..len])
        };
    }
    false
}

fn feature_eps(pts: &[DVec3]) -> f64 {
    1e-9 * (1.0 + pts.iter().fold(0.0, |m: f64, p| m.max(p.length())))
}

/// A direction out of the affine hull of a segment or triangle.
fn normal_of(pts: &[DVec3]) -> DVec3 {
    match pts {
        [a, b] => (*b - *a)
            .try_normalize()
            .map_or(DVec3::X, |e| e.any_orthonormal_vector()),
        [a, b, c] => (*b - *a).cross(*c - *a),
        _ => DVec3::X,
    }
}

/// The smallest face of the simplex `pts` (a bit mask) holding its point closest to the
/// origin, and that point. At equal distance the larger face wins, so a simplex the origin
/// lies on is kept whole (the search then leaves its hull instead of going round in circles).
fn closest_feature(pts: &[DVec3]) -> (u8, DVec3) {
    let n = pts.len();
    let eps = feature_eps(pts);
    let mut best = (0u8, DVec3::ZERO, f64::INFINITY);
    for size in (1..=n).rev() {
        for mask in 1..(1u8 << n) {
            if mask.count_ones() as usize != size {
                continue;
            }
            if let Some(q) = affine_closest(pts, mask) {
                let dist = q.length();
                if dist < best.2 - eps {
                    best = (mask, q, dist);
                }
            }
        }
    }
    if best.0 == 0 {
        return (1 << (n - 1), pts[n - 1]);
    }
    (best.0, best.1)
}

/// The point of the face `mask` of `pts` closest to the origin, when it lies inside the face
/// (not on a smaller face's side) and the face is not degenerate.
fn affine_closest(pts: &[DVec3], mask: u8) -> Option<DVec3> {
    let mut s = [DVec3::ZERO; 4];
    let mut k = 0;
    for (i, p) in pts.iter().enumerate() {
        if mask & (1 << i) != 0 {
            s[k] = *p;
            k += 1;
        }
    }
    let o = s[0];
    let (e1, e2, e3) = (s[1] - o, s[2] - o, s[3] - o);
    // Barycentric weights of s[1..k] (s[0] takes the rest).
    let l: [f64; 3] = match k {
        1 => return Some(o),
        2 => {
            let g = e1.dot(e1);
            if g <= 0.0 {
                return None;
            }
            [-e1.dot(o) / g, 0.0, 0.0]
        }
        3 => {
            let (g11, g12, g22) = (e1.dot(e1), e1.dot(e2), e2.dot(e2));
            let det = g11 * g22 - g12 * g12;
            if det <= 1e-12 * g11 * g22 {
                return None;
            }
            let (b1, b2) = (-e1.dot(o), -e2.dot(o));
            [
                (b1 * g22 - b2 * g12) / det,
                (g11 * b2 - g12 * b1) / det,
                0.0,
            ]
        }
        _ => {
            let m = DMat3::from_cols(e1, e2, e3);
            let det = m.determinant();
            if det.abs() <= 1e-12 * e1.length() * e2.length() * e3.length() {
                return None;
            }
            (m.inverse() * -o).to_array()
        }
    };
    let bary_eps = -1e-9;
    let l0 = 1.0 - l[0] - l[1] - l[2];
    if l0 < bary_eps || l[..k - 1].iter().any(|&w| w < bary_eps) {
        return None;
    }
    Some(o + e1 * l[0] + e2 * l[1] + e3 * l[2])
}

/// A face of the EPA polytope, wound counter-clockwise from outside.
struct Face {
    v: [usize; 3],
    /// Outward unit normal; zero for a sliver.
    n: DVec3,
    /// Distance of the face's plane from the origin; infinite for a sliver.
    dist: f64,
}

fn face(verts: &[DVec3], v: [usize; 3]) -> Face {
    let [a, b, c] = v.map(|i| verts[i]);
    match (b - a).cross(c - a).try_normalize() {
        Some(n) => Face {
            v,
            n,
            dist: n.dot(a),
        },
        None => Face {
            v,
            n: DVec3::ZERO,
            dist: f64::INFINITY,
        },
    }
}

/// Expanding polytope: the polytope (inside `a − b`, around the origin) puts its nearest
/// face's distance below the depth; the support along that face's normal puts one above.
fn epa(tetra: [DVec3; 4], support: &impl Fn(DVec3) -> DVec3, tol: f64) -> bool {
    let mut verts = tetra.to_vec();
    let mut faces = Vec::with_capacity(32);
    for [i, j, k, opposite] in [[0, 1, 2, 3], [0, 1, 3, 2], [0, 2, 3, 1], [1, 2, 3, 0]] {
        let [a, b, c, o] = [i, j, k, opposite].map(|x| tetra[x]);
        let inward = (b - a).cross(c - a).dot(o - a) > 0.0;
        faces.push(face(&verts, if inward { [i, k, j] } else { [i, j, k] }));
    }
    let scale = tetra.iter().fold(0.0, |m: f64, p| m.max(p.length()));
    let eps = 1e-10 * (1.0 + scale);
    let (mut lower, mut upper) = (f64::NEG_INFINITY, f64::INFINITY);
    for _ in 0..EPA_ITERATIONS {
        let mut nearest = None;
        let mut nearest_dist = f64::INFINITY;
        for (i, f) in faces.iter().enumerate() {
            if f.dist < nearest_dist {
                nearest = Some(i);
                nearest_dist = f.dist;
            }
        }
        let Some(nearest) = nearest else {
            return false;
        };
        let n = faces[nearest].n;
        lower = lower.max(nearest_dist);
        if lower > tol {
            return true;
        }
        let w = support(n);
        let h = w.dot(n);
        upper = upper.min(h);
        if upper <= tol {
            return false;
        }
        if h - nearest_dist <= eps {
            // The depth is the nearest face's distance, at most `tol`.
            return false;
        }
        expand(&mut verts, &mut faces, w, nearest, eps);
    }
    (lower + upper) * 0.5 > tol
}

/// Adds `w` to the polytope: drops the faces it sees (`seed` among them) and joins the
/// horizon to it.
fn expand(verts: &mut Vec<DVec3>, faces: &mut Vec<Face>, w: DVec3, seed: usize, eps: f64) {
    let visible: Vec<bool> = faces
        .iter()
        .enumerate()
        .map(|(i, f)| i == seed || f.n.dot(w - verts[f.v[0]]) > eps)
        .collect();
    let has_edge =
        |f: &Face, a: usize, b: usize| (0..3).any(|k| f.v[k] == a && f.v[(k + 1) % 3] == b);
    let mut horizon = Vec::new();
    for (i, f) in faces.iter().enumerate() {
        if !visible[i] {
            continue;
        }
        for e in 0..3 {
            let (a, b) = (f.v[e], f.v[(e + 1) % 3]);
            let inner = faces
                .iter()
                .enumerate()
                .any(|(j, g)| j != i && visible[j] && has_edge(g, b, a));
            if !inner {
                horizon.push((a, b));
            }
        }
    }
    let wi = verts.len();
    verts.push(w);
    let mut i = 0;
    faces.retain(|_| {
        i += 1;
        !visible[i - 1]
    });
    for (a, b) in horizon {
        faces.push(face(verts, [a, b, wi]));
    }
}

const SWEEP_ITERATIONS: usize = 96;

/// The first contact of `moving`, translated along `dir` (from `t = 0` to `t = 1`), with
/// `target`: the geometry of `WorldRoot:Spherecast`, `Blockcast` and `Shapecast`.
///
/// Returns `t` (the fraction of `dir` travelled; the distance is `t · |dir|`), the contact
/// point in world space (on the target's surface, where the moved solid touches it; one of the
/// touching points when they meet along an edge or a face) and the unit contact normal: the
/// target's outward surface normal there, facing against the motion (`normal · dir <= 0`).
/// The rules at the edges (see the module doc): a target the moving solid already overlaps at
/// `t = 0` by more than [`TOLERANCE`] is not hit; one it starts touching (overlapping by at
/// most [`TOLERANCE`]) is hit at `t = 0` only when `dir` carries it more than [`TOLERANCE`]
/// into the target along their contact normal, so resting on it and sliding along it, or moving
/// away, is no hit. A zero or non-finite `dir`, or a body at a non-finite position, hits
/// nothing.
///
/// GJK ray cast (van den Bergen 2004) of the segment `0..dir` against the Minkowski difference
/// `target − moving`, from the two solids' support functions, in f64 about the moving body's
/// position: exact for these convex solids to about 1e-9 studs; deterministic; no allocation
/// unless the solids start in contact (that case runs EPA for the contact normal). Should the
/// cast fail to converge within its iteration cap (it converges in a few dozen steps at most
/// for these solids), it reports no hit.
pub fn sweep(moving: &Body, dir: Vec3, target: &Body) -> Option<RayHit> {
    if !dir.is_finite() || dir == Vec3::ZERO {
        return None;
    }
    let origin = Vec3::from(moving.cframe.translation).as_dvec3();
    let (Some(sa), Some(sb)) = (Solid::new(moving, origin), Solid::new(target, origin)) else {
        return None;
    };
    let d = dir.as_dvec3();
    let (t, normal, point) = match cast(&sa, &sb, d)? {
        Cast::Hit { t, normal, point } => (t, normal, point),
        Cast::Inside => {
            if overlaps_by(moving, target, TOLERANCE) {
                return None;
            }
            let (normal, point) = resting_contact(&sa, &sb)?;
            if -normal.dot(d) <= f64::from(TOLERANCE) {
                // Sliding along the target or leaving it: touching all the way, no hit.
                return None;
            }
            (0.0, normal, point)
        }
    };
    Some(RayHit {
        t: t.clamp(0.0, 1.0) as f32,
        position: (origin + point).as_vec3(),
        normal: normal.as_vec3(),
    })
}

/// What the GJK ray cast found.
enum Cast {
    /// The segment's first point in `target − moving`: its parameter, the outward unit normal
    /// there and the target's touching point (relative to the moving body's position).
    Hit { t: f64, normal: DVec3, point: DVec3 },
    /// The segment starts in `target − moving` (the solids touch or overlap at `t = 0`).
    Inside,
}

/// A support point of `b − a` (the translations of `a` that bring it onto `b`), with the point
/// of `b` it came from.
#[derive(Clone, Copy, Default)]
struct Vertex {
    p: DVec3,
    b: DVec3,
}

fn difference_support(a: &Solid, b: &Solid, u: DVec3) -> Vertex {
    let tb = b.support(u);
    Vertex {
        p: tb - a.support(-u),
        b: tb,
    }
}

/// GJK ray cast of the segment `λ·r`, `λ ∈ 0..=1`, against `b − a`. `None`: a miss (or no
/// convergence within [`SWEEP_ITERATIONS`]).
fn cast(a: &Solid, b: &Solid, r: DVec3) -> Option<Cast> {
    let scale = a.pos.length() + a.half.length() + b.pos.length() + b.half.length() + r.length();
    let eps = 1e-9 * (1.0 + scale);
    let mut lambda = 0.0;
    let mut x = DVec3::ZERO;
    let mut normal = DVec3::ZERO;
    let mut simplex = [Vertex::default(); 4];
    let mut q = [DVec3::ZERO; 4];
    let mut len = 0;
    // From `x` to a point of `b − a` (the centres' offset).
    let mut v = x - (b.pos - a.pos);
    if v == DVec3::ZERO {
        v = -r;
    }
    // The nearest the simplex has come to `x` since `x` last moved, and the target's point
    // there.
    let mut best = (f64::INFINITY, DVec3::ZERO);
    for _ in 0..SWEEP_ITERATIONS {
        let s = difference_support(a, b, v);
        let vw = v.dot(x - s.p);
        let mut advanced = false;
        if vw > eps * v.length() {
            // The plane through `s.p` square to `v` has `x` outside (by more than rounding)
            // and `b − a` inside: the segment can only meet the set past the plane.
            let vr = v.dot(r);
            if vr >= 0.0 {
                return None;
            }
            lambda -= vw / vr;
            if lambda > 1.0 {
                return None;
            }
            x = r * lambda;
            normal = v;
            advanced = true;
            best.0 = f64::INFINITY;
        }
        if !advanced && simplex[..len].iter().any(|o| o.p == s.p) {
            // No new point: the search has gone as far as rounding lets it.
            break;
        }
        simplex[len] = s;
        len += 1;
        for i in 0..len {
            q[i] = simplex[i].p - x;
        }
        let (keep, closest) = closest_feature(&q[..len]);
        let mut kept = 0;
        for i in 0..len {
            if keep & (1 << i) != 0 {
                simplex[kept] = simplex[i];
                q[kept] = q[i];
                kept += 1;
            }
        }
        len = kept;
        let before = v.length();
        v = -closest;
        let gap = v.length();
        if gap < best.0 {
            let w = affine_weights(&q[..len]).unwrap_or([1.0, 0.0, 0.0, 0.0]);
            best = (gap, (0..len).map(|i| simplex[i].b * w[i]).sum());
        }
        if len == 4 || gap <= eps {
            break;
        }
        if !advanced && gap > before * (1.0 - 1e-6) {
            // Next to a curved stretch of the set, far corners in the simplex can stall it:
            // start it again from the newest point.
            simplex[0] = s;
            q[0] = s.p - x;
            len = 1;
            v = -q[0];
        }
    }
    // Short of convergence (the simplex stalled in rounding, or the iteration cap), `x` must
    // still have come within 1e-6 (relative) of the set to count.
    let (gap, point) = best;
    if gap > 1e-6 * (1.0 + scale) {
        return None;
    }
    let Some(estimate) = normal.try_normalize() else {
        return Some(Cast::Inside);
    };
    Some(Cast::Hit {
        t: lambda,
        normal: surface_normal(a, b, x, estimate, scale).unwrap_or(estimate),
        point,
    })
}

/// The outward normal of `b − a` at its boundary point `x`, near the estimate `n`: the
/// direction from the set's nearest point to `y = x + δ·n`, outside (GJK distance; the nearest
/// point is `x` itself when `n` is a normal there, so `δ` may be large enough to keep the
/// direction precise). The cast's last separating plane only approximates it on curved
/// surfaces.
fn surface_normal(a: &Solid, b: &Solid, x: DVec3, n: DVec3, scale: f64) -> Option<DVec3> {
    let y = x + n * (1e-3 * (1.0 + scale));
    let mut pts = [DVec3::ZERO; 4];
    let mut len = 0;
    let mut v = n;
    for _ in 0..SWEEP_ITERATIONS {
        let p = difference_support(a, b, v).p - y;
        // `-p·v/|v|`: how far the set reaches towards `y` along `v`; no nearer than `|v|`.
        if v.length_squared() + p.dot(v) <= 1e-12 * v.length_squared() || pts[..len].contains(&p) {
            break;
        }
        pts[len] = p;
        len += 1;
        let (keep, closest) = closest_feature(&pts[..len]);
        let mut kept = 0;
        for i in 0..len {
            if keep & (1 << i) != 0 {
                pts[kept] = pts[i];
                kept += 1;
            }
        }
        len = kept;
        if len == 4 {
            return None;
        }
        v = -closest;
    }
    v.try_normalize().filter(|m| m.dot(n) > 0.0)
}

/// The contact of two solids that touch or overlap slightly: the least-depth direction (unit,
/// out of `b`) and a point of `b` touching `a` (GJK, then EPA on `b − a` grown by
/// [`TOLERANCE`], so that solids just touching enclose the origin too).
fn resting_contact(a: &Solid, b: &Solid) -> Option<(DVec3, DVec3)> {
    let grow = f64::from(TOLERANCE);
    let support = |u: DVec3| {
        let u = u.try_normalize().unwrap_or(DVec3::X);
        let s = difference_support(a, b, u);
        Vertex {
            p: s.p + u * grow,
            b: s.b,
        }
    };
    let mut simplex = [Vertex::default(); 4];
    let mut len = 0;
    let mut dir = b.pos - a.pos;
    let mut tetra = None;
    for _ in 0..GJK_ITERATIONS {
        let u = dir.try_normalize().unwrap_or(DVec3::X);
        let s = support(u);
        if s.p.dot(u) <= 0.0 {
            return None;
        }
        simplex[len] = s;
        len += 1;
        let pts = simplex.map(|s| s.p);
        let (keep, closest) = closest_feature(&pts[..len]);
        let mut kept = 0;
        for i in 0..len {
            if keep & (1 << i) != 0 {
                simplex[kept] = simplex[i];
                kept += 1;
            }
        }
        len = kept;
        if len == 4 {
            tetra = Some(simplex);
            break;
        }
        let pts = simplex.map(|s| s.p);
        dir = if closest.length() > feature_eps(&pts[..len]) {
            -closest
        } else {
            normal_of(&pts[..len])
        };
    }
    let tetra = tetra?;
    let pts = tetra.map(|s| s.p);
    let mut verts = pts.to_vec();
    let mut bs = tetra.map(|s| s.b).to_vec();
    let mut faces = Vec::with_capacity(32);
    for [i, j, k, opposite] in [[0, 1, 2, 3], [0, 1, 3, 2], [0, 2, 3, 1], [1, 2, 3, 0]] {
        let [p, q, r, o] = [i, j, k, opposite].map(|x| pts[x]);
        let inward = (q - p).cross(r - p).dot(o - p) > 0.0;
        faces.push(face(&verts, if inward { [i, k, j] } else { [i, j, k] }));
    }
    let scale = pts.iter().fold(0.0, |m: f64, p| m.max(p.length()));
    let eps = 1e-9 * (1.0 + scale);
    let mut best = None;
    for _ in 0..EPA_ITERATIONS {
        let mut nearest = None;
        let mut nearest_dist = f64::INFINITY;
        for (i, f) in faces.iter().enumerate() {
            if f.dist < nearest_dist {
                nearest = Some(i);
                nearest_dist = f.dist;
            }
        }
        let nearest = nearest?;
        let f = &faces[nearest];
        best = Some((f.v, f.n, f.dist));
        let w = support(f.n);
        if w.p.dot(f.n) - nearest_dist <= eps {
            break;
        }
        bs.push(w.b);
        expand(&mut verts, &mut faces, w.p, nearest, eps);
    }
    let (v, n, dist) = best?;
    // The origin's projection on the nearest face, as a blend of its corners.
    let tri = v.map(|i| verts[i] - n * dist);
    // Rounding may put the projection just outside the face: clamp it in.
    let w = affine_weights(&tri)
        .map(|w| w.map(|x| x.max(0.0)))
        .filter(|w| w.iter().sum::<f64>() > 0.0)
        .unwrap_or([1.0, 0.0, 0.0, 0.0]);
    let total: f64 = w.iter().sum();
    let point = (0..3).map(|k| bs[v[k]] * (w[k] / total)).sum();
    Some((n, point))
}

/// The barycentric weights (over `s`, 1 to 4 points) of the origin's projection on their affine
/// hull; `None` when the points are degenerate.
fn affine_weights(s: &[DVec3]) -> Option<[f64; 4]> {
    let o = s[0];
    let l: [f64; 3] = match s.len() {
        1 => return Some([1.0, 0.0, 0.0, 0.0]),
        2 => {
            let e1 = s[1] - o;
            let g = e1.dot(e1);
            if g <= 0.0 {
                return None;
            }
            [-e1.dot(o) / g, 0.0, 0.0]
        }
        3 => {
            let (e1, e2) = (s[1] - o, s[2] - o);
            let (g11, g12, g22) = (e1.dot(e1), e1.dot(e2), e2.dot(e2));
            let det = g11 * g22 - g12 * g12;
            if det <= 1e-12 * g11 * g22 {
                return None;
            }
            let (b1, b2) = (-e1.dot(o), -e2.dot(o));
            [
                (b1 * g22 - b2 * g12) / det,
                (g11 * b2 - g12 * b1) / det,
                0.0,
            ]
        }
        _ => {
            let m = DMat3::from_cols(s[1] - o, s[2] - o, s[3] - o);
            if m.determinant() == 0.0 {
                return None;
            }
            (m.inverse() * -o).to_array()
        }
    };
    Some([1.0 - l[0] - l[1] - l[2], l[0], l[1], l[2]])
}

#[cfg(test)]
mod tests {
    #[test]
    fn overlaps_by_takes_its_own_tolerance() {
        let a = Body::new(PartShape::Block, Affine3A::IDENTITY, Vec3::splat(2.0));
        // 0.01 studs of overlap along Y.
        let b = Body::new(
            PartShape::Block,
            Affine3A::from_translation(Vec3::new(0.0, 1.99, 0.0)),
            Vec3::splat(2.0),
        );
        assert!(overlaps_by(&a, &b, 0.0002));
        assert!(overlaps_by(&a, &b, 0.005));
        assert!(!overlaps_by(&a, &b, 0.02));
        assert!(overlaps_by(&a, &b, f32::NAN), "NaN counts as 0");
        assert_eq!(overlaps(&a, &b), overlaps_by(&a, &b, TOLERANCE));
    }

    #[test]
    fn volumes_of_the_shapes() {
        let size = Vec3::new(2.0, 4.0, 6.0);
        let v = |shape| Body::new(shape, Affine3A::IDENTITY, size).volume();
        assert_eq!(v(PartShape::Block), 48.0);
        assert_eq!(v(PartShape::Wedge), 24.0);
        assert_eq!(v(PartShape::CornerWedge), 16.0);
        // A ball of diameter 2, a cylinder 2 long of diameter 4.
        assert!((v(PartShape::Ball) - 4.0 / 3.0 * std::f32::consts::PI).abs() < 1e-5);
        assert!((v(PartShape::Cylinder) - std::f32::consts::PI * 4.0 * 2.0).abs() < 1e-4);
    }

    use super::*;
    use glam::Quat;
    use proptest::prelude::*;
    use rbx_dom_weak::{InstanceBuilder, WeakDom};
    use rbx_types::{CFrame, Enum, Matrix3, Vector3};
    use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, SQRT_2};

    fn at(shape: PartShape, size: Vec3, pos: Vec3) -> Body {
        Body::new(shape, Affine3A::from_translation(pos), size)
    }

    fn turned(shape: PartShape, size: Vec3, rot: Quat, pos: Vec3) -> Body {
        Body::new(shape, Affine3A::from_rotation_translation(rot, pos), size)
    }

    fn v(x: f32, y: f32, z: f32) -> Vec3 {
        Vec3::new(x, y, z)
    }

    /// A hit against what it should be, `(t, position, normal)`, with `t` within `t_tol`.
    #[track_caller]
    fn assert_hit(got: Option<RayHit>, expected: Option<(f32, Vec3, Vec3)>, t_tol: f32) {
        match (got, expected) {
            (None, None) => {}
            (Some(hit), Some((t, position, normal))) => {
                assert!((hit.t - t).abs() < t_tol, "t {} != {t}: {hit:?}", hit.t);
                assert!(
                    hit.position.distance(position) < 1e-4,
                    "position {} != {position}",
                    hit.position
                );
                assert!(
                    hit.normal.distance(normal.normalize()) < 1e-4,
                    "normal {} != {normal}",
                    hit.normal
                );
            }
            (got, expected) => panic!("got {got:?}, expected {expected:?}"),
        }
    }

    /// A ray and what it should hit: `(t, position, normal)`.
    #[track_caller]
    fn check(body: &Body, origin: Vec3, dir: Vec3, expected: Option<(f32, Vec3, Vec3)>) {
        assert_hit(body.raycast(origin, dir), expected, 1e-5);
    }

    const DOWN: Vec3 = Vec3::new(0.0, -10.0, 0.0);

    #[test]
    fn a_ray_down_onto_a_block() {
        let b = at(PartShape::Block, v(4.0, 1.0, 2.0), v(0.0, 5.0, 0.0));
        check(
            &b,
            v(1.0, 10.0, 0.5),
            DOWN,
            Some((0.45, v(1.0, 5.5, 0.5), Vec3::Y)),
        );
        // Past the block's side.
        check(&b, v(2.1, 10.0, 0.0), DOWN, None);
        // Upwards from below: the bottom face.
        check(
            &b,
            v(0.0, 0.0, 0.0),
            -DOWN,
            Some((0.45, v(0.0, 4.5, 0.0), Vec3::NEG_Y)),
        );
    }

    #[test]
    fn a_ray_down_onto_a_ball() {
        // Diameter min(Size) = 2.
        let b = at(PartShape::Ball, v(3.0, 2.0, 4.0), Vec3::ZERO);
        check(
            &b,
            v(0.0, 5.0, 0.0),
            DOWN,
            Some((0.4, v(0.0, 1.0, 0.0), Vec3::Y)),
        );
        check(
            &b,
            v(0.6, 5.0, 0.0),
            DOWN,
            Some((0.42, v(0.6, 0.8, 0.0), v(0.6, 0.8, 0.0))),
        );
        // Inside the box, outside the ball.
        check(&b, v(1.2, 5.0, 0.0), DOWN, None);
    }

    #[test]
    fn a_ray_down_onto_a_cylinder_lying_and_upright() {
        // Axis along X, length 4, diameter min(2, 3) = 2.
        let lying = at(PartShape::Cylinder, v(4.0, 2.0, 3.0), Vec3::ZERO);
        check(
            &lying,
            v(1.5, 5.0, 0.0),
            DOWN,
            Some((0.4, v(1.5, 1.0, 0.0), Vec3::Y)),
        );
        check(
            &lying,
            v(1.5, 5.0, 0.6),
            DOWN,
            Some((0.42, v(1.5, 0.8, 0.6), v(0.0, 0.8, 0.6))),
        );
        check(&lying, v(2.1, 5.0, 0.0), DOWN, None);
        check(&lying, v(0.0, 5.0, 1.2), DOWN, None);
        // Along the axis: the end cap.
        check(
            &lying,
            v(10.0, 0.3, 0.2),
            v(-10.0, 0.0, 0.0),
            Some((0.8, v(2.0, 0.3, 0.2), Vec3::X)),
        );
        // Turned 90° about Z, its axis is vertical: the top cap at y = 2.
        let upright = turned(
            PartShape::Cylinder,
            v(4.0, 2.0, 2.0),
            Quat::from_rotation_z(FRAC_PI_2),
            Vec3::ZERO,
        );
        check(
            &upright,
            v(0.5, 5.0, 0.3),
            DOWN,
            Some((0.3, v(0.5, 2.0, 0.3), Vec3::Y)),
        );
        check(&upright, v(1.1, 5.0, 0.0), DOWN, None);
        // Sideways onto the round side.
        check(
            &upright,
            v(10.0, 1.5, 0.0),
            v(-10.0, 0.0, 0.0),
            Some((0.9, v(1.0, 1.5, 0.0), Vec3::X)),
        );
    }

    #[test]
    fn a_ray_down_onto_a_wedge_slope() {
        // Slope: y / 2 = z / 4, so y = z / 2; normal ∝ (0, Size.Z, −Size.Y) = (0, 4, −2).
        let w = at(PartShape::Wedge, v(2.0, 2.0, 4.0), Vec3::ZERO);
        let slope = v(0.0, 4.0, -2.0);
        check(
            &w,
            v(0.3, 5.0, 1.0),
            DOWN,
            Some((0.45, v(0.3, 0.5, 1.0), slope)),
        );
        check(
            &w,
            v(0.3, 5.0, -1.5),
            DOWN,
            Some((0.575, v(0.3, -0.75, -1.5), slope)),
        );
        check(
            &w,
            v(-0.9, 5.0, 1.9),
            DOWN,
            Some((0.405, v(-0.9, 0.95, 1.9), slope)),
        );
        // From the front, level: onto the slope where z = 2y.
        check(
            &w,
            v(0.0, 0.5, -10.0),
            v(0.0, 0.0, 20.0),
            Some((0.55, v(0.0, 0.5, 1.0), slope)),
        );
        // From behind: the full back face.
        check(
            &w,
            v(0.0, 0.9, 10.0),
            v(0.0, 0.0, -20.0),
            Some((0.4, v(0.0, 0.9, 2.0), Vec3::Z)),
        );
        // Level at y = 0.99, stopping at z = 1.9, short of the slope there (z = 1.98).
        check(&w, v(0.0, 0.99, -10.0), v(0.0, 0.0, 11.9), None);
        // Up from below: the bottom.
        check(
            &w,
            v(0.0, -5.0, -1.9),
            -DOWN,
            Some((0.4, v(0.0, -1.0, -1.9), Vec3::NEG_Y)),
        );
    }

    #[test]
    fn a_ray_down_onto_a_corner_wedge() {
        // Apex (1, 1, −1). Height at (x, z): the hull's section at s = (y + 1) / 2 spans
        // x ≥ −1 + 2s and z ≤ 1 − 2s.
        let c = at(PartShape::CornerWedge, v(2.0, 2.0, 2.0), Vec3::ZERO);
        // x binds: the left slope, normal ∝ (−Size.Y, Size.X, 0).
        check(
            &c,
            v(0.5, 5.0, -0.9),
            DOWN,
            Some((0.45, v(0.5, 0.5, -0.9), v(-1.0, 1.0, 0.0))),
        );
        // z binds: the back slope, normal ∝ (0, Size.Z, Size.Y).
        check(
            &c,
            v(0.9, 5.0, 0.5),
            DOWN,
            Some((0.55, v(0.9, -0.5, 0.5), v(0.0, 1.0, 1.0))),
        );
        // Onto the vertical right face, from the side.
        check(
            &c,
            v(5.0, 0.0, -0.5),
            v(-10.0, 0.0, 0.0),
            Some((0.4, v(1.0, 0.0, -0.5), Vec3::X)),
        );
        // Near the low left edge: the left slope barely above the bottom…
        check(
            &c,
            v(-0.99, 5.0, 0.5),
            DOWN,
            Some((0.599, v(-0.99, -0.99, 0.5), v(-1.0, 1.0, 0.0))),
        );
        // …and beside the box, nothing.
        check(&c, v(-1.01, 5.0, 0.0), DOWN, None);
    }

    #[test]
    fn a_ray_starting_inside_hits_nothing() {
        let b = at(PartShape::Block, v(4.0, 1.0, 2.0), Vec3::ZERO);
        check(&b, Vec3::ZERO, DOWN, None);
        check(&b, v(1.9, 0.4, 0.9), v(-100.0, 3.0, 1.0), None);
        let ball = at(PartShape::Ball, Vec3::splat(2.0), Vec3::ZERO);
        check(&ball, v(0.2, 0.3, 0.1), DOWN, None);
        let w = at(PartShape::Wedge, v(2.0, 2.0, 4.0), Vec3::ZERO);
        check(&w, v(0.0, 0.0, 1.0), -DOWN, None);
    }

    #[test]
    fn a_ray_from_the_surface_hits_going_in_and_misses_going_out() {
        let b = at(PartShape::Block, v(4.0, 1.0, 2.0), Vec3::ZERO);
        check(
            &b,
            v(0.0, 0.5, 0.0),
            DOWN,
            Some((0.0, v(0.0, 0.5, 0.0), Vec3::Y)),
        );
        check(&b, v(0.0, 0.5, 0.0), -DOWN, None);
        // Rounding below the surface still counts as on it; deeper does not.
        check(
            &b,
            v(0.0, 0.4999, 0.0),
            DOWN,
            Some((0.0, v(0.0, 0.4999, 0.0), Vec3::Y)),
        );
        check(&b, v(0.0, 0.49, 0.0), DOWN, None);
        // A thin plate: from its top going up, it is not hit.
        let plate = at(PartShape::Block, v(4.0, 0.0, 2.0), Vec3::ZERO);
        check(&plate, v(0.0, 0.0005, 0.0), -DOWN, None);
        check(
            &plate,
            v(0.0, 0.0005, 0.0),
            DOWN,
            Some((0.0, v(0.0, 0.0005, 0.0), Vec3::Y)),
        );
    }

    #[test]
    fn a_ray_that_stops_short_hits_nothing() {
        let b = at(PartShape::Block, v(4.0, 1.0, 2.0), Vec3::ZERO);
        check(&b, v(0.0, 5.0, 0.0), v(0.0, -4.0, 0.0), None);
        check(
            &b,
            v(0.0, 5.0, 0.0),
            v(0.0, -4.5, 0.0),
            Some((1.0, v(0.0, 0.5, 0.0), Vec3::Y)),
        );
        let ball = at(PartShape::Ball, Vec3::splat(2.0), Vec3::ZERO);
        check(&ball, v(0.0, 5.0, 0.0), v(0.0, -3.9, 0.0), None);
    }

    #[test]
    fn zero_and_non_finite_directions_hit_nothing() {
        let b = at(PartShape::Block, Vec3::splat(2.0), Vec3::ZERO);
        check(&b, v(0.0, 5.0, 0.0), Vec3::ZERO, None);
        check(&b, v(0.0, 5.0, 0.0), v(0.0, f32::NAN, 0.0), None);
        check(&b, v(0.0, f32::INFINITY, 0.0), DOWN, None);
    }

    #[test]
    fn rotated_parts() {
        // 90° about Z: local X (length 4) is world Y, local Y is world −X.
        let b = turned(
            PartShape::Block,
            v(4.0, 1.0, 2.0),
            Quat::from_rotation_z(FRAC_PI_2),
            v(0.0, 0.0, 0.0),
        );
        check(
            &b,
            v(0.4, 5.0, 0.9),
            DOWN,
            Some((0.3, v(0.4, 2.0, 0.9), Vec3::Y)),
        );
        check(&b, v(0.6, 5.0, 0.0), DOWN, None);
        // A cube turned 45° about Z is a diamond: the face at x > 0 is y = √2 − x.
        let d = turned(
            PartShape::Block,
            Vec3::splat(2.0),
            Quat::from_rotation_z(FRAC_PI_4),
            v(0.0, 1.0, 0.0),
        );
        let y = 1.0 + SQRT_2 - 0.5;
        check(
            &d,
            v(0.5, 5.0, 0.0),
            DOWN,
            Some(((5.0 - y) / 10.0, v(0.5, y, 0.0), v(1.0, 1.0, 0.0))),
        );
        // A wedge turned 180° about Y: its slope now faces +Z, the height at world z is
        // y = −z / 2.
        let w = turned(
            PartShape::Wedge,
            v(2.0, 2.0, 4.0),
            Quat::from_rotation_y(std::f32::consts::PI),
            v(10.0, 0.0, 0.0),
        );
        check(
            &w,
            v(10.0, 5.0, 1.0),
            DOWN,
            Some((0.55, v(10.0, -0.5, 1.0), v(0.0, 4.0, 2.0))),
        );
    }

    #[test]
    fn degenerate_sizes_are_thin_plates() {
        let plate = at(PartShape::Block, v(4.0, 0.0, 2.0), Vec3::ZERO);
        assert_eq!(plate.size, v(4.0, MIN_SIZE, 2.0));
        check(
            &plate,
            v(0.0, 5.0, 0.0),
            DOWN,
            Some((0.49995, v(0.0, 0.0005, 0.0), Vec3::Y)),
        );
        // Edge-on, it is hit too (on its thin side).
        check(
            &plate,
            v(-5.0, 0.0, 0.0),
            v(10.0, 0.0, 0.0),
            Some((0.3, v(-2.0, 0.0, 0.0), Vec3::NEG_X)),
        );
        for shape in [
            PartShape::Ball,
            PartShape::Cylinder,
            PartShape::Wedge,
            PartShape::CornerWedge,
        ] {
            let b = at(shape, Vec3::ZERO, Vec3::ZERO);
            let hit = b.raycast(v(0.0, 5.0, 0.0), DOWN);
            assert!(
                hit.is_some_and(|h| h.position.is_finite() && h.normal.is_finite()),
                "{shape:?}: {hit:?}"
            );
            let (lo, hi) = b.aabb();
            assert!(lo.is_finite() && hi.is_finite());
            assert!(b.support(Vec3::ONE).is_finite() && b.support(Vec3::ZERO).is_finite());
        }
        let odd = at(
            PartShape::Block,
            v(-2.0, f32::NAN, f32::INFINITY),
            Vec3::ZERO,
        );
        assert_eq!(odd.size, v(2.0, MIN_SIZE, MIN_SIZE));
        // A degenerate rotation reads as none.
        let flat = Body::new(
            PartShape::Block,
            Affine3A::from_scale(Vec3::ZERO),
            Vec3::ONE,
        );
        assert_eq!(flat.cframe, Affine3A::IDENTITY);
    }

    #[test]
    fn aabb_of_a_rotated_block() {
        // 90° about Y: local X → world −Z, local Z → world X.
        let b = turned(
            PartShape::Block,
            v(4.0, 1.0, 2.0),
            Quat::from_rotation_y(FRAC_PI_2),
            v(1.0, 2.0, 3.0),
        );
        let (lo, hi) = b.aabb();
        assert!(lo.distance(v(0.0, 1.5, 1.0)) < 1e-5, "{lo}");
        assert!(hi.distance(v(2.0, 2.5, 5.0)) < 1e-5, "{hi}");
        let c = turned(
            PartShape::Ball,
            Vec3::splat(2.0),
            Quat::from_rotation_y(FRAC_PI_4),
            Vec3::ZERO,
        );
        let (lo, hi) = c.aabb();
        assert!(
            lo.distance(v(-SQRT_2, -1.0, -SQRT_2)) < 1e-5,
            "the part's box, not the ball: {lo}"
        );
        assert!(hi.distance(v(SQRT_2, 1.0, SQRT_2)) < 1e-5, "{hi}");
    }

    #[test]
    fn support_points() {
        let b = turned(
            PartShape::Block,
            v(4.0, 2.0, 2.0),
            Quat::from_rotation_z(FRAC_PI_2),
            v(0.0, 1.0, 0.0),
        );
        assert!(b.support(Vec3::Y).y > 2.999 && b.support(Vec3::Y).y < 3.001);
        let w = at(PartShape::Wedge, v(2.0, 2.0, 4.0), Vec3::ZERO);
        // Up and forward lies on the slope: either end of it.
        let s = w.support(v(0.0, 1.0, -0.1));
        assert!((s.y - 1.0).abs() < 1e-6 && (s.z - 2.0).abs() < 1e-6, "{s}");
        assert!((w.support(v(0.0, 0.0, -1.0)).z + 2.0).abs() < 1e-6);
        let c = at(PartShape::CornerWedge, v(2.0, 2.0, 2.0), Vec3::ZERO);
        assert_eq!(c.support(Vec3::Y), v(1.0, 1.0, -1.0));
        let cyl = at(PartShape::Cylinder, v(4.0, 2.0, 2.0), Vec3::ZERO);
        assert!(cyl.support(v(1.0, 1.0, 0.0)).distance(v(2.0, 1.0, 0.0)) < 1e-6);
    }

    #[test]
    fn polyhedra_corners_lie_on_their_faces() {
        for shape in [PartShape::Block, PartShape::Wedge, PartShape::CornerWedge] {
            let h = DVec3::new(1.0, 1.5, 2.5);
            let corners: Vec<DVec3> = match shape {
                PartShape::Block => (0..8)
                    .map(|i| {
                        h * DVec3::new(
                            if i & 1 == 0 { -1.0 } else { 1.0 },
                            if i & 2 == 0 { -1.0 } else { 1.0 },
                            if i & 4 == 0 { -1.0 } else { 1.0 },
                        )
                    })
                    .collect(),
                _ => vertices(shape, h).to_vec(),
            };
            for p in planes(shape, h) {
                assert!((p.n.length() - 1.0).abs() < 1e-12);
                let on = corners
                    .iter()
                    .filter(|c| (p.n.dot(**c) - p.d).abs() < 1e-12)
                    .count();
                assert!(
                    corners.iter().all(|c| p.n.dot(*c) <= p.d + 1e-12),
                    "{shape:?}"
                );
                assert!(on >= 3, "{shape:?}: a face through {on} corners");
            }
        }
    }

    #[test]
    fn box_against_aabb_uses_every_separating_axis() {
        // A cube turned 45° about Z: its own AABB reaches (√2, √2), the diamond only
        // |x| + |y| ≤ √2.
        let q = Affine3A::from_rotation_z(FRAC_PI_4);
        let two = Vec3::splat(2.0);
        assert!(!box_overlaps_aabb(
            &q,
            two,
            v(1.1, 1.1, -1.0),
            v(2.0, 2.0, 1.0)
        ));
        assert!(box_overlaps_aabb(
            &q,
            two,
            v(0.5, 0.5, -1.0),
            v(2.0, 2.0, 1.0)
        ));
        // Turned about two axes, around the box.
        let tilted = Affine3A::from_quat(
            Quat::from_rotation_x(FRAC_PI_4) * Quat::from_rotation_y(FRAC_PI_4),
        );
        assert!(box_overlaps_aabb(
            &tilted,
            two,
            v(-0.5, -0.5, -0.5),
            v(0.5, 0.5, 0.5)
        ));
        // Touching faces and a sliver of overlap are not overlap.
        let id = Affine3A::IDENTITY;
        assert!(!box_overlaps_aabb(
            &id,
            two,
            v(1.0, -1.0, -1.0),
            v(3.0, 1.0, 1.0)
        ));
        assert!(!box_overlaps_aabb(
            &id,
            two,
            v(0.9995, -1.0, -1.0),
            v(3.0, 1.0, 1.0)
        ));
        assert!(box_overlaps_aabb(
            &id,
            two,
            v(0.99, -1.0, -1.0),
            v(3.0, 1.0, 1.0)
        ));
        // A point query (zero size) inside, and on the surface.
        assert!(box_overlaps_aabb(
            &Affine3A::from_translation(v(0.5, 0.5, 0.5)),
            Vec3::ZERO,
            Vec3::ZERO,
            Vec3::ONE
        ));
        assert!(!box_overlaps_aabb(
            &Affine3A::from_translation(v(1.0, 0.5, 0.5)),
            Vec3::ZERO,
            Vec3::ZERO,
            Vec3::ONE
        ));
        // An inverted box is empty.
        assert!(!box_overlaps_aabb(&id, two, Vec3::ONE, Vec3::ZERO));
    }

    #[test]
    fn sphere_against_aabb() {
        let lo = v(0.8, 0.8, -1.0);
        let hi = v(2.0, 2.0, 1.0);
        // The boxes overlap but the box's corner (0.8, 0.8) is 1.13 from the centre.
        assert!(!sphere_overlaps_aabb(Vec3::ZERO, 1.0, lo, hi));
        assert!(sphere_overlaps_aabb(Vec3::ZERO, 1.2, lo, hi));
        assert!(sphere_overlaps_aabb(Vec3::ZERO, 1.0, v(0.5, 0.5, -1.0), hi));
        // Touching is not overlapping.
        assert!(!sphere_overlaps_aabb(
            Vec3::ZERO,
            1.0,
            v(1.0, -1.0, -1.0),
            v(2.0, 1.0, 1.0)
        ));
        // A point inside, and on a face.
        assert!(sphere_overlaps_aabb(
            Vec3::splat(0.5),
            0.0,
            Vec3::ZERO,
            Vec3::ONE
        ));
        assert!(!sphere_overlaps_aabb(
            v(1.0, 0.5, 0.5),
            0.0,
            Vec3::ZERO,
            Vec3::ONE
        ));
        assert!(!sphere_overlaps_aabb(
            Vec3::ZERO,
            -1.0,
            Vec3::splat(-1.0),
            Vec3::ONE
        ));
        assert!(!sphere_overlaps_aabb(
            Vec3::ZERO,
            f32::NAN,
            Vec3::splat(-1.0),
            Vec3::ONE
        ));
    }

    #[test]
    fn stacked_blocks_touch_but_do_not_overlap() {
        let size = v(4.0, 1.0, 2.0);
        let a = at(PartShape::Block, size, Vec3::ZERO);
        assert!(!overlaps(&a, &at(PartShape::Block, size, v(0.0, 1.0, 0.0))));
        assert!(!overlaps(&a, &at(PartShape::Block, size, v(1.0, 1.0, 0.5))));
        // Within the tolerance.
        assert!(!overlaps(
            &a,
            &at(PartShape::Block, size, v(0.0, 0.9995, 0.0))
        ));
        // Side by side, turned alike.
        let r = Quat::from_rotation_y(0.3);
        let side = r * v(4.0, 0.0, 0.0);
        assert!(!overlaps(
            &turned(PartShape::Block, size, r, Vec3::ZERO),
            &turned(PartShape::Block, size, r, side)
        ));
    }

    #[test]
    fn interpenetrating_blocks_overlap() {
        let size = v(4.0, 1.0, 2.0);
        let a = at(PartShape::Block, size, Vec3::ZERO);
        assert!(overlaps(&a, &at(PartShape::Block, size, v(0.0, 0.9, 0.0))));
        assert!(overlaps(&a, &a));
        let crossed = turned(
            PartShape::Block,
            size,
            Quat::from_rotation_y(FRAC_PI_2),
            v(0.0, 0.5, 0.0),
        );
        assert!(overlaps(&a, &crossed));
        // A zero-thick plate sunk into a block overlaps it; one lying on top does not.
        let plate = v(1.0, 0.0, 1.0);
        assert!(overlaps(&a, &at(PartShape::Block, plate, Vec3::ZERO)));
        assert!(!overlaps(
            &a,
            &at(PartShape::Block, plate, v(0.0, 0.5005, 0.0))
        ));
    }

    #[test]
    fn a_ball_inside_a_big_block_overlaps_it() {
        let block = at(PartShape::Block, Vec3::splat(10.0), v(1.0, 2.0, 3.0));
        assert!(overlaps(
            &at(PartShape::Ball, Vec3::ONE, v(1.0, 2.0, 3.0)),
            &block
        ));
        assert!(overlaps(
            &block,
            &at(PartShape::Ball, Vec3::ONE, v(5.0, 6.0, 7.0))
        ));
    }

    #[test]
    fn balls_whose_boxes_overlap_need_not_overlap() {
        let a = at(PartShape::Ball, Vec3::splat(2.0), Vec3::ZERO);
        // 2.12 apart, radii sum 2: the boxes overlap by 0.5 on X and Y.
        let b = at(PartShape::Ball, Vec3::splat(2.0), v(1.5, 1.5, 0.0));
        let ((alo, ahi), (blo, bhi)) = (a.aabb(), b.aabb());
        assert!(box_overlaps_aabb(
            &Affine3A::from_translation((alo + ahi) / 2.0),
            ahi - alo,
            blo,
            bhi
        ));
        assert!(!overlaps(&a, &b));
        assert!(overlaps(
            &a,
            &at(PartShape::Ball, Vec3::splat(2.0), v(1.2, 1.2, 0.0))
        ));
        // Touching balls.
        assert!(!overlaps(
            &a,
            &at(PartShape::Ball, Vec3::splat(2.0), v(0.0, 2.0, 0.0))
        ));
        // A ball in the corner of a block's box, clear of the ball-shaped part's surface.
        let cube_ball = at(PartShape::Ball, Vec3::splat(4.0), Vec3::ZERO);
        assert!(!overlaps(
            &cube_ball,
            &at(PartShape::Block, Vec3::splat(0.5), Vec3::splat(1.7))
        ));
    }

    #[test]
    fn a_block_above_a_wedge_slope_does_not_overlap_it() {
        // Slope y = z / 2 (Size 4, 2, 4): low edge at z = −2, y = −1.
        let w = at(PartShape::Wedge, v(4.0, 2.0, 4.0), Vec3::ZERO);
        // The block's lowest back edge (y = −0.7, z = −1.5) is above the slope (−0.75 there),
        // though the block sits inside the wedge's box.
        let above = at(PartShape::Block, Vec3::ONE, v(0.0, -0.2, -2.0));
        assert!(!overlaps(&w, &above));
        assert!(overlaps(
            &at(PartShape::Block, v(4.0, 2.0, 4.0), Vec3::ZERO),
            &above
        ));
        // 0.1 lower it sinks 0.045 into the slope.
        assert!(overlaps(
            &w,
            &at(PartShape::Block, Vec3::ONE, v(0.0, -0.3, -2.0))
        ));
        // A block resting on the slope, turned to lie flat on it, only touches.
        let angle = (0.5f32).atan();
        let n = v(0.0, 4.0, -2.0).normalize();
        let resting = turned(
            PartShape::Block,
            Vec3::ONE,
            Quat::from_rotation_x(-angle),
            n * 0.5,
        );
        assert!(!overlaps(&w, &resting));
        let sunk = turned(
            PartShape::Block,
            Vec3::ONE,
            Quat::from_rotation_x(-angle),
            n * 0.45,
        );
        assert!(overlaps(&w, &sunk));
    }

    #[test]
    fn other_shapes_overlap_by_their_solids() {
        // Two lying cylinders side by side, touching along a line.
        let c = v(4.0, 2.0, 2.0);
        assert!(!overlaps(
            &at(PartShape::Cylinder, c, Vec3::ZERO),
            &at(PartShape::Cylinder, c, v(0.0, 0.0, 2.0))
        ));
        assert!(overlaps(
            &at(PartShape::Cylinder, c, Vec3::ZERO),
            &at(PartShape::Cylinder, c, v(0.0, 1.2, 1.2))
        ));
        assert!(!overlaps(
            &at(PartShape::Cylinder, c, Vec3::ZERO),
            &at(PartShape::Cylinder, c, v(0.0, 1.5, 1.5))
        ));
        // A ball beside a corner wedge's left slope (x + 1 = y + 1 plane, normal (−1, 1, 0)/√2).
        let cw = at(PartShape::CornerWedge, Vec3::splat(2.0), Vec3::ZERO);
        let n = v(-1.0, 1.0, 0.0).normalize();
        assert!(!overlaps(
            &cw,
            &at(PartShape::Ball, Vec3::splat(0.4), n * 0.21)
        ));
        assert!(overlaps(
            &cw,
            &at(PartShape::Ball, Vec3::splat(0.4), n * 0.15)
        ));
    }

    #[test]
    fn far_from_the_origin() {
        let far = v(5000.0, 100.0, -7000.0);
        let size = v(4.0, 1.0, 2.0);
        let a = at(PartShape::Block, size, far);
        assert!(!overlaps(
            &a,
            &at(PartShape::Block, size, far + v(0.5, 1.0, 0.0))
        ));
        assert!(overlaps(
            &a,
            &at(PartShape::Block, size, far + v(0.5, 0.99, 0.0))
        ));
        // Exact offsets (f32 steps are 1/2048 out here): the normal keeps full precision.
        let ball = at(PartShape::Ball, Vec3::splat(2.0), far);
        let hit = ball.raycast(far + v(0.5, 5.0, 0.0), DOWN).unwrap();
        let y = 0.75f32.sqrt();
        assert!(hit.normal.distance(v(0.5, y, 0.0)) < 1e-6, "{}", hit.normal);
        assert!(
            hit.position.distance(far + v(0.5, y, 0.0)) < 1e-3,
            "{}",
            hit.position
        );
    }

    #[test]
    fn non_finite_positions_overlap_nothing() {
        let a = at(PartShape::Block, Vec3::ONE, Vec3::ZERO);
        let b = at(PartShape::Block, Vec3::ONE, v(f32::NAN, 0.0, 0.0));
        assert!(!overlaps(&a, &b) && !overlaps(&b, &a));
        check(&b, v(0.0, 5.0, 0.0), DOWN, None);
    }

    fn part(builder: InstanceBuilder) -> (PartShape, Body) {
        let dom = WeakDom::new(builder);
        (part_shape(dom.root()), body(dom.root()))
    }

    #[test]
    fn shapes_from_classes_and_shape_property() {
        // (class, Shape value or none, expected)
        let cases = [
            ("Part", None, PartShape::Block),
            ("Part", Some(0), PartShape::Ball),
            ("Part", Some(1), PartShape::Block),
            ("Part", Some(2), PartShape::Cylinder),
            ("Part", Some(3), PartShape::Wedge),
            ("Part", Some(4), PartShape::CornerWedge),
            ("Part", Some(42), PartShape::Block),
            ("Seat", Some(2), PartShape::Cylinder),
            ("SpawnLocation", Some(0), PartShape::Ball),
            ("WedgePart", None, PartShape::Wedge),
            ("WedgePart", Some(0), PartShape::Wedge),
            ("CornerWedgePart", None, PartShape::CornerWedge),
            ("MeshPart", None, PartShape::Block),
            ("MeshPart", Some(0), PartShape::Block),
            ("UnionOperation", None, PartShape::Block),
            ("TrussPart", None, PartShape::Block),
        ];
        for (class, shape, expected) in cases {
            let mut builder = InstanceBuilder::new(class);
            if let Some(shape) = shape {
                builder = builder.with_property("Shape", Enum::from_u32(shape));
            }
            assert_eq!(part(builder).0, expected, "{class} {shape:?}");
        }
    }

    #[test]
    fn body_reads_cframe_and_size() {
        let cf = CFrame::new(
            Vector3::new(1.0, 2.0, 3.0),
            Matrix3::new(
                Vector3::new(0.0, -1.0, 0.0),
                Vector3::new(1.0, 0.0, 0.0),
                Vector3::new(0.0, 0.0, 1.0),
            ),
        );
        let (shape, b) = part(
            InstanceBuilder::new("Part")
                .with_property("Shape", Enum::from_u32(0))
                .with_property("CFrame", cf)
                .with_property("Size", Vector3::new(2.0, 0.0, 2.0)),
        );
        assert_eq!(shape, PartShape::Ball);
        assert_eq!(b.size, v(2.0, MIN_SIZE, 2.0));
        assert_eq!(b.cframe, crate::cframe_to_affine(&cf));
    }

    // --- sweeps ---

    /// A sweep and what it should hit: `(t, position, normal)`.
    #[track_caller]
    fn check_sweep(moving: &Body, dir: Vec3, target: &Body, expected: Option<(f32, Vec3, Vec3)>) {
        assert_hit(sweep(moving, dir, target), expected, 1e-4);
    }

    #[test]
    fn body_sphere_is_a_ball() {
        let s = Body::sphere(v(1.0, 2.0, 3.0), 0.5);
        assert_eq!(s, at(PartShape::Ball, Vec3::ONE, v(1.0, 2.0, 3.0)));
        assert_eq!(Body::sphere(Vec3::ZERO, -0.5).size, Vec3::ONE);
    }

    #[test]
    fn a_sphere_dropped_onto_a_block_lands_on_its_top() {
        let block = at(PartShape::Block, v(4.0, 1.0, 4.0), Vec3::ZERO);
        let ball = Body::sphere(v(0.3, 5.0, -0.2), 0.5);
        // The bottom (y = centre − 0.5) meets the top (y = 0.5) when the centre is at 1.
        check_sweep(&ball, DOWN, &block, Some((0.4, v(0.3, 0.5, -0.2), Vec3::Y)));
        // Far from the origin, the same.
        let far = v(3000.0, -200.0, 5000.0);
        let block = at(PartShape::Block, v(4.0, 1.0, 4.0), far);
        check_sweep(
            &Body::sphere(far + v(0.3, 5.0, -0.2), 0.5),
            DOWN,
            &block,
            Some((0.4, far + v(0.3, 0.5, -0.2), Vec3::Y)),
        );
    }

    #[test]
    fn a_block_swept_sideways_into_a_turned_block() {
        // A cube turned 45° about Y: its vertical edge at x = −√2, z = 0 faces −X.
        let diamond = turned(
            PartShape::Block,
            Vec3::splat(2.0),
            Quat::from_rotation_y(FRAC_PI_4),
            Vec3::ZERO,
        );
        let cube = at(PartShape::Block, Vec3::ONE, v(-5.0, 0.2, 0.0));
        // The cube's +X face (x = −4.5) reaches the edge after 4.5 − √2 studs.
        let hit = sweep(&cube, v(10.0, 0.0, 0.0), &diamond).unwrap();
        assert!((hit.t - (4.5 - SQRT_2) / 10.0).abs() < 1e-5, "{hit:?}");
        // On the edge, within the cube's face (y in 0.2 ± 0.5).
        let p = hit.position;
        assert!(
            (p.x + SQRT_2).abs() < 1e-4 && p.z.abs() < 1e-4 && (-0.3..=0.7).contains(&p.y),
            "{p}"
        );
        // An edge against a face: the contact normal is the face's.
        assert!(hit.normal.distance(Vec3::NEG_X) < 1e-4, "{}", hit.normal);
        // Offset along Z (z in 0.5..1.5), the cube's leading edge (z = 0.5) meets the face
        // −x + z = √2 (normal (−1, 0, 1)/√2) at x = 0.5 − √2.
        let side = at(PartShape::Block, Vec3::ONE, v(-5.0, 0.0, 1.0));
        let hit = sweep(&side, v(10.0, 0.0, 0.0), &diamond).unwrap();
        assert!((hit.t - (5.0 - SQRT_2) / 10.0).abs() < 1e-5, "{hit:?}");
        assert!(
            hit.normal.distance(v(-1.0, 0.0, 1.0).normalize()) < 1e-4,
            "{}",
            hit.normal
        );
        let p = hit.position;
        assert!(
            p.distance(v(0.5 - SQRT_2, p.y, 0.5)) < 1e-4 && p.y.abs() <= 0.5 + 1e-4,
            "{p}"
        );
        // Just beside it (z from 1.5 + √2), it passes.
        let clear = at(PartShape::Block, Vec3::ONE, v(-5.0, 0.0, 2.0 + SQRT_2));
        check_sweep(&clear, v(10.0, 0.0, 0.0), &diamond, None);
    }

    #[test]
    fn a_sphere_onto_a_wedge_slope() {
        // Slope through the origin, normal (0, 2, −1)/√5 (y = z / 2).
        let w = at(PartShape::Wedge, v(2.0, 2.0, 4.0), Vec3::ZERO);
        let n = v(0.0, 2.0, -1.0).normalize();
        let r = 0.5;
        // The centre (0, 5 − 10t, 1) is r from the plane: 2·(5 − 10t) − 1 = r·√5.
        let y = (1.0 + r * 5f32.sqrt()) / 2.0;
        let t = (5.0 - y) / 10.0;
        let centre = v(0.0, y, 1.0);
        check_sweep(
            &Body::sphere(v(0.0, 5.0, 1.0), r),
            DOWN,
            &w,
            Some((t, centre - n * r, n)),
        );
    }

    #[test]
    fn a_sphere_onto_a_ball_touches_on_the_line_of_centres() {
        let ball = at(PartShape::Ball, Vec3::splat(2.0), Vec3::ZERO);
        // Centres 1.5 apart at contact: the centre at (0.6, √1.89, 0).
        let y = 1.89f32.sqrt();
        let centre = v(0.6, y, 0.0);
        check_sweep(
            &Body::sphere(v(0.6, 5.0, 0.0), 0.5),
            DOWN,
            &ball,
            Some(((5.0 - y) / 10.0, centre / 1.5, centre)),
        );
        // The other way round: the ball swept up into the sphere, normal down.
        let hit = sweep(&ball, -DOWN, &Body::sphere(v(0.6, 5.0, 0.0), 0.5)).unwrap();
        assert!((hit.t - (5.0 - y) / 10.0).abs() < 1e-4, "{hit:?}");
        assert!(hit.normal.distance(-centre / 1.5) < 1e-4, "{hit:?}");
    }

    #[test]
    fn sweeps_that_miss() {
        let block = at(PartShape::Block, v(4.0, 1.0, 4.0), Vec3::ZERO);
        // Passing beside: the sphere reaches x = 2.5, the block x = 2.
        check_sweep(&Body::sphere(v(3.0, 5.0, 0.0), 0.5), DOWN, &block, None);
        // Moving away.
        check_sweep(&Body::sphere(v(0.0, 5.0, 0.0), 0.5), -DOWN, &block, None);
        // Stopping short: the centre would need to reach y = 1.
        let ball = Body::sphere(v(0.0, 5.0, 0.0), 0.5);
        check_sweep(&ball, v(0.0, -3.9, 0.0), &block, None);
        check_sweep(
            &ball,
            v(0.0, -4.0, 0.0),
            &block,
            Some((1.0, v(0.0, 0.5, 0.0), Vec3::Y)),
        );
        // No direction.
        check_sweep(&ball, Vec3::ZERO, &block, None);
        check_sweep(&ball, v(f32::NAN, -10.0, 0.0), &block, None);
        check_sweep(&ball, v(0.0, f32::NEG_INFINITY, 0.0), &block, None);
        let lost = at(PartShape::Block, Vec3::ONE, v(f32::NAN, 0.0, 0.0));
        check_sweep(&ball, DOWN, &lost, None);
        check_sweep(&lost, DOWN, &block, None);
    }

    #[test]
    fn a_target_overlapped_at_the_start_is_not_hit() {
        let block = at(PartShape::Block, v(4.0, 1.0, 4.0), Vec3::ZERO);
        let sunk = Body::sphere(v(0.0, 0.6, 0.0), 0.5);
        for dir in [DOWN, -DOWN, v(10.0, 0.0, 0.0), v(0.0, 0.0, -0.01)] {
            check_sweep(&sunk, dir, &block, None);
        }
        // Wholly inside.
        check_sweep(&Body::sphere(Vec3::ZERO, 0.2), DOWN, &block, None);
    }

    #[test]
    fn a_block_resting_on_a_block() {
        let size = v(4.0, 1.0, 2.0);
        let base = at(PartShape::Block, size, Vec3::ZERO);
        let top = at(PartShape::Block, v(1.0, 1.0, 1.0), v(1.0, 1.0, 0.0));
        // Sliding along the face, or lifting off: no hit.
        check_sweep(&top, v(10.0, 0.0, 0.0), &base, None);
        check_sweep(&top, v(0.0, 0.0, -3.0), &base, None);
        check_sweep(&top, -DOWN, &base, None);
        check_sweep(&top, v(5.0, 1.0, 0.0), &base, None);
        // Sunk within the tolerance, the same.
        let settled = at(PartShape::Block, Vec3::ONE, v(1.0, 0.9995, 0.0));
        check_sweep(&settled, v(10.0, 0.0, 0.0), &base, None);
        // Pressing into it: a hit at t = 0, on the shared face.
        let hit = sweep(&top, DOWN, &base).unwrap();
        assert_eq!(hit.t, 0.0);
        assert!(hit.normal.distance(Vec3::Y) < 1e-6, "{hit:?}");
        let p = hit.position;
        assert!(
            (p.y - 0.5).abs() < 1e-3 && (0.5..=1.5).contains(&p.x) && p.z.abs() <= 0.5,
            "{p}"
        );
        let hit = sweep(&settled, v(10.0, -1.0, 0.0), &base).unwrap();
        assert_eq!(hit.t, 0.0);
        assert!(hit.normal.distance(Vec3::Y) < 1e-6, "{hit:?}");
        // Moving in by less than the tolerance in all is still only touching.
        check_sweep(&top, v(0.0, -0.0005, 0.0), &base, None);
        // Turned alike, side by side, sliding along the shared face.
        let r = Quat::from_rotation_y(0.3);
        let a = turned(PartShape::Block, size, r, Vec3::ZERO);
        let b = turned(PartShape::Block, size, r, r * v(0.0, 0.0, 2.0));
        check_sweep(&b, r * v(7.0, 0.0, 0.0), &a, None);
        check_sweep(&b, r * v(0.0, 3.0, 0.0), &a, None);
        let hit = sweep(&b, r * v(1.0, 0.0, -1.0), &a).unwrap();
        assert_eq!(hit.t, 0.0);
        assert!(hit.normal.distance(r * Vec3::Z) < 1e-5, "{hit:?}");
        // A sphere resting on the block, rolled sideways.
        let ball = Body::sphere(v(0.0, 1.0, 0.0), 0.5);
        check_sweep(&ball, v(1.0, 0.0, 0.0), &base, None);
        check_sweep(
            &ball,
            v(1.0, -1.0, 0.0),
            &base,
            Some((0.0, v(0.0, 0.5, 0.0), Vec3::Y)),
        );
    }

    #[test]
    fn cylinders_sweep_by_their_solids() {
        let block = at(PartShape::Block, v(4.0, 1.0, 4.0), Vec3::ZERO);
        // Upright (turned 90° about Z), length 2: its bottom cap lands on the top.
        let upright = turned(
            PartShape::Cylinder,
            Vec3::splat(2.0),
            Quat::from_rotation_z(FRAC_PI_2),
            v(0.5, 5.0, 0.5),
        );
        let hit = sweep(&upright, DOWN, &block).unwrap();
        assert!((hit.t - 0.35).abs() < 1e-5, "{hit:?}");
        assert!(hit.normal.distance(Vec3::Y) < 1e-5, "{hit:?}");
        assert!((hit.position.y - 0.5).abs() < 1e-5);
        assert!(v(hit.position.x - 0.5, 0.0, hit.position.z - 0.5).length() <= 1.0 + 1e-4);
        // Lying (axis X), rolled along Z into the block's side: its round side meets z = −2.
        let lying = at(PartShape::Cylinder, v(2.0, 2.0, 2.0), v(0.0, 0.0, -6.0));
        // They meet along a line (x in −1..1): the point is one of it.
        let hit = sweep(&lying, v(0.0, 0.0, 10.0), &block).unwrap();
        assert!((hit.t - 0.3).abs() < 1e-5, "{hit:?}");
        assert!(hit.normal.distance(Vec3::NEG_Z) < 1e-5, "{hit:?}");
        let p = hit.position;
        assert!(
            (p.z + 2.0).abs() < 1e-5 && p.y.abs() < 1e-3 && p.x.abs() <= 1.0,
            "{p}"
        );
        // A sphere onto a lying cylinder's round side.
        let cyl = at(PartShape::Cylinder, v(4.0, 2.0, 2.0), Vec3::ZERO);
        let y = 1.89f32.sqrt();
        check_sweep(
            &Body::sphere(v(1.0, 5.0, 0.6), 0.5),
            DOWN,
            &cyl,
            Some(((5.0 - y) / 10.0, v(1.0, y / 1.5, 0.4), v(0.0, y, 0.6))),
        );
        // Beside its end cap (x = 2), nothing.
        check_sweep(&Body::sphere(v(2.6, 5.0, 0.0), 0.5), DOWN, &cyl, None);
    }

    // --- properties ---

    /// How far a local point is outside the shape (negative: inside), written from the shapes'
    /// definitions: the box, ball, cylinder, wedge inequality and the corner wedge's hull.
    fn reference_depth(shape: PartShape, size: DVec3, p: DVec3) -> f64 {
        let h = size * 0.5;
        let boxed = (p.abs() - h).max_element();
        match shape {
            PartShape::Block => boxed,
            PartShape::Ball => p.length() - h.min_element(),
            PartShape::Cylinder => {
                (p.x.abs() - h.x).max(DVec2::new(p.y, p.z).length() - h.y.min(h.z))
            }
            PartShape::Wedge => {
                boxed.max((p.y * size.z - p.z * size.y) / DVec2::new(size.y, size.z).length())
            }
            PartShape::CornerWedge => {
                let c = [
                    DVec3::new(-h.x, -h.y, -h.z),
                    DVec3::new(h.x, -h.y, -h.z),
                    DVec3::new(h.x, -h.y, h.z),
                    DVec3::new(-h.x, -h.y, h.z),
                    DVec3::new(h.x, h.y, -h.z),
                ];
                let centroid = c.iter().sum::<DVec3>() / 5.0;
                [[0, 1, 2], [1, 2, 4], [0, 1, 4], [2, 3, 4], [3, 0, 4]]
                    .iter()
                    .map(|&[i, j, k]| {
                        let mut n = (c[j] - c[i]).cross(c[k] - c[i]).normalize();
                        if n.dot(centroid - c[i]) > 0.0 {
                            n = -n;
                        }
                        n.dot(p - c[i])
                    })
                    .fold(f64::NEG_INFINITY, f64::max)
            }
        }
    }

    fn shape_strategy() -> impl Strategy<Value = PartShape> {
        prop_oneof![
            Just(PartShape::Block),
            Just(PartShape::Ball),
            Just(PartShape::Cylinder),
            Just(PartShape::Wedge),
            Just(PartShape::CornerWedge),
        ]
    }

    fn vec_strategy(lo: f32, hi: f32) -> impl Strategy<Value = Vec3> {
        (lo..hi, lo..hi, lo..hi).prop_map(|(x, y, z)| v(x, y, z))
    }

    fn rotation_strategy() -> impl Strategy<Value = Quat> {
        (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0).prop_map(|(x, y, z, w)| {
            let q = Quat::from_xyzw(x, y, z, w);
            if q.length() > 0.1 {
                q.normalize()
            } else {
                Quat::IDENTITY
            }
        })
    }

    fn body_strategy() -> impl Strategy<Value = Body> {
        (
            shape_strategy(),
            vec_strategy(0.2, 6.0),
            rotation_strategy(),
            vec_strategy(-3.0, 3.0),
        )
            .prop_map(|(shape, size, rot, pos)| turned(shape, size, rot, pos))
    }

    /// `b` moved by `by`.
    fn shifted(b: &Body, by: Vec3) -> Body {
        let mut moved = *b;
        moved.cframe.translation += glam::Vec3A::from(by);
        moved
    }

    fn local(b: &Body, p: Vec3) -> DVec3 {
        let s = Solid::at(b, DVec3::ZERO);
        s.rot.transpose() * (p.as_dvec3() - s.pos)
    }

    proptest! {
        #[test]
        fn a_hit_lies_on_the_surface_facing_out(b in body_strategy(), origin in vec_strategy(-8.0, 8.0), dir in vec_strategy(-16.0, 16.0)) {
            let size = b.size.as_dvec3();
            let start = reference_depth(b.shape, size, local(&b, origin));
            match b.raycast(origin, dir) {
                Some(hit) => {
                    prop_assert!((0.0..=1.0).contains(&hit.t));
                    prop_assert!((hit.normal.length() - 1.0).abs() < 1e-5);
                    prop_assert!(hit.position.distance(origin + dir * hit.t) < 1e-4);
                    let p = local(&b, hit.position);
                    let depth = reference_depth(b.shape, size, p);
                    // On the surface (a start on it may be up to TOLERANCE inside).
                    prop_assert!(depth.abs() < 2e-3, "depth {depth} at {p}");
                    // The plane through the hit with the hit's normal supports the solid.
                    let n = hit.normal;
                    let gap = b.support(n).dot(n) - hit.position.dot(n);
                    prop_assert!(gap.abs() < 2e-3, "support gap {gap}");
                    // The ray was heading in.
                    prop_assert!(dir.dot(n) <= 1e-4 * dir.length());
                }
                None => {
                    if start > 1e-4 {
                        // Starting outside and missing: no point of the segment is inside.
                        for i in 0..=64 {
                            let q = origin + dir * (i as f32 / 64.0);
                            let d = reference_depth(b.shape, size, local(&b, q));
                            prop_assert!(d > -1e-4, "point {i}/64 of a miss is {d} inside");
                        }
                    }
                }
            }
            if start < -2e-3 {
                prop_assert!(b.raycast(origin, dir).is_none(), "a ray from inside hit");
            }
        }

        #[test]
        fn a_sweep_stops_at_the_first_contact(moving in body_strategy(), target in body_strategy(), offset in vec_strategy(-8.0, 8.0), aim in 0.5f32..3.0, noise in vec_strategy(-4.0, 4.0)) {
            let moving = shifted(&moving, offset);
            let from = Vec3::from(moving.cframe.translation);
            let dir = (Vec3::from(target.cframe.translation) - from) * aim + noise;
            match sweep(&moving, dir, &target) {
                Some(hit) => {
                    let (t, n, p) = (hit.t, hit.normal, hit.position);
                    prop_assert!((0.0..=1.0).contains(&t));
                    prop_assert!((n.length() - 1.0).abs() < 1e-5);
                    prop_assert!(n.dot(dir) <= 1e-5 * dir.length(), "normal {n} along {dir}");
                    // No contact before t...
                    prop_assert!(!overlaps_by(&shifted(&moving, dir * (0.999 * t)), &target, 1e-3));
                    // ...and touching at t: the point lies on both surfaces (the moved solid's
                    // and the target's), and the normal's plane there supports the target.
                    let on_target = reference_depth(target.shape, target.size.as_dvec3(), local(&target, p));
                    let on_moved = reference_depth(moving.shape, moving.size.as_dvec3(), local(&moving, p - dir * t));
                    prop_assert!(on_target.abs() < 5e-3 && on_moved.abs() < 5e-3, "{p}: {on_target}, {on_moved}: {hit:?} dir {dir}");
                    let gap = target.support(n).dot(n) - p.dot(n);
                    prop_assert!(gap.abs() < 5e-3, "support gap {gap}: {hit:?}");
                    // The moved solid reaches that plane from the other side: the two touch
                    // (their distance along the normal is 0).
                    let moved = shifted(&moving, dir * t);
                    let reach = p.dot(n) - moved.support(-n).dot(n);
                    prop_assert!(reach.abs() < 5e-3, "moved solid's reach {reach}: {hit:?} dir {dir}");
                }
                None => {
                    if !overlaps(&moving, &target) {
                        // A miss never passes through the target.
                        for i in 0..=32 {
                            let at_i = shifted(&moving, dir * (i as f32 / 32.0));
                            prop_assert!(!overlaps_by(&at_i, &target, 3e-3), "step {i}/32 overlaps: {moving:?} {target:?} {dir:?}");
                        }
                    }
                }
            }
        }

        #[test]
        fn a_tiny_sphere_sweeps_like_a_ray(b in body_strategy(), origin in vec_strategy(-8.0, 8.0), dir in vec_strategy(-16.0, 16.0)) {
            let start = reference_depth(b.shape, b.size.as_dvec3(), local(&b, origin));
            prop_assume!(start > 2e-3);
            let swept = sweep(&Body::sphere(origin, 1e-3), dir, &b);
            if let Some(ray) = b.raycast(origin, dir) {
                let Some(hit) = swept else {
                    return Err(TestCaseError::fail(format!("ray {ray:?} hit, the sphere missed")));
                };
                // The sphere holds the ray's point: it arrives no later.
                prop_assert!(hit.t <= ray.t + 1e-5, "{hit:?} after {ray:?}");
                // Heading into the surface at a stud per unit of t or more, its radius makes
                // less than 1e-3 of t.
                if -ray.normal.dot(dir) >= 1.0 {
                    prop_assert!((hit.t - ray.t).abs() <= 1e-3, "{hit:?} vs {ray:?}");
                    prop_assert!(hit.position.distance(ray.position) < 0.05, "{hit:?} vs {ray:?}");
                }
            }
        }

        #[test]
        fn overlaps_is_symmetric(a in body_strategy(), b in body_strategy()) {
            prop_assert_eq!(overlaps(&a, &b), overlaps(&b, &a));
        }

        #[test]
        fn solids_sharing_a_deep_point_overlap(a in body_strategy(), b in body_strategy()) {
            // A point 0.01 deep in both: no move shorter than 0.01 separates them.
            let ((alo, ahi), (blo, bhi)) = (a.aabb(), b.aabb());
            let (lo, hi) = (alo.max(blo), ahi.min(bhi));
            if !lo.cmplt(hi).all() {
                return Ok(());
            }
            let mut shared = None;
            'grid: for i in 0..=10 {
                for j in 0..=10 {
                    for k in 0..=10 {
                        let p = lo + (hi - lo) * v(i as f32, j as f32, k as f32) / 10.0;
                        let da = reference_depth(a.shape, a.size.as_dvec3(), local(&a, p));
                        let db = reference_depth(b.shape, b.size.as_dvec3(), local(&b, p));
                        if da < -0.01 && db < -0.01 {
                            shared = Some(p);
                            break 'grid;
                        }
                    }
                }
            }
            if let Some(p) = shared {
                prop_assert!(overlaps(&a, &b), "both hold {p} deep inside");
            }
        }

        #[test]
        fn overlaps_agrees_with_box_sat(a in body_strategy(), size in vec_strategy(0.2, 6.0), pos in vec_strategy(-3.0, 3.0)) {
            let a = Body { shape: PartShape::Block, ..a };
            let b = at(PartShape::Block, size, pos);
            let (lo, hi) = b.aabb();
            let depth = box_aabb_depth(&a.cframe, a.size, lo, hi);
            prop_assume!((depth - f64::from(TOLERANCE)).abs() > 1e-5);
            prop_assert_eq!(overlaps(&a, &b), depth > f64::from(TOLERANCE), "depth {}", depth);
        }

        #[test]
        fn overlaps_of_a_ball_agrees_with_sphere_against_box(r in 0.1f32..3.0, center in vec_strategy(-4.0, 4.0), size in vec_strategy(0.2, 6.0), pos in vec_strategy(-3.0, 3.0)) {
            let ball = at(PartShape::Ball, Vec3::splat(2.0 * r), center);
            let block = at(PartShape::Block, size, pos);
            let (lo, hi) = block.aabb();
            let depth = sphere_aabb_depth(center, r, lo, hi);
            prop_assume!((depth - f64::from(TOLERANCE)).abs() > 1e-5);
            prop_assert_eq!(overlaps(&ball, &block), depth > f64::from(TOLERANCE), "depth {}", depth);
        }

        #[test]
        fn balls_overlap_when_nearer_than_their_radii(r1 in 0.1f32..3.0, r2 in 0.1f32..3.0, c1 in vec_strategy(-4.0, 4.0), c2 in vec_strategy(-4.0, 4.0)) {
            let depth = f64::from(r1) + f64::from(r2) - c1.as_dvec3().distance(c2.as_dvec3());
            prop_assume!((depth - f64::from(TOLERANCE)).abs() > 1e-4);
            let (a, b) = (at(PartShape::Ball, Vec3::splat(2.0 * r1), c1), at(PartShape::Ball, Vec3::splat(2.0 * r2), c2));
            prop_assert_eq!(overlaps(&a, &b), depth > f64::from(TOLERANCE), "depth {}", depth);
        }
    }

    #[test]
    fn closest_point_is_on_the_solid_and_nearer_than_any_sampled_point_of_it() {
        let shapes = [
            PartShape::Block,
            PartShape::Ball,
            PartShape::Cylinder,
            PartShape::Wedge,
            PartShape::CornerWedge,
        ];
        let size = Vec3::new(4.0, 2.0, 6.0);
        let cframe = Affine3A::from_rotation_translation(
            glam::Quat::from_euler(glam::EulerRot::YXZ, 0.4, -0.3, 0.2),
            Vec3::new(3.0, -1.0, 2.0),
        );
        // A deterministic spray of points around the part.
        let mut seed = 12345u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
        };
        // Membership written from the shapes' definitions (`PartShape`), independently of the
        // code under test, with `slack` studs of tolerance.
        let h = size * 0.5;
        let contains = |shape: PartShape, w: Vec3, slack: f32| {
            let l = cframe.inverse().transform_point3(w);
            let in_box = l.abs().cmple(h + slack).all();
            match shape {
                PartShape::Block => in_box,
                PartShape::Ball => l.length() <= h.min_element() + slack,
                PartShape::Cylinder => {
                    l.x.abs() <= h.x + slack
                        && (l.y * l.y + l.z * l.z).sqrt() <= h.y.min(h.z) + slack
                }
                PartShape::Wedge => in_box && l.y * h.z - l.z * h.y <= slack * size.length(),
                PartShape::CornerWedge => {
                    in_box
                        && -h.y * l.x + h.x * l.y <= slack * size.length()
                        && h.z * l.y + h.y * l.z <= slack * size.length()
                }
            }
        };
        for shape in shapes {
            let body = Body::new(shape, cframe, size);
            // Points of the solid, to compare distances with (a grid filtered by membership).
            let mut samples = Vec::new();
            let n = 24;
            for i in 0..=n {
                for j in 0..=n {
                    for k in 0..=n {
                        let l = Vec3::new(i as f32, j as f32, k as f32) / n as f32 - 0.5;
                        let w = cframe.transform_point3(l * size);
                        if contains(shape, w, 0.0) {
                            samples.push(w);
                            // Inside: returned as it is (well inside: exactly).
                            let q = body.closest_point(w);
                            assert!(q.distance(w) < 1e-4, "{shape:?} {w} {q}");
                            if contains(shape, w, -1e-2) {
                                assert_eq!(q, w, "{shape:?}");
                            }
                        }
                    }
                }
            }
            assert!(samples.len() > 100, "{shape:?}");
            for _ in 0..200 {
                let p = cframe.transform_point3(Vec3::new(rnd(), rnd(), rnd()) * size * 1.5);
                let q = body.closest_point(p);
                // On the solid (to rounding).
                assert!(contains(shape, q, 1e-3), "{shape:?} {p} {q}");
                let d = p.distance(q);
                let nearest_sample = samples
                    .iter()
                    .map(|s| p.distance(*s))
                    .fold(f32::INFINITY, f32::min);
                assert!(
                    d <= nearest_sample + 1e-3,
                    "{shape:?} {p}: {d} > {nearest_sample}"
                );
            }
        }
        // A point inside comes back as it is; a point straight above a block's top lands on it.
        let block = Body::new(
            PartShape::Block,
            Affine3A::IDENTITY,
            Vec3::new(4.0, 2.0, 6.0),
        );
        assert_eq!(
            block.closest_point(Vec3::new(0.5, 0.2, -1.0)),
            Vec3::new(0.5, 0.2, -1.0)
        );
        assert_eq!(
            block.closest_point(Vec3::new(1.0, 10.0, 2.0)),
            Vec3::new(1.0, 1.0, 2.0)
        );
        // Above a wedge's slope, the nearest point is on the slope.
        let wedge = Body::new(
            PartShape::Wedge,
            Affine3A::IDENTITY,
            Vec3::new(2.0, 2.0, 2.0),
        );
        let q = wedge.closest_point(Vec3::new(0.0, 1.0, -1.0));
        assert!((q - Vec3::new(0.0, 0.0, 0.0)).length() < 1e-5, "{q}");
    }
}
