//! Fuzz target: saved-scene records in the result cache (which results a saved scene held
//! intact). A shared cache folder is written by other processes; the record's digest refuses
//! damage, so the input is signed as a record body to reach the parser behind it. Any body
//! parses to rows that encode back to the same bytes, or is refused; nothing panics.

#![no_main]

use libfuzzer_sys::fuzz_target;
use procmodel_engine::cache::{SCENE_MAGIC, SavedScene};

fuzz_target!(|body: &[u8]| {
    let mut record = SCENE_MAGIC.to_vec();
    record.extend_from_slice(blake3::hash(body).as_bytes());
    record.extend_from_slice(body);
    if let Some(rows) = SavedScene::decode(&record) {
        assert_eq!(SavedScene::encode(&rows), record);
    }
    let _ = SavedScene::decode(body);
});
