//! Issue #10 at the host level: Pause keeps a long generator alive, nothing waits forever,
//! output quotas, bounded error text, and `require` names with dots.

use procmodel_luau::{Host, HostConfig, HostError, RunInputs};
use std::path::PathBuf;
use std::time::Duration;

fn dir(name: &str) -> PathBuf {
    procmodel_testkit::scratch(&format!("trust-{name}"))
}

fn host(config: HostConfig) -> Host {
    Host::new(HostConfig {
        echo_output: false,
        ..config
    })
    .unwrap()
}

fn generate(name: &str, source: &str, config: HostConfig) -> Result<usize, HostError> {
    let path = dir(name).join(format!("{name}.luau"));
    std::fs::write(&path, source).unwrap();
    let mut h = host(config);
    let root = h.with_dom_ref(|d| d.root_ref());
    let g = h.load_generator_file(&path, root)?;
    let out = h.run_generator(&g, &RunInputs::default())?;
    Ok(h.with_dom_ref(|d| procmodel_dom::count_subtree(d, out.container)))
}

fn message(e: HostError) -> String {
    match e {
        HostError::Script { message, traceback } => {
            format!("{message}\n{}", traceback.unwrap_or_default())
        }
        other => other.to_string(),
    }
}

#[test]
fn r10_2_pause_keeps_a_long_generator_from_timing_out() {
    // Runs for about three timeouts in total, pausing far more often than once per timeout.
    let src = r#"
return { OnGenerate = function(params, target)
    local x = 0
    for i = 1, 60_000_000 do
        x += i % 7
        if i % 2_000 == 0 then params:Pause() end
    end
    local p = Instance.new("Part"); p.Name = tostring(x); p.Parent = target
end }"#;
    let config = HostConfig {
        timeout: Duration::from_millis(150),
        ..HostConfig::default()
    };
    let start = std::time::Instant::now();
    let n = generate("pauses", src, config.clone()).expect("a pausing generator finishes");
    assert_eq!(n, 2);
    // The same loop without Pause times out: the test above proves Pause, not a slow timer.
    let no_pause = src.replace("params:Pause()", "x += 0");
    let spent = start.elapsed();
    if spent > Duration::from_millis(450) {
        let e = generate("nopause", &no_pause, config).unwrap_err();
        assert!(message(e).contains("Script timeout"), "no Pause, timeout");
    }
}

#[test]
fn r10_3_a_generator_waiting_forever_ends_with_the_wait_limit() {
    for body in [
        "while true do task.wait(1) end",
        "while true do task.wait() end",
        "while true do params:Pause() task.wait(0.5) end",
    ] {
        let src = format!("return {{ OnGenerate = function(params, target) {body} end }}");
        let e = generate("waits", &src, HostConfig::default()).unwrap_err();
        let m = message(e);
        assert!(m.contains("Wait limit"), "{body}: {m}");
        assert!(m.contains("--max-wait"), "{m}");
    }
}

#[test]
fn r10_3_a_defer_storm_ends_with_the_wait_limit() {
    let src = r#"
return { OnGenerate = function(params, target)
    local function again() task.defer(again) end
    again()
    while true do coroutine.yield() end
end }"#;
    // The main thread's bare yield is its own error; the storm of deferred threads must
    // end too, whichever the scheduler meets first.
    let e = generate("storm", src, HostConfig::default()).unwrap_err();
    let m = message(e);
    assert!(
        m.contains("Wait limit") || m.contains("nothing will resume it"),
        "{m}"
    );
    let src = r#"
return { OnGenerate = function(params, target)
    local n = 0
    local function again() n += 1 task.defer(again) end
    again()
    task.wait(1)
end }"#;
    let m = message(generate("storm2", src, HostConfig::default()).unwrap_err());
    assert!(
        m.contains("Wait limit") && m.contains("without virtual time advancing"),
        "{m}"
    );
}

#[test]
fn r10_3_a_module_top_level_waiting_forever_ends() {
    let src = "while true do task.wait(1) end\nreturn { OnGenerate = function() end }";
    let m = message(generate("toplevel", src, HostConfig::default()).unwrap_err());
    assert!(m.contains("Wait limit"), "{m}");
}

/// A module's top level that waits forever ended with "Wait limit: …" alone: no file, no
/// word of what it waited for. The error names the module, and a `WaitForChild` that
/// never returned (Roblox's "Infinite yield possible") is named in it.
#[test]
fn a_wait_that_never_ends_is_named_with_its_module() {
    let src = "local Assets = game:GetService('ReplicatedStorage'):WaitForChild('Assets')\nreturn { OnGenerate = function() end }";
    let m = message(generate("waits-child", src, HostConfig::default()).unwrap_err());
    assert!(m.contains("waits-child.luau: Wait limit:"), "{m}");
    assert!(
        m.contains(r#"still waiting in ReplicatedStorage:WaitForChild("Assets")"#),
        "{m}"
    );
    // In OnGenerate, the calling line is in front already.
    let src =
        "return { OnGenerate = function(params, target)\n\tworkspace:WaitForChild('Map')\nend }";
    let m = message(generate("waits-run", src, HostConfig::default()).unwrap_err());
    assert!(
        m.contains(r#"still waiting in Workspace:WaitForChild("Map")"#),
        "{m}"
    );
    // A child that came after the warning is no longer what the run waits for.
    let src = "return { OnGenerate = function(params, target)\n\ttask.delay(10, function() local f = Instance.new('Folder') f.Name = 'Late' f.Parent = target end)\n\ttarget:WaitForChild('Late')\n\twhile true do task.wait(1) end\nend }";
    let m = message(generate("waits-late", src, HostConfig::default()).unwrap_err());
    assert!(
        m.contains("Wait limit") && !m.contains("still waiting"),
        "{m}"
    );
}

/// A run whose only thread waited on a signal nothing could fire ended with "yielded and
/// nothing will resume it (a coroutine.yield outside task.wait?)", pointing at the wrong
/// thing. The error names the signal, and says when it is one that never fires headless.
#[test]
fn a_signal_wait_nothing_will_fire_is_named() {
    let src = "return { OnGenerate = function(params, target)\n\ttarget.ChildAdded:Wait()\nend }";
    let m = message(generate("waits-signal", src, HostConfig::default()).unwrap_err());
    assert!(
        m.contains("the generator waits in ")
            && m.contains(".ChildAdded:Wait() and nothing left running will fire it"),
        "{m}"
    );
    let src = "return { OnGenerate = function(params, target)\n\tlocal v = Instance.new('VideoFrame')\n\tv.Name = 'Screen'\n\tv.Parent = target\n\tv.Loaded:Wait()\nend }";
    let m = message(generate("waits-never", src, HostConfig::default()).unwrap_err());
    assert!(
        m.contains(".Screen.Loaded:Wait() and it never fires here"),
        "{m}"
    );
    // A plain script the same way; a bare coroutine.yield keeps its own hint.
    let script = dir("waits-script").join("wind.luau");
    std::fs::write(
        &script,
        "local e = Instance.new('BindableEvent')\ne.Event:Wait()\n",
    )
    .unwrap();
    let m = message(
        host(HostConfig::default())
            .run_script_file(&script)
            .unwrap_err(),
    );
    assert!(
        m.contains(
            "the script waits in BindableEvent.Event:Wait() and nothing left running will fire it"
        ),
        "{m}"
    );
    std::fs::write(&script, "coroutine.yield()\n").unwrap();
    let m = message(
        host(HostConfig::default())
            .run_script_file(&script)
            .unwrap_err(),
    );
    assert!(m.contains("a coroutine.yield outside task.wait?"), "{m}");
}

/// A run's main thread resumed by `task.spawn` from another thread (the way `Promise:await()`
/// wakes the thread it suspended) ended the run with "internal: main thread ended
/// unexpectedly". Its run ends with it, as a generation and as a script.
#[test]
fn a_main_thread_resumed_by_task_spawn_ends_its_run() {
    let src = "return { OnGenerate = function(params, target)\n\tlocal me = coroutine.running()\n\ttask.delay(0.1, function() task.spawn(me) end)\n\tcoroutine.yield()\n\tInstance.new('Part').Parent = target\nend }";
    assert_eq!(generate("woken", src, HostConfig::default()).unwrap(), 2);
    let src = "return { OnGenerate = function(params, target)\n\tlocal me = coroutine.running()\n\ttask.delay(0.1, function() task.spawn(me) end)\n\tcoroutine.yield()\n\terror('woke up broken')\nend }";
    let m = message(generate("woken-error", src, HostConfig::default()).unwrap_err());
    assert!(m.contains("woke up broken"), "{m}");
    let script = dir("woken-script").join("woken.luau");
    std::fs::write(
        &script,
        "local me = coroutine.running()\ntask.delay(0.1, function() task.spawn(me) end)\ncoroutine.yield()\nworkspace:SetAttribute('Woke', true)\n",
    )
    .unwrap();
    let mut h = host(HostConfig::default());
    h.run_script_file(&script).unwrap();
    let woke = h.with_dom_ref(|d| {
        d.descendants()
            .find(|i| i.class == "Workspace")
            .and_then(|w| match w.properties.get(&"Attributes".into()) {
                Some(rbx_types::Variant::Attributes(a)) => a.get("Woke").cloned(),
                _ => None,
            })
    });
    assert_eq!(woke, Some(rbx_types::Variant::Bool(true)));
    // Resumed by coroutine.resume instead, the run still ends (the values went to that call).
    std::fs::write(
        &script,
        "local me = coroutine.running()\ntask.delay(0.1, function() coroutine.resume(me) end)\ncoroutine.yield()\n",
    )
    .unwrap();
    host(HostConfig::default())
        .run_script_file(&script)
        .unwrap();
}

/// A run waiting on a Heartbeat-driven timer (the `Promise.delay` roblox-ts bundles counts
/// frames in a Heartbeat handler, then wakes the awaiting thread): with nothing queued the
/// run ended at once with "nothing will resume it". Frames pass while a frame handler may
/// still wake the main thread, up to the wait limit.
#[test]
fn a_main_thread_woken_by_a_heartbeat_handler_finishes() {
    let src = "return { OnGenerate = function(params, target)\n\tlocal me = coroutine.running()\n\tlocal frames, conn = 0, nil\n\tconn = game:GetService('RunService').Heartbeat:Connect(function()\n\t\tframes += 1\n\t\tif frames == 6 then conn:Disconnect() task.spawn(me) end\n\tend)\n\tcoroutine.yield()\n\tInstance.new('Part').Parent = target\nend }";
    assert_eq!(
        generate("heartbeat-timer", src, HostConfig::default()).unwrap(),
        2
    );
    // One whose handler never wakes it ends at the wait limit.
    let src = "return { OnGenerate = function(params, target)\n\tgame:GetService('RunService').Heartbeat:Connect(function() end)\n\tcoroutine.yield()\nend }";
    let config = HostConfig {
        max_wait: 5.0,
        ..HostConfig::default()
    };
    let m = message(generate("heartbeat-forever", src, config).unwrap_err());
    assert!(m.contains("Wait limit"), "{m}");
}

#[test]
fn r10_3_legitimate_waits_are_not_limited() {
    let src = r#"
return { OnGenerate = function(params, target)
    for i = 1, 30 do task.wait(2) end
    task.wait()
    local p = Instance.new("Part"); p.Parent = target
end }"#;
    assert_eq!(generate("legit", src, HostConfig::default()).unwrap(), 2);
    let tight = HostConfig {
        max_wait: 10.0,
        ..HostConfig::default()
    };
    let m = message(generate("legit", src, tight).unwrap_err());
    assert!(m.contains("limit 10 s"), "{m}");
}

#[test]
fn r10_9_instance_and_output_quotas_stop_a_polite_flood() {
    let src = r#"
return { OnGenerate = function(params, target)
    for i = 1, 10_000_000 do
        local p = Instance.new("Part")
        p.Parent = target
        if i % 1000 == 0 then params:Pause() end
    end
end }"#;
    let config = HostConfig {
        instance_limit: Some(20_000),
        ..HostConfig::default()
    };
    let m = message(generate("flood", src, config).unwrap_err());
    assert!(
        m.contains("instance limit exceeded") && m.contains("20000"),
        "{m}"
    );
    let src = r#"
return { OnGenerate = function(params, target)
    local big = string.rep("x", 1_000_000)
    for i = 1, 10_000 do
        local v = Instance.new("StringValue")
        v.Value = big
        v.Parent = target
        params:Pause()
    end
end }"#;
    let config = HostConfig {
        max_output_bytes: Some(64 << 20),
        ..HostConfig::default()
    };
    let m = message(generate("bytes", src, config).unwrap_err());
    assert!(
        m.contains("output limit exceeded") && m.contains("64 MB"),
        "{m}"
    );
    // Attribute text counts too, and so does the mesh of a MeshPart made by a script, and
    // the text of what `Clone` copies.
    for (name, src) in [
        (
            "copies",
            r#"
return { OnGenerate = function(params, target)
    local v = Instance.new("StringValue")
    v.Value = string.rep("x", 1_000_000)
    for i = 1, 10_000 do
        Instance.fromExisting(v).Parent = target
        params:Pause()
    end
end }"#,
        ),
        (
            "clones",
            r#"
return { OnGenerate = function(params, target)
    local v = Instance.new("StringValue")
    v.Value = string.rep("x", 1_000_000)
    v:SetAttribute("Blob", string.rep("y", 1_000_000))
    for i = 1, 10_000 do
        v:Clone().Parent = target
        params:Pause()
    end
end }"#,
        ),
        (
            "attrs",
            r#"
return { OnGenerate = function(params, target)
    local big = string.rep("x", 1_000_000)
    for i = 1, 10_000 do
        local v = Instance.new("Folder")
        v:SetAttribute("Blob", big)
        v.Parent = target
        params:Pause()
    end
end }"#,
        ),
        (
            "meshes",
            r#"
local AssetService = game:GetService("AssetService")
return { OnGenerate = function(params, target)
    local em = AssetService:CreateEditableMesh()
    local v = {}
    for i = 1, 3000 do v[i] = em:AddVertex(Vector3.new(i, i % 7, i % 5)) end
    for i = 1, 2998 do em:AddTriangle(v[i], v[i + 1], v[i + 2]) end
    for i = 1, 10_000 do
        AssetService:CreateMeshPartAsync(Content.fromObject(em)).Parent = target
        params:Pause()
    end
end }"#,
        ),
    ] {
        let config = HostConfig {
            max_output_bytes: Some(64 << 20),
            ..HostConfig::default()
        };
        let m = message(generate(name, src, config).unwrap_err());
        assert!(m.contains("output limit exceeded"), "{name}: {m}");
    }
    assert_eq!(
        HostConfig::default().instance_limit,
        Some(procmodel_luau::DEFAULT_MAX_INSTANCES),
        "quotas are on by default"
    );
    assert!(HostConfig::default().max_output_bytes.is_some());
}

#[test]
fn r10_10_a_stack_overflow_error_is_a_few_kb() {
    let src = r#"
local function f(n) return f(n + 1) + 1 end
return { OnGenerate = function(params, target) f(1) end }"#;
    let m = message(generate("overflow", src, HostConfig::default()).unwrap_err());
    assert!(m.len() < 8 * 1024, "{} bytes", m.len());
    assert!(m.contains("stack overflow"), "{m}");
    let src = r#"return { OnGenerate = function() error(string.rep("e", 5_000_000)) end }"#;
    let m = message(generate("hugeerror", src, HostConfig::default()).unwrap_err());
    assert!(m.len() < 8 * 1024, "{} bytes", m.len());
}

#[test]
fn r10_15_require_names_with_dots_load_the_whole_name() {
    let d = dir("dots");
    std::fs::write(d.join("RoadMath.luau"), "return 'plain'").unwrap();
    std::fs::write(d.join("RoadMath.spec.luau"), "return 'spec'").unwrap();
    std::fs::write(d.join("Util.luau"), "return 'util'").unwrap();
    let gen_path = d.join("gen.luau");
    std::fs::write(
        &gen_path,
        r#"return { OnGenerate = function()
            assert(require("./RoadMath.spec") == "spec", "spec module")
            assert(require("./RoadMath") == "plain", "plain module")
            assert(require("./Util.luau") == "util", "an explicit extension still works")
            local ok, err = pcall(require, "./Missing.spec")
            assert(not ok and err:find("Missing.spec.luau"), err)
        end }"#,
    )
    .unwrap();
    let mut h = host(HostConfig::default());
    let root = h.with_dom_ref(|d| d.root_ref());
    let g = h.load_generator_file(&gen_path, root).unwrap();
    h.run_generator(&g, &RunInputs::default())
        .map_err(message)
        .unwrap();
}

#[test]
fn r10_2_a_generator_pausing_forever_ends_with_its_own_limit() {
    let src = "return { OnGenerate = function(params) while true do params:Pause() end end }";
    let config = HostConfig {
        timeout: Duration::from_millis(100),
        run_limit: Duration::from_millis(400),
        ..HostConfig::default()
    };
    let m = message(generate("pauses_forever", src, config).unwrap_err());
    assert!(m.contains("Run time limit"), "{m}");
    assert!(!m.contains("Script timeout"), "{m}");
}

/// Solid modelling is native work, out of the interrupt's reach: it reads the same timeout
/// flag, so a generator unioning far too much stops at its timeout, not minutes later.
#[test]
fn r10_2_a_huge_solid_modelling_call_stops_at_the_timeout() {
    let src = r#"
return { OnGenerate = function(params, target)
    local base = Instance.new("Part")
    local balls = {}
    for i = 1, 150 do
        local b = Instance.new("Part")
        b.Shape = Enum.PartType.Ball
        b.Size = Vector3.new(3, 3, 3)
        b.Position = Vector3.new(i * 1.5, math.sin(i) * 2, 0)
        balls[i] = b
    end
    base:UnionAsync(balls, nil, Enum.RenderFidelity.Precise).Parent = target
end }"#;
    let path = dir("csg-timeout").join("Heavy.luau");
    std::fs::write(&path, src).unwrap();
    let mut h = host(HostConfig {
        timeout: Duration::from_millis(200),
        ..HostConfig::default()
    });
    let root = h.with_dom_ref(|d| d.root_ref());
    let g = h.load_generator_file(&path, root).unwrap();
    let start = std::time::Instant::now();
    let inputs = RunInputs {
        allow_csg: true,
        ..RunInputs::default()
    };
    let e = h.run_generator(&g, &inputs).unwrap_err();
    let spent = start.elapsed();
    let m = message(e);
    assert!(m.contains("Script timeout"), "{m}");
    // Unstopped, the union takes minutes (150 balls of 48 sides, each cut by its neighbours).
    assert!(spent < Duration::from_secs(20), "stopped after {spent:?}");
}
