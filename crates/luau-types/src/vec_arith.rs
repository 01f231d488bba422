//! The arithmetic metamethods Vector2 and Vector3 share: operand checks with Roblox's error
//! messages, vector·vector everywhere, vector·number only where Roblox allows it.

use crate::args::{as_number, bad_arg};
use glam::{Vec2, Vec3};
use mlua::Value;
use std::ops::{Add, Div, Mul, Sub};

/// A glam vector the metamethods work on.
pub(crate) trait Lanes:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    fn splat(n: f32) -> Self;
    fn floor(self) -> Self;
}

impl Lanes for Vec2 {
    fn splat(n: f32) -> Self {
        Vec2::splat(n)
    }
    fn floor(self) -> Self {
        Vec2::floor(self)
    }
}

impl Lanes for Vec3 {
    fn splat(n: f32) -> Self {
        Vec3::splat(n)
    }
    fn floor(self) -> Self {
        Vec3::floor(self)
    }
}

enum Operand<V> {
    Vec(V),
    Num(f32),
}

/// `op` (`__add`, `__sub`, `__mul`, `__div`, `__idiv`) on two operands, where `read` takes the
/// vector out of a value of the datatype named `ty`.
pub(crate) fn arith<V: Lanes>(
    op: &str,
    a: &Value,
    b: &Value,
    allow_num: bool,
    ty: &str,
    read: impl Fn(&Value) -> Option<V>,
) -> mlua::Result<V> {
    let operand = |v: &Value| match as_number(v) {
        Some(n) => Some(Operand::Num(n as f32)),
        None => read(v).map(Operand::Vec),
    };
    let (x, y) = match (operand(a), operand(b)) {
        (Some(x), Some(y)) => (x, y),
        (None, _) => return Err(bad_arg(1, op, ty, a)),
        (_, None) => return Err(bad_arg(2, op, ty, b)),
    };
    let (x, y) = match (x, y) {
        (Operand::Vec(x), Operand::Vec(y)) => (x, y),
        (Operand::Vec(x), Operand::Num(n)) if allow_num => (x, V::splat(n)),
        (Operand::Num(n), Operand::Vec(y)) if allow_num => (V::splat(n), y),
        (Operand::Num(_), _) => return Err(bad_arg(1, op, ty, a)),
        (_, Operand::Num(_)) => return Err(bad_arg(2, op, ty, b)),
    };
    Ok(match op {
        "__add" => x + y,
        "__sub" => x - y,
        "__mul" => x * y,
        "__div" => x / y,
        _ => (x / y).floor(),
    })
}
