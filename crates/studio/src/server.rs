//! The HTTP/WebSocket server: embedded assets, the Host/Origin checks (the server can write
//! files, so another site or a DNS-rebound name must not reach it), one WebSocket per page
//! (edits in, latest snapshot out), and the export downloads.

use crate::output::SharedOutput;
use crate::protocol::{self, ClientMessage};
use crate::session::{self, Defaults, Opened, Published, Publisher, SharedDefaults};
use crate::{Options, Studio, StudioError, watch};
use axum::Router;
use axum::body::Body;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use procmodel_engine::thread::{Command, EngineThread, Reply, Responder, ThreadError};
use procmodel_engine::{Engine, EngineConfig};
use rbx_types::{Ref, Variant};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

#[derive(rust_embed::RustEmbed)]
#[folder = "web/"]
struct Assets;

/// An edit waiting for the frame that includes it.
struct Pending {
    conn: u64,
    seq: u64,
    at: Instant,
    /// `Published::gen_total_ms` when it arrived.
    gen_before: f64,
}

pub(crate) struct App {
    engine: EngineThread<Published>,
    defaults: SharedDefaults,
    opened: Opened,
    revisions: tokio::sync::watch::Receiver<u64>,
    pending: Arc<Mutex<BTreeMap<u64, Pending>>>,
    next_conn: AtomicU64,
    /// The page whose drag (`gesture_start`) is open: its edits join one undo step until it
    /// ends the drag or leaves; another page's edit ends it first.
    gesture: Mutex<Option<u64>>,
    hosts: Vec<String>,
    origins: Vec<String>,
    web_dir: Option<PathBuf>,
    glb: Option<crate::GlbWriter>,
    output: SharedOutput,
    /// The script files watched and their scripts (a project read again replaces them).
    sources: watch::Sources,
    /// The files a Rojo project was built from (a project read again replaces them).
    built: watch::Built,
    /// Hot reload, once it runs.
    watcher: Arc<OnceLock<Arc<watch::Watcher>>>,
}

pub(crate) fn start(options: Options) -> Result<Studio, StudioError> {
    // Bound here (std), served on the server thread's runtime: `start` may be called from
    // inside another runtime (tests) without blocking on one.
    let bind_error = |e: std::io::Error| StudioError::Bind {
        port: options.port,
        message: e.to_string(),
    };
    let listener =
        std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, options.port)).map_err(bind_error)?;
    listener.set_nonblocking(true).map_err(bind_error)?;
    let addr: SocketAddr = listener.local_addr().map_err(bind_error)?;

    let defaults: SharedDefaults = Arc::new(Mutex::new(Defaults::default()));
    let (opened_tx, opened_rx) = std::sync::mpsc::channel::<Opened>();
    let path = options.path.clone();
    let config = EngineConfig {
        host: options.host.clone(),
        cache: options.cache.clone(),
        ..EngineConfig::default()
    };
    let publisher_defaults = defaults.clone();
    let watcher: Arc<OnceLock<Arc<watch::Watcher>>> = Arc::new(OnceLock::new());
    let publisher_watcher = watcher.clone();
    let mut publisher: Option<Publisher> = None;
    let output: SharedOutput = Arc::default();
    let publisher_output = output.clone();
    let (open_tx2, open_rx2) = std::sync::mpsc::channel::<Opened>();
    let engine = EngineThread::spawn(
        move || {
            let (engine, opened) = session::open(&path, config)?;
            let _ = opened_tx.send(opened.clone());
            let _ = open_tx2.send(opened);
            Ok(engine)
        },
        move |engine: &mut Engine, step| {
            let p = publisher.get_or_insert_with(|| {
                let opened = open_rx2.recv().expect("sent before the first publication");
                Publisher::new(
                    opened,
                    publisher_defaults.clone(),
                    publisher_watcher.clone(),
                    publisher_output.clone(),
                )
            });
            p.publish(engine, step)
        },
    )
    .map_err(|e| StudioError::Open(e.to_string()))?;
    let opened = opened_rx
        .recv()
        .map_err(|_| StudioError::Open("the engine did not open the file".into()))?;

    let (rev_tx, rev_rx) = tokio::sync::watch::channel(0u64);
    engine.subscribe(Box::new(move |rev| {
        rev_tx.send_replace(rev);
    }));
    let port = addr.port();
    let app = Arc::new(App {
        engine,
        defaults,
        opened: opened.clone(),
        revisions: rev_rx,
        pending: Arc::new(Mutex::new(BTreeMap::new())),
        next_conn: AtomicU64::new(1),
        gesture: Mutex::new(None),
        hosts: vec![format!("127.0.0.1:{port}"), format!("localhost:{port}")],
        origins: vec![
            format!("http://127.0.0.1:{port}"),
            format!("http://localhost:{port}"),
        ],
        web_dir: options.web_dir.clone(),
        glb: options.glb.clone(),
        output,
        sources: Arc::new(Mutex::new(opened.sources.clone())),
        built: Arc::new(Mutex::new(opened.project_files.clone())),
        watcher: watcher.clone(),
    });
    // The app is reached weakly: the watcher must not keep the server alive.
    let weak = Arc::downgrade(&app);
    let project = procmodel_engine::is_rojo_project(&opened.file);
    let folder = opened.generator_file && procmodel_engine::module_folder(&opened.file).is_some();
    let watching = watch::start(
        app.sources.clone(),
        project || folder,
        app.built.clone(),
        move |changes| {
            let Some(app) = weak.upgrade() else { return };
            for change in changes {
                match change {
                    watch::Change::Generator(file, module) => reload(&app, file, module),
                    watch::Change::Required(path) => reload_required(&app, path),
                    watch::Change::Structure if project => reread(&app, Tree::Project),
                    watch::Change::Structure => reread(&app, Tree::ModuleFolder),
                }
            }
        },
    );
    if let Some(w) = &watching {
        let _ = watcher.set(w.clone());
        // The folders of the files the first generations required (later publications add
        // the folders of files required after).
        let w = w.clone();
        let _ = app.engine.submit(
            Command::Query(Box::new(move |engine: &mut Engine| {
                w.watch_folders_of(&engine.module_files());
                Ok(Reply::Done)
            })),
            None,
        );
    }
    let router = Router::new()
        .route("/", get(index))
        .route("/ws", get(ws))
        .route("/export/{format}", get(export))
        .route("/{*path}", get(asset))
        .layer(middleware::from_fn_with_state(app.clone(), check_host))
        .with_state(app.clone());
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("procmodel-studio".into())
        .spawn(move || {
            let _watcher = watching;
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("procmodel-studio-io")
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("procmodel studio: cannot start the server: {e}");
                    return;
                }
            };
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                let _ = axum::serve(listener, router)
                    .with_graceful_shutdown(async move {
                        let _ = stop_rx.await;
                    })
                    .await;
            });
            // Pages still connected hold the app; the engine thread ends with the last one.
            drop(app);
            runtime.shutdown_background();
        })
        .map_err(|e| StudioError::Runtime(e.to_string()))?;
    Ok(Studio {
        addr,
        stop: Some(stop_tx),
        thread: Some(thread),
    })
}

fn forbidden(message: String) -> Response {
    (StatusCode::FORBIDDEN, message).into_response()
}

/// Refuses requests whose Host is not this server's loopback address (DNS rebinding) and
/// requests sent from another origin.
async fn check_host(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !app.hosts.iter().any(|h| h == host) {
        return forbidden(format!(
            "refused: Host '{host}' is not this studio's address ({})",
            app.hosts.join(" or ")
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !app.origins.iter().any(|o| o == origin) {
            return forbidden(format!(
                "refused: Origin '{origin}' is not this studio's page"
            ));
        }
    }
    next.run(req).await
}

async fn index(State(app): State<Arc<App>>) -> Response {
    serve_asset(&app, "index.html")
}

async fn asset(State(app): State<Arc<App>>, UrlPath(path): UrlPath<String>) -> Response {
    serve_asset(&app, &path)
}

fn serve_asset(app: &App, path: &str) -> Response {
    if path.split('/').any(|c| c == ".." || c.is_empty()) {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    }
    let bytes: Option<Vec<u8>> = match &app.web_dir {
        Some(dir) => std::fs::read(dir.join(path)).ok(),
        None => Assets::get(path).map(|f| f.data.into_owned()),
    };
    let Some(bytes) = bytes else {
        return (StatusCode::NOT_FOUND, format!("not found: /{path}")).into_response();
    };
    let mime = match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        _ => "application/octet-stream",
    };
    (
        [
            (header::CONTENT_TYPE, mime),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        bytes,
    )
        .into_response()
}

async fn ws(State(app): State<Arc<App>>, upgrade: WebSocketUpgrade) -> Response {
    upgrade
        .max_message_size(1 << 20)
        .on_upgrade(move |socket| connection(app, socket))
}

/// One page: its edits go to the engine thread; it receives the latest snapshot whenever
/// there is a newer one (a slow page skips revisions, it never queues them).
async fn connection(app: Arc<App>, mut socket: WebSocket) {
    let conn = app.next_conn.fetch_add(1, Ordering::Relaxed);
    let (out_tx, mut out_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let mut revisions = app.revisions.clone();
    let mut sent = Sent::default();
    // A page that (re)connects gets the current scene at once.
    if send_latest(&app, conn, &mut socket, &mut sent)
        .await
        .is_err()
    {
        return;
    }
    loop {
        tokio::select! {
            msg = socket.recv() => match msg {
                Some(Ok(Message::Text(text))) => handle(&app, conn, text.as_str(), &out_tx),
                Some(Ok(Message::Binary(_))) => {
                    let _ = out_tx.send(protocol::error(None, "malformed message: binary messages are not accepted"));
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => {}
            },
            Some(text) = out_rx.recv() => {
                if socket.send(Message::Text(text.into())).await.is_err() {
                    break;
                }
            }
            changed = revisions.changed() => {
                if changed.is_err() {
                    break;
                }
                if send_latest(&app, conn, &mut socket, &mut sent).await.is_err() {
                    break;
                }
            }
        }
    }
    lock(&app.pending).retain(|_, p| p.conn != conn);
    // A page that went away mid-drag never sends its gesture's end (another page's may be
    // open by now: only its own is ended).
    let mut gesture = lock(&app.gesture);
    if *gesture == Some(conn) {
        *gesture = None;
        let _ = app.engine.submit(end_gesture(), None);
    }
}

fn end_gesture() -> Command {
    Command::With(Box::new(|engine: &mut Engine| {
        engine.end_gesture();
        Ok(Reply::Done)
    }))
}

/// Keeps a drag to the page that opened it, before `msg` from page `conn` is queued: a
/// drag another page left open is ended first (its page may have gone without its end
/// reaching the engine yet), and so the edit is a step of its own. Returns false for a
/// `gesture_end` of a drag the page does not have open (nothing to do).
fn own_gesture(app: &App, conn: u64, msg: &ClientMessage) -> bool {
    let mut gesture = lock(&app.gesture);
    if matches!(msg, ClientMessage::GestureEnd { .. }) {
        if *gesture != Some(conn) {
            return false;
        }
        *gesture = None;
        return true;
    }
    let edit = !matches!(
        msg,
        ClientMessage::Resync { .. } | ClientMessage::Cancel { .. }
    );
    if edit && gesture.is_some_and(|owner| owner != conn) {
        let _ = app.engine.submit(end_gesture(), None);
        *gesture = None;
    }
    if matches!(msg, ClientMessage::GestureStart { .. }) {
        *gesture = Some(conn);
    }
    true
}

/// What a page was sent last.
#[derive(Default)]
struct Sent {
    revision: u64,
    terrain: u64,
    /// The number of the next Output line the page has not been sent.
    output: u64,
}

async fn send_latest(
    app: &App,
    conn: u64,
    socket: &mut WebSocket,
    sent: &mut Sent,
) -> Result<(), axum::Error> {
    let Some(frame) = app.engine.latest() else {
        return Ok(());
    };
    if frame.revision <= sent.revision {
        return Ok(());
    }
    sent.revision = frame.revision;
    let p = &frame.value;
    // A changed terrain goes first, so the scene message that follows presents with it.
    if p.terrain.id != sent.terrain {
        sent.terrain = p.terrain.id;
        let header = serde_json::to_string(&*p.terrain).unwrap_or_default();
        let header = format!("{{\"type\":\"terrain\",\"terrain\":{header}}}");
        let bytes = protocol::terrain_message(&header, &p.terrain.body);
        socket.send(Message::Binary(bytes.into())).await?;
    }
    // The edits of this page the snapshot includes, with the server's share of their latency
    // and the generation time since they arrived. Only a settled snapshot (nothing in
    // flight, nothing dirty) has their results in its geometry.
    let mut seqs = Vec::new();
    if p.settled {
        let mut pending = lock(&app.pending);
        let done: Vec<u64> = pending
            .range(..=p.max_command)
            .filter(|(_, e)| e.conn == conn)
            .map(|(id, _)| *id)
            .collect();
        for id in done {
            if let Some(e) = pending.remove(&id) {
                let server_ms = p.at.saturating_duration_since(e.at).as_secs_f64() * 1e3;
                let gen_ms = ((p.gen_total_ms - e.gen_before) * 1e3).round() / 1e3;
                seqs.push(json!({ "seq": e.seq, "server_ms": server_ms, "gen_ms": gen_ms }));
            }
        }
    }
    let send_ms = p.at.elapsed().as_secs_f64() * 1e3;
    let header = format!(
        "{{\"type\":\"scene\",\"seqs\":{},\"queued_ms\":{},\"scene\":{}}}",
        Value::from(seqs),
        send_ms,
        p.scene
    );
    let bytes = protocol::scene_message(&header, &p.body);
    socket.send(Message::Binary(bytes.into())).await?;
    // What was printed up to this snapshot (a page that skipped snapshots gets it all).
    let output = lock(&app.output).message_since(&mut sent.output);
    match output {
        Some(text) => socket.send(Message::Text(text.into())).await,
        None => Ok(()),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn parse_ref(id: &str) -> Result<Ref, String> {
    id.parse::<Ref>()
        .ok()
        .filter(|r| !r.is_none())
        .ok_or_else(|| format!("'{id}' is not an instance id"))
}

/// Handles one page message: converts it to an engine command; every failure becomes an
/// error message for that page (the connection and the scene stay).
fn handle(app: &Arc<App>, conn: u64, text: &str, out: &tokio::sync::mpsc::UnboundedSender<String>) {
    let received = Instant::now();
    let msg = match protocol::parse(text) {
        Ok(m) => m,
        Err((seq, message)) => {
            let _ = out.send(protocol::error(seq, &message));
            return;
        }
    };
    let seq = msg.seq();
    let fail = |message: String| {
        let _ = out.send(protocol::error(Some(seq), &message));
    };
    if !own_gesture(app, conn, &msg) {
        let _ = out.send(json!({ "type": "ack", "seq": seq }).to_string());
        return;
    }
    let command = match build_command(app, msg) {
        Ok(Some(c)) => c,
        Ok(None) => {
            let _ = out.send(json!({ "type": "ack", "seq": seq }).to_string());
            return;
        }
        Err(m) => return fail(m),
    };
    let tx = out.clone();
    let waiting = app.pending.clone();
    let reply: Responder = Box::new(move |r: Result<Reply, ThreadError>| {
        if matches!(r, Err(_) | Ok(Reply::Changed(false))) {
            // A refused edit is answered by its error, one that changed nothing by "nothing
            // to do": no frame includes either. (The entry is in by now: `handle` holds the
            // lock until it is.)
            lock(&waiting).retain(|_, p| !(p.conn == conn && p.seq == seq));
        }
        let text = match r {
            Ok(Reply::Saved(p)) => {
                json!({ "type": "saved", "seq": seq, "path": p.display().to_string() }).to_string()
            }
            Ok(Reply::Changed(false)) => {
                json!({ "type": "info", "seq": seq, "message": "nothing to do" }).to_string()
            }
            Ok(_) => return,
            Err(e) => protocol::error(Some(seq), &e.to_string()),
        };
        let _ = tx.send(text);
    });
    // The entry goes in before the command is queued: the frame that includes it may be
    // published before `submit` returns.
    let gen_before = app.engine.latest().map_or(0.0, |f| f.value.gen_total_ms);
    let mut pending = lock(&app.pending);
    match app.engine.submit(command, Some(reply)) {
        Ok(id) => {
            pending.insert(
                id,
                Pending {
                    conn,
                    seq,
                    at: received,
                    gen_before,
                },
            );
        }
        Err(e) => fail(e.to_string()),
    }
}

fn build_command(app: &Arc<App>, msg: ClientMessage) -> Result<Option<Command>, String> {
    Ok(Some(match msg {
        ClientMessage::SetAttribute {
            model, name, value, ..
        } => {
            let model = parse_ref(&model)?;
            let defaults = app.defaults.clone();
            Command::With(Box::new(move |engine: &mut Engine| {
                let like = attribute_type(engine, &defaults, model, &name)?;
                let value =
                    protocol::from_json(&value, &like).map_err(|e| format!("{name}: {e}"))?;
                engine
                    .set_attribute(model, &name, Some(value))
                    .map_err(|e| e.to_string())?;
                Ok(Reply::Done)
            }))
        }
        ClientMessage::ResetAttribute { model, name, .. } => {
            let model = parse_ref(&model)?;
            let defaults = app.defaults.clone();
            Command::With(Box::new(move |engine: &mut Engine| {
                let default = declared(engine, &defaults, model)
                    .and_then(|d| d.into_iter().find(|(n, _)| *n == name).map(|(_, v)| v));
                engine
                    .set_attribute(model, &name, default)
                    .map_err(|e| e.to_string())?;
                Ok(Reply::Done)
            }))
        }
        ClientMessage::SetSize { model, value, .. } => {
            let model = parse_ref(&model)?;
            let like = Variant::Vector3(rbx_types::Vector3::new(0.0, 0.0, 0.0));
            let Variant::Vector3(v) =
                protocol::from_json(&value, &like).map_err(|e| format!("Size: {e}"))?
            else {
                unreachable!("from_json keeps the type of `like`")
            };
            Command::SetSize {
                model,
                size: glam::Vec3::new(v.x, v.y, v.z),
            }
        }
        ClientMessage::SetScale { model, value, .. } => {
            let model = parse_ref(&model)?;
            let scale = value
                .as_f64()
                .filter(|s| s.is_finite())
                .ok_or_else(|| format!("Scale: expected a number, got {value}"))?;
            Command::ScaleTo {
                model,
                scale: scale as f32,
            }
        }
        ClientMessage::Regenerate { model, .. } => Command::ForceGeneration(parse_ref(&model)?),
        ClientMessage::Undo { .. } => Command::Undo,
        ClientMessage::Redo { .. } => Command::Redo,
        ClientMessage::Save { path, .. } => {
            let path = match path.filter(|p| !p.trim().is_empty()) {
                Some(p) => {
                    let p = PathBuf::from(p);
                    if p.is_relative() {
                        app.opened.save_path.with_file_name(p)
                    } else {
                        p
                    }
                }
                None => app.opened.save_path.clone(),
            };
            let ext = path
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or("")
                .to_ascii_lowercase();
            if !matches!(ext.as_str(), "rbxl" | "rbxlx" | "rbxm" | "rbxmx") {
                return Err(format!(
                    "save: {} is not a scene file (.rbxl, .rbxlx, .rbxm, .rbxmx)",
                    path.display()
                ));
            }
            Command::Save(path)
        }
        ClientMessage::Cancel { .. } => {
            app.engine.cancel().map_err(|e| e.to_string())?;
            return Ok(None);
        }
        ClientMessage::Resync { .. } => Command::Snapshot,
        ClientMessage::GestureStart { .. } => Command::With(Box::new(|engine: &mut Engine| {
            engine.begin_gesture();
            Ok(Reply::Done)
        })),
        ClientMessage::GestureEnd { .. } => end_gesture(),
    }))
}

fn declared(
    engine: &Engine,
    defaults: &SharedDefaults,
    model: Ref,
) -> Option<Vec<(String, Variant)>> {
    let generator = engine.with_dom(|d| {
        match d
            .get_by_ref(model)?
            .properties
            .get(&procmodel_dom::keys::KEYS.generator)
        {
            Some(Variant::Ref(g)) if d.get_by_ref(*g).is_some() => Some(*g),
            _ => None,
        }
    })?;
    lock(defaults).of(engine, generator)
}

/// The type an attribute's new value must have: its current value's, else its declared
/// default's. An attribute the generator lacks is an error naming what it has.
fn attribute_type(
    engine: &Engine,
    defaults: &SharedDefaults,
    model: Ref,
    name: &str,
) -> Result<Variant, String> {
    let current = engine.with_dom(|d| {
        let inst = d.get_by_ref(model)?;
        if inst.class != "ProceduralModel" {
            return Some(None);
        }
        match inst.properties.get(&procmodel_dom::keys::KEYS.attributes) {
            Some(Variant::Attributes(a)) => Some(a.get(name).cloned()),
            _ => Some(None),
        }
    });
    let Some(current) = current else {
        return Err(format!(
            "no instance {model} in the scene (a stale selection?)"
        ));
    };
    let declared = declared(engine, defaults, model).unwrap_or_default();
    if let Some(v) = current.or_else(|| {
        declared
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }) {
        return Ok(v);
    }
    let known: Vec<&str> = declared.iter().map(|(n, _)| n.as_str()).collect();
    Err(format!(
        "the generator has no attribute '{name}' (it has: {})",
        if known.is_empty() {
            "none".to_owned()
        } else {
            known.join(", ")
        }
    ))
}

/// `/export/glb` and `/export/rbxm`: the Workspace's contents as a download.
async fn export(State(app): State<Arc<App>>, UrlPath(format): UrlPath<String>) -> Response {
    let glb = match format.as_str() {
        "glb" => true,
        "rbxm" => false,
        other => {
            return (
                StatusCode::NOT_FOUND,
                format!("unknown export format '{other}' (glb or rbxm)"),
            )
                .into_response();
        }
    };
    let (tx, rx) = tokio::sync::oneshot::channel::<Result<Vec<u8>, String>>();
    let writer = app.glb.clone();
    let command = Command::Query(Box::new(move |engine: &mut Engine| {
        let ws = engine.workspace();
        let bytes = engine.with_dom(|d| {
            let roots: Vec<Ref> = d
                .get_by_ref(ws)
                .map(|w| {
                    w.children()
                        .iter()
                        .copied()
                        .filter(|&c| {
                            d.get_by_ref(c)
                                .is_some_and(|i| i.class != "Camera" && i.class != "Terrain")
                        })
                        .collect()
                })
                .unwrap_or_default();
            if glb {
                match &writer {
                    Some(write) => (write.0)(d, &roots),
                    None => procmodel_export::to_glb(d, &roots, &Default::default())
                        .map(|e| e.output)
                        .map_err(|e| e.to_string()),
                }
            } else {
                let mut out = Vec::new();
                procmodel_dom::encode_binary(&mut out, d, &roots)
                    .map(|()| out)
                    .map_err(|e| e.to_string())
            }
        });
        let _ = tx.send(bytes);
        Ok(Reply::Done)
    }));
    if let Err(e) = app.engine.submit(command, None) {
        return (StatusCode::SERVICE_UNAVAILABLE, e.to_string()).into_response();
    }
    let stem = app
        .opened
        .file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("scene")
        .replace(
            |c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_',
            "_",
        );
    match rx.await {
        Ok(Ok(bytes)) => (
            [
                (
                    header::CONTENT_TYPE,
                    if glb {
                        "model/gltf-binary".to_owned()
                    } else {
                        "application/octet-stream".to_owned()
                    },
                ),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{stem}.{format}\""),
                ),
            ],
            Body::from(bytes),
        )
            .into_response(),
        Ok(Err(e)) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("export failed: {e}"),
        )
            .into_response(),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "export failed: the engine stopped",
        )
            .into_response(),
    }
}

/// Re-reads a changed module file a generator may have required (called by the watcher);
/// a file no generator required, or one whose text is the same, changes nothing, and
/// nothing is published for it.
fn reload_required(app: &App, path: PathBuf) {
    let _ = app.engine.submit(
        Command::With(Box::new(move |engine: &mut Engine| {
            session::reload_required(engine, &path).map(Reply::Changed)
        })),
        None,
    );
}

/// What the studio opened whose structure its files make: read again when it changes.
#[derive(Clone, Copy)]
enum Tree {
    /// A Rojo project ([`Engine::reload_project`]).
    Project,
    /// A generator's module folder ([`Engine::reload_module_folder`]).
    ModuleFolder,
}

/// Reads the project or module folder again after its structure changed on disk (called by
/// the watcher): the scene is the project as it is now (or the model uses the module as it
/// is now, its attributes kept), its models generate, and the watcher follows its files. One
/// that does not build leaves the scene as it was and says why in the Output panel.
fn reread(app: &App, tree: Tree) {
    let file = app.opened.file.clone();
    let sources = app.sources.clone();
    let built = app.built.clone();
    let watcher = app.watcher.clone();
    let defaults = app.defaults.clone();
    let output = app.output.clone();
    let _ = app.engine.submit(
        Command::With(Box::new(move |engine: &mut Engine| {
            let (what, read) = match tree {
                Tree::Project => (
                    "project",
                    engine.reload_project(&file).map(|p| (p.scripts, p.files)),
                ),
                Tree::ModuleFolder => (
                    "module folder",
                    engine.reload_module_folder(&file).map(|s| (s, Vec::new())),
                ),
            };
            let shown = file.display().to_string();
            let mut out = output.lock().unwrap_or_else(|e| e.into_inner());
            match read {
                Ok((scripts, files)) => {
                    *defaults.lock().unwrap_or_else(|e| e.into_inner()) = Defaults::default();
                    if let Some(w) = watcher.get() {
                        let script_files: Vec<PathBuf> =
                            scripts.iter().map(|(p, _)| p.clone()).collect();
                        w.watch_folders_of(&script_files);
                        w.watch_folders_of(&files);
                    }
                    *sources.lock().unwrap_or_else(|e| e.into_inner()) = scripts;
                    *built.lock().unwrap_or_else(|e| e.into_inner()) = files;
                    out.push(
                        "print",
                        format!("{shown}: the {what} changed on disk and was read again"),
                    );
                }
                Err(e) => out.push(
                    "error",
                    format!("{shown}: the {what} changed on disk and does not build: {e}"),
                ),
            }
            Ok(Reply::Changed(true))
        })),
        None,
    );
}

/// Re-reads a changed generator file (called by the watcher).
fn reload(app: &App, path: PathBuf, module: Ref) {
    let _ = app
        .engine
        .submit(Command::ReloadSource { module, path }, None);
}
