//! Fuzz target: the mesh a MeshPart built from an EditableMesh or a solid-modelling result
//! carries (`procmodel_mesh`). Decoding never panics; a mesh it accepts encodes back to the
//! same bytes, exports to a glTF without panicking (the exporter trusts what `decode`
//! accepted), and goes through solid modelling (any mesh, closed or not) without panicking,
//! giving a mesh that decodes again.

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

    use procmodel_csg::{DAffine3, DVec3, Solid};
    let solid = Solid::from_triangle_mesh(&mesh, DAffine3::IDENTITY, None);
    let cube = procmodel_mesh::shapes::build(
        procmodel_mesh::shapes::Shape::Block,
        glam::Vec3::splat(1.0),
        8,
    );
    let cube = Solid::from_shape(&cube, DAffine3::from_translation(DVec3::splat(0.25)), [1.0; 4]);
    for result in [solid.union(&cube), solid.subtract(&cube), cube.intersect(&solid)] {
        let Ok(result) = result else { continue };
        for body in result.split_apart() {
            let out = body.to_triangle_mesh();
            if out.triangles.len() > procmodel_mesh::MAX_TRIANGLES
                || out.positions.len() > procmodel_mesh::MAX_VERTICES
            {
                continue; // the caller refuses it (Luau: an error naming the count)
            }
            assert_eq!(TriangleMesh::decode(&out.encode()).as_ref(), Ok(&out));
        }
    }
});
