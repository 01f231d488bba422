//! Native procedural toolkit modules for Luau, loaded with `require("@procmodel/<name>")`:
//! noise, automata, lsystem, wfc, terrain. Each module is a frozen table of functions over the
//! algorithm crates; bulk results come back in Luau buffers or arrays.
//!
//! Conventions shared by every module (documented for users in `docs/toolkit.md`):
//! - errors name the function and the argument: `automata.cave: width must be a positive
//!   integer, got -3`;
//! - seeds are Luau numbers holding integers in `[-2^63, 2^63)`; a negative seed is taken as its
//!   two's complement (`-1` → `0xffff_ffff_ffff_ffff`); `nil` means seed 0 (never a clock);
//! - grid sizes are capped at [`MAX_CELLS`] cells so a typo cannot exhaust memory.

mod automata;
mod lsystem;
mod noise;
mod terrain;
mod wfc;

use mlua::{Buffer, Lua, Table, Value};

/// Largest grid (cells or samples) any toolkit function builds: 16 777 216 (2^24).
pub const MAX_CELLS: usize = 1 << 24;

/// How a toolkit module edits the voxels of a `Terrain` instance a script hands it: the
/// host's `workspace.Terrain` storage, write checks and write-back. The host passes it to
/// [`install`], so the toolkit does not depend on the host's classes. Arguments: the VM, the
/// value that should be a Terrain instance, the caller's name for messages, and the edit.
pub(crate) type TerrainAccess = fn(
    &Lua,
    &Value,
    &str,
    &mut dyn FnMut(&mut procmodel_terrain::Terrain) -> mlua::Result<()>,
) -> mlua::Result<()>;

/// Registers the loaders of every `@procmodel/*` module in `builtin` (name → loader function
/// returning the module table; called once per VM on first require).
pub(crate) fn install(
    lua: &Lua,
    builtin: &Table,
    terrain_access: TerrainAccess,
) -> mlua::Result<()> {
    let register = |name: &str, build: Box<dyn Fn(&Lua) -> mlua::Result<Table>>| {
        builtin.raw_set(
            name,
            lua.create_function(move |lua, ()| {
                let t = build(lua)?;
                t.set_readonly(true);
                Ok(t)
            })?,
        )
    };
    register("noise", Box::new(noise::module))?;
    register("automata", Box::new(automata::module))?;
    register("lsystem", Box::new(lsystem::module))?;
    register("wfc", Box::new(wfc::module))?;
    register(
        "terrain",
        Box::new(move |lua| terrain::module(lua, terrain_access)),
    )?;
    Ok(())
}

/// A runtime error prefixed with the function name (`noise.grid2: ...`).
pub(crate) fn err(func: &str, message: impl std::fmt::Display) -> mlua::Error {
    mlua::Error::runtime(format!("{func}: {message}"))
}

/// A short description of a value for error messages: numbers and strings by value,
/// other values by type.
pub(crate) fn show(v: &Value) -> String {
    match v {
        Value::Integer(i) => i.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("{:?}", s.to_string_lossy()),
        other => procmodel_luau_types::type_name(other),
    }
}

/// Reads a seed (see the module docs); `nil` is 0.
pub(crate) fn seed(func: &str, name: &str, v: &Value) -> mlua::Result<u64> {
    match v {
        Value::Nil => Ok(0),
        Value::Integer(i) => Ok(*i as u64),
        Value::Number(n) if n.fract() == 0.0 && n.abs() <= 9.223_372_036_854_775e18 => {
            Ok((*n as i64) as u64)
        }
        other => Err(err(
            func,
            format!("{name} must be an integer, got {}", show(other)),
        )),
    }
}

/// A number argument (integers accepted).
pub(crate) fn number(func: &str, name: &str, v: &Value) -> mlua::Result<f64> {
    match v {
        Value::Integer(i) => Ok(*i as f64),
        Value::Number(n) => Ok(*n),
        other => Err(err(
            func,
            format!("{name} must be a number, got {}", show(other)),
        )),
    }
}

/// A finite number argument.
pub(crate) fn finite(func: &str, name: &str, v: &Value) -> mlua::Result<f64> {
    let n = number(func, name, v)?;
    if n.is_finite() {
        Ok(n)
    } else {
        Err(err(func, format!("{name} must be finite, got {n}")))
    }
}

/// An integer in `min..=max`.
pub(crate) fn integer(func: &str, name: &str, v: &Value, min: i64, max: i64) -> mlua::Result<i64> {
    let bad = || {
        let what = if min == 1 && max > 1_000_000 {
            "a positive integer".to_owned()
        } else if min == 0 && max > 1_000_000 {
            "a non-negative integer".to_owned()
        } else {
            format!("an integer in {min}..{max}")
        };
        err(func, format!("{name} must be {what}, got {}", show(v)))
    };
    let i = match v {
        Value::Integer(i) => *i,
        Value::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => *n as i64,
        _ => return Err(bad()),
    };
    if i > max && min <= 1 && max > 1_000_000 {
        // A whole number that is only too large: say so, not that it is not positive.
        return Err(err(func, format!("{name} must be at most {max}, got {i}")));
    }
    if (min..=max).contains(&i) {
        Ok(i)
    } else {
        Err(bad())
    }
}

/// A grid dimension: a positive integer whose product with the others stays within
/// [`MAX_CELLS`] (checked by [`cells`]).
pub(crate) fn dim(func: &str, name: &str, v: &Value) -> mlua::Result<usize> {
    Ok(integer(func, name, v, 1, MAX_CELLS as i64)? as usize)
}

/// The product of grid dimensions, capped at [`MAX_CELLS`].
pub(crate) fn cells(func: &str, dims: &[usize]) -> mlua::Result<usize> {
    let n = dims
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n <= MAX_CELLS);
    n.ok_or_else(|| {
        let shown: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
        err(
            func,
            format!(
                "a {} grid is too large (at most {MAX_CELLS} cells)",
                shown.join("x")
            ),
        )
    })
}

/// A boolean option (`nil` → `default`).
pub(crate) fn boolean(func: &str, name: &str, v: &Value, default: bool) -> mlua::Result<bool> {
    match v {
        Value::Nil => Ok(default),
        Value::Boolean(b) => Ok(*b),
        other => Err(err(
            func,
            format!("{name} must be a boolean, got {}", show(other)),
        )),
    }
}

/// A string option (`nil` → `None`).
pub(crate) fn string(func: &str, name: &str, v: &Value) -> mlua::Result<Option<String>> {
    match v {
        Value::Nil => Ok(None),
        Value::String(s) => Ok(Some(s.to_str()?.to_owned())),
        other => Err(err(
            func,
            format!("{name} must be a string, got {}", show(other)),
        )),
    }
}

/// An options table: checks every key is one of `known` (catching typos) and gives access
/// to the fields by name.
pub(crate) struct Options<'a> {
    func: &'a str,
    table: Option<Table>,
}

impl<'a> Options<'a> {
    /// Wraps `v` (a table or `nil`); other values and unknown keys are errors.
    pub(crate) fn new(func: &'a str, name: &str, v: Value, known: &[&str]) -> mlua::Result<Self> {
        let table = match v {
            Value::Nil => None,
            Value::Table(t) => {
                for pair in t.pairs::<Value, Value>() {
                    let (k, _) = pair?;
                    let key = match &k {
                        Value::String(s) => s.to_string_lossy(),
                        other => {
                            return Err(err(
                                func,
                                format!("{name} has a non-string key {}", show(other)),
                            ));
                        }
                    };
                    if !known.contains(&key.as_str()) {
                        return Err(err(
                            func,
                            format!(
                                "unknown option '{key}' in {name} (expected one of: {})",
                                known.join(", ")
                            ),
                        ));
                    }
                }
                Some(t)
            }
            other => {
                return Err(err(
                    func,
                    format!("{name} must be a table, got {}", show(&other)),
                ));
            }
        };
        Ok(Options { func, table })
    }

    /// The raw value of a field (`nil` when absent).
    pub(crate) fn get(&self, key: &str) -> mlua::Result<Value> {
        match &self.table {
            Some(t) => t.raw_get(key),
            None => Ok(Value::Nil),
        }
    }

    pub(crate) fn f64_or(&self, key: &str, default: f64) -> mlua::Result<f64> {
        match self.get(key)? {
            Value::Nil => Ok(default),
            v => finite(self.func, key, &v),
        }
    }

    pub(crate) fn int_or(&self, key: &str, default: i64, min: i64, max: i64) -> mlua::Result<i64> {
        match self.get(key)? {
            Value::Nil => Ok(default),
            v => integer(self.func, key, &v, min, max),
        }
    }

    pub(crate) fn bool_or(&self, key: &str, default: bool) -> mlua::Result<bool> {
        boolean(self.func, key, &self.get(key)?, default)
    }

    pub(crate) fn str(&self, key: &str) -> mlua::Result<Option<String>> {
        string(self.func, key, &self.get(key)?)
    }

    pub(crate) fn seed(&self, key: &str) -> mlua::Result<u64> {
        seed(self.func, key, &self.get(key)?)
    }

    pub(crate) fn dim(&self, key: &str) -> mlua::Result<usize> {
        match self.get(key)? {
            Value::Nil => Err(err(self.func, format!("{key} is required"))),
            v => dim(self.func, key, &v),
        }
    }
}

/// Reads a cell mask: a buffer of `n` bytes or an array of `n` numbers/booleans (non-zero
/// or `true` = 1). Used for automata masks.
pub(crate) fn read_mask(func: &str, name: &str, v: &Value, n: usize) -> mlua::Result<Vec<u8>> {
    match v {
        Value::Buffer(b) => {
            if b.len() != n {
                return Err(err(
                    func,
                    format!(
                        "{name} is a buffer of {} bytes, expected {n} (one per cell)",
                        b.len()
                    ),
                ));
            }
            Ok(b.to_vec().into_iter().map(|c| u8::from(c != 0)).collect())
        }
        Value::Table(t) => {
            let len = t.raw_len();
            if len != n {
                return Err(err(
                    func,
                    format!("{name} is an array of {len} values, expected {n} (one per cell)"),
                ));
            }
            let mut out = Vec::with_capacity(n);
            for i in 1..=n {
                let c = match t.raw_get::<Value>(i)? {
                    Value::Boolean(b) => u8::from(b),
                    Value::Integer(k) => u8::from(k != 0),
                    Value::Number(k) => u8::from(k != 0.0),
                    other => {
                        return Err(err(
                            func,
                            format!(
                                "{name}[{i}] must be a number or boolean, got {}",
                                show(&other)
                            ),
                        ));
                    }
                };
                out.push(c);
            }
            Ok(out)
        }
        other => Err(err(
            func,
            format!("{name} must be a buffer or an array, got {}", show(other)),
        )),
    }
}

/// A Luau buffer holding `values` as little-endian f32 (read with `buffer.readf32`).
pub(crate) fn f32_buffer(lua: &Lua, values: &[f32]) -> mlua::Result<Buffer> {
    let mut bytes = Vec::with_capacity(values.len() * 4);
    for v in values {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    lua.create_buffer(bytes)
}

/// A Luau array (1-based) of integers.
pub(crate) fn int_array(
    lua: &Lua,
    values: impl ExactSizeIterator<Item = i64>,
) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(values.len(), 0)?;
    for (i, v) in values.enumerate() {
        t.raw_set(i + 1, v)?;
    }
    Ok(t)
}
