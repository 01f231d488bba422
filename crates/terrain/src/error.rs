//! The crate's error type: every variant names the argument, zone, axis or byte offset at fault.

use thiserror::Error;

/// What went wrong, precisely enough for a Luau error message or a CLI diagnostic.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum TerrainError {
    /// `resolution` argument other than 4.
    #[error("resolution must be 4 (got {0})")]
    Resolution(f64),
    /// A region corner not on the 4-stud grid.
    #[error("region must be aligned to the 4-stud grid: {corner}.{axis} = {value}")]
    NotAligned {
        /// `"min"` or `"max"`.
        corner: &'static str,
        /// `'X'`, `'Y'` or `'Z'`.
        axis: char,
        /// The offending coordinate (studs).
        value: f64,
    },
    /// A region whose max is below its min on an axis.
    #[error("region is inverted on {axis}: min {min} > max {max}")]
    Inverted {
        /// `'X'`, `'Y'` or `'Z'`.
        axis: char,
        /// Min coordinate.
        min: f64,
        /// Max coordinate.
        max: f64,
    },
    /// A region or fill AABB larger than the per-call cap.
    #[error("region too large: {voxels} voxels > {limit}")]
    TooLarge {
        /// Voxels asked for.
        voxels: u128,
        /// The cap (4,194,304 for Read/WriteVoxels, 67,108,864 for the other methods).
        limit: u64,
    },
    /// A coordinate outside the engine's ±2^23-stud terrain extent (or a cell index overflow).
    #[error("{what} out of the terrain's range: {value}")]
    OutOfRange {
        /// What was out of range.
        what: &'static str,
        /// The value.
        value: f64,
    },
    /// A column whose surface height is not finite or beyond the terrain's extent (a config
    /// whose seed, scale or heights overflow).
    #[error(
        "the surface at column ({i}, {j}) is at {value} studs, outside the terrain's ±8388608: the seed, scale, height, base, surface_offset or a zone's level puts it there"
    )]
    Surface {
        /// Column index along X.
        i: i64,
        /// Column index along Z.
        j: i64,
        /// The height (studs).
        value: f64,
    },
    /// NaN or infinity in an argument.
    #[error("{what} is not a finite number ({value})")]
    NonFinite {
        /// The argument.
        what: &'static str,
        /// The value.
        value: f64,
    },
    /// A negative size, radius or height.
    #[error("{what} must not be negative (got {value})")]
    Negative {
        /// The argument.
        what: &'static str,
        /// The value.
        value: f64,
    },
    /// An `Enum.Material` value or name that is not one of the 23 terrain materials.
    #[error("invalid terrain material {0}")]
    NotTerrainMaterial(String),
    /// Voxel arrays whose size does not match the region.
    #[error("{what} has {got} entries but the region has {expected} voxels")]
    ArraySize {
        /// Which array.
        what: &'static str,
        /// Its length.
        got: usize,
        /// Voxels in the region.
        expected: usize,
    },
    /// A malformed `Terrain.SmoothGrid` blob.
    #[error("SmoothGrid: {reason} at byte {offset}")]
    SmoothGrid {
        /// Byte offset of the fault.
        offset: usize,
        /// What is wrong.
        reason: String,
    },
    /// A `Terrain.MaterialColors` blob of the wrong length.
    #[error("MaterialColors must be 69 bytes (got {0})")]
    MaterialColorsLength(usize),
    /// A bad zone in a world config.
    #[error("zone {index}: {field} {reason}")]
    Zone {
        /// Zone index (0-based, in config order).
        index: usize,
        /// The field at fault (`"r2"`, `"x2"`, `"center.x"`, `"material"` …).
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A bad band in a world's band table.
    #[error("bands: band {index}: {reason}")]
    Band {
        /// Band index (0-based, in table order).
        index: usize,
        /// What is wrong with it (starting with the field, if one is at fault).
        reason: String,
    },
    /// A bad world/export config field.
    #[error("{field}: {reason}")]
    Config {
        /// The field at fault.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// An error from the noise crate (bad noise config).
    #[error("noise: {0}")]
    Noise(String),
    /// PNG encoding failed.
    #[error("png: {0}")]
    Png(String),
}
