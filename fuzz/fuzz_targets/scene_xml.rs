//! Fuzz target: XML scene loading (`.rbxmx` and `.rbxlx` share one decoder); the first byte
//! picks the extension the loader is told. Any input loads or is an error naming the file.

#![no_main]

use libfuzzer_sys::fuzz_target;
use procmodel_engine::{SceneFormat, read_scene_bytes};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, file)) = data.split_first() else {
        return;
    };
    let name = if pick & 1 == 0 { "fuzz.rbxmx" } else { "fuzz.rbxlx" };
    let format = SceneFormat::from_path(std::path::Path::new(name)).unwrap();
    if let Err(e) = read_scene_bytes(file.to_vec(), format, name) {
        assert!(e.to_string().starts_with(name), "{e}");
    }
});
