//! The 3D counterpart of region labelling and MST corridors: 6-connected floor regions of a
//! [`Grid3`], joined by corridors along a minimum spanning tree, with a BFS proof.
//!
//! Same method as the 2D [`crate::connect`]: one multi-source BFS over all voxels finds
//! closest region pairs (Manhattan distance), Kruskal picks the tree, and each corridor is
//! carved as an axis-aligned path (x first, then y, then z) with a cubic brush.

use std::collections::{BTreeMap, VecDeque};

use crate::connect::ConnectConfig;
use crate::error::CaveError;
use crate::grid::FLOOR;
use crate::grid3::Grid3;

const NONE: u32 = u32::MAX;

/// Connected floor regions of a [`Grid3`] (6-connectivity), numbered in storage order of
/// their first voxel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Regions3 {
    dims: (usize, usize, usize),
    labels: Vec<u32>,
    sizes: Vec<usize>,
}

/// A corridor carved by [`connect3`]: x first, then y, then z.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Corridor3 {
    /// Start voxel `(x, y, z)` in the lower-labelled region.
    pub from: (usize, usize, usize),
    /// End voxel in the other region.
    pub to: (usize, usize, usize),
    /// The two region labels joined.
    pub regions: (u32, u32),
}

impl Corridor3 {
    /// Manhattan length of the centre line.
    pub fn length(&self) -> usize {
        self.from.0.abs_diff(self.to.0)
            + self.from.1.abs_diff(self.to.1)
            + self.from.2.abs_diff(self.to.2)
    }
}

/// Up to six face neighbours of voxel `i`.
#[inline]
fn neighbours(i: usize, (w, h, d): (usize, usize, usize)) -> impl Iterator<Item = usize> {
    let (x, y, z) = (i % w, i / w % h, i / (w * h));
    let plane = w * h;
    [
        (x > 0).then(|| i - 1),
        (x + 1 < w).then(|| i + 1),
        (y > 0).then(|| i - w),
        (y + 1 < h).then(|| i + w),
        (z > 0).then(|| i - plane),
        (z + 1 < d).then(|| i + plane),
    ]
    .into_iter()
    .flatten()
}

fn coords(i: usize, (w, h, _): (usize, usize, usize)) -> (usize, usize, usize) {
    (i % w, i / w % h, i / (w * h))
}

impl Regions3 {
    /// Labels every floor region of `grid`.
    pub fn label(grid: &Grid3) -> Regions3 {
        let dims = grid.dims();
        let cells = grid.cells();
        let mut labels = vec![NONE; cells.len()];
        let mut sizes = Vec::new();
        let mut stack = Vec::new();
        for start in 0..cells.len() {
            if cells[start] != FLOOR || labels[start] != NONE {
                continue;
            }
            let id = sizes.len() as u32;
            labels[start] = id;
            stack.push(start);
            let mut size = 0;
            while let Some(i) = stack.pop() {
                size += 1;
                for j in neighbours(i, dims) {
                    if cells[j] == FLOOR && labels[j] == NONE {
                        labels[j] = id;
                        stack.push(j);
                    }
                }
            }
            sizes.push(size);
        }
        Regions3 {
            dims,
            labels,
            sizes,
        }
    }

    /// Number of regions.
    pub fn count(&self) -> usize {
        self.sizes.len()
    }

    /// Voxel count per region.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// The region of voxel `(x, y, z)`, `None` for walls and outside.
    pub fn label_at(&self, x: usize, y: usize, z: usize) -> Option<u32> {
        let (w, h, d) = self.dims;
        if x >= w || y >= h || z >= d {
            return None;
        }
        Some(self.labels[(z * h + y) * w + x]).filter(|&l| l != NONE)
    }
}

/// Connects every floor region of `grid` with corridors along a minimum spanning tree.
pub fn connect3(grid: &mut Grid3, config: &ConnectConfig) -> Result<Vec<Corridor3>, CaveError> {
    if config.corridor_width == 0 {
        return Err(CaveError::InvalidCorridorWidth(0));
    }
    let regions = Regions3::label(grid);
    if regions.count() <= 1 {
        return Ok(Vec::new());
    }
    let dims = grid.dims();
    let n = regions.labels.len();
    let mut owner = regions.labels.clone();
    let mut source = vec![NONE; n];
    let mut queue = VecDeque::new();
    for (i, &l) in regions.labels.iter().enumerate() {
        if l != NONE {
            source[i] = i as u32;
            queue.push_back(i);
        }
    }
    while let Some(i) = queue.pop_front() {
        for j in neighbours(i, dims) {
            if owner[j] == NONE {
                owner[j] = owner[i];
                source[j] = source[i];
                queue.push_back(j);
            }
        }
    }
    let dist = |a: u32, b: u32| {
        let (p, q) = (coords(a as usize, dims), coords(b as usize, dims));
        p.0.abs_diff(q.0) + p.1.abs_diff(q.1) + p.2.abs_diff(q.2)
    };
    let mut best: BTreeMap<(u32, u32), (usize, u32, u32)> = BTreeMap::new();
    for i in 0..n {
        for j in neighbours(i, dims).filter(|&j| j > i) {
            let (li, lj) = (owner[i], owner[j]);
            if li == lj {
                continue;
            }
            let (key, a, b) = if li < lj {
                ((li, lj), source[i], source[j])
            } else {
                ((lj, li), source[j], source[i])
            };
            let cand = (dist(a, b), a, b);
            let e = best.entry(key).or_insert(cand);
            if cand < *e {
                *e = cand;
            }
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
    let mut corridors = Vec::new();
    for (_, la, lb, a, b) in edges {
        let (ra, rb) = (find(&mut parent, la), find(&mut parent, lb));
        if ra == rb {
            continue;
        }
        parent[ra.max(rb) as usize] = ra.min(rb);
        let c = Corridor3 {
            from: coords(a as usize, dims),
            to: coords(b as usize, dims),
            regions: (la, lb),
        };
        carve(grid, &c, config.corridor_width);
        corridors.push(c);
        if corridors.len() + 1 == regions.count() {
            break;
        }
    }
    Ok(corridors)
}

fn carve(grid: &mut Grid3, c: &Corridor3, width: usize) {
    let lo = (width as i64 - 1) / 2;
    let hi = width as i64 / 2;
    let mut brush = |(cx, cy, cz): (usize, usize, usize)| {
        for dz in -lo..=hi {
            for dy in -lo..=hi {
                for dx in -lo..=hi {
                    let (x, y, z) = (cx as i64 + dx, cy as i64 + dy, cz as i64 + dz);
                    if x >= 0 && y >= 0 && z >= 0 {
                        grid.set(x as usize, y as usize, z as usize, FLOOR);
                    }
                }
            }
        }
    };
    let ((x0, y0, z0), (x1, y1, z1)) = (c.from, c.to);
    for x in x0.min(x1)..=x0.max(x1) {
        brush((x, y0, z0));
    }
    for y in y0.min(y1)..=y0.max(y1) {
        brush((x1, y, z0));
    }
    for z in z0.min(z1)..=z0.max(z1) {
        brush((x1, y1, z));
    }
}

/// Proves by BFS (6-connectivity) from the first floor voxel that every floor voxel is
/// reachable. A grid without floor is connected.
pub fn check_connected3(grid: &Grid3) -> Result<(), CaveError> {
    let dims = grid.dims();
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
        for j in neighbours(i, dims) {
            if cells[j] == FLOOR && !seen[j] {
                seen[j] = true;
                stack.push(j);
            }
        }
    }
    let floor = grid.floor_count();
    if reachable == floor {
        return Ok(());
    }
    let first = (0..cells.len())
        .find(|&i| cells[i] == FLOOR && !seen[i])
        .unwrap_or(start);
    let (x, y, z) = coords(first, dims);
    Err(CaveError::Disconnected3 {
        floor,
        reachable,
        x,
        y,
        z,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::WALL;

    #[test]
    fn joins_two_voxels_through_the_volume() {
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
