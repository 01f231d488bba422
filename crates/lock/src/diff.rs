//! What differs between a locked model and the same model regenerated now: inputs first
//! (which one, locked and current value), then the results.

use crate::lockfile::{InputLock, ModelLock};

/// One reason a model does not match its lock entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// An input differs: its name and the locked and current values (or digests); `of`
    /// names the generator module for the inputs that are the module's (`source`,
    /// `carried`, `sandbox`).
    Input {
        name: String,
        of: Option<String>,
        locked: String,
        now: String,
    },
    /// A module the generator may require differs, appeared or disappeared.
    Module { name: String, what: String },
    /// What the generation read of the scene differs there, or it read there only now or
    /// only then.
    Read { path: String, what: String },
    /// The regenerated results' content hash is not the locked one; `difference` is the
    /// first differing instance and property against the results saved in the scene, when
    /// the scene holds the locked results.
    Output {
        locked: String,
        now: String,
        difference: Option<String>,
    },
    /// The regenerated results hash as locked but are not as many instances as the lock
    /// entry says.
    Instances { locked: u64, now: u64 },
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
            Finding::Input {
                name,
                of,
                locked,
                now,
            } => {
                write!(f, "input {name}")?;
                if name == "carried" {
                    // The lockfile's name for it, and what it is.
                    write!(f, " (what the module holds: children, attributes, tags)")?;
                }
                if let Some(module) = of {
                    write!(f, " of {module}")?;
                }
                write!(f, " differs: locked {locked}, now {now}")
            }
            Finding::Module { name, what } => write!(f, "module {name} {what}"),
            Finding::Read { path, what } => write!(f, "read {path} {what}"),
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
            Finding::Instances { locked, now } => {
                write!(f, "results differ: {now} instances, locked {locked}")
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

/// How an input of `m` is shown: attributes by type and value, the others by the fields
/// that are their value (Size and Scale, the generator's name, ...), else by digest.
fn shown(m: &ModelLock, i: &InputLock) -> String {
    match (i.name.as_str(), &i.ty, &i.value) {
        (_, Some(t), Some(v)) => crate::lockfile::shown_value(t, v),
        ("size", _, _) => format!("{:?} at scale {}", m.size, m.scale),
        ("generator", _, _) => m.generator.clone(),
        ("source", _, _) => short(&m.source),
        ("sandbox", _, _) => format!("sandboxed={} capabilities={}", m.sandboxed, m.capabilities),
        _ => short(&i.digest),
    }
}

fn short(digest: &str) -> String {
    digest.get(..16).unwrap_or(digest).to_owned()
}

/// Whether the values written for input `l` of `lm` and `n` of `nm` differ (the digests
/// aside): Size and Scale, an attribute's type and value, the generator's name, Source
/// digest and sandbox state.
fn written_differs(lm: &ModelLock, l: &InputLock, nm: &ModelLock, n: &InputLock) -> bool {
    let value = |i: &InputLock| {
        i.variant()
            .map(|v| procmodel_dom::hash::value_digest(&v))
            .ok_or_else(|| i.value.clone())
    };
    let caps = |m: &ModelLock| u64::from_str_radix(&m.capabilities, 16).ok();
    match l.name.as_str() {
        // Bit patterns: a NaN is never equal to anything but itself written the same way.
        "size" => {
            lm.size.map(f64::to_bits) != nm.size.map(f64::to_bits)
                || lm.scale.to_bits() != nm.scale.to_bits()
        }
        "generator" => lm.generator != nm.generator,
        "source" => lm.source != nm.source,
        "sandbox" => lm.sandboxed != nm.sandboxed || caps(lm) != caps(nm),
        _ => l.ty != n.ty || value(l) != value(n),
    }
}

/// What differs between two lists of digested entries (modules, reads), `same` matching
/// them: each locked entry whose match now has another digest (`words[0]`) or that has
/// none (`words[1]`), then each entry only the new list has (`words[2]`), in list order.
fn entry_changes<T>(
    locked: &[T],
    now: &[T],
    same: impl Fn(&T, &T) -> bool,
    digest: impl Fn(&T) -> &String,
    words: [&str; 3],
    finding: impl Fn(&T, &str) -> Finding,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in locked {
        match now.iter().find(|n| same(l, n)) {
            Some(n) if digest(n) == digest(l) => {}
            Some(_) => out.push(finding(l, words[0])),
            None => out.push(finding(l, words[1])),
        }
    }
    for n in now {
        if !locked.iter().any(|l| same(l, n)) {
            out.push(finding(n, words[2]));
        }
    }
    out
}

/// The module whose input `name` is, for the inputs that are the generator module's.
fn module_of(m: &ModelLock, name: &str) -> Option<String> {
    matches!(name, "source" | "carried" | "sandbox").then(|| m.generator.clone())
}

/// Inputs and modules of `now` that differ from `locked` (results are compared by the
/// caller, who can find the first differing instance). An input differs when its digest
/// does or when the values written for it do; the finding shows the two values, and when
/// they read alike (a difference below what is shown), the two digests as well.
pub fn compare(locked: &ModelLock, now: &ModelLock) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in &locked.inputs {
        match now.inputs.iter().find(|n| n.name == l.name) {
            Some(n) if n.digest == l.digest && !written_differs(locked, l, now, n) => {}
            Some(n) => {
                let (mut a, mut b) = (shown(locked, l), shown(now, n));
                if a == b {
                    a = format!("{a} (digest {})", short(&l.digest));
                    b = format!("{b} (digest {})", short(&n.digest));
                }
                out.push(Finding::Input {
                    name: l.name.clone(),
                    of: module_of(locked, &l.name),
                    locked: a,
                    now: b,
                });
            }
            None => out.push(Finding::Input {
                name: l.name.clone(),
                of: module_of(locked, &l.name),
                locked: shown(locked, l),
                now: "absent".into(),
            }),
        }
    }
    for n in &now.inputs {
        if !locked.inputs.iter().any(|l| l.name == n.name) {
            out.push(Finding::Input {
                name: n.name.clone(),
                of: module_of(now, &n.name),
                locked: "absent".into(),
                now: shown(now, n),
            });
        }
    }
    out.extend(entry_changes(
        &locked.modules,
        &now.modules,
        |a, b| a.name == b.name,
        |m| &m.digest,
        ["changed (Source or sandbox)", "is gone", "is new"],
        |m, what| Finding::Module {
            name: m.name.clone(),
            what: what.into(),
        },
    ));
    out.extend(entry_changes(
        &locked.reads,
        &now.reads,
        |a, b| a.path == b.path && a.own == b.own,
        |r| &r.digest,
        [
            "holds something else",
            "is no longer read",
            "is read now, not when locked",
        ],
        |r, what| Finding::Read {
            path: r.path.clone(),
            what: what.into(),
        },
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbx_dom_weak::{InstanceBuilder, WeakDom};
    use rbx_types::{Attributes, Variant, Vector3};

    /// The lock entry of a model of `size` and `scale` with attribute `Spacing`.
    fn entry(spacing: Variant, size: [f32; 3], scale: f32) -> ModelLock {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let generator = dom.insert(
            root,
            InstanceBuilder::new("ModuleScript")
                .with_name("Table")
                .with_property("Source", "return {}"),
        );
        let mut attrs = Attributes::new();
        attrs.insert("Spacing".into(), spacing);
        let model = dom.insert(
            root,
            InstanceBuilder::new("ProceduralModel")
                .with_name("T")
                .with_property("Generator", Variant::Ref(generator))
                .with_property("Size", Vector3::new(size[0], size[1], size[2]))
                .with_property("Scale", scale)
                .with_property("Attributes", attrs),
        );
        crate::model_lock(&dom, model, false)
    }

    fn texts(locked: &ModelLock, now: &ModelLock) -> Vec<String> {
        compare(locked, now)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// Bug fixed: a mismatch showed the same value twice (the locked side shown from a
    /// value that was not the one its digest was made from, or with the other type): the
    /// two values shown are the ones that differ, and values that read alike come with
    /// their digests.
    #[test]
    fn a_mismatch_shows_two_different_values() {
        let two = entry(Variant::Float64(2.0), [12.0, 4.0, 12.0], 1.0);
        let three = entry(Variant::Float64(3.0), [12.0, 4.0, 12.0], 1.0);
        assert_eq!(
            texts(&two, &three),
            ["input Spacing differs: locked Float64 2.0, now Float64 3.0"
                .replace("Spacing", "attr.Spacing")]
        );
        // A lock entry whose value was edited to the current one (its digest is still the
        // old value's): not "locked Float64 3.0, now Float64 3.0".
        let mut edited = two.clone();
        let i = edited
            .inputs
            .iter()
            .position(|i| i.name == "attr.Spacing")
            .unwrap();
        edited.inputs[i].value = three.inputs[i].value.clone();
        let t = texts(&edited, &three);
        assert_eq!(t.len(), 1, "{t:?}");
        let (locked, now) = (
            &edited.inputs[i].digest[..16],
            &three.inputs[i].digest[..16],
        );
        assert_eq!(
            t[0],
            format!(
                "input attr.Spacing differs: locked Float64 3.0 (digest {locked}), now Float64 3.0 (digest {now})"
            )
        );
        // Another type of the same text.
        let x = entry(Variant::String("x".into()), [12.0, 4.0, 12.0], 1.0);
        let t = texts(&three, &x);
        assert_eq!(
            t,
            ["input attr.Spacing differs: locked Float64 3.0, now String \"x\""]
        );
        // Size: the sizes that differ.
        let big = entry(Variant::Float64(3.0), [12.0, 8.0, 12.0], 1.0);
        assert_eq!(
            texts(&three, &big),
            [
                "input size differs: locked [12.0, 4.0, 12.0] at scale 1, now [12.0, 8.0, 12.0] at scale 1"
            ]
        );
        let mut edited = three.clone();
        edited.size = big.size;
        let t = texts(&edited, &big);
        assert!(
            t[0].starts_with("input size differs: locked [12.0, 8.0, 12.0] at scale 1 (digest "),
            "{t:?}"
        );
    }

    /// Values written differently under the same digest (Size and Scale scaled together
    /// digest alike: the generator is given Size ÷ Scale) are a difference too: verify
    /// compares what the lockfile shows, not only the digests.
    #[test]
    fn written_values_are_compared_besides_digests() {
        let one = entry(Variant::Float64(3.0), [12.0, 4.0, 12.0], 1.0);
        let two = entry(Variant::Float64(3.0), [24.0, 8.0, 24.0], 2.0);
        let size = |m: &ModelLock| {
            m.inputs
                .iter()
                .find(|i| i.name == "size")
                .unwrap()
                .digest
                .clone()
        };
        assert_eq!(size(&one), size(&two));
        assert_eq!(
            texts(&two, &one),
            [
                "input size differs: locked [24.0, 8.0, 24.0] at scale 2, now [12.0, 4.0, 12.0] at scale 1"
            ]
        );
        let mut renamed = one.clone();
        renamed.generator = "ServerStorage.Other".into();
        assert_eq!(
            texts(&renamed, &one),
            ["input generator differs: locked ServerStorage.Other, now Table"]
        );
        let mut caps = one.clone();
        caps.capabilities = "1".into();
        assert_eq!(
            texts(&caps, &one),
            [
                "input sandbox of Table differs: locked sandboxed=false capabilities=1, now sandboxed=false capabilities=0"
            ]
        );
        // What the module holds is said in words too.
        let finding = Finding::Input {
            name: "carried".into(),
            of: Some("ServerStorage.City".into()),
            locked: "0123".into(),
            now: "4567".into(),
        };
        assert_eq!(
            finding.to_string(),
            "input carried (what the module holds: children, attributes, tags) of ServerStorage.City differs: locked 0123, now 4567"
        );
        // The module's own inputs name it.
        let mut edited = one.clone();
        edited.source = "0123456789abcdef0123".into();
        assert_eq!(
            texts(&edited, &one),
            [format!(
                "input source of Table differs: locked 0123456789abcdef, now {}",
                &one.source[..16]
            )]
        );
        assert!(texts(&one, &one.clone()).is_empty());
    }

    #[test]
    fn a_read_that_holds_something_else_is_named() {
        // A model whose results record that their run read a template in ReplicatedStorage:
        // locked, then the template edited and locked again.
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let storage = dom.insert(root, InstanceBuilder::new("ReplicatedStorage"));
        let tree = dom.insert(storage, InstanceBuilder::new("Part").with_name("Tree"));
        let generator = dom.insert(
            root,
            InstanceBuilder::new("ModuleScript")
                .with_name("Forest")
                .with_property("Source", "return {}"),
        );
        let model = dom.insert(
            root,
            InstanceBuilder::new("ProceduralModel")
                .with_property("Generator", Variant::Ref(generator)),
        );
        let path = vec!["ReplicatedStorage".to_owned(), "Tree".to_owned()];
        let read = procmodel_engine::provenance::SceneRead {
            digest: procmodel_dom::reads::read_digest(&dom, &path, false),
            path,
            own: false,
        };
        let mut attrs = Attributes::new();
        attrs.insert(
            procmodel_engine::provenance::READS_ATTRIBUTE.into(),
            Variant::String(procmodel_engine::provenance::encode_reads(&[read])),
        );
        dom.insert(
            model,
            InstanceBuilder::new("GeneratedFolder").with_property("Attributes", attrs),
        );
        let locked = crate::model_lock(&dom, model, false);
        assert_eq!(locked.reads.len(), 1);
        assert_eq!(locked.reads[0].path, "game.ReplicatedStorage.Tree");
        locked.check().unwrap();
        dom.get_by_ref_mut(tree)
            .unwrap()
            .properties
            .insert("Transparency".into(), Variant::Float32(0.5));
        let now = crate::model_lock(&dom, model, false);
        let t = texts(&locked, &now);
        assert_eq!(t.len(), 2, "{t:?}");
        assert!(t[0].starts_with("input reads differs"), "{t:?}");
        assert_eq!(
            t[1],
            "read game.ReplicatedStorage.Tree holds something else"
        );
    }
}
