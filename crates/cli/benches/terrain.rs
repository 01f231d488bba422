//! The terrain tutorial's loop end to end: `procmodel run bench/terrain/columns.luau --save
//! columns.rbxl`, one `Terrain:FillBlock` per grid column over 1024 × 1024 columns, saved as a
//! place whose Terrain carries the voxels (SmoothGrid). Target: under 2 s. No peer runs it:
//! Lune's Roblox library has no Terrain methods. Prints the median wall time, peak RSS and the
//! place's size.
//!
//! Run: `cargo bench -p procmodel --bench terrain` (`TERRAIN_RUNS` sets the run count).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join("bench/terrain");
    let ours = env!("CARGO_BIN_EXE_procmodel");
    let runs: usize = std::env::var("TERRAIN_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let out = std::env::temp_dir().join("procmodel-columns.rbxl");
    let mut secs = Vec::new();
    let mut peaks = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let o = Command::new("/usr/bin/time")
            .args(["-f", "PEAK_KB=%M", ours, "run", "columns.luau", "--save"])
            .arg(&out)
            .current_dir(&dir)
            .output()
            .expect("run procmodel under /usr/bin/time");
        let s = start.elapsed().as_secs_f64();
        assert!(
            o.status.success(),
            "procmodel failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let err = String::from_utf8_lossy(&o.stderr);
        let kb: u64 = err
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("PEAK_KB="))
            .and_then(|v| v.trim().parse().ok())
            .expect("peak RSS from /usr/bin/time");
        secs.push(s);
        peaks.push(kb as f64 / 1024.0);
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    println!(
        "terrain columns 1024x1024 (procmodel run + save): median {:.3} s, peak {:.1} MiB, place {:.2} MB, {runs} runs",
        median(secs),
        median(peaks),
        size as f64 / 1e6
    );
}
