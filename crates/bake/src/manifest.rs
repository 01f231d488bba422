//! The shard manifest (what a shard made: unit key -> status, content hash and cache key; the
//! result files by cache key; the input's fingerprint) and its separate timings file, and the
//! coverage check a merge runs over all manifests (missing units and the shard to rerun,
//! duplicates, conflicts). A manifest's bytes depend only on the input and the shard: a rerun
//! writes the same bytes. Never holds a time or a host name.

use crate::{Assignment, BakeError, Result, Shard, Unit};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The manifest format this build writes and reads.
/// Version 2: units are dealt to shards by [`Assignment`] (version 1 used `hash mod N`; the
/// two cannot be merged together).
pub const FORMAT: &str = "procmodel-bake-manifest/2";

/// What a bake's input was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputRef {
    /// `scene` or `sweep` (a sweep is a scene of variants, with a summary at merge).
    pub kind: String,
    /// Where the input's bytes are in the store (content-addressed).
    pub file: String,
    /// blake3 of the input's bytes.
    pub fingerprint: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnitStatus {
    /// Generated; its results are a stored entry.
    Ok,
    /// The generator failed (deterministically: the merge reruns it and records the same failure).
    Failed,
    /// Generated, but the results cannot be stored (they refer outside themselves): the merge
    /// regenerates it.
    Unstored,
}

/// One unit's record in a manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitRecord {
    pub status: UnitStatus,
    /// The cache key the results are stored under (hex).
    pub cache_key: String,
    /// The results' content hash (`ProcmodelContentHash`), when generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
    /// Instances in the unit's results.
    pub instances: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A shard's manifest, written last (after every file it names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    /// The procmodel version that baked it.
    pub engine: String,
    pub input: InputRef,
    pub shard: Shard,
    pub units: BTreeMap<String, UnitRecord>,
    /// Every stored result entry of the shard (units and models nested in them): cache key
    /// (hex) -> file in the store, named by the blake3 of its bytes.
    pub entries: BTreeMap<String, String>,
}

impl Manifest {
    /// Canonical bytes: pretty JSON, keys in a fixed order, a final newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).expect("a manifest always serialises");
        v.push(b'\n');
        v
    }

    /// Parses a manifest, naming `what` (its path) in errors.
    pub fn parse(bytes: &[u8], what: &str) -> Result<Manifest> {
        let m: Manifest = serde_json::from_slice(bytes)
            .map_err(|e| BakeError::new(format!("{what}: not a shard manifest: {e}")))?;
        if m.format != FORMAT {
            return Err(BakeError::new(format!(
                "{what}: manifest format '{}' is not '{FORMAT}' (baked by another procmodel version?)",
                m.format
            )));
        }
        if m.shard.count == 0 || m.shard.index >= m.shard.count {
            return Err(BakeError::new(format!(
                "{what}: shard {}/{} is not a valid shard",
                m.shard.index, m.shard.count
            )));
        }
        for (key, u) in &m.units {
            if u.status == UnitStatus::Ok && !m.entries.contains_key(&u.cache_key) {
                return Err(BakeError::new(format!(
                    "{what}: unit {key} is ok but its entry {} is not listed",
                    u.cache_key
                )));
            }
        }
        Ok(m)
    }
}

/// Ends a shard: its timings, then its manifest, written last and only after every earlier
/// file of the store is durable ([`crate::Store::put_last`]) — a manifest in the store means
/// every file it names is there.
pub fn finish_shard(
    store: &dyn crate::Store,
    manifest: &Manifest,
    timings: &Timings,
) -> Result<()> {
    let t =
        serde_json::to_vec_pretty(timings).map_err(|e| BakeError::new(format!("timings: {e}")))?;
    store.put(&manifest.shard.timings_path(), &t)?;
    store.put_last(&manifest.shard.manifest_path(), &manifest.to_bytes())
}

/// Per-unit timings of one shard: a file of its own, never part of what must be identical.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Timings {
    pub shard: Option<Shard>,
    pub total_ms: f64,
    pub units: BTreeMap<String, f64>,
}

/// What a merge found over all manifests.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Coverage {
    /// Units no manifest holds, with the shard (`I/N`) that should have made them.
    pub missing: Vec<(String, Shard)>,
    /// Shards of the bake's count with no manifest (rerun these).
    pub missing_shards: Vec<Shard>,
    /// Units held by more than one manifest with the same results (harmless; listed).
    pub duplicates: Vec<(String, Vec<String>)>,
    /// Problems that make the merge impossible (different inputs, different results for one
    /// unit, units the input does not have).
    pub conflicts: Vec<String>,
}

impl Coverage {
    pub fn complete(&self) -> bool {
        self.missing.is_empty() && self.conflicts.is_empty()
    }

    /// Why a merge of `location` with `units` expected units cannot go on, for the user:
    /// the conflicts, the first 20 missing units with their shards, and which shards to
    /// rerun. None when the bake is complete.
    pub fn incomplete(&self, location: &str, units: usize) -> Option<String> {
        if self.complete() {
            return None;
        }
        let mut msg = String::new();
        for c in &self.conflicts {
            msg.push_str(&format!("\n  conflict: {c}"));
        }
        let mut rerun: Vec<Shard> = self.missing.iter().map(|(_, s)| *s).collect();
        rerun.extend(self.missing_shards.iter().copied());
        rerun.sort_by_key(|s| (s.count, s.index));
        rerun.dedup();
        for (k, s) in self.missing.iter().take(20) {
            msg.push_str(&format!("\n  missing unit {k} (shard {s})"));
        }
        if self.missing.len() > 20 {
            msg.push_str(&format!(
                "\n  ... and {} more missing units",
                self.missing.len() - 20
            ));
        }
        if !rerun.is_empty() {
            let list: Vec<String> = rerun.iter().map(|s| s.to_string()).collect();
            msg.push_str(&format!("\n  rerun shard {}", list.join(", ")));
        }
        Some(format!(
            "{location}: the bake is incomplete: {} of {units} units missing, {} conflicts; nothing written{msg}",
            self.missing.len(),
            self.conflicts.len()
        ))
    }
}

/// Checks `manifests` (path, manifest) against the units the input has.
pub fn coverage(expected: &[Unit], manifests: &[(String, Manifest)]) -> Coverage {
    let mut cov = Coverage::default();
    let Some((first_name, first)) = manifests.first() else {
        cov.missing = expected
            .iter()
            .map(|u| (u.key.clone(), Shard { index: 0, count: 1 }))
            .collect();
        cov.conflicts.push("no shard manifests found".into());
        return cov;
    };
    for (name, m) in manifests {
        if m.input != first.input {
            cov.conflicts.push(format!(
                "{name} was baked from input {} but {first_name} from {}: one bake location per input",
                m.input.fingerprint, first.input.fingerprint
            ));
        }
    }
    // The partition that holds the most units is the bake's; others (a stray run with
    // another N) only add duplicates.
    let mut held: BTreeMap<u32, usize> = BTreeMap::new();
    for (_, m) in manifests {
        *held.entry(m.shard.count).or_default() += m.units.len();
    }
    let count = held
        .iter()
        .max_by_key(|(c, n)| (**n, **c))
        .map_or(first.shard.count, |(c, _)| *c);
    let mut present: std::collections::BTreeSet<u32> = std::collections::BTreeSet::new();
    for (_, m) in manifests.iter().filter(|(_, m)| m.shard.count == count) {
        present.insert(m.shard.index);
    }
    cov.missing_shards = (0..count)
        .filter(|i| !present.contains(i))
        .map(|index| Shard { index, count })
        .collect();
    let mut holders: BTreeMap<&str, Vec<(&str, &UnitRecord, &InputRef)>> = BTreeMap::new();
    for (name, m) in manifests {
        for (k, u) in &m.units {
            holders.entry(k).or_default().push((name, u, &m.input));
        }
    }
    let known: std::collections::BTreeSet<&str> = expected.iter().map(|u| u.key.as_str()).collect();
    for (k, hs) in &holders {
        if !known.contains(k) {
            cov.conflicts.push(format!(
                "{} holds unit {k}, which the input does not have",
                hs[0].0
            ));
        }
        if hs.len() > 1 {
            let (n0, u0, i0) = hs[0];
            for (n, u, i) in &hs[1..] {
                // Manifests of different inputs are reported above, once: their units
                // differing says nothing more.
                if *i == i0 && (u.content_hash != u0.content_hash || u.status != u0.status) {
                    cov.conflicts.push(format!(
                        "unit {k}: {n0} and {n} hold different results ({} vs {}) for the same inputs; the generator is not deterministic, or the shards ran different builds",
                        outcome(u0),
                        outcome(u)
                    ));
                }
            }
            cov.duplicates.push((
                k.to_string(),
                hs.iter().map(|(n, _, _)| n.to_string()).collect(),
            ));
        }
    }
    let deal = Assignment::new(expected, count);
    for u in expected {
        if !holders.contains_key(u.key.as_str()) {
            cov.missing.push((
                u.key.clone(),
                Shard {
                    index: deal.shard(&u.key).unwrap_or(0),
                    count,
                },
            ));
        }
    }
    cov
}

/// A unit's outcome for people: its results' content hash, or that it failed and how.
fn outcome(u: &UnitRecord) -> String {
    match (&u.content_hash, &u.error) {
        (Some(h), _) => format!("content hash {h}"),
        (None, Some(e)) => format!("failed: {}", e.lines().next().unwrap_or(e)),
        (None, None) => format!("{:?}, no results", u.status).to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(index: u32, count: u32, units: &[(&str, &str)]) -> Manifest {
        let mut m = Manifest {
            format: FORMAT.into(),
            engine: "test".into(),
            input: InputRef {
                kind: "scene".into(),
                file: "input/x.rbxl".into(),
                fingerprint: "x".into(),
            },
            shard: Shard { index, count },
            units: BTreeMap::new(),
            entries: BTreeMap::new(),
        };
        for (k, h) in units {
            m.units.insert(
                k.to_string(),
                UnitRecord {
                    status: UnitStatus::Ok,
                    cache_key: format!("key-{k}"),
                    content_hash: Some(h.to_string()),
                    instances: 1,
                    error: None,
                },
            );
            m.entries.insert(format!("key-{k}"), format!("results/{h}"));
        }
        m
    }

    #[test]
    fn round_trips_and_rejects() {
        let m = manifest(0, 2, &[("W.A", "aa")]);
        let b = m.to_bytes();
        assert_eq!(Manifest::parse(&b, "m.json").unwrap(), m);
        assert_eq!(b, Manifest::parse(&b, "m").unwrap().to_bytes());
        let e = Manifest::parse(b"{}", "manifests/x.json")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("manifests/x.json:"), "{e}");
        let mut bad = m.clone();
        bad.entries.clear();
        let e = Manifest::parse(&bad.to_bytes(), "m")
            .unwrap_err()
            .to_string();
        assert!(e.contains("W.A"), "{e}");
    }

    /// Two shards holding different results for one unit name both outcomes for people (not
    /// as `Some("…")`); shards of another input are reported once, as such.
    #[test]
    fn conflicting_results_are_named_plainly() {
        let expected = vec![Unit {
            key: "W.A".into(),
            size: 0,
        }];
        let a = ("m0".to_string(), manifest(0, 1, &[("W.A", "11")]));
        let b = ("m1".to_string(), manifest(0, 1, &[("W.A", "22")]));
        let cov = coverage(&expected, &[a.clone(), b]);
        assert_eq!(cov.conflicts.len(), 1, "{:?}", cov.conflicts);
        let c = &cov.conflicts[0];
        assert!(
            c.contains("(content hash 11 vs content hash 22) for the same inputs")
                && !c.contains("Some("),
            "{c}"
        );
        let mut other = manifest(0, 1, &[("W.A", "33")]);
        other.input.fingerprint = "y".into();
        let cov = coverage(&expected, &[a, ("m2".to_string(), other)]);
        assert_eq!(cov.conflicts.len(), 1, "{:?}", cov.conflicts);
        assert!(
            cov.conflicts[0].contains("baked from input y"),
            "{:?}",
            cov.conflicts
        );
    }

    #[test]
    fn coverage_names_missing_shards_and_duplicates() {
        let expected: Vec<Unit> = ["W.A", "W.B", "W.C"]
            .iter()
            .map(|s| Unit {
                key: s.to_string(),
                size: 0,
            })
            .collect();
        let deal = Assignment::new(&expected, 2);
        let all: Vec<(&str, &str)> = vec![("W.A", "1"), ("W.B", "2"), ("W.C", "3")];
        let of = |i: u32| -> Vec<(&str, &str)> {
            all.iter()
                .copied()
                .filter(|(k, _)| deal.shard(k) == Some(i))
                .collect()
        };
        let m0 = ("m0".to_string(), manifest(0, 2, &of(0)));
        let m1 = ("m1".to_string(), manifest(1, 2, &of(1)));
        let full = coverage(&expected, &[m0.clone(), m1.clone()]);
        assert!(full.complete(), "{full:?}");
        assert!(full.missing_shards.is_empty());
        let part = coverage(&expected, std::slice::from_ref(&m0));
        assert_eq!(part.missing_shards, vec![Shard { index: 1, count: 2 }]);
        assert_eq!(part.missing.len(), of(1).len());
        assert!(part.missing.iter().all(|(_, s)| s.index == 1));
        let dup = coverage(
            &expected,
            &[m0.clone(), m1.clone(), ("m1b".into(), m1.1.clone())],
        );
        assert!(dup.complete());
        assert_eq!(dup.duplicates.len(), of(1).len());
        let mut other = m1.1.clone();
        if let Some(u) = other.units.values_mut().next() {
            u.content_hash = Some("different".into());
        }
        let clash = coverage(&expected, &[m0, m1, ("m1c".into(), other)]);
        assert!(!clash.complete() || of(1).is_empty());
    }
}
