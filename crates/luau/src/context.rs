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
    /// Instance handles: Luau sees an instance as a light userdata whose pointer value is
    /// `id` (1-based index into `handles`). One instance is always one value, so `==`, table
    /// keys and `rawequal` give identity for free, and no per-instance Luau object exists.
    pub ids: FxHashMap<Ref, u32>,
    pub handles: Vec<Instance>,
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
            ids: FxHashMap::default(),
            handles: Vec::new(),
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
        let id = match self.ids.get(&r) {
            Some(&id) => id,
            None => {
                let class = match self.dom.get_by_ref(r) {
                    Some(inst) => inst.class,
                    None => return Err(mlua::Error::runtime("instance no longer exists")),
                };
                self.handles.push(Instance { r, class });
                let id = self.handles.len() as u32;
                self.ids.insert(r, id);
                id
            }
        };
        Ok(Value::LightUserData(LightUserData(
            id as usize as *mut c_void,
        )))
    }

    /// The instance behind a Luau value, if it is an instance handle of this VM.
    pub fn instance(&self, v: &Value) -> Option<Instance> {
        match v {
            Value::LightUserData(p) => self.handles.get((p.0 as usize).wrapping_sub(1)).copied(),
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

/// Borrows the run context mutably; errors (never panics) when it is missing or busy.
pub fn ctx(lua: &Lua) -> mlua::Result<mlua::AppDataRefMut<'_, Ctx>> {
    lua.try_app_data_mut::<Ctx>()
        .map_err(|_| mlua::Error::runtime("internal: run context is busy"))?
        .ok_or_else(|| mlua::Error::runtime("internal: no run context"))
}
