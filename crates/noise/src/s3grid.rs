//! The corners of 3D simplex noise from per-cell gradient tables, for grid fills (the AVX2
//! path). The lanes of one vector are neighbouring samples of a row, so they nearly always
//! lie in one or two lattice cells (those of the first and the last lane): each cell's eight
//! corner gradients are computed once, kept in a small cache keyed by the cell's base hash,
//! and laid out by the lanes' corner-order code, so a lane finds its corners' gradients with
//! one in-register permute per component instead of a hash, a square and four 16-entry
//! lookups per corner. A vector whose lanes span more cells takes [`kernels::s3_corners`].
//!
//! The values are those of [`kernels::s3_corners`]: both go through [`kernels::s3_sum`] (the
//! same floating-point operations in the same order), with the same offset addends and the
//! same gradients — the entries of [`S3_G`] at the same corner hashes (`H = hb + offset`,
//! wrapping). The tables hold the signed 32-entry values, like the levels without
//! [`SPLIT_LUT32`](crate::simd::Simd::SPLIT_LUT32); the split form differs from them only
//! in the sign of an exact zero, which the final `+ 0` of [`kernels::s3_sum`] erases.

use crate::kernels::{self, S3_G, S3_G1, S3_G1M, S3_G2, S3_G2M, S3Cell};
use crate::simd::CellLanes;

/// What a lane's corner-order code `q` selects (see [`order_code`]): the offset addends of
/// corners 1 and 2 (`[corner − 1][axis][q]`) and the lattice corner each of them is
/// (`[corner − 1][q]`, bit 0 = +x, bit 1 = +y, bit 2 = +z).
struct Order {
    off: [[[f32; 8]; 3]; 2],
    corner: [[usize; 8]; 2],
}

/// [`Order`] for every code, from the same mask logic as [`kernels::s3_corners`] (so codes
/// no ordering produces are covered too).
static ORDER: Order = order();

const fn pick(m: bool, a: f32, b: f32) -> f32 {
    if m { a } else { b }
}

const fn order() -> Order {
    let mut o = Order {
        off: [[[0.0; 8]; 3]; 2],
        corner: [[0; 8]; 2],
    };
    let mut q = 0;
    while q < 8 {
        // `q` is minus the code `xy + 2·yz + 4·xz` of the three comparisons, modulo 8.
        let c = (8 - q) & 7;
        let (xy, yz, xz) = (c & 1 != 0, c & 2 != 0, c & 4 != 0);
        let i1 = xy && xz;
        let j1 = yz && !xy;
        let i2 = xy || xz;
        let j2 = !xy || yz; // `!(xy && !yz)`
        let k2 = !(xz && yz);
        o.off[0][0][q] = pick(i1, S3_G1M, S3_G1);
        o.off[0][1][q] = pick(j1, S3_G1M, S3_G1);
        o.off[0][2][q] = pick(i1 || j1, S3_G1, S3_G1M);
        o.off[1][0][q] = pick(i2, S3_G2M, S3_G2);
        o.off[1][1][q] = pick(j2, S3_G2M, S3_G2);
        o.off[1][2][q] = pick(k2, S3_G2M, S3_G2);
        o.corner[0][q] = if i1 {
            1
        } else if j1 {
            2
        } else {
            4
        };
        o.corner[1][q] = if i2 { if j2 { 3 } else { 5 } } else { 6 };
        q += 1;
    }
    o
}

/// A lane's corner-order code: minus `xy + 2·yz + 4·xz` (each comparison −1 where it holds),
/// of which [`CellLanes::perm8`] uses the low three bits. Four integer adds.
#[inline(always)]
fn order_code<S: CellLanes>(xy: S::M, yz: S::M, xz: S::M) -> S::I {
    let q = S::mask_i(xz);
    let q = q + q + S::mask_i(yz);
    q + q + S::mask_i(xy)
}

/// One cell's gradients, arranged for the lanes: corners 1 and 2 by order code
/// (`[corner − 1][axis][q]`), corner 0, and corner 3 with its row-3 term.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Cell {
    c12: [[[f32; 8]; 3]; 2],
    c0: [f32; 3],
    c3: [f32; 4],
    /// The base hash the slot holds, or [`NONE`].
    key: i64,
}

/// The key of an empty slot: no `i32` hash.
const NONE: i64 = i64::MIN;

const EMPTY: Cell = Cell {
    c12: [[[0.0; 8]; 3]; 2],
    c0: [0.0; 3],
    c3: [0.0; 4],
    key: NONE,
};

/// Slots of the direct-mapped cache (16 KiB): a 128-sample row of the benchmark grid touches
/// about seven cells and the next row mostly the same ones; with fewer slots, two cells of
/// one row share a slot often enough for refills to cost a tenth of the time.
const SLOTS: usize = 64;

/// The cache of cell tables for one seed, keyed by the cell's base hash `hb` (the gradients
/// depend on nothing else). One per thread, kept between fills ([`Cells::with`]): a parallel
/// fill runs a few rows per task, and a fresh cache would refill every cell of every task.
pub(crate) struct Cells {
    seed: i32,
    keys: [i32; 4],
    slots: [Cell; SLOTS],
}

thread_local! {
    static CELLS: core::cell::Cell<Option<Box<Cells>>> = const { core::cell::Cell::new(None) };
}

impl Cells {
    /// This thread's cache, emptied if it was for another seed: taken out for the call (a
    /// nested call gets a fresh one) and put back after it.
    #[inline(always)]
    pub(crate) fn with<R>(seed: i32, f: impl FnOnce(&mut Cells) -> R) -> R {
        let mut cells = match CELLS.take() {
            Some(c) if c.seed == seed => c,
            Some(mut c) => {
                c.seed = seed;
                c.keys = kernels::s3_keys(seed);
                for s in &mut c.slots {
                    s.key = NONE;
                }
                c
            }
            None => Box::new(Cells {
                seed,
                keys: kernels::s3_keys(seed),
                slots: [EMPTY; SLOTS],
            }),
        };
        let r = f(&mut cells);
        CELLS.set(Some(cells));
        r
    }

    #[inline(always)]
    fn slot(&mut self, hb: i32) -> usize {
        let s = ((hb as u32).wrapping_mul(0x9e37_79b1) >> 26) as usize;
        let c = &self.slots[s];
        if c.key != i64::from(hb) {
            self.fill(s, hb);
        }
        s
    }

    /// Computes slot `s` for base hash `hb`: corner `o`'s hash is `hb` plus the keys of the
    /// axes it steps along, as in [`kernels::s3_corners`].
    #[cold]
    #[inline(never)]
    fn fill(&mut self, s: usize, hb: i32) {
        let [pa, pb, pc, _] = self.keys;
        let mut g = [[0.0f32; 8]; 4];
        for o in 0..8 {
            let mut h = hb;
            if o & 1 != 0 {
                h = h.wrapping_add(pa);
            }
            if o & 2 != 0 {
                h = h.wrapping_add(pb);
            }
            if o & 4 != 0 {
                h = h.wrapping_add(pc);
            }
            let e = (h.wrapping_mul(h) as u32 >> 27) as usize;
            for (a, row) in g.iter_mut().enumerate() {
                row[o] = S3_G[a][e];
            }
        }
        let c = &mut self.slots[s];
        for (rows, corner) in c.c12.iter_mut().zip(&ORDER.corner) {
            for (row, ga) in rows.iter_mut().zip(&g) {
                for (v, &o) in row.iter_mut().zip(corner) {
                    *v = ga[o];
                }
            }
        }
        c.c0 = [g[0][0], g[1][0], g[2][0]];
        c.c3 = [g[0][7], g[1][7], g[2][7], g[3][7]];
        c.key = i64::from(hb);
    }
}

/// [`kernels::s3_corners`] of `c` (same bits), with the gradients from the cell tables of
/// its first and last lane where every lane is in one of those two cells.
#[inline(always)]
pub(crate) fn corners<S: CellLanes>(cells: &mut Cells, seed: i32, c: &S3Cell<S>) -> S::F {
    let (ha, hz) = S::ends(c.hb);
    // All lanes in one cell (most vectors): one table, no per-lane choice between two.
    if ha == hz {
        let sa = cells.slot(ha);
        if !S::all(S::ieq(c.hb, S::i(ha))) {
            return kernels::s3_corners::<S>(seed, c);
        }
        let t = &cells.slots[sa];
        let (q, off) = order_of::<S>(c);
        // One table: the lane mask is unused (any mask will do).
        let all = S::ieq(q, q);
        return sum::<S, false>(c, off, [t, t], all, q);
    }
    let (sa, sz) = (cells.slot(ha), cells.slot(hz));
    let mb = S::ieq(c.hb, S::i(hz));
    let inside = S::all(S::mor(S::ieq(c.hb, S::i(ha)), mb));
    let (ta, tb) = (&cells.slots[sa], &cells.slots[sz]);
    // Two cells in one slot: the second fill replaced the first.
    if !inside || ta.key != i64::from(ha) {
        return kernels::s3_corners::<S>(seed, c);
    }
    let (q, off) = order_of::<S>(c);
    sum::<S, true>(c, off, [ta, tb], mb, q)
}

/// The lanes' corner-order code and the offset addends of corners 1 and 2 it selects.
#[inline(always)]
fn order_of<S: CellLanes>(c: &S3Cell<S>) -> (S::I, [[S::F; 3]; 2]) {
    let [x0, y0, z0] = c.d;
    let q = order_code::<S>(S::le(y0, x0), S::le(z0, y0), S::le(z0, x0));
    let o = &ORDER.off;
    let off = [
        [
            S::perm8(&o[0][0], q),
            S::perm8(&o[0][1], q),
            S::perm8(&o[0][2], q),
        ],
        [
            S::perm8(&o[1][0], q),
            S::perm8(&o[1][1], q),
            S::perm8(&o[1][2], q),
        ],
    ];
    (q, off)
}

/// [`kernels::s3_sum`] with the gradients of cell `t[1]` where `mb` is set and of `t[0]`
/// elsewhere, or of `t[0]` only unless `TWO`.
#[inline(always)]
fn sum<S: CellLanes, const TWO: bool>(
    c: &S3Cell<S>,
    off: [[S::F; 3]; 2],
    t: [&Cell; 2],
    mb: S::M,
    q: S::I,
) -> S::F {
    kernels::s3_sum::<S>(
        c.t,
        c.d,
        off,
        #[inline(always)]
        |n, [x, y, z]| {
            let d = (grad::<S, TWO>(t, mb, q, n, 0) * x + grad::<S, TWO>(t, mb, q, n, 1) * y)
                + grad::<S, TWO>(t, mb, q, n, 2) * z;
            if n == 3 {
                d + grad::<S, TWO>(t, mb, q, n, 3)
            } else {
                d
            }
        },
    )
}

/// Component `a` of corner `n`'s gradient per lane (component 3 is corner 3's row-3 term):
/// see [`sum`].
#[inline(always)]
fn grad<S: CellLanes, const TWO: bool>(
    t: [&Cell; 2],
    mb: S::M,
    q: S::I,
    n: usize,
    a: usize,
) -> S::F {
    if TWO {
        S::sel(mb, grad1::<S>(t[1], q, n, a), grad1::<S>(t[0], q, n, a))
    } else {
        grad1::<S>(t[0], q, n, a)
    }
}

#[inline(always)]
fn grad1<S: CellLanes>(c: &Cell, q: S::I, n: usize, a: usize) -> S::F {
    match n {
        0 => S::f(c.c0[a]),
        3 => S::f(c.c3[a]),
        _ => S::perm8(&c.c12[n - 1][a], q),
    }
}
