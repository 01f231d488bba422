//! The one-call cave pipeline: fill → iterate → remove small regions → connect → prove.

use crate::automaton::{Automaton, EdgePolicy, random_fill};
use crate::connect::{ConnectConfig, Corridor, check_connected, connect};
use crate::error::CaveError;
use crate::grid::Grid;
use crate::regions::{Regions, remove_small_regions};
use crate::rule::Rule;

/// Everything [`run`] needs. `Default` is a 64×64 `B5678/S45678` cave, fill 0.45, five
/// iterations, wall edges, no region removal, 1-wide corridors, seed 0.
#[derive(Clone, Debug, PartialEq)]
pub struct CaveConfig {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Probability that a cell starts as wall, in `[0, 1]`.
    pub fill_probability: f64,
    /// Seed of the fill (see [`random_fill`]).
    pub seed: u64,
    /// Birth/survival rule on wall neighbours.
    pub rule: Rule,
    /// Maximum automaton steps (fewer if a fixed point is reached).
    pub iterations: u32,
    /// What neighbours outside the grid count as.
    pub edge: EdgePolicy,
    /// Floor regions smaller than this become wall (the largest region always stays);
    /// 0 or 1 keeps everything.
    pub min_region_size: usize,
    /// Whether to join the remaining regions with corridors (then the result is proven
    /// connected).
    pub connect: bool,
    /// Corridor width in cells (at least 1).
    pub corridor_width: usize,
}

impl Default for CaveConfig {
    fn default() -> Self {
        CaveConfig {
            width: 64,
            height: 64,
            fill_probability: 0.45,
            seed: 0,
            rule: Rule::CAVE,
            iterations: 5,
            edge: EdgePolicy::Wall,
            min_region_size: 0,
            connect: true,
            corridor_width: 1,
        }
    }
}

/// The result of [`run`].
#[derive(Clone, Debug, PartialEq)]
pub struct Cave {
    /// The final grid.
    pub grid: Grid,
    /// Automaton steps actually applied.
    pub steps: u32,
    /// Floor regions after the automaton, before removal and connection.
    pub regions_before: usize,
    /// Cells turned to wall by small-region removal.
    pub removed_cells: usize,
    /// Corridors carved, in MST order (empty when `connect` is false).
    pub corridors: Vec<Corridor>,
}

/// Runs the whole pipeline. With `connect` set the result has passed [`check_connected`].
pub fn run(config: &CaveConfig) -> Result<Cave, CaveError> {
    if config.corridor_width == 0 {
        return Err(CaveError::InvalidCorridorWidth(0));
    }
    let grid = random_fill(
        config.width,
        config.height,
        config.fill_probability,
        config.seed,
    )?;
    let mut automaton = Automaton::new(grid, config.rule, config.edge);
    let steps = automaton.run(config.iterations);
    let mut grid = automaton.into_grid();
    let regions_before = Regions::label(&grid).count();
    let removed_cells = if config.min_region_size > 1 {
        remove_small_regions(&mut grid, config.min_region_size)
    } else {
        0
    };
    let corridors = if config.connect {
        let c = connect(
            &mut grid,
            &ConnectConfig {
                corridor_width: config.corridor_width,
            },
        )?;
        check_connected(&grid)?;
        c
    } else {
        Vec::new()
    };
    Ok(Cave {
        grid,
        steps,
        regions_before,
        removed_cells,
        corridors,
    })
}
