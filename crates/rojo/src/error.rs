//! The crate's one error type: the file that is wrong, the field in it (when there is one)
//! and what is wrong, behind a box so variants can change without breaking callers.

use std::fmt;
use std::path::{Path, PathBuf};

/// A project that cannot be built: names the file and, when there is one, the field.
#[derive(Debug)]
pub struct RojoError(Box<Inner>);

#[derive(Debug)]
struct Inner {
    file: PathBuf,
    field: Option<String>,
    message: String,
}

impl RojoError {
    pub(crate) fn new(file: &Path, field: Option<String>, message: impl Into<String>) -> Self {
        RojoError(Box::new(Inner {
            file: file.to_path_buf(),
            field,
            message: message.into(),
        }))
    }

    /// An error about a whole file (no field).
    pub(crate) fn file(file: &Path, message: impl Into<String>) -> Self {
        RojoError::new(file, None, message)
    }

    /// An error about one field of a file.
    pub(crate) fn field(file: &Path, field: impl Into<String>, message: impl Into<String>) -> Self {
        RojoError::new(file, Some(field.into()), message)
    }

    /// The file the error is about.
    pub fn path(&self) -> &Path {
        &self.0.file
    }

    /// The field of the file (a JSON path such as `tree.Workspace.$properties.Size`).
    pub fn field_name(&self) -> Option<&str> {
        self.0.field.as_deref()
    }

    /// What is wrong, without the file and field.
    pub fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Display for RojoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.field {
            Some(field) => write!(f, "{}: {field}: {}", self.0.file.display(), self.0.message),
            None => write!(f, "{}: {}", self.0.file.display(), self.0.message),
        }
    }
}

impl std::error::Error for RojoError {}
