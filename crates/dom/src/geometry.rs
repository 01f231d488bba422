//! Conversions between `rbx_types` values and `glam` (f32, as Roblox).

use glam::{Affine3A, Mat3A, Vec3, Vec3A};
use rbx_types::{CFrame, Matrix3, Vector3};

#[inline]
pub fn to_vec3(v: Vector3) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}

#[inline]
pub fn from_vec3(v: Vec3) -> Vector3 {
    Vector3::new(v.x, v.y, v.z)
}

/// A CFrame (rotation rows + position) as an affine transform.
#[inline]
pub fn cframe_to_affine(cf: &CFrame) -> Affine3A {
    let m = &cf.orientation;
    // rbx_types stores rows; glam wants columns.
    let cols = Mat3A::from_cols(
        Vec3A::new(m.x.x, m.y.x, m.z.x),
        Vec3A::new(m.x.y, m.y.y, m.z.y),
        Vec3A::new(m.x.z, m.y.z, m.z.z),
    );
    Affine3A {
        matrix3: cols,
        translation: Vec3A::new(cf.position.x, cf.position.y, cf.position.z),
    }
}

/// An affine transform (assumed rigid) as a CFrame.
#[inline]
pub fn affine_to_cframe(a: &Affine3A) -> CFrame {
    let c = a.matrix3;
    CFrame::new(
        Vector3::new(a.translation.x, a.translation.y, a.translation.z),
        Matrix3::new(
            Vector3::new(c.x_axis.x, c.y_axis.x, c.z_axis.x),
            Vector3::new(c.x_axis.y, c.y_axis.y, c.z_axis.y),
            Vector3::new(c.x_axis.z, c.y_axis.z, c.z_axis.z),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_is_exact() {
        let cf = CFrame::new(
            Vector3::new(1.0, 2.0, 3.0),
            Matrix3::new(
                Vector3::new(0.0, -1.0, 0.0),
                Vector3::new(1.0, 0.0, 0.0),
                Vector3::new(0.0, 0.0, 1.0),
            ),
        );
        let a = cframe_to_affine(&cf);
        assert_eq!(affine_to_cframe(&a), cf);
        // Row 0 is (0,-1,0): the world X of local Y is -1, so local Y maps to world -X.
        assert_eq!(a.transform_vector3(Vec3::Y), Vec3::new(-1.0, 0.0, 0.0));
    }
}
