//! Input fingerprints: a hash of everything that should regenerate a model when it changes —
//! explicit inputs (Size ÷ Scale, attributes) and implicit ones (which module, its Source, its
//! sandbox state). Scale alone is deliberately absent: it rescales without regenerating.

use crate::apply::{generator_of, prop};
use procmodel_dom::keys::KEYS;
use rbx_dom_weak::WeakDom;
use rbx_types::{Ref, Variant};
use std::collections::HashMap;
use std::io::Write;

/// Digests of generator sources, so a scene of many models sharing one module hashes its
/// Source once, not once per model per frame. An entry is used only while the module's
/// Source is byte-for-byte the one it was made from.
///
/// Also the scene's module list of the provenance inputs (`provenance::modules`), walked
/// once per stamp instead of once per model: the engine stamps it only within one step and
/// while the host's count of scene writes stands still (nothing else changes modules outside
/// GeneratedFolders during a step), and takes the stamp away outside steps.
#[derive(Default)]
pub struct SourceDigests {
    sources: HashMap<Ref, (String, blake3::Hash)>,
    stamp: Option<(u64, u64)>,
    /// Every ModuleScript outside GeneratedFolders: (full name, digest, referent), sorted.
    modules: Option<((u64, u64), Vec<(String, [u8; 32], Ref)>)>,
    /// Per generator, the digest of the other modules, made under `modules`' stamp.
    module_digests: HashMap<Option<Ref>, [u8; 32]>,
    /// Per generator module, what it carries (`provenance::carried_digest`, a content hash
    /// of its children), made under the stamp it names: once per step, not once per model.
    carried: Option<((u64, u64), HashMap<Ref, Option<[u8; 32]>>)>,
    /// Per read of the scene (path, own record), the digest of what is there, made under the
    /// stamp it names, for the reads nothing the engine does within a step can change.
    reads: Option<((u64, u64), ReadDigests)>,
}

type ReadDigests = HashMap<(Vec<String>, bool), [u8; 32]>;

impl SourceDigests {
    pub(crate) fn digest(&mut self, module: Ref, src: &str) -> blake3::Hash {
        match self.sources.get(&module) {
            Some((cached, digest)) if cached == src => *digest,
            _ => {
                let digest = blake3::hash(src.as_bytes());
                self.sources.insert(module, (src.to_owned(), digest));
                digest
            }
        }
    }

    /// Sets (or with None removes) the stamp under which the module list may be reused.
    pub(crate) fn stamp(&mut self, stamp: Option<(u64, u64)>) {
        self.stamp = stamp;
    }

    /// The digest `make` gives for `generator`'s other modules, reused while the stamp is
    /// the one the module list was made under.
    pub(crate) fn modules_digest(
        &mut self,
        generator: Option<Ref>,
        make: impl FnOnce(&mut Self) -> [u8; 32],
    ) -> [u8; 32] {
        let current = self
            .modules
            .as_ref()
            .is_some_and(|(made, _)| Some(*made) == self.stamp);
        if current && let Some(d) = self.module_digests.get(&generator) {
            return *d;
        }
        let d = make(self);
        // `make` went through `modules`, which made the list current if a stamp is set.
        if self.stamp.is_some() {
            self.module_digests.insert(generator, d);
        }
        d
    }

    /// What `make` gives for `module` (its `carried` digest), reused while the stamp is the
    /// one it was made under; made every time without a stamp.
    pub(crate) fn carried(
        &mut self,
        module: Ref,
        make: impl FnOnce() -> Option<[u8; 32]>,
    ) -> Option<[u8; 32]> {
        let Some(stamp) = self.stamp else {
            return make();
        };
        *under_stamp(&mut self.carried, stamp)
            .entry(module)
            .or_insert_with(make)
    }

    /// The digest of what is at `path` (`own`: its own record), reused while the stamp is the
    /// one it was made under when [`procmodel_dom::reads::read_digest_steady`] says nothing
    /// the engine does within a step changes it; made every time otherwise.
    pub(crate) fn read(&mut self, dom: &WeakDom, path: &[String], own: bool) -> [u8; 32] {
        let Some(stamp) = self.stamp else {
            return procmodel_dom::reads::read_digest(dom, path, own);
        };
        let digests = under_stamp(&mut self.reads, stamp);
        let key = (path.to_vec(), own);
        if let Some(d) = digests.get(&key) {
            return *d;
        }
        let (digest, steady) = procmodel_dom::reads::read_digest_steady(dom, path, own);
        if steady {
            digests.insert(key, digest);
        }
        digest
    }

    /// The module list `walk` makes, reused while the stamp is the one it was made under.
    pub(crate) fn modules(
        &mut self,
        walk: impl FnOnce(&mut Self) -> Vec<(String, [u8; 32], Ref)>,
    ) -> Vec<(String, [u8; 32], Ref)> {
        if let (Some(stamp), Some((made, list))) = (self.stamp, self.modules.take())
            && made == stamp
        {
            self.modules = Some((made, list.clone()));
            return list;
        }
        let list = walk(self);
        // Digests made under another list are stale.
        self.module_digests.clear();
        if let Some(stamp) = self.stamp {
            self.modules = Some((stamp, list.clone()));
        }
        list
    }
}

/// The map `slot` holds when it was made under `stamp`; else a new, empty one made under it
/// (what was made under another stamp may be stale).
fn under_stamp<K, V>(
    slot: &mut Option<((u64, u64), HashMap<K, V>)>,
    stamp: (u64, u64),
) -> &mut HashMap<K, V> {
    if slot.as_ref().is_some_and(|(made, _)| *made != stamp) {
        *slot = None;
    }
    &mut slot.get_or_insert_with(|| (stamp, HashMap::new())).1
}

/// The bytes a fingerprint hashes, gathered first and hashed once: BLAKE3 over the whole gives
/// the same digest as feeding it piece by piece, and each of the ~14 small `update`s a model
/// needs cost ~200 instructions (this runs for every model every frame).
#[derive(Default)]
struct Input(Vec<u8>);

impl Input {
    fn update(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
}

/// Feeds one attribute value: the common types as a tag and their bits, anything else by its
/// debug form.
fn hash_value(h: &mut Input, v: &Variant) {
    let floats = |h: &mut Input, tag: u8, xs: &[f32]| {
        h.update(&[tag]);
        for x in xs {
            h.update(&x.to_bits().to_le_bytes());
        }
    };
    match v {
        Variant::Float64(x) => {
            h.update(&[1]);
            h.update(&x.to_bits().to_le_bytes());
        }
        Variant::Bool(b) => {
            h.update(&[2, *b as u8]);
        }
        Variant::String(s) => {
            h.update(&[3]);
            h.update(&(s.len() as u64).to_le_bytes());
            h.update(s.as_bytes());
        }
        Variant::Color3(c) => floats(h, 4, &[c.r, c.g, c.b]),
        Variant::Vector3(p) => floats(h, 5, &[p.x, p.y, p.z]),
        Variant::Vector2(p) => floats(h, 6, &[p.x, p.y]),
        Variant::SecurityCapabilities(c) => {
            h.update(&[7]);
            h.update(&c.bits().to_le_bytes());
        }
        other => {
            h.update(&[0]);
            h.update(format!("{other:?}").as_bytes());
        }
    }
}

pub fn inputs(dom: &WeakDom, model: Ref, sources: &mut SourceDigests) -> u64 {
    let mut h = Input::default();
    let Some(inst) = dom.get_by_ref(model) else {
        return 0;
    };
    let scale = match prop(inst, KEYS.scale) {
        Some(Variant::Float32(s)) if *s > 0.0 => *s,
        _ => 1.0,
    };
    if let Some(Variant::Vector3(s)) = prop(inst, KEYS.size) {
        for c in [s.x, s.y, s.z] {
            // Rounded, so a rescale's f32 rounding is not a new input (see input_size_key).
            h.update(&procmodel_dom::input_size_key(c, scale).to_le_bytes());
        }
    }
    if let Some(Variant::Attributes(a)) = prop(inst, KEYS.attributes) {
        // Attributes iterate in name order (a BTreeMap).
        for (k, v) in a.iter() {
            h.update(k.as_bytes());
            hash_value(&mut h, v);
        }
    }
    match generator_of(dom, model).and_then(|g| dom.get_by_ref(g).map(|i| (g, i))) {
        Some((g, module)) => {
            // The Ref's hex form, as `to_string` gives it, without the temporary String.
            write!(h.0, "{g}").expect("writing to a Vec cannot fail");
            if let Some(Variant::String(src)) = prop(module, KEYS.source) {
                h.update(sources.digest(g, src).as_bytes());
            }
            for key in [KEYS.sandboxed, KEYS.capabilities] {
                match prop(module, key) {
                    Some(v) => hash_value(&mut h, v),
                    None => {
                        h.update(&[255]);
                    }
                }
            }
        }
        None => {
            h.update(b"no generator");
        }
    }
    let bytes = blake3::hash(&h.0);
    u64::from_le_bytes(bytes.as_bytes()[..8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbx_dom_weak::InstanceBuilder;
    use rbx_types::Attributes;

    fn scene(source: &str, attr: Variant) -> (WeakDom, Ref) {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let g = dom.insert(
            root,
            InstanceBuilder::new("ModuleScript").with_property("Source", source),
        );
        let mut a = Attributes::new();
        a.insert("A".into(), attr);
        let m = dom.insert(
            root,
            InstanceBuilder::new("ProceduralModel")
                .with_property("Generator", Variant::Ref(g))
                .with_property("Attributes", a),
        );
        (dom, m)
    }

    #[test]
    fn cached_source_digests_still_see_every_change() {
        let mut digests = SourceDigests::default();
        let (mut dom, m) = scene("return 1", Variant::Float64(1.0));
        let first = inputs(&dom, m, &mut digests);
        assert_eq!(inputs(&dom, m, &mut digests), first, "stable");
        let g = match dom
            .get_by_ref(m)
            .unwrap()
            .properties
            .get(&"Generator".into())
        {
            Some(Variant::Ref(g)) => *g,
            _ => unreachable!(),
        };
        dom.get_by_ref_mut(g)
            .unwrap()
            .properties
            .insert("Source".into(), Variant::String("return 2".into()));
        let edited = inputs(&dom, m, &mut digests);
        assert_ne!(edited, first, "an edited Source is a new input");
        // The first text again is the first input again.
        dom.get_by_ref_mut(g)
            .unwrap()
            .properties
            .insert("Source".into(), Variant::String("return 1".into()));
        assert_eq!(inputs(&dom, m, &mut digests), first);
        // An attribute of another type with the same printed value is a different input.
        let mut a = Attributes::new();
        a.insert("A".into(), Variant::String("1".into()));
        dom.get_by_ref_mut(m)
            .unwrap()
            .properties
            .insert("Attributes".into(), Variant::Attributes(a));
        assert_ne!(inputs(&dom, m, &mut digests), first);
    }
}
