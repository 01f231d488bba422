//! The string requires written in Luau text (`require("./X")`, `require '@lib/X'`), read
//! without running it: what a front end warns about before a run (toolkit modules,
//! `.luaurc` aliases), and the files a saved scene or a package holds around a generator
//! read from a file ([`literal_requires`], whichever branch a run takes).
//!
//! Owns: finding the specs and resolving them as `require` does
//! ([`crate::globals::require_file`]). Must never: load or run a module.

use std::path::{Path, PathBuf};

/// The specs of the string requires in `source`, in order, each once: `require` followed by
/// a string literal, with or without parentheses, or as `pcall(require, "X")`. A require of
/// an expression (`require(script.Parent.X)`) names no spec.
pub fn string_requires(source: &str) -> Vec<&str> {
    let mut specs: Vec<&str> = Vec::new();
    for (at, _) in source.match_indices("require") {
        // A word of its own (`my_require(...)` is another function).
        let before = source[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = source[at + "require".len()..].trim_start();
        // `require("X")`, `require "X"`, or `pcall(require, "X")`.
        let rest = rest
            .strip_prefix('(')
            .or_else(|| rest.strip_prefix(','))
            .unwrap_or(rest)
            .trim_start();
        let Some(quote) = rest.chars().next().filter(|c| "\"'`".contains(*c)) else {
            continue;
        };
        let body = &rest[1..];
        let Some(end) = body.find(quote) else {
            continue;
        };
        let spec = &body[..end];
        if !specs.contains(&spec) {
            specs.push(spec);
        }
    }
    specs
}

/// The toolkit modules (`@procmodel/<name>`) `source` requires, in order, each once.
pub fn toolkit_requires(source: &str) -> Vec<String> {
    string_requires(source)
        .into_iter()
        .filter(|spec| is_toolkit(spec))
        .map(str::to_owned)
        .collect()
}

/// Whether `spec` goes through a `.luaurc` alias (`@lib/X`): `@self/X` is relative to the
/// module and the toolkit's `@procmodel/X` resolves everywhere.
pub fn is_alias(spec: &str) -> bool {
    spec.starts_with('@') && !spec.starts_with("@self/") && !is_toolkit(spec)
}

/// Whether `spec` names a toolkit module (`@procmodel/noise`).
pub fn is_toolkit(spec: &str) -> bool {
    spec.starts_with("@procmodel/")
}

/// The string requires written in module file `file`, each with the file it names, resolved
/// as its `require` would (confined to `root`), or why a saved scene or package could not
/// follow it (a missing file, a path outside `root`, a `.luaurc` alias: the instance tree
/// has no `.luaurc`). Toolkit modules are left out; an unreadable file has none.
pub fn literal_requires(
    file: &Path,
    root: Option<&Path>,
) -> Vec<(String, Result<PathBuf, String>)> {
    let Ok(source) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    string_requires(&source)
        .into_iter()
        .filter(|spec| !is_toolkit(spec))
        .map(|spec| {
            let target = if is_alias(spec) {
                Err(format!(
                    "{spec} is a .luaurc alias, which a saved scene or package cannot follow"
                ))
            } else {
                crate::globals::require_file(file, spec, root)
            };
            (spec.to_owned(), target)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_requires_are_found_in_every_call_form_once_each() {
        let source = r#"
local a = require("./A")
local b = require './B'
local c = require(`@lib/C`)
local d = require ( "@procmodel/noise" )
local e = require(script.Parent.E)
local f = my_require("./F")
local again = require("./A")
local ok, g = pcall(require, "./G")
local broken = require("./unterminated
"#;
        assert_eq!(
            string_requires(source),
            ["./A", "./B", "@lib/C", "@procmodel/noise", "./G"]
        );
    }

    #[test]
    fn aliases_are_at_specs_other_than_self_and_the_toolkit() {
        assert!(is_alias("@lib/C"));
        assert!(!is_alias("@self/C"));
        assert!(!is_alias("@procmodel/noise"));
        assert!(!is_alias("./C"));
        assert!(is_toolkit("@procmodel/wfc"));
        assert!(!is_toolkit("@lib/wfc"));
    }

    /// A defined alias resolves for a run, but a tree built from the files has no
    /// `.luaurc`: the literal scan reports it as one a saved scene cannot follow.
    #[test]
    fn a_literal_alias_require_is_one_a_saved_scene_cannot_follow() {
        let dir = procmodel_testkit::scratch("literal");
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::fs::write(dir.join(".luaurc"), r#"{"aliases": {"lib": "./lib"}}"#).unwrap();
        std::fs::write(dir.join("lib/C.luau"), "return 1").unwrap();
        std::fs::write(dir.join("B.luau"), "return 2").unwrap();
        let generator = dir.join("Gen.luau");
        std::fs::write(
            &generator,
            "local c = require('@lib/C')\nlocal b = require('./B')\n",
        )
        .unwrap();
        let found = literal_requires(&generator, Some(&dir));
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].0, "@lib/C");
        let e = found[0].1.as_ref().unwrap_err();
        assert!(e.contains(".luaurc alias"), "{e}");
        assert_eq!(
            found[1].1.as_ref().unwrap().canonicalize().unwrap(),
            dir.join("B.luau").canonicalize().unwrap()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
