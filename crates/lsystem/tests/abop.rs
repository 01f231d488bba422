//! Classic examples from *The Algorithmic Beauty of Plants* with known string lengths,
//! derivations and turtle geometry.

use glam::DVec3;
use procmodel_lsystem::{LString, LSystem, Limits, TurtleConfig, interpret};

fn lengths(text: &str, max_n: u32) -> Vec<usize> {
    let system = LSystem::parse(text).unwrap();
    system
        .derivations(max_n, 0, &Limits::default())
        .unwrap()
        .iter()
        .map(LString::len)
        .collect()
}

const KOCH: &str = "axiom: F\nF -> F+F-F-F+F";
const PLANT: &str = "axiom: X\nX -> F+[[X]-X]-F[-X]+X\nF -> FF";
const SIERPINSKI: &str = "axiom: F-G-G\nF -> F-G+F+G-F\nG -> GG";
const ALGAE: &str = "axiom: A\nA -> AB\nB -> A";

#[test]
fn koch_curve_lengths_are_2_5n_minus_1() {
    let got = lengths(KOCH, 5);
    let want: Vec<usize> = (0..=5).map(|n| 2 * 5usize.pow(n) - 1).collect();
    assert_eq!(got, want);
    assert_eq!(got, [1, 9, 49, 249, 1249, 6249]);
}

#[test]
fn fractal_plant_lengths() {
    // X count 4^n, F count 2^n (2^n - 1), 11 other symbols per rewritten X.
    let got = lengths(PLANT, 7);
    let want: Vec<usize> = (0..=7)
        .map(|n| {
            let (x, f) = (4usize.pow(n), 2usize.pow(n) * (2usize.pow(n) - 1));
            x + f + 11 * (x - 1) / 3
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(got, [1, 17, 83, 351, 1431, 5767, 23143, 92711]);
    let one = LSystem::parse(PLANT)
        .unwrap()
        .derive(1, 0, &Limits::default())
        .unwrap();
    assert_eq!(one.to_string(), "F+[[X]-X]-F[-X]+X");
}

#[test]
fn sierpinski_triangle_lengths_are_5_3n() {
    assert_eq!(lengths(SIERPINSKI, 6), [5, 15, 45, 135, 405, 1215, 3645]);
}

#[test]
fn algae_lengths_are_fibonacci() {
    let got = lengths(ALGAE, 20);
    let mut fib = vec![1usize, 2];
    while fib.len() < 21 {
        fib.push(fib[fib.len() - 1] + fib[fib.len() - 2]);
    }
    assert_eq!(got, fib);
    assert_eq!(got[20], 17711);
    let s = LSystem::parse(ALGAE)
        .unwrap()
        .derive(4, 0, &Limits::default())
        .unwrap();
    assert_eq!(s.to_string(), "ABAABABA");
}

#[test]
fn abop_parametric_derivation() {
    // ABOP §1.10.1, the derivation of figure 1.31.
    let system = LSystem::parse(
        "\
axiom: B(2)A(4,4)
A(x,y) : y <= 3 -> A(x*2, x+y)
A(x,y) : y > 3 -> B(x)A(x/y, 0)
B(x) : x < 1 -> C
B(x) : x >= 1 -> B(x-1)
",
    )
    .unwrap();
    let strings: Vec<String> = system
        .derivations(4, 0, &Limits::default())
        .unwrap()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        strings,
        [
            "B(2)A(4,4)",
            "B(1)B(4)A(1,0)",
            "B(0)B(3)A(2,1)",
            "CB(2)A(4,3)",
            "CB(1)A(8,7)"
        ]
    );
}

#[test]
fn abop_parametric_tree_with_constants() {
    // A branching structure in the style of ABOP figure 2.6, with defined constants.
    let system = LSystem::parse(
        "\
define R = 1.456
axiom: A(1)
A(s) -> F(s)[+A(s/R)][-A(s/R)]
",
    )
    .unwrap();
    let s = system.derive(2, 0, &Limits::default()).unwrap();
    let r = 1.456f64;
    let expected = format!(
        "F(1)[+F({a})[+A({b})][-A({b})]][-F({a})[+A({b})][-A({b})]]",
        a = 1.0 / r,
        b = 1.0 / r / r
    );
    assert_eq!(s.to_string(), expected);
}

#[test]
fn context_sensitive_signal_propagation() {
    // ABOP §1.8: a signal b travels right through a string of a's.
    let system = LSystem::parse("axiom: baaaa\nb < a -> b\nb -> a").unwrap();
    let strings: Vec<String> = system
        .derivations(5, 0, &Limits::default())
        .unwrap()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        strings,
        ["baaaa", "abaaa", "aabaa", "aaaba", "aaaab", "aaaaa"]
    );
}

fn rewrite_once(text: &str) -> String {
    LSystem::parse(text)
        .unwrap()
        .derive(1, 0, &Limits::default())
        .unwrap()
        .to_string()
}

#[test]
fn context_in_bracketed_strings_and_ignore_set() {
    // Walking left skips a whole side branch; walking right skips branches.
    assert_eq!(rewrite_once("axiom: A[B]C\nA < C -> X"), "A[B]X");
    assert_eq!(rewrite_once("axiom: A[B]C\nA > C -> Y"), "Y[B]C");
    // Inside a branch the left context is the parent.
    assert_eq!(rewrite_once("axiom: A[B]C\nA < B -> Z"), "A[Z]C");
    // A right context never leaves the branch.
    assert_eq!(rewrite_once("axiom: A[B]C\nB > C -> Z"), "A[B]C");
    // Ignored symbols are transparent.
    assert_eq!(rewrite_once("axiom: A+B\nA < B -> Z"), "A+B");
    assert_eq!(rewrite_once("axiom: A+B\nignore: +\nA < B -> Z"), "A+Z");
    // Parametric context with a condition over context and strict parameters.
    assert_eq!(
        rewrite_once("axiom: A(1)B(2)C(3)\nA(a) < B(b) > C(c) : a + c == 4 -> B(a+b+c)"),
        "A(1)B(6)C(3)"
    );
    assert_eq!(
        rewrite_once("axiom: A(1)B(2)C(3)\nA(a) < B(b) > C(c) : a + c == 5 -> B(0)"),
        "A(1)B(2)C(3)"
    );
    // Two-module contexts.
    assert_eq!(rewrite_once("axiom: abc d\na b < c > d -> X"), "abXd");
    assert_eq!(
        rewrite_once(
            "axiom: A(1)B(2)C(3)D(4)E(5)\nA(a) B(b) < C(c) > D(d) E(e) -> X(a, b, c, d, e)"
        ),
        "A(1)B(2)X(1,2,3,4,5)D(4)E(5)"
    );
}

#[test]
fn parameter_counts_must_match() {
    assert_eq!(rewrite_once("axiom: F F(1)\nF -> G"), "GF(1)");
    assert_eq!(rewrite_once("axiom: F F(1)\nF(x) -> G(x+1)"), "FG(2)");
    // The first applicable production wins; empty successors delete.
    assert_eq!(rewrite_once("axiom: ABA\nA -> \nA -> C"), "B");
}

#[test]
fn koch_turtle_endpoints_are_exact() {
    let system = LSystem::parse(KOCH).unwrap();
    for n in 0..4u32 {
        let s = system.derive(n, 0, &Limits::default()).unwrap();
        let out = interpret(&s, &TurtleConfig::default()).unwrap();
        assert_eq!(out.segments.len(), 5usize.pow(n));
        let end = out.segments.last().unwrap().end;
        assert_eq!(end, DVec3::new(0.0, 3f64.powi(n as i32), 0.0), "n = {n}");
    }
    // Second-generation golden points.
    let s = system.derive(1, 0, &Limits::default()).unwrap();
    let out = interpret(&s, &TurtleConfig::default()).unwrap();
    let ends: Vec<DVec3> = out.segments.iter().map(|g| g.end).collect();
    assert_eq!(
        ends,
        [
            DVec3::new(0.0, 1.0, 0.0),
            DVec3::new(-1.0, 1.0, 0.0),
            DVec3::new(-1.0, 2.0, 0.0),
            DVec3::new(0.0, 2.0, 0.0),
            DVec3::new(0.0, 3.0, 0.0),
        ]
    );
}

#[test]
fn sierpinski_turtle_closes() {
    let system = LSystem::parse(SIERPINSKI).unwrap();
    let config = TurtleConfig {
        angle_degrees: 120.0,
        draw_symbols: vec!['F', 'G'],
        ..TurtleConfig::default()
    };
    for n in 0..5u32 {
        let s = system.derive(n, 0, &Limits::default()).unwrap();
        let out = interpret(&s, &config).unwrap();
        assert_eq!(out.segments.len(), 3usize.pow(n + 1));
        let end = out.segments.last().unwrap().end;
        assert!(end.length() < 1e-9, "n = {n}: {end}");
        // All points lie in the XY plane, inside the outer triangle's bounding box.
        let side = 2f64.powi(n as i32);
        for g in &out.segments {
            assert_eq!(g.end.z, 0.0);
            assert!(g.end.y >= -1e-9 && g.end.y <= side + 1e-9);
        }
    }
}

fn close(a: DVec3, b: DVec3) -> bool {
    (a - b).length() < 1e-9
}

#[test]
fn fractal_plant_turtle_golden() {
    let s = LSystem::parse(PLANT)
        .unwrap()
        .derive(5, 0, &Limits::default())
        .unwrap();
    let config = TurtleConfig {
        angle_degrees: 25.0,
        ..TurtleConfig::default()
    };
    let out = interpret(&s, &config).unwrap();
    // One segment per F: 2^5 (2^5 - 1).
    assert_eq!(out.segments.len(), 992);
    assert!(out.leaves.is_empty());
    assert_eq!(out.segments.iter().map(|g| g.depth).max(), Some(8));
    let last = out.segments.last().unwrap().end;
    assert!(
        close(last, DVec3::new(-18.7235665439837, 52.331205295154945, 0.0)),
        "{last}"
    );
    let top = out
        .segments
        .iter()
        .map(|g| g.end.y)
        .fold(f64::MIN, f64::max);
    assert!((top - 60.126155740733).abs() < 1e-9, "{top}");
    assert!(
        out.segments
            .iter()
            .all(|g| g.end.z == 0.0 && g.width == 1.0)
    );
}

#[test]
fn parametric_3d_tree_with_leaves() {
    let s = LSystem::parse(
        "\
define R = 0.7
axiom: F(10)A(1)
A(w) -> !(w)[&(30)F(5)L A(w*R)]/(137.5)[&(30)F(5)L A(w*R)]
",
    )
    .unwrap()
    .derive(5, 0, &Limits::default())
    .unwrap();
    let out = interpret(&s, &TurtleConfig::default()).unwrap();
    assert_eq!(out.segments.len(), 63);
    assert_eq!(out.leaves.len(), 62);
    assert_eq!(out.segments[0].end, DVec3::new(0.0, 10.0, 0.0));
    let last = out.segments.last().unwrap();
    assert!(close(
        last.start,
        DVec3::new(2.715355494292437, 28.07911124726811, 6.1129104197325415)
    ));
    assert!(close(
        last.end,
        DVec3::new(2.2175095837439733, 33.04355184676761, 6.439221595439363)
    ));
    assert_eq!(last.depth, 5);
    assert!((last.width - 0.7f64.powi(4)).abs() < 1e-15);
    // The fourth leaf hangs after four 30° pitches in one plane: heading rotated by 120°.
    let leaf = out.leaves[3];
    assert_eq!(leaf.depth, 4);
    let (s30, c30) = (0.5, 3f64.sqrt() / 2.0);
    assert!(close(
        leaf.position,
        DVec3::new(0.0, 10.0 + 5.0 * c30, -5.0 * (1.0 + 2.0 * c30 + s30))
    ));
    assert!(close(
        leaf.orientation * DVec3::Y,
        DVec3::new(0.0, -0.5, -c30)
    ));
    assert!(close(
        leaf.orientation * DVec3::Z,
        DVec3::new(0.0, c30, -0.5)
    ));
}
