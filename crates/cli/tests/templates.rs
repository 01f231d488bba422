//! `procmodel new --template` (issue 15 item 4): every template is a working generator —
//! written, generated at its defaults through the engine, the same bytes twice, and with
//! parts of the kinds its technique makes.

use rbx_dom_weak::WeakDom;
use std::path::Path;
use std::process::Output;

mod common;
use common::*;

fn failed(out: Output) -> String {
    assert!(!out.status.success(), "command succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn generate(generator: &Path, size: &str, out: &Path) -> serde_json::Value {
    let o = ok(bin()
        .arg("generate")
        .arg(generator)
        .args(["--no-cache", "--json", "--size", size, "-o"])
        .arg(out)
        .output()
        .unwrap());
    serde_json::from_slice(&o.stdout).unwrap()
}

fn names(dom: &WeakDom) -> Vec<String> {
    dom.descendants().map(|i| i.name.clone()).collect()
}

/// Writes the template, generates it twice and returns the instance names of the result.
fn check(template: &str, size: &str, min_instances: u64) -> Vec<String> {
    let path = dir().join(format!("T_{template}"));
    let _ = std::fs::remove_file(path.with_extension("luau"));
    let o = ok(bin()
        .args(["new", "--template", template])
        .arg(&path)
        .output()
        .unwrap());
    // A toolkit template says it runs in procmodel only; the blank one is Studio's too.
    let said = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        said.contains("it runs in procmodel, not in Roblox Studio"),
        template != "blank",
        "{template}: {said}"
    );
    let file = path.with_extension("luau");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("OnGenerate") && !text.contains("__FILE__"),
        "{template}"
    );
    let a = generate(&file, size, &dir().join(format!("{template}-a.rbxm")));
    let b = generate(&file, size, &dir().join(format!("{template}-b.rbxm")));
    assert_eq!(a["blake3"], b["blake3"], "{template}: the same bytes twice");
    let n = a["instances"].as_u64().unwrap();
    assert!(n >= min_instances, "{template}: {n} instances");
    let bytes = std::fs::read(dir().join(format!("{template}-a.rbxm"))).unwrap();
    names(&rbx_binary::from_reader(bytes.as_slice()).unwrap())
}

fn has(names: &[String], name: &str) -> bool {
    names.iter().any(|n| n == name)
}

#[test]
fn r15_4_blank_template_is_the_default() {
    let n = check("blank", "12,12,12", 10);
    assert_eq!(n.iter().filter(|n| n.starts_with("Block")).count(), 10);
    let plain = dir().join("Plain.luau");
    let _ = std::fs::remove_file(&plain);
    ok(bin().arg("new").arg(&plain).output().unwrap());
    assert_eq!(
        std::fs::read_to_string(&plain)
            .unwrap()
            .lines()
            .skip(1)
            .take(10)
            .collect::<Vec<_>>(),
        std::fs::read_to_string(dir().join("T_blank.luau"))
            .unwrap()
            .lines()
            .skip(1)
            .take(10)
            .collect::<Vec<_>>()
    );
}

#[test]
fn r15_4_noise_template_generates() {
    let n = check("noise", "64,8,64", 10);
    assert!(has(&n, "Boulder"));
}

#[test]
fn r15_4_lsystem_template_generates() {
    let n = check("lsystem", "16,16,16", 20);
    assert!(has(&n, "Branch") && has(&n, "Leaf"));
}

#[test]
fn r15_4_wfc_template_generates() {
    let n = check("wfc", "64,4,64", 256);
    assert!(has(&n, "grass") && has(&n, "road"));
}

#[test]
fn r15_4_cave_template_generates() {
    let n = check("cave", "80,8,60", 20);
    assert!(has(&n, "Floor") && has(&n, "Wall"));
}

#[test]
fn r15_4_terrain_template_generates() {
    let n = check("terrain", "96,32,96", 32 * 32);
    assert!(has(&n, "Column") && has(&n, "Water"));
}

#[test]
fn r15_4_new_refuses_bad_templates_and_names() {
    let e = failed(
        bin()
            .args(["new", "--template", "fractal"])
            .arg(dir().join("X.luau"))
            .output()
            .unwrap(),
    );
    assert!(e.contains("fractal") && e.contains("noise"), "{e}");
    let e = failed(bin().arg("new").arg(dir().join("X.txt")).output().unwrap());
    assert!(e.contains("X.txt") && e.contains(".luau"), "{e}");
    assert!(!dir().join("X.txt").exists());
}
