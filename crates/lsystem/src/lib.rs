//! L-systems and grammars: deterministic, stochastic, parametric and context-sensitive
//! L-systems with a text syntax, a 3D turtle that turns module strings into branch segments
//! and leaves, and a weighted symbol-rewriting shape grammar.
//!
//! Owns: module strings ([`LString`]), the expression language of parametric rules, the
//! L-system syntax and parallel rewriting ([`LSystem`]), turtle interpretation
//! ([`interpret`]) and the shape grammar ([`ShapeGrammar`]).
//!
//! Must never: do I/O, read clocks, touch Luau or the DOM, or let output depend on hash-map
//! iteration order. The same text, seed and limits give the same string and geometry on
//! every run and platform; randomness comes only from `procmodel_base::Pcg32` streams seeded
//! by `derive_seed`.
//!
//! # L-system text syntax
//!
//! ```text
//! # comment (to the end of the line)
//! define R = 1.456                       # a named constant (expressions of earlier ones)
//! axiom: A(1) F(R*2)                      # modules; parameters are constant expressions
//! ignore: +-&^                            # symbols skipped when matching context
//! A(x) : x > 1 -> F(x*0.5)[+A(x/2)]       # parametric production with a condition
//! F -> (0.33) F[+F]F                      # weighted (stochastic) alternative
//! a < b > c -> d                          # context-sensitive (left < strict > right)
//! ```
//!
//! Symbols are single characters other than whitespace, ASCII digits and `( ) < > : , #`.
//! Whitespace between modules is ignored; an empty successor deletes the module.
//! Expressions: numbers, parameter and constant names, `+ - * / ^`, comparisons
//! `== != < <= > >=`, `&& || !` and parentheses. See [`LSystem`] for rewriting semantics
//! and [`interpret`] for the turtle alphabet.
//!
//! ```
//! use procmodel_lsystem::{LSystem, Limits};
//! let algae = LSystem::parse("axiom: A\nA -> AB\nB -> A").unwrap();
//! let s = algae.derive(5, 0, &Limits::default()).unwrap();
//! assert_eq!(s.to_string(), "ABAABABAABAAB");
//! ```

mod error;
mod expr;
mod grammar;
mod lsystem;
mod module;
mod syntax;
mod turtle;

pub use error::{GrammarError, ParseError, RewriteError, TurtleError};
pub use grammar::{Expansion, GrammarConfig, Node, ShapeGrammar};
pub use lsystem::{LSystem, Limits};
pub use module::{LString, Module};
pub use turtle::{Leaf, Segment, TurtleConfig, TurtleOutput, interpret};
