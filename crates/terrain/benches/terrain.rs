//! Benchmarks: meshing against fast-surface-nets on the same chunks, and world columns/s.
fn main() {}
