//! Shared by the tests, the benchmark and the memory example: the benchmark
//! DOM and the byte-for-byte comparison with rbx_binary.
#![allow(dead_code)]

use rbx_dom_weak::{
    InstanceBuilder, WeakDom,
    types::{CFrame, Color3, Enum, Matrix3, Ref, Vector3},
};

/// The benchmark shape: a DataModel with a Workspace holding a Model of `n`
/// Parts (Name, Size, rotated CFrame, Color as Color3 — what the Luau host
/// stores, the database's declared type — Material, Anchored). Returns the
/// DOM and the Model's referent.
pub fn parts_dom(n: usize) -> (WeakDom, Ref) {
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let workspace = dom.insert(dom.root_ref(), InstanceBuilder::new("Workspace"));
    let model = dom.insert(workspace, InstanceBuilder::new("Model").with_name("Parts"));
    dom.reserve(n);
    for i in 0..n {
        let f = i as f32;
        let angle = f * 0.013;
        let (s, c) = angle.sin_cos();
        let rotation = Matrix3::new(
            Vector3::new(c, 0.0, s),
            Vector3::new(0.0, 1.0, 0.0),
            Vector3::new(-s, 0.0, c),
        );
        let position = Vector3::new(
            (i % 100) as f32 * 4.0,
            (i / 10_000) as f32 * 2.0,
            ((i / 100) % 100) as f32 * 4.0,
        );
        dom.insert(
            model,
            InstanceBuilder::with_property_capacity("Part", 5)
                .with_name(format!("Part{i}"))
                .with_property(
                    "Size",
                    Vector3::new(1.0 + (i % 7) as f32, 1.0, 2.0 + (i % 3) as f32),
                )
                .with_property("CFrame", CFrame::new(position, rotation))
                .with_property("Color", Color3::new((i % 255) as f32 / 255.0, 0.5, 0.25))
                .with_property(
                    "Material",
                    Enum::from_u32(if i % 2 == 0 { 256 } else { 272 }),
                )
                .with_property("Anchored", i % 5 != 0),
        );
    }
    (dom, model)
}

/// Our bytes, checked to be the same when the PROP chunks are encoded on two threads (the
/// same error too, on a failure).
pub fn ours(dom: &WeakDom, refs: &[Ref]) -> Result<Vec<u8>, procmodel_rbxm::Error> {
    let mut out = Vec::new();
    let result = procmodel_rbxm::to_writer(&mut out, dom, refs);
    let mut two = Vec::new();
    let two_result = procmodel_rbxm::to_writer_helper_first(&mut two, dom, refs);
    match (&result, &two_result) {
        (Ok(()), Ok(())) => assert!(out == two, "two threads wrote other bytes"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "two threads, another error"),
        _ => panic!("one thread: {result:?}, two threads: {two_result:?}"),
    }
    result?;
    Ok(out)
}

pub fn theirs(dom: &WeakDom, refs: &[Ref]) -> Result<Vec<u8>, rbx_binary::EncodeError> {
    let mut out = Vec::new();
    rbx_binary::to_writer(&mut out, dom, refs)?;
    Ok(out)
}

/// The chunks of a binary file, decompressed: (name, data).
pub fn chunks(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = 32;
    while at + 16 <= bytes.len() {
        let name = String::from_utf8_lossy(&bytes[at..at + 4]).into_owned();
        let word =
            |k: usize| u32::from_le_bytes(bytes[at + k..at + k + 4].try_into().unwrap()) as usize;
        let (compressed, len) = (word(4), word(8));
        at += 16;
        let data = if compressed == 0 {
            let d = bytes[at..at + len].to_vec();
            at += len;
            d
        } else {
            let d = lz4_flex::block::decompress(&bytes[at..at + compressed], len).unwrap();
            at += compressed;
            d
        };
        out.push((name, data));
    }
    out
}

/// Asserts our bytes equal rbx_binary's; on a difference, names the first
/// differing chunk to make the failure readable.
pub fn assert_same(dom: &WeakDom, refs: &[Ref]) -> Vec<u8> {
    let expected = theirs(dom, refs).expect("rbx_binary writes this DOM");
    let actual = ours(dom, refs).expect("we write this DOM");
    if actual != expected {
        assert_eq!(
            actual[..32.min(actual.len())],
            expected[..32.min(expected.len())],
            "header differs"
        );
        let (a, e) = (chunks(&actual), chunks(&expected));
        for (k, (a, e)) in a.iter().zip(&e).enumerate() {
            assert_eq!(a.0, e.0, "chunk {k} name differs");
            assert_eq!(a.1, e.1, "chunk {k} ({}) differs", a.0);
        }
        assert_eq!(a.len(), e.len(), "chunk count differs");
        panic!("bytes differ but chunks are equal (compression?)");
    }
    actual
}
