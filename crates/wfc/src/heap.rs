//! An indexed binary min-heap of cells keyed by entropy: one entry per undecided cell, keys
//! updated in place (no stale entries), ties broken by the lower cell index.

const ABSENT: u32 = u32::MAX;

/// A heap slot: the key is stored with the cell so that sifting compares neighbouring slots
/// instead of looking keys up by cell (one random access less per comparison).
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: f64,
    cell: u32,
}

impl Entry {
    #[inline]
    fn less(self, other: Entry) -> bool {
        self.key < other.key || (self.key == other.key && self.cell < other.cell)
    }
}

/// Min-heap over cell indices with per-cell keys.
#[derive(Clone, Debug, Default)]
pub(crate) struct CellHeap {
    heap: Vec<Entry>,
    pos: Vec<u32>,
}

impl CellHeap {
    /// An empty heap for `cells` cells.
    pub(crate) fn new(cells: usize) -> Self {
        CellHeap {
            heap: Vec::new(),
            pos: vec![ABSENT; cells],
        }
    }

    /// Empties the heap.
    pub(crate) fn clear(&mut self) {
        for e in &self.heap {
            self.pos[e.cell as usize] = ABSENT;
        }
        self.heap.clear();
    }

    /// Adds `cell` with `key`, or moves it to its new key.
    pub(crate) fn set(&mut self, cell: usize, key: f64) {
        let p = self.pos[cell];
        let entry = Entry {
            key,
            cell: cell as u32,
        };
        if p == ABSENT {
            self.heap.push(entry);
            self.sift_up(self.heap.len() - 1, entry);
        } else {
            let p = p as usize;
            if key < self.heap[p].key {
                self.sift_up(p, entry);
            } else {
                self.sift_down(p, entry);
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
        self.pos[cell] = ABSENT;
        let Some(last) = self.heap.pop() else { return };
        if p < self.heap.len() {
            // Refill the hole with the last entry: up if it beats the hole's parent, else down.
            if p > 0 && last.less(self.heap[(p - 1) / 2]) {
                self.sift_up(p, last);
            } else {
                self.sift_down(p, last);
            }
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
        let e = self.heap.first()?;
        Some((e.cell as usize, e.key))
    }

    /// Removes and returns the cell with the lowest key.
    pub(crate) fn pop(&mut self) -> Option<usize> {
        let top = self.heap.first()?.cell as usize;
        self.remove(top);
        Some(top)
    }

    /// Places `entry` at or above slot `at` (moving larger parents down).
    fn sift_up(&mut self, mut at: usize, entry: Entry) {
        while at > 0 {
            let parent = (at - 1) / 2;
            let pe = self.heap[parent];
            if !entry.less(pe) {
                break;
            }
            self.heap[at] = pe;
            self.pos[pe.cell as usize] = at as u32;
            at = parent;
        }
        self.heap[at] = entry;
        self.pos[entry.cell as usize] = at as u32;
    }

    /// Places `entry` at or below slot `at` (moving smaller children up).
    fn sift_down(&mut self, mut at: usize, entry: Entry) {
        let len = self.heap.len();
        loop {
            let l = 2 * at + 1;
            if l >= len {
                break;
            }
            let r = l + 1;
            let mut m = l;
            if r < len && self.heap[r].less(self.heap[l]) {
                m = r;
            }
            let me = self.heap[m];
            if !me.less(entry) {
                break;
            }
            self.heap[at] = me;
            self.pos[me.cell as usize] = at as u32;
            at = m;
        }
        self.heap[at] = entry;
        self.pos[entry.cell as usize] = at as u32;
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

    /// Random sets, removals and pops against a sorted reference: the heap always yields the
    /// (key, cell) minimum.
    #[test]
    fn matches_a_sorted_reference() {
        let mut state = 0x853c_49e6_748f_ea9bu64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let cells = 40;
        let mut h = CellHeap::new(cells);
        let mut reference: Vec<Option<f64>> = vec![None; cells];
        for _ in 0..20_000 {
            let cell = next(cells as u64) as usize;
            match next(4) {
                0 | 1 => {
                    // Few distinct keys, so ties (broken by cell index) are common.
                    let key = next(8) as f64 * 0.5;
                    h.set(cell, key);
                    reference[cell] = Some(key);
                }
                2 => {
                    h.remove(cell);
                    reference[cell] = None;
                }
                _ => {
                    let want = reference
                        .iter()
                        .enumerate()
                        .filter_map(|(c, k)| k.map(|k| (k, c)))
                        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                    assert_eq!(h.peek().map(|(c, k)| (k, c)), want);
                    assert_eq!(h.pop(), want.map(|(_, c)| c));
                    if let Some((_, c)) = want {
                        reference[c] = None;
                    }
                }
            }
            for (c, k) in reference.iter().enumerate() {
                assert_eq!(h.contains(c), k.is_some());
            }
        }
    }
}
