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
//!
//! # Placement
//! [`World::place_resources`] turns points into trees and rocks: a tree where the ground
//! material is one of the plan's `trees_on`, a rock elsewhere, sized with a small variation
//! keyed by the point's position (so a chunk gives a resource the size the whole world does),
//! its bottom `sink` studs below the lowest voxel-column surface under its footprint, so it
//! never floats.

use crate::error::TerrainError;
use crate::material::Material;
use crate::world::World;
use procmodel_base::{Pcg32, derive_seed, derive_seed_index, mix64};

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

/// The largest footprint's half side (studs): a rock is at most 3 studs from its centre.
pub const MAX_HALF: f64 = 4.0;

impl ResourceConfig {
    /// Checks `min_distance` (a positive number) and `density` (in 0..=1).
    pub fn validate(&self) -> Result<(), TerrainError> {
        let bad = |field: &'static str, reason: String| TerrainError::Config { field, reason };
        if !(self.min_distance.is_finite() && self.min_distance > 0.0) {
            return Err(bad(
                "min_distance",
                format!("must be a positive number (got {})", self.min_distance),
            ));
        }
        if !(0.0..=1.0).contains(&self.density) {
            return Err(bad(
                "density",
                format!("must be in 0..=1 (got {})", self.density),
            ));
        }
        Ok(())
    }

    /// Sampling cells an area covers (what [`World::resources`] visits; it refuses more
    /// than 67,108,864).
    pub fn sampling_cells(&self, area: [f64; 4]) -> f64 {
        let cell = self.min_distance / std::f64::consts::SQRT_2;
        let [x0, z0, x1, z1] = area;
        ((x1 - x0) / cell).max(0.0) * ((z1 - z0) / cell).max(0.0)
    }
}

/// How resources are scattered and placed.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourcePlan {
    /// The Poisson-disk scatter.
    pub config: ResourceConfig,
    /// Depth below the lowest ground under the footprint (studs, ≥ 0).
    pub sink: f64,
    /// Ground materials that grow trees.
    pub trees_on: Vec<Material>,
}

/// What a resource is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceKind {
    /// A tree: trunk of `2·half × height × 2·half` and a crown on top.
    Tree,
    /// A rock: a block of `2·half × height × 2·half`.
    Rock,
}

/// A resource ready to build: footprint, height and the bottom it stands on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlacedResource {
    /// Tree or rock.
    pub kind: ResourceKind,
    /// Centre X (studs).
    pub x: f64,
    /// Centre Z (studs).
    pub z: f64,
    /// Ground height under the centre (studs).
    pub ground: f64,
    /// Bottom of the resource (studs): `sink` below the lowest ground under the footprint.
    pub bottom: f64,
    /// Half the footprint's side (studs, at most [`MAX_HALF`]).
    pub half: f64,
    /// Height from `bottom` (studs; the sunk part included).
    pub height: f64,
    /// Ground material under the centre.
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
        cfg.validate()?;
        let [x0, z0, x1, z1] = area;
        if area.iter().any(|v| !v.is_finite()) {
            return Err(bad("area", "is not finite".into()));
        }
        let r = cfg.min_distance;
        let cell = r / std::f64::consts::SQRT_2;
        let cells = cfg.sampling_cells(area);
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

    /// The lowest voxel-column surface under a square footprint of half side `half` centred
    /// at `(x, z)`: the voxel surface between column centres is interpolated from them, so
    /// the lowest centre around the footprint (one voxel wider on each side) bounds it below.
    pub fn lowest_ground(&self, x: f64, z: f64, half: f64) -> f64 {
        let (c0, c1) = (
            ((x - half) / 4.0).floor() - 1.0,
            ((x + half) / 4.0).floor() + 1.0,
        );
        let (d0, d1) = (
            ((z - half) / 4.0).floor() - 1.0,
            ((z + half) / 4.0).floor() + 1.0,
        );
        let mut low = f64::INFINITY;
        let mut cx = c0;
        while cx <= c1 {
            let mut cz = d0;
            while cz <= d1 {
                low = low.min(self.surface_at(cx * 4.0 + 2.0, cz * 4.0 + 2.0));
                cz += 1.0;
            }
            cx += 1.0;
        }
        low
    }

    /// [`World::resources`] of `area`, placed as trees and rocks (see the module docs).
    pub fn place_resources(
        &self,
        area: [f64; 4],
        plan: &ResourcePlan,
    ) -> Result<Vec<PlacedResource>, TerrainError> {
        Ok(self
            .resources(area, &plan.config)?
            .iter()
            .map(|r| self.place(r, plan))
            .collect())
    }

    fn place(&self, r: &Resource, plan: &ResourcePlan) -> PlacedResource {
        // A small deterministic variation keyed by the position (same in every chunk).
        let h = mix64(r.x.to_bits() ^ mix64(r.z.to_bits()));
        let v = (h >> 40) as f64 / f64::from(1u32 << 24);
        let tree = plan.trees_on.contains(&r.material);
        let (half, height) = if tree {
            (1.0, 10.0 + 6.0 * v)
        } else {
            (1.5 + 1.5 * v, 2.0 + 2.0 * v)
        };
        PlacedResource {
            kind: if tree {
                ResourceKind::Tree
            } else {
                ResourceKind::Rock
            },
            x: r.x,
            z: r.z,
            ground: r.y,
            bottom: self.lowest_ground(r.x, r.z, half) - plan.sink,
            half,
            height: height + plan.sink,
            material: r.material,
        }
    }
}
