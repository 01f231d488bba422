//! The global allocator of procmodel's binaries and benchmarks: mimalloc, plus exact size
//! classes for the one allocation that dominates every scene.
//!
//! Every instance in an `rbx_dom_weak` DOM owns a property map, a hashbrown table of
//! `(Ustr, Variant)` entries (80 bytes, 16-aligned). A Part with the five to seven
//! properties a generator sets has 8 buckets: a 664-byte allocation, which mimalloc serves
//! from its 768-byte bin, so 13% of all DOM memory would be padding (9.6 MB for 100,000
//! Parts). 16 buckets (8–14 properties) is 1,312 bytes, served from the 1,536-byte bin.
//! This allocator serves requests in exactly those gaps — sizes above mimalloc's bin below
//! and up to the table size, alignment at most 16 — from pools of slots of that size, and
//! everything else from mimalloc.
//!
//! Pools take 64 KiB chunks from mimalloc and never return them: a freed slot goes on its
//! pool's free list for the next table of that size. Each pool is behind a mutex (an
//! uncontended lock is a few nanoseconds, against the cost of filling the table).
//!
//! This crate owns allocation only; it must never allocate through the global allocator
//! itself (it is the global allocator) or call into any other procmodel crate.

use std::alloc::{GlobalAlloc, Layout};
use std::ptr;
use std::sync::Mutex;

use mimalloc::MiMalloc;

/// The size classes: requests of `low + 1 ..= slot` bytes (alignment ≤ 16) get a `slot`-byte
/// slot. `low` is the mimalloc bin below, so a request outside every class is one mimalloc
/// serves with no more padding than its bins give.
const CLASSES: [(usize, usize); 2] = [(640, 672), (1280, 1312)];

/// Bytes taken from mimalloc at a time for one pool.
const CHUNK: usize = 64 * 1024;

/// Slots are 16-aligned: every slot size is a multiple of 16 and chunks are 16-aligned.
const ALIGN: usize = 16;

/// Which class serves `layout`, if any.
#[inline]
fn class(layout: Layout) -> Option<usize> {
    if layout.align() > ALIGN {
        return None;
    }
    let size = layout.size();
    CLASSES
        .iter()
        .position(|&(low, slot)| size > low && size <= slot)
}

struct Pool {
    /// Freed slots, each holding the address of the next in its first word.
    free: *mut u8,
    /// The unused rest of the newest chunk.
    bump: *mut u8,
    end: *mut u8,
    in_use: usize,
    chunks: usize,
}

// SAFETY: the pointers are to memory the pool owns (chunks it took from mimalloc and never
// gives back); all access goes through the pool's mutex.
unsafe impl Send for Pool {}

impl Pool {
    const fn new() -> Pool {
        Pool {
            free: ptr::null_mut(),
            bump: ptr::null_mut(),
            end: ptr::null_mut(),
            in_use: 0,
            chunks: 0,
        }
    }

    fn take(&mut self, slot: usize) -> *mut u8 {
        if !self.free.is_null() {
            let p = self.free;
            // SAFETY: `p` is a freed slot of this pool (at least `slot` ≥ 8 bytes, 16-aligned);
            // `give` wrote the next free slot's address into its first word.
            self.free = unsafe { p.cast::<*mut u8>().read() };
            self.in_use += 1;
            return p;
        }
        if (self.end as usize) - (self.bump as usize) < slot {
            // SAFETY: a plain allocation from mimalloc with a valid size and alignment.
            let chunk = unsafe { libmimalloc_sys::mi_malloc_aligned(CHUNK, ALIGN) }.cast::<u8>();
            if chunk.is_null() {
                return ptr::null_mut();
            }
            self.bump = chunk;
            // SAFETY: one past the end of the chunk just allocated.
            self.end = unsafe { chunk.add(CHUNK) };
            self.chunks += 1;
        }
        let p = self.bump;
        // SAFETY: at least `slot` bytes remain before `end` (checked or just made so).
        self.bump = unsafe { p.add(slot) };
        self.in_use += 1;
        p
    }

    /// # Safety
    /// `p` came from `take` on this pool and is not used after this call.
    unsafe fn give(&mut self, p: *mut u8) {
        // SAFETY: the slot is ours again and 16-aligned with room for a pointer.
        unsafe { p.cast::<*mut u8>().write(self.free) };
        self.free = p;
        self.in_use -= 1;
    }
}

static POOLS: [Mutex<Pool>; CLASSES.len()] = [const { Mutex::new(Pool::new()) }; CLASSES.len()];

fn pool(c: usize) -> std::sync::MutexGuard<'static, Pool> {
    // Nothing panics while holding a pool's lock, but a poisoned lock's data is intact anyway.
    POOLS[c].lock().unwrap_or_else(|e| e.into_inner())
}

/// The global allocator (`#[global_allocator] static A: procmodel_alloc::Allocator =
/// procmodel_alloc::Allocator;`).
pub struct Allocator;

// SAFETY: every block is either a pool slot of at least the requested size, 16-aligned (and
// only requests with alignment ≤ 16 go to the pools), or mimalloc's; `class` of the layout a
// block is freed or reallocated with is the class it was allocated in, because the caller
// passes the same layout (GlobalAlloc's contract) and same-class reallocations keep the slot.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match class(layout) {
            Some(c) => pool(c).take(CLASSES[c].1),
            // SAFETY: forwarded with the caller's guarantees.
            None => unsafe { MiMalloc.alloc(layout) },
        }
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        match class(layout) {
            // SAFETY: a block of this class came from this pool (see the impl's SAFETY).
            Some(c) => unsafe { pool(c).give(p) },
            // SAFETY: forwarded with the caller's guarantees.
            None => unsafe { MiMalloc.dealloc(p, layout) },
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match class(layout) {
            Some(c) => {
                let p = pool(c).take(CLASSES[c].1);
                if !p.is_null() {
                    // SAFETY: the slot holds at least `layout.size()` bytes.
                    unsafe { ptr::write_bytes(p, 0, layout.size()) };
                }
                p
            }
            // SAFETY: forwarded with the caller's guarantees.
            None => unsafe { MiMalloc.alloc_zeroed(layout) },
        }
    }

    #[inline]
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size`, rounded to the alignment, does not overflow.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        let (from, to) = (class(layout), class(new));
        if from.is_none() && to.is_none() {
            // SAFETY: forwarded with the caller's guarantees.
            return unsafe { MiMalloc.realloc(p, layout, new_size) };
        }
        if from == to {
            // One slot size holds every size of its class.
            return p;
        }
        // SAFETY: `new` is a valid non-zero layout (the caller's guarantees).
        let q = unsafe { self.alloc(new) };
        if !q.is_null() {
            // SAFETY: both blocks hold at least the smaller size and are distinct.
            unsafe {
                ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
                self.dealloc(p, layout);
            }
        }
        q
    }
}

/// mimalloc's `mi_option_purge_delay`: its place in the v3 option enum (`mimalloc.h`), which
/// libmimalloc-sys does not name. Re-check it on a libmimalloc-sys bump; the
/// `purge_delay_option` test fails if it points at another option.
pub const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Sets mimalloc's options for a run that builds one large scene once (`generate`, `run`);
/// call it in `main` before any other thread starts. Memory freed in large blocks goes back
/// to the OS at once (`purge_delay` 0 instead of mimalloc v3's 1,000 ms, longer than most
/// runs): a generation frees large blocks while it is still building (the DOM's instance
/// table each time it doubles, the VM's heap), and returning them at once keeps them out of
/// the process's peak — 4 MB of 119 MB on the 100,000-part run, for no measurable time.
/// Not for workloads that free and reuse large buffers in a loop (a tiled world bake: every
/// purged page faults back in, 12× the page faults and +35% wall time). `MIMALLOC_PURGE_DELAY`
/// in the environment still wins.
pub fn configure() {
    // SAFETY: a plain call into mimalloc; its option setters are not thread safe, and the
    // caller makes this call before any other thread exists.
    unsafe { libmimalloc_sys::mi_option_set_default(MI_OPTION_PURGE_DELAY, 0) }
}

/// Hands the allocator's free memory back to the OS now (e.g. the VM's, before a large
/// save), so what follows does not add to the peak. Pool slots stay pooled.
pub fn release_free_memory() {
    // SAFETY: a plain call into mimalloc; safe at any time from any thread.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

/// Per size class: (largest request size it serves, slots in use, chunks taken).
pub fn pool_stats() -> Vec<(usize, usize, usize)> {
    (0..CLASSES.len())
        .map(|c| {
            let p = pool(c);
            (CLASSES[c].1, p.in_use, p.chunks)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_cover_exactly_the_gaps_above_mimallocs_bins() {
        let l = |s, a| Layout::from_size_align(s, a).unwrap();
        assert_eq!(class(l(640, 16)), None);
        assert_eq!(class(l(641, 8)), Some(0));
        assert_eq!(class(l(664, 16)), Some(0));
        assert_eq!(class(l(672, 16)), Some(0));
        assert_eq!(class(l(673, 16)), None);
        assert_eq!(
            class(l(664, 32)),
            None,
            "over-aligned requests go to mimalloc"
        );
        assert_eq!(class(l(1312, 16)), Some(1));
        assert_eq!(class(l(1313, 16)), None);
        for &(_, slot) in &CLASSES {
            assert_eq!(slot % ALIGN, 0);
        }
    }
}
