//! [`EngineError`]: what the engine's API refuses (a scene file it cannot read or write, a
//! bad argument, the VM failing to start). Generator failures are not errors of the engine:
//! they are reports ([`crate::GenerationFailure`]).
//!
//! Owns: the error's kinds (private, so they can change) and their texts.

use procmodel_script::HostError;

/// An engine call failed. The message names the file, instance or value at fault.
///
/// The kinds behind it are private; callers show the message, or ask
/// [`EngineError::script_error`] for a script's message and traceback.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct EngineError(Box<ErrorKind>);

#[derive(Debug, thiserror::Error)]
pub(crate) enum ErrorKind {
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("{0}")]
    Host(HostError),
    #[error("{0}")]
    Invalid(String),
}

impl EngineError {
    /// A file the engine could not read or write, and why.
    pub fn file(path: impl Into<String>, message: impl Into<String>) -> EngineError {
        ErrorKind::File {
            path: path.into(),
            message: message.into(),
        }
        .into()
    }

    /// A call the engine refuses (a bad value, an instance that is not a model).
    pub fn invalid(message: impl Into<String>) -> EngineError {
        ErrorKind::Invalid(message.into()).into()
    }

    /// For a file error: its message without the file's path.
    pub(crate) fn file_message(&self) -> Option<&str> {
        match &*self.0 {
            ErrorKind::File { message, .. } => Some(message),
            _ => None,
        }
    }

    /// For a script that raised an error: its message and Luau traceback.
    pub fn script_error(&self) -> Option<(&str, Option<&str>)> {
        match &*self.0 {
            ErrorKind::Host(HostError::Script { message, traceback }) => {
                Some((message, traceback.as_deref()))
            }
            _ => None,
        }
    }
}

impl From<ErrorKind> for EngineError {
    fn from(kind: ErrorKind) -> EngineError {
        EngineError(Box::new(kind))
    }
}

impl From<HostError> for EngineError {
    fn from(e: HostError) -> EngineError {
        ErrorKind::Host(e).into()
    }
}
