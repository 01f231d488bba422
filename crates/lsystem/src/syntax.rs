//! The text syntax of L-systems, parsed with errors that give line and column.
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
//! Whitespace between modules is ignored. An empty successor deletes the module.

use std::collections::BTreeMap;

use crate::error::ParseError;
use crate::expr::{Expr, parse_expr};
use crate::lsystem::{LSystem, Pattern, Production, Template};
use crate::module::LString;

/// Whether `c` may be a module symbol.
pub(crate) fn is_symbol(c: char) -> bool {
    !c.is_whitespace()
        && !c.is_ascii_digit()
        && !matches!(c, '(' | ')' | '<' | '>' | ':' | ',' | '#')
}

/// One module as written: its symbol, column index, and the span of its parameter list
/// (`open` and `close` are the indices of the parentheses).
struct RawModule {
    symbol: char,
    at: usize,
    parens: Option<(usize, usize)>,
}

pub(crate) fn parse_lsystem(text: &str) -> Result<LSystem, ParseError> {
    let mut constants: BTreeMap<String, f64> = BTreeMap::new();
    let mut axiom: Option<LString> = None;
    let mut ignore = Vec::new();
    let mut productions = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let mut chars: Vec<char> = raw.chars().collect();
        if let Some(hash) = chars.iter().position(|&c| c == '#') {
            chars.truncate(hash);
        }
        let Some(start) = chars.iter().position(|c| !c.is_whitespace()) else {
            continue;
        };
        let end = chars.len();
        if let Some(body) = keyword(&chars, start, "axiom") {
            if axiom.is_some() {
                return Err(ParseError::new(line, start + 1, "second 'axiom:' line"));
            }
            let consts = |name: &str| constants.get(name).map(|&v| Expr::Num(v));
            axiom = Some(parse_actual_modules(&chars, body, end, line, &consts)?);
        } else if let Some(body) = keyword(&chars, start, "ignore") {
            for (k, &c) in chars.iter().enumerate().take(end).skip(body) {
                if c.is_whitespace() {
                    continue;
                }
                if !is_symbol(c) {
                    return Err(ParseError::new(
                        line,
                        k + 1,
                        format!("{c:?} is not a symbol"),
                    ));
                }
                if !ignore.contains(&c) {
                    ignore.push(c);
                }
            }
        } else if word_at(&chars, start, "define") {
            let (name, value) = parse_define(&chars, start + 6, end, line, &constants)?;
            constants.insert(name, value);
        } else {
            productions.push(parse_production(&chars, start, end, line, &constants)?);
        }
    }
    let axiom = axiom.ok_or_else(|| ParseError::new(1, 1, "missing 'axiom:' line"))?;
    Ok(LSystem::from_parts(axiom, productions, ignore))
}

/// If `word` followed by optional spaces and `:` starts at `start`, the index after `:`.
fn keyword(chars: &[char], start: usize, word: &str) -> Option<usize> {
    if !word_at(chars, start, word) {
        return None;
    }
    let mut k = start + word.len();
    while k < chars.len() && chars[k].is_whitespace() {
        k += 1;
    }
    (chars.get(k) == Some(&':')).then_some(k + 1)
}

fn word_at(chars: &[char], start: usize, word: &str) -> bool {
    let n = word.chars().count();
    chars.len() >= start + n
        && word.chars().zip(&chars[start..]).all(|(a, &b)| a == b)
        && chars
            .get(start + n)
            .is_none_or(|c| !(c.is_alphanumeric() || *c == '_'))
}

fn parse_define(
    chars: &[char],
    mut k: usize,
    end: usize,
    line: usize,
    constants: &BTreeMap<String, f64>,
) -> Result<(String, f64), ParseError> {
    while k < end && chars[k].is_whitespace() {
        k += 1;
    }
    let name_start = k;
    while k < end && (chars[k].is_alphanumeric() || chars[k] == '_') {
        k += 1;
    }
    if k == name_start || chars[name_start].is_ascii_digit() {
        return Err(ParseError::new(
            line,
            name_start + 1,
            "expected a constant name after 'define'",
        ));
    }
    let name: String = chars[name_start..k].iter().collect();
    while k < end && chars[k].is_whitespace() {
        k += 1;
    }
    if chars.get(k) != Some(&'=') || k >= end {
        return Err(ParseError::new(
            line,
            k + 1,
            format!("expected '=' after constant {name:?}"),
        ));
    }
    let consts = |n: &str| constants.get(n).map(|&v| Expr::Num(v));
    let value = parse_expr(chars, k + 1, end, line, &consts)?.eval(&[]);
    if !value.is_finite() {
        return Err(ParseError::new(
            line,
            k + 2,
            format!("constant {name:?} is not finite ({value})"),
        ));
    }
    Ok((name, value))
}

/// Index of the first `needle` at parenthesis depth 0 in `chars[start..end]`.
fn find_top(chars: &[char], start: usize, end: usize, needle: &[char]) -> Option<usize> {
    let mut depth = 0i32;
    let mut k = start;
    while k < end {
        match chars[k] {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 && chars[k..end].starts_with(needle) => return Some(k),
            _ => {}
        }
        k += 1;
    }
    None
}

/// Index of the `)` matching the `(` at `open`, if any before `end`.
fn matching_paren(chars: &[char], open: usize, end: usize) -> Option<usize> {
    let mut depth = 0;
    for (k, &c) in chars.iter().enumerate().take(end).skip(open) {
        if c == '(' {
            depth += 1;
        } else if c == ')' {
            depth -= 1;
            if depth == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// Index of the first `(` in `chars[start..end]` that is never closed.
fn unclosed_paren(chars: &[char], start: usize, end: usize) -> Option<usize> {
    let mut stack = Vec::new();
    for (k, &c) in chars.iter().enumerate().take(end).skip(start) {
        if c == '(' {
            stack.push(k);
        } else if c == ')' {
            stack.pop();
        }
    }
    stack.first().copied()
}

/// Splits modules out of `chars[start..end]`.
fn raw_modules(
    chars: &[char],
    start: usize,
    end: usize,
    line: usize,
) -> Result<Vec<RawModule>, ParseError> {
    let mut out: Vec<RawModule> = Vec::new();
    let mut k = start;
    while k < end {
        let c = chars[k];
        if c.is_whitespace() {
            k += 1;
            continue;
        }
        if c == '(' {
            let Some(last) = out.last_mut().filter(|m| m.parens.is_none()) else {
                return Err(ParseError::new(line, k + 1, "'(' must follow a symbol"));
            };
            let Some(close) = matching_paren(chars, k, end) else {
                return Err(ParseError::new(
                    line,
                    k + 1,
                    format!("unclosed '(' after {:?}", last.symbol),
                ));
            };
            last.parens = Some((k, close));
            k = close + 1;
            continue;
        }
        if !is_symbol(c) {
            let hint = if c.is_ascii_digit() {
                " (digits are not symbols; parameters go in parentheses, e.g. F(2))"
            } else {
                ""
            };
            return Err(ParseError::new(
                line,
                k + 1,
                format!("unexpected {c:?}{hint}"),
            ));
        }
        out.push(RawModule {
            symbol: c,
            at: k,
            parens: None,
        });
        k += 1;
    }
    Ok(out)
}

/// The comma-separated pieces between `open` and `close` (exclusive), at depth 0.
/// `F()` has no pieces.
fn pieces(chars: &[char], open: usize, close: usize) -> Vec<(usize, usize)> {
    if chars[open + 1..close].iter().all(|c| c.is_whitespace()) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut depth = 0;
    let mut from = open + 1;
    for (k, &c) in chars.iter().enumerate().take(close).skip(open + 1) {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push((from, k));
                from = k + 1;
            }
            _ => {}
        }
    }
    out.push((from, close));
    out
}

/// Modules whose parameters are expressions over `resolve` (constants, or formals).
fn parse_templates(
    chars: &[char],
    start: usize,
    end: usize,
    line: usize,
    resolve: &dyn Fn(&str) -> Option<Expr>,
) -> Result<Vec<Template>, ParseError> {
    raw_modules(chars, start, end, line)?
        .into_iter()
        .map(|m| {
            let args = match m.parens {
                None => Vec::new(),
                Some((open, close)) => pieces(chars, open, close)
                    .into_iter()
                    .map(|(a, b)| parse_expr(chars, a, b, line, resolve))
                    .collect::<Result<_, _>>()?,
            };
            Ok(Template {
                symbol: m.symbol,
                args,
            })
        })
        .collect()
}

/// Modules with constant parameters (the axiom).
pub(crate) fn parse_actual_modules(
    chars: &[char],
    start: usize,
    end: usize,
    line: usize,
    resolve: &dyn Fn(&str) -> Option<Expr>,
) -> Result<LString, ParseError> {
    let mut s = LString::new();
    let mut args = Vec::new();
    for t in parse_templates(chars, start, end, line, resolve)? {
        args.clear();
        args.extend(t.args.iter().map(|e| e.eval(&[])));
        if let Some(bad) = args.iter().find(|v| !v.is_finite()) {
            return Err(ParseError::new(
                line,
                start + 1,
                format!("parameter of {:?} is not finite ({bad})", t.symbol),
            ));
        }
        s.push(t.symbol, &args);
    }
    Ok(s)
}

/// Predecessor modules with formal parameter names; names are appended to `formals`.
fn parse_patterns(
    chars: &[char],
    start: usize,
    end: usize,
    line: usize,
    formals: &mut Vec<String>,
) -> Result<Vec<Pattern>, ParseError> {
    let mut out = Vec::new();
    for m in raw_modules(chars, start, end, line)? {
        if m.symbol == '[' || m.symbol == ']' {
            return Err(ParseError::new(
                line,
                m.at + 1,
                "brackets are not supported in a predecessor or its context",
            ));
        }
        let mut arity = 0;
        if let Some((open, close)) = m.parens {
            for (a, b) in pieces(chars, open, close) {
                let name: String = chars[a..b].iter().collect::<String>().trim().to_owned();
                let col = a + chars[a..b].iter().take_while(|c| c.is_whitespace()).count() + 1;
                let valid = name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
                    && name.chars().all(|c| c.is_alphanumeric() || c == '_');
                if !valid {
                    return Err(ParseError::new(
                        line,
                        col,
                        format!("expected a parameter name, found {name:?}"),
                    ));
                }
                if formals.contains(&name) {
                    return Err(ParseError::new(
                        line,
                        col,
                        format!("parameter {name:?} is bound twice"),
                    ));
                }
                formals.push(name);
                arity += 1;
            }
        }
        out.push(Pattern {
            symbol: m.symbol,
            arity,
        });
    }
    Ok(out)
}

fn parse_production(
    chars: &[char],
    start: usize,
    end: usize,
    line: usize,
    constants: &BTreeMap<String, f64>,
) -> Result<Production, ParseError> {
    let arrow = find_top(chars, start, end, &['-', '>']).ok_or_else(|| {
        if let Some(open) = unclosed_paren(chars, start, end) {
            let before = chars[start..open].iter().rev().find(|c| !c.is_whitespace());
            let message = match before {
                Some(c) => format!("unclosed '(' after {c:?}"),
                None => "unclosed '('".to_owned(),
            };
            return ParseError::new(line, open + 1, message);
        }
        ParseError::new(
            line,
            start + 1,
            "expected '->' in production (or a line starting with 'axiom:', 'ignore:' or 'define')",
        )
    })?;
    let cond_at = find_top(chars, start, arrow, &[':']);
    let pred_end = cond_at.unwrap_or(arrow);
    let lt = find_top(chars, start, pred_end, &['<']);
    let gt = find_top(chars, lt.map_or(start, |l| l + 1), pred_end, &['>']);
    let mut formals = Vec::new();
    let left = match lt {
        Some(l) => {
            let left = parse_patterns(chars, start, l, line, &mut formals)?;
            if left.is_empty() {
                return Err(ParseError::new(
                    line,
                    l + 1,
                    "empty left context before '<'",
                ));
            }
            left
        }
        None => Vec::new(),
    };
    let strict_start = lt.map_or(start, |l| l + 1);
    let strict_end = gt.unwrap_or(pred_end);
    let strict = parse_patterns(chars, strict_start, strict_end, line, &mut formals)?;
    let strict = match <[Pattern; 1]>::try_from(strict) {
        Ok([p]) => p,
        Err(v) => {
            let col = if v.is_empty() {
                strict_start + 1
            } else {
                strict_start
                    + 1
                    + chars[strict_start..strict_end]
                        .iter()
                        .take_while(|c| c.is_whitespace())
                        .count()
            };
            return Err(ParseError::new(
                line,
                col,
                format!(
                    "the predecessor must be exactly one module (found {}); use '<' and '>' for context",
                    v.len()
                ),
            ));
        }
    };
    let right = match gt {
        Some(g) => {
            let right = parse_patterns(chars, g + 1, pred_end, line, &mut formals)?;
            if right.is_empty() {
                return Err(ParseError::new(
                    line,
                    g + 1,
                    "empty right context after '>'",
                ));
            }
            right
        }
        None => Vec::new(),
    };
    let resolve = |name: &str| {
        formals
            .iter()
            .position(|f| f == name)
            .map(Expr::Param)
            .or_else(|| constants.get(name).map(|&v| Expr::Num(v)))
    };
    let condition = match cond_at {
        Some(c) => Some(parse_expr(chars, c + 1, arrow, line, &resolve)?),
        None => None,
    };
    let mut k = arrow + 2;
    while k < end && chars[k].is_whitespace() {
        k += 1;
    }
    let mut weight = None;
    if k < end && chars[k] == '(' {
        let close = matching_paren(chars, k, end)
            .ok_or_else(|| ParseError::new(line, k + 1, "unclosed '(' of the weight"))?;
        weight = Some(parse_expr(chars, k + 1, close, line, &resolve)?);
        k = close + 1;
    }
    let successor = parse_templates(chars, k, end, line, &resolve)?;
    Ok(Production {
        line,
        left,
        strict,
        right,
        condition,
        weight,
        successor,
    })
}

// The text entry points live with the parser, so the data modules need not know it.
impl LSystem {
    /// Parses the text syntax (see the crate docs).
    pub fn parse(text: &str) -> Result<LSystem, ParseError> {
        parse_lsystem(text)
    }
}

impl LString {
    /// Parses modules in the axiom syntax, e.g. `F(1) + [A(2, 3)]`; parameters are constant
    /// expressions. Errors report line 1.
    pub fn parse(text: &str) -> Result<LString, ParseError> {
        let chars: Vec<char> = text.chars().collect();
        parse_actual_modules(&chars, 0, chars.len(), 1, &|_| None)
    }
}
