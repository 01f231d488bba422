//! The Roblox core conformance corpus (pivots, models, scripts): one #[test] per script in
//! tests/roblox/core.
mod common;
roblox_tests!("core": pivot_rules, model_moves, require_instance_tree, attachment,
    legacy_properties, joints, live_global_paths, assembly);
