//! `globIgnorePaths`: globs over paths relative to the project's folder, `/`-separated —
//! `*` and `?` within one path segment, `**` for any number of segments, `[abc]` sets.

/// A compiled glob (its segments).
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    segments: Vec<String>,
}

impl Glob {
    pub(crate) fn new(text: &str) -> Result<Glob, String> {
        if text.is_empty() {
            return Err("an empty glob".into());
        }
        let mut depth = 0i32;
        for c in text.chars() {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            if !(0..=1).contains(&depth) {
                return Err(format!("unbalanced brackets in glob '{text}'"));
            }
        }
        if depth != 0 {
            return Err(format!("unbalanced brackets in glob '{text}'"));
        }
        let trimmed = text.strip_prefix("./").unwrap_or(text);
        Ok(Glob {
            segments: trimmed
                .split('/')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        })
    }

    /// True when the relative, `/`-separated `path` matches.
    pub(crate) fn matches(&self, path: &str) -> bool {
        let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        match_segments(&self.segments, &parts)
    }
}

fn match_segments(glob: &[String], path: &[&str]) -> bool {
    match glob.split_first() {
        None => path.is_empty(),
        Some((first, rest)) if first == "**" => {
            (0..=path.len()).any(|skip| match_segments(rest, &path[skip..]))
        }
        Some((first, rest)) => match path.split_first() {
            Some((p, prest)) => {
                let g: Vec<char> = first.chars().collect();
                let s: Vec<char> = p.chars().collect();
                match_segment(&g, &s) && match_segments(rest, prest)
            }
            None => false,
        },
    }
}

fn match_segment(g: &[char], s: &[char]) -> bool {
    match g.split_first() {
        None => s.is_empty(),
        Some(('*', rest)) => (0..=s.len()).any(|skip| match_segment(rest, &s[skip..])),
        Some(('?', rest)) => !s.is_empty() && match_segment(rest, &s[1..]),
        Some(('[', rest)) => {
            let Some(close) = rest.iter().position(|&c| c == ']') else {
                return false;
            };
            let (set, after) = (&rest[..close], &rest[close + 1..]);
            let Some(&c) = s.first() else { return false };
            let (negate, set) = match set.split_first() {
                Some(('!', tail)) => (true, tail),
                _ => (false, set),
            };
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == '-' {
                    hit |= set[i] <= c && c <= set[i + 2];
                    i += 3;
                } else {
                    hit |= set[i] == c;
                    i += 1;
                }
            }
            hit != negate && match_segment(after, &s[1..])
        }
        Some((c, rest)) => s.first() == Some(c) && match_segment(rest, &s[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(glob: &str, path: &str, expected: bool) {
        assert_eq!(
            Glob::new(glob).unwrap().matches(path),
            expected,
            "{glob} vs {path}"
        );
    }

    #[test]
    fn globs() {
        check("**/*.spec.luau", "src/a/b.spec.luau", true);
        check("**/*.spec.luau", "b.spec.luau", true);
        check("**/*.spec.luau", "src/b.luau", false);
        check("src/*.txt", "src/a.txt", true);
        check("src/*.txt", "src/x/a.txt", false);
        check("src/**", "src/x/a.txt", true);
        check("a?c", "abc", true);
        check("a[bx]c", "axc", true);
        check("a[!b]c", "abc", false);
        check("[a-c]", "b", true);
        assert!(Glob::new("a[b").is_err());
        assert!(Glob::new("").is_err());
    }
}
