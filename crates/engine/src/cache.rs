//! The result-cache seam: a store of applied generation results keyed by the inputs (the
//! `provenance` digests, the placement and the determinism epoch), and the entry format the
//! engine writes into it. The store itself (a directory, shared or not) lives outside the
//! engine (`procmodel-lock`'s `DirCache`).
//!
//! An entry is `ENTRY_MAGIC`, a u32 LE length and that many bytes of *absent lists*, then a
//! binary Roblox model (procmodel-rbxm) of one `Model` named `Entry` whose `Attributes` are
//! the model's attributes after the results were applied and whose `PrimaryPart` is the
//! PrimaryPart the run chose, holding the applied GeneratedFolder (with its provenance).
//! The binary format gives every instance of a class the properties any of them has; the
//! absent lists name, per instance of the folder (pre-order index, u32), the properties it
//! did not have, and decoding removes them again, so a hit saves as the same bytes as the
//! run that filled it, in either file format.
//!
//! A hit is checked before it is used: the decoded folder's content hash must equal the
//! `ProcmodelContentHash` it carries. Results that refer to instances outside themselves are
//! not cached (a file cannot hold such a reference).

use crate::provenance::CONTENT_HASH_ATTRIBUTE;
use procmodel_dom::hash::{children_hash, to_hex};
use rbx_dom_weak::{InstanceBuilder, Ustr, WeakDom};
use rbx_types::{Attributes, Ref, Variant};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// A store of cache entries. Implementations report their own I/O problems and corrupt
/// entries (a corrupt entry is a miss, never a hit); they must be safe to share between
/// threads and processes.
pub trait ResultCache: Send + Sync + std::fmt::Debug {
    /// The entry stored under `key`, if there is an intact one.
    fn get(&self, key: &[u8; 32]) -> Option<Vec<u8>>;
    /// Stores an entry (atomically: a reader sees the whole entry or none).
    fn put(&self, key: &[u8; 32], entry: &[u8]);
    /// Told when an entry `get` returned could not be used (it failed the engine's checks).
    fn reject(&self, _key: &[u8; 32], _reason: &str) {}
}

/// Version 2: rotations stored exactly (`procmodel_rbxm::to_writer_exact`); version-1 entries
/// read back near-basic rotations as exact ones and are misses now.
pub const ENTRY_MAGIC: &[u8; 8] = b"PMCACHE2";

/// Encodes the applied results of `model` (its GeneratedFolder `folder`).
pub fn encode(dom: &WeakDom, model: Ref, folder: Ref) -> Result<Vec<u8>, String> {
    let inst = dom.get_by_ref(model).ok_or("model is gone")?;
    let mut subtree = Vec::new();
    let mut stack = vec![folder];
    while let Some(r) = stack.pop() {
        let i = dom.get_by_ref(r).ok_or("broken results tree")?;
        subtree.push(r);
        stack.extend(i.children().iter().rev());
    }
    let inside: HashSet<Ref> = subtree.iter().copied().collect();
    // Property names per class, as the binary format will give them to every instance.
    let mut union: BTreeMap<Ustr, BTreeSet<Ustr>> = BTreeMap::new();
    for &r in &subtree {
        let i = dom.get_by_ref(r).ok_or("broken results tree")?;
        for (k, v) in &i.properties {
            if let Variant::Ref(t) = v
                && t.is_some()
                && !inside.contains(t)
            {
                return Err(format!(
                    "{}.{k} refers outside the results",
                    procmodel_dom::full_name(dom, r)
                ));
            }
            union.entry(i.class).or_default().insert(*k);
        }
    }
    let primary = match inst.properties.get(&procmodel_dom::keys::KEYS.primary_part) {
        Some(Variant::Ref(p)) if inside.contains(p) => Some(*p),
        _ => None,
    };
    let mut absent = Vec::new();
    for (n, &r) in subtree.iter().enumerate() {
        let i = dom.get_by_ref(r).ok_or("broken results tree")?;
        let Some(names) = union.get(&i.class) else {
            continue;
        };
        let missing: Vec<&str> = names
            .iter()
            .filter(|k| !i.properties.contains_key(*k))
            .map(|k| k.as_str())
            .collect();
        if missing.is_empty() {
            continue;
        }
        absent.extend_from_slice(&(n as u32).to_le_bytes());
        absent.extend_from_slice(&(missing.len() as u32).to_le_bytes());
        for m in missing {
            absent.extend_from_slice(&(m.len() as u32).to_le_bytes());
            absent.extend_from_slice(m.as_bytes());
        }
    }
    let attrs = match inst.properties.get(&procmodel_dom::keys::KEYS.attributes) {
        Some(Variant::Attributes(a)) => a.clone(),
        _ => Attributes::new(),
    };
    let mut out = Vec::with_capacity(1024);
    out.extend_from_slice(ENTRY_MAGIC);
    out.extend_from_slice(&(absent.len() as u32).to_le_bytes());
    out.extend_from_slice(&absent);
    // The results are written from where they are (no copy); the model's attributes go in
    // a tiny header file of their own.
    let mut results = Vec::new();
    procmodel_rbxm::to_writer_exact(&mut results, dom, &[folder]).map_err(|e| e.to_string())?;
    let mut head = WeakDom::new(InstanceBuilder::new("DataModel"));
    let holder = head.insert(
        head.root_ref(),
        InstanceBuilder::new("Model")
            .with_name("Entry")
            .with_property("Attributes", attrs),
    );
    let primary_index = primary
        .and_then(|p| subtree.iter().position(|&r| r == p))
        .map_or(u32::MAX, |n| n as u32);
    let mut header = Vec::new();
    procmodel_rbxm::to_writer_exact(&mut header, &head, &[holder]).map_err(|e| e.to_string())?;
    out.extend_from_slice(&primary_index.to_le_bytes());
    out.extend_from_slice(&(header.len() as u64).to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(&results);
    Ok(out)
}

/// A decoded entry: the results in a DOM of their own, ready to be moved into a scene.
pub struct Decoded {
    pub dom: WeakDom,
    pub folder: Ref,
    pub primary_part: Option<Ref>,
    /// The model's attributes after the run that filled the entry was applied.
    pub attributes: Vec<(String, Variant)>,
}

fn take<'a>(b: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
    if b.len() < n {
        return Err("entry is truncated".into());
    }
    let (h, t) = b.split_at(n);
    *b = t;
    Ok(h)
}

fn u32_at(b: &mut &[u8]) -> Result<u32, String> {
    Ok(u32::from_le_bytes(take(b, 4)?.try_into().expect("4 bytes")))
}

/// Decodes and checks an entry (its content hash must match the one it records).
pub fn decode(bytes: &[u8]) -> Result<Decoded, String> {
    let mut b = bytes;
    if take(&mut b, 8)? != ENTRY_MAGIC {
        return Err("not a procmodel cache entry".into());
    }
    let absent_len = u32_at(&mut b)? as usize;
    let mut absent = take(&mut b, absent_len)?;
    let primary_index = u32_at(&mut b)?;
    let header_len = u64::from_le_bytes(take(&mut b, 8)?.try_into().expect("8 bytes"));
    let header = take(
        &mut b,
        usize::try_from(header_len).map_err(|_| "bad header length")?,
    )?;
    let head = procmodel_dom::decode_binary(header).map_err(|e| format!("entry header: {e}"))?;
    let holder = head
        .root()
        .children()
        .first()
        .and_then(|&r| head.get_by_ref(r))
        .ok_or("entry header has no Entry")?;
    let attributes = match holder.properties.get(&procmodel_dom::keys::KEYS.attributes) {
        Some(Variant::Attributes(a)) => a.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        _ => Vec::new(),
    };
    let mut dom = procmodel_dom::decode_binary(b).map_err(|e| format!("entry results: {e}"))?;
    let folder = *dom
        .root()
        .children()
        .first()
        .ok_or("entry holds no results")?;
    let mut subtree = Vec::new();
    let mut stack = vec![folder];
    while let Some(r) = stack.pop() {
        let i = dom.get_by_ref(r).ok_or("broken entry tree")?;
        subtree.push(r);
        stack.extend(i.children().iter().rev());
    }
    while !absent.is_empty() {
        let n = u32_at(&mut absent)? as usize;
        let count = u32_at(&mut absent)?;
        let r = *subtree
            .get(n)
            .ok_or("absent list names a missing instance")?;
        for _ in 0..count {
            let len = u32_at(&mut absent)? as usize;
            let name = std::str::from_utf8(take(&mut absent, len)?)
                .map_err(|_| "absent list is not UTF-8")?;
            if let Some(i) = dom.get_by_ref_mut(r) {
                i.properties.remove(&Ustr::from(name));
            }
        }
    }
    let primary_part = match primary_index {
        u32::MAX => None,
        n => Some(
            *subtree
                .get(n as usize)
                .ok_or("PrimaryPart index out of range")?,
        ),
    };
    let recorded = crate::provenance::string_attribute(&dom, folder, CONTENT_HASH_ATTRIBUTE)
        .ok_or_else(|| format!("entry has no {CONTENT_HASH_ATTRIBUTE}"))?;
    let actual = to_hex(&children_hash(&dom, folder));
    if actual != recorded {
        return Err(format!(
            "entry content hash {actual} is not the recorded {recorded}"
        ));
    }
    Ok(Decoded {
        dom,
        folder,
        primary_part,
        attributes,
    })
}

/// The engine's side of the seam: look up before a run starts, fill after one succeeds.
impl crate::Engine {
    /// Applies the cached results of `model` when the cache holds an intact entry for its
    /// inputs (its report, as a run's); otherwise remembers the key for filling and returns
    /// None.
    pub(crate) fn cached(
        &mut self,
        model: Ref,
        prepared: &crate::apply::Prepared,
        started: std::time::Instant,
    ) -> Option<crate::Report> {
        let cache = self.st().config.cache.clone()?;
        let key = self
            .host
            .with_dom_ref(|d| crate::provenance::Inputs::of(d, model).cache_key(d, model));
        if let Some(bytes) = cache.get(&key) {
            match decode(&bytes) {
                Ok(hit) => {
                    let produced = crate::apply::Produced {
                        container: hit.folder,
                        primary_part: hit.primary_part,
                        defaults: hit.attributes,
                        placed: true,
                        delta: None,
                    };
                    // What placing would have done to the model itself.
                    self.host
                        .with_dom_mut(|d| crate::apply::pin_pivot(d, model));
                    let outcome = self.apply_results(model, prepared, produced, Some(hit.dom));
                    return Some(self.conclude(model, outcome, started.elapsed()));
                }
                Err(reason) => cache.reject(&key, &reason),
            }
        }
        self.st().cache_keys.insert(model, key);
        None
    }

    /// [`Self::cached`] for each of `models`: the reports of hits, and the misses in order.
    pub(crate) fn cached_all(
        &mut self,
        models: &[Ref],
    ) -> (std::collections::HashMap<Ref, crate::Report>, Vec<Ref>) {
        let mut hits = std::collections::HashMap::with_capacity(models.len());
        if self.st().config.cache.is_none() {
            return (hits, models.to_vec());
        }
        let mut misses = Vec::new();
        for &m in models {
            let started = std::time::Instant::now();
            let prepared = self.host.with_dom_ref(|d| crate::apply::prepare(d, m));
            match prepared.ok().and_then(|p| self.cached(m, &p, started)) {
                Some(report) => {
                    self.st().states.entry(m).or_default().runs += 1;
                    hits.insert(m, report);
                }
                None => misses.push(m),
            }
        }
        (hits, misses)
    }

    /// Records provenance on the model's GeneratedFolder and, after a successful run with a
    /// cache, stores the applied results under the key the run started with.
    pub(crate) fn record_and_fill(&mut self, model: Ref, ok: bool) {
        let key = self.st().cache_keys.remove(&model);
        let cache = self.st().config.cache.clone();
        if self.st().config.provenance || cache.is_some() {
            self.host
                .with_dom_mut(|d| crate::provenance::record(d, model, ok));
        }
        if let (true, Some(key), Some(cache)) = (ok, key, cache) {
            // Also under the inputs as they are now: applying filled in the generator's
            // default attributes, and a run from these inputs gives the same results.
            let (entry, applied_key) = self.host.with_dom_ref(|d| {
                let entry = crate::apply::results_folder(d, model).map(|f| encode(d, model, f));
                let applied = crate::provenance::Inputs::of(d, model).cache_key(d, model);
                (entry, applied)
            });
            // Results that cannot be stored (a reference outside them) are simply not cached.
            if let Some(Ok(bytes)) = entry {
                cache.put(&key, &bytes);
                if applied_key != key {
                    cache.put(&applied_key, &bytes);
                }
            }
        }
    }
}
