//! Points of interest: circle and axis-aligned rectangle zones that flatten the ground to a
//! level with a blended border, their validation, and the order rule (later zones win).

use crate::error::TerrainError;
use crate::material::Material;

/// How the blend factor `k` (0 at the inner edge, 1 at the outer edge) is shaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Falloff {
    /// `k` as is: the tutorial's `Y0 + (Y1 − Y0)·(R − R1)/(R2 − R1)`.
    #[default]
    Linear,
    /// `k²(3 − 2k)`: no crease at either edge.
    Smoothstep,
}

/// How a rectangle's corner bands combine the two edge factors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RectCorners {
    /// The larger of the two factors (the tutorial's `math.max(k1, k2)`): square corners.
    #[default]
    Max,
    /// `min(1, √(kx² + kz²))`: the Euclidean distance to the inner corner in band units
    /// (round corners; exactly Euclidean when both bands are equally wide).
    Euclidean,
}

/// A zone's footprint. Lengths in studs; rectangle sizes are full side lengths centred on
/// the zone centre (so the inner half-widths are `x1/2`, `z1/2`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ZoneShape {
    /// Flat within `r1` of the centre (horizontal distance), blended out to `r2`.
    Circle {
        /// Flat radius.
        r1: f32,
        /// Outer blend radius (> r1).
        r2: f32,
    },
    /// Flat inside the `x1 × z1` rectangle, blended out to `x2 × z2`.
    Rect {
        /// Inner side along X.
        x1: f32,
        /// Inner side along Z.
        z1: f32,
        /// Outer side along X (> x1).
        x2: f32,
        /// Outer side along Z (> z1).
        z2: f32,
        /// Corner rule.
        corners: RectCorners,
    },
}

/// A point of interest: the ground inside is flat at `level`, blended back to the generated
/// height across the border, untouched beyond it; `material` (if any) is the surface inside
/// the flat part.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zone {
    /// Centre X (studs).
    pub x: f32,
    /// Centre Z (studs).
    pub z: f32,
    /// Surface height of the flat part (studs).
    pub level: f32,
    /// Footprint.
    pub shape: ZoneShape,
    /// Blend shape.
    pub falloff: Falloff,
    /// Surface material inside the flat part (a solid terrain material).
    pub material: Option<Material>,
}

impl Zone {
    /// A circle zone with linear falloff and no material.
    pub fn circle(x: f32, z: f32, level: f32, r1: f32, r2: f32) -> Zone {
        Zone {
            x,
            z,
            level,
            shape: ZoneShape::Circle { r1, r2 },
            falloff: Falloff::Linear,
            material: None,
        }
    }

    /// A rectangle zone (tutorial corners, linear falloff, no material).
    pub fn rect(x: f32, z: f32, level: f32, x1: f32, x2: f32, z1: f32, z2: f32) -> Zone {
        Zone {
            x,
            z,
            level,
            shape: ZoneShape::Rect {
                x1,
                z1,
                x2,
                z2,
                corners: RectCorners::Max,
            },
            falloff: Falloff::Linear,
            material: None,
        }
    }

    /// Sets the surface material.
    pub fn with_material(mut self, m: Material) -> Zone {
        self.material = Some(m);
        self
    }

    /// Checks every field; errors name the zone index and the field.
    pub fn validate(&self, index: usize) -> Result<(), TerrainError> {
        let bad = |field: &'static str, reason: String| TerrainError::Zone {
            index,
            field,
            reason,
        };
        let finite = |field: &'static str, v: f32| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(bad(field, format!("is not a finite number ({v})")))
            }
        };
        finite("x", self.x)?;
        finite("z", self.z)?;
        finite("level", self.level)?;
        let pair = |n1: &'static str, v1: f32, n2: &'static str, v2: f32| {
            finite(n1, v1)?;
            finite(n2, v2)?;
            if v1 < 0.0 {
                return Err(bad(n1, format!("must not be negative (got {v1})")));
            }
            if v2 <= v1 {
                return Err(bad(
                    n2,
                    format!("must be greater than {n1} (got {n2} = {v2}, {n1} = {v1})"),
                ));
            }
            Ok(())
        };
        match self.shape {
            ZoneShape::Circle { r1, r2 } => pair("r1", r1, "r2", r2)?,
            ZoneShape::Rect { x1, z1, x2, z2, .. } => {
                pair("x1", x1, "x2", x2)?;
                pair("z1", z1, "z2", z2)?;
            }
        }
        if let Some(m) = self.material
            && !m.is_solid()
        {
            return Err(bad(
                "material",
                format!("must be a solid terrain material (got {})", m.name()),
            ));
        }
        Ok(())
    }

    /// The blend factor at a point: `None` beyond the outer edge (untouched), `Some(0)` in the
    /// flat part, up to `Some(1)` at the outer edge — before [`Falloff`].
    pub fn factor(&self, x: f64, z: f64) -> Option<f64> {
        let dx = (x - f64::from(self.x)).abs();
        let dz = (z - f64::from(self.z)).abs();
        match self.shape {
            ZoneShape::Circle { r1, r2 } => {
                let (r1, r2) = (f64::from(r1), f64::from(r2));
                // Outside the zone's square: no square root for most of a large world.
                if dx > r2 || dz > r2 {
                    return None;
                }
                let d = (dx * dx + dz * dz).sqrt();
                if d < r1 {
                    Some(0.0)
                } else if d > r2 {
                    None
                } else {
                    Some((d - r1) / (r2 - r1))
                }
            }
            ZoneShape::Rect {
                x1,
                z1,
                x2,
                z2,
                corners,
            } => {
                let (hx1, hx2) = (f64::from(x1) / 2.0, f64::from(x2) / 2.0);
                let (hz1, hz2) = (f64::from(z1) / 2.0, f64::from(z2) / 2.0);
                if dx >= hx2 || dz >= hz2 {
                    return None;
                }
                let kx = ((dx - hx1) / (hx2 - hx1)).max(0.0);
                let kz = ((dz - hz1) / (hz2 - hz1)).max(0.0);
                Some(match corners {
                    RectCorners::Max => kx.max(kz),
                    RectCorners::Euclidean => (kx * kx + kz * kz).sqrt().min(1.0),
                })
            }
        }
    }

    /// Whether a point is in the flat part, strictly inside the inner edge as the tutorial
    /// tests it (`dist < R1`; `|x − cx| < X1/2` and `|z − cz| < Z1/2`): a point on the edge
    /// is flat but keeps its band's material and may grow resources.
    pub fn is_inner(&self, x: f64, z: f64) -> bool {
        match self.shape {
            ZoneShape::Circle { r1, .. } => {
                let dx = x - f64::from(self.x);
                let dz = z - f64::from(self.z);
                (dx * dx + dz * dz).sqrt() < f64::from(r1)
            }
            ZoneShape::Rect { x1, z1, .. } => {
                (x - f64::from(self.x)).abs() < f64::from(x1) / 2.0
                    && (z - f64::from(self.z)).abs() < f64::from(z1) / 2.0
            }
        }
    }

    /// How far from the centre along Z the zone reaches: at `|z − centre z| > reach` it
    /// changes nothing (no factor, not inner), so a row of columns can skip it.
    pub fn z_reach(&self) -> f64 {
        match self.shape {
            ZoneShape::Circle { r2, .. } => f64::from(r2),
            ZoneShape::Rect { z2, .. } => f64::from(z2) / 2.0,
        }
    }

    /// Whether the zone can touch a column on the row at `z` (see [`Zone::z_reach`]).
    pub fn reaches_row(&self, z: f64) -> bool {
        (z - f64::from(self.z)).abs() <= self.z_reach()
    }

    /// The zone applied to a height: `level + (h − level)·falloff(k)`, or `h` beyond it.
    pub fn apply(&self, x: f64, z: f64, h: f64) -> f64 {
        match self.factor(x, z) {
            None => h,
            Some(k) => {
                let k = match self.falloff {
                    Falloff::Linear => k,
                    Falloff::Smoothstep => k * k * (3.0 - 2.0 * k),
                };
                let y0 = f64::from(self.level);
                y0 + (h - y0) * k
            }
        }
    }
}

/// Validates a zone list.
pub fn validate_zones(zones: &[Zone]) -> Result<(), TerrainError> {
    zones
        .iter()
        .enumerate()
        .try_for_each(|(i, z)| z.validate(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn circle_formula() {
        let z = Zone::circle(10.0, -20.0, 5.0, 100.0, 200.0);
        // Inside R1: flat.
        assert_eq!(z.apply(10.0 + 50.0, -20.0, 42.0), 5.0);
        // Between: Y0 + (Y1 - Y0)(R - R1)/(R2 - R1) with R = 150 → half way.
        assert_eq!(z.apply(10.0, -20.0 + 150.0, 45.0), 5.0 + 40.0 * 0.5);
        // R = 125 along a diagonal (75, 100): quarter.
        assert_eq!(z.apply(10.0 + 75.0, -20.0 + 100.0, 45.0), 5.0 + 40.0 * 0.25);
        // Beyond R2: untouched.
        assert_eq!(z.apply(10.0 + 201.0, -20.0, 45.0), 45.0);
        // Smoothstep at k = 0.25: 0.15625.
        let s = Zone {
            falloff: Falloff::Smoothstep,
            ..z
        };
        assert_eq!(s.apply(10.0, -20.0 + 125.0, 45.0), 5.0 + 40.0 * 0.15625);
    }

    #[test]
    fn rect_bands_and_corners() {
        // Tutorial zone: centre (50, 50), X1 20, X2 40, Z1 40, Z2 80.
        let z = Zone::rect(50.0, 50.0, 0.0, 20.0, 40.0, 40.0, 80.0);
        assert_eq!(z.apply(55.0, 60.0, 10.0), 0.0); // inside
        // X band (inside inner Z): dx = 15 → (15 - 10)/(20 - 10) = 0.5.
        assert_eq!(z.apply(65.0, 50.0, 10.0), 5.0);
        // Z band (inside inner X): dz = 30 → (30 - 20)/(40 - 20) = 0.5.
        assert_eq!(z.apply(50.0, 20.0, 10.0), 5.0);
        // Corner: kx = 0.2, kz = 0.6 → max 0.6.
        assert_eq!(z.apply(62.0, 82.0, 10.0), 6.0);
        // Beyond the outer rectangle.
        assert_eq!(z.apply(71.0, 50.0, 10.0), 10.0);
        assert_eq!(z.apply(50.0, 91.0, 10.0), 10.0);
        // Euclidean corners: √(0.2² + 0.6²) = 0.632…; and capped at 1.
        let e = Zone {
            shape: ZoneShape::Rect {
                x1: 20.0,
                z1: 40.0,
                x2: 40.0,
                z2: 80.0,
                corners: RectCorners::Euclidean,
            },
            ..z
        };
        let k = (0.2f64 * 0.2 + 0.6 * 0.6).sqrt();
        assert!((e.apply(62.0, 82.0, 10.0) - 10.0 * k).abs() < 1e-12);
        assert_eq!(e.apply(69.0, 89.0, 10.0), 10.0);
        assert!(z.is_inner(59.0, 69.0) && !z.is_inner(61.0, 50.0));
        // The edge is not inner (the tutorial's strict tests).
        assert!(!z.is_inner(60.0, 50.0) && !z.is_inner(50.0, 70.0));
        let c = Zone::circle(0.0, 0.0, 0.0, 5.0, 10.0);
        assert!(c.is_inner(2.9, 3.9) && !c.is_inner(3.0, 4.0) && !c.is_inner(-5.0, 0.0));
        assert_eq!(c.apply(3.0, 4.0, 7.0), 0.0, "the edge is flat");
    }

    #[test]
    fn validation_names_zone_and_field() {
        let zs = [
            Zone::circle(0.0, 0.0, 0.0, 10.0, 20.0),
            Zone::circle(0.0, 0.0, 0.0, 10.0, 10.0),
        ];
        assert_eq!(
            validate_zones(&zs).unwrap_err().to_string(),
            "zone 1: r2 must be greater than r1 (got r2 = 10, r1 = 10)"
        );
        let r = Zone::rect(0.0, 0.0, 0.0, 20.0, 40.0, 40.0, 30.0);
        assert_eq!(
            r.validate(3).unwrap_err(),
            TerrainError::Zone {
                index: 3,
                field: "z2",
                reason: "must be greater than z1 (got z2 = 30, z1 = 40)".into()
            }
        );
        let r = Zone::rect(0.0, 0.0, 0.0, 20.0, 10.0, 40.0, 80.0);
        assert!(matches!(
            r.validate(0),
            Err(TerrainError::Zone { field: "x2", .. })
        ));
        let n = Zone::circle(f32::NAN, 0.0, 0.0, 1.0, 2.0);
        assert!(matches!(
            n.validate(0),
            Err(TerrainError::Zone { field: "x", .. })
        ));
        let w = Zone::circle(0.0, 0.0, 0.0, 1.0, 2.0).with_material(Material::Water);
        assert_eq!(
            w.validate(2).unwrap_err().to_string(),
            "zone 2: material must be a solid terrain material (got Water)"
        );
    }
}
