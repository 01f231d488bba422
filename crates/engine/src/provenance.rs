//! Provenance: what a model's results were made from, recorded on its GeneratedFolder, and
//! the per-input digests that let `status` say *which* input changed since (the engine's own
//! fingerprint in `fingerprint.rs` is one number, for dirty tracking within a process).
//!
//! Attributes on every GeneratedFolder the engine applies (results or error placeholder):
//! - `ProcmodelInputs` (string): `v<epoch>` then one `name=digest` token per input, space
//!   separated; a digest is the first 16 hex digits of the input's BLAKE3 digest. Inputs:
//!   `size` (Size ÷ Scale, rounded as the fingerprint rounds it), `attr.<Name>` per attribute
//!   (its type and value, `procmodel_dom::hash::value_digest`), `generator` (the module's
//!   full name), `source` (its Source), `sandbox` (Sandboxed and Capabilities), `modules`
//!   (the other ModuleScripts of the scene, outside results, that the run depended on —
//!   `ProcmodelModules` names them — each by full name, Source and sandbox state).
//! - `ProcmodelModules` (string): those modules, one per line, each the first 16 hex digits
//!   of its digest and its full name ([`encode_modules`]): what a run required, directly or
//!   through other modules (`procmodel_script::RunOutput::requires`), so editing a module
//!   no generator requires leaves every model fresh, and `status` names the one that
//!   changed. Results recorded without it (older files, a run that failed before its code
//!   ran) count every ModuleScript of the scene.
//! - `ProcmodelContentHash` (string, results only): the 64-hex content hash of the folder's
//!   children (`procmodel_dom::hash::children_hash`), recorded when the results are applied
//!   and again at the end of a step in which a nested model in them was applied (that
//!   fills in the nested model's defaults and pins its pivot, which the hash covers; a
//!   cache entry keeps the hash of the results as they were applied).
//!
//! Unlike the in-process fingerprint, nothing here depends on referents, so digests compare
//! across processes and machines (the cache keys and lockfiles rely on that).

use crate::apply::{generator_of, prop, results_folder};
use crate::fingerprint::SourceDigests;
use procmodel_dom::hash::{children_hash, to_hex, value_digest};
use procmodel_dom::keys::KEYS;
use rbx_dom_weak::WeakDom;
use rbx_types::{Ref, Variant};

/// The determinism epoch: bumped whenever a change of procmodel may change the bytes a
/// generation produces for the same inputs (the Luau VM, the datatypes' arithmetic, the
/// toolkit's algorithms, result application, the content-hash encoding). Cache entries and
/// lockfiles of another epoch are never trusted. 2: each run's own virtual clock and
/// `math.random` stream, Heartbeat in frame-stepped runs, writes outside the container on
/// workers and in the cache. 3: a text object's `Font` is its `FontFace`; instances whose
/// `Archivable` is false are not cloned, saved or hashed; a part's `Size` is kept within
/// 0.001–2048 studs; ContentId properties are stored as the Content files keep. 4: the
/// `modules` input covers the modules a run required (`ProcmodelModules`), not every
/// ModuleScript of the scene. 5: what a run read of the scene, its modules' code included
/// while it loaded, is the `reads` input (`ProcmodelReads`). 6: a clone carries no
/// `UniqueId` (one made from the clock replaced the original's), nor does an instance whose
/// id the scene holds already. 7: a MeshPart made by `CreateMeshPartAsync` keeps its mesh's
/// size (`InitialSize`, read as `MeshSize`); a failure in a Rojo project's script names its
/// file in the error placeholder. 8: calls that failed now build results — a string that
/// spells a number is a number to the datatypes and to property writes, `SharedTable` and
/// `SharedTableRegistry` exist, `JSONEncode` takes any nesting up to 512 levels. 9:
/// `Humanoid.RootPart` reads the character's HumanoidRootPart (it was nil), and calls that
/// failed build results — `BuildRigFromAttachments`, `GetLimb`, `GetBodyPartR15`,
/// `RemoveAccessories`, `SetStateEnabled`, MaterialService's overrides and
/// `GetMaterialVariant`, `loadstring` where the place enables it, an Attachment axis set
/// parallel to the other; a time or heap limit's error names the script line it stopped.
/// 10: calls that failed build results — `GeometryService:SweepPartAsync`, `FragmentAsync`,
/// `GenerateFragmentSites`, `ChangeHistoryService:IsRecordingInProgress` — and the camera's projections,
/// PathfindingService and Lighting's sun and moon fail with their reasons. 11: negative
/// normals from `Vector3.FromNormalId` have positive zeros; `Lighting.TimeOfDay` keeps what
/// is written as `HH:MM:SS`; calls that failed build results — callbacks can be set,
/// `CalculateConstraintsToPreserve`, the `CFrame` space methods without arguments, a main
/// thread woken by `task.spawn` or by a frame handler, TestService's output, `_G` shared
/// by a script and its modules. 12: event handlers run inside the firing call in a place
/// whose `Workspace.SignalBehavior` is Default or Immediate, and handlers firing one
/// another stop at depth 10 (such a loop failed at the resumption limit); a new value
/// object is named "Value", a ShirtGraphic "Shirt Graphic", a Shirt or Pants "Clothing";
/// `os.clock` and `tick` read a microsecond later at each reading in a run; RunService's
/// PreRender (RenderStepped) fires each frame and `BindToRenderStep` binds to it;
/// calls that failed build results — `WriteVoxelChannels` of what `ReadVoxelChannels`
/// returned, `LogService.MessageOut`, `GetLogHistory`, `ScriptContext.Error`, Actor
/// messages, `game.Close` handlers, `Lighting.LightingChanged` — and `Terrain.IsSmooth`
/// reads true. 13: scripts compile at optimisation level 1, as in Studio, so small local
/// functions keep their frames (`debug.info` keys and tracebacks see them); StyleRule's
/// property methods and `CollectionService:CreateCollection` build results where they failed,
/// `Vector2.new`/`Vector3.new` read a datatype argument as 0 (they failed), and Terrain's
/// legacy cell methods (`SetCell`, …) and connecting `game.ServiceAdded` build results where
/// they failed. 14: `TweenService:SmoothDamp`, `Workspace:JoinToOutsiders`/
/// `UnjoinFromOutsiders`, `PGSIsEnabled` and `GetNumAwakeParts` build results where they
/// failed, and a Rojo project is read as Rojo
/// 7.7 reads it (JSONC, `.jsonc`/`.yaml`/`.plugin.luau`/`init.csv` files, `syncRules`, globs
/// crossing folders and applying inside included projects), so the same project can make
/// another scene; `TerrainWorld:Heights` refuses a surface at NaN or beyond the terrain's
/// extent (it returned the heights). 15: Camera's `SetRoll`/`GetRoll`/`GetRenderCFrame`/
/// `ZoomToExtents`/`GetPartsObscuringTarget`, Humanoid's `GetMoveVelocity`, the
/// animation-track lookups, `CollectionService:GetCollection` and the deprecated `Players`
/// spellings build results where they failed, and a lockfile shows a string attribute read
/// from a file as a `String` (it showed a `BinaryString`, so a lockfile made from memory
/// failed against the saved scene). 16: `HttpService:JSONEncode` follows Roblox's
/// reference (a table with array keys and string keys is the array, `inf`/`nan` are
/// written as such, a buffer is its base64 object, a value JSON cannot hold is `null`:
/// these failed or wrote `null`), `Sound.IsPlaying`/`IsPaused` read `Playing` (they
/// read false and true whatever a script had played), and a VM's heap is an arena whose
/// collector runs at points the code sets, so a table keyed by tables or functions iterates
/// the same on every run of the same work (it followed the process's addresses and Luau's
/// wall-clock GC pacing).
pub const EPOCH: u32 = 16;

/// The version of the result cache's entry format (`cache.rs`), part of every cache key:
/// entries written in another format are never looked up, so never misread.
pub const CACHE_FORMAT: u32 = 5;

/// Attribute of a GeneratedFolder: the inputs it was made from.
pub const INPUTS_ATTRIBUTE: &str = "ProcmodelInputs";
/// Attribute of a GeneratedFolder: the content hash of its children.
pub const CONTENT_HASH_ATTRIBUTE: &str = "ProcmodelContentHash";
/// Attribute of a GeneratedFolder: the modules its generation depended on.
pub const MODULES_ATTRIBUTE: &str = "ProcmodelModules";
/// Attribute of a GeneratedFolder: what its generation read of the scene.
pub const READS_ATTRIBUTE: &str = "ProcmodelReads";

/// One read of the scene by a run ([`procmodel_script::SceneRead`]).
pub use procmodel_script::SceneRead;

/// A `ProcmodelReads` value: one line per read, the first 16 hex digits of the digest of
/// what the run saw there, `t` (the subtree) or `o` (the instance's own record), and the
/// path ([`procmodel_dom::reads::encode_path`]).
pub fn encode_reads(reads: &[SceneRead]) -> String {
    let lines: Vec<String> = reads
        .iter()
        .map(|r| {
            let kind = if r.own { 'o' } else { 't' };
            let path = procmodel_dom::reads::encode_path(&r.path);
            format!("{} {kind} {path}", short(&r.digest))
        })
        .collect();
    lines.join("\n")
}

/// The reads a `ProcmodelReads` value lists ([`encode_reads`]): path, whether of the own
/// record, and the 16 hex digits recorded; None when it is not one.
pub fn decode_reads(s: &str) -> Option<Vec<(Vec<String>, bool, String)>> {
    if s.is_empty() {
        return Some(Vec::new());
    }
    s.split('\n')
        .map(|line| {
            let (digest, rest) = line.split_once(' ')?;
            let (kind, path) = rest.split_once(' ')?;
            if digest.len() != 16 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let own = match kind {
                "o" => true,
                "t" => false,
                _ => return None,
            };
            Some((
                procmodel_dom::reads::decode_path(path)?,
                own,
                digest.to_owned(),
            ))
        })
        .collect()
}

/// The reads `specs` name (path, own record), each with the digest of what `dom` holds
/// there now (through `sources`: the engine's, so a scene of many models reading one
/// template hashes it once a step).
pub(crate) fn reads_now(
    dom: &WeakDom,
    specs: &[(Vec<String>, bool)],
    sources: &mut SourceDigests,
) -> Vec<SceneRead> {
    specs
        .iter()
        .map(|(path, own)| SceneRead {
            digest: sources.read(dom, path, *own),
            path: path.clone(),
            own: *own,
        })
        .collect()
}

/// What `model`'s results record it read (`ProcmodelReads`), with what `dom` holds there
/// now; empty when they record no reads (or cannot be read: then the run's reads are not
/// known and the `reads` input is left out, as for results made before reads were named).
pub fn recorded_reads(dom: &WeakDom, model: Ref) -> Vec<SceneRead> {
    recorded_reads_with(dom, model, &mut SourceDigests::default())
}

/// [`recorded_reads`] through the engine's `sources`.
pub(crate) fn recorded_reads_with(
    dom: &WeakDom,
    model: Ref,
    sources: &mut SourceDigests,
) -> Vec<SceneRead> {
    let specs = results_folder(dom, model)
        .and_then(|f| string_attribute(dom, f, READS_ATTRIBUTE))
        .and_then(|s| decode_reads(&s))
        .unwrap_or_default();
    let specs: Vec<(Vec<String>, bool)> = specs.into_iter().map(|(p, o, _)| (p, o)).collect();
    reads_now(dom, &specs, sources)
}

/// The digest of the `reads` input. Nothing at a path is one fact, whether the run looked
/// for a child there or found a folder there before.
pub fn reads_digest(reads: &[SceneRead]) -> [u8; 32] {
    let absent = procmodel_dom::reads::absent_digest();
    let mut h = blake3::Hasher::new();
    h.update(b"procmodel-reads\0");
    for r in reads {
        h.update(&(r.path.len() as u64).to_le_bytes());
        for name in &r.path {
            h.update(&(name.len() as u64).to_le_bytes());
            h.update(name.as_bytes());
        }
        h.update(&[u8::from(r.own && r.digest != absent)]);
        h.update(&r.digest);
    }
    *h.finalize().as_bytes()
}

/// Whether one of `reads` is of a subtree that holds `model` (its Workspace, a Model it is
/// in): what the run saw there changes with the model's own generation, so it is not
/// keyed by it.
pub fn reads_hold(dom: &WeakDom, reads: &[SceneRead], model: Ref) -> bool {
    reads.iter().filter(|r| !r.own).any(|r| {
        procmodel_dom::reads::resolve(dom, &r.path)
            .is_some_and(|at| procmodel_dom::is_within(dom, model, at))
    })
}

/// What a cache keeps under [`requires_key`] of a base key: the modules the last run from
/// it required ([`encode_modules`]) and, after a line `~reads`, what it read
/// ([`encode_reads`]).
pub fn encode_record(modules: &[(String, [u8; 32])], reads: &[SceneRead]) -> String {
    let mut s = encode_modules(modules);
    if !reads.is_empty() {
        if !s.is_empty() {
            s.push('\n');
        }
        s.push_str("~reads\n");
        s.push_str(&encode_reads(reads));
    }
    s
}

/// The module names (sorted, each once) and reads an [`encode_record`] value names; None
/// when it is not one.
#[allow(clippy::type_complexity)]
pub fn decode_record(s: &str) -> Option<(Vec<String>, Vec<(Vec<String>, bool)>)> {
    let (modules, reads) = match s.strip_prefix("~reads\n") {
        Some(reads) => ("", Some(reads)),
        None => match s.split_once("\n~reads\n") {
            Some((m, r)) => (m, Some(r)),
            None => (s, None),
        },
    };
    let names = decode_names(modules)?;
    let reads = match reads {
        Some(r) => decode_reads(r)?
            .into_iter()
            .map(|(p, o, _)| (p, o))
            .collect(),
        None => Vec::new(),
    };
    Some((names, reads))
}

/// Which of the scene's modules a model's `modules` input covers.
#[derive(Debug, Clone, Copy)]
pub enum Modules<'a> {
    /// The ones its results name (`ProcmodelModules`); every ModuleScript of the scene when
    /// they name none (results recorded before procmodel named them, or a run that failed
    /// before its code ran, as a generator that does not load).
    Recorded,
    /// These, by full name (modules a cache record names).
    Named(&'a [String]),
    /// These, as [`run_modules`] lists what a run depended on.
    Listed(&'a [(String, [u8; 32])]),
}

/// A `ProcmodelModules` value: one line per module, the first 16 hex digits of its digest
/// (Source and sandbox state), a space and its full name (`\` and line breaks in it
/// escaped as `\\` and `\n`).
pub fn encode_modules(modules: &[(String, [u8; 32])]) -> String {
    let mut out = String::new();
    for (i, (name, digest)) in modules.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&short(digest));
        out.push(' ');
        for c in name.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                c => out.push(c),
            }
        }
    }
    out
}

/// The (full name, 16 hex digits) pairs a `ProcmodelModules` value lists
/// ([`encode_modules`]); None when it is not one.
pub fn decode_modules(s: &str) -> Option<Vec<(String, String)>> {
    if s.is_empty() {
        return Some(Vec::new());
    }
    s.split('\n')
        .map(|line| {
            let (digest, escaped) = line.split_once(' ')?;
            if digest.len() != 16 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let mut name = String::with_capacity(escaped.len());
            let mut chars = escaped.chars();
            while let Some(c) = chars.next() {
                match (c, c == '\\') {
                    (_, false) => name.push(c),
                    (_, true) => match chars.next()? {
                        '\\' => name.push('\\'),
                        'n' => name.push('\n'),
                        _ => return None,
                    },
                }
            }
            Some((name, digest.to_owned()))
        })
        .collect()
}

/// The full names a `ProcmodelModules` value lists, sorted, each once; None when it is not
/// one.
pub fn decode_names(s: &str) -> Option<Vec<String>> {
    let mut names: Vec<String> = decode_modules(s)?.into_iter().map(|(n, _)| n).collect();
    names.sort();
    names.dedup();
    Some(names)
}

/// The full names of the ModuleScripts among `requires` that a `modules` input counts (in
/// the scene, outside results), sorted, each once.
pub fn names_of(dom: &WeakDom, requires: &[Ref]) -> Vec<String> {
    let mut names: Vec<String> = requires
        .iter()
        .copied()
        .filter(|&r| {
            dom.get_by_ref(r).is_some_and(|i| i.class == "ModuleScript")
                && in_scene_outside_results(dom, r)
        })
        .map(|r| procmodel_dom::full_name(dom, r))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Whether `r` is under the DataModel and not inside a GeneratedFolder (where
/// [`all_modules`] looks).
fn in_scene_outside_results(dom: &WeakDom, r: Ref) -> bool {
    let mut cur = r;
    loop {
        if cur == dom.root_ref() {
            return true;
        }
        match dom.get_by_ref(cur) {
            Some(i) if i.class != "GeneratedFolder" => cur = i.parent(),
            _ => return false,
        }
    }
}

/// The names `model`'s results record in `ProcmodelModules` (None: none recorded).
pub fn recorded_names(dom: &WeakDom, model: Ref) -> Option<Vec<String>> {
    let folder = results_folder(dom, model)?;
    decode_names(&string_attribute(dom, folder, MODULES_ATTRIBUTE)?)
}

/// One input of a generation and its digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputPart {
    /// `size`, `attr.<Name>`, `generator`, `source`, `sandbox` or `modules`.
    pub name: String,
    pub digest: [u8; 32],
}

/// Every input of a model's generation, in a fixed order (size, attributes by name,
/// generator, source, sandbox, modules).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Inputs {
    pub parts: Vec<InputPart>,
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    *blake3::hash(bytes).as_bytes()
}

/// The digest of a model's Size at its Scale (`None`: the model has no Size): what the
/// `size` input is. Shared with the lockfile's check of the values it writes.
pub fn size_digest(size: Option<[f32; 3]>, scale: f32) -> [u8; 32] {
    let mut b = Vec::with_capacity(12);
    for c in size.into_iter().flatten() {
        b.extend_from_slice(&procmodel_dom::input_size_key(c, scale).to_le_bytes());
    }
    digest(&b)
}

/// The digest of a generator's full name (`None`: no generator), the `generator` input; a
/// missing Source is this digest of `None` too.
pub fn name_digest(name: Option<&str>) -> [u8; 32] {
    digest(name.unwrap_or("\0none").as_bytes())
}

/// The digest of a module's sandbox state: `Sandboxed` and its capability bits.
pub fn sandbox_state_digest(sandboxed: bool, capabilities: u64) -> [u8; 32] {
    let mut b = vec![sandboxed as u8];
    b.extend_from_slice(&capabilities.to_le_bytes());
    digest(&b)
}

/// The digest of the scene's other modules (the `modules` input), each by full name and
/// the digest of its Source and sandbox state, in the order given.
pub fn module_list_digest<'a>(
    modules: impl IntoIterator<Item = (&'a str, &'a [u8; 32])>,
) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    for (name, d) in modules {
        h.update(&(name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update(d);
    }
    *h.finalize().as_bytes()
}

fn short(d: &[u8; 32]) -> String {
    procmodel_dom::hash::hex(&d[..8])
}

impl Inputs {
    /// The inputs of `model` as the scene holds them now, its modules as its results
    /// record them ([`Modules::Recorded`]).
    pub fn of(dom: &WeakDom, model: Ref) -> Inputs {
        Inputs::of_with(dom, model, &mut SourceDigests::default())
    }

    /// [`Inputs::of`], digesting each module's Source through `sources` (the engine's, so a
    /// scene of many models sharing modules hashes each Source once, not once per model).
    pub(crate) fn of_with(dom: &WeakDom, model: Ref, sources: &mut SourceDigests) -> Inputs {
        let reads = recorded_reads_with(dom, model, sources);
        Inputs::after_defaults(dom, model, &[], Modules::Recorded, sources).with_reads(&reads)
    }

    /// The inputs `model` will have once a run's results are applied: applying fills in
    /// each of the generator's `defaults` the model has no attribute for (as
    /// `apply::apply_output` does), which is all it changes among the inputs. A worker
    /// computes them on its copy of the scene, so the engine's thread does not.
    pub(crate) fn after_defaults(
        dom: &WeakDom,
        model: Ref,
        defaults: &[(String, Variant)],
        modules: Modules<'_>,
        sources: &mut SourceDigests,
    ) -> Inputs {
        let mut parts = Vec::new();
        let mut push = |name: String, d: [u8; 32]| parts.push(InputPart { name, digest: d });
        let Some(inst) = dom.get_by_ref(model) else {
            return Inputs::default();
        };
        let scale = match prop(inst, KEYS.scale) {
            Some(Variant::Float32(s)) if *s > 0.0 => *s,
            _ => 1.0,
        };
        // An unset Size is the class default a saved file gives it.
        let size_value =
            prop(inst, KEYS.size).or_else(|| procmodel_dom::db_default(&inst.class, "Size"));
        let size = match size_value {
            Some(Variant::Vector3(s)) => Some([s.x, s.y, s.z]),
            _ => None,
        };
        push("size".into(), size_digest(size, scale));
        let attrs = match prop(inst, KEYS.attributes) {
            Some(Variant::Attributes(a)) => Some(a),
            _ => None,
        };
        let missing = |name: &str| attrs.is_none_or(|a| a.get(name).is_none());
        // A copy only when a default is missing (the common case has every attribute set).
        let merged = defaults.iter().any(|(k, _)| missing(k)).then(|| {
            let mut merged = attrs.cloned().unwrap_or_default();
            for (k, v) in defaults {
                if merged.get(k.as_str()).is_none() {
                    merged.insert(k.clone(), v.clone());
                }
            }
            merged
        });
        if let Some(a) = merged.as_ref().or(attrs) {
            for (k, v) in a.iter() {
                push(format!("attr.{k}"), value_digest(v));
            }
        }
        let module = generator_of(dom, model);
        let name = module.map(|g| procmodel_dom::full_name(dom, g));
        push("generator".into(), name_digest(name.as_deref()));
        let minst = module.and_then(|g| dom.get_by_ref(g));
        let source = match (module, minst.and_then(|i| prop(i, KEYS.source))) {
            (Some(g), Some(Variant::String(s))) => *sources.digest(g, s).as_bytes(),
            _ => name_digest(None),
        };
        push("source".into(), source);
        push("sandbox".into(), sandbox_digest(minst));
        if let Some(carried) = module.and_then(|g| sources.carried(g, || carried_digest(dom, g))) {
            push("carried".into(), carried);
        }
        let modules = match modules {
            Modules::Listed(list) => module_list_digest(list.iter().map(|(n, d)| (n.as_str(), d))),
            Modules::Named(names) => named_modules_digest(dom, module, names, sources),
            Modules::Recorded => match recorded_names(dom, model) {
                Some(names) => named_modules_digest(dom, module, &names, sources),
                None => modules_digest(dom, module, sources),
            },
        };
        push("modules".into(), modules);
        Inputs { parts }
    }

    /// The digest of the `modules` input (zeros when there is none).
    pub fn modules_digest(&self) -> [u8; 32] {
        self.parts
            .iter()
            .find(|p| p.name == "modules")
            .map_or([0; 32], |p| p.digest)
    }

    /// The digest of what a run found as it went, besides its inputs: the `modules` input,
    /// and with it the `reads` input when there is one.
    pub fn deps_digest(&self) -> [u8; 32] {
        let modules = self.modules_digest();
        match self.parts.iter().find(|p| p.name == "reads") {
            None => modules,
            Some(reads) => {
                let mut h = blake3::Hasher::new();
                h.update(b"procmodel-cache-deps\0");
                h.update(&modules);
                h.update(&reads.digest);
                *h.finalize().as_bytes()
            }
        }
    }

    /// Sets the digest of the `modules` input.
    pub(crate) fn set_modules_digest(&mut self, digest: [u8; 32]) {
        if let Some(p) = self.parts.iter_mut().find(|p| p.name == "modules") {
            p.digest = digest;
        }
    }

    /// These inputs with the `reads` input for `reads` (none when the run read nothing).
    pub fn with_reads(mut self, reads: &[SceneRead]) -> Inputs {
        self.parts.retain(|p| p.name != "reads");
        if !reads.is_empty() {
            self.parts.push(InputPart {
                name: "reads".into(),
                digest: reads_digest(reads),
            });
        }
        self
    }

    /// The cache key of a generation from these inputs placed at `model`'s pivot and scale
    /// (the cached results are the applied ones), in this epoch: [`keyed`] over
    /// [`Inputs::base_key`] and [`Inputs::deps_digest`].
    pub fn cache_key(&self, dom: &WeakDom, model: Ref) -> [u8; 32] {
        keyed(&self.base_key(dom, model), &self.deps_digest())
    }

    /// Every input but `modules` and `reads`, the placement and the epoch: what a
    /// generation's cache key is made from before knowing which modules it requires and
    /// what it reads. Under [`requires_key`] of it the cache keeps the names of the
    /// modules the last run from it required and what it read.
    pub fn base_key(&self, dom: &WeakDom, model: Ref) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        h.update(b"procmodel-cache-key\0");
        h.update(&EPOCH.to_le_bytes());
        h.update(&CACHE_FORMAT.to_le_bytes());
        for p in self
            .parts
            .iter()
            .filter(|p| p.name != "modules" && p.name != "reads")
        {
            h.update(&(p.name.len() as u64).to_le_bytes());
            h.update(p.name.as_bytes());
            h.update(&p.digest);
        }
        let pivot = procmodel_dom::get_pivot(dom, model).unwrap_or_default();
        for x in pivot.to_cols_array() {
            h.update(&x.to_bits().to_le_bytes());
        }
        let scale = dom
            .get_by_ref(model)
            .map_or(1.0, procmodel_dom::model_scale);
        h.update(&scale.to_bits().to_le_bytes());
        *h.finalize().as_bytes()
    }

    /// The `ProcmodelInputs` attribute value.
    pub fn to_attribute(&self) -> String {
        let mut s = format!("v{EPOCH}");
        for p in &self.parts {
            s.push(' ');
            s.push_str(&p.name);
            s.push('=');
            s.push_str(&short(&p.digest));
        }
        s
    }
}

/// What the generator module carries besides its Source, which its code reaches through
/// `script` — children (templates to clone, values, data), attributes and tags — as the
/// `carried` input: their canonical content hash and digests. None when it carries nothing
/// (most modules: no `carried` input at all).
pub fn carried_digest(dom: &WeakDom, module: Ref) -> Option<[u8; 32]> {
    let inst = dom.get_by_ref(module)?;
    let attributes = match prop(inst, KEYS.attributes) {
        Some(v @ Variant::Attributes(a)) if !a.is_empty() => Some(value_digest(v)),
        _ => None,
    };
    let tags = match prop(inst, KEYS.tags) {
        Some(v @ Variant::Tags(t)) if t.iter().next().is_some() => Some(value_digest(v)),
        _ => None,
    };
    if inst.children().is_empty() && attributes.is_none() && tags.is_none() {
        return None;
    }
    let mut h = blake3::Hasher::new();
    h.update(b"procmodel-carried\0");
    h.update(&children_hash(dom, module));
    h.update(&attributes.unwrap_or([0; 32]));
    h.update(&tags.unwrap_or([0; 32]));
    Some(*h.finalize().as_bytes())
}

/// A cache key: a [`Inputs::base_key`] with the digest of the modules the generation
/// required.
pub fn keyed(base: &[u8; 32], modules: &[u8; 32]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(b"procmodel-cache-key-modules\0");
    h.update(base);
    h.update(modules);
    *h.finalize().as_bytes()
}

/// The key under which a cache keeps, for a [`Inputs::base_key`], the names of the modules
/// the last generation from it required ([`encode_modules`]).
pub fn requires_key(base: &[u8; 32]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(b"procmodel-cache-requires\0");
    h.update(base);
    *h.finalize().as_bytes()
}

fn sandbox_digest(module: Option<&rbx_dom_weak::Instance>) -> [u8; 32] {
    let sandboxed = matches!(
        module.and_then(|i| prop(i, KEYS.sandboxed)),
        Some(Variant::Bool(true))
    );
    let caps = match module.and_then(|i| prop(i, KEYS.capabilities)) {
        Some(Variant::SecurityCapabilities(c)) => c.bits(),
        _ => 0,
    };
    sandbox_state_digest(sandboxed, caps)
}

/// The modules `model`'s `modules` input covers ([`Modules::Recorded`]) except its
/// generator, by full name (then digest, for namesakes), each with the digest of its Source
/// and sandbox state.
pub fn required_modules(dom: &WeakDom, model: Ref) -> Vec<(String, [u8; 32])> {
    let generator = generator_of(dom, model);
    let mut sources = SourceDigests::default();
    match recorded_names(dom, model) {
        Some(names) => named_modules(dom, generator, &names, &mut sources),
        None => modules_with(dom, generator, &mut sources),
    }
}

/// The scene's modules (outside results, except `generator`) whose full name is among
/// `names`, as [`required_modules`] lists them.
pub(crate) fn named_modules(
    dom: &WeakDom,
    generator: Option<Ref>,
    names: &[String],
    sources: &mut SourceDigests,
) -> Vec<(String, [u8; 32])> {
    if names.is_empty() {
        return Vec::new();
    }
    let wanted: std::collections::BTreeSet<&str> = names.iter().map(String::as_str).collect();
    sources
        .modules(|sources| all_modules(dom, sources))
        .into_iter()
        .filter(|(name, _, r)| Some(*r) != generator && wanted.contains(name.as_str()))
        .map(|(name, d, _)| (name, d))
        .collect()
}

/// What a run of `model`'s generator that required `requires` depended on, as its
/// `ProcmodelModules` lists them ([`Modules::Listed`]).
pub(crate) fn run_modules(
    dom: &WeakDom,
    model: Ref,
    requires: &[Ref],
    sources: &mut SourceDigests,
) -> Vec<(String, [u8; 32])> {
    named_modules(
        dom,
        generator_of(dom, model),
        &names_of(dom, requires),
        sources,
    )
}

pub(crate) fn named_modules_digest(
    dom: &WeakDom,
    generator: Option<Ref>,
    names: &[String],
    sources: &mut SourceDigests,
) -> [u8; 32] {
    let modules = named_modules(dom, generator, names, sources);
    module_list_digest(modules.iter().map(|(name, d)| (name.as_str(), d)))
}

fn modules_with(
    dom: &WeakDom,
    generator: Option<Ref>,
    sources: &mut SourceDigests,
) -> Vec<(String, [u8; 32])> {
    sources
        .modules(|sources| all_modules(dom, sources))
        .into_iter()
        .filter(|&(_, _, r)| Some(r) != generator)
        .map(|(name, d, _)| (name, d))
        .collect()
}

/// Every ModuleScript of the scene outside GeneratedFolders, by full name (then digest),
/// each with the digest of its Source and sandbox state and its referent.
fn all_modules(dom: &WeakDom, sources: &mut SourceDigests) -> Vec<(String, [u8; 32], Ref)> {
    let mut found = Vec::new();
    let mut stack = vec![dom.root_ref()];
    while let Some(r) = stack.pop() {
        let Some(i) = dom.get_by_ref(r) else { continue };
        if i.class == "GeneratedFolder" {
            continue;
        }
        if i.class == "ModuleScript" {
            let src = crate::apply::source_text(i);
            let mut b = sources.digest(r, src).as_bytes().to_vec();
            b.extend_from_slice(&sandbox_digest(Some(i)));
            found.push((procmodel_dom::full_name(dom, r), digest(&b), r));
        }
        stack.extend(i.children().iter().copied());
    }
    found.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    found
}

fn modules_digest(dom: &WeakDom, generator: Option<Ref>, sources: &mut SourceDigests) -> [u8; 32] {
    sources.modules_digest(generator, |sources| {
        let modules = modules_with(dom, generator, sources);
        module_list_digest(modules.iter().map(|(name, d)| (name.as_str(), d)))
    })
}

/// The module `model`'s Generator points at, when it is in the scene.
pub fn generator(dom: &WeakDom, model: Ref) -> Option<Ref> {
    generator_of(dom, model)
}

/// The model's current GeneratedFolder.
pub fn results(dom: &WeakDom, model: Ref) -> Option<Ref> {
    results_folder(dom, model)
}

/// ProceduralModels of the scene, pre-order.
pub fn models(dom: &WeakDom) -> Vec<Ref> {
    crate::apply::models_in_scene(dom)
}

/// Inputs as recorded in a `ProcmodelInputs` attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub epoch: u32,
    /// (input name, 16 hex digits).
    pub parts: Vec<(String, String)>,
}

impl Recorded {
    /// Parses a `ProcmodelInputs` value; None when it is not one.
    pub fn parse(s: &str) -> Option<Recorded> {
        let mut tokens = s.split(' ');
        let epoch = tokens.next()?.strip_prefix('v')?.parse().ok()?;
        let mut parts = Vec::new();
        for t in tokens {
            let (name, d) = t.split_once('=')?;
            if d.len() != 16 || !d.bytes().all(|b| b.is_ascii_hexdigit()) || name.is_empty() {
                return None;
            }
            parts.push((name.to_owned(), d.to_owned()));
        }
        Some(Recorded { epoch, parts })
    }
}

/// Which inputs differ between what the results were made from and the scene now, named
/// for people: `Size`, `attribute X`, `Source`, `sandbox`, `generator`, what the generator
/// module holds, `modules`, `epoch`.
pub fn changes(now: &Inputs, recorded: &Recorded) -> Vec<String> {
    let mut out = Vec::new();
    if recorded.epoch != EPOCH {
        out.push(format!("epoch (made in {}, now {EPOCH})", recorded.epoch));
    }
    let human = |name: &str| match name {
        "size" => "Size".to_owned(),
        "source" => "Source".to_owned(),
        "carried" => "what the generator module holds".to_owned(),
        "reads" => READS_REASON.to_owned(),
        n => match n.strip_prefix("attr.") {
            Some(a) => format!("attribute {a}"),
            None => n.to_owned(),
        },
    };
    for p in &now.parts {
        match recorded.parts.iter().find(|(n, _)| *n == p.name) {
            Some((_, d)) if *d == short(&p.digest) => {}
            Some(_) => out.push(human(&p.name)),
            None => out.push(format!("{} (added)", human(&p.name))),
        }
    }
    for (n, _) in &recorded.parts {
        if !now.parts.iter().any(|p| p.name == *n) {
            out.push(format!("{} (removed)", human(n)));
        }
    }
    out
}

/// Whether the inputs recorded on `model`'s results differ from its inputs now — a scene file
/// edited outside procmodel (a generator's Source, Size, an attribute), or made by another
/// determinism epoch: what `status` calls stale because of an input. False when nothing (or
/// nothing readable) is recorded, as in a file Studio saved.
pub(crate) fn recorded_inputs_differ(dom: &WeakDom, model: Ref) -> bool {
    let Some(folder) = crate::apply::results_folder(dom, model) else {
        return false;
    };
    match string_attribute(dom, folder, INPUTS_ATTRIBUTE)
        .as_deref()
        .map(Recorded::parse)
    {
        Some(Some(rec)) => !changes(&Inputs::of(dom, model), &rec).is_empty(),
        _ => false,
    }
}

/// The provenance of a result computed where it was generated (a worker, over its copy of
/// the scene), for the engine to record instead of computing it on its own thread.
#[derive(Debug, Clone)]
pub(crate) struct Precomputed {
    /// `children_hash` of the placed results.
    pub hash: [u8; 32],
    /// The `ProcmodelInputs` value, from [`Inputs::after_defaults`].
    pub inputs: String,
    /// The modules the run depended on ([`names_of`]) with their digests.
    pub modules: Vec<(String, [u8; 32])>,
}

/// Records provenance on the model's current GeneratedFolder (after a run was applied or
/// failed): the inputs, the modules the run depended on (`requires`: known for applied
/// results and for runs that failed in their code) and for results their content hash —
/// as the worker that ran the model computed them (`ahead`, used only for applied
/// results), else computed here.
pub(crate) fn record(
    dom: &mut WeakDom,
    model: Ref,
    ok: bool,
    ahead: Option<Precomputed>,
    requires: Option<&[Ref]>,
    reads: &[SceneRead],
    sources: &mut SourceDigests,
) {
    let Some(folder) = results_folder(dom, model) else {
        return;
    };
    let (inputs, hash, modules) = match (ok, ahead) {
        (true, Some(a)) => (a.inputs, Some(to_hex(&a.hash)), Some(a.modules)),
        (ok, _) => {
            let modules = requires.map(|r| run_modules(dom, model, r, sources));
            let covered = modules
                .as_deref()
                .map_or(Modules::Recorded, Modules::Listed);
            let inputs =
                Inputs::after_defaults(dom, model, &[], covered, sources).with_reads(reads);
            let hash = ok.then(|| to_hex(&children_hash(dom, folder)));
            (inputs.to_attribute(), hash, modules)
        }
    };
    let Some(inst) = dom.get_by_ref_mut(folder) else {
        return;
    };
    let mut attrs = match prop(inst, KEYS.attributes) {
        Some(Variant::Attributes(a)) => a.clone(),
        _ => rbx_types::Attributes::new(),
    };
    attrs.insert(INPUTS_ATTRIBUTE.to_owned(), Variant::String(inputs));
    match hash {
        Some(h) => attrs.insert(CONTENT_HASH_ATTRIBUTE.to_owned(), Variant::String(h)),
        None => attrs.remove(CONTENT_HASH_ATTRIBUTE),
    };
    match modules {
        Some(m) => attrs.insert(
            MODULES_ATTRIBUTE.to_owned(),
            Variant::String(encode_modules(&m)),
        ),
        None => attrs.remove(MODULES_ATTRIBUTE),
    };
    match reads.is_empty() {
        true => attrs.remove(READS_ATTRIBUTE),
        false => attrs.insert(
            READS_ATTRIBUTE.to_owned(),
            Variant::String(encode_reads(reads)),
        ),
    };
    inst.properties
        .insert(KEYS.attributes, Variant::Attributes(attrs));
}

/// Records `model`'s content hash again when its results have one recorded and it changed
/// (a nested model in them applied since, filling in its defaults or pinning its pivot).
pub(crate) fn rerecord_hash(dom: &mut WeakDom, model: Ref) {
    let Some(folder) = results_folder(dom, model) else {
        return;
    };
    let Some(recorded) = string_attribute(dom, folder, CONTENT_HASH_ATTRIBUTE) else {
        return;
    };
    let now = to_hex(&children_hash(dom, folder));
    if now == recorded {
        return;
    }
    let Some(inst) = dom.get_by_ref_mut(folder) else {
        return;
    };
    if let Some(Variant::Attributes(a)) = inst.properties.get_mut(&KEYS.attributes) {
        a.insert(CONTENT_HASH_ATTRIBUTE.to_owned(), Variant::String(now));
    }
}

/// Which of the modules `folder` records (`ProcmodelModules`) changed since, for people:
/// `module X` (its Source or sandbox state) or `module X (removed)`; empty when it records
/// none, or none of them changed (then their set did: a namesake appeared).
fn module_changes(dom: &WeakDom, model: Ref, folder: Ref) -> Vec<String> {
    let Some(recorded) = string_attribute(dom, folder, MODULES_ATTRIBUTE)
        .as_deref()
        .and_then(decode_modules)
    else {
        return Vec::new();
    };
    let mut names: Vec<&str> = recorded.iter().map(|(n, _)| n.as_str()).collect();
    names.sort();
    names.dedup();
    let owned: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let now = named_modules(
        dom,
        generator_of(dom, model),
        &owned,
        &mut SourceDigests::default(),
    );
    let mut out = Vec::new();
    for name in names {
        let mut was: Vec<&str> = recorded
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, d)| d.as_str())
            .collect();
        let mut is: Vec<String> = now
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, d)| short(d))
            .collect();
        was.sort_unstable();
        is.sort_unstable();
        if is.is_empty() {
            out.push(format!("module {name} (removed)"));
        } else if was != is {
            out.push(format!("module {name}"));
        }
    }
    out
}

/// How [`changes`] names the `reads` input, which `status` details with [`read_changes`].
const READS_REASON: &str = "what it read of the scene";

/// Which of the reads a folder records (`ProcmodelReads`, decoded) now hold something else,
/// for people: `game.ReplicatedStorage.Assets.Tree (read)`, `... (read, now missing)`.
fn read_changes(dom: &WeakDom, recorded: Vec<(Vec<String>, bool, String)>) -> Vec<String> {
    let mut out = Vec::new();
    for (path, own, digest) in recorded {
        let now = procmodel_dom::reads::read_digest(dom, &path, own);
        if short(&now) != digest {
            let name = procmodel_dom::reads::encode_path(&path);
            match now == procmodel_dom::reads::absent_digest() {
                true => out.push(format!("{name} (read, now missing)")),
                false => out.push(format!("{name} (read)")),
            }
        }
    }
    out
}

/// What `procmodel status` says about a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// The results were made from the current inputs and not edited since.
    Fresh,
    /// Regenerating would give other results: the reasons (inputs that changed, `Dirty`
    /// set, results edited since they were generated, no provenance recorded).
    Stale(Vec<String>),
    /// The last generation from the current inputs failed with this error.
    Failed(String),
    /// No results.
    NeverGenerated,
    /// Generator is nil: the results are kept as they are and never regenerated.
    Baked,
}

/// A string attribute of `r` (also when a binary file gave it back as a `BinaryString`).
pub fn string_attribute(dom: &WeakDom, r: Ref, name: &str) -> Option<String> {
    match dom.get_by_ref(r).and_then(|i| prop(i, KEYS.attributes)) {
        Some(Variant::Attributes(a)) => a
            .get(name)
            .and_then(procmodel_dom::attrs::string)
            .map(str::to_owned),
        _ => None,
    }
}

/// The status of `model` in `dom` (a scene as loaded from a file, or an engine's).
pub fn status(dom: &WeakDom, model: Ref) -> Status {
    let Some(folder) = results_folder(dom, model) else {
        return if generator_of(dom, model).is_none() {
            Status::Baked
        } else {
            Status::NeverGenerated
        };
    };
    if generator_of(dom, model).is_none() {
        return Status::Baked;
    }
    let error = dom
        .get_by_ref(folder)
        .and_then(|f| f.children().first().copied())
        .filter(|&c| {
            dom.get_by_ref(c)
                .is_some_and(|i| i.name == "GenerationErrorPlaceholder")
        })
        .and_then(|c| string_attribute(dom, c, "Error"));
    let mut reasons = Vec::new();
    match string_attribute(dom, folder, INPUTS_ATTRIBUTE)
        .as_deref()
        .map(Recorded::parse)
    {
        Some(Some(rec)) => reasons.extend(changes(&Inputs::of(dom, model), &rec)),
        Some(None) => reasons.push(format!("{INPUTS_ATTRIBUTE} is damaged")),
        None => reasons.push("no provenance recorded".to_owned()),
    }
    if let Some(at) = reasons.iter().position(|r| r == "modules") {
        let detail = module_changes(dom, model, folder);
        if !detail.is_empty() {
            reasons.splice(at..=at, detail);
        }
    }
    // The reason, or the same with "(removed)" when no reads could be decoded.
    if let Some(at) = reasons.iter().position(|r| r.starts_with(READS_REASON)) {
        match string_attribute(dom, folder, READS_ATTRIBUTE).map(|s| decode_reads(&s)) {
            Some(None) => reasons[at] = format!("{READS_ATTRIBUTE} is damaged"),
            recorded if reasons[at] == READS_REASON => {
                let detail = read_changes(dom, recorded.flatten().unwrap_or_default());
                if !detail.is_empty() {
                    reasons.splice(at..=at, detail);
                }
            }
            _ => {}
        }
    }
    if crate::apply::dirty_flag(dom, model) {
        reasons.push("Dirty is set".to_owned());
    }
    if error.is_none() && reasons.is_empty() {
        match string_attribute(dom, folder, CONTENT_HASH_ATTRIBUTE) {
            Some(h) if h == to_hex(&children_hash(dom, folder)) => {}
            Some(_) => reasons.push("results edited since they were generated".to_owned()),
            None => reasons.push(format!("no {CONTENT_HASH_ATTRIBUTE} recorded")),
        }
    }
    match (reasons.is_empty(), error) {
        (true, Some(e)) => Status::Failed(e),
        (true, None) => Status::Fresh,
        (false, _) => Status::Stale(reasons),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbx_dom_weak::InstanceBuilder;

    #[test]
    fn inputs_through_the_engines_source_digests_are_the_same_and_see_edits() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let module = |dom: &mut WeakDom, name: &str, src: &str| {
            dom.insert(
                root,
                InstanceBuilder::new("ModuleScript")
                    .with_name(name)
                    .with_property("Source", Variant::String(src.to_owned())),
            )
        };
        let g = module(&mut dom, "Gen", "return { OnGenerate = function() end }");
        let lib = module(&mut dom, "Lib", "return 1");
        let m = dom.insert(
            root,
            InstanceBuilder::new("ProceduralModel")
                .with_name("M")
                .with_property("Generator", Variant::Ref(g)),
        );
        let mut sources = SourceDigests::default();
        assert_eq!(Inputs::of_with(&dom, m, &mut sources), Inputs::of(&dom, m));
        // Edits of the generator and of another module after their digests were kept.
        for (r, src) in [
            (g, "return { OnGenerate = function() print(1) end }"),
            (lib, "return 2"),
        ] {
            let before = Inputs::of_with(&dom, m, &mut sources);
            dom.get_by_ref_mut(r)
                .unwrap()
                .properties
                .insert(KEYS.source, Variant::String(src.to_owned()));
            let after = Inputs::of_with(&dom, m, &mut sources);
            assert_eq!(after, Inputs::of(&dom, m));
            assert_ne!(after, before);
        }
    }

    #[test]
    fn recorded_inputs_round_trip_and_reject_damage() {
        let i = Inputs {
            parts: vec![
                InputPart {
                    name: "size".into(),
                    digest: [1; 32],
                },
                InputPart {
                    name: "attr.Seed".into(),
                    digest: [2; 32],
                },
            ],
        };
        let rec = Recorded::parse(&i.to_attribute()).unwrap();
        assert_eq!(rec.epoch, EPOCH);
        assert!(changes(&i, &rec).is_empty());
        assert_eq!(Recorded::parse("v1 size=12"), None);
        assert_eq!(Recorded::parse("x1"), None);
        let mut j = i.clone();
        j.parts[1].digest = [3; 32];
        assert_eq!(changes(&j, &rec), vec!["attribute Seed".to_owned()]);
        j.parts.pop();
        assert_eq!(
            changes(&j, &rec),
            vec!["attribute Seed (removed)".to_owned()]
        );
    }

    #[test]
    fn module_lists_round_trip_whatever_the_names_hold() {
        let names = ["ServerStorage.Lib", "a\\b\nc\\n", "", "\\", "\n\n", "x y"];
        for n in 0..=names.len() {
            let entries: Vec<(String, [u8; 32])> = names[..n]
                .iter()
                .enumerate()
                .map(|(i, name)| ((*name).to_owned(), [i as u8 * 17; 32]))
                .collect();
            let text = encode_modules(&entries);
            let back: Vec<(String, String)> = entries
                .iter()
                .map(|(name, d)| (name.clone(), short(d)))
                .collect();
            assert_eq!(decode_modules(&text), Some(back), "{text:?}");
        }
        let text = encode_modules(&[
            ("B".to_owned(), [1; 32]),
            ("A".to_owned(), [2; 32]),
            ("B".to_owned(), [3; 32]),
        ]);
        assert_eq!(
            decode_names(&text),
            Some(vec!["A".to_owned(), "B".to_owned()])
        );
        for bad in [
            "0123456789abcdef a\\x",
            "0123456789abcdef a\\",
            "no-digest",
            "0123 short",
            "0123456789abcdeg not hex",
        ] {
            assert_eq!(decode_modules(bad), None, "{bad:?}");
        }
    }
}
