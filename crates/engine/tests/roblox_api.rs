//! Roblox API behaviour that needs the engine: RunService frames while a script waits, and
//! ChangeHistoryService requests mapped onto the engine's undo history.

use procmodel_engine::{Engine, EngineConfig};
use rbx_dom_weak::InstanceBuilder;
use rbx_types::{Attributes, Variant, Vector3};
use std::path::PathBuf;

const ROW: &str = r#"
local G = {}
G.Attributes = { Count = 3 }
function G.OnGenerate(params, target)
    for i = 1, params.Attributes.Count do
        local p = Instance.new("Part")
        p.Name = "P" .. i
        p.Parent = target
    end
end
return G
"#;

fn engine() -> Engine {
    Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            host: procmodel_luau::HostConfig {
                echo_output: false,
                ..procmodel_luau::HostConfig::default()
            },
            ..EngineConfig::default()
        },
    )
    .unwrap()
}

fn script(name: &str, source: &str) -> PathBuf {
    let dir = procmodel_testkit::scratch("roblox-api");
    let path = dir.join(format!("{name}.luau"));
    std::fs::write(&path, source).unwrap();
    path
}

/// A model named "Model" in Workspace over the ROW generator, generated once.
fn row_model(e: &mut Engine) -> rbx_types::Ref {
    let root = e.with_dom(|d| d.root_ref());
    let g = e.insert(
        root,
        InstanceBuilder::new("ModuleScript")
            .with_name("Row")
            .with_property("Source", Variant::String(ROW.to_owned())),
    );
    let ws = e.workspace();
    let mut a = Attributes::new();
    a.insert("Count".to_owned(), Variant::Float64(3.0));
    let m = e.insert(
        ws,
        InstanceBuilder::new("ProceduralModel")
            .with_name("Model")
            .with_property("Generator", Variant::Ref(g))
            .with_property("Size", Vector3::new(8.0, 8.0, 8.0))
            .with_property("Attributes", Variant::Attributes(a)),
    );
    let r = e.settle(10);
    assert!(r.iter().all(|r| r.is_ok()), "{r:?}");
    m
}

#[test]
fn heartbeat_fires_once_per_engine_frame_while_a_script_waits() {
    let mut e = engine();
    let m = row_model(&mut e);
    let path = script(
        "heartbeat",
        r#"
        local rs = game:GetService("RunService")
        local model = workspace.Model
        local beats, total = 0, 0
        local c = rs.Heartbeat:Connect(function(dt)
            beats += 1
            total += dt
        end)
        model:SetAttribute("Count", 5)
        task.wait(0.5)
        c:Disconnect()
        assert(beats >= 28 and beats <= 31, beats)
        assert(math.abs(total - 0.5) < 0.05, total)
        -- the engine stepped during those frames: the model regenerated
        assert(#model.GeneratedFolder:GetChildren() == 5)
        "#,
    );
    e.run_script(&path).unwrap();
    assert!(e.runs(m) >= 2);
}

#[test]
fn change_history_undo_and_redo_reach_the_engine_history() {
    let mut e = engine();
    let m = row_model(&mut e);
    e.set_attribute(m, "Count", Some(Variant::Float64(4.0)))
        .unwrap();
    assert!(e.settle(10).iter().all(|r| r.is_ok()));
    let path = script(
        "history",
        r#"
        local chs = game:GetService("ChangeHistoryService")
        local model = workspace.Model
        assert(model:GetAttribute("Count") == 4)
        chs:Undo()
        task.wait()
        assert(model:GetAttribute("Count") == 3, model:GetAttribute("Count"))
        chs:Redo()
        task.wait()
        assert(model:GetAttribute("Count") == 4)
        chs:SetWaypoint("done")
        "#,
    );
    e.run_script(&path).unwrap();
}
