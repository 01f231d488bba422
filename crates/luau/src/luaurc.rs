//! `.luaurc` files as Luau reads them: JSON with comments and trailing commas allowed.
//!
//! Owns: turning a `.luaurc`'s text into JSON. Must never: read files or resolve aliases
//! (`globals::require_file` does).

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
