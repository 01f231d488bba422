//! Rojo projects built into DOMs: file conventions, property values, meta and model files,
//! Ref links, nesting, ignore globs, and the errors that name the file and the field.

use procmodel_rojo::{Loaded, ModelFormat, RojoError, load};
use rbx_dom_weak::{InstanceBuilder, WeakDom, ustr};
use rbx_types::{Ref, Variant};
use std::path::{Path, PathBuf};

/// A fresh folder holding `files` (path, contents).
fn project(test: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = procmodel_testkit::scratch(&format!("rojo-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn reader(_path: &Path, bytes: Vec<u8>, format: ModelFormat) -> Result<WeakDom, String> {
    match format {
        ModelFormat::Xml => {
            rbx_xml::from_reader_default(bytes.as_slice()).map_err(|e| e.to_string())
        }
        ModelFormat::Binary => rbx_binary::from_reader(bytes.as_slice()).map_err(|e| e.to_string()),
    }
}

fn build(dir: &Path) -> Result<Loaded, RojoError> {
    load(dir, &reader)
}

fn built(dir: &Path) -> WeakDom {
    match build(dir) {
        Ok(l) => l.dom,
        Err(e) => panic!("{e}"),
    }
}

/// The error of a project that must not build, as text.
fn error(dir: &Path) -> String {
    match build(dir) {
        Ok(_) => panic!("the project built"),
        Err(e) => e.to_string(),
    }
}

/// The instance at a dotted path below the root.
fn at(dom: &WeakDom, path: &str) -> Ref {
    let mut cur = dom.root_ref();
    for name in path.split('.') {
        let inst = dom.get_by_ref(cur).unwrap();
        cur = *inst
            .children()
            .iter()
            .find(|&&c| dom.get_by_ref(c).unwrap().name == name)
            .unwrap_or_else(|| panic!("no {name} in {path}"));
    }
    cur
}

/// "Name:Class" of each child of `path`, in order.
fn children(dom: &WeakDom, path: &str) -> Vec<String> {
    let r = if path.is_empty() {
        dom.root_ref()
    } else {
        at(dom, path)
    };
    dom.get_by_ref(r)
        .unwrap()
        .children()
        .iter()
        .map(|&c| {
            let i = dom.get_by_ref(c).unwrap();
            format!("{}:{}", i.name, i.class)
        })
        .collect()
}

fn prop(dom: &WeakDom, path: &str, name: &str) -> Option<Variant> {
    dom.get_by_ref(at(dom, path))
        .unwrap()
        .properties
        .get(&ustr(name))
        .cloned()
}

fn source(dom: &WeakDom, path: &str) -> String {
    match prop(dom, path, "Source") {
        Some(Variant::String(s)) => s,
        other => panic!("{path} has no Source: {other:?}"),
    }
}

const PLACE: &str = r#"{ "name": "Place", "tree": { "$className": "DataModel",
    "ReplicatedStorage": { "$path": "src" } } }"#;

#[test]
fn r15_1_file_conventions() {
    let dir = project(
        "conventions",
        &[
            ("default.project.json", PLACE),
            ("src/Util.luau", "return 1"),
            ("src/Legacy.lua", "return 2"),
            ("src/Main.server.luau", "print('s')"),
            ("src/Hud.client.lua", "print('c')"),
            ("src/Data.json", r#"{"b": [1, 2], "a": "x"}"#),
            ("src/Conf.toml", "speed = 3\n"),
            ("src/Notes.txt", "hello"),
            ("src/Strings.csv", "Key,Source,fr\nHi,Hello,Salut\n"),
            ("src/README.md", "not synced"),
            ("src/Lib/init.luau", "return {}"),
            ("src/Lib/Child.luau", "return 3"),
            ("src/Runner/init.server.luau", "print('r')"),
            ("src/Empty/.keep", ""),
            (
                "src/Tool/init.meta.json",
                r#"{"className": "Tool", "properties": {"CanBeDropped": false}}"#,
            ),
            (
                "src/Tool/Handle.model.json",
                r#"{"className": "Part", "properties": {"Size": [1, 2, 3]}}"#,
            ),
        ],
    );
    let dom = built(&dir);
    assert_eq!(children(&dom, ""), ["ReplicatedStorage:ReplicatedStorage"]);
    assert_eq!(
        children(&dom, "ReplicatedStorage"),
        [
            "Conf:ModuleScript",
            "Data:ModuleScript",
            "Empty:Folder",
            "Hud:LocalScript",
            "Legacy:ModuleScript",
            "Lib:ModuleScript",
            "Main:Script",
            "Notes:StringValue",
            "Runner:Script",
            "Strings:LocalizationTable",
            "Tool:Tool",
            "Util:ModuleScript",
        ]
    );
    assert_eq!(source(&dom, "ReplicatedStorage.Util"), "return 1");
    assert_eq!(source(&dom, "ReplicatedStorage.Lib"), "return {}");
    assert_eq!(
        children(&dom, "ReplicatedStorage.Lib"),
        ["Child:ModuleScript"]
    );
    assert_eq!(
        source(&dom, "ReplicatedStorage.Data"),
        "return {\n\ta = \"x\",\n\tb = {1, 2},\n}\n"
    );
    assert_eq!(
        source(&dom, "ReplicatedStorage.Conf"),
        "return {\n\tspeed = 3,\n}\n"
    );
    assert_eq!(
        prop(&dom, "ReplicatedStorage.Notes", "Value"),
        Some(Variant::String("hello".into()))
    );
    assert_eq!(
        prop(&dom, "ReplicatedStorage.Strings", "Contents"),
        Some(Variant::String(
            r#"[{"key":"Hi","source":"Hello","values":{"fr":"Salut"}}]"#.into()
        ))
    );
    assert_eq!(
        prop(&dom, "ReplicatedStorage.Tool", "CanBeDropped"),
        Some(Variant::Bool(false))
    );
    assert_eq!(
        prop(&dom, "ReplicatedStorage.Tool.Handle", "Size"),
        Some(Variant::Vector3(rbx_types::Vector3::new(1.0, 2.0, 3.0)))
    );
}

#[test]
fn r15_1_project_nodes_properties_and_attributes() {
    let dir = project(
        "props",
        &[(
            "game.project.json",
            r#"{ "name": "P", "tree": { "$className": "DataModel",
                "Workspace": {
                    "$properties": { "Gravity": 50 },
                    "Block": { "$className": "Part",
                        "$properties": {
                            "Size": [4, 1, 2], "Anchored": true, "Material": "Neon",
                            "Color": [1, 0, 0], "Transparency": {"Float32": 0.5},
                            "Tags": ["a", "b"], "Attributes": {"Old": 1},
                            "CFrame": [1, 2, 3, 1, 0, 0, 0, 1, 0, 0, 0, 1]
                        },
                        "$attributes": { "Speed": 2.5, "Label": "x", "On": true,
                            "Where": {"Vector3": [1, 2, 3]} }
                    }
                } } }"#,
        )],
    );
    let dom = built(&dir.join("game.project.json"));
    assert_eq!(
        prop(&dom, "Workspace", "Gravity"),
        Some(Variant::Float32(50.0))
    );
    let p = |n| prop(&dom, "Workspace.Block", n);
    assert_eq!(
        p("Size"),
        Some(Variant::Vector3(rbx_types::Vector3::new(4.0, 1.0, 2.0)))
    );
    assert_eq!(p("Anchored"), Some(Variant::Bool(true)));
    let neon = procmodel_dom::db().enums["Material"].items["Neon"];
    assert_eq!(
        p("Material"),
        Some(Variant::Enum(rbx_types::Enum::from_u32(neon)))
    );
    assert_eq!(
        p("Color"),
        Some(Variant::Color3(rbx_types::Color3::new(1.0, 0.0, 0.0)))
    );
    assert_eq!(p("Transparency"), Some(Variant::Float32(0.5)));
    let Some(Variant::CFrame(cf)) = p("CFrame") else {
        panic!("no CFrame")
    };
    assert_eq!(cf.position, rbx_types::Vector3::new(1.0, 2.0, 3.0));
    let Some(Variant::Attributes(a)) = p("Attributes") else {
        panic!("no attributes")
    };
    let names: Vec<&str> = a.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["Label", "Old", "On", "Speed", "Where"]);
    assert_eq!(a.get("Speed"), Some(&Variant::Float64(2.5)));
    assert_eq!(
        a.get("Where"),
        Some(&Variant::Vector3(rbx_types::Vector3::new(1.0, 2.0, 3.0)))
    );
}

#[test]
fn r15_1_procedural_model_links_to_its_generator() {
    let dir = project(
        "refs",
        &[
            (
                "default.project.json",
                r#"{ "name": "P", "tree": { "$className": "DataModel",
                    "ServerStorage": { "Gens": { "$path": "gens" } },
                    "Workspace": { "Stairs": { "$path": "Stairs.model.json" } } } }"#,
            ),
            ("gens/Spiral.luau", "return {}"),
            ("gens/Spiral.meta.json", r#"{"id": "spiral"}"#),
            (
                "Stairs.model.json",
                r#"{ "className": "ProceduralModel", "properties": { "Size": [12, 20, 12] },
                     "attributes": { "Rojo_Target_Generator": "spiral", "StepSize": 0.5 } }"#,
            ),
        ],
    );
    let dom = built(&dir);
    let module = at(&dom, "ServerStorage.Gens.Spiral");
    assert_eq!(
        prop(&dom, "Workspace.Stairs", "Generator"),
        Some(Variant::Ref(module))
    );
    assert_eq!(
        prop(&dom, "Workspace.Stairs", "Dirty"),
        Some(Variant::Bool(true))
    );
    let Some(Variant::Attributes(a)) = prop(&dom, "Workspace.Stairs", "Attributes") else {
        panic!("no attributes")
    };
    let names: Vec<&str> = a.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["StepSize"], "the link attribute is consumed");
    assert_eq!(prop(&dom, "ServerStorage.Gens.Spiral", "Attributes"), None);
}

#[test]
fn r15_1_model_files_and_their_ids() {
    let mut model = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = model.root_ref();
    let m = model.insert(
        root,
        InstanceBuilder::new("Model")
            .with_name("Saved")
            .with_property(
                "Attributes",
                Variant::Attributes(
                    [("Rojo_Id".to_owned(), Variant::String("m".into()))]
                        .into_iter()
                        .collect(),
                ),
            ),
    );
    let part = model.insert(m, InstanceBuilder::new("Part").with_name("P"));
    model
        .get_by_ref_mut(m)
        .unwrap()
        .properties
        .insert(ustr("PrimaryPart"), Variant::Ref(part));
    let mut bytes = Vec::new();
    rbx_binary::to_writer(&mut bytes, &model, &[m]).unwrap();
    let dir = project(
        "models",
        &[
            ("default.project.json", PLACE),
            (
                "src/Pointer.model.json",
                r#"{"className": "ObjectValue", "attributes": {"Rojo_Target_Value": "m"}}"#,
            ),
        ],
    );
    std::fs::write(dir.join("src/Thing.rbxm"), &bytes).unwrap();
    let mut two = WeakDom::new(InstanceBuilder::new("DataModel"));
    let (a, b) = (
        two.insert(two.root_ref(), InstanceBuilder::new("Part")),
        two.insert(two.root_ref(), InstanceBuilder::new("Part")),
    );
    let mut xml = Vec::new();
    rbx_xml::to_writer_default(&mut xml, &two, &[a, b]).unwrap();
    let dom = built(&dir);
    assert_eq!(
        children(&dom, "ReplicatedStorage"),
        ["Pointer:ObjectValue", "Thing:Model"]
    );
    let thing = at(&dom, "ReplicatedStorage.Thing");
    let p = at(&dom, "ReplicatedStorage.Thing.P");
    assert_eq!(
        prop(&dom, "ReplicatedStorage.Thing", "PrimaryPart"),
        Some(Variant::Ref(p))
    );
    assert_eq!(
        prop(&dom, "ReplicatedStorage.Pointer", "Value"),
        Some(Variant::Ref(thing))
    );
    assert_eq!(prop(&dom, "ReplicatedStorage.Thing", "Attributes"), None);

    std::fs::write(dir.join("src/Two.rbxmx"), &xml).unwrap();
    let e = error(&dir);
    assert!(
        e.contains("Two.rbxmx") && e.contains("exactly one top-level instance"),
        "{e}"
    );
}

#[test]
fn r15_1_nested_projects_and_ignore_globs() {
    let dir = project(
        "nested",
        &[
            (
                "default.project.json",
                r#"{ "name": "Top", "globIgnorePaths": ["**/*.spec.luau"],
                     "tree": { "$className": "Folder", "Lib": { "$path": "lib" },
                               "Other": { "$path": "other.project.json" } } }"#,
            ),
            (
                "lib/default.project.json",
                r#"{ "name": "Inner", "tree": { "$path": "src" } }"#,
            ),
            ("lib/src/A.luau", "return 1"),
            ("lib/src/A.spec.luau", "return 1"),
            (
                "other.project.json",
                r#"{ "name": "O", "tree": { "$className": "Configuration" } }"#,
            ),
        ],
    );
    let dom = built(&dir);
    assert_eq!(children(&dom, ""), ["Top:Folder"]);
    assert_eq!(children(&dom, "Top"), ["Lib:Folder", "Other:Configuration"]);
    // The outer project's globs apply inside the projects it includes too, as in Rojo (each
    // relative to the folder of the project that gives it).
    assert_eq!(children(&dom, "Top.Lib"), ["A:ModuleScript"]);

    let looped = project(
        "loop",
        &[(
            "default.project.json",
            r#"{ "name": "L", "tree": { "$className": "Folder", "Me": { "$path": "default.project.json" } } }"#,
        )],
    );
    assert!(error(&looped).contains("the project includes itself"));
}

#[test]
fn r15_1_same_files_same_tree() {
    let dir = project(
        "determinism",
        &[
            ("default.project.json", PLACE),
            ("src/b.luau", "return 1"),
            ("src/a.luau", "return 2"),
            ("src/c/d.txt", "x"),
        ],
    );
    let encode = |dom: &WeakDom| {
        let mut out = Vec::new();
        rbx_xml::to_writer_default(&mut out, dom, dom.root().children()).unwrap();
        out
    };
    assert_eq!(encode(&built(&dir)), encode(&built(&dir)));
    assert_eq!(
        children(&built(&dir), "ReplicatedStorage"),
        ["a:ModuleScript", "b:ModuleScript", "c:Folder"]
    );
}

/// Each case: files, then text the error must contain (file name and field).
#[test]
fn r15_1_errors_name_the_file_and_the_field() {
    let cases: &[(&[(&str, &str)], &[&str])] = &[
        (
            &[("default.project.json", "{ \"name\": ")],
            &["default.project.json", "not valid JSON"],
        ),
        (
            &[(
                "default.project.json",
                r#"{"name": 5, "tree": {"$className": "Folder"}}"#,
            )],
            &["default.project.json: name: must be a string"],
        ),
        (
            &[(
                "default.project.json",
                r#"{"name": "x", "tree": {"$className": "Folder"}, "port": 1}"#,
            )],
            &["default.project.json: port: unknown project field"],
        ),
        (
            &[(
                "default.project.json",
                r#"{"name": "x", "tree": {"$classname": "Folder"}}"#,
            )],
            &["default.project.json: tree.$classname: unknown field"],
        ),
        (
            &[(
                "default.project.json",
                r#"{"name": "x", "tree": {"$className": "DataModel", "Stuff": {}}}"#,
            )],
            &["tree.Stuff: $className is required"],
        ),
        (
            &[(
                "default.project.json",
                r#"{"name": "x", "tree": {"$path": "missing"}}"#,
            )],
            &["tree.$path: no file or folder"],
        ),
        (
            &[(
                "default.project.json",
                r#"{"name": "x", "tree": {"$className": "Part", "$properties": {"Size": [1, 2]}}}"#,
            )],
            &["tree.$properties.Size: Part.Size is Vector3: expected 3 numbers, got 2"],
        ),
        (
            &[(
                "default.project.json",
                r#"{"name": "x", "tree": {"$className": "Part", "$properties": {"Material": "Lava"}}}"#,
            )],
            &[
                "tree.$properties.Material",
                "Enum.Material has no item 'Lava'",
            ],
        ),
        (
            &[(
                "default.project.json",
                r#"{"name": "x", "tree": {"$className": "Part", "$properties": {"Sise": [1, 2, 3]}}}"#,
            )],
            &["tree.$properties.Sise: Part has no property 'Sise'"],
        ),
        (
            &[(
                "default.project.json",
                r#"{"name": "x", "tree": {"$className": "Part", "$attributes": {"V": [1, 2, 3]}}}"#,
            )],
            &["tree.$attributes: attribute 'V': an array is ambiguous"],
        ),
        (
            &[
                ("default.project.json", PLACE),
                ("src/a.meta.json", r#"{"propertes": {}}"#),
                ("src/a.luau", ""),
            ],
            &["a.meta.json: propertes: unknown meta field"],
        ),
        (
            &[
                ("default.project.json", PLACE),
                ("src/a.meta.json", r#"{"className": "Tool"}"#),
                ("src/a.luau", ""),
            ],
            &["a.meta.json: className: only an init.meta.json"],
        ),
        (
            &[
                ("default.project.json", PLACE),
                (
                    "src/m.model.json",
                    r#"{"className": "Model", "children": [{"className": "Part"}]}"#,
                ),
            ],
            &["m.model.json: children[0].name: missing"],
        ),
        (
            &[
                ("default.project.json", PLACE),
                ("src/m.model.json", r#"{"className": "Model", "Colour": 1}"#),
            ],
            &["m.model.json: Colour: unknown JSON model field"],
        ),
        (
            &[
                ("default.project.json", PLACE),
                ("src/d/init.luau", ""),
                ("src/d/init.server.luau", ""),
            ],
            &["one init file", "init.luau, init.server.luau"],
        ),
        (
            &[
                ("default.project.json", PLACE),
                (
                    "src/m.model.json",
                    r#"{"className": "ObjectValue", "attributes": {"Rojo_Target_Value": "nope"}}"#,
                ),
            ],
            &["m.model.json: Rojo_Target_Value: no instance has the id 'nope'"],
        ),
        (
            &[
                ("default.project.json", PLACE),
                (
                    "src/m.model.json",
                    r#"{"className": "Part", "id": "p", "attributes": {"Rojo_Target_Size": "p"}}"#,
                ),
            ],
            &["m.model.json: Rojo_Target_Size: Part.Size is not a Ref property"],
        ),
        (
            &[
                ("default.project.json", PLACE),
                ("src/a.model.json", r#"{"className": "Part", "id": "same"}"#),
                ("src/b.model.json", r#"{"className": "Part", "id": "same"}"#),
            ],
            &["b.model.json: id: the id 'same' is already given"],
        ),
        (
            &[("default.project.json", PLACE), ("src/bad.json", "[1,")],
            &["bad.json: not valid JSON"],
        ),
        (
            &[
                ("default.project.json", PLACE),
                ("src/bad.csv", "Key,Source\n\"open\n"),
            ],
            &["bad.csv: row 2: a quoted field is never closed"],
        ),
    ];
    for (i, (files, expected)) in cases.iter().enumerate() {
        let dir = project(&format!("error{i}"), files);
        let e = error(&dir);
        for want in *expected {
            assert!(
                e.contains(want),
                "case {i}: '{e}' does not contain '{want}'"
            );
        }
    }
}

#[test]
fn a_module_folder_builds_outside_a_project_with_each_script_s_file() {
    let dir = project(
        "module-folder",
        &[
            ("Gen/init.luau", "return require(script.Util)"),
            ("Gen/Util.luau", "return 1"),
            ("Gen/Parts/init.lua", "return 2"),
            ("Gen/Parts/Size.luau", "return 3"),
            ("Gen/Data.json", "[1, 2]"),
            ("Gen/Empty/Readme.txt", "text"),
        ],
    );
    let loaded = procmodel_rojo::load_path(&dir.join("Gen"), &reader).unwrap();
    let top = loaded.dom.get_by_ref(loaded.top).unwrap();
    assert_eq!(
        (top.name.as_str(), top.class.as_str()),
        ("Gen", "ModuleScript")
    );
    let names: Vec<(String, String)> = loaded
        .scripts
        .iter()
        .map(|(r, file)| {
            let i = loaded.dom.get_by_ref(*r).unwrap();
            let rel = file.strip_prefix(dir.join("Gen")).unwrap();
            (i.name.clone(), rel.display().to_string())
        })
        .collect();
    // Every script made from a Luau file (breadth first), the file it came from; the JSON
    // module is built from data, not a script file, so it is not listed.
    assert_eq!(
        names,
        [
            ("Gen", "init.luau"),
            ("Parts", "Parts/init.lua"),
            ("Util", "Util.luau"),
            ("Size", "Parts/Size.luau"),
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    let data = loaded.dom.get_by_ref(top.children()[0]).unwrap();
    assert_eq!(data.name, "Data");
}

/// What Rojo 7.5–7.7 added: JSONC everywhere (comments, trailing commas, `.jsonc` names),
/// YAML data files, `.plugin.luau` scripts, a folder's `init.csv`, `syncRules`, negated
/// ignore globs, and the newer project fields.
#[test]
fn rojo_7_7_files_rules_and_fields() {
    let dir = project(
        "rojo77",
        &[
            (
                "default.project.jsonc",
                r#"{
  "$schema": "https://example.com/project.schema.json",
  "name": "Place", // the place
  /* fields for live sync only */
  "blockedPlaceIds": [1],
  "serveAllowedHosts": ["studio.local"],
  "syncbackRules": { "ignoreTrees": ["ServerStorage/Secrets"] },
  "globIgnorePaths": ["**/*.spec.luau", "!**/keep.spec.luau"],
  "syncRules": [
    { "pattern": "*.cfg", "use": "toml" },
    { "pattern": "*.server.luau", "exclude": "**/Real.server.luau", "use": "runContextServerScript", "suffix": ".server.luau" },
    { "pattern": "*.module.txt", "use": "moduleScript", "suffix": ".module.txt" },
    { "pattern": "*.modelfile", "use": "rbxmx" },
    { "pattern": "**/drafts/*", "use": "ignore" },
  ],
  "tree": { "$className": "DataModel", "ReplicatedStorage": { "$path": "src", }, },
}"#,
            ),
            (
                "src/Settings.yaml",
                "title: Tower\nfloors: 12\nsizes: [1, 2.5]\n3: three\nnested:\n  on: true\n",
            ),
            ("src/More.yml", "- a\n- ~\n"),
            ("src/Tool.plugin.luau", "print('plugin')"),
            ("src/Legacy.server.luau", "print('server')"),
            ("src/Real.server.luau", "print('real')"),
            ("src/Helper.module.txt", "return 42"),
            ("src/Balance.cfg", "speed = 3\n"),
            ("src/drafts/Old.luau", "return 0"),
            ("src/Loc/init.csv", "Key,Source,es\nHi,Hello,Hola\n"),
            ("src/Loc/Note.txt", "child of the table"),
            (
                "src/Thing.modelfile",
                r#"<roblox version="4"><Item class="Part" referent="RBX0"><Properties><string name="Name">Ignored</string></Properties></Item></roblox>"#,
            ),
            ("src/Gen.luau", "return {}"),
            (
                "src/Gen.meta.jsonc",
                "{ /* inputs */ \"attributes\": { \"Seed\": 4, }, }",
            ),
            (
                "src/Box/init.meta.jsonc",
                "{ \"className\": \"Configuration\", // a folder\n}",
            ),
            ("src/Box/a.spec.luau", "return 1"),
            ("src/Box/keep.spec.luau", "return 1"),
            (
                "src/Wall.model.jsonc",
                "{ \"className\": \"Part\", // a part\n \"properties\": { \"Anchored\": true, }, }",
            ),
            ("src/data.jsonc", "{ \"b\": 2, // two\n \"a\": 1, }"),
        ],
    );
    let dom = built(&dir);
    assert_eq!(
        children(&dom, "ReplicatedStorage"),
        [
            "Balance:ModuleScript",
            "Box:Configuration",
            "Gen:ModuleScript",
            "Helper:ModuleScript",
            "Legacy:Script",
            "Loc:LocalizationTable",
            "More:ModuleScript",
            "Real:Script",
            "Settings:ModuleScript",
            "Thing:Part",
            "Tool:Script",
            "Wall:Part",
            "data:ModuleScript",
            "drafts:Folder",
        ]
    );
    // A rule names files, never folders: the `ignore` rule leaves drafts empty.
    assert!(children(&dom, "ReplicatedStorage.drafts").is_empty());
    let rs = |name: &str| format!("ReplicatedStorage.{name}");
    assert_eq!(
        source(&dom, &rs("Settings")),
        "return {\n\ttitle = \"Tower\",\n\tfloors = 12,\n\tsizes = {1, 2.5},\n\t[3] = \"three\",\n\tnested = {\n\t\ton = true,\n\t},\n}\n"
    );
    assert_eq!(source(&dom, &rs("More")), "return {\"a\", nil}\n");
    assert_eq!(
        source(&dom, &rs("data")),
        "return {\n\ta = 1,\n\tb = 2,\n}\n"
    );
    assert_eq!(source(&dom, &rs("Balance")), "return {\n\tspeed = 3,\n}\n");
    assert_eq!(source(&dom, &rs("Helper")), "return 42");
    let run_context = |name: &str| match prop(&dom, &rs(name), "RunContext") {
        Some(Variant::Enum(e)) => Some(e.to_u32()),
        None => None,
        other => panic!("{other:?}"),
    };
    // Plugin = 3, Server = 1; a rule's exclude leaves Real to the default (legacy) rule.
    assert_eq!(run_context("Tool"), Some(3));
    assert_eq!(run_context("Legacy"), Some(1));
    assert_eq!(run_context("Real"), None);
    assert_eq!(children(&dom, &rs("Loc")), ["Note:StringValue"]);
    assert!(
        matches!(prop(&dom, &rs("Loc"), "Contents"), Some(Variant::String(s)) if s.contains("Hola"))
    );
    assert_eq!(children(&dom, &rs("Box")), ["keep.spec:ModuleScript"]);
    assert!(matches!(
        prop(&dom, &rs("Wall"), "Anchored"),
        Some(Variant::Bool(true))
    ));
    let gen_attrs = dom.get_by_ref(at(&dom, &rs("Gen"))).unwrap();
    assert!(format!("{:?}", gen_attrs.properties.get(&ustr("Attributes"))).contains("Seed"));

    // Mistakes in the new fields name the file and the field.
    let cases: &[(&str, &str)] = &[
        (
            r#"{"name": "P", "syncRules": [{"pattern": "*.x", "use": "lua"}], "tree": {"$path": "src"}}"#,
            "syncRules[0].use: unknown file type 'lua'",
        ),
        (
            r#"{"name": "P", "syncRules": [{"use": "text"}], "tree": {"$path": "src"}}"#,
            "syncRules[0].pattern: missing",
        ),
        (
            r#"{"name": "P", "syncRules": [{"pattern": "*.x", "use": "text", "extra": 1}], "tree": {"$path": "src"}}"#,
            "syncRules[0].extra: unknown sync rule field",
        ),
        (
            r#"{"name": "P", "blockedPlaceIds": ["a"], "tree": {"$path": "src"}}"#,
            "blockedPlaceIds: must be an array of place ids",
        ),
        (
            "{\"name\": \"P\", /* never closed\n \"tree\": {}}",
            "not valid JSON",
        ),
    ];
    for (i, (project_text, want)) in cases.iter().enumerate() {
        let dir = project(
            &format!("rojo77-error{i}"),
            &[
                ("default.project.jsonc", project_text),
                ("src/a.luau", "return 1"),
            ],
        );
        let e = error(&dir);
        assert!(
            e.contains(want),
            "case {i}: '{e}' does not contain '{want}'"
        );
    }
    let bad_yaml = project(
        "rojo77-yaml",
        &[
            ("default.project.json", PLACE),
            ("src/bad.yaml", "a: 1\n---\nb: 2\n"),
        ],
    );
    assert!(error(&bad_yaml).contains("bad.yaml: a YAML data file must hold one document"));
}

/// A project may leave out its `name` (Rojo 7.4.1): a folder's default project is named
/// after the folder, an included one after its key; Enum attributes (Rojo 7.5) are items the
/// reflection database knows.
#[test]
fn unnamed_projects_and_enum_attributes() {
    let dir = project(
        "unnamed",
        &[
            (
                "default.project.json",
                r#"{ "tree": { "$className": "Folder", "Inner": { "$path": "inner.project.json" },
                     "Part": { "$className": "Part", "$attributes": {
                         "Mat": { "EnumItem": { "type": "Material", "value": 256 } } } } } }"#,
            ),
            (
                "inner.project.json",
                r#"{ "tree": { "$className": "Configuration" } }"#,
            ),
        ],
    );
    let dom = built(&dir);
    assert_eq!(children(&dom, ""), ["rojo-unnamed:Folder"]);
    assert_eq!(
        children(&dom, "rojo-unnamed"),
        ["Inner:Configuration", "Part:Part"]
    );
    let part = dom.get_by_ref(at(&dom, "rojo-unnamed.Part")).unwrap();
    let Some(Variant::Attributes(attrs)) = part.properties.get(&ustr("Attributes")) else {
        panic!("no attributes");
    };
    assert!(
        matches!(attrs.get("Mat"), Some(Variant::EnumItem(e)) if e.ty == "Material" && e.value == 256)
    );
    for (i, (attr, want)) in [
        (
            r#"{"EnumItem": {"type": "Materials", "value": 256}}"#,
            "there is no enum named 'Materials'",
        ),
        (
            r#"{"EnumItem": {"type": "Material", "value": 7}}"#,
            "Enum.Material has no item with the value 7",
        ),
    ]
    .iter()
    .enumerate()
    {
        let text = format!(
            r#"{{ "tree": {{ "$className": "Part", "$attributes": {{ "Mat": {attr} }} }} }}"#
        );
        let dir = project(&format!("enum-attr{i}"), &[("default.project.json", &text)]);
        let e = error(&dir);
        assert!(e.contains(want), "{e}");
    }
}
