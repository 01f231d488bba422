//! Relaxed JSON, as two tools procmodel follows read it: JSONC — Rojo's project, meta, model
//! and data files since Rojo 7.6.1 (`// …` and `/* … */` comments) — and Luau's `.luaurc`
//! reader (`// …`, and Luau's own `-- …` and `--[[ … ]]` comments, which its config reader
//! skips as its lexer does). Both take a comma before a closing `}` or `]`.
//!
//! Owns: turning such text into a `serde_json::Value`, with errors at the line and column of
//! the text as written. Must never: read files or give the values meaning.

use serde_json::Value;

/// Which comments the text may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `// …` to the end of the line and `/* … */` (JSONC, as Rojo reads it).
    Jsonc,
    /// `// …`, `-- …` and Luau's long comments `--[[ … ]]`, `--[==[ … ]==]` (a `.luaurc`).
    Luaurc,
}

/// Parses `text`; the flag says whether it held comments (rewriting it would drop them).
pub fn parse(text: &str, dialect: Dialect) -> Result<(Value, bool), String> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut had_comments = false;
    let mut i = 0;
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
                    match comment_end(b, j, dialect) {
                        Some(end) if j < b.len() => j = end,
                        _ => break,
                    }
                }
                if matches!(b.get(j), Some(b'}' | b']')) {
                    out[i] = b' ';
                }
                i += 1;
            }
            _ => match comment_end(b, i, dialect) {
                Some(end) => {
                    had_comments = true;
                    // Blanked, keeping line breaks so positions stay those of the text.
                    for c in &mut out[i..end] {
                        if *c != b'\n' {
                            *c = b' ';
                        }
                    }
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

/// Where a comment starting at `i` ends (exclusive), if one starts there.
fn comment_end(b: &[u8], i: usize, dialect: Dialect) -> Option<usize> {
    let rest = b.get(i..)?;
    let line_end = |from: usize| {
        b[from..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |n| from + n)
    };
    // The end of a block opened at `body` and closed by `close` (the text's end if never).
    let block_end = |body: usize, close: &[u8]| {
        b.get(body..)
            .and_then(|tail| tail.windows(close.len()).position(|w| w == close))
            .map_or(b.len(), |n| body + n + close.len())
    };
    if rest.starts_with(b"//") {
        return Some(line_end(i));
    }
    match dialect {
        Dialect::Jsonc => rest.starts_with(b"/*").then(|| block_end(i + 2, b"*/")),
        Dialect::Luaurc => {
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
                    return Some(block_end(i + 2 + level + 2, &close));
                }
            }
            Some(line_end(i))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Luau's config reader takes comments and a trailing comma (jecs's `.luaurc` has one):
    /// so does this one, with errors at the text's own line and column.
    #[test]
    fn a_luaurc_may_hold_comments_and_trailing_commas() {
        let text = "{\n  // where the code is\n  \"aliases\": {\n    \"lib\": \"./src//lib\", -- the library\n    \"b\": \"./b\",\n  },\n  --[[ mode\n  ]] \"languageMode\": \"strict\",\n}\n";
        let (json, comments) = parse(text, Dialect::Luaurc).unwrap();
        assert!(comments);
        assert_eq!(json["aliases"]["lib"], "./src//lib");
        assert_eq!(json["aliases"]["b"], "./b");
        assert_eq!(json["languageMode"], "strict");
        let (plain, comments) = parse(r#"{"aliases": {"a": "x,}"},}"#, Dialect::Luaurc).unwrap();
        assert!(!comments);
        assert_eq!(plain["aliases"]["a"], "x,}");
        let e = parse(
            "{\n  // c\n  \"aliases\": {\"a\" \"x\"}\n}",
            Dialect::Luaurc,
        )
        .unwrap_err();
        assert!(e.contains("line 3"), "{e}");
        assert!(parse("{\"a\": [1,,]}", Dialect::Luaurc).is_err());
    }

    /// JSONC: line and block comments, trailing commas; `--` is not a comment there, and a
    /// block comment's text (a `,` or `}` inside it) is not JSON.
    #[test]
    fn jsonc_takes_line_and_block_comments() {
        let text = "{\n  /* the name, } */ \"name\": \"x\", // trailing\n  \"tree\": {\"$path\": \"src/*\"}, /* last */\n}";
        let (json, comments) = parse(text, Dialect::Jsonc).unwrap();
        assert!(comments);
        assert_eq!(json["name"], "x");
        assert_eq!(json["tree"]["$path"], "src/*");
        assert!(parse("{\"a\": 1 -- no\n}", Dialect::Jsonc).is_err());
        assert!(parse("{\"a\": 1 /* never closed }", Dialect::Jsonc).is_err());
        let e = parse("{\n/*\n\n*/ \"a\" 1}", Dialect::Jsonc).unwrap_err();
        assert!(e.contains("line 4"), "{e}");
        // Plain JSON is JSONC.
        assert_eq!(
            parse("[1, 2]", Dialect::Jsonc).unwrap(),
            (serde_json::json!([1, 2]), false)
        );
    }

    proptest::proptest! {
        /// Any text parses or errors, never panics, in both dialects.
        #[test]
        fn any_text_parses_or_errors(text in "\\PC{0,64}") {
            let _ = parse(&text, Dialect::Jsonc);
            let _ = parse(&text, Dialect::Luaurc);
        }

        /// JSON with a comment and a trailing comma put after every value reads as the JSON.
        #[test]
        fn comments_and_trailing_commas_change_nothing(
            items in proptest::collection::vec((0i64..1000, "[a-z/*-]{0,6}"), 0..6),
            note in "[a-z ,}\\]]{0,8}",
        ) {
            let plain = serde_json::Value::Array(
                items.iter().map(|(n, s)| serde_json::json!({ "n": n, "s": s })).collect(),
            );
            let mut relaxed = String::from("[");
            for (n, s) in &items {
                relaxed.push_str(&format!("{{\"n\": {n}, /* {note} */ \"s\": {s:?}, // {note}\n}},\n"));
            }
            relaxed.push(']');
            let (v, _) = parse(&relaxed, Dialect::Jsonc).unwrap();
            proptest::prop_assert_eq!(v, plain);
        }
    }
}
