//! Repository tidiness checks over the workspace's sources (in the spirit of rust-analyzer's
//! tidy tests): no import cycles between the modules of a crate. A module is one file
//! (`a/b.rs` or `a/b/mod.rs` is `a::b`); an edge is a `crate::x::…` path in its text, to the
//! longest prefix that is a module of the same crate (the crate root does not count).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Cycles that exist today and are to be broken, as sorted module lists. The check fails
/// when a crate has a cycle not listed here *and* when a listed one is gone, so the list
/// only ever shrinks with the code.
const KNOWN_CYCLES: &[(&str, &[&str])] = &[];

fn workspace_crates() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a source file under `src`, or None for the crate root.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    let stem = last.trim_end_matches(".rs");
    if parts.is_empty() && (stem == "lib" || stem == "main") {
        return None;
    }
    if stem != "mod" {
        parts.push(stem.to_owned());
    }
    Some(parts.join("::"))
}

/// Module paths named by `crate::…` in `text` (grouped imports `crate::{a, b::{c, d}}`
/// included), resolved to the longest known module.
fn edges(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + "crate::".len()..];
        // `procmodel_dom::…` and `$crate::…` are other crates or macros.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
            continue;
        }
        let mut paths = Vec::new();
        expand("", rest, &mut paths);
        for path in paths {
            let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
            for n in (1..=segs.len()).rev() {
                let candidate = segs[..n].join("::");
                if modules.contains(&candidate) {
                    out.insert(candidate);
                    break;
                }
            }
        }
    }
    out
}

/// The paths one `use` tree at the start of `text` names, each after `prefix`: `a::b` is
/// one, `a::{b, c::{d, e}}` is `a::b`, `a::c::d` and `a::c::e`.
fn expand(prefix: &str, text: &str, out: &mut Vec<String>) {
    let text = text.trim_start();
    let head: String = text
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
        .collect();
    let after = &text[head.len()..];
    let path = format!("{prefix}{head}");
    if !after.starts_with('{') {
        out.push(path);
        return;
    }
    // The items of the group, split at its top-level commas.
    let mut depth = 0;
    let mut start = 1;
    for (i, c) in after.char_indices() {
        match c {
            '{' => depth += 1,
            '}' | ',' if depth == 1 => {
                match after[start..i].trim() {
                    "" => {}
                    "self" => out.push(path.clone()),
                    item => expand(&path, item, out),
                }
                start = i + 1;
                if c == '}' {
                    return;
                }
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
}

/// Strongly connected components with more than one module (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                comp.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

fn crate_cycles(src: &Path) -> Vec<Vec<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let named: Vec<(String, PathBuf)> = files
        .iter()
        .filter_map(|f| module_of(src, f).map(|m| (m, f.clone())))
        .collect();
    let modules: BTreeSet<String> = named.iter().map(|(m, _)| m.clone()).collect();
    let mut graph = BTreeMap::new();
    for (m, f) in &named {
        let text = std::fs::read_to_string(f).unwrap();
        let mut e = edges(&text, &modules);
        e.remove(m);
        graph.insert(m.clone(), e);
    }
    cycles(&graph)
}

#[test]
fn no_module_cycles_in_any_crate() {
    let root = workspace_crates();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() > 5, "crates not found under {}", root.display());
    let mut problems = Vec::new();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let found = crate_cycles(&dir.join("src"));
        let known: Vec<Vec<String>> = KNOWN_CYCLES
            .iter()
            .filter(|(c, _)| *c == name)
            .map(|(_, m)| m.iter().map(|s| s.to_string()).collect())
            .collect();
        for c in &found {
            if !known.contains(c) {
                problems.push(format!("crates/{name}: new import cycle among {c:?}"));
            }
        }
        for k in &known {
            if !found.contains(k) {
                problems.push(format!(
                    "crates/{name}: the known cycle {k:?} changed or is gone (now {found:?}): update KNOWN_CYCLES"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_cycle_finder_finds_a_cycle_and_ignores_a_chain() {
    let modules: BTreeSet<String> = ["a", "b", "c", "c::d"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        edges(
            "use crate::c::d::Thing; x = procmodel_x::crate::a; $crate::b",
            &modules
        ),
        BTreeSet::from(["c::d".to_string()])
    );
    let g = |pairs: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    assert!(cycles(&g(&[("a", "b"), ("b", "c")])).is_empty());
    let modules: BTreeSet<String> = ["a", "b", "c", "c::d", "e"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let found = edges(
        "use crate::{a, b::Thing, c::{d::{X, Y}, self}};\nfn f() { crate::e::g(); procmodel_x::crate::z(); }",
        &modules,
    );
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        ["a", "b", "c", "c::d", "e"],
        "grouped imports name their modules"
    );
    assert_eq!(
        cycles(&g(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])),
        vec![vec!["a".to_string(), "b".to_string(), "c".to_string()]]
    );
}

/// Each workspace crate's package name and the names in its `[dependencies]` table (normal
/// dependencies only: tests and benches may use anything), from the manifests' plain lines.
fn normal_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(workspace_crates())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    for dir in dirs {
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let mut section = String::new();
        let mut name = None;
        let mut deps = BTreeSet::new();
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line.to_owned();
                continue;
            }
            let Some(key) = line.split(['=', '.', ' ']).next().filter(|k| !k.is_empty()) else {
                continue;
            };
            if key.starts_with('#') {
                continue;
            }
            if section == "[package]" && key == "name" && name.is_none() {
                name = line.split('"').nth(1).map(str::to_owned);
            } else if section == "[dependencies]" {
                deps.insert(key.to_owned());
            }
        }
        out.insert(name.expect("every manifest names its package"), deps);
    }
    out
}

#[test]
fn the_engine_reaches_no_script_vm() {
    // The engine knows the script host only through procmodel-script's contract: neither
    // it nor anything it depends on may pull in the Luau host or mlua (`cargo tree -p
    // procmodel-engine -e normal -i mlua` is empty).
    let deps = normal_dependencies();
    assert!(deps.contains_key("procmodel-engine") && deps.contains_key("procmodel-luau"));
    for start in ["procmodel-engine", "procmodel-script"] {
        let mut seen = BTreeSet::new();
        let mut stack = vec![start.to_owned()];
        while let Some(c) = stack.pop() {
            if !seen.insert(c.clone()) {
                continue;
            }
            for d in deps.get(&c).into_iter().flatten() {
                assert!(
                    !["procmodel-luau", "procmodel-luau-types", "mlua"].contains(&d.as_str()),
                    "{start} reaches {d} through {c}"
                );
                if deps.contains_key(d) {
                    stack.push(d.clone());
                }
            }
        }
    }
    // And the check can fail: the Luau host itself reaches mlua.
    assert!(deps["procmodel-luau"].contains("mlua"));
}

/// Where code may name the system's temporary folder itself: the scratch-folder crate, the
/// binary's own staging folder for a merge (removed when done) and the benchmarks (which
/// overwrite fixed names). Tests take `procmodel_testkit::scratch`, removed at exit.
const TEMP_DIR_ALLOWED: &[&str] = &["testkit/src/lib.rs", "cli/src/bake.rs"];

/// The files under `crates/` (benches aside) that call `std::env::temp_dir`.
fn temp_dir_users() -> Vec<String> {
    let root = workspace_crates();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut out = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel.contains("/benches/") || rel.contains("/target/") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        if text.contains(concat!("temp_", "dir()")) && !TEMP_DIR_ALLOWED.contains(&rel.as_str()) {
            out.push(rel);
        }
    }
    out
}

#[test]
fn tests_leave_nothing_in_the_temp_folder() {
    // A test that made its folder in the system temp folder left it there: thousands of
    // folders and gigabytes after a few runs of the suite.
    assert_eq!(temp_dir_users(), Vec::<String>::new());
    // The scratch crate is for tests only: no crate may link it into what users run.
    for (name, deps) in normal_dependencies() {
        assert!(
            !deps.contains("procmodel-testkit"),
            "{name} depends on procmodel-testkit outside [dev-dependencies]"
        );
    }
    // And the check can fail: the scratch crate itself names the temp folder.
    assert!(TEMP_DIR_ALLOWED.iter().all(|f| {
        let text = std::fs::read_to_string(workspace_crates().join(f)).unwrap();
        text.contains(concat!("temp_", "dir()"))
    }));
}
