//! Lane abstraction: every kernel is written once over [`Simd`] and instantiated for the
//! scalar path, SSE2, AVX2 and AVX-512 with the same IEEE operations in the same order, so
//! every level produces the same bits (no FMA, x86 semantics for `min`, `max` and
//! out-of-range float-to-int conversion emulated on the scalar path).

use core::ops::{Add, BitAnd, BitOr, BitXor, Mul, Sub};

/// One instruction set's vector types and the operations the kernels use.
///
/// Semantics every implementation must follow exactly:
/// - `min(a, b)` is `if a < b { a } else { b }` and `max(a, b)` is `if a > b { a } else { b }`
///   (x86 `minps`/`maxps`, including NaN and signed-zero behaviour);
/// - `trunc` truncates toward zero and yields `i32::MIN` for NaN or out-of-range input
///   (x86 `cvttps2dq`);
/// - `floor` is IEEE `floorf` (keeps the sign of zero);
/// - integer arithmetic wraps.
pub(crate) trait Simd: Copy {
    const LANES: usize;
    /// Whether [`Simd::lut32`] costs much more than [`Simd::lut16`] here, so a kernel with an
    /// antipodal table should look up 16 entries and flip signs instead.
    const SPLIT_LUT32: bool = false;
    type F: Copy + Add<Output = Self::F> + Sub<Output = Self::F> + Mul<Output = Self::F>;
    type I: Copy
        + Add<Output = Self::I>
        + Sub<Output = Self::I>
        + Mul<Output = Self::I>
        + BitAnd<Output = Self::I>
        + BitOr<Output = Self::I>
        + BitXor<Output = Self::I>;
    type M: Copy;

    fn f(v: f32) -> Self::F;
    fn i(v: i32) -> Self::I;
    /// Lane indices `0, 1, …, LANES - 1` as floats.
    fn iota() -> Self::F;
    /// Stores all lanes to `out[..LANES]`; `out.len() >= LANES`.
    fn store(v: Self::F, out: &mut [f32]);
    fn floor(a: Self::F) -> Self::F;
    fn sqrt(a: Self::F) -> Self::F;
    fn min(a: Self::F, b: Self::F) -> Self::F;
    fn max(a: Self::F, b: Self::F) -> Self::F;
    fn lt(a: Self::F, b: Self::F) -> Self::M;
    fn le(a: Self::F, b: Self::F) -> Self::M;
    fn sel(m: Self::M, a: Self::F, b: Self::F) -> Self::F;
    fn isel(m: Self::M, a: Self::I, b: Self::I) -> Self::I;
    fn ieq(a: Self::I, b: Self::I) -> Self::M;
    fn mand(a: Self::M, b: Self::M) -> Self::M;
    fn mor(a: Self::M, b: Self::M) -> Self::M;
    /// `a & !b`.
    fn mandnot(a: Self::M, b: Self::M) -> Self::M;
    fn mnot(a: Self::M) -> Self::M;
    fn trunc(a: Self::F) -> Self::I;
    fn cvt(a: Self::I) -> Self::F;
    fn bits(a: Self::F) -> Self::I;
    fn from_bits(a: Self::I) -> Self::F;
    fn shl(a: Self::I, n: i32) -> Self::I;
    /// Logical shift right.
    fn shr(a: Self::I, n: i32) -> Self::I;
    /// `m · m` with `m = max(a, 0)` (same bits). A level may compute it as a compare and a
    /// zero-masked multiply instead of `max`, which shares the adders' pipes.
    #[inline(always)]
    fn pos_sq(a: Self::F) -> Self::F {
        let m = Self::max(a, Self::f(0.0));
        m * m
    }
    /// `t.i[idx & 255]` per lane. Total: every lane's index is masked to the table, so any
    /// input (negative, past 255) reads an entry and nothing else; the vector levels do it
    /// in registers, the scalar one with a bounds-checked index (`tests` check indices
    /// outside `0..256` on every level).
    fn lut256(t: &Perm, idx: Self::I) -> Self::I;
    /// [`Simd::lut256`] of two vectors; a level may pack them into one lookup.
    #[inline(always)]
    fn lut256_2(t: &Perm, a: Self::I, b: Self::I) -> (Self::I, Self::I) {
        (Self::lut256(t, a), Self::lut256(t, b))
    }
    /// [`Simd::lut256`] of four vectors; a level may pack them into one lookup.
    #[inline(always)]
    fn lut256_4(t: &Perm, v: [Self::I; 4]) -> [Self::I; 4] {
        let (a, b) = Self::lut256_2(t, v[0], v[1]);
        let (c, d) = Self::lut256_2(t, v[2], v[3]);
        [a, b, c, d]
    }
    /// `t[idx & 15]` per lane (total, like [`Simd::lut256`]).
    fn lut16(t: &[f32; 16], idx: Self::I) -> Self::F;
    /// `t[idx & 31]` per lane (total, like [`Simd::lut256`]).
    fn lut32(t: &[f32; 32], idx: Self::I) -> Self::F;
}

/// The few extra lane operations of the Simplex 3D grid path with per-cell gradient tables
/// (`s3grid`): levels with a one-register eight-entry table lookup implement it.
pub(crate) trait CellLanes: Simd {
    /// `t[q & 7]` per lane.
    fn perm8(t: &[f32; 8], q: Self::I) -> Self::F;
    /// A mask as integers: −1 where set, 0 elsewhere.
    fn mask_i(m: Self::M) -> Self::I;
    /// Whether the mask is set in every lane.
    fn all(m: Self::M) -> bool;
    /// The first and the last lane.
    fn ends(v: Self::I) -> (i32, i32);
}

/// A 256-entry byte permutation, stored as `i32`s for scalar lookups, packed four per `u32`
/// (little-endian) for in-register lookups, and as sixteen 16-byte shuffle tables (each
/// repeated in both halves of a 32-byte row) for byte-shuffle lookups:
/// rows `0..8` are `L₀, L₁ ⊕ L₀, …, L₇ ⊕ L₆` and rows `8..16` are
/// `H₀ ⊕ H₁, …, H₆ ⊕ H₇, H₇`, where `Lⱼ` is entries `16j..16j + 16` and `Hⱼ` entries
/// `128 + 16j..128 + 16j + 16`. XOR-ing a prefix of the `L` rows (or a suffix of the `H` rows)
/// telescopes to one block, which is how the AVX2 lookup selects it without a gather.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Perm {
    pub(crate) i: [i32; 256],
    pub(crate) b: [u32; 64],
    pub(crate) x: [[u8; 32]; 16],
}

impl Perm {
    /// Packs a table; entries are taken `& 255`.
    pub(crate) const fn new(i: [i32; 256]) -> Perm {
        let mut i = i;
        let mut b = [0u32; 64];
        let mut k = 0;
        while k < 256 {
            i[k] &= 255;
            b[k / 4] |= (i[k] as u32) << ((k % 4) * 8);
            k += 1;
        }
        let mut x = [[0u8; 32]; 16];
        let mut e = 0;
        while e < 16 {
            let mut j = 0;
            while j < 8 {
                let l = byte(&i, 16 * j + e);
                let lq = if j == 0 {
                    l
                } else {
                    l ^ byte(&i, 16 * (j - 1) + e)
                };
                let h = byte(&i, 128 + 16 * j + e);
                let hq = if j == 7 {
                    h
                } else {
                    h ^ byte(&i, 128 + 16 * (j + 1) + e)
                };
                x[j][e] = lq;
                x[j][e + 16] = lq;
                x[8 + j][e] = hq;
                x[8 + j][e + 16] = hq;
                j += 1;
            }
            e += 1;
        }
        Perm { i, b, x }
    }
}

/// Entry `k` of a masked table as a byte.
const fn byte(i: &[i32; 256], k: usize) -> u8 {
    i[k] as u8
}

/// Wrapping `i32` for the scalar lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wi(pub i32);

macro_rules! wi_op {
    ($tr:ident, $m:ident, $e:expr) => {
        impl $tr for Wi {
            type Output = Wi;
            #[inline(always)]
            fn $m(self, o: Wi) -> Wi {
                let f: fn(i32, i32) -> i32 = $e;
                Wi(f(self.0, o.0))
            }
        }
    };
}
wi_op!(Add, add, |a, b| a.wrapping_add(b));
wi_op!(Sub, sub, |a, b| a.wrapping_sub(b));
wi_op!(Mul, mul, |a, b| a.wrapping_mul(b));
wi_op!(BitAnd, bitand, |a, b| a & b);
wi_op!(BitOr, bitor, |a, b| a | b);
wi_op!(BitXor, bitxor, |a, b| a ^ b);

/// The portable one-lane reference implementation.
#[derive(Clone, Copy)]
pub(crate) struct Scalar;

impl Simd for Scalar {
    const LANES: usize = 1;
    type F = f32;
    type I = Wi;
    type M = bool;
    #[inline(always)]
    fn f(v: f32) -> f32 {
        v
    }
    #[inline(always)]
    fn i(v: i32) -> Wi {
        Wi(v)
    }
    #[inline(always)]
    fn iota() -> f32 {
        0.0
    }
    #[inline(always)]
    fn store(v: f32, out: &mut [f32]) {
        out[0] = v;
    }
    #[inline(always)]
    fn floor(a: f32) -> f32 {
        a.floor()
    }
    #[inline(always)]
    fn sqrt(a: f32) -> f32 {
        a.sqrt()
    }
    #[inline(always)]
    fn min(a: f32, b: f32) -> f32 {
        if a < b { a } else { b }
    }
    #[inline(always)]
    fn max(a: f32, b: f32) -> f32 {
        if a > b { a } else { b }
    }
    #[inline(always)]
    fn lt(a: f32, b: f32) -> bool {
        a < b
    }
    #[inline(always)]
    fn le(a: f32, b: f32) -> bool {
        a <= b
    }
    #[inline(always)]
    fn sel(m: bool, a: f32, b: f32) -> f32 {
        if m { a } else { b }
    }
    #[inline(always)]
    fn isel(m: bool, a: Wi, b: Wi) -> Wi {
        if m { a } else { b }
    }
    #[inline(always)]
    fn ieq(a: Wi, b: Wi) -> bool {
        a.0 == b.0
    }
    #[inline(always)]
    fn mand(a: bool, b: bool) -> bool {
        a & b
    }
    #[inline(always)]
    fn mor(a: bool, b: bool) -> bool {
        a | b
    }
    #[inline(always)]
    fn mandnot(a: bool, b: bool) -> bool {
        a & !b
    }
    #[inline(always)]
    fn mnot(a: bool) -> bool {
        !a
    }
    #[inline(always)]
    fn trunc(a: f32) -> Wi {
        if (-2_147_483_648.0..2_147_483_648.0).contains(&a) {
            Wi(a as i32)
        } else {
            Wi(i32::MIN)
        }
    }
    #[inline(always)]
    fn cvt(a: Wi) -> f32 {
        a.0 as f32
    }
    #[inline(always)]
    fn bits(a: f32) -> Wi {
        Wi(a.to_bits() as i32)
    }
    #[inline(always)]
    fn from_bits(a: Wi) -> f32 {
        f32::from_bits(a.0 as u32)
    }
    #[inline(always)]
    fn shl(a: Wi, n: i32) -> Wi {
        Wi(((a.0 as u32) << n) as i32)
    }
    #[inline(always)]
    fn shr(a: Wi, n: i32) -> Wi {
        Wi(((a.0 as u32) >> n) as i32)
    }
    #[inline(always)]
    fn lut256(t: &Perm, idx: Wi) -> Wi {
        Wi(t.i[(idx.0 & 255) as usize])
    }
    #[inline(always)]
    fn lut16(t: &[f32; 16], idx: Wi) -> f32 {
        t[(idx.0 & 15) as usize]
    }
    #[inline(always)]
    fn lut32(t: &[f32; 32], idx: Wi) -> f32 {
        t[(idx.0 & 31) as usize]
    }
}

impl CellLanes for Scalar {
    #[inline(always)]
    fn perm8(t: &[f32; 8], q: Wi) -> f32 {
        t[(q.0 & 7) as usize]
    }
    #[inline(always)]
    fn mask_i(m: bool) -> Wi {
        Wi(-i32::from(m))
    }
    #[inline(always)]
    fn all(m: bool) -> bool {
        m
    }
    #[inline(always)]
    fn ends(v: Wi) -> (i32, i32) {
        (v.0, v.0)
    }
}

/// Two vectors of one level processed as one: every operation is applied to both halves,
/// lane by lane, so results are the same bits as the level alone. Kernels instantiated over
/// it interleave two independent dependency chains, which hides latency on wide cores.
#[derive(Clone, Copy)]
pub(crate) struct X2<S>(core::marker::PhantomData<S>);

/// A pair of values, one per half of an [`X2`] vector.
#[derive(Clone, Copy)]
pub(crate) struct P<T>(pub T, pub T);

macro_rules! pair_op {
    ($tr:ident, $m:ident) => {
        impl<T: $tr<Output = T>> $tr for P<T> {
            type Output = P<T>;
            #[inline(always)]
            fn $m(self, o: P<T>) -> P<T> {
                P(self.0.$m(o.0), self.1.$m(o.1))
            }
        }
    };
}
pair_op!(Add, add);
pair_op!(Sub, sub);
pair_op!(Mul, mul);
pair_op!(BitAnd, bitand);
pair_op!(BitOr, bitor);
pair_op!(BitXor, bitxor);

impl<S: Simd> Simd for X2<S> {
    const LANES: usize = 2 * S::LANES;
    const SPLIT_LUT32: bool = S::SPLIT_LUT32;
    type F = P<S::F>;
    type I = P<S::I>;
    type M = P<S::M>;
    #[inline(always)]
    fn f(v: f32) -> Self::F {
        let a = S::f(v);
        P(a, a)
    }
    #[inline(always)]
    fn i(v: i32) -> Self::I {
        let a = S::i(v);
        P(a, a)
    }
    #[inline(always)]
    fn iota() -> Self::F {
        let a = S::iota();
        P(a, a + S::f(S::LANES as f32))
    }
    #[inline(always)]
    fn store(v: Self::F, out: &mut [f32]) {
        S::store(v.0, out);
        S::store(v.1, &mut out[S::LANES..]);
    }
    #[inline(always)]
    fn floor(a: Self::F) -> Self::F {
        P(S::floor(a.0), S::floor(a.1))
    }
    #[inline(always)]
    fn sqrt(a: Self::F) -> Self::F {
        P(S::sqrt(a.0), S::sqrt(a.1))
    }
    #[inline(always)]
    fn min(a: Self::F, b: Self::F) -> Self::F {
        P(S::min(a.0, b.0), S::min(a.1, b.1))
    }
    #[inline(always)]
    fn max(a: Self::F, b: Self::F) -> Self::F {
        P(S::max(a.0, b.0), S::max(a.1, b.1))
    }
    #[inline(always)]
    fn lt(a: Self::F, b: Self::F) -> Self::M {
        P(S::lt(a.0, b.0), S::lt(a.1, b.1))
    }
    #[inline(always)]
    fn le(a: Self::F, b: Self::F) -> Self::M {
        P(S::le(a.0, b.0), S::le(a.1, b.1))
    }
    #[inline(always)]
    fn sel(m: Self::M, a: Self::F, b: Self::F) -> Self::F {
        P(S::sel(m.0, a.0, b.0), S::sel(m.1, a.1, b.1))
    }
    #[inline(always)]
    fn isel(m: Self::M, a: Self::I, b: Self::I) -> Self::I {
        P(S::isel(m.0, a.0, b.0), S::isel(m.1, a.1, b.1))
    }
    #[inline(always)]
    fn ieq(a: Self::I, b: Self::I) -> Self::M {
        P(S::ieq(a.0, b.0), S::ieq(a.1, b.1))
    }
    #[inline(always)]
    fn mand(a: Self::M, b: Self::M) -> Self::M {
        P(S::mand(a.0, b.0), S::mand(a.1, b.1))
    }
    #[inline(always)]
    fn mor(a: Self::M, b: Self::M) -> Self::M {
        P(S::mor(a.0, b.0), S::mor(a.1, b.1))
    }
    #[inline(always)]
    fn mandnot(a: Self::M, b: Self::M) -> Self::M {
        P(S::mandnot(a.0, b.0), S::mandnot(a.1, b.1))
    }
    #[inline(always)]
    fn mnot(a: Self::M) -> Self::M {
        P(S::mnot(a.0), S::mnot(a.1))
    }
    #[inline(always)]
    fn trunc(a: Self::F) -> Self::I {
        P(S::trunc(a.0), S::trunc(a.1))
    }
    #[inline(always)]
    fn cvt(a: Self::I) -> Self::F {
        P(S::cvt(a.0), S::cvt(a.1))
    }
    #[inline(always)]
    fn bits(a: Self::F) -> Self::I {
        P(S::bits(a.0), S::bits(a.1))
    }
    #[inline(always)]
    fn from_bits(a: Self::I) -> Self::F {
        P(S::from_bits(a.0), S::from_bits(a.1))
    }
    #[inline(always)]
    fn shl(a: Self::I, n: i32) -> Self::I {
        P(S::shl(a.0, n), S::shl(a.1, n))
    }
    #[inline(always)]
    fn shr(a: Self::I, n: i32) -> Self::I {
        P(S::shr(a.0, n), S::shr(a.1, n))
    }
    #[inline(always)]
    fn pos_sq(a: Self::F) -> Self::F {
        P(S::pos_sq(a.0), S::pos_sq(a.1))
    }
    #[inline(always)]
    fn lut256(t: &Perm, idx: Self::I) -> Self::I {
        let (a, b) = S::lut256_2(t, idx.0, idx.1);
        P(a, b)
    }
    #[inline(always)]
    fn lut256_2(t: &Perm, a: Self::I, b: Self::I) -> (Self::I, Self::I) {
        let [p, q, r, s] = S::lut256_4(t, [a.0, a.1, b.0, b.1]);
        (P(p, q), P(r, s))
    }
    #[inline(always)]
    fn lut16(t: &[f32; 16], idx: Self::I) -> Self::F {
        P(S::lut16(t, idx.0), S::lut16(t, idx.1))
    }
    #[inline(always)]
    fn lut32(t: &[f32; 32], idx: Self::I) -> Self::F {
        P(S::lut32(t, idx.0), S::lut32(t, idx.1))
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{Avx2, Avx512, Sse2};

#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    const SPECIAL: [f32; 20] = [
        0.0,
        -0.0,
        0.5,
        -0.5,
        -1.0,
        1.0,
        -1e-40,
        1e-40,
        8_388_607.5,
        -8_388_607.5,
        8_388_608.0,
        -8_388_609.0,
        3e9,
        -3e9,
        2_147_483_520.0,
        -2_147_483_648.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -123.75,
    ];

    fn lanes<S: Simd>(f: impl Fn(S::F) -> S::F, input: &[f32]) -> Vec<u32> {
        let mut out = Vec::new();
        for chunk in input.chunks(S::LANES) {
            let mut buf = [0.0f32; 64];
            buf[..chunk.len()].copy_from_slice(chunk);
            // Build the vector lane by lane through iota arithmetic-free loads.
            let mut v = S::f(0.0);
            for (k, &c) in chunk.iter().enumerate() {
                let m = S::lt(S::iota(), S::f(k as f32 + 0.5));
                let m2 = S::le(S::f(k as f32 - 0.5), S::iota());
                v = S::sel(S::mand(m, m2), S::f(c), v);
            }
            let mut o = [0.0f32; 64];
            S::store(f(v), &mut o);
            out.extend(o[..chunk.len()].iter().map(|x| x.to_bits()));
        }
        out
    }

    #[test]
    fn floor_and_trunc_match_scalar_on_every_level() {
        let floor_s = lanes::<Scalar>(Scalar::floor, &SPECIAL);
        let trunc_s = lanes::<Scalar>(|v| Scalar::cvt(Scalar::trunc(v)), &SPECIAL);
        assert_eq!(f32::from_bits(floor_s[1]).to_bits(), (-0.0f32).to_bits());
        assert_eq!(f32::from_bits(floor_s[6]), -1.0);
        assert_eq!(f32::from_bits(trunc_s[12]), -2_147_483_648.0);
        assert_eq!(lanes::<Sse2>(Sse2::floor, &SPECIAL), floor_s);
        assert_eq!(
            lanes::<Sse2>(|v| Sse2::cvt(Sse2::trunc(v)), &SPECIAL),
            trunc_s
        );
        if Avx2::detect().is_some() {
            assert_eq!(lanes::<Avx2>(Avx2::floor, &SPECIAL), floor_s);
            assert_eq!(
                lanes::<Avx2>(|v| Avx2::cvt(Avx2::trunc(v)), &SPECIAL),
                trunc_s
            );
        }
        if Avx512::<false>::detect().is_some() {
            type A = Avx512<false>;
            assert_eq!(lanes::<A>(A::floor, &SPECIAL), floor_s);
            assert_eq!(lanes::<A>(|v| A::cvt(A::trunc(v)), &SPECIAL), trunc_s);
        }
    }

    #[test]
    fn pos_sq_is_max_then_square_on_every_level() {
        let mut input = SPECIAL.to_vec();
        input.extend([1e-30, -1e-30, 1e20, 0.6, -0.6, f32::MIN_POSITIVE, 3.0]);
        let want = lanes::<Scalar>(
            |v| {
                let m = Scalar::max(v, 0.0);
                m * m
            },
            &input,
        );
        assert_eq!(want[0], 0, "+0 stays +0");
        assert_eq!(want[1], 0, "max(-0, 0) is +0");
        assert_eq!(want[18], 0, "a NaN becomes +0");
        assert_eq!(lanes::<Scalar>(Scalar::pos_sq, &input), want);
        assert_eq!(lanes::<Sse2>(Sse2::pos_sq, &input), want);
        if Avx2::detect().is_some() {
            assert_eq!(lanes::<Avx2>(Avx2::pos_sq, &input), want);
        }
        if Avx512::<false>::detect().is_some() {
            type A = Avx512<false>;
            assert_eq!(lanes::<A>(A::pos_sq, &input), want);
            assert_eq!(lanes::<X2<A>>(X2::<A>::pos_sq, &input), want);
        }
    }

    /// Indices 0..256, then out-of-range ones (`lut256` masks them with `& 255`).
    fn lut_idx() -> Vec<f32> {
        let mut idx: Vec<f32> = (0..256).map(|i| i as f32).collect();
        idx.extend([
            256.0, 300.0, 511.0, -1.0, -255.0, -256.0, 65_791.0, -3e9, 1e9, 1e4,
        ]);
        while !idx.len().is_multiple_of(64) {
            idx.push((idx.len() * 37 % 1000) as f32 - 500.0);
        }
        idx
    }

    fn lut_all<S: Simd>(t: &Perm) -> Vec<u32> {
        lanes::<S>(|v| S::cvt(S::lut256(t, S::trunc(v))), &lut_idx())
    }

    /// `lut256_2` / `lut256_4` (packed lookups) lane by lane against `lut256`: each input
    /// vector is the index vector shifted by a different amount.
    fn lut_packed<S: Simd>(t: &Perm) -> Vec<u32> {
        let sh = |v: S::I, k: i32| v + S::i(k * 53);
        lanes::<S>(
            |v| {
                let i = S::trunc(v);
                let (a, b) = S::lut256_2(t, sh(i, 0), sh(i, 1));
                let [c, d, e, f] = S::lut256_4(t, [sh(i, 2), sh(i, 3), sh(i, 4), sh(i, 5)]);
                let direct = [0, 1, 2, 3, 4, 5].map(|k| S::lut256(t, sh(i, k)));
                let got = [a, b, c, d, e, f];
                // Lanes agree with the single lookups, and the sum keeps every output.
                let mut acc = S::i(0);
                for (k, (g, w)) in got.into_iter().zip(direct).enumerate() {
                    let same = S::ieq(g, w);
                    acc = acc + S::isel(same, g * S::i(1 << (k + 1)), S::i(-1_000_000));
                }
                S::cvt(acc)
            },
            &lut_idx(),
        )
    }

    fn lut32_all<S: Simd>(t: &[f32; 32]) -> Vec<u32> {
        // Indices 0..96: lanes past 31 must wrap (`& 31`) like the scalar path.
        let idx: Vec<f32> = (0..96).map(|i| i as f32).collect();
        lanes::<S>(|v| S::lut32(t, S::trunc(v)), &idx)
    }

    #[test]
    fn lut32_matches_scalar_on_every_level() {
        let t: [f32; 32] = core::array::from_fn(|k| (k as f32 - 15.5) * 0.37);
        let want = lut32_all::<Scalar>(&t);
        assert_eq!(f32::from_bits(want[33]), t[1]);
        assert_eq!(lut32_all::<Sse2>(&t), want);
        if Avx2::detect().is_some() {
            assert_eq!(lut32_all::<Avx2>(&t), want);
            assert_eq!(lut32_all::<X2<Avx2>>(&t), want);
        }
        if Avx512::<false>::detect().is_some() {
            assert_eq!(lut32_all::<Avx512<false>>(&t), want);
            assert_eq!(lut32_all::<X2<Avx512<false>>>(&t), want);
        }
    }

    #[test]
    fn table_lookups_match_scalar_on_every_level() {
        let mut raw = [0i32; 256];
        for (k, r) in raw.iter_mut().enumerate() {
            *r = ((k * 167 + 13) % 256) as i32;
        }
        let t = Perm::new(raw);
        let want = lut_all::<Scalar>(&t);
        assert_eq!(f32::from_bits(want[1]), 180.0);
        assert_eq!(
            f32::from_bits(want[256]),
            f32::from_bits(want[0]),
            "256 & 255 = 0"
        );
        assert_eq!(
            f32::from_bits(want[259]),
            f32::from_bits(want[255]),
            "-1 & 255 = 255"
        );
        let packed = lut_packed::<Scalar>(&t);
        assert!(packed.iter().all(|&b| f32::from_bits(b) >= 0.0));
        assert_eq!(lut_packed::<Sse2>(&t), packed);
        assert_eq!(lut_packed::<X2<Sse2>>(&t), packed);
        assert_eq!(lut_packed::<X2<X2<Sse2>>>(&t), packed);
        if Avx2::detect().is_some() {
            assert_eq!(lut_packed::<Avx2>(&t), packed);
            assert_eq!(lut_packed::<X2<Avx2>>(&t), packed);
            assert_eq!(lut_packed::<X2<X2<Avx2>>>(&t), packed);
            assert_eq!(lut_all::<X2<X2<Avx2>>>(&t), want);
        }
        if Avx512::<false>::detect().is_some() {
            assert_eq!(lut_packed::<X2<X2<Avx512<false>>>>(&t), packed);
        }
        assert_eq!(lut_all::<Sse2>(&t), want);
        if Avx2::detect().is_some() {
            assert_eq!(lut_all::<Avx2>(&t), want);
        }
        if Avx512::<false>::detect().is_some() {
            assert_eq!(lut_all::<Avx512<false>>(&t), want);
        }
        if Avx512::<true>::detect().is_some() {
            assert_eq!(lut_all::<Avx512<true>>(&t), want);
        }
    }
}
