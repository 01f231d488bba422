//! Joining floor regions with corridors along a minimum spanning tree, and the flood-fill
//! proof that every floor cell is reachable, written once over a [`Topology`] (2D and 3D).
//!
//! Closest region pairs come from one multi-source BFS from every floor cell over the whole
//! grid (a discrete Voronoi diagram of the regions): wherever two cells owned by different
//! regions touch, their two source floor cells are a candidate pair, weighed by Manhattan
//! distance. Kruskal's algorithm then picks the tree. By the cycle property an MST edge
//! between regions A and B is never cut off by a third region's Voronoi cell unless that
//! region is strictly closer to both, so this is an MST over closest-pair distances (up to
//! ties); either way it is a spanning tree, which is what guarantees connectivity.

use std::collections::{BTreeMap, VecDeque};

use crate::error::CaveError;
use crate::grid::{FLOOR, GridOf};
use crate::regions::{NONE, RegionsOf};
use crate::topology::{Plane, Topology, Volume};

/// How corridors are carved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConnectConfig {
    /// Corridor width in cells (at least 1). A width `w` brush covers offsets
    /// `-(w-1)/2 ..= w/2` around the centre line, clipped to the grid.
    pub corridor_width: usize,
}

impl Default for ConnectConfig {
    fn default() -> Self {
        ConnectConfig { corridor_width: 1 }
    }
}

/// One carved corridor on a grid of shape `T`: an axis-aligned path that runs along x from
/// `from` to the column of `to`, then along y (then along z in 3D) to `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CorridorOf<T: Topology> {
    /// Start cell, a floor cell of the lower-labelled region.
    pub from: T::Coord,
    /// End cell, a floor cell of the other region.
    pub to: T::Coord,
    /// The two region labels joined (as labelled before any corridor was carved).
    pub regions: (u32, u32),
}

/// A 2D corridor: horizontally from `from` `(x, y)` along its row to the column of `to`,
/// then vertically to `to`.
pub type Corridor = CorridorOf<Plane>;

/// A 3D corridor carved by [`connect3`]: x first, then y, then z.
pub type Corridor3 = CorridorOf<Volume>;

impl<T: Topology> CorridorOf<T> {
    /// Manhattan length of the centre line in cells.
    pub fn length(&self) -> usize {
        T::distance(self.from, self.to)
    }
}

/// Connects every floor region of `grid` by carving corridors along a minimum spanning tree
/// of the regions. Returns the corridors in the order Kruskal accepted them
/// (by length, then labels, then cell indices). A grid with at most one region is unchanged.
pub fn connect<T: Topology>(
    grid: &mut GridOf<T>,
    config: &ConnectConfig,
) -> Result<Vec<CorridorOf<T>>, CaveError> {
    if config.corridor_width == 0 {
        return Err(CaveError::InvalidCorridorWidth(0));
    }
    let regions = RegionsOf::label(grid);
    if regions.count() <= 1 {
        return Ok(Vec::new());
    }
    let shape = grid.shape();
    let labels = regions.labels();
    let n = labels.len();

    // Multi-source BFS: owner label and source floor cell of every cell.
    let mut owner = labels.to_vec();
    let mut source: Vec<u32> = vec![NONE; n];
    let mut queue = VecDeque::new();
    for (i, &l) in labels.iter().enumerate() {
        if l != NONE {
            source[i] = i as u32;
            queue.push_back(i);
        }
    }
    while let Some(i) = queue.pop_front() {
        shape.for_each_neighbour(i, |j| {
            if owner[j] == NONE {
                owner[j] = owner[i];
                source[j] = source[i];
                queue.push_back(j);
            }
        });
    }

    // Best candidate pair per region pair: (length, from cell, to cell), from in the lower label.
    let mut best: BTreeMap<(u32, u32), (usize, u32, u32)> = BTreeMap::new();
    let dist = |a: u32, b: u32| T::distance(shape.coords(a as usize), shape.coords(b as usize));
    shape.for_each_adjacent_pair(|i, j| {
        let (li, lj) = (owner[i], owner[j]);
        if li == lj {
            return;
        }
        let (key, a, b) = if li < lj {
            ((li, lj), source[i], source[j])
        } else {
            ((lj, li), source[j], source[i])
        };
        let cand = (dist(a, b), a, b);
        best.entry(key)
            .and_modify(|e| {
                if cand < *e {
                    *e = cand;
                }
            })
            .or_insert(cand);
    });

    let mut edges: Vec<(usize, u32, u32, u32, u32)> = best
        .into_iter()
        .map(|((la, lb), (d, a, b))| (d, la, lb, a, b))
        .collect();
    edges.sort_unstable();

    let mut parent: Vec<u32> = (0..regions.count() as u32).collect();
    fn find(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            let p = parent[x as usize];
            parent[x as usize] = parent[p as usize];
            x = p;
        }
        x
    }
    let mut corridors = Vec::with_capacity(regions.count() - 1);
    let cells = grid.cells_mut();
    for (_, la, lb, a, b) in edges {
        let (ra, rb) = (find(&mut parent, la), find(&mut parent, lb));
        if ra == rb {
            continue;
        }
        parent[ra.max(rb) as usize] = ra.min(rb);
        let corridor = CorridorOf {
            from: shape.coords(a as usize),
            to: shape.coords(b as usize),
            regions: (la, lb),
        };
        shape.for_each_corridor_cell(corridor.from, corridor.to, config.corridor_width, |i| {
            cells[i] = FLOOR;
        });
        corridors.push(corridor);
        if corridors.len() + 1 == regions.count() {
            break;
        }
    }
    Ok(corridors)
}

/// Proves that every floor cell is reachable from every other by a flood fill (face
/// connectivity) from the first floor cell in storage order. A grid without floor is
/// connected.
pub fn check_connected<T: Topology>(grid: &GridOf<T>) -> Result<(), CaveError> {
    let shape = grid.shape();
    let cells = grid.cells();
    let Some(start) = cells.iter().position(|&c| c == FLOOR) else {
        return Ok(());
    };
    let mut seen = vec![false; cells.len()];
    seen[start] = true;
    let mut stack = vec![start];
    let mut reachable = 0;
    while let Some(i) = stack.pop() {
        reachable += 1;
        shape.for_each_neighbour(i, |j| {
            if cells[j] == FLOOR && !seen[j] {
                seen[j] = true;
                stack.push(j);
            }
        });
    }
    let floor = grid.floor_count();
    if reachable == floor {
        return Ok(());
    }
    let first = (0..cells.len())
        .find(|&i| cells[i] == FLOOR && !seen[i])
        .unwrap_or(start);
    Err(shape.disconnected(floor, reachable, start, first))
}

/// Whether [`check_connected`] succeeds.
pub fn is_connected<T: Topology>(grid: &GridOf<T>) -> bool {
    check_connected(grid).is_ok()
}

/// [`connect`] on a 3D grid (6-connected regions, corridors x first, then y, then z).
pub fn connect3(
    grid: &mut GridOf<Volume>,
    config: &ConnectConfig,
) -> Result<Vec<Corridor3>, CaveError> {
    connect(grid, config)
}

/// [`check_connected`] on a 3D grid (6-connectivity).
pub fn check_connected3(grid: &GridOf<Volume>) -> Result<(), CaveError> {
    check_connected(grid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;

    fn check(before: &str, width: usize, after: &str, corridors: usize) {
        let mut grid = Grid::from_ascii(before).unwrap();
        let c = connect(
            &mut grid,
            &ConnectConfig {
                corridor_width: width,
            },
        )
        .unwrap();
        assert_eq!(grid.to_ascii(), after);
        assert_eq!(c.len(), corridors);
        assert!(is_connected(&grid));
    }

    #[test]
    fn joins_nearest_regions_with_l_corridors() {
        check(".##.\n####\n####\n.###\n", 1, "....\n.###\n.###\n.###\n", 2);
    }

    #[test]
    fn three_regions_make_a_tree_not_a_cycle() {
        check(
            "\
..#####..
..#####..
#########
#########
....#####
",
            1,
            "\
.........
..#####..
.########
.########
....#####
",
            2,
        );
    }

    #[test]
    fn wide_corridors() {
        check(
            "..###..\n..###..\n#######\n",
            2,
            ".......\n.......\n#######\n",
            1,
        );
    }

    #[test]
    fn connectivity_error_names_cells() {
        let grid = Grid::from_ascii(".#.\n###\n").unwrap();
        assert_eq!(
            check_connected(&grid).unwrap_err().to_string(),
            "cave is not connected: 1 of 2 floor cells reachable from (0, 0); first unreachable floor cell at (2, 0)"
        );
        assert!(is_connected(&Grid::from_ascii("###\n").unwrap()));
        let mut g = grid.clone();
        assert!(matches!(
            connect(&mut g, &ConnectConfig { corridor_width: 0 }),
            Err(CaveError::InvalidCorridorWidth(0))
        ));
    }

    #[test]
    fn joins_two_voxels_through_the_volume() {
        use crate::grid::{Grid3, WALL};
        use crate::regions::Regions3;
        let mut grid = Grid3::new(3, 3, 3, WALL);
        grid.set(0, 0, 0, FLOOR);
        grid.set(2, 2, 2, FLOOR);
        assert_eq!(Regions3::label(&grid).count(), 2);
        assert_eq!(
            check_connected3(&grid).unwrap_err().to_string(),
            "3d cave is not connected: 1 of 2 floor voxels reachable; first unreachable floor voxel at (2, 2, 2)"
        );
        let c = connect3(&mut grid, &ConnectConfig::default()).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].length(), 6);
        assert_eq!(grid.floor_count(), 7);
        assert!(check_connected3(&grid).is_ok());
        for p in [(1, 0, 0), (2, 0, 0), (2, 1, 0), (2, 2, 0), (2, 2, 1)] {
            assert_eq!(grid.get(p.0, p.1, p.2), Some(FLOOR), "{p:?}");
        }
    }
}
