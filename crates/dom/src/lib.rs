//! Scene helpers over `rbx_dom_weak`: class ancestry from the reflection database, CFrame ↔
//! glam conversions, pivots (`GetPivot`/`PivotTo`), bounding boxes and `ScaleTo`.
//!
//! Owns: the geometric meaning of Roblox instances (BasePart CFrame/Size, Model WorldPivot,
//! PrimaryPart, Scale). Must never: run Luau, touch files, or depend on hash-map order.

pub mod attrs;
pub mod bvh;
mod classes;
pub mod deep;
pub mod drawn;
mod geometry;
pub mod hash;
pub mod keys;
mod pivot;
pub mod reads;
pub mod spatial;
mod transfer;

pub use classes::{
    PropertyInfo, XmlEncodeError, db, db_default, decode_binary, decode_databases_in_background,
    decode_xml, encode_binary, encode_xml, find_property, is_a, is_service, nearest_brick_color,
};
pub use drawn::{part_cframe, part_size};
pub use geometry::{affine_to_cframe, cframe_to_affine, from_vec3, to_vec3};
pub use pivot::{
    bounding_box, get_pivot, input_size_key, model_scale, move_by, pivot_to, primary_part_of,
    scale_about, scale_to, size_at_scale,
};
pub use transfer::{
    HeldIds, clone_archivable, copy_with_referents, count_and_find, count_subtree, full_name,
    in_scene, is_archivable, is_within, keeps_reference, move_into, move_into_keeping, preorder,
    terrain_water, workspace_terrain, world,
};
