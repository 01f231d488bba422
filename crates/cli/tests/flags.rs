//! Bad command-line input (issue #10, items 11 and 12): every numeric flag of every
//! subcommand refuses `inf`, `nan`, negative, zero and huge values with a clear error, and a
//! corrupt scene file is one clean error line naming the file, never a panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_procmodel"))
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn tmp(name: &str) -> PathBuf {
    let dir = procmodel_testkit::scratch("flags");
    dir.join(name)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `args` and expects clap to refuse `flag`'s value: exit code 2, a message naming the
/// flag and the value, and no panic.
fn refused(args: &[&str], flag: &str, value: &str) {
    let out = bin().args(args).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(
        err.contains(&format!("invalid value '{value}' for '{flag}")),
        "{args:?}: {err}"
    );
}

const BAD_REALS: [&str; 8] = ["inf", "-inf", "nan", "-1", "0", "1e20", "1e400", "abc"];

#[test]
fn r10_12_timeout_of_every_subcommand() {
    let generator = examples().join("SpiralStaircase.luau");
    let generator = generator.to_str().unwrap();
    let out = tmp("t.rbxm");
    let out = out.to_str().unwrap();
    let script = tmp("t.luau");
    std::fs::write(&script, "print('hi')").unwrap();
    let script = script.to_str().unwrap();
    let scene = tmp("t.rbxlx");
    let scene = scene.to_str().unwrap();
    for v in BAD_REALS {
        refused(
            &["generate", generator, "-o", out, "--timeout", v],
            "--timeout",
            v,
        );
        refused(&["run", script, "--timeout", v], "--timeout", v);
        refused(&["regen", scene, "--timeout", v], "--timeout", v);
    }
    // The range is in the message.
    let o = bin()
        .args(["run", script, "--timeout", "1e20"])
        .output()
        .unwrap();
    assert!(
        stderr(&o).contains("use 0.001 to 1000000"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn r10_12_scale_and_size() {
    let generator = examples().join("SpiralStaircase.luau");
    let generator = generator.to_str().unwrap();
    let out = tmp("s.rbxm");
    let out = out.to_str().unwrap();
    for v in BAD_REALS {
        refused(
            &["generate", generator, "-o", out, "--scale", v],
            "--scale",
            v,
        );
    }
    for v in [
        "inf,1,1", "1,nan,1", "1,1,-1", "0,1,1", "1e20,1,1", "1,2", "1,2,3,4", "a,b,c",
    ] {
        refused(
            &["generate", generator, "-o", out, "--size", v],
            "--size",
            v,
        );
    }
}

#[test]
fn r10_12_jobs() {
    let scene = tmp("j.rbxlx");
    let scene = scene.to_str().unwrap();
    for v in [
        "0",
        "-1",
        "1.5",
        "inf",
        "nan",
        "1e20",
        "257",
        "99999999999999999999999",
    ] {
        refused(&["regen", scene, "--jobs", v], "--jobs", v);
        refused(&["regen", scene, "-j", v], "--jobs", v);
    }
}

#[test]
fn r10_12_good_values_still_work() {
    let generator = examples().join("SpiralStaircase.luau");
    let out = tmp("good.rbxm");
    let o = bin()
        .args(["generate", generator.to_str().unwrap(), "-o"])
        .arg(&out)
        .args(["--timeout", "2.5", "--scale", "0.5", "--size", "12, 20, 12"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A valid binary place from rbx_binary with uncompressed chunks (so bytes can be patched).
fn plain_place() -> Vec<u8> {
    let mut dom = rbx_dom_weak::WeakDom::new(rbx_dom_weak::InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let ws = dom.insert(root, rbx_dom_weak::InstanceBuilder::new("Workspace"));
    for i in 0..3 {
        dom.insert(
            ws,
            rbx_dom_weak::InstanceBuilder::new("Part").with_name(format!("P{i}")),
        );
    }
    let mut out = Vec::new();
    rbx_binary::Serializer::new()
        .compression_type(rbx_binary::CompressionType::None)
        .serialize(&mut out, &dom, dom.root().children())
        .unwrap();
    out
}

/// The offset of the data of the first chunk called `name`.
fn chunk_data(file: &[u8], name: &[u8; 4]) -> usize {
    let mut at = 32;
    loop {
        let len = u32::from_le_bytes(file[at + 8..at + 12].try_into().unwrap()) as usize;
        if &file[at..at + 4] == name {
            return at + 16;
        }
        at += 16 + len;
    }
}

/// `procmodel regen` of a corrupt file: exit code 1 and exactly one line on stderr, the error
/// naming the file, no panic report.
fn one_clean_error(path: &Path, expect: &str) {
    for sub in [&["regen"][..], &["export", "-o", "x.glb"][..]] {
        let out = bin()
            .args(&sub[..1])
            .arg(path)
            .args(&sub[1..])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("error: {}: ", path.display())),
            "{err}"
        );
        assert!(err.contains(expect), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn r10_11_regen_of_a_corrupt_file_is_one_clean_error() {
    // rbx_binary panics on a non-zero reserved field of a chunk header.
    let mut f = plain_place();
    let at = chunk_data(&f, b"INST") - 16;
    f[at + 12] = 1;
    let path = tmp("reserved.rbxl");
    std::fs::write(&path, &f).unwrap();
    one_clean_error(&path, "reserved field is 1");

    // A file cut short.
    let f = plain_place();
    let path = tmp("cut.rbxm");
    std::fs::write(&path, &f[..f.len() / 2]).unwrap();
    one_clean_error(&path, "not a valid binary Roblox file");
}

#[test]
fn r10_11_unknown_parents_are_one_clean_error() {
    // Parents that no instance has: rbx_binary panics looking them up.
    let mut f = plain_place();
    let at = chunk_data(&f, b"PRNT");
    let n = u32::from_le_bytes(f[at + 1..at + 5].try_into().unwrap()) as usize;
    let parents = at + 5 + 4 * n;
    // The first parent's high byte (arrays are byte-interleaved, big-endian).
    f[parents] = 0x10;
    let path = tmp("parents.rbxl");
    std::fs::write(&path, &f).unwrap();
    one_clean_error(&path, "is not an instance of the file");
}
