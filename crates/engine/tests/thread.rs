//! The engine thread driven by a scripted command sequence (issue #11 item 2): commands in,
//! snapshots out, latest wins, undo/redo, save, hot reload, cancel from another thread.

use procmodel_engine::thread::{Command, EngineThread, Reply, Step, ThreadError};
use procmodel_engine::{Engine, EngineConfig};
use rbx_dom_weak::InstanceBuilder;
use rbx_types::{Attributes, Ref, Variant, Vector3};
use std::time::{Duration, Instant};

/// `Count` parts in a row; with `Hang`, a loop that never yields (only a cancel ends it).
const ROW: &str = r#"
local G = {}
G.Attributes = { Count = 3, Hang = false }
function G.OnGenerate(params, target)
    if params.Attributes.Hang then
        local n = 0
        while true do
            n += 1
            pcall(function() n += 1 end)
        end
    end
    for i = 1, params.Attributes.Count do
        local p = Instance.new("Part")
        p.Name = "P" .. i
        p.Position = Vector3.new(i * 2, 0, 0)
        p.Parent = target
    end
end
return G
"#;

/// What each publication carries in these tests.
#[derive(Debug)]
struct Snap {
    parts: usize,
    commands: Vec<u64>,
    errors: Vec<String>,
    reports: usize,
}

struct Scene {
    thread: EngineThread<Snap>,
    model: Ref,
    module: Ref,
}

fn start(timeout: Duration) -> Scene {
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = EngineThread::spawn(
        move || {
            let mut config = EngineConfig::default();
            config.host.timeout = timeout;
            let mut engine = Engine::new(procmodel_luau::runtime(), config)?;
            let root = engine.with_dom(|d| d.root_ref());
            let module = engine.insert(
                root,
                InstanceBuilder::new("ModuleScript")
                    .with_name("Row")
                    .with_property("Source", Variant::String(ROW.to_owned())),
            );
            let ws = engine.workspace();
            let model = engine.insert(
                ws,
                InstanceBuilder::new("ProceduralModel")
                    .with_name("Model")
                    .with_property("Generator", Variant::Ref(module))
                    .with_property("Size", Vector3::new(8.0, 8.0, 8.0))
                    .with_property("Attributes", Variant::Attributes(Attributes::new())),
            );
            let _ = tx.send((model, module));
            Ok(engine)
        },
        |engine: &mut Engine, step: &Step| Snap {
            parts: engine.with_dom(|d| {
                d.descendants()
                    .filter(|i| i.class == "Part" && i.name.starts_with('P'))
                    .count()
            }),
            commands: step.commands.clone(),
            errors: step.reports.iter().filter_map(|r| r.error()).collect(),
            reports: step.reports.len(),
        },
    )
    .expect("engine thread starts");
    let (model, module) = rx.recv().unwrap();
    Scene {
        thread,
        model,
        module,
    }
}

/// Waits for a publication satisfying `ok`, newer than `after`; fails after 20 s.
fn wait_for(t: &EngineThread<Snap>, after: u64, ok: impl Fn(&Snap) -> bool) -> (u64, Snap) {
    let start = Instant::now();
    let mut rev = after;
    loop {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no such snapshot; the latest: {:?}",
            t.latest()
                .map(|f| (f.revision, f.value.parts, f.value.errors.clone()))
        );
        if let Some(f) = t.wait_newer(rev, Duration::from_millis(200)) {
            rev = f.revision;
            if ok(&f.value) {
                return (
                    f.revision,
                    Snap {
                        parts: f.value.parts,
                        commands: f.value.commands.clone(),
                        errors: f.value.errors.clone(),
                        reports: f.value.reports,
                    },
                );
            }
        }
    }
}

fn set(s: &Scene, name: &str, v: Variant) -> Result<Reply, ThreadError> {
    s.thread.call(Command::SetAttribute {
        model: s.model,
        name: name.into(),
        value: Some(v),
    })
}

#[test]
fn r11_2_scripted_commands_publish_snapshots() {
    let s = start(Duration::from_secs(10));
    let (rev, _) = wait_for(&s.thread, 0, |x| x.parts == 3);
    set(&s, "Count", Variant::Float64(5.0)).unwrap();
    let (rev, _) = wait_for(&s.thread, rev, |x| x.parts == 5);

    // Undo restores the previous results, redo brings them back.
    assert!(matches!(
        s.thread.call(Command::Undo),
        Ok(Reply::Changed(true))
    ));
    let (rev, _) = wait_for(&s.thread, rev, |x| x.parts == 3);
    assert!(matches!(
        s.thread.call(Command::Redo),
        Ok(Reply::Changed(true))
    ));
    let (rev, _) = wait_for(&s.thread, rev, |x| x.parts == 5);

    // A bad command is an error reply; the thread keeps serving.
    let err = s
        .thread
        .call(Command::SetSize {
            model: s.model,
            size: glam::Vec3::new(f32::NAN, 1.0, 1.0),
        })
        .unwrap_err();
    assert!(err.to_string().starts_with("set Size: "), "{err}");
    let err = s
        .thread
        .call(Command::ForceGeneration(s.module))
        .unwrap_err();
    assert!(err.to_string().contains("not a ProceduralModel"), "{err}");

    // Save is atomic and loads back with the results.
    let dir = procmodel_testkit::scratch("thread");
    let path = dir.join("scene.rbxl");
    assert!(matches!(
        s.thread.call(Command::Save(path.clone())),
        Ok(Reply::Saved(p)) if p == path
    ));
    let loaded = Engine::load(procmodel_luau::runtime(), &path, EngineConfig::default()).unwrap();
    let parts = loaded.with_dom(|d| d.descendants().filter(|i| i.class == "Part").count());
    assert_eq!(parts, 5);

    // Hot reload: the file's new Source makes the model dirty and it regenerates.
    let p2_x = || {
        let xs = s.thread.call(Command::With(Box::new(|e: &mut Engine| {
            let x = e.with_dom(|d| {
                d.descendants()
                    .filter(|i| i.name == "P2")
                    .map(|i| match i.properties.get(&"CFrame".into()) {
                        Some(Variant::CFrame(c)) => c.position.x,
                        _ => f32::NAN,
                    })
                    .collect::<Vec<_>>()
            });
            Ok(Reply::Value(Box::new(x)))
        })));
        let Ok(Reply::Value(v)) = xs else {
            panic!("no value")
        };
        *v.downcast::<Vec<f32>>().unwrap()
    };
    let before = p2_x();
    assert_eq!(before.len(), 1);
    let file = dir.join("Row.luau");
    std::fs::write(&file, ROW.replace("i * 2", "i * 3")).unwrap();
    let reload = || {
        s.thread.call(Command::ReloadSource {
            module: s.module,
            path: file.clone(),
        })
    };
    assert!(matches!(reload(), Ok(Reply::Changed(true))));
    let (rev, snap) = wait_for(&s.thread, rev, |x| x.reports > 0);
    assert_eq!(snap.parts, 5);
    assert!(matches!(reload(), Ok(Reply::Changed(false))));
    let missing = s.thread.call(Command::ReloadSource {
        module: s.module,
        path: dir.join("nope.luau"),
    });
    assert!(missing.unwrap_err().to_string().contains("nope.luau"));
    let _ = rev;
    let after = p2_x();
    assert_eq!(after.len(), 1);
    assert_ne!(before, after, "the new Source ran");
    std::fs::remove_dir_all(&dir).ok();
    s.thread.shutdown().unwrap();
}

#[test]
fn r11_2_latest_wins_one_publication_per_batch() {
    let s = start(Duration::from_secs(10));
    let (rev, _) = wait_for(&s.thread, 0, |x| x.parts == 3);
    // Hold the thread while 40 edits queue: they are applied as one batch, one step, one
    // snapshot (a slow reader sees the final state, not 40 intermediate ones). The edits are
    // sent only once the thread is inside the hold: sent earlier, the first of them could
    // join the hold's own batch and the rest the next one.
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    s.thread
        .submit(
            Command::With(Box::new(move |_| {
                let _ = held_tx.send(());
                std::thread::sleep(Duration::from_millis(300));
                Ok(Reply::Done)
            })),
            None,
        )
        .unwrap();
    held_rx.recv_timeout(Duration::from_secs(30)).unwrap();
    let ids: Vec<u64> = (1..=40)
        .map(|i| {
            s.thread
                .submit(
                    Command::SetAttribute {
                        model: s.model,
                        name: "Count".into(),
                        value: Some(Variant::Float64(i as f64)),
                    },
                    None,
                )
                .unwrap()
        })
        .collect();
    let (_, snap) = wait_for(&s.thread, rev, |x| x.commands.contains(ids.last().unwrap()));
    assert_eq!(snap.parts, 40);
    for id in &ids {
        assert!(snap.commands.contains(id), "command {id} not in the batch");
    }
}

#[test]
fn r11_2_cancel_stops_a_hanging_generator_from_another_thread() {
    // The no-yield timeout is far away: only the cancel can end the loop in time.
    let s = start(Duration::from_secs(120));
    let (rev, _) = wait_for(&s.thread, 0, |x| x.parts == 3);
    // A cancel with nothing running is dropped (it must not fail the next run).
    s.thread.cancel().unwrap();
    set(&s, "Count", Variant::Float64(4.0)).unwrap();
    let (rev, snap) = wait_for(&s.thread, rev, |x| x.parts == 4);
    assert!(snap.errors.is_empty(), "{:?}", snap.errors);

    set(&s, "Hang", Variant::Bool(true)).unwrap();
    // The thread is now inside the endless loop; commands queue behind it.
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    s.thread.cancel().unwrap();
    let (rev, snap) = wait_for(&s.thread, rev, |x| !x.errors.is_empty());
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        snap.errors[0].contains(procmodel_luau::CANCEL_MESSAGE),
        "{:?}",
        snap.errors
    );
    // The engine goes on: the next edit generates normally.
    set(&s, "Hang", Variant::Bool(false)).unwrap();
    let (_, snap) = wait_for(&s.thread, rev, |x| x.parts == 4);
    assert!(snap.errors.is_empty(), "{:?}", snap.errors);
}

#[test]
fn r11_2_a_failing_start_is_an_error() {
    let r = EngineThread::spawn(
        || {
            Engine::load(
                procmodel_luau::runtime(),
                std::path::Path::new("/nonexistent/x.rbxl"),
                EngineConfig::default(),
            )
        },
        |_: &mut Engine, _: &Step| (),
    );
    let Err(e) = r else { panic!("started") };
    assert!(e.to_string().contains("x.rbxl"), "{e}");
}
