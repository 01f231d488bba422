//! SSE2, AVX2 and AVX-512 lanes. Every method is `#[inline(always)]` and only ever
//! inlined into a `#[target_feature]` entry point of the matching level.
//!
//! # Soundness
//! SSE2 is part of the x86-64 baseline, so every x86-64 CPU runs its intrinsics. AVX2 and
//! AVX-512 instructions exist only on some CPUs: the level types [`Avx2`] and [`Avx512`] are
//! proof tokens, constructible only through `detect()`, which returns one only after the CPU
//! reported the level's features. The `#[target_feature]` entry points of `grid.rs` take a
//! token, and tests obtain one before they use a level, so the lane operations below only
//! run where their instructions exist. (They are associated functions, so the compiler does
//! not check that last step: nothing outside the entry points and the tests may instantiate
//! a kernel with these types.) Register-only intrinsics go through [`arch!`], which states
//! that invariant once; the few that touch memory do so through the `ld*`/`st*` helpers, on
//! references whose type fixes the number of elements read or written.

use super::{CellLanes, Perm, Simd};
use core::arch::x86_64::*;
use core::ops::{Add, BitAnd, BitOr, BitXor, Mul, Sub};

/// Runs intrinsics that only read and write registers.
macro_rules! arch {
    ($($t:tt)*) => {{
        // SAFETY: the only requirement of these intrinsics is that the CPU has the level's
        // features: SSE2 is in the x86-64 baseline, and this module's AVX2 and AVX-512 code
        // runs only behind a proof token that `detect()` issued after checking them (see the
        // module's Soundness section).
        #[allow(unused_unsafe)]
        unsafe { $($t)* }
    }};
}

macro_rules! vops {
    ($t:ident, $inner:ty, $add:ident, $sub:ident, $mul:ident) => {
        #[derive(Clone, Copy)]
        pub(crate) struct $t(pub $inner);
        impl Add for $t {
            type Output = $t;
            #[inline(always)]
            fn add(self, o: $t) -> $t {
                $t(arch! { $add(self.0, o.0) })
            }
        }
        impl Sub for $t {
            type Output = $t;
            #[inline(always)]
            fn sub(self, o: $t) -> $t {
                $t(arch! { $sub(self.0, o.0) })
            }
        }
        impl Mul for $t {
            type Output = $t;
            #[inline(always)]
            fn mul(self, o: $t) -> $t {
                $t(arch! { $mul(self.0, o.0) })
            }
        }
    };
}
macro_rules! iops {
    ($t:ident, $and:ident, $or:ident, $xor:ident) => {
        impl BitAnd for $t {
            type Output = $t;
            #[inline(always)]
            fn bitand(self, o: $t) -> $t {
                $t(arch! { $and(self.0, o.0) })
            }
        }
        impl BitOr for $t {
            type Output = $t;
            #[inline(always)]
            fn bitor(self, o: $t) -> $t {
                $t(arch! { $or(self.0, o.0) })
            }
        }
        impl BitXor for $t {
            type Output = $t;
            #[inline(always)]
            fn bitxor(self, o: $t) -> $t {
                $t(arch! { $xor(self.0, o.0) })
            }
        }
    };
}

/// Loads and stores through references of the exact size: each helper reads or writes
/// exactly the elements its reference covers (unaligned access is allowed by these
/// intrinsics), and needs only the level's features besides.
macro_rules! mem {
    ($($ld:ident, $st:ident, $t:ty, $n:literal, $v:ty, $load:ident, $store:ident;)*) => {$(
        #[inline(always)]
        fn $ld(a: &[$t; $n]) -> $v {
            // SAFETY: `a` covers exactly the register's width of readable elements, and the
            // level's features are present (module Soundness section).
            unsafe { $load(a.as_ptr().cast()) }
        }
        #[allow(dead_code)]
        #[inline(always)]
        fn $st(a: &mut [$t; $n], v: $v) {
            // SAFETY: `a` covers exactly the register's width of writable elements, and the
            // level's features are present (module Soundness section).
            unsafe { $store(a.as_mut_ptr().cast(), v) }
        }
    )*};
}
mem! {
    ld_f4, st_f4, f32, 4, __m128, _mm_loadu_ps, _mm_storeu_ps;
    ld_i4, st_i4, i32, 4, __m128i, _mm_loadu_si128, _mm_storeu_si128;
    ld_f8, st_f8, f32, 8, __m256, _mm256_loadu_ps, _mm256_storeu_ps;
    ld_b32, st_b32, u8, 32, __m256i, _mm256_loadu_si256, _mm256_storeu_si256;
    ld_f16, st_f16, f32, 16, __m512, _mm512_loadu_ps, _mm512_storeu_ps;
    ld_u16, st_u16, u32, 16, __m512i, _mm512_loadu_si512, _mm512_storeu_si512;
}

/// The first `N` elements of `out` as an array; `out.len() >= N` is the caller's contract
/// ([`Simd::store`]), checked here.
#[inline(always)]
fn head<const N: usize>(out: &mut [f32]) -> &mut [f32; N] {
    out.first_chunk_mut::<N>()
        .expect("Simd::store needs at least LANES elements")
}

/// The `k`-th block of `N` elements of a table.
#[inline(always)]
fn block<T, const N: usize>(t: &[T], k: usize) -> &[T; N] {
    &t.as_chunks::<N>().0[k]
}

#[inline(always)]
fn mullo_sse2(a: __m128i, b: __m128i) -> __m128i {
    arch! {
    let p02 = _mm_mul_epu32(a, b);
    let p13 = _mm_mul_epu32(_mm_shuffle_epi32::<0xF5>(a), _mm_shuffle_epi32::<0xF5>(b));
    _mm_unpacklo_epi32(
        _mm_shuffle_epi32::<0x08>(p02),
        _mm_shuffle_epi32::<0x08>(p13),
    )
    }
}

vops!(F4, __m128, _mm_add_ps, _mm_sub_ps, _mm_mul_ps);
vops!(I4, __m128i, _mm_add_epi32, _mm_sub_epi32, mullo_sse2);
iops!(I4, _mm_and_si128, _mm_or_si128, _mm_xor_si128);
vops!(F8, __m256, _mm256_add_ps, _mm256_sub_ps, _mm256_mul_ps);
vops!(
    I8,
    __m256i,
    _mm256_add_epi32,
    _mm256_sub_epi32,
    _mm256_mullo_epi32
);
iops!(I8, _mm256_and_si256, _mm256_or_si256, _mm256_xor_si256);
vops!(F16, __m512, _mm512_add_ps, _mm512_sub_ps, _mm512_mul_ps);
vops!(
    I16,
    __m512i,
    _mm512_add_epi32,
    _mm512_sub_epi32,
    _mm512_mullo_epi32
);
iops!(I16, _mm512_and_si512, _mm512_or_si512, _mm512_xor_si512);

/// SSE2 (the x86-64 baseline): floor and gathers are emulated.
#[derive(Clone, Copy)]
pub(crate) struct Sse2;

impl Simd for Sse2 {
    const LANES: usize = 4;
    type F = F4;
    type I = I4;
    type M = __m128;
    #[inline(always)]
    fn f(v: f32) -> F4 {
        F4(arch! { _mm_set1_ps(v) })
    }
    #[inline(always)]
    fn i(v: i32) -> I4 {
        I4(arch! { _mm_set1_epi32(v) })
    }
    #[inline(always)]
    fn iota() -> F4 {
        F4(arch! { _mm_setr_ps(0.0, 1.0, 2.0, 3.0) })
    }
    #[inline(always)]
    fn store(v: F4, out: &mut [f32]) {
        st_f4(head(out), v.0);
    }
    #[inline(always)]
    fn floor(a: F4) -> F4 {
        arch! {
            let x = a.0;
            let t = _mm_cvtepi32_ps(_mm_cvttps_epi32(x));
            let t = _mm_sub_ps(t, _mm_and_ps(_mm_cmpgt_ps(t, x), _mm_set1_ps(1.0)));
            let sign = _mm_set1_ps(-0.0);
            let t = _mm_or_ps(t, _mm_and_ps(x, sign));
            let big = _mm_cmpnlt_ps(_mm_andnot_ps(sign, x), _mm_set1_ps(8_388_608.0));
            F4(_mm_or_ps(_mm_and_ps(big, x), _mm_andnot_ps(big, t)))
        }
    }
    #[inline(always)]
    fn sqrt(a: F4) -> F4 {
        F4(arch! { _mm_sqrt_ps(a.0) })
    }
    #[inline(always)]
    fn min(a: F4, b: F4) -> F4 {
        F4(arch! { _mm_min_ps(a.0, b.0) })
    }
    #[inline(always)]
    fn max(a: F4, b: F4) -> F4 {
        F4(arch! { _mm_max_ps(a.0, b.0) })
    }
    #[inline(always)]
    fn lt(a: F4, b: F4) -> __m128 {
        arch! { _mm_cmplt_ps(a.0, b.0) }
    }
    #[inline(always)]
    fn le(a: F4, b: F4) -> __m128 {
        arch! { _mm_cmple_ps(a.0, b.0) }
    }
    #[inline(always)]
    fn sel(m: __m128, a: F4, b: F4) -> F4 {
        F4(arch! { _mm_or_ps(_mm_and_ps(m, a.0), _mm_andnot_ps(m, b.0)) })
    }
    #[inline(always)]
    fn isel(m: __m128, a: I4, b: I4) -> I4 {
        arch! {
            let m = _mm_castps_si128(m);
            I4(_mm_or_si128(
                _mm_and_si128(m, a.0),
                _mm_andnot_si128(m, b.0),
            ))
        }
    }
    #[inline(always)]
    fn ieq(a: I4, b: I4) -> __m128 {
        arch! { _mm_castsi128_ps(_mm_cmpeq_epi32(a.0, b.0)) }
    }
    #[inline(always)]
    fn mand(a: __m128, b: __m128) -> __m128 {
        arch! { _mm_and_ps(a, b) }
    }
    #[inline(always)]
    fn mor(a: __m128, b: __m128) -> __m128 {
        arch! { _mm_or_ps(a, b) }
    }
    #[inline(always)]
    fn mandnot(a: __m128, b: __m128) -> __m128 {
        arch! { _mm_andnot_ps(b, a) }
    }
    #[inline(always)]
    fn mnot(a: __m128) -> __m128 {
        arch! { _mm_xor_ps(a, _mm_castsi128_ps(_mm_set1_epi32(-1))) }
    }
    #[inline(always)]
    fn trunc(a: F4) -> I4 {
        I4(arch! { _mm_cvttps_epi32(a.0) })
    }
    #[inline(always)]
    fn cvt(a: I4) -> F4 {
        F4(arch! { _mm_cvtepi32_ps(a.0) })
    }
    #[inline(always)]
    fn bits(a: F4) -> I4 {
        I4(arch! { _mm_castps_si128(a.0) })
    }
    #[inline(always)]
    fn from_bits(a: I4) -> F4 {
        F4(arch! { _mm_castsi128_ps(a.0) })
    }
    #[inline(always)]
    fn shl(a: I4, n: i32) -> I4 {
        I4(arch! { _mm_sll_epi32(a.0, _mm_cvtsi32_si128(n)) })
    }
    #[inline(always)]
    fn shr(a: I4, n: i32) -> I4 {
        I4(arch! { _mm_srl_epi32(a.0, _mm_cvtsi32_si128(n)) })
    }
    #[inline(always)]
    fn lut256(t: &Perm, idx: I4) -> I4 {
        let mut l = [0i32; 4];
        st_i4(&mut l, idx.0);
        I4(ld_i4(&l.map(|i| t.i[(i & 255) as usize])))
    }
    #[inline(always)]
    fn lut16(t: &[f32; 16], idx: I4) -> F4 {
        let mut l = [0i32; 4];
        st_i4(&mut l, idx.0);
        F4(ld_f4(&l.map(|i| t[(i & 15) as usize])))
    }
    #[inline(always)]
    fn lut32(t: &[f32; 32], idx: I4) -> F4 {
        let mut l = [0i32; 4];
        st_i4(&mut l, idx.0);
        F4(ld_f4(&l.map(|i| t[(i & 31) as usize])))
    }
}

/// AVX2 (8 lanes; FMA deliberately unused, no gathers). A value is proof that the CPU has
/// AVX2 ([`Avx2::detect`]).
#[derive(Clone, Copy)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// The token, if this CPU has AVX2.
    pub(crate) fn detect() -> Option<Avx2> {
        std::is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }
}

impl Simd for Avx2 {
    const LANES: usize = 8;
    /// `lut32` is four permutes and three blends here, `lut16` two and one.
    const SPLIT_LUT32: bool = true;
    type F = F8;
    type I = I8;
    type M = __m256;
    #[inline(always)]
    fn f(v: f32) -> F8 {
        F8(arch! { _mm256_set1_ps(v) })
    }
    #[inline(always)]
    fn i(v: i32) -> I8 {
        I8(arch! { _mm256_set1_epi32(v) })
    }
    #[inline(always)]
    fn iota() -> F8 {
        F8(arch! { _mm256_setr_ps(0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0) })
    }
    #[inline(always)]
    fn store(v: F8, out: &mut [f32]) {
        st_f8(head(out), v.0);
    }
    #[inline(always)]
    fn floor(a: F8) -> F8 {
        F8(arch! { _mm256_round_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(a.0) })
    }
    #[inline(always)]
    fn sqrt(a: F8) -> F8 {
        F8(arch! { _mm256_sqrt_ps(a.0) })
    }
    #[inline(always)]
    fn min(a: F8, b: F8) -> F8 {
        F8(arch! { _mm256_min_ps(a.0, b.0) })
    }
    #[inline(always)]
    fn max(a: F8, b: F8) -> F8 {
        F8(arch! { _mm256_max_ps(a.0, b.0) })
    }
    #[inline(always)]
    fn lt(a: F8, b: F8) -> __m256 {
        arch! { _mm256_cmp_ps::<_CMP_LT_OQ>(a.0, b.0) }
    }
    #[inline(always)]
    fn le(a: F8, b: F8) -> __m256 {
        arch! { _mm256_cmp_ps::<_CMP_LE_OQ>(a.0, b.0) }
    }
    #[inline(always)]
    fn sel(m: __m256, a: F8, b: F8) -> F8 {
        F8(arch! { _mm256_blendv_ps(b.0, a.0, m) })
    }
    #[inline(always)]
    fn isel(m: __m256, a: I8, b: I8) -> I8 {
        arch! {
            I8(_mm256_castps_si256(_mm256_blendv_ps(
                _mm256_castsi256_ps(b.0),
                _mm256_castsi256_ps(a.0),
                m,
            )))
        }
    }
    #[inline(always)]
    fn ieq(a: I8, b: I8) -> __m256 {
        arch! { _mm256_castsi256_ps(_mm256_cmpeq_epi32(a.0, b.0)) }
    }
    #[inline(always)]
    fn mand(a: __m256, b: __m256) -> __m256 {
        arch! { _mm256_and_ps(a, b) }
    }
    #[inline(always)]
    fn mor(a: __m256, b: __m256) -> __m256 {
        arch! { _mm256_or_ps(a, b) }
    }
    #[inline(always)]
    fn mandnot(a: __m256, b: __m256) -> __m256 {
        arch! { _mm256_andnot_ps(b, a) }
    }
    #[inline(always)]
    fn mnot(a: __m256) -> __m256 {
        arch! { _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(-1))) }
    }
    #[inline(always)]
    fn trunc(a: F8) -> I8 {
        I8(arch! { _mm256_cvttps_epi32(a.0) })
    }
    #[inline(always)]
    fn cvt(a: I8) -> F8 {
        F8(arch! { _mm256_cvtepi32_ps(a.0) })
    }
    #[inline(always)]
    fn bits(a: F8) -> I8 {
        I8(arch! { _mm256_castps_si256(a.0) })
    }
    #[inline(always)]
    fn from_bits(a: I8) -> F8 {
        F8(arch! { _mm256_castsi256_ps(a.0) })
    }
    #[inline(always)]
    fn shl(a: I8, n: i32) -> I8 {
        I8(arch! { _mm256_sll_epi32(a.0, _mm_cvtsi32_si128(n)) })
    }
    #[inline(always)]
    fn shr(a: I8, n: i32) -> I8 {
        I8(arch! { _mm256_srl_epi32(a.0, _mm_cvtsi32_si128(n)) })
    }
    /// One vector's indices packed into bytes for [`lut_bytes`] (a quarter of its lanes used).
    #[inline(always)]
    fn lut256(t: &Perm, idx: I8) -> I8 {
        arch! {
            let a = _mm256_and_si256(idx.0, _mm256_set1_epi32(255));
            let w = _mm256_packus_epi32(a, a);
            let r = lut_bytes(t, _mm256_packus_epi16(w, w));
            let z = _mm256_setzero_si256();
            I8(_mm256_unpacklo_epi16(_mm256_unpacklo_epi8(r, z), z))
        }
    }
    #[inline(always)]
    fn lut256_2(t: &Perm, a: I8, b: I8) -> (I8, I8) {
        arch! {
            let m = _mm256_set1_epi32(255);
            let w = _mm256_packus_epi32(_mm256_and_si256(a.0, m), _mm256_and_si256(b.0, m));
            let r = lut_bytes(t, _mm256_packus_epi16(w, w));
            let z = _mm256_setzero_si256();
            let w = _mm256_unpacklo_epi8(r, z);
            (
                I8(_mm256_unpacklo_epi16(w, z)),
                I8(_mm256_unpackhi_epi16(w, z)),
            )
        }
    }
    /// Four vectors' indices packed into the 32 bytes of one register (the in-lane packs
    /// and unpacks are inverses of each other, so lane order comes back unchanged).
    #[inline(always)]
    fn lut256_4(t: &Perm, v: [I8; 4]) -> [I8; 4] {
        arch! {
            let m = _mm256_set1_epi32(255);
            let [a, b, c, d] = v.map(|x| _mm256_and_si256(x.0, m));
            let ab = _mm256_packus_epi32(a, b);
            let cd = _mm256_packus_epi32(c, d);
            let r = lut_bytes(t, _mm256_packus_epi16(ab, cd));
            let z = _mm256_setzero_si256();
            let ab = _mm256_unpacklo_epi8(r, z);
            let cd = _mm256_unpackhi_epi8(r, z);
            [
                I8(_mm256_unpacklo_epi16(ab, z)),
                I8(_mm256_unpackhi_epi16(ab, z)),
                I8(_mm256_unpacklo_epi16(cd, z)),
                I8(_mm256_unpackhi_epi16(cd, z)),
            ]
        }
    }
    #[inline(always)]
    fn lut16(t: &[f32; 16], idx: I8) -> F8 {
        arch! {
            let lo = _mm256_permutevar8x32_ps(ld_f8(block(t, 0)), idx.0);
            let hi = _mm256_permutevar8x32_ps(ld_f8(block(t, 1)), idx.0);
            F8(_mm256_blendv_ps(
                lo,
                hi,
                _mm256_castsi256_ps(_mm256_slli_epi32::<28>(idx.0)),
            ))
        }
    }
    /// Four in-register permutes; bits 3 and 4 of the index pick among them.
    #[inline(always)]
    fn lut32(t: &[f32; 32], idx: I8) -> F8 {
        arch! {
            let q = |k: usize| _mm256_permutevar8x32_ps(ld_f8(block(t, k)), idx.0);
            let b3 = _mm256_castsi256_ps(_mm256_slli_epi32::<28>(idx.0));
            let b4 = _mm256_castsi256_ps(_mm256_slli_epi32::<27>(idx.0));
            let lo = _mm256_blendv_ps(q(0), q(1), b3);
            let hi = _mm256_blendv_ps(q(2), q(3), b3);
            F8(_mm256_blendv_ps(lo, hi, b4))
        }
    }
}

impl CellLanes for Avx2 {
    #[inline(always)]
    fn perm8(t: &[f32; 8], q: I8) -> F8 {
        F8(arch! { _mm256_permutevar8x32_ps(ld_f8(t), q.0) })
    }
    #[inline(always)]
    fn mask_i(m: __m256) -> I8 {
        I8(arch! { _mm256_castps_si256(m) })
    }
    #[inline(always)]
    fn all(m: __m256) -> bool {
        arch! { _mm256_movemask_ps(m) == 0xff }
    }
    #[inline(always)]
    fn ends(v: I8) -> (i32, i32) {
        arch! { (_mm256_cvtsi256_si32(v.0), _mm256_extract_epi32::<7>(v.0)) }
    }
}

/// Every byte of `x` looked up in the 256-entry table `t` with sixteen in-lane byte shuffles
/// and no gather (gathers are slow on AMD cores). With `z_k = x − 16k` (wrapping), a shuffle
/// yields zero where bit 7 of its index is set: for `x < 128` the shuffles of `z_0..z_7`
/// contribute exactly for `k ≤ x / 16`, so XOR-ing them over the `L` rows of [`Perm::x`]
/// telescopes to entry `x`; for `x ≥ 128` those of `z_1..z_8` contribute exactly for
/// `k > (x − 128) / 16`, a suffix of the `H` rows. Bit 7 of `x` picks the half.
#[inline(always)]
fn lut_bytes(t: &Perm, x: __m256i) -> __m256i {
    arch! {
        let row = |k: usize| ld_b32(&t.x[k]);
        let s16 = _mm256_set1_epi8(16);
        let mut z = x;
        let mut lo = _mm256_shuffle_epi8(row(0), z);
        z = _mm256_sub_epi8(z, s16);
        let mut hi = _mm256_shuffle_epi8(row(8), z);
        for k in 1..8 {
            lo = _mm256_xor_si256(lo, _mm256_shuffle_epi8(row(k), z));
            z = _mm256_sub_epi8(z, s16);
            hi = _mm256_xor_si256(hi, _mm256_shuffle_epi8(row(8 + k), z));
        }
        _mm256_blendv_epi8(lo, hi, x)
    }
}

/// AVX-512F (16 lanes, mask registers, in-register table lookups). `VBMI` selects the
/// byte-permute table lookup (AVX-512 VBMI, Ice Lake / Zen 4); both give the same bits.
/// A value is proof that the CPU has the features ([`Avx512::detect`]).
#[derive(Clone, Copy)]
pub(crate) struct Avx512<const VBMI: bool>(());

impl<const VBMI: bool> Avx512<VBMI> {
    /// The token, if this CPU has AVX-512F (and BW and VBMI if `VBMI`).
    pub(crate) fn detect() -> Option<Self> {
        let f = std::is_x86_feature_detected!("avx512f");
        let v = std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vbmi");
        (f && (v || !VBMI)).then_some(Avx512(()))
    }
}

impl<const VBMI: bool> Simd for Avx512<VBMI> {
    const LANES: usize = 16;
    type F = F16;
    type I = I16;
    type M = __mmask16;
    #[inline(always)]
    fn f(v: f32) -> F16 {
        F16(arch! { _mm512_set1_ps(v) })
    }
    #[inline(always)]
    fn i(v: i32) -> I16 {
        I16(arch! { _mm512_set1_epi32(v) })
    }
    #[inline(always)]
    fn iota() -> F16 {
        F16(arch! {
            _mm512_setr_ps(
                0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0,
                15.0,
            )
        })
    }
    #[inline(always)]
    fn store(v: F16, out: &mut [f32]) {
        st_f16(head(out), v.0);
    }
    #[inline(always)]
    fn floor(a: F16) -> F16 {
        F16(arch! { _mm512_roundscale_ps::<0x09>(a.0) })
    }
    #[inline(always)]
    fn sqrt(a: F16) -> F16 {
        F16(arch! { _mm512_sqrt_ps(a.0) })
    }
    #[inline(always)]
    fn min(a: F16, b: F16) -> F16 {
        F16(arch! { _mm512_min_ps(a.0, b.0) })
    }
    #[inline(always)]
    fn max(a: F16, b: F16) -> F16 {
        F16(arch! { _mm512_max_ps(a.0, b.0) })
    }
    #[inline(always)]
    fn lt(a: F16, b: F16) -> __mmask16 {
        arch! { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a.0, b.0) }
    }
    #[inline(always)]
    fn le(a: F16, b: F16) -> __mmask16 {
        arch! { _mm512_cmp_ps_mask::<_CMP_LE_OQ>(a.0, b.0) }
    }
    #[inline(always)]
    fn sel(m: __mmask16, a: F16, b: F16) -> F16 {
        F16(arch! { _mm512_mask_blend_ps(m, b.0, a.0) })
    }
    #[inline(always)]
    fn isel(m: __mmask16, a: I16, b: I16) -> I16 {
        I16(arch! { _mm512_mask_blend_epi32(m, b.0, a.0) })
    }
    #[inline(always)]
    fn ieq(a: I16, b: I16) -> __mmask16 {
        arch! { _mm512_cmpeq_epi32_mask(a.0, b.0) }
    }
    #[inline(always)]
    fn mand(a: __mmask16, b: __mmask16) -> __mmask16 {
        a & b
    }
    #[inline(always)]
    fn mor(a: __mmask16, b: __mmask16) -> __mmask16 {
        a | b
    }
    #[inline(always)]
    fn mandnot(a: __mmask16, b: __mmask16) -> __mmask16 {
        a & !b
    }
    #[inline(always)]
    fn mnot(a: __mmask16) -> __mmask16 {
        !a
    }
    #[inline(always)]
    fn trunc(a: F16) -> I16 {
        I16(arch! { _mm512_cvttps_epi32(a.0) })
    }
    #[inline(always)]
    fn cvt(a: I16) -> F16 {
        F16(arch! { _mm512_cvtepi32_ps(a.0) })
    }
    #[inline(always)]
    fn bits(a: F16) -> I16 {
        I16(arch! { _mm512_castps_si512(a.0) })
    }
    #[inline(always)]
    fn from_bits(a: I16) -> F16 {
        F16(arch! { _mm512_castsi512_ps(a.0) })
    }
    #[inline(always)]
    fn shl(a: I16, n: i32) -> I16 {
        I16(arch! { _mm512_sll_epi32(a.0, _mm_cvtsi32_si128(n)) })
    }
    #[inline(always)]
    fn shr(a: I16, n: i32) -> I16 {
        I16(arch! { _mm512_srl_epi32(a.0, _mm_cvtsi32_si128(n)) })
    }
    /// `max(a, 0)²` as `a > 0 ? a·a : +0` (a NaN compares false, like `max`): the compare
    /// runs on the multiply pipes and the mask costs nothing, where `vmaxps` is an add-pipe op.
    #[inline(always)]
    fn pos_sq(a: F16) -> F16 {
        arch! {
            let k = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(a.0, _mm512_setzero_ps());
            F16(_mm512_maskz_mul_ps(k, a.0, a.0))
        }
    }
    #[inline(always)]
    fn lut256(t: &Perm, idx: I16) -> I16 {
        if VBMI {
            // Byte permutes over the packed table: bytes 0..128 and 128..256 each fit
            // two registers; bit 7 of the index picks the half. Only byte 0 of each
            // dword lane carries the index; the other bytes are masked off.
            arch! {
                let q = |k: usize| ld_u16(block(&t.b, k));
                let lo = _mm512_permutex2var_epi8(q(0), idx.0, q(1));
                let hi = _mm512_permutex2var_epi8(q(2), idx.0, q(3));
                let m = _mm512_test_epi32_mask(idx.0, _mm512_set1_epi32(128));
                return I16(_mm512_and_si512(
                    _mm512_mask_blend_epi32(m, lo, hi),
                    _mm512_set1_epi32(255),
                ));
            }
        }
        // Four packed bytes per dword: two 32-dword permutes pick the dword, bit 7
        // of the index picks the half, a variable shift picks the byte.
        arch! {
            let q = |k: usize| ld_u16(block(&t.b, k));
            let d = _mm512_srli_epi32::<2>(idx.0);
            let lo = _mm512_permutex2var_epi32(q(0), d, q(1));
            let hi = _mm512_permutex2var_epi32(q(2), d, q(3));
            let m = _mm512_test_epi32_mask(idx.0, _mm512_set1_epi32(128));
            let w = _mm512_mask_blend_epi32(m, lo, hi);
            let sh = _mm512_slli_epi32::<3>(_mm512_and_si512(idx.0, _mm512_set1_epi32(3)));
            I16(_mm512_and_si512(
                _mm512_srlv_epi32(w, sh),
                _mm512_set1_epi32(255),
            ))
        }
    }
    #[inline(always)]
    fn lut16(t: &[f32; 16], idx: I16) -> F16 {
        F16(arch! { _mm512_permutexvar_ps(idx.0, ld_f16(t)) })
    }
    #[inline(always)]
    fn lut32(t: &[f32; 32], idx: I16) -> F16 {
        arch! {
            F16(_mm512_permutex2var_ps(
                ld_f16(block(t, 0)),
                idx.0,
                ld_f16(block(t, 1)),
            ))
        }
    }
}
