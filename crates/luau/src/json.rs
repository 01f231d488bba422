//! `HttpService:JSONEncode` / `JSONDecode` with Roblox's rules: a table with keys 1..n is an
//! array (its string keys, if any, are ignored: "an array takes priority"), one whose keys
//! are all strings is an object (an empty table is `[]`); a hole in an array, a key that is
//! neither and a cycle are errors. nil in an array is `null`; infinities and NaN are written
//! as `inf`, `-inf` and `nan`, as Roblox writes them (not valid JSON, as its reference warns).
//! A buffer is the object `{"m":null,"t":"buffer","base64":…}` (Roblox may compress it into
//! `zbase64`; this encoder never does, and the decoder reads the uncompressed form back into
//! a buffer); a value JSON has no form for (a Vector3, an Instance, a function) is `null`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use mlua::{Lua, Table, Value};
use std::fmt::Write;

/// Encodes `v` as compact JSON (object keys sorted, so the same table gives the same bytes).
/// Tables are walked with a list of open ones, not recursion, so the native stack does not
/// grow with the nesting.
pub fn encode(v: &Value) -> mlua::Result<String> {
    let mut out = String::new();
    let mut open: Vec<Open> = Vec::new();
    let mut next = Some(v.clone());
    loop {
        if let Some(v) = next.take() {
            match v {
                Value::Table(t) => {
                    if open.iter().any(|o| o.id == t.to_pointer()) {
                        return Err(err("tables cannot be cyclic"));
                    }
                    if open.len() >= MAX_DEPTH {
                        return Err(err(&format!(
                            "tables nest too deeply (more than {MAX_DEPTH} levels)"
                        )));
                    }
                    open.push(Open::start(&mut out, t)?);
                }
                other => scalar(&mut out, &other)?,
            }
        }
        let Some(top) = open.last_mut() else {
            return Ok(out);
        };
        match top.next(&mut out)? {
            Some(v) => next = Some(v),
            None => {
                open.pop();
            }
        }
    }
}

/// Deepest nesting of arrays and objects either way (the decoder recurses once per level).
const MAX_DEPTH: usize = 512;

fn err(msg: &str) -> mlua::Error {
    mlua::Error::runtime(format!("JSONEncode: {msg}"))
}

/// A value that is not a table.
fn scalar(out: &mut String, v: &Value) -> mlua::Result<()> {
    match v {
        Value::Nil => out.push_str("null"),
        Value::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Integer(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Number(n) => number(out, *n),
        Value::String(s) => string(out, &s.to_str()?),
        Value::Buffer(b) => {
            out.push_str(r#"{"m":null,"t":"buffer","base64":""#);
            out.push_str(&BASE64.encode(b.to_vec()));
            out.push_str("\"}");
        }
        _ => out.push_str("null"),
    }
    Ok(())
}

/// A table being written: an array (its length and the next position) or an object (its
/// entries sorted by key and the next one).
struct Open {
    id: *const std::ffi::c_void,
    table: Table,
    entries: Option<Vec<(String, Value)>>,
    len: usize,
    at: usize,
}

impl Open {
    /// Classifies `t` (an array when its keys are exactly 1..n, an object when they are all
    /// strings) and writes its opening bracket.
    fn start(out: &mut String, t: Table) -> mlua::Result<Open> {
        let mut ints = 0usize;
        let mut strings = Vec::new();
        let mut other = false;
        for pair in t.pairs::<Value, Value>() {
            let (k, v) = pair?;
            match k {
                Value::Integer(n) if n >= 1 => ints += 1,
                Value::Number(n) if n >= 1.0 && n.fract() == 0.0 => ints += 1,
                Value::String(s) => strings.push((s.to_str()?.to_owned(), v)),
                _ => other = true,
            }
        }
        if other {
            return Err(err(
                "Cannot convert mixed or non-array tables: keys must be strings or positive integers",
            ));
        }
        let len = t.raw_len();
        if ints > 0 {
            // An array takes priority over string keys (Roblox's reference); its keys
            // must be 1..n with no hole.
            if ints != len {
                let hole = (1..=len.max(ints) + 1)
                    .find(|&i| matches!(t.raw_get::<Value>(i), Ok(Value::Nil)))
                    .unwrap_or(len + 1);
                return Err(err(&format!(
                    "an array cannot have holes: index {hole} is nil but a later index is not"
                )));
            }
            strings.clear();
        }
        let entries = if strings.is_empty() {
            out.push('[');
            None
        } else {
            strings.sort_by(|a, b| a.0.cmp(&b.0));
            out.push('{');
            Some(strings)
        };
        Ok(Open {
            id: t.to_pointer(),
            len: entries.as_ref().map_or(len, Vec::len),
            table: t,
            entries,
            at: 0,
        })
    }

    /// Writes the separator (and key) before the next value and returns it, or closes the
    /// table and returns None.
    fn next(&mut self, out: &mut String) -> mlua::Result<Option<Value>> {
        if self.at == self.len {
            out.push(if self.entries.is_some() { '}' } else { ']' });
            return Ok(None);
        }
        if self.at > 0 {
            out.push(',');
        }
        self.at += 1;
        match &self.entries {
            Some(entries) => {
                let (k, v) = &entries[self.at - 1];
                string(out, k);
                out.push(':');
                Ok(Some(v.clone()))
            }
            None => Ok(Some(self.table.raw_get::<Value>(self.at)?)),
        }
    }
}

fn number(out: &mut String, n: f64) {
    if n.is_nan() {
        out.push_str("nan");
    } else if n.is_infinite() {
        out.push_str(if n > 0.0 { "inf" } else { "-inf" });
    } else if n.fract() == 0.0 && n.abs() < 1e15 {
        let _ = write!(out, "{}", n as i64);
    } else {
        let _ = write!(out, "{n}");
    }
}

fn string(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' => out.push_str("\\/"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Decodes JSON text into Luau values (`null` is nil; arrays keep their positions).
pub fn decode(lua: &Lua, text: &str) -> mlua::Result<Value> {
    let mut p = Parser {
        b: text.as_bytes(),
        i: 0,
        lua,
        depth: 0,
    };
    p.ws();
    let v = p.value()?;
    p.ws();
    if p.i != p.b.len() {
        return Err(p.fail("unexpected text after the value"));
    }
    Ok(v)
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    lua: &'a Lua,
    depth: usize,
}

impl Parser<'_> {
    fn fail(&self, what: &str) -> mlua::Error {
        mlua::Error::runtime(format!("Can't parse JSON: {what} at offset {}", self.i))
    }

    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.b[self.i..].starts_with(lit.as_bytes()) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> mlua::Result<Value> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.fail("nesting too deep"));
        }
        let v = match self.b.get(self.i) {
            None => Err(self.fail("unexpected end")),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => Ok(Value::String(self.lua.create_string(self.string()?)?)),
            Some(b't') if self.eat("true") => Ok(Value::Boolean(true)),
            Some(b'f') if self.eat("false") => Ok(Value::Boolean(false)),
            Some(b'n') if self.eat("null") => Ok(Value::Nil),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.fail("unexpected character")),
        };
        self.depth -= 1;
        v
    }

    fn number(&mut self) -> mlua::Result<Value> {
        let start = self.i;
        while self.i < self.b.len()
            && matches!(
                self.b[self.i],
                b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
            )
        {
            self.i += 1;
        }
        let s = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("");
        s.parse::<f64>()
            .map(Value::Number)
            .map_err(|_| self.fail("bad number"))
    }

    fn string(&mut self) -> mlua::Result<String> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let Some(&c) = self.b.get(self.i) else {
                return Err(self.fail("unterminated string"));
            };
            self.i += 1;
            match c {
                b'"' => return Ok(out),
                b'\\' => {
                    let Some(&e) = self.b.get(self.i) else {
                        return Err(self.fail("unterminated string"));
                    };
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xd800..0xdc00).contains(&cp) && self.eat("\\u") {
                                let lo = self.hex4()?;
                                cp = 0x10000
                                    + ((cp - 0xd800) << 10)
                                    + (lo.wrapping_sub(0xdc00) & 0x3ff);
                            }
                            out.push(char::from_u32(cp).unwrap_or('\u{fffd}'));
                        }
                        _ => return Err(self.fail("bad escape")),
                    }
                }
                _ => {
                    // Copy a run of plain bytes (valid UTF-8: the input is a &str).
                    let start = self.i - 1;
                    while self.i < self.b.len() && !matches!(self.b[self.i], b'"' | b'\\') {
                        self.i += 1;
                    }
                    out.push_str(std::str::from_utf8(&self.b[start..self.i]).unwrap_or(""));
                }
            }
        }
    }

    fn hex4(&mut self) -> mlua::Result<u32> {
        let s = self
            .b
            .get(self.i..self.i + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| self.fail("bad \\u escape"))?;
        self.i += 4;
        Ok(s)
    }

    fn array(&mut self) -> mlua::Result<Value> {
        self.i += 1;
        let t = self.lua.create_table()?;
        self.ws();
        if self.eat("]") {
            return Ok(Value::Table(t));
        }
        let mut n = 1;
        loop {
            self.ws();
            let v = self.value()?;
            t.raw_set(n, v)?;
            n += 1;
            self.ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("]") {
                return Ok(Value::Table(t));
            }
            return Err(self.fail("expected ',' or ']'"));
        }
    }

    /// An object JSONEncode wrote for a buffer (`"t":"buffer"` and its `base64`) is that
    /// buffer again; any other object is the table.
    fn buffer_object(&self, t: Table) -> mlua::Result<Value> {
        if !matches!(t.raw_get::<Value>("t")?, Value::String(s) if s == "buffer") {
            return Ok(Value::Table(t));
        }
        if let Value::String(b64) = t.raw_get::<Value>("base64")? {
            let bytes = BASE64
                .decode(&*b64.as_bytes())
                .map_err(|e| self.fail(&format!("a buffer's base64 is not valid ({e})")))?;
            return Ok(Value::Buffer(self.lua.create_buffer(bytes)?));
        }
        if t.raw_get::<Value>("zbase64")? != Value::Nil {
            return Err(self
                .fail("a compressed buffer (zbase64) cannot be read here: procmodel has no zstd"));
        }
        Ok(Value::Table(t))
    }

    fn object(&mut self) -> mlua::Result<Value> {
        self.i += 1;
        let t = self.lua.create_table()?;
        self.ws();
        if self.eat("}") {
            return Ok(Value::Table(t));
        }
        loop {
            self.ws();
            if self.b.get(self.i) != Some(&b'"') {
                return Err(self.fail("expected a string key"));
            }
            let k = self.string()?;
            self.ws();
            if !self.eat(":") {
                return Err(self.fail("expected ':'"));
            }
            self.ws();
            let v = self.value()?;
            t.raw_set(k, v)?;
            self.ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("}") {
                return self.buffer_object(t);
            }
            return Err(self.fail("expected ',' or '}'"));
        }
    }
}
