//! Error cases: syntax errors with line and column, limits, non-finite values.

use procmodel_lsystem::{LString, LSystem, Limits, RewriteError};

fn check(text: &str, expected: &str) {
    let err = LSystem::parse(text).unwrap_err();
    assert_eq!(err.to_string(), expected, "for {text:?}");
}

#[test]
fn syntax_errors_name_line_and_column() {
    check("F -> FF", "line 1, column 1: missing 'axiom:' line");
    check(
        "axiom: F\nF => FF",
        "line 2, column 1: expected '->' in production (or a line starting with 'axiom:', 'ignore:' or 'define')",
    );
    check(
        "axiom: F\nF(x -> F",
        "line 2, column 2: unclosed '(' after 'F'",
    );
    check(
        "axiom: F\nF -> F(x)",
        "line 2, column 8: unknown name \"x\"",
    );
    check(
        "axiom: F\nF(x) -> F(x*)",
        "line 2, column 13: expected a number, a name or '('",
    );
    check(
        "axiom: F2",
        "line 1, column 9: unexpected '2' (digits are not symbols; parameters go in parentheses, e.g. F(2))",
    );
    check(
        "axiom: F\nAB -> C",
        "line 2, column 1: the predecessor must be exactly one module (found 2); use '<' and '>' for context",
    );
    check(
        "axiom: F\n -> C",
        "line 2, column 2: the predecessor must be exactly one module (found 0); use '<' and '>' for context",
    );
    check(
        "axiom: F\nA(x, x) -> C",
        "line 2, column 6: parameter \"x\" is bound twice",
    );
    check(
        "axiom: F\nA(1) -> C",
        "line 2, column 3: expected a parameter name, found \"1\"",
    );
    check(
        "axiom: F\n < A -> C",
        "line 2, column 2: empty left context before '<'",
    );
    check(
        "axiom: F\nA > -> C",
        "line 2, column 3: empty right context after '>'",
    );
    check(
        "axiom: F\n[ -> C",
        "line 2, column 1: brackets are not supported in a predecessor or its context",
    );
    check(
        "axiom: F\nA : x > 1 -> C",
        "line 2, column 5: unknown name \"x\"",
    );
    check(
        "axiom: F\nA -> (0.5 C",
        "line 2, column 6: unclosed '(' of the weight",
    );
    check(
        "axiom: F\naxiom: G",
        "line 2, column 1: second 'axiom:' line",
    );
    check(
        "ignore: (\naxiom: F",
        "line 1, column 9: '(' is not a symbol",
    );
    check(
        "define 2x = 1\naxiom: F",
        "line 1, column 8: expected a constant name after 'define'",
    );
    check(
        "define k 1\naxiom: F",
        "line 1, column 10: expected '=' after constant \"k\"",
    );
    check(
        "define k = 1/0\naxiom: F",
        "line 1, column 11: constant \"k\" is not finite (inf)",
    );
    check("axiom: F\nA -> B, C", "line 2, column 7: unexpected ','");
    check("axiom: (1)", "line 1, column 8: '(' must follow a symbol");
}

#[test]
fn comments_blank_lines_and_whitespace() {
    let system =
        LSystem::parse("# koch\n\n  axiom :  F  # start\nF -> F + F - F - F + F   # rule\n")
            .unwrap();
    assert_eq!(system.production_count(), 1);
    let s = system.derive(1, 0, &Limits::default()).unwrap();
    assert_eq!(s.to_string(), "F+F-F-F+F");
    assert_eq!(
        LString::parse("F(1, 2*3) [+A]").unwrap().to_string(),
        "F(1,6)[+A]"
    );
}

#[test]
fn limits_name_the_limit() {
    let algae = LSystem::parse("axiom: A\nA -> AB\nB -> A").unwrap();
    let limits = Limits {
        max_modules: 100,
        ..Limits::default()
    };
    // Lengths 89 at n = 9 and 144 at n = 10.
    assert!(algae.derive(9, 0, &limits).is_ok());
    let err = algae.derive(30, 0, &limits).unwrap_err();
    assert_eq!(
        err,
        RewriteError::LimitExceeded {
            limit: "max_modules",
            max: 100,
            iteration: 10
        }
    );
    assert_eq!(
        err.to_string(),
        "limit max_modules = 100 exceeded in iteration 10"
    );
    let param = LSystem::parse("axiom: A(1)\nA(x) -> A(x)A(x)").unwrap();
    let err = param
        .derive(
            20,
            0,
            &Limits {
                max_params: 1000,
                ..Limits::default()
            },
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "limit max_params = 1000 exceeded in iteration 10"
    );
}

#[test]
fn non_finite_and_negative_values_are_errors() {
    let s = LSystem::parse("axiom: A(0)\nA(x) -> A(1/x)").unwrap();
    assert_eq!(
        s.derive(1, 0, &Limits::default()).unwrap_err().to_string(),
        "production on line 2 produced a non-finite value inf for parameter 1 of 'A' in iteration 1"
    );
    let s = LSystem::parse("axiom: A(1)\nA(x) -> (x - 2) B").unwrap();
    assert_eq!(
        s.derive(1, 0, &Limits::default()).unwrap_err().to_string(),
        "production on line 2 has negative weight -1 in iteration 1"
    );
}
