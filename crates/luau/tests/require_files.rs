//! String requires of scripts loaded from files: relative to the file, `@self/`, and
//! `.luaurc` aliases (nearest file upwards, case-insensitive), with errors that name the file.

use procmodel_luau::{Host, HostConfig};
use std::path::{Path, PathBuf};

fn tree(files: &[(&str, &str)]) -> PathBuf {
    // A folder per call: the tests run side by side, and two trees named after their sizes
    // collided (each test removed or overwrote the other's files).
    static TREES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = TREES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = procmodel_testkit::scratch(&format!("require-{n}"));
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

/// A script run from a repository's `test/` folder requires its library in `src/` through
/// the repository's `.luaurc` (written as Luau reads it, with a comment and trailing commas,
/// as jecs's is): a script may require anything in the folder of the nearest `.luaurc` above
/// it. A generator file stays confined to its own folder, whose files its cache key hashes.
#[test]
fn a_script_requires_across_its_project_and_a_generator_stays_in_its_folder() {
    let dir = tree(&[
        (
            ".luaurc",
            "{\n  // the library\n  \"aliases\": {\n    \"lib\": \"./src\",\n  },\n}\n",
        ),
        ("src/init.luau", "return { n = 5 }"),
        ("src/Util.luau", "return 2"),
        (
            "test/run.luau",
            "assert(require('@lib').n == 5)\nassert(require('../src/Util') == 2)",
        ),
        (
            "test/Gen.luau",
            "local lib = require('@lib')\nreturn { Attributes = {}, OnGenerate = function() end }",
        ),
    ]);
    run(&dir.join("test/run.luau")).unwrap();
    // Without a `.luaurc` above it, a script's own folder is the bound, as before.
    std::fs::remove_file(dir.join(".luaurc")).unwrap();
    let e = run(&dir.join("test/run.luau")).unwrap_err();
    assert!(e.contains("defines the alias 'lib'"), "{e}");
    std::fs::write(
        dir.join("test/run.luau"),
        "assert(require('../src/Util') == 2)",
    )
    .unwrap();
    let e = run(&dir.join("test/run.luau")).unwrap_err();
    assert!(e.contains("outside"), "{e}");
    std::fs::write(dir.join(".luaurc"), r#"{"aliases": {"lib": "./src"}}"#).unwrap();
    let mut host = Host::new(HostConfig {
        echo_output: false,
        ..HostConfig::default()
    })
    .unwrap();
    let root = host.with_dom_ref(|d| d.root_ref());
    let e = host
        .load_generator_file(&dir.join("test/Gen.luau"), root)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("which string requires may not leave"), "{e}");
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

#[test]
fn requirers_of_a_file_module_and_invalidation_reload_its_edit() {
    let dir = tree(&[
        (
            "Gen.luau",
            "local U = require('./lib/Util')\nreturn { Attributes = { N = U.n }, OnGenerate = function() end }",
        ),
        ("lib/Util.luau", "return { n = require('./Deep').n }"),
        ("lib/Deep.luau", "return { n = 1 }"),
        ("Unused.luau", "return 0"),
    ]);
    let mut host = Host::new(HostConfig {
        echo_output: false,
        ..HostConfig::default()
    })
    .unwrap();
    let root = host.with_dom_ref(|d| d.root_ref());
    let n = |g: procmodel_luau::Generator| g.attributes.unwrap()[0].1.clone();
    let g = host
        .load_generator_file(&dir.join("Gen.luau"), root)
        .unwrap();
    assert_eq!(n(g), rbx_types::Variant::Float64(1.0));
    let generator = host
        .file_module(&dir.join("Gen.luau"))
        .expect("the generator's module");
    let util = host
        .file_module(&dir.join("lib/Util.luau"))
        .expect("Util was required");
    let deep = host
        .file_module(&dir.join("lib/./Deep.luau"))
        .expect("Deep was required");
    assert!(host.file_module(&dir.join("Unused.luau")).is_none());
    assert_eq!(host.requirers(deep).len(), 2);
    assert!(host.requirers(deep).contains(&util) && host.requirers(deep).contains(&generator));
    assert_eq!(host.requirers(util), vec![generator]);
    assert!(host.requirers(generator).is_empty());
    assert_eq!(host.module_files().len(), 3);
    // Another VM of the scene (the engine's, for a worker's runs) learns these requires.
    let edges = host.require_edges();
    assert!(edges.contains(&(deep, util)) && edges.contains(&(util, generator)));
    assert_eq!(edges.len(), 2, "direct requires: {edges:?}");
    let other = Host::new(HostConfig::default()).unwrap();
    assert!(other.requirers(deep).is_empty());
    other.note_requires(&edges);
    assert_eq!(other.requirers(deep), host.requirers(deep));
    assert_eq!(other.requirers(util), vec![generator]);

    // An edit of Deep's file: its Source, then it and what required it are required afresh.
    host.with_dom_mut(|d| {
        d.get_by_ref_mut(deep).unwrap().properties.insert(
            "Source".into(),
            rbx_types::Variant::String("return { n = 2 }".into()),
        );
    });
    for m in std::iter::once(deep).chain(host.requirers(deep)) {
        host.invalidate_module(m).unwrap();
    }
    let g = host.load_generator(generator, "Gen.luau").unwrap();
    assert_eq!(n(g), rbx_types::Variant::Float64(2.0));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_folder_module_is_the_folder_its_dot_slash_is_beside_it() {
    // Luau's require-by-string: `Lib/init.luau` is the module `Lib`, so `./Sibling` is
    // beside the folder and `@self/Helper` inside it; `script.Name` is the folder's name.
    let dir = tree(&[
        (
            "main.luau",
            "local Lib = require('./Lib')\nassert(Lib.name == 'Lib', Lib.name)\nassert(Lib.value == 21 + 100, tostring(Lib.value))",
        ),
        (
            "Lib/init.luau",
            "return { name = script.Name, value = require('@self/Helper') + require('./Sibling') }",
        ),
        ("Lib/Helper.luau", "return 21"),
        ("Lib/Sibling.luau", "return 1"),
        ("Sibling.luau", "return 100"),
    ]);
    run(&dir.join("main.luau")).unwrap();
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_folder_module_reaching_its_own_file_with_dot_slash_is_told_of_self() {
    // `./lib/Util` from `Gen/init.luau` is beside the folder; when `@self/lib/Util` exists
    // the error says so (the old Rojo habit of `./` for a folder's own files).
    let dir = tree(&[
        ("main.luau", "require('./Gen')"),
        ("Gen/init.luau", "return require('./lib/Util')"),
        ("Gen/lib/Util.luau", "return 1"),
    ]);
    let e = run(&dir.join("main.luau")).unwrap_err();
    assert!(
        e.contains("cannot require './lib/Util'")
            && e.contains("./ is beside it: its own files are @self/lib/Util"),
        "{e}"
    );
    // No such file under the folder either: no hint.
    let dir2 = tree(&[
        ("main.luau", "require('./Gen')"),
        ("Gen/init.luau", "return require('./Missing')"),
    ]);
    let e = run(&dir2.join("main.luau")).unwrap_err();
    assert!(
        e.contains("cannot require './Missing'") && !e.contains("@self"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_dir_all(&dir2).ok();
}

#[test]
fn script_children_of_a_file_module_point_at_the_string_require() {
    let dir = tree(&[
        ("main.luau", "return require('./Lib')"),
        ("Lib/init.luau", "return require(script.Helper)"),
        ("Lib/Helper.luau", "return 1"),
    ]);
    let e = run(&dir.join("main.luau")).unwrap_err();
    assert!(
        e.contains("Helper is not a valid member of ModuleScript \"Lib\"")
            && e.contains("require(\"@self/Helper\") loads"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
