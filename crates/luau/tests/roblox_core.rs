//! The Roblox core conformance corpus (pivots, models, scripts): one #[test] per script in
//! tests/roblox/core.
mod common;
roblox_tests!("core": pivot_rules, model_moves, require_instance_tree, attachment,
    legacy_properties, joints, live_global_paths, assembly, make_joints, archivable, part_size, content_ids, query_descendants,
    members_from_reference, material_service, legacy_methods, editable_mesh, editable_image, solid_modelling, part_rotation, standard_children, welded_moves, error_places, argument_errors, missing_globals, default_names, optimization_level, style_rules);

/// A text object's `Font` written by a script is kept as the one `FontFace` files carry: an
/// XML save holds a single `FontFace`, of the face the enum item maps to (a stored `Font` was
/// written a second time, migrated by the XML writer to a family that does not exist).
#[test]
fn a_text_objects_font_is_saved_once_as_its_font_face() {
    let dir = common::script_files(
        "font",
        &[(
            "font.luau",
            "local l = Instance.new('TextLabel')\nl.Font = Enum.Font.Arial\nl.Parent = workspace\n",
        )],
    );
    let mut host = common::quiet_host();
    host.run_script_file(&dir.join("font.luau")).unwrap();
    let dom = host.take_dom();
    let label = dom
        .descendants()
        .find(|i| i.class == "TextLabel")
        .expect("the label");
    assert!(!label.properties.contains_key(&"Font".into()));
    let mut xml = Vec::new();
    procmodel_dom::encode_xml(&mut xml, &dom, &[label.referent()]).unwrap();
    let xml = String::from_utf8(xml).unwrap();
    assert_eq!(xml.matches("name=\"FontFace\"").count(), 1, "{xml}");
    assert!(
        xml.contains("rbxasset://fonts/families/Arimo.json"),
        "{xml}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A StyleRule's properties are saved as Roblox saves them (`PropertiesSerialize`) and read
/// back from the file.
#[test]
fn a_style_rules_properties_are_saved_and_read_back() {
    let dir = common::script_files(
        "style",
        &[(
            "style.luau",
            "local r = Instance.new('StyleRule')\nr.Name = 'Rule'\nr:SetProperty('Size', UDim2.fromScale(1, 0.5))\nr:SetProperty('BackgroundColor3', '$Main')\nr.Parent = workspace\n",
        )],
    );
    let mut host = common::quiet_host();
    host.run_script_file(&dir.join("style.luau")).unwrap();
    let dom = host.take_dom();
    let rule = dom
        .descendants()
        .find(|i| i.class == "StyleRule")
        .expect("the rule");
    let mut xml = Vec::new();
    procmodel_dom::encode_xml(&mut xml, &dom, &[rule.referent()]).unwrap();
    assert!(
        String::from_utf8_lossy(&xml).contains("PropertiesSerialize"),
        "saved under Roblox's name"
    );
    let back = procmodel_dom::decode_xml(xml.as_slice()).unwrap();
    let rule = back.get_by_ref(back.root().children()[0]).unwrap();
    let Some(rbx_types::Variant::Attributes(props)) = rule.properties.get(&"Properties".into())
    else {
        panic!(
            "no Properties: {:?}",
            rule.properties.keys().collect::<Vec<_>>()
        );
    };
    // Attribute strings read back as binary strings (one type in the format).
    let token = match props.get("BackgroundColor3") {
        Some(rbx_types::Variant::String(s)) => s.as_bytes().to_vec(),
        Some(rbx_types::Variant::BinaryString(b)) => AsRef::<[u8]>::as_ref(b).to_vec(),
        other => panic!("the token: {other:?}"),
    };
    assert_eq!(token, b"$Main");
    assert!(matches!(
        props.get("Size"),
        Some(rbx_types::Variant::UDim2(_))
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

/// An instance of a class newer than the reflection database (a place a newer Studio saved
/// holds some: `UIInlineLayout` in rbx-test-files' all-instances place) is still an
/// Instance: `IsA`, the other Instance methods and Instance's properties work on it (reading
/// `Archivable` then panicked on the missing class's defaults). A script walking
/// `game:GetDescendants()` with `IsA` stopped with "IsA is not a valid member of
/// UIInlineLayout".
#[test]
fn an_instance_of_a_class_the_database_lacks_has_the_instance_methods() {
    let dir = common::script_files(
        "newclass",
        &[(
            "walk.luau",
            r#"
local w = workspace:FindFirstChild("Widget")
assert(w, "the widget")
assert(w:IsA("Instance") and w:IsA("FutureWidget") and not w:IsA("BasePart"))
assert(w.ClassName == "FutureWidget")
assert(w.Archivable == true)
assert(w:GetFullName() == "Workspace.Widget", w:GetFullName())
assert(w:FindFirstChild("Inner"):IsDescendantOf(w))
w:SetAttribute("Seen", true)
assert(w:GetAttribute("Seen") == true)
local parts = 0
for _, d in game:GetDescendants() do
    if d:IsA("BasePart") then parts += 1 end
end
assert(parts == 0, parts)
local copy = w:Clone()
copy.Parent = workspace
w:Destroy()
assert(workspace:FindFirstChild("Widget") == copy)
"#,
        )],
    );
    let mut host = common::quiet_host();
    host.with_dom_mut(|d| {
        let root = d.root_ref();
        let workspace = d
            .root()
            .children()
            .iter()
            .copied()
            .find(|&c| d.get_by_ref(c).is_some_and(|i| i.class == "Workspace"))
            .unwrap_or_else(|| {
                d.insert(
                    root,
                    rbx_dom_weak::InstanceBuilder::new("Workspace").with_name("Workspace"),
                )
            });
        let widget = d.insert(
            workspace,
            rbx_dom_weak::InstanceBuilder::new("FutureWidget").with_name("Widget"),
        );
        d.insert(
            widget,
            rbx_dom_weak::InstanceBuilder::new("Folder").with_name("Inner"),
        );
    });
    host.run_script_file(&dir.join("walk.luau")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `loadstring` (Roblox reference): off by default ("loadstring() is not available", as a
/// Roblox place answers); in a place whose ServerScriptService has LoadStringEnabled on, it
/// compiles Luau source into a function with its caller's environment, and gives nil and the
/// message for a syntax error. It always said "not available", so an old place that enabled
/// it could not run its scripts.
#[test]
fn loadstring_compiles_where_the_place_enables_it() {
    let dir = common::script_files(
        "loadstring",
        &[
            (
                "off.luau",
                r#"
local f, err = loadstring("return 1")
assert(f == nil and err == "loadstring() is not available", tostring(err))
"#,
            ),
            (
                "on.luau",
                r#"
local twice = assert(loadstring("local a = ... return a * 2, script.Name"))
local doubled, name = twice(21)
assert(doubled == 42 and name == "on", name)
counter = 1
assert(loadstring("counter += 1 return counter")() == 2, "the caller's globals")
local f, err = loadstring("return 1 +", "broken")
assert(f == nil and string.find(err, '[string "broken"]:1:', 1, true), err)
local ok, msg = pcall(assert(loadstring("error('boom')", "thrower")))
assert(not ok and string.find(msg, '[string "thrower"]:1: boom', 1, true), msg)
local bad, why = pcall(loadstring, 5)
assert(not bad and string.find(why, "string expected, got number", 1, true), why)
"#,
            ),
        ],
    );
    common::quiet_host()
        .run_script_file(&dir.join("off.luau"))
        .unwrap();
    let mut enabled = common::quiet_host();
    enabled.with_dom_mut(|d| {
        let root = d.root_ref();
        d.insert(
            root,
            rbx_dom_weak::InstanceBuilder::new("ServerScriptService")
                .with_name("ServerScriptService")
                .with_property("LoadStringEnabled", true),
        );
    });
    enabled.run_script_file(&dir.join("on.luau")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The output lines (level, text) of running the script `path` on a quiet host.
fn output_of(path: &std::path::Path) -> Vec<(procmodel_script::LogLevel, String)> {
    let mut host = common::quiet_host();
    host.run_script_file(path).unwrap();
    procmodel_script::ScriptHost::take_output(&host)
        .into_iter()
        .map(|l| (l.level, l.message))
        .collect()
}

/// TestService's output methods, which TestEZ's reporter calls to report failures, stopped a
/// test run at "TestService:Error is a Roblox method that procmodel does not implement". They
/// print the reference's lines: passes printed, failures and errors warned.
#[test]
fn test_service_prints_the_lines_the_reference_gives() {
    let dir = common::script_files(
        "test-service",
        &[(
            "report.luau",
            "local TestService = game:GetService('TestService')\n\
             TestService:Message('starting')\n\
             TestService:Checkpoint('halfway')\n\
             TestService:Check(1 + 1 == 2, 'adds')\n\
             TestService:Check(false, 'breaks', script, 4)\n\
             TestService:Require(true, 'needed')\n\
             TestService:Require(nil, 'missing')\n\
             TestService:Warn(true, 'fine')\n\
             TestService:Warn(false, 'careful')\n\
             TestService:Error('3 tests failed')\n\
             TestService:Fail('fatal')\n\
             TestService:Done()\n",
        )],
    );
    let lines = output_of(&dir.join("report.luau"));
    use procmodel_script::LogLevel::{Print, Warn};
    let want = [
        (Print, "TestService: starting"),
        (Print, "Test checkpoint: halfway"),
        (Print, "Check passed: adds"),
        (Warn, "Check failed: breaks"),
        (Print, "Require passed: needed"),
        (Warn, "Require failed. Test ended: missing"),
        (Print, "Warning passed: fine"),
        (Warn, "Warning: careful"),
        (Warn, "TestService: 3 tests failed"),
        (Warn, "TestService: fatal"),
        (Print, "Testing Done"),
    ];
    assert_eq!(lines, want.map(|(l, m)| (l, m.to_owned())));
}

/// LogService's structured logging (the reference's Output, Info, Warn, Error and Log):
/// "not implemented" before. Placeholders are filled from the context; Error warns and throws
/// a table whose tostring is the message.
#[test]
fn log_service_fills_templates_and_throws_structured_errors() {
    let dir = common::script_files(
        "log-service",
        &[(
            "log.luau",
            "local LogService = game:GetService('LogService')\n\
             LogService:Info('User {name} has {count} items', { name = 'Alice', count = 42 })\n\
             LogService:Output('plain {kept}')\n\
             LogService:Warn('Memory usage at {pct}%', { pct = 95 })\n\
             LogService:Log(Enum.MessageType.MessageWarning, 'Event {action}', { action = 'click' })\n\
             local ok, err = pcall(function() LogService:Error('Failed: {reason}', { reason = 'timeout' }) end)\n\
             assert(not ok and err.message == 'Failed: timeout' and err.template == 'Failed: {reason}')\n\
             assert(err.context.reason == 'timeout' and tostring(err) == 'Failed: timeout' and type(err.stack) == 'string')\n\
             local ok2, err2 = pcall(function() LogService:Log(Enum.MessageType.MessageError, 'x{y}', { y = 1 }) end)\n\
             assert(not ok2 and err2.message == 'x1')\n\
             local ok3, err3 = pcall(function() LogService.Info('x') end)\n\
             assert(not ok3 and string.find(err3, \"log.luau:11: Expected ':' not '.'\", 1, true), err3)\n\
             local ok4, err4 = pcall(function() LogService:Info('x', 5) end)\n\
             assert(not ok4 and string.find(err4, \"invalid argument #2 to 'Info' (table expected, got number)\", 1, true), err4)\n",
        )],
    );
    let lines = output_of(&dir.join("log.luau"));
    use procmodel_script::LogLevel::{Print, Warn};
    let want = [
        (Print, "User Alice has 42 items"),
        (Print, "plain {kept}"),
        (Warn, "Memory usage at 95%"),
        (Warn, "Event click"),
        (Warn, "Failed: timeout"),
        (Warn, "x1"),
    ];
    assert_eq!(lines, want.map(|(l, m)| (l, m.to_owned())));
}
