//! Fuzz target: lockfiles. `procmodel verify` reads a lockfile someone published, which may
//! be truncated, edited or crafted with a recomputed checksum. Any text parses or is refused
//! with an error naming the file; the text is also re-sealed (as someone who recomputes the
//! checksum would) to reach the checks behind the checksum; a lockfile that parses writes
//! back to a text that parses to the same lockfile.

#![no_main]

use libfuzzer_sys::fuzz_target;
use procmodel_lock::Lockfile;

fuzz_target!(|text: &str| {
    if let Ok(lock) = Lockfile::parse(text, "fuzz.lock") {
        round_trip(&lock);
    }
    // Past the checksum: what the text says, sealed again.
    if let Ok(lock) = toml::from_str::<Lockfile>(text)
        && let Ok(sealed) = lock.to_toml()
        && let Ok(parsed) = Lockfile::parse(&sealed, "fuzz.lock")
    {
        round_trip(&parsed);
        for model in &parsed.models {
            for input in &model.inputs {
                let _ = input.variant();
            }
        }
    }
});

fn round_trip(lock: &Lockfile) {
    let text = lock.to_toml().expect("a parsed lockfile writes");
    let again = Lockfile::parse(&text, "fuzz.lock").expect("what we write parses");
    assert_eq!(&again, lock);
}
