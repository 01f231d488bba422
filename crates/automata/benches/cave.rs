//! Criterion benchmark: a 512×512 cave (fill + 5 iterations + connect), and its stages; a
//! 64×64×64 cave's connect stage for the 3D path.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use procmodel_automata::{
    Automaton, Automaton3, CaveConfig, ConnectConfig, EdgePolicy, Rule, check_connected3, connect,
    connect3, random_fill, random_fill3, run,
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

fn bench3(c: &mut Criterion) {
    const SIDE: usize = 64;
    let mut group = c.benchmark_group("cave3_64");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements((SIDE * SIDE * SIDE) as u64));
    let filled = random_fill3(SIDE, SIDE, SIDE, 0.5, 42).unwrap();
    let rule = Rule::parse_3d("B14-26/S13-26").unwrap();
    let mut a = Automaton3::new(filled, rule, EdgePolicy::Wall);
    for _ in 0..3 {
        a.step();
    }
    let stepped = a.into_grid();
    group.bench_function("connect3", |b| {
        b.iter(|| {
            let mut g = stepped.clone();
            connect3(&mut g, &ConnectConfig::default()).unwrap();
            g
        })
    });
    let mut joined = stepped.clone();
    connect3(&mut joined, &ConnectConfig::default()).unwrap();
    group.bench_function("check_connected3", |b| {
        b.iter(|| check_connected3(black_box(&joined)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench, bench3);
criterion_main!(benches);
