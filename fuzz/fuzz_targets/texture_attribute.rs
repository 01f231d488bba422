//! Fuzz target: the image a MeshPart showing an EditableImage carries
//! (`procmodel_mesh::texture`, a PNG). Decoding any bytes never panics and never gives an
//! image over the size limit; an image it accepts encodes to a PNG that decodes to the same
//! pixels, and a MeshPart carrying it exports to glTF without panicking.

#![no_main]

use libfuzzer_sys::fuzz_target;
use procmodel_mesh::texture::{MAX_SIDE, Texture};
use rbx_dom_weak::{InstanceBuilder, WeakDom};

fuzz_target!(|data: &[u8]| {
    let Ok(texture) = Texture::from_png(data) else {
        return;
    };
    assert!(texture.width >= 1 && texture.width <= MAX_SIDE);
    assert!(texture.height >= 1 && texture.height <= MAX_SIDE);
    assert_eq!(
        texture.rgba.len(),
        texture.width as usize * texture.height as usize * 4
    );
    let again = Texture::from_png(&texture.to_png()).expect("our own PNG decodes");
    assert_eq!(again, texture);
    // A one-triangle mesh with UVs, painted with the image.
    let mesh = procmodel_mesh::TriangleMesh {
        positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]],
        normals: vec![[0.0, 1.0, 0.0]],
        uvs: vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]],
        colors: vec![[1.0; 4]],
        triangles: vec![procmodel_mesh::Triangle {
            vertices: [0, 2, 1],
            normals: [0; 3],
            uvs: [0, 2, 1],
            colors: [0; 3],
        }],
    };
    let mut attributes = rbx_types::Attributes::new();
    attributes.insert(procmodel_mesh::ATTRIBUTE.to_owned(), mesh.to_attribute().into());
    attributes.insert("ProcmodelTexture".to_owned(), texture.to_attribute().into());
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let part = dom.insert(
        root,
        InstanceBuilder::new("MeshPart").with_property("Attributes", attributes),
    );
    let export = procmodel_export::to_glb(&dom, &[part], &procmodel_export::ExportOptions::default())
        .expect("a decoded image exports");
    assert!(export.warnings.is_empty(), "{:?}", export.warnings);
});
