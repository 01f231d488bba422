//! Fuzz target: the studio's WebSocket messages. Any page on the machine can connect to the
//! studio's port, so a message is untrusted text: it parses to a command or to an error
//! (with the request id when one could be read), never a panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = procmodel_studio::protocol::parse(text);
});
