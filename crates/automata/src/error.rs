//! Error types of the cave pipeline; messages are lower-case and name the offending input.

use thiserror::Error;

/// A birth/survival rule string could not be parsed. Columns are 1-based character positions
/// in the rule text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RuleError {
    /// The rule string is empty or only whitespace.
    #[error("empty rule string (expected e.g. \"B5678/S45678\")")]
    Empty,
    /// A character that does not belong at that place.
    #[error(
        "unexpected character {found:?} at column {column} in rule {rule:?} (expected {expected})"
    )]
    UnexpectedChar {
        /// The whole rule text.
        rule: String,
        /// 1-based character column of `found`.
        column: usize,
        /// The offending character.
        found: char,
        /// What would have been accepted there.
        expected: &'static str,
    },
    /// A neighbour count larger than the neighbourhood allows.
    #[error(
        "neighbour count {count} at column {column} in rule {rule:?} exceeds the maximum {max}"
    )]
    CountTooLarge {
        /// The whole rule text.
        rule: String,
        /// 1-based character column where the count starts.
        column: usize,
        /// The count given.
        count: u32,
        /// The neighbourhood size (8 in 2D, 26 in 3D).
        max: u32,
    },
    /// The `B` or `S` part appears twice.
    #[error("duplicate {part:?} part at column {column} in rule {rule:?}")]
    DuplicatePart {
        /// The whole rule text.
        rule: String,
        /// 1-based column of the repeated letter.
        column: usize,
        /// `'B'` or `'S'`.
        part: char,
    },
    /// The `B` or `S` part is missing.
    #[error("rule {rule:?} has no {part:?} part (expected e.g. \"B5678/S45678\")")]
    MissingPart {
        /// The whole rule text.
        rule: String,
        /// `'B'` or `'S'`.
        part: char,
    },
}

/// Invalid configuration or a failed connectivity check.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum CaveError {
    /// Width or height is zero, or the cell count overflows.
    #[error("invalid cave size {width}x{height} (both must be at least 1)")]
    InvalidSize {
        /// Requested width.
        width: usize,
        /// Requested height.
        height: usize,
    },
    /// A 3D size with a zero dimension, or whose voxel count overflows.
    #[error("invalid cave size {width}x{height}x{depth} (all must be at least 1)")]
    InvalidSize3 {
        /// Requested width.
        width: usize,
        /// Requested height.
        height: usize,
        /// Requested depth.
        depth: usize,
    },
    /// The fill probability is NaN or outside `[0, 1]`.
    #[error("fill probability {0} is not in [0, 1]")]
    InvalidFillProbability(f64),
    /// A corridor width of zero.
    #[error("corridor width must be at least 1 (got {0})")]
    InvalidCorridorWidth(usize),
    /// Some floor cell cannot be reached from the first floor cell.
    #[error(
        "cave is not connected: {reachable} of {floor} floor cells reachable from ({start_x}, {start_y}); \
         first unreachable floor cell at ({x}, {y})"
    )]
    Disconnected {
        /// Total floor cells.
        floor: usize,
        /// Floor cells reached from the first floor cell (row-major order).
        reachable: usize,
        /// Column of the start cell.
        start_x: usize,
        /// Row of the start cell.
        start_y: usize,
        /// Column of the first unreachable floor cell in row-major order.
        x: usize,
        /// Row of the first unreachable floor cell in row-major order.
        y: usize,
    },
    /// Some floor voxel of a 3D grid cannot be reached from the first floor voxel.
    #[error(
        "3d cave is not connected: {reachable} of {floor} floor voxels reachable; \
         first unreachable floor voxel at ({x}, {y}, {z})"
    )]
    Disconnected3 {
        /// Total floor voxels.
        floor: usize,
        /// Floor voxels reached from the first floor voxel (storage order).
        reachable: usize,
        /// Column of the first unreachable voxel.
        x: usize,
        /// Row of the first unreachable voxel.
        y: usize,
        /// Layer of the first unreachable voxel.
        z: usize,
    },
    /// The rule string of the configuration is invalid.
    #[error(transparent)]
    Rule(#[from] RuleError),
}
