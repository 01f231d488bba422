//! The crate's error type: invalid configs and mismatched grid buffers.

use crate::level::SimdLevel;

/// Why a generator could not be built or a grid could not be filled.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NoiseError {
    /// Octave count outside 1..=32.
    #[error("octaves must be in 1..=32, got {0}")]
    Octaves(u32),
    /// A parameter is NaN or infinite.
    #[error("{name} must be finite, got {value}")]
    NonFinite {
        /// Parameter name.
        name: &'static str,
        /// The offending value.
        value: f32,
    },
    /// An octave's frequency (`frequency · lacunarity^i`) or amplitude (`gain^i`) beyond
    /// `f32`: every sample would be NaN.
    #[error(
        "octave {octave}'s {what} is {value:.3e}, beyond f32: lower the lacunarity, the gain (persistence) or the octaves"
    )]
    Overflow {
        /// The first octave (from 0) that overflows.
        octave: u32,
        /// `"frequency"` or `"amplitude"`.
        what: &'static str,
        /// Its value.
        value: f64,
    },
    /// The output slice does not match the grid.
    #[error("output slice has {got} elements but the grid has {expected}")]
    Len {
        /// Grid element count.
        expected: usize,
        /// Slice length.
        got: usize,
    },
    /// A grid axis exceeds 2^24 cells (indices must be exact in f32) or the product overflows.
    #[error("grid size {0:?} is too large (at most 2^24 per axis)")]
    GridSize(Vec<usize>),
    /// A forced SIMD level the CPU does not support.
    #[error("simd level {0:?} is not available on this cpu")]
    Unavailable(SimdLevel),
    /// The `PROCMODEL_SIMD` environment variable names no SIMD level.
    #[error(
        "PROCMODEL_SIMD must be auto, portable, scalar, sse2, avx2, avx512 or avx512vbmi, got {0:?}"
    )]
    SimdEnv(String),
}
