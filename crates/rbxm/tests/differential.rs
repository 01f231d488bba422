//! Exact-bytes comparison with `rbx_binary::to_writer` over a corpus of DOMs.

mod common;

use std::collections::BTreeSet;

use common::{assert_same, chunks, ours, parts_dom, theirs};
use rbx_dom_weak::{
    InstanceBuilder, WeakDom,
    types::{
        Attributes, Axes, BinaryString, BrickColor, CFrame, Color3, Color3uint8, ColorSequence,
        ColorSequenceKeypoint, Content, ContentId, CustomPhysicalProperties, Enum, EnumItem, Faces,
        Font, FontStyle, FontWeight, MaterialColors, Matrix3, NetAssetRef, NumberRange,
        NumberSequence, NumberSequenceKeypoint, PhysicalProperties, Ray, Rect, Ref, Region3,
        SecurityCapabilities, SharedString, Tags, TerrainMaterials, UDim, UDim2, UniqueId, Variant,
        Vector2, Vector2int16, Vector3, Vector3int16,
    },
};

fn rotation(angle: f32) -> Matrix3 {
    let (s, c) = angle.sin_cos();
    Matrix3::new(
        Vector3::new(c, -s, 0.0),
        Vector3::new(s, c, 0.0),
        Vector3::new(0.0, 0.0, 1.0),
    )
}

/// Every property type the binary format has, on classes that declare it.
/// Returns the DOM and the root Model.
fn every_type_dom() -> (WeakDom, Ref) {
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let outside = dom.insert(
        dom.root_ref(),
        InstanceBuilder::new("Part").with_name("Outside"),
    );
    let model = dom.insert(
        dom.root_ref(),
        InstanceBuilder::new("Model").with_name("Everything"),
    );

    let part = dom.insert(
        model,
        InstanceBuilder::new("Part")
            .with_name("Brick")
            .with_property(
                "CFrame",
                CFrame::new(Vector3::new(1.0, 2.0, 3.0), rotation(0.3)),
            )
            .with_property(
                "PivotOffset",
                CFrame::new(Vector3::new(0.0, -1.5, 0.0), Matrix3::identity()),
            )
            .with_property("Size", Vector3::new(4.0, 1.0, 2.0))
            .with_property("Color", Color3::new(0.2, 0.4, 0.6))
            .with_property("Material", Enum::from_u32(288))
            .with_property("Anchored", true)
            .with_property("Transparency", 0.25f32)
            .with_property(
                "CustomPhysicalProperties",
                PhysicalProperties::Custom(CustomPhysicalProperties::new(
                    0.7, 0.3, 0.5, 1.0, 1.0, 1.0,
                )),
            )
            .with_property(
                "Shape",
                EnumItem {
                    ty: "PartType".into(),
                    value: 0,
                },
            )
            .with_property("UniqueId", UniqueId::new(7, 1_700_000_000, -123_456_789))
            .with_property(
                "Tags",
                Tags::from(vec!["a".to_owned(), "bb".to_owned(), String::new()]),
            )
            .with_property(
                "Attributes",
                Attributes::new()
                    .with("Speed", 12.5f64)
                    .with("Label", "hello")
                    .with("On", true)
                    .with("Tint", Color3::new(1.0, 0.0, 0.5))
                    .with(
                        "Where",
                        CFrame::new(Vector3::new(1.0, 2.0, 3.0), rotation(1.0)),
                    ),
            )
            .with_property("Capabilities", SecurityCapabilities::from_bits(0b1011)),
    );
    dom.insert(
        model,
        InstanceBuilder::new("Part")
            .with_name("Acoustic")
            .with_property(
                "CustomPhysicalProperties",
                PhysicalProperties::Custom(CustomPhysicalProperties::new(
                    1.0, 0.2, 0.1, 2.0, 3.0, 0.5,
                )),
            )
            .with_property("Color3uint8", Color3uint8::new(10, 20, 30))
            .with_property("Capabilities", SecurityCapabilities::from_bits(u64::MAX)),
    );
    dom.insert(
        model,
        InstanceBuilder::new("Model")
            .with_name("Inner")
            .with_property("PrimaryPart", outside)
            .with_property(
                "WorldPivotData",
                Some(CFrame::new(Vector3::new(5.0, 6.0, 7.0), rotation(2.0))),
            )
            .with_child(
                InstanceBuilder::new("Model")
                    .with_property("WorldPivotData", Variant::OptionalCFrame(None)),
            )
            .with_child(InstanceBuilder::new("Model").with_property(
                "WorldPivotData",
                Some(CFrame::new(
                    Vector3::new(1.0, 1.0, 1.0),
                    Matrix3::identity(),
                )),
            )),
    );
    dom.get_by_ref_mut(model)
        .unwrap()
        .properties
        .insert("PrimaryPart".into(), Variant::Ref(part));

    let gui = dom.insert(
        model,
        InstanceBuilder::new("ScreenGui").with_property("IgnoreGuiInset", true),
    );
    dom.insert(
        gui,
        InstanceBuilder::new("TextLabel")
            .with_property("Text", "Hi")
            .with_property(
                "FontFace",
                Font::new(
                    "rbxasset://fonts/families/Roboto.json",
                    FontWeight::Bold,
                    FontStyle::Italic,
                ),
            )
            .with_property("Size", UDim2::new(UDim::new(0.5, 10), UDim::new(0.25, -20)))
            .with_property("TextColor3", Color3::new(1.0, 1.0, 0.0))
            .with_property("ZIndex", 3i32)
            .with_property("TextSize", 18.0f32),
    );
    dom.insert(
        gui,
        InstanceBuilder::new("TextLabel")
            .with_property("Font", Enum::from_u32(4))
            .with_property("Position", UDim2::new(UDim::new(0.0, 5), UDim::new(1.0, 0))),
    );
    dom.insert(
        gui,
        InstanceBuilder::new("TextLabel").with_property("FontFace", {
            let mut f = Font::new(
                "rbxasset://fonts/families/Arial.json",
                FontWeight::Light,
                FontStyle::Normal,
            );
            f.cached_face_id = Some("rbxasset://fonts/arial.ttf".into());
            f
        }),
    );
    dom.insert(
        gui,
        InstanceBuilder::new("ImageLabel")
            .with_property(
                "SliceCenter",
                Rect::new(Vector2::new(1.0, 2.0), Vector2::new(3.0, 4.0)),
            )
            .with_property("ImageRectSize", Vector2::new(64.0, 32.0))
            .with_property("ImageContent", Content::from_uri("rbxassetid://123"))
            .with_property("AnchorPoint", Vector2::new(0.5, 0.5)),
    );
    dom.insert(
        gui,
        InstanceBuilder::new("ImageLabel")
            .with_property("Image", ContentId::from("rbxassetid://55")),
    );
    dom.insert(
        gui,
        InstanceBuilder::new("ImageLabel")
            .with_property("ImageContent", Content::from_referent(part)),
    );
    dom.insert(
        gui,
        InstanceBuilder::new("ImageLabel")
            .with_property("ImageContent", Content::from_referent(outside)),
    );
    dom.insert(
        gui,
        InstanceBuilder::new("ImageLabel").with_property("ImageContent", Content::none()),
    );
    dom.insert(
        gui,
        InstanceBuilder::new("UIPadding").with_property("PaddingLeft", UDim::new(0.1, 4)),
    );

    dom.insert(
        model,
        InstanceBuilder::new("ParticleEmitter")
            .with_property(
                "Size",
                NumberSequence {
                    keypoints: vec![
                        NumberSequenceKeypoint::new(0.0, 1.0, 0.1),
                        NumberSequenceKeypoint::new(0.5, 2.0, 0.0),
                        NumberSequenceKeypoint::new(1.0, 0.5, 0.2),
                    ],
                },
            )
            .with_property(
                "Color",
                ColorSequence {
                    keypoints: vec![
                        ColorSequenceKeypoint::new(0.0, Color3::new(1.0, 0.0, 0.0)),
                        ColorSequenceKeypoint::new(1.0, Color3::new(0.0, 0.0, 1.0)),
                    ],
                },
            )
            .with_property("Lifetime", NumberRange::new(1.0, 3.5)),
    );
    dom.insert(
        model,
        InstanceBuilder::new("Handles").with_property("Faces", Faces::from_bits(0b010101).unwrap()),
    );
    dom.insert(
        model,
        InstanceBuilder::new("ArcHandles").with_property("Axes", Axes::from_bits(0b101).unwrap()),
    );
    dom.insert(
        model,
        InstanceBuilder::new("BrickColorValue").with_property("Value", BrickColor::BrightRed),
    );
    dom.insert(
        model,
        InstanceBuilder::new("BrickColorValue").with_property("Value", Variant::Int32(194)),
    );
    dom.insert(
        model,
        InstanceBuilder::new("IntValue").with_property("Value", 1i64 << 40),
    );
    dom.insert(
        model,
        InstanceBuilder::new("IntValue").with_property("Value", Variant::Int32(-5)),
    );
    dom.insert(
        model,
        InstanceBuilder::new("NumberValue").with_property("Value", 1.0e100f64),
    );
    dom.insert(
        model,
        InstanceBuilder::new("NumberValue").with_property("Value", Variant::Float32(0.5)),
    );
    dom.insert(
        model,
        InstanceBuilder::new("RayValue").with_property(
            "Value",
            Ray::new(Vector3::new(1.0, 2.0, 3.0), Vector3::new(0.0, -1.0, 0.0)),
        ),
    );
    dom.insert(
        model,
        InstanceBuilder::new("TerrainRegion")
            .with_property("ExtentsMin", Vector3int16::new(-4, 0, 7))
            .with_property("ExtentsMax", Vector3int16::new(300, 12, -32768)),
    );
    dom.insert(
        model,
        InstanceBuilder::new("Script")
            .with_property("LinkedSource", ContentId::from("rbxassetid://9")),
    );
    dom.insert(
        model,
        InstanceBuilder::new("MeshPart")
            .with_property(
                "PhysicalConfigData",
                SharedString::new(b"physics blob".to_vec()),
            )
            .with_property("MeshContent", Content::from_uri("rbxassetid://77")),
    );
    dom.insert(
        model,
        InstanceBuilder::new("MeshPart").with_property(
            "PhysicalConfigData",
            SharedString::new(b"physics blob".to_vec()),
        ),
    );
    dom.insert(
        model,
        InstanceBuilder::new("MeshPart")
            .with_property("PhysicalConfigData", SharedString::new(b"another".to_vec())),
    );
    dom.insert(
        model,
        InstanceBuilder::new("UnionOperation")
            .with_property("SolidMeshHolder", NetAssetRef::new(b"solid mesh".to_vec())),
    );
    dom.insert(
        model,
        InstanceBuilder::new("Terrain").with_property("MaterialColors", {
            let mut colors = MaterialColors::new();
            colors.set_color(TerrainMaterials::Grass, Color3uint8::new(1, 2, 3));
            colors
        }),
    );
    dom.insert(
        model,
        InstanceBuilder::new("StyleRule")
            .with_property("Properties", Attributes::new())
            .with_child(
                InstanceBuilder::new("StyleRule")
                    .with_property("Properties", Attributes::new().with("X", 1.0f64)),
            ),
    );
    dom.insert(
        model,
        InstanceBuilder::new("Folder").with_property("Attributes", Attributes::new()),
    );
    dom.insert(
        model,
        InstanceBuilder::new("Decal").with_property("Texture", ContentId::from("rbxassetid://1")),
    );
    (dom, model)
}

#[test]
fn parts_benchmark_shape() {
    let (dom, model) = parts_dom(2_000);
    assert_same(&dom, &[model]);
    assert_same(&dom, &[dom.root_ref()]);
}

/// Chunks large enough (the CFrame column of 25k parts is 1.2 MB) that the writer compresses
/// into a fresh buffer instead of its reused one.
#[test]
fn large_columns() {
    let (dom, model) = parts_dom(25_000);
    assert_same(&dom, &[model]);
}

#[test]
fn every_variant_type() {
    let (dom, model) = every_type_dom();
    assert_same(&dom, &[model]);
    assert_same(&dom, &[dom.root_ref()]);
}

/// The corpus reaches every binary property type.
/// Every type again in a file of over 10,000 instances, whose PROP chunks are encoded on
/// two threads.
#[test]
fn every_variant_type_in_a_large_file() {
    let (mut dom, model) = every_type_dom();
    for i in 0..10_000 {
        dom.insert(
            model,
            InstanceBuilder::new("Folder").with_name(format!("Padding{i}")),
        );
    }
    assert_same(&dom, &[model]);
}

#[test]
fn corpus_covers_every_binary_type() {
    let (dom, model) = every_type_dom();
    let bytes = ours(&dom, &[model]).unwrap();
    let types: BTreeSet<u8> = chunks(&bytes)
        .iter()
        .filter(|(name, _)| name == "PROP")
        .map(|(_, data)| {
            let name_len = u32::from_le_bytes(data[4..8].try_into().unwrap()) as usize;
            data[8 + name_len]
        })
        .collect();
    let all: BTreeSet<u8> = [
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x10,
        0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1E, 0x1F, 0x20, 0x21,
        0x22,
    ]
    .into();
    assert_eq!(
        all.difference(&types).collect::<Vec<_>>(),
        Vec::<&u8>::new()
    );
    assert!(chunks(&bytes).iter().any(|(name, _)| name == "SSTR"));
}

#[test]
fn nested_models_and_folders() {
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let mut top = InstanceBuilder::new("Model").with_name("City");
    for b in 0..5 {
        let mut building = InstanceBuilder::new("Model").with_name(format!("Building{b}"));
        for f in 0..4 {
            let mut floor = InstanceBuilder::new("Folder").with_name(format!("Floor{f}"));
            for p in 0..3 {
                floor = floor.with_child(
                    InstanceBuilder::new("Part")
                        .with_name(format!("Wall{p}"))
                        .with_property("Size", Vector3::new(p as f32, 1.0, 1.0))
                        .with_property(
                            "CFrame",
                            CFrame::new(
                                Vector3::new(b as f32, f as f32, p as f32),
                                Matrix3::identity(),
                            ),
                        ),
                );
            }
            building = building.with_child(floor.with_child(InstanceBuilder::new("Folder")));
        }
        top = top.with_child(building);
    }
    let city = dom.insert(dom.root_ref(), top);
    assert_same(&dom, &[city]);
    assert_same(&dom, &[dom.root_ref()]);
}

#[test]
fn unknown_properties_and_classes() {
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let a = dom.insert(
        dom.root_ref(),
        InstanceBuilder::new("Part")
            .with_property("NotARealProperty", 5i32)
            .with_property("MadeUpString", "x")
            .with_property("MadeUpBlob", BinaryString::from(vec![0u8, 255, 1]))
            .with_property(
                "MadeUpShared",
                SharedString::new(b"unknown shared".to_vec()),
            )
            .with_property("MadeUpRef", Ref::none()),
    );
    dom.insert(
        a,
        InstanceBuilder::new("Part").with_property("NotARealProperty", 9i32),
    );
    // Missing everywhere else: unknown properties default by type.
    dom.insert(
        a,
        InstanceBuilder::new("Part").with_property(
            "MadeUpCFrame",
            CFrame::new(Vector3::new(1.0, 0.0, 0.0), rotation(0.1)),
        ),
    );
    let unknown = dom.insert(
        a,
        InstanceBuilder::new("FlyingSpaghettiMonster")
            .with_property("Noodles", 12.0f32)
            .with_property("Sauce", Color3::new(1.0, 0.0, 0.0))
            .with_property("Tags", Tags::from(vec!["x".to_owned()]))
            .with_child(
                InstanceBuilder::new("FlyingSpaghettiMonster").with_property("Meatballs", 3i64),
            ),
    );
    dom.insert(
        unknown,
        InstanceBuilder::new("Folder").with_property("Archivable", false),
    );
    assert_same(&dom, &[a]);
}

#[test]
fn missing_properties_get_defaults() {
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let folder = dom.insert(dom.root_ref(), InstanceBuilder::new("Folder"));
    dom.insert(folder, InstanceBuilder::new("Part"));
    dom.insert(
        folder,
        InstanceBuilder::new("Part").with_property("Anchored", true),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("Part").with_property("Transparency", 0.5f32),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("Part")
            .with_property("CustomPhysicalProperties", PhysicalProperties::Default),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("MeshPart")
            .with_property("PhysicalConfigData", SharedString::new(b"one".to_vec())),
    );
    dom.insert(folder, InstanceBuilder::new("MeshPart"));
    dom.insert(
        folder,
        InstanceBuilder::new("ParticleEmitter")
            .with_property("Lifetime", NumberRange::new(0.0, 1.0)),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("ParticleEmitter").with_property(
            "Size",
            NumberSequence {
                keypoints: vec![
                    NumberSequenceKeypoint::new(0.0, 0.0, 0.0),
                    NumberSequenceKeypoint::new(1.0, 1.0, 0.0),
                ],
            },
        ),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("TextLabel").with_property("Text", "x"),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("TextLabel").with_property("Font", Enum::from_u32(3)),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("Model").with_property("UniqueId", UniqueId::new(1, 2, 3)),
    );
    dom.insert(folder, InstanceBuilder::new("Model"));
    assert_same(&dom, &[folder]);
}

#[test]
fn migrations_and_aliases() {
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let folder = dom.insert(dom.root_ref(), InstanceBuilder::new("Folder"));
    // BrickColor migrates to Color (Color3uint8).
    dom.insert(
        folder,
        InstanceBuilder::new("Part").with_property("BrickColor", BrickColor::BrightBlue),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("Part")
            .with_property("BrickColor", BrickColor::BrightGreen)
            .with_property("Color", Color3::new(1.0, 0.0, 0.0)),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("Part").with_property("Color3uint8", Color3uint8::new(9, 8, 7)),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("Part").with_property("size", Vector3::new(3.0, 3.0, 3.0)),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("Part")
            .with_property("size", Vector3::new(1.0, 1.0, 1.0))
            .with_property("Size", Vector3::new(2.0, 2.0, 2.0)),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("Part")
            .with_property("archivable", false)
            .with_property("shape", Enum::from_u32(0)),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("ScreenGui").with_property("IgnoreGuiInset", false),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("ScreenGui").with_property("ScreenInsets", Enum::from_u32(0)),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("TextLabel").with_property("Font", Enum::from_u32(18)),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("TextButton")
            .with_property("Font", Enum::from_u32(2))
            .with_property(
                "FontFace",
                Font::new(
                    "rbxasset://fonts/families/Ubuntu.json",
                    FontWeight::Heavy,
                    FontStyle::Normal,
                ),
            ),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("Decal").with_property("Texture", ContentId::from("")),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("Decal")
            .with_property("TextureContent", Content::from_uri("rbxassetid://2")),
    );
    // A `Name` in the property map is ignored; Instance::name is written.
    dom.insert(
        folder,
        InstanceBuilder::new("Folder")
            .with_name("Real")
            .with_property("Name", "Fake"),
    );
    assert_same(&dom, &[folder]);
}

#[test]
fn refs_inside_and_outside_the_written_set() {
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let outside = dom.insert(
        dom.root_ref(),
        InstanceBuilder::new("Part").with_name("Outside"),
    );
    let model = dom.insert(dom.root_ref(), InstanceBuilder::new("Model"));
    let inside = dom.insert(model, InstanceBuilder::new("Part").with_name("Inside"));
    dom.insert(
        model,
        InstanceBuilder::new("Model").with_property("PrimaryPart", outside),
    );
    dom.insert(
        model,
        InstanceBuilder::new("Model").with_property("PrimaryPart", inside),
    );
    dom.insert(
        model,
        InstanceBuilder::new("Model").with_property("PrimaryPart", Ref::none()),
    );
    dom.insert(
        model,
        InstanceBuilder::new("Model").with_property("PrimaryPart", model),
    );
    dom.insert(
        model,
        InstanceBuilder::new("ObjectValue").with_property("Value", inside),
    );
    dom.insert(
        model,
        InstanceBuilder::new("WeldConstraint")
            .with_property("Part0", inside)
            .with_property("Part1", outside),
    );
    assert_same(&dom, &[model]);
    assert_same(&dom, &[dom.root_ref()]);
    assert_same(&dom, &[model, outside]);
}

#[test]
fn multiple_roots_and_overlaps() {
    let (dom, model) = every_type_dom();
    let children: Vec<Ref> = dom.get_by_ref(model).unwrap().children().to_vec();
    let root = dom.root_ref();
    assert_same(&dom, &children);
    assert_same(&dom, &[children[3], children[0], children[2]]);
    // Overlapping: a root inside another root, listed before or after it, and
    // the same root twice. rbx_binary visits some instances twice then.
    assert_same(&dom, &[model, children[2]]);
    assert_same(&dom, &[children[2], model]);
    assert_same(&dom, &[children[2], children[2]]);
    assert_same(&dom, &[root, model]);
    let last = *children.last().unwrap();
    assert_same(&dom, &[last, model]);
    let inner = dom.get_by_ref(children[2]).unwrap().children().to_vec();
    assert_same(&dom, &[inner[1], children[2], model]);
}

#[test]
fn empty_refs() {
    let (dom, _) = every_type_dom();
    assert_same(&dom, &[]);
    assert_same(&WeakDom::new(InstanceBuilder::new("Folder")), &[]);
}

#[test]
fn single_instance() {
    let dom = WeakDom::new(InstanceBuilder::new("Folder"));
    assert_same(&dom, &[dom.root_ref()]);
}

/// A place: the DataModel's services as roots (.rbxl).
#[test]
fn place_with_services() {
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let workspace = dom.insert(
        root,
        InstanceBuilder::new("Workspace").with_property("Gravity", 196.2f32),
    );
    dom.insert(
        workspace,
        InstanceBuilder::new("Part").with_property("Anchored", true),
    );
    dom.insert(workspace, InstanceBuilder::new("Terrain"));
    dom.insert(
        workspace,
        InstanceBuilder::new("Camera").with_property("FieldOfView", 70.0f32),
    );
    dom.insert(
        root,
        InstanceBuilder::new("Lighting").with_property("Ambient", Color3::new(0.1, 0.1, 0.1)),
    );
    dom.insert(
        root,
        InstanceBuilder::new("ReplicatedStorage").with_child(InstanceBuilder::new("Folder")),
    );
    dom.insert(root, InstanceBuilder::new("ServerScriptService"));
    dom.insert(
        root,
        InstanceBuilder::new("StarterGui").with_child(InstanceBuilder::new("ScreenGui")),
    );
    dom.insert(root, InstanceBuilder::new("SoundService"));
    let services = dom.root().children().to_vec();
    assert_same(&dom, &services);
    assert_same(&dom, &[root]);
}

fn assert_same_error(dom: &WeakDom, refs: &[Ref]) -> String {
    let expected = theirs(dom, refs).expect_err("rbx_binary fails").to_string();
    let actual = ours(dom, refs).expect_err("we fail").to_string();
    assert_eq!(actual, expected);
    actual
}

#[test]
fn error_property_type_mismatch() {
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let model = dom.insert(dom.root_ref(), InstanceBuilder::new("Model").with_name("M"));
    dom.insert(
        model,
        InstanceBuilder::new("Part")
            .with_name("Good")
            .with_property("Anchored", true),
    );
    dom.insert(
        model,
        InstanceBuilder::new("Part")
            .with_name("Bad")
            .with_property("Anchored", "yes"),
    );
    let message = assert_same_error(&dom, &[model]);
    assert!(
        message.contains("M.Bad") && message.contains("Part.Anchored"),
        "{message}"
    );

    // The type of an unknown property comes from the first value seen.
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let folder = dom.insert(dom.root_ref(), InstanceBuilder::new("Folder"));
    dom.insert(
        folder,
        InstanceBuilder::new("Part").with_property("Custom", 1i32),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("Part").with_property("Custom", 1.0f32),
    );
    assert_same_error(&dom, &[folder]);

    // Mismatches in several columns: the first in output order is reported.
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let folder = dom.insert(dom.root_ref(), InstanceBuilder::new("Folder"));
    dom.insert(
        folder,
        InstanceBuilder::new("Part").with_property("Transparency", "x"),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("Part").with_property("CFrame", 1i32),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("Model").with_property("WorldPivotData", 2i32),
    );
    assert_same_error(&dom, &[folder]);

    // Every type's own mismatch message.
    let values: Vec<(&str, &str)> = vec![
        ("Part", "Anchored"),
        ("Part", "Transparency"),
        ("Part", "Size"),
        ("Part", "CFrame"),
        ("Part", "Color"),
        ("Part", "Material"),
        ("Part", "CustomPhysicalProperties"),
        ("Part", "UniqueId"),
        ("Part", "Capabilities"),
        ("Part", "Tags"),
        ("Model", "PrimaryPart"),
        ("Model", "WorldPivotData"),
        ("TextLabel", "FontFace"),
        ("TextLabel", "Size"),
        ("TextLabel", "ZIndex"),
        ("TextLabel", "TextColor3"),
        ("ImageLabel", "SliceCenter"),
        ("ImageLabel", "ImageRectSize"),
        ("ImageLabel", "ImageContent"),
        ("UIPadding", "PaddingLeft"),
        ("ParticleEmitter", "Size"),
        ("ParticleEmitter", "Color"),
        ("ParticleEmitter", "Lifetime"),
        ("Handles", "Faces"),
        ("ArcHandles", "Axes"),
        ("BrickColorValue", "Value"),
        ("IntValue", "Value"),
        ("NumberValue", "Value"),
        ("RayValue", "Value"),
        ("TerrainRegion", "ExtentsMin"),
        ("MeshPart", "PhysicalConfigData"),
    ];
    for (class, property) in values {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let folder = dom.insert(dom.root_ref(), InstanceBuilder::new("Folder"));
        dom.insert(
            folder,
            InstanceBuilder::new(class).with_property(
                property,
                Variant::Region3(Region3::new(
                    Vector3::new(0.0, 0.0, 0.0),
                    Vector3::new(1.0, 1.0, 1.0),
                )),
            ),
        );
        assert_same_error(&dom, &[folder]);
    }
}

/// Files of 10,000 instances or more have their PROP chunks encoded on two threads: the
/// error is still the first bad value in output order, whichever thread met it.
#[test]
fn error_in_a_large_file_is_the_first_in_output_order() {
    let bad = |props: &[(&str, Variant)]| {
        let (mut dom, model) = parts_dom(12_000);
        let mut b = InstanceBuilder::new("Part").with_name("Bad");
        for (name, value) in props {
            b = b.with_property(*name, value.clone());
        }
        dom.insert(model, b);
        assert_same_error(&dom, &[model])
    };
    // A late small column (the helper thread's end of the file).
    let message = bad(&[("Transparency", Variant::String("x".into()))]);
    assert!(message.contains("Part.Transparency"), "{message}");
    // An earlier chunk the calling thread writes fails first.
    let message = bad(&[
        ("Transparency", Variant::String("x".into())),
        ("CFrame", Variant::Int32(1)),
    ]);
    assert!(message.contains("Part.CFrame"), "{message}");
    let message = bad(&[
        ("Anchored", Variant::String("yes".into())),
        ("Transparency", Variant::String("x".into())),
    ]);
    assert!(message.contains("Part.Anchored"), "{message}");
}

#[test]
fn error_failed_migration() {
    // A legacy Font the migration does not know stays an Enum in the Font column.
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let folder = dom.insert(dom.root_ref(), InstanceBuilder::new("Folder"));
    dom.insert(
        folder,
        InstanceBuilder::new("TextLabel").with_property("Font", Enum::from_u32(3)),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("TextLabel").with_property("Font", Enum::from_u32(999)),
    );
    assert_same_error(&dom, &[folder]);
}

#[test]
fn error_unsupported_property_type() {
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let folder = dom.insert(dom.root_ref(), InstanceBuilder::new("Folder"));
    dom.insert(
        folder,
        InstanceBuilder::new("Part").with_property("Custom", Vector2int16::new(1, 2)),
    );
    assert_same_error(&dom, &[folder]);

    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let folder = dom.insert(dom.root_ref(), InstanceBuilder::new("Folder"));
    dom.insert(
        folder,
        InstanceBuilder::new("Part").with_property(
            "Custom",
            EnumItem {
                ty: "Material".into(),
                value: 1,
            },
        ),
    );
    assert_same_error(&dom, &[folder]);

    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let folder = dom.insert(dom.root_ref(), InstanceBuilder::new("Folder"));
    dom.insert(
        folder,
        InstanceBuilder::new("Part").with_property("Custom", Attributes::new()),
    );
    assert_same_error(&dom, &[folder]);
}

#[test]
fn error_invalid_value() {
    // Attributes that cannot be encoded (a Ref attribute).
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let folder = dom.insert(dom.root_ref(), InstanceBuilder::new("Folder"));
    dom.insert(
        folder,
        InstanceBuilder::new("Part")
            .with_property("Attributes", Attributes::new().with("R", Ref::none())),
    );
    assert_same_error(&dom, &[folder]);
}

#[test]
fn error_missing_root() {
    let dom = WeakDom::new(InstanceBuilder::new("Folder"));
    let missing = Ref::new();
    assert_same_error(&dom, &[missing]);
    assert_same_error(&dom, &[dom.root_ref(), missing]);
}
