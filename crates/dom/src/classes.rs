//! Reflection-database look-ups: superclass checks and property descriptors, cached.

use rbx_dom_weak::Ustr;
use rbx_reflection::{
    DataType, PropertyDescriptor, PropertyKind, PropertySerialization, ReflectionDatabase,
    Scriptability,
};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The bundled reflection database (never a local override, so behaviour is reproducible).
pub fn db() -> &'static ReflectionDatabase<'static> {
    rbx_reflection_database::get_bundled()
}

/// Decodes the reflection databases ([`db`], and the one `rbx_reflection_database::get`
/// gives the binary writers) on a thread of their own, so a command's first `Instance.new`
/// or file load, which otherwise decodes them (about 8 ms), finds them ready while the
/// calling thread starts its VM. Whoever needs a database first waits for the decoding in
/// progress; nothing is decoded twice.
pub fn decode_databases_in_background() {
    let _ = std::thread::Builder::new()
        .name("procmodel-db".into())
        .spawn(|| {
            db();
            let _ = rbx_reflection_database::get();
        });
}

/// Decodes an XML Roblox file (`.rbxmx`/`.rbxlx`), keeping the properties the reflection
/// database does not know for a class as they are written, as the binary decoder does (a
/// GeneratedFolder's PrimaryPart, a newer Studio's properties): a round trip through XML
/// loses nothing a round trip through the binary format keeps.
pub fn decode_xml<R: std::io::Read>(
    reader: R,
) -> Result<rbx_dom_weak::WeakDom, rbx_xml::DecodeError> {
    rbx_xml::from_reader(
        reader,
        rbx_xml::DecodeOptions::new()
            .property_behavior(rbx_xml::DecodePropertyBehavior::ReadUnknown),
    )
}

/// Encodes `roots` of `dom` as an XML Roblox file, writing properties the reflection database
/// does not know for a class too (see [`decode_xml`]), and, as the binary writer does, not
/// the ones it knows are not saved (`WeldConstraint.Enabled`): rbx_xml would write those as
/// unknown ones. Non-archivable instances are left out, as in [`encode_binary`].
///
/// Text XML cannot hold (control characters other than tab, line feed and carriage return,
/// U+FFFE, U+FFFF) is refused with [`XmlEncodeError::NotXmlText`] before anything is
/// written: rbx_xml would write it as it is, and no XML reader, ours included, reads such a
/// file back.
///
/// rbx_xml writes recursively, one call per level of nesting, so the writing runs on a
/// thread with a large stack (`crate::deep`).
pub fn encode_xml<W: std::io::Write + Send>(
    writer: W,
    dom: &rbx_dom_weak::WeakDom,
    roots: &[rbx_types::Ref],
) -> Result<(), XmlEncodeError> {
    crate::deep::deep_stack(|| encode_xml_here(writer, dom, roots))
}

fn encode_xml_here<W: std::io::Write>(
    writer: W,
    dom: &rbx_dom_weak::WeakDom,
    roots: &[rbx_types::Ref],
) -> Result<(), XmlEncodeError> {
    check_xml_text(dom, roots)?;
    let options = rbx_xml::EncodeOptions::new()
        .property_behavior(rbx_xml::EncodePropertyBehavior::WriteUnknown);
    let mut unsaved: FxHashMap<(Ustr, Ustr), bool> = FxHashMap::default();
    let mut not_saved = |class: Ustr, name: Ustr| {
        *unsaved
            .entry((class, name))
            .or_insert_with(|| known_but_not_saved(&class, &name))
    };
    as_saved(dom, roots, Some(&mut not_saved), true, |d, r| {
        rbx_xml::to_writer(writer, d, r, options)
    })?;
    Ok(())
}

/// Why [`encode_xml`] wrote nothing, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum XmlEncodeError {
    /// A string of the tree holds a character XML 1.0 cannot store.
    #[error(
        "{path}: {property} holds the character {ch}, which an XML Roblox file cannot store \
         (no reader can load it back); save as .rbxm or .rbxl, or remove the character"
    )]
    NotXmlText {
        /// The instance's full name, escaped (it may hold the character itself).
        path: String,
        /// The property (`Name`, `Tags`, `Attributes.Key`, …).
        property: String,
        /// The character, as `U+0001`.
        ch: String,
    },
    /// rbx_xml refused the tree.
    #[error(transparent)]
    Encode(#[from] rbx_xml::EncodeError),
}

/// The first character of `s` XML 1.0 cannot hold (its `Char` production), if any.
fn not_xml_char(s: &str) -> Option<char> {
    s.chars().find(|&c| {
        matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}')
    })
}

/// Refuses the first string of `roots`' archivable subtrees that an XML file cannot hold:
/// names, string properties, tags, attribute names and string values, content URIs and
/// font families (what rbx_xml writes as text).
fn check_xml_text(
    dom: &rbx_dom_weak::WeakDom,
    roots: &[rbx_types::Ref],
) -> Result<(), XmlEncodeError> {
    use rbx_types::Variant;
    let mut found: Option<(rbx_types::Ref, String, char)> = None;
    crate::preorder(dom, roots, |r, i| {
        if found.is_some() || !crate::is_archivable(i) {
            return false;
        }
        if let Some(c) = not_xml_char(&i.name) {
            found = Some((r, "Name".into(), c));
            return false;
        }
        // The first offending property by name, so the error is the same on every run.
        // Attributes and Tags are not text in XML (rbx_xml writes them as base64 of their
        // binary form), so any character in them is stored.
        let mut hit: Option<(String, char)> = None;
        for (name, v) in &i.properties {
            let bad = match v {
                Variant::String(s) => not_xml_char(s),
                Variant::ContentId(s) => not_xml_char(s.as_str()),
                Variant::Content(c) => match c.value() {
                    rbx_types::ContentType::Uri(u) => not_xml_char(u),
                    _ => None,
                },
                Variant::Font(f) => not_xml_char(&f.family),
                _ => None,
            };
            if let Some(c) = bad
                && hit.as_ref().is_none_or(|h| name.as_str() < h.0.as_str())
            {
                hit = Some((name.to_string(), c));
            }
        }
        if let Some((p, c)) = hit {
            found = Some((r, p, c));
            return false;
        }
        true
    });
    match found {
        None => Ok(()),
        Some((r, property, c)) => Err(XmlEncodeError::NotXmlText {
            path: crate::full_name(dom, r).escape_debug().to_string(),
            property,
            ch: format!("U+{:04X}", c as u32),
        }),
    }
}

/// Encodes `roots` of `dom` as a binary Roblox file (`procmodel_rbxm`, rbx_binary's bytes)
/// as Studio saves it: instances whose `Archivable` is false are left out with their
/// subtrees, and references to them are written as none.
pub fn encode_binary<W: std::io::Write>(
    writer: W,
    dom: &rbx_dom_weak::WeakDom,
    roots: &[rbx_types::Ref],
) -> Result<(), procmodel_rbxm::Error> {
    as_saved(dom, roots, None, false, |d, r| {
        procmodel_rbxm::to_writer(writer, d, r)
    })
}

/// Hands `write` what a Roblox file keeps of `roots`: the tree itself when it holds no
/// non-archivable instance (and, with `not_saved`, no property that says it is not saved;
/// with `xml`, no value the XML format has no form for), else a copy without them that keeps
/// every referent, so references are written as before and those to a left-out instance are
/// written as none. With `xml`, a Content value whose source is an object (runtime state such
/// as an EditableImage, which rbx_xml cannot write) is written as none.
fn as_saved<T>(
    dom: &rbx_dom_weak::WeakDom,
    roots: &[rbx_types::Ref],
    mut not_saved: Option<&mut dyn FnMut(Ustr, Ustr) -> bool>,
    xml: bool,
    write: impl FnOnce(&rbx_dom_weak::WeakDom, &[rbx_types::Ref]) -> T,
) -> T {
    use rbx_types::{ContentType, Variant};
    let object_content = |v: &Variant| matches!(v, Variant::Content(c) if matches!(c.value(), ContentType::Object(_)));
    let mut any = false;
    crate::preorder(dom, roots, |_, i| {
        any = any
            || !crate::is_archivable(i)
            || not_saved
                .as_mut()
                .is_some_and(|f| i.properties.keys().any(|&k| f(i.class, k)))
            || (xml && i.properties.values().any(object_content));
        !any
    });
    if !any {
        return write(dom, roots);
    }
    let mut filtered = rbx_dom_weak::WeakDom::new(rbx_dom_weak::InstanceBuilder::new("DataModel"));
    let root = filtered.root_ref();
    let mut copied = Vec::with_capacity(roots.len());
    for &r in roots {
        if dom.get_by_ref(r).is_some_and(crate::is_archivable) {
            let copy = crate::copy_with_referents(
                dom,
                r,
                &mut |_, i| crate::is_archivable(i),
                &mut |i, k| not_saved.as_mut().is_none_or(|f| !f(i.class, k)),
            );
            copied.push(filtered.insert(root, copy));
        }
    }
    // A reference to an instance left out is none, as Studio writes it (rbx_xml would
    // write the id of an instance the file does not hold).
    crate::transfer::for_each_value(&mut filtered, &copied, |value| {
        if let Variant::Ref(target) = value
            && target.is_some()
            && !crate::keeps_reference(dom, *target)
        {
            *target = rbx_types::Ref::none();
        }
        if xml && object_content(value) {
            *value = Variant::Content(rbx_types::Content::none());
        }
    });
    write(&filtered, &copied)
}

/// Whether the database knows `class.name` and says it is not saved in files.
fn known_but_not_saved(class: &str, name: &str) -> bool {
    find_property(class, name).is_some_and(|p| {
        !matches!(
            &p.descriptor.kind,
            PropertyKind::Canonical {
                serialization: PropertySerialization::Serializes
                    | PropertySerialization::SerializesAs(_)
                    | PropertySerialization::Migrate(_),
            }
        )
    })
}

/// Decodes a binary Roblox file (`.rbxm`/`.rbxl`) with the bundled database, giving each
/// instance's property map only the room its properties need. rbx_binary sizes every map for
/// all of the class's default properties (about 70 for a Part: a 10 KB map where the file
/// gives it 5 properties — 490 MB for 100,000 parts instead of 67); the database it is given
/// here is the bundled one without default values, which rbx_binary reads for nothing else.
pub fn decode_binary<R: std::io::Read>(
    reader: R,
) -> Result<rbx_dom_weak::WeakDom, rbx_binary::DecodeError> {
    static LEAN: OnceLock<ReflectionDatabase<'static>> = OnceLock::new();
    let lean = LEAN.get_or_init(|| {
        let mut lean = db().clone();
        for class in lean.classes.values_mut() {
            class.default_properties.clear();
        }
        lean
    });
    rbx_binary::Deserializer::new()
        .reflection_database(lean)
        .deserialize(reader)
}

/// Whether the reflection database tags `class` as a service (Workspace, Lighting, ...).
pub fn is_service(class: &str) -> bool {
    db().classes
        .get(class)
        .is_some_and(|c| c.tags.contains(&rbx_reflection::ClassTag::Service))
}

/// `IsA`: true when `class` is `base` or inherits from it. A class the database lacks (one
/// newer than it, read from a file a newer Studio saved) is an `Instance` and itself.
pub fn is_a(class: &str, base: &str) -> bool {
    if class == base {
        return true;
    }
    // Each thread keeps the ancestry of the classes it asked about: pivot moves and bounding
    // boxes ask for every instance, and walking the database's (SipHash) class map level by
    // level cost ~750 instructions a call; this is one FxHash look-up and a scan of a few
    // names. Per thread and per class asked, so it takes no lock and almost no memory.
    thread_local! {
        static ANCESTRY: RefCell<FxHashMap<Box<str>, Box<[&'static str]>>> =
            RefCell::new(FxHashMap::default());
    }
    ANCESTRY.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(chain) = cache.get(class) {
            return chain.contains(&base);
        }
        let chain = ancestry(class);
        let found = chain.contains(&base);
        cache.insert(class.into(), chain);
        found
    })
}

/// `class` and its superclasses, nearest first (`Instance` alone for a class the database
/// lacks: every instance is one).
fn ancestry(class: &str) -> Box<[&'static str]> {
    let db = db();
    let mut chain = Vec::new();
    let mut current = db.classes.get(class);
    while let Some(c) = current {
        chain.push(c.name);
        current = c.superclass.and_then(|s| db.classes.get(s));
    }
    if chain.is_empty() {
        chain.push("Instance");
    }
    chain.into_boxed_slice()
}

/// A resolved property: the canonical name to store under and its data type.
#[derive(Debug, Clone)]
pub struct PropertyInfo {
    /// The canonical property name (aliases resolved).
    pub canonical: &'static str,
    /// The class that declares the property.
    pub declared_by: &'static str,
    pub data_type: &'static DataType<'static>,
    pub scriptability: Scriptability,
    pub descriptor: &'static PropertyDescriptor<'static>,
}

type Cache = Mutex<HashMap<(String, String), Option<PropertyInfo>>>;

/// Finds a property by name on a class or its superclasses, resolving aliases; cached.
pub fn find_property(class: &str, name: &str) -> Option<PropertyInfo> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (class.to_owned(), name.to_owned());
    if let Some(hit) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return hit.clone();
    }
    let found = lookup(class, name);
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, found.clone());
    found
}

/// A class the database describes: `class`, or `Instance` for one newer than the database
/// (what every instance is; see [`is_a`]).
fn described(class: &str) -> Option<&'static rbx_reflection::ClassDescriptor<'static>> {
    let db = db();
    db.classes.get(class).or_else(|| db.classes.get("Instance"))
}

fn lookup(class: &str, name: &str) -> Option<PropertyInfo> {
    let db = db();
    let mut current = described(class);
    while let Some(c) = current {
        if let Some(p) = c.properties.get(name) {
            let canonical_desc = match &p.kind {
                PropertyKind::Alias { alias_for } => c.properties.get(alias_for).unwrap_or(p),
                _ => p,
            };
            return Some(PropertyInfo {
                canonical: canonical_desc.name,
                declared_by: c.name,
                data_type: &canonical_desc.data_type,
                scriptability: p.scriptability,
                descriptor: canonical_desc,
            });
        }
        current = c.superclass.and_then(|s| db.classes.get(s));
    }
    None
}

/// The database default of a property for a class (walking superclasses).
pub fn db_default(class: &str, property: &str) -> Option<&'static rbx_types::Variant> {
    db().find_default_property(described(class)?, property)
}

/// The BrickColor whose colour is nearest (squared RGB distance; lowest number wins ties).
pub fn nearest_brick_color(r: f32, g: f32, b: f32) -> rbx_types::BrickColor {
    static PALETTE: OnceLock<Vec<rbx_types::BrickColor>> = OnceLock::new();
    let palette = PALETTE.get_or_init(|| {
        (0..=u16::MAX)
            .filter_map(rbx_types::BrickColor::from_number)
            .collect()
    });
    let mut best = (f32::INFINITY, rbx_types::BrickColor::MediumStoneGrey);
    for &bc in palette {
        let c = bc.to_color3uint8();
        let d = (c.r as f32 / 255.0 - r).powi(2)
            + (c.g as f32 / 255.0 - g).powi(2)
            + (c.b as f32 / 255.0 - b).powi(2);
        if d < best.0 {
            best = (d, bc);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rbx_xml writes one nested call per level: a tree deeper than a test thread's stack
    /// takes is written and read back (the writer runs on a large stack).
    #[test]
    fn a_deep_tree_encodes_as_xml() {
        use rbx_dom_weak::{InstanceBuilder, WeakDom};
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let top = dom.insert(dom.root_ref(), InstanceBuilder::new("Folder"));
        let mut at = top;
        for _ in 0..1_500 {
            at = dom.insert(at, InstanceBuilder::new("Folder"));
        }
        let mut bytes = Vec::new();
        encode_xml(&mut bytes, &dom, &[top]).unwrap();
        let back = crate::deep::deep_stack(|| decode_xml(bytes.as_slice())).unwrap();
        assert_eq!(crate::deep::tree_depth(&back), 1_501);
    }

    /// A tree whose strings XML cannot hold is refused before a byte is written, naming the
    /// instance and the property; tab, line feed and carriage return are kept; the binary
    /// format, which stores any bytes, still writes it. Attributes (base64 in XML) hold any
    /// text in both.
    #[test]
    fn xml_refuses_text_it_cannot_store() {
        use rbx_dom_weak::{InstanceBuilder, WeakDom};
        use rbx_types::{Attributes, Variant};
        let write = |name: &str, value: &str, attr: &str| {
            let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
            let model = dom.insert(dom.root_ref(), InstanceBuilder::new("Model").with_name("M"));
            let mut attrs = Attributes::new();
            attrs.insert("Note".into(), Variant::String(attr.into()));
            dom.insert(
                model,
                InstanceBuilder::new("StringValue")
                    .with_name(name)
                    .with_property("Value", value)
                    .with_property("Attributes", attrs),
            );
            let mut bytes = Vec::new();
            let xml = encode_xml(&mut bytes, &dom, &[model]).map(|()| bytes);
            let mut bin = Vec::new();
            encode_binary(&mut bin, &dom, &[model]).expect("binary takes any text");
            xml
        };
        let fine = write("a\tb", "line\nnext\r", "ok").expect("tab, LF and CR are XML text");
        decode_xml(fine.as_slice()).expect("and read back");
        let err = |name, value, attr| match write(name, value, attr) {
            Err(e @ XmlEncodeError::NotXmlText { .. }) => e.to_string(),
            other => panic!("{name:?} {value:?} {attr:?}: {other:?}"),
        };
        let e = err("a\u{1}b", "v", "ok");
        assert!(
            e.starts_with(r"M.a\u{1}b: Name holds the character U+0001"),
            "{e}"
        );
        assert!(e.contains(".rbxm or .rbxl"), "{e}");
        let e = err("S", "nul\0", "ok");
        assert!(
            e.starts_with("M.S: Value holds the character U+0000"),
            "{e}"
        );
        let e = err("S", "v\u{ffff}", "ok");
        assert!(e.contains("U+FFFF"), "{e}");
        // Attributes are base64 of their binary form in XML: any character is stored, and
        // read back as it was.
        let bytes = write("S", "v", "bell\u{7}nul\0").expect("attributes hold any text");
        let back = decode_xml(bytes.as_slice()).expect("and read back");
        let s = back
            .get_by_ref(back.root().children()[0])
            .unwrap()
            .children()[0];
        match back
            .get_by_ref(s)
            .unwrap()
            .properties
            .get(&"Attributes".into())
        {
            // (The attribute format reads strings back as BinaryString.)
            Some(Variant::Attributes(a)) => match a.get("Note") {
                Some(Variant::BinaryString(b)) => {
                    assert_eq!(AsRef::<[u8]>::as_ref(b), b"bell\x07nul\0")
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn superclass_chain() {
        assert!(is_a("Part", "BasePart"));
        assert!(is_a("Part", "Instance"));
        assert!(is_a("ProceduralModel", "Model"));
        assert!(is_a("GeneratedFolder", "Folder"));
        assert!(!is_a("Folder", "BasePart"));
        // A class newer than the database (read from a file) is an Instance, and itself.
        assert!(is_a("NoSuchClass", "Instance"));
        assert!(is_a("NoSuchClass", "NoSuchClass"));
        assert!(!is_a("NoSuchClass", "BasePart"));
        assert!(!is_a("Part", "NoSuchClass"));
    }

    /// The precomputed ancestry answers exactly as a walk of the database, for every pair of
    /// a class and a class of the database.
    #[test]
    fn ancestry_agrees_with_the_database_for_every_class() {
        let db = db();
        let walk = |class: &str, base: &str| {
            let mut current = db.classes.get(class);
            while let Some(c) = current {
                if c.name == base {
                    return true;
                }
                current = c.superclass.and_then(|s| db.classes.get(s));
            }
            false
        };
        let names: Vec<&str> = db.classes.keys().copied().collect();
        assert!(names.len() > 500);
        for &class in &names {
            for &base in &names {
                assert_eq!(is_a(class, base), walk(class, base), "{class} IsA {base}");
            }
        }
    }

    #[test]
    fn aliases_resolve_to_canonical() {
        let p = find_property("Part", "size").unwrap();
        assert_eq!(p.canonical, "Size");
        let p = find_property("Part", "Color").unwrap();
        assert_eq!(p.canonical, "Color");
        assert!(find_property("Part", "NoSuchProperty").is_none());
        assert_eq!(find_property("Part", "Shape").unwrap().declared_by, "Part");
    }

    /// A property the database does not know for its class survives an XML round trip, as
    /// it survives a binary one (a GeneratedFolder's PrimaryPart was dropped on write and
    /// on read).
    #[test]
    fn unknown_properties_survive_an_xml_round_trip() {
        use rbx_dom_weak::{InstanceBuilder, WeakDom};
        use rbx_types::Variant;
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let folder = dom.insert(
            dom.root_ref(),
            InstanceBuilder::new("GeneratedFolder")
                .with_property("FromANewerStudio", Variant::String("kept".into())),
        );
        let part = dom.insert(folder, InstanceBuilder::new("Part"));
        dom.get_by_ref_mut(folder)
            .unwrap()
            .properties
            .insert("PrimaryPart".into(), Variant::Ref(part));
        assert!(find_property("GeneratedFolder", "PrimaryPart").is_none());
        let mut bytes = Vec::new();
        encode_xml(&mut bytes, &dom, &[folder]).unwrap();
        let back = decode_xml(bytes.as_slice()).unwrap();
        let folder = back.root().children()[0];
        let inst = back.get_by_ref(folder).unwrap();
        let part = inst.children()[0];
        assert_eq!(
            inst.properties.get(&"PrimaryPart".into()),
            Some(&Variant::Ref(part))
        );
        assert_eq!(
            inst.properties.get(&"FromANewerStudio".into()),
            Some(&Variant::String("kept".into()))
        );
    }

    /// A property the database knows and does not save (WeldConstraint.Enabled) is left out
    /// of XML as of binary files; the rest of the tree, references included, is written.
    #[test]
    fn properties_that_are_not_saved_stay_out_of_xml() {
        use rbx_dom_weak::{InstanceBuilder, WeakDom};
        use rbx_types::Variant;
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let model = dom.insert(dom.root_ref(), InstanceBuilder::new("Model"));
        let part = dom.insert(model, InstanceBuilder::new("Part").with_name("P"));
        dom.insert(
            part,
            InstanceBuilder::new("WeldConstraint")
                .with_property("Enabled", Variant::Bool(false))
                .with_property("Part0", Variant::Ref(part)),
        );
        dom.get_by_ref_mut(model)
            .unwrap()
            .properties
            .insert("PrimaryPart".into(), Variant::Ref(part));
        // Instances after the one holding it are looked at too, and do not hide it.
        dom.insert(model, InstanceBuilder::new("Part").with_name("After"));
        let mut bytes = Vec::new();
        encode_xml(&mut bytes, &dom, &[model]).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(!text.contains("\"Enabled\""), "{text}");
        let back = decode_xml(bytes.as_slice()).unwrap();
        let model = back.get_by_ref(back.root().children()[0]).unwrap();
        let part = model.children()[0];
        assert_eq!(
            model.properties.get(&"PrimaryPart".into()),
            Some(&Variant::Ref(part))
        );
        let weld = back
            .get_by_ref(back.get_by_ref(part).unwrap().children()[0])
            .unwrap();
        assert_eq!(
            weld.properties.get(&"Part0".into()),
            Some(&Variant::Ref(part))
        );
        assert!(!weld.properties.contains_key(&"Enabled".into()));
    }
}
