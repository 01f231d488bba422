//! Shared argument checking, Roblox-style error messages and `FromLua` glue for the datatypes.

use mlua::{Lua, MultiValue, UserData, Value};

use crate::type_name;

/// A Roblox-style argument error: `invalid argument #1 to 'new' (number expected, got string)`.
pub(crate) fn bad_arg(pos: usize, func: &str, expected: &str, got: &Value) -> mlua::Error {
    mlua::Error::runtime(format!(
        "invalid argument #{pos} to '{func}' ({expected} expected, got {})",
        type_name(got)
    ))
}

/// A free-form argument error: `invalid argument #2 to 'NextInteger' (interval is empty)`.
pub(crate) fn arg_error(pos: usize, func: &str, msg: &str) -> mlua::Error {
    mlua::Error::runtime(format!("invalid argument #{pos} to '{func}' ({msg})"))
}

/// Reads a number from a Lua value, if it is one.
pub(crate) fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => Some(*n),
        Value::Integer(i) => Some(*i as f64),
        _ => None,
    }
}

/// Reads a number argument as Luau's `tonumber` and the Roblox API read one: a number, or
/// a string that spells one (`"2"`, `" 0.5 "`, `"1e3"`, `"0x10"`), as old scripts pass the
/// text of a TextBox or an attribute. Operators stay strict ([`as_number`]).
pub(crate) fn to_number(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => numeric_string(&s.as_bytes()),
        other => as_number(other),
    }
}

/// The number a string spells, as Luau reads one: surrounding whitespace, a sign, then a
/// decimal (with fraction and exponent) or a `0x` hexadecimal integer; never `inf`/`nan`.
fn numeric_string(s: &[u8]) -> Option<f64> {
    let t = std::str::from_utf8(s)
        .ok()?
        .trim_matches(|c: char| c.is_ascii_whitespace());
    let (negative, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let value = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        hex.bytes().fold(0.0f64, |n, b| {
            n * 16.0 + f64::from((b as char).to_digit(16).unwrap_or(0))
        })
    } else {
        let first = body.bytes().next()?;
        if !(first.is_ascii_digit() || first == b'.') {
            return None;
        }
        body.parse::<f64>().ok()?
    };
    Some(if negative { -value } else { value })
}

/// A datatype read out of a Luau value: userdata types by borrowing (and copying),
/// `Vector3` from Luau's native `vector`.
pub trait FromValue: Sized {
    fn from_value(v: &Value) -> Option<Self>;
}

impl<T: UserData + Clone + 'static> FromValue for T {
    fn from_value(v: &Value) -> Option<T> {
        match v {
            Value::UserData(ud) => ud.borrow::<T>().ok().map(|r| r.clone()),
            _ => None,
        }
    }
}

/// Reads a datatype value of type `T` (copying it out), if it is one.
pub(crate) fn as_ud<T: FromValue>(v: &Value) -> Option<T> {
    T::from_value(v)
}

/// Positional access to a callback's arguments with 1-based, Roblox-numbered errors.
pub(crate) struct Args<'a> {
    func: &'a str,
    values: Vec<Value>,
}

impl<'a> Args<'a> {
    /// Wraps `values` for the function named `func` (used in error messages).
    pub(crate) fn new(func: &'a str, values: MultiValue) -> Self {
        Args {
            func,
            values: values.into_vec(),
        }
    }

    /// The function's name, as errors give it.
    pub(crate) fn func(&self) -> &str {
        self.func
    }

    /// Number of arguments given.
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// The raw value at 1-based `pos` (nil when absent).
    pub(crate) fn get(&self, pos: usize) -> &Value {
        self.values.get(pos - 1).unwrap_or(&Value::Nil)
    }

    /// Whether argument `pos` is absent or nil.
    pub(crate) fn is_nil(&self, pos: usize) -> bool {
        matches!(self.get(pos), Value::Nil)
    }

    /// A required number.
    pub(crate) fn number(&self, pos: usize) -> mlua::Result<f64> {
        let v = self.get(pos);
        to_number(v).ok_or_else(|| bad_arg(pos, self.func, "number", v))
    }

    /// A required number as f32.
    pub(crate) fn f32(&self, pos: usize) -> mlua::Result<f32> {
        Ok(self.number(pos)? as f32)
    }

    /// An optional number with a default for nil.
    pub(crate) fn opt_number(&self, pos: usize, default: f64) -> mlua::Result<f64> {
        if self.is_nil(pos) {
            Ok(default)
        } else {
            self.number(pos)
        }
    }

    /// An optional f32 with a default for nil.
    pub(crate) fn opt_f32(&self, pos: usize, default: f32) -> mlua::Result<f32> {
        Ok(self.opt_number(pos, default as f64)? as f32)
    }

    /// A component of `Vector2.new`/`Vector3.new`: as [`Args::opt_f32`] with 0 as default,
    /// except that a datatype value (a userdata or a vector) reads as 0 without an error, as
    /// the reference's Vector2int16 and Vector3int16 pages say the constructors read them.
    pub(crate) fn opt_component(&self, pos: usize) -> mlua::Result<f32> {
        match self.get(pos) {
            Value::UserData(_) | Value::Vector(_) => Ok(0.0),
            _ => self.opt_f32(pos, 0.0),
        }
    }

    /// A required string.
    pub(crate) fn string(&self, pos: usize) -> mlua::Result<String> {
        match self.get(pos) {
            Value::String(s) => Ok(s.to_string_lossy()),
            v => Err(bad_arg(pos, self.func, "string", v)),
        }
    }

    /// A required userdata of type `T`, named `expected` in errors.
    pub(crate) fn ud<T: FromValue>(&self, pos: usize, expected: &str) -> mlua::Result<T> {
        let v = self.get(pos);
        as_ud::<T>(v).ok_or_else(|| bad_arg(pos, self.func, expected, v))
    }

    /// A required table.
    pub(crate) fn table(&self, pos: usize) -> mlua::Result<mlua::Table> {
        match self.get(pos) {
            Value::Table(t) => Ok(t.clone()),
            v => Err(bad_arg(pos, self.func, "table", v)),
        }
    }

    /// An error for argument `pos` expecting `expected`.
    pub(crate) fn bad(&self, pos: usize, expected: &str) -> mlua::Error {
        bad_arg(pos, self.func, expected, self.get(pos))
    }

    /// A free-form error for argument `pos`.
    pub(crate) fn error(&self, pos: usize, msg: &str) -> mlua::Error {
        arg_error(pos, self.func, msg)
    }
}

/// Error for a missing member: `Foo is not a valid member of Vector3`.
pub(crate) fn no_member(key: &str, ty: &str) -> mlua::Error {
    mlua::Error::runtime(format!("{key} is not a valid member of {ty}"))
}

/// The metamethods every plain value datatype shares: `==` compares values of type `T`
/// (anything else is unequal), and reading an unknown member is an error naming `name`.
pub(crate) fn value_meta<T, M>(m: &mut M, name: &'static str)
where
    T: mlua::UserData + FromValue + PartialEq + 'static,
    M: mlua::UserDataMethods<T>,
{
    m.add_meta_function(mlua::MetaMethod::Eq, |_, (a, b): (Value, Value)| {
        Ok(matches!((as_ud::<T>(&a), as_ud::<T>(&b)), (Some(a), Some(b)) if a == b))
    });
    m.add_meta_function(
        mlua::MetaMethod::Index,
        move |_, (_, k): (Value, mlua::LuaString)| {
            Err::<(), _>(no_member(&k.to_string_lossy(), name))
        },
    );
}

/// `FromLua` for a userdata newtype: accepts only that userdata.
pub(crate) fn from_lua_ud<T: FromValue>(value: Value, to: &'static str) -> mlua::Result<T> {
    as_ud::<T>(&value).ok_or_else(|| mlua::Error::FromLuaConversionError {
        from: value.type_name(),
        to: to.to_string(),
        message: Some(format!("{to} expected, got {}", type_name(&value))),
    })
}

/// Implements `FromLua` for userdata newtypes, naming the Roblox type in errors.
macro_rules! impl_from_lua {
    ($($ty:ident => $name:literal),+ $(,)?) => {
        $(
            impl mlua::FromLua for $ty {
                fn from_lua(value: mlua::Value, _lua: &mlua::Lua) -> mlua::Result<Self> {
                    $crate::args::from_lua_ud::<$ty>(value, $name)
                }
            }
        )+
    };
}
pub(crate) use impl_from_lua;

/// Builds a read-only constructor table from `(name, value)` pairs and installs it as a global.
/// Installs the global `name` as a table whose `new` is `constructor`.
pub(crate) fn install_constructor(
    lua: &Lua,
    name: &str,
    constructor: mlua::Function,
) -> mlua::Result<()> {
    let t = lua.create_table()?;
    t.raw_set("new", constructor)?;
    install_global(lua, name, t)
}

pub(crate) fn install_global(lua: &Lua, name: &str, table: mlua::Table) -> mlua::Result<()> {
    table.set_readonly(true);
    lua.globals().set(name, table)
}

/// Formats an f32 component as Roblox's datatype `tostring` does: C's `%.9g` (nine significant
/// digits, trailing zeros dropped, exponent form below 1e-4 or from 1e9), e.g. `0.100000001`,
/// `-4.37113883e-08`.
pub(crate) fn fmt_num(n: f32) -> String {
    const PRECISION: i32 = 9;
    let x = n as f64;
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let sci = format!("{:.*e}", (PRECISION - 1) as usize, x);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..PRECISION).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    } else {
        trim(&format!("{:.*}", (PRECISION - 1 - exp) as usize, x))
    }
}

#[cfg(test)]
mod tests {
    use super::{fmt_num, numeric_string};

    #[test]
    fn numeric_strings_read_as_luau_reads_them() {
        for (s, want) in [
            ("2", Some(2.0)),
            (" 0.5 ", Some(0.5)),
            ("-3", Some(-3.0)),
            ("+4", Some(4.0)),
            ("1e3", Some(1000.0)),
            (".5", Some(0.5)),
            ("5.", Some(5.0)),
            ("0x10", Some(16.0)),
            ("-0XfF", Some(-255.0)),
            ("", None),
            ("abc", None),
            ("1 2", None),
            ("inf", None),
            ("nan", None),
            ("0x", None),
            ("1e", None),
        ] {
            assert_eq!(numeric_string(s.as_bytes()), want, "{s:?}");
        }
    }

    #[test]
    fn components_print_like_percent_9g() {
        for (n, want) in [
            (0.0, "0"),
            (1.0, "1"),
            (-2.5, "-2.5"),
            (0.1, "0.100000001"),
            (-4.371_139e-8, "-4.37113883e-08"),
            (123456.79, "123456.789"),
            (1e9, "1e+09"),
            (0.0001, "9.99999975e-05"),
            (f32::INFINITY, "inf"),
        ] {
            assert_eq!(fmt_num(n), want, "{n}");
        }
    }
}
