//! The viewport's terrain: `Workspace.Terrain`'s voxels (its `SmoothGrid`) meshed with
//! surface nets (`procmodel-terrain`, as `procmodel export` does) and packed per material for
//! the page, in a binary message of its own. Re-meshed only when the grid or the material
//! colours change; each change gets a new id, so a page is sent a mesh once.
//!
//! Body layout (little-endian, 4-byte aligned), part after part in header order:
//! `vertices × 3 f32` positions (studs), `vertices × 3 f32` unit normals, `indices × u32`
//! triangles (counter-clockwise seen from outside).

use procmodel_terrain::{MaterialColors, TerrainMesh, mesh_terrain, smoothgrid};
use rbx_dom_weak::{Ustr, WeakDom};
use rbx_types::Variant;
use serde::Serialize;
use std::sync::Arc;

/// One material's part of the mesh.
#[derive(Debug, Clone, Serialize)]
pub struct TerrainPart {
    /// `Enum.Material` name.
    pub material: &'static str,
    /// Linear RGB (the page's colour space) of the material's terrain colour (water: the
    /// Terrain's `WaterColor`).
    pub color: [f32; 3],
    /// 1, or less for water (one minus `WaterTransparency`).
    pub opacity: f32,
    pub vertices: usize,
    pub indices: usize,
}

/// A meshed terrain, as sent.
#[derive(Debug, Clone, Serialize)]
pub struct TerrainFrame {
    /// 0: no terrain (never sent); otherwise a new id for every change.
    pub id: u64,
    pub triangles: usize,
    pub parts: Vec<TerrainPart>,
    /// Why the terrain could not be shown (a SmoothGrid that does not decode).
    pub error: Option<String>,
    #[serde(skip)]
    pub body: Vec<u8>,
}

impl TerrainFrame {
    fn empty(id: u64) -> TerrainFrame {
        TerrainFrame {
            id,
            triangles: 0,
            parts: Vec::new(),
            error: None,
            body: Vec::new(),
        }
    }

    /// The summary the scene header carries.
    pub fn summary(&self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id,
            "triangles": self.triangles,
            "error": self.error,
        })
    }
}

/// The last terrain meshed and the inputs it came from.
pub struct TerrainCache {
    grid: Vec<u8>,
    colors: Vec<u8>,
    water: Water,
    frame: Arc<TerrainFrame>,
}

/// The Terrain's water colour and opacity ([`procmodel_dom::terrain_water`]).
type Water = ([u8; 3], f32);

/// The water of a scene without terrain voxels (no water drawn).
const NO_WATER: Water = ([0; 3], 0.0);

impl Default for TerrainCache {
    fn default() -> Self {
        TerrainCache {
            grid: Vec::new(),
            colors: Vec::new(),
            water: NO_WATER,
            frame: Arc::new(TerrainFrame::empty(0)),
        }
    }
}

impl TerrainCache {
    /// The scene's terrain now (the same frame while the voxels are unchanged).
    pub fn update(&mut self, dom: &WeakDom) -> Arc<TerrainFrame> {
        let (grid, colors, water) = inputs(dom);
        if grid == self.grid && colors == self.colors && water == self.water {
            return self.frame.clone();
        }
        let id = self.frame.id + 1;
        let frame = if grid.is_empty() {
            TerrainFrame::empty(id)
        } else {
            match mesh(&grid, &colors) {
                Ok((mesh, colors)) => pack(id, &mesh, &colors, water),
                Err(e) => TerrainFrame {
                    error: Some(e),
                    ..TerrainFrame::empty(id)
                },
            }
        };
        self.grid = grid;
        self.colors = colors;
        self.water = water;
        self.frame = Arc::new(frame);
        self.frame.clone()
    }
}

/// `Workspace.Terrain`'s SmoothGrid and MaterialColors bytes (empty when absent) and water.
fn inputs(dom: &WeakDom) -> (Vec<u8>, Vec<u8>, Water) {
    let Some(terrain) = procmodel_dom::workspace_terrain(dom) else {
        return (Vec::new(), Vec::new(), NO_WATER);
    };
    let grid = match terrain.properties.get(&Ustr::from("SmoothGrid")) {
        Some(Variant::BinaryString(b)) => {
            let b: &[u8] = b.as_ref();
            b.to_vec()
        }
        _ => Vec::new(),
    };
    let colors = match terrain.properties.get(&Ustr::from("MaterialColors")) {
        Some(Variant::MaterialColors(mc)) => mc.encode(),
        _ => Vec::new(),
    };
    // Water matters only where there are voxels (no grid: the same empty frame).
    let water = match grid.is_empty() {
        true => NO_WATER,
        false => procmodel_dom::terrain_water(Some(terrain)),
    };
    (grid, colors, water)
}

fn mesh(grid: &[u8], colors: &[u8]) -> Result<(TerrainMesh, MaterialColors), String> {
    let voxels =
        smoothgrid::decode(grid).map_err(|e| format!("Workspace.Terrain.SmoothGrid: {e}"))?;
    let colors = if colors.is_empty() {
        MaterialColors::default()
    } else {
        MaterialColors::decode(colors)
            .map_err(|e| format!("Workspace.Terrain.MaterialColors: {e}"))?
    };
    Ok((mesh_terrain(&voxels), colors))
}

fn pack(id: u64, mesh: &TerrainMesh, colors: &MaterialColors, water: Water) -> TerrainFrame {
    let mut body = Vec::new();
    let mut parts = Vec::with_capacity(mesh.parts.len());
    for p in &mesh.parts {
        let (rgb, opacity) = match p.material {
            procmodel_terrain::Material::Water => water,
            m => (colors.get(m), 1.0),
        };
        parts.push(TerrainPart {
            material: p.material.name(),
            color: rgb.map(|c| srgb_to_linear(f32::from(c) / 255.0)),
            opacity,
            vertices: p.positions.len(),
            indices: p.indices.len(),
        });
        for v in p.positions.iter().chain(&p.normals).flatten() {
            body.extend_from_slice(&v.to_le_bytes());
        }
        for i in &p.indices {
            body.extend_from_slice(&i.to_le_bytes());
        }
    }
    TerrainFrame {
        id,
        triangles: mesh.triangle_count(),
        parts,
        error: None,
        body,
    }
}

#[inline]
fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use procmodel_terrain::{Material, Terrain, Voxel};
    use rbx_dom_weak::InstanceBuilder;

    fn scene(grid: Option<Vec<u8>>) -> WeakDom {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let ws = dom.insert(root, InstanceBuilder::new("Workspace"));
        let mut t = InstanceBuilder::new("Terrain");
        if let Some(g) = grid {
            t = t.with_property("SmoothGrid", Variant::BinaryString(g.into()));
        }
        dom.insert(ws, t);
        dom
    }

    fn hill() -> Vec<u8> {
        let mut t = Terrain::new();
        for x in 0..6 {
            for z in 0..6 {
                for y in 0..2 {
                    t.set(
                        glam::IVec3::new(x, y, z),
                        Voxel::solid(Material::Grass, 255),
                    );
                }
            }
        }
        smoothgrid::encode(&t)
    }

    #[test]
    fn terrain_is_meshed_once_per_change_with_its_material_colours() {
        let mut cache = TerrainCache::default();
        assert_eq!(cache.update(&scene(None)).id, 0);
        let dom = scene(Some(hill()));
        let f = cache.update(&dom);
        assert_eq!(f.id, 1);
        assert!(f.triangles > 0, "{f:?}");
        assert_eq!(f.parts.len(), 1);
        assert_eq!(f.parts[0].material, "Grass");
        let want = Material::Grass
            .default_color()
            .map(|c| srgb_to_linear(f32::from(c) / 255.0));
        assert_eq!(f.parts[0].color, want);
        let p = &f.parts[0];
        assert_eq!(f.body.len(), (p.vertices * 6 + p.indices) * 4);
        assert_eq!(p.indices, f.triangles * 3);
        // Unchanged voxels: the same frame, not a new mesh.
        assert!(Arc::ptr_eq(&f, &cache.update(&dom)));
        // Same inputs, same bytes.
        let again = TerrainCache::default().update(&dom);
        assert_eq!(again.body, f.body);
        // Terrain removed: an empty frame with a new id (the page clears its mesh).
        let gone = cache.update(&scene(None));
        assert_eq!((gone.id, gone.triangles), (2, 0));
    }

    /// Water is drawn (it was not meshed) in the Terrain's WaterColor at one minus its
    /// WaterTransparency, and a change of either is a new frame.
    #[test]
    fn water_is_drawn_in_the_terrains_water_colour_and_transparency() {
        let mut t = Terrain::new();
        for x in 0..4 {
            for z in 0..4 {
                t.set(glam::IVec3::new(x, 0, z), Voxel::solid(Material::Rock, 255));
                t.set(
                    glam::IVec3::new(x, 1, z),
                    Voxel {
                        material: Material::Air,
                        occupancy: 0,
                        liquid: 255,
                    },
                );
            }
        }
        let mut dom = scene(Some(smoothgrid::encode(&t)));
        let mut cache = TerrainCache::default();
        let f = cache.update(&dom);
        let water = f
            .parts
            .iter()
            .find(|p| p.material == "Water")
            .expect("water");
        assert!((water.opacity - 0.7).abs() < 1e-6, "{water:?}");
        let terrain = procmodel_dom::workspace_terrain(&dom).unwrap().referent();
        let props = &mut dom.get_by_ref_mut(terrain).unwrap().properties;
        props.insert(
            "WaterColor".into(),
            Variant::Color3(rbx_types::Color3::new(1.0, 0.0, 0.0)),
        );
        props.insert("WaterTransparency".into(), Variant::Float32(0.5));
        let g = cache.update(&dom);
        assert_eq!(g.id, f.id + 1);
        let water = g.parts.iter().find(|p| p.material == "Water").unwrap();
        assert_eq!((water.color, water.opacity), ([1.0, 0.0, 0.0], 0.5));
        let rock = g.parts.iter().find(|p| p.material == "Rock").unwrap();
        assert_eq!(rock.opacity, 1.0);
    }

    #[test]
    fn a_bad_grid_is_an_error_not_a_panic() {
        let f = TerrainCache::default().update(&scene(Some(vec![1, 2, 3])));
        assert_eq!(f.triangles, 0);
        assert!(f.error.as_deref().unwrap().contains("SmoothGrid"), "{f:?}");
    }
}
