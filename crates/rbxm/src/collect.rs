//! The one pass over the tree: instance order and referents, the classes with
//! their instances, each class's property columns (resolved through the
//! reflection database exactly as `rbx_binary` resolves them), the shared
//! strings and the Ref targets.
//!
//! Nothing here stores property values: a column records which property names
//! feed it, and the encoder looks each instance's value up when it writes the
//! column.

use std::collections::hash_map::Entry;

use ahash::{AHashMap, AHashSet};
use rbx_dom_weak::{
    Instance, Ustr, UstrMap, WeakDom,
    types::{
        Attributes, Axes, BinaryString, BrickColor, CFrame, Color3, Color3uint8, ColorSequence,
        ColorSequenceKeypoint, Content, ContentId, ContentType, Enum, Faces, Font, MaterialColors,
        NetAssetRef, NumberRange, NumberSequence, NumberSequenceKeypoint, PhysicalProperties, Ray,
        Rect, Ref, SecurityCapabilities, SharedString, SharedStringHash, Tags, UDim, UDim2,
        UniqueId, Variant, VariantType, Vector2, Vector3, Vector3int16,
    },
};
use rbx_reflection::{
    ClassDescriptor, ClassTag, PropertyDescriptor, PropertyKind, PropertyMigration,
    PropertySerialization, ReflectionDatabase,
};

use crate::{
    Error,
    prefetch::{PREFETCH_DISTANCE, prefetch, prefetch_instance, prefetch_table},
    types::Type,
};

/// One logical property of a class, written as one PROP chunk.
pub(crate) struct Column<'a> {
    pub ty: Type,
    /// Sort key of the class's PROP chunks.
    pub canonical: Ustr,
    /// The name written into the PROP chunk.
    pub serialized: Ustr,
    /// Value for instances that have none of `direct` / `migrated`.
    pub default: &'a Variant,
    /// Applied to every value of the column when set (rbx_binary does so too).
    pub migration: Option<&'a PropertyMigration<'a>>,
    /// Property names that resolve to this column as-is. An instance's value is
    /// the first of these in its property map's order.
    pub direct: Vec<Ustr>,
    /// Property names that migrate into this column; used when no `direct`
    /// name is present, first in map order.
    pub migrated: Vec<Ustr>,
}

/// One class: an INST chunk and its PROP chunks.
pub(crate) struct Class<'a> {
    pub name: Ustr,
    pub type_id: u32,
    pub is_service: bool,
    descriptor: Option<&'a ClassDescriptor<'a>>,
    pub instances: Vec<&'a Instance>,
    /// Traversal position of each instance (its referent unless refs overlap).
    pub positions: Vec<u32>,
    pub columns: Vec<Column<'a>>,
    /// Visited property name → does it serialize. Lookup only.
    resolved: UstrMap<bool>,
    /// Canonical name → index in `columns`. Lookup only.
    by_canonical: UstrMap<usize>,
}

/// How referents are numbered.
pub(crate) enum Referents<'a> {
    /// The usual case (no root inside another root, no root twice): the
    /// referent is the traversal position, and `parents[p]` is the parent
    /// referent of position `p` (-1 for a root).
    Positions { parents: Vec<i32> },
    /// Overlapping roots: rbx_binary visits some instances more than once and
    /// numbers each by its last visit. Kept exact with the same map it uses.
    /// `order` lists every visit; `Collected::ref_ids` holds every instance.
    Mapped { order: Vec<&'a Instance> },
}

pub(crate) struct Collected<'a> {
    /// In type-id (discovery) order.
    pub classes: Vec<Class<'a>>,
    pub instance_count: usize,
    pub referents: Referents<'a>,
    /// Sorted by hash; a value's id is its index.
    pub shared_strings: Vec<&'a SharedString>,
    /// Referent of every Ref / Content-object target that properties point at
    /// (-1 when outside the written set); empty when no property holds a Ref.
    /// With `Referents::Mapped`, the referent of every written instance.
    pub ref_ids: AHashMap<Ref, i32>,
}

impl Collected<'_> {
    pub fn referent(&self, class: &Class, i: usize) -> i32 {
        match &self.referents {
            Referents::Positions { .. } => class.positions[i] as i32,
            Referents::Mapped { .. } => self.ref_ids[&class.instances[i].referent()],
        }
    }

    pub fn ref_id(&self, target: Ref) -> i32 {
        self.ref_ids.get(&target).copied().unwrap_or(-1)
    }

    pub fn shared_string_id(&self, value: &SharedString) -> u32 {
        let hash = value.hash();
        match self
            .shared_strings
            .binary_search_by_key(&hash, |s| s.hash())
        {
            Ok(id) => id as u32,
            // rbx_binary panics the same way; collection sees every value.
            Err(_) => panic!("SharedString {hash} was not found during type collection"),
        }
    }
}

struct Collector<'a> {
    dom: &'a WeakDom,
    database: &'a ReflectionDatabase<'a>,
    classes: Vec<Class<'a>>,
    class_ids: UstrMap<usize>,
    count: u32,
    shared_seen: AHashSet<SharedStringHash>,
    shared_strings: Vec<&'a SharedString>,
    ref_targets: AHashMap<Ref, i32>,
}

pub(crate) fn collect<'a>(
    dom: &'a WeakDom,
    database: &'a ReflectionDatabase<'a>,
    refs: &[Ref],
) -> Result<Collected<'a>, Error> {
    let mut c = Collector {
        dom,
        database,
        classes: Vec::new(),
        class_ids: UstrMap::default(),
        count: 0,
        shared_seen: AHashSet::new(),
        shared_strings: Vec::new(),
        ref_targets: AHashMap::new(),
    };

    // Structure first (order, referents, classes), then each class's
    // properties. A discovery error at an earlier position wins over a missing
    // root found later, as in rbx_binary's single pass.
    let traversed = if roots_overlap(dom, refs) {
        c.traverse_like_rbx_binary(refs)
            .map(|order| Referents::Mapped { order })
    } else {
        c.traverse(refs)
            .map(|parents| Referents::Positions { parents })
    };
    c.discover()?;
    let referents = traversed?;
    match &referents {
        Referents::Mapped { order } => {
            // A repeated instance keeps its last position, as in rbx_binary.
            c.ref_targets = AHashMap::with_capacity(order.len());
            for (position, instance) in order.iter().enumerate() {
                c.ref_targets.insert(instance.referent(), position as i32);
            }
        }
        Referents::Positions { .. } => {
            if !c.ref_targets.is_empty() {
                for class in &c.classes {
                    for (instance, &position) in class.instances.iter().zip(&class.positions) {
                        if let Some(id) = c.ref_targets.get_mut(&instance.referent()) {
                            *id = position as i32;
                        }
                    }
                }
            }
        }
    }

    let mut shared_strings = c.shared_strings;
    shared_strings.sort_unstable_by_key(|s| s.hash());
    Ok(Collected {
        classes: c.classes,
        instance_count: c.count as usize,
        referents,
        shared_strings,
        ref_ids: c.ref_targets,
    })
}

/// Whether a root is listed twice or lies inside another root's subtree. Only
/// then does rbx_binary's traversal visit instances twice (or skip some).
fn roots_overlap(dom: &WeakDom, refs: &[Ref]) -> bool {
    if refs.len() < 2 {
        return false;
    }
    let roots: AHashSet<Ref> = refs.iter().copied().collect();
    if roots.len() != refs.len() {
        return true;
    }
    refs.iter().any(|&root| {
        let mut parent = dom.get_by_ref(root).map_or(Ref::none(), |i| i.parent());
        while let Some(instance) = dom.get_by_ref(parent) {
            if roots.contains(&parent) {
                return true;
            }
            parent = instance.parent();
        }
        false
    })
}

impl<'a> Collector<'a> {
    fn lookup(&self, referent: Ref) -> Result<&'a Instance, Error> {
        self.dom
            .get_by_ref(referent)
            .ok_or(Error::InvalidInstanceId { referent })
    }

    /// Depth-first post-order over disjoint roots (rbx_binary's order). Returns
    /// the parent referent of every position. While a node is open, its
    /// finished children are chained through their own `parents` slots and
    /// patched when it finishes, so no Ref → referent map is needed.
    ///
    /// Children are looked up a block at a time: the lookups are independent,
    /// so their cache misses overlap instead of stalling one by one.
    fn traverse(&mut self, refs: &[Ref]) -> Result<Vec<i32>, Error> {
        const BLOCK: usize = 32;
        struct Frame<'a> {
            instance: &'a Instance,
            /// Next child to look up.
            next_child: usize,
            /// This frame's looked-up children: `looked_up[start..]`, of
            /// which `looked_up[cursor..]` are not visited yet.
            start: usize,
            cursor: usize,
            /// Last finished child (a position), chained through `parents`.
            children: i32,
        }
        let mut parents: Vec<i32> = Vec::new();
        let mut stack: Vec<Frame<'a>> = Vec::new();
        let mut looked_up: Vec<(Ref, Option<&'a Instance>)> = Vec::new();
        for &root in refs {
            let instance = self.lookup(root)?;
            stack.push(Frame {
                instance,
                next_child: 0,
                start: looked_up.len(),
                cursor: looked_up.len(),
                children: -1,
            });
            while let Some(top) = stack.last_mut() {
                if top.cursor == looked_up.len() {
                    // Look up the next block of children.
                    looked_up.truncate(top.start);
                    top.cursor = top.start;
                    let children = top.instance.children();
                    let block =
                        &children[top.next_child..children.len().min(top.next_child + BLOCK)];
                    top.next_child += block.len();
                    looked_up.extend(block.iter().map(|&r| {
                        let child = self.dom.get_by_ref(r);
                        if let Some(child) = child {
                            prefetch_instance(child);
                        }
                        (r, child)
                    }));
                }
                if top.cursor < looked_up.len() {
                    let (referent, child) = looked_up[top.cursor];
                    top.cursor += 1;
                    let instance = child.ok_or(Error::InvalidInstanceId { referent })?;
                    let start = looked_up.len();
                    stack.push(Frame {
                        instance,
                        next_child: 0,
                        start,
                        cursor: start,
                        children: -1,
                    });
                    continue;
                }
                let frame = stack.pop().expect("stack is not empty");
                looked_up.truncate(frame.start);
                // Room for the siblings at once: a flat model of 100k parts fills its
                // lists without regrowing (each regrowth leaves the old block behind).
                let siblings = stack.last().map_or(1, |p| p.instance.children().len());
                if parents.len() == parents.capacity() {
                    parents.reserve(siblings);
                }
                let position = self.visit(frame.instance, siblings) as i32;
                let mut child = frame.children;
                while child >= 0 {
                    let next = parents[child as usize];
                    parents[child as usize] = position;
                    child = next;
                }
                match stack.last_mut() {
                    Some(parent) => {
                        parents.push(parent.children);
                        parent.children = position;
                    }
                    None => parents.push(-1),
                }
            }
        }
        Ok(parents)
    }

    /// rbx_binary's traversal verbatim (`SerializerState::add_instances`), for
    /// overlapping roots where its quirks (repeat visits, a parent visited
    /// without its children) decide the output.
    fn traverse_like_rbx_binary(&mut self, refs: &[Ref]) -> Result<Vec<&'a Instance>, Error> {
        let mut order = Vec::new();
        let mut to_visit: Vec<Ref> = refs.iter().rev().copied().collect();
        let mut last_visited_child = None;
        while let Some(&referent) = to_visit.last() {
            let instance = self.lookup(referent)?;
            to_visit.extend(instance.children().iter().rev());
            while let Some(&referent) = to_visit.last() {
                let instance = self.lookup(referent)?;
                if !instance.children().is_empty()
                    && instance.children().last() != last_visited_child.as_ref()
                {
                    break;
                }
                order.push(instance);
                self.visit(instance, 1);
                last_visited_child = to_visit.pop();
            }
        }
        Ok(order)
    }

    /// Gives the instance the next position and records it in its class; `siblings` sizes
    /// the class's lists when they are full (room that stays unused costs no memory).
    fn visit(&mut self, instance: &'a Instance, siblings: usize) -> u32 {
        let position = self.count;
        self.count = self
            .count
            .checked_add(1)
            .filter(|&n| n <= i32::MAX as u32)
            .expect("more instances than referents");

        let class_index = match self.class_ids.entry(instance.class) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                let descriptor = self.database.classes.get(instance.class.as_str());
                let index = self.classes.len();
                self.classes.push(Class {
                    name: instance.class,
                    type_id: index as u32,
                    is_service: descriptor.is_some_and(|d| d.tags.contains(&ClassTag::Service)),
                    descriptor,
                    instances: Vec::new(),
                    positions: Vec::new(),
                    columns: Vec::new(),
                    resolved: UstrMap::default(),
                    by_canonical: UstrMap::default(),
                });
                *e.insert(index)
            }
        };
        let class = &mut self.classes[class_index];
        if class.instances.len() == class.instances.capacity() {
            class.instances.reserve(siblings);
            class.positions.reserve(siblings);
        }
        class.instances.push(instance);
        class.positions.push(position);
        position
    }

    /// Resolves every property name of every instance into its class's
    /// columns, and notes shared strings and Ref targets. On failure, returns
    /// the error of the earliest instance in traversal order (each class stops
    /// at its first error, which is where rbx_binary's pass would stop).
    fn discover(&mut self) -> Result<(), Error> {
        let mut first_error: Option<(u32, Error)> = None;
        let mut notes = Notes {
            shared_seen: &mut self.shared_seen,
            shared_strings: &mut self.shared_strings,
            ref_targets: &mut self.ref_targets,
        };
        for class in &mut self.classes {
            for k in 0..class.instances.len() {
                if let Some(ahead) = class.instances.get(k + 2 * PREFETCH_DISTANCE) {
                    prefetch(&ahead.properties);
                }
                if let Some(ahead) = class.instances.get(k + PREFETCH_DISTANCE) {
                    prefetch_table(&ahead.properties);
                }
                let instance = class.instances[k];
                if let Err(error) = discover_instance(class, self.database, instance, &mut notes) {
                    let position = class.positions[k];
                    if first_error.as_ref().is_none_or(|&(p, _)| position < p) {
                        first_error = Some((position, error));
                    }
                    break;
                }
            }
        }
        match first_error {
            Some((_, error)) => Err(error),
            None => Ok(()),
        }
    }
}

fn discover_instance<'a>(
    class: &mut Class<'a>,
    database: &'a ReflectionDatabase<'a>,
    instance: &'a Instance,
    notes: &mut Notes<'_, 'a>,
) -> Result<(), Error> {
    for (&name, value) in &instance.properties {
        let serializes = match class.resolved.get(&name) {
            Some(&serializes) => serializes,
            None => {
                let serializes = resolve(class, database, name, value, notes)?;
                class.resolved.insert(name, serializes);
                serializes
            }
        };
        if serializes {
            note_value(
                value,
                notes.shared_seen,
                notes.shared_strings,
                notes.ref_targets,
            );
        }
    }
    Ok(())
}

struct Notes<'n, 'a> {
    shared_seen: &'n mut AHashSet<SharedStringHash>,
    shared_strings: &'n mut Vec<&'a SharedString>,
    ref_targets: &'n mut AHashMap<Ref, i32>,
}

/// Tracks shared strings (SSTR chunk) and Ref targets a written value uses.
fn note_value<'a>(
    value: &'a Variant,
    shared_seen: &mut AHashSet<SharedStringHash>,
    shared_strings: &mut Vec<&'a SharedString>,
    ref_targets: &mut AHashMap<Ref, i32>,
) {
    let shared = match value {
        Variant::SharedString(s) => s,
        Variant::NetAssetRef(n) => n.as_ref(),
        Variant::Ref(target) => {
            if target.is_some() {
                ref_targets.entry(*target).or_insert(-1);
            }
            return;
        }
        Variant::Content(content) => {
            if let ContentType::Object(target) = content.value() {
                ref_targets.entry(*target).or_insert(-1);
            }
            return;
        }
        _ => return,
    };
    if shared_seen.insert(shared.hash()) {
        shared_strings.push(shared);
    }
}

/// The serialized form of one logical property.
struct SerializedProperty {
    canonical: Ustr,
    serialized: Ustr,
    ty: VariantType,
}

impl SerializedProperty {
    fn from_descriptors(d: &PropertyDescriptors<'_>) -> Option<Self> {
        let serialized = d.serialized?;
        Some(SerializedProperty {
            canonical: Ustr::from(d.canonical.name),
            serialized: Ustr::from(serialized.name),
            ty: serialized.data_type.ty(),
        })
    }
}

/// Resolves a property name the class has not seen yet into its column(s),
/// creating them as needed (rbx_binary's `resolve_visited_property`). Returns
/// whether the property serializes.
fn resolve<'a>(
    class: &mut Class<'a>,
    database: &'a ReflectionDatabase<'a>,
    name: Ustr,
    sample: &Variant,
    notes: &mut Notes<'_, 'a>,
) -> Result<bool, Error> {
    let (migration, targets) = match find_property_descriptors(database, class.descriptor, &name) {
        Some((superclass, descriptors)) => {
            let Some(serialized) = descriptors.serialized else {
                return Ok(false);
            };
            if let PropertyKind::Canonical {
                serialization: PropertySerialization::Migrate(migration),
            } = &serialized.kind
            {
                // Migration targets live on the same class as the source.
                let targets = migration
                    .new_property_names()
                    .iter()
                    .map(|target| {
                        let descriptors = superclass
                            .properties
                            .get(*target)
                            .and_then(|p| PropertyDescriptors::new(superclass, p))
                            .expect("migration targets should have property descriptors");
                        SerializedProperty::from_descriptors(&descriptors)
                            .expect("migration target property descriptors should serialize")
                    })
                    .collect();
                (Some(migration), targets)
            } else {
                match SerializedProperty::from_descriptors(&descriptors) {
                    Some(p) => (None, vec![p]),
                    None => return Ok(false),
                }
            }
        }
        // Unknown to the database: written as-is under its own name, typed by
        // the first value seen.
        None => (
            None,
            vec![SerializedProperty {
                canonical: name,
                serialized: name,
                ty: sample.ty(),
            }],
        ),
    };

    for target in targets {
        let default = class
            .descriptor
            .and_then(|d| database.find_default_property(d, &target.canonical))
            .or_else(|| fallback_default_value(target.ty))
            .ok_or_else(|| Error::UnsupportedPropType {
                type_name: class.name.to_string(),
                prop_name: target.canonical.to_string(),
                prop_type: format!("{:?}", target.ty),
            })?;
        // A default SharedString goes into SSTR even if no instance needs it.
        note_value(
            default,
            notes.shared_seen,
            notes.shared_strings,
            notes.ref_targets,
        );

        let index = match class.by_canonical.entry(target.canonical) {
            Entry::Occupied(e) => {
                let index = *e.get();
                if let Some(m) = migration {
                    set_migration(&mut class.columns[index], m);
                }
                index
            }
            Entry::Vacant(e) => {
                let ty =
                    Type::from_rbx_type(target.ty).ok_or_else(|| Error::UnsupportedPropType {
                        type_name: class.name.to_string(),
                        prop_name: target.serialized.to_string(),
                        prop_type: format!("{:?}", target.ty),
                    })?;
                let index = class.columns.len();
                class.columns.push(Column {
                    ty,
                    canonical: target.canonical,
                    serialized: target.serialized,
                    default,
                    migration,
                    direct: Vec::new(),
                    migrated: Vec::new(),
                });
                *e.insert(index)
            }
        };
        let column = &mut class.columns[index];
        if migration.is_some() {
            column.migrated.push(name);
        } else {
            column.direct.push(name);
        }
    }
    Ok(true)
}

fn set_migration<'a>(column: &mut Column<'a>, migration: &'a PropertyMigration<'a>) {
    match column.migration {
        Some(old) => assert_eq!(old, migration, "Migration must not change after being set"),
        None => column.migration = Some(migration),
    }
}

/// The canonical and serialized descriptors of one logical property
/// (rbx_binary's `core::PropertyDescriptors`).
struct PropertyDescriptors<'db> {
    canonical: &'db PropertyDescriptor<'db>,
    serialized: Option<&'db PropertyDescriptor<'db>>,
}

impl<'db> PropertyDescriptors<'db> {
    fn new(
        class: &'db ClassDescriptor<'db>,
        property: &'db PropertyDescriptor<'db>,
    ) -> Option<PropertyDescriptors<'db>> {
        match &property.kind {
            PropertyKind::Canonical { serialization } => Some(PropertyDescriptors {
                canonical: property,
                serialized: find_serialized_from_canonical(class, property, serialization),
            }),
            PropertyKind::Alias { alias_for } => {
                let canonical = class.properties.get(*alias_for).unwrap();
                if let PropertyKind::Canonical { serialization } = &canonical.kind {
                    Some(PropertyDescriptors {
                        canonical,
                        serialized: find_serialized_from_canonical(class, canonical, serialization),
                    })
                } else {
                    None
                }
            }
            _ => None,
        }
    }
}

/// Walks superclasses to the class declaring `name` (rbx_binary's
/// `core::find_property_descriptors`).
fn find_property_descriptors<'db>(
    database: &'db ReflectionDatabase<'db>,
    class: Option<&'db ClassDescriptor<'db>>,
    name: &str,
) -> Option<(&'db ClassDescriptor<'db>, PropertyDescriptors<'db>)> {
    let (class, property) = database
        .superclasses_iter(class?)
        .find_map(|class| Some((class, class.properties.get(name)?)))?;
    Some((class, PropertyDescriptors::new(class, property)?))
}

fn find_serialized_from_canonical<'db>(
    class: &'db ClassDescriptor<'db>,
    canonical: &'db PropertyDescriptor<'db>,
    serialization: &'db PropertySerialization<'db>,
) -> Option<&'db PropertyDescriptor<'db>> {
    match serialization {
        PropertySerialization::Serializes | PropertySerialization::Migrate { .. } => {
            Some(canonical)
        }
        PropertySerialization::SerializesAs(name) => Some(class.properties.get(*name).unwrap()),
        _ => None,
    }
}

/// Default for a property the database has no default for, by type
/// (rbx_binary's `fallback_default_value`, value for value).
fn fallback_default_value(ty: VariantType) -> Option<&'static Variant> {
    use std::sync::LazyLock;
    static STRING: Variant = Variant::String(String::new());
    static BINARY_STRING: Variant = Variant::BinaryString(BinaryString::new());
    static BOOL: Variant = Variant::Bool(false);
    static INT32: Variant = Variant::Int32(0);
    static FLOAT32: Variant = Variant::Float32(0.0);
    static FLOAT64: Variant = Variant::Float64(0.0);
    static UDIM: Variant = Variant::UDim(UDim::new(0.0, 0));
    static UDIM2: Variant = Variant::UDim2(UDim2::new(UDim::new(0.0, 0), UDim::new(0.0, 0)));
    static RAY: Variant = Variant::Ray(Ray::new(
        Vector3::new(0.0, 0.0, 0.0),
        Vector3::new(0.0, 0.0, 0.0),
    ));
    static FACES: Variant = Variant::Faces(Faces::from_bits(0).unwrap());
    static AXES: Variant = Variant::Axes(Axes::from_bits(0).unwrap());
    static BRICK_COLOR: Variant = Variant::BrickColor(BrickColor::MediumStoneGrey);
    static CFRAME: Variant = Variant::CFrame(CFrame::identity());
    static ENUM: Variant = Variant::Enum(Enum::from_u32(u32::MAX));
    static COLOR3: Variant = Variant::Color3(Color3::new(0.0, 0.0, 0.0));
    static VECTOR2: Variant = Variant::Vector2(Vector2::new(0.0, 0.0));
    static VECTOR3: Variant = Variant::Vector3(Vector3::new(0.0, 0.0, 0.0));
    static REF: Variant = Variant::Ref(Ref::none());
    static VECTOR3INT16: Variant = Variant::Vector3int16(Vector3int16::new(0, 0, 0));
    static NUMBER_SEQUENCE: LazyLock<Variant> = LazyLock::new(|| {
        Variant::NumberSequence(NumberSequence {
            keypoints: vec![
                NumberSequenceKeypoint::new(0.0, 0.0, 0.0),
                NumberSequenceKeypoint::new(0.0, 0.0, 0.0),
            ],
        })
    });
    static COLOR_SEQUENCE: LazyLock<Variant> = LazyLock::new(|| {
        Variant::ColorSequence(ColorSequence {
            keypoints: vec![
                ColorSequenceKeypoint::new(0.0, Color3::new(0.0, 0.0, 0.0)),
                ColorSequenceKeypoint::new(0.0, Color3::new(0.0, 0.0, 0.0)),
            ],
        })
    });
    static NUMBER_RANGE: Variant = Variant::NumberRange(NumberRange::new(0.0, 0.0));
    static RECT: Variant = Variant::Rect(Rect::new(Vector2::new(0.0, 0.0), Vector2::new(0.0, 0.0)));
    static PHYSICAL_PROPERTIES: Variant = Variant::PhysicalProperties(PhysicalProperties::Default);
    static COLOR3UINT8: Variant = Variant::Color3uint8(Color3uint8::new(0, 0, 0));
    static INT64: Variant = Variant::Int64(0);
    static SHARED_STRING: LazyLock<Variant> =
        LazyLock::new(|| Variant::SharedString(SharedString::new(Vec::new())));
    static OPTIONAL_CFRAME: Variant = Variant::OptionalCFrame(None);
    static TAGS: Variant = Variant::Tags(Tags::new());
    static CONTENT_ID: Variant = Variant::ContentId(ContentId::new());
    static ATTRIBUTES: Variant = Variant::Attributes(Attributes::new());
    static UNIQUE_ID: Variant = Variant::UniqueId(UniqueId::nil());
    static FONT: LazyLock<Variant> = LazyLock::new(|| Variant::Font(Font::default()));
    static MATERIAL_COLORS: Variant = Variant::MaterialColors(MaterialColors::new());
    static SECURITY_CAPABILITIES: Variant =
        Variant::SecurityCapabilities(SecurityCapabilities::from_bits(0));
    static CONTENT: Variant = Variant::Content(Content::none());
    static NET_ASSET_REF: LazyLock<Variant> =
        LazyLock::new(|| Variant::NetAssetRef(NetAssetRef::new(Vec::new())));
    Some(match ty {
        VariantType::String => &STRING,
        VariantType::BinaryString => &BINARY_STRING,
        VariantType::Bool => &BOOL,
        VariantType::Int32 => &INT32,
        VariantType::Float32 => &FLOAT32,
        VariantType::Float64 => &FLOAT64,
        VariantType::UDim => &UDIM,
        VariantType::UDim2 => &UDIM2,
        VariantType::Ray => &RAY,
        VariantType::Faces => &FACES,
        VariantType::Axes => &AXES,
        VariantType::BrickColor => &BRICK_COLOR,
        VariantType::CFrame => &CFRAME,
        VariantType::Enum => &ENUM,
        VariantType::Color3 => &COLOR3,
        VariantType::Vector2 => &VECTOR2,
        VariantType::Vector3 => &VECTOR3,
        VariantType::Ref => &REF,
        VariantType::Vector3int16 => &VECTOR3INT16,
        VariantType::NumberSequence => &NUMBER_SEQUENCE,
        VariantType::ColorSequence => &COLOR_SEQUENCE,
        VariantType::NumberRange => &NUMBER_RANGE,
        VariantType::Rect => &RECT,
        VariantType::PhysicalProperties => &PHYSICAL_PROPERTIES,
        VariantType::Color3uint8 => &COLOR3UINT8,
        VariantType::Int64 => &INT64,
        VariantType::SharedString => &SHARED_STRING,
        VariantType::OptionalCFrame => &OPTIONAL_CFRAME,
        VariantType::Tags => &TAGS,
        VariantType::ContentId => &CONTENT_ID,
        VariantType::Attributes => &ATTRIBUTES,
        VariantType::UniqueId => &UNIQUE_ID,
        VariantType::Font => &FONT,
        VariantType::MaterialColors => &MATERIAL_COLORS,
        VariantType::SecurityCapabilities => &SECURITY_CAPABILITIES,
        VariantType::Content => &CONTENT,
        VariantType::NetAssetRef => &NET_ASSET_REF,
        _ => return None,
    })
}
