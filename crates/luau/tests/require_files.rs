//! String requires of scripts loaded from files: relative to the file, `@self/`, and
//! `.luaurc` aliases (nearest file upwards, case-insensitive), with errors that name the file.

use procmodel_luau::{Host, HostConfig};
use std::path::{Path, PathBuf};

fn tree(files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "procmodel-require-{}-{}",
        std::process::id(),
        files.len() * 7919 + files.iter().map(|f| f.1.len()).sum::<usize>()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

fn run(path: &Path) -> Result<(), String> {
    let mut host = Host::new(HostConfig {
        echo_output: false,
        ..HostConfig::default()
    })
    .unwrap();
    host.run_script_file(path).map_err(|e| e.to_string())
}

#[test]
fn aliases_and_self_resolve_from_files() {
    let dir = tree(&[
        (".luaurc", r#"{ "aliases": { "Shared": "./src/shared" } }"#),
        ("src/shared/Config.luau", "return { n = 3 }"),
        (
            "src/Tower/init.luau",
            "return require('@self/Floors').count + require('@shared/Config').n",
        ),
        ("src/Tower/Floors.luau", "return { count = 4 }"),
        (
            "src/main.luau",
            "assert(require('./Tower') == 7)\nassert(require('@SHARED/Config').n == 3)",
        ),
    ]);
    run(&dir.join("src/main.luau")).unwrap();
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_unknown_alias_and_a_bad_luaurc_are_errors_naming_the_files() {
    let dir = tree(&[
        ("a/main.luau", "return require('@nowhere/X')"),
        ("b/.luaurc", "{ not json"),
        ("b/main.luau", "return require('@x/Y')"),
    ]);
    let e = run(&dir.join("a/main.luau")).unwrap_err();
    assert!(e.contains("defines the alias 'nowhere'"), "{e}");
    let e = run(&dir.join("b/main.luau")).unwrap_err();
    assert!(e.contains(".luaurc"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_file_cycle_names_the_chain() {
    let dir = tree(&[
        ("main.luau", "return require('./A')"),
        ("A.luau", "return require('./B')"),
        ("B.luau", "return require('./A')"),
    ]);
    let e = run(&dir.join("main.luau")).unwrap_err();
    assert!(e.contains("required recursively"), "{e}");
    assert!(e.contains("A.luau -> ") && e.contains("B.luau -> "), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}
