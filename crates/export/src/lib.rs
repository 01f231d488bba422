//! Turns a subtree of a Roblox DOM (`rbx_dom_weak::WeakDom`) into glTF 2.0
//! (`.glb`, or `.gltf` + `.bin`) and OBJ + MTL bytes.
//!
//! **Architecture invariant:** this crate never runs Luau and never touches
//! the file system — it returns bytes and strings; the CLI writes files
//! (atomically). Output is deterministic: the same tree and options give the
//! same bytes (children in DOM order, shared meshes and materials numbered in
//! first-use order, no hash-map iteration, no timestamps).
//!
//! # What is exported
//!
//! - Every instance becomes one glTF node with its `Name`, keeping the DOM
//!   hierarchy. Non-part instances (Model, Folder, scripts, ...) are nodes with
//!   an identity transform and no mesh.
//! - A part's node transform is its `CFrame` relative to the nearest ancestor
//!   *part* (its world `CFrame` when it has none). Roblox and glTF are both
//!   right-handed and Y-up, so no axis conversion is applied; Roblox's front
//!   (LookVector, −Z) stays −Z. Translations and mesh vertices are multiplied
//!   by [`ExportOptions::scale`].
//! - Geometry comes from [`Shape`] (see its docs for the exact Roblox
//!   geometry): `Part` and its subclasses (`Seat`, `SpawnLocation`, ...) by
//!   their `Shape` property, `WedgePart`, `CornerWedgePart`, and `TrussPart` /
//!   `VehicleSeat` as blocks. `MeshPart`, unions and other BaseParts have no
//!   mesh data here and are exported as their bounding box with a warning;
//!   `Terrain` and `NegateOperation` get no mesh (warning).
//! - A part's first mesh child draws it instead of its own shape ([`mesh_child`]):
//!   `BlockMesh`, `CylinderMesh` (upright), and `SpecialMesh` of MeshType Brick,
//!   Wedge, Sphere (an ellipsoid filling the size), Cylinder, CornerWedge and Head (an
//!   upright cylinder with rounded edges of diameter min(X, Z), an approximation of
//!   Roblox's head mesh), at
//!   `Size × Scale`, displaced by `Offset` in the part's space. FileMesh and Torso
//!   meshes, Decal, Texture and SurfaceAppearance are ignored (warning).
//! - Missing properties take the class defaults of the bundled reflection
//!   database (never a local override, so output is machine-independent).
//! - Meshes are baked at the part's size (not unit meshes + node scale, which
//!   would leak the scale into child nodes) and shared between parts with the
//!   same shape and effective size; the glTF accessors of a geometry are
//!   shared by every material it is drawn with.
//! - Materials are shared between parts with the same `Color`, `Transparency`
//!   and `Material`; `Enum.Material` is approximated with metallic/roughness
//!   (metals metallic, glass/ice smooth, Neon emissive), transparency uses
//!   glTF's `BLEND` alpha mode. glTF colours are linear (converted from
//!   Roblox's sRGB `Color3`); MTL `Kd` keeps the sRGB values.
//!
//! - Lights: a `PointLight`, `SpotLight` or `SurfaceLight` that shines in Roblox (the
//!   direct child of a part or of an attachment in a part, enabled, with a range and a
//!   brightness) becomes a `KHR_lights_punctual` light on a node of its own under its
//!   instance's node, placed where it shines from ([`light`](crate::light) has the rules
//!   and how Brightness and Range map to candela); a SurfaceLight on a part is a spot light
//!   at its face's centre, with a warning. OBJ has no lights.
//!
//! OBJ output has one `o` per part with world-space vertices and normals and
//! a `usemtl` per shared material; the MTL holds `Kd`, `d`, `Ns` and the PBR
//! extension keys `Pr`/`Pm` (plus `Ke` for Neon), and `map_Kd` for a textured
//! MeshPart (texture coordinates in the OBJ, the PNGs in [`ObjFiles::textures`]).

mod error;
mod gltf;
mod light;
mod material;
mod obj;
mod scene;
pub mod terrain;

use rbx_dom_weak::WeakDom;
use rbx_dom_weak::types::Ref;

pub use error::{ExportError, ExportWarning, WarningKind};
pub use procmodel_mesh::shapes::Shape;
pub use scene::{
    CarriedTexture, MeshChild, carried_texture, draws_no_shape, mesh_child, script_mesh_text,
};

use error::ErrorKind;

/// Options shared by every format.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportOptions {
    /// Output units per stud (default 1.0). Must be finite and positive.
    pub scale: f32,
    /// Subdivisions around balls and cylinders, 3..=256 (default 24); balls
    /// get half as many rings.
    pub segments: u32,
    /// File name the `.gltf` JSON uses to reference its binary buffer
    /// (default `model.bin`); the caller writes [`GltfFiles::bin`] under it.
    pub bin_name: String,
    /// File name after `mtllib` in the OBJ (default `model.mtl`); the caller
    /// writes [`ObjFiles::mtl`] under it.
    pub mtl_name: String,
}

impl Default for ExportOptions {
    fn default() -> Self {
        Self {
            scale: 1.0,
            segments: 24,
            bin_name: "model.bin".to_owned(),
            mtl_name: "model.mtl".to_owned(),
        }
    }
}

impl ExportOptions {
    fn validate(&self) -> Result<(), ExportError> {
        let invalid = |option, reason: &str| {
            Err(ErrorKind::InvalidOption {
                option,
                reason: reason.to_owned(),
            }
            .into())
        };
        if !(self.scale.is_finite() && self.scale > 0.0) {
            return invalid("scale", &format!("{} is not a positive number", self.scale));
        }
        if !(3..=256).contains(&self.segments) {
            return invalid("segments", &format!("{} is not in 3..=256", self.segments));
        }
        for (option, name) in [("bin_name", &self.bin_name), ("mtl_name", &self.mtl_name)] {
            if name.is_empty() || name.contains(['\n', '\r']) {
                return invalid(option, "must be a non-empty single-line file name");
            }
        }
        Ok(())
    }
}

/// An export's output together with what it could not represent faithfully.
#[derive(Debug, Clone, PartialEq)]
pub struct Export<T> {
    /// The exported bytes or text.
    pub output: T,
    /// Approximations and omissions, in DOM order.
    pub warnings: Vec<ExportWarning>,
}

/// A `.gltf` JSON document and the binary buffer it references by
/// [`ExportOptions::bin_name`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GltfFiles {
    /// The `.gltf` document (pretty-printed JSON).
    pub json: String,
    /// The `.bin` buffer. Empty when the tree has no geometry; the JSON then
    /// references no buffer and nothing needs to be written.
    pub bin: Vec<u8>,
}

/// An OBJ file and the MTL library it references by [`ExportOptions::mtl_name`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjFiles {
    /// The `.obj` text.
    pub obj: String,
    /// The `.mtl` text.
    pub mtl: String,
    /// The textures the MTL names (`map_Kd`), to write beside it: (file name, PNG bytes).
    pub textures: Vec<(String, Vec<u8>)>,
}

/// Exports `roots` (and their descendants) as a binary glTF (`.glb`).
pub fn to_glb(
    dom: &WeakDom,
    roots: &[Ref],
    opts: &ExportOptions,
) -> Result<Export<Vec<u8>>, ExportError> {
    let scene = scene::build(dom, roots, opts)?;
    let output = gltf::glb(&scene)?;
    Ok(Export {
        output,
        warnings: scene.warnings,
    })
}

/// Exports `roots` (and their descendants) as a `.gltf` JSON document plus the
/// `.bin` buffer it references.
pub fn to_gltf(
    dom: &WeakDom,
    roots: &[Ref],
    opts: &ExportOptions,
) -> Result<Export<GltfFiles>, ExportError> {
    let scene = scene::build(dom, roots, opts)?;
    let (json, bin) = gltf::separate(&scene, &opts.bin_name)?;
    Ok(Export {
        output: GltfFiles { json, bin },
        warnings: scene.warnings,
    })
}

/// Exports `roots` (and their descendants) as OBJ text plus the MTL library it
/// references.
pub fn to_obj(
    dom: &WeakDom,
    roots: &[Ref],
    opts: &ExportOptions,
) -> Result<Export<ObjFiles>, ExportError> {
    let scene = scene::build(dom, roots, opts)?;
    let (obj, mtl) = obj::write(&scene, &opts.mtl_name);
    let textures = scene
        .textures
        .iter()
        .enumerate()
        .map(|(i, png)| (obj::texture_name(&opts.mtl_name, i), png.clone()))
        .collect();
    Ok(Export {
        output: ObjFiles { obj, mtl, textures },
        warnings: scene.warnings,
    })
}
