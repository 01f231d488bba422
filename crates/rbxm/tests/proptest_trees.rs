//! Random trees (classes from a small set, random subsets of properties with
//! random values, some unknown to the database) must give rbx_binary's bytes.

mod common;

use common::{assert_same, ours, theirs};
use proptest::prelude::*;
use rbx_dom_weak::{
    InstanceBuilder, WeakDom,
    types::{
        BrickColor, CFrame, Color3, Enum, Matrix3, Ref, SharedString, UDim, UDim2, Variant, Vector3,
    },
};

#[derive(Debug, Clone)]
struct Node {
    class: usize,
    name: String,
    props: Vec<(usize, u32)>,
    children: Vec<Node>,
}

const CLASSES: &[&str] = &["Part", "Model", "Folder", "TextLabel", "MeshPart", "Madeup"];
const PROPS: &[&str] = &[
    "Size",
    "CFrame",
    "Color",
    "BrickColor",
    "Anchored",
    "Transparency",
    "Material",
    "Custom",
    "Text",
    "PhysicalConfigData",
    "PrimaryPart",
    "TextSize",
    "Name",
    "size",
    "Position",
];

fn value(prop: usize, seed: u32, refs: &[Ref]) -> Variant {
    let f = (seed % 1000) as f32 / 7.0;
    match PROPS[prop] {
        "Size" | "size" => Vector3::new(f, 1.0, 2.0).into(),
        "CFrame" => {
            let (s, c) = f.sin_cos();
            let m = if seed.is_multiple_of(3) {
                Matrix3::identity()
            } else {
                Matrix3::new(
                    Vector3::new(c, -s, 0.0),
                    Vector3::new(s, c, 0.0),
                    Vector3::new(0.0, 0.0, 1.0),
                )
            };
            CFrame::new(Vector3::new(f, -f, 0.5), m).into()
        }
        "Color" => Color3::new(f / 200.0, 0.5, 1.0).into(),
        "BrickColor" => BrickColor::from_number((seed % 3) as u16 + 1)
            .unwrap_or(BrickColor::White)
            .into(),
        "Anchored" => seed.is_multiple_of(2).into(),
        "Transparency" | "TextSize" => f.into(),
        "Material" => Enum::from_u32(256 + (seed % 4) * 16).into(),
        "Custom" => Variant::Int32(seed as i32),
        "Text" | "Name" => format!("t{seed}").into(),
        "PhysicalConfigData" => SharedString::new(vec![(seed % 4) as u8; 3]).into(),
        "PrimaryPart" => refs
            .get(seed as usize % (refs.len() + 1))
            .copied()
            .unwrap_or_else(Ref::none)
            .into(),
        "Position" => UDim2::new(UDim::new(f, 1), UDim::new(0.0, seed as i32)).into(),
        _ => unreachable!(),
    }
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = (
        0..CLASSES.len(),
        "[a-z]{0,3}",
        prop::collection::vec((0..PROPS.len(), any::<u32>()), 0..5),
    )
        .prop_map(|(class, name, props)| Node {
            class,
            name,
            props,
            children: vec![],
        });
    leaf.prop_recursive(4, 40, 5, |inner| {
        (
            0..CLASSES.len(),
            "[a-z]{0,3}",
            prop::collection::vec((0..PROPS.len(), any::<u32>()), 0..5),
            prop::collection::vec(inner, 0..5),
        )
            .prop_map(|(class, name, props, children)| Node {
                class,
                name,
                props,
                children,
            })
    })
}

/// Builds the tree, then sets properties (Refs may point anywhere in it).
fn build(root: &Node) -> (WeakDom, Ref) {
    fn insert(dom: &mut WeakDom, parent: Ref, node: &Node, all: &mut Vec<(Ref, Node)>) -> Ref {
        let r = dom.insert(
            parent,
            InstanceBuilder::new(CLASSES[node.class]).with_name(node.name.clone()),
        );
        all.push((r, node.clone()));
        for child in &node.children {
            insert(dom, r, child, all);
        }
        r
    }
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let mut all = vec![];
    let dom_root = dom.root_ref();
    let top = insert(&mut dom, dom_root, root, &mut all);
    let refs: Vec<Ref> = all.iter().map(|(r, _)| *r).collect();
    for (r, node) in &all {
        let instance = dom.get_by_ref_mut(*r).unwrap();
        for &(prop, seed) in &node.props {
            instance
                .properties
                .insert(PROPS[prop].into(), value(prop, seed, &refs));
        }
    }
    (dom, top)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn random_trees_match_rbx_binary(root in node()) {
        let (dom, top) = build(&root);
        match theirs(&dom, &[top]) {
            Ok(_) => { assert_same(&dom, &[top]); }
            Err(e) => {
                // Type clashes (e.g. a Ref in Name's sibling columns) fail both ways alike.
                prop_assert_eq!(ours(&dom, &[top]).unwrap_err().to_string(), e.to_string());
            }
        }
        let children = dom.get_by_ref(top).unwrap().children().to_vec();
        if theirs(&dom, &children).is_ok() {
            assert_same(&dom, &children);
        }
    }
}
