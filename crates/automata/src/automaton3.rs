//! The 3D automaton: random voxel fill and a 26-neighbour birth/survival rule over a
//! [`Grid3`].

use procmodel_base::{Pcg32, derive_seed};

use crate::automaton::EdgePolicy;
use crate::error::CaveError;
use crate::grid::{FLOOR, Grid3, GridOf, WALL};
use crate::rule::Rule;
use crate::topology::Volume;

/// A 3D grid where each voxel is wall with probability `fill_probability`, drawn in storage
/// order from a [`Pcg32`] seeded with `derive_seed(seed, "automata/fill3")`.
pub fn random_fill3(
    width: usize,
    height: usize,
    depth: usize,
    fill_probability: f64,
    seed: u64,
) -> Result<Grid3, CaveError> {
    let count = width.checked_mul(height).and_then(|p| p.checked_mul(depth));
    if width == 0 || height == 0 || depth == 0 || count.is_none() {
        return Err(CaveError::InvalidSize3 {
            width,
            height,
            depth,
        });
    }
    let plane = width * height;
    crate::automaton::validate(width, height, fill_probability)?;
    let mut rng = Pcg32::from_seed_bits(derive_seed(seed, "automata/fill3"));
    let cells = (0..plane * depth)
        .map(|_| u8::from(rng.next_f64() < fill_probability))
        .collect();
    Ok(GridOf::from_parts(Volume::new(width, height, depth), cells))
}

/// A 26-neighbour automaton over a [`Grid3`]; rules are parsed with [`Rule::parse_3d`].
#[derive(Clone, Debug)]
pub struct Automaton3 {
    grid: Grid3,
    scratch: Vec<u8>,
    rule: Rule,
    edge: EdgePolicy,
}

impl Automaton3 {
    /// Starts from `grid`.
    pub fn new(grid: Grid3, rule: Rule, edge: EdgePolicy) -> Self {
        let scratch = vec![FLOOR; grid.cells().len()];
        Automaton3 {
            grid,
            scratch,
            rule,
            edge,
        }
    }

    /// The current grid.
    pub fn grid(&self) -> &Grid3 {
        &self.grid
    }

    /// Consumes the automaton, returning its grid.
    pub fn into_grid(self) -> Grid3 {
        self.grid
    }

    /// One simultaneous update of every voxel; returns how many changed.
    pub fn step(&mut self) -> usize {
        let (w, h, d) = self.grid.dims();
        let masks = self.rule.masks();
        let g = self.grid.cells();
        let mut changed = 0;
        for z in 0..d {
            for y in 0..h {
                for x in 0..w {
                    let mut n = 0u32;
                    for dz in -1i64..=1 {
                        for dy in -1i64..=1 {
                            for dx in -1i64..=1 {
                                if dx == 0 && dy == 0 && dz == 0 {
                                    continue;
                                }
                                n += neighbour(
                                    g,
                                    (w, h, d),
                                    x as i64 + dx,
                                    y as i64 + dy,
                                    z as i64 + dz,
                                    self.edge,
                                );
                            }
                        }
                    }
                    let i = (z * h + y) * w + x;
                    let alive = g[i];
                    let next = (masks[usize::from(alive)] >> n & 1) as u8;
                    changed += usize::from(next != alive);
                    self.scratch[i] = next;
                }
            }
        }
        self.grid.cells_mut().copy_from_slice(&self.scratch);
        changed
    }
}

fn neighbour(
    g: &[u8],
    (w, h, d): (usize, usize, usize),
    x: i64,
    y: i64,
    z: i64,
    edge: EdgePolicy,
) -> u32 {
    let (w, h, d) = (w as i64, h as i64, d as i64);
    let inside = (0..w).contains(&x) && (0..h).contains(&y) && (0..d).contains(&z);
    if inside {
        return u32::from(g[((z * h + y) * w + x) as usize]);
    }
    match edge {
        EdgePolicy::Wall => u32::from(WALL),
        EdgePolicy::Floor => u32::from(FLOOR),
        EdgePolicy::Wrap => {
            let (x, y, z) = (x.rem_euclid(w), y.rem_euclid(h), z.rem_euclid(d));
            u32::from(g[((z * h + y) * w + x) as usize])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corner_voxels_see_nineteen_outside_walls() {
        // An all-floor 3x3x3 cube with wall edges: a corner voxel has 26 - 7 = 19 outside
        // neighbours, an edge voxel 26 - 11 = 15, a face centre 9, the centre 0.
        let grid = Grid3::new(3, 3, 3, FLOOR);
        let mut a = Automaton3::new(grid, Rule::parse_3d("B16-19/S").unwrap(), EdgePolicy::Wall);
        assert_eq!(a.step(), 8);
        assert_eq!(a.grid().get(0, 0, 0), Some(WALL));
        assert_eq!(a.grid().get(1, 0, 0), Some(FLOOR));
        let grid = Grid3::new(3, 3, 3, FLOOR);
        let mut a = Automaton3::new(grid, Rule::parse_3d("B10-15/S").unwrap(), EdgePolicy::Wall);
        assert_eq!(a.step(), 12);
        let grid = Grid3::new(3, 3, 3, FLOOR);
        let mut a = Automaton3::new(grid, Rule::parse_3d("B9/S").unwrap(), EdgePolicy::Wall);
        assert_eq!(a.step(), 6);
        assert_eq!(a.grid().get(1, 1, 1), Some(FLOOR));
    }

    #[test]
    fn wrap_sees_every_voxel() {
        // On a 3x3x3 torus every voxel's 26 neighbours are all the other voxels.
        let mut grid = Grid3::new(3, 3, 3, FLOOR);
        grid.set(0, 0, 0, WALL);
        let mut a = Automaton3::new(grid, Rule::parse_3d("B1/S").unwrap(), EdgePolicy::Wrap);
        assert_eq!(a.step(), 27);
        assert_eq!(a.grid().floor_count(), 1);
    }

    #[test]
    fn fill_is_deterministic() {
        let a = random_fill3(8, 8, 8, 0.5, 3).unwrap();
        assert_eq!(a, random_fill3(8, 8, 8, 0.5, 3).unwrap());
        assert_eq!(
            random_fill3(8, 8, 0, 0.5, 3).unwrap_err().to_string(),
            "invalid cave size 8x8x0 (all must be at least 1)"
        );
        let mut auto = Automaton3::new(
            a,
            Rule::parse_3d("B13-26/S14-26").unwrap(),
            EdgePolicy::Wall,
        );
        let first = auto.step();
        assert!(first > 0);
        assert_eq!(auto.grid().dims(), (8, 8, 8));
    }
}
