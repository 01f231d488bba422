//! Helpers shared by the cli integration tests: the binary under test (hermetic: its own
//! result cache, never the user's), a scratch folder per test binary, and output checks.
#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `procmodel` binary, with the result cache in this test binary's scratch folder.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_procmodel"));
    // Hermetic: never the user's cache folder.
    c.env("XDG_CACHE_HOME", dir().join("xdg-cache"));
    c
}

/// This test binary's scratch folder (removed when the test process exits).
pub fn dir() -> PathBuf {
    procmodel_testkit::scratch(env!("CARGO_CRATE_NAME"))
}

pub fn tmp(name: &str) -> PathBuf {
    dir().join(name)
}

pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `out`, after checking the command succeeded (its output in the failure message).
pub fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "command failed: {}\nstdout: {}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

/// The error text of a command that must fail.
pub fn failed(out: Output) -> String {
    assert!(
        !out.status.success(),
        "command succeeded: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

/// Waits for a shard's first `unit` progress line on its stdout (piped), then kills it with
/// SIGKILL: a shard stopped in the middle of its work.
pub fn kill_after_first_unit(mut child: std::process::Child) {
    use std::io::BufRead;
    let stdout = child.stdout.take().expect("the shard's stdout is piped");
    let mut lines = std::io::BufReader::new(stdout).lines();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let line = lines.next().expect("shard ended early").unwrap();
        if line.contains("\"unit\"") {
            break;
        }
        assert!(std::time::Instant::now() < deadline);
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Runs shard commands as processes side by side and checks each succeeded and reported its
/// progress as JSON lines, from `start` to `done`.
pub fn run_side_by_side(commands: impl IntoIterator<Item = Command>) {
    use std::process::Stdio;
    let children: Vec<std::process::Child> = commands
        .into_iter()
        .map(|mut c| {
            c.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = ok(c.wait_with_output().unwrap());
        let text = String::from_utf8(o.stdout).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        assert_eq!(lines.first().unwrap()["event"], "start");
        assert_eq!(lines.last().unwrap()["event"], "done");
    }
}

/// The JSON chunk of a `.glb` file.
/// Image `index` of the `.glb` at `path`, decoded from the PNG its buffer holds.
pub fn glb_texture(path: &Path, index: usize) -> procmodel_mesh::texture::Texture {
    let bytes = std::fs::read(path).unwrap();
    let doc = glb_json(path);
    let view = &doc["bufferViews"][doc["images"][index]["bufferView"].as_u64().unwrap() as usize];
    let json_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let bin = &bytes[20 + json_len + 8..];
    let start = view["byteOffset"].as_u64().unwrap() as usize;
    let png = &bin[start..start + view["byteLength"].as_u64().unwrap() as usize];
    procmodel_mesh::texture::Texture::from_png(png).unwrap()
}

pub fn glb_json(path: &Path) -> serde_json::Value {
    let glb = std::fs::read(path).unwrap();
    assert_eq!(&glb[..4], b"glTF");
    let len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    serde_json::from_slice(&glb[20..20 + len]).unwrap()
}

/// `procmodel studio` on a free port, stopped when dropped.
pub struct Studio {
    child: std::process::Child,
    /// The page's address, as the studio's first line gives it.
    pub url: String,
}

impl Studio {
    pub fn start(scene: &Path) -> Studio {
        use std::io::{BufRead, BufReader};
        let mut child = bin()
            .args(["studio", s(scene), "--port", "0", "--timeout", "60"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("procmodel studio starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in the studio's first line: {line:?}"))
            .to_string();
        Studio { child, url }
    }
}

impl Drop for Studio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Packs `generator` into `package` and checks that `regen --force --no-cache` of the
/// package fails nothing and writes the package's very bytes.
pub fn pack_regenerating_to_its_bytes(generator: &Path, package: &Path) {
    ok(bin()
        .arg("pack")
        .arg(generator)
        .arg("-o")
        .arg(package)
        .output()
        .unwrap());
    let again = package.with_extension("again.rbxm");
    let o = ok(bin()
        .arg("regen")
        .arg(package)
        .args(["--force", "--no-cache", "-o"])
        .arg(&again)
        .output()
        .unwrap());
    assert!(stderr(&o).contains("0 failed"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(package).unwrap(),
        std::fs::read(&again).unwrap(),
        "{}",
        package.display()
    );
}

/// The first child of `parent` (the DataModel when None) of class `class` in a decoded file.
pub fn child_of_class<'a>(
    dom: &'a rbx_dom_weak::WeakDom,
    parent: Option<rbx_types::Ref>,
    class: &str,
) -> Option<&'a rbx_dom_weak::Instance> {
    let parent = dom.get_by_ref(parent.unwrap_or_else(|| dom.root_ref()))?;
    parent
        .children()
        .iter()
        .filter_map(|&r| dom.get_by_ref(r))
        .find(|i| i.class == class)
}
