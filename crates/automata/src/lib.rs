//! Cellular-automata caves: random fill, Life-like birth/survival rules iterated on a grid,
//! region analysis by flood fill and corridors along a minimum spanning tree so that every
//! floor cell is reachable.
//!
//! Owns: the [`Grid`] mask, rule parsing ([`Rule`]), the automaton ([`Automaton`] with
//! `step()` for animation), region labelling ([`Regions`]), corridor connection
//! ([`connect`]), the connectivity proof ([`check_connected`]), the one-call pipeline
//! ([`run`]) and a 3D variant: 26-neighbour automaton ([`Grid3`], [`Automaton3`]) with
//! 6-connected regions and MST corridors ([`Regions3`], [`connect3`], [`check_connected3`]).
//! Grids, regions, corridors and the connectivity proof are written once over a
//! [`Topology`] ([`Plane`] or [`Volume`]); the 2D and 3D names are aliases of those.
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
mod automaton3;
mod cave;
mod connect;
mod error;
mod grid;
mod regions;
mod rule;
mod topology;

pub use automaton::{Automaton, EdgePolicy, random_fill};
pub use automaton3::{Automaton3, random_fill3};
pub use cave::{Cave, CaveConfig, run};
pub use connect::{
    ConnectConfig, Corridor, Corridor3, CorridorOf, check_connected, check_connected3, connect,
    connect3, is_connected,
};
pub use error::{CaveError, RuleError};
pub use grid::{FLOOR, Grid, Grid3, GridOf, WALL};
pub use regions::{Regions, Regions3, RegionsOf, remove_small_regions};
pub use rule::Rule;
pub use topology::{Plane, Topology, Volume};
