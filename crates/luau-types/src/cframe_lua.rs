//! The Luau side of `CFrame`: members, methods, operators and the constructor table.

use glam::{Mat3, Quat, Vec3};
use mlua::{Lua, MetaMethod, MultiValue, UserDataFields, UserDataMethods, Value};

use crate::args::{Args, as_ud, bad_arg, fmt_num, no_member};
use crate::cframe::CFrame;
use crate::enums::EnumItem;
use crate::raw;
use crate::tagged::{self, Field, Tagged};
use crate::vector3::{Vector3, fuzzy_eq};
use mlua::ffi;
use std::ffi::c_int;

fn vec_arg(a: &Args, pos: usize) -> mlua::Result<Vec3> {
    Ok(a.ud::<Vector3>(pos, "Vector3")?.0)
}

fn cf_arg(a: &Args, pos: usize) -> mlua::Result<CFrame> {
    a.ud::<CFrame>(pos, "CFrame")
}

/// Applies `f` to every argument (CFrames or Vector3s), returning one result per argument.
fn map_args<T: crate::args::FromValue, R: mlua::IntoLua>(
    lua: &Lua,
    name: &str,
    expected: &str,
    args: MultiValue,
    none: T,
    f: impl Fn(T) -> R,
) -> mlua::Result<MultiValue> {
    // No argument at all is one `none` (the origin, the identity): Roblox's
    // `CFrame.new(5, 10, 0):PointToWorldSpace()` is `5, 10, 0`.
    let mut out = MultiValue::new();
    if args.is_empty() {
        out.push_back(mlua::IntoLua::into_lua(f(none), lua)?);
        return Ok(out);
    }
    let n = args.len();
    let a = Args::new(name, args);
    for i in 1..=n {
        out.push_back(mlua::IntoLua::into_lua(f(a.ud::<T>(i, expected)?), lua)?);
    }
    Ok(out)
}

impl Tagged for CFrame {
    const TAG: std::ffi::c_int = crate::tagged::TAG_CFRAME;
    const NAME: &'static str = "CFrame";

    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "CFrame");
        f.add_field_method_get("Position", |_, c| Ok(Vector3(c.position)));
        f.add_field_method_get("p", |_, c| Ok(Vector3(c.position)));
        f.add_field_method_get("Rotation", |_, c| {
            Ok(CFrame {
                position: Vec3::ZERO,
                rotation: c.rotation,
            })
        });
        f.add_field_method_get("X", |_, c| Ok(c.position.x));
        f.add_field_method_get("Y", |_, c| Ok(c.position.y));
        f.add_field_method_get("Z", |_, c| Ok(c.position.z));
        for name in ["LookVector", "lookVector"] {
            f.add_field_method_get(name, |_, c| Ok(Vector3(c.look_vector())));
        }
        for name in ["RightVector", "rightVector", "XVector"] {
            f.add_field_method_get(name, |_, c| Ok(Vector3(c.rotation.x_axis)));
        }
        for name in ["UpVector", "upVector", "YVector"] {
            f.add_field_method_get(name, |_, c| Ok(Vector3(c.rotation.y_axis)));
        }
        f.add_field_method_get("ZVector", |_, c| Ok(Vector3(c.rotation.z_axis)));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        for name in ["Inverse", "inverse"] {
            m.add_method(name, |_, c, ()| Ok(c.inverse()));
        }
        for name in ["Lerp", "lerp"] {
            m.add_method(name, |_, c, a: MultiValue| {
                let a = Args::new("Lerp", a);
                Ok(c.lerp(&cf_arg(&a, 1)?, a.f32(2)?))
            });
        }
        m.add_method("Orthonormalize", |_, c, ()| Ok(c.orthonormalize()));
        for name in ["ToWorldSpace", "toWorldSpace"] {
            m.add_method(name, |lua, c, a: MultiValue| {
                map_args(
                    lua,
                    "ToWorldSpace",
                    "CFrame",
                    a,
                    CFrame::IDENTITY,
                    |o: CFrame| c.mul(&o),
                )
            });
        }
        for name in ["ToObjectSpace", "toObjectSpace"] {
            m.add_method(name, |lua, c, a: MultiValue| {
                let inv = c.inverse();
                map_args(
                    lua,
                    "ToObjectSpace",
                    "CFrame",
                    a,
                    CFrame::IDENTITY,
                    |o: CFrame| inv.mul(&o),
                )
            });
        }
        // The Vector3 forms, each under both spellings: one result per point given.
        type Map = fn(&CFrame, Vec3) -> Vec3;
        let vector_forms: [(&str, &str, Map); 4] = [
            ("PointToWorldSpace", "pointToWorldSpace", |c, v| {
                c.point_to_world(v)
            }),
            ("PointToObjectSpace", "pointToObjectSpace", |c, v| {
                c.point_to_object(v)
            }),
            ("VectorToWorldSpace", "vectorToWorldSpace", |c, v| {
                c.rotation * v
            }),
            ("VectorToObjectSpace", "vectorToObjectSpace", |c, v| {
                c.rotation.transpose() * v
            }),
        ];
        for (name, lower, f) in vector_forms {
            for spelling in [name, lower] {
                m.add_method(spelling, move |lua, c, a: MultiValue| {
                    map_args(
                        lua,
                        name,
                        "Vector3",
                        a,
                        Vector3(Vec3::ZERO),
                        |v: Vector3| Vector3(f(c, v.0)),
                    )
                });
            }
        }
        for name in ["GetComponents", "components"] {
            m.add_method(name, |_, c, ()| {
                Ok(MultiValue::from_iter(
                    c.components().map(|x| Value::Number(x as f64)),
                ))
            });
        }
        for name in ["ToEulerAnglesXYZ", "toEulerAnglesXYZ"] {
            m.add_method(name, |_, c, ()| Ok(c.to_euler_xyz()));
        }
        for name in ["ToEulerAnglesYXZ", "toEulerAnglesYXZ", "ToOrientation"] {
            m.add_method(name, |_, c, ()| Ok(c.to_euler_yxz()));
        }
        m.add_method("ToEulerAngles", |_, c, a: MultiValue| {
            let a = Args::new("ToEulerAngles", a);
            let order = rotation_order(&a, 1)?;
            c.to_euler(&order)
                .ok_or_else(|| a.bad(1, "Enum.RotationOrder"))
        });
        for name in ["ToAxisAngle", "toAxisAngle"] {
            m.add_method(name, |_, c, ()| {
                let (axis, angle) = c.quat().to_axis_angle();
                Ok((Vector3(axis), angle))
            });
        }
        m.add_method("FuzzyEq", |_, c, a: MultiValue| {
            let a = Args::new("FuzzyEq", a);
            let o = cf_arg(&a, 1)?;
            let eps = a.opt_f32(2, 1e-5)?;
            Ok(c.components()
                .iter()
                .zip(o.components())
                .all(|(x, y)| fuzzy_eq(*x, y, eps)))
        });
        m.add_method("AngleBetween", |_, c, a: MultiValue| {
            let a = Args::new("AngleBetween", a);
            let o = cf_arg(&a, 1)?;
            Ok(c.quat().angle_between(o.quat()))
        });
        m.add_meta_method(MetaMethod::ToString, |_, c, ()| {
            Ok(c.components().map(fmt_num).join(", "))
        });
        m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
            Ok(match (as_ud::<CFrame>(&a), as_ud::<CFrame>(&b)) {
                (Some(a), Some(b)) => a == b,
                _ => false,
            })
        });
        m.add_meta_function(MetaMethod::Add, |_, (a, b): (Value, Value)| {
            translate(&a, &b, "__add", 1.0)
        });
        m.add_meta_function(MetaMethod::Sub, |_, (a, b): (Value, Value)| {
            translate(&a, &b, "__sub", -1.0)
        });
        m.add_meta_function(MetaMethod::Index, |_, (_, k): (Value, mlua::LuaString)| {
            Err::<(), _>(no_member(&k.to_string_lossy(), "CFrame"))
        });
    }
}

impl tagged::FastFields for CFrame {
    fn field(&self, key: &[u8]) -> Option<Field<CFrame>> {
        Some(match key {
            b"Position" | b"p" => Field::Vector(self.position),
            b"X" => Field::Number(self.position.x.into()),
            b"Y" => Field::Number(self.position.y.into()),
            b"Z" => Field::Number(self.position.z.into()),
            b"LookVector" | b"lookVector" => Field::Vector(self.look_vector()),
            b"RightVector" | b"rightVector" | b"XVector" => Field::Vector(self.rotation.x_axis),
            b"UpVector" | b"upVector" | b"YVector" => Field::Vector(self.rotation.y_axis),
            b"ZVector" => Field::Vector(self.rotation.z_axis),
            b"Rotation" => Field::This(CFrame {
                position: Vec3::ZERO,
                rotation: self.rotation,
            }),
            _ => return None,
        })
    }
}

/// `CFrame * CFrame` and `CFrame * Vector3` (the general path of the raw `__mul`).
fn mul(lua: &Lua, a: &Value, b: &Value) -> mlua::Result<Value> {
    let Some(c) = as_ud::<CFrame>(a) else {
        return Err(bad_arg(1, "__mul", "CFrame", a));
    };
    if let Some(o) = as_ud::<CFrame>(b) {
        return mlua::IntoLua::into_lua(c.mul(&o), lua);
    }
    if let Some(v) = as_ud::<Vector3>(b) {
        return mlua::IntoLua::into_lua(Vector3(c.point_to_world(v.0)), lua);
    }
    Err(bad_arg(2, "__mul", "CFrame or Vector3", b))
}

// ----- raw fast paths (see `raw`): plain arguments only, anything else goes to `slow` -----

/// `CFrame * CFrame` / `CFrame * Vector3`.
unsafe extern "C-unwind" fn raw_mul(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: a metamethod call with two operands; only type-checked reads before the push.
    unsafe {
        let Some(a) = tagged::get::<CFrame>(state, 1) else {
            return tagged::dispatch_value::<CFrame>(state, || None);
        };
        if let Some(v) = raw::vector(state, 2) {
            let p = a.point_to_world(v);
            ffi::lua_pushvector(state, p.x, p.y, p.z);
            return 1;
        }
        tagged::dispatch_value(state, || tagged::get::<CFrame>(state, 2).map(|b| a.mul(&b)))
    }
}

/// `CFrame.new()`, `(x, y, z)`, `(pos)` and the 12-component form.
unsafe extern "C-unwind" fn raw_new(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: type-checked reads of the arguments; the result is pushed by dispatch_value.
    unsafe {
        tagged::dispatch_value(state, || {
            let n = |i| raw::number(state, i).map(|x| x as f32);
            match ffi::lua_gettop(state) {
                0 => Some(CFrame::IDENTITY),
                1 => raw::vector(state, 1).map(CFrame::from_position),
                3 => Some(CFrame::from_position(Vec3::new(n(1)?, n(2)?, n(3)?))),
                12 => {
                    let mut c = [0.0; 12];
                    for (i, slot) in c.iter_mut().enumerate() {
                        *slot = n(i as c_int + 1)?;
                    }
                    Some(CFrame::from_components(c))
                }
                _ => None,
            }
        })
    }
}

/// Three optional angles (nil = 0), as the Angles constructors take them.
unsafe fn raw_angles(state: *mut ffi::lua_State) -> Option<(f32, f32, f32)> {
    // SAFETY: type-checked reads.
    unsafe {
        if ffi::lua_gettop(state) > 3 {
            return None;
        }
        let a = |i| raw::opt_number(state, i, 0.0).map(|x| x as f32);
        Some((a(1)?, a(2)?, a(3)?))
    }
}

unsafe extern "C-unwind" fn raw_angles_xyz(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: as for `raw_new`.
    unsafe {
        tagged::dispatch_value(state, || {
            raw_angles(state).map(|(x, y, z)| CFrame::angles_xyz(x, y, z))
        })
    }
}

unsafe extern "C-unwind" fn raw_angles_yxz(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: as for `raw_new`.
    unsafe {
        tagged::dispatch_value(state, || {
            raw_angles(state).map(|(x, y, z)| CFrame::angles_yxz(x, y, z))
        })
    }
}

fn translate(a: &Value, b: &Value, op: &str, sign: f32) -> mlua::Result<CFrame> {
    let c = as_ud::<CFrame>(a).ok_or_else(|| bad_arg(1, op, "CFrame", a))?;
    let v = as_ud::<Vector3>(b).ok_or_else(|| bad_arg(2, op, "Vector3", b))?;
    Ok(CFrame {
        position: c.position + v.0 * sign,
        rotation: c.rotation,
    })
}

fn quat_cframe(p: Vec3, q: Quat) -> CFrame {
    CFrame {
        position: p,
        rotation: Mat3::from_quat(q.normalize()),
    }
}

fn new(a: &Args) -> mlua::Result<CFrame> {
    match a.len() {
        0 => Ok(CFrame::IDENTITY),
        1 => Ok(CFrame::from_position(vec_arg(a, 1)?)),
        2 => Ok(CFrame::look_at(vec_arg(a, 1)?, vec_arg(a, 2)?, Vec3::Y)),
        3 => Ok(CFrame::from_position(Vec3::new(
            a.f32(1)?,
            a.f32(2)?,
            a.f32(3)?,
        ))),
        7 => {
            let p = Vec3::new(a.f32(1)?, a.f32(2)?, a.f32(3)?);
            let q = Quat::from_xyzw(a.f32(4)?, a.f32(5)?, a.f32(6)?, a.f32(7)?);
            Ok(quat_cframe(p, q))
        }
        12 => {
            let mut c = [0.0; 12];
            for (i, slot) in c.iter_mut().enumerate() {
                *slot = a.f32(i + 1)?;
            }
            Ok(CFrame::from_components(c))
        }
        n => Err(mlua::Error::runtime(format!(
            "invalid number of arguments to 'new' ({n}): expected 0, 1, 2, 3, 7 or 12"
        ))),
    }
}

fn up_arg(a: &Args, pos: usize) -> mlua::Result<Vec3> {
    if a.is_nil(pos) {
        Ok(Vec3::Y)
    } else {
        vec_arg(a, pos)
    }
}

/// Installs the `CFrame` constructor table.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let slow_mul = lua.create_function(|lua, (a, b): (Value, Value)| mul(lua, &a, &b))?;
    crate::tagged::register::<CFrame>(
        lua,
        &[("__mul", raw::closure(lua, raw_mul, slow_mul)?)],
        tagged::fields_index::<CFrame>(),
    )?;
    let t = lua.create_table()?;
    // The constructors every generator calls in its loop get a raw C fast path.
    let fast: &[(&str, ffi::lua_CFunction)] = &[
        ("new", raw_new),
        ("Angles", raw_angles_xyz),
        ("fromEulerAnglesXYZ", raw_angles_xyz),
        ("fromEulerAnglesYXZ", raw_angles_yxz),
        ("fromOrientation", raw_angles_yxz),
    ];
    let f = |name: &'static str, func: fn(&Args) -> mlua::Result<CFrame>| -> mlua::Result<()> {
        let slow = lua.create_function(move |_, a: MultiValue| func(&Args::new(name, a)))?;
        match fast.iter().find(|(n, _)| *n == name) {
            Some((_, raw_fn)) => t.raw_set(name, raw::closure(lua, *raw_fn, slow)?),
            None => t.raw_set(name, slow),
        }
    };
    f("new", new)?;
    f("lookAt", |a| {
        Ok(CFrame::look_at(
            vec_arg(a, 1)?,
            vec_arg(a, 2)?,
            up_arg(a, 3)?,
        ))
    })?;
    f("lookAlong", |a| {
        Ok(CFrame::look_along(
            vec_arg(a, 1)?,
            vec_arg(a, 2)?,
            up_arg(a, 3)?,
        ))
    })?;
    let xyz = |a: &Args| {
        Ok(CFrame::angles_xyz(
            a.opt_f32(1, 0.0)?,
            a.opt_f32(2, 0.0)?,
            a.opt_f32(3, 0.0)?,
        ))
    };
    let yxz = |a: &Args| {
        Ok(CFrame::angles_yxz(
            a.opt_f32(1, 0.0)?,
            a.opt_f32(2, 0.0)?,
            a.opt_f32(3, 0.0)?,
        ))
    };
    f("Angles", xyz)?;
    f("fromEulerAnglesXYZ", xyz)?;
    f("fromEulerAnglesYXZ", yxz)?;
    f("fromOrientation", yxz)?;
    f("fromEulerAngles", |a| {
        let order = rotation_order(a, 4)?;
        let (rx, ry, rz) = (a.opt_f32(1, 0.0)?, a.opt_f32(2, 0.0)?, a.opt_f32(3, 0.0)?);
        CFrame::from_euler(&order, rx, ry, rz).ok_or_else(|| a.bad(4, "Enum.RotationOrder"))
    })?;
    f("fromAxisAngle", |a| {
        let axis = vec_arg(a, 1)?.normalize();
        Ok(quat_cframe(
            Vec3::ZERO,
            Quat::from_axis_angle(axis, a.f32(2)?),
        ))
    })?;
    f("fromMatrix", |a| {
        let (p, x, y) = (vec_arg(a, 1)?, vec_arg(a, 2)?, vec_arg(a, 3)?);
        let z = if a.is_nil(4) {
            x.cross(y).normalize()
        } else {
            vec_arg(a, 4)?
        };
        Ok(CFrame {
            position: p,
            rotation: Mat3::from_cols(x, y, z),
        })
    })?;
    f("fromRotationBetweenVectors", |a| {
        let (from, to) = (vec_arg(a, 1)?, vec_arg(a, 2)?);
        let q = Quat::from_rotation_arc(from.normalize(), to.normalize());
        Ok(quat_cframe(Vec3::ZERO, q))
    })?;
    t.raw_set("identity", CFrame::IDENTITY)?;
    crate::args::install_global(lua, "CFrame", t)
}

/// The optional `Enum.RotationOrder` argument at `i` by name (XYZ when nil).
fn rotation_order(a: &Args, i: usize) -> mlua::Result<String> {
    if a.is_nil(i) {
        return Ok("XYZ".to_string());
    }
    Ok(a.ud::<EnumItem>(i, "Enum.RotationOrder")
        .ok()
        .filter(|e| e.enum_name == "RotationOrder")
        .ok_or_else(|| a.bad(i, "Enum.RotationOrder"))?
        .name
        .to_string())
}
