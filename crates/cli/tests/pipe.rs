//! A closed stdout (`procmodel … | head`) ends the process quietly, never with a panic.

use std::process::{Command, Stdio};

#[test]
fn a_closed_stdout_is_not_a_panic() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut child = Command::new(env!("CARGO_BIN_EXE_procmodel"))
        .args(["info", "examples/TableWithChairs.luau"])
        .current_dir(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn procmodel");
    // Close the read end before the process prints anything.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
}
