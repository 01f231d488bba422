//! This host as the engine sees it: [`ScriptHost`] for [`Host`] and [`LuauRuntime`], the
//! [`ScriptRuntime`] that makes them. Every method forwards to the host's own API; what
//! crosses is the contract's plain data (the VM's own handles travel boxed, opaque to the
//! engine).

use crate::generator::{Generator as LuauGenerator, PendingRun as LuauRun};
use crate::host::Host;
use procmodel_script::{
    CancelSignal, Canceller, FrameHook, Generator, HistoryRequest, HostConfig, HostError,
    ManagedClass, PendingRun, RunInputs, RunOutput, RunState, ScriptHost, ScriptRuntime,
};
use rbx_dom_weak::WeakDom;
use rbx_types::Ref;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// Makes Luau hosts (the engine's own and its workers').
#[derive(Debug, Default, Clone, Copy)]
pub struct LuauRuntime;

/// The Luau runtime, as the engine takes it.
pub fn runtime() -> Arc<dyn ScriptRuntime> {
    Arc::new(LuauRuntime)
}

impl ScriptRuntime for LuauRuntime {
    fn new_host(
        &self,
        config: &HostConfig,
        dom: Option<WeakDom>,
    ) -> Result<Rc<dyn ScriptHost>, HostError> {
        let host = match dom {
            Some(dom) => Host::with_dom(config.clone(), dom)?,
            None => Host::new(config.clone())?,
        };
        Ok(Rc::new(host))
    }

    fn literal_requires(
        &self,
        file: &Path,
        root: Option<&Path>,
    ) -> Vec<(String, Result<PathBuf, String>)> {
        crate::requires::literal_requires(file, root)
    }
}

impl CancelSignal for crate::watchdog::Canceller {
    fn cancel(&self) {
        crate::watchdog::Canceller::cancel(self)
    }
    fn clear(&self) {
        crate::watchdog::Canceller::clear(self)
    }
    fn is_pending(&self) -> bool {
        crate::watchdog::Canceller::is_pending(self)
    }
}

/// The host's generator behind the contract's opaque handle.
fn generator(g: &Generator) -> Result<&LuauGenerator, HostError> {
    g.entry
        .downcast_ref::<LuauGenerator>()
        .ok_or_else(|| HostError::Vm("a generator loaded by another host".into()))
}

fn wrap_generator(g: LuauGenerator) -> Generator {
    Generator {
        module: g.module,
        attributes: g.attributes.clone(),
        origin: g.origin.clone(),
        entry: Box::new(g),
    }
}

fn wrap_run(run: LuauRun) -> PendingRun {
    PendingRun {
        container: run.container,
        state: Box::new(run),
    }
}

impl ScriptHost for Host {
    fn handle(&self) -> Rc<dyn ScriptHost> {
        Rc::new(self.clone())
    }

    fn manage(&self, class: ManagedClass) -> Result<(), HostError> {
        Host::manage(self, class)
    }

    fn visit_dom(&self, f: &mut dyn FnMut(&WeakDom)) {
        self.with_dom_ref(f)
    }

    fn visit_dom_mut(&self, f: &mut dyn FnMut(&mut WeakDom)) {
        self.with_dom_mut(f)
    }

    fn may_have_managed(&self) -> bool {
        Host::may_have_managed(self)
    }

    fn replace_dom(&self, dom: WeakDom) {
        Host::replace_dom(self, dom)
    }

    fn take_dom(&self) -> WeakDom {
        Host::take_dom(self)
    }

    fn mark_destroyed(&self, destroyed: &[Ref], gone: &[Ref]) {
        Host::mark_destroyed(self, destroyed, gone)
    }

    fn count_scene_writes(&self) {
        Host::count_scene_writes(self)
    }

    fn scene_writes(&self) -> Option<u64> {
        Host::scene_writes(self)
    }

    fn set_require_root(&self, root: &Path) {
        Host::set_require_root(&mut self.clone(), root)
    }

    fn set_module_folder_loader(&self, loader: procmodel_script::ModuleFolderLoader) {
        self.lua()
            .set_app_data(crate::globals::FolderLoader(loader));
    }

    fn add_module_script(&self, parent: Ref, name: &str, source: &str, file: Option<&Path>) -> Ref {
        Host::add_module_script(self, parent, name, source, file)
    }

    fn set_module_file(&self, module: Ref, file: &Path) {
        Host::set_module_file(self, module, file)
    }

    fn module_files(&self) -> Vec<PathBuf> {
        Host::module_files(self)
    }

    fn file_module(&self, path: &Path) -> Option<Ref> {
        Host::file_module(self, path)
    }

    fn file_modules(&self) -> Vec<(PathBuf, Ref)> {
        Host::file_modules(self)
    }

    fn requirers(&self, module: Ref) -> Vec<Ref> {
        Host::requirers(self, module)
    }

    fn require_edges(&self) -> Vec<(Ref, Ref)> {
        Host::require_edges(self)
    }

    fn take_failed_requires(&self) -> Option<Vec<Ref>> {
        Host::take_failed_requires(self)
    }

    fn note_requires(&self, edges: &[(Ref, Ref)]) {
        Host::note_requires(self, edges)
    }

    fn take_output(&self) -> Vec<procmodel_script::LogLine> {
        Host::take_log(self)
    }

    fn push_output(&self, lines: Vec<procmodel_script::LogLine>) {
        Host::push_log(self, lines)
    }

    fn warn(&self, message: String) {
        Host::log(self, procmodel_script::LogLevel::Warn, message)
    }

    fn invalidate_module(&self, module: Ref) -> Result<(), HostError> {
        Host::invalidate_module(self, module).map_err(|e| crate::error::script(&e))
    }

    fn canceller(&self) -> Canceller {
        Canceller::new(Arc::new(Host::canceller(self)))
    }

    fn set_frame_hook(&self, hook: Option<FrameHook>) {
        Host::set_frame_hook(self, hook)
    }

    fn begin_frame(&self, budget: Option<Duration>) -> Result<(), HostError> {
        Host::begin_frame(self, budget).map_err(crate::error::vm)
    }

    fn end_frame(&self) {
        Host::end_frame(self)
    }

    fn take_history_requests(&self) -> Vec<HistoryRequest> {
        Host::take_history_requests(self)
    }

    fn take_code_changes(&self) -> Vec<Ref> {
        Host::take_code_changes(self)
    }

    fn take_forced(&self) -> Vec<Ref> {
        Host::take_forced(self)
    }

    fn run_script_file(&self, path: &Path) -> Result<(), HostError> {
        Host::run_script_file(&mut self.clone(), path)
    }

    fn load_generator_file(&self, path: &Path, parent: Ref) -> Result<Generator, HostError> {
        Host::load_generator_file(&mut self.clone(), path, parent).map(wrap_generator)
    }

    fn add_generator_file(&self, path: &Path, parent: Ref) -> Result<Ref, HostError> {
        Host::add_generator_file(self, path, parent)
    }

    fn load_generator(&self, module: Ref, origin: &str) -> Result<Generator, HostError> {
        Host::load_generator(self, module, origin).map(wrap_generator)
    }

    fn run_generator(
        &self,
        generator_: &Generator,
        inputs: &RunInputs,
    ) -> Result<RunOutput, HostError> {
        Host::run_generator(self, generator(generator_)?, inputs)
    }

    fn start_generator(
        &self,
        generator_: &Generator,
        inputs: &RunInputs,
    ) -> Result<(PendingRun, RunState), HostError> {
        let (run, state) = Host::start_generator(self, generator(generator_)?, inputs)?;
        Ok((wrap_run(run), state))
    }

    fn resume_generator(
        &self,
        pending: &mut PendingRun,
        frames: u32,
    ) -> Result<RunState, HostError> {
        let run = pending
            .state
            .downcast_mut::<LuauRun>()
            .ok_or_else(|| HostError::Vm("a run started by another host".into()))?;
        Host::resume_generator(self, run, frames)
    }

    fn cancel_generator(&self, pending: PendingRun) {
        if let Ok(run) = pending.state.downcast::<LuauRun>() {
            Host::cancel_generator(self, *run)
        }
    }
}
