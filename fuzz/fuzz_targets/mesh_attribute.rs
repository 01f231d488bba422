//! Fuzz target: the mesh a MeshPart built from an EditableMesh carries (`procmodel_mesh`).
//! Decoding never panics; a mesh it accepts encodes back to the same bytes and exports to a
//! glTF without panicking (the exporter trusts what `decode` accepted).

#![no_main]

use libfuzzer_sys::fuzz_target;
use procmodel_mesh::TriangleMesh;
use rbx_dom_weak::{InstanceBuilder, WeakDom};

fuzz_target!(|data: &[u8]| {
    let Ok(mesh) = TriangleMesh::decode(data) else {
        return;
    };
    assert_eq!(mesh.encode(), data);
    let mut attributes = rbx_types::Attributes::new();
    attributes.insert(procmodel_mesh::ATTRIBUTE.to_owned(), mesh.to_attribute().into());
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let part = dom.insert(
        root,
        InstanceBuilder::new("MeshPart")
            .with_property("Size", rbx_types::Vector3::new(2.0, 3.0, 4.0))
            .with_property("Attributes", attributes),
    );
    let _ = procmodel_export::to_glb(&dom, &[part], &procmodel_export::ExportOptions::default());
});
