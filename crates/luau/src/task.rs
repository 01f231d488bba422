//! The host's deterministic scheduler and the `task` library. Time is virtual: frames of
//! 1/60 s advanced by the host, never read from a clock, so runs are reproducible.
//!
//! A yield to the scheduler (`task.wait`, `wait`, `params:Pause()`, `Signal:Wait()`,
//! `WaitForChild`) first queues the running thread itself (`native.wait`/`native.pause`, or a
//! signal's one-shot connection), then yields with no values. So a plain coroutine
//! (`coroutine.create`/`wrap`) that waits is resumed by the scheduler like any thread it
//! started, and the `coroutine.resume` that ran it returns just `true`, as in Roblox; the
//! driver only resumes threads and reads nothing from what they yield. At every resumption
//! point it dispatches the events `signals` recorded. Its state is in `sched`.

use crate::sched::{Entry, FRAME, Resume, sched};
use mlua::thread::ThreadStatus;
use mlua::{Function, Lua, MultiValue, Table, Thread, Value};

/// Called by a run's driver whenever it is about to advance virtual time (a frame boundary):
/// the engine regenerates dirty models there while scripts wait. Installed through
/// [`crate::Host::set_frame_hook`], which takes a typed hook and wraps it in this.
pub(crate) struct FrameHook(pub(crate) Box<dyn Fn(&Lua) -> mlua::Result<()>>);

/// The Luau half of the library: wrappers that queue the running thread, then yield.
const TASK_LUAU: &str = r#"
local native = ...
local yield = coroutine.yield
local isyieldable = coroutine.isyieldable
local queue_wait, queue_pause = native.wait, native.pause
local task = {}
-- Queues the running thread to resume after `t` seconds (at least a frame) and yields; the
-- scheduler resumes it with the time waited. Where no yield is possible the bare yield
-- raises Luau's own error, before anything is queued.
local function wait_for(t)
    if not isyieldable() then return yield() end
    queue_wait(t)
    return yield()
end
function task.wait(t)
    return wait_for(t)
end
function task.spawn(f, ...)
    return native.spawn(f, ...)
end
function task.defer(f, ...)
    return native.defer(f, ...)
end
function task.delay(t, f, ...)
    return native.delay(t, f, ...)
end
function task.cancel(th)
    return native.cancel(th)
end
function task.synchronize() end
function task.desynchronize() end
local function wait(t)
    local elapsed = wait_for(t)
    -- The legacy wait returns the time waited and the time since the start (`elapsedTime`).
    return elapsed, native.now()
end
local function pause()
    if not isyieldable() then return yield() end
    queue_pause()
    return yield()
end
return table.freeze(task), wait, pause, wait_for
"#;

/// Installs `task`, `wait`, `delay`, `spawn` and returns the pause function used by params.
pub fn install(lua: &Lua, globals: &Table) -> mlua::Result<Function> {
    lua.set_app_data(crate::sched::Sched::default());
    crate::context::ctx(lua)?.signals.driver = Some(run_immediate);
    let native = lua.create_table()?;
    // The running thread waits `t` seconds (a frame at least): queued before it yields.
    native.set(
        "wait",
        lua.create_function(|lua, t: Value| {
            let t = t.as_number().or(t.as_integer().map(|i| i as f64));
            let dt = t.unwrap_or(0.0).max(FRAME);
            let th = lua.current_thread();
            let mut s = sched(lua)?;
            let since = s.now;
            let at = s.now + dt;
            s.schedule(at, th, Resume::Elapsed { since, wait: dt });
            Ok(())
        })?,
    )?;
    // The running thread resumes at the start of the next frame (`params:Pause()`).
    native.set(
        "pause",
        lua.create_function(|lua, ()| {
            let th = lua.current_thread();
            let mut s = sched(lua)?;
            let group = s.current;
            s.next_frame.push_back(Entry {
                thread: th,
                resume: Resume::Args(MultiValue::new()),
                group,
                depth: 0,
            });
            Ok(())
        })?,
    )?;
    native.set(
        "spawn",
        lua.create_function(|lua, (f, args): (Value, MultiValue)| {
            let th = to_thread(lua, f, "spawn")?;
            resume_now(lua, &th, args)?;
            Ok(th)
        })?,
    )?;
    native.set(
        "defer",
        lua.create_function(|lua, (f, args): (Value, MultiValue)| {
            let th = to_thread(lua, f, "defer")?;
            let mut s = sched(lua)?;
            let group = s.current;
            s.deferred.push_back(Entry {
                thread: th.clone(),
                resume: Resume::Args(args),
                group,
                depth: 0,
            });
            Ok(th)
        })?,
    )?;
    native.set(
        "delay",
        lua.create_function(|lua, (t, f, args): (Option<f64>, Value, MultiValue)| {
            let th = to_thread(lua, f, "delay")?;
            let mut s = sched(lua)?;
            let at = s.now + t.unwrap_or(0.0).max(0.0);
            s.schedule(at, th.clone(), Resume::Args(args));
            Ok(th)
        })?,
    )?;
    native.set(
        "now",
        lua.create_function(|lua, ()| Ok(crate::sched::now(lua)))?,
    )?;
    native.set(
        "cancel",
        lua.create_function(|lua, th: Thread| {
            sched(lua)?.forget(&th);
            close(lua, &th)
        })?,
    )?;
    let (task, wait, pause, wait_for): (Table, Function, Function, Function) =
        lua.load(TASK_LUAU).set_name("=[task]").call(native)?;
    // `WaitForChild` polls with it (`signals`).
    lua.set_named_registry_value(crate::sched::WAIT_FOR, wait_for)?;
    // The legacy global `spawn` runs its function at the next resumption of the scheduler,
    // as `task.delay(0, f)` does (Roblox's scheduling guide), not at once as `task.spawn`.
    let legacy_spawn = lua.create_function(|lua, f: Value| {
        let th = to_thread(lua, f, "spawn")?;
        let mut s = sched(lua)?;
        let at = s.now;
        s.schedule(at, th, Resume::Args(MultiValue::new()));
        Ok(())
    })?;
    // The capitalised forms are the deprecated spellings old scripts still use.
    for (name, f) in [
        ("spawn", legacy_spawn),
        ("delay", task.get::<Function>("delay")?),
        ("wait", wait),
    ] {
        let mut upper = name.to_owned();
        upper[..1].make_ascii_uppercase();
        globals.set(upper, f.clone())?;
        globals.set(name, f)?;
    }
    globals.set("task", task)?;
    Ok(pause)
}

/// Queues signal handlers as deferred threads of their connections' runs.
pub fn queue_ready(lua: &Lua, ready: Vec<crate::signals::Ready>) -> mlua::Result<()> {
    if ready.is_empty() {
        return Ok(());
    }
    let mut s = sched(lua)?;
    for r in ready {
        s.tracked.push((r.group, r.thread.clone()));
        s.deferred.push_back(Entry {
            thread: r.thread,
            resume: Resume::Args(r.args),
            group: r.group,
            depth: r.depth,
        });
    }
    Ok(())
}

/// A resumption point: events recorded since the last one get their handlers queued, one
/// event deeper than the thread resumed last (which recorded them).
fn flush_signals(lua: &Lua) -> mlua::Result<()> {
    let depth = std::mem::take(&mut sched(lua)?.event_depth);
    let ready = crate::signals::flush(lua, depth)?;
    queue_ready(lua, ready)
}

/// Handlers of an event fired now (`BindableEvent:Fire`): run before the call returns in a
/// place whose events are immediate, else queued as deferred.
pub fn fire_handlers(lua: &Lua, ready: Vec<crate::signals::Ready>) -> mlua::Result<()> {
    if crate::context::ctx_ref(lua)?.signals.immediate {
        run_handlers_now(lua, ready)
    } else {
        queue_ready(lua, ready)
    }
}

/// The immediate-mode driver (`SignalState::driver`): the handlers of the events the call
/// that just returned recorded run now, inside it, as in Roblox's Immediate mode.
fn run_immediate(lua: &Lua) -> mlua::Result<()> {
    let depth = sched(lua)?.event_depth;
    let ready = crate::signals::flush(lua, depth)?;
    run_handlers_now(lua, ready)
}

/// Resumes each handler now, as a thread of its connection's run at its event depth; one
/// that waits is tracked with that run, as a queued handler is.
fn run_handlers_now(lua: &Lua, ready: Vec<crate::signals::Ready>) -> mlua::Result<()> {
    for r in ready {
        if r.thread.status() != ThreadStatus::Resumable {
            continue;
        }
        let (group, depth) = {
            let mut s = sched(lua)?;
            let group = std::mem::replace(&mut s.current, r.group);
            (group, std::mem::replace(&mut s.event_depth, r.depth))
        };
        let result = resume_now(lua, &r.thread, r.args);
        let mut s = sched(lua)?;
        s.current = group;
        s.event_depth = depth;
        if r.thread.status() == ThreadStatus::Resumable {
            s.tracked.push((r.group, r.thread));
        }
        drop(s);
        result?;
    }
    Ok(())
}

/// An error that ended a thread other than a run's main thread (a spawned or delayed
/// thread, a handler): reported, as Roblox prints it, and fired as `LogService.MessageOut`
/// (MessageError) and `ScriptContext.Error` (message, stack trace), not raised anywhere.
fn report_thread_error(lua: &Lua, e: &mlua::Error) -> mlua::Result<()> {
    let line = e.to_string();
    let (message, stack) = line
        .split_once("\nstack traceback:\n")
        .unwrap_or((line.as_str(), ""));
    let message = message.strip_prefix("runtime error: ").unwrap_or(message);
    crate::signals::script_output(
        lua,
        crate::context::MessageType::Error,
        line.clone(),
        message,
        Some(stack),
    )
}

/// Resumes `th` now, inside the running code (`task.spawn`, an immediate event's handler).
/// A run's main thread resumed here (a library resuming the thread it suspended) may end
/// here: its run takes the values or the error, not the caller; another thread's error is
/// reported, as Roblox prints it, not raised in the caller.
fn resume_now(lua: &Lua, th: &Thread, args: MultiValue) -> mlua::Result<()> {
    let step = drive(lua, th, Resume::Args(args));
    if th.status() != ThreadStatus::Resumable
        && let Some(run) = sched(lua)?.run_of_main(th)
    {
        run.main_end = Some(step.map(|s| match s {
            Step::Finished(v) => v,
            Step::Yielded => MultiValue::new(),
        }));
        return Ok(());
    }
    if let Err(e) = step {
        report_thread_error(lua, &e)?;
    }
    Ok(())
}

/// RunService frame stepping: when `group` listens to Heartbeat/Stepped and its next entry
/// is more than a frame away (or nothing is queued and it waits on a frame signal, or its
/// main thread still waits — `main_waits` — and a frame handler may wake it, as a
/// Heartbeat-driven timer such as Promise.delay's does), one empty frame passes:
/// the clock advances by [`FRAME`], the frame hook runs (`frames`: a top-level run's), and
/// the frame signals fire — every connection's for a run to completion, the run's own for
/// a generation stepped frame by frame (`only`: other runs on the VM step their own).
/// Returns whether a frame was stepped.
fn step_empty_frame(
    lua: &Lua,
    group: u32,
    frames: bool,
    only: Option<u32>,
    main_waits: bool,
) -> mlua::Result<bool> {
    let next = {
        let s = sched(lua)?;
        s.next_time(group)
    };
    let now = sched(lua)?.now;
    let step = match next {
        Some(t) => t > now + FRAME * 0.5 && crate::signals::frame_listeners(lua, group)?,
        None if main_waits => crate::signals::frame_listeners(lua, group)?,
        None => crate::signals::frame_waiters(lua, group)?,
    };
    if !step {
        return Ok(false);
    }
    let now = {
        let mut s = sched(lua)?;
        s.now += FRAME;
        s.now
    };
    if frames {
        run_frame_hook(lua)?;
    }
    fire_frame(lua, now, FRAME, only)?;
    Ok(true)
}

fn fire_frame(lua: &Lua, now: f64, dt: f64, only: Option<u32>) -> mlua::Result<()> {
    sched(lua)?.last_frame = now;
    let ready = match only {
        Some(group) => crate::signals::fire_group_frame(lua, group, now, dt)?,
        None => crate::signals::fire_frame(lua, now, dt)?,
    };
    queue_ready(lua, ready)
}

fn to_thread(lua: &Lua, f: Value, what: &str) -> mlua::Result<Thread> {
    let th = match f {
        Value::Function(f) => crate::env::new_thread(lua, f)?,
        Value::Thread(t) => t,
        other => {
            return Err(mlua::Error::runtime(format!(
                "invalid argument #1 to '{what}' (function or thread expected, got {})",
                procmodel_luau_types::type_name(&other)
            )));
        }
    };
    let mut s = sched(lua)?;
    let group = s.current;
    // Finished threads need no ending: drop them now and then, so a run that starts
    // threads in a loop holds only the live ones (amortised O(1) per thread).
    if s.tracked.len() >= 1024 && s.tracked.len().is_power_of_two() {
        s.tracked
            .retain(|(_, t)| t.status() == ThreadStatus::Resumable);
    }
    s.tracked.push((group, th.clone()));
    Ok(th)
}

fn close(lua: &Lua, th: &Thread) -> mlua::Result<()> {
    if th.status() == ThreadStatus::Resumable {
        let close: Function = lua.named_registry_value("procmodel.coroutine_close")?;
        let _ = close.call::<MultiValue>(th.clone());
    }
    Ok(())
}

/// Outcome of resuming a thread once.
pub enum Step {
    Finished(MultiValue),
    Yielded,
}

/// Resumes `th` and queues it again according to what it yielded. Errors propagate.
fn drive(lua: &Lua, th: &Thread, resume: Resume) -> mlua::Result<Step> {
    let args = match resume {
        Resume::Args(a) => a,
        Resume::Elapsed { since, wait } => {
            let now = sched(lua)?.now;
            let mut m = MultiValue::new();
            m.push_back(Value::Number((now - since).max(wait)));
            m
        }
    };
    let out: MultiValue = th.resume(args)?;
    if th.status() != ThreadStatus::Resumable {
        return Ok(Step::Finished(out));
    }
    // A yield to the scheduler queued the thread before yielding; after a plain
    // coroutine.yield() it stays suspended until someone resumes it explicitly.
    Ok(Step::Yielded)
}

/// Runs `main` to completion as a new run (group), stepping virtual time as needed.
/// `hooks(true)` is called before each resumption (the watchdog arms there), `hooks(false)`
/// after it; with `frames`, the [`FrameHook`] (if installed) runs at frame boundaries — only
/// top-level script runs drive frames, never a generation.
pub fn run_to_completion(
    lua: &Lua,
    main: &Thread,
    args: MultiValue,
    hooks: &dyn Fn(bool),
    frames: bool,
) -> mlua::Result<(u32, MultiValue)> {
    let (group, outer, saved) = {
        let mut s = sched(lua)?;
        let g = s.new_group();
        s.set_main(g, main);
        if frames {
            s.set_script(g);
        }
        let outer = std::mem::replace(&mut s.current, g);
        let saved = s.enter(g);
        (g, outer, saved)
    };
    let result = run_group(lua, group, main, args, hooks, frames);
    {
        let mut s = sched(lua)?;
        s.current = outer;
        s.leave(group, saved);
    }
    result.map(|v| (group, v))
}

/// How a run's main thread ended that the scheduler did not resume to its end: the values
/// or error a `task.spawn` recorded, else (a `coroutine.resume` from Luau, which kept them)
/// its status.
fn main_end(lua: &Lua, main: &Thread) -> mlua::Result<MultiValue> {
    if let Some(end) = sched(lua)?
        .run_of_main(main)
        .and_then(|r| r.main_end.take())
    {
        return end;
    }
    match main.status() {
        ThreadStatus::Error => Err(mlua::Error::runtime(
            "the run's main thread failed while coroutine.resume ran it (the error went to that call)",
        )),
        _ => Ok(MultiValue::new()),
    }
}

/// The error of a run whose main thread is suspended with nothing left to resume it: what
/// it waits on when that is a signal's `Wait()` (`VideoFrame.Loaded`, `Part.Touched`).
fn nothing_resumes(lua: &Lua, main: &Thread, what: &str) -> mlua::Error {
    let Ok(c) = crate::context::ctx(lua) else {
        return mlua::Error::runtime(format!("the {what} yielded and nothing will resume it"));
    };
    let Some((target, name, kind)) = c.signals.waited_on(main) else {
        return mlua::Error::runtime(format!(
            "the {what} yielded and nothing will resume it (a coroutine.yield outside task.wait?)"
        ));
    };
    let signal = match c.dom.get_by_ref(target) {
        Some(_) => format!("{}.{name}", c.full_name(target)),
        None => name.to_owned(),
    };
    let outside = kind == crate::signal_state::Kind::Never;
    let why = if outside {
        "it never fires here (procmodel builds scenes: no players, input, physics or media loading)"
    } else {
        "nothing left running will fire it"
    };
    mlua::Error::runtime(format!("the {what} waits in {signal}:Wait() and {why}"))
}

fn run_group(
    lua: &Lua,
    group: u32,
    main: &Thread,
    args: MultiValue,
    hooks: &dyn Fn(bool),
    frames: bool,
) -> mlua::Result<MultiValue> {
    hooks(true);
    let first = drive(lua, main, Resume::Args(args));
    hooks(false);
    let out = match first? {
        Step::Finished(v) => v,
        Step::Yielded => match step_group(lua, group, Some(main), hooks, frames)? {
            Some(v) => v,
            // Only top-level scripts drive frames; the other runs are generations.
            None => {
                let what = if frames { "script" } else { "generator" };
                return Err(nothing_resumes(lua, main, what));
            }
        },
    };
    if frames {
        // A script's threads outlive its main chunk, as a Roblox Script's do: what it
        // deferred, spawned or delayed runs before the run is over (a generation's leaked
        // threads are ended instead, SPEC §4). Background threads still waiting at the
        // run's --max-wait are ended with a warning: the script itself finished.
        if let Err(e) = step_group(lua, group, None, hooks, frames) {
            if !e.to_string().contains(crate::error::WAIT_LIMIT) {
                return Err(e);
            }
            crate::context::ctx(lua)?.log(
                crate::context::LogLevel::Warn,
                format!("the script finished; its background threads were ended: {e}"),
            );
        }
    }
    Ok(out)
}

/// Resumes the threads of `group` in scheduler order, stepping virtual time, until `main`
/// finishes (its results), or — without a main thread — until none of them is waiting for
/// anything (None; also when `main` waits for nothing).
fn step_group(
    lua: &Lua,
    group: u32,
    main: Option<&Thread>,
    hooks: &dyn Fn(bool),
    frames: bool,
) -> mlua::Result<Option<MultiValue>> {
    // The time of the last empty frame stepped for frame signals: an entry due then does not
    // run the frame again.
    let mut stepped = f64::NAN;
    loop {
        flush_signals(lua)?;
        if step_empty_frame(lua, group, frames, None, main.is_some())? {
            stepped = sched(lua)?.now;
            sched(lua)?.check_run(group)?;
            continue;
        }
        let next = sched(lua)?.pop(group);
        let Some((entry, frame)) = next else {
            return Ok(None);
        };
        if entry.thread.status() != ThreadStatus::Resumable {
            // A waiting coroutine that someone resumed by hand and that has ended since.
            continue;
        }
        sched(lua)?.check_run(group)?;
        let now = sched(lua)?.now;
        if frame && now != stepped {
            if frames {
                run_frame_hook(lua)?;
            }
            let dt = now - sched(lua)?.last_frame;
            fire_frame(lua, now, dt, None)?;
        }
        let is_main = main.is_some_and(|m| entry.thread == *m);
        {
            let mut s = sched(lua)?;
            s.current = group;
            s.event_depth = entry.depth;
        }
        hooks(true);
        let step = drive(lua, &entry.thread, entry.resume);
        hooks(false);
        match step {
            Ok(Step::Finished(v)) if is_main => return Ok(Some(v)),
            Ok(_) => {}
            Err(e) if is_main => return Err(e),
            Err(e) => {
                // An error in a spawned thread is reported, not fatal to the run (Roblox prints it).
                report_thread_error(lua, &e)?;
            }
        }
        if let Some(m) = main.filter(|m| m.status() != ThreadStatus::Resumable) {
            return main_end(lua, m).map(Some);
        }
    }
}

fn run_frame_hook(lua: &Lua) -> mlua::Result<()> {
    let hook = lua.remove_app_data::<FrameHook>();
    let result = match &hook {
        Some(h) => (h.0)(lua),
        None => Ok(()),
    };
    if let Some(h) = hook {
        lua.set_app_data(h);
    }
    result
}

/// How far a frame-bounded run got.
pub enum Progress {
    Done,
    /// Waiting for a later frame (a `task.wait`, or a `Pause()` the host asked for).
    Suspended,
}

/// A run stepped frame by frame (an engine generation): see [`start_run`] and [`pump`].
pub struct Run {
    pub group: u32,
    main: Thread,
}

/// Starts `f` as a new run and steps it until it finishes or waits for a later frame.
pub fn start_run(
    lua: &Lua,
    f: Function,
    args: MultiValue,
    hooks: &dyn Fn(bool),
) -> mlua::Result<(Run, Progress)> {
    let main = crate::env::new_thread(lua, f)?;
    let (group, outer, saved) = {
        let mut s = sched(lua)?;
        let g = s.new_group();
        s.set_main(g, &main);
        let outer = std::mem::replace(&mut s.current, g);
        let saved = s.enter(g);
        (g, outer, saved)
    };
    hooks(true);
    let first = drive(lua, &main, Resume::Args(args));
    hooks(false);
    {
        let mut s = sched(lua)?;
        s.current = outer;
        s.leave(group, saved);
    }
    let run = Run { group, main };
    match first? {
        Step::Finished(_) => Ok((run, Progress::Done)),
        Step::Yielded => {
            let p = pump(lua, &run, 0, hooks)?;
            Ok((run, p))
        }
    }
}

/// Steps a run, crossing at most `frames` frame boundaries, until it finishes or must wait
/// for a later frame.
pub fn pump(lua: &Lua, run: &Run, frames: u32, hooks: &dyn Fn(bool)) -> mlua::Result<Progress> {
    let (outer, saved) = {
        let mut s = sched(lua)?;
        (s.current, s.enter(run.group))
    };
    let result = pump_inner(lua, run, frames, hooks);
    {
        let mut s = sched(lua)?;
        s.current = outer;
        s.leave(run.group, saved);
    }
    result
}

fn pump_inner(lua: &Lua, run: &Run, frames: u32, hooks: &dyn Fn(bool)) -> mlua::Result<Progress> {
    let mut frames_left = frames;
    // The frame boundary the next entry crosses is paid for (one of `frames`); the empty
    // frames stepped on the way to it, as a run to completion steps them, are not.
    let mut paid = false;
    let mut stepped = f64::NAN;
    loop {
        if run.main.status() != ThreadStatus::Resumable {
            return main_end(lua, &run.main).map(|_| Progress::Done);
        }
        flush_signals(lua)?;
        let next = sched(lua)?.peek(run.group);
        let crosses = match next {
            Some(crosses) => crosses,
            // Only frame signals are left (a `Heartbeat:Wait()`, or a handler that may wake
            // the main thread): the next frame.
            None if crate::signals::frame_listeners(lua, run.group)? => true,
            None => return Err(nothing_resumes(lua, &run.main, "generator")),
        };
        if crosses && !paid {
            if frames_left == 0 {
                return Ok(Progress::Suspended);
            }
            frames_left -= 1;
            paid = true;
        }
        if step_empty_frame(lua, run.group, false, Some(run.group), true)? {
            stepped = sched(lua)?.now;
            sched(lua)?.check_run(run.group)?;
            continue;
        }
        let Some((entry, frame)) = sched(lua)?.pop(run.group) else {
            return Ok(Progress::Suspended);
        };
        if entry.thread.status() != ThreadStatus::Resumable {
            continue;
        }
        paid = false;
        sched(lua)?.check_run(run.group)?;
        let now = sched(lua)?.now;
        if frame && now != stepped {
            let dt = now - sched(lua)?.last_frame;
            fire_frame(lua, now, dt, Some(run.group))?;
        }
        let is_main = entry.thread == run.main;
        {
            let mut s = sched(lua)?;
            s.current = run.group;
            s.event_depth = entry.depth;
        }
        hooks(true);
        let step = drive(lua, &entry.thread, entry.resume);
        hooks(false);
        match step {
            Ok(Step::Finished(_)) if is_main => return Ok(Progress::Done),
            Ok(_) => {}
            Err(e) if is_main => return Err(e),
            Err(e) => {
                report_thread_error(lua, &e)?;
            }
        }
    }
}

/// Ends every thread that run `group` started and left alive (the generator's leaked
/// `task.spawn`/`delay`s) and drops its queued entries. Returns how many were alive.
pub fn end_leaked(lua: &Lua, group: u32) -> mlua::Result<usize> {
    // The run's connections are cut with its threads.
    crate::signals::end_group(lua, group)?;
    crate::classes::services::end_shared_tables(lua, group)?;
    let tracked = {
        let mut s = sched(lua)?;
        s.waiting.retain(|_, e| e.group != group);
        s.deferred.retain(|e| e.group != group);
        s.next_frame.retain(|e| e.group != group);
        s.runs.retain(|r| r.group != group);
        let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut s.tracked)
            .into_iter()
            .partition(|(g, _)| *g == group);
        s.tracked = rest;
        mine
    };
    let mut alive = 0;
    for (_, th) in &tracked {
        if th.status() == ThreadStatus::Resumable {
            alive += 1;
            close(lua, th)?;
        }
    }
    Ok(alive)
}
