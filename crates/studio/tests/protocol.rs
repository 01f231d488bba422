//! The server's protocol from a plain client: Host/Origin checks, assets, the scene message,
//! edits echoed with their seq, malformed and wrong messages answered with errors while the
//! connection and the scene stay, several clients in sync, exports, hot reload by rename.

mod common;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A raw HTTP/1.1 GET; returns (status, body).
fn get(addr: std::net::SocketAddr, path: &str, host: &str, origin: Option<&str>) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\n{origin}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).unwrap();
    let split = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&buf[..split]).to_string();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let mut body = buf[split + 4..].to_vec();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = dechunk(&body);
    }
    (status, body)
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let n = usize::from_str_radix(std::str::from_utf8(&b[..line]).unwrap().trim(), 16).unwrap();
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&b[line + 2..line + 2 + n]);
        b = &b[line + 4 + n..];
    }
}

#[test]
fn r13_host_and_origin_are_checked() {
    let (_dir, file) = common::fixture("hosts");
    let s = common::studio(&file);
    let a = s.addr();
    let host = format!("127.0.0.1:{}", a.port());
    let (st, body) = get(a, "/", &host, None);
    assert_eq!(st, 200);
    assert!(String::from_utf8_lossy(&body).contains("procmodel studio"));
    assert_eq!(get(a, "/", &format!("localhost:{}", a.port()), None).0, 200);
    // DNS rebinding: a foreign name pointing at 127.0.0.1.
    let (st, body) = get(a, "/", "evil.example:80", None);
    assert_eq!(st, 403);
    assert!(String::from_utf8_lossy(&body).contains("evil.example"));
    // Another site's page.
    assert_eq!(get(a, "/ws", &host, Some("http://evil.example")).0, 403);
    assert_eq!(
        get(a, "/app.js", &host, Some(&format!("http://{host}"))).0,
        200
    );
    // Assets: the vendored three.js is served; nothing outside the web folder is.
    let (st, body) = get(a, "/vendor/three/three.module.js", &host, None);
    assert_eq!(st, 200);
    assert!(body.len() > 100_000);
    assert_eq!(get(a, "/../Cargo.toml", &host, None).0, 404);
    assert_eq!(get(a, "/nope.js", &host, None).0, 404);
    // Exports of the generated scene.
    let (st, glb) = get(a, "/export/glb", &host, None);
    assert_eq!(st, 200);
    assert_eq!(&glb[..4], b"glTF");
    let (st, rbxm) = get(a, "/export/rbxm", &host, None);
    assert_eq!(st, 200);
    assert_eq!(&rbxm[..8], b"<roblox!");
    assert_eq!(get(a, "/export/fbx", &host, None).0, 404);
}

async fn connect(addr: std::net::SocketAddr) -> Ws {
    let req = format!("ws://{addr}/ws").into_client_request().unwrap();
    tokio_tungstenite::connect_async(req).await.unwrap().0
}

/// The next scene message's header (skipping text messages, which go to `texts`, and
/// terrain meshes).
async fn scene(ws: &mut Ws, texts: &mut Vec<Value>) -> (Value, usize) {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(30), ws.next())
            .await
            .expect("a message in time")
            .expect("open")
            .expect("ok");
        match msg {
            Message::Binary(b) if &b[..4] == b"PMT1" => {}
            Message::Binary(b) => {
                assert_eq!(&b[..4], b"PMF1");
                let n = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
                let header: Value = serde_json::from_slice(&b[8..8 + n]).unwrap();
                return (header, b.len() - 8 - n);
            }
            Message::Text(t) => texts.push(serde_json::from_str(t.as_str()).unwrap()),
            _ => {}
        }
    }
}

/// The next text message.
async fn text(ws: &mut Ws) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(30), ws.next())
            .await
            .expect("a message in time")
            .unwrap()
            .unwrap();
        if let Message::Text(t) = msg {
            return serde_json::from_str(t.as_str()).unwrap();
        }
    }
}

/// Scene messages until one satisfies `ok`.
async fn until(ws: &mut Ws, ok: impl Fn(&Value) -> bool) -> Value {
    let mut texts = Vec::new();
    loop {
        let (h, _) = scene(ws, &mut texts).await;
        if ok(&h) {
            return h;
        }
    }
}

/// The id of the scene's first model, once the scene shows `parts` parts.
async fn first_model(ws: &mut Ws, parts: u64) -> String {
    let h = until(ws, |h| h["scene"]["parts"] == parts).await;
    h["scene"]["models"][0]["id"]
        .as_str()
        .expect("a model id")
        .to_owned()
}

/// The first scene message that echoes the edit `seq`.
async fn until_seq(ws: &mut Ws, seq: u64) -> Value {
    until(ws, |h| {
        h["seqs"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s["seq"] == seq))
    })
    .await
}

async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::Text(v.to_string().into())).await.unwrap();
}

/// Sets `model`'s Steps to `steps` (message `seq`) and waits for the frame with that many
/// parts (the fixture's staircase has one part per step).
async fn set_steps(ws: &mut Ws, seq: u64, model: &str, steps: i64) -> Value {
    send(
        ws,
        json!({"type":"set_attribute","seq":seq,"model":model,"name":"Steps","value":steps}),
    )
    .await;
    until(ws, |h| h["scene"]["parts"] == steps).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r13_protocol_edits_errors_and_sync() {
    let (dir, file) = common::fixture("protocol");
    let s = common::studio(&file);
    let mut a = connect(s.addr()).await;
    let first = until(&mut a, |h| h["scene"]["parts"] == 10).await;
    let sc = &first["scene"];
    let model = sc["models"][0]["id"].as_str().unwrap().to_owned();
    let attrs = sc["models"][0]["attributes"].as_array().unwrap();
    let steps = attrs.iter().find(|x| x["name"] == "Steps").unwrap();
    assert_eq!(steps["type"], "number");
    assert_eq!(steps["default"], 10.0);
    let color = attrs.iter().find(|x| x["name"] == "Color").unwrap();
    assert_eq!(color["type"], "Color3");
    assert_eq!(sc["batches"][0]["shape"], "Block");
    assert_eq!(sc["batches"][0]["count"], 10);
    let cli = sc["models"][0]["cli"].as_str().unwrap();
    assert!(
        cli.starts_with("procmodel generate ") && cli.contains("Staircase.luau"),
        "{cli}"
    );

    // An edit: the frame that includes it echoes the seq with the server's time.
    send(
        &mut a,
        json!({"type":"set_attribute","seq":1,"model":model,"name":"Steps","value":4}),
    )
    .await;
    let h = until(&mut a, |h| h["scene"]["parts"] == 4).await;
    let seqs = h["seqs"].as_array().unwrap();
    assert_eq!(seqs[0]["seq"], 1);
    assert!(seqs[0]["server_ms"].as_f64().unwrap() >= 0.0);
    assert!(
        h["scene"]["models"][0]["cli"]
            .as_str()
            .unwrap()
            .contains("--attr Steps=4")
    );

    // A second client sees the same scene at once and the first one's edits.
    let mut b = connect(s.addr()).await;
    until(&mut b, |h| h["scene"]["parts"] == 4).await;
    send(
        &mut a,
        json!({"type":"set_attribute","seq":2,"model":model,"name":"Offset","value":[0, 5, 0]}),
    )
    .await;
    let hb = until(&mut b, |h| {
        h["scene"]["models"][0]["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["name"] == "Offset" && x["value"] == json!([0.0, 5.0, 0.0]))
    })
    .await;
    // b did not send the edit: no seqs of its own.
    assert!(hb["seqs"].as_array().unwrap().is_empty());

    // Bad input: each answered with an error that names the problem; the connection stays.
    let cases = [
        (r#"{"type":"explode","seq":10}"#.to_owned(), "explode"),
        ("not json".to_owned(), "malformed message"),
        (r#"{"type":"undo"}"#.to_owned(), "seq"),
        (json!({"type":"set_attribute","seq":11,"model":model,"name":"Nope","value":1}).to_string(), "no attribute 'Nope' (it has: Color, Grid, Hang, Label, Offset, StepSize, Steps)"),
        (json!({"type":"set_attribute","seq":12,"model":model,"name":"Steps","value":"NaN"}).to_string(), "Steps: expected a number"),
        (json!({"type":"set_attribute","seq":13,"model":model,"name":"Offset","value":[1, 2]}).to_string(), "x, y, z"),
        (json!({"type":"set_attribute","seq":14,"model":model,"name":"Color","value":[2, 0, 0]}).to_string(), "between 0 and 1"),
        (json!({"type":"set_attribute","seq":15,"model":"ffffffffffffffffffffffffffffffff","name":"Steps","value":1}).to_string(), "stale selection"),
        (json!({"type":"set_attribute","seq":16,"model":"zz","name":"Steps","value":1}).to_string(), "not an instance id"),
        (json!({"type":"set_size","seq":17,"model":model,"value":[1, -1, 1]}).to_string(), "Size must be finite and not negative"),
        (json!({"type":"set_scale","seq":18,"model":model,"value":0}).to_string(), "Scale must be positive"),
        (json!({"type":"save","seq":19,"path":"x.txt"}).to_string(), "not a scene file"),
    ];
    for (msg, want) in &cases {
        a.send(Message::Text(msg.clone().into())).await.unwrap();
        let e = text(&mut a).await;
        assert_eq!(e["type"], "error", "{msg}: {e}");
        assert!(e["message"].as_str().unwrap().contains(want), "{msg}: {e}");
    }
    a.send(Message::Binary(vec![1, 2, 3].into())).await.unwrap();
    let e = text(&mut a).await;
    assert!(e["message"].as_str().unwrap().contains("binary"), "{e}");

    // Undo twice: back to the first scene; redo once.
    send(&mut a, json!({"type":"undo","seq":20})).await;
    send(&mut a, json!({"type":"undo","seq":21})).await;
    until(&mut a, |h| h["scene"]["parts"] == 10).await;
    send(&mut a, json!({"type":"redo","seq":22})).await;
    until(&mut a, |h| h["scene"]["parts"] == 4).await;

    // Hot reload after a rename-style save; then a generator error with its line.
    let tmp = dir.join(".Staircase.luau.swp");
    std::fs::write(
        &tmp,
        common::STAIRCASE.replace("-- FAIL HERE", "error(\"broken on purpose\")"),
    )
    .unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    let h = until(&mut a, |h| !h["scene"]["models"][0]["error"].is_null()).await;
    let err = h["scene"]["models"][0]["error"].as_str().unwrap();
    assert!(
        err.contains("broken on purpose") && err.contains("Staircase"),
        "{err}"
    );
    std::fs::write(&tmp, common::STAIRCASE).unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    until(&mut a, |h| {
        h["scene"]["models"][0]["error"].is_null() && h["scene"]["parts"] == 4
    })
    .await;

    // Save (atomic) to the default path beside the generator, then resync.
    send(&mut a, json!({"type":"save","seq":30})).await;
    let saved = text(&mut a).await;
    assert_eq!(saved["type"], "saved", "{saved}");
    let path = std::path::PathBuf::from(saved["path"].as_str().unwrap());
    assert_eq!(path, dir.join("Staircase.rbxl").canonicalize().unwrap());
    send(&mut a, json!({"type":"resync","seq":31})).await;
    let h = until(&mut a, |_| true).await;
    assert_eq!(h["scene"]["parts"], 4);
    drop(a);
    drop(b);
    s.stop();

    // The saved place opens as it is.
    let s = common::studio(&path);
    let mut c = connect(s.addr()).await;
    let h = until(&mut c, |h| h["scene"]["parts"] == 4).await;
    assert_eq!(h["scene"]["generator_file"], false);
    assert!(h["scene"]["models"][0]["cli"].is_null());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r13_cancel_stops_a_hanging_generator() {
    let (_dir, file) = common::fixture("cancel");
    let s = common::studio(&file);
    let mut a = connect(s.addr()).await;
    let model = first_model(&mut a, 10).await;
    send(
        &mut a,
        json!({"type":"set_attribute","seq":1,"model":model,"name":"Hang","value":true}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    send(&mut a, json!({"type":"cancel","seq":2})).await;
    let h = until(&mut a, |h| !h["scene"]["models"][0]["error"].is_null()).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let err = h["scene"]["models"][0]["error"].as_str().unwrap();
    assert!(err.contains(procmodel_luau::CANCEL_MESSAGE), "{err}");
    send(
        &mut a,
        json!({"type":"set_attribute","seq":3,"model":model,"name":"Hang","value":false}),
    )
    .await;
    until(&mut a, |h| {
        h["scene"]["models"][0]["error"].is_null() && h["scene"]["parts"] == 10
    })
    .await;
}

/// A Rojo project opens as its scene; Save writes a place beside it, named after the
/// project, and leaves the project's files as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rojo_project_opens_and_saves_beside_itself() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("studio-rojo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let project = dir.join("default.project.json");
    let text_of_project = r#"{ "name": "Stairs", "tree": { "$className": "DataModel",
        "ServerStorage": { "Staircase": { "$path": "src/Staircase.luau",
            "$id": "stairs-generator" } },
        "Workspace": { "Stairs": { "$className": "ProceduralModel",
            "$properties": { "Size": [4, 4, 4] },
            "$attributes": { "Rojo_Target_Generator": "stairs-generator" } } } } }"#;
    std::fs::write(&project, text_of_project).unwrap();
    std::fs::write(dir.join("src/Staircase.luau"), common::STAIRCASE).unwrap();
    let s = common::studio(&project);
    let mut a = connect(s.addr()).await;
    let h = until(&mut a, |h| h["scene"]["parts"] == 10).await;
    assert!(h["scene"]["models"][0]["error"].is_null(), "{h}");
    send(&mut a, json!({"type":"save","seq":1})).await;
    let saved = text(&mut a).await;
    assert_eq!(saved["type"], "saved", "{saved}");
    let path = PathBuf::from(saved["path"].as_str().unwrap());
    assert_eq!(path.file_name().unwrap(), "Stairs.rbxl");
    assert_eq!(
        path.parent().unwrap().canonicalize().unwrap(),
        dir.canonicalize().unwrap()
    );
    assert_eq!(std::fs::read_to_string(&project).unwrap(), text_of_project);
}

/// The text of a Rojo project whose `models` use the Rows generator (id `rows`).
fn rows_project_file(models: &[&str]) -> String {
    let models: Vec<String> = models
        .iter()
        .map(|m| {
            format!(
                r#""{m}": {{ "$className": "ProceduralModel",
                "$attributes": {{ "Rojo_Target_Generator": "rows" }} }}"#
            )
        })
        .collect();
    format!(
        r#"{{ "name": "Rows", "tree": {{ "$className": "DataModel",
        "ReplicatedStorage": {{ "Shared": {{ "$path": "src/shared" }} }},
        "ServerStorage": {{ "Gen": {{ "$path": "src/gen" }} }},
        "Workspace": {{ {} }} }} }}"#,
        models.join(",")
    )
}

/// A Rojo project in a new folder named after `name`: one model, `Rows`, whose generator
/// (in src/gen) makes as many parts as the module `Count` (in another folder, src/shared,
/// reached through the instance tree) returns: 2. Returns the folder.
fn rows_project(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("studio-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src/gen")).unwrap();
    std::fs::create_dir_all(dir.join("src/shared")).unwrap();
    std::fs::write(
        dir.join("default.project.json"),
        rows_project_file(&["Rows"]),
    )
    .unwrap();
    std::fs::write(dir.join("src/gen/Rows.meta.json"), r#"{ "id": "rows" }"#).unwrap();
    std::fs::write(
        dir.join("src/gen/Rows.luau"),
        r#"local Count = require(game:GetService("ReplicatedStorage").Shared.Count)
return { Attributes = {}, OnGenerate = function(params, target)
    for i = 1, Count do
        local p = Instance.new("Part")
        p.Position = Vector3.new(i * 2, 0, 0)
        p.Parent = target
    end
end }
"#,
    )
    .unwrap();
    std::fs::write(dir.join("src/shared/Count.luau"), "return 2\n").unwrap();
    dir
}

/// The scripts of a Rojo project hot-reload: saving a module the generator requires (from
/// another folder of the project, reached through the instance tree) regenerates with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rojo_project_s_scripts_reload() {
    let dir = rows_project("rojo-reload");
    let count = dir.join("src/shared/Count.luau");
    let s = common::studio(&dir);
    let mut a = connect(s.addr()).await;
    let h = until(&mut a, |h| h["scene"]["parts"] == 2).await;
    assert!(h["scene"]["models"][0]["error"].is_null(), "{h}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Saved the way editors save: a new file renamed over the old one.
    let tmp = dir.join("src/shared/.Count.tmp");
    std::fs::write(&tmp, "return 5\n").unwrap();
    std::fs::rename(&tmp, &count).unwrap();
    until(&mut a, |h| h["scene"]["parts"] == 5).await;
}

/// A Rojo project's structure hot-reloads, as `rojo serve` syncs it: a model added to the
/// project file appears and generates, a required script removed fails its generator with
/// the error saying so, a project file that does not build keeps the scene and says why in
/// the Output panel, and the fixed file is read again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rojo_project_s_structure_reloads() {
    let dir = rows_project("rojo-structure");
    let project_file = dir.join("default.project.json");
    let count = dir.join("src/shared/Count.luau");
    let s = common::studio(&dir);
    let mut a = connect(s.addr()).await;
    until(&mut a, |h| h["scene"]["parts"] == 2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Files beside the project file that are not part of its tree (what `rojo sourcemap
    // --watch` writes, a build script) are not a change of its structure: a script saved
    // after them only reloads that script.
    std::fs::write(dir.join("sourcemap.json"), r#"{ "name": "Rows" }"#).unwrap();
    std::fs::write(dir.join("build.luau"), "print(1)\n").unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    std::fs::write(&count, "return 3\n").unwrap();
    let mut texts = Vec::new();
    while scene(&mut a, &mut texts).await.0["scene"]["parts"] != 3 {}
    let said: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
    assert!(!said.iter().any(|t| t.contains("read again")), "{said:?}");
    std::fs::write(&count, "return 2\n").unwrap();
    until(&mut a, |h| h["scene"]["parts"] == 2).await;
    // A model added to the project file.
    std::fs::write(&project_file, rows_project_file(&["Rows", "More"])).unwrap();
    let h = until(&mut a, |h| h["scene"]["parts"] == 4).await;
    let names: Vec<&str> = h["scene"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["More", "Rows"], "{h}");
    // A script the generator requires, removed.
    std::fs::remove_file(&count).unwrap();
    let h = until(&mut a, |h| h["scene"]["models"][0]["error"].is_string()).await;
    let error = h["scene"]["models"][0]["error"].as_str().unwrap();
    assert!(error.contains("Count"), "{error}");
    // A project file that does not build: the scene stays, the Output panel says why.
    std::fs::write(&project_file, "{ not json").unwrap();
    loop {
        let o = output(&mut a).await;
        let text = o.to_string();
        if text.contains("does not build") {
            assert!(
                text.contains("default.project.json") || text.contains("studio-rojo-structure"),
                "{o}"
            );
            break;
        }
    }
    std::fs::write(&count, "return 3\n").unwrap();
    std::fs::write(&project_file, rows_project_file(&["Rows"])).unwrap();
    until(&mut a, |h| {
        h["scene"]["parts"] == 3 && h["scene"]["models"][0]["error"].is_null()
    })
    .await;
    // The module becomes a YAML data file (a ModuleScript returning its value, Rojo 7.6):
    // a structure change too.
    std::fs::remove_file(&count).unwrap();
    std::fs::write(dir.join("src/shared/Count.yaml"), "4\n").unwrap();
    until(&mut a, |h| {
        h["scene"]["parts"] == 4 && h["scene"]["models"][0]["error"].is_null()
    })
    .await;
}

#[test]
fn r13_bad_files_are_errors() {
    let e = procmodel_studio::Studio::start(procmodel_studio::Options::new("/nonexistent/x.luau"))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("x.luau"), "{e}");
    let e = procmodel_studio::Studio::start(procmodel_studio::Options::new("Cargo.toml"))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("open a generator"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r13_a_drag_is_one_undo_step() {
    let (_dir, file) = common::fixture("gesture");
    let s = common::studio(&file);
    let mut a = connect(s.addr()).await;
    let model = first_model(&mut a, 10).await;
    // What a scrubbed number field sends: gesture_start, values as the pointer moves (some
    // regenerated before the next arrives), gesture_end.
    send(&mut a, json!({"type":"gesture_start","seq":1})).await;
    for (i, steps) in [4, 5, 6, 7].into_iter().enumerate() {
        send(
            &mut a,
            json!({"type":"set_attribute","seq":2 + i,"model":model,"name":"Steps","value":steps}),
        )
        .await;
        if steps % 2 == 0 {
            until(&mut a, |h| h["scene"]["parts"] == steps).await;
        }
    }
    send(&mut a, json!({"type":"gesture_end","seq":9})).await;
    until(&mut a, |h| h["scene"]["parts"] == 7).await;
    // A typed value afterwards is a step of its own.
    set_steps(&mut a, 10, &model, 3).await;
    send(&mut a, json!({"type":"undo","seq":11})).await;
    until(&mut a, |h| h["scene"]["parts"] == 7).await;
    send(&mut a, json!({"type":"undo","seq":12})).await;
    let h = until(&mut a, |h| h["scene"]["parts"] == 10).await;
    let steps = h["scene"]["models"][0]["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "Steps")
        .unwrap()
        .clone();
    assert_eq!(steps["value"], 10.0, "{steps}");
    send(&mut a, json!({"type":"redo","seq":13})).await;
    until(&mut a, |h| h["scene"]["parts"] == 7).await;
    // A page that leaves mid-drag does not leave the gesture open for the next one.
    send(&mut a, json!({"type":"gesture_start","seq":14})).await;
    set_steps(&mut a, 15, &model, 2).await;
    drop(a);
    let mut b = connect(s.addr()).await;
    until(&mut b, |h| h["scene"]["parts"] == 2).await;
    set_steps(&mut b, 1, &model, 5).await;
    send(&mut b, json!({"type":"undo","seq":2})).await;
    until(&mut b, |h| h["scene"]["parts"] == 2).await;
    s.stop();
}

/// A page's drag belongs to that page: an edit from another page while it is open (its page
/// gone, its close not yet seen by the engine; or two pages open) is a step of its own, not
/// part of the drag. The end of a page's drag cleaned up after it went away raced the next
/// page's first edit, which could join the old drag's undo step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_pages_edit_is_not_part_of_an_open_drag() {
    let (_dir, file) = common::fixture("gesture-pages");
    let s = common::studio(&file);
    let mut a = connect(s.addr()).await;
    let model = first_model(&mut a, 10).await;
    send(&mut a, json!({"type":"gesture_start","seq":1})).await;
    set_steps(&mut a, 2, &model, 2).await;
    // Page a stays, its drag open; page b edits.
    let mut b = connect(s.addr()).await;
    until(&mut b, |h| h["scene"]["parts"] == 2).await;
    set_steps(&mut b, 1, &model, 5).await;
    send(&mut b, json!({"type":"undo","seq":2})).await;
    until(&mut b, |h| h["scene"]["parts"] == 2).await;
    // Page a's late end of its drag ends nothing of b's.
    send(&mut b, json!({"type":"gesture_start","seq":3})).await;
    set_steps(&mut b, 4, &model, 6).await;
    send(&mut a, json!({"type":"gesture_end","seq":3})).await;
    set_steps(&mut b, 5, &model, 7).await;
    send(&mut b, json!({"type":"gesture_end","seq":6})).await;
    send(&mut b, json!({"type":"undo","seq":7})).await;
    until(&mut b, |h| h["scene"]["parts"] == 2).await;
    s.stop();
}

/// The scene message that echoes an edit's seq carries that edit's regenerated geometry
/// (not the publication of the edit alone), and its timing includes the generation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r13_an_edit_is_echoed_with_its_regenerated_frame() {
    let (_dir, file) = common::fixture("echo");
    let s = common::studio(&file);
    let mut a = connect(s.addr()).await;
    let model = first_model(&mut a, 10).await;
    let echoed = |h: &Value, seq: u64| {
        h["seqs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["seq"] == seq)
    };
    // Alternating values as the latency benchmark sends them, then a large grid.
    let edits: Vec<(&str, i64, i64)> = vec![
        ("Steps", 30, 30),
        ("Steps", 31, 31),
        ("Steps", 30, 30),
        ("Steps", 31, 31),
        ("Grid", 60, 3600),
        ("Grid", 59, 3481),
        ("Grid", 0, 31),
    ];
    for (i, (name, value, parts)) in edits.into_iter().enumerate() {
        let seq = 100 + i as u64;
        send(
            &mut a,
            json!({"type":"set_attribute","seq":seq,"model":model,"name":name,"value":value}),
        )
        .await;
        let h = until(&mut a, |h| echoed(h, seq)).await;
        assert_eq!(
            h["scene"]["parts"], parts,
            "{name} = {value}: the frame echoing seq {seq} has the regenerated parts"
        );
        assert_eq!(h["scene"]["busy"], false, "{name} = {value}");
        let reports = h["scene"]["reports"].as_array().unwrap();
        assert!(
            reports.iter().any(|r| r["model"] == model.as_str()),
            "{name} = {value}: the echoing frame reports the model's run: {reports:?}"
        );
    }
}

/// A studio on the generator `source`, saved as `name` in a fixture folder of its own, and a
/// page connected to it.
async fn open_generator(name: &str, source: &str) -> (procmodel_studio::Studio, Ws) {
    let (dir, _) = common::fixture(name.trim_end_matches(".luau"));
    let file = dir.join(name);
    std::fs::write(&file, source).unwrap();
    let s = common::studio(&file);
    let a = connect(s.addr()).await;
    (s, a)
}

/// A generator that writes terrain gets a "Copy as CLI" line writing a place: a model file
/// cannot hold terrain (generate would warn and leave it out).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terrain_generator_s_cli_line_writes_a_place() {
    let (_s, mut a) = open_generator(
        "Hill.luau",
        r#"return { Attributes = { Radius = 8 }, OnGenerate = function(params, target)
    params.Terrain:FillBall(Vector3.zero, params.Attributes.Radius, Enum.Material.Grass)
    local p = Instance.new("Part")
    p.Parent = target
end }
"#,
    )
    .await;
    let h = until(&mut a, |h| {
        h["scene"]["terrain"]["triangles"].as_u64() > Some(0)
    })
    .await;
    let cli = h["scene"]["models"][0]["cli"].as_str().unwrap().to_owned();
    assert!(cli.ends_with(" -o Hill.rbxl"), "{cli}");
    // The staircase, without terrain, keeps its model file.
    let (_, stairs) = common::fixture("no-terrain-cli");
    let s = common::studio(&stairs);
    let mut a = connect(s.addr()).await;
    let h = until(&mut a, |h| h["scene"]["parts"] == 10).await;
    let cli = h["scene"]["models"][0]["cli"].as_str().unwrap().to_owned();
    assert!(cli.ends_with(" -o Staircase.rbxm"), "{cli}");
}

/// A run that made parts but never parented them to targetContainer is reported with a
/// warning the page shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_with_empty_results_that_made_parts_is_warned_about() {
    let (_s, mut a) = open_generator(
        "Typo.luau",
        r#"return { Attributes = {}, OnGenerate = function(params, target)
    local p = Instance.new("Part")
    p.Parent = targett
end }
"#,
    )
    .await;
    let h = until(&mut a, |h| {
        h["scene"]["reports"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
    })
    .await;
    let warning = h["scene"]["reports"][0]["warning"]
        .as_str()
        .unwrap_or_default();
    assert!(
        warning.contains("created 1 instance but its results are empty"),
        "{h}"
    );
}

/// A place with `Workspace.Terrain` voxels: the page is sent the terrain's mesh (a `PMT1`
/// message, before the scene message that presents with it) once, not with every scene.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r13_terrain_is_sent_as_a_mesh_per_material() {
    let (dir, _file) = common::fixture("terrain");
    let place = common::terrain_place(&dir);
    let s = common::studio(&place);
    let mut a = connect(s.addr()).await;
    let msg = tokio::time::timeout(Duration::from_secs(30), a.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let Message::Binary(b) = msg else {
        panic!("a binary terrain message first, got {msg:?}")
    };
    assert_eq!(&b[..4], b"PMT1");
    let n = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
    let header: Value = serde_json::from_slice(&b[8..8 + n]).unwrap();
    let terrain = &header["terrain"];
    assert!(terrain["triangles"].as_u64().unwrap() > 0, "{header}");
    let parts = terrain["parts"].as_array().unwrap();
    let names: Vec<&str> = parts
        .iter()
        .map(|p| p["material"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Grass", "Rock"], "{header}");
    let body: u64 = parts
        .iter()
        .map(|p| p["vertices"].as_u64().unwrap() * 24 + p["indices"].as_u64().unwrap() * 4)
        .sum();
    assert_eq!((b.len() - 8 - n) as u64, body);
    // Grass's default colour (106, 127, 63) in linear RGB.
    let g = parts[0]["color"].as_array().unwrap();
    assert!((g[0].as_f64().unwrap() - 0.1441).abs() < 0.01, "{g:?}");
    let mut texts = Vec::new();
    let (h, _) = scene(&mut a, &mut texts).await;
    assert_eq!(h["scene"]["terrain"]["id"], terrain["id"]);
    assert_eq!(h["scene"]["terrain"]["triangles"], terrain["triangles"]);
    // A resync sends the scene again, but not the unchanged terrain.
    send(&mut a, json!({"type":"resync","seq":1})).await;
    let msg = tokio::time::timeout(Duration::from_secs(30), a.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let Message::Binary(b) = msg else {
        panic!("a scene message, got {msg:?}")
    };
    assert_eq!(&b[..4], b"PMF1");
}

/// Editing a module file the generator required (by rename, as editors save) regenerates
/// the model, also for a module required through another one in a subfolder; a Luau file
/// nothing required changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r13_editing_a_required_module_regenerates() {
    let (dir, _) = common::fixture("require");
    let generator = dir.join("Rows.luau");
    std::fs::write(
        &generator,
        r#"local Util = require("./Util")
return {
    Attributes = { Extra = 0 },
    OnGenerate = function(params, target)
        for i = 1, Util.count() + params.Attributes.Extra do
            local p = Instance.new("Part")
            p.Position = Vector3.new(i * 2, 0, 0)
            p.Parent = target
        end
    end,
}
"#,
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(
        dir.join("Util.luau"),
        "local Deep = require(\"./lib/Deep\")\nreturn { count = function() return 3 + Deep.n end }\n",
    )
    .unwrap();
    std::fs::write(dir.join("lib/Deep.luau"), "return { n = 0 }\n").unwrap();
    let save = |name: &str, text: &str| {
        let tmp = dir.join(format!(".{}.tmp", name.replace('/', "_")));
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, dir.join(name)).unwrap();
    };
    let s = common::studio(&generator);
    let mut a = connect(s.addr()).await;
    until(&mut a, |h| h["scene"]["parts"] == 3).await;
    // The watches are set up with the first publications.
    tokio::time::sleep(Duration::from_millis(300)).await;

    save(
        "Util.luau",
        "local Deep = require(\"./lib/Deep\")\nreturn { count = function() return 5 + Deep.n end }\n",
    );
    until(&mut a, |h| h["scene"]["parts"] == 5).await;
    save("lib/Deep.luau", "return { n = 2 }\n");
    until(&mut a, |h| h["scene"]["parts"] == 7).await;
    // A broken module is the model's error, naming the module's file and line.
    save("lib/Deep.luau", "return { n = 2 \n");
    let h = until(&mut a, |h| !h["scene"]["models"][0]["error"].is_null()).await;
    let err = h["scene"]["models"][0]["error"].as_str().unwrap();
    assert!(err.contains("Deep"), "{err}");
    save("lib/Deep.luau", "return { n = 1 }\n");
    let h = until(&mut a, |h| {
        h["scene"]["models"][0]["error"].is_null() && h["scene"]["parts"] == 6
    })
    .await;
    let revision = h["scene"]["revision"].as_u64().unwrap();
    // A file nothing required: no regeneration (the next scene is the resync's, unchanged).
    save("Unused.luau", "return 1\n");
    tokio::time::sleep(Duration::from_millis(400)).await;
    send(&mut a, json!({"type":"resync","seq":1})).await;
    let h = until(&mut a, |_| true).await;
    assert_eq!(h["scene"]["parts"], 6);
    assert!(h["scene"]["reports"].as_array().unwrap().is_empty(), "{h}");
    assert_eq!(h["scene"]["revision"].as_u64().unwrap(), revision + 1);
}

/// A module folder (init.luau and its children, as Rojo lays them out) opens as one
/// generator, and saving one of its children regenerates with the new code; a child file
/// added or removed is read into the module's tree, the model's attributes kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_folder_opens_and_its_children_reload() {
    let (root, _) = common::fixture("module-folder");
    let dir = root.join("Rows");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("init.luau"),
        r#"local Count = require(script.Count)
return {
    Attributes = { More = 0 },
    OnGenerate = function(params, target)
        local extra = script:FindFirstChild("Extra")
        local n = Count + params.Attributes.More + (if extra then require(extra) else 0)
        for i = 1, n do
            local p = Instance.new("Part")
            p.Position = Vector3.new(i * 2, 0, 0)
            p.Parent = target
        end
    end,
}
"#,
    )
    .unwrap();
    std::fs::write(dir.join("Count.luau"), "return 2\n").unwrap();
    let s = common::studio(&dir);
    let mut a = connect(s.addr()).await;
    let h = until(&mut a, |h| h["scene"]["parts"] == 2).await;
    assert!(h["scene"]["models"][0]["error"].is_null(), "{h}");
    let model = h["scene"]["models"][0]["id"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let tmp = dir.join(".Count.tmp");
    std::fs::write(&tmp, "return 4\n").unwrap();
    std::fs::rename(&tmp, dir.join("Count.luau")).unwrap();
    until(&mut a, |h| h["scene"]["parts"] == 4).await;
    send(
        &mut a,
        json!({"type":"set_attribute","seq":1,"model":model,"name":"More","value":1}),
    )
    .await;
    until(&mut a, |h| h["scene"]["parts"] == 5).await;
    // A child added, then removed: the module's tree follows the folder.
    std::fs::write(dir.join("Extra.luau"), "return 3\n").unwrap();
    until(&mut a, |h| h["scene"]["parts"] == 8).await;
    std::fs::remove_file(dir.join("Extra.luau")).unwrap();
    let h = until(&mut a, |h| h["scene"]["parts"] == 5).await;
    assert!(h["scene"]["models"][0]["error"].is_null(), "{h}");
    // Its children still reload after the folder was read again.
    std::fs::write(dir.join("Count.luau"), "return 1\n").unwrap();
    until(&mut a, |h| h["scene"]["parts"] == 2).await;
}

/// An edit the engine refuses is answered by its error alone: no later scene message echoes
/// its seq (it used to be echoed by the next publication, whatever caused it, so a page
/// measured the latency of an edit that never happened against an unrelated frame).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r13_a_refused_edit_is_never_echoed() {
    let (_dir, file) = common::fixture("refused");
    let s = common::studio(&file);
    let mut a = connect(s.addr()).await;
    let model = first_model(&mut a, 10).await;
    // Refused on the engine thread (the attribute is unknown there), not when parsed.
    send(
        &mut a,
        json!({"type":"set_attribute","seq":1,"model":model,"name":"staircase-100","value":101}),
    )
    .await;
    let e = text(&mut a).await;
    assert_eq!(
        (e["type"].as_str(), e["seq"].as_u64()),
        (Some("error"), Some(1)),
        "{e}"
    );
    send(
        &mut a,
        json!({"type":"set_attribute","seq":2,"model":model,"name":"Steps","value":12}),
    )
    .await;
    let h = until(&mut a, |h| h["scene"]["parts"] == 12).await;
    let seqs: Vec<u64> = h["seqs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, [2], "{h}");
}

/// After a hot reload the studio goes quiet: reading the file it reloaded (an access event
/// on Linux) must not count as another change (it did: the studio re-read and republished
/// the whole scene every debounce period from the first reload on).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r13_a_hot_reload_does_not_reload_forever() {
    let (dir, file) = common::fixture("quiet");
    let s = common::studio(&file);
    let mut a = connect(s.addr()).await;
    until(&mut a, |h| h["scene"]["parts"] == 10).await;
    let tmp = dir.join(".Staircase.luau.tmp");
    std::fs::write(
        &tmp,
        common::STAIRCASE.replace("-- FAIL HERE", "error(\"edited\")"),
    )
    .unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    until(&mut a, |h| !h["scene"]["models"][0]["error"].is_null()).await;
    // The error's line for the Output panel follows the scene that shows it.
    let o = output(&mut a).await;
    assert!(o.to_string().contains("edited"), "{o}");
    // Nothing changes from now on: no scene message may arrive.
    let next = tokio::time::timeout(Duration::from_millis(1500), a.next()).await;
    assert!(
        next.is_err(),
        "a scene message with nothing changed: {next:?}"
    );
}

/// A generator or module file rewritten with the same text (an editor saving an unchanged
/// buffer, in place or by rename, or a `touch`) changes nothing: no dirty mark, no
/// regeneration, no scene message (a frame of the whole scene was published for it). A real
/// edit afterwards still reloads, so the silence is not a watcher that stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r13_2_rewriting_the_same_text_publishes_nothing() {
    let (dir, _) = common::fixture("same-text");
    let generator = dir.join("Rows.luau");
    let rows = "local Util = require(\"./Util\")\nreturn {\n    Attributes = {},\n    OnGenerate = function(params, target)\n        for i = 1, Util.count do\n            Instance.new(\"Part\", target)\n        end\n    end,\n}\n";
    std::fs::write(&generator, rows).unwrap();
    std::fs::write(dir.join("Util.luau"), "return { count = 3 }\n").unwrap();
    let s = common::studio(&generator);
    let mut a = connect(s.addr()).await;
    until(&mut a, |h| h["scene"]["parts"] == 3).await;
    // The watches are set up with the first publications.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let by_rename = |name: &str, text: &str| {
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, dir.join(name)).unwrap();
    };
    std::fs::write(&generator, rows).unwrap();
    by_rename("Rows.luau", rows);
    std::fs::write(dir.join("Util.luau"), "return { count = 3 }\n").unwrap();
    by_rename("Util.luau", "return { count = 3 }\n");
    let next = tokio::time::timeout(Duration::from_millis(1500), a.next()).await;
    assert!(
        next.is_err(),
        "a message for a file whose text did not change: {next:?}"
    );

    by_rename("Util.luau", "return { count = 4 }\n");
    let h = until(&mut a, |h| h["scene"]["parts"] == 4).await;
    assert_eq!(h["scene"]["reports"].as_array().unwrap().len(), 1, "{h}");
}

/// A module file's edit on disk is one undo step, as a generator file's is: undo restores
/// the results from before it (without running the generator) and the module's old code,
/// which the next regeneration runs; redo brings the edit back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r13_3_a_module_reload_is_one_undo_step() {
    let (dir, _) = common::fixture("module-undo");
    let generator = dir.join("Rows.luau");
    std::fs::write(
        &generator,
        "local Util = require(\"./Util\")\nreturn {\n    Attributes = { Extra = 0 },\n    OnGenerate = function(params, target)\n        for i = 1, Util.count + params.Attributes.Extra do\n            Instance.new(\"Part\", target)\n        end\n    end,\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("Util.luau"), "return { count = 3 }\n").unwrap();
    let s = common::studio(&generator);
    let mut a = connect(s.addr()).await;
    let h = until(&mut a, |h| h["scene"]["parts"] == 3).await;
    let model = h["scene"]["models"][0]["id"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(300)).await;

    let tmp = dir.join(".Util.luau.tmp");
    std::fs::write(&tmp, "return { count = 5 }\n").unwrap();
    std::fs::rename(&tmp, dir.join("Util.luau")).unwrap();
    until(&mut a, |h| h["scene"]["parts"] == 5).await;

    send(&mut a, json!({"type":"undo","seq":1})).await;
    let h = until(&mut a, |h| h["scene"]["parts"] == 3).await;
    assert!(
        h["scene"]["reports"].as_array().unwrap().is_empty(),
        "undo restores the results without running: {h}"
    );
    // The restored module's code runs next: 3 + 1 parts, not 5 + 1.
    send(
        &mut a,
        json!({"type":"set_attribute","seq":2,"model":model,"name":"Extra","value":1}),
    )
    .await;
    until(&mut a, |h| h["scene"]["parts"] == 4).await;
    send(&mut a, json!({"type":"undo","seq":3})).await;
    until(&mut a, |h| h["scene"]["parts"] == 3).await;
    send(&mut a, json!({"type":"redo","seq":4})).await;
    until(&mut a, |h| h["scene"]["parts"] == 4).await;
}

/// With a result cache (as `procmodel studio` opens one), an attribute dragged back to a
/// value it had is a hit: the frame has that value's parts without running the generator.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r14_an_attribute_set_back_in_the_studio_is_a_cache_hit() {
    let (_dir, file) = common::fixture("cache");
    let cache = std::sync::Arc::new(procmodel_engine::MemoryCache::default());
    let mut o = procmodel_studio::Options::new(&file);
    o.cache = Some(cache.clone());
    let s = procmodel_studio::Studio::start(o).expect("the studio starts");
    let mut a = connect(s.addr()).await;
    let model = first_model(&mut a, 10).await;
    let hits = || cache.hits();
    for (seq, steps) in [(1u64, 30), (2, 10), (3, 30)] {
        send(
            &mut a,
            json!({"type":"set_attribute","seq":seq,"model":model,"name":"Steps","value":steps}),
        )
        .await;
        let h = until_seq(&mut a, seq).await;
        assert_eq!(h["scene"]["parts"], steps, "Steps = {steps}");
        // The page is told which results came from the cache (the generator did not run).
        let cached = h["scene"]["reports"][0]["cached"].clone();
        assert_eq!(cached, json!(seq != 1), "Steps = {steps}: {h}");
    }
    // The results of 10 and of 30 were held by the undo steps of the changes away from
    // them, intact: they came back from there, and no entry was read.
    assert_eq!(
        (hits(), cache.kept()),
        (0, 2),
        "10 and 30 again were cache hits"
    );
    // The Regenerate button on untouched results keeps them: no entry is read.
    send(&mut a, json!({"type":"regenerate","seq":4,"model":model})).await;
    let h = until_seq(&mut a, 4).await;
    assert_eq!(h["scene"]["parts"], 30);
    assert_eq!((hits(), cache.kept()), (0, 3), "kept in place");
    // Undo goes back through 10 and 30 without generating or reading anything.
    for (seq, steps) in [(5u64, 10), (6, 30)] {
        send(&mut a, json!({"type":"undo","seq":seq})).await;
        let h = until_seq(&mut a, seq).await;
        assert_eq!(h["scene"]["parts"], steps, "undo to Steps = {steps}");
    }
    assert_eq!((hits(), cache.kept()), (0, 3));
}

/// The next `output` text message (skipping scene and terrain messages).
async fn output(ws: &mut Ws) -> Value {
    loop {
        let t = text(ws).await;
        if t["type"] == "output" {
            return t;
        }
    }
}

/// What a generator prints and warns, and why a run failed, reach every page's Output panel
/// (the studio showed none of it): in order, each line once, and to a page that connects
/// later too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn printed_lines_and_errors_reach_the_output_panel() {
    let (s, mut a) = open_generator(
        "Chatty.luau",
        r#"return { Attributes = { Fail = false }, OnGenerate = function(params, target)
    print("hello from the generator", 42)
    warn("careful")
    if params.Attributes.Fail then error("boom") end
    local p = Instance.new("Part")
    p.Parent = target
end }
"#,
    )
    .await;
    let o = output(&mut a).await;
    let lines: Vec<(String, String)> = o["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["level"].as_str().unwrap().into(),
                l["text"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            (
                "print".into(),
                "[Chatty] hello from the generator 42".into()
            ),
            ("warn".into(), "[Chatty] careful".into()),
        ],
        "{o}"
    );
    // (The scene came before its output: ask for it again for the model's id.)
    send(&mut a, serde_json::json!({"type": "resync", "seq": 1})).await;
    let model = first_model(&mut a, 1).await;
    send(
        &mut a,
        serde_json::json!({"type": "set_attribute", "seq": 2, "model": model, "name": "Fail", "value": true}),
    )
    .await;
    let o = output(&mut a).await;
    let texts: Vec<&str> = o["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts[..2],
        ["[Chatty] hello from the generator 42", "[Chatty] careful"]
    );
    let error = o["lines"].as_array().unwrap().last().unwrap();
    assert_eq!(error["level"], "error", "{o}");
    assert!(error["text"].as_str().unwrap().contains("boom"), "{o}");
    // A page that opens now gets the lines kept so far, once.
    let mut b = connect(s.addr()).await;
    let o = output(&mut b).await;
    assert_eq!(o["lines"].as_array().unwrap().len(), 5, "{o}");
    assert_eq!(o["skipped"], 0);
}
