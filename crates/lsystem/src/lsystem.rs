//! L-system productions and parallel rewriting: deterministic, stochastic, parametric and
//! context-sensitive, with limits on the size of the result.

use std::collections::BTreeMap;

use procmodel_base::{Pcg32, derive_seed, derive_seed_index};

use crate::error::RewriteError;
use crate::expr::Expr;
use crate::module::LString;

/// A predecessor or context module: a symbol and its number of formal parameters.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Pattern {
    pub(crate) symbol: char,
    pub(crate) arity: usize,
}

/// A successor module: a symbol and one expression per parameter.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Template {
    pub(crate) symbol: char,
    pub(crate) args: Vec<Expr>,
}

/// One production `left < strict > right : condition -> (weight) successor`.
/// Parameter slots are numbered over the formals of `left`, `strict`, then `right`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Production {
    pub(crate) line: usize,
    pub(crate) left: Vec<Pattern>,
    pub(crate) strict: Pattern,
    pub(crate) right: Vec<Pattern>,
    pub(crate) condition: Option<Expr>,
    pub(crate) weight: Option<Expr>,
    pub(crate) successor: Vec<Template>,
}

/// Caps on what a derivation may produce. Exceeding one stops with
/// [`RewriteError::LimitExceeded`] naming the field, before more memory is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Limits {
    /// Maximum modules in a string (default 10 000 000).
    pub max_modules: usize,
    /// Maximum parameters summed over all modules of a string (default 40 000 000; values
    /// above `u32::MAX` act as `u32::MAX`).
    pub max_params: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_modules: 10_000_000,
            max_params: 40_000_000,
        }
    }
}

/// An L-system: axiom, productions and the set of symbols ignored when matching context.
///
/// Rewriting semantics (one iteration, every module in parallel):
/// - A production applies to a module when the symbols **and the parameter counts** of the
///   strict predecessor and of every context module match, and the condition (if any) is
///   non-zero.
/// - Productions are tried in text order; the first that applies wins — unless it carries a
///   weight, in which case every applicable weighted production for that module is an
///   alternative, one chosen with probability proportional to its weight from a PCG32
///   stream seeded per iteration (`derive_seed_index(derive_seed(seed, "lsystem/rewrite"),
///   iteration)`), so results are deterministic per seed. A module with no applicable
///   production (or only zero weights) is copied.
/// - Context in bracketed strings follows *The Algorithmic Beauty of Plants*: walking left,
///   a `]…[` branch is skipped and `[` is stepped over (the parent is the left context);
///   walking right, whole `[…]` branches are skipped and a `]` ends the search. Symbols in
///   the ignore set are skipped both ways. Contexts themselves may not contain brackets.
#[derive(Clone, Debug, PartialEq)]
pub struct LSystem {
    pub(crate) axiom: LString,
    pub(crate) productions: Vec<Production>,
    pub(crate) ignore: Vec<char>,
    /// Production indices per predecessor symbol, in text order.
    index: BTreeMap<char, Vec<u32>>,
    ascii: Vec<Vec<u32>>,
    has_context: bool,
}

impl LSystem {
    pub(crate) fn from_parts(
        axiom: LString,
        productions: Vec<Production>,
        ignore: Vec<char>,
    ) -> Self {
        let mut index: BTreeMap<char, Vec<u32>> = BTreeMap::new();
        let mut ascii = vec![Vec::new(); 128];
        for (k, p) in productions.iter().enumerate() {
            let c = p.strict.symbol;
            if (c as u32) < 128 {
                ascii[c as usize].push(k as u32);
            } else {
                index.entry(c).or_default().push(k as u32);
            }
        }
        let has_context = productions
            .iter()
            .any(|p| !p.left.is_empty() || !p.right.is_empty());
        LSystem {
            axiom,
            productions,
            ignore,
            index,
            ascii,
            has_context,
        }
    }

    /// The axiom (the string of iteration 0).
    pub fn axiom(&self) -> &LString {
        &self.axiom
    }

    /// Replaces the axiom.
    pub fn set_axiom(&mut self, axiom: LString) {
        self.axiom = axiom;
    }

    /// Symbols skipped when matching context.
    pub fn ignored(&self) -> &[char] {
        &self.ignore
    }

    /// Number of productions.
    pub fn production_count(&self) -> usize {
        self.productions.len()
    }

    /// Rewrites the axiom `iterations` times.
    pub fn derive(
        &self,
        iterations: u32,
        seed: u64,
        limits: &Limits,
    ) -> Result<LString, RewriteError> {
        let mut current = self.axiom.clone();
        let mut next = LString::new();
        for iteration in 1..=iterations {
            self.rewrite_into(&current, iteration, seed, limits, &mut next)?;
            std::mem::swap(&mut current, &mut next);
        }
        Ok(current)
    }

    /// Every string from the axiom through iteration `iterations` (for animation).
    pub fn derivations(
        &self,
        iterations: u32,
        seed: u64,
        limits: &Limits,
    ) -> Result<Vec<LString>, RewriteError> {
        let mut out = vec![self.axiom.clone()];
        for iteration in 1..=iterations {
            let mut next = LString::new();
            let last = out.last().unwrap_or(&self.axiom);
            self.rewrite_into(last, iteration, seed, limits, &mut next)?;
            out.push(next);
        }
        Ok(out)
    }

    /// One parallel rewriting step: `out` becomes the rewrite of `input`, as iteration
    /// `iteration` (1-based; it selects the random stream) of a derivation seeded by `seed`.
    pub fn rewrite_into(
        &self,
        input: &LString,
        iteration: u32,
        seed: u64,
        limits: &Limits,
        out: &mut LString,
    ) -> Result<(), RewriteError> {
        out.clear();
        let partners = if self.has_context {
            bracket_partners(input.symbols())
        } else {
            Vec::new()
        };
        // Parameter offsets are stored as u32.
        let max_params = limits.max_params.min(u32::MAX as usize);
        let mut rng: Option<Pcg32> = None;
        let mut bindings: Vec<f64> = Vec::new();
        let mut alternatives: Vec<(u32, f64)> = Vec::new();
        let mut args: Vec<f64> = Vec::new();
        let ctx = Ctx {
            input,
            partners: &partners,
            ignore: &self.ignore,
        };
        let limit = |limit, max| RewriteError::LimitExceeded {
            limit,
            max,
            iteration,
        };
        for i in 0..input.len() {
            let symbol = input.symbols()[i];
            let candidates: &[u32] = if (symbol as u32) < 128 {
                &self.ascii[symbol as usize]
            } else {
                self.index.get(&symbol).map_or(&[], |v| v)
            };
            let mut chosen = None;
            alternatives.clear();
            for &k in candidates {
                let p = &self.productions[k as usize];
                if !ctx.matches(p, i, &mut bindings) {
                    continue;
                }
                if let Some(w) = &p.weight {
                    let value = w.eval(&bindings);
                    if !value.is_finite() {
                        return Err(RewriteError::NonFinite {
                            line: p.line,
                            what: "the weight".into(),
                            value,
                            iteration,
                        });
                    }
                    if value < 0.0 {
                        return Err(RewriteError::NegativeWeight {
                            line: p.line,
                            value,
                            iteration,
                        });
                    }
                    alternatives.push((k, value));
                } else if alternatives.is_empty() {
                    chosen = Some(k);
                    break;
                }
            }
            if chosen.is_none() && !alternatives.is_empty() {
                let total: f64 = alternatives.iter().map(|a| a.1).sum();
                if total > 0.0 {
                    let rng = rng.get_or_insert_with(|| {
                        Pcg32::from_seed_bits(derive_seed_index(
                            derive_seed(seed, "lsystem/rewrite"),
                            u64::from(iteration),
                        ))
                    });
                    let mut r = rng.next_f64() * total;
                    let mut pick = alternatives[alternatives.len() - 1].0;
                    for &(k, w) in &alternatives {
                        if r < w {
                            pick = k;
                            break;
                        }
                        r -= w;
                    }
                    chosen = Some(pick);
                    // Restore the bindings of the chosen production.
                    ctx.matches(&self.productions[pick as usize], i, &mut bindings);
                }
            }
            match chosen {
                None => out.push(symbol, input.params(i)),
                Some(k) => {
                    let p = &self.productions[k as usize];
                    for t in &p.successor {
                        args.clear();
                        for (n, e) in t.args.iter().enumerate() {
                            let value = e.eval(&bindings);
                            if !value.is_finite() {
                                return Err(RewriteError::NonFinite {
                                    line: p.line,
                                    what: format!("parameter {} of {:?}", n + 1, t.symbol),
                                    value,
                                    iteration,
                                });
                            }
                            args.push(value);
                        }
                        out.push(t.symbol, &args);
                    }
                }
            }
            if out.len() > limits.max_modules {
                return Err(limit("max_modules", limits.max_modules));
            }
            if out.param_count() > max_params {
                return Err(limit("max_params", max_params));
            }
        }
        Ok(())
    }
}

/// For each `[` the index of its `]` and vice versa; `u32::MAX` when unmatched.
fn bracket_partners(symbols: &[char]) -> Vec<u32> {
    let mut partners = vec![u32::MAX; symbols.len()];
    let mut stack = Vec::new();
    for (i, &c) in symbols.iter().enumerate() {
        match c {
            '[' => stack.push(i),
            ']' => {
                if let Some(open) = stack.pop() {
                    partners[open] = i as u32;
                    partners[i] = open as u32;
                }
            }
            _ => {}
        }
    }
    partners
}

/// What context matching needs from the input string.
struct Ctx<'a> {
    input: &'a LString,
    partners: &'a [u32],
    ignore: &'a [char],
}

impl Ctx<'_> {
    /// Whether `p` applies to module `i`; on success `bindings` holds its parameter slots.
    fn matches(&self, p: &Production, i: usize, bindings: &mut Vec<f64>) -> bool {
        let input = self.input;
        if input.params(i).len() != p.strict.arity {
            return false;
        }
        bindings.clear();
        // Left context, matched right-to-left; its parameters are bound left-to-right, so
        // each matched module's parameters are inserted before those already bound.
        let mut j = i;
        for pat in p.left.iter().rev() {
            let Some(k) = self.left_neighbour(j) else {
                return false;
            };
            if input.symbols()[k] != pat.symbol || input.params(k).len() != pat.arity {
                return false;
            }
            let params = input.params(k);
            if !params.is_empty() {
                bindings.splice(0..0, params.iter().copied());
            }
            j = k;
        }
        bindings.extend_from_slice(input.params(i));
        let mut j = i;
        for pat in &p.right {
            let Some(k) = self.right_neighbour(j) else {
                return false;
            };
            if input.symbols()[k] != pat.symbol || input.params(k).len() != pat.arity {
                return false;
            }
            bindings.extend_from_slice(input.params(k));
            j = k;
        }
        p.condition.as_ref().is_none_or(|c| c.eval(bindings) != 0.0)
    }

    /// The context module left of `j`, skipping ignored symbols and side branches.
    fn left_neighbour(&self, j: usize) -> Option<usize> {
        let symbols = self.input.symbols();
        let mut k = j.checked_sub(1)?;
        loop {
            let c = symbols[k];
            if c == ']' {
                let open = self.partners[k];
                if open == u32::MAX {
                    return None;
                }
                k = (open as usize).checked_sub(1)?;
            } else if c == '[' || self.ignore.contains(&c) {
                k = k.checked_sub(1)?;
            } else {
                return Some(k);
            }
        }
    }

    /// The context module right of `j`, skipping ignored symbols and whole branches.
    fn right_neighbour(&self, j: usize) -> Option<usize> {
        let symbols = self.input.symbols();
        let mut k = j + 1;
        while k < symbols.len() {
            let c = symbols[k];
            if c == '[' {
                let close = self.partners[k];
                if close == u32::MAX {
                    return None;
                }
                k = close as usize + 1;
            } else if c == ']' {
                return None;
            } else if self.ignore.contains(&c) {
                k += 1;
            } else {
                return Some(k);
            }
        }
        None
    }
}
