//! glTF 2.0 writer: a [`Scene`] as a JSON document plus one binary buffer,
//! either packed into a `.glb` container or as a `.gltf` + `.bin` pair.
//!
//! Buffer layout: one buffer with two buffer views — all vertex attributes
//! (f32 VEC3 positions then normals of each geometry, stride 12), then all
//! indices (u16 when a geometry has fewer than 65535 vertices, else u32; each
//! geometry's block padded to 4 bytes).

use std::collections::{BTreeMap, HashMap};

use gltf_json as json;
use json::validation::Checked::Valid;
use json::validation::USize64;
use json::{Index, Root};
use serde_json::Value;

use crate::error::{ErrorKind, ExportError};
use crate::scene::{Rigid, Scene};
use crate::shapes::MeshData;

/// Writes a `.glb` (binary glTF) container.
pub(crate) fn glb(scene: &Scene) -> Result<Vec<u8>, ExportError> {
    let (root, bin) = document(scene, None);
    let mut json = serde_json::to_vec(&root).expect("glTF JSON always serialises");
    pad(&mut json, b' ');
    let mut chunks = vec![(*b"JSON", json)];
    if !bin.is_empty() {
        chunks.push((*b"BIN\0", bin));
    }
    let total: usize = 12 + chunks.iter().map(|(_, data)| 8 + data.len()).sum::<usize>();
    let total = u32::try_from(total).map_err(|_| too_large())?;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&total.to_le_bytes());
    for (kind, data) in chunks {
        // Fits: `total` does.
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&kind);
        out.extend_from_slice(&data);
    }
    Ok(out)
}

/// Writes a `.gltf` document referencing its buffer as `bin_name`, and the buffer.
pub(crate) fn separate(scene: &Scene, bin_name: &str) -> Result<(String, Vec<u8>), ExportError> {
    let (root, bin) = document(scene, Some(uri_escape(bin_name)));
    if u32::try_from(bin.len()).is_err() {
        return Err(too_large());
    }
    let mut json = serde_json::to_string_pretty(&root).expect("glTF JSON always serialises");
    json.push('\n');
    Ok((json, bin))
}

fn too_large() -> ExportError {
    ErrorKind::TooLarge {
        what: "the glTF binary data",
        limit: "4 GiB",
    }
    .into()
}

fn pad(data: &mut Vec<u8>, with: u8) {
    while !data.len().is_multiple_of(4) {
        data.push(with);
    }
}

/// Percent-encodes everything but RFC 3986 unreserved characters and `/`.
fn uri_escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Accessor indices of one geometry.
struct GeometryAccessors {
    positions: Index<json::Accessor>,
    normals: Index<json::Accessor>,
    indices: Index<json::Accessor>,
}

fn document(scene: &Scene, bin_uri: Option<String>) -> (Root, Vec<u8>) {
    let mut root = Root {
        asset: json::Asset {
            copyright: None,
            extensions: None,
            extras: Default::default(),
            generator: Some("procmodel".to_owned()),
            min_version: None,
            version: "2.0".to_owned(),
        },
        ..Default::default()
    };

    let mut vertex_data = Vec::new();
    let mut index_data = Vec::new();
    let mut accessors = Vec::with_capacity(scene.geometries.len());
    for geometry in &scene.geometries {
        accessors.push(push_geometry(
            &mut root,
            &geometry.mesh,
            &mut vertex_data,
            &mut index_data,
        ));
    }
    let bin = if vertex_data.is_empty() {
        Vec::new()
    } else {
        let buffer = root.push(json::Buffer {
            byte_length: USize64::from(vertex_data.len() + index_data.len()),
            name: None,
            uri: bin_uri,
            extensions: None,
            extras: Default::default(),
        });
        let mut vertex_view = view(
            buffer,
            0,
            vertex_data.len(),
            json::buffer::Target::ArrayBuffer,
        );
        // Every vertex attribute is a tightly packed f32 VEC3.
        vertex_view.byte_stride = Some(json::buffer::Stride(12));
        let vertex_view = root.push(vertex_view);
        let index_view = root.push(view(
            buffer,
            vertex_data.len(),
            index_data.len(),
            json::buffer::Target::ElementArrayBuffer,
        ));
        for accessor in &mut root.accessors {
            let is_index = accessor.type_ == Valid(json::accessor::Type::Scalar);
            accessor.buffer_view = Some(if is_index { index_view } else { vertex_view });
        }
        let mut bin = vertex_data;
        bin.extend_from_slice(&index_data);
        bin
    };

    for (index, appearance) in scene.appearances.iter().enumerate() {
        let pbr = appearance.pbr();
        let [r, g, b] = appearance.linear_color();
        let alpha = appearance.alpha();
        root.push(json::Material {
            alpha_mode: Valid(if alpha < 1.0 {
                json::material::AlphaMode::Blend
            } else {
                json::material::AlphaMode::Opaque
            }),
            name: Some(crate::obj::material_name(index, appearance)),
            pbr_metallic_roughness: json::material::PbrMetallicRoughness {
                base_color_factor: json::material::PbrBaseColorFactor([r, g, b, alpha]),
                metallic_factor: json::material::StrengthFactor(pbr.metallic),
                roughness_factor: json::material::StrengthFactor(pbr.roughness),
                ..Default::default()
            },
            emissive_factor: json::material::EmissiveFactor(if pbr.emissive {
                [r, g, b]
            } else {
                [0.0; 3]
            }),
            ..Default::default()
        });
    }

    // One glTF mesh per (geometry, material) pair, in first-use order.
    let mut meshes: HashMap<(usize, usize), Index<json::Mesh>> = HashMap::new();
    let mut nodes = Vec::with_capacity(scene.nodes.len());
    for node in &scene.nodes {
        let mesh = node.part.map(|part| {
            *meshes
                .entry((part.geometry, part.appearance))
                .or_insert_with(|| {
                    let geometry = &scene.geometries[part.geometry];
                    let ids = &accessors[part.geometry];
                    let size = geometry.size;
                    Index::push(
                        &mut root.meshes,
                        json::Mesh {
                            extensions: None,
                            extras: Default::default(),
                            name: Some(format!(
                                "{} {}x{}x{}",
                                geometry.shape.name(),
                                size.x,
                                size.y,
                                size.z
                            )),
                            primitives: vec![json::mesh::Primitive {
                                attributes: BTreeMap::from([
                                    (Valid(json::mesh::Semantic::Positions), ids.positions),
                                    (Valid(json::mesh::Semantic::Normals), ids.normals),
                                ]),
                                extensions: None,
                                extras: Default::default(),
                                indices: Some(ids.indices),
                                material: Some(Index::new(part.appearance as u32)),
                                mode: Valid(json::mesh::Mode::Triangles),
                                targets: None,
                            }],
                            weights: None,
                        },
                    )
                })
        });
        let (rotation, translation) = trs(&node.local);
        nodes.push(json::Node {
            children: (!node.children.is_empty()).then(|| {
                node.children
                    .iter()
                    .map(|&c| Index::new(c as u32))
                    .collect()
            }),
            mesh,
            name: Some(node.name.clone()),
            rotation,
            translation,
            ..Default::default()
        });
    }
    root.nodes = nodes;
    let scene_index = root.push(json::Scene {
        extensions: None,
        extras: Default::default(),
        name: None,
        nodes: scene.roots.iter().map(|&r| Index::new(r as u32)).collect(),
    });
    root.scene = Some(scene_index);
    (root, bin)
}

/// Node rotation and translation, omitted when they are the identity.
fn trs(local: &Rigid) -> (Option<json::scene::UnitQuaternion>, Option<[f32; 3]>) {
    let q = local.rotation.as_quat();
    let rotation = (q != glam::Quat::IDENTITY).then(|| json::scene::UnitQuaternion(q.to_array()));
    let t = local.translation.as_vec3();
    let translation = (t != glam::Vec3::ZERO).then(|| t.to_array().map(|v| v + 0.0));
    (rotation, translation)
}

fn view(
    buffer: Index<json::Buffer>,
    offset: usize,
    length: usize,
    target: json::buffer::Target,
) -> json::buffer::View {
    json::buffer::View {
        buffer,
        byte_length: USize64::from(length),
        byte_offset: Some(USize64::from(offset)),
        byte_stride: None,
        name: None,
        target: Some(Valid(target)),
        extensions: None,
        extras: Default::default(),
    }
}

fn push_geometry(
    root: &mut Root,
    mesh: &MeshData,
    vertex_data: &mut Vec<u8>,
    index_data: &mut Vec<u8>,
) -> GeometryAccessors {
    let (min, max) = mesh.bounds();
    let floats = |values: [f32; 3]| Value::from(values.map(|v| f64::from(v + 0.0)).to_vec());
    let mut accessor =
        |offset: usize, count: usize, component, type_, bounds: Option<(Value, Value)>| {
            let (min, max) = bounds.unzip();
            root.push(json::Accessor {
                buffer_view: None, // set once the views exist
                byte_offset: Some(USize64::from(offset)),
                count: USize64::from(count),
                component_type: Valid(json::accessor::GenericComponentType(component)),
                extensions: None,
                extras: Default::default(),
                type_: Valid(type_),
                min,
                max,
                name: None,
                normalized: false,
                sparse: None,
            })
        };
    use json::accessor::{ComponentType, Type};

    let count = mesh.positions.len();
    let positions_at = vertex_data.len();
    for p in &mesh.positions {
        for v in p.to_array() {
            vertex_data.extend_from_slice(&(v + 0.0).to_le_bytes());
        }
    }
    let normals_at = vertex_data.len();
    for n in &mesh.normals {
        for v in n.to_array() {
            vertex_data.extend_from_slice(&(v + 0.0).to_le_bytes());
        }
    }
    let positions = accessor(
        positions_at,
        count,
        ComponentType::F32,
        Type::Vec3,
        Some((floats(min.to_array()), floats(max.to_array()))),
    );
    let normals = accessor(normals_at, count, ComponentType::F32, Type::Vec3, None);

    let indices_at = index_data.len();
    let component = if count < usize::from(u16::MAX) {
        for &i in &mesh.indices {
            index_data.extend_from_slice(&(i as u16).to_le_bytes());
        }
        ComponentType::U16
    } else {
        for &i in &mesh.indices {
            index_data.extend_from_slice(&i.to_le_bytes());
        }
        ComponentType::U32
    };
    pad(index_data, 0);
    let indices = accessor(
        indices_at,
        mesh.indices.len(),
        component,
        Type::Scalar,
        None,
    );
    GeometryAccessors {
        positions,
        normals,
        indices,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn big_meshes_switch_to_u32_indices() {
        for (vertices, component, bytes_per_index) in [(65534, 5123, 2usize), (65535, 5125, 4)] {
            let mesh = MeshData {
                positions: vec![Vec3::ZERO; vertices],
                normals: vec![Vec3::Y; vertices],
                indices: vec![0, 1, vertices as u32 - 1],
            };
            let mut root = Root::default();
            let (mut vertex_data, mut index_data) = (Vec::new(), Vec::new());
            let ids = push_geometry(&mut root, &mesh, &mut vertex_data, &mut index_data);
            let accessor = serde_json::to_value(&root.accessors[ids.indices.value()]).unwrap();
            assert_eq!(accessor["componentType"], component);
            assert_eq!(index_data.len(), (3 * bytes_per_index).div_ceil(4) * 4);
            assert_eq!(vertex_data.len(), vertices * 24);
        }
    }

    #[test]
    fn uri_escaping_keeps_plain_names() {
        assert_eq!(uri_escape("model.bin"), "model.bin");
        assert_eq!(uri_escape("my model#1.bin"), "my%20model%231.bin");
        assert_eq!(uri_escape("dir/ü.bin"), "dir/%C3%BC.bin");
    }
}
