//! Fuzz target: the rule texts a generator hands the toolkit (`L.new` / `LSystem` axioms and
//! productions, shape grammars, cellular-automaton rules, WFC neighbour pairs). They come from
//! a script's strings, so any text must parse or give an error. The first byte picks the
//! parser; an L-system that parses is derived a few steps under small limits.

#![no_main]

use libfuzzer_sys::fuzz_target;
use procmodel_automata::Rule;
use procmodel_lsystem::{LString, LSystem, Limits, ShapeGrammar};
use procmodel_wfc::NeighborRule;

// The first byte, then the rest as text (`arbitrary` takes the rest for the last element).
fuzz_target!(|input: (u8, &str)| {
    let (pick, text) = input;
    match pick % 5 {
        0 => {
            if let Ok(system) = LSystem::parse(text) {
                let limits = Limits {
                    max_modules: 10_000,
                    max_params: 40_000,
                };
                let _ = system.derive(4, u64::from(pick), &limits);
            }
        }
        1 => {
            let _ = LString::parse(text);
        }
        2 => {
            let _ = ShapeGrammar::parse(text);
        }
        3 => {
            let _ = Rule::parse(text);
            let _ = Rule::parse_3d(text);
        }
        _ => {
            let (left, right) = text.split_once('\n').unwrap_or((text, ""));
            let _ = NeighborRule::parse(left, right);
        }
    }
});
