//! What differs between a locked model and the same model regenerated now: inputs first
//! (which one, locked and current value), then the results.

use crate::lockfile::ModelLock;

/// One reason a model does not match its lock entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// An input differs: its name and the locked and current values (or digests).
    Input {
        name: String,
        locked: String,
        now: String,
    },
    /// A module the generator may require differs, appeared or disappeared.
    Module { name: String, what: String },
    /// The regenerated results' content hash is not the locked one; `difference` is the
    /// first differing instance and property against the results saved in the scene, when
    /// the scene holds the locked results.
    Output {
        locked: String,
        now: String,
        difference: Option<String>,
    },
    /// The results saved in the scene file are not the locked ones (the file's output was
    /// edited): the first difference.
    Stored { difference: String },
    /// The model is not in the scene any more.
    Missing,
    /// Its generation failed.
    Failed(String),
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::Input { name, locked, now } => {
                write!(f, "input {name} differs: locked {locked}, now {now}")
            }
            Finding::Module { name, what } => write!(f, "module {name} {what}"),
            Finding::Output {
                locked,
                now,
                difference,
            } => {
                write!(f, "results differ: content hash {now}, locked {locked}")?;
                if let Some(d) = difference {
                    write!(f, "; first difference: {d}")?;
                }
                Ok(())
            }
            Finding::Stored { difference } => write!(
                f,
                "the results saved in the scene are not the locked ones; first difference: {difference}"
            ),
            Finding::Missing => write!(f, "the model is not in the scene"),
            Finding::Failed(e) => write!(f, "generation failed: {e}"),
        }
    }
}

/// An attribute's value for people: the JSON of a `Variant` (`{"Float64":1.0}`) without
/// its type tag (`1.0`).
fn inner(json: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(serde_json::Value::Object(m)) if m.len() == 1 => m
            .values()
            .next()
            .map(ToString::to_string)
            .unwrap_or_default(),
        _ => json.to_owned(),
    }
}

/// Inputs and modules of `now` that differ from `locked` (results are compared by the
/// caller, who can find the first differing instance).
pub fn compare(locked: &ModelLock, now: &ModelLock) -> Vec<Finding> {
    let mut out = Vec::new();
    let shown = |i: &crate::lockfile::InputLock| match (&i.ty, &i.value) {
        (Some(t), Some(v)) => format!("{t} {}", inner(v)),
        _ => match i.name.as_str() {
            "size" => String::new(),
            _ => i.digest[..16].to_owned(),
        },
    };
    for l in &locked.inputs {
        match now.inputs.iter().find(|n| n.name == l.name) {
            Some(n) if n.digest == l.digest => {}
            Some(n) => {
                let (a, b) = match l.name.as_str() {
                    "size" => (
                        format!("{:?} at scale {}", locked.size, locked.scale),
                        format!("{:?} at scale {}", now.size, now.scale),
                    ),
                    "generator" => (locked.generator.clone(), now.generator.clone()),
                    "source" => (locked.source[..16].to_owned(), now.source[..16].to_owned()),
                    "sandbox" => (
                        format!(
                            "sandboxed={} capabilities={}",
                            locked.sandboxed, locked.capabilities
                        ),
                        format!(
                            "sandboxed={} capabilities={}",
                            now.sandboxed, now.capabilities
                        ),
                    ),
                    _ => (shown(l), shown(n)),
                };
                out.push(Finding::Input {
                    name: l.name.clone(),
                    locked: a,
                    now: b,
                });
            }
            None => out.push(Finding::Input {
                name: l.name.clone(),
                locked: shown(l),
                now: "absent".into(),
            }),
        }
    }
    for n in &now.inputs {
        if !locked.inputs.iter().any(|l| l.name == n.name) {
            out.push(Finding::Input {
                name: n.name.clone(),
                locked: "absent".into(),
                now: shown(n),
            });
        }
    }
    for l in &locked.modules {
        match now.modules.iter().find(|n| n.name == l.name) {
            Some(n) if n.digest == l.digest => {}
            Some(_) => out.push(Finding::Module {
                name: l.name.clone(),
                what: "changed (Source or sandbox)".into(),
            }),
            None => out.push(Finding::Module {
                name: l.name.clone(),
                what: "is gone".into(),
            }),
        }
    }
    for n in &now.modules {
        if !locked.modules.iter().any(|l| l.name == n.name) {
            out.push(Finding::Module {
                name: n.name.clone(),
                what: "is new".into(),
            });
        }
    }
    out
}
