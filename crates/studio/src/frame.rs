//! The viewport's binary frame: every BasePart of the scene as one instance of a batch per
//! (model, shape, material, transparency), packed for `THREE.InstancedMesh`, plus the scene
//! tree the page lists. Built on the engine thread from the DOM; no JSON here beyond the tree
//! records (the wire header is assembled in `protocol.rs`).
//!
//! Body layout (little-endian, 4-byte aligned), batch after batch in header order:
//! `count × 16 f32` column-major instance matrices (unit shape scaled by the part's size),
//! `count × 3 f32` linear RGB colours, `count × u32` tree-node indices (for picking); then
//! the script-built meshes the `Mesh` batches draw (`meshes` in the header, in first-use
//! order), each `vertices × 3 f32` positions in the unit box, `vertices × 3 f32` normals,
//! `vertices × 3 f32` linear RGB vertex colours and `indices × u32` triangle indices; a
//! textured mesh (`texture` bytes in its header entry) then has `vertices × 2 f32` UVs and
//! its texture as a PNG file, padded to 4 bytes.

use procmodel_dom::keys::KEYS;
use rbx_dom_weak::{Instance, Ustr, WeakDom};
use rbx_types::{Ref, Variant};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

/// Children of a results folder listed in the tree (the rest are counted, not listed).
pub const LISTED_RESULTS: usize = 100;

/// How a part is drawn (the page has one unit geometry per shape).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Shape {
    Block,
    Ball,
    Cylinder,
    Wedge,
    CornerWedge,
    /// A `SpecialMesh` of MeshType Sphere: a sphere stretched to the part's size.
    Ellipsoid,
    /// A `CylinderMesh`: a cylinder along the part's Y axis.
    UprightCylinder,
    /// A `SpecialMesh` of MeshType Head: an upright cylinder with rounded edges, its
    /// diameter the smaller of the part's X and Z.
    Head,
    /// A MeshPart's script-built mesh ([`Batch::mesh`] says which).
    Mesh,
}

impl From<procmodel_export::Shape> for Shape {
    fn from(s: procmodel_export::Shape) -> Shape {
        use procmodel_export::Shape as E;
        match s {
            E::Block => Shape::Block,
            E::Ball => Shape::Ball,
            E::Cylinder => Shape::Cylinder,
            E::Wedge => Shape::Wedge,
            E::CornerWedge => Shape::CornerWedge,
            E::Ellipsoid => Shape::Ellipsoid,
            E::UprightCylinder => Shape::UprightCylinder,
            E::Head => Shape::Head,
        }
    }
}

impl Shape {
    /// The primitive shape the page's unit geometry of `self` is (None for a script-built
    /// mesh): its rules for which extents count are the export's.
    fn primitive(self) -> Option<procmodel_export::Shape> {
        use procmodel_export::Shape as E;
        Some(match self {
            Shape::Block => E::Block,
            Shape::Ball => E::Ball,
            Shape::Cylinder => E::Cylinder,
            Shape::Wedge => E::Wedge,
            Shape::CornerWedge => E::CornerWedge,
            Shape::Ellipsoid => E::Ellipsoid,
            Shape::UprightCylinder => E::UprightCylinder,
            Shape::Head => E::Head,
            Shape::Mesh => return None,
        })
    }
}

/// One node of the scene tree.
#[derive(Debug, Clone, Serialize)]
pub struct Node {
    /// The instance's referent (hex), what commands name.
    pub id: String,
    pub name: String,
    pub class: String,
    /// Index of the parent node (`-1` for the root).
    pub parent: i64,
    /// Descendants not listed under this node.
    pub hidden: usize,
}

/// One instanced batch.
#[derive(Debug, Clone, Serialize)]
pub struct Batch {
    pub shape: Shape,
    /// For [`Shape::Mesh`]: the index of its mesh in [`Encoded::meshes`].
    pub mesh: Option<u32>,
    /// Both faces drawn (`MeshPart.DoubleSided`, for script-built meshes).
    pub double_sided: bool,
    /// `Enum.Material` value.
    pub material: u32,
    /// Transparency of every part in the batch (quantised to 1/20).
    pub transparency: f32,
    /// Index into the frame's models (`-1`: a part outside any ProceduralModel).
    pub model: i64,
    pub count: usize,
}

/// What the encoder produces.
pub struct Encoded {
    pub nodes: Vec<Node>,
    pub batches: Vec<Batch>,
    /// The script-built meshes, whose data follows the batches' in the body.
    pub meshes: Vec<MeshInfo>,
    pub body: Vec<u8>,
    /// ProceduralModels in tree order, with their node index.
    pub models: Vec<(Ref, usize)>,
    pub parts: usize,
    pub instances: usize,
}

/// The sizes of one script-built mesh in the body.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct MeshInfo {
    pub vertices: u32,
    pub indices: u32,
    /// Bytes of its texture's PNG file (0: untextured, and no UVs follow).
    pub texture: u32,
    /// Its texture's alpha makes the part see-through.
    pub see_through: bool,
}

/// What paints a script-built mesh: the attribute text of its image, and the part's colour
/// (as bits) it is shown over, unless it is see-through
/// ([`procmodel_export::carried_texture`]).
type Paint = Option<(String, Option<[u32; 3]>)>;

/// [`Paint`] borrowed from the scene.
type PaintRef<'a> = Option<(&'a str, Option<[u32; 3]>)>;

fn owned(paint: PaintRef<'_>) -> Paint {
    paint.map(|(t, under)| (t.to_owned(), under))
}

fn borrowed(paint: &Paint) -> PaintRef<'_> {
    paint.as_ref().map(|(t, under)| (t.as_str(), *under))
}

/// A script-built mesh in the unit box (`procmodel_export::script_mesh_text`), as the body
/// carries it: the instance matrix stretches it to its part's size.
struct UnitMesh {
    positions: Vec<f32>,
    normals: Vec<f32>,
    colors: Vec<f32>,
    indices: Vec<u32>,
    /// For a textured mesh: its UVs and its texture's PNG file.
    uvs: Vec<f32>,
    png: Option<Vec<u8>>,
    see_through: bool,
}

impl UnitMesh {
    /// None for an attribute that is not a usable mesh (the part is drawn as its box).
    /// `solid`: a solid-modelling result, whose triangles are in the part's own space (off
    /// its centre for GeometryService's); a MeshPart's mesh is centred.
    fn new(text: &str, face_colors: bool, solid: bool, paint: &Paint) -> Option<UnitMesh> {
        let mesh = procmodel_mesh::TriangleMesh::from_attribute(text).ok()?;
        // A texture that is not an image leaves the mesh untextured (the export warns).
        let texture = paint.as_ref().and_then(|(image, under)| {
            let t = procmodel_mesh::texture::Texture::from_attribute(image).ok()?;
            Some(match under {
                Some(bits) => (t.over_color(bits.map(f32::from_bits)).to_png(), false),
                None => (t.to_png(), true),
            })
        });
        // Fitted to a part of size 1 (the instance matrix scales it to the part's Size).
        let (offset, inv) = mesh.fit([1.0; 3], !solid)?;
        let (offset, inv) = (glam::Vec3::from(offset), glam::Vec3::from(inv));
        let (vertices, indices) = mesh.indexed();
        let mut out = UnitMesh {
            positions: Vec::with_capacity(3 * vertices.len()),
            normals: Vec::with_capacity(3 * vertices.len()),
            colors: Vec::with_capacity(3 * vertices.len()),
            indices,
            uvs: Vec::new(),
            see_through: texture.as_ref().is_some_and(|t| t.1),
            png: texture.map(|t| t.0),
        };
        for v in &vertices {
            // Into the unit box: positions shrink by the extent, normals grow by it.
            let n = (glam::Vec3::from(v.normal) / inv).normalize_or(glam::Vec3::Y);
            out.positions
                .extend(((glam::Vec3::from(v.position) - offset) * inv).to_array());
            out.normals.extend(n.to_array());
            let [r, g, b, _] = if face_colors { v.color } else { [1.0; 4] };
            out.colors
                .extend([r, g, b].map(|c| srgb_to_linear(c.clamp(0.0, 1.0))));
            if out.png.is_some() {
                out.uvs.extend(v.uv);
            }
        }
        Some(out)
    }
}

#[derive(Default)]
struct Acc {
    matrices: Vec<f32>,
    colors: Vec<f32>,
    ids: Vec<u32>,
}

struct Names {
    shape: Ustr,
    double_sided: Ustr,
    use_part_color: Ustr,
    material: Ustr,
    transparency: Ustr,
    brick_color: Ustr,
    color3uint8: Ustr,
}

static NAMES: LazyLock<Names> = LazyLock::new(|| Names {
    shape: Ustr::from("Shape"),
    double_sided: Ustr::from("DoubleSided"),
    use_part_color: Ustr::from("UsePartColor"),
    material: Ustr::from("Material"),
    transparency: Ustr::from("Transparency"),
    brick_color: Ustr::from("BrickColor"),
    color3uint8: Ustr::from("Color3uint8"),
});

/// (model, shape, mesh index or `u32::MAX`, both faces drawn, material, transparency in
/// 1/20).
type BatchKey = (i64, Shape, u32, bool, u32, u32);

/// Builds frames, keeping its per-batch buffers from one frame to the next: a frame of
/// 10,000 parts grew ~800 KB of fresh buffers, and faulting in and zeroing their pages was
/// the largest part of encoding it.
#[derive(Default)]
pub struct Encoder {
    batches: BTreeMap<BatchKey, Acc>,
    /// Script-built meshes by attribute text, kept while frames draw them (decoding one is
    /// most of a frame's work for the part); None for text that is not a mesh.
    /// By (attribute text, face colours shown, a solid-modelling result's, its paint).
    unit_meshes: HashMap<(String, bool, bool, Paint), Option<std::sync::Arc<UnitMesh>>>,
    /// Whether a class is a BasePart that draws a shape of its own (not Terrain).
    part_classes: HashMap<Ustr, bool>,
}

/// Walks the scene once with a fresh [`Encoder`].
#[cfg(test)]
pub fn encode(dom: &WeakDom) -> Encoded {
    Encoder::default().encode(dom)
}

impl Encoder {
    /// Walks the scene (pre-order, children in order: same DOM, same bytes).
    pub fn encode(&mut self, dom: &WeakDom) -> Encoded {
        let mut nodes = Vec::new();
        let mut models = Vec::new();
        for acc in self.batches.values_mut() {
            acc.matrices.clear();
            acc.colors.clear();
            acc.ids.clear();
        }
        let batches = &mut self.batches;
        let unit_meshes = &mut self.unit_meshes;
        // This frame's meshes in first-use order, and their indices by text.
        let mut frame_meshes: Vec<std::sync::Arc<UnitMesh>> = Vec::new();
        let mut mesh_index: HashMap<(&str, bool, bool, PaintRef), u32> = HashMap::new();
        let mut parts = 0usize;
        let mut instances = 0usize;
        // Only the world is drawn (what Roblox renders, what the glTF export writes): a
        // place's Workspace, not the templates kept in its storage services.
        let world = procmodel_dom::world(dom);
        // (ref, nearest listed ancestor's node, owning model index, listed, inside results,
        // in the world)
        let mut stack: Vec<(Ref, i64, i64, bool, bool, bool)> =
            vec![(dom.root_ref(), -1, -1, true, false, world.is_none())];
        while let Some((r, parent, model, listed, in_results, drawn)) = stack.pop() {
            let Some(inst) = dom.get_by_ref(r) else {
                continue;
            };
            instances += 1;
            let mut me = parent;
            let mut owner = model;
            if listed {
                me = nodes.len() as i64;
                nodes.push(Node {
                    id: r.to_string(),
                    name: inst.name.clone(),
                    class: inst.class.to_string(),
                    parent,
                    hidden: 0,
                });
                if inst.class == KEYS.procedural_model {
                    owner = models.len() as i64;
                    models.push((r, me as usize));
                }
            } else if parent >= 0 {
                nodes[parent as usize].hidden += 1;
            }
            let is_part = drawn
                && *self.part_classes.entry(inst.class).or_insert_with(|| {
                    procmodel_dom::is_a(inst.class.as_str(), "BasePart")
                        && !procmodel_export::draws_no_shape(inst.class.as_str())
                });
            if is_part {
                parts += 1;
                // A mesh child draws the part the way the glTF export does; a bad Scale or
                // Offset draws the part itself (the export reports it).
                let mesh = if inst.children().is_empty() {
                    None
                } else {
                    procmodel_export::mesh_child(dom, inst, "").ok().flatten()
                };
                // Only the classes that draw a procmodel mesh do (the export's and the
                // queries' rule, `procmodel_dom::drawn`): a MeshPart centred, a
                // solid-modelling result about its origin. A result shows its faces' colours
                // unless UsePartColor paints it in its Color; a MeshPart's Color tints its
                // vertex colours.
                let centred = procmodel_dom::drawn::mesh_centred(inst.class.as_str());
                let solid = centred == Some(false);
                let face_colors = !solid
                    || !matches!(
                        inst.properties.get(&NAMES.use_part_color),
                        Some(Variant::Bool(true))
                    );
                let text = centred.and_then(|_| procmodel_export::script_mesh_text(inst));
                // A MeshPart showing an EditableImage is painted with it, over its Color.
                let paint: PaintRef = match (text, solid) {
                    (Some(_), false) => procmodel_export::carried_texture(dom, inst).map(|t| {
                        let under = (!t.see_through).then(|| color_of(inst).map(f32::to_bits));
                        (t.text, under)
                    }),
                    _ => None,
                };
                let painted = paint.is_some();
                let script_mesh = text.and_then(|text| {
                    let key = (text, face_colors, solid, paint);
                    if let Some(&i) = mesh_index.get(&key) {
                        return Some(i);
                    }
                    let unit = unit_meshes
                        .entry((text.to_owned(), face_colors, solid, owned(paint)))
                        .or_insert_with(|| {
                            UnitMesh::new(text, face_colors, solid, &owned(paint))
                                .map(std::sync::Arc::new)
                        })
                        .clone()?;
                    let i = frame_meshes.len() as u32;
                    frame_meshes.push(unit);
                    mesh_index.insert(key, i);
                    Some(i)
                });
                // The texture carries the part's colour.
                let white = script_mesh.is_some() && ((solid && face_colors) || painted);
                let (shape, key) = match script_mesh {
                    Some(i) => {
                        let (_, (model, _, _, _, material, t)) = part_key(inst, owner, None);
                        let double = matches!(
                            inst.properties.get(&NAMES.double_sided),
                            Some(Variant::Bool(true))
                        );
                        (Shape::Mesh, (model, Shape::Mesh, i, double, material, t))
                    }
                    None => part_key(inst, owner, mesh.map(|m| m.shape.into())),
                };
                let acc = batches.entry(key).or_default();
                push_part(acc, inst, shape, mesh, me.max(0) as u32, white);
            }
            let is_results = inst.class == "GeneratedFolder";
            let children = inst.children();
            for (i, &c) in children.iter().enumerate().rev() {
                // Inside results, only the folder's first children are listed (not their
                // subtrees).
                let child_listed = listed && !in_results && (!is_results || i < LISTED_RESULTS);
                let child_drawn = drawn || Some(c) == world;
                stack.push((
                    c,
                    me,
                    owner,
                    child_listed,
                    in_results || is_results,
                    child_drawn,
                ));
            }
        }
        // Batches this frame has no part of are dropped (with their buffers).
        batches.retain(|_, acc| !acc.ids.is_empty());
        let mut body = Vec::with_capacity(parts * (16 + 3 + 1) * 4);
        let mut out_batches = Vec::with_capacity(batches.len());
        for (&(model, shape, mesh, double_sided, material, t), acc) in batches.iter() {
            out_batches.push(Batch {
                shape,
                mesh: (mesh != u32::MAX).then_some(mesh),
                double_sided,
                material,
                transparency: t as f32 / 20.0,
                model,
                count: acc.ids.len(),
            });
            for v in acc.matrices.iter().chain(&acc.colors) {
                body.extend_from_slice(&v.to_le_bytes());
            }
            for v in &acc.ids {
                body.extend_from_slice(&v.to_le_bytes());
            }
        }
        let mut meshes = Vec::with_capacity(frame_meshes.len());
        for m in &frame_meshes {
            meshes.push(MeshInfo {
                vertices: (m.positions.len() / 3) as u32,
                indices: m.indices.len() as u32,
                texture: m.png.as_ref().map_or(0, |p| p.len() as u32),
                see_through: m.see_through,
            });
            for v in m.positions.iter().chain(&m.normals).chain(&m.colors) {
                body.extend_from_slice(&v.to_le_bytes());
            }
            for v in &m.indices {
                body.extend_from_slice(&v.to_le_bytes());
            }
            if let Some(png) = &m.png {
                for v in &m.uvs {
                    body.extend_from_slice(&v.to_le_bytes());
                }
                body.extend_from_slice(png);
                while !body.len().is_multiple_of(4) {
                    body.push(0);
                }
            }
        }
        // Meshes no part draws any more are forgotten.
        unit_meshes.retain(|(text, colors, solid, paint), _| {
            mesh_index.contains_key(&(text.as_str(), *colors, *solid, borrowed(paint)))
        });
        Encoded {
            nodes,
            batches: out_batches,
            meshes,
            body,
            models,
            parts,
            instances,
        }
    }
}

fn part_key(inst: &Instance, model: i64, mesh: Option<Shape>) -> (Shape, BatchKey) {
    let shape = match inst.class.as_str() {
        _ if let Some(mesh) = mesh => mesh,
        "WedgePart" => Shape::Wedge,
        "CornerWedgePart" => Shape::CornerWedge,
        "Part" => match inst.properties.get(&NAMES.shape) {
            Some(Variant::Enum(e)) => match e.to_u32() {
                0 => Shape::Ball,
                2 => Shape::Cylinder,
                3 => Shape::Wedge,
                4 => Shape::CornerWedge,
                _ => Shape::Block,
            },
            _ => Shape::Block,
        },
        // MeshParts, unions, trusses, seats: drawn as their bounding box.
        _ => Shape::Block,
    };
    let material = match inst.properties.get(&NAMES.material) {
        Some(Variant::Enum(e)) => e.to_u32(),
        Some(Variant::EnumItem(e)) => e.value,
        _ => 256,
    };
    let t = match inst.properties.get(&NAMES.transparency) {
        Some(Variant::Float32(t)) if t.is_finite() => *t,
        Some(Variant::Float64(t)) if t.is_finite() => *t as f32,
        _ => 0.0,
    };
    let t = (t.clamp(0.0, 1.0) * 20.0).round() as u32;
    (shape, (model, shape, u32::MAX, false, material, t))
}

fn push_part(
    acc: &mut Acc,
    inst: &Instance,
    shape: Shape,
    mesh: Option<procmodel_export::MeshChild>,
    node: u32,
    white: bool,
) {
    let cf = match inst.properties.get(&KEYS.cframe) {
        Some(Variant::CFrame(c)) => *c,
        _ => rbx_types::CFrame::identity(),
    };
    let size = match inst.properties.get(&KEYS.size) {
        Some(Variant::Vector3(v)) => glam::Vec3::new(v.x, v.y, v.z),
        _ => glam::Vec3::new(4.0, 1.0, 2.0),
    };
    let size = if size.is_finite() {
        size.max(glam::Vec3::ZERO)
    } else {
        glam::Vec3::ZERO
    };
    let (size, offset) = match mesh {
        Some(m) => (size * m.scale, m.offset),
        None => (size, glam::Vec3::ZERO),
    };
    // The unit geometry stretched to the extents the shape uses (a ball its smallest one).
    let scale = shape.primitive().map_or(size, |p| p.effective_size(size));
    let a = procmodel_dom::cframe_to_affine(&cf);
    let cols = [
        a.matrix3.x_axis * scale.x,
        a.matrix3.y_axis * scale.y,
        a.matrix3.z_axis * scale.z,
    ];
    for c in cols {
        acc.matrices.extend_from_slice(&[c.x, c.y, c.z, 0.0]);
    }
    let t = glam::Vec3::from(a.translation) + a.matrix3 * offset;
    acc.matrices.extend_from_slice(&[t.x, t.y, t.z, 1.0]);
    let color = if white { [1.0; 3] } else { color_of(inst) };
    acc.colors.extend_from_slice(&color.map(srgb_to_linear));
    acc.ids.push(node);
}

fn color_of(inst: &Instance) -> [f32; 3] {
    let p = &inst.properties;
    let c = p.get(&KEYS.color).or_else(|| p.get(&NAMES.color3uint8));
    match c {
        Some(Variant::Color3uint8(c)) => [c.r, c.g, c.b].map(|v| f32::from(v) / 255.0),
        Some(Variant::Color3(c)) => [c.r, c.g, c.b].map(|v| v.clamp(0.0, 1.0)),
        _ => match p.get(&NAMES.brick_color) {
            Some(Variant::BrickColor(b)) => {
                let c = b.to_color3uint8();
                [c.r, c.g, c.b].map(|v| f32::from(v) / 255.0)
            }
            _ => [163.0 / 255.0, 162.0 / 255.0, 165.0 / 255.0],
        },
    }
}

#[inline]
fn srgb_to_linear(c: f32) -> f32 {
    if !c.is_finite() {
        0.0
    } else if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbx_dom_weak::InstanceBuilder;

    /// A place shows its Workspace only: a template kept in ReplicatedStorage was drawn over
    /// the world (Roblox does not render it, the glTF export leaves it out). It is still
    /// listed in the tree. A model file's instances (no Workspace) are all drawn.
    #[test]
    fn only_the_workspace_of_a_place_is_drawn() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let ws = dom.insert(root, InstanceBuilder::new("Workspace"));
        let storage = dom.insert(root, InstanceBuilder::new("ReplicatedStorage"));
        let model = dom.insert(ws, InstanceBuilder::new("Model"));
        dom.insert(model, InstanceBuilder::new("Part"));
        dom.insert(storage, InstanceBuilder::new("Part").with_name("Template"));
        let e = encode(&dom);
        assert_eq!(e.parts, 1);
        assert_eq!(e.batches.iter().map(|b| b.count).sum::<usize>(), 1);
        assert!(e.nodes.iter().any(|n| n.name == "Template"));
        let mut file = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = file.root_ref();
        let m = file.insert(root, InstanceBuilder::new("Model"));
        file.insert(m, InstanceBuilder::new("Part"));
        file.insert(root, InstanceBuilder::new("Part"));
        assert_eq!(encode(&file).parts, 2);
    }

    #[test]
    fn parts_batch_by_shape_and_material_with_their_matrices() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let ws = dom.insert(root, InstanceBuilder::new("Workspace"));
        for i in 0..3 {
            dom.insert(
                ws,
                InstanceBuilder::new("Part")
                    .with_property("Size", rbx_types::Vector3::new(2.0, 4.0, 6.0))
                    .with_property(
                        "CFrame",
                        rbx_types::CFrame::new(
                            rbx_types::Vector3::new(i as f32, 0.0, 0.0),
                            rbx_types::Matrix3::identity(),
                        ),
                    ),
            );
        }
        dom.insert(ws, InstanceBuilder::new("WedgePart"));
        let e = encode(&dom);
        assert_eq!(e.parts, 4);
        assert_eq!(e.batches.len(), 2);
        assert_eq!(e.batches[0].shape, Shape::Block);
        assert_eq!(e.batches[0].count, 3);
        assert_eq!(e.batches[1].shape, Shape::Wedge);
        assert_eq!(e.body.len(), 4 * (16 + 3 + 1) * 4);
        let f = |i: usize| f32::from_le_bytes(e.body[i * 4..i * 4 + 4].try_into().unwrap());
        // First matrix: X axis scaled by 2, Y by 4, Z by 6, at x = 0; the second at x = 1.
        assert_eq!([f(0), f(5), f(10), f(15)], [2.0, 4.0, 6.0, 1.0]);
        assert_eq!(f(16 + 12), 1.0);
        assert_eq!(e.nodes.len(), 6);
        assert_eq!(e.nodes[1].class, "Workspace");
    }

    #[test]
    fn terrain_and_negative_parts_draw_no_box() {
        // Terrain is drawn from its voxels: as a part it has no Size of its own, and drew
        // a 4 × 1 × 2 brick at the origin of every scene with terrain.
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let ws = dom.insert(root, InstanceBuilder::new("Workspace"));
        dom.insert(ws, InstanceBuilder::new("Terrain"));
        dom.insert(ws, InstanceBuilder::new("NegateOperation"));
        dom.insert(ws, InstanceBuilder::new("Part"));
        let e = encode(&dom);
        assert_eq!(e.parts, 1);
        assert_eq!(e.batches.len(), 1);
        assert_eq!(e.batches[0].count, 1);
        assert_eq!(e.nodes.len(), 5, "the tree still lists them");
    }

    /// A MeshPart carrying a one-triangle mesh (spanning 2 × 1 × 0) as its attribute.
    fn triangle_part(size: f32) -> InstanceBuilder {
        triangle_part_of("MeshPart", size)
    }

    /// A part of `class` carrying the mesh of [`triangle_part`].
    fn triangle_part_of(class: &str, size: f32) -> InstanceBuilder {
        InstanceBuilder::new(class)
            .with_property("Size", rbx_types::Vector3::new(size, size, size))
            .with_property("Attributes", triangle_attributes())
    }

    /// The attributes of [`triangle_part`].
    fn triangle_attributes() -> rbx_types::Attributes {
        use procmodel_mesh::{Triangle, TriangleMesh};
        let mesh = TriangleMesh {
            positions: vec![[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            normals: vec![[0.0, 0.0, 1.0]],
            uvs: vec![[0.0, 0.0]],
            colors: vec![[1.0, 0.0, 0.0, 1.0]],
            triangles: vec![Triangle {
                vertices: [0, 1, 2],
                ..Triangle::default()
            }],
        };
        let mut attributes = rbx_types::Attributes::new();
        attributes.insert(
            procmodel_mesh::ATTRIBUTE.to_owned(),
            mesh.to_attribute().into(),
        );
        attributes
    }

    #[test]
    fn meshparts_of_one_script_mesh_share_it_in_the_unit_box() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let ws = dom.insert(root, InstanceBuilder::new("Workspace"));
        dom.insert(ws, triangle_part(4.0));
        dom.insert(ws, triangle_part(8.0));
        dom.insert(ws, InstanceBuilder::new("MeshPart")); // an asset's: its box
        let e = encode(&dom);
        assert_eq!(e.parts, 3);
        assert_eq!(e.batches.len(), 2);
        assert!(!e.batches[1].double_sided);
        assert_eq!(e.batches[0].shape, Shape::Block);
        assert_eq!(
            (e.batches[1].shape, e.batches[1].mesh),
            (Shape::Mesh, Some(0))
        );
        assert_eq!(e.batches[1].count, 2);
        assert_eq!(e.meshes.len(), 1);
        assert_eq!((e.meshes[0].vertices, e.meshes[0].indices), (3, 3));
        let parts = 3 * (16 + 3 + 1) * 4;
        assert_eq!(e.body.len(), parts + (3 * 9 + 3) * 4);
        let f = |i: usize| {
            f32::from_le_bytes(e.body[parts + i * 4..parts + i * 4 + 4].try_into().unwrap())
        };
        // Positions centred in the unit box (Z has no extent), then the normals, then the
        // colours (linear), then the indices.
        assert_eq!([f(0), f(1), f(2)], [-0.5, -0.5, 0.0]);
        assert_eq!([f(3), f(4)], [0.5, -0.5]);
        assert_eq!([f(9), f(10), f(11)], [0.0, 0.0, 1.0]);
        assert_eq!([f(18), f(19), f(20)], [1.0, 0.0, 0.0]);
        // The second part's matrix (after the box's batch of 20 floats and the first
        // matrix) stretches the unit mesh to its size.
        let at = (20 + 16) * 4;
        assert_eq!(
            f32::from_le_bytes(e.body[at..at + 4].try_into().unwrap()),
            8.0
        );
        // A double-sided one is a batch of its own, drawing the same mesh.
        dom.insert(ws, triangle_part(4.0).with_property("DoubleSided", true));
        let e = encode(&dom);
        assert_eq!(e.batches.len(), 3);
        assert_eq!(
            (e.batches[2].mesh, e.batches[2].double_sided),
            (Some(0), true)
        );
        assert_eq!(e.meshes.len(), 1);
    }

    /// A Part draws its own shape whatever its attributes hold, as the export draws it: only
    /// MeshParts and solid-modelling results draw a procmodel mesh.
    #[test]
    fn a_part_carrying_a_mesh_attribute_draws_its_own_shape() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let ws = dom.insert(root, InstanceBuilder::new("Workspace"));
        dom.insert(ws, triangle_part_of("Part", 4.0));
        let e = encode(&dom);
        assert_eq!(e.batches.len(), 1);
        assert_eq!(
            (e.batches[0].shape, e.batches[0].mesh),
            (Shape::Block, None)
        );
        assert!(e.meshes.is_empty());
    }

    /// A solid-modelling result shows its faces' colours (white instance colour, the mesh's
    /// own) unless UsePartColor paints it in its Color (white mesh, the part's colour).
    #[test]
    fn a_union_shows_its_face_colours_unless_it_uses_its_part_color() {
        for (use_part_color, instance, face) in [
            (false, [1.0, 1.0, 1.0], [1.0, 0.0, 0.0]),
            (true, [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]),
        ] {
            let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
            let root = dom.root_ref();
            let ws = dom.insert(root, InstanceBuilder::new("Workspace"));
            let union = triangle_part_of("UnionOperation", 4.0)
                .with_property("Color", rbx_types::Color3::new(0.0, 1.0, 0.0))
                .with_property("UsePartColor", use_part_color);
            dom.insert(ws, union);
            let e = encode(&dom);
            assert_eq!((e.batches.len(), e.meshes.len()), (1, 1));
            assert_eq!(e.batches[0].shape, Shape::Mesh);
            let f = |i: usize| f32::from_le_bytes(e.body[i * 4..i * 4 + 4].try_into().unwrap());
            // One part: its matrix (16), its colour (3), its id; then the mesh's positions
            // (9), normals (9) and colours.
            assert_eq!(
                [f(16), f(17), f(18)],
                instance,
                "UsePartColor {use_part_color}"
            );
            assert_eq!([f(38), f(39), f(40)], face, "UsePartColor {use_part_color}");
        }
    }

    /// A MeshPart showing an EditableImage: its mesh carries UVs and the image over the
    /// part's Color (the export's rule), and the part's instance colour is white; two parts
    /// of other colours draw two textures; a broken image leaves the mesh untextured.
    #[test]
    fn a_meshpart_showing_an_image_draws_it_over_its_colour() {
        let image = procmodel_mesh::texture::Texture::new(1, 2, vec![9, 9, 9, 0, 10, 20, 30, 255])
            .unwrap()
            .to_attribute();
        let painted = |color: rbx_types::Color3, text: &str| {
            let mut attributes = triangle_attributes();
            attributes.insert("ProcmodelTexture".to_owned(), text.into());
            InstanceBuilder::new("MeshPart")
                .with_property("Size", rbx_types::Vector3::new(4.0, 4.0, 4.0))
                .with_property("Attributes", attributes)
                .with_property("Color", color)
        };
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let ws = dom.insert(root, InstanceBuilder::new("Workspace"));
        dom.insert(ws, painted(rbx_types::Color3::new(0.0, 0.0, 1.0), &image));
        let e = encode(&dom);
        assert_eq!(e.meshes.len(), 1);
        let info = e.meshes[0];
        assert!(info.texture > 0 && !info.see_through);
        let f = |i: usize| f32::from_le_bytes(e.body[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!(
            [f(16), f(17), f(18)],
            [1.0; 3],
            "the texture carries the colour"
        );
        // After the part (20 floats): positions, normals, colours (9 each), 3 indices, then
        // 3 UVs and the PNG.
        let uv_at = 20 + 27 + 3;
        assert_eq!([f(uv_at), f(uv_at + 1)], [0.0, 0.0]);
        let png_at = (uv_at + 6) * 4;
        let png = &e.body[png_at..png_at + info.texture as usize];
        let t = procmodel_mesh::texture::Texture::from_png(png).unwrap();
        assert_eq!(t.rgba, vec![0, 0, 255, 255, 10, 20, 30, 255]);
        assert!(e.body.len().is_multiple_of(4));
        // Another colour is another texture; a broken image is no texture.
        dom.insert(ws, painted(rbx_types::Color3::new(1.0, 0.0, 0.0), &image));
        dom.insert(
            ws,
            painted(rbx_types::Color3::new(1.0, 0.0, 0.0), "not an image"),
        );
        let e = encode(&dom);
        assert_eq!(e.meshes.len(), 3);
        assert!(e.meshes[1].texture > 0);
        assert_eq!(e.meshes[2].texture, 0);
    }

    #[test]
    fn an_encoder_reused_across_frames_encodes_each_frame_alone() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let ws = dom.insert(root, InstanceBuilder::new("Workspace"));
        for _ in 0..3 {
            dom.insert(ws, InstanceBuilder::new("Part"));
        }
        let wedge = dom.insert(ws, InstanceBuilder::new("WedgePart"));
        let mut encoder = Encoder::default();
        let first = encoder.encode(&dom);
        let again = encoder.encode(&dom);
        assert_eq!(
            again.body, first.body,
            "the buffers are emptied between frames"
        );
        assert_eq!(again.batches.len(), 2);
        dom.destroy(wedge);
        let third = encoder.encode(&dom);
        assert_eq!(
            (third.parts, third.batches.len()),
            (3, 1),
            "the wedge batch is gone"
        );
        assert_eq!(third.body, encode(&dom).body);
    }

    #[test]
    fn mesh_children_draw_their_part_as_the_export_does() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let ws = dom.insert(root, InstanceBuilder::new("Workspace"));
        // Turned 90° about Y: the mesh's Offset (+X in the part's space) lands on −Z.
        let turned = rbx_types::Matrix3::new(
            rbx_types::Vector3::new(0.0, 0.0, 1.0),
            rbx_types::Vector3::new(0.0, 1.0, 0.0),
            rbx_types::Vector3::new(-1.0, 0.0, 0.0),
        );
        dom.insert(
            ws,
            InstanceBuilder::new("Part")
                .with_property("Size", rbx_types::Vector3::new(2.0, 4.0, 6.0))
                .with_property(
                    "CFrame",
                    rbx_types::CFrame::new(rbx_types::Vector3::new(10.0, 0.0, 0.0), turned),
                )
                .with_child(
                    InstanceBuilder::new("SpecialMesh")
                        .with_property("MeshType", rbx_types::Enum::from_u32(3))
                        .with_property("Scale", rbx_types::Vector3::new(1.0, 0.5, 1.0))
                        .with_property("Offset", rbx_types::Vector3::new(3.0, 0.0, 0.0)),
                ),
        );
        // A CylinderMesh: upright, its diameter the smaller of X and Z.
        dom.insert(
            ws,
            InstanceBuilder::new("Part")
                .with_property("Size", rbx_types::Vector3::new(3.0, 0.5, 2.0))
                .with_child(InstanceBuilder::new("CylinderMesh")),
        );
        // A SpecialMesh of MeshType Head (it drew the part's own block).
        dom.insert(
            ws,
            InstanceBuilder::new("Part").with_child(
                InstanceBuilder::new("SpecialMesh")
                    .with_property("MeshType", rbx_types::Enum::from_u32(0)),
            ),
        );
        let e = encode(&dom);
        let shapes: Vec<Shape> = e.batches.iter().map(|b| b.shape).collect();
        assert_eq!(
            shapes,
            [Shape::Ellipsoid, Shape::UprightCylinder, Shape::Head]
        );
        let f = |i: usize| f32::from_le_bytes(e.body[i * 4..i * 4 + 4].try_into().unwrap());
        // The ellipsoid: columns scaled by (2, 2, 6), at (10, 0, −3).
        let x_axis = [f(0), f(1), f(2)];
        let y_axis = [f(4), f(5), f(6)];
        let z_axis = [f(8), f(9), f(10)];
        assert_eq!(
            (x_axis, y_axis, z_axis),
            ([0.0, 0.0, -2.0], [0.0, 2.0, 0.0], [6.0, 0.0, 0.0])
        );
        assert_eq!([f(12), f(13), f(14)], [10.0, 0.0, -3.0]);
        // The cylinder's batch follows the ellipsoid's matrix, colour and id.
        let c = 16 + 3 + 1;
        assert_eq!([f(c), f(c + 5), f(c + 10)], [2.0, 0.5, 2.0]);
    }
}
