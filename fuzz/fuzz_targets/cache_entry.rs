//! Fuzz target: result-cache entries. A shared cache folder is written by other processes and
//! machines; an entry's digest refuses damage, so the input is signed as an entry body to
//! reach the decoder behind it. Any body decodes into the scene or is refused with nothing
//! left behind; the standalone check and the recorded-hash reader never panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use procmodel_engine::cache::{ENTRY_MAGIC, decode, decode_into, recorded_content_hash};
use rbx_dom_weak::{InstanceBuilder, WeakDom};

fuzz_target!(|body: &[u8]| {
    let mut entry = ENTRY_MAGIC.to_vec();
    entry.extend_from_slice(blake3::hash(body).as_bytes());
    entry.extend_from_slice(body);
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let before = dom.descendants().count();
    if decode_into(&mut dom, &entry).is_err() {
        assert_eq!(dom.descendants().count(), before);
    }
    let _ = decode(&entry);
    let _ = recorded_content_hash(&entry);
});
