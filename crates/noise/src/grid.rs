//! The bulk path: fill a caller's slice with a 2D or 3D grid, choosing the SIMD level at
//! run time and optionally splitting rows across rayon threads. Output bytes never depend on
//! the level or the thread count.

use crate::error::NoiseError;
use crate::generator::{Basis, Fractal, Noise, eval2, eval3};
use crate::kernels;
use crate::layout::{Grid2, Grid3, put, row_xs};
use crate::level::{SIMD_ENV, SimdLevel};
use crate::pgrid::{self, PerlinRows};
use crate::s3grid;
use crate::simd::{CellLanes, Scalar, Simd};
use rayon::prelude::*;

/// Choosing a level for a fill: these return the crate's error, so they live beside the
/// sampler rather than with the level type (which the error names).
impl SimdLevel {
    /// The level used when [`Exec::simd`] is `None`: the one [`SIMD_ENV`] names, read once
    /// per process, or [`SimdLevel::best`] if it is unset, empty or `auto`. Errors if the
    /// variable names no level, or a level this CPU lacks.
    pub fn auto() -> Result<SimdLevel, NoiseError> {
        static FORCED: std::sync::OnceLock<Result<Option<SimdLevel>, NoiseError>> =
            std::sync::OnceLock::new();
        let forced = FORCED.get_or_init(|| match std::env::var(SIMD_ENV) {
            Ok(v) => SimdLevel::parse(&v),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(v)) => {
                Err(NoiseError::SimdEnv(v.to_string_lossy().into_owned()))
            }
        });
        match forced.clone()? {
            None => Ok(Self::best()),
            Some(l) if l.is_available() => Ok(l),
            Some(l) => Err(NoiseError::Unavailable(l)),
        }
    }

    /// Parses a [`SIMD_ENV`] value: a level's [`SimdLevel::name`], `portable` (the same as
    /// `scalar`), or `auto` / empty for "the best available" (`None`). Surrounding spaces and
    /// letter case are ignored.
    pub fn parse(s: &str) -> Result<Option<SimdLevel>, NoiseError> {
        let v = s.trim().to_ascii_lowercase();
        match v.as_str() {
            "" | "auto" => Ok(None),
            "portable" => Ok(Some(Self::Scalar)),
            _ => Self::ALL
                .into_iter()
                .find(|l| l.name() == v)
                .map(Some)
                .ok_or_else(|| NoiseError::SimdEnv(s.to_owned())),
        }
    }
}

/// How to run a bulk fill.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Exec {
    /// Force a level (`None` = [`SimdLevel::auto`]: the best one, unless [`SIMD_ENV`] forces one).
    pub simd: Option<SimdLevel>,
    /// Split rows across the current rayon pool.
    pub parallel: bool,
}

const MAX_AXIS: usize = 1 << 24;
/// Rows per rayon task (any split gives the same bytes).
const ROWS_PER_TASK: usize = 4;

fn check_len(size: &[usize], got: usize) -> Result<usize, NoiseError> {
    let too_big = || NoiseError::GridSize(size.to_vec());
    if size.iter().any(|&s| s > MAX_AXIS) {
        return Err(too_big());
    }
    let expected = size
        .iter()
        .try_fold(1usize, |a, &s| a.checked_mul(s))
        .ok_or_else(too_big)?;
    if expected != got {
        return Err(NoiseError::Len { expected, got });
    }
    Ok(expected)
}

fn level(exec: Exec) -> Result<Path, NoiseError> {
    let l = match exec.simd {
        None => SimdLevel::auto()?,
        Some(l) => l,
    };
    Path::new(l).ok_or(NoiseError::Unavailable(l))
}

/// Rows `first..` of a 2D grid into `out` (whole rows): `f(pre(x), pre(y))` per vector,
/// with `pre(y)` computed once per row and `pre(x)` once per call ([`row_xs`]).
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn rows2_with<S: Simd>(
    g: &Grid2,
    first: usize,
    out: &mut [f32],
    pre: impl Fn(S::F) -> S::F,
    f: impl Fn(S::F, S::F) -> S::F,
) {
    let xv = row_xs::<S>(g.origin[0], g.step[0], g.size[0], &pre);
    for (r, line) in out.chunks_mut(g.size[0]).enumerate() {
        let y = pre(S::f(g.origin[1] + ((first + r) as f32) * g.step[1]));
        for (v, &x) in xv.iter().enumerate() {
            put::<S>(f(x, y), line, v * S::LANES);
        }
    }
}

/// Rows `first..` (row = `k * ny + j`) of a 3D grid into `out`: `f(pre(x), pre(y), pre(z))`
/// per vector (see [`rows2_with`]).
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn rows3_with<S: Simd>(
    g: &Grid3,
    first: usize,
    out: &mut [f32],
    pre: impl Fn(S::F) -> S::F,
    f: impl Fn(S::F, S::F, S::F) -> S::F,
) {
    let xv = row_xs::<S>(g.origin[0], g.step[0], g.size[0], &pre);
    for (r, line) in out.chunks_mut(g.size[0]).enumerate() {
        let idx = first + r;
        let (j, k) = (idx % g.size[1], idx / g.size[1]);
        let y = pre(S::f(g.origin[1] + (j as f32) * g.step[1]));
        let z = pre(S::f(g.origin[2] + (k as f32) * g.step[2]));
        for (v, &x) in xv.iter().enumerate() {
            put::<S>(f(x, y, z), line, v * S::LANES);
        }
    }
}

/// The y/z parts of the skew of row `idx` of `g`: `b`, `y + b` and `z + b`.
#[inline(always)]
fn s3_row<S: Simd>(g: &Grid3, idx: usize, fr: S::F) -> (S::F, S::F, S::F) {
    let (j, k) = (idx % g.size[1], idx / g.size[1]);
    let y = S::f(g.origin[1] + (j as f32) * g.step[1]) * fr;
    let z = S::f(g.origin[2] + (k as f32) * g.step[2]) * fr;
    let (_, b) = kernels::s3_skew_parts::<S>(S::f(0.0), y, z);
    (b, y + b, z + b)
}

/// [`rows3_with`] for a single octave of [`kernels::simplex3`] at frequency `fr`: the x parts
/// of its skew are computed once per call and the y/z parts once per row, so a vector costs
/// three adds before [`kernels::simplex3_skewed`] (the same operations, so the same values);
/// `corners` is [`kernels::s3_corners`] or a function with the same values.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn rows3_simplex<S: Simd>(
    seed: i32,
    fr: S::F,
    g: &Grid3,
    first: usize,
    out: &mut [f32],
    mut corners: impl FnMut(&kernels::S3Cell<S>) -> S::F,
) {
    let zero = S::f(0.0);
    let parts: Vec<(S::F, S::F)> = row_xs::<S>(g.origin[0], g.step[0], g.size[0], |v| v * fr)
        .into_iter()
        .map(|x| {
            let (xa, _) = kernels::s3_skew_parts::<S>(x, zero, zero);
            (x + xa, xa)
        })
        .collect();
    // Software-pipelined across the whole call (rows included): the cell of the next vector
    // is computed before the corners of this one, so the serial head of one (floor, unskew,
    // hash) overlaps the corner work of the other instead of waiting behind it.
    let (nx, nv) = (g.size[0], parts.len());
    let rows = out.len() / nx;
    let (mut b, mut yb, mut zb) = s3_row::<S>(g, first, fr);
    let (xx, xa) = parts[0];
    let mut next = kernels::s3_cell::<S>(seed, xx + b, yb + xa, zb + xa);
    let (mut r, mut v) = (0, 0);
    while r < rows {
        let c = next;
        let (r1, v1) = if v + 1 < nv { (r, v + 1) } else { (r + 1, 0) };
        if r1 < rows {
            if v1 == 0 {
                (b, yb, zb) = s3_row::<S>(g, first + r1, fr);
            }
            let (xx, xa) = parts[v1];
            next = kernels::s3_cell::<S>(seed, xx + b, yb + xa, zb + xa);
        }
        put::<S>(corners(&c), &mut out[r * nx..(r + 1) * nx], v * S::LANES);
        (r, v) = (r1, v1);
    }
}

/// How a level fills a single octave of 3D simplex noise: `S3Lookup<S>` hashes every corner
/// and looks its gradient up ([`kernels::s3_corners`]); `S3Tables<S>` takes the gradients
/// from per-cell tables ([`s3grid`]). Both give the same bits.
trait S3Rows {
    fn rows(seed: i32, freq: f32, g: &Grid3, first: usize, out: &mut [f32]);
}

struct S3Lookup<S>(core::marker::PhantomData<S>);

impl<S: Simd> S3Rows for S3Lookup<S> {
    #[inline(always)]
    fn rows(seed: i32, freq: f32, g: &Grid3, first: usize, out: &mut [f32]) {
        rows3_simplex::<S>(
            seed,
            S::f(freq),
            g,
            first,
            out,
            #[inline(always)]
            |c| kernels::s3_corners::<S>(seed, c),
        );
    }
}

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct S3Tables<S>(core::marker::PhantomData<S>);

impl<S: CellLanes> S3Rows for S3Tables<S> {
    #[inline(always)]
    fn rows(seed: i32, freq: f32, g: &Grid3, first: usize, out: &mut [f32]) {
        s3grid::Cells::with(
            seed,
            #[inline(always)]
            |cells| {
                rows3_simplex::<S>(
                    seed,
                    S::f(freq),
                    g,
                    first,
                    out,
                    #[inline(always)]
                    |c| s3grid::corners::<S>(cells, seed, c),
                )
            },
        );
    }
}

/// Rows `first..` of a 2D grid, `S` lanes per step. A single unwarped octave (the common
/// case) gets a loop of its own per basis with the coordinates scaled by the frequency once
/// per row; the values are those of [`eval2`] (same operations in the same order). Perlin
/// goes by lattice cell where `P` has a cell path and the grid is fine enough
/// ([`pgrid`]), otherwise through the reference kernel.
#[inline(always)]
fn rows2<S: Simd, P: PerlinRows>(n: &Noise, g: &Grid2, first: usize, out: &mut [f32]) {
    if n.cfg.fractal == Fractal::None && n.cfg.warp.is_none() {
        let o = &n.octaves[0];
        let fr = S::f(n.cfg.frequency);
        match n.cfg.basis {
            Basis::Perlin => {
                let p = &*o.perm;
                if P::rows2(p, n.cfg.frequency, g, first, out) {
                    return;
                }
                return rows2_with::<S>(
                    g,
                    first,
                    out,
                    #[inline(always)]
                    |v| v * fr,
                    #[inline(always)]
                    |x, y| kernels::perlin2::<S>(p, x, y),
                );
            }
            Basis::Simplex => {
                let sd = o.seed;
                return rows2_with::<S>(
                    g,
                    first,
                    out,
                    #[inline(always)]
                    |v| v * fr,
                    #[inline(always)]
                    |x, y| kernels::simplex2::<S>(sd, x, y),
                );
            }
            _ => {}
        }
    }
    rows2_with::<S>(
        g,
        first,
        out,
        #[inline(always)]
        |v| v,
        #[inline(always)]
        |x, y| eval2::<S>(n, x, y),
    );
}

/// Rows `first..` (row = `k * ny + j`) of a 3D grid, `S` lanes per step (`S3` for a single
/// octave of simplex, [`S3Rows`]; `P` for one of Perlin, [`PerlinRows`]); see [`rows2`].
#[inline(always)]
fn rows3<S: Simd, S3: S3Rows, P: PerlinRows>(n: &Noise, g: &Grid3, first: usize, out: &mut [f32]) {
    if n.cfg.fractal == Fractal::None && n.cfg.warp.is_none() {
        let o = &n.octaves[0];
        match n.cfg.basis {
            Basis::Perlin => {
                let p = &*o.perm;
                if P::rows3(p, n.cfg.frequency, g, first, out) {
                    return;
                }
                let fr = S::f(n.cfg.frequency);
                return rows3_with::<S>(
                    g,
                    first,
                    out,
                    #[inline(always)]
                    |v| v * fr,
                    #[inline(always)]
                    |x, y, z| kernels::perlin3::<S>(p, x, y, z),
                );
            }
            Basis::Simplex => {
                return S3::rows(o.seed, n.cfg.frequency, g, first, out);
            }
            _ => {}
        }
    }
    rows3_with::<S>(
        g,
        first,
        out,
        #[inline(always)]
        |v| v,
        #[inline(always)]
        |x, y, z| eval3::<S>(n, x, y, z),
    );
}

#[cfg(target_arch = "x86_64")]
mod entry {
    //! `#[target_feature]` entry points: the generic code is inlined into each, so the
    //! intrinsics compile for that level. Each takes the level's proof token, so calling it
    //! is safe.
    use super::*;
    use crate::simd::{Avx2, Avx512, Sse2, X2};

    /// Four vectors per step.
    type Four<S> = X2<X2<S>>;

    pub(super) fn rows2_sse2(n: &Noise, g: &Grid2, first: usize, out: &mut [f32]) {
        rows2::<Sse2, pgrid::ByCell<Sse2>>(n, g, first, out);
    }
    pub(super) fn rows3_sse2(n: &Noise, g: &Grid3, first: usize, out: &mut [f32]) {
        rows3::<Sse2, S3Lookup<Sse2>, pgrid::ByCell<Sse2>>(n, g, first, out);
    }

    macro_rules! entry {
        ($name:ident, $token:ty, $feat:literal, $grid:ty, $body:expr) => {
            pub(super) fn $name(_: $token, n: &Noise, g: &$grid, first: usize, out: &mut [f32]) {
                #[target_feature(enable = $feat)]
                fn inner(n: &Noise, g: &$grid, first: usize, out: &mut [f32]) {
                    $body(n, g, first, out)
                }
                // SAFETY: the token proves the CPU has the features `inner` is compiled for.
                unsafe { inner(n, g, first, out) }
            }
        };
    }
    // The cell path runs on the level's own vectors (8 lanes), not four per step: 32 lanes
    // at the usual step span a whole cell, and one cell per vector is what makes it cheap.
    entry!(
        rows2_avx2,
        Avx2,
        "avx2",
        Grid2,
        rows2::<Four<Avx2>, pgrid::ByCell<Avx2>>
    );
    entry!(
        rows3_avx2,
        Avx2,
        "avx2",
        Grid3,
        rows3::<Four<Avx2>, S3Tables<Avx2>, pgrid::ByCell<Avx2>>
    );
    entry!(
        rows2_avx512,
        Avx512<false>,
        "avx512f",
        Grid2,
        rows2::<Four<Avx512<false>>, pgrid::ByCell<Avx512<false>>>
    );
    entry!(
        rows3_avx512,
        Avx512<false>,
        "avx512f",
        Grid3,
        rows3::<Four<Avx512<false>>, S3Lookup<Avx512<false>>, pgrid::ByCell<Avx512<false>>>
    );
    entry!(
        rows2_avx512vbmi,
        Avx512<true>,
        "avx512f,avx512bw,avx512vbmi",
        Grid2,
        rows2::<Four<Avx512<true>>, pgrid::ByCell<Avx512<true>>>
    );
    entry!(
        rows3_avx512vbmi,
        Avx512<true>,
        "avx512f,avx512bw,avx512vbmi",
        Grid3,
        rows3::<Four<Avx512<true>>, S3Lookup<Avx512<true>>, pgrid::ByCell<Avx512<true>>>
    );
}

/// A level resolved to the code that runs it, holding the level's proof token.
#[derive(Clone, Copy)]
enum Path {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Sse2,
    #[cfg(target_arch = "x86_64")]
    Avx2(crate::simd::Avx2),
    #[cfg(target_arch = "x86_64")]
    Avx512(crate::simd::Avx512<false>),
    #[cfg(target_arch = "x86_64")]
    Avx512Vbmi(crate::simd::Avx512<true>),
}

impl Path {
    /// The path of `l`, if this CPU can run it.
    fn new(l: SimdLevel) -> Option<Path> {
        #[cfg(target_arch = "x86_64")]
        use crate::simd::{Avx2, Avx512};
        match l {
            SimdLevel::Scalar => Some(Path::Scalar),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Sse2 => Some(Path::Sse2),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 => Avx2::detect().map(Path::Avx2),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 => Avx512::detect().map(Path::Avx512),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512Vbmi => Avx512::detect().map(Path::Avx512Vbmi),
            #[cfg(not(target_arch = "x86_64"))]
            _ => None,
        }
    }
}

fn run2(p: Path, n: &Noise, g: &Grid2, first: usize, out: &mut [f32]) {
    match p {
        Path::Scalar => rows2::<Scalar, pgrid::ByCell<Scalar>>(n, g, first, out),
        #[cfg(target_arch = "x86_64")]
        Path::Sse2 => entry::rows2_sse2(n, g, first, out),
        #[cfg(target_arch = "x86_64")]
        Path::Avx2(t) => entry::rows2_avx2(t, n, g, first, out),
        #[cfg(target_arch = "x86_64")]
        Path::Avx512(t) => entry::rows2_avx512(t, n, g, first, out),
        #[cfg(target_arch = "x86_64")]
        Path::Avx512Vbmi(t) => entry::rows2_avx512vbmi(t, n, g, first, out),
    }
}

fn run3(p: Path, n: &Noise, g: &Grid3, first: usize, out: &mut [f32]) {
    match p {
        Path::Scalar => rows3::<Scalar, S3Lookup<Scalar>, pgrid::ByCell<Scalar>>(n, g, first, out),
        #[cfg(target_arch = "x86_64")]
        Path::Sse2 => entry::rows3_sse2(n, g, first, out),
        #[cfg(target_arch = "x86_64")]
        Path::Avx2(t) => entry::rows3_avx2(t, n, g, first, out),
        #[cfg(target_arch = "x86_64")]
        Path::Avx512(t) => entry::rows3_avx512(t, n, g, first, out),
        #[cfg(target_arch = "x86_64")]
        Path::Avx512Vbmi(t) => entry::rows3_avx512vbmi(t, n, g, first, out),
    }
}

impl Noise {
    /// Fills `out` (length `nx * ny`, row-major, x fastest) with the 2D grid `g`.
    pub fn fill2(&self, g: &Grid2, out: &mut [f32], exec: Exec) -> Result<(), NoiseError> {
        check_len(&g.size, out.len())?;
        let l = level(exec)?;
        if out.is_empty() {
            return Ok(());
        }
        if exec.parallel {
            let chunk = g.size[0] * ROWS_PER_TASK;
            out.par_chunks_mut(chunk)
                .enumerate()
                .for_each(|(c, o)| run2(l, self, g, c * ROWS_PER_TASK, o));
        } else {
            run2(l, self, g, 0, out);
        }
        Ok(())
    }

    /// Fills `out` (length `nx * ny * nz`, x fastest, then y, then z) with the 3D grid `g`.
    pub fn fill3(&self, g: &Grid3, out: &mut [f32], exec: Exec) -> Result<(), NoiseError> {
        check_len(&g.size, out.len())?;
        let l = level(exec)?;
        if out.is_empty() {
            return Ok(());
        }
        if exec.parallel {
            let chunk = g.size[0] * ROWS_PER_TASK;
            out.par_chunks_mut(chunk)
                .enumerate()
                .for_each(|(c, o)| run3(l, self, g, c * ROWS_PER_TASK, o));
        } else {
            run3(l, self, g, 0, out);
        }
        Ok(())
    }
}
