//! SSE2, AVX2 and AVX-512 lanes. Every method is `#[inline(always)]` and only ever
//! inlined into a `#[target_feature]` entry point of the matching level.

use super::{Perm, Simd};
use core::arch::x86_64::*;
use core::ops::{Add, BitAnd, BitOr, BitXor, Mul, Sub};

macro_rules! vops {
    ($t:ident, $inner:ty, $add:ident, $sub:ident, $mul:ident) => {
        #[derive(Clone, Copy)]
        pub(crate) struct $t(pub $inner);
        impl Add for $t {
            type Output = $t;
            #[inline(always)]
            fn add(self, o: $t) -> $t {
                $t(unsafe { $add(self.0, o.0) })
            }
        }
        impl Sub for $t {
            type Output = $t;
            #[inline(always)]
            fn sub(self, o: $t) -> $t {
                $t(unsafe { $sub(self.0, o.0) })
            }
        }
        impl Mul for $t {
            type Output = $t;
            #[inline(always)]
            fn mul(self, o: $t) -> $t {
                $t(unsafe { $mul(self.0, o.0) })
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
                $t(unsafe { $and(self.0, o.0) })
            }
        }
        impl BitOr for $t {
            type Output = $t;
            #[inline(always)]
            fn bitor(self, o: $t) -> $t {
                $t(unsafe { $or(self.0, o.0) })
            }
        }
        impl BitXor for $t {
            type Output = $t;
            #[inline(always)]
            fn bitxor(self, o: $t) -> $t {
                $t(unsafe { $xor(self.0, o.0) })
            }
        }
    };
}

#[inline(always)]
unsafe fn mullo_sse2(a: __m128i, b: __m128i) -> __m128i {
    unsafe {
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
        F4(unsafe { _mm_set1_ps(v) })
    }
    #[inline(always)]
    fn i(v: i32) -> I4 {
        I4(unsafe { _mm_set1_epi32(v) })
    }
    #[inline(always)]
    fn iota() -> F4 {
        F4(unsafe { _mm_setr_ps(0.0, 1.0, 2.0, 3.0) })
    }
    #[inline(always)]
    fn store(v: F4, out: &mut [f32]) {
        assert!(out.len() >= 4);
        unsafe { _mm_storeu_ps(out.as_mut_ptr(), v.0) }
    }
    #[inline(always)]
    fn floor(a: F4) -> F4 {
        unsafe {
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
        F4(unsafe { _mm_sqrt_ps(a.0) })
    }
    #[inline(always)]
    fn min(a: F4, b: F4) -> F4 {
        F4(unsafe { _mm_min_ps(a.0, b.0) })
    }
    #[inline(always)]
    fn max(a: F4, b: F4) -> F4 {
        F4(unsafe { _mm_max_ps(a.0, b.0) })
    }
    #[inline(always)]
    fn lt(a: F4, b: F4) -> __m128 {
        unsafe { _mm_cmplt_ps(a.0, b.0) }
    }
    #[inline(always)]
    fn le(a: F4, b: F4) -> __m128 {
        unsafe { _mm_cmple_ps(a.0, b.0) }
    }
    #[inline(always)]
    fn sel(m: __m128, a: F4, b: F4) -> F4 {
        F4(unsafe { _mm_or_ps(_mm_and_ps(m, a.0), _mm_andnot_ps(m, b.0)) })
    }
    #[inline(always)]
    fn isel(m: __m128, a: I4, b: I4) -> I4 {
        unsafe {
            let m = _mm_castps_si128(m);
            I4(_mm_or_si128(
                _mm_and_si128(m, a.0),
                _mm_andnot_si128(m, b.0),
            ))
        }
    }
    #[inline(always)]
    fn ieq(a: I4, b: I4) -> __m128 {
        unsafe { _mm_castsi128_ps(_mm_cmpeq_epi32(a.0, b.0)) }
    }
    #[inline(always)]
    fn mand(a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_and_ps(a, b) }
    }
    #[inline(always)]
    fn mor(a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_or_ps(a, b) }
    }
    #[inline(always)]
    fn mandnot(a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_andnot_ps(b, a) }
    }
    #[inline(always)]
    fn mnot(a: __m128) -> __m128 {
        unsafe { _mm_xor_ps(a, _mm_castsi128_ps(_mm_set1_epi32(-1))) }
    }
    #[inline(always)]
    fn trunc(a: F4) -> I4 {
        I4(unsafe { _mm_cvttps_epi32(a.0) })
    }
    #[inline(always)]
    fn cvt(a: I4) -> F4 {
        F4(unsafe { _mm_cvtepi32_ps(a.0) })
    }
    #[inline(always)]
    fn bits(a: F4) -> I4 {
        I4(unsafe { _mm_castps_si128(a.0) })
    }
    #[inline(always)]
    fn from_bits(a: I4) -> F4 {
        F4(unsafe { _mm_castsi128_ps(a.0) })
    }
    #[inline(always)]
    fn shl(a: I4, n: i32) -> I4 {
        I4(unsafe { _mm_sll_epi32(a.0, _mm_cvtsi32_si128(n)) })
    }
    #[inline(always)]
    fn shr(a: I4, n: i32) -> I4 {
        I4(unsafe { _mm_srl_epi32(a.0, _mm_cvtsi32_si128(n)) })
    }
    #[inline(always)]
    fn lut256(t: &Perm, idx: I4) -> I4 {
        let mut l = [0i32; 4];
        unsafe { _mm_storeu_si128(l.as_mut_ptr().cast(), idx.0) };
        let r = l.map(|i| t.i[(i & 255) as usize]);
        I4(unsafe { _mm_loadu_si128(r.as_ptr().cast()) })
    }
    #[inline(always)]
    fn lut16(t: &[f32; 16], idx: I4) -> F4 {
        let mut l = [0i32; 4];
        unsafe { _mm_storeu_si128(l.as_mut_ptr().cast(), idx.0) };
        let r = l.map(|i| t[(i & 15) as usize]);
        F4(unsafe { _mm_loadu_ps(r.as_ptr()) })
    }
    #[inline(always)]
    fn lut32(t: &[f32; 32], idx: I4) -> F4 {
        let mut l = [0i32; 4];
        unsafe { _mm_storeu_si128(l.as_mut_ptr().cast(), idx.0) };
        let r = l.map(|i| t[(i & 31) as usize]);
        F4(unsafe { _mm_loadu_ps(r.as_ptr()) })
    }
}

/// AVX2 (8 lanes, hardware gathers; FMA deliberately unused).
#[derive(Clone, Copy)]
pub(crate) struct Avx2;

impl Simd for Avx2 {
    const LANES: usize = 8;
    /// `lut32` is four permutes and three blends here, `lut16` two and one.
    const SPLIT_LUT32: bool = true;
    type F = F8;
    type I = I8;
    type M = __m256;
    #[inline(always)]
    fn f(v: f32) -> F8 {
        F8(unsafe { _mm256_set1_ps(v) })
    }
    #[inline(always)]
    fn i(v: i32) -> I8 {
        I8(unsafe { _mm256_set1_epi32(v) })
    }
    #[inline(always)]
    fn iota() -> F8 {
        F8(unsafe { _mm256_setr_ps(0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0) })
    }
    #[inline(always)]
    fn store(v: F8, out: &mut [f32]) {
        assert!(out.len() >= 8);
        unsafe { _mm256_storeu_ps(out.as_mut_ptr(), v.0) }
    }
    #[inline(always)]
    fn floor(a: F8) -> F8 {
        F8(unsafe { _mm256_round_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(a.0) })
    }
    #[inline(always)]
    fn sqrt(a: F8) -> F8 {
        F8(unsafe { _mm256_sqrt_ps(a.0) })
    }
    #[inline(always)]
    fn min(a: F8, b: F8) -> F8 {
        F8(unsafe { _mm256_min_ps(a.0, b.0) })
    }
    #[inline(always)]
    fn max(a: F8, b: F8) -> F8 {
        F8(unsafe { _mm256_max_ps(a.0, b.0) })
    }
    #[inline(always)]
    fn lt(a: F8, b: F8) -> __m256 {
        unsafe { _mm256_cmp_ps::<_CMP_LT_OQ>(a.0, b.0) }
    }
    #[inline(always)]
    fn le(a: F8, b: F8) -> __m256 {
        unsafe { _mm256_cmp_ps::<_CMP_LE_OQ>(a.0, b.0) }
    }
    #[inline(always)]
    fn sel(m: __m256, a: F8, b: F8) -> F8 {
        F8(unsafe { _mm256_blendv_ps(b.0, a.0, m) })
    }
    #[inline(always)]
    fn isel(m: __m256, a: I8, b: I8) -> I8 {
        unsafe {
            I8(_mm256_castps_si256(_mm256_blendv_ps(
                _mm256_castsi256_ps(b.0),
                _mm256_castsi256_ps(a.0),
                m,
            )))
        }
    }
    #[inline(always)]
    fn ieq(a: I8, b: I8) -> __m256 {
        unsafe { _mm256_castsi256_ps(_mm256_cmpeq_epi32(a.0, b.0)) }
    }
    #[inline(always)]
    fn mand(a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_and_ps(a, b) }
    }
    #[inline(always)]
    fn mor(a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_or_ps(a, b) }
    }
    #[inline(always)]
    fn mandnot(a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_andnot_ps(b, a) }
    }
    #[inline(always)]
    fn mnot(a: __m256) -> __m256 {
        unsafe { _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(-1))) }
    }
    #[inline(always)]
    fn trunc(a: F8) -> I8 {
        I8(unsafe { _mm256_cvttps_epi32(a.0) })
    }
    #[inline(always)]
    fn cvt(a: I8) -> F8 {
        F8(unsafe { _mm256_cvtepi32_ps(a.0) })
    }
    #[inline(always)]
    fn bits(a: F8) -> I8 {
        I8(unsafe { _mm256_castps_si256(a.0) })
    }
    #[inline(always)]
    fn from_bits(a: I8) -> F8 {
        F8(unsafe { _mm256_castsi256_ps(a.0) })
    }
    #[inline(always)]
    fn shl(a: I8, n: i32) -> I8 {
        I8(unsafe { _mm256_sll_epi32(a.0, _mm_cvtsi32_si128(n)) })
    }
    #[inline(always)]
    fn shr(a: I8, n: i32) -> I8 {
        I8(unsafe { _mm256_srl_epi32(a.0, _mm_cvtsi32_si128(n)) })
    }
    #[inline(always)]
    fn lut256(t: &Perm, idx: I8) -> I8 {
        I8(unsafe { _mm256_i32gather_epi32::<4>(t.i.as_ptr(), idx.0) })
    }
    #[inline(always)]
    fn lut16(t: &[f32; 16], idx: I8) -> F8 {
        unsafe {
            let lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(t.as_ptr()), idx.0);
            let hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(t.as_ptr().add(8)), idx.0);
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
        unsafe {
            let p = t.as_ptr();
            let q = |o: usize| _mm256_permutevar8x32_ps(_mm256_loadu_ps(p.add(o)), idx.0);
            let b3 = _mm256_castsi256_ps(_mm256_slli_epi32::<28>(idx.0));
            let b4 = _mm256_castsi256_ps(_mm256_slli_epi32::<27>(idx.0));
            let lo = _mm256_blendv_ps(q(0), q(8), b3);
            let hi = _mm256_blendv_ps(q(16), q(24), b3);
            F8(_mm256_blendv_ps(lo, hi, b4))
        }
    }
}

/// AVX-512F (16 lanes, mask registers, in-register table lookups). `VBMI` selects the
/// byte-permute table lookup (AVX-512 VBMI, Ice Lake / Zen 4); both give the same bits.
#[derive(Clone, Copy)]
pub(crate) struct Avx512<const VBMI: bool>;

impl<const VBMI: bool> Simd for Avx512<VBMI> {
    const LANES: usize = 16;
    type F = F16;
    type I = I16;
    type M = __mmask16;
    #[inline(always)]
    fn f(v: f32) -> F16 {
        F16(unsafe { _mm512_set1_ps(v) })
    }
    #[inline(always)]
    fn i(v: i32) -> I16 {
        I16(unsafe { _mm512_set1_epi32(v) })
    }
    #[inline(always)]
    fn iota() -> F16 {
        F16(unsafe {
            _mm512_setr_ps(
                0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0,
                15.0,
            )
        })
    }
    #[inline(always)]
    fn store(v: F16, out: &mut [f32]) {
        assert!(out.len() >= 16);
        unsafe { _mm512_storeu_ps(out.as_mut_ptr(), v.0) }
    }
    #[inline(always)]
    fn floor(a: F16) -> F16 {
        F16(unsafe { _mm512_roundscale_ps::<0x09>(a.0) })
    }
    #[inline(always)]
    fn sqrt(a: F16) -> F16 {
        F16(unsafe { _mm512_sqrt_ps(a.0) })
    }
    #[inline(always)]
    fn min(a: F16, b: F16) -> F16 {
        F16(unsafe { _mm512_min_ps(a.0, b.0) })
    }
    #[inline(always)]
    fn max(a: F16, b: F16) -> F16 {
        F16(unsafe { _mm512_max_ps(a.0, b.0) })
    }
    #[inline(always)]
    fn lt(a: F16, b: F16) -> __mmask16 {
        unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a.0, b.0) }
    }
    #[inline(always)]
    fn le(a: F16, b: F16) -> __mmask16 {
        unsafe { _mm512_cmp_ps_mask::<_CMP_LE_OQ>(a.0, b.0) }
    }
    #[inline(always)]
    fn sel(m: __mmask16, a: F16, b: F16) -> F16 {
        F16(unsafe { _mm512_mask_blend_ps(m, b.0, a.0) })
    }
    #[inline(always)]
    fn isel(m: __mmask16, a: I16, b: I16) -> I16 {
        I16(unsafe { _mm512_mask_blend_epi32(m, b.0, a.0) })
    }
    #[inline(always)]
    fn ieq(a: I16, b: I16) -> __mmask16 {
        unsafe { _mm512_cmpeq_epi32_mask(a.0, b.0) }
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
        I16(unsafe { _mm512_cvttps_epi32(a.0) })
    }
    #[inline(always)]
    fn cvt(a: I16) -> F16 {
        F16(unsafe { _mm512_cvtepi32_ps(a.0) })
    }
    #[inline(always)]
    fn bits(a: F16) -> I16 {
        I16(unsafe { _mm512_castps_si512(a.0) })
    }
    #[inline(always)]
    fn from_bits(a: I16) -> F16 {
        F16(unsafe { _mm512_castsi512_ps(a.0) })
    }
    #[inline(always)]
    fn shl(a: I16, n: i32) -> I16 {
        I16(unsafe { _mm512_sll_epi32(a.0, _mm_cvtsi32_si128(n)) })
    }
    #[inline(always)]
    fn shr(a: I16, n: i32) -> I16 {
        I16(unsafe { _mm512_srl_epi32(a.0, _mm_cvtsi32_si128(n)) })
    }
    /// `max(a, 0)²` as `a > 0 ? a·a : +0` (a NaN compares false, like `max`): the compare
    /// runs on the multiply pipes and the mask costs nothing, where `vmaxps` is an add-pipe op.
    #[inline(always)]
    fn pos_sq(a: F16) -> F16 {
        unsafe {
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
            unsafe {
                let p = t.b.as_ptr().cast::<i32>();
                let lo = _mm512_permutex2var_epi8(
                    _mm512_loadu_si512(p.cast()),
                    idx.0,
                    _mm512_loadu_si512(p.add(16).cast()),
                );
                let hi = _mm512_permutex2var_epi8(
                    _mm512_loadu_si512(p.add(32).cast()),
                    idx.0,
                    _mm512_loadu_si512(p.add(48).cast()),
                );
                let m = _mm512_test_epi32_mask(idx.0, _mm512_set1_epi32(128));
                return I16(_mm512_and_si512(
                    _mm512_mask_blend_epi32(m, lo, hi),
                    _mm512_set1_epi32(255),
                ));
            }
        }
        // Four packed bytes per dword: two 32-dword permutes pick the dword, bit 7
        // of the index picks the half, a variable shift picks the byte.
        unsafe {
            let p = t.b.as_ptr().cast::<i32>();
            let d = _mm512_srli_epi32::<2>(idx.0);
            let lo = _mm512_permutex2var_epi32(
                _mm512_loadu_si512(p.cast()),
                d,
                _mm512_loadu_si512(p.add(16).cast()),
            );
            let hi = _mm512_permutex2var_epi32(
                _mm512_loadu_si512(p.add(32).cast()),
                d,
                _mm512_loadu_si512(p.add(48).cast()),
            );
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
        F16(unsafe { _mm512_permutexvar_ps(idx.0, _mm512_loadu_ps(t.as_ptr())) })
    }
    #[inline(always)]
    fn lut32(t: &[f32; 32], idx: I16) -> F16 {
        unsafe {
            let p = t.as_ptr();
            F16(_mm512_permutex2var_ps(
                _mm512_loadu_ps(p),
                idx.0,
                _mm512_loadu_ps(p.add(16)),
            ))
        }
    }
}
