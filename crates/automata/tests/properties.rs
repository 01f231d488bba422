//! Property tests: after connecting, every cave is fully connected, and runs are
//! deterministic, over random seeds, sizes, fill probabilities and rules.

use procmodel_automata::{
    CaveConfig, ConnectConfig, EdgePolicy, Grid, Regions, Rule, check_connected, connect,
    random_fill, run,
};
use proptest::prelude::*;

fn rule() -> impl Strategy<Value = Rule> {
    (0u32..512, 0u32..512).prop_map(|(b, s)| {
        let counts = |m: u32| (0..9).filter(|n| m >> n & 1 == 1).collect::<Vec<u32>>();
        Rule::from_counts(&counts(b), &counts(s))
    })
}

fn edge() -> impl Strategy<Value = EdgePolicy> {
    prop_oneof![
        Just(EdgePolicy::Wall),
        Just(EdgePolicy::Floor),
        Just(EdgePolicy::Wrap)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn connected_after_run(
        seed in any::<u64>(),
        width in 1usize..60,
        height in 1usize..60,
        fill in 0.0f64..=1.0,
        rule in rule(),
        edge in edge(),
        iterations in 0u32..6,
        min_region_size in 0usize..20,
        corridor_width in 1usize..4,
    ) {
        let config = CaveConfig {
            width, height, fill_probability: fill, seed, rule, iterations, edge,
            min_region_size, connect: true, corridor_width,
        };
        let a = run(&config).unwrap();
        prop_assert!(check_connected(&a.grid).is_ok());
        prop_assert!(Regions::label(&a.grid).count() <= 1);
        // A spanning tree over the regions that existed before connection.
        let b = run(&config).unwrap();
        prop_assert_eq!(&a, &b);
    }

    #[test]
    fn connect_uses_exactly_regions_minus_one_corridors(
        seed in any::<u64>(),
        width in 1usize..80,
        height in 1usize..80,
        fill in 0.3f64..0.8,
    ) {
        let mut grid: Grid = random_fill(width, height, fill, seed).unwrap();
        let regions = Regions::label(&grid).count();
        let floor_before = grid.floor_count();
        let corridors = connect(&mut grid, &ConnectConfig::default()).unwrap();
        prop_assert_eq!(corridors.len(), regions.saturating_sub(1));
        prop_assert!(grid.floor_count() >= floor_before);
        prop_assert!(check_connected(&grid).is_ok());
    }
}

/// Total weight of a minimum spanning tree over brute-force closest-pair Manhattan distances.
fn brute_force_mst_weight(grid: &Grid) -> usize {
    let regions = Regions::label(grid);
    let k = regions.count();
    let w = grid.width();
    let mut cells: Vec<Vec<(usize, usize)>> = vec![Vec::new(); k];
    for (i, &l) in regions.labels().iter().enumerate() {
        if l != u32::MAX {
            cells[l as usize].push((i % w, i / w));
        }
    }
    let d = |a: usize, b: usize| {
        let mut best = usize::MAX;
        for p in &cells[a] {
            for q in &cells[b] {
                best = best.min(p.0.abs_diff(q.0) + p.1.abs_diff(q.1));
            }
        }
        best
    };
    // Prim's algorithm.
    let mut in_tree = vec![false; k];
    let mut dist = vec![usize::MAX; k];
    let mut total = 0;
    if k == 0 {
        return 0;
    }
    dist[0] = 0;
    for _ in 0..k {
        let u = (0..k)
            .filter(|&v| !in_tree[v])
            .min_by_key(|&v| dist[v])
            .unwrap();
        in_tree[u] = true;
        total += dist[u];
        for v in 0..k {
            if !in_tree[v] {
                dist[v] = dist[v].min(d(u, v));
            }
        }
    }
    total
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn corridors_form_a_minimum_spanning_tree(
        seed in any::<u64>(),
        width in 1usize..24,
        height in 1usize..24,
        fill in 0.4f64..0.8,
    ) {
        let mut grid = random_fill(width, height, fill, seed).unwrap();
        let expected = brute_force_mst_weight(&grid);
        let corridors = connect(&mut grid, &ConnectConfig::default()).unwrap();
        let total: usize = corridors.iter().map(|c| c.length()).sum();
        prop_assert_eq!(total, expected);
    }
}

/// The definition of one step, cell by cell, for comparison with the optimised kernel.
fn reference_step(grid: &Grid, rule: &Rule, edge: EdgePolicy) -> Grid {
    let (w, h) = (grid.width() as i64, grid.height() as i64);
    let mut out = grid.clone();
    for y in 0..h {
        for x in 0..w {
            let mut n = 0;
            for dy in -1..=1 {
                for dx in -1..=1 {
                    if (dx, dy) == (0, 0) {
                        continue;
                    }
                    let (nx, ny) = (x + dx, y + dy);
                    let wall = if (0..w).contains(&nx) && (0..h).contains(&ny) {
                        grid.is_wall(nx as usize, ny as usize)
                    } else {
                        match edge {
                            EdgePolicy::Wall => true,
                            EdgePolicy::Floor => false,
                            EdgePolicy::Wrap => {
                                grid.is_wall(nx.rem_euclid(w) as usize, ny.rem_euclid(h) as usize)
                            }
                        }
                    };
                    n += u32::from(wall);
                }
            }
            let next = rule.next(grid.is_wall(x as usize, y as usize), n);
            out.set(x as usize, y as usize, u8::from(next));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn step_matches_the_reference_definition(
        seed in any::<u64>(),
        width in 1usize..20,
        height in 1usize..20,
        fill in 0.0f64..=1.0,
        rule in rule(),
        edge in edge(),
    ) {
        let grid = random_fill(width, height, fill, seed).unwrap();
        let mut automaton = procmodel_automata::Automaton::new(grid.clone(), rule, edge);
        let mut expected = grid;
        for _ in 0..3 {
            let before = automaton.grid().clone();
            let changed = automaton.step();
            expected = reference_step(&expected, &rule, edge);
            prop_assert_eq!(automaton.grid(), &expected);
            let diff = before.cells().iter().zip(expected.cells()).filter(|(a, b)| a != b).count();
            prop_assert_eq!(changed, diff);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn connected_after_connect3(
        seed in any::<u64>(),
        w in 1usize..14,
        h in 1usize..14,
        d in 1usize..14,
        fill in 0.3f64..0.8,
        steps in 0usize..3,
        corridor_width in 1usize..3,
    ) {
        use procmodel_automata::{Automaton3, Regions3, check_connected3, connect3, random_fill3};
        let build = || {
            let grid = random_fill3(w, h, d, fill, seed).unwrap();
            let rule = Rule::parse_3d("B13-26/S13-26").unwrap();
            let mut a = Automaton3::new(grid, rule, EdgePolicy::Wall);
            for _ in 0..steps {
                a.step();
            }
            let mut grid = a.into_grid();
            let regions = Regions3::label(&grid).count();
            let corridors = connect3(&mut grid, &ConnectConfig { corridor_width }).unwrap();
            (grid, regions, corridors)
        };
        let (grid, regions, corridors) = build();
        prop_assert_eq!(corridors.len(), regions.saturating_sub(1));
        prop_assert!(check_connected3(&grid).is_ok());
        prop_assert!(Regions3::label(&grid).count() <= 1);
        let again = build();
        prop_assert_eq!(&grid, &again.0);
        prop_assert_eq!(&corridors, &again.2);
    }
}
