//! Fuzz target: the Terrain blobs a place file carries (`SmoothGrid`, `MaterialColors`). A
//! place from Studio, another tool or a damaged disk reaches these decoders through
//! `procmodel regen`, `export` and the studio. Any blob decodes or is refused with an error;
//! a grid that decodes writes back to a blob that decodes to the same voxels, and a colour
//! table that decodes writes back to the same bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use procmodel_terrain::{MaterialColors, smoothgrid};

fuzz_target!(|blob: &[u8]| {
    if let Ok(terrain) = smoothgrid::decode(blob) {
        let written = smoothgrid::encode(&terrain);
        let again = smoothgrid::decode(&written).expect("a grid we wrote decodes");
        assert_eq!(smoothgrid::encode(&again), written);
    }
    if let Ok(colors) = MaterialColors::decode(blob) {
        let written = colors.encode();
        let again = MaterialColors::decode(&written).expect("a table we wrote decodes");
        assert_eq!(again.encode(), written);
    }
});
