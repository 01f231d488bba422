//! The Roblox spatial-query conformance corpus (WorldRoot raycasts and overlap queries, their
//! params and results, the deprecated ray and Region3 methods): one #[test] per script in
//! tests/roblox/spatial.
mod common;
roblox_tests!("spatial": raycast, camera, query_params, overlap, deprecated_queries, terrain_raycast, move_to_and_mass, shapecasts,
    resize, collision_groups, index, include_exclude, mesh_queries);
