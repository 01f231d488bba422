//! Error types; messages are lower-case and name the line, column, rule or limit at fault.

use thiserror::Error;

/// A syntax error in L-system or grammar text. `line` and `column` are 1-based; the column
/// counts characters.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based character column.
    pub column: usize,
    /// What was wrong, lower-case.
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(line: usize, column: usize, message: impl Into<String>) -> Self {
        ParseError {
            line,
            column,
            message: message.into(),
        }
    }
}

/// A failure while rewriting.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum RewriteError {
    /// The string grew past a configured limit; nothing larger was allocated.
    #[error("limit {limit} = {max} exceeded in iteration {iteration}")]
    LimitExceeded {
        /// The name of the field of [`crate::Limits`] that was exceeded.
        limit: &'static str,
        /// Its value.
        max: usize,
        /// 1-based iteration that would have exceeded it.
        iteration: u32,
    },
    /// A successor parameter or a weight evaluated to NaN or infinity.
    #[error(
        "production on line {line} produced a non-finite value {value} for {what} in iteration {iteration}"
    )]
    NonFinite {
        /// Line of the production in the source text (0 for productions built in code).
        line: usize,
        /// What was evaluated (e.g. "parameter 1 of 'F'" or "the weight").
        what: String,
        /// The value.
        value: f64,
        /// 1-based iteration.
        iteration: u32,
    },
    /// A weight evaluated below zero.
    #[error("production on line {line} has negative weight {value} in iteration {iteration}")]
    NegativeWeight {
        /// Line of the production.
        line: usize,
        /// The weight.
        value: f64,
        /// 1-based iteration.
        iteration: u32,
    },
}

/// A failure while interpreting a string with the turtle.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum TurtleError {
    /// A `]` with no open `[`.
    #[error("']' at module {index} has no matching '['")]
    UnbalancedPop {
        /// 0-based module index.
        index: usize,
    },
    /// A parameter or configuration value that is NaN or infinite.
    #[error("non-finite value {value} for {what} at module {index}")]
    NonFinite {
        /// What the value was for.
        what: &'static str,
        /// The value.
        value: f64,
        /// 0-based module index.
        index: usize,
    },
}

/// A failure while expanding a shape grammar.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GrammarError {
    /// The start symbol is not defined and no rule exists.
    #[error("grammar has no rules and no start symbol")]
    Empty,
    /// The tree grew past `max_nodes`.
    #[error("limit max_nodes = {max} exceeded while expanding {symbol:?} at {path}")]
    TooManyNodes {
        /// The limit.
        max: usize,
        /// Symbol being expanded.
        symbol: String,
        /// Its path in the tree.
        path: String,
    },
}
