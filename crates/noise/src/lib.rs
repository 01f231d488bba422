//! Bit-deterministic noise for procmodel: Perlin bit-identical to Luau's `math.noise`,
//! Simplex, OpenSimplex2, Worley, fBm/ridged/billow fractals and domain warp, with a bulk
//! grid API that runs on SSE2, AVX2, AVX-512F or AVX-512 VBMI (chosen at run time, or forced
//! with [`Exec::simd`]) and on rayon threads ([`Exec::parallel`], split by rows).
//!
//! Owns: noise kernels, their seeds and the grid fast path. Must never: do I/O, touch Luau,
//! the DOM or clocks, use FMA or any operation whose rounding differs between SIMD levels,
//! or let output depend on the SIMD level, thread count or hash-map order.
//!
//! # Entry points
//! - [`perlin3`] / [`perlin2`] (f64, exactly `math.noise`) and [`perlin3_f32`] /
//!   [`perlin2_f32`] (the f32 core).
//! - [`Noise::new`] compiles a [`NoiseConfig`] (basis, seed, frequency, fractal, octaves,
//!   lacunarity, gain, warp); [`Noise::sample2`] / [`Noise::sample3`] evaluate one point and
//!   [`Noise::fill2`] / [`Noise::fill3`] fill a caller's slice over a [`Grid2`] / [`Grid3`]
//!   (row-major, x fastest).
//!
//! ```
//! use procmodel_noise::{Basis, Exec, Fractal, Grid2, Noise, NoiseConfig};
//!
//! assert_eq!(procmodel_noise::perlin2(1.158, 5.723), 0.4839753210544586); // math.noise
//! let fbm = Noise::new(NoiseConfig {
//!     basis: Basis::Simplex,
//!     fractal: Fractal::Fbm,
//!     octaves: 6,
//!     seed: 42,
//!     frequency: 1.0 / 64.0,
//!     ..NoiseConfig::default()
//! })?;
//! let grid = Grid2 { origin: [0.0, 0.0], step: [1.0, 1.0], size: [256, 128] };
//! let mut heights = vec![0.0f32; 256 * 128];
//! fbm.fill2(&grid, &mut heights, Exec { simd: None, parallel: true })?;
//! assert_eq!(heights[3 * 256 + 5], fbm.sample2(5.0, 3.0));
//! assert!(heights.iter().all(|h| (0.0..=1.0).contains(h)));
//! # Ok::<(), procmodel_noise::NoiseError>(())
//! ```
//!
//! # SIMD level
//! A fill with [`Exec::simd`] `None` runs on [`SimdLevel::auto`]: the fastest level the CPU
//! has, unless the environment variable `PROCMODEL_SIMD` ([`SIMD_ENV`]) forces one for the
//! whole process — `auto`, `portable` (or `scalar`), `sse2`, `avx2`, `avx512` or
//! `avx512vbmi` (read once, on the first such fill). A name no level has, or a level the CPU
//! lacks, makes those fills return an error ([`NoiseError::SimdEnv`],
//! [`NoiseError::Unavailable`]) rather than silently run elsewhere; an explicit
//! `Exec::simd` always wins. Every level gives the same bytes, so the switch only chooses
//! which code path runs (e.g. to test or benchmark each one).
//!
//! # Determinism
//! Every kernel is written once over a private lane trait and instantiated per level with
//! the same IEEE operations in the same order (no FMA; x86 `min`/`max`/`cvttps2dq` semantics
//! emulated on the scalar path), so every level and thread count gives identical bytes;
//! tests compare all levels the CPU has. A level may override a lane operation with a
//! different instruction sequence only where the bits are provably the same (`max(a, 0)²` as
//! a compare and a zero-masked multiply on AVX-512), and the grid path may process two or
//! four vectors per step (`X2`) and compute the lattice cell of the next vector before the
//! corners of the current one (3D simplex), which changes the schedule, not a single operation.
//! The AVX2 3D simplex grid path reads corner gradients from per-cell tables (a per-thread
//! cache keyed by the cell's hash) instead of hashing every corner: the same table entries,
//! fed to the same operations (`s3grid.rs`).
//! Single-octave Perlin grids on the portable, SSE2 and AVX2 paths hash once per row and x
//! lattice cell instead of per sample, and feed the same gradients to the same operations
//! (`pgrid.rs`).
//! `tests/fingerprint.rs` pins whole-grid output of every config. Seeds of octaves and warp
//! axes are derived with `procmodel_base::derive_seed*`, never `seed + i`.
//!
//! # Ranges
//! - [`perlin3`], [`perlin2`], [`Basis::Perlin`]: within [-1, 1] (measured extremes about
//!   ±0.90); exactly 0 at integer lattice points; period 256 on every axis.
//! - [`Basis::Simplex`], [`Basis::OpenSimplex2`]: [-1, 1] (scales chosen from measured
//!   extremes with margin; checked by property tests). 3D simplex is scaled by the bound
//!   `Σ max(0.5 − d², 0)⁴·|d| ≤ 0.009 289 1` over a simplex's corners, so it stays in range
//!   for every hash, not only the sampled ones.
//! - [`Basis::Worley`]: raw distances in cell units (see its docs).
//! - [`Fractal::Fbm`], [`Fractal::Ridged`], [`Fractal::Billow`]: [0, 1], normalised by the
//!   summed amplitude (SPEC §6) and clamped.
//!
//! # Luau equality
//! [`perlin3`] reproduces `math.noise` of the VM built by `mlua` 0.12 (`luau`, `vendored`):
//! the `FixMathNoisePrecision` fast flag defaults to off there, so the doubles are rounded to
//! `f32` directly (no `fmod(x, 256)`), and `int(floorf(x))` follows x86 `cvttss2si`
//! (out-of-range → `i32::MIN`). [`perlin2`] is `math.noise(x, y)` (z = 0).
//! [`perlin3_wrapped`] is the flag-on behaviour, tested against a VM with the flag set.
//!
//! The 2D kernel skips the z = 1 layer and the `gz·0` gradient terms and is still
//! bit-identical. Dropping `+ gz·0` can only change the sign of a zero (`v + ±0 = v` for
//! `v ≠ 0`), and zero signs only ever propagate as zero signs through `+`, `−`, `×`. With
//! `zf = +0` the full form's final `lerp(0, A, B) = A + 0·(B − A)` equals `A` unless `A` is
//! −0, and `A` is never −0 there: `a + t·(b − a)` is −0 only when `a` is, so `A` only if `la`
//! is, `la` only if the corner-aa gradient `(gx·xf + gy·yf) + gz·0` is, and with
//! `xf, yf ≥ +0` that needs `gx = gy = gz = −1`, which no gradient has. So the full form is
//! the reduced form with any −0 mapped to +0, which is what the final `+ 0.0` does. The VM
//! test and property tests (random and near-lattice points) check it.

// Also denied workspace-wide; stated here because this crate is where the `unsafe` is: the
// SIMD entry points and lane operations (see `simd/x86.rs`, Soundness).
#![deny(clippy::undocumented_unsafe_blocks)]

mod error;
mod generator;
mod grid;
mod kernels;
mod layout;
mod level;
mod pgrid;
mod s3grid;
mod simd;

pub use error::NoiseError;
pub use generator::{Basis, Cellular, Fractal, Noise, NoiseConfig, Warp};
pub use grid::Exec;
pub use kernels::{CellDistance, CellReturn};
pub use layout::{Grid2, Grid3};
pub use level::{SIMD_ENV, SimdLevel};

use kernels::LUAU;
use simd::Scalar;

/// `math.noise(x, y, z)` exactly, bit for bit (see the crate docs).
pub fn perlin3(x: f64, y: f64, z: f64) -> f64 {
    f64::from(perlin3_f32(x as f32, y as f32, z as f32))
}

/// `math.noise(x, y, z)` of a VM with Luau's `FixMathNoisePrecision` fast flag on (off in the
/// mlua build, see the crate docs): each coordinate is first wrapped with `fmod(v, 256)` in
/// f64, which keeps precision for large inputs.
pub fn perlin3_wrapped(x: f64, y: f64, z: f64) -> f64 {
    perlin3(x % 256.0, y % 256.0, z % 256.0)
}

/// `math.noise(x, y)` exactly (z = 0).
pub fn perlin2(x: f64, y: f64) -> f64 {
    f64::from(perlin2_f32(x as f32, y as f32))
}

/// Luau's `perlin(float, float, float)`: the f32 core of `math.noise`.
pub fn perlin3_f32(x: f32, y: f32, z: f32) -> f32 {
    kernels::perlin3::<Scalar>(&LUAU, x, y, z)
}

/// `perlin3_f32(x, y, 0.0)`, bit-identical, with the z = 1 layer skipped.
pub fn perlin2_f32(x: f32, y: f32) -> f32 {
    kernels::perlin2::<Scalar>(&LUAU, x, y)
}
