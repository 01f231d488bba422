//! rbx_binary::to_writer vs procmodel_rbxm::to_writer on the benchmark shape:
//! 100,000 Parts (Name, Size, rotated CFrame, Color, Material, Anchored) in a
//! Model under DataModel/Workspace, written as an .rbxm into a reused Vec.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "../tests/common/mod.rs"]
mod common;

fn write_100k_parts(c: &mut Criterion) {
    let (dom, model) = common::parts_dom(100_000);
    let expected = common::theirs(&dom, &[model]).unwrap();
    assert_eq!(common::ours(&dom, &[model]).unwrap(), expected);
    let mut out = Vec::with_capacity(expected.len());

    let mut group = c.benchmark_group("write_100k_parts");
    group.sample_size(20);
    group.bench_function("rbx_binary", |b| {
        b.iter(|| {
            out.clear();
            rbx_binary::to_writer(&mut out, &dom, &[model]).unwrap();
            black_box(out.len())
        })
    });
    group.bench_function("procmodel_rbxm", |b| {
        b.iter(|| {
            out.clear();
            procmodel_rbxm::to_writer(&mut out, &dom, &[model]).unwrap();
            black_box(out.len())
        })
    });
    group.finish();
}

criterion_group!(benches, write_100k_parts);
criterion_main!(benches);
