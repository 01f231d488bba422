//! Corrupt scene files and attribute blobs (issue #10, items 11 and 14): every load returns
//! an error naming the file, never a panic or an abort. Named cases for the corruptions seen
//! to panic rbx_binary, and a bounded proptest suite of byte flips, truncations, insertions
//! and overwritten counts of small valid files in all four formats.

use procmodel_engine::{Engine, EngineConfig, SceneFormat, check_attributes, read_scene_bytes};
use proptest::prelude::*;
use rbx_binary::CompressionType;
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use rbx_types::{
    Attributes, CFrame, Color3, ColorSequence, ColorSequenceKeypoint, Content, Font, Matrix3,
    NumberRange, NumberSequence, NumberSequenceKeypoint, PhysicalProperties, Variant, Vector3,
};
use std::sync::LazyLock;

/// A small scene with the property types whose binary encodings carry counts and lengths:
/// strings, attributes, sequences, fonts, CFrames with full matrices, physical properties.
fn scene() -> WeakDom {
    let mut attrs = Attributes::new();
    attrs.insert("Count".into(), Variant::Float64(3.0));
    attrs.insert("Label".into(), Variant::String("stairs".into()));
    attrs.insert("Tint".into(), Variant::Color3(Color3::new(1.0, 0.5, 0.25)));
    attrs.insert(
        "Fade".into(),
        Variant::NumberSequence(NumberSequence {
            keypoints: vec![
                NumberSequenceKeypoint::new(0.0, 0.0, 0.0),
                NumberSequenceKeypoint::new(1.0, 1.0, 0.0),
            ],
        }),
    );
    attrs.insert(
        "Range".into(),
        Variant::NumberRange(NumberRange::new(1.0, 2.0)),
    );
    let rotated = CFrame::new(
        Vector3::new(1.0, 2.0, 3.0),
        Matrix3::new(
            Vector3::new(0.6, 0.0, 0.8),
            Vector3::new(0.0, 1.0, 0.0),
            Vector3::new(-0.8, 0.0, 0.6),
        ),
    );
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let ws = dom.insert(root, InstanceBuilder::new("Workspace"));
    let module = dom.insert(
        root,
        InstanceBuilder::new("ModuleScript")
            .with_name("Gen")
            .with_property("Source", "return { OnGenerate = function() end }"),
    );
    let model = dom.insert(
        ws,
        InstanceBuilder::new("ProceduralModel")
            .with_name("Model")
            .with_property("Generator", Variant::Ref(module))
            .with_property("Size", Vector3::new(8.0, 8.0, 8.0))
            .with_property("Attributes", Variant::Attributes(attrs)),
    );
    for i in 0..3 {
        dom.insert(
            model,
            InstanceBuilder::new("Part")
                .with_name(format!("P{i}"))
                .with_property("CFrame", rotated)
                .with_property("Size", Vector3::new(1.0, 2.0, 4.0))
                .with_property(
                    "CustomPhysicalProperties",
                    PhysicalProperties::Custom(rbx_types::CustomPhysicalProperties::new(
                        0.7, 0.3, 0.5, 1.0, 1.0, 1.0,
                    )),
                ),
        );
    }
    let emitter = dom.insert(
        model,
        InstanceBuilder::new("ParticleEmitter")
            .with_property(
                "Transparency",
                NumberSequence {
                    keypoints: vec![
                        NumberSequenceKeypoint::new(0.0, 0.5, 0.0),
                        NumberSequenceKeypoint::new(1.0, 1.0, 0.0),
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
            ),
    );
    let _ = emitter;
    dom.insert(
        ws,
        InstanceBuilder::new("TextLabel")
            .with_property("Text", "hello")
            .with_property("FontFace", Font::default()),
    );
    // Content values: two URIs and none (an ImageLabel's Image). An object source has no
    // XML form (rbx_xml cannot write one), so this scene holds none.
    for content in [
        Content::from_uri("rbxassetid://1"),
        Content::from_uri("rbxassetid://2"),
        Content::none(),
    ] {
        dom.insert(
            ws,
            InstanceBuilder::new("ImageLabel").with_property("ImageContent", content),
        );
    }
    dom
}

fn binary(compression: CompressionType) -> Vec<u8> {
    let dom = scene();
    let mut out = Vec::new();
    rbx_binary::Serializer::new()
        .compression_type(compression)
        .serialize(&mut out, &dom, dom.root().children())
        .unwrap();
    out
}

fn xml() -> Vec<u8> {
    let dom = scene();
    let mut out = Vec::new();
    rbx_xml::to_writer_default(&mut out, &dom, dom.root().children()).unwrap();
    out
}

/// Valid files: (name the loader is given, format, bytes). Binary files come from
/// rbx_binary (LZ4, ZSTD and uncompressed chunks) and from our own writer.
static FILES: LazyLock<Vec<(&'static str, SceneFormat, Vec<u8>)>> = LazyLock::new(|| {
    let dom = scene();
    let mut ours = Vec::new();
    procmodel_rbxm::to_writer(&mut ours, &dom, dom.root().children()).unwrap();
    let mut files = vec![
        (
            "lz4.rbxl",
            SceneFormat::Binary,
            binary(CompressionType::Lz4),
        ),
        (
            "zstd.rbxm",
            SceneFormat::Binary,
            binary(CompressionType::Zstd),
        ),
        (
            "plain.rbxl",
            SceneFormat::Binary,
            binary(CompressionType::None),
        ),
        ("ours.rbxm", SceneFormat::Binary, ours),
        ("scene.rbxlx", SceneFormat::Xml, xml()),
        ("model.rbxmx", SceneFormat::Xml, xml()),
    ];
    // The fuzz seeds (their first byte picks the extension the fuzz target tells the loader).
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    for (target, format) in [
        ("scene_binary", SceneFormat::Binary),
        ("scene_xml", SceneFormat::Xml),
    ] {
        let mut seeds: Vec<_> = std::fs::read_dir(corpus.join(target))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        seeds.sort();
        for seed in seeds {
            let name: &'static str =
                format!("{target}-{}", seed.file_name().unwrap().to_str().unwrap()).leak();
            files.push((name, format, std::fs::read(&seed).unwrap()[1..].to_vec()));
        }
    }
    files
});

/// Loads `bytes`; an error must name the file. Returns whether it loaded.
fn load(name: &str, format: SceneFormat, bytes: Vec<u8>) -> bool {
    match read_scene_bytes(bytes, format, name) {
        Ok(_) => true,
        Err(e) => {
            let text = e.to_string();
            assert!(text.starts_with(&format!("{name}: ")), "{text}");
            false
        }
    }
}

fn error(name: &str, format: SceneFormat, bytes: Vec<u8>) -> String {
    match read_scene_bytes(bytes, format, name) {
        Ok(_) => panic!("{name}: the corrupt file loaded"),
        Err(e) => e.to_string(),
    }
}

/// Byte offsets of the chunk headers of a binary file, with their names.
fn chunks(file: &[u8]) -> Vec<(usize, [u8; 4])> {
    let mut at = 32;
    let mut out = Vec::new();
    while at + 16 <= file.len() {
        let name = [file[at], file[at + 1], file[at + 2], file[at + 3]];
        let word = |i: usize| u32::from_le_bytes(file[at + i..at + i + 4].try_into().unwrap());
        out.push((at, name));
        let stored = if word(4) == 0 { word(8) } else { word(4) };
        at += 16 + stored as usize;
    }
    out
}

fn chunk(file: &[u8], name: &[u8; 4]) -> usize {
    chunks(file)
        .into_iter()
        .find(|(_, n)| n == name)
        .unwrap_or_else(|| panic!("no {name:?} chunk"))
        .0
}

#[test]
fn the_valid_files_load() {
    for (name, format, bytes) in FILES.iter() {
        if let Err(e) = read_scene_bytes(bytes.clone(), *format, name) {
            panic!("{e}");
        }
    }
}

#[test]
fn r10_11_chunk_reserved_field_is_an_error() {
    let mut f = binary(CompressionType::Lz4);
    let at = chunk(&f, b"INST");
    f[at + 12] = 7;
    let e = error("bad.rbxl", SceneFormat::Binary, f);
    assert!(e.contains("reserved field is 7"), "{e}");
    assert!(e.contains("(INST)"), "{e}");
}

#[test]
fn r10_11_short_compressed_chunk_is_an_error() {
    // rbx_binary reads the first 4 bytes of a compressed chunk to tell LZ4 from ZSTD.
    let mut f = binary(CompressionType::Lz4);
    let at = chunk(&f, b"PRNT");
    let len = u32::from_le_bytes(f[at + 4..at + 8].try_into().unwrap()) as usize;
    f[at + 4..at + 8].copy_from_slice(&2u32.to_le_bytes());
    f.drain(at + 16 + 2..at + 16 + len);
    let e = error("short.rbxl", SceneFormat::Binary, f);
    assert!(e.contains("too short"), "{e}");
}

#[test]
fn r10_11_truncated_files_are_errors() {
    let f = binary(CompressionType::None);
    for len in [0, 10, 31, 32, 40, f.len() / 2, f.len() - 1] {
        let e = error("cut.rbxm", SceneFormat::Binary, f[..len].to_vec());
        assert!(
            e.starts_with("cut.rbxm: not a valid binary Roblox file: "),
            "{e}"
        );
    }
}

#[test]
fn r10_11_wrong_uncompressed_length_is_an_error() {
    // The header of a compressed chunk claims more bytes than its data expands to.
    let mut f = binary(CompressionType::Lz4);
    let at = chunk(&f, b"PROP");
    let len = u32::from_le_bytes(f[at + 8..at + 12].try_into().unwrap());
    f[at + 8..at + 12].copy_from_slice(&(len + 1).to_le_bytes());
    let e = error("len.rbxl", SceneFormat::Binary, f);
    assert!(e.contains("decompresses to"), "{e}");
}

#[test]
fn r10_11_huge_counts_are_errors_not_allocations() {
    // In an uncompressed file the counts are plain bytes: make each one 2^32 - 1.
    let f = binary(CompressionType::None);
    // INST: class id, class name (u32 length + bytes), format byte, instance count.
    let at = chunk(&f, b"INST") + 16;
    let name_len = u32::from_le_bytes(f[at + 4..at + 8].try_into().unwrap()) as usize;
    let mut g = f.clone();
    let count = at + 8 + name_len + 1;
    g[count..count + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = error("count.rbxm", SceneFormat::Binary, g);
    assert!(e.contains("referents need"), "{e}");
    // PRNT: version byte, instance count.
    let mut g = f.clone();
    let at = chunk(&f, b"PRNT") + 16;
    g[at + 1..at + 5].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = error("prnt.rbxm", SceneFormat::Binary, g);
    assert!(e.contains("child and parent referents"), "{e}");
    // The header's instance count (a capacity rbx_binary allocates up front) is ignored.
    let mut g = f.clone();
    g[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(load("header.rbxm", SceneFormat::Binary, g));
}

#[test]
fn r10_11_huge_keypoint_count_in_a_property_is_an_error() {
    let f = binary(CompressionType::None);
    // Find the ParticleEmitter's Transparency PROP chunk and its first keypoint count.
    let needle = b"Transparency";
    let at = f
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("Transparency property");
    let mut g = f.clone();
    // Name bytes, then the type byte (0x15), then the first value's keypoint count.
    assert_eq!(g[at + needle.len()], 0x15);
    let count = at + needle.len() + 1;
    g[count..count + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = error("seq.rbxm", SceneFormat::Binary, g);
    assert!(e.contains("Transparency") && e.contains("keypoints"), "{e}");
}

/// The attribute blob of the scene's model, and where it starts in `file`.
fn attribute_blob(file: &[u8]) -> (usize, Vec<u8>) {
    let needle = b"AttributesSerialize";
    let at = file
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("AttributesSerialize property")
        + needle.len()
        + 1;
    let len = u32::from_le_bytes(file[at..at + 4].try_into().unwrap()) as usize;
    (at + 4, file[at + 4..at + 4 + len].to_vec())
}

#[test]
fn r10_11_corrupt_attribute_blob_is_an_error() {
    let f = binary(CompressionType::None);
    let (start, blob) = attribute_blob(&f);
    assert_eq!(check_attributes(&blob), Ok(()));
    // The "Fade" NumberSequence's keypoint count: after the name, the type 0x17.
    let name = blob.windows(4).position(|w| w == b"Fade").unwrap();
    assert_eq!(blob[name + 4], 0x17);
    let mut g = f.clone();
    let count = start + name + 5;
    g[count..count + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = error("attrs.rbxl", SceneFormat::Binary, g);
    assert!(
        e.contains("attribute 'Fade'") && e.contains("keypoints"),
        "{e}"
    );

    // The same blob in an XML file.
    let mut bad = blob.clone();
    bad[name + 5..name + 9].copy_from_slice(&u32::MAX.to_le_bytes());
    let x = String::from_utf8(xml()).unwrap();
    let good = base64(&blob);
    assert!(x.contains(&good), "the XML file holds the same blob");
    let x = x.replace(&good, &base64(&bad));
    let e = error("attrs.rbxlx", SceneFormat::Xml, x.into_bytes());
    assert!(
        e.contains("AttributesSerialize") && e.contains("keypoints"),
        "{e}"
    );
}

#[test]
fn r10_11_engine_load_names_the_file() {
    let dir = procmodel_testkit::scratch("corrupt");
    let path = dir.join("broken.rbxl");
    let mut f = binary(CompressionType::Lz4);
    let at = chunk(&f, b"PROP");
    f[at + 12] = 1;
    std::fs::write(&path, &f).unwrap();
    let e = Engine::load(procmodel_luau::runtime(), &path, EngineConfig::default())
        .err()
        .expect("an error");
    let text = e.to_string();
    assert!(text.starts_with(&format!("{}: ", path.display())), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One corruption of a file.
#[derive(Debug, Clone)]
enum Damage {
    /// XOR the byte at (position mod len) with a non-zero mask.
    Flip(usize, u8),
    /// Keep only the first (n mod len) bytes.
    Truncate(usize),
    /// Insert bytes at (position mod len).
    Insert(usize, Vec<u8>),
    /// Overwrite 4 bytes at (position mod len) with a count-like value.
    Count(usize, u32),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        4 => (any::<usize>(), 1u8..=255).prop_map(|(p, m)| Damage::Flip(p, m)),
        1 => any::<usize>().prop_map(Damage::Truncate),
        1 => (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(p, b)| Damage::Insert(p, b)),
        2 => (
            any::<usize>(),
            prop_oneof![
                Just(0u32),
                Just(1),
                Just(u32::MAX),
                Just(i32::MAX as u32),
                Just(1 << 16),
                Just(1 << 24),
                any::<u32>()
            ]
        )
            .prop_map(|(p, v)| Damage::Count(p, v)),
    ]
}

fn apply(mut bytes: Vec<u8>, damages: &[Damage]) -> Vec<u8> {
    for d in damages {
        let len = bytes.len().max(1);
        match d {
            Damage::Flip(p, m) => {
                if let Some(b) = bytes.get_mut(p % len) {
                    *b ^= m;
                }
            }
            Damage::Truncate(n) => bytes.truncate(n % len),
            Damage::Insert(p, b) => {
                let at = (p % len).min(bytes.len());
                bytes.splice(at..at, b.iter().copied());
            }
            Damage::Count(p, v) => {
                let at = p % len;
                for (i, b) in v.to_le_bytes().into_iter().enumerate() {
                    if let Some(x) = bytes.get_mut(at + i) {
                        *x = b;
                    }
                }
            }
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// 256 cases × the files above: each damaged file loads or is an error naming it, never a panic.
    #[test]
    fn r10_14_damaged_files_never_panic(damages in prop::collection::vec(damage(), 1..4)) {
        for (name, format, bytes) in FILES.iter() {
            load(name, *format, apply(bytes.clone(), &damages));
        }
    }

    /// Damaged attribute blobs: the check never panics, and a blob it accepts decodes.
    #[test]
    fn r10_14_damaged_attribute_blobs(damages in prop::collection::vec(damage(), 1..4)) {
        let (_, blob) = attribute_blob(&FILES[2].2);
        let bad = apply(blob, &damages);
        if check_attributes(&bad).is_ok() {
            prop_assert!(Attributes::from_reader(bad.as_slice()).is_ok());
        }
    }
}
