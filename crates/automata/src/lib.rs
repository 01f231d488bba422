//! Cellular-automata caves: random fill, Life-like birth/survival rules iterated on a grid,
//! region analysis by flood fill and corridors along a minimum spanning tree so that every
//! floor cell is reachable.
//!
//! Owns: the [`Grid`] mask, rule parsing ([`Rule`]), the automaton ([`Automaton`] with
//! `step()` for animation), region labelling ([`Regions`]), corridor connection
//! ([`connect`]), the connectivity proof ([`check_connected`]), the one-call pipeline
//! ([`run`]) and a 3D variant: 26-neighbour automaton ([`Grid3`], [`Automaton3`]) with
//! 6-connected regions and MST corridors ([`Regions3`], [`connect3`], [`check_connected3`]).
//!
//! Must never: do I/O, read clocks, touch Luau or the DOM, or let output depend on
//! hash-map iteration order. Identical inputs give identical grids on every platform.
//!
//! Cell convention: a cell is [`WALL`] (1, "alive" for the rule) or [`FLOOR`] (0). A rule
//! such as `B5678/S45678` counts **wall** neighbours: a floor cell becomes wall when it has
//! 5–8 wall neighbours, a wall survives with 4–8.
//!
//! ```
//! use procmodel_automata::{CaveConfig, check_connected, run};
//! let cave = run(&CaveConfig { width: 48, height: 32, seed: 7, ..CaveConfig::default() }).unwrap();
//! assert!(check_connected(&cave.grid).is_ok());
//! print!("{}", cave.grid.to_ascii()); // rows of '#' (wall) and '.' (floor)
//! ```

mod automaton;
mod cave;
mod connect;
mod connect3;
mod error;
mod grid;
mod grid3;
mod regions;
mod rule;

pub use automaton::{Automaton, EdgePolicy, random_fill};
pub use cave::{Cave, CaveConfig, run};
pub use connect::{ConnectConfig, Corridor, check_connected, connect, is_connected};
pub use connect3::{Corridor3, Regions3, check_connected3, connect3};
pub use error::{CaveError, RuleError};
pub use grid::{FLOOR, Grid, WALL};
pub use grid3::{Automaton3, Grid3, random_fill3};
pub use regions::{Regions, remove_small_regions};
pub use rule::Rule;
