//! What a step tells its caller about each model it ran: a [`Report`] with one outcome, and
//! for a failure the typed [`GenerationFailure`] whose text is what the error placeholder's
//! `GenerationError` attribute stores.
//!
//! Owns: the failure kinds and their texts, and the mapping of the host's typed errors onto them.
//! Must never: depend on the engine's state (a report is plain data, `Send`, and comparable).

use procmodel_script::HostError;
pub use procmodel_script::Limit;
use rbx_types::Ref;
use std::fmt;
use std::time::Duration;

/// What happened to one model in a step.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub model: Ref,
    /// `GetFullName` of the model.
    pub path: String,
    /// Results applied, or why not (the model then holds the error placeholder).
    pub outcome: Result<(), GenerationFailure>,
    pub elapsed: Duration,
    /// Instances in the model's results after the run (1, the placeholder, for a failure).
    pub instances: usize,
    /// The results came from the result cache (an entry, results kept in place, or the
    /// undo history's): the generator did not run, so it printed nothing.
    pub cached: bool,
    /// Instances the run created, wherever they ended up (0 when nothing ran). More than
    /// none with no results usually means they were never parented to targetContainer.
    pub created: usize,
}

impl Report {
    /// True when the results were applied.
    pub fn is_ok(&self) -> bool {
        self.outcome.is_ok()
    }

    /// Why the generation failed, when it did.
    pub fn failure(&self) -> Option<&GenerationFailure> {
        self.outcome.as_ref().err()
    }

    /// The failure's text (what `GenerationError` holds), when it failed.
    pub fn error(&self) -> Option<String> {
        self.failure().map(|f| f.to_string())
    }

    /// What to tell the user about a run that succeeded with no results although it created
    /// instances: they were never parented to the container (often a misspelled name, which
    /// Luau reads as a nil global).
    pub fn warning(&self) -> Option<String> {
        (self.is_ok() && self.instances == 0 && self.created > 0).then(|| {
            format!(
                "the generator created {} instance{} but its results are empty: parent what it builds to targetContainer, the second argument of OnGenerate (a misspelled name there reads as nil)",
                self.created,
                if self.created == 1 { "" } else { "s" }
            )
        })
    }
}

/// Why a generation failed. `Display` gives the text stored in the placeholder's
/// `GenerationError` attribute and shown to users.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum GenerationFailure {
    /// The model's `Generator` is nil or points outside the scene.
    NoGenerator,
    /// The `Generator` points at an instance that is not a ModuleScript.
    NotAModuleScript { generator: String },
    /// The model left the scene while it was being generated.
    ModelGone,
    /// A sandboxed generator lacks a capability generating needs.
    MissingCapability {
        generator: String,
        capability: &'static str,
    },
    /// The module is not a generator (no `OnGenerate`, a bad `Attributes` table, unreadable).
    BadGenerator(String),
    /// The generator raised an error.
    Script {
        message: String,
        traceback: Option<String>,
    },
    /// The run hit a limit.
    Limit {
        limit: Limit,
        message: String,
        traceback: Option<String>,
    },
    /// The run was cancelled.
    Cancelled(String),
    /// The results hold a script with capabilities the sandboxed generator lacks.
    ResultCapabilities { instance: String },
    /// The results' voxels cannot be placed (rotation, scale, overlap, the scene's Terrain).
    Terrain(String),
    /// Nested ProceduralModels deeper than the engine's limit (a generator that outputs
    /// itself?).
    Nesting { depth: usize, limit: usize },
    /// The run was still waiting when the engine stopped stepping (`settle`).
    NotFinished { frames: usize },
    /// The worker thread running the model stopped (a bug, not a script error).
    WorkerDied,
    /// The host could not run the generator at all (the VM could not start).
    Host(String),
    /// A run on a worker VM wrote outside its container, where the write cannot reach the
    /// scene; the engine runs the model again on the scene's VM, so no report carries this.
    OutsideAccessDeferred(String),
}

impl GenerationFailure {
    /// A stable name for the kind of failure, for machine-readable output: `no_generator`,
    /// `not_a_module_script`, `model_gone`, `missing_capability`, `bad_generator`, `script`,
    /// `limit.<timeout|run_time|memory|wait|instances|output|terrain>`, `cancelled`,
    /// `result_capabilities`, `terrain`, `nesting`, `not_finished`, `worker_died`, `host`.
    pub fn kind(&self) -> &'static str {
        match self {
            GenerationFailure::NoGenerator => "no_generator",
            GenerationFailure::NotAModuleScript { .. } => "not_a_module_script",
            GenerationFailure::ModelGone => "model_gone",
            GenerationFailure::MissingCapability { .. } => "missing_capability",
            GenerationFailure::BadGenerator(_) => "bad_generator",
            GenerationFailure::Script { .. } => "script",
            GenerationFailure::Limit { limit, .. } => limit.kind(),
            GenerationFailure::Cancelled(_) => "cancelled",
            GenerationFailure::ResultCapabilities { .. } => "result_capabilities",
            GenerationFailure::Terrain(_) => "terrain",
            GenerationFailure::Nesting { .. } => "nesting",
            GenerationFailure::NotFinished { .. } => "not_finished",
            GenerationFailure::WorkerDied => "worker_died",
            GenerationFailure::Host(_) => "host",
            GenerationFailure::OutsideAccessDeferred(_) => "outside_access_deferred",
        }
    }

    /// The limit the run hit, for [`GenerationFailure::Limit`].
    pub fn limit(&self) -> Option<Limit> {
        match self {
            GenerationFailure::Limit { limit, .. } => Some(*limit),
            _ => None,
        }
    }

    /// The Luau traceback, for a script error or a limit hit inside a script.
    pub fn traceback(&self) -> Option<&str> {
        match self {
            GenerationFailure::Script { traceback, .. }
            | GenerationFailure::Limit { traceback, .. } => traceback.as_deref(),
            _ => None,
        }
    }

    /// The failure with `f` applied to each text it carries (messages and tracebacks).
    pub(crate) fn map_text(self, f: &dyn Fn(&str) -> String) -> GenerationFailure {
        let opt = |t: Option<String>| t.map(|t| f(&t));
        match self {
            GenerationFailure::Script { message, traceback } => GenerationFailure::Script {
                message: f(&message),
                traceback: opt(traceback),
            },
            GenerationFailure::Limit {
                limit,
                message,
                traceback,
            } => GenerationFailure::Limit {
                limit,
                message: f(&message),
                traceback: opt(traceback),
            },
            GenerationFailure::BadGenerator(m) => GenerationFailure::BadGenerator(f(&m)),
            GenerationFailure::Cancelled(m) => GenerationFailure::Cancelled(f(&m)),
            GenerationFailure::Terrain(m) => GenerationFailure::Terrain(f(&m)),
            GenerationFailure::Host(m) => GenerationFailure::Host(f(&m)),
            other => other,
        }
    }

    /// The whole-run time limit over several frames, as the engine measures it.
    pub(crate) fn run_time(used: Duration, limit: Duration) -> GenerationFailure {
        GenerationFailure::Limit {
            limit: Limit::RunTime,
            message: format!(
                "{RUN_TIME_LIMIT} the generation used {:.1} s of execution time over several frames (limit {:.1} s)",
                used.as_secs_f64(),
                limit.as_secs_f64()
            ),
            traceback: None,
        }
    }
}

/// How both run-time limits' messages begin: the host's
/// ([`procmodel_script::RUN_LIMIT_MESSAGE`]) and the engine's, over several frames
/// ([`GenerationFailure::run_time`]).
const RUN_TIME_LIMIT: &str = "Run time limit:";

impl From<&HostError> for GenerationFailure {
    fn from(e: &HostError) -> GenerationFailure {
        match e {
            HostError::Script { message, traceback } => GenerationFailure::Script {
                message: message.clone(),
                traceback: traceback.clone(),
            },
            HostError::Limit {
                limit,
                message,
                traceback,
            } => GenerationFailure::Limit {
                limit: *limit,
                message: message.clone(),
                traceback: traceback.clone(),
            },
            HostError::Cancelled { message, .. } => GenerationFailure::Cancelled(message.clone()),
            HostError::BadGenerator { .. } | HostError::Attribute { .. } => {
                GenerationFailure::BadGenerator(e.to_string())
            }
            HostError::Read { .. } => GenerationFailure::BadGenerator(e.to_string()),
            HostError::Vm(_) => GenerationFailure::Host(e.to_string()),
            HostError::OutsideAccessDeferred { .. } => {
                GenerationFailure::OutsideAccessDeferred(e.to_string())
            }
        }
    }
}

impl From<HostError> for GenerationFailure {
    fn from(e: HostError) -> GenerationFailure {
        GenerationFailure::from(&e)
    }
}

impl fmt::Display for GenerationFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenerationFailure::NoGenerator => {
                f.write_str("Generator does not point at a ModuleScript in the scene")
            }
            GenerationFailure::NotAModuleScript { generator } => {
                write!(f, "Generator {generator} is not a ModuleScript")
            }
            GenerationFailure::ModelGone => f.write_str("model is not in the scene"),
            GenerationFailure::MissingCapability {
                generator,
                capability,
            } => write!(
                f,
                "the sandboxed generator {generator} lacks the {capability} capability (generating needs Basic, RunServerScript and CreateInstances)"
            ),
            GenerationFailure::Script { message, traceback }
            | GenerationFailure::Limit {
                message, traceback, ..
            } => match traceback {
                Some(t) => write!(f, "{message}\n{t}"),
                None => f.write_str(message),
            },
            GenerationFailure::BadGenerator(m)
            | GenerationFailure::Cancelled(m)
            | GenerationFailure::Terrain(m)
            | GenerationFailure::Host(m)
            | GenerationFailure::OutsideAccessDeferred(m) => f.write_str(m),
            GenerationFailure::ResultCapabilities { instance } => write!(
                f,
                "{instance} in the results has capabilities the sandboxed generator does not have"
            ),
            GenerationFailure::Nesting { depth, limit } => write!(
                f,
                "nested ProceduralModels are {depth} levels deep (limit {limit}): a generator that outputs itself?"
            ),
            GenerationFailure::NotFinished { frames } => {
                write!(f, "generation did not finish within {frames} frames")
            }
            GenerationFailure::WorkerDied => {
                f.write_str("internal error: the worker VM running this model stopped")
            }
        }
    }
}

impl std::error::Error for GenerationFailure {}

#[cfg(test)]
mod tests {
    use super::*;
    use procmodel_script::{CANCEL_MESSAGE, RUN_LIMIT_MESSAGE, TIMEOUT_MESSAGE};

    #[test]
    fn both_run_time_limits_begin_alike() {
        assert!(RUN_LIMIT_MESSAGE.starts_with(RUN_TIME_LIMIT));
        let engine = GenerationFailure::run_time(Duration::from_secs(3), Duration::from_secs(2));
        assert!(engine.to_string().starts_with(RUN_TIME_LIMIT));
        assert_eq!(engine.limit(), Some(Limit::RunTime));
    }

    #[test]
    fn host_errors_map_by_kind_and_keep_their_text() {
        let timeout = HostError::Limit {
            limit: Limit::Timeout,
            message: format!("Gen:3: {TIMEOUT_MESSAGE}"),
            traceback: Some("Gen:3".into()),
        };
        let f = GenerationFailure::from(&timeout);
        assert_eq!(f.limit(), Some(Limit::Timeout));
        assert_eq!(f.kind(), "limit.timeout");
        assert_eq!(f.traceback(), Some("Gen:3"));
        assert_eq!(f.to_string(), format!("Gen:3: {TIMEOUT_MESSAGE}\nGen:3"));

        let cancelled = HostError::Cancelled {
            message: format!("Gen:2: {CANCEL_MESSAGE}"),
            traceback: None,
        };
        let f = GenerationFailure::from(&cancelled);
        assert_eq!(f.kind(), "cancelled");
        assert_eq!(f.to_string(), format!("Gen:2: {CANCEL_MESSAGE}"));

        // A script error whose text mentions a limit is still a script error: the host
        // types its errors, the engine does not read their text.
        let plain = HostError::Script {
            message: format!("Gen:1: boom ({TIMEOUT_MESSAGE})"),
            traceback: None,
        };
        let f = GenerationFailure::from(&plain);
        assert!(matches!(f, GenerationFailure::Script { .. }));
        assert_eq!(f.limit(), None);
        assert_eq!(f.to_string(), format!("Gen:1: boom ({TIMEOUT_MESSAGE})"));

        let bad = HostError::BadGenerator {
            file: "Gen".into(),
            message: "the module must return a table".into(),
        };
        let f = GenerationFailure::from(&bad);
        assert!(matches!(f, GenerationFailure::BadGenerator(_)));
        assert_eq!(f.to_string(), "Gen: the module must return a table");
    }

    #[test]
    fn a_report_has_one_outcome() {
        let ok = Report {
            model: Ref::none(),
            path: "Workspace.M".into(),
            outcome: Ok(()),
            elapsed: Duration::ZERO,
            instances: 3,
            cached: false,
            created: 3,
        };
        assert!(ok.is_ok() && ok.failure().is_none() && ok.error().is_none());
        let failed = Report {
            outcome: Err(GenerationFailure::Nesting { depth: 9, limit: 8 }),
            ..ok
        };
        assert!(!failed.is_ok());
        assert_eq!(
            failed.error().as_deref(),
            Some(
                "nested ProceduralModels are 9 levels deep (limit 8): a generator that outputs itself?"
            )
        );
    }
}
