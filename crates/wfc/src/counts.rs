//! AC-4 support counters stored as `u8` when every count fits (fewer than 256 patterns), else
//! `u16`: half the memory traffic for the common case.

/// A support counter.
pub(crate) trait Count: Copy {
    /// The counter holding `v` (callers guarantee it fits).
    fn from_usize(v: usize) -> Self;
    /// Decrements; returns whether the count reached zero.
    fn dec(&mut self) -> bool;
    /// Increments.
    fn inc(&mut self);
}

impl Count for u8 {
    #[inline]
    fn from_usize(v: usize) -> Self {
        v as u8
    }
    #[inline]
    fn dec(&mut self) -> bool {
        *self -= 1;
        *self == 0
    }
    #[inline]
    fn inc(&mut self) {
        *self += 1;
    }
}

impl Count for u16 {
    #[inline]
    fn from_usize(v: usize) -> Self {
        v as u16
    }
    #[inline]
    fn dec(&mut self) -> bool {
        *self -= 1;
        *self == 0
    }
    #[inline]
    fn inc(&mut self) {
        *self += 1;
    }
}

/// Counters of every (cell, direction, pattern), `[cell][direction][pattern]`.
#[derive(Clone, Debug)]
pub(crate) enum Counts {
    /// Every count is below 256.
    Narrow(Vec<u8>),
    /// Counts up to 65535.
    Wide(Vec<u16>),
}

impl Default for Counts {
    fn default() -> Self {
        Counts::Narrow(Vec::new())
    }
}

impl Counts {
    /// `len` counters wide enough for values up to `max`, initialised from `init` repeated.
    pub(crate) fn new(len: usize, max: usize) -> Self {
        if max < 256 {
            Counts::Narrow(vec![0; len])
        } else {
            Counts::Wide(vec![0; len])
        }
    }

    /// Fills every block of `init.len()` counters with `init`.
    pub(crate) fn fill_from(&mut self, init: &[u16]) {
        // One block, then doubling copies of what is already filled: a few large copies
        // instead of one small copy per cell (Chess has 8-byte blocks).
        fn fill<C: Count>(v: &mut [C], init: &[u16]) {
            let n = init.len().min(v.len());
            for (dst, &c) in v[..n].iter_mut().zip(init) {
                *dst = C::from_usize(c as usize);
            }
            let mut filled = n;
            while filled < v.len() {
                let len = filled.min(v.len() - filled);
                v.copy_within(..len, filled);
                filled += len;
            }
        }
        match self {
            Counts::Narrow(v) => fill(v, init),
            Counts::Wide(v) => fill(v, init),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_from_repeats_the_block() {
        for block in [1usize, 2, 3, 8, 12, 190] {
            let init: Vec<u16> = (0..block as u16).map(|k| k * 7 % 251).collect();
            for cells in [1usize, 2, 5, 17, 64] {
                let mut c = Counts::new(cells * block, 250);
                c.fill_from(&init);
                let Counts::Narrow(v) = c else {
                    panic!("narrow counts expected")
                };
                for (k, &x) in v.iter().enumerate() {
                    assert_eq!(
                        x as u16,
                        init[k % block],
                        "block {block} cells {cells} at {k}"
                    );
                }
            }
        }
    }
}
