//! One generation and its application (SPEC §4, in order), the error placeholder, and the
//! small DOM helpers the engine uses.

use crate::Host;
use crate::{EngineError, GenerationFailure};
use procmodel_dom::is_a;
use procmodel_dom::keys::KEYS;
use procmodel_script::{HostError, RunInputs};
use rbx_dom_weak::{Instance, InstanceBuilder, Ustr, WeakDom};
use rbx_types::{Attributes, Color3, Ref, Variant, Vector3};

/// The property under `key` (a name from [`KEYS`]: interning one per call would take
/// `ustr`'s process-wide lock, and this runs for every model every frame).
pub fn prop(inst: &Instance, key: Ustr) -> Option<&Variant> {
    inst.properties.get(&key)
}

pub fn set_prop(dom: &mut WeakDom, r: Ref, key: Ustr, value: Variant) -> Result<(), EngineError> {
    let inst = dom
        .get_by_ref_mut(r)
        .ok_or_else(|| EngineError::invalid("instance is not in the scene"))?;
    inst.properties.insert(key, value);
    Ok(())
}

/// The attribute `name` of `inst`, if it has one.
pub fn attribute<'a>(inst: &'a Instance, name: &str) -> Option<&'a Variant> {
    match prop(inst, KEYS.attributes) {
        Some(Variant::Attributes(a)) => a.get(name),
        _ => None,
    }
}

pub fn set_attribute(
    dom: &mut WeakDom,
    model: Ref,
    name: &str,
    value: Option<Variant>,
) -> Result<(), EngineError> {
    let inst = dom
        .get_by_ref_mut(model)
        .ok_or_else(|| EngineError::invalid("model is not in the scene"))?;
    let mut attrs = match prop(inst, KEYS.attributes) {
        Some(Variant::Attributes(a)) => a.clone(),
        _ => Attributes::new(),
    };
    match value {
        Some(v) => {
            attrs.insert(name.to_owned(), v);
        }
        None => {
            attrs.remove(name);
        }
    }
    inst.properties
        .insert(KEYS.attributes, Variant::Attributes(attrs));
    Ok(())
}

pub fn dirty_flag(dom: &WeakDom, model: Ref) -> bool {
    dom.get_by_ref(model)
        .is_some_and(|i| matches!(prop(i, KEYS.dirty), Some(Variant::Bool(true))))
}

pub fn set_dirty(dom: &mut WeakDom, model: Ref, dirty: bool) {
    if let Some(i) = dom.get_by_ref_mut(model) {
        i.properties.insert(KEYS.dirty, Variant::Bool(dirty));
    }
}

pub fn generator_of(dom: &WeakDom, model: Ref) -> Option<Ref> {
    match dom.get_by_ref(model).and_then(|i| prop(i, KEYS.generator)) {
        Some(Variant::Ref(r)) if r.is_some() && dom.get_by_ref(*r).is_some() => Some(*r),
        _ => None,
    }
}

pub use procmodel_dom::full_name;

/// Whether `model` lies in the results (GeneratedFolder) of one of `models`, at any depth.
pub fn in_results_of_any(
    dom: &WeakDom,
    model: Ref,
    models: &std::collections::HashSet<Ref>,
) -> bool {
    let mut cur = dom.get_by_ref(model).map(|i| i.parent());
    while let Some(r) = cur.filter(|r| r.is_some()) {
        let Some(inst) = dom.get_by_ref(r) else {
            return false;
        };
        if inst.class == "GeneratedFolder" && models.contains(&inst.parent()) {
            return true;
        }
        cur = Some(inst.parent());
    }
    false
}

/// ProceduralModels under the DataModel, pre-order (parents before their descendants).
pub fn models_in_scene(dom: &WeakDom) -> Vec<Ref> {
    models_under(dom, &[dom.root_ref()])
}

/// ProceduralModels in the subtrees of `roots` (roots included), pre-order per root.
pub fn models_under(dom: &WeakDom, roots: &[Ref]) -> Vec<Ref> {
    procmodel_dom::count_and_find(dom, roots, "ProceduralModel").1
}

/// How many ProceduralModel ancestors `model` has.
pub fn nesting_depth(dom: &WeakDom, model: Ref) -> usize {
    let mut depth = 0;
    let mut cur = dom
        .get_by_ref(model)
        .map(|i| i.parent())
        .unwrap_or_else(Ref::none);
    while let Some(i) = dom.get_by_ref(cur) {
        if i.class == "ProceduralModel" {
            depth += 1;
        }
        cur = i.parent();
    }
    depth
}

pub(crate) fn results_folders(dom: &WeakDom, model: Ref) -> Vec<Ref> {
    dom.get_by_ref(model)
        .map(|i| {
            i.children()
                .iter()
                .copied()
                .filter(|&c| {
                    dom.get_by_ref(c)
                        .is_some_and(|ci| ci.class == "GeneratedFolder")
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The model's current results folder, if any.
pub fn results_folder(dom: &WeakDom, model: Ref) -> Option<Ref> {
    results_folders(dom, model).into_iter().next()
}

fn enum_value(enum_name: &str, item: &str) -> u32 {
    procmodel_dom::db()
        .enums
        .get(enum_name)
        .and_then(|e| e.items.get(item).copied())
        .unwrap_or(0)
}

/// Makes the model's pivot explicit so that replacing its contents never moves it.
pub fn pin_pivot(dom: &mut WeakDom, model: Ref) -> glam::Affine3A {
    let pivot = procmodel_dom::get_pivot(dom, model).unwrap_or_default();
    if let Some(i) = dom.get_by_ref_mut(model)
        && !matches!(
            prop(i, KEYS.world_pivot_data),
            Some(Variant::OptionalCFrame(Some(_)))
        )
    {
        i.properties.insert(
            KEYS.world_pivot_data,
            Variant::OptionalCFrame(Some(procmodel_dom::affine_to_cframe(&pivot))),
        );
    }
    pivot
}

/// Puts `folder` (an orphan GeneratedFolder) under `model` in place of the old results, which
/// are handed to `retire` (the undo history keeps them) in order.
fn replace_results(
    dom: &mut WeakDom,
    model: Ref,
    folder: Ref,
    retire: &mut dyn FnMut(&mut WeakDom, Ref),
) {
    for old in results_folders(dom, model) {
        dom.transfer_within(old, Ref::none());
        retire(dom, old);
    }
    if let Some(i) = dom.get_by_ref_mut(folder) {
        i.name = "GeneratedFolder".into();
    }
    dom.transfer_within(folder, model);
}

/// What a run needs to know about a model, read from the scene before running.
pub struct Prepared {
    pub module: Ref,
    pub origin: String,
    pub inputs: RunInputs,
    pub sandboxed: bool,
}

/// Results of a run, still in an orphan GeneratedFolder of the DOM the run used.
pub struct Produced {
    pub container: Ref,
    pub primary_part: Option<Ref>,
    pub defaults: Vec<(String, Variant)>,
    /// Steps 2–3 (PivotTo, ScaleTo) already done where the run happened (see [`place`]).
    pub placed: bool,
    /// The move [`place`] gave the results (None for results that came placed, as a cache's
    /// do: then the model's pivot).
    pub delta: Option<glam::Affine3A>,
    /// The run changed the scene outside its container (as far as it was watched): such a
    /// run is not kept in a result cache, whose hits would skip those changes.
    pub touched_outside: bool,
    /// The number of result instances, when already known (results taken back from the
    /// undo history, recorded when they were placed): applying them does not walk them to
    /// count them or to find nested models (any there are found by the next step's scan).
    pub counted: Option<usize>,
    /// Instances the run created ([`procmodel_script::RunOutput::created`]); 0 for results
    /// that came from a cache or the undo history.
    pub created: usize,
    /// The modules the run depended on ([`procmodel_script::RunOutput::requires`]); None
    /// for results that came from a cache or the undo history (theirs record them).
    pub requires: Option<Vec<Ref>>,
    /// What the run read of the scene, as it saw it ([`procmodel_script::RunOutput::reads`]);
    /// empty for results that came from a cache or the undo history.
    pub reads: Vec<procmodel_script::SceneRead>,
}

impl Produced {
    /// The results of a run that finished, with its generator's `defaults`.
    pub fn of_run(out: procmodel_script::RunOutput, defaults: Vec<(String, Variant)>) -> Produced {
        Produced {
            container: out.container,
            primary_part: out.primary_part,
            defaults,
            placed: false,
            delta: None,
            touched_outside: out.touched_outside,
            counted: None,
            created: out.created,
            requires: Some(out.requires),
            reads: out.reads,
        }
    }
}

/// Reads the generator, params (Size normalised by Scale, attributes) and sandbox state.
pub fn prepare(dom: &WeakDom, model: Ref) -> Result<Prepared, GenerationFailure> {
    let module = generator_of(dom, model).ok_or(GenerationFailure::NoGenerator)?;
    if !dom
        .get_by_ref(module)
        .is_some_and(|i| is_a(&i.class, "ModuleScript"))
    {
        return Err(GenerationFailure::NotAModuleScript {
            generator: full_name(dom, module),
        });
    }
    let inst = dom.get_by_ref(model).ok_or(GenerationFailure::ModelGone)?;
    let scale = procmodel_dom::model_scale(inst);
    // 3. params: Size normalised by the model's scale
    let size = match prop(inst, KEYS.size) {
        Some(Variant::Vector3(v)) => procmodel_dom::to_vec3(*v) / scale,
        _ => glam::Vec3::splat(12.0) / scale,
    };
    let attributes = match prop(inst, KEYS.attributes) {
        Some(Variant::Attributes(a)) => a.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        _ => Vec::new(),
    };
    // Sandboxing: a sandboxed module runs with its Capabilities; an unsandboxed one has
    // them all (Roblox's rule).
    let sandboxed = matches!(
        dom.get_by_ref(module).and_then(|i| prop(i, KEYS.sandboxed)),
        Some(Variant::Bool(true))
    );
    let caps = if sandboxed {
        capabilities(dom, module)
    } else {
        u64::MAX
    };
    for needed in ["Basic", "RunServerScript", "CreateInstances"] {
        if caps & capability_bit(needed) == 0 {
            return Err(GenerationFailure::MissingCapability {
                generator: full_name(dom, module),
                capability: needed,
            });
        }
    }
    Ok(Prepared {
        module,
        origin: full_name(dom, module),
        inputs: RunInputs {
            attributes,
            size,
            allow_outside_write: caps & capability_bit("AccessOutsideWrite") != 0,
            allow_csg: caps & capability_bit("CSG") != 0,
            // Set by whoever runs it (the frame loop, a parallel step).
            watch_outside: procmodel_script::WatchOutside::Off,
            // The results this run replaces: its raycasts must not find them.
            hidden: results_folders(dom, model),
        },
        sandboxed,
    })
}

/// Steps 1–6 of a generation on `host`: require (again only when the Source changed since
/// it was last required, per `required`), new thread, params, temporary GeneratedFolder,
/// OnGenerate; leaked threads are ended by the run.
pub fn produce(
    host: &Host,
    p: &Prepared,
    required: &mut std::collections::HashMap<Ref, String>,
) -> Result<Produced, GenerationFailure> {
    let generator = load(host, p.module, &p.origin, required)?;
    let out = host
        .run_generator(&generator, &p.inputs)
        .map_err(GenerationFailure::from)?;
    Ok(Produced::of_run(
        out,
        generator.attributes.clone().unwrap_or_default(),
    ))
}

/// A generation started on the scene's own VM.
pub enum Started {
    Done(Produced),
    /// Waiting for a later frame; the defaults are needed when it finishes.
    Pending(procmodel_script::PendingRun, Vec<(String, Variant)>),
}

/// Starts a generation that the engine steps frame by frame (so an input change while it
/// waits can cancel it).
pub fn start(
    host: &Host,
    p: &Prepared,
    required: &mut std::collections::HashMap<Ref, String>,
) -> Result<Started, GenerationFailure> {
    let generator = load(host, p.module, &p.origin, required)?;
    let defaults = generator.attributes.clone().unwrap_or_default();
    let (pending, state) = host
        .start_generator(&generator, &p.inputs)
        .map_err(GenerationFailure::from)?;
    Ok(match state {
        procmodel_script::RunState::Done(out) => Started::Done(Produced::of_run(out, defaults)),
        procmodel_script::RunState::Suspended => Started::Pending(pending, defaults),
    })
}

/// Requires `module` as a generator, again only when its Source changed since it was last
/// required, per `required` — the one record of what the host's require cache holds, so
/// every load (a run, or a front end reading declared attributes) must go through here.
pub(crate) fn load(
    host: &Host,
    module: Ref,
    origin: &str,
    required: &mut std::collections::HashMap<Ref, String>,
) -> Result<procmodel_script::Generator, GenerationFailure> {
    load_host(host, module, origin, required).map_err(GenerationFailure::from)
}

/// [`load`] with the host's own error (what a front end shows for a generator it opens).
pub(crate) fn load_host(
    host: &Host,
    module: Ref,
    origin: &str,
    required: &mut std::collections::HashMap<Ref, String>,
) -> Result<procmodel_script::Generator, HostError> {
    // The Source it was last required with, compared in place (no copy, no hash).
    let changed = host.with_dom_ref(|dom| {
        let src = source_of(dom, module);
        (required.get(&module).map(String::as_str) != Some(src)).then(|| src.to_owned())
    });
    if let Some(src) = changed {
        host.invalidate_module(module)?;
        required.insert(module, src);
    }
    host.load_generator(module, origin)
}

/// A ModuleScript's Source ("" when it has none, or is not in the scene).
pub(crate) fn source_of(dom: &WeakDom, module: Ref) -> &str {
    dom.get_by_ref(module).map_or("", source_text)
}

/// An instance's Source ("" when it has none).
pub(crate) fn source_text(i: &Instance) -> &str {
    match prop(i, KEYS.source) {
        Some(Variant::String(s)) => s.as_str(),
        _ => "",
    }
}

/// Applies a run's results to `model`, in SPEC order (1, ending leaked threads, happened in
/// the run). Returns the number of result instances; the ProceduralModels among them are
/// appended to `nested` in pre-order (the one walk over the results finds both).
pub fn apply_output(
    dom: &mut WeakDom,
    model: Ref,
    p: &Prepared,
    out: Produced,
    retire: &mut dyn FnMut(&mut WeakDom, Ref),
    nested: &mut Vec<Ref>,
) -> Result<usize, GenerationFailure> {
    let folder = out.container;
    let counted = out.counted;
    if !out.placed {
        place(dom, model, &out);
    }
    // 5 (checked before the swap so a refusal keeps nothing half-applied): a sandboxed
    // generator may not output ModuleScripts with more capabilities than its own.
    if p.sandboxed {
        let own_caps = capabilities(dom, p.module);
        for d in dom.descendants_of(folder) {
            if is_a(&d.class, "LuaSourceContainer") && capabilities_of(d) & !own_caps != 0 {
                return Err(GenerationFailure::ResultCapabilities {
                    instance: d.name.clone(),
                });
            }
        }
    }
    // 4. replace the previous results
    replace_results(dom, model, folder, retire);
    settle_model(dom, model, &out.defaults, out.primary_part)?;
    if let Some(count) = counted {
        return Ok(count);
    }
    let (count, models) = procmodel_dom::count_and_find(dom, &[folder], "ProceduralModel");
    nested.extend(models);
    Ok(count.saturating_sub(1))
}

/// Steps 6–7 of applying results, on the model itself: missing attributes get their
/// defaults, PrimaryPart is the one SetPrimaryPart chose (if any), the dirty flag and any old
/// error are cleared. Returns whether an attribute was added.
pub fn settle_model(
    dom: &mut WeakDom,
    model: Ref,
    defaults: &[(String, Variant)],
    primary_part: Option<Ref>,
) -> Result<bool, GenerationFailure> {
    let inst = dom
        .get_by_ref_mut(model)
        .ok_or(GenerationFailure::ModelGone)?;
    let mut attrs = match prop(inst, KEYS.attributes) {
        Some(Variant::Attributes(a)) => a.clone(),
        _ => Attributes::new(),
    };
    let mut added = false;
    for (name, value) in defaults {
        if attrs.get(name.as_str()).is_none() {
            attrs.insert(name.clone(), value.clone());
            added = true;
        }
    }
    inst.properties
        .insert(KEYS.attributes, Variant::Attributes(attrs));
    if let Some(pp) = primary_part {
        inst.properties.insert(KEYS.primary_part, Variant::Ref(pp));
    }
    inst.properties
        .insert(KEYS.generation_error, Variant::String(String::new()));
    inst.properties.insert(KEYS.dirty, Variant::Bool(false));
    Ok(added)
}

/// Steps 2–3 of applying a run: PivotTo the model's pivot, then undo the scale normalisation.
/// They depend only on the model's pivot and scale, so a worker VM does them on its copy of
/// the scene (in parallel) and the engine's serial part is left with the swap. Returns the
/// move given to the results (their own pivot onto the model's), which places their voxels
/// too.
pub fn place(dom: &mut WeakDom, model: Ref, out: &Produced) -> glam::Affine3A {
    let folder = out.container;
    // 2. position the results with PivotTo at the model's pivot: the results' own pivot
    //    (their PrimaryPart if SetPrimaryPart chose one, else the origin they were built
    //    around) lands on the model's pivot.
    let pivot = pin_pivot(dom, model);
    let own = out
        .primary_part
        .and_then(|pp| procmodel_dom::get_pivot(dom, pp))
        .unwrap_or(glam::Affine3A::IDENTITY);
    let delta = pivot * own.inverse();
    // A pivot that already sits on the model's (within f32 noise of composing a CFrame with
    // its inverse) leaves the results exactly as built.
    if !delta.abs_diff_eq(glam::Affine3A::IDENTITY, 1e-5) {
        // By index: moving a child leaves the folder's child list as it is, and a copy of a
        // list of 100,000 results would cost memory at the peak.
        let count = dom.get_by_ref(folder).map_or(0, |i| i.children().len());
        for k in 0..count {
            let c = dom.get_by_ref(folder).map(|i| i.children()[k]);
            if let Some(c) = c {
                procmodel_dom::move_by(dom, c, delta);
            }
        }
    }
    // 3. undo the scale normalisation
    let scale = dom
        .get_by_ref(model)
        .map(procmodel_dom::model_scale)
        .unwrap_or(1.0);
    if scale != 1.0 {
        let children = dom
            .get_by_ref(folder)
            .map(|i| i.children().to_vec())
            .unwrap_or_default();
        procmodel_dom::scale_about(dom, &children, glam::Vec3::from(pivot.translation), scale);
    }
    delta
}

/// The bit of a `SecurityCapability` (by name) in a `SecurityCapabilities` value: 1 << its
/// enum value in the reflection database.
pub fn capability_bit(name: &str) -> u64 {
    procmodel_dom::db()
        .enums
        .get("SecurityCapability")
        .and_then(|e| e.items.get(name))
        .map_or(0, |&v| 1u64 << v)
}

fn capabilities_of(inst: &Instance) -> u64 {
    match prop(inst, KEYS.capabilities) {
        Some(Variant::SecurityCapabilities(c)) => c.bits(),
        _ => 0,
    }
}

fn capabilities(dom: &WeakDom, r: Ref) -> u64 {
    dom.get_by_ref(r).map(capabilities_of).unwrap_or(0)
}

/// Replaces the model's results with a visible, clearly named error placeholder sized to the
/// model, stores the message in `GenerationError` and clears the dirty flag (no retry until
/// the next input change).
pub fn place_error(
    dom: &mut WeakDom,
    model: Ref,
    message: &str,
    retire: &mut dyn FnMut(&mut WeakDom, Ref),
) {
    let Some(inst) = dom.get_by_ref(model) else {
        return;
    };
    let size = match prop(inst, KEYS.size) {
        Some(Variant::Vector3(v)) => Vector3::new(v.x.max(0.2), v.y.max(0.2), v.z.max(0.2)),
        _ => Vector3::new(4.0, 4.0, 4.0),
    };
    let pivot = pin_pivot(dom, model);
    let folder = dom.insert(
        Ref::none(),
        InstanceBuilder::new("GeneratedFolder").with_name("GeneratedFolder"),
    );
    let mut attrs = Attributes::new();
    attrs.insert("Error".to_owned(), Variant::String(message.to_owned()));
    dom.insert(
        folder,
        InstanceBuilder::new("Part")
            .with_name("GenerationErrorPlaceholder")
            .with_property("Size", size)
            .with_property("CFrame", procmodel_dom::affine_to_cframe(&pivot))
            .with_property("Color", Color3::new(1.0, 0.1, 0.1))
            .with_property("Transparency", 0.5f32)
            .with_property("Anchored", true)
            .with_property("CanCollide", false)
            .with_property(
                "Material",
                rbx_types::Enum::from_u32(enum_value("Material", "ForceField")),
            )
            .with_property("Attributes", attrs),
    );
    replace_results(dom, model, folder, retire);
    if let Some(inst) = dom.get_by_ref_mut(model) {
        inst.properties
            .insert(KEYS.generation_error, Variant::String(message.to_owned()));
        inst.properties.insert(KEYS.dirty, Variant::Bool(false));
    }
}
