//! The Luau host: runs Roblox-style Luau generators headless. Binds `Instance` over an
//! `rbx_dom_weak` tree (the Roblox datatypes come from `procmodel-luau-types`), the `task`
//! scheduler on virtual time, `require`, and the generator protocol (`OnGenerate`).
//!
//! The engine drives it through `procmodel-script`'s contract: [`runtime()`] is the
//! `ScriptRuntime` front ends pass to the engine, `Host` its `ScriptHost` (`runtime.rs`),
//! and the rules of the class the engine manages arrive as a `ManagedClass` (`managed.rs`).
//!
//! Owns: the VM, its sandbox, timeouts (watchdog flag, never a clock in the interrupt),
//! memory limits, the DOM a run sees, and the typing of its errors (which limit a run hit).
//! Must never: give scripts file, network, process or clock access, let a script error
//! escape as a panic, or know an engine-managed class (ProceduralModel) by name.

mod api;
mod assembly;
mod attachment;
mod classes;
mod context;
mod env;
mod error;
mod ffi;
mod generator;
mod globals;
mod host;
mod instance;
mod json;
mod keys;
pub mod luaurc;
mod managed;
mod mesh_query;
mod methods;
mod props;
mod query_index;
mod reads;
pub mod requires;
mod runtime;
mod sched;
mod services;
mod signal_state;
mod signals;
mod task;
mod toolkit;
mod watchdog;

pub use api::{declared_callbacks, declared_events};
pub use classes::GENERATED_TERRAIN;
pub use classes::method_names as instance_methods;
pub use context::{Instance, LogLevel, LogLine};
pub use error::HostError;
pub use generator::{Generator, PendingRun, RunInputs, RunOutput, RunState, read_script_text};
pub use globals::{MISSING_GLOBALS, require_file};
pub use host::{
    DEFAULT_MAX_INSTANCES, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_TERRAIN_BYTES, FrameHook, Host,
    HostConfig, MEMORY_MESSAGE, RUN_LIMIT_MESSAGE, TIMEOUT_MESSAGE,
};
pub use procmodel_script::{Limit, ManagedClass, ScriptHost, ScriptRuntime};
pub use runtime::{LuauRuntime, runtime};
pub use sched::FRAME;
pub use services::HistoryRequest;
pub use watchdog::{CANCEL_MESSAGE, Canceller};
