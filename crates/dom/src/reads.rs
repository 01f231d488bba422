//! What a generator read of the scene, named so that another process can look again: an
//! instance by its path of names from the DataModel, each step the first child with that
//! name (as `FindFirstChild` and `a.b.c` find it), and the digest of what is there now.
//!
//! A read is of a whole subtree (a template a run clones, a folder it lists, a child it
//! looked for and may not have found) or of one instance's own record (a service's or a
//! folder's properties and attributes, without its children). The digests are the canonical
//! content hash (`hash`), so they compare across processes and file formats.

use crate::hash::{content_hash, record_digest};
use rbx_dom_weak::WeakDom;
use rbx_types::Ref;

/// The digest of a path that names nothing now.
pub fn absent_digest() -> [u8; 32] {
    *blake3::hash(b"procmodel-read-absent\0").as_bytes()
}

/// The names from the DataModel (not included) down to `r`, when each step is the first
/// child of its parent with that name, so [`resolve`] finds `r` again; None when `r` is not
/// under the DataModel or an earlier namesake hides one of the steps. `budget` is the
/// number of siblings it may compare on the way (a folder of many namesakes is not walked
/// again for each read); it is spent and None returned when it runs out.
pub fn path_of(dom: &WeakDom, r: Ref, budget: &mut usize) -> Option<Vec<String>> {
    let root = dom.root_ref();
    let mut names = Vec::new();
    let mut cur = r;
    while cur != root {
        let inst = dom.get_by_ref(cur)?;
        let parent = dom.get_by_ref(inst.parent())?;
        for &sibling in parent.children() {
            *budget = budget.checked_sub(1)?;
            if sibling == cur {
                break;
            }
            if dom.get_by_ref(sibling).is_some_and(|s| s.name == inst.name) {
                return None;
            }
        }
        names.push(inst.name.clone());
        cur = inst.parent();
    }
    names.reverse();
    Some(names)
}

/// The instance `path` names in `dom` ([`path_of`]): from the DataModel, each step the first
/// child with that name.
pub fn resolve(dom: &WeakDom, path: &[String]) -> Option<Ref> {
    let mut cur = dom.root_ref();
    for name in path {
        let inst = dom.get_by_ref(cur)?;
        cur = inst
            .children()
            .iter()
            .copied()
            .find(|&c| dom.get_by_ref(c).is_some_and(|i| i.name == *name))?;
    }
    Some(cur)
}

/// The digest of what `path` names now: the content hash of its subtree, or (`own`) the
/// digest of its own record; [`absent_digest`] when it names nothing.
pub fn read_digest(dom: &WeakDom, path: &[String], own: bool) -> [u8; 32] {
    match resolve(dom, path) {
        None => absent_digest(),
        Some(r) if own => record_digest(dom, r),
        Some(r) => content_hash(dom, r),
    }
}

/// [`read_digest`], and whether what it digested is steady: outside every GeneratedFolder
/// and, for a subtree, holding no ProceduralModel — nothing applying results changes (their
/// folders, a model's pivot, `Dirty` or filled-in attributes). Absence is not steady.
pub fn read_digest_steady(dom: &WeakDom, path: &[String], own: bool) -> ([u8; 32], bool) {
    let Some(r) = resolve(dom, path) else {
        return (absent_digest(), false);
    };
    let generated = |class: &str| class == "GeneratedFolder" || class == "ProceduralModel";
    let mut steady = true;
    let mut cur = dom.get_by_ref(r).map_or(Ref::none(), |i| i.parent());
    while let Some(i) = dom.get_by_ref(cur) {
        steady &= i.class != "GeneratedFolder";
        cur = i.parent();
    }
    if own {
        let digest = record_digest(dom, r);
        return (digest, steady);
    }
    if steady {
        crate::preorder(dom, &[r], |_, i| {
            steady &= !generated(i.class.as_str());
            steady
        });
    }
    (content_hash(dom, r), steady)
}

/// A path as one line of text, as a script would write it: `game`, then `.` and each name,
/// with `\`, `.` and line breaks in a name escaped as `\\`, `\.` and `\n`
/// ([`decode_path`] reads it back).
pub fn encode_path(path: &[String]) -> String {
    let mut out = String::from("game");
    for name in path {
        out.push('.');
        for c in name.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '.' => out.push_str("\\."),
                '\n' => out.push_str("\\n"),
                c => out.push(c),
            }
        }
    }
    out
}

/// The path [`encode_path`] wrote; None when `s` is not one.
pub fn decode_path(s: &str) -> Option<Vec<String>> {
    let rest = s.strip_prefix("game")?;
    if rest.is_empty() {
        return Some(Vec::new());
    }
    let mut chars = rest.strip_prefix('.')?.chars();
    let mut path = vec![String::new()];
    while let Some(c) = chars.next() {
        match c {
            '.' => path.push(String::new()),
            '\\' => {
                let unescaped = match chars.next()? {
                    '\\' => '\\',
                    '.' => '.',
                    'n' => '\n',
                    _ => return None,
                };
                path.last_mut()?.push(unescaped);
            }
            c => path.last_mut()?.push(c),
        }
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbx_dom_weak::InstanceBuilder;

    fn scene() -> (WeakDom, Ref, Ref) {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let rs = dom.insert(root, InstanceBuilder::new("ReplicatedStorage"));
        let assets = dom.insert(rs, InstanceBuilder::new("Folder").with_name("Assets"));
        let first = dom.insert(assets, InstanceBuilder::new("Model").with_name("Tree"));
        let second = dom.insert(assets, InstanceBuilder::new("Model").with_name("Tree"));
        (dom, first, second)
    }

    #[test]
    fn a_path_finds_its_instance_again_unless_a_namesake_comes_first() {
        let (dom, first, second) = scene();
        let mut budget = 100;
        let path = path_of(&dom, first, &mut budget).unwrap();
        assert_eq!(path, ["ReplicatedStorage", "Assets", "Tree"]);
        assert_eq!(resolve(&dom, &path), Some(first));
        assert_eq!(path_of(&dom, second, &mut budget), None);
        assert_eq!(path_of(&dom, dom.root_ref(), &mut budget), Some(Vec::new()));
        let mut none = 1;
        assert_eq!(path_of(&dom, first, &mut none), None, "a spent budget");
    }

    #[test]
    fn digests_follow_the_content_and_absence() {
        let (mut dom, first, _) = scene();
        let path: Vec<String> = ["ReplicatedStorage", "Assets", "Tree"]
            .map(String::from)
            .into();
        let before = read_digest(&dom, &path, false);
        let own = read_digest(&dom, &path[..2], true);
        dom.insert(first, InstanceBuilder::new("Part"));
        assert_ne!(read_digest(&dom, &path, false), before);
        assert_eq!(
            read_digest(&dom, &path[..2], true),
            own,
            "children are not the record"
        );
        let missing: Vec<String> = ["ReplicatedStorage", "Rocks"].map(String::from).into();
        assert_eq!(read_digest(&dom, &missing, false), absent_digest());
    }

    #[test]
    fn what_applying_results_can_change_is_not_steady() {
        let (mut dom, _, _) = scene();
        let root = dom.root_ref();
        let tree: Vec<String> = ["ReplicatedStorage", "Assets", "Tree"]
            .map(String::from)
            .into();
        assert!(read_digest_steady(&dom, &tree, false).1, "a template");
        let town = dom.insert(root, InstanceBuilder::new("Model").with_name("Town"));
        let model = dom.insert(town, InstanceBuilder::new("ProceduralModel").with_name("M"));
        let folder = dom.insert(model, InstanceBuilder::new("GeneratedFolder"));
        dom.insert(folder, InstanceBuilder::new("Part").with_name("P"));
        let path = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        for (names, own) in [
            (path(&["Town"]), false),
            (path(&["Town", "M", "GeneratedFolder", "P"]), false),
            (path(&["Town", "M", "GeneratedFolder", "P"]), true),
            (path(&["Rocks"]), false),
        ] {
            let (digest, steady) = read_digest_steady(&dom, &names, own);
            assert!(!steady, "{names:?}");
            assert_eq!(digest, read_digest(&dom, &names, own), "{names:?}");
        }
        assert!(
            read_digest_steady(&dom, &path(&["Town"]), true).1,
            "the Model's own record"
        );
    }

    #[test]
    fn paths_round_trip_whatever_the_names_hold() {
        for path in [
            vec![],
            vec!["a.b".to_owned(), "c\\d".to_owned(), "e\nf".to_owned()],
            vec![String::new(), "x".to_owned()],
            vec!["Workspace".to_owned()],
        ] {
            assert_eq!(
                decode_path(&encode_path(&path)),
                Some(path.clone()),
                "{path:?}"
            );
        }
        assert_eq!(encode_path(&["a.b".to_owned()]), "game.a\\.b");
        for bad in ["", "a", "gamex", "game.a\\q", "game.a\\"] {
            assert_eq!(decode_path(bad), None, "{bad}");
        }
    }
}
