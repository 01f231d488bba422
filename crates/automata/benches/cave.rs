//! Criterion benchmark: a 512×512 cave (fill + 5 iterations + connect), and its stages.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use procmodel_automata::{
    Automaton, CaveConfig, ConnectConfig, EdgePolicy, Rule, connect, random_fill, run,
};

const SIZE: usize = 512;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("cave_512");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements((SIZE * SIZE) as u64));
    let config = CaveConfig {
        width: SIZE,
        height: SIZE,
        seed: 42,
        ..CaveConfig::default()
    };
    group.bench_function("pipeline", |b| b.iter(|| run(black_box(&config)).unwrap()));
    group.bench_function("fill", |b| {
        b.iter(|| random_fill(SIZE, SIZE, 0.45, black_box(42)).unwrap())
    });
    let filled = random_fill(SIZE, SIZE, 0.45, 42).unwrap();
    group.bench_function("step_x5", |b| {
        b.iter(|| {
            let mut a = Automaton::new(filled.clone(), Rule::CAVE, EdgePolicy::Wall);
            for _ in 0..5 {
                a.step();
            }
            a.into_grid()
        })
    });
    let mut a = Automaton::new(filled, Rule::CAVE, EdgePolicy::Wall);
    a.run(5);
    let stepped = a.into_grid();
    group.bench_function("connect", |b| {
        b.iter(|| {
            let mut g = stepped.clone();
            connect(&mut g, &ConnectConfig::default()).unwrap();
            g
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
