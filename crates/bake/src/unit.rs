//! Work units and their stable keys, and which shard a key belongs to. A key is what a user
//! can read (a model's instance path, a sweep point's name); the shard is a blake3 hash of it,
//! so it is the same on every machine and in every process. Never uses std's hasher (its
//! seed differs per process).

use serde::Serialize;

/// One unit of work.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unit {
    /// Stable key (an instance path; a second sibling of the same path gets `#2`, and so on).
    pub key: String,
    /// A size hint for schedulers: instances the unit held when planned (0 when none yet).
    pub size: u64,
}

/// The shard (0-based, below `count`) a key belongs to.
pub fn shard_of(key: &str, count: u32) -> u32 {
    let count = count.max(1);
    let mut h = blake3::Hasher::new();
    h.update(b"procmodel-shard\0");
    h.update(key.as_bytes());
    let d = h.finalize();
    let x = u64::from_le_bytes(d.as_bytes()[..8].try_into().expect("8 bytes"));
    (x % u64::from(count)) as u32
}

/// Stable keys for paths given in scene order: a path seen before gets `#2`, `#3`, ... so two
/// models of one name are two units.
pub fn unit_keys<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut seen: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    let mut out = Vec::new();
    for p in paths {
        let n = seen.entry(p).or_insert(0);
        *n += 1;
        if *n == 1 {
            out.push(p.to_owned());
        } else {
            out.push(format!("{p}#{n}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_stable_and_spread() {
        // Golden: a change of the assignment would strand every bake in progress.
        assert_eq!(shard_of("Workspace.Tower", 1), 0);
        let a: Vec<u32> = (0..400)
            .map(|i| shard_of(&format!("Workspace.M{i}"), 4))
            .collect();
        let b: Vec<u32> = (0..400)
            .map(|i| shard_of(&format!("Workspace.M{i}"), 4))
            .collect();
        assert_eq!(a, b);
        for s in 0..4 {
            let n = a.iter().filter(|&&x| x == s).count();
            assert!((60..140).contains(&n), "shard {s} has {n} of 400");
        }
    }

    #[test]
    fn repeated_paths_get_numbered_keys() {
        assert_eq!(
            unit_keys(["W.A", "W.B", "W.A", "W.A"]),
            vec!["W.A", "W.B", "W.A#2", "W.A#3"]
        );
    }
}
