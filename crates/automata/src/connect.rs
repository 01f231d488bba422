//! Joining floor regions with corridors along a minimum spanning tree, and the BFS proof
//! that every floor cell is reachable.
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
use crate::grid::{FLOOR, Grid};
use crate::regions::Regions;

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

/// One carved corridor: an L-shaped path that runs horizontally from `from` along its
/// row to the column of `to`, then vertically to `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Corridor {
    /// Start cell `(x, y)`, a floor cell of the lower-labelled region.
    pub from: (usize, usize),
    /// End cell `(x, y)`, a floor cell of the other region.
    pub to: (usize, usize),
    /// The two region labels joined (as labelled before any corridor was carved).
    pub regions: (u32, u32),
}

impl Corridor {
    /// Manhattan length of the centre line in cells.
    pub fn length(&self) -> usize {
        self.from.0.abs_diff(self.to.0) + self.from.1.abs_diff(self.to.1)
    }
}

/// Connects every floor region of `grid` by carving corridors along a minimum spanning tree
/// of the regions. Returns the corridors in the order Kruskal accepted them
/// (by length, then labels, then cell indices). A grid with at most one region is unchanged.
pub fn connect(grid: &mut Grid, config: &ConnectConfig) -> Result<Vec<Corridor>, CaveError> {
    if config.corridor_width == 0 {
        return Err(CaveError::InvalidCorridorWidth(0));
    }
    let regions = Regions::label(grid);
    if regions.count() <= 1 {
        return Ok(Vec::new());
    }
    let (w, h) = (grid.width(), grid.height());
    let labels = regions.labels();
    let n = labels.len();

    // Multi-source BFS: owner label and source floor cell of every cell.
    let mut owner = labels.to_vec();
    let mut source: Vec<u32> = vec![u32::MAX; n];
    let mut queue = VecDeque::new();
    for (i, &l) in labels.iter().enumerate() {
        if l != u32::MAX {
            source[i] = i as u32;
            queue.push_back(i);
        }
    }
    while let Some(i) = queue.pop_front() {
        let (x, y) = (i % w, i / w);
        let mut visit = |j: usize| {
            if owner[j] == u32::MAX {
                owner[j] = owner[i];
                source[j] = source[i];
                queue.push_back(j);
            }
        };
        if x > 0 {
            visit(i - 1);
        }
        if x + 1 < w {
            visit(i + 1);
        }
        if y > 0 {
            visit(i - w);
        }
        if y + 1 < h {
            visit(i + w);
        }
    }

    // Best candidate pair per region pair: (length, from cell, to cell), from in the lower label.
    let mut best: BTreeMap<(u32, u32), (usize, u32, u32)> = BTreeMap::new();
    let dist = |a: u32, b: u32| {
        let (a, b) = (a as usize, b as usize);
        (a % w).abs_diff(b % w) + (a / w).abs_diff(b / w)
    };
    let mut consider = |i: usize, j: usize| {
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
    };
    for i in 0..n {
        if i % w + 1 < w {
            consider(i, i + 1);
        }
        if i + w < n {
            consider(i, i + w);
        }
    }

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
    for (_, la, lb, a, b) in edges {
        let (ra, rb) = (find(&mut parent, la), find(&mut parent, lb));
        if ra == rb {
            continue;
        }
        parent[ra.max(rb) as usize] = ra.min(rb);
        let (a, b) = (a as usize, b as usize);
        let corridor = Corridor {
            from: (a % w, a / w),
            to: (b % w, b / w),
            regions: (la, lb),
        };
        carve(grid, &corridor, config.corridor_width);
        corridors.push(corridor);
        if corridors.len() + 1 == regions.count() {
            break;
        }
    }
    Ok(corridors)
}

/// Carves the L-shaped corridor with a square brush of side `width`.
fn carve(grid: &mut Grid, c: &Corridor, width: usize) {
    let lo = (width as i64 - 1) / 2;
    let hi = width as i64 / 2;
    let mut brush = |cx: usize, cy: usize| {
        for dy in -lo..=hi {
            for dx in -lo..=hi {
                let (x, y) = (cx as i64 + dx, cy as i64 + dy);
                if x >= 0 && y >= 0 {
                    grid.set(x as usize, y as usize, FLOOR);
                }
            }
        }
    };
    let ((x0, y0), (x1, y1)) = (c.from, c.to);
    for x in x0.min(x1)..=x0.max(x1) {
        brush(x, y0);
    }
    for y in y0.min(y1)..=y0.max(y1) {
        brush(x1, y);
    }
}

/// Proves that every floor cell is reachable from every other by a BFS (4-connectivity)
/// from the first floor cell in row-major order. A grid without floor is connected.
pub fn check_connected(grid: &Grid) -> Result<(), CaveError> {
    let (w, h) = (grid.width(), grid.height());
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
        let (x, y) = (i % w, i / w);
        let mut visit = |j: usize| {
            if cells[j] == FLOOR && !seen[j] {
                seen[j] = true;
                stack.push(j);
            }
        };
        if x > 0 {
            visit(i - 1);
        }
        if x + 1 < w {
            visit(i + 1);
        }
        if y > 0 {
            visit(i - w);
        }
        if y + 1 < h {
            visit(i + w);
        }
    }
    let floor = grid.floor_count();
    if reachable == floor {
        return Ok(());
    }
    let first = (0..cells.len())
        .find(|&i| cells[i] == FLOOR && !seen[i])
        .unwrap_or(start);
    Err(CaveError::Disconnected {
        floor,
        reachable,
        start_x: start % w,
        start_y: start / w,
        x: first % w,
        y: first / w,
    })
}

/// Whether [`check_connected`] succeeds.
pub fn is_connected(grid: &Grid) -> bool {
    check_connected(grid).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
