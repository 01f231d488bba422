//! Region labelling of floor cells by face-connected flood fill (4-connected in 2D,
//! 6-connected in 3D), and small-region removal.

use crate::grid::{FLOOR, GridOf, WALL};
use crate::topology::{Plane, Topology, Volume};

/// Label of cells that belong to no region (walls).
pub(crate) const NONE: u32 = u32::MAX;

/// Connected floor regions of a grid of shape `T` (face connectivity). Regions are numbered
/// `0..count()` in the storage order of their first cell, so labelling is deterministic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionsOf<T: Topology> {
    shape: T,
    labels: Vec<u32>,
    sizes: Vec<usize>,
    firsts: Vec<usize>,
}

/// Connected floor regions of a [`crate::Grid`] (4-connectivity), numbered in row-major
/// order of their first cell.
pub type Regions = RegionsOf<Plane>;

/// Connected floor regions of a [`crate::Grid3`] (6-connectivity), numbered in storage order
/// of their first voxel.
pub type Regions3 = RegionsOf<Volume>;

impl<T: Topology> RegionsOf<T> {
    /// Labels every floor region of `grid`.
    pub fn label(grid: &GridOf<T>) -> Self {
        let shape = grid.shape();
        let cells = grid.cells();
        let mut labels = vec![NONE; cells.len()];
        let mut sizes = Vec::new();
        let mut firsts = Vec::new();
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
                shape.for_each_neighbour(i, |j| {
                    if cells[j] == FLOOR && labels[j] == NONE {
                        labels[j] = id;
                        stack.push(j);
                    }
                });
            }
            sizes.push(size);
            firsts.push(start);
        }
        RegionsOf {
            shape,
            labels,
            sizes,
            firsts,
        }
    }

    /// Number of regions.
    pub fn count(&self) -> usize {
        self.sizes.len()
    }

    /// Cell count of each region, indexed by label.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// Labels of all cells in storage order, `u32::MAX` for walls.
    pub fn labels(&self) -> &[u32] {
        &self.labels
    }

    /// The region of the cell at `at`; `None` for walls and outside the grid.
    pub fn label_of(&self, at: T::Coord) -> Option<u32> {
        self.shape
            .index(at)
            .map(|i| self.labels[i])
            .filter(|&l| l != NONE)
    }

    /// Coordinates of the first cell (storage order) of region `label`.
    pub fn first_cell(&self, label: u32) -> Option<T::Coord> {
        self.firsts
            .get(label as usize)
            .map(|&i| self.shape.coords(i))
    }

    /// The largest region (the lowest label among equals), if any.
    pub fn largest(&self) -> Option<u32> {
        let mut best: Option<(usize, u32)> = None;
        for (label, &size) in self.sizes.iter().enumerate() {
            if best.is_none_or(|(s, _)| size > s) {
                best = Some((size, label as u32));
            }
        }
        best.map(|(_, l)| l)
    }
}

impl Regions {
    /// The region of cell `(x, y)`; `None` for walls and outside the grid.
    pub fn label_at(&self, x: usize, y: usize) -> Option<u32> {
        self.label_of((x, y))
    }
}

impl Regions3 {
    /// The region of voxel `(x, y, z)`; `None` for walls and outside the grid.
    pub fn label_at(&self, x: usize, y: usize, z: usize) -> Option<u32> {
        self.label_of((x, y, z))
    }
}

/// Turns every floor region smaller than `min_size` cells into wall, except that the
/// largest region is always kept (so a cave with floor never becomes solid). Returns the
/// number of cells filled.
pub fn remove_small_regions<T: Topology>(grid: &mut GridOf<T>, min_size: usize) -> usize {
    let regions = RegionsOf::label(grid);
    let keep = regions.largest();
    let mut filled = 0;
    for (cell, &label) in grid.cells_mut().iter_mut().zip(regions.labels()) {
        if label != NONE && Some(label) != keep && regions.sizes()[label as usize] < min_size {
            *cell = WALL;
            filled += 1;
        }
    }
    filled
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;

    const MAP: &str = "\
..#...
..#.#.
###.#.
.#..#.
";

    #[test]
    fn labels_in_row_major_order_with_four_connectivity() {
        let grid = Grid::from_ascii(MAP).unwrap();
        let r = Regions::label(&grid);
        // Region 0: the top-left 2x2; region 1: the right-hand U; region 2: the lone cell at
        // the bottom left.
        assert_eq!(r.count(), 3);
        assert_eq!(r.sizes(), &[4, 10, 1]);
        assert_eq!(r.label_at(0, 0), Some(0));
        assert_eq!(r.label_at(5, 3), Some(1));
        assert_eq!(r.label_at(0, 3), Some(2));
        assert_eq!(r.label_at(2, 0), None);
        assert_eq!(r.first_cell(1), Some((3, 0)));
        assert_eq!(r.largest(), Some(1));
    }

    #[test]
    fn removes_small_regions_but_keeps_the_largest() {
        let mut grid = Grid::from_ascii(MAP).unwrap();
        assert_eq!(remove_small_regions(&mut grid, 5), 5);
        assert_eq!(Regions::label(&grid).count(), 1);
        let mut tiny = Grid::from_ascii(".#.\n").unwrap();
        assert_eq!(remove_small_regions(&mut tiny, 100), 1);
        assert_eq!(tiny.to_ascii(), ".##\n");
    }
}
