//! Criterion benchmark: the fractal plant (`X -> F+[[X]-X]-F[-X]+X`, `F -> FF`) derived 7
//! times and interpreted by the turtle (derivation also timed for the `lsystem` crate, the
//! peer), plus a parametric and a stochastic system.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use procmodel_lsystem::{LSystem, Limits, TurtleConfig, interpret};

const PLANT: &str = "axiom: X\nX -> F+[[X]-X]-F[-X]+X\nF -> FF";
const PARAMETRIC: &str = "\
define R = 0.7
axiom: F(10)A(1)
A(w) : w > 0.01 -> !(w)[&(30)F(5*w)L A(w*R)]/(137.5)[&(30)F(5*w)L A(w*R)]
";
const STOCHASTIC: &str = "\
axiom: F
F -> (1) F[+F]F[-F]F
F -> (1) F[+F]F
F -> (1) F[-F]F
";

fn bench(c: &mut Criterion) {
    let limits = Limits::default();
    let plant = LSystem::parse(PLANT).unwrap();
    let config = TurtleConfig {
        angle_degrees: 25.0,
        ..TurtleConfig::default()
    };
    let derived = plant.derive(7, 0, &limits).unwrap();

    let mut group = c.benchmark_group("fractal_plant_7");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(derived.len() as u64));
    group.bench_function("derive", |b| {
        b.iter(|| plant.derive(black_box(7), 0, &limits).unwrap())
    });
    // The peer (the `lsystem` crate, a char-rewriting L-system) derives the same plant: same
    // rules, same axiom, the same number of symbols after 7 steps (checked below).
    let peer_derive = |n: usize| {
        let mut rules = lsystem::MapRules::new();
        rules.set_str('X', "F+[[X]-X]-F[-X]+X");
        rules.set_str('F', "FF");
        let mut system = lsystem::LSystem::new(rules, vec!['X']);
        let mut out = Vec::new();
        for _ in 0..n {
            out = system.next().expect("the peer derives");
        }
        out
    };
    assert_eq!(peer_derive(7).len(), derived.len(), "peer and ours differ");
    group.bench_function("derive_peer_lsystem_crate", |b| {
        b.iter(|| peer_derive(black_box(7)))
    });
    group.bench_function("interpret", |b| {
        b.iter(|| interpret(black_box(&derived), &config).unwrap())
    });
    group.bench_function("derive_and_interpret", |b| {
        b.iter(|| {
            let s = plant.derive(black_box(7), 0, &limits).unwrap();
            interpret(&s, &config).unwrap()
        })
    });
    group.finish();

    let parametric = LSystem::parse(PARAMETRIC).unwrap();
    let p = parametric.derive(12, 0, &limits).unwrap();
    let stochastic = LSystem::parse(STOCHASTIC).unwrap();
    let s = stochastic.derive(5, 7, &limits).unwrap();
    let mut group = c.benchmark_group("other");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    group.throughput(Throughput::Elements(p.len() as u64));
    group.bench_function("parametric_tree_12", |b| {
        b.iter(|| parametric.derive(black_box(12), 0, &limits).unwrap())
    });
    group.throughput(Throughput::Elements(s.len() as u64));
    group.bench_function("stochastic_bush_5", |b| {
        b.iter(|| stochastic.derive(black_box(5), 7, &limits).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
