//! Interned property (and class) names used on hot paths (interning a string costs a global lock).

use rbx_dom_weak::Ustr;
use std::sync::LazyLock;

pub struct Keys {
    pub cframe: Ustr,
    pub color: Ustr,
    pub size: Ustr,
    pub world_pivot_data: Ustr,
    pub primary_part: Ustr,
    pub attributes: Ustr,
    pub tags: Ustr,
    pub archivable: Ustr,
    pub source: Ustr,
    /// The class name.
    pub procedural_model: Ustr,
}

pub static KEYS: LazyLock<Keys> = LazyLock::new(|| Keys {
    cframe: Ustr::from("CFrame"),
    color: Ustr::from("Color"),
    size: Ustr::from("Size"),
    world_pivot_data: Ustr::from("WorldPivotData"),
    primary_part: Ustr::from("PrimaryPart"),
    attributes: Ustr::from("Attributes"),
    tags: Ustr::from("Tags"),
    archivable: Ustr::from("Archivable"),
    source: Ustr::from("Source"),
    procedural_model: Ustr::from("ProceduralModel"),
});
