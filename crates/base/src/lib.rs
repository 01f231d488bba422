//! Shared foundations for procmodel's algorithm crates: the PCG32 stream that Luau's
//! `math.random` and Roblox's `Random` use, and stable keyed seed derivation.
//!
//! Owns: bit-exact random streams and seed hashing. Must never: do I/O, read clocks or
//! depend on Luau, the DOM or any hash-map iteration order.

mod pcg;
mod seed;

pub use pcg::Pcg32;
pub use seed::{derive_seed, derive_seed_index, mix64};
