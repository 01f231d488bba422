//! Single-octave Perlin grid fills by lattice cell. In a grid every row has a fixed y (and z);
//! only x varies along it, and the x values of a row are the same for every row. Neighbouring
//! samples of a row nearly always share their lattice cell along x (the benchmark's step is
//! 0.031, so 32 samples per cell), and everything [`kernels::perlin3`] hashes depends only on
//! the three cell coordinates. So the hash chain — 14 permutation lookups per sample, each
//! about sixteen byte shuffles on AVX2 — is done once per row and x cell in scalar code, and
//! a vector only broadcasts (or, for lanes in several cells, blends) its corners' gradient
//! parts before the floating-point work every level performs.
//!
//! The values are those of [`kernels::perlin3`] / [`kernels::perlin2`], bit for bit:
//! - x: each vector's `floor`, fraction and fade are computed once per call, by the level, from
//!   the same x lanes as the reference loop (`origin + (i + lane)·step`, times the frequency);
//! - y and z: computed once per row with the [`Scalar`] level's operations, whose semantics
//!   every level shares (IEEE `floorf`, `cvttps2dq`'s out-of-range `i32::MIN`, masked table
//!   indices); the lanes of the reference's `S::f(y0 + j·dy) · S::f(fr)` are the same f32
//!   product as the scalar one;
//! - the hash chain and the gradient tables are the reference's, at the cell's `xi`: a lane
//!   is in a cell when its `floor(x)` equals the cell's value (`==`, so −0 and +0 are one
//!   cell, and `trunc` gives the same `xi` for both);
//! - a corner's gradient term is `(GX·x + GY·y) + GZ·z` in the reference; here `GY·y` and
//!   `GZ·z` are scalar products per row (the same f32 products as in every lane) and a lane
//!   computes `(gx·xf + gyy) + gzz` — the same operations on the same values, in the same
//!   order; the lerp tree is the reference's, with the same pairing.
//!
//! A vector with a lane in no cell (its `floor(x)` is NaN) takes the reference kernel. A call
//! takes the reference loop for everything where the cell path stops paying (coarse steps):
//! if a row has more than one cell per two samples (the per-row hashing then costs about
//! what it saves on the scalar level), or its vectors lie in more than 2.5 cells each on
//! average (each further cell costs a blend per gradient component; with AVX2's eight lanes
//! this is a step above about 0.21 lattice units, with SSE2's four about 0.5). Measured on a
//! Zen 1 host (wall clock, noisy): at step 0.2 the AVX2 cell path is still 1.2–2× the
//! reference loop, at 0.37 it was slower (0.7–1×), while the scalar level gains at 0.5 still.

use crate::kernels::{self, GX, GY, GZ, fade, lerp};
use crate::layout::{Grid2, Grid3, put, row_xs};
use crate::simd::{Perm, Scalar, Simd};

/// How a level fills the rows of a single octave of Perlin noise: [`ByCell`] by lattice cell
/// (this module) on the vectors it names, which may be narrower than the reference loop's
/// (every level takes it; a fill it declines runs the reference loop).
pub(crate) trait PerlinRows {
    /// Fills rows `first..` of `g` into `out` (whole rows) with `perlin2` of permutation `p` at
    /// frequency `fr`, or returns `false` without writing if the caller should do it.
    fn rows2(p: &Perm, fr: f32, g: &Grid2, first: usize, out: &mut [f32]) -> bool;
    /// [`PerlinRows::rows2`] for `perlin3` (row = `k * ny + j`).
    fn rows3(p: &Perm, fr: f32, g: &Grid3, first: usize, out: &mut [f32]) -> bool;
}

/// The cell path on `S` vectors.
pub(crate) struct ByCell<S>(core::marker::PhantomData<S>);

impl<S: Simd> PerlinRows for ByCell<S> {
    #[inline(always)]
    fn rows2(p: &Perm, fr: f32, g: &Grid2, first: usize, out: &mut [f32]) -> bool {
        let Some(c) = Call::<S>::new(g.origin[0], g.step[0], g.size[0], fr) else {
            return false;
        };
        rows2::<S>(p, fr, g, first, out, &c);
        true
    }
    #[inline(always)]
    fn rows3(p: &Perm, fr: f32, g: &Grid3, first: usize, out: &mut [f32]) -> bool {
        let Some(c) = Call::<S>::new(g.origin[0], g.step[0], g.size[0], fr) else {
            return false;
        };
        rows3::<S>(p, fr, g, first, out, &c);
        true
    }
}

/// [`Vector::first`] of a vector that takes the reference kernel.
const REFERENCE: usize = usize::MAX;

/// One x vector of a row: its coordinates, the x parts of the kernel and the cells its lanes
/// lie in.
struct Vector<S: Simd> {
    /// The coordinates (for the reference kernel).
    x: S::F,
    /// `x − floor(x)`, that minus one, and the fade of the former.
    xf: S::F,
    xf1: S::F,
    u: S::F,
    /// The first lane's cell (an index into [`Call::cells`]), or [`REFERENCE`].
    first: usize,
    /// The other cells: `Call::masks[from..to]`, each a cell and the lanes in it.
    from: usize,
    to: usize,
}

/// What a call computes once for all its rows: the vectors of a row and the distinct x cells
/// (`floor(x)` values) their lanes lie in.
struct Call<S: Simd> {
    cells: Vec<f32>,
    vectors: Vec<Vector<S>>,
    masks: Vec<(usize, S::M)>,
}

impl<S: Simd> Call<S> {
    /// The row's vectors and cells, or `None` if the row has more than one cell per two
    /// samples or its vectors more than 1.5 further cells each on average (see the module
    /// docs).
    #[inline(always)]
    fn new(x0: f32, dx: f32, nx: usize, fr: f32) -> Option<Call<S>> {
        let frv = S::f(fr);
        let xs = row_xs::<S>(
            x0,
            dx,
            nx,
            #[inline(always)]
            |v| v * frv,
        );
        let mut c = Call {
            cells: Vec::new(),
            vectors: Vec::with_capacity(xs.len()),
            masks: Vec::new(),
        };
        for x in xs {
            let xfl = S::floor(x);
            let xf = x - xfl;
            let mut lanes = [0.0f32; 64];
            S::store(xfl, &mut lanes);
            // The vector's distinct cells in lane order, as values and as indices into
            // `cells`. Lanes are monotonic in x, so a new value is a new cell unless it is the
            // last one found; a repeated cell (were they not) would only cost time, as both
            // copies hold the same gradients.
            let mut own: [(f32, usize); 64] = [(0.0, 0); 64];
            let mut n = 0;
            let mut in_cells = true;
            for &l in &lanes[..S::LANES] {
                if l.is_nan() {
                    in_cells = false;
                    break;
                }
                if own[..n].iter().any(|&(v, _)| v == l) {
                    continue;
                }
                let k = match c.cells.last() {
                    Some(&last) if last == l => c.cells.len() - 1,
                    _ => {
                        c.cells.push(l);
                        if c.cells.len() * 2 > nx {
                            return None;
                        }
                        c.cells.len() - 1
                    }
                };
                own[n] = (l, k);
                n += 1;
            }
            let from = c.masks.len();
            let first = if in_cells {
                for &(v, k) in &own[1..n] {
                    let cv = S::f(v);
                    c.masks.push((k, S::mand(S::le(xfl, cv), S::le(cv, xfl))));
                }
                own[0].1
            } else {
                REFERENCE
            };
            c.vectors.push(Vector {
                x,
                xf,
                xf1: xf - S::f(1.0),
                u: fade::<S>(xf),
                first,
                from,
                to: c.masks.len(),
            });
        }
        // Each further cell of a vector costs a blend per gradient component (24 in 3D).
        if c.masks.len() * 2 > c.vectors.len() * 3 {
            return None;
        }
        Some(c)
    }
}

/// The y (or z) parts of a row, as the reference computes them per lane: `floor(y) & 255`
/// as an index, the fraction, the fraction minus one and the fade.
struct Axis {
    i: <Scalar as Simd>::I,
    f: f32,
    f1: f32,
    fade: f32,
}

#[inline(always)]
fn axis(y: f32) -> Axis {
    let fl = Scalar::floor(y);
    let f = y - fl;
    Axis {
        i: Scalar::trunc(fl) & Scalar::i(255),
        f,
        f1: f - 1.0,
        fade: fade::<Scalar>(f),
    }
}

/// The gradient of permutation entry `h` as `[GX, GY, GZ]` (the reference's `pg` lookups).
#[inline(always)]
fn grad(p: &Perm, h: <Scalar as Simd>::I) -> [f32; 3] {
    let h = Scalar::lut256(p, h);
    [
        Scalar::lut16(&GX, h),
        Scalar::lut16(&GY, h),
        Scalar::lut16(&GZ, h),
    ]
}

/// A component of a vector's corner gradients: the first cell's value, overwritten per lane
/// by each other cell's (`masks` is empty for the common one-cell vector: a broadcast).
#[inline(always)]
fn pick<S: Simd, const N: usize>(
    grads: &[[f32; N]],
    first: &[f32; N],
    masks: &[(usize, S::M)],
    k: usize,
) -> S::F {
    let mut acc = S::f(first[k]);
    for &(c, m) in masks {
        acc = S::sel(m, S::f(grads[c][k]), acc);
    }
    acc
}

/// Corner `n`'s gradient term of [`kernels::perlin2`] (`gx·x + GY·y`) from [`corners2`]'s `f`.
#[inline(always)]
fn dot2<S: Simd>(f: &impl Fn(usize) -> S::F, n: usize, x: S::F) -> S::F {
    f(2 * n) * x + f(2 * n + 1)
}

/// Corner `n`'s gradient term of [`kernels::perlin3`] (`(gx·x + GY·y) + GZ·z`) from
/// [`corners3`]'s `f`.
#[inline(always)]
fn dot3<S: Simd>(f: &impl Fn(usize) -> S::F, n: usize, x: S::F) -> S::F {
    (f(3 * n) * x + f(3 * n + 1)) + f(3 * n + 2)
}

/// [`kernels::perlin2`]'s corner sum for an x vector: `f(2n)` is corner `n`'s `gx` and
/// `f(2n + 1)` its `GY·y` (corners aa, ba, ab, bb), `v` the fade of y.
#[inline(always)]
fn corners2<S: Simd>(vec: &Vector<S>, v: S::F, f: impl Fn(usize) -> S::F) -> S::F {
    let la = lerp::<S>(vec.u, dot2::<S>(&f, 0, vec.xf), dot2::<S>(&f, 1, vec.xf1));
    let lb = lerp::<S>(vec.u, dot2::<S>(&f, 2, vec.xf), dot2::<S>(&f, 3, vec.xf1));
    // kernels::perlin2's final `+ 0`.
    lerp::<S>(v, la, lb) + S::f(0.0)
}

/// [`kernels::perlin3`]'s corner sum for an x vector: `f(3n)`, `f(3n + 1)` and `f(3n + 2)`
/// are corner `n`'s `gx`, `GY·y` and `GZ·z` (corners aa, ba, ab, bb, then the same at z + 1),
/// `v` and `w` the fades of y and z.
#[inline(always)]
fn corners3<S: Simd>(vec: &Vector<S>, v: S::F, w: S::F, f: impl Fn(usize) -> S::F) -> S::F {
    let (xf, xf1, u) = (vec.xf, vec.xf1, vec.u);
    let la = lerp::<S>(u, dot3::<S>(&f, 0, xf), dot3::<S>(&f, 1, xf1));
    let lb = lerp::<S>(u, dot3::<S>(&f, 2, xf), dot3::<S>(&f, 3, xf1));
    let la1 = lerp::<S>(u, dot3::<S>(&f, 4, xf), dot3::<S>(&f, 5, xf1));
    let lb1 = lerp::<S>(u, dot3::<S>(&f, 6, xf), dot3::<S>(&f, 7, xf1));
    lerp::<S>(w, lerp::<S>(v, la, lb), lerp::<S>(v, la1, lb1))
}

/// Rows `first..` of a 2D grid (see the module docs).
#[inline(always)]
fn rows2<S: Simd>(p: &Perm, fr: f32, g: &Grid2, first: usize, out: &mut [f32], c: &Call<S>) {
    let (m, one) = (Scalar::i(255), Scalar::i(1));
    // Per cell: `[gx, GY·y]` of corners aa, ba, ab, bb (kernels::perlin2's order).
    let mut grads: Vec<[f32; 8]> = vec![[0.0; 8]; c.cells.len()];
    for (r, line) in out.chunks_mut(g.size[0]).enumerate() {
        let y = (g.origin[1] + ((first + r) as f32) * g.step[1]) * fr;
        let ya = axis(y);
        for (gr, &cell) in grads.iter_mut().zip(&c.cells) {
            // kernels::perlin2's hash chain at this cell.
            let xi = Scalar::trunc(cell) & m;
            let a = (Scalar::lut256(p, xi) + ya.i) & m;
            let aa = Scalar::lut256(p, a);
            let ab = Scalar::lut256(p, (a + one) & m);
            let b = (Scalar::lut256(p, (xi + one) & m) + ya.i) & m;
            let ba = Scalar::lut256(p, b);
            let bb = Scalar::lut256(p, (b + one) & m);
            for (n, (h, yy)) in [(aa, ya.f), (ba, ya.f), (ab, ya.f1), (bb, ya.f1)]
                .into_iter()
                .enumerate()
            {
                let [gx, gy, _] = grad(p, h);
                gr[2 * n] = gx;
                gr[2 * n + 1] = gy * yy;
            }
        }
        let yv = S::f(y);
        let v = S::f(ya.fade);
        for (i, vec) in c.vectors.iter().enumerate() {
            let val = if vec.first == REFERENCE {
                kernels::perlin2::<S>(p, vec.x, yv)
            } else {
                let g0 = &grads[vec.first];
                if vec.from == vec.to {
                    corners2::<S>(
                        vec,
                        v,
                        #[inline(always)]
                        |k| S::f(g0[k]),
                    )
                } else {
                    let masks = &c.masks[vec.from..vec.to];
                    corners2::<S>(
                        vec,
                        v,
                        #[inline(always)]
                        |k| pick::<S, 8>(&grads, g0, masks, k),
                    )
                }
            };
            put::<S>(val, line, i * S::LANES);
        }
    }
}

/// Rows `first..` (row = `k * ny + j`) of a 3D grid (see the module docs).
#[inline(always)]
fn rows3<S: Simd>(p: &Perm, fr: f32, g: &Grid3, first: usize, out: &mut [f32], c: &Call<S>) {
    let (m, one) = (Scalar::i(255), Scalar::i(1));
    // Per cell: `[gx, GY·y, GZ·z]` of corners aa, ba, ab, bb, then the same at z + 1
    // (kernels::perlin3's order).
    let mut grads: Vec<[f32; 24]> = vec![[0.0; 24]; c.cells.len()];
    for (r, line) in out.chunks_mut(g.size[0]).enumerate() {
        let idx = first + r;
        let (j, k) = (idx % g.size[1], idx / g.size[1]);
        let y = (g.origin[1] + (j as f32) * g.step[1]) * fr;
        let z = (g.origin[2] + (k as f32) * g.step[2]) * fr;
        let (ya, za) = (axis(y), axis(z));
        for (gr, &cell) in grads.iter_mut().zip(&c.cells) {
            // kernels::perlin3's hash chain at this cell.
            let xi = Scalar::trunc(cell) & m;
            let a = (Scalar::lut256(p, xi) + ya.i) & m;
            let aa = (Scalar::lut256(p, a) + za.i) & m;
            let ab = (Scalar::lut256(p, (a + one) & m) + za.i) & m;
            let b = (Scalar::lut256(p, (xi + one) & m) + ya.i) & m;
            let ba = (Scalar::lut256(p, b) + za.i) & m;
            let bb = (Scalar::lut256(p, (b + one) & m) + za.i) & m;
            let corners = [
                (aa, ya.f, za.f),
                (ba, ya.f, za.f),
                (ab, ya.f1, za.f),
                (bb, ya.f1, za.f),
                ((aa + one) & m, ya.f, za.f1),
                ((ba + one) & m, ya.f, za.f1),
                ((ab + one) & m, ya.f1, za.f1),
                ((bb + one) & m, ya.f1, za.f1),
            ];
            for (n, (h, yy, zz)) in corners.into_iter().enumerate() {
                let [gx, gy, gz] = grad(p, h);
                gr[3 * n] = gx;
                gr[3 * n + 1] = gy * yy;
                gr[3 * n + 2] = gz * zz;
            }
        }
        let (yv, zv) = (S::f(y), S::f(z));
        let (v, w) = (S::f(ya.fade), S::f(za.fade));
        for (i, vec) in c.vectors.iter().enumerate() {
            let val = if vec.first == REFERENCE {
                kernels::perlin3::<S>(p, vec.x, yv, zv)
            } else {
                let g0 = &grads[vec.first];
                if vec.from == vec.to {
                    corners3::<S>(
                        vec,
                        v,
                        w,
                        #[inline(always)]
                        |k| S::f(g0[k]),
                    )
                } else {
                    let masks = &c.masks[vec.from..vec.to];
                    corners3::<S>(
                        vec,
                        v,
                        w,
                        #[inline(always)]
                        |k| pick::<S, 24>(&grads, g0, masks, k),
                    )
                }
            };
            put::<S>(val, line, i * S::LANES);
        }
    }
}
