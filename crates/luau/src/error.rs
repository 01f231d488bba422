//! Errors of the Luau host, stable to callers while inner details evolve.

use std::path::PathBuf;

/// A host-level failure. Script errors carry the Luau message and traceback.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("cannot start the Luau VM: {0}")]
    Vm(String),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    BadGenerator { file: String, message: String },
    #[error("{message}")]
    Script {
        message: String,
        traceback: Option<String>,
    },
    #[error("attribute {name}: {message}")]
    Attribute { name: String, message: String },
}

impl HostError {
    pub(crate) fn vm(e: mlua::Error) -> HostError {
        HostError::Vm(e.to_string())
    }

    /// A script error from an mlua error, keeping only the innermost message and traceback.
    pub fn script(e: &mlua::Error) -> HostError {
        let (message, traceback) = split(e);
        HostError::Script {
            message: condense(&message),
            traceback: traceback.map(|t| condense(&t)),
        }
    }
}

/// Most lines an error text keeps: the first [`HEAD_LINES`] and the last [`TAIL_LINES`].
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
            (m, t.or_else(|| Some(traceback.clone())))
        }
        mlua::Error::RuntimeError(m) | mlua::Error::SyntaxError { message: m, .. } => {
            (m.clone(), None)
        }
        mlua::Error::MemoryError(m) => (format!("out of memory: {m}"), None),
        mlua::Error::WithContext { context, cause } => {
            let (m, t) = split(cause);
            (format!("{context}: {m}"), t)
        }
        other => (other.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::condense;

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
