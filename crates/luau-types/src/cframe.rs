//! `CFrame`: an f32 rigid transform (position + 3×3 rotation) and its math; the Luau binding is
//! in `cframe_lua`.

use glam::{Affine3A, Mat3, Quat, Vec3};

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

crate::tagged::impl_tagged!(CFrame);

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
            rotation: Mat3::from_rotation_x(rx)
                * Mat3::from_rotation_y(ry)
                * Mat3::from_rotation_z(rz),
        }
    }

    /// `CFrame.fromOrientation(rx, ry, rz)` = `Ry · Rx · Rz`.
    pub fn angles_yxz(rx: f32, ry: f32, rz: f32) -> Self {
        CFrame {
            position: Vec3::ZERO,
            rotation: Mat3::from_rotation_y(ry)
                * Mat3::from_rotation_x(rx)
                * Mat3::from_rotation_z(rz),
        }
    }

    /// `CFrame.fromEulerAngles(rx, ry, rz, order)`: the axis rotations multiplied in the order's
    /// letter order (`"XYZ"` = `Rx · Ry · Rz`, `"YXZ"` = `Ry · Rx · Rz`, ...). `None` for an
    /// order that is not a permutation of XYZ.
    pub fn from_euler(order: &str, rx: f32, ry: f32, rz: f32) -> Option<Self> {
        let mut seen = [false; 3];
        let mut rotation = Mat3::IDENTITY;
        for c in order.chars() {
            let (i, m) = match c {
                'X' => (0, Mat3::from_rotation_x(rx)),
                'Y' => (1, Mat3::from_rotation_y(ry)),
                'Z' => (2, Mat3::from_rotation_z(rz)),
                _ => return None,
            };
            if seen[i] {
                return None;
            }
            seen[i] = true;
            rotation *= m;
        }
        (seen == [true; 3]).then_some(CFrame {
            position: Vec3::ZERO,
            rotation,
        })
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

    /// `ToEulerAngles(order)`: the angles `(rx, ry, rz)` that [`CFrame::from_euler`] with
    /// `order` turns back into this rotation; `None` for an order that is not a permutation
    /// of XYZ. For `R = Ri(a)·Rj(b)·Rk(c)` (the order's letters i, j, k), with `s` = 1 when
    /// (i, j, k) is an even permutation of (X, Y, Z) and −1 otherwise:
    /// `b = asin(s·R[i][k])`, `a = atan2(−s·R[j][k], R[k][k])`, `c = atan2(−s·R[i][j], R[i][i])`.
    pub fn to_euler(&self, order: &str) -> Option<(f32, f32, f32)> {
        let axes: Vec<usize> = order
            .chars()
            .map(|c| match c {
                'X' => Some(0),
                'Y' => Some(1),
                'Z' => Some(2),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let &[i, j, k] = axes.as_slice() else {
            return None;
        };
        if i == j || j == k || i == k {
            return None;
        }
        let s = if (j + 3 - i) % 3 == 1 { 1.0 } else { -1.0 };
        let c = self.components();
        let m = |r: usize, col: usize| c[3 + 3 * r + col];
        let b = (s * m(i, k)).clamp(-1.0, 1.0).asin();
        let a = (-s * m(j, k)).atan2(m(k, k));
        let cc = (-s * m(i, j)).atan2(m(i, i));
        let mut out = [0.0f32; 3];
        out[i] = a;
        out[j] = b;
        out[k] = cc;
        Some((out[0], out[1], out[2]))
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

#[cfg(test)]
mod tests {
    use super::CFrame;

    #[test]
    fn to_euler_inverts_from_euler_for_every_order() {
        let orders = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"];
        for order in orders {
            for &(rx, ry, rz) in &[
                (0.3f32, -0.7f32, 1.1f32),
                (-1.2, 0.4, -1.5),
                (0.0, 0.0, 0.0),
            ] {
                let c = CFrame::from_euler(order, rx, ry, rz).unwrap();
                let (ax, ay, az) = c.to_euler(order).unwrap();
                let back = CFrame::from_euler(order, ax, ay, az).unwrap();
                let (p, q) = (c.components(), back.components());
                for (x, y) in p.iter().zip(q) {
                    assert!(
                        (x - y).abs() < 1e-5,
                        "{order} ({rx}, {ry}, {rz}): {p:?} vs {q:?}"
                    );
                }
                // Away from gimbal lock the angles themselves come back.
                assert!((ax - rx).abs() < 1e-5 && (ay - ry).abs() < 1e-5 && (az - rz).abs() < 1e-5);
            }
        }
        // The two fixed orders agree with their own methods.
        let c = CFrame::from_euler("YXZ", 0.2, 0.5, -0.3).unwrap();
        assert_eq!(c.to_euler("YXZ"), Some(c.to_euler_yxz()));
        assert_eq!(c.to_euler("XYZ").map(|_| ()), Some(()));
        assert_eq!(c.to_euler("XXZ"), None);
        assert_eq!(c.to_euler("XY"), None);
    }
}
