//! Moving subtrees between DOMs without dangling references.

use rbx_dom_weak::{Instance, WeakDom};
use rbx_types::{Ref, Variant};
use rustc_hash::FxHashSet;

/// Moves `roots` (with their descendants) from `src` under `dest_parent` in `dest`, in order.
/// Ref properties that pointed outside the moved set are cleared, so the result can be
/// serialised on its own.
pub fn move_into(src: &mut WeakDom, roots: &[Ref], dest: &mut WeakDom, dest_parent: Ref) {
    move_into_keeping(src, roots, dest, dest_parent, &mut HeldIds::default());
}

/// The `UniqueId`s a destination DOM holds, known across several [`move_into_keeping`] calls
/// into it: the destination is walked once, at the first move that carries UniqueIds, not
/// once per move. Valid while the destination changes only through those calls or by
/// inserting instances without a UniqueId.
#[derive(Debug, Default)]
pub struct HeldIds(Option<FxHashSet<rbx_types::UniqueId>>);

/// [`move_into`], with the destination's UniqueIds kept in `held` from one call to the next
/// (a linker moving many model files into one tree).
pub fn move_into_keeping(
    src: &mut WeakDom,
    roots: &[Ref],
    dest: &mut WeakDom,
    dest_parent: Ref,
    held: &mut HeldIds,
) {
    let mut moved = FxHashSet::default();
    let mut order = Vec::new();
    for &r in roots {
        let mut stack = vec![r];
        while let Some(cur) = stack.pop() {
            if let Some(i) = src.get_by_ref(cur) {
                moved.insert(cur);
                order.push(cur);
                stack.extend(i.children().iter().copied());
            }
        }
    }
    drop_colliding_unique_ids(src, &order, dest, held);
    for &r in roots {
        if src.get_by_ref(r).is_some() {
            src.transfer(r, dest, dest_parent);
        }
    }
    scrub_refs(dest, &order, &moved);
}

/// Takes off the `order` instances of `src` the `UniqueId`s that `dest` holds already, or
/// that an instance before them in `order` holds (the same model file linked twice).
/// rbx_dom_weak replaces a colliding UniqueId on insertion with one made from the clock and
/// a random number, so the same inputs would give other bytes each run;
/// an instance without one is what `Instance.new` makes, and Studio gives it its own when it
/// loads the file (a collision, which would crash Studio, never reaches a file either way).
fn drop_colliding_unique_ids(src: &mut WeakDom, order: &[Ref], dest: &WeakDom, held: &mut HeldIds) {
    let carries = |r: Ref| src.get_by_ref(r).and_then(unique_id);
    if !order.iter().any(|&r| carries(r).is_some()) {
        return;
    }
    // Those moved keep theirs in `held`: they are the destination's from now on.
    let held = held
        .0
        .get_or_insert_with(|| dest.descendants().filter_map(unique_id).collect());
    let colliding: Vec<Ref> = order
        .iter()
        .copied()
        .filter(|&r| carries(r).is_some_and(|u| !held.insert(u)))
        .collect();
    for r in colliding {
        if let Some(inst) = src.get_by_ref_mut(r) {
            inst.properties.remove(&crate::keys::KEYS.unique_id);
        }
    }
}

/// The `UniqueId` `inst` carries, if any.
fn unique_id(inst: &Instance) -> Option<rbx_types::UniqueId> {
    match inst.properties.get(&crate::keys::KEYS.unique_id) {
        Some(Variant::UniqueId(u)) => Some(*u),
        _ => None,
    }
}

/// Clears Ref properties of the `order` instances that point outside `within` (each
/// instance is changed on its own, so the order of the walk never shows in the result).
fn scrub_refs(dom: &mut WeakDom, order: &[Ref], within: &FxHashSet<Ref>) {
    for &r in order {
        if let Some(inst) = dom.get_by_ref_mut(r) {
            for value in inst.properties.values_mut() {
                if let Variant::Ref(target) = value
                    && target.is_some()
                    && !within.contains(target)
                {
                    *target = Ref::none();
                }
            }
        }
    }
}

/// Whether `inst` is archivable: kept when a place or model is saved, and when an ancestor
/// is cloned (`Archivable`, true unless set to false).
pub fn is_archivable(inst: &Instance) -> bool {
    !matches!(
        inst.properties.get(&crate::keys::KEYS.archivable),
        Some(Variant::Bool(false))
    )
}

/// Whether a Roblox file written from `dom` keeps a reference to `target`: not when
/// `target` exists and it or an ancestor is not archivable (the file writes the reference as
/// none). A reference to nothing, or to an instance that no longer exists, is kept as it is.
/// The content hash and the file encoders share this rule.
pub fn keeps_reference(dom: &WeakDom, target: Ref) -> bool {
    let mut r = target;
    while let Some(i) = dom.get_by_ref(r) {
        if !is_archivable(i) {
            return false;
        }
        r = i.parent();
    }
    true
}

/// `Instance:Clone()` below the root's own check: a copy of `r`'s subtree (new referents,
/// no parent, no `UniqueId`s) without the non-archivable descendants and their subtrees.
/// References within the copy point into the copy; references to instances not copied, the
/// left-out ones included, keep their targets, as the reference says.
pub fn clone_archivable(dom: &mut WeakDom, r: Ref) -> Ref {
    // A copy is a new instance: it gets no UniqueId (as `Instance.new` makes one; Studio
    // gives it its own when it loads the file). Cloned with the original's, rbx_dom_weak
    // would replace the colliding id with one made from the clock and a random number, and
    // every run would write other bytes. The ids are taken off the originals for the copy
    // and put back.
    let key = crate::keys::KEYS.unique_id;
    let mut any = false;
    let mut ids = Vec::new();
    preorder(dom, &[r], |m, i| {
        any = any || !is_archivable(i);
        if i.properties.contains_key(&key) {
            ids.push(m);
        }
        true
    });
    let taken: Vec<(Ref, Variant)> = ids
        .into_iter()
        .filter_map(|m| Some((m, dom.get_by_ref_mut(m)?.properties.remove(&key)?)))
        .collect();
    let copy = dom.clone_within(r);
    for (m, id) in taken {
        if let Some(inst) = dom.get_by_ref_mut(m) {
            inst.properties.insert(key, id);
        }
    }
    if !any {
        return copy;
    }
    // The copy has the original's shape: pair them up, noting the copies to leave out and,
    // for each copied instance in them, the original it stands for.
    let mut left_out = Vec::new();
    let mut original_of = rustc_hash::FxHashMap::default();
    let mut stack = vec![(r, copy, false)];
    while let Some((o, c, dropping)) = stack.pop() {
        let (Some(oi), Some(ci)) = (dom.get_by_ref(o), dom.get_by_ref(c)) else {
            continue;
        };
        if dropping {
            original_of.insert(c, o);
        }
        for (&oc, &cc) in oi.children().iter().zip(ci.children()) {
            let drop_here = !dropping && dom.get_by_ref(oc).is_some_and(|i| !is_archivable(i));
            if drop_here {
                left_out.push(cc);
            }
            stack.push((oc, cc, dropping || drop_here));
        }
    }
    for c in left_out {
        dom.destroy(c);
    }
    for_each_value(dom, &[copy], |value| {
        if let Variant::Ref(target) = value
            && let Some(&o) = original_of.get(target)
        {
            *target = o;
        }
    });
    copy
}

/// Calls `f` on every property value of the subtrees of `roots` (each instance is changed
/// on its own, so the order of the walk never shows in the result).
pub(crate) fn for_each_value(dom: &mut WeakDom, roots: &[Ref], mut f: impl FnMut(&mut Variant)) {
    let mut all = Vec::new();
    preorder(dom, roots, |r, _| {
        all.push(r);
        true
    });
    for r in all {
        if let Some(inst) = dom.get_by_ref_mut(r) {
            inst.properties.values_mut().for_each(&mut f);
        }
    }
}

/// `GetFullName`: names from the top ancestor below the DataModel, joined by dots.
pub fn full_name(dom: &WeakDom, r: Ref) -> String {
    let root = dom.root_ref();
    let mut parts = Vec::new();
    let mut cur = r;
    while cur.is_some() && cur != root {
        let Some(i) = dom.get_by_ref(cur) else { break };
        parts.push(i.name.as_str());
        cur = i.parent();
    }
    parts.reverse();
    parts.join(".")
}

/// The part of a scene Roblox renders: a place's Workspace (the root's archivable
/// Workspace child). None for a model file's instances (all of them are shown; a package
/// opened for editing gets a Workspace for the session only, not archivable). Templates in
/// ReplicatedStorage or ServerStorage are not in the world.
pub fn world(dom: &WeakDom) -> Option<Ref> {
    dom.root().children().iter().copied().find(|&r| {
        dom.get_by_ref(r)
            .is_some_and(|i| i.class == "Workspace" && crate::is_archivable(i))
    })
}

/// The scene's `Workspace.Terrain`: the first Terrain child of the root's first Workspace
/// child (where Roblox keeps the one Terrain a place has), if there is one.
pub fn workspace_terrain(dom: &WeakDom) -> Option<&rbx_dom_weak::Instance> {
    let child = |r: Ref, class: &str| {
        dom.get_by_ref(r)?
            .children()
            .iter()
            .copied()
            .find(|&c| dom.get_by_ref(c).is_some_and(|i| i.class == class))
    };
    let workspace = child(dom.root_ref(), "Workspace")?;
    dom.get_by_ref(child(workspace, "Terrain")?)
}

/// A Terrain's water as drawn: its `WaterColor` (sRGB bytes) and opacity, one minus its
/// `WaterTransparency` (the reflection database's defaults where unset, and for `None`: a
/// new Terrain's water).
pub fn terrain_water(terrain: Option<&rbx_dom_weak::Instance>) -> ([u8; 3], f32) {
    let prop = |name: &str| {
        terrain
            .and_then(|t| t.properties.get(&name.into()))
            .or_else(|| crate::db_default("Terrain", name))
    };
    let color = match prop("WaterColor") {
        Some(rbx_types::Variant::Color3(c)) => rbx_types::Color3uint8::from(*c),
        Some(rbx_types::Variant::Color3uint8(c)) => *c,
        _ => rbx_types::Color3uint8::new(12, 84, 92),
    };
    let color = [color.r, color.g, color.b];
    let transparency = match prop("WaterTransparency") {
        Some(rbx_types::Variant::Float32(t)) if t.is_finite() => t.clamp(0.0, 1.0),
        _ => 0.3,
    };
    (color, 1.0 - transparency)
}

/// True when `r` is a descendant of the DataModel root (in the scene, not an orphan).
pub fn in_scene(dom: &WeakDom, r: Ref) -> bool {
    is_within(dom, r, dom.root_ref())
}

/// True when `r` is `ancestor` or one of its descendants.
pub fn is_within(dom: &WeakDom, r: Ref, ancestor: Ref) -> bool {
    let mut cur = r;
    while cur.is_some() {
        if cur == ancestor {
            return true;
        }
        cur = dom
            .get_by_ref(cur)
            .map(|i| i.parent())
            .unwrap_or_else(Ref::none);
    }
    false
}

/// Counts `r` and all of its descendants.
pub fn count_subtree(dom: &WeakDom, r: Ref) -> usize {
    let mut n = 0;
    preorder(dom, &[r], |_, _| {
        n += 1;
        true
    });
    n
}

/// Visits the subtrees of `roots` in pre-order (each instance before its children, children
/// in their order, roots in order; refs that do not resolve are skipped). `visit` returns
/// whether to go into the instance's children. Memory is in the depth of the tree, not its
/// size: a folder of 100,000 parts costs no copy of its child list.
pub fn preorder<'a>(
    dom: &'a WeakDom,
    roots: &'a [Ref],
    mut visit: impl FnMut(Ref, &'a Instance) -> bool,
) {
    let mut stack: Vec<(&'a [Ref], usize)> = vec![(roots, 0)];
    while let Some((list, at)) = stack.last_mut() {
        let Some(&r) = list.get(*at) else {
            stack.pop();
            continue;
        };
        *at += 1;
        if let Some(i) = dom.get_by_ref(r)
            && visit(r, i)
            && !i.children().is_empty()
        {
            stack.push((i.children(), 0));
        }
    }
}

/// A deep copy of the subtree of `r` as a builder that keeps every referent (references
/// into or out of it mean what they meant), leaving out the children `keep_child` refuses
/// (with their subtrees) and the properties `keep_property` refuses.
pub fn copy_with_referents(
    dom: &WeakDom,
    r: Ref,
    keep_child: &mut dyn FnMut(Ref, &Instance) -> bool,
    keep_property: &mut dyn FnMut(&Instance, rbx_dom_weak::Ustr) -> bool,
) -> rbx_dom_weak::InstanceBuilder {
    fn copy(
        dom: &WeakDom,
        r: Ref,
        inst: &Instance,
        keep_child: &mut dyn FnMut(Ref, &Instance) -> bool,
        keep_property: &mut dyn FnMut(&Instance, rbx_dom_weak::Ustr) -> bool,
    ) -> rbx_dom_weak::InstanceBuilder {
        let mut b = rbx_dom_weak::InstanceBuilder::new(inst.class)
            .with_referent(r)
            .with_name(inst.name.clone())
            .with_properties(
                inst.properties
                    .iter()
                    .filter(|(k, _)| keep_property(inst, **k))
                    .map(|(k, v)| (*k, v.clone())),
            );
        for &c in inst.children() {
            if let Some(i) = dom.get_by_ref(c)
                && keep_child(r, i)
            {
                b.add_child(copy(dom, c, i, keep_child, keep_property));
            }
        }
        b
    }
    let inst = dom.get_by_ref(r).expect("the subtree's root exists");
    copy(dom, r, inst, keep_child, keep_property)
}

/// Child lists at least this long are split between two threads by [`count_and_find`].
const SPLIT_MIN_CHILDREN: usize = 16_384;

/// Counts the instances in the subtrees of `roots` (roots included) and lists those of
/// class `class`, in pre-order: what [`preorder`] with a counting visitor gives. A child list
/// of [`SPLIT_MIN_CHILDREN`] or more (a generator's 100,000 parts) is walked half on this
/// thread and half on a scoped helper (the look-ups are cache misses, not work), the
/// second half's finds after the first's; helpers do not split further.
pub fn count_and_find(dom: &WeakDom, roots: &[Ref], class: &str) -> (usize, Vec<Ref>) {
    count_and_find_in(dom, roots, class, true)
}

fn count_and_find_in(
    dom: &WeakDom,
    roots: &[Ref],
    class: &str,
    may_split: bool,
) -> (usize, Vec<Ref>) {
    let mut count = 0;
    let mut found = Vec::new();
    preorder(dom, roots, |r, i| {
        count += 1;
        if i.class == class {
            found.push(r);
        }
        let children = i.children();
        if !may_split || children.len() < SPLIT_MIN_CHILDREN {
            return true;
        }
        // A wide list: its two halves here, at its place in the pre-order.
        let (first, second) = children.split_at(children.len() / 2);
        let (c1, f1, helped) = std::thread::scope(|s| {
            let helper = std::thread::Builder::new()
                .name("procmodel-walk".into())
                .spawn_scoped(s, || count_and_find_in(dom, second, class, false));
            let (c1, f1) = count_and_find_in(dom, first, class, false);
            (c1, f1, helper.ok().and_then(|h| h.join().ok()))
        });
        // No helper thread: this one walks the second half too.
        let (c2, f2) = helped.unwrap_or_else(|| count_and_find_in(dom, second, class, false));
        count += c1 + c2;
        found.extend(f1);
        found.extend(f2);
        false
    });
    (count, found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbx_dom_weak::InstanceBuilder;

    #[test]
    fn count_and_find_matches_preorder_with_wide_lists_split() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let wide = dom.insert(root, InstanceBuilder::new("Folder"));
        // Models in both halves of a wide list, nested inside its children, and another
        // wide list inside the second half (not split again).
        let n = SPLIT_MIN_CHILDREN + 5;
        for k in 0..n {
            let class = if k % 997 == 3 {
                "ProceduralModel"
            } else {
                "Part"
            };
            let c = dom.insert(wide, InstanceBuilder::new(class));
            if k % 1500 == 7 {
                dom.insert(c, InstanceBuilder::new("ProceduralModel"));
            }
        }
        let inner = dom.insert(wide, InstanceBuilder::new("Folder"));
        for k in 0..SPLIT_MIN_CHILDREN {
            let class = if k % 2000 == 1 {
                "ProceduralModel"
            } else {
                "Part"
            };
            dom.insert(inner, InstanceBuilder::new(class));
        }
        dom.insert(root, InstanceBuilder::new("ProceduralModel"));
        let mut want_count = 0;
        let mut want = Vec::new();
        preorder(&dom, &[root], |r, i| {
            want_count += 1;
            if i.class == "ProceduralModel" {
                want.push(r);
            }
            true
        });
        let (count, found) = count_and_find(&dom, &[root], "ProceduralModel");
        assert!(want.len() > 20);
        assert_eq!(count, want_count);
        assert_eq!(found, want);
    }

    fn unique_id_of(dom: &WeakDom, r: Ref) -> Option<rbx_types::UniqueId> {
        dom.get_by_ref(r).and_then(unique_id)
    }

    /// An instance of a file Studio saved carries a UniqueId. Cloned as it was, rbx_dom_weak
    /// replaced the copy's colliding id with one from the clock, and each run wrote other
    /// bytes (a generator cloning a template failed `verify`). Copies carry none; the
    /// originals keep theirs.
    #[test]
    fn a_clone_carries_no_unique_id_and_the_original_keeps_its_own() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let id = rbx_types::UniqueId::new(7, 123, 456);
        let inner_id = rbx_types::UniqueId::new(8, 123, 456);
        let model = dom.insert(
            root,
            InstanceBuilder::new("Model")
                .with_property("UniqueId", id)
                .with_child(InstanceBuilder::new("Part").with_property("UniqueId", inner_id)),
        );
        let part = dom.get_by_ref(model).unwrap().children()[0];
        let copy = clone_archivable(&mut dom, model);
        let copied_part = dom.get_by_ref(copy).unwrap().children()[0];
        assert_eq!(unique_id_of(&dom, copy), None);
        assert_eq!(unique_id_of(&dom, copied_part), None);
        assert_eq!(unique_id_of(&dom, model), Some(id));
        assert_eq!(unique_id_of(&dom, part), Some(inner_id));
    }

    /// A model file linked twice into one project: the second copy's UniqueIds collided,
    /// and rbx_dom_weak made new ones from the clock. The colliding ones are left off, the
    /// others kept.
    #[test]
    fn moved_instances_keep_only_the_unique_ids_the_destination_lacks() {
        let (top_id, part_id) = (
            rbx_types::UniqueId::new(1, 2, 3),
            rbx_types::UniqueId::new(2, 2, 3),
        );
        let model = || {
            let mut src = WeakDom::new(InstanceBuilder::new("DataModel"));
            let root = src.root_ref();
            let top = src.insert(
                root,
                InstanceBuilder::new("Model")
                    .with_property("UniqueId", top_id)
                    .with_child(InstanceBuilder::new("Part").with_property("UniqueId", part_id)),
            );
            (src, top)
        };
        // Each move on its own, and moves keeping the destination's ids between them (the
        // Rojo linker's): the same result.
        for keep in [false, true] {
            let mut held = HeldIds::default();
            let mut mv = |src: &mut WeakDom, r: Ref, dest: &mut WeakDom, parent: Ref| {
                if keep {
                    move_into_keeping(src, &[r], dest, parent, &mut held)
                } else {
                    move_into(src, &[r], dest, parent)
                }
            };
            let mut dest = WeakDom::new(InstanceBuilder::new("DataModel"));
            let dest_root = dest.root_ref();
            // The destination holds the part's id already.
            dest.insert(
                dest_root,
                InstanceBuilder::new("Part").with_property("UniqueId", part_id),
            );
            let (mut first, top) = model();
            mv(&mut first, top, &mut dest, dest_root);
            let part = dest.get_by_ref(top).unwrap().children()[0];
            assert_eq!(unique_id_of(&dest, top), Some(top_id));
            assert_eq!(unique_id_of(&dest, part), None);
            // The same file again: its ids are all taken, so it carries none.
            let (mut second, again) = model();
            mv(&mut second, again, &mut dest, dest_root);
            let again_part = dest.get_by_ref(again).unwrap().children()[0];
            assert_eq!(unique_id_of(&dest, again), None);
            assert_eq!(unique_id_of(&dest, again_part), None);
            let ids: Vec<_> = dest
                .descendants()
                .filter_map(|i| unique_id_of(&dest, i.referent()))
                .collect();
            assert_eq!(ids, [part_id, top_id], "every id once, none made up");
        }
    }

    #[test]
    fn preorder_visits_parents_first_children_in_order_and_can_skip_a_subtree() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let a = dom.insert(root, InstanceBuilder::new("Folder").with_name("a"));
        let a1 = dom.insert(a, InstanceBuilder::new("Part").with_name("a1"));
        dom.insert(a1, InstanceBuilder::new("Decal").with_name("a1x"));
        dom.insert(a, InstanceBuilder::new("Part").with_name("a2"));
        let b = dom.insert(root, InstanceBuilder::new("Model").with_name("b"));
        dom.insert(b, InstanceBuilder::new("Part").with_name("b1"));
        let c = dom.insert(root, InstanceBuilder::new("Folder").with_name("c"));
        let names = |skip: &str, roots: &[Ref]| {
            let mut out = Vec::new();
            preorder(&dom, roots, |_, i| {
                out.push(i.name.clone());
                i.name != skip
            });
            out.join(" ")
        };
        assert_eq!(names("", &[root]), "DataModel a a1 a1x a2 b b1 c");
        assert_eq!(names("a1", &[root]), "DataModel a a1 a2 b b1 c");
        assert_eq!(names("", &[c, b, Ref::none(), a1]), "c b b1 a1 a1x");
        assert_eq!(count_subtree(&dom, a), 4);
        assert_eq!(count_subtree(&dom, Ref::none()), 0);
    }

    #[test]
    fn preorder_in_blocks_visits_as_a_plain_recursive_walk_does() {
        // Wide and deep at once: children lists longer than a block, subtrees starting at
        // and around block boundaries, skipped subtrees, and unresolvable roots.
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let mut all = vec![root];
        let mut next = 0u64;
        for level in 0..4 {
            let parents: Vec<Ref> = all.clone();
            for (k, &p) in parents.iter().enumerate() {
                let n = (next % 70) as usize + if level == 0 { 100 } else { 0 };
                next = next
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407 + k as u64);
                if level > 0 && k % 3 != 0 {
                    continue;
                }
                for c in 0..n {
                    let r = dom.insert(
                        p,
                        InstanceBuilder::new("Folder").with_name(format!("{level}.{k}.{c}")),
                    );
                    all.push(r);
                }
            }
        }
        fn recursive(dom: &WeakDom, r: Ref, skip: &dyn Fn(&Instance) -> bool, out: &mut Vec<Ref>) {
            let Some(i) = dom.get_by_ref(r) else { return };
            out.push(r);
            if !skip(i) {
                for &c in i.children() {
                    recursive(dom, c, skip, out);
                }
            }
        }
        let skip = |i: &Instance| i.name.ends_with(".7") || i.name.ends_with(".32");
        let roots = [root, Ref::none(), all[40], all[33]];
        let mut want = Vec::new();
        for &r in &roots {
            recursive(&dom, r, &skip, &mut want);
        }
        let mut got = Vec::new();
        preorder(&dom, &roots, |r, i| {
            got.push(r);
            !skip(i)
        });
        assert!(want.len() > 1000, "{} instances", want.len());
        assert_eq!(got, want);
    }

    #[test]
    fn moves_and_scrubs_outside_refs() {
        let mut src = WeakDom::new(InstanceBuilder::new("DataModel"));
        let outside = src.insert(src.root_ref(), InstanceBuilder::new("Part"));
        let folder = src.insert(Ref::none(), InstanceBuilder::new("Folder"));
        let model = src.insert(folder, InstanceBuilder::new("Model"));
        let inner = src.insert(model, InstanceBuilder::new("Part"));
        src.get_by_ref_mut(model)
            .unwrap()
            .properties
            .insert("PrimaryPart".into(), Variant::Ref(inner));
        src.get_by_ref_mut(inner)
            .unwrap()
            .properties
            .insert("Target".into(), Variant::Ref(outside));
        let mut dest = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dest.root_ref();
        move_into(&mut src, &[model], &mut dest, root);
        assert_eq!(count_subtree(&dest, root), 3);
        let m = dest.get_by_ref(model).unwrap();
        assert_eq!(
            m.properties.get(&"PrimaryPart".into()),
            Some(&Variant::Ref(inner))
        );
        let p = dest.get_by_ref(inner).unwrap();
        assert_eq!(
            p.properties.get(&"Target".into()),
            Some(&Variant::Ref(Ref::none()))
        );
        assert!(src.get_by_ref(model).is_none());
    }
}
