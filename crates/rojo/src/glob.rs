//! Project globs (`globIgnorePaths`, `syncRules`) as Rojo matches them: globset globs over
//! the path relative to the project's folder, with globset's defaults — `*` and `?` match
//! across `/` too, `**` any number of folders, `{a,b}` either, `[abc]`/`[!a]` sets — and, in
//! `globIgnorePaths`, a leading `!` re-including what an earlier glob ignored (`\!` for a
//! literal `!`).

use std::path::Path;

/// A compiled glob.
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    matcher: globset::GlobMatcher,
}

impl Glob {
    pub(crate) fn new(text: &str) -> Result<Glob, String> {
        if text.is_empty() {
            return Err("an empty glob".into());
        }
        // Paths are relative to the project's folder: `./src/*` means `src/*`.
        let text = text.strip_prefix("./").unwrap_or(text);
        let glob = globset::Glob::new(text).map_err(|e| format!("not a glob: {e}"))?;
        Ok(Glob {
            matcher: glob.compile_matcher(),
        })
    }

    /// True when `path` (relative to the project's folder) matches.
    pub(crate) fn matches(&self, path: &Path) -> bool {
        self.matcher.is_match(path)
    }
}

/// A `globIgnorePaths` entry: a glob, or with a leading `!` a negation.
#[derive(Debug, Clone)]
pub(crate) struct IgnoreGlob {
    glob: Glob,
    negated: bool,
}

impl IgnoreGlob {
    pub(crate) fn new(text: &str) -> Result<IgnoreGlob, String> {
        let (negated, body) = match text.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (
                false,
                text.strip_prefix('\\')
                    .filter(|r| r.starts_with('!'))
                    .unwrap_or(text),
            ),
        };
        Ok(IgnoreGlob {
            glob: Glob::new(body)?,
            negated,
        })
    }
}

/// Whether the last of `rules` (each with the folder it is relative to) that matches `path`
/// ignores it, as gitignore decides: none matching, or a negation last, keeps it.
pub(crate) fn ignored<'a>(
    rules: impl IntoIterator<Item = (&'a Path, &'a IgnoreGlob)>,
    path: &Path,
) -> bool {
    let mut ignored = false;
    for (base, rule) in rules {
        if let Ok(rel) = path.strip_prefix(base)
            && rule.glob.matches(rel)
        {
            ignored = !rule.negated;
        }
    }
    ignored
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(glob: &str, path: &str, expected: bool) {
        assert_eq!(
            Glob::new(glob).unwrap().matches(Path::new(path)),
            expected,
            "{glob} vs {path}"
        );
    }

    #[test]
    fn globs_match_as_in_rojo() {
        check("**/*.spec.luau", "src/a/b.spec.luau", true);
        check("**/*.spec.luau", "b.spec.luau", true);
        check("**/*.spec.luau", "src/b.luau", false);
        check("src/*.txt", "src/a.txt", true);
        check("./src/*.txt", "src/a.txt", true);
        // globset's default: `*` crosses folders (Rojo does not turn that off).
        check("src/*.txt", "src/x/a.txt", true);
        check("*.foo", "deep/in/a.foo", true);
        check("src/**", "src/x/a.txt", true);
        check("*.{yml,yaml}", "a.yaml", true);
        check("a?c", "abc", true);
        check("a[bx]c", "axc", true);
        check("a[!b]c", "abc", false);
        check("[a-c]", "b", true);
        assert!(Glob::new("a[b").is_err());
        assert!(Glob::new("").is_err());
    }

    #[test]
    fn the_last_matching_ignore_glob_decides() {
        let rules: Vec<IgnoreGlob> = ["**/*.spec.luau", "!keep.spec.luau", "\\!odd.luau"]
            .iter()
            .map(|g| IgnoreGlob::new(g).unwrap())
            .collect();
        let base = Path::new("/p");
        let with = |path: &str| ignored(rules.iter().map(|r| (base, r)), Path::new(path));
        assert!(with("/p/src/a.spec.luau"));
        assert!(!with("/p/keep.spec.luau"), "re-included by the negation");
        assert!(with("/p/!odd.luau"), "an escaped ! is a literal one");
        assert!(!with("/p/src/a.luau"));
        assert!(
            !with("/elsewhere/a.spec.luau"),
            "outside the project's folder"
        );
    }
}
