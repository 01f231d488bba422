//! Roblox's additions to Luau's `utf8` library: `utf8.graphemes` (the extended grapheme
//! clusters of Unicode's UAX #29: a letter with its combining marks, an emoji sequence, a
//! CRLF) and `utf8.nfcnormalize` / `utf8.nfdnormalize` (Normal Forms C and D).
//!
//! Owns: those three functions. Must never: change Luau's own `utf8` functions.

use mlua::{Lua, Value};
use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

/// Adds the three functions to the `utf8` table (left alone once it is read-only).
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let Ok(Value::Table(utf8)) = lua.globals().raw_get::<Value>("utf8") else {
        return Ok(());
    };
    if utf8.is_readonly() {
        return Ok(());
    }
    let forms: [(&str, fn(&str) -> String); 2] = [
        ("nfcnormalize", |t| t.nfc().collect()),
        ("nfdnormalize", |t| t.nfd().collect()),
    ];
    for (name, form) in forms {
        utf8.raw_set(
            name,
            lua.create_function(move |lua, s: mlua::LuaString| {
                let bytes = s.as_bytes();
                lua.create_string(form(valid(&bytes, name, 0)?))
            })?,
        )?;
    }
    utf8.raw_set(
        "graphemes",
        lua.create_function(
            |lua, (s, i, j): (mlua::LuaString, Option<i64>, Option<i64>)| {
                let bytes = s.as_bytes();
                let len = bytes.len() as i64;
                // Byte positions as `string.sub` takes them: 1-based, negative from the end.
                let at = |p: i64| {
                    if p < 0 {
                        (len + p + 1).max(1)
                    } else {
                        p.max(1)
                    }
                };
                let (first, last) = (at(i.unwrap_or(1)), at(j.unwrap_or(-1)).min(len));
                let clusters: Vec<(i64, i64)> = if first > last {
                    Vec::new()
                } else {
                    let from = (first - 1) as usize;
                    let text = valid(&bytes[from..last as usize], "graphemes", from)?;
                    text.grapheme_indices(true)
                        .map(|(at, g)| {
                            let start = (from + at) as i64 + 1;
                            (start, start + g.len() as i64 - 1)
                        })
                        .collect()
                };
                let next = std::cell::Cell::new(0usize);
                lua.create_function(move |_, ()| {
                    let k = next.get();
                    next.set(k + 1);
                    // (first, last), then nil: the loop ends.
                    Ok(match clusters.get(k) {
                        Some(&(first, last)) => (Some(first), Some(last)),
                        None => (None, None),
                    })
                })
            },
        )?,
    )
}

/// `bytes` as text, or the error Luau's `utf8` functions give for bytes that are not UTF-8
/// (naming the 1-based position of the first bad byte; `from` is where `bytes` begin).
fn valid<'a>(bytes: &'a [u8], function: &str, from: usize) -> mlua::Result<&'a str> {
    std::str::from_utf8(bytes).map_err(|e| {
        mlua::Error::runtime(format!(
            "invalid argument #1 to '{function}' (invalid UTF-8 code at byte {})",
            from + e.valid_up_to() + 1
        ))
    })
}
