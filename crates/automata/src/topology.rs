//! The grid shapes the cave pipeline runs on: a [`Topology`] says how flat cell indices map
//! to coordinates, which cells are face neighbours, how far apart two cells are and which
//! cells a corridor covers. [`Plane`] (2D, 4-connected) and [`Volume`] (3D, 6-connected)
//! implement it; regions, corridors and the connectivity proof are written once over it.

use std::fmt::Debug;
use std::hash::Hash;

use crate::error::CaveError;

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Plane {}
    impl Sealed for super::Volume {}
}

/// The shape of a grid: its extent, cell indexing and face-neighbour structure. Sealed: the
/// pipeline is implemented for [`Plane`] and [`Volume`] only.
///
/// Every method works on flat indices in storage order (x fastest, then y, then z), and the
/// neighbour order is fixed (`-x, +x, -y, +y, -z, +z`) so flood fills visit cells in the same
/// order on every platform.
pub trait Topology: Copy + Eq + Hash + Debug + sealed::Sealed {
    /// Cell coordinates: `(x, y)` or `(x, y, z)`.
    type Coord: Copy + Eq + Ord + Hash + Debug;

    /// The extent along each axis, x first.
    fn extent(&self) -> &[usize];

    /// Number of cells.
    #[inline]
    fn len(&self) -> usize {
        self.extent().iter().product()
    }

    /// Whether the shape has no cell.
    #[inline]
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The coordinates of flat index `index`.
    fn coords(&self, index: usize) -> Self::Coord;

    /// The flat index of `at`, or `None` outside.
    fn index(&self, at: Self::Coord) -> Option<usize>;

    /// Calls `visit` with every face neighbour of `index` inside the grid, in the order
    /// `-x, +x, -y, +y, -z, +z`.
    fn for_each_neighbour(&self, index: usize, visit: impl FnMut(usize));

    /// Calls `visit(i, j)` once for every pair of face-adjacent cells, `i < j`: cells in
    /// storage order, each with its `+x, +y, +z` neighbours.
    fn for_each_adjacent_pair(&self, visit: impl FnMut(usize, usize));

    /// Manhattan distance between two cells.
    fn distance(a: Self::Coord, b: Self::Coord) -> usize;

    /// Calls `visit` with every cell a corridor from `from` to `to` covers: the centre line
    /// runs along x first (at `from`'s other coordinates), then y, then z, ending at `to`;
    /// a cube brush of side `width` (offsets `-(width-1)/2 ..= width/2`, clipped to the grid)
    /// is stamped at every centre cell. Cells may be visited more than once.
    fn for_each_corridor_cell(
        &self,
        from: Self::Coord,
        to: Self::Coord,
        width: usize,
        visit: impl FnMut(usize),
    );

    /// The error of a failed connectivity proof: `reachable` of `floor` floor cells were
    /// reached from cell `start`; `first` is the first unreachable floor cell.
    fn disconnected(&self, floor: usize, reachable: usize, start: usize, first: usize)
    -> CaveError;
}

/// Brush offsets of a corridor of `width` cells: `-(width-1)/2 ..= width/2`.
#[inline]
fn brush(width: usize) -> std::ops::RangeInclusive<i64> {
    -((width as i64 - 1) / 2)..=width as i64 / 2
}

/// `centre + offset` when it lies in `0..size`.
#[inline]
fn offset(centre: usize, offset: i64, size: usize) -> Option<usize> {
    let v = centre as i64 + offset;
    (v >= 0 && (v as usize) < size).then_some(v as usize)
}

/// The face neighbours of cell `i` at `(x, y)` within its `w × h` layer, in the order
/// `-x, +x, -y, +y`.
#[inline(always)]
fn visit_in_layer(
    i: usize,
    (x, y): (usize, usize),
    (w, h): (usize, usize),
    visit: &mut impl FnMut(usize),
) {
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

/// A `width × height` 2D grid, row-major, 4-connected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Plane {
    extent: [usize; 2],
}

impl Plane {
    /// A plane of `width` columns and `height` rows.
    pub fn new(width: usize, height: usize) -> Self {
        Plane {
            extent: [width, height],
        }
    }

    /// Number of columns.
    #[inline]
    pub fn width(&self) -> usize {
        self.extent[0]
    }

    /// Number of rows.
    #[inline]
    pub fn height(&self) -> usize {
        self.extent[1]
    }
}

impl Topology for Plane {
    type Coord = (usize, usize);

    #[inline]
    fn extent(&self) -> &[usize] {
        &self.extent
    }

    #[inline]
    fn coords(&self, index: usize) -> (usize, usize) {
        let w = self.width();
        (index % w, index / w)
    }

    #[inline]
    fn index(&self, (x, y): (usize, usize)) -> Option<usize> {
        (x < self.width() && y < self.height()).then(|| y * self.width() + x)
    }

    #[inline]
    fn for_each_neighbour(&self, i: usize, mut visit: impl FnMut(usize)) {
        let [w, h] = self.extent;
        visit_in_layer(i, (i % w, i / w), (w, h), &mut visit);
    }

    #[inline]
    fn for_each_adjacent_pair(&self, mut visit: impl FnMut(usize, usize)) {
        let [w, h] = self.extent;
        for y in 0..h {
            let row = y * w;
            for i in row..row + w {
                if i + 1 < row + w {
                    visit(i, i + 1);
                }
                if y + 1 < h {
                    visit(i, i + w);
                }
            }
        }
    }

    #[inline]
    fn distance(a: (usize, usize), b: (usize, usize)) -> usize {
        a.0.abs_diff(b.0) + a.1.abs_diff(b.1)
    }

    fn for_each_corridor_cell(
        &self,
        (x0, y0): (usize, usize),
        (x1, y1): (usize, usize),
        width: usize,
        mut visit: impl FnMut(usize),
    ) {
        let [w, h] = self.extent;
        let mut stamp = |cx: usize, cy: usize| {
            for dy in brush(width) {
                let Some(y) = offset(cy, dy, h) else { continue };
                for dx in brush(width) {
                    if let Some(x) = offset(cx, dx, w) {
                        visit(y * w + x);
                    }
                }
            }
        };
        for x in x0.min(x1)..=x0.max(x1) {
            stamp(x, y0);
        }
        for y in y0.min(y1)..=y0.max(y1) {
            stamp(x1, y);
        }
    }

    fn disconnected(
        &self,
        floor: usize,
        reachable: usize,
        start: usize,
        first: usize,
    ) -> CaveError {
        let ((start_x, start_y), (x, y)) = (self.coords(start), self.coords(first));
        CaveError::Disconnected {
            floor,
            reachable,
            start_x,
            start_y,
            x,
            y,
        }
    }
}

/// A `width × height × depth` 3D grid, x fastest then y then z, 6-connected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Volume {
    extent: [usize; 3],
}

impl Volume {
    /// A volume of `width × height × depth` voxels.
    pub fn new(width: usize, height: usize, depth: usize) -> Self {
        Volume {
            extent: [width, height, depth],
        }
    }

    /// `(width, height, depth)`.
    #[inline]
    pub fn dims(&self) -> (usize, usize, usize) {
        let [w, h, d] = self.extent;
        (w, h, d)
    }
}

impl Topology for Volume {
    type Coord = (usize, usize, usize);

    #[inline]
    fn extent(&self) -> &[usize] {
        &self.extent
    }

    #[inline]
    fn coords(&self, i: usize) -> (usize, usize, usize) {
        let [w, h, _] = self.extent;
        (i % w, i / w % h, i / (w * h))
    }

    #[inline]
    fn index(&self, (x, y, z): (usize, usize, usize)) -> Option<usize> {
        let [w, h, d] = self.extent;
        (x < w && y < h && z < d).then(|| (z * h + y) * w + x)
    }

    #[inline]
    fn for_each_neighbour(&self, i: usize, mut visit: impl FnMut(usize)) {
        let [w, h, d] = self.extent;
        let plane = w * h;
        let (x, y, z) = self.coords(i);
        visit_in_layer(i, (x, y), (w, h), &mut visit);
        if z > 0 {
            visit(i - plane);
        }
        if z + 1 < d {
            visit(i + plane);
        }
    }

    #[inline]
    fn for_each_adjacent_pair(&self, mut visit: impl FnMut(usize, usize)) {
        let [w, h, d] = self.extent;
        let plane = w * h;
        let mut i = 0;
        for z in 0..d {
            for y in 0..h {
                for x in 0..w {
                    if x + 1 < w {
                        visit(i, i + 1);
                    }
                    if y + 1 < h {
                        visit(i, i + w);
                    }
                    if z + 1 < d {
                        visit(i, i + plane);
                    }
                    i += 1;
                }
            }
        }
    }

    #[inline]
    fn distance(a: (usize, usize, usize), b: (usize, usize, usize)) -> usize {
        a.0.abs_diff(b.0) + a.1.abs_diff(b.1) + a.2.abs_diff(b.2)
    }

    fn for_each_corridor_cell(
        &self,
        (x0, y0, z0): (usize, usize, usize),
        (x1, y1, z1): (usize, usize, usize),
        width: usize,
        mut visit: impl FnMut(usize),
    ) {
        let [w, h, d] = self.extent;
        let mut stamp = |cx: usize, cy: usize, cz: usize| {
            for dz in brush(width) {
                let Some(z) = offset(cz, dz, d) else { continue };
                for dy in brush(width) {
                    let Some(y) = offset(cy, dy, h) else { continue };
                    for dx in brush(width) {
                        if let Some(x) = offset(cx, dx, w) {
                            visit((z * h + y) * w + x);
                        }
                    }
                }
            }
        };
        for x in x0.min(x1)..=x0.max(x1) {
            stamp(x, y0, z0);
        }
        for y in y0.min(y1)..=y0.max(y1) {
            stamp(x1, y, z0);
        }
        for z in z0.min(z1)..=z0.max(z1) {
            stamp(x1, y1, z);
        }
    }

    fn disconnected(
        &self,
        floor: usize,
        reachable: usize,
        _start: usize,
        first: usize,
    ) -> CaveError {
        let (x, y, z) = self.coords(first);
        CaveError::Disconnected3 {
            floor,
            reachable,
            x,
            y,
            z,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn neighbours<T: Topology>(t: &T, i: usize) -> Vec<usize> {
        let mut out = Vec::new();
        t.for_each_neighbour(i, |j| out.push(j));
        out
    }

    fn pairs<T: Topology>(t: &T) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        t.for_each_adjacent_pair(|i, j| out.push((i, j)));
        out
    }

    #[test]
    fn plane_neighbours_in_fixed_order() {
        let p = Plane::new(3, 2);
        assert_eq!(neighbours(&p, 0), [1, 3]);
        assert_eq!(neighbours(&p, 4), [3, 5, 1]);
        assert_eq!(
            pairs(&p),
            [(0, 1), (0, 3), (1, 2), (1, 4), (2, 5), (3, 4), (4, 5)]
        );
        assert_eq!(p.coords(4), (1, 1));
        assert_eq!(p.index((1, 1)), Some(4));
        assert_eq!(p.index((3, 0)), None);
        assert_eq!(p.len(), 6);
    }

    #[test]
    fn volume_neighbours_in_fixed_order() {
        let v = Volume::new(3, 3, 3);
        assert_eq!(neighbours(&v, 13), [12, 14, 10, 16, 4, 22]);
        assert_eq!(neighbours(&v, 0), [1, 3, 9]);
        let all = pairs(&v);
        // 3 axes × 2 links per line × 9 lines per axis.
        assert_eq!(all.len(), 54);
        assert_eq!(
            all.iter().filter(|p| p.0 == 13).collect::<Vec<_>>(),
            [&(13, 14), &(13, 16), &(13, 22)]
        );
        assert!(
            all.iter()
                .all(|&(i, j)| i < j && neighbours(&v, i).contains(&j))
        );
        assert_eq!(v.coords(14), (2, 1, 1));
        assert_eq!(v.index((2, 1, 1)), Some(14));
        assert_eq!(v.index((0, 0, 3)), None);
    }

    #[test]
    fn corridor_cells_run_x_then_y_and_clip_the_brush() {
        let p = Plane::new(4, 3);
        let mut cells = Vec::new();
        p.for_each_corridor_cell((0, 0), (2, 2), 1, |i| cells.push(i));
        assert_eq!(cells, [0, 1, 2, 2, 6, 10]);
        cells.clear();
        // Width 2 covers offsets 0..=1; at the last column the brush is clipped. A
        // one-cell corridor is stamped once by the x run and once by the y run.
        p.for_each_corridor_cell((3, 0), (3, 0), 2, |i| cells.push(i));
        assert_eq!(cells, [3, 7, 3, 7]);
        let v = Volume::new(2, 2, 2);
        cells.clear();
        v.for_each_corridor_cell((0, 0, 0), (1, 1, 1), 1, |i| cells.push(i));
        assert_eq!(cells, [0, 1, 1, 3, 3, 7]);
        assert_eq!(Volume::distance((0, 0, 0), (1, 1, 1)), 3);
    }
}
