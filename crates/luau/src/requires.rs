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

/// A `.luaurc` as Luau reads it: JSON that may also hold comments (`// …`, and Luau's
/// `-- …` and `--[[ … ]]`, which its config reader skips as its lexer does) and a comma
/// before a closing `}` or `]` (as in the `.luaurc` files of many Luau repositories). The
/// flag says whether there were comments (rewriting the file would drop them). Errors give
/// the line and column in the file as written.
pub fn parse_luaurc(text: &str) -> Result<(serde_json::Value, bool), String> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut had_comments = false;
    let mut i = 0;
    // Blanks `out[from..to]`, keeping line breaks so positions stay those of the file.
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    // Where a comment starting at `i` ends (exclusive), if one starts there.
    let comment_end = |i: usize| -> Option<usize> {
        let rest = &b[i..];
        let line_end = |from: usize| {
            b[from..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| from + n)
        };
        if rest.starts_with(b"//") {
            return Some(line_end(i));
        }
        if !rest.starts_with(b"--") {
            return None;
        }
        // `--[[ … ]]`, `--[==[ … ]==]`: a long comment; otherwise to the end of the line.
        let after = &rest[2..];
        if after.first() == Some(&b'[') {
            let level = after[1..].iter().take_while(|&&c| c == b'=').count();
            if after.get(1 + level) == Some(&b'[') {
                let close: Vec<u8> = std::iter::once(b']')
                    .chain(std::iter::repeat_n(b'=', level))
                    .chain(std::iter::once(b']'))
                    .collect();
                let body = i + 2 + level + 2;
                return Some(
                    b[body..]
                        .windows(close.len())
                        .position(|w| w == close.as_slice())
                        .map_or(b.len(), |n| body + n + close.len()),
                );
            }
        }
        Some(line_end(i))
    };
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b',' => {
                // A comma whose next token closes the object or array is dropped.
                let mut j = i + 1;
                loop {
                    while j < b.len() && b[j].is_ascii_whitespace() {
                        j += 1;
                    }
                    match comment_end(j) {
                        Some(end) if j < b.len() => j = end,
                        _ => break,
                    }
                }
                if matches!(b.get(j), Some(b'}' | b']')) {
                    out[i] = b' ';
                }
                i += 1;
            }
            _ => match comment_end(i) {
                Some(end) => {
                    had_comments = true;
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            },
        }
    }
    let json = String::from_utf8(out).map_err(|e| e.to_string())?;
    serde_json::from_str(&json)
        .map(|v| (v, had_comments))
        .map_err(|e| e.to_string())
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

    /// Luau's config reader takes comments and a trailing comma (jecs's `.luaurc` has one):
    /// so does procmodel's, with errors at the file's own line and column.
    #[test]
    fn a_luaurc_may_hold_comments_and_trailing_commas() {
        let text = "{\n  // where the code is\n  \"aliases\": {\n    \"lib\": \"./src//lib\", -- the library\n    \"b\": \"./b\",\n  },\n  --[[ mode\n  ]] \"languageMode\": \"strict\",\n}\n";
        let (json, comments) = parse_luaurc(text).unwrap();
        assert!(comments);
        assert_eq!(json["aliases"]["lib"], "./src//lib");
        assert_eq!(json["aliases"]["b"], "./b");
        assert_eq!(json["languageMode"], "strict");
        let (plain, comments) = parse_luaurc(r#"{"aliases": {"a": "x,}"},}"#).unwrap();
        assert!(!comments);
        assert_eq!(plain["aliases"]["a"], "x,}");
        let e = parse_luaurc("{\n  // c\n  \"aliases\": {\"a\" \"x\"}\n}").unwrap_err();
        assert!(e.contains("line 3"), "{e}");
        assert!(parse_luaurc("{\"a\": [1,,]}").is_err());
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
