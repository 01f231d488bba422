//! Running generator modules: params, results, errors with file and line, timeouts, limits.

use procmodel_luau::{Host, HostConfig, HostError, RunInputs};
use rbx_types::Variant;
use std::path::PathBuf;
use std::time::Duration;

fn write_generator(name: &str, source: &str) -> PathBuf {
    let dir = procmodel_testkit::scratch(&format!("gen-{name}"));
    let path = dir.join(format!("{name}.luau"));
    std::fs::write(&path, source).unwrap();
    path
}

fn host(timeout_ms: u64) -> Host {
    Host::new(HostConfig {
        timeout: Duration::from_millis(timeout_ms),
        echo_output: false,
        ..HostConfig::default()
    })
    .unwrap()
}

fn run(
    source: &str,
    name: &str,
    inputs: RunInputs,
    timeout_ms: u64,
) -> Result<(Host, procmodel_luau::RunOutput), HostError> {
    let path = write_generator(name, source);
    let mut h = host(timeout_ms);
    let root = h.with_dom_ref(|d| d.root_ref());
    let g = h.load_generator_file(&path, root)?;
    let out = h.run_generator(&g, &inputs)?;
    Ok((h, out))
}

fn script_message(e: HostError) -> String {
    match e {
        HostError::Script { message, .. } => message,
        other => other.to_string(),
    }
}

#[test]
fn params_have_attributes_with_defaults_size_and_pause() {
    let src = r#"
        return {
            Attributes = { Count = 3, Label = "x" },
            OnGenerate = function(params, target)
                assert(params.Attributes.Count == 5, "given value wins")
                assert(params.Attributes.Label == "x", "default fills the rest")
                assert(params.Size == Vector3.new(2, 4, 6), tostring(params.Size))
                for i = 1, params.Attributes.Count do
                    params:Pause()
                    local p = Instance.new("Part")
                    p.Name = "P" .. i
                    p.Parent = target
                end
                target:SetPrimaryPart(target.P1)
            end,
        }
    "#;
    let inputs = RunInputs {
        attributes: vec![("Count".into(), Variant::Float64(5.0))],
        size: glam::Vec3::new(2.0, 4.0, 6.0),
        ..Default::default()
    };
    let (h, out) = run(src, "params", inputs, 5000).unwrap();
    let names = h.with_dom_ref(|d| {
        d.get_by_ref(out.container)
            .unwrap()
            .children()
            .iter()
            .map(|&r| d.get_by_ref(r).unwrap().name.clone())
            .collect::<Vec<_>>()
    });
    assert_eq!(names, ["P1", "P2", "P3", "P4", "P5"]);
    let pp = out.primary_part.expect("SetPrimaryPart recorded");
    assert_eq!(
        h.with_dom_ref(|d| d.get_by_ref(pp).unwrap().name.clone()),
        "P1"
    );
}

#[test]
fn without_declared_attributes_all_model_attributes_pass() {
    let src = r#"
        return { OnGenerate = function(params, target)
            assert(params.Attributes.Anything == true)
        end }
    "#;
    let inputs = RunInputs {
        attributes: vec![("Anything".into(), Variant::Bool(true))],
        ..Default::default()
    };
    run(src, "noattrs", inputs, 5000).unwrap();
}

#[test]
fn runtime_error_names_file_and_line() {
    let src = "return { Attributes = {}, OnGenerate = function(params, target)\n\n  error('boom')\nend }\n";
    let e = run(src, "boom", RunInputs::default(), 5000).err().unwrap();
    let msg = script_message(e);
    assert!(msg.contains("boom.luau:3"), "{msg}");
    assert!(msg.contains("boom"), "{msg}");
}

#[test]
fn syntax_error_names_file_and_line() {
    let src = "return {\n  OnGenerate = function(\n";
    let e = run(src, "syntax", RunInputs::default(), 5000)
        .err()
        .unwrap();
    let msg = e.to_string();
    assert!(msg.contains("syntax.luau"), "{msg}");
}

#[test]
fn missing_on_generate_is_a_clear_error() {
    let e = generator_error("return { Attributes = {} }", "noon");
    assert!(e.to_string().contains("no OnGenerate function"), "{e}");
    let e = run("return 5", "notable", RunInputs::default(), 5000)
        .err()
        .unwrap();
    assert!(e.to_string().contains("must return a table"), "{e}");
    // A module that returns nothing: Roblox's words, said of the file, with no traceback of
    // the loader's own code.
    let e = run("local x = 1", "returnsnothing", RunInputs::default(), 5000)
        .err()
        .unwrap();
    let text = e.to_string();
    assert!(
        text.contains("returnsnothing")
            && text.contains("Module code did not return exactly one value")
            && text.contains("must return a table")
            && !text.contains("require:"),
        "{text}"
    );
}

/// The error a generator module's source gives when it is loaded and run once.
fn generator_error(source: &str, name: &str) -> String {
    run(source, name, RunInputs::default(), 5000)
        .err()
        .expect("the generator fails")
        .to_string()
}

#[test]
fn bad_attribute_default_is_a_clear_error() {
    let e = generator_error(
        "return { Attributes = { Fn = function() end }, OnGenerate = function() end }",
        "badattr",
    );
    assert!(e.contains("attribute Fn"), "{e}");
}

#[test]
fn of_several_bad_attributes_the_first_by_name_is_reported_and_a_list_is_named_as_one() {
    // Several bad names: the report does not depend on the order the table keeps them in.
    let e = generator_error(
        "return { Attributes = { RBXThing = 2, ['Bad Name'] = 1, Zed = function() end }, OnGenerate = function() end }",
        "badnames",
    );
    assert!(
        e.contains("attribute Bad Name") && e.contains("invalid character ' '"),
        "{e}"
    );
    // A list where a map belongs (`Attributes = { 1, 2 }`) names its key, not Integer(1).
    let e = generator_error(
        "return { Attributes = { 1, 2 }, OnGenerate = function() end }",
        "badlist",
    );
    assert!(
        e.contains("attribute 1: attribute names must be strings, and this key is a number")
            && e.contains("not a list"),
        "{e}"
    );
}

#[test]
fn a_misspelt_on_generate_is_named() {
    let e = generator_error(
        "return { Attributes = {}, onGenerate = function() end }",
        "lowercase",
    );
    assert!(
        e.contains("no OnGenerate function (it has onGenerate: names are case-sensitive)"),
        "{e}"
    );
}

#[test]
fn a_schema_table_as_attribute_says_to_write_the_default() {
    // Other tools declare parameters as { Type = ..., Default = ... }; ProceduralModel takes
    // the default itself, and the error says so.
    let e = generator_error(
        "return { Attributes = { Count = { Type = \"number\", Default = 6 } }, OnGenerate = function() end }",
        "schema",
    );
    assert!(
        e.contains("attribute Count")
            && e.contains("maps each name to its default value")
            && e.contains("write Count = <its Default>"),
        "{e}"
    );
}

/// A timeout and the memory limit say where the script was running — the line of the loop
/// first, its Luau frames in the traceback — as an error raised there would. They named no
/// place ("Script timeout: exhausted allowed execution time" alone), leaving the author to
/// guess which loop spun.
#[test]
fn a_limit_names_the_line_that_was_running() {
    let src = "local M = {}\n\
               function M.spin(n)\n\
               \tlocal x = 0\n\
               \twhile true do\n\
               \t\tx += n\n\
               \tend\n\
               end\n\
               return { OnGenerate = function() M.spin(1) end }\n";
    let path = write_generator("spin", src);
    let mut h = host(200);
    let root = h.with_dom_ref(|d| d.root_ref());
    let g = h.load_generator_file(&path, root).unwrap();
    let e = h.run_generator(&g, &RunInputs::default()).err().unwrap();
    let (message, traceback) = match e {
        HostError::Limit {
            message, traceback, ..
        } => (message, traceback.unwrap_or_default()),
        other => panic!("{other}"),
    };
    let place = |line: u32| format!("spin.luau:{line}: ");
    assert!(
        (4..=6).any(|l| message.contains(&place(l))),
        "the loop's line first: {message}"
    );
    assert!(message.contains("Script timeout"), "{message}");
    assert!(traceback.contains("in function 'spin'"), "{traceback}");
    assert!(
        traceback.contains("spin.luau:8:"),
        "the caller's frame: {traceback}"
    );

    let src = "local grown = {}\n\
               return { OnGenerate = function()\n\
               \tfor i = 1, 1e9 do\n\
               \t\tgrown[i] = string.rep(\"x\", 64) .. i\n\
               \tend\n\
               end }\n";
    let path = write_generator("grow", src);
    let mut h = Host::new(HostConfig {
        memory_limit: 16 << 20,
        ..HostConfig::default()
    })
    .unwrap();
    let root = h.with_dom_ref(|d| d.root_ref());
    let g = h.load_generator_file(&path, root).unwrap();
    let e = h.run_generator(&g, &RunInputs::default()).err().unwrap();
    let message = e.to_string();
    assert!(
        (3..=5).any(|l| message.contains(&format!("grow.luau:{l}: ")))
            && message.contains("memory"),
        "{message}"
    );
}

#[test]
fn infinite_loop_times_out_with_the_remedy_and_host_survives() {
    let src = "return { OnGenerate = function() while true do end end }";
    let path = write_generator("loop", src);
    let mut h = host(200);
    let root = h.with_dom_ref(|d| d.root_ref());
    let g = h.load_generator_file(&path, root).unwrap();
    let msg = script_message(h.run_generator(&g, &RunInputs::default()).err().unwrap());
    assert!(
        msg.contains("Script timeout: exhausted allowed execution time"),
        "{msg}"
    );
    assert!(msg.contains("params:Pause()"), "{msg}");
    // pcall cannot swallow the timeout
    let src2 = "return { OnGenerate = function() while true do pcall(function() while true do end end) end end }";
    let g2 = h
        .load_generator_file(&write_generator("pcallloop", src2), root)
        .unwrap();
    let msg2 = script_message(h.run_generator(&g2, &RunInputs::default()).err().unwrap());
    assert!(msg2.contains("Script timeout"), "{msg2}");
    // and the same host still works
    let ok = h
        .load_generator_file(
            &write_generator("fine", "return { OnGenerate = function() end }"),
            root,
        )
        .unwrap();
    h.run_generator(&ok, &RunInputs::default()).unwrap();
}

#[test]
fn yielding_resets_the_timeout() {
    // 6 × 100 ms of work with Pause-free task.wait in between stays under a 400 ms limit per slice.
    let src = r#"return { OnGenerate = function(params)
        for i = 1, 3 do
            local t = 0
            for j = 1, 2e5 do t += j end
            task.wait()
        end
    end }"#;
    run(src, "yields", RunInputs::default(), 2000).unwrap();
}

/// Runs a generator that must fail under `memory_limit`; returns the host and the message.
fn run_out_of_memory(name: &str, source: &str, memory_limit: usize) -> (Host, String) {
    let path = write_generator(name, source);
    let mut h = Host::new(HostConfig {
        memory_limit,
        echo_output: false,
        ..HostConfig::default()
    })
    .unwrap();
    let root = h.with_dom_ref(|d| d.root_ref());
    let g = h.load_generator_file(&path, root).unwrap();
    let msg = script_message(h.run_generator(&g, &RunInputs::default()).err().unwrap());
    (h, msg)
}

#[test]
fn memory_bomb_fails_cleanly_and_vm_is_reusable() {
    let (mut h, msg) = run_out_of_memory(
        "bomb",
        "return { OnGenerate = function() local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 1024) .. i end end }",
        64 << 20,
    );
    assert!(msg.contains("memory"), "{msg}");
    let root = h.with_dom_ref(|d| d.root_ref());
    let ok = h
        .load_generator_file(
            &write_generator(
                "after",
                "return { OnGenerate = function() local t = table.create(1000, 1) end }",
            ),
            root,
        )
        .unwrap();
    h.run_generator(&ok, &RunInputs::default()).unwrap();
}

/// Tagged datatypes are Luau GC objects made by raw C constructors; the memory limit (checked
/// at the GC's steps, see the watchdog's fast interrupt) must see them too.
#[test]
fn memory_limit_counts_datatype_values() {
    let (_, msg) = run_out_of_memory(
        "cframes",
        "return { OnGenerate = function() local t = {} for i = 1, 1e9 do t[i] = CFrame.new(i, 0, 0) * CFrame.Angles(0, i, 0) end end }",
        32 << 20,
    );
    assert!(msg.contains("memory"), "{msg}");
}

#[test]
fn instance_limit_is_enforced() {
    let path = write_generator(
        "flood",
        "return { OnGenerate = function(p, t) for i = 1, 1e6 do Instance.new('Part', t) end end }",
    );
    let mut h = Host::new(HostConfig {
        instance_limit: Some(1000),
        echo_output: false,
        ..HostConfig::default()
    })
    .unwrap();
    let root = h.with_dom_ref(|d| d.root_ref());
    let g = h.load_generator_file(&path, root).unwrap();
    let msg = script_message(h.run_generator(&g, &RunInputs::default()).err().unwrap());
    assert!(msg.contains("instance limit exceeded"), "{msg}");
}

#[test]
fn leaked_threads_are_ended() {
    let src = r#"return { OnGenerate = function(params, target)
        task.spawn(function() while true do task.wait(1) Instance.new("Part", target) end end)
        task.delay(100, function() Instance.new("Part", target) end)
    end }"#;
    let (h, out) = run(src, "leak", RunInputs::default(), 5000).unwrap();
    assert_eq!(out.leaked_threads, 2);
    let n = h.with_dom_ref(|d| d.get_by_ref(out.container).unwrap().children().len());
    assert_eq!(n, 0);
}

#[test]
fn sandbox_has_no_io_os_or_loaders() {
    let src = r#"return { OnGenerate = function()
        assert(io == nil, "io")
        assert(os.execute == nil and os.getenv == nil and os.remove == nil, "os")
        -- As in a Roblox game with LoadStringEnabled off: loadstring compiles nothing.
        local f, why = loadstring("return 1")
        assert(f == nil and why == "loadstring() is not available", "loadstring")
        assert(dofile == nil and loadfile == nil and require ~= nil, "loaders")
        assert(not pcall(function() string.x = 1 end), "stdlib is read-only")
    end }"#;
    run(src, "sandbox", RunInputs::default(), 5000).unwrap();
}

#[test]
fn relative_require_and_escape_refusal() {
    let dir = procmodel_testkit::scratch("req");
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(
        dir.join("lib/util.luau"),
        "return { double = function(x) return x * 2 end }",
    )
    .unwrap();
    let gen_path = dir.join("gen.luau");
    std::fs::write(
        &gen_path,
        r#"local util = require("./lib/util")
        return { OnGenerate = function()
            assert(util.double(21) == 42)
            assert(require("./lib/util") == util, "cached")
            local ok, err = pcall(require, "../../etc/passwd")
            assert(not ok)
        end }"#,
    )
    .unwrap();
    let mut h = host(5000);
    let root = h.with_dom_ref(|d| d.root_ref());
    let g = h.load_generator_file(&gen_path, root).unwrap();
    h.run_generator(&g, &RunInputs::default()).unwrap();
}

#[test]
fn every_creatable_class_can_be_created_and_read() {
    use rbx_reflection::ClassTag;
    let db = rbx_reflection_database::get_bundled();
    let mut names: Vec<&str> = db
        .classes
        .values()
        .filter(|c| {
            !c.tags.contains(&ClassTag::NotCreatable) && !c.tags.contains(&ClassTag::Service)
        })
        .map(|c| c.name)
        .collect();
    names.sort_unstable();
    assert!(names.len() > 300, "{}", names.len());
    let h = host(10_000);
    let f: mlua::Function = h
        .lua()
        .load(
            r#"local classes = ...
            local n = 0
            for _, name in classes do
                local inst = Instance.new(name)
                -- Named after the class, but for the names Roblox gives value objects and
                -- classic clothing (core/default_names.luau).
                local expected = if inst:IsA("ValueBase") then "Value"
                    elseif name == "ShirtGraphic" then "Shirt Graphic"
                    elseif name == "Shirt" or name == "Pants" then "Clothing"
                    else name
                assert(inst.ClassName == name and inst.Name == expected, name)
                assert(inst:IsA("Instance"))
                n += 1
            end
            return n"#,
        )
        .into_function()
        .unwrap();
    let list = h.lua().create_sequence_from(names.iter().copied()).unwrap();
    let n: usize = f.call(list).unwrap();
    assert_eq!(n, names.len());
}

#[test]
fn instance_identity_survives_garbage_collection() {
    let h = host(5000);
    let make: mlua::Function = h
        .lua()
        .load(
            r#"local box = Instance.new("Folder")
            for _ = 1, 200 do Instance.new("Part", box) end
            local keyed = { [box:GetChildren()[1]] = true }
            return box, keyed"#,
        )
        .into_function()
        .unwrap();
    let (bx, keyed): (mlua::Value, mlua::Table) = make.call(()).unwrap();
    // Userdata of the other 199 parts are unreferenced now and may be collected.
    h.lua().gc_collect().unwrap();
    h.lua().gc_collect().unwrap();
    let check: mlua::Function = h
        .lua()
        .load(
            r#"local box, keyed = ...
            local kids = box:GetChildren()
            return keyed[kids[1]] == true and kids[200] == box:GetChildren()[200] and #kids == 200"#,
        )
        .into_function()
        .unwrap();
    assert!(check.call::<bool>((bx, keyed)).unwrap());
}

#[test]
fn print_formats_values_as_roblox_does() {
    let src = r#"return { OnGenerate = function(params, target)
        print(Vector3.new(1, 2.5, 3), target, CFrame.new(1, 2, 3).Position, true, nil, 7)
        warn("careful", Color3.new(1, 0, 0))
    end }"#;
    let (h, _) = run(src, "Printer", RunInputs::default(), 2000).unwrap();
    let log: Vec<String> = h.take_log().into_iter().map(|l| l.message).collect();
    assert_eq!(
        log,
        [
            "[Printer] 1, 2.5, 3 GeneratedFolder 1, 2, 3 true nil 7",
            "[Printer] careful 1, 0, 0",
        ]
    );
}

#[test]
fn iterating_an_instance_keyed_table_is_the_same_every_run() {
    // Instance handles are assigned in a deterministic order, so a generator that iterates a
    // table keyed by instances builds the same thing every run (same inputs, same bytes).
    let src = r#"return { OnGenerate = function(params, target)
        local byPart = {}
        for i = 1, 40 do
            local p = Instance.new("Part")
            p.Name = "P" .. i
            byPart[p] = i
        end
        local order = {}
        for p, i in pairs(byPart) do
            table.insert(order, p.Name)
        end
        local out = Instance.new("StringValue")
        out.Name = "Order"
        out.Value = table.concat(order, ",")
        out.Parent = target
    end }"#;
    let order = || {
        let (h, out) = run(src, "KeyOrder", RunInputs::default(), 2000).unwrap();
        h.with_dom_ref(|d| {
            let folder = d.get_by_ref(out.container).unwrap();
            let v = d.get_by_ref(folder.children()[0]).unwrap();
            format!("{:?}", v.properties.get(&"Value".into()))
        })
    };
    let first = order();
    assert!(first.contains("P1") && first.contains("P40"), "{first}");
    for _ in 0..3 {
        assert_eq!(order(), first);
    }
}

/// Every example generator builds exactly the same tree with Luau's native code generator as
/// with the interpreter (a machine without codegen support runs the interpreter, and the same
/// inputs must give the same bytes everywhere).
#[test]
fn native_code_and_interpreter_build_the_same_examples() {
    fn dump(dom: &rbx_dom_weak::WeakDom, r: rbx_types::Ref, depth: usize, out: &mut String) {
        let inst = dom.get_by_ref(r).expect("instance");
        let mut props: Vec<_> = inst.properties.iter().collect();
        props.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
        out.push_str(&format!("{:depth$}{} {:?}\n", "", inst.class, inst.name));
        for (k, v) in props {
            match v {
                // Referents are random per DOM; what they point at is dumped as the tree.
                Variant::Ref(_) => out.push_str(&format!("{:depth$}  {k} = <ref>\n", "")),
                v => out.push_str(&format!("{:depth$}  {k} = {v:?}\n", "")),
            }
        }
        for &c in inst.children() {
            dump(dom, c, depth + 1, out);
        }
    }
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut names: Vec<_> = std::fs::read_dir(&examples)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "luau"))
        .collect();
    names.sort();
    assert!(names.len() >= 5, "examples found: {names:?}");
    for path in names {
        let build = |native_code: bool| {
            let mut h = Host::new(HostConfig {
                echo_output: false,
                native_code,
                ..HostConfig::default()
            })
            .unwrap();
            let root = h.with_dom_ref(|d| d.root_ref());
            let g = h.load_generator_file(&path, root).unwrap();
            let inputs = RunInputs {
                size: glam::Vec3::new(24.0, 20.0, 24.0),
                // Unsandboxed modules have every capability (CastleWall cuts solids).
                allow_csg: true,
                ..RunInputs::default()
            };
            let out = h.run_generator(&g, &inputs).unwrap();
            let mut text = String::new();
            h.with_dom_ref(|d| dump(d, out.container, 0, &mut text));
            text
        };
        let (native, interpreted) = (build(true), build(false));
        assert!(native.lines().count() > 10, "{}: {native}", path.display());
        assert!(
            native == interpreted,
            "{} differs between native code and the interpreter",
            path.display()
        );
    }
}

/// The engine's ProceduralModel rules, as it installs them.
const PROCEDURAL_MODEL: procmodel_luau::ManagedClass = procmodel_luau::ManagedClass {
    class: "ProceduralModel",
    flag: "Dirty",
    inputs: &["Size", "Generator"],
    code: Some("Generator"),
    force_method: "ForceGeneration",
    wait_method: "WaitForGenerationAsync",
};

#[test]
fn the_host_knows_when_its_dom_cannot_hold_managed_instances() {
    let h = host(2000);
    h.manage(PROCEDURAL_MODEL).unwrap();
    assert!(!h.may_have_managed(), "a new DataModel has none");
    let parts = h
        .lua()
        .load("for i = 1, 3 do Instance.new('Part', workspace) end local f = workspace:Clone()")
        .exec();
    parts.unwrap();
    assert!(
        !h.may_have_managed(),
        "parts and clones of them are not models"
    );
    let m: mlua::Value = h
        .lua()
        .load("return Instance.new('ProceduralModel')")
        .eval()
        .unwrap();
    assert!(
        !h.may_have_managed(),
        "an unparented model is not in the scene"
    );
    h.lua()
        .load("local m = ... m.Parent = workspace")
        .call::<()>(m)
        .unwrap();
    assert!(h.may_have_managed(), "parenting one puts it there");

    let dom = h.take_dom();
    assert!(!h.may_have_managed(), "take_dom leaves an empty DataModel");
    h.replace_dom(dom);
    assert!(h.may_have_managed(), "a DOM given to the host is scanned");

    let h = host(2000);
    h.manage(PROCEDURAL_MODEL).unwrap();
    h.with_dom_mut(|_| ());
    assert!(h.may_have_managed(), "an outside mutation may add anything");
}

#[test]
fn the_host_knows_no_managed_class_by_name() {
    // Without rules installed, a ProceduralModel is a plain instance: no flag, no methods.
    let h = host(2000);
    let dirty: mlua::Value = h
        .lua()
        .load("local m = Instance.new('ProceduralModel', workspace) m.Size = Vector3.new(1, 2, 3) return m")
        .eval()
        .unwrap();
    let r = h.instance_ref(&dirty).unwrap();
    assert!(h.with_dom_ref(|d| {
        !d.get_by_ref(r)
            .unwrap()
            .properties
            .contains_key(&"Dirty".into())
    }));
    assert!(!h.may_have_managed());
    let err = h
        .lua()
        .load("workspace.ProceduralModel:ForceGeneration()")
        .exec()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "ProceduralModel:ForceGeneration is a Roblox method that procmodel does not implement"
        ),
        "{err}"
    );

    // Any class can be managed: here Parts, flagged Stale by a Size write or an attribute.
    let h = host(2000);
    h.manage(procmodel_luau::ManagedClass {
        class: "Part",
        flag: "Stale",
        inputs: &["Size"],
        code: None,
        force_method: "Rebuild",
        wait_method: "WaitUntilBuilt",
    })
    .unwrap();
    let p: mlua::Value = h
        .lua()
        .load("return Instance.new('Part', workspace)")
        .eval()
        .unwrap();
    let r = h.instance_ref(&p).unwrap();
    let stale = |h: &Host| {
        h.with_dom_ref(|d| {
            d.get_by_ref(r).unwrap().properties.get(&"Stale".into()) == Some(&Variant::Bool(true))
        })
    };
    let clear = |h: &Host| {
        h.with_dom_mut(|d| {
            d.get_by_ref_mut(r)
                .unwrap()
                .properties
                .insert("Stale".into(), Variant::Bool(false));
        })
    };
    assert!(stale(&h), "a new instance is flagged");
    clear(&h);
    let exec = |code: &str| h.lua().load(code).call::<mlua::Value>(p.clone()).unwrap();
    exec("local p = ... p.Color = Color3.new(1, 0, 0)");
    assert!(
        !stale(&h),
        "a write to a property that is no input leaves it"
    );
    exec("local p = ... p.Size = Vector3.new(4, 4, 4)");
    assert!(stale(&h), "an input write flags it");
    clear(&h);
    exec("local p = ... p:SetAttribute('Height', 3)");
    assert!(stale(&h), "an attribute write flags it");
    clear(&h);
    assert_eq!(
        exec("local p = ... return p:Rebuild()"),
        mlua::Value::Boolean(true)
    );
    assert!(stale(&h), "the force method flags it");
    assert_eq!(h.take_forced(), vec![r], "and queues it");
    let err = h
        .lua()
        .load("local rebuild = workspace.Part.Rebuild rebuild(Instance.new('Folder', workspace))")
        .exec()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Rebuild is not a valid member of Folder"),
        "{err}"
    );
    let err = h
        .lua()
        .load("Instance.new('Part'):WaitUntilBuilt()")
        .exec()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("WaitUntilBuilt: Part is not in the scene"),
        "{err}"
    );
}

#[test]
fn reading_an_attribute_from_params_itself_warns_once_and_gives_nil() {
    let src = r#"
        return {
            Attributes = { Steps = 5 },
            OnGenerate = function(params, target)
                target:SetAttribute("Direct", params.Steps == nil)
                target:SetAttribute("Again", params.Steps == nil)
                target:SetAttribute("Other", params.Nothing == nil)
                target:SetAttribute("Right", params.Attributes.Steps)
            end,
        }
    "#;
    let (h, out) = run(src, "params_slip", RunInputs::default(), 2000).unwrap();
    let attrs = h.with_dom_ref(|d| {
        match d
            .get_by_ref(out.container)
            .unwrap()
            .properties
            .get(&"Attributes".into())
        {
            Some(Variant::Attributes(a)) => a.clone(),
            other => panic!("{other:?}"),
        }
    });
    assert_eq!(
        attrs.get("Direct"),
        Some(&Variant::Bool(true)),
        "nil, as in Roblox"
    );
    assert_eq!(attrs.get("Again"), Some(&Variant::Bool(true)));
    assert_eq!(attrs.get("Other"), Some(&Variant::Bool(true)));
    assert_eq!(attrs.get("Right"), Some(&Variant::Float64(5.0)));
    let log: Vec<String> = h.take_log().into_iter().map(|l| l.message).collect();
    assert_eq!(
        log,
        vec![
            "params.Steps is nil: a generator reads its attributes from params.Attributes (params.Attributes.Steps)"
                .to_owned()
        ],
        "one warning per run, none for a name that is no attribute"
    );
}

/// `function M:OnGenerate(params, target)` (a colon) shifts the arguments: self gets params,
/// params the container and target nil, and the run went on with no word of why. A warning
/// names the slip; a method declared with a colon that takes only the container (`self` is
/// then params, which works) and a dot function do not get it.
#[test]
fn on_generate_declared_with_a_colon_is_named() {
    let slip = r#"
        local M = { Attributes = { Count = 2 } }
        function M:OnGenerate(params, target)
            Instance.new("Part", target)
        end
        return M
    "#;
    let (h, _) = run(slip, "colon", RunInputs::default(), 2000).unwrap();
    let log: Vec<String> = h.take_log().into_iter().map(|l| l.message).collect();
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(
        log[0].starts_with("OnGenerate declares 3 parameters but is called with two")
            && log[0].contains("declare it with a dot"),
        "{log:?}"
    );
    for fine in [
        "local M = {} function M:OnGenerate(target) Instance.new('Part', target) end return M",
        "return { OnGenerate = function(params, target) Instance.new('Part', target) end }",
        "return { OnGenerate = function(...) end }",
    ] {
        let (h, _) = run(fine, "fine", RunInputs::default(), 2000).unwrap();
        assert!(h.take_log().is_empty(), "{fine}");
    }
}

/// A worker VM runs its models over a new copy of the scene every step, while a module runs
/// once per VM: what the module made when it loaded must outlive the copy it was made in. A
/// template part it keeps outside the scene, and a service it asked for that the scene did
/// not have, failed the next step with "instance no longer exists" (an `--jobs 2` flake).
#[test]
fn a_module_s_own_instances_and_services_outlive_a_new_copy_of_the_scene() {
    let src = r#"
local CollectionService = game:GetService("CollectionService")
local template = Instance.new("Part")
template.Name = "Template"
template.Size = Vector3.new(2, 3, 4)
return { OnGenerate = function(params, target)
    local p = template:Clone()
    CollectionService:AddTag(p, "Made")
    p.Parent = target
end }
"#;
    let path = write_generator("outlive", src);
    let mut h = host(5000);
    let root = h.with_dom_ref(|d| d.root_ref());
    let g = h.load_generator_file(&path, root).unwrap();
    h.run_generator(&g, &RunInputs::default()).unwrap();
    // The next step's copy: the scene as the engine has it, without the service this VM made.
    let copy = h.with_dom_ref(|d| {
        rbx_dom_weak::WeakDom::new(procmodel_dom::copy_with_referents(
            d,
            d.root_ref(),
            &mut |_, child| child.class != "CollectionService",
            &mut |_, _| true,
        ))
    });
    h.replace_dom(copy);
    let out = h.run_generator(&g, &RunInputs::default()).unwrap();
    let made = h.with_dom_ref(|d| {
        let part = d.get_by_ref(out.container).unwrap().children()[0];
        let p = d.get_by_ref(part).unwrap();
        (p.name.to_string(), procmodel_dom::part_size(p))
    });
    assert_eq!(made.0, "Template");
    assert_eq!(made.1, glam::Vec3::new(2.0, 3.0, 4.0));
    // With the service back in the copy (the engine made one meanwhile), its handle leads
    // there.
    let copy = h.with_dom_ref(|d| {
        let mut copy = rbx_dom_weak::WeakDom::new(procmodel_dom::copy_with_referents(
            d,
            d.root_ref(),
            &mut |_, child| child.class != "CollectionService",
            &mut |_, _| true,
        ));
        let root = copy.root_ref();
        copy.insert(
            root,
            rbx_dom_weak::InstanceBuilder::new("CollectionService").with_name("CollectionService"),
        );
        copy
    });
    h.replace_dom(copy);
    h.run_generator(&g, &RunInputs::default()).unwrap();
    let services = h.with_dom_ref(|d| {
        d.root()
            .children()
            .iter()
            .filter(|&&c| {
                d.get_by_ref(c)
                    .is_some_and(|i| i.class == "CollectionService")
            })
            .count()
    });
    assert_eq!(services, 1);
}

/// The captured output is bounded: a front end that runs for hours (the studio, the MCP
/// server) kept every line ever printed. The newest lines are kept, with a first line
/// saying how many earlier ones were not, and a huge line is cut.
#[test]
fn captured_output_keeps_the_newest_lines_and_cuts_huge_ones() {
    let src = r#"return { OnGenerate = function(params, target)
        for i = 1, 10005 do print(i) end
        print(string.rep("x", 100000))
    end }"#;
    let (h, _) = run(src, "Loud", RunInputs::default(), 2000).unwrap();
    let log = h.take_log();
    assert_eq!(log.len(), 10_001);
    assert_eq!(log[0].level, procmodel_luau::LogLevel::Warn);
    assert!(
        log[0]
            .message
            .starts_with("6 earlier lines of output were not kept"),
        "{}",
        log[0].message
    );
    assert_eq!(log[1].message, "[Loud] 7");
    let last = &log[10_000].message;
    assert!(
        last.len() < 5000 && last.ends_with("more bytes)"),
        "{}",
        &last[last.len() - 40..]
    );
    assert!(h.take_log().is_empty(), "taken once");
}

/// A render step a generator binds is a PreRender connection of its run: it ends with the
/// run, as the run's other connections do. (Bindings were kept per VM, so a later run on
/// the same VM called an earlier generator's function every frame.)
#[test]
fn a_generators_render_step_bindings_end_with_its_run() {
    let src = r#"
        return {
            Attributes = { Tag = "first" },
            OnGenerate = function(params, target)
                local rs = game:GetService("RunService")
                local tag = params.Attributes.Tag
                rs:BindToRenderStep("step", 1, function() print("step " .. tag) end)
                rs.PreRender:Wait()
                rs.PreRender:Wait()
            end,
        }
    "#;
    let path = write_generator("render_steps", src);
    let mut h = host(5000);
    let root = h.with_dom_ref(|d| d.root_ref());
    let g = h.load_generator_file(&path, root).unwrap();
    for tag in ["first", "second"] {
        let inputs = RunInputs {
            attributes: vec![("Tag".into(), Variant::String(tag.into()))],
            ..Default::default()
        };
        h.run_generator(&g, &inputs).unwrap();
    }
    let log: Vec<String> = h.take_log().into_iter().map(|l| l.message).collect();
    let steps = |tag: &str| {
        log.iter()
            .filter(|l| l.ends_with(&format!("step {tag}")))
            .count()
    };
    assert!(steps("first") >= 1, "{log:?}");
    assert!(steps("second") >= 1, "{log:?}");
    assert_eq!(steps("first"), steps("second"), "{log:?}");
}
