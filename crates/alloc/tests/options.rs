//! `configure` sets mimalloc's purge delay, and the option index it uses is that option's
//! (its default, 1,000 ms in mimalloc v3's options.c, before `configure` runs). One test: mimalloc's
//! option setters are not thread safe.

use procmodel_alloc::{Allocator, MI_OPTION_PURGE_DELAY, configure};

#[global_allocator]
static GLOBAL: Allocator = Allocator;

#[test]
fn purge_delay_option() {
    // SAFETY: reads an option; no other thread of this test binary touches options.
    let before = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
    assert_eq!(
        before, 1000,
        "mimalloc v3's purge_delay defaults to 1,000 ms (options.c); the index is wrong"
    );
    // The neighbours are other options with other defaults (use_numa_nodes = 0).
    // SAFETY: as above.
    let next = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY + 1) };
    assert_eq!(next, 0, "use_numa_nodes follows purge_delay in mimalloc.h");
    configure();
    // SAFETY: as above.
    let after = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
    assert_eq!(after, 0);
}
