//! Property (and class) names interned once. `ustr("CFrame")` hashes the name and takes a
//! process-wide lock every call, and pivot code asks per instance (the engine per model per
//! frame), on several threads in a parallel step; these are looked up once.

use rbx_dom_weak::Ustr;
use std::sync::LazyLock;

pub struct Keys {
    pub cframe: Ustr,
    pub color: Ustr,
    pub size: Ustr,
    /// A Part's `Enum.PartType`.
    pub shape: Ustr,
    pub pivot_offset: Ustr,
    pub world_pivot_data: Ustr,
    pub primary_part: Ustr,
    pub scale: Ustr,
    pub attributes: Ustr,
    pub tags: Ustr,
    pub archivable: Ustr,
    pub source: Ustr,
    pub dirty: Ustr,
    pub generator: Ustr,
    pub sandboxed: Ustr,
    pub capabilities: Ustr,
    pub generation_error: Ustr,
    /// What Studio gives every instance; a copy must not carry its original's.
    pub unique_id: Ustr,
    /// The class name.
    pub procedural_model: Ustr,
}

pub static KEYS: LazyLock<Keys> = LazyLock::new(|| Keys {
    cframe: Ustr::from("CFrame"),
    color: Ustr::from("Color"),
    size: Ustr::from("Size"),
    shape: Ustr::from("Shape"),
    pivot_offset: Ustr::from("PivotOffset"),
    world_pivot_data: Ustr::from("WorldPivotData"),
    primary_part: Ustr::from("PrimaryPart"),
    scale: Ustr::from("Scale"),
    attributes: Ustr::from("Attributes"),
    tags: Ustr::from("Tags"),
    archivable: Ustr::from("Archivable"),
    source: Ustr::from("Source"),
    dirty: Ustr::from("Dirty"),
    generator: Ustr::from("Generator"),
    sandboxed: Ustr::from("Sandboxed"),
    capabilities: Ustr::from("Capabilities"),
    generation_error: Ustr::from("GenerationError"),
    unique_id: Ustr::from("UniqueId"),
    procedural_model: Ustr::from("ProceduralModel"),
});
