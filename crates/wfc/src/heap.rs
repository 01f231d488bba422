//! An indexed binary min-heap of cells keyed by entropy: one entry per undecided cell, keys
//! updated in place (no stale entries), ties broken by the lower cell index.

const ABSENT: u32 = u32::MAX;

/// Min-heap over cell indices with per-cell keys.
#[derive(Clone, Debug, Default)]
pub(crate) struct CellHeap {
    keys: Vec<f64>,
    heap: Vec<u32>,
    pos: Vec<u32>,
}

impl CellHeap {
    /// An empty heap for `cells` cells.
    pub(crate) fn new(cells: usize) -> Self {
        CellHeap {
            keys: vec![0.0; cells],
            heap: Vec::with_capacity(cells),
            pos: vec![ABSENT; cells],
        }
    }

    /// Empties the heap.
    pub(crate) fn clear(&mut self) {
        for &c in &self.heap {
            self.pos[c as usize] = ABSENT;
        }
        self.heap.clear();
    }

    #[inline]
    fn less(&self, a: u32, b: u32) -> bool {
        let (ka, kb) = (self.keys[a as usize], self.keys[b as usize]);
        ka < kb || (ka == kb && a < b)
    }

    /// Adds `cell` with `key`, or moves it to its new key.
    pub(crate) fn set(&mut self, cell: usize, key: f64) {
        let p = self.pos[cell];
        if p == ABSENT {
            self.keys[cell] = key;
            self.heap.push(cell as u32);
            let at = self.heap.len() - 1;
            self.pos[cell] = at as u32;
            self.sift_up(at);
        } else {
            let old = self.keys[cell];
            self.keys[cell] = key;
            if key < old {
                self.sift_up(p as usize);
            } else {
                self.sift_down(p as usize);
            }
        }
    }

    /// Removes `cell` if present.
    pub(crate) fn remove(&mut self, cell: usize) {
        let p = self.pos[cell];
        if p == ABSENT {
            return;
        }
        let p = p as usize;
        let last = self.heap.pop().unwrap_or(cell as u32);
        self.pos[cell] = ABSENT;
        if p < self.heap.len() {
            self.heap[p] = last;
            self.pos[last as usize] = p as u32;
            self.sift_up(p);
            let q = self.pos[last as usize] as usize;
            self.sift_down(q);
        }
    }

    /// Whether `cell` is in the heap.
    #[inline]
    pub(crate) fn contains(&self, cell: usize) -> bool {
        self.pos[cell] != ABSENT
    }

    /// The cell with the lowest key and its key.
    #[inline]
    pub(crate) fn peek(&self) -> Option<(usize, f64)> {
        let c = *self.heap.first()? as usize;
        Some((c, self.keys[c]))
    }

    /// Removes and returns the cell with the lowest key.
    pub(crate) fn pop(&mut self) -> Option<usize> {
        let top = *self.heap.first()? as usize;
        self.remove(top);
        Some(top)
    }

    fn sift_up(&mut self, mut at: usize) {
        let c = self.heap[at];
        while at > 0 {
            let parent = (at - 1) / 2;
            let pc = self.heap[parent];
            if !self.less(c, pc) {
                break;
            }
            self.heap[at] = pc;
            self.pos[pc as usize] = at as u32;
            at = parent;
        }
        self.heap[at] = c;
        self.pos[c as usize] = at as u32;
    }

    fn sift_down(&mut self, mut at: usize) {
        let len = self.heap.len();
        let c = self.heap[at];
        loop {
            let l = 2 * at + 1;
            if l >= len {
                break;
            }
            let r = l + 1;
            let mut m = l;
            if r < len && self.less(self.heap[r], self.heap[l]) {
                m = r;
            }
            if !self.less(self.heap[m], c) {
                break;
            }
            let mc = self.heap[m];
            self.heap[at] = mc;
            self.pos[mc as usize] = at as u32;
            at = m;
        }
        self.heap[at] = c;
        self.pos[c as usize] = at as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_key_then_index_order() {
        let mut h = CellHeap::new(6);
        for (c, k) in [(0, 3.0), (1, 1.0), (2, 2.0), (3, 1.0), (4, 5.0), (5, 0.5)] {
            h.set(c, k);
        }
        h.set(4, 0.1);
        h.set(5, 9.0);
        h.remove(2);
        let order: Vec<usize> = std::iter::from_fn(|| h.pop()).collect();
        assert_eq!(order, vec![4, 1, 3, 0, 5]);
    }
}
