//! Interned property and class names used on hot paths: the scene crate's set.

pub use procmodel_dom::keys::KEYS;
