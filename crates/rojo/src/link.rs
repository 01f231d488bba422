//! Placing the built instances in a DOM, then Rojo 7.5's Ref links: an instance gets an id
//! (`id`/`$id` in its JSON, or a `Rojo_Id` attribute in a model file) and a referrer names it
//! in a `Rojo_Target_<Property>` attribute. Both attributes are removed once linked.

use crate::{RojoError, Snap};
use procmodel_dom::find_property;
use rbx_dom_weak::{InstanceBuilder, WeakDom, ustr};
use rbx_reflection::DataType;
use rbx_types::{Attributes, Ref, Variant, VariantType};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

pub(crate) const ID_ATTRIBUTE: &str = "Rojo_Id";
pub(crate) const TARGET_PREFIX: &str = "Rojo_Target_";

/// Builds the DOM: the snapshot's own DataModel root, or a DataModel holding it.
pub(crate) fn instantiate(root: Snap) -> Result<Linked, RojoError> {
    let mut b = Build::default();
    let dom = if root.is_place() {
        let Snap {
            name,
            props,
            attrs,
            id,
            children,
            file,
            ..
        } = root;
        let mut builder = InstanceBuilder::new("DataModel").with_name(name);
        for (k, v) in props {
            builder = builder.with_property(k, v);
        }
        if !attrs.is_empty() {
            builder = builder.with_property("Attributes", Variant::Attributes(attrs));
        }
        let mut dom = WeakDom::new(builder);
        let r = dom.root_ref();
        b.note(r, id, &file)?;
        for c in children {
            b.place(&mut dom, r, c)?;
        }
        dom
    } else {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let r = dom.root_ref();
        b.place(&mut dom, r, root)?;
        dom
    };
    Ok(Linked { dom, build: b })
}

/// A placed tree and what linking needs to know of it.
pub(crate) struct Linked {
    pub(crate) dom: WeakDom,
    build: Build,
}

impl Linked {
    /// The scripts of the tree and the script files their Source came from, breadth first.
    pub(crate) fn script_files(&self) -> Vec<(Ref, PathBuf)> {
        let script_file = |p: &PathBuf| {
            p.extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("luau") || e.eq_ignore_ascii_case("lua"))
        };
        self.dom
            .descendants()
            .filter(|i| procmodel_dom::is_a(i.class.as_str(), "LuaSourceContainer"))
            .filter_map(|i| {
                let f = self.build.files.get(&i.referent())?;
                script_file(f).then(|| (i.referent(), f.clone()))
            })
            .collect()
    }
}

#[derive(Default)]
struct Build {
    /// id → (instance, the file that gave the id).
    ids: BTreeMap<String, (Ref, PathBuf)>,
    /// Instance → the file it came from (model files: their top instance).
    files: HashMap<Ref, PathBuf>,
    /// The UniqueIds the tree holds (model files saved by Studio carry them), known from one
    /// model file's move to the next.
    held: procmodel_dom::HeldIds,
}

impl Build {
    fn note(
        &mut self,
        r: Ref,
        id: Option<String>,
        file: &std::path::Path,
    ) -> Result<(), RojoError> {
        self.files.insert(r, file.to_path_buf());
        if let Some(id) = id {
            if let Some((_, other)) = self.ids.get(&id) {
                return Err(RojoError::field(
                    file,
                    "id",
                    format!(
                        "the id '{id}' is already given to an instance of {}",
                        other.display()
                    ),
                ));
            }
            self.ids.insert(id, (r, file.to_path_buf()));
        }
        Ok(())
    }

    fn place(&mut self, dom: &mut WeakDom, parent: Ref, snap: Snap) -> Result<(), RojoError> {
        let Snap {
            name,
            class,
            props,
            attrs,
            id,
            children,
            model,
            file,
        } = snap;
        if let Some(mut model) = model {
            let top = model.root().children()[0];
            procmodel_dom::move_into_keeping(&mut model, &[top], dom, parent, &mut self.held);
            if let Some(inst) = dom.get_by_ref_mut(top) {
                inst.name = name;
            }
            return self.note(top, id, &file);
        }
        let dirty_given = props.contains_key("Dirty");
        let mut builder = InstanceBuilder::new(class.as_str()).with_name(name);
        for (k, v) in props {
            builder = builder.with_property(k, v);
        }
        // A project holds sources only: its ProceduralModels have never generated here, so
        // they load dirty (as a model inserted into a place in Studio generates).
        if class == "ProceduralModel" && !dirty_given {
            builder = builder.with_property("Dirty", true);
        }
        if !attrs.is_empty() {
            builder = builder.with_property("Attributes", Variant::Attributes(attrs));
        }
        let r = dom.insert(parent, builder);
        self.note(r, id, &file)?;
        for c in children {
            self.place(dom, r, c)?;
        }
        Ok(())
    }

    /// The file an instance comes from: its own, or its nearest ancestor's.
    fn file_of(&self, dom: &WeakDom, mut r: Ref) -> PathBuf {
        while r.is_some() {
            if let Some(f) = self.files.get(&r) {
                return f.clone();
            }
            r = dom.get_by_ref(r).map_or(Ref::none(), |i| i.parent());
        }
        PathBuf::from("<project>")
    }
}

/// Links every `Rojo_Target_<Property>` to the instance with that id, then removes the
/// id and target attributes.
pub(crate) fn link_refs(linked: Linked) -> Result<WeakDom, RojoError> {
    let Linked { mut dom, mut build } = linked;
    let key = ustr("Attributes");
    let all: Vec<Ref> = dom.descendants().map(|i| i.referent()).collect();
    // Ids given inside model files.
    for &r in &all {
        let Some(Variant::Attributes(a)) = dom.get_by_ref(r).and_then(|i| i.properties.get(&key))
        else {
            continue;
        };
        if let Some(v) = a.get(ID_ATTRIBUTE) {
            let file = build.file_of(&dom, r);
            let id = attr_string(v).ok_or_else(|| {
                RojoError::field(&file, ID_ATTRIBUTE, "must be a string attribute")
            })?;
            build.note(r, Some(id), &file)?;
        }
    }
    for &r in &all {
        let Some(inst) = dom.get_by_ref(r) else {
            continue;
        };
        let Some(Variant::Attributes(a)) = inst.properties.get(&key) else {
            continue;
        };
        let targets: Vec<(String, Variant)> = a
            .iter()
            .filter(|(k, _)| k.starts_with(TARGET_PREFIX))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if targets.is_empty() && a.get(ID_ATTRIBUTE).is_none() {
            continue;
        }
        let class = inst.class.to_string();
        let mut links = Vec::new();
        for (attr, v) in &targets {
            let file = build.file_of(&dom, r);
            let property = &attr[TARGET_PREFIX.len()..];
            let id = attr_string(v).ok_or_else(|| {
                RojoError::field(&file, attr, "must be a string (the target's id)")
            })?;
            let Some((target, _)) = build.ids.get(&id) else {
                let known: Vec<&str> = build.ids.keys().map(String::as_str).collect();
                return Err(RojoError::field(
                    &file,
                    attr,
                    format!(
                        "no instance has the id '{id}' (ids in the project: {})",
                        if known.is_empty() {
                            "none".to_owned()
                        } else {
                            known.join(", ")
                        }
                    ),
                ));
            };
            let canonical = match find_property(&class, property) {
                Some(info) if matches!(info.data_type, DataType::Value(VariantType::Ref)) => {
                    info.canonical
                }
                Some(_) => {
                    return Err(RojoError::field(
                        &file,
                        attr,
                        format!("{class}.{property} is not a Ref property"),
                    ));
                }
                None => {
                    return Err(RojoError::field(
                        &file,
                        attr,
                        format!("{class} has no property '{property}'"),
                    ));
                }
            };
            links.push((canonical, *target));
        }
        let inst = dom.get_by_ref_mut(r).expect("listed above");
        for (name, target) in links {
            inst.properties.insert(ustr(name), Variant::Ref(target));
        }
        if let Some(Variant::Attributes(a)) = inst.properties.get(&key) {
            let kept: Attributes = a
                .iter()
                .filter(|(k, _)| k.as_str() != ID_ATTRIBUTE && !k.starts_with(TARGET_PREFIX))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if kept.is_empty() {
                inst.properties.remove(&key);
            } else {
                inst.properties.insert(key, Variant::Attributes(kept));
            }
        }
    }
    Ok(dom)
}

fn attr_string(v: &Variant) -> Option<String> {
    procmodel_dom::attrs::string(v).map(str::to_owned)
}
