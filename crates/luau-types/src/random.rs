//! `Random`: Roblox's seeded generator, driving the same PCG32 stream as Luau's `math.random`.
//!
//! `Random.new(seed)` ≡ `math.randomseed(seed)`; `NextInteger(a, b)` ≡ `math.random(a, b)`;
//! `NextNumber()` ≡ `math.random()`. `Random.new()` with no seed uses the fixed seed
//! [`DEFAULT_SEED`] (this crate reads no clock; the host passes real seeds).

use glam::Vec3;
use mlua::{Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value};
use procmodel_base::Pcg32;

use crate::args::{Args, impl_from_lua, no_member};
use crate::vector3::Vector3;

/// The seed of `Random.new()` without an argument.
pub const DEFAULT_SEED: i64 = 0;

/// A Roblox `Random` object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Random(pub Pcg32);

impl_from_lua!(Random => "Random");

impl Random {
    /// `Random.new(seed)`.
    pub fn new(seed: i64) -> Self {
        Random(Pcg32::new(seed))
    }

    /// `NextUnitVector`: two `NextNumber` draws u, v; z = 2u − 1, φ = 2πv,
    /// (√(1−z²)·cos φ, √(1−z²)·sin φ, z), computed in f64 then rounded to f32.
    pub fn next_unit_vector(&mut self) -> Vec3 {
        let z = 2.0 * self.0.next_f64() - 1.0;
        let phi = std::f64::consts::TAU * self.0.next_f64();
        let r = (1.0 - z * z).max(0.0).sqrt();
        Vec3::new((r * phi.cos()) as f32, (r * phi.sin()) as f32, z as f32)
    }
}

/// Converts a Luau number to the `int` Luau's `math.random` reads (truncation toward zero).
fn to_int(n: f64) -> i32 {
    n as i32
}

impl UserData for Random {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Random");
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method_mut("NextInteger", |_, r, a: MultiValue| {
            let a = Args::new("NextInteger", a);
            let (lo, hi) = (to_int(a.number(1)?), to_int(a.number(2)?));
            // "If min is greater than max, the two values are swapped so the call still
            // succeeds" (the reference); min ≤ max draws exactly as before.
            let (lo, hi) = (lo.min(hi), lo.max(hi));
            r.0.next_range(lo, hi)
                .ok_or_else(|| a.error(2, "interval is too large"))
        });
        m.add_method_mut("NextNumber", |_, r, a: MultiValue| {
            let a = Args::new("NextNumber", a);
            if a.len() == 0 {
                return Ok(r.0.next_f64());
            }
            let (lo, hi) = (a.number(1)?, a.number(2)?);
            Ok(r.0.next_f64_range(lo, hi))
        });
        m.add_method_mut("NextUnitVector", |_, r, ()| {
            Ok(Vector3(r.next_unit_vector()))
        });
        m.add_method_mut("Shuffle", |_, r, a: MultiValue| {
            let a = Args::new("Shuffle", a);
            let t = a.table(1)?;
            let n = t.raw_len();
            // "If there are any nil holes in the array part of the table, Shuffle throws an
            // error, since shuffling could change the length": a nil below the length.
            for i in 1..n {
                if t.raw_get::<Value>(i)?.is_nil() {
                    return Err(a.error(1, "table has a nil hole in its array part"));
                }
            }
            for i in (2..=n).rev() {
                let j =
                    r.0.next_range(1, i as i32)
                        .ok_or_else(|| a.error(1, "table is too large"))?
                        as usize;
                let vi: Value = t.raw_get(i)?;
                let vj: Value = t.raw_get(j)?;
                t.raw_set(i, vj)?;
                t.raw_set(j, vi)?;
            }
            Ok(())
        });
        m.add_method("Clone", |_, r, ()| Ok(r.clone()));
        m.add_meta_method(MetaMethod::ToString, |_, _, ()| Ok("Random"));
        m.add_meta_function(MetaMethod::Index, |_, (_, k): (Value, mlua::LuaString)| {
            Err::<(), _>(no_member(&k.to_string_lossy(), "Random"))
        });
    }
}

/// Installs the `Random` constructor table.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let t = lua.create_table()?;
    t.raw_set(
        "new",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            let seed = if a.is_nil(1) {
                DEFAULT_SEED
            } else {
                a.number(1)? as i64
            };
            Ok(Random::new(seed))
        })?,
    )?;
    crate::args::install_global(lua, "Random", t)
}
