//! Fuzz target: world descriptions (`procmodel terrain world.toml`, `bake` of a world). The
//! first byte picks TOML or JSON, the rest is the file. Any text is refused with an error or
//! plans a world; a planned world's columns (noise, bands, zones) and resource area are worked out without a
//! panic (building the voxels is bounded by the planner's limits, not tried here), and its
//! floor is a number the terrain can hold or an error (never NaN or infinite).

#![no_main]

use libfuzzer_sys::fuzz_target;
use procmodel_terrain::WorldSpec;

// The first byte, then the rest as text (`arbitrary` takes the rest for the last element).
fuzz_target!(|input: (u8, &str)| {
    let (pick, text) = input;
    let spec: WorldSpec = if pick & 1 == 0 {
        match toml::from_str(text) {
            Ok(s) => s,
            Err(_) => return,
        }
    } else {
        match serde_json::from_str(text) {
            Ok(s) => s,
            Err(_) => return,
        }
    };
    let Ok(plan) = spec.plan() else {
        return;
    };
    let _ = plan.cells();
    let _ = plan.resource_area();
    // A few columns of the world: its noise, bands and zones with whatever parameters passed.
    for (i, j) in [(0, 0), (-7, 3), (1 << 20, -(1 << 20)), (i64::MAX / 4, 5)] {
        let _ = plan.world.column(i, j);
        let _ = plan.world.row_zones(j);
    }
    let _ = plan.world.surface_at(0.5, -2.25);
    // The floor walks every column: only for small worlds, to keep each input quick.
    if plan.rect.is_some_and(|r| r.size[0] * r.size[1] <= 4096)
        && let Ok(Some(floor)) = plan.floor()
    {
        assert!(floor.is_finite(), "floor {floor}");
    }
    let _ = plan.world.material_at(1e9, -1e9);
});
