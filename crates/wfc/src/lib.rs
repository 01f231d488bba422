//! Wave Function Collapse: the overlapping model (patterns learned from a sample image) and
//! the simple tiled model (explicit adjacency, 2D and 3D), solved with minimum-entropy
//! observation, AC-4 propagation, chronological backtracking and seeded restarts.
//!
//! Owns: pattern extraction, tile-set rule compilation, the solver and its contradiction
//! reports. Must never: do I/O (callers pass pixels and parsed tile descriptions), read
//! clocks, or let hash-map iteration order reach an output. The same seed gives the same
//! output on every run and platform.
//!
//! ```
//! use procmodel_wfc::{OverlappingConfig, OverlappingModel, Sample, SolverConfig};
//! let pixels = [0u32, 0, 1, 0, 0, 1, 1, 1, 1];
//! let sample = Sample { pixels: &pixels, width: 3, height: 3 };
//! let config = OverlappingConfig { n: 2, periodic_output: true, ..Default::default() };
//! let model = OverlappingModel::new(sample, config).unwrap();
//! let solution = model.run(8, 8, SolverConfig::with_seed(1)).unwrap();
//! assert_eq!(model.colourise(&solution).len(), 64);
//! ```

mod counts;
mod direction;
mod error;
mod heap;
mod overlapping;
mod rules;
mod solver;
mod tiled;

pub use error::{Contradiction, WfcError};
pub use overlapping::{OverlappingConfig, OverlappingModel, Sample};
pub use rules::{Direction, GridShape, Rules};
pub use solver::{Solution, Solver, SolverConfig, Step};
pub use tiled::{NeighborRule, TileDesc, TileSet, TileSymmetry, TiledModel, check_solution};
