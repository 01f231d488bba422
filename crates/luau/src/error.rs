//! Errors of the Luau host, stable to callers while inner details evolve.

pub use procmodel_script::HostError;
use procmodel_script::{CANCEL_MESSAGE, Limit, MEMORY_MESSAGE, RUN_LIMIT_MESSAGE, TIMEOUT_MESSAGE};

/// The VM could not be made or set up.
pub(crate) fn vm(e: mlua::Error) -> HostError {
    HostError::Vm(e.to_string())
}

/// An error raised while Luau code ran, typed: a cancellation, a limit this host enforces
/// (recognised by the texts this crate raises them with), or a script error. The message
/// and traceback are condensed to their ends when huge.
pub fn script(e: &mlua::Error) -> HostError {
    let (message, traceback) = split(e);
    let message = condense(&message);
    let traceback = traceback
        .map(|t| condense(&without_internal_frames(&t)))
        // Only the header and native frames left: no frame of the script's to show.
        .filter(|t| {
            t.lines().any(|l| {
                let l = l.trim();
                l != "stack traceback:" && !l.is_empty() && !l.starts_with("[C]:")
            })
        });
    if message.contains(CANCEL_MESSAGE) {
        return HostError::Cancelled { message, traceback };
    }
    match limit_of(&message) {
        Some(limit) => HostError::Limit {
            limit,
            message,
            traceback,
        },
        None => HostError::Script { message, traceback },
    }
}

/// `e` with `origin` (the module's file or instance path) in front of a message that names
/// no place in a script — a limit hit while the module's top level waited, with no Luau
/// frame running — so the error says which module it was.
pub(crate) fn at_origin(e: HostError, origin: &str) -> HostError {
    let prefix = |message: String| {
        if place(&message).is_some() || origin.is_empty() {
            message
        } else {
            format!("{origin}: {message}")
        }
    };
    match e {
        HostError::Script { message, traceback } => HostError::Script {
            message: prefix(message),
            traceback,
        },
        HostError::Limit {
            limit,
            message,
            traceback,
        } => HostError::Limit {
            limit,
            message: prefix(message),
            traceback,
        },
        other => other,
    }
}

/// How the wait limit's errors begin (`sched`).
pub(crate) const WAIT_LIMIT: &str = "Wait limit:";
/// How the instance quota's error begins (`classes::instance`).
pub(crate) const INSTANCE_LIMIT: &str = "instance limit exceeded";
/// How the output quota's error begins (`context`).
pub(crate) const OUTPUT_LIMIT: &str = "output limit exceeded";
/// How the voxel quota's error ends (`classes::terrain`).
pub(crate) const TERRAIN_LIMIT: &str = "(--max-terrain-mb)";

/// The limit an error message reports, by the texts this crate raises limits with.
fn limit_of(message: &str) -> Option<Limit> {
    if message.contains(TIMEOUT_MESSAGE) {
        Some(Limit::Timeout)
    } else if message.contains(RUN_LIMIT_MESSAGE) {
        Some(Limit::RunTime)
    } else if message.contains(MEMORY_MESSAGE) {
        Some(Limit::Memory)
    } else if message.contains(WAIT_LIMIT) {
        Some(Limit::Wait)
    } else if message.contains(INSTANCE_LIMIT) {
        Some(Limit::Instances)
    } else if message.contains(OUTPUT_LIMIT) {
        Some(Limit::Output)
    } else if message.contains(TERRAIN_LIMIT) {
        Some(Limit::Terrain)
    } else {
        None
    }
}

const HEAD_LINES: usize = 12;
const TAIL_LINES: usize = 6;
/// Longest line kept, in bytes.
const MAX_LINE: usize = 400;

/// Bounds an error text (a deep recursion's traceback runs to megabytes): long texts keep
/// their first and last lines around a "... N more lines" marker, and long lines are cut,
/// so a message stays a few KB wherever it is stored or shown.
pub fn condense(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let cut = |line: &str| -> String {
        if line.len() <= MAX_LINE {
            return line.to_owned();
        }
        let mut end = MAX_LINE;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}... ({} more bytes)", &line[..end], line.len() - end)
    };
    if lines.len() <= HEAD_LINES + TAIL_LINES + 1 {
        if lines.iter().all(|l| l.len() <= MAX_LINE) {
            return text.to_owned();
        }
        return lines.iter().map(|l| cut(l)).collect::<Vec<_>>().join("\n");
    }
    let mut out: Vec<String> = lines[..HEAD_LINES].iter().map(|l| cut(l)).collect();
    out.push(format!(
        "... {} more lines ...",
        lines.len() - HEAD_LINES - TAIL_LINES
    ));
    out.extend(lines[lines.len() - TAIL_LINES..].iter().map(|l| cut(l)));
    out.join("\n")
}

fn split(e: &mlua::Error) -> (String, Option<String>) {
    match e {
        mlua::Error::CallbackError { traceback, cause } => {
            let (m, t) = split(cause);
            let m = match &**cause {
                mlua::Error::RuntimeError(_) | mlua::Error::BadArgument { .. } => {
                    located(m, traceback)
                }
                _ => m,
            };
            (m, t.or_else(|| Some(traceback.clone())))
        }
        // A thread's error arrives with its traceback appended (a module's top level failed
        // inside `require`): the two are split, so the traceback loses the host's frames.
        mlua::Error::RuntimeError(m) => match m.split_once("\nstack traceback:\n") {
            Some((message, frames)) => (
                without_address(message),
                Some(format!("stack traceback:\n{frames}")),
            ),
            None => (without_address(m), None),
        },
        mlua::Error::BadArgument {
            to,
            pos,
            name,
            cause,
        } => (
            bad_argument(to.as_deref(), *pos, name.as_deref(), cause),
            None,
        ),
        mlua::Error::SyntaxError { message: m, .. } => (m.clone(), None),
        mlua::Error::MemoryError(m) => (format!("out of memory: {m}"), None),
        mlua::Error::WithContext { context, cause } => {
            let (m, t) = split(cause);
            (format!("{context}: {m}"), t)
        }
        other => (other.to_string(), None),
    }
}

/// A host function's argument that did not convert, as Roblox words it: `invalid argument
/// #2 to 'NextInteger' (number expected, got string)`, and for a method called with `.` (its
/// `self` missing or of another type) `Expected ':' not '.' calling member function
/// NextNumber`. mlua's own text (``bad argument `self` to `Random.NextNumber`: error
/// converting Lua nil to userdata``) names Rust's types.
fn bad_argument(to: Option<&str>, pos: usize, name: Option<&str>, cause: &mlua::Error) -> String {
    let method = to.map(|t| t.rsplit(['.', ':']).next().unwrap_or(t));
    if name == Some("self") {
        return match method {
            Some(m) => format!("Expected ':' not '.' calling member function {m}"),
            None => "Expected ':' not '.' calling a member function".to_owned(),
        };
    }
    let detail = match cause {
        mlua::Error::FromLuaConversionError { from, to, .. } => {
            let got = if *from == "missing argument" {
                "nil"
            } else {
                from
            };
            format!("{} expected, got {got}", luau_type_name(to))
        }
        other => split(other).0,
    };
    match method {
        Some(m) => format!("invalid argument #{pos} to '{m}' ({detail})"),
        None => format!("invalid argument #{pos} ({detail})"),
    }
}

/// The Luau type a Rust conversion target stands for (`f64` is a number).
fn luau_type_name(rust: &str) -> &str {
    match rust {
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
        | "usize" | "f32" | "f64" | "Number" | "Integer" => "number",
        "String" | "BString" | "str" | "&str" | "OsString" | "PathBuf" => "string",
        "bool" => "boolean",
        "Table" => "table",
        "Function" => "function",
        "Thread" => "thread",
        "Buffer" => "buffer",
        "Vector" => "vector",
        other => other,
    }
}

/// `message` raised by a host function (an instance's missing member, a bad argument) with
/// the place in the script that called it in front — `Gen.luau:3: X is not a valid member
/// of …` — as Roblox prefixes errors its API raises. Kept as it is when it already starts
/// with a place (`error` adds one), when the innermost frame is `error` itself (`error(m, 0)`
/// asks for none), or when no Luau frame called it.
fn located(message: String, traceback: &str) -> String {
    let mut frames = traceback
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("stack traceback"));
    let mut at = None;
    for frame in frames.by_ref() {
        if let Some(rest) = frame.strip_prefix("[C]:") {
            if rest.contains("function 'error'") {
                return message;
            }
            continue;
        }
        at = place(frame);
        match at.map(chunk_of) {
            // Called by `pcall` itself, which Luau implements in C: no Luau caller.
            Some("[pcall]") => return message,
            // The host's own Luau code (`require`, `task`, GeometryService, …) is not the
            // caller.
            Some(chunk) if is_internal_chunk(chunk) => continue,
            _ => break,
        }
    }
    match at {
        Some(at) if place(&message).is_none() => format!("{at}: {message}"),
        _ => message,
    }
}

/// Whether `chunk` is one of the host's own Luau chunks: they are named `=[Name]` (`[pcall]`,
/// `[require]`, `[GeometryService]`, …), which no script's chunk is (scripts are named by
/// their file or instance path).
pub(crate) fn is_internal_chunk(chunk: &str) -> bool {
    chunk.len() > 2 && chunk.starts_with('[') && chunk.ends_with(']') && chunk != "[C]"
}

/// Most Luau frames a limit's traceback lists.
const STOP_FRAMES: usize = 24;

/// `message` (a limit the interrupt enforces) as an error raised in the interrupted code
/// would read: the place the script was running first (`Gen.luau:6: Script timeout: ...`),
/// its Luau frames as a traceback after — so a timeout says which loop spun. The host's own
/// chunks (`[task]`, ...) are not places of the script's. The frames are read with
/// `lua_getinfo` alone: nothing runs in the VM while it is interrupted.
pub(crate) fn at_running_code(lua: &mlua::Lua, message: &str) -> String {
    let mut frames: Vec<String> = Vec::new();
    let mut first = None;
    for level in 0..STOP_FRAMES {
        let Some(frame) = lua.inspect_stack(level, |d| {
            let source = d.source();
            if source.what == "C" {
                return None;
            }
            let chunk = source.short_src?.into_owned();
            if is_internal_chunk(&chunk) {
                return None;
            }
            let line = d.current_line()?;
            let function = match d.names().name {
                Some(name) => format!("'{name}'"),
                None => format!("<{chunk}:{}>", source.line_defined.unwrap_or(0)),
            };
            Some((format!("{chunk}:{line}"), function))
        }) else {
            break;
        };
        if let Some((place, function)) = frame {
            first.get_or_insert_with(|| place.clone());
            frames.push(format!("\t{place}: in function {function}"));
        }
    }
    match first {
        Some(place) => format!(
            "{place}: {message}\nstack traceback:\n{}",
            frames.join("\n")
        ),
        None => message.to_owned(),
    }
}

/// A traceback without the frames of the host's own Luau chunks (`[require]`'s wrapper
/// around a module's load, …) and its unnamed native functions (`[C]: in ?`: the
/// metamethods an instance's member access goes through): they are how procmodel
/// implements a call, not where the script is. A named native frame (`[C]: in function
/// 'error'`) stays, as Luau shows it.
fn without_internal_frames(traceback: &str) -> String {
    traceback
        .lines()
        .filter(|l| {
            let frame = l.trim_start();
            frame != "[C]: in ?"
                && !frame
                    .split_once(':')
                    .is_some_and(|(chunk, _)| is_internal_chunk(chunk))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The chunk of a `source:line` place.
fn chunk_of(place: &str) -> &str {
    place.rsplit_once(':').map_or(place, |(chunk, _)| chunk)
}

/// The `source:line` a text starts with (`Gen.luau:3: …`, a traceback frame
/// `Gen.luau:3: in function 'f'`), if it does.
fn place(text: &str) -> Option<&str> {
    let first = text.lines().next()?;
    let mut from = 0;
    while let Some(i) = first[from..].find(':') {
        let colon = from + i;
        let digits = first[colon + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let end = colon + 1 + digits;
        if colon > 0 && digits > 0 && first[end..].starts_with(':') {
            return Some(&first[..end]);
        }
        from = colon + 1;
    }
    None
}

/// The text an error value that is not a string (and has no `__tostring`) arrives as: its
/// type and heap address (`table: 0x…`, on the message's first line; a thread's traceback
/// follows), which changes from run to run. Stored in an error placeholder it would make
/// the same inputs save different bytes, so it becomes a fixed text naming the type.
fn without_address(message: &str) -> String {
    const KINDS: [&str; 5] = ["table", "function", "userdata", "thread", "buffer"];
    let (first, rest) = match message.split_once('\n') {
        Some((first, rest)) => (first, Some(rest)),
        None => (message, None),
    };
    match first.split_once(": 0x") {
        Some((kind, address))
            if KINDS.contains(&kind)
                && !address.is_empty()
                && address.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            let text = format!(
                "error(...) was given a {kind}, not a message (a {kind} with a __tostring \
                 metamethod shows its text)"
            );
            match rest {
                Some(rest) => format!("{text}\n{rest}"),
                None => text,
            }
        }
        _ => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracebacks_leave_out_the_host_s_own_chunks() {
        let t = "stack traceback:\n\t[C]: in ?\n\t[require]:9: in function <[require]:8>\n\tServerStorage.gen:1: in function <ServerStorage.gen:1>\n\t[require]:5: in function 'run'\n\t[C]: in function 'pcall'";
        assert_eq!(
            without_internal_frames(t),
            "stack traceback:\n\tServerStorage.gen:1: in function <ServerStorage.gen:1>\n\t[C]: in function 'pcall'"
        );
    }

    /// What a script sees when a limit is hit: the error the interrupt or the host raised,
    /// inside the callback error mlua wraps it in.
    #[allow(clippy::arc_with_non_send_sync)] // mlua's own error type holds its cause so
    fn raised(message: String) -> mlua::Error {
        mlua::Error::CallbackError {
            traceback: "stack traceback:\n  Gen:3".into(),
            cause: std::sync::Arc::new(mlua::Error::runtime(message)),
        }
    }

    /// An error a host function raises names the place in the script that called it; one
    /// that already names a place, or comes from `error(m, 0)`, is kept.
    #[test]
    fn host_errors_name_the_line_that_called_them() {
        let lua = mlua::Lua::new();
        let f = lua
            .create_function(|_, ()| -> mlua::Result<()> {
                Err(mlua::Error::runtime(
                    "Nope is not a valid member of Model \"Workspace.M\"",
                ))
            })
            .unwrap();
        lua.globals().set("member", f).unwrap();
        let run = |code: &str| {
            let e = lua
                .load(code)
                .set_name("@Gen.luau")
                .exec()
                .expect_err("it raises");
            // A plain VM appends the traceback to a script's own error: the first line is
            // the message.
            match script(&e) {
                HostError::Script { message, .. } => message.lines().next().unwrap().to_owned(),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(
            run("local a = 1\nmember()"),
            "Gen.luau:2: Nope is not a valid member of Model \"Workspace.M\""
        );
        assert_eq!(
            run("local function f()\n  member()\nend\nf()"),
            "Gen.luau:2: Nope is not a valid member of Model \"Workspace.M\""
        );
        // Through the host's Luau wrappers: `pcall` calling the function itself gives no
        // place (Luau's pcall is C), another wrapper is not the caller.
        let wrap = |chunk: &str, code: &str| {
            let f: mlua::Function = lua.load(code).set_name(chunk).eval().unwrap();
            let name = chunk.trim_start_matches("=[").trim_end_matches(']');
            lua.globals().set(name, f).unwrap();
        };
        wrap(
            "=[pcall]",
            "function(f, ...)\n  return (function(...) return ... end)(f(...))\nend",
        );
        wrap("=[require]", "function(...)\n  return member(...)\nend");
        assert_eq!(
            run("local a = 1\npcall(member)"),
            "Nope is not a valid member of Model \"Workspace.M\""
        );
        assert_eq!(
            run("local a = 1\n\nrequire(5)"),
            "Gen.luau:3: Nope is not a valid member of Model \"Workspace.M\""
        );
        assert_eq!(run("error('plain', 0)"), "plain");
        assert_eq!(run("\nerror('placed')"), "Gen.luau:2: placed");
        assert_eq!(
            place("C:\\x\\Gen.luau:12: in function 'f'"),
            Some("C:\\x\\Gen.luau:12")
        );
        assert_eq!(place("no place: here"), None);
    }

    #[test]
    fn an_error_value_without_a_message_loses_its_address() {
        for kind in ["table", "function", "userdata", "thread", "buffer"] {
            let m = without_address(&format!("{kind}: 0x00007f3a9c0b1e40"));
            assert!(!m.contains("0x") && m.contains(kind), "{m}");
        }
        // A thread's error: the value's text, then its traceback, kept.
        let m = without_address("table: 0x1f\nstack traceback:\n\tGen:1");
        assert!(
            m.starts_with("error(...) was given a table")
                && m.ends_with("\nstack traceback:\n\tGen:1"),
            "{m}"
        );
        // Messages that only look alike are kept as written.
        for kept in [
            "table: 0xzz",
            "table: 0x",
            "Gen:3: table: 0x1f",
            "vector: 0x1f",
            "attempt to index nil",
        ] {
            assert_eq!(without_address(kept), kept);
        }
    }

    #[test]
    fn every_limit_this_host_raises_is_typed_by_its_text() {
        let cases = [
            (format!("Gen:3: {TIMEOUT_MESSAGE}"), Limit::Timeout),
            (format!("Gen:3: {RUN_LIMIT_MESSAGE}"), Limit::RunTime),
            (format!("{MEMORY_MESSAGE} (64 MiB)"), Limit::Memory),
            (format!("{} the run waited 3601 s", WAIT_LIMIT), Limit::Wait),
            (
                format!("{}: a run may create at most 5 instances", INSTANCE_LIMIT),
                Limit::Instances,
            ),
            (
                format!("{}: a run may create at most 1 MB", OUTPUT_LIMIT),
                Limit::Output,
            ),
            (
                format!(
                    "Terrain: the voxels take 9 MB, over the limit of 1 MB {}",
                    TERRAIN_LIMIT
                ),
                Limit::Terrain,
            ),
        ];
        for (message, want) in cases {
            match script(&raised(message.clone())) {
                HostError::Limit {
                    limit,
                    message: m,
                    traceback,
                } => {
                    assert_eq!(limit, want, "{message}");
                    assert_eq!(m, message);
                    assert_eq!(traceback.as_deref(), Some("stack traceback:\n  Gen:3"));
                }
                other => panic!("{message}: {other:?}"),
            }
        }
        assert!(matches!(
            script(&raised(format!("Gen:2: {CANCEL_MESSAGE}"))),
            HostError::Cancelled { .. }
        ));
        assert!(matches!(
            script(&raised("Gen:1: attempt to index nil".into())),
            HostError::Script { .. }
        ));
    }

    #[test]
    fn short_texts_are_kept_as_they_are() {
        let t = "a.luau:3: boom\nstack traceback:\n  a.luau:3";
        assert_eq!(condense(t), t);
    }

    #[test]
    fn a_deep_traceback_is_condensed_to_its_ends() {
        let mut t = String::from("x.luau:1: stack overflow");
        for i in 0..20_000 {
            t.push_str(&format!("\nx.luau:{i}: function f"));
        }
        let c = condense(&t);
        assert!(c.len() < 4096, "{} bytes", c.len());
        assert!(c.starts_with("x.luau:1: stack overflow\n"));
        assert!(c.contains("... 19983 more lines ..."), "{c}");
        assert!(c.ends_with("x.luau:19999: function f"));
    }

    #[test]
    fn a_huge_line_is_cut() {
        let t = "e".repeat(1 << 20);
        let c = condense(&t);
        assert!(c.len() < 500);
        assert!(
            c.ends_with("(1048176 more bytes)"),
            "{}",
            &c[c.len() - 40..]
        );
    }
}
