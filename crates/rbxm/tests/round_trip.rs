//! rbx_binary reads our bytes back to the same tree: names, classes,
//! hierarchy and the property values it reads for the written ones.

mod common;

use common::{ours, parts_dom};
use rbx_dom_weak::{
    InstanceBuilder, WeakDom,
    types::{Color3, Color3uint8, Ref, Variant},
};

/// Asserts `b`'s subtree at `rb` mirrors `a`'s at `ra`.
fn same_tree(a: &WeakDom, ra: Ref, b: &WeakDom, rb: Ref) {
    let (ia, ib) = (a.get_by_ref(ra).unwrap(), b.get_by_ref(rb).unwrap());
    assert_eq!(ia.name, ib.name);
    assert_eq!(ia.class, ib.class);
    for (name, value) in &ia.properties {
        let read = ib
            .properties
            .get(name)
            .or_else(|| match name.as_str() {
                "Size" => ib.properties.get(&"size".into()),
                "Color" => ib.properties.get(&"Color3uint8".into()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{}.{name} missing after the round trip", ia.name));
        match (value, read) {
            (Variant::Color3(c), Variant::Color3uint8(r)) => assert_eq!(Color3uint8::from(*c), *r),
            (Variant::Color3(c), Variant::Color3(r)) => {
                assert_eq!(Color3uint8::from(*c), Color3uint8::from(*r))
            }
            _ => assert_eq!(value, read, "{}.{name}", ia.name),
        }
    }
    assert_eq!(ia.children().len(), ib.children().len());
    for (&ca, &cb) in ia.children().iter().zip(ib.children()) {
        same_tree(a, ca, b, cb);
    }
}

#[test]
fn parts_round_trip() {
    let (dom, model) = parts_dom(500);
    let bytes = ours(&dom, &[model]).unwrap();
    let back = rbx_binary::from_reader(bytes.as_slice()).unwrap();
    let roots = back.root().children();
    assert_eq!(roots.len(), 1);
    same_tree(&dom, model, &back, roots[0]);
}

#[test]
fn nested_round_trip_with_refs() {
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let model = dom.insert(dom.root_ref(), InstanceBuilder::new("Model").with_name("M"));
    let folder = dom.insert(model, InstanceBuilder::new("Folder").with_name("F"));
    let part = dom.insert(
        folder,
        InstanceBuilder::new("Part")
            .with_name("P")
            .with_property("Anchored", true)
            .with_property("Color", Color3::new(0.0, 1.0, 0.0)),
    );
    dom.insert(
        folder,
        InstanceBuilder::new("StringValue")
            .with_name("S")
            .with_property("Value", "hello"),
    );
    dom.get_by_ref_mut(model)
        .unwrap()
        .properties
        .insert("PrimaryPart".into(), Variant::Ref(part));

    let bytes = ours(&dom, &[model]).unwrap();
    let back = rbx_binary::from_reader(bytes.as_slice()).unwrap();
    let m = back.root().children()[0];
    let primary = match back
        .get_by_ref(m)
        .unwrap()
        .properties
        .get(&"PrimaryPart".into())
    {
        Some(Variant::Ref(r)) => *r,
        other => panic!("PrimaryPart read back as {other:?}"),
    };
    assert_eq!(back.get_by_ref(primary).unwrap().name, "P");
    let f = back.get_by_ref(m).unwrap().children()[0];
    assert_eq!(back.get_by_ref(f).unwrap().children().len(), 2);
    assert_eq!(
        back.get_by_ref(back.get_by_ref(f).unwrap().children()[1])
            .unwrap()
            .name,
        "S"
    );
}
