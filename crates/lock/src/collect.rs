//! Lock entries from a scene whose models were just regenerated: the inputs as the engine's
//! provenance digests them, shown values for attributes, and the results' content hash.

use crate::lockfile::{InputLock, ModelLock, ModuleLock, ReadLock};
use procmodel_dom::hash::{children_hash, to_hex};
use procmodel_dom::keys::KEYS;
use procmodel_engine::provenance::{self, Inputs};
use rbx_dom_weak::WeakDom;
use rbx_types::{Ref, Variant};

/// BLAKE3 of a file's bytes, hex.
pub fn file_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// An attribute's value as a lockfile shows it: a string attribute read from a file, which
/// rbx_types gives as a `BinaryString` (attributes have one string type), is the `String` it
/// was written from, as the inputs digest has it (`procmodel_dom::hash`); so a scene locked
/// in memory (a bake's merge) and the same scene read from its file show the same input.
fn attribute_shown(v: &Variant) -> Variant {
    match procmodel_dom::attrs::string(v) {
        Some(s) => Variant::String(s.to_owned()),
        None => v.clone(),
    }
}

/// The lock entry of `model` as `dom` holds it now. `stored`: whether the scene file held
/// the same results.
pub fn model_lock(dom: &WeakDom, model: Ref, stored: bool) -> ModelLock {
    let inst = dom.get_by_ref(model);
    let prop = |k| inst.and_then(|i| i.properties.get(&k));
    let generator = provenance::generator(dom, model);
    let ginst = generator.and_then(|g| dom.get_by_ref(g));
    let gprop = |k| ginst.and_then(|i| i.properties.get(&k));
    // An unset Size is the class default a saved file gives it (as the inputs digest it).
    let size_value =
        prop(KEYS.size).or_else(|| inst.and_then(|i| procmodel_dom::db_default(&i.class, "Size")));
    let size = match size_value {
        Some(Variant::Vector3(v)) => [v.x as f64, v.y as f64, v.z as f64],
        _ => [0.0; 3],
    };
    let scale = match prop(KEYS.scale) {
        Some(Variant::Float32(s)) => *s as f64,
        _ => 1.0,
    };
    let attrs = match prop(KEYS.attributes) {
        Some(Variant::Attributes(a)) => a.clone(),
        _ => rbx_types::Attributes::new(),
    };
    let inputs = Inputs::of(dom, model)
        .parts
        .into_iter()
        .map(|p| {
            let attr = p
                .name
                .strip_prefix("attr.")
                .and_then(|n| attrs.get(n))
                .map(attribute_shown);
            InputLock {
                name: p.name.clone(),
                digest: to_hex(&p.digest),
                ty: attr.as_ref().map(|v| format!("{:?}", v.ty())),
                value: attr
                    .as_ref()
                    .map(|v| serde_json::to_string(v).unwrap_or_default()),
            }
        })
        .collect();
    let results = provenance::results(dom, model);
    ModelLock {
        path: procmodel_dom::full_name(dom, model),
        generator: generator
            .map(|g| procmodel_dom::full_name(dom, g))
            .unwrap_or_default(),
        source: match gprop(KEYS.source) {
            Some(Variant::String(s)) => file_hash(s.as_bytes()),
            _ => file_hash(b""),
        },
        sandboxed: matches!(gprop(KEYS.sandboxed), Some(Variant::Bool(true))),
        capabilities: match gprop(KEYS.capabilities) {
            Some(Variant::SecurityCapabilities(c)) => format!("{:x}", c.bits()),
            _ => "0".to_owned(),
        },
        size,
        scale,
        content_hash: results
            .map(|f| to_hex(&children_hash(dom, f)))
            .unwrap_or_else(|| to_hex(&[0; 32])),
        instances: results
            .map(|f| procmodel_dom::count_subtree(dom, f) as u64 - 1)
            .unwrap_or(0),
        stored,
        inputs,
        modules: provenance::required_modules(dom, model)
            .into_iter()
            .map(|(name, d)| ModuleLock {
                name,
                digest: to_hex(&d),
            })
            .collect(),
        reads: provenance::recorded_reads(dom, model)
            .into_iter()
            .map(|r| ReadLock {
                path: procmodel_dom::reads::encode_path(&r.path),
                own: r.own,
                digest: to_hex(&r.digest),
            })
            .collect(),
    }
}
