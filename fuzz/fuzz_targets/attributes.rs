//! Fuzz target: attribute blobs (`AttributesSerialize`). The check never panics, and every
//! blob it accepts is one rbx_types decodes (so loaders may hand it over safely).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if procmodel_engine::check_attributes(data).is_ok() {
        assert!(rbx_types::Attributes::from_reader(data).is_ok());
    }
});
