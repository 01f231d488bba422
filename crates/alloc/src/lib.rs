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
//! uncontended lock is a few nanoseconds, against the cost of filling the table), and each
//! size class has one pool per shard: a thread always uses the shard it was given on its
//! first allocation (round robin), so the engine's thread and its worker VMs, which build
//! property maps at the same time, do not fight over one lock. A slot freed on another
//! thread than the one that took it joins the freeing thread's pool; a pool keeps at most
//! two batches of free slots and passes the rest, a batch at a time, to its class's shared
//! stack, where empty pools refill (all pools are global, so nothing is lost when a thread
//! ends).
//!
//! Prefaulting (Linux, after [`configure`]): each pool keeps its next chunk ready, and a
//! helper thread asks the kernel to map its pages (`MADV_POPULATE_WRITE`, which faults pages
//! in without touching their contents) while the current chunk fills. The property maps are
//! half of a large scene's memory, so half of its first-touch page faults move off the
//! thread building the scene, onto a core that is otherwise idle. While requests keep
//! coming the helper polls the queue (every 100 µs, for 10 ms after the last one) rather
//! than being woken for each: a wake-up is a system call on the requesting thread.
//!
//! [`arena`] is a deterministic arena for a Luau VM's heap; while one serves a thread
//! ([`arena::with_thread_arena`]) this allocator takes that thread's blocks from it, and it
//! gives any arena's blocks back to it wherever they are freed.
//!
//! This crate owns allocation only; it must never allocate through the global allocator
//! itself (it is the global allocator) or call into any other procmodel crate.

pub mod arena;

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
    /// Freed slots, each holding the address of the next in its first word (at most
    /// [`BATCH`]; `free_len` of them).
    free: *mut u8,
    free_len: usize,
    /// A second list of exactly [`BATCH`] freed slots, or null. Frees beyond two batches go
    /// to the class's shared stack, and an empty pool refills from it before it takes new
    /// memory, so slots freed by one thread serve another thread's allocations.
    full: *mut u8,
    /// The next chunk, taken ahead and being prefaulted (null when prefaulting is off).
    spare: *mut u8,
    /// The unused rest of the newest chunk.
    bump: *mut u8,
    end: *mut u8,
    /// Slots taken minus slots given back to this pool (slots move between shards, so one
    /// shard's count can go below zero; the sum over shards is the number in use).
    in_use: isize,
    chunks: usize,
}

// SAFETY: the pointers are to memory the pool owns (chunks it took from mimalloc and never
// gives back); all access goes through the pool's mutex.
unsafe impl Send for Pool {}

impl Pool {
    const fn new() -> Pool {
        Pool {
            free: ptr::null_mut(),
            free_len: 0,
            full: ptr::null_mut(),
            spare: ptr::null_mut(),
            bump: ptr::null_mut(),
            end: ptr::null_mut(),
            in_use: 0,
            chunks: 0,
        }
    }

    /// A slot of class `c` (null when out of memory).
    fn take(&mut self, c: usize) -> *mut u8 {
        let slot = CLASSES[c].1;
        if self.free.is_null() {
            // Refill: this pool's second batch, else one from the shared stack.
            if !self.full.is_null() {
                self.free = std::mem::replace(&mut self.full, ptr::null_mut());
                self.free_len = BATCH;
            } else if let Some(batch) = shared(c).pop() {
                self.free = batch;
                self.free_len = BATCH;
            }
        }
        if !self.free.is_null() {
            let p = self.free;
            // SAFETY: `p` is a freed slot of this class (at least `slot` ≥ 16 bytes,
            // 16-aligned); `give` wrote the next free slot's address into its first word.
            self.free = unsafe { p.cast::<*mut u8>().read() };
            self.free_len -= 1;
            self.in_use += 1;
            return p;
        }
        if (self.end as usize) - (self.bump as usize) < slot {
            let chunk = match std::mem::replace(&mut self.spare, ptr::null_mut()) {
                spare if !spare.is_null() => spare,
                _ => new_chunk(),
            };
            if chunk.is_null() {
                return ptr::null_mut();
            }
            if prefault::enabled() {
                // The next chunk's pages are mapped by the helper while this one fills.
                self.spare = new_chunk();
                if !self.spare.is_null() {
                    prefault::request(self.spare, CHUNK);
                }
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
    /// `p` came from `take` of class `c` (on any pool) and is not used after this call.
    unsafe fn give(&mut self, c: usize, p: *mut u8) {
        if self.free_len == BATCH {
            // A whole batch: keep it as the second one, handing the previous second one on.
            let batch = std::mem::replace(&mut self.free, ptr::null_mut());
            self.free_len = 0;
            let previous = std::mem::replace(&mut self.full, batch);
            if !previous.is_null() {
                // SAFETY: `previous` heads a list of exactly BATCH free slots of class `c`.
                unsafe { shared(c).push(previous) };
            }
        }
        // SAFETY: the slot is free again and 16-aligned with room for a pointer.
        unsafe { p.cast::<*mut u8>().write(self.free) };
        self.free = p;
        self.free_len += 1;
        self.in_use -= 1;
    }
}

/// Blocks this large from `alloc` (not `alloc_zeroed`: a zeroed block is often room kept in
/// reserve, resident only where written) are written soon after they are allocated — a
/// hash table's new array, a buffer sized for its contents — so the helper maps them.
const PREFAULT_LARGE: usize = 1 << 20;

#[inline]
fn prefault_large(p: *mut u8, size: usize) {
    if size >= PREFAULT_LARGE && !p.is_null() && prefault::enabled() {
        prefault::request(p, size);
    }
}

/// Slots in a batch moved between a pool and its class's shared stack.
const BATCH: usize = 64;

/// Per class, batches of free slots no pool kept: each batch is a list of [`BATCH`] slots
/// linked through their first word, and the batches are linked through the second word of
/// their first slot (every slot holds at least 16 bytes).
struct Batches(*mut u8);

// SAFETY: the pointers are to free pool slots, which no one else uses; all access goes
// through the stack's mutex.
unsafe impl Send for Batches {}

static SHARED: [Mutex<Batches>; CLASSES.len()] =
    [const { Mutex::new(Batches(ptr::null_mut())) }; CLASSES.len()];

fn shared(c: usize) -> std::sync::MutexGuard<'static, Batches> {
    // Nothing panics while holding the lock, and the list is intact anyway.
    SHARED[c].lock().unwrap_or_else(|e| e.into_inner())
}

impl Batches {
    /// # Safety
    /// `batch` heads a list of exactly [`BATCH`] free slots of this class.
    unsafe fn push(&mut self, batch: *mut u8) {
        // SAFETY: the first slot is free and holds at least 16 bytes; word 1 is the link.
        unsafe { batch.cast::<*mut u8>().add(1).write(self.0) };
        self.0 = batch;
    }

    fn pop(&mut self) -> Option<*mut u8> {
        if self.0.is_null() {
            return None;
        }
        let batch = self.0;
        // SAFETY: `push` wrote the next batch into word 1 of this batch's first slot.
        self.0 = unsafe { batch.cast::<*mut u8>().add(1).read() };
        Some(batch)
    }
}

/// A chunk from mimalloc (null when out of memory).
fn new_chunk() -> *mut u8 {
    // SAFETY: a plain allocation from mimalloc with a valid size and alignment.
    unsafe { libmimalloc_sys::mi_malloc_aligned(CHUNK, ALIGN) }.cast::<u8>()
}

/// The prefault helper: one thread that maps the pages of ranges handed to it. Requests
/// come from inside the allocator, so nothing here allocates after [`prefault::start`].
mod prefault {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Condvar, Mutex};

    static ENABLED: AtomicBool = AtomicBool::new(false);
    /// Pending ranges (address, length); a request finding it full is dropped (the pages
    /// then fault in where they are first written, as without the helper).
    static QUEUE: Mutex<Ring> = Mutex::new(Ring {
        items: [(0, 0); 8],
        head: 0,
        len: 0,
    });
    static WAKE: Condvar = Condvar::new();

    struct Ring {
        items: [(usize, usize); 8],
        head: usize,
        len: usize,
    }

    #[inline]
    pub fn enabled() -> bool {
        ENABLED.load(Ordering::Relaxed)
    }

    /// Starts the helper thread (Linux; elsewhere prefaulting stays off).
    pub fn start() {
        if !cfg!(target_os = "linux") || enabled() {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("procmodel-prefault".into())
            .spawn(run);
        if spawned.is_ok() {
            ENABLED.store(true, Ordering::Relaxed);
        }
    }

    pub fn request(p: *mut u8, len: usize) {
        let mut q = QUEUE.lock().unwrap_or_else(|e| e.into_inner());
        if q.len == q.items.len() {
            return;
        }
        let at = (q.head + q.len) % q.items.len();
        q.items[at] = (p as usize, len);
        q.len += 1;
        drop(q);
        // A wake-up is a system call (and, on a virtual machine, an interrupt to the other
        // core), once per chunk: it cost the thread filling the pools 4% of a 100k-part run.
        // While requests keep coming the helper polls instead, and only a helper blocked on
        // `WAKE` is woken. `BLOCKED` is set under the queue's lock before the helper waits,
        // and read here after this thread's own use of that lock, so a request is never
        // left behind a helper that blocked without seeing it.
        if BLOCKED.load(Ordering::SeqCst) {
            WAKE.notify_one();
        }
    }

    /// Requests the helper has carried out (for tests).
    pub(super) static SERVED: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// Set while the helper is blocked on [`WAKE`] (it polls while requests are recent).
    static BLOCKED: AtomicBool = AtomicBool::new(false);
    /// How often the helper looks at the queue while polling, and for how long after the
    /// last request before it blocks (a request every few hundred microseconds while a
    /// scene is built; the sleep's timer costs the requesting thread nothing).
    const POLL: std::time::Duration = std::time::Duration::from_micros(100);
    const POLLS_BEFORE_BLOCKING: u32 = 100;

    fn run() {
        let mut idle = 0;
        loop {
            let item = {
                let mut q = QUEUE.lock().unwrap_or_else(|e| e.into_inner());
                if q.len == 0 && idle >= POLLS_BEFORE_BLOCKING {
                    BLOCKED.store(true, Ordering::SeqCst);
                    while q.len == 0 {
                        q = WAKE.wait(q).unwrap_or_else(|e| e.into_inner());
                    }
                    BLOCKED.store(false, Ordering::SeqCst);
                }
                (q.len > 0).then(|| {
                    let item = q.items[q.head];
                    q.head = (q.head + 1) % q.items.len();
                    q.len -= 1;
                    item
                })
            };
            match item {
                Some((p, len)) => {
                    idle = 0;
                    populate(p, len);
                    SERVED.fetch_add(1, Ordering::Relaxed);
                }
                None => {
                    idle += 1;
                    std::thread::sleep(POLL);
                }
            }
        }
    }

    /// Maps the whole pages inside `[p, p + len)` writable.
    #[cfg(target_os = "linux")]
    pub(super) fn populate(p: usize, len: usize) {
        const PAGE: usize = 4096;
        let start = p.next_multiple_of(PAGE);
        let end = (p + len) / PAGE * PAGE;
        if end > start {
            // SAFETY: the range lies inside a live allocation of this process (a pool chunk,
            // never freed); MADV_POPULATE_WRITE only maps pages, it never changes their
            // contents, so it is sound while other threads use the memory. A kernel without
            // it answers EINVAL, which changes nothing.
            unsafe {
                libc::madvise(
                    start as *mut libc::c_void,
                    end - start,
                    libc::MADV_POPULATE_WRITE,
                );
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn populate(_: usize, _: usize) {}
}

/// Pools per size class: threads are spread over this many, round robin.
const SHARDS: usize = 8;

static POOLS: [[Mutex<Pool>; CLASSES.len()]; SHARDS] =
    [const { [const { Mutex::new(Pool::new()) }; CLASSES.len()] }; SHARDS];

/// The next shard to hand a thread.
static NEXT_SHARD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

thread_local! {
    /// This thread's shard (`usize::MAX` until its first pooled allocation). A plain `Cell`
    /// with a constant initializer: no destructor to register, so no allocation.
    static SHARD: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
}

/// The calling thread's shard.
#[inline]
fn shard() -> usize {
    SHARD
        .try_with(|s| match s.get() {
            usize::MAX => {
                let n = NEXT_SHARD.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % SHARDS;
                s.set(n);
                n
            }
            n => n,
        })
        // A thread past its thread-locals' end (freeing in a destructor) uses shard 0.
        .unwrap_or(0)
}

fn pool(c: usize) -> std::sync::MutexGuard<'static, Pool> {
    lock(&POOLS[shard()][c])
}

fn lock(p: &'static Mutex<Pool>) -> std::sync::MutexGuard<'static, Pool> {
    // Nothing panics while holding a pool's lock, but a poisoned lock's data is intact anyway.
    p.lock().unwrap_or_else(|e| e.into_inner())
}

/// The global allocator (`#[global_allocator] static A: procmodel_alloc::Allocator =
/// procmodel_alloc::Allocator;`).
pub struct Allocator;

// SAFETY: every block is either a block of a registered arena (requests with alignment ≤ 16
// while one serves the thread; found again by address, `arena::owner`), a pool slot of at
// least the requested size, 16-aligned (and only requests with alignment ≤ 16 go to the
// pools), or mimalloc's; `class` of the layout a
// block is freed or reallocated with is the class it was allocated in, because the caller
// passes the same layout (GlobalAlloc's contract) and same-class reallocations keep the slot.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if let Some(p) = from_thread_arena(layout, false) {
            return p;
        }
        match class(layout) {
            Some(c) => pool(c).take(c),
            None => {
                // SAFETY: forwarded with the caller's guarantees.
                let p = unsafe { MiMalloc.alloc(layout) };
                prefault_large(p, layout.size());
                p
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if let Some(a) = arena::owner(p) {
            // SAFETY: the block is this arena's, allocated for `layout.size()` bytes (the
            // caller passes the allocation's layout).
            return unsafe { a.free(p, layout.size()) };
        }
        match class(layout) {
            // SAFETY: a block of this class came from this pool (see the impl's SAFETY).
            Some(c) => unsafe { pool(c).give(c, p) },
            // SAFETY: forwarded with the caller's guarantees.
            None => unsafe { MiMalloc.dealloc(p, layout) },
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if let Some(p) = from_thread_arena(layout, true) {
            return p;
        }
        match class(layout) {
            Some(c) => {
                let p = pool(c).take(c);
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
        let (owner, serving) = (arena::owner(p), arena::thread_arena());
        if owner.is_some() || serving.is_some() {
            if let (Some(a), Some(t)) = (owner, serving)
                && std::ptr::eq(a, t)
            {
                // SAFETY: the block is this arena's, for `layout.size()` bytes.
                let q = unsafe { a.realloc(p, layout.size(), new_size) };
                if !q.is_null() {
                    return q;
                }
            }
            // Into or out of an arena.
            // SAFETY: the caller's guarantees.
            return unsafe { self.moved(p, layout, new) };
        }
        let (from, to) = (class(layout), class(new));
        if from.is_none() && to.is_none() {
            // SAFETY: forwarded with the caller's guarantees.
            return unsafe { MiMalloc.realloc(p, layout, new_size) };
        }
        if from == to {
            // One slot size holds every size of its class.
            return p;
        }
        // SAFETY: the caller's guarantees.
        unsafe { self.moved(p, layout, new) }
    }
}

impl Allocator {
    /// A reallocation to another place: a new block for `new`, the contents copied, the old
    /// one (`layout`) freed; null (the old block kept) when there is no memory.
    ///
    /// # Safety
    /// `GlobalAlloc::realloc`'s: `p` is a live block of this allocator for `layout`, and `new`
    /// is a valid non-zero layout.
    unsafe fn moved(&self, p: *mut u8, layout: Layout, new: Layout) -> *mut u8 {
        // SAFETY: `new` is a valid non-zero layout (the caller's guarantees).
        let q = unsafe { self.alloc(new) };
        if !q.is_null() {
            // SAFETY: both blocks hold at least the smaller size and are distinct.
            unsafe {
                ptr::copy_nonoverlapping(p, q, layout.size().min(new.size()));
                self.dealloc(p, layout);
            }
        }
        q
    }
}

/// A block from the arena serving this thread ([`arena::with_thread_arena`]), if one does and
/// can hold `layout`.
#[inline]
fn from_thread_arena(layout: Layout, zeroed: bool) -> Option<*mut u8> {
    if layout.align() > arena::ALIGN {
        return None;
    }
    let a = arena::thread_arena()?;
    let p = if zeroed {
        a.alloc_zeroed(layout.size())
    } else {
        a.alloc(layout.size())
    };
    (!p.is_null()).then_some(p)
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
/// in the environment still wins. Also starts the prefault thread (see the crate's doc).
pub fn configure() {
    // SAFETY: a plain call into mimalloc; its option setters are not thread safe, and the
    // caller makes this call before any other thread exists.
    unsafe { libmimalloc_sys::mi_option_set_default(MI_OPTION_PURGE_DELAY, 0) }
    prefault::start();
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
            let (mut in_use, mut chunks) = (0isize, 0);
            for shard in &POOLS {
                let p = lock(&shard[c]);
                in_use += p.in_use;
                chunks += p.chunks;
            }
            (CLASSES[c].1, in_use.max(0) as usize, chunks)
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

    #[test]
    fn prefaulting_maps_pages_without_changing_what_they_hold() {
        let mut buf: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let before = buf.clone();
        // Unaligned on both ends, and a range too short to hold a whole page: both fine.
        prefault::populate(buf.as_mut_ptr() as usize + 3, buf.len() - 5);
        prefault::populate(buf.as_mut_ptr() as usize + 1, 100);
        assert_eq!(buf, before);
    }

    #[test]
    fn pools_with_a_prefaulted_spare_chunk_hand_out_disjoint_live_slots() {
        prefault::start();
        assert_eq!(prefault::enabled(), cfg!(target_os = "linux"));
        let mut pool = Pool::new();
        let slot = CLASSES[0].1;
        // Five chunks' worth: every chunk after the first was a prefaulted spare.
        let n = 5 * CHUNK / slot;
        let slots: Vec<*mut u8> = (0..n).map(|_| pool.take(0)).collect();
        for (i, &p) in slots.iter().enumerate() {
            assert!(!p.is_null());
            assert_eq!(p as usize % ALIGN, 0);
            // SAFETY: each slot is `slot` bytes of this pool's memory.
            unsafe { ptr::write_bytes(p, (i % 255) as u8, slot) };
        }
        for (i, &p) in slots.iter().enumerate() {
            // SAFETY: as above; no two slots overlap, so each still holds its own byte.
            let s = unsafe { std::slice::from_raw_parts(p, slot) };
            assert!(
                s.iter().all(|&b| b == (i % 255) as u8),
                "slot {i} was overwritten"
            );
        }
        assert_eq!(pool.chunks, n.div_ceil(CHUNK / slot));
        // A full request queue drops requests instead of blocking or allocating.
        for _ in 0..64 {
            prefault::request(pool.spare.max(slots[0]), CHUNK);
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_request_after_the_helper_blocked_wakes_it() {
        use std::sync::atomic::Ordering;
        use std::time::{Duration, Instant};
        prefault::start();
        let mut buf = vec![0u8; 4 * 4096];
        let p = buf.as_mut_ptr();
        // Requests while it polls, then one after it has been idle long enough to block.
        for idle in [Duration::ZERO, Duration::from_millis(100)] {
            std::thread::sleep(idle);
            let before = prefault::SERVED.load(Ordering::Relaxed);
            prefault::request(p, buf.len());
            let start = Instant::now();
            while prefault::SERVED.load(Ordering::Relaxed) == before {
                assert!(
                    start.elapsed() < Duration::from_secs(10),
                    "the helper never served a request made {idle:?} after the last"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        assert!(buf.iter().all(|&b| b == 0));
    }

    #[test]
    fn threads_building_at_once_use_different_pools() {
        let shards: Vec<usize> = (0..3)
            .map(|_| std::thread::spawn(|| (shard(), shard())).join().unwrap())
            .map(|(first, again)| {
                assert_eq!(first, again, "a thread keeps its shard");
                first
            })
            .collect();
        let mut distinct = shards.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 3, "{shards:?}");
    }

    #[test]
    fn slots_one_pool_frees_serve_another_pools_allocations() {
        // A worker's pool takes slots, the engine thread's pool frees them (results made on
        // one thread are destroyed on another), round after round: the taking pool must be
        // refilled from what the other freed instead of taking new chunks every round.
        // Class 1 only (no other test here gives slots of it back).
        let (mut taker, mut freer) = (Pool::new(), Pool::new());
        let per_round = 20 * BATCH;
        let mut chunks_after = Vec::new();
        for _ in 0..6 {
            let slots: Vec<*mut u8> = (0..per_round).map(|_| taker.take(1)).collect();
            assert!(slots.iter().all(|p| !p.is_null()));
            for p in slots {
                // SAFETY: each slot came from `take(1)` and is not used again.
                unsafe { freer.give(1, p) };
            }
            chunks_after.push(taker.chunks);
        }
        let per_chunk = CHUNK / CLASSES[1].1;
        let first = chunks_after[0];
        assert!(first >= per_round / per_chunk, "{chunks_after:?}");
        // The freeing pool keeps at most two batches; everything else comes back.
        let bound = first + (2 * BATCH).div_ceil(per_chunk) + 1;
        assert!(
            chunks_after.iter().all(|&c| c <= bound),
            "{chunks_after:?} (bound {bound})"
        );
        assert_eq!(taker.in_use + freer.in_use, 0);
    }
}
