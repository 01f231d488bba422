//! A deterministic arena for one Luau VM's heap: the same sequence of requests gets blocks at
//! the same offsets from a base aligned to 4 GiB, so their addresses agree in the low 32 bits
//! on every run, whatever the OS and the rest of the process did.
//!
//! Luau places a table key that is a table, a function or another collectable object by the
//! low 32 bits of its address, so the order `pairs` visits such keys (an A* open set keyed by
//! node tables) follows the addresses. With the VM's heap in an arena, that order is the same
//! whenever the VM did the same things: the same script, the same generator, the same scene.
//!
//! Blocks come from size classes (16-byte steps up to 64 bytes, then four classes per
//! doubling, so a block wastes at most a fifth of itself), each with a free list (last freed,
//! first reused); a class with no free block takes the next bytes of the arena. Blocks above
//! 64 MiB are rounded to MiB, their pages given back to the OS when freed, and reused for
//! a block of the same rounded size. The arena
//! reserves address space only (32 GiB, `PROT_NONE`) and commits it as the bump pointer
//! advances; a request the arena cannot hold returns null, and the caller uses another
//! allocator (its addresses are then not the arena's).
//!
//! An arena can also serve a thread's allocations through the global allocator for a while
//! ([`with_thread_arena`]; procmodel's binaries' allocator honours it), so the blocks a VM
//! makes while it is being set up are in the arena too. A registered arena's blocks are
//! found by address ([`owner`]) wherever they are freed.
//!
//! Nothing here is shared between threads except through the arena's mutex; an arena never
//! allocates through the global allocator (it may be the global allocator's source).

use std::cell::Cell;
use std::ptr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Address space reserved per arena.
const RESERVE: usize = 32 << 30;
/// The base's alignment: addresses agree in their low 32 bits.
const BASE_ALIGN: usize = 1 << 32;
/// Bytes committed at a time.
const COMMIT_STEP: usize = 1 << 20;
/// Sizes up to this have size classes with free lists.
const MAX_CLASSED: usize = 64 << 20;
/// Larger blocks are rounded up to this.
const BIG_STEP: usize = 1 << 20;
/// Every block is 16-aligned (Luau's `SYS_MIN_ALIGN` on 64-bit targets).
pub const ALIGN: usize = 16;

/// Classes: 16, 32, 48, 64, then four per doubling up to [`MAX_CLASSED`].
const CLASSES: usize = 4 + 4 * (MAX_CLASSED.trailing_zeros() as usize - 6);

/// The class of a request of `size` bytes (`1..=MAX_CLASSED`) and the class's block size.
fn class(size: usize) -> (usize, usize) {
    if size <= 64 {
        let c = size.max(1).div_ceil(16) - 1;
        return (c, (c + 1) * 16);
    }
    // size in (2^k, 2^(k+1)], k >= 6: steps of 2^(k-2).
    let k = (usize::BITS - 1 - (size - 1).leading_zeros()) as usize;
    let step = 1usize << (k - 2);
    let sub = (size - (1 << k)).div_ceil(step); // 1..=4
    (4 + (k - 6) * 4 + sub - 1, (1 << k) + sub * step)
}

/// Registered arenas by the 4 GiB region of the address space they cover (47-bit user
/// space: 32,768 regions).
static REGIONS: [AtomicPtr<Arena>; 1 << 15] = [const { AtomicPtr::new(ptr::null_mut()) }; 1 << 15];

/// The registered arena holding `p`, if any: one load, so an allocator can ask it of every
/// block it frees.
#[inline]
pub fn owner(p: *const u8) -> Option<&'static Arena> {
    let a = REGIONS.get((p as usize) >> 32)?.load(Ordering::Acquire);
    // SAFETY: a registered arena stays alive (and in place) until it unregisters itself, in
    // its `drop`, which its owner does only once no block of it is in use.
    unsafe { a.as_ref() }
}

thread_local! {
    /// The arena serving this thread's requests to the global allocator, if any.
    static THREAD_ARENA: Cell<*const Arena> = const { Cell::new(ptr::null()) };
}

/// Runs `f` with `arena` serving this thread's global-allocator requests (alignment ≤ 16),
/// for an allocator that honours [`thread_arena`] (procmodel's binaries' does). `arena` must
/// be registered ([`Arena::register`]) so the blocks are found again when freed.
pub fn with_thread_arena<R>(arena: &Arena, f: impl FnOnce() -> R) -> R {
    struct Restore(*const Arena);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = THREAD_ARENA.try_with(|t| t.set(self.0));
        }
    }
    let _restore = Restore(
        THREAD_ARENA
            .try_with(|t| t.replace(arena))
            .unwrap_or(ptr::null()),
    );
    f()
}

/// The arena serving this thread's global-allocator requests ([`with_thread_arena`]).
#[inline]
pub fn thread_arena() -> Option<&'static Arena> {
    let a = THREAD_ARENA.try_with(|t| t.get()).ok()?;
    // SAFETY: `with_thread_arena` sets it for the duration of a borrow of the arena, and
    // puts the previous value back before the borrow ends.
    unsafe { a.as_ref() }
}

struct Inner {
    base: *mut u8,
    /// Bytes handed out from the start (blocks and free blocks).
    bump: usize,
    /// Bytes readable and writable from the start.
    committed: usize,
    /// Free blocks of each class, each holding the next one's address in its first word.
    free: [*mut u8; CLASSES],
    /// Freed blocks above [`MAX_CLASSED`], their pages released: a list through their first
    /// two words (the block's rounded size, the next one's address).
    big_free: *mut u8,
    /// Bytes in blocks handed out and not freed.
    live: usize,
    /// Given up by its owner ([`Arena::orphan`]): the mapping goes when `live` reaches 0.
    orphaned: bool,
}

/// One VM's arena (see the module's documentation).
pub struct Arena {
    inner: Mutex<Inner>,
}

// SAFETY: the raw pointers are to the arena's own reservation; every access to them and to
// the memory behind them goes through the mutex.
unsafe impl Send for Inner {}

impl Arena {
    /// A new arena, or None when the address space cannot be reserved (or on a platform
    /// without `mmap`).
    pub fn new() -> Option<Arena> {
        let base = reserve()?;
        if (base as usize + RESERVE) >> 32 > REGIONS.len() {
            // Beyond the regions [`owner`] covers (a 57-bit address space): not usable.
            unmap(base);
            return None;
        }
        Some(Arena {
            inner: Mutex::new(Inner {
                base,
                bump: 0,
                committed: 0,
                free: [ptr::null_mut(); CLASSES],
                big_free: ptr::null_mut(),
                live: 0,
                orphaned: false,
            }),
        })
    }

    /// Records the arena's regions so [`owner`] finds its blocks. The arena must not move
    /// while registered (keep it boxed); its `drop` unregisters it.
    pub fn register(&self) {
        let base = self.lock().base as usize;
        for r in (base >> 32)..((base + RESERVE) >> 32) {
            if let Some(slot) = REGIONS.get(r) {
                slot.store(self as *const Arena as *mut Arena, Ordering::Release);
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Nothing panics while holding the lock; a poisoned lock's data is intact anyway.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A 16-aligned block of at least `size` bytes (`size > 0`), or null when the arena
    /// cannot hold it.
    pub fn alloc(&self, size: usize) -> *mut u8 {
        let mut a = self.lock();
        a.alloc(size)
    }

    /// [`alloc`](Arena::alloc), the block's first `size` bytes zeroed.
    pub fn alloc_zeroed(&self, size: usize) -> *mut u8 {
        let p = self.alloc(size);
        if !p.is_null() {
            // SAFETY: a fresh block of at least `size` bytes.
            unsafe { p.write_bytes(0, size) };
        }
        p
    }

    /// Gives back a block [`alloc`](Arena::alloc) returned for `size` bytes.
    ///
    /// # Safety
    /// `p` came from this arena's `alloc` (or `realloc`) for a request of `size` bytes and
    /// is not used after this call.
    pub unsafe fn free(&self, p: *mut u8, size: usize) {
        let mut a = self.lock();
        // SAFETY: the caller's guarantees.
        unsafe { a.free(p, size) }
    }

    /// Resizes a block of this arena from `old` to `new` bytes (`new > 0`): the same block
    /// when both sizes are in one class, else a new one with the contents copied (null, the
    /// old block untouched, when the arena cannot hold it).
    ///
    /// # Safety
    /// As for [`free`](Arena::free): `p` is this arena's block for a request of `old` bytes.
    pub unsafe fn realloc(&self, p: *mut u8, old: usize, new: usize) -> *mut u8 {
        let mut a = self.lock();
        if old <= MAX_CLASSED && new <= MAX_CLASSED && class(old).0 == class(new).0 {
            return p;
        }
        let q = a.alloc(new);
        if !q.is_null() {
            // SAFETY: `p` holds `old` bytes and `q` at least `new`; arena blocks never overlap.
            unsafe {
                ptr::copy_nonoverlapping(p, q, old.min(new));
                a.free(p, old);
            }
        }
        q
    }

    /// Bytes in blocks handed out and not given back (block sizes, not request sizes).
    pub fn live(&self) -> usize {
        self.lock().live
    }

    /// Hands the arena over to its blocks: it unregisters itself and gives its address space
    /// back when the last of them is freed (at once if none is in use). For an owner that
    /// goes away while blocks it made through the global allocator may still be in use.
    pub fn orphan(self: Box<Self>) {
        let me = Box::leak(self);
        let mut a = me.lock();
        a.orphaned = true;
        if a.live == 0 {
            a.unmap_regions();
        }
    }
}

impl Inner {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if size == 0 {
            return ptr::null_mut();
        }
        if size > MAX_CLASSED {
            let rounded = match size.checked_next_multiple_of(BIG_STEP) {
                Some(r) => r,
                None => return ptr::null_mut(),
            };
            // A freed big block of the same rounded size (its pages come back on first touch;
            // only the same size, so a free's size names the block's).
            let mut link: *mut *mut u8 = &mut self.big_free;
            // SAFETY: the list holds freed big blocks of this arena, each starting with its
            // size and the next block's address (written by `free`).
            unsafe {
                while !(*link).is_null() {
                    let block = *link;
                    if block.cast::<usize>().read() == rounded {
                        *link = block.add(8).cast::<*mut u8>().read();
                        self.live += rounded;
                        return block;
                    }
                    link = block.add(8).cast::<*mut u8>();
                }
            }
            let p = self.bump(rounded);
            if !p.is_null() {
                self.live += rounded;
            }
            return p;
        }
        let (c, block) = class(size);
        let head = self.free[c];
        if !head.is_null() {
            // SAFETY: `head` is a freed block of class `c` (≥ 16 bytes, 16-aligned) whose
            // first word `free` set to the next free block.
            self.free[c] = unsafe { head.cast::<*mut u8>().read() };
            self.live += block;
            return head;
        }
        let p = self.bump(block);
        if !p.is_null() {
            self.live += block;
        }
        p
    }

    /// The next `bytes` (a multiple of 16) of the arena, committing as needed.
    fn bump(&mut self, bytes: usize) -> *mut u8 {
        let end = match self.bump.checked_add(bytes) {
            Some(e) if e <= RESERVE => e,
            _ => return ptr::null_mut(),
        };
        if end > self.committed {
            let to = end.next_multiple_of(COMMIT_STEP).min(RESERVE);
            // SAFETY: `committed..to` is inside the reservation.
            let from = unsafe { self.base.add(self.committed) };
            if !commit(from, to - self.committed) {
                return ptr::null_mut();
            }
            self.committed = to;
        }
        // SAFETY: `self.bump + bytes <= committed <= RESERVE`.
        let p = unsafe { self.base.add(self.bump) };
        self.bump = end;
        p
    }

    /// # Safety
    /// `p` is a live block of this arena for a request of `size` bytes.
    unsafe fn free(&mut self, p: *mut u8, size: usize) {
        if size > MAX_CLASSED {
            let rounded = size.next_multiple_of(BIG_STEP);
            release(p, rounded);
            self.live -= rounded;
            // SAFETY: the block is at least a MiB and no longer in use; its first page comes
            // back (zeroed) to hold the link.
            unsafe {
                p.cast::<usize>().write(rounded);
                p.add(8).cast::<*mut u8>().write(self.big_free);
            }
            self.big_free = p;
            self.maybe_unmap();
            return;
        }
        let (c, block) = class(size);
        // SAFETY: the block is at least 16 bytes and 16-aligned, and no longer in use.
        unsafe { p.cast::<*mut u8>().write(self.free[c]) };
        self.free[c] = p;
        self.live -= block;
        self.maybe_unmap();
    }

    /// An orphaned arena's last block is gone: unregister and unmap.
    fn maybe_unmap(&mut self) {
        if self.orphaned && self.live == 0 {
            self.unmap_regions();
        }
    }

    /// Unregisters the arena's regions (whatever arena they name: this one) and unmaps it.
    fn unmap_regions(&mut self) {
        if self.base.is_null() {
            return;
        }
        let base = self.base as usize;
        for r in (base >> 32)..((base + RESERVE) >> 32) {
            if let Some(slot) = REGIONS.get(r) {
                slot.store(ptr::null_mut(), Ordering::Release);
            }
        }
        unmap(self.base);
        self.base = ptr::null_mut();
        self.committed = 0;
    }
}

#[cfg(unix)]
fn reserve() -> Option<*mut u8> {
    let len = RESERVE + BASE_ALIGN;
    // SAFETY: an anonymous private mapping with no access; nothing is read or written here.
    let p = unsafe {
        libc::mmap(
            ptr::null_mut(),
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    let start = p as usize;
    let base = start.next_multiple_of(BASE_ALIGN);
    let (head, tail) = (base - start, start + len - (base + RESERVE));
    // SAFETY: both ranges are parts of the mapping just made, outside `base..base+RESERVE`.
    unsafe {
        if head > 0 {
            libc::munmap(p, head);
        }
        if tail > 0 {
            libc::munmap((base + RESERVE) as *mut libc::c_void, tail);
        }
    }
    Some(base as *mut u8)
}

#[cfg(not(unix))]
fn reserve() -> Option<*mut u8> {
    None
}

/// Makes `len` bytes at `p` (inside a reservation) readable and writable.
#[cfg(unix)]
fn commit(p: *mut u8, len: usize) -> bool {
    // SAFETY: `p..p+len` is inside the arena's reservation.
    unsafe { libc::mprotect(p.cast(), len, libc::PROT_READ | libc::PROT_WRITE) == 0 }
}

#[cfg(not(unix))]
fn commit(_p: *mut u8, _len: usize) -> bool {
    false
}

/// Gives the pages of `p..p+len` back to the OS; they read as zeros when next touched.
#[cfg(unix)]
fn release(p: *mut u8, len: usize) {
    // SAFETY: the range is committed arena memory that no block in use overlaps.
    unsafe {
        libc::madvise(p.cast(), len, libc::MADV_DONTNEED);
    }
}

#[cfg(not(unix))]
fn release(_p: *mut u8, _len: usize) {}

impl Drop for Arena {
    fn drop(&mut self) {
        self.inner
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .unmap_regions();
    }
}

/// Gives an arena's reservation back.
#[cfg(unix)]
fn unmap(base: *mut u8) {
    // SAFETY: `base..base+RESERVE` is an arena's reservation, which no block is used in.
    unsafe {
        libc::munmap(base.cast(), RESERVE);
    }
}

#[cfg(not(unix))]
fn unmap(_base: *mut u8) {}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn classes_cover_every_size_within_a_fifth() {
        let mut last = (0, 0);
        for size in (1..=70_000).chain([MAX_CLASSED - 1, MAX_CLASSED]) {
            let (c, block) = class(size);
            assert!(
                block >= size && block.is_multiple_of(16),
                "{size} -> {block}"
            );
            assert!(c < CLASSES, "{size}");
            if size > 64 {
                assert!(block - size < block / 5 + 1, "{size} -> {block}");
            }
            assert!(c >= last.0, "classes grow with the size");
            last = (c, block);
        }
        assert_eq!(class(MAX_CLASSED), (CLASSES - 1, MAX_CLASSED));
    }

    /// The offsets of a sequence of requests, frees and resizes.
    fn offsets(arena: &Arena) -> Vec<usize> {
        let base = arena.lock().base as usize;
        let mut held: Vec<(*mut u8, usize)> = Vec::new();
        let mut out = Vec::new();
        for i in 0..3000usize {
            let size = 1 + (i * 7919) % 5000;
            let p = arena.alloc(size);
            assert!(!p.is_null() && (p as usize).is_multiple_of(ALIGN));
            // SAFETY: a fresh block of `size` bytes.
            unsafe { p.write_bytes(i as u8, size) };
            out.push(p as usize - base);
            held.push((p, size));
            if i % 3 == 0 {
                let (q, s) = held.swap_remove((i * 31) % held.len());
                // SAFETY: a live block of this arena for `s` bytes.
                unsafe { arena.free(q, s) };
            }
            if i % 5 == 0 && !held.is_empty() {
                let j = (i * 17) % held.len();
                let (q, s) = held[j];
                let n = s * 2 + 1;
                // SAFETY: as above.
                let r = unsafe { arena.realloc(q, s, n) };
                assert!(!r.is_null());
                out.push(r as usize - base);
                held[j] = (r, n);
            }
        }
        for (q, s) in held {
            // SAFETY: live blocks of this arena.
            unsafe { arena.free(q, s) };
        }
        assert_eq!(arena.live(), 0, "every block given back");
        out
    }

    #[test]
    fn the_same_requests_get_the_same_offsets_from_an_aligned_base() {
        let a = Arena::new().unwrap();
        let b = Arena::new().unwrap();
        assert!((a.lock().base as usize).is_multiple_of(BASE_ALIGN));
        // Something else between them in the process changes nothing.
        let noise: Vec<Box<[u8; 100]>> = (0..1000).map(|_| Box::new([0; 100])).collect();
        assert_eq!(offsets(&a), offsets(&b));
        drop(noise);
    }

    #[test]
    fn a_resize_within_a_class_keeps_the_block_and_contents_survive_a_move() {
        let a = Arena::new().unwrap();
        let p = a.alloc(100);
        // SAFETY: blocks of this arena, sizes as requested.
        unsafe {
            p.write_bytes(7, 100);
            assert_eq!(a.realloc(p, 100, 110), p, "100 and 110 share the 112 class");
            let q = a.realloc(p, 110, 4000);
            assert_ne!(q, p);
            assert!((0..100).all(|i| q.add(i).read() == 7));
            a.free(q, 4000);
        }
        assert_eq!(a.live(), 0);
    }

    #[test]
    fn a_registered_arena_owns_its_blocks_and_serves_its_thread() {
        let a = Box::new(Arena::new().unwrap());
        let p = a.alloc(64);
        assert!(owner(p).is_none(), "not registered yet");
        a.register();
        assert!(std::ptr::eq(owner(p).unwrap(), &*a));
        let stack = 0u8;
        assert!(owner(&stack).is_none());
        assert!(thread_arena().is_none());
        with_thread_arena(&a, || {
            assert!(std::ptr::eq(thread_arena().unwrap(), &*a));
        });
        assert!(thread_arena().is_none(), "restored");
        // SAFETY: a live block of `a`.
        unsafe { a.free(p, 64) };
        let base = a.lock().base;
        drop(a);
        assert!(owner(base).is_none(), "unregistered when dropped");
    }

    #[test]
    fn an_orphaned_arena_goes_with_its_last_block() {
        let a = Box::new(Arena::new().unwrap());
        a.register();
        let p = a.alloc(100);
        a.orphan();
        let owner_of_p = owner(p).expect("still registered while a block lives");
        // SAFETY: the live block, freed once.
        unsafe { owner_of_p.free(p, 100) };
        assert!(
            owner(p).is_none(),
            "unregistered and unmapped with its last block"
        );
    }

    #[test]
    fn big_blocks_are_released_and_reused() {
        let a = Arena::new().unwrap();
        let size = MAX_CLASSED + 3;
        let p = a.alloc(size);
        assert!(!p.is_null());
        // SAFETY: a live block of `size` bytes.
        unsafe {
            p.add(size - 1).write(1);
            a.free(p, size);
        }
        assert_eq!(a.alloc(size), p, "the freed block serves the next request");
        // SAFETY: its pages were released: they read as zeros.
        assert_eq!(unsafe { p.add(size - 1).read() }, 0);
        assert!(
            a.alloc(RESERVE).is_null(),
            "more than the arena holds is null"
        );
    }
}
