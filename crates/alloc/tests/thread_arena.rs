//! The global allocator and an arena serving a thread (`arena::with_thread_arena`): the
//! thread's blocks come from the arena while it serves, a block grown there stays there,
//! one grown after moves out, and one freed on another thread goes back to its arena.

#![cfg(unix)]

use procmodel_alloc::Allocator;
use procmodel_alloc::arena::{Arena, owner, with_thread_arena};

#[global_allocator]
static GLOBAL: Allocator = Allocator;

fn in_arena(p: *const u8, arena: &Arena) -> bool {
    owner(p).is_some_and(|a| std::ptr::eq(a, arena))
}

#[test]
fn a_thread_arena_takes_the_threads_blocks_and_gets_them_back() {
    let arena = Box::new(Arena::new().expect("address space for an arena"));
    arena.register();
    let (mut v, boxed) = with_thread_arena(&arena, || {
        let mut v: Vec<u64> = Vec::with_capacity(4);
        v.extend(0..1000); // grown inside the window: still the arena's
        (v, Box::new([7u8; 300]))
    });
    assert!(in_arena(v.as_ptr().cast(), &arena));
    assert!(in_arena(boxed.as_ptr(), &arena));
    let live = arena.live();
    assert!(live > 0);
    // Grown after the window: moved out, contents kept, the arena's block given back.
    v.extend(1000..100_000);
    assert!(!in_arena(v.as_ptr().cast(), &arena));
    assert!(v.iter().copied().eq(0..100_000));
    assert!(arena.live() < live);
    // Freed on another thread: back to the arena all the same.
    std::thread::spawn(move || drop(boxed)).join().unwrap();
    assert_eq!(arena.live(), 0);
    // Other threads' blocks never come from it.
    let elsewhere = std::thread::spawn(|| {
        let b = Box::new([0u8; 64]);
        owner(b.as_ptr()).is_some()
    })
    .join()
    .unwrap();
    assert!(!elsewhere);
}
