//! The end-to-end 100k-part benchmark: Luau code creates 100,000 Parts (Name, Size, rotated
//! CFrame, Color, Material, Anchored, Parent) and writes them to .rbxm. It runs the same body
//! (`bench/parts/body.luau`) three ways, interleaved in one run: procmodel's script path
//! (`procmodel run`), procmodel's generator path (`procmodel generate` of a generator module,
//! through the engine, with `--no-cache`: the peer has no result cache, and a cache hit is not
//! a generation — the lock crate's cache bench measures hits), and the peer, Lune 0.11.1 (`cargo install lune --locked --version
//! 0.11.1`; skipped when not installed). Medians of wall time and peak RSS (GNU time) are
//! printed with their ratios to Lune.
//!
//! Run: `cargo bench -p procmodel --bench parts` (set `PARTS_RUNS` to change the run count).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

struct Sample {
    seconds: f64,
    peak_kb: u64,
}

fn measure(program: &str, args: &[&str], dir: &Path) -> Option<Sample> {
    let start = Instant::now();
    let out = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("PEAK_KB=%M")
        .arg(program)
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let seconds = start.elapsed().as_secs_f64();
    if !out.status.success() {
        eprintln!("{program} failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let peak_kb = err
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("PEAK_KB="))
        .and_then(|v| v.trim().parse().ok())?;
    Some(Sample { seconds, peak_kb })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join("bench/parts");
    let ours = env!("CARGO_BIN_EXE_procmodel");
    let runs: usize = std::env::var("PARTS_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let tmp = std::env::temp_dir();
    let ours_out = tmp.join("procmodel-parts.rbxm");
    let lune_out = tmp.join("lune-parts.rbxm");
    let have_lune = Command::new("lune")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let gen_out = tmp.join("procmodel-parts-generator.rbxm");
    let mut ours_s = Vec::new();
    let mut gen_s = Vec::new();
    let mut lune_s = Vec::new();
    for _ in 0..runs {
        if let Some(s) = measure(
            ours,
            &[
                "run",
                "procmodel.luau",
                "--save",
                ours_out.to_str().unwrap(),
            ],
            &dir,
        ) {
            ours_s.push(s);
        }
        if let Some(s) = measure(
            ours,
            &[
                "generate",
                "Generator.luau",
                "--no-cache",
                "-o",
                gen_out.to_str().unwrap(),
            ],
            &dir,
        ) {
            gen_s.push(s);
        }
        if have_lune
            && let Some(s) = measure(
                "lune",
                &["run", "lune.luau", lune_out.to_str().unwrap()],
                &dir,
            )
        {
            lune_s.push(s);
        }
    }
    let report = |name: &str, s: &[Sample]| -> Option<(f64, f64)> {
        if s.is_empty() {
            println!("{name}: no successful run");
            return None;
        }
        let t = median(s.iter().map(|x| x.seconds).collect());
        let m = median(s.iter().map(|x| x.peak_kb as f64).collect()) / 1024.0;
        println!(
            "{name:<10} median {t:.3} s  ({:.0} parts/s end to end)  peak RSS {m:.1} MiB  [{} runs]",
            100_000.0 / t,
            s.len()
        );
        Some((t, m))
    };
    let a = report("script", &ours_s);
    let g = report("generator", &gen_s);
    let b = if have_lune {
        report("lune", &lune_s)
    } else {
        println!("lune: not installed (cargo install lune --locked --version 0.11.1)");
        None
    };
    for (name, ours) in [("script", a), ("generator", g)] {
        if let (Some((ta, ma)), Some((tb, mb))) = (ours, b) {
            println!(
                "{name:<10} throughput ratio procmodel/lune: {:.2}x   peak memory ratio: {:.3}",
                tb / ta,
                ma / mb
            );
        }
    }
    if let Ok(size) = std::fs::metadata(&ours_out) {
        println!("procmodel .rbxm: {} bytes", size.len());
    }
}
