//! The per-VM run context: the DOM a script sees, instance identity, limits and logs.
//! Stored as mlua app data; never a process-global registry.

use crate::instance::Instance;
use crate::props::PropCache;
use mlua::{LightUserData, Lua, Value};
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use rbx_types::Ref;
use rustc_hash::{FxHashMap, FxHashSet};
use std::ffi::c_void;

/// Where `print`/`warn` output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub level: LogLevel,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Print,
    Warn,
}

pub struct Ctx {
    /// The DataModel tree. Instances with a none parent are orphans (`Parent == nil`).
    pub dom: WeakDom,
    /// Instances whose Parent is locked by `Destroy`.
    pub destroyed: FxHashSet<Ref>,
    /// Instance handles (see [`Handles`]).
    pub handles: Handles,
    pub props: PropCache,
    /// Instances created by scripts so far in this run, and the cap (beyond Roblox).
    pub created: usize,
    pub instance_limit: Option<usize>,
    /// Captured output; also echoed to stderr when `echo` is set.
    pub log: Vec<LogLine>,
    pub echo: bool,
    /// While a generator runs: writes to instances in the scene are refused (a generator may
    /// only modify its targetContainer and instances it created).
    pub outside_write_locked: bool,
    /// Models whose `ForceGeneration()` was called, in call order.
    pub forced: Vec<Ref>,
    /// `Instance.new` class resolutions (None: not creatable).
    pub new_classes: FxHashMap<Box<str>, Option<crate::globals::NewClass>>,
    /// ModuleScripts loaded from files, for relative string requires.
    pub files: FxHashMap<Ref, std::path::PathBuf>,
}

impl Ctx {
    pub fn new(dom: WeakDom) -> mlua::Result<Ctx> {
        Ok(Ctx {
            dom,
            destroyed: FxHashSet::default(),
            handles: Handles::default(),
            props: PropCache::default(),
            created: 0,
            instance_limit: None,
            log: Vec::new(),
            echo: true,
            files: FxHashMap::default(),
            new_classes: FxHashMap::default(),
            forced: Vec::new(),
            outside_write_locked: false,
        })
    }

    /// An empty DataModel with a Workspace.
    pub fn new_datamodel() -> WeakDom {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel").with_name("Game"));
        let root = dom.root_ref();
        dom.insert(
            root,
            InstanceBuilder::new("Workspace").with_name("Workspace"),
        );
        dom
    }

    /// The Luau value for `r` (its handle, made on first use).
    pub fn push(&mut self, r: Ref) -> mlua::Result<Value> {
        if let Some(&h) = self.handles.ids.get(&r) {
            return Ok(Handles::value(h));
        }
        let class = match self.dom.get_by_ref(r) {
            Some(inst) => inst.class,
            None => return Err(mlua::Error::runtime("instance no longer exists")),
        };
        if self.handles.ids.len() >= self.handles.prune_at {
            self.handles.prune(&self.dom);
        }
        Ok(Handles::value(self.handles.make(Instance { r, class })))
    }

    /// The instance behind a Luau value, if it is a live instance handle of this VM.
    pub fn instance(&self, v: &Value) -> Option<Instance> {
        match v {
            Value::LightUserData(p) => self.handles.get(p.0 as usize as u64),
            _ => None,
        }
    }

    /// `GetFullName`: names from the top ancestor below the DataModel, joined by dots.
    pub fn full_name(&self, r: Ref) -> String {
        procmodel_dom::full_name(&self.dom, r)
    }

    /// True when `r` is a descendant of the DataModel (in the scene, not an orphan).
    pub fn in_scene(&self, r: Ref) -> bool {
        procmodel_dom::in_scene(&self.dom, r)
    }

    /// Refuses a generator's write to an instance in the scene (SPEC §4 sandboxing).
    pub fn check_write(&self, r: Ref, what: impl FnOnce() -> String) -> mlua::Result<()> {
        if self.outside_write_locked && self.in_scene(r) {
            return Err(mlua::Error::runtime(format!(
                "{}: a generator may only modify its targetContainer, and {} is outside it (capability AccessOutsideWrite is not granted)",
                what(),
                self.full_name(r)
            )));
        }
        Ok(())
    }

    pub fn log(&mut self, level: LogLevel, message: String) {
        if self.echo {
            match level {
                LogLevel::Print => eprintln!("{message}"),
                LogLevel::Warn => eprintln!("warning: {message}"),
            }
        }
        self.log.push(LogLine { level, message });
    }
}

/// Instance handles. Luau sees an instance as a light userdata whose pointer value is a
/// handle: `generation << 32 | (slot + 1)`. One instance is one value while it lives, so `==`,
/// table keys and `rawequal` give identity for free and no Luau object exists per instance.
/// Slots of instances that left the DOM (destroyed by the engine, moved into undo history)
/// are reused with a new generation, so a stale handle is refused, never aliased. Slots are
/// assigned and reused in a deterministic order (handle values decide the iteration order of
/// instance-keyed tables).
pub struct Handles {
    slots: Vec<Slot>,
    free: Vec<u32>,
    ids: FxHashMap<Ref, u64>,
    /// Prune when this many handles exist (amortised: twice the live count after a prune).
    prune_at: usize,
}

struct Slot {
    inst: Option<Instance>,
    generation: u32,
}

impl Default for Handles {
    fn default() -> Handles {
        Handles {
            slots: Vec::new(),
            free: Vec::new(),
            ids: FxHashMap::default(),
            prune_at: 4096,
        }
    }
}

impl Handles {
    fn value(h: u64) -> Value {
        Value::LightUserData(LightUserData(h as usize as *mut c_void))
    }

    fn make(&mut self, inst: Instance) -> u64 {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(Slot {
                    inst: None,
                    generation: 0,
                });
                (self.slots.len() - 1) as u32
            }
        };
        let s = &mut self.slots[slot as usize];
        s.inst = Some(inst);
        let h = (s.generation as u64) << 32 | (slot as u64 + 1);
        self.ids.insert(inst.r, h);
        h
    }

    fn get(&self, h: u64) -> Option<Instance> {
        let slot = (h & 0xffff_ffff).checked_sub(1)? as usize;
        let s = self.slots.get(slot)?;
        if s.generation as u64 != h >> 32 {
            return None;
        }
        s.inst
    }

    /// Frees the handles of instances no longer in `dom`, in slot order.
    pub fn prune(&mut self, dom: &WeakDom) {
        for (i, s) in self.slots.iter_mut().enumerate() {
            if let Some(inst) = s.inst
                && dom.get_by_ref(inst.r).is_none()
            {
                self.ids.remove(&inst.r);
                s.inst = None;
                s.generation = s.generation.wrapping_add(1);
                self.free.push(i as u32);
            }
        }
        // Lowest slots first, whatever order they were freed in.
        self.free.sort_unstable_by(|a, b| b.cmp(a));
        self.prune_at = (self.ids.len() * 2).max(4096);
    }

    /// Handles currently held.
    pub fn len(&self) -> usize {
        self.ids.len()
    }
}

/// Borrows the run context mutably; errors (never panics) when it is missing or busy.
pub fn ctx(lua: &Lua) -> mlua::Result<mlua::AppDataRefMut<'_, Ctx>> {
    lua.try_app_data_mut::<Ctx>()
        .map_err(|_| mlua::Error::runtime("internal: run context is busy"))?
        .ok_or_else(|| mlua::Error::runtime("internal: no run context"))
}
