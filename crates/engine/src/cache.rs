//! The result-cache seam: a store of applied generation results keyed by the inputs (the
//! `provenance` digests, the placement and the determinism epoch), and the entry format the
//! engine writes into it. The store itself (a directory, shared or not) lives outside the
//! engine (`procmodel-lock`'s `DirCache`).
//!
//! An entry is `ENTRY_MAGIC`, the BLAKE3 digest of the rest, then: the index of the
//! PrimaryPart the run chose in the results' pre-order (u32 LE, `u32::MAX` for none), the
//! model's attributes after the results were applied, and the applied GeneratedFolder (with
//! its provenance) in `codec`'s exact encoding — every property as it was in memory, so a
//! hit is the fresh run's tree and saves as its bytes in either file format.
//!
//! A hit is checked before it is used by the digest of its bytes, which the engine checks
//! whatever store it came from: a damaged entry is refused and the model generated. The
//! content hash the folder records was computed from the very tree the entry encodes, so a
//! hit is not hashed again ([`decode`], for checks outside the engine, does recompute it).
//! Results may refer outside themselves only to ModuleScripts whose path from the DataModel
//! is unambiguous (a nested ProceduralModel's Generator); the entry holds the path, found
//! again when it is decoded (the modules' names and Sources are part of the key). Results
//! with any other reference outside themselves are not cached.

mod codec;

use crate::provenance::CONTENT_HASH_ATTRIBUTE;
use procmodel_dom::hash::{children_hash, to_hex, visible_preorder};
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use rbx_types::{Attributes, Ref, Variant};
use std::collections::HashMap;

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
    /// Told of a hit the engine served without reading the store: the results for `key`
    /// were already in place, untouched ([`Placed`]).
    fn kept(&self, _key: &[u8; 32]) {}
    /// A saved scene's record (which of its models' results were intact when it was saved,
    /// [`SavedScene`]), kept beside the entries under a key of its own; not an entry, so not
    /// counted as a hit or a store. Stores that keep none return None.
    fn get_record(&self, _key: &[u8; 32]) -> Option<Vec<u8>> {
        None
    }
    /// Stores a saved scene's record (atomically, as an entry).
    fn put_record(&self, _key: &[u8; 32], _record: &[u8]) {}
}

/// A result cache in memory, for one process (a front end that wants hits without a cache
/// directory, and tests): unbounded, counting what happens to it.
#[derive(Debug, Default)]
pub struct MemoryCache {
    entries: std::sync::Mutex<std::collections::BTreeMap<[u8; 32], Vec<u8>>>,
    records: std::sync::Mutex<std::collections::BTreeMap<[u8; 32], Vec<u8>>>,
    hits: std::sync::atomic::AtomicUsize,
    kept: std::sync::atomic::AtomicUsize,
    puts: std::sync::atomic::AtomicUsize,
    rejected: std::sync::atomic::AtomicUsize,
}

impl MemoryCache {
    /// Entries returned by `get`.
    pub fn hits(&self) -> usize {
        self.hits.load(std::sync::atomic::Ordering::Relaxed)
    }
    /// Hits the engine served from results in place ([`ResultCache::kept`]).
    pub fn kept(&self) -> usize {
        self.kept.load(std::sync::atomic::Ordering::Relaxed)
    }
    /// Entries stored.
    pub fn puts(&self) -> usize {
        self.puts.load(std::sync::atomic::Ordering::Relaxed)
    }
    /// Entries the engine refused (damaged) and this cache dropped.
    pub fn rejected(&self) -> usize {
        self.rejected.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl ResultCache for MemoryCache {
    fn get(&self, key: &[u8; 32]) -> Option<Vec<u8>> {
        let entry = self.entries.lock().ok()?.get(key).cloned()?;
        self.hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(entry)
    }
    fn put(&self, key: &[u8; 32], entry: &[u8]) {
        if let Ok(mut e) = self.entries.lock() {
            e.insert(*key, entry.to_vec());
            self.puts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
    fn reject(&self, key: &[u8; 32], _reason: &str) {
        // A damaged entry is dropped, as a directory cache deletes it.
        self.rejected
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Ok(mut e) = self.entries.lock() {
            e.remove(key);
        }
    }
    fn kept(&self, _key: &[u8; 32]) {
        self.kept.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    fn get_record(&self, key: &[u8; 32]) -> Option<Vec<u8>> {
        self.records.lock().ok()?.get(key).cloned()
    }
    fn put_record(&self, key: &[u8; 32], record: &[u8]) {
        if let Ok(mut r) = self.records.lock() {
            r.insert(*key, record.to_vec());
        }
    }
}

/// Results a model has in place, made (by a run or a hit) while a result cache is on: a
/// later hit for the same key keeps them instead of decoding the entry again, as long as
/// nothing could have changed them since — the host counted no write to an instance in the
/// scene by Luau code, the engine gave no one else write access to the DOM (its mutations
/// forget every record that could be affected), the model still holds that very folder, no
/// nested model regenerated inside it, and it holds no voxels (their merge into Terrain is
/// redone by a decode). Kept results are the same instances, so they are byte-identical to
/// a decoded hit.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placed {
    /// The cache key of the model's inputs once the results were applied.
    pub(crate) key: [u8; 32],
    pub(crate) folder: Ref,
    /// The host's count of scene writes when they were placed.
    pub(crate) writes: u64,
    /// Instances in the results (the folder excluded), as the run reported.
    pub(crate) instances: usize,
    /// The model's PrimaryPart when it was one of the results.
    pub(crate) primary: Option<Ref>,
}

impl Placed {
    /// Whether `model` in `d` still holds these results as placed: the same folder, and no
    /// voxels in it (their merge into Terrain is redone by a decode). The write count is
    /// the caller's to compare.
    fn holds(&self, d: &WeakDom, model: Ref) -> bool {
        crate::apply::results_folder(d, model) == Some(self.folder)
            && crate::terrain::generated_region(d, self.folder).is_none()
    }
}

/// Every instance of `d` in pre-order with its position (the DataModel is 0): how a saved
/// scene's record names models ([`SavedScene`]).
fn numbered_preorder(d: &WeakDom, mut visit: impl FnMut(u32, Ref, &rbx_dom_weak::Instance)) {
    let mut position = 0u32;
    procmodel_dom::preorder(d, &[d.root_ref()], |r, i| {
        visit(position, r, i);
        position += 1;
        true
    });
}

/// Version 4: the results in `codec`'s exact encoding, checked by a digest of the entry's
/// bytes. Entries of other versions are never read: the format is part of every cache key
/// (`provenance::CACHE_FORMAT`), and a stray one is refused by this magic.
pub const ENTRY_MAGIC: &[u8; 8] = b"PMCACHE4";
const HEADER: usize = 8 + 32;

/// Encodes the applied results of `model` (its GeneratedFolder `folder`, with its
/// provenance recorded).
pub fn encode(dom: &WeakDom, model: Ref, folder: Ref) -> Result<Vec<u8>, String> {
    let inst = dom.get_by_ref(model).ok_or("model is gone")?;
    let writer = codec::Writer::new(dom, folder);
    let primary = match inst.properties.get(&procmodel_dom::keys::KEYS.primary_part) {
        Some(Variant::Ref(p)) => writer.position(*p),
        _ => None,
    };
    let attrs = match inst.properties.get(&procmodel_dom::keys::KEYS.attributes) {
        Some(v @ Variant::Attributes(_)) => v.clone(),
        _ => Variant::Attributes(Attributes::new()),
    };
    let mut body = Vec::new();
    body.extend_from_slice(&primary.unwrap_or(u32::MAX).to_le_bytes());
    writer
        .value(&mut body, &attrs)
        .map_err(|why| format!("the model's attributes: {why}"))?;
    body.extend_from_slice(&writer.finish()?);
    let mut out = Vec::with_capacity(HEADER + body.len());
    out.extend_from_slice(ENTRY_MAGIC);
    out.extend_from_slice(blake3::hash(&body).as_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// A hit decoded into the scene: the results as an orphan GeneratedFolder of its DOM.
pub struct Hit {
    pub folder: Ref,
    pub primary_part: Option<Ref>,
    /// The model's attributes after the run that filled the entry was applied.
    pub attributes: Vec<(String, Variant)>,
    /// Instances in the results (the folder included).
    pub instances: usize,
}

/// Checks an entry's bytes against the digest it carries and decodes its results into
/// `dom` (nothing is left there on an error). The results are the ones that were encoded,
/// value for value, with their recorded content hash; nothing is re-hashed.
pub fn decode_into(dom: &mut WeakDom, bytes: &[u8]) -> Result<Hit, String> {
    decode_body_into(dom, entry_body(bytes)?, codec::Modules::Find)
}

/// An entry's body, once its magic and digest are checked.
fn entry_body(bytes: &[u8]) -> Result<&[u8], String> {
    if bytes.len() < HEADER || &bytes[..8] != ENTRY_MAGIC {
        return Err(match bytes.get(..7) {
            Some(b"PMCACHE") => "an entry of another format version".into(),
            _ => "not a procmodel cache entry".into(),
        });
    }
    let body = &bytes[HEADER..];
    if blake3::hash(body).as_bytes() != &bytes[8..HEADER] {
        return Err("entry digest mismatch".into());
    }
    Ok(body)
}

/// [`decode_into`] after [`entry_body`].
fn decode_body_into(
    dom: &mut WeakDom,
    body: &[u8],
    modules: codec::Modules,
) -> Result<Hit, String> {
    let mut r = codec::Reader::new(body);
    let primary_index = r.u32()?;
    let attributes = match r.value(&[])? {
        Variant::Attributes(a) => a.into_iter().collect(),
        _ => return Err("the entry's model attributes are not attributes".into()),
    };
    let (folder, refs) = codec::subtree_into_with(dom, &mut r, modules)?;
    let fail = |dom: &mut WeakDom, why: &str| {
        dom.destroy(folder);
        Err(why.to_owned())
    };
    if !r.is_empty() {
        return fail(dom, "bytes after the results");
    }
    let primary_part = match primary_index {
        u32::MAX => None,
        n => match refs.get(n as usize) {
            Some(&p) => Some(p),
            None => return fail(dom, "PrimaryPart index out of range"),
        },
    };
    if crate::provenance::string_attribute(dom, folder, CONTENT_HASH_ATTRIBUTE).is_none() {
        return fail(dom, "entry has no ProcmodelContentHash");
    }
    Ok(Hit {
        folder,
        primary_part,
        attributes,
        instances: refs.len(),
    })
}

/// The instance at position `n` of [`visible_preorder`] (the root is 0).
fn nth_in_preorder(dom: &WeakDom, root: Ref, n: usize) -> Option<Ref> {
    let mut seen = 0;
    let mut found = None;
    visible_preorder(dom, root, |r, _| {
        if seen == n {
            found = Some(r);
        }
        seen += 1;
        found.is_none()
    });
    found
}

/// The content hash an entry's results record (`ProcmodelContentHash` of its folder), read
/// without decoding them; None for an entry that is not one.
pub fn recorded_content_hash(bytes: &[u8]) -> Option<String> {
    let (_, _, root) = entry_head(entry_body(bytes).ok()?)?;
    let dom = WeakDom::new(root.builder);
    crate::provenance::string_attribute(&dom, dom.root_ref(), CONTENT_HASH_ATTRIBUTE)
}

/// What opens an entry's body: the PrimaryPart's index, the model's attributes and the
/// results' root ([`codec::peek_root`]), read without decoding the results.
fn entry_head(body: &[u8]) -> Option<(u32, Vec<(String, Variant)>, codec::Root)> {
    let mut r = codec::Reader::new(body);
    let primary_index = r.u32().ok()?;
    let defaults = match r.value(&[]).ok()? {
        Variant::Attributes(a) => a.into_iter().collect(),
        _ => return None,
    };
    Some((primary_index, defaults, codec::peek_root(&mut r).ok()?))
}

/// A decoded entry in a DOM of its own (for checks outside a scene, e.g. a bake's merge).
pub struct Decoded {
    pub dom: WeakDom,
    pub folder: Ref,
    pub primary_part: Option<Ref>,
    /// The model's attributes after the run that filled the entry was applied.
    pub attributes: Vec<(String, Variant)>,
}

/// Decodes an entry and checks it fully: its digest, and the content hash of its results
/// recomputed against the one it records. References to modules outside the results (a
/// nested model's Generator) point at no instance of the DOM returned.
pub fn decode(bytes: &[u8]) -> Result<Decoded, String> {
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let hit = decode_body_into(&mut dom, entry_body(bytes)?, codec::Modules::Placeholder)?;
    let root = dom.root_ref();
    dom.transfer_within(hit.folder, root);
    let recorded = crate::provenance::string_attribute(&dom, hit.folder, CONTENT_HASH_ATTRIBUTE)
        .ok_or_else(|| format!("entry has no {CONTENT_HASH_ATTRIBUTE}"))?;
    let actual = to_hex(&children_hash(&dom, hit.folder));
    if actual != recorded {
        return Err(format!(
            "entry content hash {actual} is not the recorded {recorded}"
        ));
    }
    Ok(Decoded {
        dom,
        folder: hit.folder,
        primary_part: hit.primary_part,
        attributes: hit.attributes,
    })
}

/// What a scene saved by the engine held intact: per model (by its position in the saved
/// tree's pre-order, the DataModel 0) the cache key its results in place were for and their
/// instance count — its [`Placed`] records at the save. Stored in the result cache under
/// a key derived from the BLAKE3 digest of the file's bytes, so an engine that loads those
/// very bytes (decoding is deterministic) knows the same results are in place without
/// hashing them: a forced regeneration of an unchanged saved scene keeps them as a hit in
/// the process that placed them would. A file changed by anything has another digest and
/// no record; results then are checked in place against their entries.
/// Layout: [`SCENE_MAGIC`], the BLAKE3 digest of the body, the body (u32 count; per model
/// u32 position, 32-byte key, u64 instances; by position).
pub struct SavedScene;

pub const SCENE_MAGIC: &[u8; 8] = b"PMSCENE1";

impl SavedScene {
    /// The key of the record of a file whose bytes have digest `file`.
    fn key(file: &[u8; 32]) -> [u8; 32] {
        let mut h = blake3::Hasher::new_derive_key("procmodel saved scene record v1");
        h.update(&crate::provenance::CACHE_FORMAT.to_le_bytes());
        h.update(file);
        *h.finalize().as_bytes()
    }

    /// A record of `rows` (position, cache key, instances), as stored.
    pub fn encode(rows: &[(u32, [u8; 32], u64)]) -> Vec<u8> {
        let mut body = Vec::with_capacity(4 + rows.len() * 44);
        body.extend_from_slice(&(rows.len() as u32).to_le_bytes());
        for (position, key, instances) in rows {
            body.extend_from_slice(&position.to_le_bytes());
            body.extend_from_slice(key);
            body.extend_from_slice(&instances.to_le_bytes());
        }
        let mut out = Vec::with_capacity(40 + body.len());
        out.extend_from_slice(SCENE_MAGIC);
        out.extend_from_slice(blake3::hash(&body).as_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// The rows of an intact record; None for anything else.
    pub fn decode(bytes: &[u8]) -> Option<Vec<(u32, [u8; 32], u64)>> {
        let rest = bytes.strip_prefix(SCENE_MAGIC)?;
        let (digest, body) = rest.split_at_checked(32)?;
        if blake3::hash(body).as_bytes() != digest {
            return None;
        }
        let (count, mut rows) = body.split_at_checked(4)?;
        let count = u32::from_le_bytes(count.try_into().ok()?) as usize;
        if rows.len() != count.checked_mul(44)? {
            return None;
        }
        let mut out = Vec::with_capacity(count);
        while let Some((row, rest)) = rows.split_at_checked(44) {
            let position = u32::from_le_bytes(row[..4].try_into().ok()?);
            let key: [u8; 32] = row[4..36].try_into().ok()?;
            let instances = u64::from_le_bytes(row[36..44].try_into().ok()?);
            out.push((position, key, instances));
            rows = rest;
        }
        Some(out)
    }
}

/// Which of a scene's models had their results intact, taken before the scene is written
/// ([`crate::Engine::saved_record`]): stored under the digest of the written bytes once the
/// file exists, so a caller may free the engine (and its VM) before a large save.
pub struct SavedRecord {
    cache: std::sync::Arc<dyn ResultCache>,
    rows: Vec<(u32, [u8; 32], u64)>,
}

impl SavedRecord {
    /// Stores the record for the file whose bytes have the BLAKE3 digest `file` (written
    /// from the scene as it was when the record was taken).
    pub fn store(self, file: [u8; 32]) {
        self.cache
            .put_record(&SavedScene::key(&file), &SavedScene::encode(&self.rows));
    }
}

impl crate::Engine {
    /// After a save whose bytes have digest `file`: records in the result cache which models'
    /// results were intact ([`SavedScene`]).
    pub(crate) fn record_saved(&self, file: [u8; 32]) {
        if let Some(record) = self.saved_record() {
            record.store(file);
        }
    }

    /// Which models' results are intact now, for a save of the scene as it is ([`SavedScene`]):
    /// None when no cache is set, the host counts no writes, or no results are known intact.
    pub fn saved_record(&self) -> Option<SavedRecord> {
        let cache = self.st().config.cache.clone()?;
        let writes = self.host.scene_writes()?;
        let placed: HashMap<Ref, Placed> = self
            .st()
            .placed
            .iter()
            .filter(|(_, p)| p.writes == writes)
            .map(|(m, p)| (*m, *p))
            .collect();
        if placed.is_empty() {
            return None;
        }
        let mut rows = self.host.with_dom_ref(|d| {
            let mut rows = Vec::new();
            numbered_preorder(d, |position, r, _| {
                if let Some(p) = placed.get(&r)
                    && p.holds(d, r)
                {
                    rows.push((position, p.key, p.instances as u64));
                }
            });
            rows
        });
        if rows.is_empty() {
            return None;
        }
        rows.sort_unstable_by_key(|r| r.0);
        Some(SavedRecord { cache, rows })
    }

    /// After loading a file whose bytes have digest `file`: the results its record says were
    /// intact at the save are recorded as placed ([`Placed`]), so hits keep them. Rows that do
    /// not name a ProceduralModel with results are skipped.
    pub(crate) fn adopt_saved(&mut self, file: [u8; 32]) {
        let Some(cache) = self.st().config.cache.clone() else {
            return;
        };
        // Without counted writes nothing can be recorded as placed.
        if self.host.scene_writes().is_none() {
            return;
        }
        let Some(rows) = cache
            .get_record(&SavedScene::key(&file))
            .and_then(|b| SavedScene::decode(&b))
        else {
            return;
        };
        let wanted: HashMap<u32, ([u8; 32], u64)> =
            rows.iter().map(|&(p, k, n)| (p, (k, n))).collect();
        let found = self.host.with_dom_ref(|d| {
            let mut found = Vec::new();
            numbered_preorder(d, |position, r, i| {
                if let Some(&(key, instances)) = wanted.get(&position)
                    && i.class == "ProceduralModel"
                    && let Some(folder) = crate::apply::results_folder(d, r)
                    && crate::terrain::generated_region(d, folder).is_none()
                {
                    found.push((r, key, folder, instances));
                }
            });
            found
        });
        for (model, key, folder, instances) in found {
            let instances = usize::try_from(instances).unwrap_or(usize::MAX);
            self.remember_placed(model, key, folder, instances);
        }
    }
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
        let mut sources = self.take_sources();
        let (base, key) = self
            .host
            .with_dom_ref(|d| lookup_keys(d, model, &mut sources, &*cache));
        self.st().sources = sources;
        if let Some(instances) = self.kept_in_place(model, &key) {
            cache.kept(&key);
            self.st().from_cache.insert(model);
            self.st().kept.insert(model);
            // What applying does to the model itself; the results stay as they are.
            self.host
                .with_dom_mut(|d| crate::apply::set_dirty(d, model, false));
            return Some(self.conclude(model, Ok(instances), started.elapsed()));
        }
        if let Some(report) = self.reuse_held(model, &key, prepared, started) {
            cache.kept(&key);
            return Some(report);
        }
        if let Some(bytes) = cache.get(&key) {
            let body = entry_body(&bytes);
            if let Ok(body) = body
                && let Some(instances) = self.verified_in_place(model, key, body)
            {
                cache.kept(&key);
                self.st().from_cache.insert(model);
                self.st().kept.insert(model);
                return Some(self.conclude(model, Ok(instances), started.elapsed()));
            }
            match body.and_then(|body| {
                self.host
                    .with_dom_mut(|d| decode_body_into(d, body, codec::Modules::Find))
            }) {
                Ok(hit) => {
                    let produced = crate::apply::Produced {
                        container: hit.folder,
                        primary_part: hit.primary_part,
                        defaults: hit.attributes,
                        placed: true,
                        delta: None,
                        touched_outside: false,
                        counted: None,
                        created: 0,
                        requires: None,
                        reads: Vec::new(),
                    };
                    return Some(self.apply_hit(model, prepared, produced, started));
                }
                Err(reason) => cache.reject(&key, &reason),
            }
        }
        self.st().cache_keys.insert(model, base);
        None
    }

    /// Applies results of `model` for `key` that the undo history holds, intact (an input
    /// changed and then changed back): the very folder the earlier generation or hit placed
    /// comes back, as undo would bring it back, and no entry is read or decoded. Its report,
    /// as a hit's; None when the history holds no such results.
    fn reuse_held(
        &mut self,
        model: Ref,
        key: &[u8; 32],
        prepared: &crate::apply::Prepared,
        started: std::time::Instant,
    ) -> Option<crate::Report> {
        let writes = self.host.scene_writes()?;
        let state = self.state.clone();
        let record = self
            .host
            .with_dom_ref(|d| state.borrow_mut().undo.take_held(d, model, key, writes))?;
        let produced = crate::apply::Produced {
            container: record.folder,
            primary_part: record.primary,
            // The inputs are the ones the results were applied with: nothing to fill in.
            defaults: Vec::new(),
            placed: true,
            delta: None,
            touched_outside: false,
            counted: Some(record.instances),
            created: 0,
            requires: None,
            reads: Vec::new(),
        };
        // Its record stands (no write since, the same inputs).
        self.st().reused.insert(model, record);
        Some(self.apply_hit(model, prepared, produced, started))
    }

    /// Applies a hit's results, which come placed for the model's pivot, and reports as a
    /// run would. The folder carries the provenance the filling run recorded, for the same
    /// inputs: recording it again would re-hash the results for nothing.
    fn apply_hit(
        &mut self,
        model: Ref,
        prepared: &crate::apply::Prepared,
        produced: crate::apply::Produced,
        started: std::time::Instant,
    ) -> crate::Report {
        // What placing would have done to the model itself.
        self.host
            .with_dom_mut(|d| crate::apply::pin_pivot(d, model));
        let outcome = self.apply_results(model, prepared, produced, None);
        self.st().from_cache.insert(model);
        self.conclude(model, outcome, started.elapsed())
    }

    /// The instance count of `model`'s results when they are the intact results of a
    /// generation with cache key `key` ([`Placed`]).
    fn kept_in_place(&self, model: Ref, key: &[u8; 32]) -> Option<usize> {
        let placed = self.st().placed.get(&model).copied()?;
        let writes = self.host.scene_writes()?;
        (placed.key == *key && placed.writes == writes)
            .then_some(())
            .and_then(|()| {
                self.host
                    .with_dom_ref(|d| placed.holds(d, model).then_some(placed.instances))
            })
    }

    /// Keeps `model`'s results in place when they are, canonically, the results of the
    /// entry `body` (already checked) for its inputs — a scene saved after a generation and
    /// loaded by another process, or results the engine forgot it placed: the folder's own
    /// record (its provenance attributes included) is the entry's, its children hash to the
    /// content hash the entry records, and it holds as many instances and no terrain voxels
    /// (whose merge a decode redoes). The scene file does not vouch for itself: the entry
    /// does, and the hash shows the results are what decoding it would give. Then the model
    /// is settled as a hit settles it, the results are recorded as placed, and their instance
    /// count is returned. Nested ProceduralModels in them are the entry's but their own
    /// results are not part of it: they are marked dirty and looked at in the step's next
    /// pass, as the nested models of a decoded hit are.
    fn verified_in_place(&mut self, model: Ref, key: [u8; 32], body: &[u8]) -> Option<usize> {
        let (primary_index, defaults, root) = entry_head(body)?;
        let count = root.count;
        let entry_record = {
            let dom = WeakDom::new(root.builder);
            procmodel_dom::hash::record_digest(&dom, dom.root_ref())
        };
        let (folder, primary_part, nested) = self.host.with_dom_ref(|d| {
            let folder = crate::apply::results_folder(d, model)?;
            // A second GeneratedFolder beside them is one a decode would remove.
            if crate::apply::results_folders(d, model).len() != 1
                || procmodel_dom::hash::record_digest(d, folder) != entry_record
                || crate::terrain::generated_region(d, folder).is_some()
            {
                return None;
            }
            // The folder's references into its results (a PrimaryPart) point where the
            // entry's do, and references to modules outside (nested models' Generator) to
            // the same modules.
            for o in &root.outside {
                let holder = nth_in_preorder(d, folder, o.position)?;
                let target = codec::resolve_path(d, &o.path)?;
                match d.get_by_ref(holder)?.properties.get(&o.key) {
                    Some(Variant::Ref(t)) if *t == target => {}
                    _ => return None,
                }
            }
            let inst = d.get_by_ref(folder)?;
            for (key, position) in &root.references {
                match inst.properties.get(key) {
                    Some(Variant::Ref(target))
                        if nth_in_preorder(d, folder, *position) == Some(*target) => {}
                    _ => return None,
                }
            }
            let recorded = crate::provenance::string_attribute(d, folder, CONTENT_HASH_ATTRIBUTE)?;
            let (hash, instances, nested) = procmodel_dom::hash::children_hash_counted(d, folder);
            if instances + 1 != count || to_hex(&hash) != recorded {
                return None;
            }
            let primary_part = match primary_index {
                u32::MAX => None,
                n => Some(nth_in_preorder(d, folder, n as usize)?),
            };
            Some((folder, primary_part, nested))
        })?;
        let settled = self.host.with_dom_mut(|d| {
            crate::apply::pin_pivot(d, model);
            crate::apply::settle_model(d, model, &defaults, primary_part)
        });
        if nested > 0 {
            let models = self.host.with_dom_mut(|d| {
                let mut models = Vec::new();
                visible_preorder(d, folder, |r, i| {
                    if r != folder && i.class == "ProceduralModel" {
                        models.push(r);
                    }
                    true
                });
                for &m in &models {
                    crate::apply::set_dirty(d, m, true);
                }
                models
            });
            self.st().found_nested.extend(models);
        }
        // Defaults filled in change the inputs: the results are placed for the new ones.
        let key = match settled.ok()? {
            false => key,
            true => {
                let mut sources = self.take_sources();
                let key = self.host.with_dom_ref(|d| {
                    crate::provenance::Inputs::of_with(d, model, &mut sources).cache_key(d, model)
                });
                self.st().sources = sources;
                key
            }
        };
        let instances = count - 1;
        self.remember_placed(model, key, folder, instances);
        Some(instances)
    }

    /// Records `folder` as `model`'s results in place for `key` ([`Placed`]), at the host's
    /// current count of scene writes (nothing, when the host does not count them).
    fn remember_placed(&mut self, model: Ref, key: [u8; 32], folder: Ref, instances: usize) {
        if let Some(writes) = self.host.scene_writes() {
            let primary = self.host.with_dom_ref(|d| {
                match d
                    .get_by_ref(model)?
                    .properties
                    .get(&procmodel_dom::keys::KEYS.primary_part)
                {
                    Some(Variant::Ref(p)) if procmodel_dom::is_within(d, *p, folder) => Some(*p),
                    _ => None,
                }
            });
            let placed = Placed {
                key,
                folder,
                writes,
                instances,
                primary,
            };
            self.st().placed.insert(model, placed);
        }
    }

    /// Forgets the results in place of the models `model` is nested in: its own results
    /// just changed inside theirs.
    /// Also notes them for their content hash to be recorded again at the step's end.
    pub(crate) fn forget_enclosing(&mut self, model: Ref) {
        let mut st = self.st();
        let rerecord = st.config.records_provenance();
        if st.placed.is_empty() && !rerecord {
            return;
        }
        self.host.with_dom_ref(|d| {
            let mut cur = d.get_by_ref(model).map_or(Ref::none(), |i| i.parent());
            while let Some(i) = d.get_by_ref(cur) {
                if i.class == "ProceduralModel" {
                    st.placed.remove(&cur);
                    if rerecord {
                        st.rerecord.push(cur);
                    }
                }
                cur = i.parent();
            }
        });
    }

    /// Records again the content hash of the models noted by [`Self::forget_enclosing`]
    /// this step (their nested models are applied by now).
    pub(crate) fn rerecord_enclosing(&mut self) {
        let mut models = std::mem::take(&mut self.st().rerecord);
        if models.is_empty() {
            return;
        }
        let mut seen = std::collections::HashSet::new();
        models.retain(|m| seen.insert(*m));
        self.host.with_dom_mut(|d| {
            for m in models {
                crate::provenance::rerecord_hash(d, m);
            }
        });
    }

    /// How runs on the scene's VM watch their writes outside their container: noted when a
    /// result cache is on (a run that makes them is not cached), else not at all.
    pub(crate) fn watch_outside(&self) -> procmodel_script::WatchOutside {
        if self.st().config.cache.is_some() {
            procmodel_script::WatchOutside::Note
        } else {
            procmodel_script::WatchOutside::Off
        }
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
    /// cache, stores the applied results under the key the run started with; with a cache,
    /// records the results now in place ([`Placed`]). `instances`: the count in the
    /// results, None when the run failed.
    pub(crate) fn record_and_fill(&mut self, model: Ref, instances: Option<usize>) {
        let ok = instances.is_some();
        let base = self.st().cache_keys.remove(&model);
        let requires = self.st().run_requires.remove(&model);
        let reads = self.st().run_reads.remove(&model).unwrap_or_default();
        let cache = self.st().config.cache.clone();
        let hit = self.st().from_cache.remove(&model);
        if self.st().kept.remove(&model) {
            // Kept in place: nothing changed but the record's write count, which is the same.
            return;
        }
        let reused = self.st().reused.remove(&model);
        if let Some(record) = reused {
            // Taken back from the undo history: placed again, under the record they kept.
            if ok {
                self.st().placed.insert(model, record);
            }
            return;
        }
        // A run that read a subtree holding its own model saw what its own results change.
        let base = base.filter(|_| {
            reads.is_empty()
                || !self
                    .host
                    .with_dom_ref(|d| crate::provenance::reads_hold(d, &reads, model))
        });
        let placeable = ok && cache.is_some() && (hit || base.is_some());
        self.st().placed.remove(&model);
        let ahead = self.st().precomputed.remove(&model);
        let mut sources = self.take_sources();
        if self.st().config.records_provenance() && !(hit && ok) {
            self.host.with_dom_mut(|d| {
                crate::provenance::record(
                    d,
                    model,
                    ok,
                    ahead,
                    requires.as_deref(),
                    &reads,
                    &mut sources,
                )
            });
        }
        // The inputs as they are now: applying filled in the generator's default attributes,
        // and a run from these inputs gives the same results. Its modules are the ones the
        // run required (a hit's results name theirs).
        let fill = base.zip(cache).filter(|_| ok);
        let applied = (fill.is_some() || placeable).then(|| {
            self.host.with_dom_ref(|d| {
                use crate::provenance::Modules;
                let entries = requires
                    .as_deref()
                    .map(|r| crate::provenance::run_modules(d, model, r, &mut sources));
                let covered = entries
                    .as_deref()
                    .map_or(Modules::Recorded, Modules::Listed);
                let inputs =
                    crate::provenance::Inputs::after_defaults(d, model, &[], covered, &mut sources)
                        .with_reads(&reads);
                (inputs.base_key(d, model), inputs.deps_digest(), entries)
            })
        });
        let applied_key = applied
            .as_ref()
            .map(|(base, modules, _)| crate::provenance::keyed(base, modules));
        if let (Some((base, cache)), Some((applied_base, modules, entries))) = (fill, &applied) {
            let key = crate::provenance::keyed(&base, modules);
            let applied_key = crate::provenance::keyed(applied_base, modules);
            let entry = self.host.with_dom_ref(|d| {
                crate::apply::results_folder(d, model).map(|f| encode(d, model, f))
            });
            // Results that cannot be stored (a reference outside them) are simply not cached.
            if let Some(Ok(bytes)) = entry {
                cache.put(&key, &bytes);
                if applied_key != key {
                    cache.put(&applied_key, &bytes);
                }
                // Which modules and reads to look the entry up with, from these inputs
                // (before the run, a process with no results in its scene knows nothing
                // else of them). None is what a lookup assumes without a record: nothing to
                // store.
                let entries = entries.as_deref().unwrap_or(&[]);
                if !entries.is_empty() || !reads.is_empty() {
                    let record = crate::provenance::encode_record(entries, &reads).into_bytes();
                    cache.put_record(&crate::provenance::requires_key(&base), &record);
                    if *applied_base != base {
                        cache.put_record(&crate::provenance::requires_key(applied_base), &record);
                    }
                }
            }
        }
        if let (true, Some(key)) = (placeable, applied_key)
            && let Some(folder) = self
                .host
                .with_dom_ref(|d| crate::apply::results_folder(d, model))
        {
            self.remember_placed(model, key, folder, instances.unwrap_or(0));
        }
        self.st().sources = sources;
    }
}

/// The keys to look `model`'s results up under: its base key and the full key with the
/// modules its results name, or when it has none, the modules the cache's record for the
/// base key names (none when it has no record: a generator requiring nothing).
fn lookup_keys(
    d: &WeakDom,
    model: Ref,
    sources: &mut crate::fingerprint::SourceDigests,
    cache: &dyn ResultCache,
) -> ([u8; 32], [u8; 32]) {
    use crate::provenance::{Inputs, Modules};
    let recorded = crate::provenance::recorded_names(d, model);
    let named = recorded.as_deref().unwrap_or(&[]);
    let inputs = Inputs::after_defaults(d, model, &[], Modules::Named(named), sources);
    let base = inputs.base_key(d, model);
    if recorded.is_some() {
        let inputs = inputs.with_reads(&crate::provenance::recorded_reads_with(d, model, sources));
        return (base, crate::provenance::keyed(&base, &inputs.deps_digest()));
    }
    let record = cache
        .get_record(&crate::provenance::requires_key(&base))
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| crate::provenance::decode_record(&s));
    let inputs = match record {
        Some((names, reads)) => {
            let mut inputs = inputs;
            if !names.is_empty() {
                let generator = crate::apply::generator_of(d, model);
                let modules =
                    crate::provenance::named_modules_digest(d, generator, &names, sources);
                inputs.set_modules_digest(modules);
            }
            inputs.with_reads(&crate::provenance::reads_now(d, &reads, sources))
        }
        None => inputs,
    };
    (base, crate::provenance::keyed(&base, &inputs.deps_digest()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use procmodel_dom::keys::KEYS;

    /// A scene with a model whose GeneratedFolder holds two parts (one its PrimaryPart)
    /// and records its content hash, as a run leaves it; the model and the folder.
    fn scene() -> (WeakDom, Ref, Ref) {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let mut attrs = Attributes::new();
        attrs.insert("Seed".into(), Variant::Float64(7.0));
        let model = dom.insert(
            root,
            InstanceBuilder::new("ProceduralModel").with_property("Attributes", attrs),
        );
        let folder = dom.insert(model, InstanceBuilder::new("GeneratedFolder"));
        let a = dom.insert(folder, InstanceBuilder::new("Part").with_name("A"));
        dom.insert(
            folder,
            InstanceBuilder::new("Part")
                .with_name("B")
                .with_property("Color", rbx_types::Color3::new(0.1, 0.2, 0.3)),
        );
        let hash = to_hex(&children_hash(&dom, folder));
        let mut fa = Attributes::new();
        fa.insert(CONTENT_HASH_ATTRIBUTE.into(), Variant::String(hash));
        let f = dom.get_by_ref_mut(folder).unwrap();
        f.properties
            .insert(KEYS.attributes, Variant::Attributes(fa));
        let m = dom.get_by_ref_mut(model).unwrap();
        m.properties.insert(KEYS.primary_part, Variant::Ref(a));
        (dom, model, folder)
    }

    fn instances(dom: WeakDom) -> usize {
        dom.into_raw().1.len()
    }

    #[test]
    fn an_entry_decodes_to_the_results_it_was_made_from() {
        let (dom, model, folder) = scene();
        let bytes = encode(&dom, model, folder).unwrap();
        let d = decode(&bytes).unwrap();
        assert_eq!(children_hash(&d.dom, d.folder), children_hash(&dom, folder));
        let pp = d.primary_part.expect("PrimaryPart");
        assert_eq!(d.dom.get_by_ref(pp).unwrap().name, "A");
        assert_eq!(
            d.attributes,
            vec![("Seed".to_owned(), Variant::Float64(7.0))]
        );
    }

    #[test]
    fn a_flipped_byte_anywhere_is_refused_and_leaves_nothing() {
        let (dom, model, folder) = scene();
        let bytes = encode(&dom, model, folder).unwrap();
        for n in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[n] ^= 0x20;
            let mut into = WeakDom::new(InstanceBuilder::new("DataModel"));
            let e = decode_into(&mut into, &bad).err().expect("refused");
            let expected = if n < 8 {
                "not a procmodel cache entry"
            } else {
                "entry digest mismatch"
            };
            // A flip in the magic's last byte reads as another format version.
            if n != 7 {
                assert_eq!(e, expected, "byte {n}");
            }
            assert_eq!(instances(into), 1, "byte {n}");
        }
        let mut old = bytes.clone();
        old[..8].copy_from_slice(b"PMCACHE2");
        let mut into = WeakDom::new(InstanceBuilder::new("DataModel"));
        assert_eq!(
            decode_into(&mut into, &old).err().as_deref(),
            Some("an entry of another format version")
        );
    }

    /// Behind a correct digest (a store that signs what it is given, or a bug), any body
    /// decodes or is refused: no panic, nothing left behind on a refusal, and the readers
    /// that do not decode (the recorded hash, a check in place) agree it is an entry or not.
    #[test]
    fn any_body_behind_a_good_digest_decodes_or_is_refused_cleanly() {
        let (mut dom, model, folder) = scene();
        // A nested model whose Generator is a module outside the results (the outside
        // table), and a reference inside them.
        let storage = dom.insert(
            dom.root_ref(),
            InstanceBuilder::new("Folder").with_name("S"),
        );
        let module = dom.insert(storage, InstanceBuilder::new("ModuleScript").with_name("G"));
        dom.insert(
            folder,
            InstanceBuilder::new("ProceduralModel")
                .with_name("N")
                .with_property("Generator", Variant::Ref(module)),
        );
        let bytes = encode(&dom, model, folder).unwrap();
        let body = &bytes[HEADER..];
        let sign = |body: &[u8]| {
            let mut out = ENTRY_MAGIC.to_vec();
            out.extend_from_slice(blake3::hash(body).as_bytes());
            out.extend_from_slice(body);
            out
        };
        let target = || {
            let mut d = WeakDom::new(InstanceBuilder::new("DataModel"));
            let s = d.insert(d.root_ref(), InstanceBuilder::new("Folder").with_name("S"));
            d.insert(s, InstanceBuilder::new("ModuleScript").with_name("G"));
            d
        };
        let before = instances(target());
        let mut bodies: Vec<Vec<u8>> = Vec::new();
        for n in 0..body.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut b = body.to_vec();
                b[n] ^= flip;
                bodies.push(b);
            }
            bodies.push(body[..n].to_vec());
        }
        let mut decoded = 0;
        for b in &bodies {
            let entry = sign(b);
            let mut into = target();
            match decode_into(&mut into, &entry) {
                Ok(hit) => {
                    decoded += 1;
                    assert!(into.get_by_ref(hit.folder).is_some());
                }
                Err(_) => assert_eq!(instances(into), before),
            }
            let _ = decode(&entry);
            let _ = recorded_content_hash(&entry);
        }
        assert!(
            decoded > 0,
            "some mutations (a name's letters, a float) still decode"
        );
        assert_eq!(recorded_content_hash(&bytes).map(|h| h.len()), Some(64));
    }

    /// A saved scene's record reads back as written; any flipped byte or truncation is
    /// refused (never a panic, never other rows).
    #[test]
    fn a_saved_scene_record_round_trips_and_refuses_damage() {
        let rows = vec![(3u32, [7u8; 32], 12u64), (40, [9; 32], 100_000)];
        let bytes = SavedScene::encode(&rows);
        assert_eq!(SavedScene::decode(&bytes), Some(rows.clone()));
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x20;
            assert_eq!(SavedScene::decode(&b), None, "byte {i}");
            assert_eq!(SavedScene::decode(&bytes[..i]), None, "length {i}");
        }
        assert_eq!(
            SavedScene::decode(&SavedScene::encode(&[])),
            Some(Vec::new())
        );
        assert_ne!(SavedScene::key(&[1; 32]), SavedScene::key(&[2; 32]));
    }

    #[test]
    fn a_hash_that_does_not_match_the_results_is_caught_by_the_full_check() {
        // An entry whose digest is right but whose recorded content hash is not the one of
        // the results it holds (an encoder bug): the engine trusts the record, `decode`
        // (the full check a bake's merge uses) refuses it.
        let (mut dom, model, folder) = scene();
        let b = dom.get_by_ref(folder).unwrap().children()[1];
        dom.get_by_ref_mut(b).unwrap().name = "Edited".into();
        let bytes = encode(&dom, model, folder).unwrap();
        let e = decode(&bytes).err().expect("refused");
        assert!(e.contains("is not the recorded"), "{e}");
    }
}
