//! Sample DOM trees shared by the export integration tests.
#![allow(dead_code)] // each test binary uses a different subset

use rbx_dom_weak::types::{BrickColor, CFrame, Color3, Color3uint8, Enum, Matrix3, Ref, Vector3};
use rbx_dom_weak::{InstanceBuilder, WeakDom};

pub fn v3(x: f32, y: f32, z: f32) -> Vector3 {
    Vector3::new(x, y, z)
}

pub fn at(x: f32, y: f32, z: f32) -> CFrame {
    CFrame::new(v3(x, y, z), Matrix3::identity())
}

/// A CFrame at `(x, y, z)` turned by `degrees` about the world Y axis
/// (`CFrame.Angles(0, rad, 0)`; rows of the matrix as Roblox stores them).
pub fn turned_y(x: f32, y: f32, z: f32, degrees: f32) -> CFrame {
    let (s, c) = degrees.to_radians().sin_cos();
    let orientation = Matrix3::new(v3(c, 0.0, s), v3(0.0, 1.0, 0.0), v3(-s, 0.0, c));
    CFrame::new(v3(x, y, z), orientation)
}

/// Turned 90° about Z: local X (a cylinder's axis) points up.
pub fn upright(x: f32, y: f32, z: f32) -> CFrame {
    let orientation = Matrix3::new(v3(0.0, -1.0, 0.0), v3(1.0, 0.0, 0.0), v3(0.0, 0.0, 1.0));
    CFrame::new(v3(x, y, z), orientation)
}

/// Item `name` of enum `enum_name`, from the bundled reflection database.
pub fn enum_item(enum_name: &str, name: &str) -> Enum {
    let db = rbx_reflection_database::get_bundled();
    Enum::from_u32(db.enums[enum_name].items[name])
}

pub fn material(name: &str) -> Enum {
    enum_item("Material", name)
}

pub fn part(class: &str, name: &str, size: Vector3, cframe: CFrame) -> InstanceBuilder {
    InstanceBuilder::new(class)
        .with_name(name)
        .with_property("Size", size)
        .with_property("CFrame", cframe)
        .with_property("Anchored", true)
}

/// A DataModel holding one Model, returned as the export root: a Block, Ball,
/// Cylinder (rotated), Wedge (transparent glass), CornerWedge (metal, colour
/// from BrickColor only), a Neon ball, and a nested Folder with a part that
/// has a child part.
pub fn sample() -> (WeakDom, Ref) {
    let model = InstanceBuilder::new("Model")
        .with_name("Sample")
        .with_child(
            part("Part", "Block", v3(4.0, 1.0, 2.0), at(0.0, 0.5, 0.0))
                .with_property("Color", Color3uint8::new(163, 162, 165))
                .with_property("Material", material("Plastic")),
        )
        .with_child(
            part("Part", "Ball", v3(2.0, 2.0, 2.0), at(6.0, 1.0, 0.0))
                .with_property("Shape", Enum::from_u32(0))
                .with_property("Color", Color3::new(1.0, 0.0, 0.75))
                .with_property("Material", material("Neon")),
        )
        .with_child(
            part(
                "Part",
                "Cylinder",
                v3(4.0, 2.0, 2.0),
                upright(-6.0, 2.0, 0.0),
            )
            .with_property("Shape", Enum::from_u32(2))
            .with_property("Color", Color3uint8::new(13, 105, 172)),
        )
        .with_child(
            part("WedgePart", "Wedge", v3(2.0, 2.0, 4.0), at(0.0, 1.0, 6.0))
                .with_property("Transparency", 0.5f32)
                .with_property("Material", material("Glass"))
                .with_property("Color", Color3uint8::new(128, 187, 219)),
        )
        .with_child(
            part(
                "CornerWedgePart",
                "CornerWedge",
                v3(2.0, 3.0, 2.0),
                at(0.0, 1.5, -6.0),
            )
            .with_property("Material", material("Metal"))
            .with_property("BrickColor", BrickColor::from_number(21).unwrap()),
        )
        .with_child(
            InstanceBuilder::new("Folder")
                .with_name("Props")
                .with_child(
                    part(
                        "Part",
                        "Crate",
                        v3(2.0, 2.0, 2.0),
                        turned_y(10.0, 1.0, 0.0, 90.0),
                    )
                    .with_property("Color", Color3uint8::new(163, 162, 165))
                    .with_child(
                        part(
                            "Part",
                            "Lid",
                            v3(2.0, 0.2, 2.0),
                            turned_y(10.0, 2.1, 0.0, 90.0),
                        )
                        .with_property("Color", Color3uint8::new(124, 92, 70))
                        .with_property("Material", material("Wood")),
                    ),
                ),
        );
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let model = dom.insert(root, model);
    (dom, model)
}

/// Parses a .glb container into its JSON document and binary chunk.
pub fn parse_glb(glb: &[u8]) -> (serde_json::Value, Vec<u8>) {
    assert_eq!(&glb[0..4], b"glTF");
    assert_eq!(u32::from_le_bytes(glb[4..8].try_into().unwrap()), 2);
    assert_eq!(
        u32::from_le_bytes(glb[8..12].try_into().unwrap()) as usize,
        glb.len()
    );
    let mut offset = 12;
    let mut json = None;
    let mut bin = Vec::new();
    while offset < glb.len() {
        let len = u32::from_le_bytes(glb[offset..offset + 4].try_into().unwrap()) as usize;
        assert_eq!(len % 4, 0, "chunk length not 4-byte aligned");
        let kind = &glb[offset + 4..offset + 8];
        let data = &glb[offset + 8..offset + 8 + len];
        match kind {
            b"JSON" => json = Some(serde_json::from_slice(data).unwrap()),
            b"BIN\0" => bin = data.to_vec(),
            other => panic!("unexpected chunk {other:?}"),
        }
        offset += 8 + len;
    }
    (json.expect("no JSON chunk"), bin)
}

/// A MeshPart carrying a script-built mesh (the attribute an EditableMesh's part gets): a
/// square pyramid on a 2 × 2 base, 1 high, apex red, base corners white, every face
/// counter-clockwise seen from outside, one normal per face.
pub fn pyramid_part(name: &str, size: Vector3, cframe: CFrame) -> InstanceBuilder {
    part("MeshPart", name, size, cframe).with_property("Attributes", pyramid_attributes())
}

/// Attributes holding the pyramid mesh of [`pyramid_part`].
pub fn pyramid_attributes() -> rbx_dom_weak::types::Attributes {
    use procmodel_mesh::{Triangle, TriangleMesh};
    let base = [
        [-1.0, 0.0, -1.0],
        [1.0, 0.0, -1.0],
        [1.0, 0.0, 1.0],
        [-1.0, 0.0, 1.0],
    ];
    let mut mesh = TriangleMesh {
        positions: base.to_vec(),
        colors: vec![[1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 0.0, 1.0]],
        uvs: vec![[0.0, 0.0]],
        ..TriangleMesh::default()
    };
    mesh.positions.push([0.0, 1.0, 0.0]);
    let mut face = |v: [u32; 3]| {
        let p = v.map(|i| glam::Vec3::from(mesh.positions[i as usize]));
        let n = (p[1] - p[0]).cross(p[2] - p[0]).normalize();
        mesh.normals.push(n.to_array());
        let k = mesh.normals.len() as u32 - 1;
        mesh.triangles.push(Triangle {
            vertices: v,
            normals: [k; 3],
            uvs: [0; 3],
            colors: v.map(|i| u32::from(i == 4)),
        });
    };
    for i in 0..4u32 {
        face([i, 4, (i + 1) % 4]);
    }
    face([0, 1, 2]);
    face([0, 2, 3]);
    let mut attributes = rbx_dom_weak::types::Attributes::new();
    attributes.insert(
        procmodel_mesh::ATTRIBUTE.to_owned(),
        mesh.to_attribute().into(),
    );
    attributes
}

/// A 2 × 2 image as the attribute an EditableImage's part gets: red, green (half
/// transparent), blue, clear.
pub fn image_attribute() -> String {
    procmodel_mesh::texture::Texture::new(
        2,
        2,
        vec![255, 0, 0, 255, 0, 255, 0, 128, 0, 0, 255, 255, 9, 9, 9, 0],
    )
    .unwrap()
    .to_attribute()
}

/// [`pyramid_part`] showing [`image_attribute`] through its TextureContent.
pub fn textured_pyramid(name: &str, color: rbx_dom_weak::types::Color3) -> InstanceBuilder {
    let mut attributes = pyramid_attributes();
    attributes.insert("ProcmodelTexture".to_owned(), image_attribute().into());
    part("MeshPart", name, v3(2.0, 1.0, 2.0), at(0.0, 0.0, 0.0))
        .with_property("Attributes", attributes)
        .with_property("Color", color)
}

/// A Model of lit parts: a lamp (Ball) with a PointLight, a box with a SpotLight on its Top
/// face and a SurfaceLight on its Right face, a post with an Attachment (3 studs up, turned
/// 90° about Y) holding a SpotLight (Front, Angle 180), and lights that shine nothing: a disabled
/// PointLight, one of Range 0, and one directly in the Model.
pub fn lit_model() -> (WeakDom, Ref) {
    let face = |name: &str| enum_item("NormalId", name);
    let light = |class: &str, name: &str| InstanceBuilder::new(class).with_name(name);
    let lamp = part("Part", "Lamp", v3(1.0, 1.0, 1.0), at(0.0, 5.0, 0.0))
        .with_property("Shape", Enum::from_u32(0))
        .with_child(
            light("PointLight", "Glow")
                .with_property("Range", 12.0f32)
                .with_property("Brightness", 2.0f32)
                .with_property("Color", Color3::new(1.0, 0.5, 0.0)),
        )
        .with_child(light("PointLight", "Off").with_property("Enabled", false))
        .with_child(light("PointLight", "Short").with_property("Range", 0.0f32));
    let crate_ = part("Part", "Box", v3(4.0, 2.0, 6.0), at(10.0, 1.0, 0.0))
        .with_child(
            light("SpotLight", "Beam")
                .with_property("Face", face("Top"))
                .with_property("Angle", 60.0f32),
        )
        .with_child(light("SurfaceLight", "Panel").with_property("Face", face("Right")));
    let post = part("Part", "Post", v3(1.0, 6.0, 1.0), at(-10.0, 3.0, 0.0)).with_child(
        InstanceBuilder::new("Attachment")
            .with_name("Mount")
            .with_property("CFrame", turned_y(0.0, 3.0, 0.0, 90.0))
            // Roblox's widest cone: a half-space, glTF's limit.
            .with_child(light("SpotLight", "Headlight").with_property("Angle", 180.0f32)),
    );
    let model = InstanceBuilder::new("Model")
        .with_name("Lit")
        .with_child(lamp)
        .with_child(crate_)
        .with_child(post)
        .with_child(light("PointLight", "Loose"));
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let model = dom.insert(root, model);
    (dom, model)
}
