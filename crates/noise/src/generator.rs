//! Configurable noise generator: basis × fractal × domain warp, compiled once into per-octave
//! seeds and tables, evaluated by the same generic code for single points and grids.

use crate::error::NoiseError;
use crate::kernels::{self, CellDistance, CellReturn, LUAU_PERM};
use crate::simd::{Perm, Scalar, Simd};
use procmodel_base::{Pcg32, derive_seed, derive_seed_index};

/// The basis function sampled by every octave.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Basis {
    /// Luau `math.noise` improved Perlin; seed 0 uses Luau's permutation, other seeds a
    /// shuffled one. Range [-1, 1]; 0 at integer lattice points; period 256 on every axis.
    Perlin,
    /// Simplex noise with hashed gradients: in 2D the classic eight (±1, ±2) gradients; in 3D
    /// 32 evenly spread unit gradients (more isotropic than the classic twelve cube edges) and
    /// the `max(0.5 − d², 0)⁴` falloff. Range [-1, 1].
    Simplex,
    /// OpenSimplex2, fast variant. Range [-1, 1].
    OpenSimplex2,
    /// Worley / cellular noise. Returns raw distances in cell units: F1 is in [0, √2) in 2D
    /// and [0, √3) in 3D for Euclidean (Manhattan: [0, 2) and [0, 3)); F2 ≥ F1; F2 − F1 ≥ 0.
    /// Feature points are searched in the 3×3 (3×3×3) neighbourhood only: F1 is exact for
    /// Euclidean distance with jitter ≤ 0.5; with larger jitter (and for F2) this is the usual
    /// approximation, as in FastNoise.
    Worley(Cellular),
}

/// Worley settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cellular {
    /// Distance metric.
    pub distance: CellDistance,
    /// Which distance to return.
    pub ret: CellReturn,
    /// Feature-point jitter in [0, 1] (1 = anywhere in the cell, 0 = cell centres).
    pub jitter: f32,
}

impl Default for Cellular {
    fn default() -> Self {
        Self {
            distance: CellDistance::Euclidean,
            ret: CellReturn::F1,
            jitter: 1.0,
        }
    }
}

/// How octaves are combined. With `n_i` the basis at octave `i`, frequency
/// `lacunarity^i`, amplitude `a_i = gain^i` and `A = Σ a_i`:
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fractal {
    /// The basis alone (octaves ignored); the basis' own range.
    None,
    /// `0.5 + 0.5 · Σ a_i n_i / A`, clamped to [0, 1] (SPEC §6).
    Fbm,
    /// `Σ a_i (1 − |n_i|) / A`, clamped to [0, 1].
    Ridged,
    /// `Σ a_i |n_i| / A`, clamped to [0, 1].
    Billow,
}

/// Domain warp: the point is displaced by `amplitude · (s_x(p·frequency), s_y(p·frequency)[, s_z])`
/// with independently seeded simplex noises before the basis is sampled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Warp {
    /// Displacement scale in input units (after the generator frequency).
    pub amplitude: f32,
    /// Frequency of the warp noise relative to the generator's.
    pub frequency: f32,
}

/// Everything that defines a noise field. Same config → same bytes everywhere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoiseConfig {
    /// Basis function.
    pub basis: Basis,
    /// Explicit seed; per-octave and warp seeds are derived from it by hashing.
    pub seed: u64,
    /// Input scale applied before everything else (1 = raw coordinates).
    pub frequency: f32,
    /// Octave combination.
    pub fractal: Fractal,
    /// Number of octaves (1..=32), used unless `fractal` is `None`.
    pub octaves: u32,
    /// Frequency multiplier per octave (default 2).
    pub lacunarity: f32,
    /// Amplitude multiplier per octave, a.k.a. persistence (default 0.5).
    pub gain: f32,
    /// Optional domain warp.
    pub warp: Option<Warp>,
}

impl Default for NoiseConfig {
    fn default() -> Self {
        Self {
            basis: Basis::Perlin,
            seed: 0,
            frequency: 1.0,
            fractal: Fractal::None,
            octaves: 1,
            lacunarity: 2.0,
            gain: 0.5,
            warp: None,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Octave {
    pub(crate) freq: f32,
    pub(crate) amp: f32,
    pub(crate) seed: i32,
    pub(crate) perm: Box<Perm>,
}

/// A compiled noise field: sample single points or fill grids (see `fill2`/`fill3`).
/// Cheap to share across threads (`Send + Sync`, immutable).
#[derive(Clone, Debug)]
pub struct Noise {
    pub(crate) cfg: NoiseConfig,
    pub(crate) octaves: Vec<Octave>,
    pub(crate) inv_amp: f32,
    pub(crate) warp_seeds: [i32; 3],
}

fn seed32(seed: u64) -> i32 {
    (seed as u32 ^ (seed >> 32) as u32) as i32
}

/// The Perlin permutation for a seed: Luau's table for seed 0, otherwise Luau's table
/// shuffled by a PCG32 stream keyed by `derive_seed(seed, "perlin")`.
fn perm_for(seed: u64) -> Box<Perm> {
    let mut p = LUAU_PERM;
    if seed != 0 {
        Pcg32::from_seed_bits(derive_seed(seed, "perlin")).shuffle(&mut p[..]);
    }
    Box::new(Perm::new(p))
}

fn finite(name: &'static str, value: f32) -> Result<(), NoiseError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(NoiseError::NonFinite { name, value })
    }
}

impl Noise {
    /// Validates and compiles a config. Octave 0 uses `seed` itself (so one octave equals the
    /// basis); octave `i ≥ 1` uses `derive_seed_index(seed, i)`.
    pub fn new(cfg: NoiseConfig) -> Result<Self, NoiseError> {
        finite("frequency", cfg.frequency)?;
        finite("lacunarity", cfg.lacunarity)?;
        finite("gain", cfg.gain)?;
        if let Some(w) = cfg.warp {
            finite("warp amplitude", w.amplitude)?;
            finite("warp frequency", w.frequency)?;
        }
        if let Basis::Worley(c) = cfg.basis {
            finite("jitter", c.jitter)?;
        }
        let n = if cfg.fractal == Fractal::None {
            1
        } else {
            cfg.octaves
        };
        if !(1..=32).contains(&n) {
            return Err(NoiseError::Octaves(cfg.octaves));
        }
        let mut octaves = Vec::with_capacity(n as usize);
        let (mut freq, mut amp, mut sum) = (1.0f64, 1.0f64, 0.0f64);
        for i in 0..n {
            let s = if i == 0 {
                cfg.seed
            } else {
                derive_seed_index(cfg.seed, u64::from(i))
            };
            for (what, value) in [
                ("frequency", freq * f64::from(cfg.frequency)),
                ("amplitude", amp),
            ] {
                if !(value as f32).is_finite() {
                    return Err(NoiseError::Overflow {
                        octave: i,
                        what,
                        value,
                    });
                }
            }
            octaves.push(Octave {
                freq: freq as f32,
                amp: amp as f32,
                seed: seed32(s),
                perm: perm_for(s),
            });
            sum += f64::from(amp as f32);
            freq *= f64::from(cfg.lacunarity);
            amp *= f64::from(cfg.gain);
        }
        let inv_amp = (1.0 / sum) as f32;
        finite("summed amplitude", inv_amp)?;
        let warp_seeds = ["warp/x", "warp/y", "warp/z"].map(|k| seed32(derive_seed(cfg.seed, k)));
        Ok(Self {
            cfg,
            octaves,
            inv_amp,
            warp_seeds,
        })
    }

    /// The config this generator was built from.
    pub fn config(&self) -> &NoiseConfig {
        &self.cfg
    }

    /// One 2D sample; equals the grid value at the same f32 coordinates on every SIMD level.
    pub fn sample2(&self, x: f32, y: f32) -> f32 {
        eval2::<Scalar>(self, x, y)
    }

    /// One 3D sample; equals the grid value at the same f32 coordinates on every SIMD level.
    pub fn sample3(&self, x: f32, y: f32, z: f32) -> f32 {
        eval3::<Scalar>(self, x, y, z)
    }
}

#[inline(always)]
fn basis2<S: Simd>(n: &Noise, o: &Octave, x: S::F, y: S::F) -> S::F {
    match n.cfg.basis {
        Basis::Perlin => kernels::perlin2::<S>(&o.perm, x, y),
        Basis::Simplex => kernels::simplex2::<S>(o.seed, x, y),
        Basis::OpenSimplex2 => kernels::os2_2::<S>(o.seed, x, y),
        Basis::Worley(c) => kernels::worley2::<S>(o.seed, x, y, c.distance, c.ret, c.jitter),
    }
}

#[inline(always)]
fn basis3<S: Simd>(n: &Noise, o: &Octave, x: S::F, y: S::F, z: S::F) -> S::F {
    match n.cfg.basis {
        Basis::Perlin => kernels::perlin3::<S>(&o.perm, x, y, z),
        Basis::Simplex => kernels::simplex3::<S>(o.seed, x, y, z),
        Basis::OpenSimplex2 => kernels::os2_3::<S>(o.seed, x, y, z),
        Basis::Worley(c) => kernels::worley3::<S>(o.seed, x, y, z, c.distance, c.ret, c.jitter),
    }
}

#[inline(always)]
fn shape<S: Simd>(f: Fractal, v: S::F) -> S::F {
    match f {
        Fractal::Ridged => S::f(1.0) - kernels::abs::<S>(v),
        Fractal::Billow => kernels::abs::<S>(v),
        Fractal::None | Fractal::Fbm => v,
    }
}

#[inline(always)]
fn finish<S: Simd>(n: &Noise, sum: S::F) -> S::F {
    let r = sum * S::f(n.inv_amp);
    let r = match n.cfg.fractal {
        Fractal::Fbm => r * S::f(0.5) + S::f(0.5),
        _ => r,
    };
    S::max(S::min(r, S::f(1.0)), S::f(0.0))
}

#[inline(always)]
pub(crate) fn eval2<S: Simd>(n: &Noise, x: S::F, y: S::F) -> S::F {
    let fr = S::f(n.cfg.frequency);
    let (mut x, mut y) = (x * fr, y * fr);
    if let Some(w) = n.cfg.warp {
        let (wf, wa) = (S::f(w.frequency), S::f(w.amplitude));
        let (qx, qy) = (x * wf, y * wf);
        let ox = kernels::simplex2::<S>(n.warp_seeds[0], qx, qy);
        let oy = kernels::simplex2::<S>(n.warp_seeds[1], qx, qy);
        x = x + ox * wa;
        y = y + oy * wa;
    }
    if n.cfg.fractal == Fractal::None {
        return basis2::<S>(n, &n.octaves[0], x, y);
    }
    let mut sum = S::f(0.0);
    for o in &n.octaves {
        let of = S::f(o.freq);
        let v = shape::<S>(n.cfg.fractal, basis2::<S>(n, o, x * of, y * of));
        sum = sum + v * S::f(o.amp);
    }
    finish::<S>(n, sum)
}

#[inline(always)]
pub(crate) fn eval3<S: Simd>(n: &Noise, x: S::F, y: S::F, z: S::F) -> S::F {
    let fr = S::f(n.cfg.frequency);
    let (mut x, mut y, mut z) = (x * fr, y * fr, z * fr);
    if let Some(w) = n.cfg.warp {
        let (wf, wa) = (S::f(w.frequency), S::f(w.amplitude));
        let (qx, qy, qz) = (x * wf, y * wf, z * wf);
        let ox = kernels::simplex3::<S>(n.warp_seeds[0], qx, qy, qz);
        let oy = kernels::simplex3::<S>(n.warp_seeds[1], qx, qy, qz);
        let oz = kernels::simplex3::<S>(n.warp_seeds[2], qx, qy, qz);
        x = x + ox * wa;
        y = y + oy * wa;
        z = z + oz * wa;
    }
    if n.cfg.fractal == Fractal::None {
        return basis3::<S>(n, &n.octaves[0], x, y, z);
    }
    let mut sum = S::f(0.0);
    for o in &n.octaves {
        let of = S::f(o.freq);
        let v = shape::<S>(n.cfg.fractal, basis3::<S>(n, o, x * of, y * of, z * of));
        sum = sum + v * S::f(o.amp);
    }
    finish::<S>(n, sum)
}
