//! Terrain meshes as binary glTF: one node and one mesh with a primitive per terrain
//! material, coloured with the material's colour (Roblox's defaults unless the caller passes
//! `Terrain.MaterialColors`). Takes plain vertex/index arrays, so it depends on no terrain
//! type; `procmodel-terrain`'s `MeshPart` maps field for field.

use std::collections::BTreeMap;

use gltf_json as json;
use json::Index;
use json::validation::Checked::Valid;
use serde_json::Value;

use crate::error::{ErrorKind, ExportError};
use crate::gltf::{attach_buffer, glb_container, new_root, pad, push_accessor, too_large};

/// One primitive: a material's triangles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TerrainPrimitive<'a> {
    /// Material name (the glTF material's name, e.g. `"Grass"`).
    pub name: &'a str,
    /// sRGB colour 0..255 (converted to linear for glTF).
    pub color: [u8; 3],
    /// 1 for an opaque material; less (water: `1 − Terrain.WaterTransparency`) is written as
    /// the base colour's alpha with blending.
    pub opacity: f32,
    /// Positions (studs).
    pub positions: &'a [[f32; 3]],
    /// Unit normals, one per position.
    pub normals: &'a [[f32; 3]],
    /// Triangles (counter-clockwise from outside), indices into `positions`.
    pub indices: &'a [u32],
}

fn srgb_to_linear(c: u8) -> f32 {
    let c = f32::from(c) / 255.0;
    if c <= 0.040_45 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

fn invalid(reason: String) -> ExportError {
    ErrorKind::InvalidOption {
        option: "terrain mesh",
        reason,
    }
    .into()
}

/// Writes a `.glb` of the terrain mesh, vertices multiplied by `scale`. Empty primitives are
/// skipped; mismatched arrays, out-of-range indices or non-finite values are errors naming
/// the primitive.
pub fn terrain_glb(
    primitives: &[TerrainPrimitive<'_>],
    scale: f32,
) -> Result<Vec<u8>, ExportError> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(ErrorKind::InvalidOption {
            option: "scale",
            reason: format!("{scale} is not a positive number"),
        }
        .into());
    }
    let mut root = new_root();
    let mut vertex_data = Vec::new();
    let mut index_data = Vec::new();
    // (positions, normals, indices, material) accessor/material indices per primitive.
    let mut prims = Vec::new();
    for p in primitives {
        if p.indices.is_empty() {
            continue;
        }
        if p.positions.len() != p.normals.len() {
            return Err(invalid(format!(
                "primitive {}: {} positions but {} normals",
                p.name,
                p.positions.len(),
                p.normals.len()
            )));
        }
        if !p.indices.len().is_multiple_of(3) {
            return Err(invalid(format!(
                "primitive {}: {} indices is not a multiple of 3",
                p.name,
                p.indices.len()
            )));
        }
        if let Some(&i) = p.indices.iter().find(|&&i| i as usize >= p.positions.len()) {
            return Err(invalid(format!(
                "primitive {}: index {i} out of range ({} vertices)",
                p.name,
                p.positions.len()
            )));
        }
        let mut min = [f32::INFINITY; 3];
        let mut max = [f32::NEG_INFINITY; 3];
        let pos_at = vertex_data.len();
        for v in p.positions {
            for a in 0..3 {
                let x = v[a] * scale + 0.0;
                if !x.is_finite() {
                    return Err(invalid(format!(
                        "primitive {}: non-finite position",
                        p.name
                    )));
                }
                min[a] = min[a].min(x);
                max[a] = max[a].max(x);
                vertex_data.extend_from_slice(&x.to_le_bytes());
            }
        }
        let nrm_at = vertex_data.len();
        for n in p.normals {
            for &x in n {
                if !x.is_finite() {
                    return Err(invalid(format!("primitive {}: non-finite normal", p.name)));
                }
                vertex_data.extend_from_slice(&(x + 0.0).to_le_bytes());
            }
        }
        let idx_at = index_data.len();
        for &i in p.indices {
            index_data.extend_from_slice(&i.to_le_bytes());
        }
        let floats = |v: [f32; 3]| Value::from(v.map(f64::from).to_vec());
        let count = p.positions.len();
        let mut accessor = |offset, count, component, type_, bounds| {
            push_accessor(&mut root, offset, count, component, type_, bounds)
        };
        use json::accessor::{ComponentType, Type};
        let pa = accessor(
            pos_at,
            count,
            ComponentType::F32,
            Type::Vec3,
            Some((floats(min), floats(max))),
        );
        let na = accessor(nrm_at, count, ComponentType::F32, Type::Vec3, None);
        let ia = accessor(
            idx_at,
            p.indices.len(),
            ComponentType::U32,
            Type::Scalar,
            None,
        );
        let [r, g, b] = p.color.map(srgb_to_linear);
        let opacity = if p.opacity.is_finite() {
            p.opacity.clamp(0.0, 1.0)
        } else {
            1.0
        };
        let mat = root.push(json::Material {
            name: Some(p.name.to_owned()),
            pbr_metallic_roughness: json::material::PbrMetallicRoughness {
                base_color_factor: json::material::PbrBaseColorFactor([r, g, b, opacity]),
                metallic_factor: json::material::StrengthFactor(0.0),
                roughness_factor: json::material::StrengthFactor(1.0),
                ..Default::default()
            },
            alpha_mode: Valid(if opacity < 1.0 {
                json::material::AlphaMode::Blend
            } else {
                json::material::AlphaMode::Opaque
            }),
            ..Default::default()
        });
        prims.push((pa, na, ia, mat));
    }
    if u32::try_from(vertex_data.len() + index_data.len() + 4096).is_err() {
        return Err(too_large());
    }
    let mut bin = attach_buffer(
        &mut root,
        vertex_data,
        index_data,
        [Vec::new(), Vec::new()],
        None,
    );
    let mesh = (!prims.is_empty()).then(|| {
        root.push(json::Mesh {
            extensions: None,
            extras: Default::default(),
            name: Some("Terrain".to_owned()),
            primitives: prims
                .iter()
                .map(|&(pa, na, ia, mat)| json::mesh::Primitive {
                    attributes: BTreeMap::from([
                        (Valid(json::mesh::Semantic::Positions), pa),
                        (Valid(json::mesh::Semantic::Normals), na),
                    ]),
                    extensions: None,
                    extras: Default::default(),
                    indices: Some(ia),
                    material: Some(mat),
                    mode: Valid(json::mesh::Mode::Triangles),
                    targets: None,
                })
                .collect(),
            weights: None,
        })
    });
    let node = root.push(json::Node {
        mesh,
        name: Some("Terrain".to_owned()),
        ..Default::default()
    });
    let scene = root.push(json::Scene {
        extensions: None,
        extras: Default::default(),
        name: None,
        nodes: vec![node],
    });
    root.scene = Some(scene);
    let _: Index<json::Scene> = scene;

    pad(&mut bin, 0);
    glb_container(&root, bin)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_of(glb: &[u8]) -> Value {
        let len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
        assert_eq!(&glb[16..20], b"JSON");
        serde_json::from_slice(&glb[20..20 + len]).unwrap()
    }

    #[test]
    fn one_primitive_per_material() {
        let pos = [[0.0, 0.0, 0.0], [4.0, 0.0, 0.0], [0.0, 0.0, -4.0]];
        let nrm = [[0.0, 1.0, 0.0]; 3];
        let prims = [
            TerrainPrimitive {
                name: "Grass",
                color: [106, 127, 63],
                opacity: 1.0,
                positions: &pos,
                normals: &nrm,
                indices: &[0, 1, 2],
            },
            TerrainPrimitive {
                name: "Rock",
                color: [102, 108, 111],
                opacity: 1.0,
                positions: &pos,
                normals: &nrm,
                indices: &[],
            },
            TerrainPrimitive {
                name: "Sand",
                color: [143, 126, 95],
                opacity: 1.0,
                positions: &pos,
                normals: &nrm,
                indices: &[0, 1, 2, 2, 1, 0],
            },
        ];
        let glb = terrain_glb(&prims, 1.0).unwrap();
        assert_eq!(&glb[..4], b"glTF");
        assert_eq!(
            u32::from_le_bytes(glb[8..12].try_into().unwrap()) as usize,
            glb.len()
        );
        let j = json_of(&glb);
        let p = j["meshes"][0]["primitives"].as_array().unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(j["materials"][0]["name"], "Grass");
        assert_eq!(j["materials"][1]["name"], "Sand");
        assert_eq!(j["accessors"][0]["max"], serde_json::json!([4.0, 0.0, 0.0]));
        assert_eq!(j["buffers"][0]["byteLength"], 2 * (36 + 36) + 12 + 24);
    }

    #[test]
    fn bad_arrays_are_errors() {
        let pos = [[0.0; 3]; 2];
        let nrm = [[0.0, 1.0, 0.0]; 2];
        let p = TerrainPrimitive {
            name: "Mud",
            color: [0; 3],
            opacity: 1.0,
            positions: &pos,
            normals: &nrm,
            indices: &[0, 1, 2],
        };
        let e = terrain_glb(&[p], 1.0).unwrap_err();
        assert!(
            e.to_string()
                .contains("primitive Mud: index 2 out of range"),
            "{e}"
        );
        assert!(terrain_glb(&[], 0.0).is_err());
        assert!(terrain_glb(&[], 1.0).is_ok());
    }
}
