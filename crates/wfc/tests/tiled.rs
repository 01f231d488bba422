//! Simple tiled model on every standard tile set (and its subsets from `samples.xml`), raw
//! neighbour rules honoured, 3D adjacency rules, determinism and contradiction reports.

mod common;

use common::{hash_patterns, load_tileset};
use procmodel_wfc::{
    Direction, GridShape, Rules, Solver, SolverConfig, TileSymmetry, TiledModel, WfcError,
    check_solution,
};

/// Every `<simpletiled>` entry of `samples.xml` (name, subset, size, periodic), duplicates
/// removed.
const ENTRIES: [(&str, Option<&str>, usize, bool); 19] = [
    ("Summer", None, 20, false),
    ("Castle", None, 50, false),
    ("Circuit", Some("Turnless"), 34, true),
    ("Knots", Some("Standard"), 24, true),
    ("Knots", Some("Dense"), 24, true),
    ("Knots", Some("Crossless"), 24, false),
    ("Knots", Some("TE"), 24, false),
    ("Knots", Some("T"), 24, false),
    ("Knots", Some("CL"), 24, false),
    ("Knots", Some("CE"), 24, true),
    ("Knots", Some("C"), 24, true),
    ("Knots", Some("Fabric"), 24, true),
    ("Knots", Some("Dense Fabric"), 24, true),
    ("Rooms", None, 30, false),
    ("Circles", None, 24, false),
    ("Circles", Some("Large Circles"), 24, false),
    ("Circles", Some("Large Circles and Solid"), 24, false),
    ("Circles", Some("No Solid"), 24, false),
    ("FloorPlan", None, 20, false),
];

#[test]
fn every_tileset_entry_solves_and_respects_adjacency() {
    for (name, subset, size, periodic) in ENTRIES {
        let set = load_tileset(name);
        let model = TiledModel::new(&set, subset).unwrap_or_else(|e| panic!("{name}: {e}"));
        for seed in 0..3 {
            let s = model
                .run(size, size, periodic, SolverConfig::with_seed(seed))
                .unwrap_or_else(|e| panic!("{name} {subset:?} seed {seed}: {e}"));
            assert_eq!(s.patterns.len(), size * size);
            assert_eq!(
                check_solution(model.rules(), &s),
                None,
                "{name} {subset:?} seed {seed}"
            );
        }
    }
}

#[test]
fn every_tileset_file_compiles_without_subset() {
    for name in [
        "Castle",
        "Circles",
        "Circuit",
        "FloorPlan",
        "Knots",
        "Rooms",
        "Summer",
    ] {
        let set = load_tileset(name);
        let model = TiledModel::new(&set, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected: usize = set.tiles.iter().map(|t| t.symmetry.cardinality()).sum();
        assert_eq!(model.rules().len(), expected, "{name}");
    }
}

/// Each raw `<neighbor left right>` pair is allowed horizontally, literally as written.
#[test]
fn raw_neighbour_pairs_are_allowed() {
    for name in ["Knots", "Summer", "Circuit", "Castle"] {
        let set = load_tileset(name);
        let model = TiledModel::new(&set, None).expect("model");
        let index = |(tile, rot): &(String, usize)| -> usize {
            let mut base = 0;
            for t in &set.tiles {
                if &t.name == tile {
                    break;
                }
                base += t.symmetry.cardinality();
            }
            // Orientation `rot` as the reference resolves it (rotations of an L/T tile are
            // its orientations in order; symmetric tiles fold them).
            let tile_sym = set.tiles.iter().find(|t| &t.name == tile).expect("tile");
            let fold = match tile_sym.symmetry {
                TileSymmetry::X => 0,
                TileSymmetry::I | TileSymmetry::Backslash => rot % 2,
                TileSymmetry::L | TileSymmetry::T => rot % 4,
                TileSymmetry::F => *rot,
            };
            base + fold
        };
        for rule in set
            .neighbors
            .iter()
            .filter(|r| r.left.1 < 4 && r.right.1 < 4)
        {
            let (l, r) = (index(&rule.left), index(&rule.right));
            assert!(
                model.rules().is_allowed(l, Direction::Right, r),
                "{name}: {} {} then {} {}",
                rule.left.0,
                rule.left.1,
                rule.right.0,
                rule.right.1
            );
            assert!(model.rules().is_allowed(r, Direction::Left, l));
        }
    }
}

#[test]
fn tiled_golden_and_deterministic() {
    let set = load_tileset("Knots");
    let model = TiledModel::new(&set, Some("Standard")).expect("model");
    let a = model
        .run(24, 24, true, SolverConfig::with_seed(9))
        .expect("run");
    let b = model
        .run(24, 24, true, SolverConfig::with_seed(9))
        .expect("run");
    assert_eq!(a, b);
    assert_eq!(hash_patterns(&a.patterns), 6746992582664382228);
    let names: Vec<&str> = a.patterns[..4]
        .iter()
        .map(|&p| model.name(p as usize))
        .collect();
    assert_eq!(names, ["empty 0", "corner 0", "line 0", "cross 0"]);
}

/// 3D: stacked terrain columns: stone under everything solid, grass only under air, air
/// only above grass or air; and a 3D pipe set needing 6-direction consistency.
#[test]
fn three_d_adjacency_rules_solve() {
    const AIR: usize = 0;
    const GRASS: usize = 1;
    const STONE: usize = 2;
    let mut pairs = Vec::new();
    for d in [
        Direction::Left,
        Direction::Right,
        Direction::Back,
        Direction::Front,
    ] {
        for a in 0..3 {
            for b in 0..3 {
                if a.max(b) - a.min(b) <= 1 {
                    pairs.push((a, d, b));
                }
            }
        }
    }
    // y grows downwards: `Down` of air is air or grass; of grass, stone; of stone, stone.
    pairs.push((AIR, Direction::Down, AIR));
    pairs.push((AIR, Direction::Down, GRASS));
    pairs.push((GRASS, Direction::Down, STONE));
    pairs.push((STONE, Direction::Down, STONE));
    let rules = Rules::from_adjacency(vec![3.0, 1.0, 2.0], 6, &pairs).expect("rules");
    let shape = GridShape::new_3d(10, 8, 10, false);
    let mut solver = Solver::new(&rules, shape, SolverConfig::with_seed(4)).expect("solver");
    for x in 0..10 {
        for z in 0..10 {
            solver
                .restrict(shape.index(x, 7, z), |p| p == STONE)
                .expect("restrict");
            solver
                .restrict(shape.index(x, 0, z), |p| p == AIR)
                .expect("restrict");
        }
    }
    let s = solver.run().expect("3d run");
    assert_eq!(check_solution(&rules, &s), None);
    assert!(s.patterns.contains(&(GRASS as u32)));
    let again = {
        let mut solver = Solver::new(&rules, shape, SolverConfig::with_seed(4)).expect("solver");
        for x in 0..10 {
            for z in 0..10 {
                solver
                    .restrict(shape.index(x, 7, z), |p| p == STONE)
                    .unwrap();
                solver.restrict(shape.index(x, 0, z), |p| p == AIR).unwrap();
            }
        }
        solver.run().expect("3d run")
    };
    assert_eq!(s, again);
}

/// A 2-colouring of an odd periodic cycle is impossible: the report names a cell, a pattern
/// and the neighbour that removed its last support.
#[test]
fn odd_cycle_is_unsatisfiable_with_a_located_report() {
    let pairs = [
        (0, Direction::Right, 1),
        (1, Direction::Right, 0),
        (0, Direction::Down, 0),
        (1, Direction::Down, 1),
    ];
    let rules = Rules::from_adjacency(vec![1.0, 1.0], 4, &pairs).expect("rules");
    let shape = GridShape::new_2d(3, 2, true);
    let mut solver = Solver::new(&rules, shape, SolverConfig::with_seed(1)).expect("solver");
    match solver.run() {
        Err(WfcError::Unsatisfiable(c)) => {
            assert!(c.cell[0] < 3 && c.cell[1] < 2 && c.cell[2] == 0, "{c}");
            assert!(c.pattern < 2);
            let (dir, at) = c.neighbour.expect("a neighbour caused it");
            assert!(matches!(dir, Direction::Left | Direction::Right), "{c}");
            assert_eq!(at[1], c.cell[1]);
        }
        other => panic!("expected unsatisfiable, got {other:?}"),
    }
}

#[test]
fn bad_rules_are_errors() {
    assert!(matches!(
        Rules::from_adjacency(vec![], 4, &[]),
        Err(WfcError::PatternCount { .. })
    ));
    assert!(matches!(
        Rules::from_adjacency(vec![1.0, f64::NAN], 4, &[]),
        Err(WfcError::BadWeight { index: 1, .. })
    ));
    assert!(matches!(
        Rules::from_adjacency(vec![1.0], 4, &[(0, Direction::Front, 0)]),
        Err(WfcError::BadDirection { .. })
    ));
    assert!(matches!(
        Rules::from_fn(vec![1.0, 1.0], 4, |d, a, b| d == Direction::Left
            && a == 0
            && b == 1),
        Err(WfcError::AsymmetricRule { .. })
    ));
    let set = load_tileset("Knots");
    assert!(matches!(
        TiledModel::new(&set, Some("Nope")),
        Err(WfcError::BadTileSet(_))
    ));
}
