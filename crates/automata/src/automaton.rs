//! Random fill and the birth/survival automaton, with a `step()` API for animation.

use procmodel_base::{Pcg32, derive_seed};

use crate::error::CaveError;
use crate::grid::{FLOOR, Grid, WALL};
use crate::rule::Rule;

/// What a neighbour outside the grid counts as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EdgePolicy {
    /// Outside cells are walls (the default: caves close at the border).
    #[default]
    Wall,
    /// Outside cells are floor.
    Floor,
    /// The grid wraps around (a torus).
    Wrap,
}

/// Checks a size and a fill probability.
pub(crate) fn validate(width: usize, height: usize, p: f64) -> Result<(), CaveError> {
    if width == 0 || height == 0 || width.checked_mul(height).is_none() {
        return Err(CaveError::InvalidSize { width, height });
    }
    if !(0.0..=1.0).contains(&p) {
        return Err(CaveError::InvalidFillProbability(p));
    }
    Ok(())
}

/// A grid where each cell is independently [`WALL`] with probability `fill_probability`.
///
/// Cells are drawn in row-major order from a [`Pcg32`] seeded with
/// `derive_seed(seed, "automata/fill")`; a cell is wall when `next_f64() < fill_probability`.
pub fn random_fill(
    width: usize,
    height: usize,
    fill_probability: f64,
    seed: u64,
) -> Result<Grid, CaveError> {
    validate(width, height, fill_probability)?;
    let mut rng = Pcg32::from_seed_bits(derive_seed(seed, "automata/fill"));
    let cells = (0..width * height)
        .map(|_| u8::from(rng.next_f64() < fill_probability))
        .collect();
    Ok(Grid::from_cells(width, height, cells).unwrap_or_else(|| Grid::new(width, height, WALL)))
}

/// A running automaton: the current grid, its rule and edge policy, and a scratch buffer
/// reused between steps (so stepping allocates nothing).
#[derive(Clone, Debug)]
pub struct Automaton {
    grid: Grid,
    scratch: Vec<u8>,
    column_sums: Vec<u8>,
    rule: Rule,
    edge: EdgePolicy,
    generation: u32,
}

impl Automaton {
    /// Starts from `grid` (generation 0).
    pub fn new(grid: Grid, rule: Rule, edge: EdgePolicy) -> Self {
        let scratch = vec![FLOOR; grid.cells().len()];
        let column_sums = vec![0; grid.width()];
        Automaton {
            grid,
            scratch,
            column_sums,
            rule,
            edge,
            generation: 0,
        }
    }

    /// The current grid.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// Consumes the automaton, returning its grid.
    pub fn into_grid(self) -> Grid {
        self.grid
    }

    /// Number of steps applied so far.
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// Applies the rule once to every cell simultaneously; returns how many cells changed
    /// (0 means a fixed point was reached).
    pub fn step(&mut self) -> usize {
        let (w, h) = (self.grid.width(), self.grid.height());
        let masks = self.rule.masks();
        let cells = self.grid.cells();
        let out = &mut self.scratch;
        let col = &mut self.column_sums;
        let edge = self.edge;
        let mut changed = 0;
        let mut write = |i: usize, n: u32| {
            let alive = cells[i];
            let next = (masks[usize::from(alive)] >> n & 1) as u8;
            changed += usize::from(next != alive);
            out[i] = next;
        };
        for y in 0..h {
            if y == 0 || y + 1 == h || w < 3 {
                for x in 0..w {
                    write(y * w + x, border_count(cells, w, h, x, y, edge));
                }
                continue;
            }
            // Interior row: vertical sums of three rows, then a sliding window of three.
            let (up, mid, dn) = (
                &cells[(y - 1) * w..y * w],
                &cells[y * w..(y + 1) * w],
                &cells[(y + 1) * w..(y + 2) * w],
            );
            for (((c, &a), &b), &d) in col.iter_mut().zip(up).zip(mid).zip(dn) {
                *c = a + b + d;
            }
            write(y * w, border_count(cells, w, h, 0, y, edge));
            for x in 1..w - 1 {
                let n = col[x - 1] + col[x] + col[x + 1] - mid[x];
                write(y * w + x, u32::from(n));
            }
            write(y * w + w - 1, border_count(cells, w, h, w - 1, y, edge));
        }
        self.grid.cells_mut().copy_from_slice(out);
        self.generation += 1;
        changed
    }

    /// Steps `iterations` times, stopping early at a fixed point; returns the steps taken.
    pub fn run(&mut self, iterations: u32) -> u32 {
        for i in 0..iterations {
            if self.step() == 0 {
                return i + 1;
            }
        }
        iterations
    }
}

/// Wall-neighbour count of a border cell under the edge policy.
fn border_count(cells: &[u8], w: usize, h: usize, x: usize, y: usize, edge: EdgePolicy) -> u32 {
    let mut n = 0;
    for dy in -1i64..=1 {
        for dx in -1i64..=1 {
            if dx == 0 && dy == 0 {
                continue;
            }
            let (nx, ny) = (x as i64 + dx, y as i64 + dy);
            let inside = nx >= 0 && ny >= 0 && (nx as usize) < w && (ny as usize) < h;
            n += if inside {
                u32::from(cells[ny as usize * w + nx as usize])
            } else {
                match edge {
                    EdgePolicy::Wall => 1,
                    EdgePolicy::Floor => 0,
                    EdgePolicy::Wrap => {
                        let wx = nx.rem_euclid(w as i64) as usize;
                        let wy = ny.rem_euclid(h as i64) as usize;
                        u32::from(cells[wy * w + wx])
                    }
                }
            };
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step_ascii(before: &str, rule: &str, edge: EdgePolicy) -> String {
        let grid = Grid::from_ascii(before).unwrap();
        let mut a = Automaton::new(grid, Rule::parse(rule).unwrap(), edge);
        a.step();
        a.grid().to_ascii()
    }

    #[test]
    fn blinker_oscillates_in_life() {
        let a = ".....\n..#..\n..#..\n..#..\n.....\n";
        let b = ".....\n.....\n.###.\n.....\n.....\n";
        assert_eq!(step_ascii(a, "B3/S23", EdgePolicy::Floor), b);
        assert_eq!(step_ascii(b, "B3/S23", EdgePolicy::Floor), a);
    }

    #[test]
    fn edge_policies_differ_at_the_border() {
        // A lone floor grid: with wall edges the corners see 5 walls and are born under B5678.
        let open = "....\n....\n....\n";
        assert_eq!(
            step_ascii(open, "B5678/S45678", EdgePolicy::Wall),
            "#..#\n....\n#..#\n"
        );
        assert_eq!(step_ascii(open, "B5678/S45678", EdgePolicy::Floor), open);
        // Wrap: a full wall row on a 3-high torus gives every cell 3 wall neighbours.
        let row = "###\n...\n...\n";
        assert_eq!(step_ascii(row, "B3/S", EdgePolicy::Wrap), "...\n###\n###\n");
    }

    #[test]
    fn fill_is_deterministic_and_respects_probability() {
        let a = random_fill(64, 64, 0.45, 7).unwrap();
        assert_eq!(a, random_fill(64, 64, 0.45, 7).unwrap());
        assert_ne!(a, random_fill(64, 64, 0.45, 8).unwrap());
        let walls = a.cells().len() - a.floor_count();
        assert!((1600..2100).contains(&walls), "walls {walls}");
        assert_eq!(random_fill(8, 8, 0.0, 1).unwrap().floor_count(), 64);
        assert_eq!(random_fill(8, 8, 1.0, 1).unwrap().floor_count(), 0);
        assert!(matches!(
            random_fill(8, 8, f64::NAN, 1),
            Err(CaveError::InvalidFillProbability(_))
        ));
        assert!(matches!(
            random_fill(0, 8, 0.5, 1),
            Err(CaveError::InvalidSize { width: 0, .. })
        ));
    }

    #[test]
    fn run_stops_at_fixed_point() {
        let grid = Grid::new(6, 6, FLOOR);
        let mut a = Automaton::new(grid, Rule::parse("B3/S23").unwrap(), EdgePolicy::Floor);
        assert_eq!(a.run(10), 1);
        assert_eq!(a.generation(), 1);
    }
}
