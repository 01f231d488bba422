//! The gallery: every example in `examples/` rendered through procmodel studio's own viewport
//! (three.js, WebGL) in Debian's headless chromium, driven by playwright-core
//! (`crates/studio/tests/browser/gallery.mjs`), and checked to show something: enough pixels
//! that are not the viewport's background, and enough colours. A generator (`*.luau`) opens
//! as it is; `village/` is the world `procmodel terrain` builds from `world.toml`, opened as
//! the place it writes (Terrain drawn as a mesh); `rojo-city/` is the place `procmodel regen`
//! builds from the project. Pictures go to `<target>/gallery/`; with `UPDATE_GALLERY=1`
//! (`scripts/gallery.sh`) they replace the committed ones in `docs/gallery/`.
//!
//! Without chromium or the npm package the render test fails when `CI` is set and is skipped
//! (saying why) otherwise; the committed pictures are checked everywhere.

#[path = "../../studio/tests/common/browser_env.rs"]
mod browser_env;
mod common;

use browser_env::{CHROMIUM, browser_dir, missing};

use common::{Studio, bin, examples, ok, s};
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The studio viewport's background, `0x30343b` (crates/studio/web/app.js).
const BACKGROUND: [u8; 3] = [0x30, 0x34, 0x3b];
const WIDTH: u32 = 640;
const HEIGHT: u32 = 400;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn committed_dir() -> PathBuf {
    repo().join("docs/gallery")
}

/// One picture: its name, how the scene it shows is made, and whether it has terrain.
struct Example {
    name: String,
    source: PathBuf,
    kind: Kind,
}

enum Kind {
    /// A generator module, opened as a one-model scene; `terrain`: it writes `params.Terrain`.
    Generator { terrain: bool },
    /// `procmodel terrain world.toml -o place.rbxl`.
    World,
    /// `procmodel regen project -o place.rbxl`.
    Project,
}

/// Every example: each `*.luau` file, and each folder by what it holds. A folder this test
/// does not know is an error, so a new example cannot go without a picture.
fn all_examples() -> Vec<Example> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(examples())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    let mut out = Vec::new();
    for path in entries {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if path.is_dir() {
            let kind = if path.join("world.toml").exists() {
                Kind::World
            } else if path.join("default.project.json").exists() {
                Kind::Project
            } else {
                panic!("examples/{name}: no world.toml or default.project.json, so no picture")
            };
            out.push(Example {
                name,
                source: path,
                kind,
            });
        } else if path.extension().is_some_and(|e| e == "luau") {
            let source = std::fs::read_to_string(&path).unwrap();
            out.push(Example {
                name: path.file_stem().unwrap().to_str().unwrap().to_string(),
                kind: Kind::Generator {
                    terrain: source.contains("params.Terrain"),
                },
                source: path,
            });
        }
    }
    out
}

/// Pixels of a PNG as RGB, with its size.
fn decode(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut decoder = png::Decoder::new(BufReader::new(file));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let pixels = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .map(|p| match channels {
            1 | 2 => [p[0]; 3],
            _ => [p[0], p[1], p[2]],
        })
        .collect();
    (info.width, info.height, pixels)
}

/// Why a picture does not show a rendered model, if it does not: a blank or uniform viewport
/// (nothing drawn, a dead WebGL context) fails, as does one the model covers entirely.
fn not_rendered(pixels: &[[u8; 3]]) -> Option<String> {
    let n = pixels.len().max(1) as f64;
    let differs = |p: &[u8; 3]| -> bool {
        p.iter()
            .zip(BACKGROUND)
            .map(|(&a, b)| (a as i32 - b as i32).abs())
            .sum::<i32>()
            > 24
    };
    let model = pixels.iter().filter(|p| differs(p)).count() as f64 / n;
    let mut colours: Vec<u16> = pixels
        .iter()
        .map(|p| (p[0] as u16 >> 4) << 8 | (p[1] as u16 >> 4) << 4 | p[2] as u16 >> 4)
        .collect();
    colours.sort_unstable();
    colours.dedup();
    if model < 0.03 {
        return Some(format!(
            "only {:.2}% of the pixels differ from the background",
            model * 100.0
        ));
    }
    if model > 0.97 {
        return Some(format!(
            "{:.2}% of the pixels differ from the background: no background left",
            model * 100.0
        ));
    }
    if colours.len() < 12 {
        return Some(format!("only {} distinct colours", colours.len()));
    }
    None
}

fn check_picture(path: &Path) {
    let (w, h, pixels) = decode(path);
    assert_eq!((w, h), (WIDTH, HEIGHT), "{} size", path.display());
    if let Some(why) = not_rendered(&pixels) {
        panic!("{} does not show a rendered model: {why}", path.display());
    }
}

/// StoneCourtyard's only red is its floor texture's mosaic (its parts are grey): red
/// pixels in the picture show the viewport drew the EditableImage.
fn assert_texture_drawn(path: &Path) {
    let (_, _, pixels) = decode(path);
    let red = pixels
        .iter()
        .filter(|[r, g, b]| {
            *r > 110 && (*r as i32) > *g as i32 + 40 && (*r as i32) > *b as i32 + 40
        })
        .count();
    assert!(
        red > 200,
        "{}: {red} red pixels: the floor's texture is not drawn",
        path.display()
    );
}

#[test]
fn the_committed_courtyard_picture_shows_its_painted_floor() {
    assert_texture_drawn(&committed_dir().join("StoneCourtyard.png"));
}

#[test]
fn the_check_refuses_blank_and_uniform_pictures() {
    let n = (WIDTH * HEIGHT) as usize;
    assert!(not_rendered(&vec![BACKGROUND; n]).is_some());
    assert!(not_rendered(&vec![[0, 0, 0]; n]).is_some());
    // A flat rectangle over the background: two colours, not a shaded model.
    let mut two = vec![BACKGROUND; n];
    two[..n / 2].fill([200, 120, 60]);
    assert!(not_rendered(&two).is_some());
    // Shaded content over half the background passes.
    let mut shaded = vec![BACKGROUND; n];
    for (i, p) in shaded[..n / 2].iter_mut().enumerate() {
        *p = [(i % 256) as u8, 120, (i / 256 % 256) as u8];
    }
    assert_eq!(not_rendered(&shaded), None);
}

#[test]
fn every_example_has_a_committed_picture_that_shows_it() {
    let names: Vec<String> = all_examples().into_iter().map(|e| e.name).collect();
    assert!(names.len() >= 8, "{names:?}");
    for name in &names {
        check_picture(&committed_dir().join(format!("{name}.png")));
    }
    for entry in std::fs::read_dir(committed_dir()).unwrap() {
        let file = entry.unwrap().file_name().into_string().unwrap();
        let stem = file.strip_suffix(".png").unwrap_or(&file);
        assert!(
            names.iter().any(|n| n == stem),
            "docs/gallery/{file} is no example's picture"
        );
    }
}

/// The scene the studio opens for `e`, made in `work` when it has to be built first.
fn scene(e: &Example, work: &Path) -> PathBuf {
    match e.kind {
        Kind::Generator { .. } => e.source.clone(),
        Kind::World => {
            let place = work.join(format!("{}.rbxl", e.name));
            ok(bin()
                .args(["terrain", s(&e.source.join("world.toml")), "-o", s(&place)])
                .output()
                .unwrap());
            place
        }
        Kind::Project => {
            let place = work.join(format!("{}.rbxl", e.name));
            ok(bin()
                .args(["regen", s(&e.source), "-o", s(&place)])
                .output()
                .unwrap());
            place
        }
    }
}

#[test]
fn every_example_renders_in_the_studio_viewport() {
    if let Some(why) = missing() {
        if std::env::var_os("CI").is_some() {
            panic!("the gallery cannot be rendered: {why}");
        }
        eprintln!("skipped: {why}");
        return;
    }
    let update = std::env::var_os("UPDATE_GALLERY").is_some_and(|v| v == "1");
    let out_dir = if update {
        committed_dir()
    } else {
        // <target>/tmp → <target>/gallery
        Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .unwrap()
            .join("gallery")
    };
    std::fs::create_dir_all(&out_dir).unwrap();
    let work = common::dir();
    let started = Instant::now();
    for e in all_examples() {
        let t = Instant::now();
        let scene = scene(&e, &work);
        let studio = Studio::start(&scene);
        let out = out_dir.join(format!("{}.png", e.name));
        let terrain = matches!(e.kind, Kind::World | Kind::Generator { terrain: true });
        let node = Command::new("node")
            .arg(browser_dir().join("gallery.mjs"))
            .current_dir(browser_dir())
            .env("STUDIO_URL", &studio.url)
            .env("OUT", &out)
            .env("EXPECT_TERRAIN", if terrain { "1" } else { "0" })
            .env("WIDTH", WIDTH.to_string())
            .env("HEIGHT", HEIGHT.to_string())
            .env("CHROMIUM", CHROMIUM)
            .output()
            .expect("node runs");
        drop(studio);
        assert!(
            node.status.success(),
            "{}: the render failed: {}\n{}",
            e.name,
            String::from_utf8_lossy(&node.stderr),
            String::from_utf8_lossy(&node.stdout)
        );
        check_picture(&out);
        if e.name == "StoneCourtyard" {
            assert_texture_drawn(&out);
        }
        println!(
            "{}: {} in {:.1} s {}",
            e.name,
            out.display(),
            t.elapsed().as_secs_f64(),
            String::from_utf8_lossy(&node.stdout).trim()
        );
    }
    println!("gallery: {:.1} s", started.elapsed().as_secs_f64());
}
