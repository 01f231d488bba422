//! Region labelling of floor cells by 4-connected flood fill, and small-region removal.

use crate::grid::{FLOOR, Grid, WALL};

/// Label of cells that belong to no region (walls).
const NONE: u32 = u32::MAX;

/// Connected floor regions (4-connectivity). Regions are numbered `0..count()` in the
/// row-major order of their first cell, so labelling is deterministic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Regions {
    width: usize,
    labels: Vec<u32>,
    sizes: Vec<usize>,
    firsts: Vec<usize>,
}

impl Regions {
    /// Labels every floor region of `grid`.
    pub fn label(grid: &Grid) -> Regions {
        let (w, h) = (grid.width(), grid.height());
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
                let (x, y) = (i % w, i / w);
                let mut visit = |j: usize| {
                    if cells[j] == FLOOR && labels[j] == NONE {
                        labels[j] = id;
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
            sizes.push(size);
            firsts.push(start);
        }
        Regions {
            width: w,
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

    /// Row-major label per cell; `None` for walls.
    pub fn label_at(&self, x: usize, y: usize) -> Option<u32> {
        if x >= self.width {
            return None;
        }
        self.labels
            .get(y * self.width + x)
            .copied()
            .filter(|&l| l != NONE)
    }

    /// Labels of all cells, row-major, `u32::MAX` for walls.
    pub fn labels(&self) -> &[u32] {
        &self.labels
    }

    /// `(x, y)` of the first cell (row-major) of region `label`.
    pub fn first_cell(&self, label: u32) -> Option<(usize, usize)> {
        self.firsts
            .get(label as usize)
            .map(|&i| (i % self.width, i / self.width))
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

/// Turns every floor region smaller than `min_size` cells into wall, except that the
/// largest region is always kept (so a cave with floor never becomes solid). Returns the
/// number of cells filled.
pub fn remove_small_regions(grid: &mut Grid, min_size: usize) -> usize {
    let regions = Regions::label(grid);
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
