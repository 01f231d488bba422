//! Noise kernels written once over [`Simd`]: Luau-exact Perlin, Simplex, OpenSimplex2 and
//! Worley. Small `#[inline(always)]` functions; the op order here *is* the output contract.
//! The public kernels are out of line in debug builds only: there nothing is optimised, every
//! temporary of every kernel inlined into a grid entry point gets its own stack slot, and
//! with four 16-lane vectors per step that frame outgrew a 2 MiB thread stack.

use crate::simd::{Perm, Simd};

/// Hash primes (FastNoise Lite's), multiplied into lattice coordinates with wrapping.
pub(crate) const PX: i32 = 501_125_321;
pub(crate) const PY: i32 = 1_136_930_381;
pub(crate) const PZ: i32 = 1_720_413_743;

/// Luau's `kPerlinHash` (Ken Perlin's permutation); entry 256 of the VM table equals entry 0.
pub(crate) const LUAU_PERM: [i32; 256] = [
    151, 160, 137, 91, 90, 15, 131, 13, 201, 95, 96, 53, 194, 233, 7, 225, 140, 36, 103, 30, 69,
    142, 8, 99, 37, 240, 21, 10, 23, 190, 6, 148, 247, 120, 234, 75, 0, 26, 197, 62, 94, 252, 219,
    203, 117, 35, 11, 32, 57, 177, 33, 88, 237, 149, 56, 87, 174, 20, 125, 136, 171, 168, 68, 175,
    74, 165, 71, 134, 139, 48, 27, 166, 77, 146, 158, 231, 83, 111, 229, 122, 60, 211, 133, 230,
    220, 105, 92, 41, 55, 46, 245, 40, 244, 102, 143, 54, 65, 25, 63, 161, 1, 216, 80, 73, 209, 76,
    132, 187, 208, 89, 18, 169, 200, 196, 135, 130, 116, 188, 159, 86, 164, 100, 109, 198, 173,
    186, 3, 64, 52, 217, 226, 250, 124, 123, 5, 202, 38, 147, 118, 126, 255, 82, 85, 212, 207, 206,
    59, 227, 47, 16, 58, 17, 182, 189, 28, 42, 223, 183, 170, 213, 119, 248, 152, 2, 44, 154, 163,
    70, 221, 153, 101, 155, 167, 43, 172, 9, 129, 22, 39, 253, 19, 98, 108, 110, 79, 113, 224, 232,
    178, 185, 112, 104, 218, 246, 97, 228, 251, 34, 242, 193, 238, 210, 144, 12, 191, 179, 162,
    241, 81, 51, 145, 235, 249, 14, 239, 107, 49, 192, 214, 31, 181, 199, 106, 157, 184, 84, 204,
    176, 115, 121, 50, 45, 127, 4, 150, 254, 138, 236, 205, 93, 222, 114, 67, 29, 24, 72, 243, 141,
    128, 195, 78, 66, 215, 61, 156, 180,
];

/// [`LUAU_PERM`] packed for the kernels.
pub(crate) static LUAU: Perm = Perm::new(LUAU_PERM);

/// Luau's `kPerlinGrad`, split by axis.
pub(crate) const GX: [f32; 16] = [
    1., -1., 1., -1., 1., -1., 1., -1., 0., 0., 0., 0., 1., 0., -1., 0.,
];
pub(crate) const GY: [f32; 16] = [
    1., 1., -1., -1., 0., 0., 0., 0., 1., -1., 1., -1., 1., -1., 1., -1.,
];
pub(crate) const GZ: [f32; 16] = [
    0., 0., 0., 0., 1., 1., -1., -1., 1., 1., -1., -1., 0., 1., 0., -1.,
];

/// OpenSimplex2 2D gradients: 16 unit directions at 22.5° steps, offset by 11.25°.
const OS2_GX: [f32; 16] = [
    0.980_785_3,
    0.831_469_6,
    0.555_570_2,
    0.195_090_32,
    -0.195_090_32,
    -0.555_570_2,
    -0.831_469_6,
    -0.980_785_3,
    -0.980_785_3,
    -0.831_469_6,
    -0.555_570_2,
    -0.195_090_32,
    0.195_090_32,
    0.555_570_2,
    0.831_469_6,
    0.980_785_3,
];
const OS2_GY: [f32; 16] = [
    0.195_090_32,
    0.555_570_2,
    0.831_469_6,
    0.980_785_3,
    0.980_785_3,
    0.831_469_6,
    0.555_570_2,
    0.195_090_32,
    -0.195_090_32,
    -0.555_570_2,
    -0.831_469_6,
    -0.980_785_3,
    -0.980_785_3,
    -0.831_469_6,
    -0.555_570_2,
    -0.195_090_32,
];

/// Output scales chosen so the measured extremes stay inside [-1, 1] (see tests).
const SIMPLEX2_SCALE: f32 = 44.0;
/// `max(0.5 − d², 0)⁴ · |d|` summed over a simplex's corners is at most 0.009 289 1
/// (numerical maximisation), so unit gradients times 107 keep [`simplex3`] inside [-1, 1] for
/// any hash.
const SIMPLEX3_SCALE: f32 = 107.0;
const OS2_2_SCALE: f32 = 97.0;
const OS2_3_SCALE: f32 = 32.0;

/// Perlin's fade curve `6t⁵ − 15t⁴ + 10t³`, evaluated as `t·t·t·(t·(6t − 15) + 10)`.
#[inline(always)]
pub(crate) fn fade<S: Simd>(t: S::F) -> S::F {
    t * t * t * (t * (t * S::f(6.0) - S::f(15.0)) + S::f(10.0))
}

/// `a + t·(b − a)`.
#[inline(always)]
pub(crate) fn lerp<S: Simd>(t: S::F, a: S::F, b: S::F) -> S::F {
    a + t * (b - a)
}

#[inline(always)]
fn pgrad<S: Simd>(h: S::I, x: S::F, y: S::F, z: S::F) -> S::F {
    S::lut16(&GX, h) * x + S::lut16(&GY, h) * y + S::lut16(&GZ, h) * z
}

#[inline(always)]
fn pg<S: Simd>(p: &Perm, h: S::I, x: S::F, y: S::F, z: S::F) -> S::F {
    pgrad::<S>(S::lut256(p, h), x, y, z)
}

#[inline(always)]
pub(crate) fn abs<S: Simd>(v: S::F) -> S::F {
    S::from_bits(S::bits(v) & S::i(0x7fff_ffff))
}

/// Flips the sign of `v` where bit 31 of `sign` is set.
#[inline(always)]
fn xsign<S: Simd>(v: S::F, sign: S::I) -> S::F {
    S::from_bits(S::bits(v) ^ sign)
}

/// Improved Perlin noise exactly as Luau's `perlin(float, float, float)` (same op order).
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn perlin3<S: Simd>(p: &Perm, x: S::F, y: S::F, z: S::F) -> S::F {
    let m = S::i(255);
    let one = S::i(1);
    let (xfl, yfl, zfl) = (S::floor(x), S::floor(y), S::floor(z));
    let (xi, yi, zi) = (S::trunc(xfl) & m, S::trunc(yfl) & m, S::trunc(zfl) & m);
    let (xf, yf, zf) = (x - xfl, y - yfl, z - zfl);
    let (u, v, w) = (fade::<S>(xf), fade::<S>(yf), fade::<S>(zf));
    let a = (S::lut256(p, xi) + yi) & m;
    let aa = (S::lut256(p, a) + zi) & m;
    let ab = (S::lut256(p, (a + one) & m) + zi) & m;
    let b = (S::lut256(p, (xi + one) & m) + yi) & m;
    let ba = (S::lut256(p, b) + zi) & m;
    let bb = (S::lut256(p, (b + one) & m) + zi) & m;
    let f1 = S::f(1.0);
    let (xf1, yf1, zf1) = (xf - f1, yf - f1, zf - f1);
    let la = lerp::<S>(u, pg::<S>(p, aa, xf, yf, zf), pg::<S>(p, ba, xf1, yf, zf));
    let lb = lerp::<S>(u, pg::<S>(p, ab, xf, yf1, zf), pg::<S>(p, bb, xf1, yf1, zf));
    let la1 = lerp::<S>(
        u,
        pg::<S>(p, (aa + one) & m, xf, yf, zf1),
        pg::<S>(p, (ba + one) & m, xf1, yf, zf1),
    );
    let lb1 = lerp::<S>(
        u,
        pg::<S>(p, (ab + one) & m, xf, yf1, zf1),
        pg::<S>(p, (bb + one) & m, xf1, yf1, zf1),
    );
    lerp::<S>(w, lerp::<S>(v, la, lb), lerp::<S>(v, la1, lb1))
}

/// `perlin3(x, y, +0.0)` with the z = 1 layer and the `gz·0` gradient terms skipped;
/// bit-identical to the full form (argument in the crate docs, checked by tests).
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn perlin2<S: Simd>(p: &Perm, x: S::F, y: S::F) -> S::F {
    let m = S::i(255);
    let one = S::i(1);
    let (xfl, yfl) = (S::floor(x), S::floor(y));
    let (xi, yi) = (S::trunc(xfl) & m, S::trunc(yfl) & m);
    let (xf, yf) = (x - xfl, y - yfl);
    let (u, v) = (fade::<S>(xf), fade::<S>(yf));
    let a = (S::lut256(p, xi) + yi) & m;
    let aa = S::lut256(p, a);
    let ab = S::lut256(p, (a + one) & m);
    let b = (S::lut256(p, (xi + one) & m) + yi) & m;
    let ba = S::lut256(p, b);
    let bb = S::lut256(p, (b + one) & m);
    let f1 = S::f(1.0);
    let (xf1, yf1) = (xf - f1, yf - f1);
    let la = lerp::<S>(u, pg2::<S>(p, aa, xf, yf), pg2::<S>(p, ba, xf1, yf));
    let lb = lerp::<S>(u, pg2::<S>(p, ab, xf, yf1), pg2::<S>(p, bb, xf1, yf1));
    // Adding +0 turns a −0 (possible only without the gz·0 terms) into the +0 of the full form.
    lerp::<S>(v, la, lb) + S::f(0.0)
}

#[inline(always)]
fn pg2<S: Simd>(p: &Perm, h: S::I, x: S::F, y: S::F) -> S::F {
    let h = S::lut256(p, h);
    S::lut16(&GX, h) * x + S::lut16(&GY, h) * y
}

#[inline(always)]
fn hash2<S: Simd>(seed: S::I, xp: S::I, yp: S::I) -> S::I {
    let h = (seed ^ xp ^ yp) * S::i(0x27d4_eb2d);
    h ^ S::shr(h, 15)
}

#[inline(always)]
fn hash3<S: Simd>(seed: S::I, xp: S::I, yp: S::I, zp: S::I) -> S::I {
    let h = (seed ^ xp ^ yp ^ zp) * S::i(0x27d4_eb2d);
    h ^ S::shr(h, 15)
}

/// 2D gradient dot: one of (±1, ±2), (±2, ±1) picked by hash bits 0–2.
#[inline(always)]
fn sgrad2<S: Simd>(h: S::I, x: S::F, y: S::F) -> S::F {
    let keep = S::ieq(h & S::i(4), S::i(0));
    let u = S::sel(keep, x, y);
    let v = S::sel(keep, y, x);
    let su = S::shl(h, 31);
    let sv = S::shl(h & S::i(2), 30);
    xsign::<S>(u, su) + xsign::<S>(v, sv) * S::f(2.0)
}

/// 3D gradient dot over the 12 cube edges (Perlin's reference `grad` by bit tests).
#[inline(always)]
fn sgrad3<S: Simd>(h: S::I, x: S::F, y: S::F, z: S::F) -> S::F {
    // With `g = h & 15`: `g < 8` is bit 3 clear, `g < 4` is bits 2–3 clear and
    // `g ∈ {12, 14}` is `h & 13 == 12` — single bit tests (`vptestnmd`) where possible.
    let zero = S::i(0);
    let u = S::sel(S::ieq(h & S::i(8), zero), x, y);
    let xz = S::sel(S::ieq(h & S::i(13), S::i(12)), x, z);
    let v = S::sel(S::ieq(h & S::i(12), zero), y, xz);
    xsign::<S>(u, S::shl(h, 31)) + xsign::<S>(v, S::shl(h & S::i(2), 30))
}

/// `max(t, 0)⁴`, as `m = max(t, 0); (m·m)·(m·m)`.
#[inline(always)]
pub(crate) fn pow4_pos<S: Simd>(t: S::F) -> S::F {
    let t2 = S::pos_sq(t);
    t2 * t2
}

#[inline(always)]
fn corner2<S: Simd, const OS2: bool>(h: S::I, x: S::F, y: S::F) -> S::F {
    let a = S::f(0.5) - x * x - y * y;
    let g = if OS2 {
        let h = S::shr(h, 8);
        S::lut16(&OS2_GX, h) * x + S::lut16(&OS2_GY, h) * y
    } else {
        sgrad2::<S>(h, x, y)
    };
    pow4_pos::<S>(a) * g
}

/// Shared 2D simplex lattice walk; `OS2` selects the OpenSimplex2 gradient set.
#[inline(always)]
fn simplex2_impl<S: Simd, const OS2: bool>(seed: i32, x: S::F, y: S::F) -> S::F {
    const F2: f32 = 0.366_025_42;
    const G2: f32 = 0.211_324_87;
    let zero = S::f(0.0);
    let s = (x + y) * S::f(F2);
    let i = S::floor(x + s);
    let j = S::floor(y + s);
    let t = (i + j) * S::f(G2);
    let x0 = x - (i - t);
    let y0 = y - (j - t);
    let m = S::lt(y0, x0);
    let i1 = S::sel(m, S::f(1.0), zero);
    let j1 = S::sel(m, zero, S::f(1.0));
    let x1 = x0 - i1 + S::f(G2);
    let y1 = y0 - j1 + S::f(G2);
    let x2 = x0 + S::f(2.0 * G2 - 1.0);
    let y2 = y0 + S::f(2.0 * G2 - 1.0);
    let ip = S::trunc(i) * S::i(PX);
    let jp = S::trunc(j) * S::i(PY);
    let sd = S::i(seed);
    let h0 = hash2::<S>(sd, ip, jp);
    let h1 = hash2::<S>(
        sd,
        ip + S::isel(m, S::i(PX), S::i(0)),
        jp + S::isel(m, S::i(0), S::i(PY)),
    );
    let h2 = hash2::<S>(sd, ip + S::i(PX), jp + S::i(PY));
    let n = corner2::<S, OS2>(h0, x0, y0)
        + corner2::<S, OS2>(h1, x1, y1)
        + corner2::<S, OS2>(h2, x2, y2);
    n * S::f(if OS2 { OS2_2_SCALE } else { SIMPLEX2_SCALE })
}

/// 2D simplex noise in [-1, 1].
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn simplex2<S: Simd>(seed: i32, x: S::F, y: S::F) -> S::F {
    simplex2_impl::<S, false>(seed, x, y)
}

/// 2D OpenSimplex2 (fast variant: the simplex lattice, r² = 0.5 kernel, 16 even gradients).
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn os2_2<S: Simd>(seed: i32, x: S::F, y: S::F) -> S::F {
    simplex2_impl::<S, true>(seed, x, y)
}

/// 3D simplex noise in [-1, 1]: the simplex lattice with a hashed gradient out of 32
/// directions ([`S3_G`]) per corner and falloff `max(0.5 − d², 0)⁴` (r² = 0.5, so each corner's
/// support ends inside its simplices: continuous, unlike the common r² = 0.6). The skew is
/// grouped as
/// `((x + x/3) + (y+z)/3, (y + (y+z)/3) + x/3, (z + (y+z)/3) + x/3)` so that a grid computes
/// the x parts once per fill and the y/z parts once per row ([`s3_skew_parts`]); the rest is
/// [`simplex3_skewed`].
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn simplex3<S: Simd>(seed: i32, x: S::F, y: S::F, z: S::F) -> S::F {
    let (xa, b) = s3_skew_parts::<S>(x, y, z);
    simplex3_skewed::<S>(seed, (x + xa) + b, (y + b) + xa, (z + b) + xa)
}

/// The two parts of [`simplex3`]'s skew: `x/3` and `(y + z)/3`.
#[inline(always)]
pub(crate) fn s3_skew_parts<S: Simd>(x: S::F, y: S::F, z: S::F) -> (S::F, S::F) {
    (x * S::f(1.0 / 3.0), (y + z) * S::f(1.0 / 3.0))
}

/// The 32 gradients of [`simplex3`]: the vertices of a rhombic triacontahedron (12
/// icosahedron and 20 dodecahedron directions, nearest neighbours 37.4° apart; both sets are
/// spherical 5-designs, so every moment up to the fifth is the sphere's — the twelve cube
/// edges match only up to the third), unit length, times the output scale, split by axis
/// (one in-register permute per component on AVX-512); row 3 is `−(gx + gy + gz)/2`, the
/// gradient's dot product with the last corner's extra offset. The set is antipodal and
/// ordered so that entry `e + 16` is entry `e` negated, which lets a level look up 16
/// entries and flip the sign by bit 4 ([`dot3`]). `tests/isotropy.rs` measures the
/// resulting texture against the twelve-edge and four-gradient kernels.
pub(crate) static S3_G: [[f32; 32]; 4] = s3_gradients();

const fn s3_gradients() -> [[f32; 32]; 4] {
    // Unit vectors: (0, ±a, ±b) icosahedron, (±c, ±c, ±c) cube, (0, ±d, ±e) dodecahedron,
    // each with its two cyclic rotations; a = 1/√(1+φ²), b = φa, c = 1/√3, e = φ/√3, d = e/φ².
    // Entries 0..16 have a positive first non-zero coordinate; 16..32 are their negations.
    const A: f32 = 0.525_731_1;
    const B: f32 = 0.850_650_8;
    const C: f32 = 0.577_350_26;
    const D: f32 = 0.356_822_1;
    const E: f32 = 0.934_172_36;
    let mut g = [[0.0f32; 32]; 4];
    let mut n = 0;
    let mut s = 0;
    while s < 2 {
        let sb = if s == 0 { 1.0 } else { -1.0 };
        let mut rot = 0;
        while rot < 3 {
            g[(rot + 1) % 3][n] = A;
            g[(rot + 2) % 3][n] = sb * B;
            g[(rot + 1) % 3][n + 10] = E;
            g[(rot + 2) % 3][n + 10] = sb * D;
            n += 1;
            rot += 1;
        }
        s += 1;
    }
    let mut c = 0;
    while c < 4 {
        g[0][6 + c] = C;
        g[1][6 + c] = if c & 2 == 0 { C } else { -C };
        g[2][6 + c] = if c & 1 == 0 { C } else { -C };
        c += 1;
    }
    let mut a = 0;
    while a < 3 {
        let mut k = 0;
        while k < 16 {
            g[a][k] *= SIMPLEX3_SCALE;
            g[a][k + 16] = -g[a][k];
            k += 1;
        }
        a += 1;
    }
    let mut k = 0;
    while k < 32 {
        g[3][k] = -0.5 * ((g[0][k] + g[1][k]) + g[2][k]);
        k += 1;
    }
    g
}

/// The first half of each row of [`S3_G`] (the other half is its negation).
static S3_G16: [[f32; 16]; 4] = {
    let mut h = [[0.0f32; 16]; 4];
    let mut a = 0;
    while a < 4 {
        let mut k = 0;
        while k < 16 {
            h[a][k] = S3_G[a][k];
            k += 1;
        }
        a += 1;
    }
    h
};

/// [`simplex3`]'s hash multipliers (odd) and offset for `seed`: the corner hash is
/// `H = i·a + j·b + k·c + e` (wrapping), the gradient index the top five bits of `H²`.
#[inline(always)]
pub(crate) fn s3_keys(seed: i32) -> [i32; 4] {
    let m = (seed as u32 ^ 0x9e37_79b9).wrapping_mul(0x85eb_ca6b);
    let m = (m ^ (m >> 13)).wrapping_mul(0xc2b2_ae35);
    let m = m ^ (m >> 16);
    let mix = |p: i32, sh: u32| (p ^ ((m.rotate_left(sh) & 0x0fff_fff0) as i32)) | 1;
    [
        mix(PX, 0),
        mix(PY, 11),
        mix(PZ, 22),
        (m ^ 0x6a09_e667) as i32,
    ]
}

/// [`simplex3`] from its skewed coordinates.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn simplex3_skewed<S: Simd>(seed: i32, xs: S::F, ys: S::F, zs: S::F) -> S::F {
    s3_corners::<S>(seed, &s3_cell::<S>(seed, xs, ys, zs))
}

/// The lattice part of [`simplex3_skewed`]: the offset `d` to the cell's base corner, the
/// unskew term `t` and the base corner's hash. Split from [`s3_corners`] so a grid loop can
/// compute the cell of the next vector before the corners of this one (same operations).
#[derive(Clone, Copy)]
pub(crate) struct S3Cell<S: Simd> {
    pub(crate) t: S::F,
    pub(crate) d: [S::F; 3],
    pub(crate) hb: S::I,
}

#[inline(always)]
pub(crate) fn s3_cell<S: Simd>(seed: i32, xs: S::F, ys: S::F, zs: S::F) -> S3Cell<S> {
    let (i, j, k) = (S::floor(xs), S::floor(ys), S::floor(zs));
    let (fx, fy, fz) = (xs - i, ys - j, zs - k);
    let t = ((fx + fy) + fz) * S::f(S3_G1);
    let [pa, pb, pc, pe] = s3_keys(seed);
    let hb =
        (S::trunc(i) * S::i(pa) + S::trunc(j) * S::i(pb)) + (S::trunc(k) * S::i(pc) + S::i(pe));
    S3Cell {
        t,
        d: [fx - t, fy - t, fz - t],
        hb,
    }
}

/// The four corner contributions of [`simplex3_skewed`].
#[inline(always)]
pub(crate) fn s3_corners<S: Simd>(seed: i32, c: &S3Cell<S>) -> S::F {
    let [pa, pb, pc, _] = s3_keys(seed);
    let hb = c.hb;
    let [x0, y0, z0] = c.d;
    let xy = S::le(y0, x0);
    let yz = S::le(z0, y0);
    let xz = S::le(z0, x0);
    // Second corner: one step along the largest axis; third: along all but the smallest.
    let i1 = S::mand(xy, xz);
    let j1 = S::mandnot(yz, xy);
    let i2 = S::mor(xy, xz);
    let j2 = S::mnot(S::mandnot(xy, yz));
    let k2 = S::mnot(S::mand(xz, yz));
    let off1 = S::isel(i1, S::i(pa), S::isel(j1, S::i(pb), S::i(pc)));
    let off2 = S::isel(
        i2,
        S::isel(j2, S::i(pa.wrapping_add(pb)), S::i(pa.wrapping_add(pc))),
        S::i(pb.wrapping_add(pc)),
    );
    // Corner offsets `d0 + n·G3 − e`: a blend of two constants and one add per axis.
    let (g1, g1m) = (S::f(S3_G1), S::f(S3_G1M));
    let (g2, g2m) = (S::f(S3_G2), S::f(S3_G2M));
    let off = [
        [
            S::sel(i1, g1m, g1),
            S::sel(j1, g1m, g1),
            S::sel(S::mor(i1, j1), g1, g1m),
        ],
        [
            S::sel(i2, g2m, g2),
            S::sel(j2, g2m, g2),
            S::sel(k2, g2m, g2),
        ],
    ];
    let hh = [
        hb,
        hb + off1,
        hb + off2,
        hb + S::i(pa.wrapping_add(pb).wrapping_add(pc)),
    ];
    s3_sum::<S>(
        c.t,
        c.d,
        off,
        #[inline(always)]
        |n, [x, y, z]| {
            let h = corner_index::<S>(hh[n]);
            if n == 3 {
                dot3::<S, true>(h, x, y, z)
            } else {
                dot3::<S, false>(h, x, y, z)
            }
        },
    )
}

/// `G3 = 1/6` and the corner offset addends `n·G3 − e` of [`s3_corners`] (`e` 0 or 1).
pub(crate) const S3_G1: f32 = 1.0 / 6.0;
pub(crate) const S3_G1M: f32 = S3_G1 - 1.0;
pub(crate) const S3_G2: f32 = 2.0 * S3_G1;
pub(crate) const S3_G2M: f32 = 2.0 * S3_G1 - 1.0;

/// The falloff-weighted sum of [`simplex3_skewed`] over a simplex's four corners: `off` holds
/// the offset addends of corners 1 and 2 (`d_n = d0 + off[n − 1]`) and `dot(n, d_n)` is the
/// corner's (pre-scaled) gradient dot product, plus row 3 of [`S3_G`] for corner 3. Every
/// way of choosing the gradients shares these operations, in this order.
#[inline(always)]
pub(crate) fn s3_sum<S: Simd>(
    t: S::F,
    d: [S::F; 3],
    off: [[S::F; 3]; 2],
    dot: impl Fn(usize, [S::F; 3]) -> S::F,
) -> S::F {
    let [x0, y0, z0] = d;
    let r0 = S::f(0.5) - ((x0 * x0 + y0 * y0) + z0 * z0);
    let mut n = pow4_pos::<S>(r0) * dot(0, d);
    for (k, o) in off.into_iter().enumerate() {
        let (x, y, z) = (x0 + o[0], y0 + o[1], z0 + o[2]);
        let r = S::f(0.5) - ((x * x + y * y) + z * z);
        n = n + pow4_pos::<S>(r) * dot(k + 1, [x, y, z]);
    }
    // `d3 = d0 − (½, ½, ½)`, so `|d3|² = |d0|² − Σd0 + 0.75` with `Σd0 = 3t`, and
    // `g·d3 = g·d0 − Σg/2` (the fourth table row).
    let r3 = r0 + (t * S::f(3.0) - S::f(0.75));
    // `+ 0` maps a −0 sum to +0, so both forms of `dot3` give the same bits.
    (n + pow4_pos::<S>(r3) * dot(3, d)) + S::f(0.0)
}

/// The gradient index of a corner hash `H`: the top five bits of `H²`.
#[inline(always)]
pub(crate) fn corner_index<S: Simd>(hh: S::I) -> S::I {
    S::shr(hh * hh, 27)
}

/// `g·(x, y, z)` (plus row 3 of [`S3_G`] if `ROW3`) for gradient `h`: 32-entry lookups, or
/// on levels where those are dear ([`Simd::SPLIT_LUT32`]) 16-entry lookups and the sign of
/// the result flipped by bit 4 of `h`. The two agree except for the sign of an exact zero
/// (`−(a + b)` against `(−a) + (−b)`), which [`simplex3`]'s final `+ 0` erases: a zero term
/// cannot change a non-zero sum, and a zero sum becomes `+0` either way.
#[inline(always)]
fn dot3<S: Simd, const ROW3: bool>(h: S::I, x: S::F, y: S::F, z: S::F) -> S::F {
    if S::SPLIT_LUT32 {
        let t = &S3_G16;
        let d = (S::lut16(&t[0], h) * x + S::lut16(&t[1], h) * y) + S::lut16(&t[2], h) * z;
        let d = if ROW3 { d + S::lut16(&t[3], h) } else { d };
        return S::from_bits(S::bits(d) ^ (S::shl(h, 27) & S::i(i32::MIN)));
    }
    let t = &S3_G;
    let d = (S::lut32(&t[0], h) * x + S::lut32(&t[1], h) * y) + S::lut32(&t[2], h) * z;
    if ROW3 { d + S::lut32(&t[3], h) } else { d }
}

/// 3D OpenSimplex2 (fast variant): two offset cubic lattices forming a BCC lattice, four
/// candidate vertices each, r² = 0.6 kernel, evaluated on the rotated `(x+y+z)·2/3 − p` domain.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn os2_3<S: Simd>(seed: i32, x: S::F, y: S::F, z: S::F) -> S::F {
    let zero = S::f(0.0);
    let half = S::f(0.5);
    let r = (x + y + z) * S::f(2.0 / 3.0);
    let (x, y, z) = (r - x, r - y, r - z);
    let (xb, yb, zb) = (S::floor(x + half), S::floor(y + half), S::floor(z + half));
    let (mut xr, mut yr, mut zr) = (x - xb, y - yb, z - zb);
    let mut xp = S::trunc(xb) * S::i(PX);
    let mut yp = S::trunc(yb) * S::i(PY);
    let mut zp = S::trunc(zb) * S::i(PZ);
    // Sign of each axis' step towards the next vertex: −1 where the offset is ≥ 0.
    let (mut sx, mut sy, mut sz) = (
        S::sel(S::le(zero, xr), S::f(-1.0), S::f(1.0)),
        S::sel(S::le(zero, yr), S::f(-1.0), S::f(1.0)),
        S::sel(S::le(zero, zr), S::f(-1.0), S::f(1.0)),
    );
    let (mut ax, mut ay, mut az) = (abs::<S>(xr), abs::<S>(yr), abs::<S>(zr));
    let mut a = (S::f(0.6) - xr * xr) - (yr * yr + zr * zr);
    let mut sd = S::i(seed);
    let mut value = zero;
    for l in 0..2 {
        value = value + pow4_pos::<S>(a) * sgrad3::<S>(hash3::<S>(sd, xp, yp, zp), xr, yr, zr);
        let mx = S::mand(S::le(ay, ax), S::le(az, ax));
        let my = S::mandnot(S::mand(S::lt(ax, ay), S::le(az, ay)), mx);
        let mxy = S::mor(mx, my);
        let b = a + S::sel(mx, ax + ax, S::sel(my, ay + ay, az + az));
        let zi = S::i(0);
        let dx = xr + S::sel(mx, sx, zero);
        let dy = yr + S::sel(my, sy, zero);
        let dz = zr + S::sel(mxy, zero, sz);
        let hx = xp + S::isel(mx, S::isel(S::lt(sx, zero), S::i(PX), S::i(-PX)), zi);
        let hy = yp + S::isel(my, S::isel(S::lt(sy, zero), S::i(PY), S::i(-PY)), zi);
        let hz = zp + S::isel(mxy, zi, S::isel(S::lt(sz, zero), S::i(PZ), S::i(-PZ)));
        let c = b - S::f(1.0);
        value = value + pow4_pos::<S>(c) * sgrad3::<S>(hash3::<S>(sd, hx, hy, hz), dx, dy, dz);
        if l == 1 {
            break;
        }
        ax = half - ax;
        ay = half - ay;
        az = half - az;
        xr = sx * ax;
        yr = sy * ay;
        zr = sz * az;
        a = a + ((S::f(0.75) - ax) - (ay + az));
        xp = xp + S::isel(S::lt(sx, zero), S::i(PX), zi);
        yp = yp + S::isel(S::lt(sy, zero), S::i(PY), zi);
        zp = zp + S::isel(S::lt(sz, zero), S::i(PZ), zi);
        sx = zero - sx;
        sy = zero - sy;
        sz = zero - sz;
        sd = sd ^ S::i(0x52d5_47b2);
    }
    value * S::f(OS2_3_SCALE)
}

/// Cell distance metric for Worley noise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CellDistance {
    /// Straight-line distance.
    Euclidean,
    /// Sum of absolute axis differences.
    Manhattan,
}

/// Which Worley distance to return.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CellReturn {
    /// Distance to the nearest feature point.
    F1,
    /// Distance to the second-nearest feature point.
    F2,
    /// `F2 - F1` (cell borders).
    F2MinusF1,
}

#[inline(always)]
fn jitter<S: Simd>(h: S::I, shift: i32) -> S::F {
    S::cvt(S::shr(h, shift) & S::i(1023)) * S::f(1.0 / 1024.0) - S::f(0.5)
}

#[inline(always)]
fn worley_finish<S: Simd>(f1: S::F, f2: S::F, dist: CellDistance, ret: CellReturn) -> S::F {
    let (f1, f2) = match dist {
        CellDistance::Euclidean => (S::sqrt(f1), S::sqrt(f2)),
        CellDistance::Manhattan => (f1, f2),
    };
    match ret {
        CellReturn::F1 => f1,
        CellReturn::F2 => f2,
        CellReturn::F2MinusF1 => f2 - f1,
    }
}

/// 2D Worley noise over the 3×3 neighbourhood; one feature point per unit cell at
/// `cell + 0.5 + (u - 0.5)·jitter`, `u` from 10 hash bits per axis.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn worley2<S: Simd>(
    seed: i32,
    x: S::F,
    y: S::F,
    dist: CellDistance,
    ret: CellReturn,
    jit: f32,
) -> S::F {
    let (xfl, yfl) = (S::floor(x), S::floor(y));
    let (fx, fy) = (x - xfl, y - yfl);
    let xp = S::trunc(xfl) * S::i(PX);
    let yp = S::trunc(yfl) * S::i(PY);
    let sd = S::i(seed);
    let big = S::f(1e10);
    let (mut f1, mut f2) = (big, big);
    let j = S::f(jit);
    for dy in -1i32..=1 {
        for dx in -1i32..=1 {
            let h = hash2::<S>(
                sd,
                xp + S::i(dx.wrapping_mul(PX)),
                yp + S::i(dy.wrapping_mul(PY)),
            );
            let ddx = (S::f(dx as f32 + 0.5) + jitter::<S>(h, 0) * j) - fx;
            let ddy = (S::f(dy as f32 + 0.5) + jitter::<S>(h, 10) * j) - fy;
            let d = match dist {
                CellDistance::Euclidean => ddx * ddx + ddy * ddy,
                CellDistance::Manhattan => abs::<S>(ddx) + abs::<S>(ddy),
            };
            f2 = S::min(f2, S::max(f1, d));
            f1 = S::min(f1, d);
        }
    }
    worley_finish::<S>(f1, f2, dist, ret)
}

/// 3D Worley noise over the 3×3×3 neighbourhood (see [`worley2`]).
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn worley3<S: Simd>(
    seed: i32,
    x: S::F,
    y: S::F,
    z: S::F,
    dist: CellDistance,
    ret: CellReturn,
    jit: f32,
) -> S::F {
    let (xfl, yfl, zfl) = (S::floor(x), S::floor(y), S::floor(z));
    let (fx, fy, fz) = (x - xfl, y - yfl, z - zfl);
    let xp = S::trunc(xfl) * S::i(PX);
    let yp = S::trunc(yfl) * S::i(PY);
    let zp = S::trunc(zfl) * S::i(PZ);
    let sd = S::i(seed);
    let big = S::f(1e10);
    let (mut f1, mut f2) = (big, big);
    let j = S::f(jit);
    for dz in -1i32..=1 {
        for dy in -1i32..=1 {
            for dx in -1i32..=1 {
                let h = hash3::<S>(
                    sd,
                    xp + S::i(dx.wrapping_mul(PX)),
                    yp + S::i(dy.wrapping_mul(PY)),
                    zp + S::i(dz.wrapping_mul(PZ)),
                );
                let ddx = (S::f(dx as f32 + 0.5) + jitter::<S>(h, 0) * j) - fx;
                let ddy = (S::f(dy as f32 + 0.5) + jitter::<S>(h, 10) * j) - fy;
                let ddz = (S::f(dz as f32 + 0.5) + jitter::<S>(h, 20) * j) - fz;
                let d = match dist {
                    CellDistance::Euclidean => ddx * ddx + ddy * ddy + ddz * ddz,
                    CellDistance::Manhattan => abs::<S>(ddx) + abs::<S>(ddy) + abs::<S>(ddz),
                };
                f2 = S::min(f2, S::max(f1, d));
                f1 = S::min(f1, d);
            }
        }
    }
    worley_finish::<S>(f1, f2, dist, ret)
}
