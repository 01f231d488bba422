//! The geometry of a grid fill, shared by every fill path: the grid descriptions
//! ([`Grid2`], [`Grid3`]), the x coordinates of a row's vectors and the store of a vector
//! cut at the end of its row. Owns no evaluation; must never depend on the fill paths.

use crate::simd::Simd;

/// A 2D grid: sample `(i, j)` is at `x = origin[0] + (i as f32) * step[0]`,
/// `y = origin[1] + (j as f32) * step[1]` (f32 arithmetic, no FMA) and is stored at
/// `out[j * size[0] + i]` — row-major, x fastest.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid2 {
    /// Coordinates of sample (0, 0).
    pub origin: [f32; 2],
    /// Spacing between samples per axis.
    pub step: [f32; 2],
    /// Samples per axis `[nx, ny]`.
    pub size: [usize; 2],
}

/// A 3D grid: sample `(i, j, k)` is at `origin + (index as f32) * step` per axis and is
/// stored at `out[(k * size[1] + j) * size[0] + i]` — x fastest, then y, then z.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid3 {
    /// Coordinates of sample (0, 0, 0).
    pub origin: [f32; 3],
    /// Spacing between samples per axis.
    pub step: [f32; 3],
    /// Samples per axis `[nx, ny, nz]`.
    pub size: [usize; 3],
}

/// Stores one vector of a row at `out[i..]`, cutting it at the end of the row.
#[inline(always)]
pub(crate) fn put<S: Simd>(v: S::F, out: &mut [f32], i: usize) {
    if i + S::LANES <= out.len() {
        S::store(v, &mut out[i..]);
    } else {
        let mut tmp = [0.0f32; 64];
        S::store(v, &mut tmp);
        let n = out.len() - i;
        out[i..].copy_from_slice(&tmp[..n]);
    }
}

/// The x coordinates of lanes `i..i + LANES` of a row.
#[inline(always)]
fn xs<S: Simd>(x0: f32, dx: f32, i: usize) -> S::F {
    S::f(x0) + (S::f(i as f32) + S::iota()) * S::f(dx)
}

/// `pre` of the x coordinates of a row, vector by vector: the same for every row, so they
/// are computed once per call instead of once per sample (the row loops only load them).
#[inline(always)]
pub(crate) fn row_xs<S: Simd>(
    x0: f32,
    dx: f32,
    nx: usize,
    pre: impl Fn(S::F) -> S::F,
) -> Vec<S::F> {
    let mut xv = Vec::with_capacity(nx.div_ceil(S::LANES));
    for i in (0..nx).step_by(S::LANES) {
        xv.push(pre(xs::<S>(x0, dx, i)));
    }
    xv
}
