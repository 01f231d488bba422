//! The lockfile: TOML, one `[[model]]` table per ProceduralModel with every input and the
//! content hash of its results, sealed by a checksum so an edited or truncated file is
//! refused before anything is compared; every value written for people to read is checked
//! against the digest beside it ([`ModelLock::check`]), so one edited with the checksum
//! recomputed is refused too.

use crate::LockError;
use procmodel_dom::hash::hex;
use procmodel_engine::provenance::{
    EPOCH, module_list_digest, name_digest, sandbox_state_digest, size_digest,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The lockfile format this code reads and writes.
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lockfile {
    pub format: u32,
    /// The determinism epoch the results were made in (`provenance::EPOCH`).
    pub epoch: u32,
    /// The procmodel (engine and toolkit) version that made them.
    pub procmodel: String,
    /// How many `[[model]]` tables follow (a truncated file is caught even before the
    /// checksum).
    pub model_count: usize,
    /// BLAKE3 of the file's content with this field empty (see [`Lockfile::seal`]).
    pub checksum: String,
    pub source: Source,
    /// Files the results depend on besides the scene: a generator file and the Luau files
    /// beside it that it may `require` by path.
    #[serde(default, rename = "file", skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileLock>,
    #[serde(default, rename = "model")]
    pub models: Vec<ModelLock>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// A scene file whose models are regenerated.
    Scene,
    /// A generator module run as one ProceduralModel (as `procmodel generate` runs it).
    Generator,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub kind: SourceKind,
    /// Relative to the lockfile's folder.
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileLock {
    /// Relative to the lockfile's folder.
    pub path: String,
    /// BLAKE3 of its bytes, hex.
    pub hash: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelLock {
    /// `GetFullName` of the model.
    pub path: String,
    /// `GetFullName` of its generator module.
    pub generator: String,
    /// BLAKE3 of the generator's Source, hex.
    pub source: String,
    pub sandboxed: bool,
    /// `SecurityCapabilities` bits of the generator, hex.
    pub capabilities: String,
    /// The model's Size and Scale (Size ÷ Scale is what the generator is given).
    pub size: [f64; 3],
    pub scale: f64,
    /// Content hash of the results (`procmodel_dom::hash::children_hash`), hex.
    pub content_hash: String,
    /// Instances in the results.
    pub instances: u64,
    /// Whether the scene file held these very results when it was locked (then `verify`
    /// also checks the results saved in the file).
    pub stored: bool,
    /// Every input's digest (`provenance::Inputs`), attributes with their type and value.
    #[serde(default, rename = "input")]
    pub inputs: Vec<InputLock>,
    /// The other ModuleScripts of the scene the generator may require.
    #[serde(default, rename = "module", skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<ModuleLock>,
    /// What its generation read of the scene (the `reads` input), by path.
    #[serde(default, rename = "read", skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<ReadLock>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputLock {
    /// `size`, `attr.<Name>`, `generator`, `source`, `sandbox` or `modules`.
    pub name: String,
    /// BLAKE3 digest of the input, hex (`provenance::InputPart`).
    pub digest: String,
    /// An attribute's type (`Float64`, `String`, `Vector3`, ...).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub ty: Option<String>,
    /// An attribute's value, as JSON of `rbx_types::Variant` (exact: floats round-trip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// One read of the scene by a model's generation (`provenance::SceneRead`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadLock {
    /// The instance, as a script names it: `game.ReplicatedStorage.Assets.Tree`
    /// (`procmodel_dom::reads::encode_path`).
    pub path: String,
    /// Only its own record (class, name, properties, attributes) was read, not its
    /// children.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own: bool,
    /// BLAKE3 digest of what is there (`procmodel_dom::reads::read_digest`), hex.
    pub digest: String,
}

impl ReadLock {
    /// The read it stands for; Err names what is wrong.
    pub fn read(&self) -> Result<procmodel_engine::provenance::SceneRead, String> {
        let path = procmodel_dom::reads::decode_path(&self.path)
            .ok_or_else(|| format!("read {}: not a path (game.Name.Name...)", self.path))?;
        let digest = blake3::Hash::from_hex(&self.digest)
            .map_err(|_| format!("read {}: digest is not 64 hex digits", self.path))?;
        Ok(procmodel_engine::provenance::SceneRead {
            path,
            own: self.own,
            digest: *digest.as_bytes(),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModuleLock {
    pub name: String,
    /// BLAKE3 digest of its Source and sandbox state, hex.
    pub digest: String,
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// How a lockfile shows an attribute's value: its type and the value without the JSON
/// type tag (`Float64 7.0`).
pub(crate) fn shown_value(ty: &str, json: &str) -> String {
    format!("{ty} {}", inner(json))
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

impl InputLock {
    /// The attribute value written for this input, read back (None for an input that is
    /// not an attribute, or a value that is not one).
    pub fn variant(&self) -> Option<rbx_types::Variant> {
        serde_json::from_str(self.value.as_deref()?).ok()
    }
}

impl ModelLock {
    /// Checks that every value the entry writes for people to read (Size and Scale, each
    /// attribute's type and value, the generator's name, Source digest and sandbox state,
    /// the module list) is the one its input digest was made from, as the engine's
    /// provenance digests them. `verify` compares digests with the regenerated model; this
    /// makes sure what an auditor reads in the lockfile is what was compared. Err names the
    /// input and what is wrong.
    pub fn check(&self) -> Result<(), String> {
        let digest = |name: &str| {
            self.inputs
                .iter()
                .find(|i| i.name == name)
                .map(|i| i.digest.as_str())
                .unwrap_or_default()
        };
        let edited = |name: &str, shown: &str| {
            Err(format!(
                "input {name}: the value written ({shown}) is not the one its digest was made from: the lockfile was edited"
            ))
        };
        // Size and Scale: the engine digests Size ÷ Scale per axis (`input_size_key`).
        let scale = self.scale as f32;
        if !(scale.is_finite() && scale > 0.0) {
            return Err(format!("scale {} is not a positive number", self.scale));
        }
        if self.size.iter().any(|c| !(*c as f32).is_finite()) {
            return Err(format!("size {:?} is not a size", self.size));
        }
        let size = hex(&size_digest(Some(self.size.map(|c| c as f32)), scale));
        // A model with no Size at all digests nothing and is locked as [0, 0, 0].
        let no_size = self.size == [0.0; 3] && digest("size") == hex(&size_digest(None, scale));
        if size != digest("size") && !no_size {
            return edited("size", &format!("{:?} at scale {}", self.size, self.scale));
        }
        for i in &self.inputs {
            match i.name.as_str() {
                "size" | "generator" | "source" | "sandbox" | "carried" | "modules" | "reads" => {
                    if i.ty.is_some() || i.value.is_some() {
                        return Err(format!(
                            "input {}: has a type or value, which only attributes have",
                            i.name
                        ));
                    }
                }
                name if name.starts_with("attr.") => {
                    let (Some(ty), Some(json)) = (&i.ty, &i.value) else {
                        return Err(format!(
                            "input {name}: an attribute needs a type and a value"
                        ));
                    };
                    let Some(v) = i.variant() else {
                        return Err(format!(
                            "input {name}: the value {json} cannot be read as an attribute value (NaN or infinity cannot be written in a lockfile)"
                        ));
                    };
                    let actual = format!("{:?}", v.ty());
                    if &actual != ty {
                        return Err(format!(
                            "input {name}: type {ty} is not the type of the value written ({actual}): the lockfile was edited"
                        ));
                    }
                    if hex(&procmodel_dom::hash::value_digest(&v)) != i.digest {
                        return edited(name, &shown_value(ty, json));
                    }
                }
                name => return Err(format!("input {name} is not a known input")),
            }
        }
        // The generator's full name; a model without one digests "\0none" and is locked
        // with an empty name.
        let none = hex(&name_digest(None));
        let generator_ok = hex(&name_digest(Some(&self.generator))) == digest("generator")
            || (self.generator.is_empty() && none == digest("generator"));
        if !generator_ok {
            return edited("generator", &self.generator);
        }
        // The Source's digest; a generator without a Source is locked as the digest of "".
        let source_ok = self.source == digest("source")
            || (self.source == hex(blake3::hash(b"").as_bytes()) && none == digest("source"));
        if !source_ok {
            return edited("source", &self.source);
        }
        let caps = u64::from_str_radix(&self.capabilities, 16)
            .map_err(|_| "capabilities is not a hex number".to_owned())?;
        if hex(&sandbox_state_digest(self.sandboxed, caps)) != digest("sandbox") {
            return edited(
                "sandbox",
                &format!(
                    "sandboxed={} capabilities={}",
                    self.sandboxed, self.capabilities
                ),
            );
        }
        let modules = self
            .modules
            .iter()
            .map(|m| {
                blake3::Hash::from_hex(&m.digest)
                    .map(|d| (m.name.as_str(), *d.as_bytes()))
                    .map_err(|_| format!("module {}: digest is not 64 hex digits", m.name))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if hex(&module_list_digest(modules.iter().map(|(n, d)| (*n, d)))) != digest("modules") {
            return Err(
                "input modules: the modules listed are not the ones its digest was made from: the lockfile was edited"
                    .to_owned(),
            );
        }
        let reads = self
            .reads
            .iter()
            .map(ReadLock::read)
            .collect::<Result<Vec<_>, _>>()?;
        let locked = self.inputs.iter().any(|i| i.name == "reads");
        if locked == reads.is_empty()
            || locked && hex(&procmodel_engine::provenance::reads_digest(&reads)) != digest("reads")
        {
            return Err(
                "input reads: the reads listed are not the ones its digest was made from: the lockfile was edited"
                    .to_owned(),
            );
        }
        Ok(())
    }
}

impl Lockfile {
    /// A lockfile of this procmodel for `models` (sealed by [`Lockfile::to_toml`]).
    pub fn new(source: Source, files: Vec<FileLock>, models: Vec<ModelLock>) -> Lockfile {
        Lockfile {
            format: FORMAT,
            epoch: EPOCH,
            procmodel: env!("CARGO_PKG_VERSION").to_owned(),
            model_count: models.len(),
            checksum: String::new(),
            source,
            files,
            models,
        }
    }

    fn body(&self) -> Result<String, String> {
        let mut unsealed = self.clone();
        unsealed.checksum = String::new();
        toml::to_string(&unsealed).map_err(|e| format!("cannot write TOML: {e}"))
    }

    /// The checksum of the content (everything but the checksum itself, re-serialised, so
    /// reformatting the file does not matter but changing a value does).
    pub fn seal(&self) -> Result<String, String> {
        Ok(blake3::hash(self.body()?.as_bytes()).to_hex().to_string())
    }

    /// The file's text: a comment line, then the sealed TOML. Refuses entries whose
    /// written values are not the ones their digests were made from ([`ModelLock::check`]):
    /// `verify` would refuse them.
    pub fn to_toml(&self) -> Result<String, String> {
        for m in &self.models {
            m.check()
                .map_err(|e| format!("model {}: cannot be locked: {e}", m.path))?;
        }
        let mut sealed = self.clone();
        sealed.model_count = sealed.models.len();
        sealed.checksum = sealed.seal()?;
        let text = toml::to_string(&sealed).map_err(|e| format!("cannot write TOML: {e}"))?;
        Ok(format!(
            "# procmodel lockfile: `procmodel verify <this file>` regenerates every model and checks it.\n{text}"
        ))
    }

    /// Parses and validates a lockfile's text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Lockfile, LockError> {
        let err = |message: String| LockError {
            file: file.to_owned(),
            message,
        };
        let lock: Lockfile = toml::from_str(text).map_err(|e| {
            err(format!(
                "not a valid lockfile (truncated or edited?): {}",
                toml_error(text, &e)
            ))
        })?;
        if lock.format != FORMAT {
            return Err(err(format!(
                "lockfile format {} is not known (this procmodel reads format {FORMAT})",
                lock.format
            )));
        }
        if lock.epoch != EPOCH {
            return Err(err(format!(
                "unknown determinism epoch {} (this procmodel {} is epoch {EPOCH}): results of another epoch cannot be verified, lock them again with this version",
                lock.epoch,
                env!("CARGO_PKG_VERSION")
            )));
        }
        if lock.models.len() != lock.model_count {
            return Err(err(format!(
                "model_count says {} models but the file holds {} (truncated?)",
                lock.model_count,
                lock.models.len()
            )));
        }
        let mut seen = BTreeSet::new();
        for f in &lock.files {
            if !is_hex64(&f.hash) {
                return Err(err(format!("file {}: hash is not 64 hex digits", f.path)));
            }
        }
        for m in &lock.models {
            let bad = |what: &str| err(format!("model {}: {what}", m.path));
            if !seen.insert(m.path.as_str()) {
                return Err(bad("listed twice"));
            }
            for (field, v) in [("content_hash", &m.content_hash), ("source", &m.source)] {
                if !is_hex64(v) {
                    return Err(bad(&format!("{field} is not 64 hex digits")));
                }
            }
            if u64::from_str_radix(&m.capabilities, 16).is_err() {
                return Err(bad("capabilities is not a hex number"));
            }
            let mut names = BTreeSet::new();
            for i in &m.inputs {
                if !names.insert(i.name.as_str()) {
                    return Err(bad(&format!("input {} listed twice", i.name)));
                }
                if !is_hex64(&i.digest) {
                    return Err(bad(&format!(
                        "input {}: digest is not 64 hex digits",
                        i.name
                    )));
                }
            }
            for required in ["size", "generator", "source", "sandbox", "modules"] {
                if !names.contains(required) {
                    return Err(bad(&format!("input {required} is missing")));
                }
            }
            for md in &m.modules {
                if !is_hex64(&md.digest) {
                    return Err(bad(&format!(
                        "module {}: digest is not 64 hex digits",
                        md.name
                    )));
                }
            }
            for r in &m.reads {
                if !is_hex64(&r.digest) {
                    return Err(bad(&format!(
                        "read {}: digest is not 64 hex digits",
                        r.path
                    )));
                }
                r.read().map_err(|e| bad(&e))?;
            }
        }
        let expected = lock.seal().map_err(&err)?;
        if expected != lock.checksum {
            return Err(err(
                "checksum does not match the content: the lockfile was edited or truncated".into(),
            ));
        }
        // The checksum does not stop someone who recomputes it: every value written must
        // still be the one its digest was made from.
        for m in &lock.models {
            m.check()
                .map_err(|e| err(format!("model {}: {e}", m.path)))?;
        }
        Ok(lock)
    }
}

/// A TOML parse error as people read it: toml's own text (which quotes the line and marks
/// the column) when the line is short, else `line L, column C: message` — a garbage file may
/// hold a line of megabytes, which the quote would repeat.
pub fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let shown = e.to_string();
    if shown.len() <= 2_000 {
        return shown;
    }
    match e.span() {
        Some(span) => {
            let before = &text.as_bytes()[..span.start.min(text.len())];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
            format!("line {line}, column {column}: {}", e.message())
        }
        None => e.message().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbx_dom_weak::{InstanceBuilder, WeakDom};
    use rbx_types::{Attributes, Variant, Vector3};

    /// A scene with a generator module, another module and a ProceduralModel with
    /// attributes of three types, scaled; its lock entry as `lock` writes it.
    fn entry() -> ModelLock {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let storage = dom.insert(root, InstanceBuilder::new("ServerStorage"));
        let generator = dom.insert(
            storage,
            InstanceBuilder::new("ModuleScript")
                .with_name("Stairs")
                .with_property("Source", "return {}"),
        );
        dom.insert(
            storage,
            InstanceBuilder::new("ModuleScript")
                .with_name("Util")
                .with_property("Source", "return 1"),
        );
        let workspace = dom.insert(root, InstanceBuilder::new("Workspace"));
        let mut attrs = Attributes::new();
        attrs.insert("Seed".into(), Variant::Float64(7.0));
        attrs.insert("Label".into(), Variant::String("x".into()));
        attrs.insert(
            "Offset".into(),
            Variant::Vector3(Vector3::new(1.0, 2.5, -3.0)),
        );
        let model = dom.insert(
            workspace,
            InstanceBuilder::new("ProceduralModel")
                .with_name("Stairs")
                .with_property("Generator", Variant::Ref(generator))
                .with_property("Size", Vector3::new(12.0, 12.5, 8.0))
                .with_property("Scale", 2.0f32)
                .with_property("Attributes", attrs),
        );
        crate::model_lock(&dom, model, false)
    }

    fn sample() -> Lockfile {
        Lockfile::new(
            Source {
                kind: SourceKind::Scene,
                path: "scene.rbxl".into(),
            },
            Vec::new(),
            vec![entry()],
        )
    }

    /// A garbage lockfile of one enormous line is named by line and column, not quoted.
    #[test]
    fn a_parse_error_on_a_huge_line_is_short() {
        let text = format!(
            "format = 1\nx = {}{}\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let e = Lockfile::parse(&text, "deep.lock").unwrap_err().to_string();
        assert!(
            e.len() < 300,
            "{} bytes: {}",
            e.len(),
            &e[..300.min(e.len())]
        );
        assert!(
            e.contains("deep.lock") && e.contains("line 2, column"),
            "{e}"
        );
        // A short line keeps toml's own quote of it.
        let e = Lockfile::parse("format = [1", "short.lock")
            .unwrap_err()
            .to_string();
        assert!(e.contains("format = [1"), "{e}");
    }

    #[test]
    fn round_trips_and_refuses_tampering() {
        let text = sample().to_toml().unwrap();
        let back = Lockfile::parse(&text, "x.lock").unwrap();
        assert_eq!(back.models, sample().models);
        let tampered = text.replace("instances = 0", "instances = 4");
        assert_ne!(tampered, text);
        let e = Lockfile::parse(&tampered, "x.lock")
            .unwrap_err()
            .to_string();
        assert!(e.contains("checksum"), "{e}");
        let cut = &text[..text.len() / 2];
        let e = Lockfile::parse(cut, "x.lock").unwrap_err().to_string();
        assert!(e.starts_with("x.lock: "), "{e}");
        let epoch = text.replace(&format!("epoch = {EPOCH}"), "epoch = 999");
        let e = Lockfile::parse(&epoch, "x.lock").unwrap_err().to_string();
        assert!(e.contains("unknown determinism epoch 999"), "{e}");
    }

    /// The text of `lock` with `edit` applied to its first model and the checksum
    /// recomputed, as someone who knows the documented rule would; its parse error.
    fn resealed(edit: impl FnOnce(&mut ModelLock)) -> String {
        let mut lock = sample();
        edit(&mut lock.models[0]);
        lock.checksum = lock.seal().unwrap();
        let text = toml::to_string(&lock).unwrap();
        match Lockfile::parse(&text, "x.lock") {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e.to_string(),
        }
    }

    /// Bug fixed: a value written in the lockfile edited with the checksum recomputed was
    /// accepted (and `verify` then compared only digests, reporting a match). Every value
    /// written must be the one its digest was made from.
    #[test]
    fn values_edited_with_the_checksum_recomputed_are_refused() {
        let input = |m: &mut ModelLock, name: &str| -> usize {
            m.inputs.iter().position(|i| i.name == name).unwrap()
        };
        let e = resealed(|m| {
            let i = input(m, "attr.Seed");
            m.inputs[i].value = Some(r#"{"Float64":8.0}"#.into());
        });
        assert!(
            e.contains("model Workspace.Stairs: input attr.Seed: the value written (Float64 8.0) is not the one its digest was made from"),
            "{e}"
        );
        let e = resealed(|m| {
            let i = input(m, "attr.Seed");
            m.inputs[i].ty = Some("Bogus".into());
        });
        assert!(
            e.contains(
                "input attr.Seed: type Bogus is not the type of the value written (Float64)"
            ),
            "{e}"
        );
        let e = resealed(|m| {
            let i = input(m, "attr.Label");
            m.inputs[i].ty = Some("Float64".into());
            m.inputs[i].value = Some(r#"{"Float64":1.0}"#.into());
        });
        assert!(
            e.contains("input attr.Label: the value written (Float64 1.0)"),
            "{e}"
        );
        let e = resealed(|m| m.size = [91.0, 40.0, 90.0]);
        assert!(
            e.contains("input size: the value written ([91.0, 40.0, 90.0] at scale 2)"),
            "{e}"
        );
        for (scale, shown) in [
            (-1.0, "scale -1 "),
            (f64::NAN, "scale NaN "),
            (0.0, "scale 0 "),
        ] {
            let e = resealed(|m| m.scale = scale);
            assert!(
                e.contains(shown) && e.contains("is not a positive number"),
                "{e}"
            );
        }
        let e = resealed(|m| m.scale = 1.0);
        assert!(e.contains("input size: the value written"), "{e}");
        let e = resealed(|m| m.generator = "ServerStorage.Other".into());
        assert!(
            e.contains("input generator: the value written (ServerStorage.Other)"),
            "{e}"
        );
        let e = resealed(|m| m.source = "cd".repeat(32));
        assert!(e.contains("input source:"), "{e}");
        let e = resealed(|m| m.sandboxed = true);
        assert!(
            e.contains("input sandbox: the value written (sandboxed=true"),
            "{e}"
        );
        let e = resealed(|m| m.capabilities = "1f".into());
        assert!(e.contains("input sandbox:"), "{e}");
        let e = resealed(|m| m.modules[0].digest = "cd".repeat(32));
        assert!(e.contains("input modules: the modules listed"), "{e}");
        let e = resealed(|m| m.modules.clear());
        assert!(e.contains("input modules: the modules listed"), "{e}");
        let e = resealed(|m| {
            let i = input(m, "source");
            m.inputs[i].value = Some(r#"{"Float64":1.0}"#.into());
        });
        assert!(e.contains("input source: has a type or value"), "{e}");
        let e = resealed(|m| {
            let mut extra = m.inputs[0].clone();
            extra.name = "colour".into();
            m.inputs.push(extra);
        });
        assert!(e.contains("input colour is not a known input"), "{e}");
        // The same value written another way (an integer for a float) is the same value.
        let mut lock = sample();
        let i = input(&mut lock.models[0], "attr.Seed");
        lock.models[0].inputs[i].value = Some(r#"{"Float64":7}"#.into());
        lock.checksum = lock.seal().unwrap();
        Lockfile::parse(&toml::to_string(&lock).unwrap(), "x.lock").unwrap();
    }

    /// What `lock` collects from a scene is consistent by construction; a value a lockfile
    /// cannot write exactly (NaN) is refused when writing, not at `verify`.
    #[test]
    fn collected_entries_check_and_unwritable_values_are_refused_at_lock() {
        let m = entry();
        m.check().unwrap();
        assert_eq!(m.size, [12.0, 12.5, 8.0]);
        assert_eq!(m.scale, 2.0);
        assert_eq!(m.modules.len(), 1);
        let mut nan = sample();
        let i = nan.models[0]
            .inputs
            .iter()
            .position(|i| i.name == "attr.Seed")
            .unwrap();
        nan.models[0].inputs[i].value = Some(r#"{"Float64":null}"#.into());
        let e = nan.to_toml().unwrap_err();
        assert!(
            e.contains("model Workspace.Stairs: cannot be locked: input attr.Seed"),
            "{e}"
        );
    }

    #[test]
    fn the_reads_listed_are_the_ones_the_reads_input_was_made_from() {
        let read = |path: &str, own: bool, byte: u8| ReadLock {
            path: path.into(),
            own,
            digest: hex(&[byte; 32]),
        };
        // A lock entry with two reads, its `reads` input made from them, sealed.
        let with_reads = |reads: Vec<ReadLock>| {
            let mut lock = sample();
            let m = &mut lock.models[0];
            let list: Vec<_> = reads.iter().map(|r| r.read().unwrap()).collect();
            m.inputs.push(InputLock {
                name: "reads".into(),
                digest: hex(&procmodel_engine::provenance::reads_digest(&list)),
                ty: None,
                value: None,
            });
            m.reads = reads;
            lock.checksum = lock.seal().unwrap();
            lock
        };
        let lock = with_reads(vec![
            read("game.ReplicatedStorage.Assets.Tree", false, 1),
            read("game.ReplicatedStorage.Settings", true, 2),
        ]);
        let text = toml::to_string(&lock).unwrap();
        assert!(text.contains("[[model.read]]"), "{text}");
        let parsed = Lockfile::parse(&text, "x.lock").unwrap();
        assert_eq!(parsed.models[0].reads, lock.models[0].reads);
        // Edited with the checksum recomputed: another digest, a read left out, a bad path.
        let reseal = |edit: &dyn Fn(&mut ModelLock)| {
            let mut l = lock.clone();
            edit(&mut l.models[0]);
            l.checksum = l.seal().unwrap();
            Lockfile::parse(&toml::to_string(&l).unwrap(), "x.lock")
                .unwrap_err()
                .to_string()
        };
        let e = reseal(&|m| m.reads[0].digest = hex(&[9; 32]));
        assert!(e.contains("input reads: the reads listed"), "{e}");
        let e = reseal(&|m| m.reads[1].own = false);
        assert!(e.contains("input reads: the reads listed"), "{e}");
        let e = reseal(&|m| m.reads.clear());
        assert!(e.contains("input reads: the reads listed"), "{e}");
        let e = reseal(&|m| m.reads[0].path = "ReplicatedStorage.Tree".into());
        assert!(e.contains("read ReplicatedStorage.Tree: not a path"), "{e}");
        let e = reseal(&|m| m.reads[0].digest = "zz".into());
        assert!(e.contains("digest is not 64 hex digits"), "{e}");
    }
}
