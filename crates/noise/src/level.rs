//! The SIMD levels the bulk path can run on, and which of them this CPU has. A leaf of the
//! crate's module graph besides the lane types: the error names a level, the grid sampler
//! resolves one to code, and neither is needed to say what a level is.

/// An instruction set the bulk path can run on. All give identical bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SimdLevel {
    /// Portable one-lane code.
    Scalar,
    /// x86-64 SSE2, 4 lanes.
    Sse2,
    /// x86-64 AVX2, 8 lanes.
    Avx2,
    /// x86-64 AVX-512F, 16 lanes.
    Avx512,
    /// x86-64 AVX-512F with BW and VBMI byte permutes for table lookups (Ice Lake, Zen 4).
    Avx512Vbmi,
}

impl SimdLevel {
    /// Every level, slowest first.
    pub const ALL: [SimdLevel; 5] = [
        Self::Scalar,
        Self::Sse2,
        Self::Avx2,
        Self::Avx512,
        Self::Avx512Vbmi,
    ];

    /// Whether this CPU can run the level.
    pub fn is_available(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        use crate::simd::{Avx2, Avx512};
        match self {
            Self::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Self::Sse2 => true,
            #[cfg(target_arch = "x86_64")]
            Self::Avx2 => Avx2::detect().is_some(),
            #[cfg(target_arch = "x86_64")]
            Self::Avx512 => Avx512::<false>::detect().is_some(),
            #[cfg(target_arch = "x86_64")]
            Self::Avx512Vbmi => Avx512::<true>::detect().is_some(),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The fastest available level.
    pub fn best() -> SimdLevel {
        Self::ALL
            .into_iter()
            .rev()
            .find(|l| l.is_available())
            .unwrap_or(Self::Scalar)
    }

    /// The level's lower-case name, as [`SimdLevel::parse`] and [`SIMD_ENV`] accept it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Scalar => "scalar",
            Self::Sse2 => "sse2",
            Self::Avx2 => "avx2",
            Self::Avx512 => "avx512",
            Self::Avx512Vbmi => "avx512vbmi",
        }
    }
}

/// The environment variable that forces the SIMD level of every fill whose
/// [`Exec::simd`](crate::Exec::simd) is `None`, for the whole process (see
/// [`SimdLevel::auto`]): `auto`, `portable` (= `scalar`), `sse2`, `avx2`, `avx512` or
/// `avx512vbmi`. Outputs are the same bytes on every level; the switch exists to run a
/// program or test suite on one chosen path.
pub const SIMD_ENV: &str = "PROCMODEL_SIMD";
