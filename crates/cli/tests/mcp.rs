//! `procmodel mcp` (issue 15 item 8): a scripted MCP client session over the binary's stdio —
//! initialize, list the tools, create a staircase generator, list models, set an attribute
//! and see the part count change, break the generator and read its error with the line,
//! undo, export a .glb and pack a package, both checked by decoding them; paths that leave
//! the root and malformed messages are refused without ending the server.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

mod common;
use common::*;

/// Stairs: one Part per step, `Steps` of them, coloured by `Tint`.
const STAIRS: &str = r#"return {
	Attributes = { Steps = 4, Tint = Color3.fromRGB(200, 120, 40) },
	OnGenerate = function(params, container)
		local a = params.Attributes
		for i = 1, a.Steps do
			local p = Instance.new("Part")
			p.Name = "Step" .. i
			p.Anchored = true
			p.Color = a.Tint
			p.Size = Vector3.new(4, 1, 2)
			p.CFrame = CFrame.new(0, i - 0.5, i * 2)
			p.Parent = container
		end
	end,
}
"#;

/// The same, failing on its line 4.
const BROKEN: &str = r#"return {
	Attributes = { Steps = 4, Tint = Color3.fromRGB(200, 120, 40) },
	OnGenerate = function(params, container)
		error("the stairs are broken")
	end,
}
"#;

/// A client session: the server's stdin, its stdout lines over a channel.
struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    next_id: u64,
}

/// How long one answer may take before the test gives up (a hung server fails the test
/// instead of hanging it; nothing here measures time).
const GIVE_UP: Duration = Duration::from_secs(300);

impl Client {
    fn start(root: &Path, scene: Option<&Path>) -> Client {
        let mut c: Command = bin();
        c.arg("mcp").arg("--root").arg(root);
        if let Some(s) = scene {
            c.arg(s);
        }
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Client {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    fn send_raw(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message with this id (other messages, e.g. notifications, are skipped).
    fn answer(&mut self, id: &Value) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(GIVE_UP)
                .expect("the server answers (it ended or hung)");
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout holds only JSON-RPC messages: {e}: {line}"));
            assert_eq!(v["jsonrpc"], "2.0", "{v}");
            if v.get("id") == Some(id) {
                return v;
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.answer(&id)
    }

    fn initialize(&mut self) -> Value {
        let r = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "procmodel-test", "version": "0" }
            }),
        );
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        r
    }

    /// Calls a tool; returns (isError, structured result).
    fn call(&mut self, tool: &str, arguments: Value) -> (bool, Value) {
        let r = self.request(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        );
        let result = &r["result"];
        assert!(result.is_object(), "{tool}: {r}");
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        let structured = result["structuredContent"].clone();
        assert_eq!(
            serde_json::from_str::<Value>(text).unwrap(),
            structured,
            "{tool}: the text is the structured result"
        );
        (result["isError"] == json!(true), structured)
    }

    /// Calls a tool that must succeed.
    fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let (is_error, v) = self.call(tool, arguments);
        assert!(!is_error, "{tool} failed: {v}");
        v
    }

    /// Calls a tool that must fail; its error message.
    fn err(&mut self, tool: &str, arguments: Value) -> String {
        let (is_error, v) = self.call(tool, arguments);
        assert!(is_error, "{tool} succeeded: {v}");
        v["error"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| v.to_string())
    }

    fn close(mut self) {
        drop(self.stdin);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the server ends cleanly at EOF: {status}");
    }
}

fn root(name: &str) -> std::path::PathBuf {
    let r = tmp(name);
    let _ = std::fs::remove_dir_all(&r);
    std::fs::create_dir_all(&r).unwrap();
    r
}

fn parts(model: &Value) -> u64 {
    model["instances"].as_u64().unwrap()
}

fn only_model(c: &mut Client) -> Value {
    let list = c.ok("list_models", json!({}));
    let models = list["models"].as_array().unwrap();
    assert_eq!(models.len(), 1, "{list}");
    models[0].clone()
}

#[test]
fn r15_8_scripted_session() {
    let dir = root("session");
    let mut c = Client::start(&dir, None);
    let init = c.initialize();
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "procmodel");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );

    let tools = c.request("tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for want in [
        "create_generator",
        "list_models",
        "get_attributes",
        "set_attributes",
        "set_size",
        "regenerate",
        "get_errors",
        "undo",
        "redo",
        "export",
        "pack",
        "save_scene",
    ] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    for t in tools["result"]["tools"].as_array().unwrap() {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert!(t["description"].as_str().is_some_and(|d| !d.is_empty()));
    }

    // A value that does not fit the new generator's attributes creates nothing.
    let e = c.err(
        "create_generator",
        json!({ "name": "Stairs", "source": STAIRS, "attributes": { "Steps": "many" } }),
    );
    assert!(
        e.contains("attribute Steps") && e.contains("a number"),
        "{e}"
    );
    let none = c.ok("list_models", json!({}));
    assert_eq!(none["models"], json!([]), "{none}");

    // Create: generated at once, four steps.
    let created = c.ok(
        "create_generator",
        json!({ "name": "Stairs", "source": STAIRS }),
    );
    assert_eq!(created["ok"], true, "{created}");
    assert_eq!(created["generated"][0]["instances"], 4, "{created}");
    assert_eq!(created["generated"][0]["cached"], false, "{created}");
    let hash = created["generated"][0]["content_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(hash.len(), 64);

    let m = only_model(&mut c);
    assert_eq!(m["path"], "Workspace.Stairs");
    assert_eq!(m["generator"], "ServerStorage.Stairs");
    assert_eq!(m["status"], "fresh");
    assert_eq!(m["size"], json!([12.0, 12.0, 12.0]));
    assert_eq!(parts(&m), 4);
    let attrs = c.ok("get_attributes", json!({ "model": "Stairs" }));
    let steps = attrs["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "Steps")
        .unwrap()
        .clone();
    assert_eq!(steps["type"], "number");
    assert_eq!(steps["default"], 4.0);

    // Set an attribute: more steps, more parts.
    let set = c.ok(
        "set_attributes",
        json!({ "model": "Workspace.Stairs", "attributes": { "Steps": 9 } }),
    );
    assert_eq!(set["generated"][0]["instances"], 9, "{set}");
    assert_eq!(parts(&only_model(&mut c)), 9);

    // A bad value changes nothing and says what is expected.
    let e = c.err(
        "set_attributes",
        json!({ "attributes": { "Tint": "red-ish" } }),
    );
    assert!(e.contains("attribute Tint") && e.contains("R,G,B"), "{e}");
    let e = c.err("set_attributes", json!({ "attributes": { "Stairs": 3 } }));
    assert!(
        e.contains("no attribute 'Stairs'") && e.contains("Steps, Tint"),
        "{e}"
    );
    let e = c.err("set_size", json!({ "size": [1, 0, 1] }));
    assert!(e.contains("0.001"), "{e}");
    let e = c.err("list_models", json!({ "verbose": true }));
    assert!(e.contains("unknown argument 'verbose'"), "{e}");
    assert_eq!(parts(&only_model(&mut c)), 9);

    // Replacing the source with a value its attributes refuse changes nothing either.
    let e = c.err(
        "create_generator",
        json!({ "name": "Stairs", "source": BROKEN, "attributes": { "Steps": [1, 2] } }),
    );
    assert!(e.contains("attribute Steps"), "{e}");
    let again = c.ok("regenerate", json!({ "model": "Stairs" }));
    assert_eq!(again["generated"][0]["instances"], 9, "{again}");

    // Break the generator: the error names its line, as a failed generation.
    let (failed, broken) = c.call(
        "create_generator",
        json!({ "name": "Stairs", "source": BROKEN }),
    );
    assert!(failed, "{broken}");
    assert_eq!(broken["replaced"], true);
    assert_eq!(broken["generated"][0]["ok"], false);
    let errors = c.ok("get_errors", json!({}));
    assert_eq!(errors["count"], 1, "{errors}");
    let error = &errors["errors"][0];
    assert_eq!(error["model"], "Workspace.Stairs");
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .contains("the stairs are broken"),
        "{error}"
    );
    assert_eq!(error["location"]["line"], 4, "{error}");
    assert_eq!(only_model(&mut c)["status"], "failed");

    // Undo: the working source and its nine steps come back without an error.
    let undone = c.ok("undo", json!({}));
    assert_eq!(undone["changed"], true, "{undone}");
    let m = only_model(&mut c);
    assert_eq!(m["status"], "fresh", "{m}");
    assert_eq!(parts(&m), 9);
    assert_eq!(c.ok("get_errors", json!({}))["count"], 0);

    // Export a .glb: a glTF 2.0 binary whose JSON chunk parses.
    let exported = c.ok("export", json!({ "path": "out/stairs.glb" }));
    let glb = std::fs::read(dir.join("out/stairs.glb")).unwrap();
    assert_eq!(exported["written"]["bytes"], glb.len());
    check_glb(&glb);

    // Pack: a package that loads, with the module, the attributes and nine generated parts.
    let packed = c.ok("pack", json!({ "path": "Stairs.rbxm" }));
    assert_eq!(packed["packed"]["instances"], 9, "{packed}");
    check_package(&dir.join("Stairs.rbxm"));

    // Save the scene under the root.
    c.ok("save_scene", json!({ "path": "scene.rbxl" }));
    assert!(dir.join("scene.rbxl").is_file());

    // Paths outside the root are refused, and nothing is written there.
    let outside = dir.parent().unwrap().join("escaped.glb");
    let _ = std::fs::remove_file(&outside);
    for p in ["../escaped.glb", outside.to_str().unwrap()] {
        let e = c.err("export", json!({ "path": p }));
        assert!(e.contains("outside the root directory"), "{e}");
    }
    assert!(!outside.exists());
    let e = c.err("save_scene", json!({}));
    assert!(e.contains("give a path"), "{e}");

    // Protocol errors: text that is not JSON, JSON that is no request, bad params and unknown
    // methods each get their JSON-RPC error (no line goes unanswered); the session
    // goes on.
    c.send_raw("{ this is not json");
    let r = c.answer(&Value::Null);
    assert_eq!(r["error"]["code"], -32700, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("not JSON"),
        "{r}"
    );
    c.send_raw(r#"{"jsonrpc":"2.0","id":901,"method":"tools/call","params":"oops"}"#);
    let r = c.answer(&json!(901));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    c.send_raw("[1, 2]");
    let r = c.answer(&Value::Null);
    assert_eq!(r["error"]["code"], -32600, "{r}");
    c.send(&json!({ "jsonrpc": "2.0", "id": 900, "method": "no/such/method" }));
    let r = c.answer(&json!(900));
    assert!(r["error"]["code"].is_i64(), "{r}");
    // An unknown tool is a protocol error (MCP's tools section), naming the tools there are.
    let r = c.request(
        "tools/call",
        json!({ "name": "no_such_tool", "arguments": {} }),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let m = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        m.contains("unknown tool 'no_such_tool'") && m.contains("create_generator"),
        "{r}"
    );
    // A known tool refusing its arguments is the tool's error result, for the model to read.
    let e = c.err("list_models", json!({ "bogus": 1 }));
    assert!(e.contains("unknown argument 'bogus'"), "{e}");
    let pong = c.request("ping", json!({}));
    assert!(pong["result"].is_object(), "{pong}");
    assert_eq!(parts(&only_model(&mut c)), 9);
    c.close();
}

/// A request before `initialize` is answered "not initialized" and the session can still
/// start (the server does not end on it), as can a line of garbage first.
#[test]
fn r15_8_requests_before_initialize_are_refused_not_fatal() {
    let dir = root("early");
    let mut c = Client::start(&dir, None);
    c.send_raw("garbage");
    let r = c.answer(&Value::Null);
    assert_eq!(r["error"]["code"], -32700, "{r}");
    c.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let r = c.request("ping", json!({}));
    assert_eq!(r["error"]["code"], -32002, "{r}");
    let init = c.initialize();
    assert!(init["result"]["serverInfo"]["name"].is_string(), "{init}");
    let pong = c.request("ping", json!({}));
    assert!(pong["result"].is_object(), "{pong}");
    c.close();
}

/// An initialize request rmcp cannot take (no protocolVersion, capabilities or clientInfo)
/// is answered with invalid params and does not start the session: a request after it is
/// still "not initialized", and a proper initialize then works. A client that leaves before
/// initializing gets every answer and the server ends cleanly.
#[test]
fn a_malformed_initialize_is_refused_and_the_session_can_still_start() {
    let dir = root("bad-init");
    let mut c = Client::start(&dir, None);
    let r = c.request("initialize", json!({}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("protocolVersion"),
        "{r}"
    );
    let r = c.request("tools/list", json!({}));
    assert_eq!(r["error"]["code"], -32002, "{r}");
    let init = c.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "procmodel", "{init}");
    let tools = c.request("tools/list", json!({}));
    assert!(tools["result"]["tools"].is_array(), "{tools}");
    c.close();

    // Leaving before a session starts: the answers arrive and the exit is clean.
    let mut c = Client::start(&dir, None);
    c.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize" }));
    c.send(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }));
    assert_eq!(c.answer(&json!(1))["error"]["code"], -32602);
    assert_eq!(c.answer(&json!(2))["error"]["code"], -32002);
    c.close();
    let c = Client::start(&dir, None);
    c.close();
}

/// The same session twice gives the same bytes.
#[test]
fn r15_8_same_inputs_same_bytes() {
    let mut outputs = Vec::new();
    for run in ["a", "b"] {
        let dir = root(&format!("det-{run}"));
        let mut c = Client::start(&dir, None);
        c.initialize();
        c.ok(
            "create_generator",
            json!({ "name": "Stairs", "source": STAIRS, "size": "8,6,20", "attributes": { "Steps": 6, "Tint": "#00ff00" } }),
        );
        c.ok("export", json!({ "path": "s.glb" }));
        c.ok("export", json!({ "path": "s.rbxm", "model": "Stairs" }));
        c.close();
        outputs.push((
            std::fs::read(dir.join("s.glb")).unwrap(),
            std::fs::read(dir.join("s.rbxm")).unwrap(),
        ));
    }
    assert!(
        outputs[0] == outputs[1],
        "two identical sessions wrote different bytes"
    );
}

/// A generator file given on the command line opens as a one-model scene.
#[test]
fn r15_8_opens_a_generator_file() {
    let dir = root("open");
    let mut c = Client::start(&dir, Some(&examples().join("SpiralStaircase.luau")));
    c.initialize();
    let m = only_model(&mut c);
    assert_eq!(m["path"], "Workspace.SpiralStaircase", "{m}");
    assert_eq!(m["status"], "fresh", "{m}");
    let before = parts(&m);
    let set = c.ok(
        "set_attributes",
        json!({ "attributes": { "StepSize": 0.5 } }),
    );
    assert_eq!(set["ok"], true, "{set}");
    assert!(parts(&only_model(&mut c)) > before);
    c.close();
}

/// A module folder (init.luau requiring its child) and a Rojo project open too.
#[test]
fn opens_a_module_folder_and_a_rojo_project() {
    let dir = root("open-folder");
    let gen_dir = dir.join("Rows");
    std::fs::create_dir_all(&gen_dir).unwrap();
    std::fs::write(
        gen_dir.join("init.luau"),
        "local N = require(script.Count)\nreturn { Attributes = {}, OnGenerate = function(_, t)\n\tfor i = 1, N do Instance.new(\"Part\", t) end\nend }\n",
    )
    .unwrap();
    std::fs::write(gen_dir.join("Count.luau"), "return 3\n").unwrap();
    let mut c = Client::start(&dir, Some(&gen_dir));
    c.initialize();
    let m = only_model(&mut c);
    assert_eq!(m["path"], "Workspace.Rows", "{m}");
    assert_eq!(parts(&m), 3, "{m}");
    c.close();
    let mut c = Client::start(&dir, Some(&examples().join("rojo-city")));
    c.initialize();
    let list = c.ok("list_models", json!({}));
    assert!(!list["models"].as_array().unwrap().is_empty(), "{list}");
    c.close();
}

fn check_glb(glb: &[u8]) {
    assert!(glb.len() > 20);
    assert_eq!(&glb[0..4], b"glTF");
    assert_eq!(u32::from_le_bytes(glb[4..8].try_into().unwrap()), 2);
    assert_eq!(
        u32::from_le_bytes(glb[8..12].try_into().unwrap()) as usize,
        glb.len()
    );
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    assert_eq!(&glb[16..20], b"JSON");
    let doc: Value = serde_json::from_slice(&glb[20..20 + json_len]).unwrap();
    assert_eq!(doc["asset"]["version"], "2.0");
    assert!(!doc["meshes"].as_array().unwrap().is_empty());
}

fn check_package(path: &Path) {
    use rbx_dom_weak::ustr;
    use rbx_types::Variant;
    let dom = rbx_binary::from_reader(std::fs::read(path).unwrap().as_slice()).unwrap();
    let root = dom.root();
    assert_eq!(root.children().len(), 1);
    let pm = dom.get_by_ref(root.children()[0]).unwrap();
    assert_eq!(pm.class, "ProceduralModel");
    assert_eq!(pm.name, "Stairs");
    let Some(Variant::Ref(module)) = pm.properties.get(&ustr("Generator")) else {
        panic!("the package's model has no Generator");
    };
    let module = dom.get_by_ref(*module).unwrap();
    assert_eq!(module.class, "ModuleScript");
    let Some(Variant::Attributes(a)) = pm.properties.get(&ustr("Attributes")) else {
        panic!("no attributes");
    };
    assert_eq!(a.get("Steps"), Some(&Variant::Float64(9.0)));
    let folder = pm
        .children()
        .iter()
        .map(|&c| dom.get_by_ref(c).unwrap())
        .find(|i| i.class == "GeneratedFolder")
        .expect("a GeneratedFolder");
    assert_eq!(folder.children().len(), 9);
}

/// Calls a client sends without waiting for the answers are carried out in the order sent:
/// the scene they leave does not depend on thread timing. (JSON-RPC lets the answers come
/// in any order; each is matched by its id.)
#[test]
fn pipelined_calls_run_in_the_order_sent() {
    let dir = root("pipelined");
    let mut c = Client::start(&dir, None);
    c.initialize();
    c.ok(
        "create_generator",
        json!({ "name": "Stairs", "source": STAIRS, "size": "8,6,20", "attributes": { "Steps": 2 } }),
    );
    for round in 0..6u64 {
        // Steps 3..=14, then three undos: 11 if every call ran in order.
        let mut sent = Vec::new();
        for n in 3..=14u64 {
            sent.push(c.next_id);
            c.send(&json!({
                "jsonrpc": "2.0",
                "id": c.next_id,
                "method": "tools/call",
                "params": { "name": "set_attributes", "arguments": { "model": "Stairs", "attributes": { "Steps": n + round } } }
            }));
            c.next_id += 1;
        }
        for _ in 0..3 {
            sent.push(c.next_id);
            c.send(&json!({ "jsonrpc": "2.0", "id": c.next_id, "method": "tools/call", "params": { "name": "undo", "arguments": {} } }));
            c.next_id += 1;
        }
        let mut answered = Vec::new();
        while answered.len() < sent.len() {
            let line = c.lines.recv_timeout(GIVE_UP).expect("the server answers");
            let v: Value = serde_json::from_str(&line).unwrap();
            assert!(v["result"].is_object(), "{v}");
            if let Some(id) = v["id"].as_u64() {
                answered.push(id);
            }
        }
        answered.sort_unstable();
        assert_eq!(answered, sent, "round {round}: every call answered once");
        let model = only_model(&mut c);
        let steps = model["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == "Steps")
            .unwrap()["value"]
            .clone();
        assert_eq!(steps, json!((11 + round) as f64), "round {round}: {model}");
    }
    c.close();
}

/// A tool result carries what the generators printed (an assistant reads no stderr, where
/// it went alone): lines since the last call, once.
#[test]
fn a_tool_result_carries_what_the_generator_printed() {
    let dir = root("printed");
    let mut c = Client::start(&dir, None);
    c.initialize();
    let created = c.ok(
        "create_generator",
        json!({ "name": "Chatty", "source": "return { Attributes = { N = 1 }, OnGenerate = function(params, target)\n    print('n is', params.Attributes.N)\n    warn('careful')\nend }\n" }),
    );
    assert_eq!(
        created["output"],
        json!([
            { "level": "print", "text": "[Chatty] n is 1" },
            { "level": "warn", "text": "[Chatty] careful" },
        ]),
        "{created}"
    );
    assert_eq!(created["output_omitted"], 0);
    let set = c.ok(
        "set_attributes",
        json!({ "model": "Workspace.Chatty", "attributes": { "N": "2" } }),
    );
    assert_eq!(set["output"][0]["text"], "[Chatty] n is 2", "{set}");
    assert_eq!(set["output"].as_array().unwrap().len(), 2, "{set}");
    c.close();
}
