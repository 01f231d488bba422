//! Compiled adjacency rules: pattern weights and, per direction, the sorted list of patterns
//! allowed next to each pattern (the "propagator"), plus grid shapes and directions.

use crate::error::WfcError;

pub use crate::direction::Direction;

/// The size of an output grid and whether it wraps around (toroidal) on every axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridShape {
    /// Cells along `x`.
    pub width: usize,
    /// Cells along `y`.
    pub height: usize,
    /// Cells along `z` (1 for 2D grids).
    pub depth: usize,
    /// Whether opposite borders are neighbours.
    pub periodic: bool,
}

impl GridShape {
    /// A 2D grid.
    pub fn new_2d(width: usize, height: usize, periodic: bool) -> Self {
        GridShape {
            width,
            height,
            depth: 1,
            periodic,
        }
    }

    /// A 3D grid.
    pub fn new_3d(width: usize, height: usize, depth: usize, periodic: bool) -> Self {
        GridShape {
            width,
            height,
            depth,
            periodic,
        }
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.width * self.height * self.depth
    }

    /// Whether the grid has no cell.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The flat index of `(x, y, z)`: `x + width * (y + height * z)`.
    #[inline]
    pub fn index(&self, x: usize, y: usize, z: usize) -> usize {
        x + self.width * (y + self.height * z)
    }

    /// The coordinates `[x, y, z]` of a flat index.
    #[inline]
    pub fn coords(&self, index: usize) -> [usize; 3] {
        let x = index % self.width;
        let yz = index / self.width;
        [x, yz % self.height, yz / self.height]
    }

    /// The neighbour of a cell in a direction, wrapping when periodic.
    pub fn neighbour(&self, index: usize, dir: Direction) -> Option<usize> {
        let [x, y, z] = self.coords(index);
        self.neighbour_at(x, y, z, dir)
    }

    /// Every cell's neighbours in the first `dirs` directions, `dirs` per cell (`u32::MAX`
    /// where there is none): [`GridShape::neighbour`] for the whole grid at once.
    pub(crate) fn neighbour_table(&self, dirs: usize) -> Vec<u32> {
        let (w, h, depth) = (self.width, self.height, self.depth);
        let plane = w * h;
        let wrap = self.periodic;
        let pick = |inside: bool, near: usize, far: usize| -> u32 {
            if inside {
                near as u32
            } else if wrap {
                far as u32
            } else {
                u32::MAX
            }
        };
        // Element stores into a pre-sized table (a per-cell slice copy of `dirs` values was a
        // libc memcpy call per cell).
        let mut out = vec![u32::MAX; self.len() * dirs];
        let mut slots = out.chunks_exact_mut(dirs);
        for z in 0..depth {
            for y in 0..h {
                for x in 0..w {
                    let i = x + w * (y + h * z);
                    let all = [
                        pick(x > 0, i.wrapping_sub(1), i + w - 1),
                        pick(x + 1 < w, i + 1, (i + 1).wrapping_sub(w)),
                        pick(y > 0, i.wrapping_sub(w), i + plane - w),
                        pick(y + 1 < h, i + w, (i + w).wrapping_sub(plane)),
                        pick(z > 0, i.wrapping_sub(plane), i + plane * (depth - 1)),
                        pick(
                            z + 1 < depth,
                            i + plane,
                            (i + plane).wrapping_sub(plane * depth),
                        ),
                    ];
                    if let Some(slot) = slots.next() {
                        for (s, v) in slot.iter_mut().zip(all) {
                            *s = v;
                        }
                    }
                }
            }
        }
        out
    }

    /// The neighbour of `(x, y, z)` in a direction, wrapping when periodic.
    pub fn neighbour_at(&self, x: usize, y: usize, z: usize, dir: Direction) -> Option<usize> {
        let (dx, dy, dz) = dir.offset();
        let step = |v: usize, d: isize, n: usize| -> Option<usize> {
            let w = v as isize + d;
            if w >= 0 && (w as usize) < n {
                Some(w as usize)
            } else if self.periodic {
                Some(w.rem_euclid(n as isize) as usize)
            } else {
                None
            }
        };
        Some(self.index(
            step(x, dx, self.width)?,
            step(y, dy, self.height)?,
            step(z, dz, self.depth)?,
        ))
    }
}

/// Compiled rules shared by every run: `T` patterns (or oriented tiles) with weights and, for
/// each direction `d` and pattern `t`, the sorted patterns that may sit at the neighbour in
/// direction `d` of a cell holding `t`.
#[derive(Clone, Debug)]
pub struct Rules {
    weights: Vec<f64>,
    directions: usize,
    /// CSR offsets into `data`, indexed by `d * T + t` (length `D * T + 1`).
    offsets: Vec<u32>,
    data: Vec<u32>,
}

impl Rules {
    /// Builds rules from weights and a dense compatibility predicate
    /// `allowed(d, t, t2)`: may `t2` sit in direction `d` of `t`?
    ///
    /// `directions` is 4 (2D) or 6 (3D). The predicate must be symmetric
    /// (`allowed(d, a, b) == allowed(d.opposite(), b, a)`); asymmetric pairs are an error.
    pub fn from_fn(
        weights: Vec<f64>,
        directions: usize,
        mut allowed: impl FnMut(Direction, usize, usize) -> bool,
    ) -> Result<Rules, WfcError> {
        let t_count = weights.len();
        Self::check_header(&weights, directions)?;
        let mut offsets = Vec::with_capacity(directions * t_count + 1);
        let mut data = Vec::new();
        offsets.push(0u32);
        for d in Direction::ALL.iter().take(directions) {
            for t in 0..t_count {
                for t2 in 0..t_count {
                    if allowed(*d, t, t2) {
                        data.push(t2 as u32);
                    }
                }
                offsets.push(u32::try_from(data.len()).map_err(|_| WfcError::TooManyRules)?);
            }
        }
        let rules = Rules {
            weights,
            directions,
            offsets,
            data,
        };
        rules.check_symmetric()?;
        Ok(rules)
    }

    /// Builds rules from explicit adjacency triples `(a, d, b)`: `b` may sit in direction `d`
    /// of `a`. Each triple also allows `a` in the opposite direction of `b`. This is the 3D
    /// (and general) entry point for the tiled model.
    pub fn from_adjacency(
        weights: Vec<f64>,
        directions: usize,
        pairs: &[(usize, Direction, usize)],
    ) -> Result<Rules, WfcError> {
        let t_count = weights.len();
        Self::check_header(&weights, directions)?;
        let mut dense = vec![false; directions * t_count * t_count];
        for &(a, d, b) in pairs {
            if a >= t_count || b >= t_count {
                return Err(WfcError::UnknownPattern {
                    index: a.max(b),
                    count: t_count,
                });
            }
            if d.index() >= directions {
                return Err(WfcError::BadDirection { direction: d });
            }
            dense[(d.index() * t_count + a) * t_count + b] = true;
            dense[(d.opposite().index() * t_count + b) * t_count + a] = true;
        }
        Self::from_fn(weights, directions, |d, a, b| {
            dense[(d.index() * t_count + a) * t_count + b]
        })
    }

    fn check_header(weights: &[f64], directions: usize) -> Result<(), WfcError> {
        if directions != 4 && directions != 6 {
            return Err(WfcError::BadDirectionCount { directions });
        }
        if weights.is_empty() || weights.len() > u16::MAX as usize {
            return Err(WfcError::PatternCount {
                count: weights.len(),
            });
        }
        if let Some((index, &w)) = weights
            .iter()
            .enumerate()
            .find(|(_, w)| !(w.is_finite() && **w > 0.0))
        {
            return Err(WfcError::BadWeight { index, weight: w });
        }
        Ok(())
    }

    fn check_symmetric(&self) -> Result<(), WfcError> {
        for d in Direction::ALL.iter().take(self.directions) {
            for t in 0..self.len() {
                for &t2 in self.allowed(*d, t) {
                    if self
                        .allowed(d.opposite(), t2 as usize)
                        .binary_search(&(t as u32))
                        .is_err()
                    {
                        return Err(WfcError::AsymmetricRule {
                            from: t,
                            direction: *d,
                            to: t2 as usize,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Number of patterns `T`.
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    /// Whether there is no pattern (never true for built rules).
    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// Number of directions: 4 (2D) or 6 (3D).
    pub fn directions(&self) -> usize {
        self.directions
    }

    /// Pattern weights.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// Sorted patterns allowed in direction `d` of pattern `t`.
    #[inline]
    pub fn allowed(&self, d: Direction, t: usize) -> &[u32] {
        self.allowed_raw(d.index(), t)
    }

    #[inline]
    pub(crate) fn allowed_raw(&self, d: usize, t: usize) -> &[u32] {
        let k = d * self.weights.len() + t;
        &self.data[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }

    /// Whether `t2` may sit in direction `d` of `t`.
    pub fn is_allowed(&self, t: usize, d: Direction, t2: usize) -> bool {
        self.allowed(d, t).binary_search(&(t2 as u32)).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbour_table_matches_neighbour() {
        for periodic in [false, true] {
            for (w, h, d) in [
                (1, 1, 1),
                (1, 5, 1),
                (4, 1, 1),
                (5, 3, 1),
                (3, 4, 2),
                (1, 2, 3),
            ] {
                let shape = GridShape::new_3d(w, h, d, periodic);
                for dirs in [4, 6] {
                    let table = shape.neighbour_table(dirs);
                    for i in 0..shape.len() {
                        for (k, dir) in Direction::ALL.iter().take(dirs).enumerate() {
                            let want = shape.neighbour(i, *dir).map_or(u32::MAX, |j| j as u32);
                            assert_eq!(table[i * dirs + k], want, "{shape:?} cell {i} {dir:?}");
                        }
                    }
                }
            }
        }
    }
}
