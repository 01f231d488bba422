//! Errors and the contradiction report.

use std::fmt;

use crate::direction::Direction;

/// Where and why the wave became contradictory: a cell lost its last pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contradiction {
    /// The cell left without any pattern, as `[x, y, z]`.
    pub cell: [usize; 3],
    /// The last pattern (or oriented tile) the cell lost.
    pub pattern: usize,
    /// The neighbour whose change removed the pattern's last support: its direction seen from
    /// `cell` and its coordinates. `None` when the pattern was removed directly (an initial
    /// constraint such as `ground`, or a refuted choice).
    pub neighbour: Option<(Direction, [usize; 3])>,
}

impl fmt::Display for Contradiction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.cell;
        write!(
            f,
            "cell ({x}, {y}, {z}) has no pattern left: pattern {} ",
            self.pattern
        )?;
        match self.neighbour {
            Some((d, [nx, ny, nz])) => write!(
                f,
                "lost its last support from the {d:?} neighbour at ({nx}, {ny}, {nz})"
            ),
            None => write!(f, "was removed by a constraint"),
        }
    }
}

/// Everything that can go wrong when building rules or running a solver.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum WfcError {
    /// The rules plus the initial constraints admit no solution.
    #[error("unsatisfiable: {0}")]
    Unsatisfiable(Contradiction),
    /// Every attempt ran out of its backtracking budget.
    #[error("gave up after {attempts} attempts; last contradiction: {last}")]
    GaveUp {
        /// Attempts made.
        attempts: u32,
        /// The last contradiction met.
        last: Contradiction,
    },
    /// A pattern count of zero or above 65535.
    #[error("pattern count {count} is outside 1..=65535")]
    PatternCount {
        /// The count given.
        count: usize,
    },
    /// A weight that is not finite and positive.
    #[error("weight of pattern {index} is {weight}, expected a finite positive number")]
    BadWeight {
        /// Pattern index.
        index: usize,
        /// The weight given.
        weight: f64,
    },
    /// Rules with a direction count other than 4 or 6.
    #[error("direction count {directions} is not 4 (2D) or 6 (3D)")]
    BadDirectionCount {
        /// The count given.
        directions: usize,
    },
    /// A 3D direction used with 2D rules.
    #[error("direction {direction:?} is not available in 2D rules")]
    BadDirection {
        /// The direction given.
        direction: Direction,
    },
    /// A pattern index past the pattern count.
    #[error("pattern {index} does not exist (there are {count})")]
    UnknownPattern {
        /// The index given.
        index: usize,
        /// The pattern count.
        count: usize,
    },
    /// A cell index past the grid.
    #[error("cell {index} is outside the grid of {len} cells")]
    UnknownCell {
        /// The index given.
        index: usize,
        /// The cell count.
        len: usize,
    },
    /// A compatibility predicate that is not symmetric.
    #[error("rule {from} -> {direction:?} -> {to} has no opposite rule")]
    AsymmetricRule {
        /// Source pattern.
        from: usize,
        /// Direction.
        direction: Direction,
        /// Target pattern.
        to: usize,
    },
    /// More than 2^32 adjacency entries.
    #[error("too many adjacency rules")]
    TooManyRules,
    /// An empty grid, or rules whose dimension does not match the grid's.
    #[error("bad grid: {0}")]
    BadGrid(String),
    /// A bad sample image or model setting.
    #[error("bad sample: {0}")]
    BadSample(String),
    /// A bad tile set description.
    #[error("bad tile set: {0}")]
    BadTileSet(String),
}
