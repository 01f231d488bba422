//! The content hash: one value for a tree in memory and reloaded from `.rbxm` and `.rbxmx`,
//! independent of referents; any single change of a property, name or child order changes it.

use procmodel_dom::hash::{children_hash, content_hash, first_difference};
use proptest::prelude::*;
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use rbx_types::{
    Attributes, CFrame, Color3, Enum, Matrix3, NumberRange, Ref, Tags, UDim, UDim2, Variant,
    Vector3,
};

/// A generation-like tree: parts with rotations, unquantised colours, enums, attributes, tags,
/// a model with a PrimaryPart, a weld and an ObjectValue pointing at the root.
fn sample(seed: u32) -> (WeakDom, Ref) {
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    dom.insert(
        dom.root_ref(),
        InstanceBuilder::new("Folder").with_name("Elsewhere"),
    );
    let root = dom.insert(
        dom.root_ref(),
        InstanceBuilder::new("Model").with_name("Result"),
    );
    let mut parts = Vec::new();
    for i in 0..6u32 {
        let f = (seed.wrapping_mul(31).wrapping_add(i) % 97) as f32 / 7.0;
        let mut attrs = Attributes::new();
        attrs.insert("Index".into(), Variant::Float64(i as f64));
        attrs.insert("Label".into(), Variant::String(format!("p{i}")));
        attrs.insert(
            "Range".into(),
            Variant::NumberRange(NumberRange::new(0.0, f)),
        );
        let mut tags = Tags::new();
        tags.push("generated");
        let p = dom.insert(
            root,
            InstanceBuilder::new("Part")
                .with_name(format!("Step{i}"))
                .with_property("Size", Vector3::new(4.0, 1.0 + f, 2.0))
                .with_property(
                    "CFrame",
                    CFrame::new(
                        Vector3::new(f, -0.0, i as f32),
                        Matrix3::new(
                            Vector3::new(0.0, 0.0, 1.0),
                            Vector3::new(0.0, 1.0, 0.0),
                            Vector3::new(-1.0, 0.0, 0.0),
                        ),
                    ),
                )
                .with_property("Color", Color3::new(0.123, 0.5, f / 20.0))
                .with_property("Anchored", true)
                .with_property("Transparency", 0.25f32)
                .with_property("Material", Enum::from_u32(512))
                .with_property("Attributes", attrs)
                .with_property("Tags", tags),
        );
        parts.push(p);
    }
    let inner = dom.insert(
        root,
        InstanceBuilder::new("Model")
            .with_name("Inner")
            .with_property("PrimaryPart", Variant::Ref(parts[0])),
    );
    dom.insert(
        inner,
        InstanceBuilder::new("WeldConstraint")
            .with_property("Part0", Variant::Ref(parts[1]))
            .with_property("Part1", Variant::Ref(parts[2])),
    );
    dom.insert(
        inner,
        InstanceBuilder::new("ObjectValue")
            .with_name("Out")
            .with_property("Value", Variant::Ref(root)),
    );
    dom.insert(
        inner,
        InstanceBuilder::new("Frame")
            .with_property("Size", UDim2::new(UDim::new(0.5, 10), UDim::new(0.0, 0))),
    );
    (dom, root)
}

fn reload_binary(dom: &WeakDom, root: Ref) -> (WeakDom, Ref) {
    let mut bytes = Vec::new();
    rbx_binary::to_writer(&mut bytes, dom, &[root]).unwrap();
    let back = rbx_binary::from_reader(bytes.as_slice()).unwrap();
    let r = back.root().children()[0];
    (back, r)
}

fn reload_xml(dom: &WeakDom, root: Ref) -> (WeakDom, Ref) {
    let mut bytes = Vec::new();
    rbx_xml::to_writer_default(&mut bytes, dom, &[root]).unwrap();
    let back = rbx_xml::from_reader_default(bytes.as_slice()).unwrap();
    let r = back.root().children()[0];
    (back, r)
}

/// The first instance named `name` under `root`.
fn named(dom: &WeakDom, root: Ref, name: &str) -> Ref {
    dom.descendants_of(root)
        .find(|i| i.name == name)
        .map(|i| i.referent())
        .unwrap_or_else(|| panic!("no {name}"))
}

/// Points the ObjectValue `r` at `target`.
fn set_value(dom: &mut WeakDom, r: Ref, target: Ref) {
    dom.get_by_ref_mut(r)
        .unwrap()
        .properties
        .insert("Value".into(), Variant::Ref(target));
}

#[test]
fn r14_1_same_hash_in_memory_rbxm_and_rbxmx() {
    let (dom, root) = sample(3);
    let memory = content_hash(&dom, root);
    let (b, br) = reload_binary(&dom, root);
    let (x, xr) = reload_xml(&dom, root);
    for (other, r, format) in [(&b, br, "rbxm"), (&x, xr, "rbxmx")] {
        assert_eq!(
            first_difference(&dom, root, other, r),
            None,
            "{format} reloaded differs"
        );
        assert_eq!(content_hash(other, r), memory, "{format} content hash");
        assert_eq!(
            children_hash(other, r),
            children_hash(&dom, root),
            "{format}"
        );
    }
    // The binary file saved again from the reloaded tree: still the same hash.
    let (bb, bbr) = reload_binary(&x, xr);
    assert_eq!(content_hash(&bb, bbr), memory);
}

#[test]
fn r14_1_independent_of_referents() {
    let (a, ar) = sample(5);
    let (b, br) = sample(5);
    assert_ne!(ar, br, "fresh referents");
    assert_eq!(content_hash(&a, ar), content_hash(&b, br));
    assert_ne!(
        content_hash(&a, ar),
        content_hash(&sample(6).0, sample(6).1)
    );
}

#[test]
fn r14_1_refs_inside_outside_and_none_differ() {
    let (mut dom, root) = sample(1);
    let before = content_hash(&dom, root);
    let out = named(&dom, root, "Out");
    set_value(&mut dom, out, Ref::none());
    let none = content_hash(&dom, root);
    assert_ne!(none, before);
    // A file cannot hold a reference outside what it holds: in memory it is its own value.
    let elsewhere = dom.root().children()[0];
    set_value(&mut dom, out, elsewhere);
    assert_ne!(content_hash(&dom, root), none);
    assert_ne!(content_hash(&dom, root), before);
}

/// Studio does not save an instance whose `Archivable` is false: the files we write leave it
/// out with its subtree and write references to it as none, and the hash of the tree in
/// memory is the hash of what the files give back (and of the tree built without it).
#[test]
fn non_archivable_instances_are_not_saved_and_not_hashed() {
    let (mut dom, root) = sample(2);
    let without = {
        let (mut d, r) = sample(2);
        let out = named(&d, r, "Out");
        set_value(&mut d, out, Ref::none());
        content_hash(&d, r)
    };
    // A temporary instance with a child, and the ObjectValue pointing under it.
    let temp = dom.insert(
        root,
        InstanceBuilder::new("Part")
            .with_name("Temp")
            .with_property("Archivable", false),
    );
    let under = dom.insert(temp, InstanceBuilder::new("Part").with_name("UnderTemp"));
    let out = named(&dom, root, "Out");
    set_value(&mut dom, out, under);
    let memory = content_hash(&dom, root);
    assert_eq!(
        memory, without,
        "the left-out subtree and the reference into it"
    );

    let mut binary = Vec::new();
    procmodel_dom::encode_binary(&mut binary, &dom, &[root]).unwrap();
    let mut xml = Vec::new();
    procmodel_dom::encode_xml(&mut xml, &dom, &[root]).unwrap();
    let text = String::from_utf8(xml.clone()).unwrap();
    assert!(
        !text.contains("Temp"),
        "the XML file holds no non-archivable instance"
    );
    assert!(text.contains(r#"<Ref name="Value">null</Ref>"#), "{text}");
    let b = procmodel_dom::decode_binary(binary.as_slice()).unwrap();
    let x = procmodel_dom::decode_xml(xml.as_slice()).unwrap();
    for (back, format) in [(&b, "rbxm"), (&x, "rbxmx")] {
        let r = back.root().children()[0];
        assert!(
            back.descendants_of(r).all(|i| !i.name.contains("Temp")),
            "{format}"
        );
        let value = back
            .descendants_of(r)
            .find(|i| i.name == "Out")
            .unwrap()
            .properties[&"Value".into()]
            .clone();
        assert_eq!(value, Variant::Ref(Ref::none()), "{format}");
        assert_eq!(content_hash(back, r), memory, "{format} content hash");
        assert_eq!(first_difference(&dom, root, back, r), None, "{format}");
    }
    // The tree itself is untouched by saving.
    assert!(dom.get_by_ref(temp).is_some());
}

/// One single edit of a tree.
#[derive(Debug, Clone)]
enum Edit {
    /// Adds `delta` to one part's Size.Y.
    Size(usize, f32),
    Rename(usize),
    /// Swaps two children of the root.
    Swap(usize, usize),
    /// Sets an attribute to another value.
    Attribute(usize, f64),
    Transparency(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (
            0..6usize,
            prop_oneof![
                Just(0.5f32),
                Just(1e-3),
                Just(-2.0),
                Just(f32::EPSILON * 8.0)
            ]
        )
            .prop_map(|(i, d)| Edit::Size(i, d)),
        (0..6usize).prop_map(Edit::Rename),
        (0..7usize, 0..7usize)
            .prop_filter("two different children", |(a, b)| a != b)
            .prop_map(|(a, b)| Edit::Swap(a, b)),
        (0..6usize, 100.0..200.0f64).prop_map(|(i, v)| Edit::Attribute(i, v)),
        (0..6usize).prop_map(Edit::Transparency),
    ]
}

proptest! {
    #[test]
    fn r14_1_any_single_change_changes_the_hash(seed in 0u32..1000, e in edit()) {
        let (mut dom, root) = sample(seed);
        let before = content_hash(&dom, root);
        let children = dom.get_by_ref(root).unwrap().children().to_vec();
        match e {
            Edit::Size(i, d) => {
                let p = dom.get_by_ref_mut(children[i]).unwrap();
                if let Some(Variant::Vector3(s)) = p.properties.get_mut(&"Size".into()) {
                    s.y += d;
                }
            }
            Edit::Rename(i) => dom.get_by_ref_mut(children[i]).unwrap().name.push('x'),
            Edit::Swap(a, b) => {
                // Re-parent in a new order: a's and b's places exchanged.
                let mut order = children.clone();
                order.swap(a, b);
                for c in order {
                    dom.transfer_within(c, root);
                }
            }
            Edit::Attribute(i, v) => {
                let p = dom.get_by_ref_mut(children[i]).unwrap();
                if let Some(Variant::Attributes(a)) = p.properties.get_mut(&"Attributes".into()) {
                    a.insert("Index".into(), Variant::Float64(v));
                }
            }
            Edit::Transparency(i) => {
                dom.get_by_ref_mut(children[i])
                    .unwrap()
                    .properties
                    .insert("Transparency".into(), Variant::Float32(0.75));
            }
        }
        let after = content_hash(&dom, root);
        prop_assert_ne!(before, after);
        let (fresh, fresh_root) = sample(seed);
        prop_assert!(first_difference(&dom, root, &fresh, fresh_root).is_some());
    }
}

/// A Content value whose source is an object (runtime state, such as an EditableImage) has no
/// XML form: rbx_xml panics on one. An XML save writes it as none instead, and a binary save
/// keeps it.
#[test]
fn an_xml_save_writes_object_content_as_none() {
    use rbx_types::Content;
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let label = dom.insert(root, InstanceBuilder::new("ImageLabel").with_name("Source"));
    let by_object = dom.insert(
        root,
        InstanceBuilder::new("ImageLabel")
            .with_name("ByObject")
            .with_property("ImageContent", Content::from_referent(label)),
    );
    let by_uri = dom.insert(
        root,
        InstanceBuilder::new("ImageLabel")
            .with_name("ByUri")
            .with_property("ImageContent", Content::from_uri("rbxassetid://7")),
    );
    let roots = [label, by_object, by_uri];
    let mut xml = Vec::new();
    procmodel_dom::encode_xml(&mut xml, &dom, &roots).unwrap();
    let back = procmodel_dom::decode_xml(xml.as_slice()).unwrap();
    let content = |d: &WeakDom, name: &str| {
        d.descendants()
            .find(|i| i.name == name)
            .and_then(|i| i.properties.get(&"ImageContent".into()).cloned())
    };
    assert_eq!(
        content(&back, "ByObject"),
        Some(Variant::Content(Content::none()))
    );
    assert_eq!(
        content(&back, "ByUri"),
        Some(Variant::Content(Content::from_uri("rbxassetid://7")))
    );
    // The tree itself is unchanged.
    assert_eq!(
        content(&dom, "ByObject"),
        Some(Variant::Content(Content::from_referent(label)))
    );
}
