//! `CFrame`: an f32 rigid transform (position + 3×3 rotation) with the Roblox members and operators.

use glam::{Affine3A, Mat3, Quat, Vec3};
use mlua::{Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value};

use crate::args::{Args, as_ud, bad_arg, fmt_num, impl_from_lua, no_member};
use crate::vector3::{Vector3, fuzzy_eq};

/// A Roblox `CFrame`: `position` plus an orthonormal `rotation` whose columns are the right,
/// up and back (−look) vectors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CFrame {
    /// Translation.
    pub position: Vec3,
    /// Rotation matrix (column-major, as glam stores it).
    pub rotation: Mat3,
}

impl Default for CFrame {
    fn default() -> Self {
        CFrame::IDENTITY
    }
}

impl_from_lua!(CFrame => "CFrame");

impl CFrame {
    /// The identity transform.
    pub const IDENTITY: CFrame = CFrame {
        position: Vec3::ZERO,
        rotation: Mat3::IDENTITY,
    };

    /// A pure translation.
    pub fn from_position(position: Vec3) -> Self {
        CFrame {
            position,
            rotation: Mat3::IDENTITY,
        }
    }

    /// As a glam affine transform (for pivots and bounding boxes on the host side).
    pub fn to_affine(&self) -> Affine3A {
        Affine3A::from_mat3_translation(self.rotation, self.position)
    }

    /// From a glam affine transform (the linear part is taken as the rotation unchanged).
    pub fn from_affine(a: &Affine3A) -> Self {
        CFrame {
            position: Vec3::from(a.translation),
            rotation: Mat3::from(a.matrix3),
        }
    }

    /// The inverse transform (the rotation is transposed, as Roblox assumes orthonormality).
    pub fn inverse(&self) -> Self {
        let rt = self.rotation.transpose();
        CFrame {
            position: -(rt * self.position),
            rotation: rt,
        }
    }

    /// `self * other`.
    pub fn mul(&self, other: &CFrame) -> Self {
        CFrame {
            position: self.rotation * other.position + self.position,
            rotation: self.rotation * other.rotation,
        }
    }

    /// `self * point`.
    pub fn point_to_world(&self, p: Vec3) -> Vec3 {
        self.rotation * p + self.position
    }

    /// `self:Inverse() * point`.
    pub fn point_to_object(&self, p: Vec3) -> Vec3 {
        self.rotation.transpose() * (p - self.position)
    }

    /// `LookVector`: minus the Z column.
    pub fn look_vector(&self) -> Vec3 {
        -self.rotation.z_axis
    }

    /// The 12 components `x, y, z, R00, R01, R02, R10, ..., R22` (row-major rotation).
    pub fn components(&self) -> [f32; 12] {
        let p = self.position;
        let r = self.rotation.transpose(); // rows as columns
        [
            p.x, p.y, p.z, r.x_axis.x, r.x_axis.y, r.x_axis.z, r.y_axis.x, r.y_axis.y, r.y_axis.z,
            r.z_axis.x, r.z_axis.y, r.z_axis.z,
        ]
    }

    /// From the 12 components of [`CFrame::components`].
    pub fn from_components(c: [f32; 12]) -> Self {
        CFrame {
            position: Vec3::new(c[0], c[1], c[2]),
            rotation: Mat3::from_cols(
                Vec3::new(c[3], c[6], c[9]),
                Vec3::new(c[4], c[7], c[10]),
                Vec3::new(c[5], c[8], c[11]),
            ),
        }
    }

    /// `CFrame.lookAt(at, target, up)`.
    pub fn look_at(at: Vec3, target: Vec3, up: Vec3) -> Self {
        Self::look_along(at, target - at, up)
    }

    /// `CFrame.lookAlong(at, direction, up)`.
    pub fn look_along(at: Vec3, dir: Vec3, up: Vec3) -> Self {
        let look = dir.normalize_or_zero();
        if look == Vec3::ZERO {
            return Self::from_position(at);
        }
        let mut right = look.cross(up);
        if right.length_squared() < 1e-12 {
            right = look.cross(Vec3::Z);
            if right.length_squared() < 1e-12 {
                right = Vec3::X;
            }
        }
        let right = right.normalize();
        let back = -look;
        let upv = back.cross(right).normalize();
        CFrame {
            position: at,
            rotation: Mat3::from_cols(right, upv, back),
        }
    }

    /// `CFrame.Angles(rx, ry, rz)` = `Rx · Ry · Rz`.
    pub fn angles_xyz(rx: f32, ry: f32, rz: f32) -> Self {
        CFrame {
            position: Vec3::ZERO,
            rotation: Mat3::from_rotation_x(rx) * Mat3::from_rotation_y(ry) * Mat3::from_rotation_z(rz),
        }
    }

    /// `CFrame.fromOrientation(rx, ry, rz)` = `Ry · Rx · Rz`.
    pub fn angles_yxz(rx: f32, ry: f32, rz: f32) -> Self {
        CFrame {
            position: Vec3::ZERO,
            rotation: Mat3::from_rotation_y(ry) * Mat3::from_rotation_x(rx) * Mat3::from_rotation_z(rz),
        }
    }

    /// `ToEulerAnglesXYZ`: the inverse of [`CFrame::angles_xyz`].
    pub fn to_euler_xyz(&self) -> (f32, f32, f32) {
        let c = self.components();
        let (r00, r01, r02, r12, r22) = (c[3], c[4], c[5], c[8], c[11]);
        let ry = r02.clamp(-1.0, 1.0).asin();
        let rx = (-r12).atan2(r22);
        let rz = (-r01).atan2(r00);
        (rx, ry, rz)
    }

    /// `ToEulerAnglesYXZ` / `ToOrientation`: the inverse of [`CFrame::angles_yxz`].
    pub fn to_euler_yxz(&self) -> (f32, f32, f32) {
        let c = self.components();
        let (r02, r10, r11, r12, r22) = (c[5], c[6], c[7], c[8], c[11]);
        let rx = (-r12).clamp(-1.0, 1.0).asin();
        let ry = r02.atan2(r22);
        let rz = r10.atan2(r11);
        (rx, ry, rz)
    }

    /// Rotation as a unit quaternion.
    pub fn quat(&self) -> Quat {
        Quat::from_mat3(&self.rotation).normalize()
    }

    /// `Lerp`: linear position, spherical rotation.
    pub fn lerp(&self, goal: &CFrame, t: f32) -> Self {
        let q = self.quat().slerp(goal.quat(), t);
        CFrame {
            position: self.position.lerp(goal.position, t),
            rotation: Mat3::from_quat(q),
        }
    }

    /// `Orthonormalize`: Gram–Schmidt on the right and up columns.
    pub fn orthonormalize(&self) -> Self {
        let x = self.rotation.x_axis.normalize();
        let y = (self.rotation.y_axis - x * x.dot(self.rotation.y_axis)).normalize();
        CFrame {
            position: self.position,
            rotation: Mat3::from_cols(x, y, x.cross(y)),
        }
    }
}

impl From<rbx_types::CFrame> for CFrame {
    fn from(c: rbx_types::CFrame) -> Self {
        let o = c.orientation; // rows
        let row = |v: rbx_types::Vector3| Vec3::new(v.x, v.y, v.z);
        CFrame {
            position: row(c.position),
            rotation: Mat3::from_cols(row(o.x), row(o.y), row(o.z)).transpose(),
        }
    }
}

impl From<CFrame> for rbx_types::CFrame {
    fn from(c: CFrame) -> Self {
        let r = c.rotation.transpose(); // columns are now rows
        let v = |v: Vec3| rbx_types::Vector3::new(v.x, v.y, v.z);
        rbx_types::CFrame::new(
            v(c.position),
            rbx_types::Matrix3::new(v(r.x_axis), v(r.y_axis), v(r.z_axis)),
        )
    }
}

impl From<CFrame> for Affine3A {
    fn from(c: CFrame) -> Self {
        c.to_affine()
    }
}

fn vec_arg(a: &Args, pos: usize) -> mlua::Result<Vec3> {
    Ok(a.ud::<Vector3>(pos, "Vector3")?.0)
}

fn cf_arg(a: &Args, pos: usize) -> mlua::Result<CFrame> {
    a.ud::<CFrame>(pos, "CFrame")
}

/// Applies `f` to every argument (CFrames or Vector3s), returning one result per argument.
fn map_args<T: UserData + Clone + 'static, R: mlua::IntoLua>(
    lua: &Lua,
    name: &str,
    expected: &str,
    args: MultiValue,
    f: impl Fn(T) -> R,
) -> mlua::Result<MultiValue> {
    let n = args.len().max(1);
    let a = Args::new(name, args);
    let mut out = MultiValue::new();
    for i in 1..=n {
        out.push_back(mlua::IntoLua::into_lua(f(a.ud::<T>(i, expected)?), lua)?);
    }
    Ok(out)
}

impl UserData for CFrame {
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
                map_args(lua, "ToWorldSpace", "CFrame", a, |o: CFrame| c.mul(&o))
            });
        }
        for name in ["ToObjectSpace", "toObjectSpace"] {
            m.add_method(name, |lua, c, a: MultiValue| {
                let inv = c.inverse();
                map_args(lua, "ToObjectSpace", "CFrame", a, |o: CFrame| inv.mul(&o))
            });
        }
        for name in ["PointToWorldSpace", "pointToWorldSpace"] {
            m.add_method(name, |lua, c, a: MultiValue| {
                map_args(lua, "PointToWorldSpace", "Vector3", a, |v: Vector3| {
                    Vector3(c.point_to_world(v.0))
                })
            });
        }
        for name in ["PointToObjectSpace", "pointToObjectSpace"] {
            m.add_method(name, |lua, c, a: MultiValue| {
                map_args(lua, "PointToObjectSpace", "Vector3", a, |v: Vector3| {
                    Vector3(c.point_to_object(v.0))
                })
            });
        }
        for name in ["VectorToWorldSpace", "vectorToWorldSpace"] {
            m.add_method(name, |lua, c, a: MultiValue| {
                map_args(lua, "VectorToWorldSpace", "Vector3", a, |v: Vector3| {
                    Vector3(c.rotation * v.0)
                })
            });
        }
        for name in ["VectorToObjectSpace", "vectorToObjectSpace"] {
            m.add_method(name, |lua, c, a: MultiValue| {
                map_args(lua, "VectorToObjectSpace", "Vector3", a, |v: Vector3| {
                    Vector3(c.rotation.transpose() * v.0)
                })
            });
        }
        for name in ["GetComponents", "components"] {
            m.add_method(name, |_, c, ()| Ok(MultiValue::from_iter(c.components().map(|x| Value::Number(x as f64)))));
        }
        for name in ["ToEulerAnglesXYZ", "toEulerAnglesXYZ"] {
            m.add_method(name, |_, c, ()| Ok(c.to_euler_xyz()));
        }
        for name in ["ToEulerAnglesYXZ", "toEulerAnglesYXZ", "ToOrientation"] {
            m.add_method(name, |_, c, ()| Ok(c.to_euler_yxz()));
        }
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
        m.add_meta_function(MetaMethod::Mul, |lua, (a, b): (Value, Value)| {
            let Some(c) = as_ud::<CFrame>(&a) else {
                return Err(bad_arg(1, "__mul", "CFrame", &a));
            };
            if let Some(o) = as_ud::<CFrame>(&b) {
                return mlua::IntoLua::into_lua(c.mul(&o), lua);
            }
            if let Some(v) = as_ud::<Vector3>(&b) {
                return mlua::IntoLua::into_lua(Vector3(c.point_to_world(v.0)), lua);
            }
            Err(bad_arg(2, "__mul", "CFrame or Vector3", &b))
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
        3 => Ok(CFrame::from_position(Vec3::new(a.f32(1)?, a.f32(2)?, a.f32(3)?))),
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
    let t = lua.create_table()?;
    let f = |name: &'static str, func: fn(&Args) -> mlua::Result<CFrame>| -> mlua::Result<()> {
        t.raw_set(
            name,
            lua.create_function(move |_, a: MultiValue| func(&Args::new(name, a)))?,
        )
    };
    f("new", new)?;
    f("lookAt", |a| {
        Ok(CFrame::look_at(vec_arg(a, 1)?, vec_arg(a, 2)?, up_arg(a, 3)?))
    })?;
    f("lookAlong", |a| {
        Ok(CFrame::look_along(vec_arg(a, 1)?, vec_arg(a, 2)?, up_arg(a, 3)?))
    })?;
    let xyz = |a: &Args| Ok(CFrame::angles_xyz(a.opt_f32(1, 0.0)?, a.opt_f32(2, 0.0)?, a.opt_f32(3, 0.0)?));
    let yxz = |a: &Args| Ok(CFrame::angles_yxz(a.opt_f32(1, 0.0)?, a.opt_f32(2, 0.0)?, a.opt_f32(3, 0.0)?));
    f("Angles", xyz)?;
    f("fromEulerAnglesXYZ", xyz)?;
    f("fromEulerAnglesYXZ", yxz)?;
    f("fromOrientation", yxz)?;
    f("fromAxisAngle", |a| {
        let axis = vec_arg(a, 1)?.normalize();
        Ok(quat_cframe(Vec3::ZERO, Quat::from_axis_angle(axis, a.f32(2)?)))
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
