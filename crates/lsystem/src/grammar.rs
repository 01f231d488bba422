//! A weighted symbol-rewriting shape grammar (e.g. facades) expanded into a tree whose
//! leaves are terminal symbols.
//!
//! Text syntax, one rule per line:
//!
//! ```text
//! # comment
//! start: Facade                      # optional; defaults to the first rule's name
//! Facade -> Ground Floor*3 Roof      # `Name*N` repeats a symbol N times
//! Floor  -> Window Wall Window       # several rules for one name are alternatives …
//! Floor  -> (2) Window Door Window   # … chosen by weight (default 1)
//! Roof   ->                          # an empty right side expands to nothing
//! ```
//!
//! Names are identifiers (`[A-Za-z_][A-Za-z0-9_]*`); a name with no rule is a terminal.
//! Expansion is depth-first in order. Each node's alternative is drawn from a PCG32 stream
//! seeded by `derive_seed(seed, path)` with the node's path (e.g. `Facade/1:Floor`), so a
//! choice never depends on how many random numbers other nodes used, and editing one
//! subtree leaves the others unchanged. Nodes at `max_depth` are left unexpanded and
//! counted in [`Expansion::truncated`]. This grammar has no geometry (no split sizes);
//! callers map terminals to shapes.

use std::collections::BTreeMap;

use procmodel_base::{Pcg32, derive_seed};

use crate::error::{GrammarError, ParseError};

#[derive(Clone, Debug, PartialEq)]
struct Alternative {
    weight: f64,
    line: usize,
    items: Vec<(String, usize)>,
}

/// A parsed shape grammar.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeGrammar {
    start: String,
    rules: BTreeMap<String, Vec<Alternative>>,
}

/// Limits and seed of an expansion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrammarConfig {
    /// Seed of the weighted choices.
    pub seed: u64,
    /// Nodes at this depth (the root is depth 0) are not expanded (default 32).
    pub max_depth: usize,
    /// Maximum nodes in the tree; exceeding it is an error (default 100 000).
    pub max_nodes: usize,
}

impl Default for GrammarConfig {
    fn default() -> Self {
        GrammarConfig {
            seed: 0,
            max_depth: 32,
            max_nodes: 100_000,
        }
    }
}

/// A node of the derivation tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The symbol.
    pub symbol: String,
    /// Source line of the alternative used, `None` for terminals and truncated nodes.
    pub rule_line: Option<usize>,
    /// Children in order.
    pub children: Vec<Node>,
}

/// The result of [`ShapeGrammar::expand`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expansion {
    /// The derivation tree.
    pub root: Node,
    /// Total nodes.
    pub nodes: usize,
    /// Non-terminal nodes left unexpanded at `max_depth`.
    pub truncated: usize,
}

impl Expansion {
    /// Leaf symbols in order (terminals, plus truncated non-terminals).
    pub fn terminals(&self) -> Vec<&str> {
        fn walk<'a>(n: &'a Node, out: &mut Vec<&'a str>) {
            if n.children.is_empty() && n.rule_line.is_none() {
                out.push(&n.symbol);
            }
            for c in &n.children {
                walk(c, out);
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &mut out);
        out
    }

    /// The tree as indented lines (`symbol` per line, two spaces per level), for snapshots.
    pub fn to_outline(&self) -> String {
        fn walk(n: &Node, depth: usize, out: &mut String) {
            out.push_str(&"  ".repeat(depth));
            out.push_str(&n.symbol);
            out.push('\n');
            for c in &n.children {
                walk(c, depth + 1, out);
            }
        }
        let mut out = String::new();
        walk(&self.root, 0, &mut out);
        out
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl ShapeGrammar {
    /// Parses the text syntax (see the module docs).
    pub fn parse(text: &str) -> Result<ShapeGrammar, ParseError> {
        let mut start = None;
        let mut first = None;
        let mut rules: BTreeMap<String, Vec<Alternative>> = BTreeMap::new();
        for (n, raw) in text.lines().enumerate() {
            let line = n + 1;
            let mut chars: Vec<char> = raw.chars().collect();
            if let Some(h) = chars.iter().position(|&c| c == '#') {
                chars.truncate(h);
            }
            let mut k = 0;
            let skip = |k: &mut usize| {
                while *k < chars.len() && chars[*k].is_whitespace() {
                    *k += 1;
                }
            };
            let ident = |k: &mut usize| -> Option<String> {
                if *k < chars.len() && is_ident_start(chars[*k]) {
                    let s = *k;
                    while *k < chars.len() && is_ident(chars[*k]) {
                        *k += 1;
                    }
                    Some(chars[s..*k].iter().collect())
                } else {
                    None
                }
            };
            skip(&mut k);
            if k == chars.len() {
                continue;
            }
            let name = ident(&mut k).ok_or_else(|| {
                ParseError::new(
                    line,
                    k + 1,
                    format!("expected a rule name, found {:?}", chars[k]),
                )
            })?;
            skip(&mut k);
            if name == "start" && chars.get(k) == Some(&':') {
                k += 1;
                skip(&mut k);
                let s = ident(&mut k).ok_or_else(|| {
                    ParseError::new(line, k + 1, "expected a symbol after 'start:'")
                })?;
                skip(&mut k);
                if k < chars.len() {
                    return Err(ParseError::new(
                        line,
                        k + 1,
                        format!("unexpected {:?} after the start symbol", chars[k]),
                    ));
                }
                start = Some(s);
                continue;
            }
            if !(chars.get(k) == Some(&'-') && chars.get(k + 1) == Some(&'>')) {
                return Err(ParseError::new(
                    line,
                    k + 1,
                    format!("expected '->' after {name:?}"),
                ));
            }
            k += 2;
            skip(&mut k);
            let mut weight = 1.0;
            if chars.get(k) == Some(&'(') {
                let close = chars[k..]
                    .iter()
                    .position(|&c| c == ')')
                    .map(|p| k + p)
                    .ok_or_else(|| ParseError::new(line, k + 1, "unclosed '(' of the weight"))?;
                let text: String = chars[k + 1..close].iter().collect();
                weight = text
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|w| w.is_finite() && *w >= 0.0)
                    .ok_or_else(|| {
                        ParseError::new(
                            line,
                            k + 2,
                            format!("weight {:?} is not a non-negative number", text.trim()),
                        )
                    })?;
                k = close + 1;
            }
            let mut items = Vec::new();
            loop {
                skip(&mut k);
                if k == chars.len() {
                    break;
                }
                let sym = ident(&mut k).ok_or_else(|| {
                    ParseError::new(
                        line,
                        k + 1,
                        format!("expected a symbol, found {:?}", chars[k]),
                    )
                })?;
                let mut count = 1;
                if chars.get(k) == Some(&'*') {
                    k += 1;
                    let s = k;
                    while k < chars.len() && chars[k].is_ascii_digit() {
                        k += 1;
                    }
                    let digits: String = chars[s..k].iter().collect();
                    count = digits.parse::<usize>().map_err(|_| {
                        ParseError::new(
                            line,
                            s + 1,
                            format!("expected a repeat count after '{sym}*'"),
                        )
                    })?;
                }
                items.push((sym, count));
            }
            if first.is_none() {
                first = Some(name.clone());
            }
            rules.entry(name).or_default().push(Alternative {
                weight,
                line,
                items,
            });
        }
        let start = start
            .or(first)
            .ok_or_else(|| ParseError::new(1, 1, "grammar has no rules"))?;
        Ok(ShapeGrammar { start, rules })
    }

    /// The start symbol.
    pub fn start(&self) -> &str {
        &self.start
    }

    /// Non-terminal names in sorted order.
    pub fn nonterminals(&self) -> impl Iterator<Item = &str> {
        self.rules.keys().map(String::as_str)
    }

    /// Expands the start symbol.
    pub fn expand(&self, config: &GrammarConfig) -> Result<Expansion, GrammarError> {
        let mut counters = (1usize, 0usize);
        let root = self.node(&self.start, self.start.clone(), 0, config, &mut counters)?;
        Ok(Expansion {
            root,
            nodes: counters.0,
            truncated: counters.1,
        })
    }

    fn node(
        &self,
        symbol: &str,
        path: String,
        depth: usize,
        config: &GrammarConfig,
        counters: &mut (usize, usize),
    ) -> Result<Node, GrammarError> {
        let leaf = |rule_line| Node {
            symbol: symbol.to_owned(),
            rule_line,
            children: Vec::new(),
        };
        let Some(alts) = self.rules.get(symbol) else {
            return Ok(leaf(None));
        };
        if depth >= config.max_depth {
            counters.1 += 1;
            return Ok(leaf(None));
        }
        let total: f64 = alts.iter().map(|a| a.weight).sum();
        let alt = if alts.len() == 1 || total <= 0.0 {
            &alts[0]
        } else {
            let mut rng = Pcg32::from_seed_bits(derive_seed(config.seed, &path));
            let mut r = rng.next_f64() * total;
            let mut pick = &alts[alts.len() - 1];
            for a in alts {
                if r < a.weight {
                    pick = a;
                    break;
                }
                r -= a.weight;
            }
            pick
        };
        let mut children = Vec::new();
        for (sym, count) in &alt.items {
            for _ in 0..*count {
                counters.0 += 1;
                if counters.0 > config.max_nodes {
                    return Err(GrammarError::TooManyNodes {
                        max: config.max_nodes,
                        symbol: symbol.to_owned(),
                        path,
                    });
                }
                let child_path = format!("{path}/{}:{sym}", children.len());
                children.push(self.node(sym, child_path, depth + 1, config, counters)?);
            }
        }
        Ok(Node {
            symbol: symbol.to_owned(),
            rule_line: Some(alt.line),
            children,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FACADE: &str = "\
# a three-storey facade
start: Facade
Facade -> Ground Floor*3 Roof
Ground -> Door Window
Floor -> Window Wall Window
Floor -> (3) Window Window Window
Roof ->
";

    #[test]
    fn expands_facade_deterministically() {
        let g = ShapeGrammar::parse(FACADE).unwrap();
        assert_eq!(g.start(), "Facade");
        assert_eq!(
            g.nonterminals().collect::<Vec<_>>(),
            ["Facade", "Floor", "Ground", "Roof"]
        );
        let config = GrammarConfig::default();
        let a = g.expand(&config).unwrap();
        assert_eq!(a, g.expand(&config).unwrap());
        let t = a.terminals();
        assert_eq!(&t[..2], ["Door", "Window"]);
        assert_eq!(t.len(), 2 + 9);
        assert_eq!(a.root.children.len(), 5);
        assert_eq!(a.truncated, 0);
        // Different seeds eventually choose differently.
        let outlines: std::collections::BTreeSet<String> = (0..16)
            .map(|seed| {
                g.expand(&GrammarConfig { seed, ..config })
                    .unwrap()
                    .to_outline()
            })
            .collect();
        assert!(outlines.len() > 1);
    }

    #[test]
    fn recursion_is_cut_at_max_depth_and_node_limit() {
        let g = ShapeGrammar::parse("Wall -> Brick Wall\n").unwrap();
        let e = g
            .expand(&GrammarConfig {
                max_depth: 4,
                ..GrammarConfig::default()
            })
            .unwrap();
        assert_eq!(e.terminals(), ["Brick", "Brick", "Brick", "Brick", "Wall"]);
        assert_eq!(e.truncated, 1);
        assert_eq!(e.nodes, 9);
        let err = g
            .expand(&GrammarConfig {
                max_nodes: 5,
                ..GrammarConfig::default()
            })
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "limit max_nodes = 5 exceeded while expanding \"Wall\" at Wall/1:Wall/1:Wall"
        );
    }

    fn error(text: &str) -> String {
        ShapeGrammar::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn parse_errors() {
        assert_eq!(
            error("A => B"),
            "line 1, column 3: expected '->' after \"A\""
        );
        assert_eq!(
            error("A -> B*x"),
            "line 1, column 8: expected a repeat count after 'B*'"
        );
        assert_eq!(
            error("\nA -> (-1) B"),
            "line 2, column 7: weight \"-1\" is not a non-negative number"
        );
        assert_eq!(
            error("A -> B ?"),
            "line 1, column 8: expected a symbol, found '?'"
        );
        assert_eq!(error("# nothing"), "line 1, column 1: grammar has no rules");
        assert_eq!(
            error("1A -> B"),
            "line 1, column 1: expected a rule name, found '1'"
        );
    }
}
