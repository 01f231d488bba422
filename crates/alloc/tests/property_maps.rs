//! The pools serve what they exist for: an rbx_dom_weak property map of a typical Part.
//! (One test: the pool counters are process-wide.)

use procmodel_alloc::{Allocator, pool_stats};
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use rbx_types::{CFrame, Color3, Variant, Vector3};

#[global_allocator]
static GLOBAL: Allocator = Allocator;

fn in_use(slot: usize) -> usize {
    pool_stats()
        .into_iter()
        .find(|s| s.0 == slot)
        .map(|s| s.1)
        .expect("a class with this slot size")
}

#[test]
fn a_parts_property_map_lives_in_the_672_byte_class_and_its_slot_is_reused() {
    let before = in_use(672);
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let parts: Vec<_> = (0..100)
        .map(|i| {
            dom.insert(
                root,
                InstanceBuilder::new("Part")
                    .with_property("Size", Vector3::new(1.0, 2.0, i as f32))
                    .with_property(
                        "CFrame",
                        CFrame::new(
                            Vector3::new(0.0, i as f32, 0.0),
                            rbx_types::Matrix3::identity(),
                        ),
                    )
                    .with_property("Color", Color3::new(0.5, 0.5, 0.5))
                    .with_property("Anchored", true)
                    .with_property("Transparency", 0.5f32),
            )
        })
        .collect();
    assert!(
        in_use(672) >= before + 100,
        "five properties (8 buckets of 80-byte entries) should take a 672-byte slot each: \
         Variant's size or hashbrown's layout changed, update CLASSES"
    );
    // The values are intact.
    let p = dom.get_by_ref(parts[42]).unwrap();
    assert_eq!(
        p.properties.get(&"Size".into()),
        Some(&Variant::Vector3(Vector3::new(1.0, 2.0, 42.0)))
    );
    for r in parts {
        dom.destroy(r);
    }
    let after_free = in_use(672);
    assert!(
        after_free <= before + 1,
        "freed slots go back: {before} -> {after_free}"
    );
    let chunks = pool_stats().into_iter().find(|s| s.0 == 672).unwrap().2;
    // 100 more maps fit in the slots just freed: no new chunk.
    let again: Vec<_> = (0..100)
        .map(|_| {
            let mut m = rbx_dom_weak::UstrMap::<Variant>::default();
            m.reserve(7);
            m
        })
        .collect();
    assert_eq!(
        pool_stats().into_iter().find(|s| s.0 == 672).unwrap().2,
        chunks
    );
    drop(again);
}
