//! Input fingerprints: a hash of everything that should regenerate a model when it changes —
//! explicit inputs (Size ÷ Scale, attributes) and implicit ones (which module, its Source, its
//! sandbox state). Scale alone is deliberately absent: it rescales without regenerating.

use crate::apply::{generator_of, prop};
use rbx_dom_weak::WeakDom;
use rbx_types::{Ref, Variant};

pub fn inputs(dom: &WeakDom, model: Ref) -> u64 {
    let mut h = blake3::Hasher::new();
    let Some(inst) = dom.get_by_ref(model) else {
        return 0;
    };
    let scale = match prop(inst, "Scale") {
        Some(Variant::Float32(s)) if *s > 0.0 => *s,
        _ => 1.0,
    };
    if let Some(Variant::Vector3(s)) = prop(inst, "Size") {
        for c in [s.x / scale, s.y / scale, s.z / scale] {
            h.update(&c.to_bits().to_le_bytes());
        }
    }
    if let Some(Variant::Attributes(a)) = prop(inst, "Attributes") {
        // Attributes iterate in name order (a BTreeMap).
        for (k, v) in a.iter() {
            h.update(k.as_bytes());
            h.update(format!("{v:?}").as_bytes());
        }
    }
    match generator_of(dom, model).and_then(|g| dom.get_by_ref(g).map(|i| (g, i))) {
        Some((g, module)) => {
            h.update(g.to_string().as_bytes());
            if let Some(Variant::String(src)) = prop(module, "Source") {
                h.update(src.as_bytes());
            }
            for key in ["Sandboxed", "Capabilities"] {
                h.update(format!("{:?}", prop(module, key)).as_bytes());
            }
        }
        None => {
            h.update(b"no generator");
        }
    }
    let bytes = h.finalize();
    u64::from_le_bytes(bytes.as_bytes()[..8].try_into().expect("8 bytes"))
}
