//! Walks a DOM subtree once and flattens it into the format-neutral scene both
//! writers consume: nodes in DOM pre-order, shared geometries and shared
//! appearances numbered in first-use order (so the same tree always gives the
//! same numbering).

use std::collections::{HashMap, HashSet};

use glam::{DMat3, DQuat, DVec3, Vec3};
use rbx_dom_weak::types::{Ref, Variant};
use rbx_dom_weak::{Instance, WeakDom};

use crate::ExportOptions;
use crate::error::{ErrorKind, ExportError, ExportWarning, WarningKind};
use crate::material::{Appearance, material_name};
use procmodel_mesh::shapes::{self, MeshData, Shape};

/// Roblox clamps part sizes to this minimum.
const MIN_PART_SIZE: f32 = 0.001;
/// `Enum.Material.Plastic`.
const PLASTIC: u32 = 256;

/// BaseParts that draw no shape of their own: Terrain (drawn from its voxels) and a
/// NegateOperation (only subtracted from other parts; Studio shows it only while editing).
pub fn draws_no_shape(class: &str) -> bool {
    matches!(class, "Terrain" | "NegateOperation")
}

/// The text of a part's procmodel mesh attribute ([`procmodel_mesh::ATTRIBUTE`], what an
/// EditableMesh's MeshPart and a solid-modelling result carry), if it has one: the one rule
/// for which parts draw such a mesh, which the studio's viewport follows too.
pub fn script_mesh_text(instance: &Instance) -> Option<&str> {
    attribute_text(instance, procmodel_mesh::ATTRIBUTE)
}

/// The image a MeshPart is painted with ([`carried_texture`]).
pub struct CarriedTexture<'a> {
    /// The attribute holding it.
    pub attribute: String,
    /// Its text (a PNG in base64, [`procmodel_mesh::texture::Texture::from_attribute`]).
    pub text: &'a str,
    /// Its alpha makes the part see-through (a SurfaceAppearance with AlphaMode
    /// Transparency); otherwise it is shown over the part's Color.
    pub see_through: bool,
    /// The SurfaceAppearance child it came from.
    pub surface: Option<Ref>,
}

/// The image a MeshPart carries for an EditableImage it shows, if any: a SurfaceAppearance
/// child's ColorMap before the part's own TextureContent, as Roblox draws them. The one rule
/// for which image paints a part, which the studio's viewport follows too.
pub fn carried_texture<'a>(dom: &'a WeakDom, instance: &'a Instance) -> Option<CarriedTexture<'a>> {
    let surface = instance.children().iter().find_map(|&c| {
        let child = dom.get_by_ref(c)?;
        (child.class == "SurfaceAppearance").then_some(child)?;
        let text = attribute_text(child, &texture_attribute("ColorMapContent"))?;
        Some((child, text))
    });
    Some(match surface {
        Some((child, text)) => CarriedTexture {
            attribute: texture_attribute("ColorMapContent"),
            text,
            see_through: matches!(
                child.properties.get(&rbx_dom_weak::ustr("AlphaMode")),
                Some(Variant::Enum(e)) if crate::material::enum_item_name("AlphaMode", e.to_u32()) == Some("Transparency")
            ),
            surface: Some(child.referent()),
        },
        None => {
            let attribute = texture_attribute("TextureContent");
            let text = attribute_text(instance, &attribute)?;
            CarriedTexture {
                attribute,
                text,
                see_through: false,
                surface: None,
            }
        }
    })
}

/// The attribute holding the image of Content property `property`.
fn texture_attribute(property: &str) -> String {
    procmodel_mesh::texture::attribute_name(property).expect("a Content property")
}

/// The text of string attribute `name` of `instance`.
fn attribute_text<'a>(instance: &'a Instance, name: &str) -> Option<&'a str> {
    let Some(Variant::Attributes(attributes)) =
        instance.properties.get(&rbx_dom_weak::ustr("Attributes"))
    else {
        return None;
    };
    match attributes.get(name)? {
        Variant::String(s) => Some(s),
        Variant::BinaryString(b) => std::str::from_utf8(b.as_ref()).ok(),
        _ => None,
    }
}

/// A rigid transform (rotation, then translation in output units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rigid {
    pub rotation: DQuat,
    pub translation: DVec3,
}

impl Rigid {
    const IDENTITY: Rigid = Rigid {
        rotation: DQuat::IDENTITY,
        translation: DVec3::ZERO,
    };

    /// `self⁻¹ · other`: `other` expressed in `self`'s space.
    fn relative(&self, other: &Rigid) -> Rigid {
        let inverse = self.rotation.inverse();
        Rigid {
            rotation: (inverse * other.rotation).normalize(),
            translation: inverse * (other.translation - self.translation),
        }
    }

    pub fn transform_point(&self, p: Vec3) -> DVec3 {
        self.rotation * p.as_dvec3() + self.translation
    }

    pub fn transform_vector(&self, v: Vec3) -> DVec3 {
        self.rotation * v.as_dvec3()
    }
}

/// One exported instance.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub name: String,
    /// `GetFullName`-style path.
    pub path: String,
    pub children: Vec<usize>,
    /// Transform relative to the parent node (identity for non-parts).
    pub local: Rigid,
    /// World transform of a part (identity for non-parts).
    pub world: Rigid,
    /// A BasePart: its node carries its CFrame, and descendant parts are placed
    /// relative to it.
    pub is_part: bool,
    pub part: Option<PartGeometry>,
    /// The node of the instance's parent (None for a root).
    pub parent: Option<usize>,
    /// The light the instance shines ([`Scene::lights`] index) and where, relative to this
    /// node: glTF gives it a node of its own under this one.
    pub light: Option<(usize, Rigid)>,
}

/// The drawable of a part node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PartGeometry {
    pub geometry: usize,
    pub appearance: usize,
}

/// A mesh shared by every part with the same shape, effective size and mesh offset.
#[derive(Debug, Clone)]
pub(crate) struct Geometry {
    /// What the mesh is named after: the shape's name, or `EditableMesh`.
    pub name: &'static str,
    /// Effective size in output units.
    pub size: Vec3,
    pub mesh: MeshData,
}

/// A mesh child (`BlockMesh`, `CylinderMesh`, `SpecialMesh` of a primitive MeshType) that
/// changes how its part is drawn: the shape, a size relative to the part's (`Scale`) and
/// a displacement in the part's space (`Offset`). Roblox draws one mesh per part: the
/// first DataModelMesh child; anything else is left out with a warning.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeshChild {
    /// The mesh instance.
    pub referent: Ref,
    pub shape: Shape,
    /// The drawn size is the part's `Size` times this (non-negative).
    pub scale: Vec3,
    /// Where the mesh is drawn, in the part's space, in studs.
    pub offset: Vec3,
}

/// The mesh child `part` is drawn with, if its first DataModelMesh child is one this
/// exporter can draw (a FileMesh's geometry is an asset, not here). `part_path` names the
/// part in errors (a Scale or Offset that is not a finite Vector3).
pub fn mesh_child(
    dom: &WeakDom,
    part: &Instance,
    part_path: &str,
) -> Result<Option<MeshChild>, ExportError> {
    let db = rbx_reflection_database::get_bundled();
    // Parts drawn as a primitive shape take mesh children; MeshParts and unions do not.
    let takes_meshes = matches!(
        part.class.as_str(),
        "WedgePart" | "CornerWedgePart" | "TrussPart" | "VehicleSeat"
    ) || db
        .classes
        .get(part.class.as_str())
        .is_some_and(|d| db.superclasses_iter(d).any(|c| c.name == "Part"));
    if !takes_meshes {
        return Ok(None);
    }
    let first = part.children().iter().find_map(|&c| {
        let child = dom.get_by_ref(c)?;
        let descriptor = db.classes.get(child.class.as_str())?;
        db.superclasses_iter(descriptor)
            .any(|c| c.name == "DataModelMesh")
            .then_some(child)
    });
    let Some(mesh) = first else {
        return Ok(None);
    };
    let path = format!("{part_path}.{}", mesh.name);
    let props = Props {
        instance: mesh,
        path: &path,
    };
    let shape = match mesh.class.as_str() {
        "BlockMesh" => Shape::Block,
        "CylinderMesh" => Shape::UprightCylinder,
        "SpecialMesh" => {
            let mesh_type = match props.get(&["MeshType"]) {
                None => return Ok(None),
                Some(v) => props.enum_value("MeshType", v)?,
            };
            // Enum.MeshType: Head 0, Torso 1, Wedge 2, Sphere 3, Cylinder 4,
            // FileMesh 5, Brick 6, (deprecated 7–10), CornerWedge 11.
            match mesh_type {
                0 => Shape::Head,
                2 => Shape::Wedge,
                3 => Shape::Ellipsoid,
                4 => Shape::Cylinder,
                6 => Shape::Block,
                11 => Shape::CornerWedge,
                _ => return Ok(None),
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(MeshChild {
        referent: mesh.referent(),
        shape,
        scale: props.vector("Scale", Vec3::ONE)?.abs(),
        offset: props.vector("Offset", Vec3::ZERO)?,
    }))
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Scene {
    pub nodes: Vec<Node>,
    pub roots: Vec<usize>,
    pub geometries: Vec<Geometry>,
    pub appearances: Vec<Appearance>,
    /// PNG files of the textures appearances refer to, in first-use order.
    pub textures: Vec<Vec<u8>>,
    /// The lights instances shine, in DOM order.
    pub lights: Vec<crate::light::Light>,
    pub warnings: Vec<ExportWarning>,
}

/// How an instance is drawn.
enum Drawn {
    /// Not a part: a node without mesh.
    NotAPart,
    Shape(Shape),
    /// A part without usable geometry data: its bounding box, with a warning.
    BoundingBox,
    /// A part carrying a procmodel mesh (its attribute's text): a MeshPart built from an
    /// EditableMesh, or a solid-modelling result (`PartOperation`), whose face colours show
    /// unless its `UsePartColor` is set.
    Mesh {
        text: String,
        solid: bool,
    },
    /// A part class we cannot draw at all: no mesh, with a warning.
    Skipped,
}

struct Builder<'a> {
    dom: &'a WeakDom,
    opts: &'a ExportOptions,
    scene: Scene,
    geometry_ids: HashMap<(Shape, [u32; 3], [u32; 3]), usize>,
    /// Script-built meshes by (attribute text, size in output units).
    /// By (attribute text, size bits, face colours shown, a solid-modelling result).
    mesh_ids: HashMap<(String, [u32; 3], bool, bool), usize>,
    appearance_ids: HashMap<([u32; 3], u32, u32, bool, Option<(u32, bool)>), usize>,
    /// Textures by (attribute text, the colour under it when composited).
    texture_ids: HashMap<(String, Option<[u32; 3]>), u32>,
    /// Mesh children drawn as their part's shape (no warning when visited).
    applied_meshes: HashSet<Ref>,
}

pub(crate) fn build(
    dom: &WeakDom,
    roots: &[Ref],
    opts: &ExportOptions,
) -> Result<Scene, ExportError> {
    opts.validate()?;
    let mut builder = Builder {
        dom,
        opts,
        scene: Scene::default(),
        geometry_ids: HashMap::new(),
        mesh_ids: HashMap::new(),
        appearance_ids: HashMap::new(),
        texture_ids: HashMap::new(),
        applied_meshes: HashSet::new(),
    };
    for &root in roots {
        if dom.get_by_ref(root).is_none() {
            return Err(ErrorKind::MissingRoot {
                referent: root.to_string(),
            }
            .into());
        }
        let index = builder.subtree(root)?;
        builder.scene.roots.push(index);
    }
    Ok(builder.scene)
}

impl Builder<'_> {
    /// Adds `root` and its descendants in pre-order; returns the root's node index.
    fn subtree(&mut self, root: Ref) -> Result<usize, ExportError> {
        // (instance, parent node, world transform of the nearest part ancestor)
        let mut stack: Vec<(Ref, Option<usize>, Option<Rigid>)> = vec![(root, None, None)];
        let mut root_index = None;
        while let Some((referent, parent, part_ancestor)) = stack.pop() {
            let Some(instance) = self.dom.get_by_ref(referent) else {
                continue;
            };
            let index = self.scene.nodes.len();
            // GetFullName-style path, built from the parent's to stay linear in depth.
            // Like GetFullName, the DOM root (the DataModel) is left out of
            // its descendants' paths; its own path is its name.
            let dom_root = self.dom.root_ref();
            let path = if referent == dom_root || instance.parent() == dom_root {
                instance.name.clone()
            } else {
                match parent {
                    Some(parent) => format!("{}.{}", self.scene.nodes[parent].path, instance.name),
                    None => self.dom.full_path_of(referent, "."),
                }
            };
            let mut node = self.node(instance, path, part_ancestor)?;
            node.parent = parent;
            if !node.is_part {
                node.light = self.light(instance, &node.path, parent)?;
            }
            let child_ancestor = if node.is_part {
                Some(node.world)
            } else {
                part_ancestor
            };
            self.scene.nodes.push(node);
            match parent {
                Some(parent) => self.scene.nodes[parent].children.push(index),
                None => root_index = Some(index),
            }
            for &child in instance.children().iter().rev() {
                stack.push((child, Some(index), child_ancestor));
            }
        }
        Ok(root_index.expect("the root was checked to exist"))
    }

    fn node(
        &mut self,
        instance: &Instance,
        path: String,
        part_ancestor: Option<Rigid>,
    ) -> Result<Node, ExportError> {
        let mut node = Node {
            name: instance.name.clone(),
            path,
            children: Vec::new(),
            local: Rigid::IDENTITY,
            world: Rigid::IDENTITY,
            is_part: false,
            part: None,
            parent: None,
            light: None,
        };
        let drawn = self.classify(instance, &node.path)?;
        if matches!(drawn, Drawn::NotAPart) {
            return Ok(node);
        }
        let props = Props {
            instance,
            path: &node.path,
        };
        node.is_part = true;
        let world = props.cframe()?;
        node.world = Rigid {
            rotation: world.rotation,
            translation: world.translation * f64::from(self.opts.scale),
        };
        node.local = match part_ancestor {
            Some(ancestor) => ancestor.relative(&node.world),
            None => node.world,
        };
        if let Drawn::Mesh { text, solid } = &drawn {
            match procmodel_mesh::TriangleMesh::from_attribute(text) {
                Ok(mesh) if !mesh.triangles.is_empty() => {
                    let size = props.size()?.max(Vec3::splat(MIN_PART_SIZE)) * self.opts.scale;
                    let mut appearance = self.appearance(&props)?;
                    // A solid-modelling result shows its faces' colours (those of the parts
                    // it was made from) unless UsePartColor paints it all in its Color.
                    let face_colors = !*solid
                        || !matches!(props.get(&["UsePartColor"]), Some(Variant::Bool(true)));
                    if *solid && face_colors {
                        appearance.color = [1.0; 3];
                    }
                    if !*solid {
                        self.paint(instance, &node.path, &mut appearance);
                    }
                    node.part = Some(PartGeometry {
                        geometry: self.script_mesh(text, &mesh, size, face_colors, *solid),
                        appearance: self.appearance_index(appearance),
                    });
                    return Ok(node);
                }
                Ok(_) => self.warn(
                    &node.path,
                    WarningKind::InvalidMesh {
                        reason: "the mesh has no triangles".into(),
                    },
                ),
                Err(e) => self.warn(
                    &node.path,
                    WarningKind::InvalidMesh {
                        reason: e.to_string(),
                    },
                ),
            }
        }
        let mut applied_mesh = None;
        let shape = match drawn {
            Drawn::NotAPart => unreachable!("handled above"),
            Drawn::Shape(shape) => match mesh_child(self.dom, instance, &node.path)? {
                Some(m) => {
                    let shape = m.shape;
                    self.applied_meshes.insert(m.referent);
                    applied_mesh = Some(m);
                    shape
                }
                None => shape,
            },
            Drawn::Mesh { .. } => Shape::Block,
            Drawn::BoundingBox => {
                self.warn(
                    &node.path,
                    WarningKind::BoundingBoxOnly {
                        class: instance.class.to_string(),
                    },
                );
                Shape::Block
            }
            Drawn::Skipped => {
                self.warn(
                    &node.path,
                    WarningKind::GeometrySkipped {
                        class: instance.class.to_string(),
                    },
                );
                return Ok(node);
            }
        };
        let (scale, offset) = match &applied_mesh {
            Some(m) => (m.scale, m.offset),
            None => (Vec3::ONE, Vec3::ZERO),
        };
        let size = (props.size()? * scale).max(Vec3::splat(MIN_PART_SIZE)) * self.opts.scale;
        let appearance = self.appearance(&props)?;
        node.part = Some(PartGeometry {
            geometry: self.geometry(shape, size, offset * self.opts.scale),
            appearance: self.appearance_index(appearance),
        });
        Ok(node)
    }

    fn classify(&mut self, instance: &Instance, path: &str) -> Result<Drawn, ExportError> {
        let db = rbx_reflection_database::get_bundled();
        let Some(descriptor) = db.classes.get(instance.class.as_str()) else {
            return Ok(Drawn::NotAPart);
        };
        let is_a = |class: &str| db.superclasses_iter(descriptor).any(|c| c.name == class);
        if !is_a("BasePart") {
            // Its part (visited first: pre-order) is drawn with it.
            if self.applied_meshes.contains(&instance.referent()) {
                return Ok(Drawn::NotAPart);
            }
            if is_a("DataModelMesh") || is_a("FaceInstance") || is_a("SurfaceAppearance") {
                self.warn(
                    path,
                    WarningKind::AppearanceIgnored {
                        class: instance.class.to_string(),
                    },
                );
            } else if (is_a("SurfaceGuiBase") || is_a("BillboardGui"))
                && !instance.children().is_empty()
                && !matches!(
                    instance.properties.get(&"Enabled".into()),
                    Some(Variant::Bool(false))
                )
            {
                // An empty or disabled one shows nothing: no warning.
                self.warn(
                    path,
                    WarningKind::GuiNotDrawn {
                        class: instance.class.to_string(),
                    },
                );
            }
            return Ok(Drawn::NotAPart);
        }
        Ok(match instance.class.as_str() {
            "WedgePart" => Drawn::Shape(Shape::Wedge),
            "CornerWedgePart" => Drawn::Shape(Shape::CornerWedge),
            "TrussPart" | "VehicleSeat" => Drawn::Shape(Shape::Block),
            class if draws_no_shape(class) => Drawn::Skipped,
            _ if is_a("MeshPart") => match script_mesh_text(instance) {
                Some(text) => Drawn::Mesh {
                    text: text.to_owned(),
                    solid: false,
                },
                None => Drawn::BoundingBox,
            },
            // Solid-modelling results made here carry their triangles; a union made in
            // Studio keeps them in data only Roblox reads: its box.
            _ if is_a("PartOperation") => match script_mesh_text(instance) {
                Some(text) => Drawn::Mesh {
                    text: text.to_owned(),
                    solid: true,
                },
                None => Drawn::BoundingBox,
            },
            _ if is_a("Part") => {
                let props = Props { instance, path };
                Drawn::Shape(self.part_type(&props)?)
            }
            _ => Drawn::BoundingBox,
        })
    }

    fn part_type(&mut self, props: &Props<'_>) -> Result<Shape, ExportError> {
        let value = match props.get(&["Shape"]) {
            None => 1,
            Some(v) => props.enum_value("Shape", v)?,
        };
        Ok(match value {
            0 => Shape::Ball,
            1 => Shape::Block,
            2 => Shape::Cylinder,
            3 => Shape::Wedge,
            4 => Shape::CornerWedge,
            value => {
                self.warn(props.path, WarningKind::UnknownShape { value });
                Shape::Block
            }
        })
    }

    fn appearance(&mut self, props: &Props<'_>) -> Result<Appearance, ExportError> {
        let mut material = match props.get(&["Material"]) {
            None => PLASTIC,
            Some(v) => props.enum_value("Material", v)?,
        };
        if material_name(material).is_none() {
            self.warn(props.path, WarningKind::UnknownMaterial { value: material });
            material = PLASTIC;
        }
        Ok(Appearance {
            color: props.color()?,
            transparency: props.transparency()?,
            material,
            double_sided: matches!(props.get(&["DoubleSided"]), Some(Variant::Bool(true))),
            texture: None,
        })
    }

    /// The geometry of `shape` at `size`, displaced by `offset` in the part's space
    /// (a mesh child's Offset), both in output units.
    fn geometry(&mut self, shape: Shape, size: Vec3, offset: Vec3) -> usize {
        let size = shape.effective_size(size);
        let key = (
            shape,
            size.to_array().map(f32::to_bits),
            offset.to_array().map(f32::to_bits),
        );
        let geometries = &mut self.scene.geometries;
        let segments = self.opts.segments;
        *self.geometry_ids.entry(key).or_insert_with(|| {
            let mut mesh = shapes::build(shape, size, segments);
            if offset != Vec3::ZERO {
                for p in &mut mesh.positions {
                    *p += offset;
                }
            }
            geometries.push(Geometry {
                name: shape.name(),
                size,
                mesh,
            });
            geometries.len() - 1
        })
    }

    /// A procmodel mesh drawn at `size` (output units): each axis stretched from the mesh's
    /// extent to the part's (Roblox fits a mesh to its part's Size), a MeshPart's mesh
    /// centred on the part, a solid-modelling result's about the part's origin; normals
    /// follow the stretch. The vertices are `TriangleMesh::indexed`'s; their
    /// colours are white unless `face_colors`. Named for a solid-modelling result
    /// (`solid`) or an EditableMesh. Shared by parts with the same mesh, size and flags.
    fn script_mesh(
        &mut self,
        text: &str,
        mesh: &procmodel_mesh::TriangleMesh,
        size: Vec3,
        face_colors: bool,
        solid: bool,
    ) -> usize {
        let key = (
            text.to_owned(),
            size.to_array().map(f32::to_bits),
            face_colors,
            solid,
        );
        if let Some(&id) = self.mesh_ids.get(&key) {
            return id;
        }
        // A MeshPart's mesh is centred on the part; a solid-modelling result's triangles are
        // in the part's own space (GeometryService leaves them off the part's centre).
        let (offset, stretch) = mesh
            .fit(size.to_array(), !solid)
            .expect("a mesh with triangles has positions");
        let (offset, stretch) = (Vec3::from(offset), Vec3::from(stretch));
        let (vertices, indices) = mesh.indexed();
        let mut out = MeshData {
            indices,
            ..MeshData::default()
        };
        for v in &vertices {
            out.positions
                .push((Vec3::from(v.position) - offset) * stretch);
            out.normals
                .push((Vec3::from(v.normal) / stretch).normalize_or(Vec3::Y));
            let [r, g, b, a] = if face_colors { v.color } else { [1.0; 4] };
            out.colors.push([
                crate::material::srgb_to_linear(r.clamp(0.0, 1.0)),
                crate::material::srgb_to_linear(g.clamp(0.0, 1.0)),
                crate::material::srgb_to_linear(b.clamp(0.0, 1.0)),
                a.clamp(0.0, 1.0),
            ]);
            out.uvs.push(v.uv);
        }
        self.scene.geometries.push(Geometry {
            name: if solid {
                "PartOperation"
            } else {
                "EditableMesh"
            },
            size,
            mesh: out,
        });
        let id = self.scene.geometries.len() - 1;
        self.mesh_ids.insert(key, id);
        id
    }

    /// Paints a MeshPart's `appearance` with the image it shows, if it carries one: a
    /// SurfaceAppearance child's ColorMap before the part's own TextureContent, as Roblox
    /// draws them. The texture is composited over the part's Color (Roblox's Overlay alpha
    /// mode, and a MeshPart texture's transparent pixels) unless the SurfaceAppearance's
    /// AlphaMode is Transparency; then the colour factor is white.
    fn paint(&mut self, instance: &Instance, path: &str, appearance: &mut Appearance) {
        let Some(CarriedTexture {
            attribute,
            text,
            see_through,
            surface,
        }) = carried_texture(self.dom, instance)
        else {
            return;
        };
        if let Some(surface) = surface {
            self.applied_meshes.insert(surface);
        }
        let under = (!see_through).then(|| appearance.color.map(|c| (c + 0.0).to_bits()));
        let key = (text.to_owned(), under);
        let index = match self.texture_ids.get(&key) {
            Some(&i) => i,
            None => match procmodel_mesh::texture::Texture::from_attribute(text) {
                Ok(t) => {
                    let t = if see_through {
                        t
                    } else {
                        t.over_color(appearance.color)
                    };
                    self.scene.textures.push(t.to_png());
                    let i = self.scene.textures.len() as u32 - 1;
                    self.texture_ids.insert(key, i);
                    i
                }
                Err(e) => {
                    self.warn(
                        path,
                        WarningKind::InvalidTexture {
                            attribute,
                            reason: e.to_string(),
                        },
                    );
                    return;
                }
            },
        };
        appearance.texture = Some((index, see_through));
        appearance.color = [1.0; 3];
    }

    fn appearance_index(&mut self, appearance: Appearance) -> usize {
        let appearances = &mut self.scene.appearances;
        *self
            .appearance_ids
            .entry(appearance.key())
            .or_insert_with(|| {
                appearances.push(appearance);
                appearances.len() - 1
            })
    }

    /// The light `instance` shines, if it is one that does (see [`crate::light`]), added to
    /// the scene: its index and its transform relative to the instance's node. `parent`:
    /// the node of the instance's parent.
    fn light(
        &mut self,
        instance: &Instance,
        path: &str,
        parent: Option<usize>,
    ) -> Result<Option<(usize, Rigid)>, ExportError> {
        use crate::light::{self, Class, Holder, Settings};
        let (Some(class), Some(parent)) = (Class::of(&instance.class), parent) else {
            return Ok(None);
        };
        let Some(holder) = self.dom.get_by_ref(instance.parent()) else {
            return Ok(None);
        };
        let holder_node = &self.scene.nodes[parent];
        let holder_props = Props {
            instance: holder,
            path: &holder_node.path,
        };
        let holder = if holder_node.is_part {
            Holder::Part {
                size: holder_props.size()?,
            }
        } else if holder.class == "Attachment"
            && holder_node
                .parent
                .is_some_and(|p| self.scene.nodes[p].is_part)
        {
            // The attachment's node keeps no transform (not a part): its CFrame goes here.
            let cframe = holder_props.cframe()?;
            Holder::Attachment {
                rotation: cframe.rotation,
                translation: cframe.translation,
            }
        } else {
            return Ok(None);
        };
        let props = Props { instance, path };
        let spot = class != Class::Point;
        let settings = Settings {
            class,
            enabled: !matches!(props.get(&["Enabled"]), Some(Variant::Bool(false))),
            brightness: props.float("Brightness", 1.0)?,
            color: props.color()?,
            range: props.float("Range", 16.0)?,
            angle: if spot {
                props.float("Angle", 90.0)?
            } else {
                0.0
            },
            face: match props.get(&["Face"]) {
                Some(v) if spot => props.enum_value("Face", v)?,
                _ => 5,
            },
        };
        let Some(placed) = light::place(&instance.name, &settings, holder, self.opts.scale) else {
            return Ok(None);
        };
        if placed.approximated {
            self.warn(
                path,
                WarningKind::LightApproximated {
                    class: instance.class.to_string(),
                },
            );
        }
        self.scene.lights.push(placed.light);
        Ok(Some((
            self.scene.lights.len() - 1,
            Rigid {
                rotation: placed.rotation,
                translation: placed.translation,
            },
        )))
    }

    fn warn(&mut self, path: &str, kind: WarningKind) {
        self.scene.warnings.push(ExportWarning {
            path: path.to_owned(),
            kind,
        });
    }
}

/// Typed access to a part's properties, falling back to the reflection
/// database's defaults for the class.
struct Props<'a> {
    instance: &'a Instance,
    path: &'a str,
}

impl<'a> Props<'a> {
    /// The first of `keys` the instance has, else the class default of the first key.
    fn get(&self, keys: &[&str]) -> Option<&'a Variant> {
        keys.iter()
            .find_map(|&key| self.instance.properties.get(&rbx_dom_weak::ustr(key)))
            .or_else(|| {
                let db = rbx_reflection_database::get_bundled();
                let descriptor = db.classes.get(self.instance.class.as_str())?;
                db.find_default_property(descriptor, keys[0])
            })
    }

    fn type_error(
        &self,
        property: &'static str,
        expected: &'static str,
        given: &Variant,
    ) -> ExportError {
        ErrorKind::PropertyType {
            path: self.path.to_owned(),
            property,
            expected,
            given: format!("{:?}", given.ty()),
        }
        .into()
    }

    fn not_finite(&self, property: &'static str) -> ExportError {
        ErrorKind::NotFinite {
            path: self.path.to_owned(),
            property,
        }
        .into()
    }

    fn enum_value(&self, property: &'static str, value: &Variant) -> Result<u32, ExportError> {
        match value {
            Variant::Enum(e) => Ok(e.to_u32()),
            Variant::EnumItem(item) => Ok(item.value),
            other => Err(self.type_error(property, "Enum", other)),
        }
    }

    fn size(&self) -> Result<Vec3, ExportError> {
        match self.get(&["Size", "size"]) {
            None => Ok(Vec3::new(4.0, 1.0, 2.0)),
            Some(Variant::Vector3(v)) => {
                let size = Vec3::new(v.x, v.y, v.z);
                if !size.is_finite() {
                    return Err(self.not_finite("Size"));
                }
                Ok(size.max(Vec3::splat(MIN_PART_SIZE)))
            }
            Some(other) => Err(self.type_error("Size", "Vector3", other)),
        }
    }

    /// A Vector3 property (`default` when the class has none), finite.
    fn vector(&self, property: &'static str, default: Vec3) -> Result<Vec3, ExportError> {
        match self.get(&[property]) {
            None => Ok(default),
            Some(Variant::Vector3(v)) => {
                let v = Vec3::new(v.x, v.y, v.z);
                if v.is_finite() {
                    Ok(v)
                } else {
                    Err(self.not_finite(property))
                }
            }
            Some(other) => Err(self.type_error(property, "Vector3", other)),
        }
    }

    fn cframe(&self) -> Result<Rigid, ExportError> {
        let cframe = match self.get(&["CFrame"]) {
            None => return Ok(Rigid::IDENTITY),
            Some(Variant::CFrame(cframe)) => cframe,
            Some(other) => return Err(self.type_error("CFrame", "CFrame", other)),
        };
        let row = |v: rbx_dom_weak::types::Vector3| DVec3::new(v.x.into(), v.y.into(), v.z.into());
        let o = &cframe.orientation;
        let matrix = DMat3::from_cols(row(o.x), row(o.y), row(o.z)).transpose();
        let translation = row(cframe.position);
        if !matrix.is_finite() || !translation.is_finite() {
            return Err(self.not_finite("CFrame"));
        }
        // Roblox keeps CFrames orthonormal; anything far from a rotation is corrupt.
        let orthonormal = (matrix.transpose() * matrix).abs_diff_eq(DMat3::IDENTITY, 1e-3)
            && matrix.determinant() > 0.0;
        if !orthonormal {
            return Err(ErrorKind::NotARotation {
                path: self.path.to_owned(),
            }
            .into());
        }
        Ok(Rigid {
            rotation: DQuat::from_mat3(&matrix).normalize(),
            translation,
        })
    }

    fn color(&self) -> Result<[f32; 3], ExportError> {
        let from_u8 =
            |c: rbx_dom_weak::types::Color3uint8| [c.r, c.g, c.b].map(|v| f32::from(v) / 255.0);
        let explicit = ["Color", "Color3uint8", "BrickColor"]
            .iter()
            .find_map(|&key| self.instance.properties.get(&rbx_dom_weak::ustr(key)));
        let value = explicit.or_else(|| self.get(&["Color"]));
        match value {
            None => Ok([163.0 / 255.0, 162.0 / 255.0, 165.0 / 255.0]),
            Some(Variant::Color3(c)) => {
                let color = [c.r, c.g, c.b];
                if color.iter().all(|v| v.is_finite()) {
                    Ok(color)
                } else {
                    Err(self.not_finite("Color"))
                }
            }
            Some(Variant::Color3uint8(c)) => Ok(from_u8(*c)),
            Some(Variant::BrickColor(brick)) => Ok(from_u8(brick.to_color3uint8())),
            Some(other) => Err(self.type_error("Color", "Color3", other)),
        }
    }

    /// A float property (`default` when the class has none), finite.
    fn float(&self, property: &'static str, default: f32) -> Result<f32, ExportError> {
        let value = match self.get(&[property]) {
            None => default,
            Some(Variant::Float32(v)) => *v,
            Some(Variant::Float64(v)) => *v as f32,
            Some(other) => return Err(self.type_error(property, "float", other)),
        };
        if !value.is_finite() {
            return Err(self.not_finite(property));
        }
        Ok(value)
    }

    fn transparency(&self) -> Result<f32, ExportError> {
        let value = match self.get(&["Transparency"]) {
            None => 0.0,
            Some(Variant::Float32(v)) => *v,
            Some(Variant::Float64(v)) => *v as f32,
            Some(other) => return Err(self.type_error("Transparency", "float", other)),
        };
        if value.is_nan() {
            return Err(self.not_finite("Transparency"));
        }
        Ok(value.clamp(0.0, 1.0))
    }
}
