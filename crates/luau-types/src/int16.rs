//! `Vector3int16`, `Vector2int16` and `Region3int16`: integer vectors with Roblox's signed
//! 16-bit wrapping, and the Variant conversions for them.
//!
//! As the Roblox reference describes: constructor components are rounded down and wrap on
//! overflow (32768 becomes -32768); `+ - *` wrap; `vector / vector` rounds down; `vector /
//! number` rounds toward zero; `vector * number` is commutative. Division by a zero component
//! is an error here rather than undefined behaviour.

use mlua::{Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value};

use crate::args::{Args, as_number, as_ud, bad_arg, impl_from_lua, no_member};

/// A Roblox `Vector3int16`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Vector3int16(pub [i16; 3]);

/// A Roblox `Vector2int16`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Vector2int16(pub [i16; 2]);

/// A Roblox `Region3int16`: `Min` and `Max` exactly as given to `new`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Region3int16 {
    /// Lower bound.
    pub min: Vector3int16,
    /// Upper bound.
    pub max: Vector3int16,
}

impl_from_lua!(Vector3int16 => "Vector3int16", Vector2int16 => "Vector2int16",
    Region3int16 => "Region3int16");

/// A number as a 16-bit component: rounded down, then wrapped into `i16` (NaN is 0).
pub fn wrap_i16(n: f64) -> i16 {
    // `as i64` saturates (and maps NaN to 0); `as i16` then keeps the low 16 bits, which is
    // two's-complement wrapping.
    (n.floor() as i64) as i16
}

/// A number as a 16-bit component, rounded toward zero, then wrapped.
fn wrap_i16_trunc(n: f64) -> i16 {
    (n.trunc() as i64) as i16
}

impl From<rbx_types::Vector3int16> for Vector3int16 {
    fn from(v: rbx_types::Vector3int16) -> Self {
        Vector3int16([v.x, v.y, v.z])
    }
}

impl From<Vector3int16> for rbx_types::Vector3int16 {
    fn from(v: Vector3int16) -> Self {
        rbx_types::Vector3int16::new(v.0[0], v.0[1], v.0[2])
    }
}

impl From<rbx_types::Vector2int16> for Vector2int16 {
    fn from(v: rbx_types::Vector2int16) -> Self {
        Vector2int16([v.x, v.y])
    }
}

impl From<Vector2int16> for rbx_types::Vector2int16 {
    fn from(v: Vector2int16) -> Self {
        rbx_types::Vector2int16::new(v.0[0], v.0[1])
    }
}

impl From<rbx_types::Region3int16> for Region3int16 {
    fn from(r: rbx_types::Region3int16) -> Self {
        Region3int16 {
            min: r.min.into(),
            max: r.max.into(),
        }
    }
}

impl From<Region3int16> for rbx_types::Region3int16 {
    fn from(r: Region3int16) -> Self {
        rbx_types::Region3int16::new(r.min.into(), r.max.into())
    }
}

/// What the shared metamethods need from an N-lane integer vector.
trait Lanes<const N: usize>: Copy + 'static {
    const NAME: &'static str;
    fn lanes(self) -> [i16; N];
    fn from_lanes(l: [i16; N]) -> Self;
    fn read(v: &Value) -> Option<Self>;
}

impl Lanes<3> for Vector3int16 {
    const NAME: &'static str = "Vector3int16";
    fn lanes(self) -> [i16; 3] {
        self.0
    }
    fn from_lanes(l: [i16; 3]) -> Self {
        Vector3int16(l)
    }
    fn read(v: &Value) -> Option<Self> {
        as_ud::<Vector3int16>(v)
    }
}

impl Lanes<2> for Vector2int16 {
    const NAME: &'static str = "Vector2int16";
    fn lanes(self) -> [i16; 2] {
        self.0
    }
    fn from_lanes(l: [i16; 2]) -> Self {
        Vector2int16(l)
    }
    fn read(v: &Value) -> Option<Self> {
        as_ud::<Vector2int16>(v)
    }
}

/// `x / y` rounded down (toward negative infinity), wrapped: -32768 / -1 is -32768.
fn floor_div(x: i16, y: i16) -> i16 {
    let (x, y) = (i32::from(x), i32::from(y));
    let q = x / y;
    let q = if x % y != 0 && ((x < 0) != (y < 0)) {
        q - 1
    } else {
        q
    };
    q as i16
}

fn div_by_zero(op: &str) -> mlua::Error {
    mlua::Error::runtime(format!("invalid argument #2 to '{op}' (division by zero)"))
}

/// `op` on two operands: vector·vector for all four, vector·number (either side) for `*`,
/// vector/number for `/`.
fn arith<const N: usize, V: Lanes<N>>(op: &str, a: &Value, b: &Value) -> mlua::Result<V> {
    match (V::read(a), V::read(b)) {
        (Some(x), Some(y)) => {
            let (x, y) = (x.lanes(), y.lanes());
            let mut out = [0i16; N];
            for i in 0..N {
                out[i] = match op {
                    "__add" => x[i].wrapping_add(y[i]),
                    "__sub" => x[i].wrapping_sub(y[i]),
                    "__mul" => x[i].wrapping_mul(y[i]),
                    _ => {
                        if y[i] == 0 {
                            return Err(div_by_zero(op));
                        }
                        floor_div(x[i], y[i])
                    }
                };
            }
            Ok(V::from_lanes(out))
        }
        (Some(x), None) if op == "__mul" || op == "__div" => {
            let n = as_number(b).ok_or_else(|| bad_arg(2, op, V::NAME, b))?;
            scale(op, x, n)
        }
        (None, Some(y)) if op == "__mul" => {
            let n = as_number(a).ok_or_else(|| bad_arg(1, op, V::NAME, a))?;
            scale(op, y, n)
        }
        (None, _) => Err(bad_arg(1, op, V::NAME, a)),
        (_, None) => Err(bad_arg(2, op, V::NAME, b)),
    }
}

/// `vector * n` or `vector / n`: computed in f64, rounded toward zero, wrapped.
fn scale<const N: usize, V: Lanes<N>>(op: &str, v: V, n: f64) -> mlua::Result<V> {
    if op == "__div" && n == 0.0 {
        return Err(div_by_zero(op));
    }
    let l = v.lanes();
    let mut out = [0i16; N];
    for i in 0..N {
        let c = f64::from(l[i]);
        out[i] = wrap_i16_trunc(if op == "__mul" { c * n } else { c / n });
    }
    Ok(V::from_lanes(out))
}

fn add_int_methods<const N: usize, V: Lanes<N> + UserData, M: UserDataMethods<V>>(m: &mut M) {
    m.add_meta_method(MetaMethod::ToString, |_, v, ()| {
        Ok(v.lanes().map(|c| c.to_string()).join(", "))
    });
    m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
        Ok(matches!((V::read(&a), V::read(&b)), (Some(a), Some(b)) if a.lanes() == b.lanes()))
    });
    m.add_meta_method(MetaMethod::Unm, |_, v, ()| {
        Ok(V::from_lanes(v.lanes().map(i16::wrapping_neg)))
    });
    for (mm, op) in [
        (MetaMethod::Add, "__add"),
        (MetaMethod::Sub, "__sub"),
        (MetaMethod::Mul, "__mul"),
        (MetaMethod::Div, "__div"),
    ] {
        m.add_meta_function(mm, move |_, (a, b): (Value, Value)| {
            arith::<N, V>(op, &a, &b)
        });
    }
    m.add_meta_function(MetaMethod::Index, |_, (_, k): (Value, mlua::LuaString)| {
        Err::<(), _>(no_member(&k.to_string_lossy(), V::NAME))
    });
}

impl UserData for Vector3int16 {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Vector3int16");
        for (i, (upper, lower)) in [("X", "x"), ("Y", "y"), ("Z", "z")].into_iter().enumerate() {
            f.add_field_method_get(upper, move |_, v| Ok(v.0[i]));
            f.add_field_method_get(lower, move |_, v| Ok(v.0[i]));
        }
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        add_int_methods::<3, Self, M>(m);
    }
}

impl UserData for Vector2int16 {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Vector2int16");
        for (i, (upper, lower)) in [("X", "x"), ("Y", "y")].into_iter().enumerate() {
            f.add_field_method_get(upper, move |_, v| Ok(v.0[i]));
            f.add_field_method_get(lower, move |_, v| Ok(v.0[i]));
        }
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        add_int_methods::<2, Self, M>(m);
    }
}

impl UserData for Region3int16 {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Region3int16");
        f.add_field_method_get("Min", |_, r| Ok(r.min));
        f.add_field_method_get("Max", |_, r| Ok(r.max));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, r, ()| {
            let f = |v: Vector3int16| v.0.map(|c| c.to_string()).join(", ");
            Ok(format!("{}; {}", f(r.min), f(r.max)))
        });
        crate::args::value_meta::<Region3int16, M>(m, "Region3int16");
    }
}

/// Reads optional number components (nil is 0, as for `Vector3.new`).
fn components<const N: usize>(a: &Args) -> mlua::Result<[i16; N]> {
    let mut out = [0i16; N];
    for (i, c) in out.iter_mut().enumerate() {
        *c = wrap_i16(a.opt_number(i + 1, 0.0)?);
    }
    Ok(out)
}

/// Installs `Vector3int16`, `Vector2int16` and `Region3int16`.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let ctor = |global: &str, f| crate::args::install_constructor(lua, global, f);
    ctor(
        "Vector3int16",
        lua.create_function(|_, a: MultiValue| {
            Ok(Vector3int16(components(&Args::new("new", a))?))
        })?,
    )?;
    ctor(
        "Vector2int16",
        lua.create_function(|_, a: MultiValue| {
            Ok(Vector2int16(components(&Args::new("new", a))?))
        })?,
    )?;
    ctor(
        "Region3int16",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            Ok(Region3int16 {
                min: a.ud::<Vector3int16>(1, "Vector3int16")?,
                max: a.ud::<Vector3int16>(2, "Vector3int16")?,
            })
        })?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_round_down_and_wrap() {
        for (n, want) in [
            (1.9, 1),
            (-1.5, -2),
            (32767.0, 32767),
            (32768.0, -32768),
            (65536.0 + 5.0, 5),
            (-32769.0, 32767),
            (f64::NAN, 0),
        ] {
            assert_eq!(wrap_i16(n), want, "{n}");
        }
    }

    #[test]
    fn vector_division_rounds_down() {
        for (x, y, want) in [
            (7, 2, 3),
            (-7, 2, -4),
            (7, -2, -4),
            (-7, -2, 3),
            (6, 3, 2),
            (-6, 3, -2),
            (-32768, -1, -32768),
        ] {
            assert_eq!(floor_div(x, y), want, "{x} / {y}");
        }
    }

    #[test]
    fn conversions_round_trip_through_rbx_types() {
        let v = Vector3int16([1, -2, 32767]);
        assert_eq!(Vector3int16::from(rbx_types::Vector3int16::from(v)), v);
        let w = Vector2int16([-32768, 7]);
        assert_eq!(Vector2int16::from(rbx_types::Vector2int16::from(w)), w);
        let r = Region3int16 {
            min: v,
            max: Vector3int16([0, 0, 0]),
        };
        assert_eq!(Region3int16::from(rbx_types::Region3int16::from(r)), r);
    }
}
