//! Resource scattering (trees, rocks): seeded Poisson-disk points outside every zone, each
//! with the ground height under it, generated per area so chunks agree on their borders.
//!
//! # Method
//! The plane is cut into cells of side `r/√2` (at most one point per cell). Each cell has one
//! candidate — jittered position, a random priority, and whether it exists at all
//! (`density`) — drawn from a PCG32 stream seeded by hashing (seed, cell); a candidate is kept
//! iff no candidate within distance `r` has a higher priority. Any two kept points are at
//! least `r` apart, and whether a point is kept depends only on the cells around it, so any
//! rectangle gives exactly the whole world's points inside it (chunks never disagree).

use crate::error::TerrainError;
use crate::material::Material;
use crate::world::World;
use procmodel_base::{Pcg32, derive_seed, derive_seed_index};

/// Which part of a zone keeps resources out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ZoneExclusion {
    /// The flat part (the tutorial: no resources within R1).
    #[default]
    Inner,
    /// The whole zone including its blend border.
    Whole,
}

/// Scatter settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResourceConfig {
    /// Seed of the scatter (independent of the height noise).
    pub seed: u64,
    /// Minimum distance between points (studs, > 0).
    pub min_distance: f64,
    /// Probability that a cell has a candidate (0..=1); 1 is densest.
    pub density: f64,
    /// Zone exclusion rule.
    pub exclude: ZoneExclusion,
}

/// One resource: world position with `y` the ground height under it, and the ground material.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resource {
    /// X (studs).
    pub x: f64,
    /// Ground height under the point (studs): sink the model from here.
    pub y: f64,
    /// Z (studs).
    pub z: f64,
    /// Surface material under the point (for choosing a tree or a rock).
    pub material: Material,
}

#[derive(Clone, Copy)]
struct Candidate {
    x: f64,
    z: f64,
    priority: u64,
}

fn candidate(seed: u64, cell: f64, a: i64, b: i64, density: f64) -> Option<Candidate> {
    let key = (a as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (b as u64).rotate_left(32);
    let mut rng = Pcg32::from_seed_bits(derive_seed_index(seed, key));
    let exists = rng.next_f64() < density;
    let jx = rng.next_f64();
    let jz = rng.next_f64();
    let priority = (u64::from(rng.next_u32()) << 32) | u64::from(rng.next_u32());
    exists.then_some(Candidate {
        x: (a as f64 + jx) * cell,
        z: (b as f64 + jz) * cell,
        priority,
    })
}

impl World {
    /// Resources with `x ∈ [min_x, max_x)`, `z ∈ [min_z, max_z)` (studs) for `area = [min_x,
    /// min_z, max_x, max_z]`, in sampling-cell order (rows along Z, then X).
    pub fn resources(
        &self,
        area: [f64; 4],
        cfg: &ResourceConfig,
    ) -> Result<Vec<Resource>, TerrainError> {
        let bad = |field: &'static str, reason: String| TerrainError::Config { field, reason };
        if !(cfg.min_distance.is_finite() && cfg.min_distance > 0.0) {
            return Err(bad(
                "min_distance",
                format!("must be a positive number (got {})", cfg.min_distance),
            ));
        }
        if !(0.0..=1.0).contains(&cfg.density) {
            return Err(bad(
                "density",
                format!("must be in 0..=1 (got {})", cfg.density),
            ));
        }
        let [x0, z0, x1, z1] = area;
        if area.iter().any(|v| !v.is_finite()) {
            return Err(bad("area", "is not finite".into()));
        }
        let r = cfg.min_distance;
        let cell = r / std::f64::consts::SQRT_2;
        let cells = ((x1 - x0) / cell).max(0.0) * ((z1 - z0) / cell).max(0.0);
        if cells > 64.0 * 1024.0 * 1024.0 {
            return Err(bad(
                "area",
                format!("{cells:.0} sampling cells exceed 67,108,864"),
            ));
        }
        let seed = derive_seed(cfg.seed, "resources");
        let (a0, a1) = ((x0 / cell).floor() as i64, (x1 / cell).ceil() as i64);
        let (b0, b1) = ((z0 / cell).floor() as i64, (z1 / cell).ceil() as i64);
        let mut out = Vec::new();
        for b in b0..b1 {
            for a in a0..a1 {
                let Some(c) = candidate(seed, cell, a, b, cfg.density) else {
                    continue;
                };
                if !(c.x >= x0 && c.x < x1 && c.z >= z0 && c.z < z1) {
                    continue;
                }
                let beaten = (-2..=2).any(|db| {
                    (-2..=2).any(|da| {
                        if da == 0 && db == 0 {
                            return false;
                        }
                        candidate(seed, cell, a + da, b + db, cfg.density).is_some_and(|o| {
                            let d2 = (o.x - c.x).powi(2) + (o.z - c.z).powi(2);
                            d2 < r * r && (o.priority, a + da, b + db) > (c.priority, a, b)
                        })
                    })
                });
                if beaten {
                    continue;
                }
                let in_zone = self.config().zones.iter().any(|zone| match cfg.exclude {
                    ZoneExclusion::Inner => zone.is_inner(c.x, c.z),
                    ZoneExclusion::Whole => zone.factor(c.x, c.z).is_some(),
                });
                if in_zone {
                    continue;
                }
                out.push(Resource {
                    x: c.x,
                    y: self.surface_at(c.x, c.z),
                    z: c.z,
                    material: self.material_at(c.x, c.z),
                });
            }
        }
        Ok(out)
    }
}
