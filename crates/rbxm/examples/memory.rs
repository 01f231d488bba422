//! Peak transient heap of writing 100,000 parts, ours vs rbx_binary, measured
//! with a counting global allocator. The output goes to `io::sink()`, so only
//! the writers' own allocations count.
//!
//! `cargo run --release -p procmodel-rbxm --example memory [N]`

use std::{
    alloc::{GlobalAlloc, Layout, System},
    io,
    sync::atomic::{AtomicUsize, Ordering::Relaxed},
    time::Instant,
};

#[path = "../tests/common/mod.rs"]
mod common;

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grow(by: usize) {
    let now = CURRENT.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: forwards to the system allocator unchanged; only counts bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            grow(new_size - layout.size());
        } else {
            CURRENT.fetch_sub(layout.size() - new_size, Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Peak bytes allocated above the starting level while `f` runs.
fn transient(f: impl FnOnce()) -> usize {
    let base = CURRENT.load(Relaxed);
    PEAK.store(base, Relaxed);
    f();
    PEAK.load(Relaxed) - base
}

fn mib(bytes: usize) -> String {
    format!("{:.2} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn main() {
    let n = std::env::args()
        .nth(1)
        .map_or(100_000, |s| s.parse().unwrap());
    let (dom, model) = common::parts_dom(n);
    // Load the reflection database (shared by both writers) up front.
    rbx_reflection_database::get().unwrap();
    let dom_bytes = CURRENT.load(Relaxed);
    let output = common::ours(&dom, &[model]).unwrap();
    assert_eq!(output, common::theirs(&dom, &[model]).unwrap());

    let start = Instant::now();
    let theirs = transient(|| rbx_binary::to_writer(io::sink(), &dom, &[model]).unwrap());
    let theirs_time = start.elapsed();
    let start = Instant::now();
    let ours = transient(|| procmodel_rbxm::to_writer(io::sink(), &dom, &[model]).unwrap());
    let ours_time = start.elapsed();

    println!(
        "{n} parts; heap with DOM and database: {}; output: {}",
        mib(dom_bytes),
        mib(output.len())
    );
    println!(
        "rbx_binary::to_writer      transient peak {} ({theirs_time:.2?} single run)",
        mib(theirs)
    );
    println!(
        "procmodel_rbxm::to_writer  transient peak {} ({ours_time:.2?} single run)",
        mib(ours)
    );
}
