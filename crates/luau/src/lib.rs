//! Luau host.
