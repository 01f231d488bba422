//! Work units and their stable keys, and which shard each unit belongs to. A key is what a
//! user can read (a model's instance path, a sweep point's name); the deal of units to shards
//! ([`Assignment`]) depends only on the keys (their blake3) and sizes, so it is the same on
//! every machine and in every process. Never uses std's hasher (its seed differs per
//! process).

use serde::Serialize;

/// One unit of work.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unit {
    /// Stable key (an instance path; a second sibling of the same path gets `#2`, and so on).
    pub key: String,
    /// A size hint for schedulers: instances the unit held when planned (0 when none yet).
    pub size: u64,
}

/// A key's place in the deal: the first 8 bytes of `blake3("procmodel-shard\0" + key)`, the
/// same on every machine (never std's hasher, whose seed differs per process).
pub fn key_hash(key: &str) -> u64 {
    let mut h = blake3::Hasher::new();
    h.update(b"procmodel-shard\0");
    h.update(key.as_bytes());
    let d = h.finalize();
    u64::from_le_bytes(d.as_bytes()[..8].try_into().expect("8 bytes"))
}

/// Which of `count` shards each unit of an input goes to.
///
/// The units are dealt out largest first (by `size`, at least 1; equal sizes in the order of
/// [`key_hash`], then key), each to the shard with the least work so far (ties: the fewest
/// units, then the lowest index). Shards therefore get equal work to within one unit —
/// `hash mod N` left one of two shards 54% of a 200-model scene — and the deal depends only on
/// the keys and sizes, which every shard and the merge read from the same input.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    count: u32,
    by_key: std::collections::BTreeMap<String, u32>,
}

impl Assignment {
    pub fn new<'a>(units: impl IntoIterator<Item = &'a Unit>, count: u32) -> Assignment {
        let count = count.max(1);
        let mut order: Vec<(u64, u64, &str)> = units
            .into_iter()
            .map(|u| (u.size.max(1), key_hash(&u.key), u.key.as_str()))
            .collect();
        order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(b.2)));
        let mut load = vec![(0u64, 0u64); count as usize];
        let mut by_key = std::collections::BTreeMap::new();
        for (size, _, key) in order {
            let shard = (0..count as usize)
                .min_by_key(|&i| (load[i], i))
                .expect("at least one shard");
            load[shard].0 += size;
            load[shard].1 += 1;
            by_key.insert(key.to_owned(), shard as u32);
        }
        Assignment { count, by_key }
    }

    /// The shard of a unit of the input (None for a key the input does not have).
    pub fn shard(&self, key: &str) -> Option<u32> {
        self.by_key.get(key).copied()
    }

    /// Units per shard.
    pub fn per_shard(&self) -> Vec<u64> {
        let mut n = vec![0u64; self.count as usize];
        for &s in self.by_key.values() {
            n[s as usize] += 1;
        }
        n
    }
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

    fn units(sizes: &[u64]) -> Vec<Unit> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| Unit {
                key: format!("Workspace.M{i}"),
                size,
            })
            .collect()
    }

    #[test]
    fn shards_get_equal_work_and_the_deal_is_stable() {
        // Golden: a change of the deal would strand every bake in progress.
        assert_eq!(
            key_hash("Workspace.Tower"),
            u64::from_le_bytes(
                blake3::hash(b"procmodel-shard\0Workspace.Tower").as_bytes()[..8]
                    .try_into()
                    .unwrap()
            )
        );
        // Equal sizes (a sweep, an ungenerated scene): counts within one.
        let u = units(&[0; 401]);
        let a = Assignment::new(&u, 4);
        assert_eq!(a, Assignment::new(&u, 4));
        assert_eq!(a.per_shard(), vec![101, 100, 100, 100]);
        // Every unit once; the deal does not depend on the units' order.
        let mut rev = u.clone();
        rev.reverse();
        assert_eq!(Assignment::new(&rev, 4), a);
        assert!(u.iter().all(|x| a.shard(&x.key).is_some()));
        assert_eq!(a.shard("Workspace.Nope"), None);
        // Unequal sizes (a world's tiles): work within the largest unit.
        let sizes: Vec<u64> = (0..100)
            .map(|i| if i % 7 == 0 { 100 } else { 4096 })
            .collect();
        let u = units(&sizes);
        let a = Assignment::new(&u, 2);
        let mut work = [0u64; 2];
        for x in &u {
            work[a.shard(&x.key).unwrap() as usize] += x.size;
        }
        assert!(work[0].abs_diff(work[1]) <= 4096, "{work:?}");
        // One shard takes everything.
        assert_eq!(Assignment::new(&u, 1).per_shard(), vec![100]);
    }

    #[test]
    fn repeated_paths_get_numbered_keys() {
        assert_eq!(
            unit_keys(["W.A", "W.B", "W.A", "W.A"]),
            vec!["W.A", "W.B", "W.A#2", "W.A#3"]
        );
    }
}
