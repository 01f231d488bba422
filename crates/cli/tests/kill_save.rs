//! Interrupted saves (issue #10, item 13): `kill -9` of `procmodel run --save` at varied
//! moments, before and during the save of a 100k-part place, never leaves a torn target, and
//! the next save removes the temp files the killed saves left behind.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const SCRIPT: &str = r#"
local model = Instance.new("Model")
model.Name = "Big"
model.Parent = workspace
for i = 1, 100000 do
    local p = Instance.new("Part")
    p.Name = "Part" .. i
    p.Size = Vector3.new(1 + i % 7, 1 + i % 3, 1 + i % 5)
    p.CFrame = CFrame.new(i % 100, (i // 100) % 100, i // 10000) * CFrame.Angles(0, math.rad(i % 360), 0)
    p.Color = Color3.fromRGB(i % 256, (i * 7) % 256, (i * 13) % 256)
    p.Anchored = true
    p.Parent = model
end
"#;

fn start(script: &Path, target: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_procmodel"))
        .arg("run")
        .arg(script)
        .arg("--save")
        .arg(target)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn temp_of(target: &Path, pid: u32) -> PathBuf {
    let name = target.file_name().unwrap().to_str().unwrap();
    target.with_file_name(format!(".{name}.{pid}.tmp"))
}

/// Waits for `path` to exist while `child` runs; returns when it appeared (None: it exited).
fn wait_for(child: &mut Child, path: &Path) -> Option<Instant> {
    loop {
        if path.exists() {
            return Some(Instant::now());
        }
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Watches `target` until stopped: every state it is seen in must be absent or exactly
/// `expected` (the save is deterministic, so a complete file is these bytes). Returns the
/// number of distinct files seen and the first bad state.
fn watch(
    target: PathBuf,
    expected: Arc<Vec<u8>>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<(usize, Option<String>)> {
    std::thread::spawn(move || {
        use std::os::unix::fs::MetadataExt;
        let mut last = None;
        let mut seen = 0;
        while !stop.load(Ordering::Relaxed) {
            if let Ok(meta) = std::fs::metadata(&target) {
                let key = (meta.ino(), meta.len(), meta.mtime_nsec());
                if last != Some(key) {
                    // A rename replaces the file whole: whatever is opened is one version.
                    if let Ok(bytes) = std::fs::read(&target) {
                        if bytes != *expected {
                            return (
                                seen,
                                Some(format!("{} bytes, not the complete file", bytes.len())),
                            );
                        }
                        seen += 1;
                    }
                    last = Some(key);
                }
            }
            std::thread::sleep(Duration::from_micros(500));
        }
        (seen, None)
    })
}

#[test]
fn r10_13_killed_saves_leave_no_torn_file_and_no_litter() {
    let dir = procmodel_testkit::scratch("kill");
    let _ = std::fs::remove_dir_all(&dir);
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let script = dir.join("big.luau");
    std::fs::write(&script, SCRIPT).unwrap();
    let target = work.join("place.rbxl");

    // A clean run: the complete file, how long generating and saving take.
    let t0 = Instant::now();
    let mut child = start(&script, &target);
    let pid = child.id();
    let appeared = wait_for(&mut child, &temp_of(&target, pid)).expect("the save starts");
    let generating = appeared - t0;
    assert!(child.wait().unwrap().success());
    let saving = appeared.elapsed();
    let expected = Arc::new(std::fs::read(&target).unwrap());
    eprintln!(
        "{} bytes; generating {generating:?}, saving {saving:?}",
        expected.len()
    );
    assert!(expected.len() > 1 << 18, "a large place");
    assert_eq!(files_in(&work), ["place.rbxl"]);
    std::fs::remove_file(&target).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let watcher = watch(target.clone(), expected.clone(), stop.clone());
    let mut litter = 0;
    for i in 0..10u32 {
        let mut child = start(&script, &target);
        let pid = child.id();
        if i < 2 {
            // While the script runs, before the save.
            std::thread::sleep(generating.mul_f64(0.3 + 0.4 * f64::from(i)));
        } else if wait_for(&mut child, &temp_of(&target, pid)).is_some() {
            // During the save, at moments spread over it (the last ones near its end).
            std::thread::sleep(saving.mul_f64(f64::from(i - 2) / 8.0));
        }
        let _ = child.kill();
        child.wait().unwrap();
        if temp_of(&target, pid).exists() {
            litter += 1;
        }
        // At most the temp file of the save just killed: earlier ones were removed by it.
        let temps = files_in(&work)
            .into_iter()
            .filter(|f| f.ends_with(".tmp"))
            .count();
        assert!(temps <= 1, "after kill {i}: {:?}", files_in(&work));
    }
    assert!(
        litter >= 3,
        "only {litter} kills landed during a save (timing too coarse?)"
    );

    // One clean save: only the target is left, and it is the complete file.
    let mut child = start(&script, &target);
    assert!(child.wait().unwrap().success());
    stop.store(true, Ordering::Relaxed);
    let (seen, bad) = watcher.join().unwrap();
    assert_eq!(bad, None);
    assert!(seen >= 1);
    assert_eq!(files_in(&work), ["place.rbxl"]);
    assert_eq!(std::fs::read(&target).unwrap(), *expected);
    std::fs::remove_dir_all(&dir).unwrap();
}
