//! Fuzz target: the provenance attributes a saved scene's GeneratedFolders carry
//! (`ProcmodelInputs`, `ProcmodelModules`, `ProcmodelReads`) and the cache's record of what a
//! run depended on. A scene from another tool or a hand edit may hold anything there:
//! `status`, `regen` and the cache read them and refuse what is not theirs. A module list or
//! a read list that decodes encodes back to the same text.

#![no_main]

use libfuzzer_sys::fuzz_target;
use procmodel_engine::provenance::{
    Recorded, decode_modules, decode_names, decode_reads, decode_record,
};

fuzz_target!(|text: &str| {
    let _ = Recorded::parse(text);
    let _ = decode_names(text);
    let _ = decode_record(text);
    if let Some(modules) = decode_modules(text) {
        let mut encoded = String::new();
        for (i, (name, digest)) in modules.iter().enumerate() {
            if i > 0 {
                encoded.push('\n');
            }
            encoded.push_str(digest);
            encoded.push(' ');
            encoded.push_str(&name.replace('\\', "\\\\").replace('\n', "\\n"));
        }
        assert_eq!(encoded, text);
    }
    if let Some(reads) = decode_reads(text) {
        let lines: Vec<String> = reads
            .iter()
            .map(|(path, own, digest)| {
                let kind = if *own { 'o' } else { 't' };
                let path = procmodel_dom::reads::encode_path(path);
                format!("{digest} {kind} {path}")
            })
            .collect();
        assert_eq!(lines.join("\n"), text);
    }
});
