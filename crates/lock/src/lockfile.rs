//! The lockfile: TOML, one `[[model]]` table per ProceduralModel with every input and the
//! content hash of its results, sealed by a checksum so an edited or truncated file is
//! refused before anything is compared.

use crate::LockError;
use procmodel_engine::provenance::EPOCH;
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

    /// The file's text: a comment line, then the sealed TOML.
    pub fn to_toml(&self) -> Result<String, String> {
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
        let lock: Lockfile = toml::from_str(text)
            .map_err(|e| err(format!("not a valid lockfile (truncated or edited?): {e}")))?;
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
        }
        let expected = lock.seal().map_err(&err)?;
        if expected != lock.checksum {
            return Err(err(
                "checksum does not match the content: the lockfile was edited or truncated".into(),
            ));
        }
        Ok(lock)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Lockfile {
        let h = "ab".repeat(32);
        let input = |n: &str| InputLock {
            name: n.into(),
            digest: h.clone(),
            ty: None,
            value: None,
        };
        Lockfile::new(
            Source {
                kind: SourceKind::Scene,
                path: "scene.rbxl".into(),
            },
            Vec::new(),
            vec![ModelLock {
                path: "Workspace.Stairs".into(),
                generator: "ServerStorage.Stairs".into(),
                source: h.clone(),
                sandboxed: false,
                capabilities: "0".into(),
                size: [12.0, 12.5, 1e-7],
                scale: 1.0,
                content_hash: h.clone(),
                instances: 3,
                stored: true,
                inputs: ["size", "generator", "source", "sandbox", "modules"]
                    .map(input)
                    .to_vec(),
                modules: Vec::new(),
            }],
        )
    }

    #[test]
    fn round_trips_and_refuses_tampering() {
        let text = sample().to_toml().unwrap();
        let back = Lockfile::parse(&text, "x.lock").unwrap();
        assert_eq!(back.models, sample().models);
        let tampered = text.replace("instances = 3", "instances = 4");
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
}
