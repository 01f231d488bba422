//! Instance methods, registered per class: each module here adds the methods of one class
//! (and its Roblox subclasses inherit them through the reflection database's superclass
//! chain) to the [`MethodTable`] of `methods`.
//!
//! Adding a class with methods is one new module with a `register(&mut MethodTable)` and one
//! line in [`register_all`].

mod actor;
mod attachment;
mod bindable;
mod camera;
mod collection;
mod csg;
mod effects;
mod humanoid;
pub(crate) mod image;
pub(crate) use image::flush_images;
mod instance;
mod joints;
mod mesh;
pub(crate) use mesh::{cloned_meshes, flush_meshes};
mod physics;
mod pvinstance;
mod query;
pub(crate) mod services;
mod sound;
mod style;
mod surface_joints;
mod terrain;
mod terrain_cells;
mod tween;
mod worldroot;

pub(crate) use instance::{count_new_instance, destroy};
pub use terrain::GENERATED_TERRAIN;
pub(crate) use terrain::{
    edit_voxels, flush_terrain, generator_terrain, read_voxels, take_generator_terrain,
};
pub(crate) use worldroot::register_globals as register_query_params;

use crate::methods::{MethodTable, Methods};
use mlua::Lua;

/// Every class module's methods.
pub fn register_all(m: &mut MethodTable) {
    instance::register(m);
    actor::register(m);
    attachment::register(m);
    bindable::register(m);
    camera::register(m);
    collection::register(m);
    csg::register(m);
    effects::register(m);
    humanoid::register(m);
    image::register(m);
    joints::register(m);
    mesh::register(m);
    physics::register(m);
    pvinstance::register(m);
    query::register(m);
    services::register(m);
    sound::register(m);
    style::register(m);
    surface_joints::register(m);
    terrain::register(m);
    terrain_cells::register(m);
    tween::register(m);
    worldroot::register(m);
    for &(class, name, existing) in LEGACY_NAMES {
        let found = m.alias_in(class, name, existing);
        debug_assert!(found, "{class}:{existing}");
    }
}

/// Deprecated spellings of methods (Roblox reference) that old scripts still call, each
/// another name of the method registered above: (class, old name, method).
const LEGACY_NAMES: &[(&str, &str, &str)] = &[
    ("BasePart", "getMass", "GetMass"),
    ("BasePart", "makeJoints", "MakeJoints"),
    ("BasePart", "resize", "Resize"),
    ("Humanoid", "takeDamage", "TakeDamage"),
    (
        "Lighting",
        "getMinutesAfterMidnight",
        "GetMinutesAfterMidnight",
    ),
    (
        "Lighting",
        "setMinutesAfterMidnight",
        "SetMinutesAfterMidnight",
    ),
    ("Model", "makeJoints", "MakeJoints"),
    ("Model", "move", "MoveTo"),
    ("Players", "getPlayers", "GetPlayers"),
    ("Players", "playerFromCharacter", "GetPlayerFromCharacter"),
    ("Players", "players", "GetPlayers"),
    ("Sound", "pause", "Pause"),
    ("Sound", "play", "Play"),
    ("Sound", "stop", "Stop"),
];

/// The methods of every class, for a new VM's instance metatable.
pub fn methods(lua: &Lua) -> mlua::Result<Methods> {
    let mut table = MethodTable::new(lua);
    register_all(&mut table);
    table.finish()
}

/// Every instance method the host implements, as sorted (class, name) pairs: what editor
/// definitions (`procmodel types`) declare, read from the same registry the VMs use.
pub fn method_names() -> Vec<(&'static str, &'static str)> {
    let lua = Lua::new();
    let mut table = MethodTable::new(&lua);
    register_all(&mut table);
    let mut out: Vec<_> = table.names().collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_legacy_name_is_another_name_of_a_registered_method() {
        let names = super::method_names();
        for &(class, old, new) in super::LEGACY_NAMES {
            assert!(names.contains(&(class, new)), "{class}:{new}");
            assert!(names.contains(&(class, old)), "{class}:{old}");
            // Roblox's API lists the old spelling (as deprecated) on the same class.
            assert_eq!(crate::api::method(class, old), Some(class), "{class}:{old}");
        }
    }
}
