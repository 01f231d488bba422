//! Fuzz target: Rojo project files. `procmodel regen`, `lock` and the studio build a project
//! someone shared: its `default.project.json`, a `.model.json`, an `init.meta.json` and a
//! YAML data file (the input split at NUL bytes, written to a folder of this process's own
//! beside a fixed script; JSON files are read as JSONC)
//! build a tree or give an error naming the file, never a panic. Inputs naming a path with a
//! slash, a backslash or `..` are skipped: they could point the loader at the whole disk.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

fn folder() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("procmodel-fuzz-rojo-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).expect("a scratch folder");
        std::fs::write(dir.join("src/Gen.luau"), "return {}\n").expect("a script");
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    if data.windows(2).any(|w| w == b"..") || data.iter().any(|&b| b == b'/' || b == b'\\') {
        return;
    }
    let mut parts = data.splitn(4, |&b| b == 0);
    let (project, model, meta, yaml) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let dir = folder();
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        if bytes.is_empty() {
            let _ = std::fs::remove_file(path);
        } else {
            std::fs::write(path, bytes).expect("the scratch folder is writable");
        }
    };
    write("default.project.json", project);
    write("src/Thing.model.json", model);
    write("src/init.meta.json", meta);
    write("src/Data.yaml", yaml);
    let read_model = |_: &std::path::Path, _: Vec<u8>, _: procmodel_rojo::ModelFormat| {
        Err("no binary models here".to_owned())
    };
    let _ = procmodel_rojo::load(dir, &read_model);
});
