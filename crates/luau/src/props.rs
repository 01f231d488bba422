//! Property resolution with the reflection database: canonical names, types, defaults, and the
//! derived properties generators rely on (Position/Orientation move the CFrame, BrickColor ↔
//! Color, WorldPivot, Scale, an Attachment's Position/Axis/World* forms). Resolutions are cached per (class, name).

use rbx_dom_weak::Ustr;
use rbx_reflection::{DataType, Scriptability};
use rbx_types::Variant;
use rustc_hash::FxHashMap;
use std::rc::Rc;

/// What a (class, member name) pair means.
#[derive(Debug)]
pub enum Prop {
    Name,
    ClassName,
    Parent,
    /// Derived from CFrame (BasePart).
    Position,
    /// Derived from CFrame: YXZ Euler angles in degrees (BasePart.Orientation,
    /// `CFrame:ToOrientation`).
    Orientation,
    /// Derived from CFrame: XYZ Euler angles in degrees (BasePart.Rotation,
    /// `CFrame:ToEulerAnglesXYZ`, the angles `CFrame.Angles` takes).
    Rotation,
    /// A BrickColor view of the Color3 property under this key (BasePart.BrickColor of
    /// Color; the legacy GUI, BodyColors and selection colours of their `...Color3`).
    BrickColor(Ustr),
    /// A boolean stored inverted under this key (BaseScript.Enabled of Disabled), and
    /// whether scripts may write it (Sound.IsPaused, `not Playing`, is read-only).
    Inverted(Ustr, bool),
    /// Lighting.ClockTime: hours, read from and written to the `TimeOfDay` string.
    ClockTime,
    /// Lighting.TimeOfDay: a write (a string, or a number of hours as Roblox converts it)
    /// is kept in its `HH:MM:SS` form, as Studio shows it: `"5"` and `5` read `05:00:00`.
    TimeOfDay,
    /// A text object's `Font`: the `Enum.Font` view of its saved `FontFace` (a write sets
    /// the face `Font.fromEnum` gives; a face no item names reads `Enum.Font.Unknown`).
    FontEnum,
    /// A ContentId property files keep as the Content it migrates to (ImageLabel.Image as
    /// ImageContent, Sound.SoundId as AudioContent, MeshPart.MeshId as MeshContent, ...): it
    /// reads the URI of the Content under `content` (or a ContentId a file kept under `own`)
    /// and a write stores that Content, so both names show one value, loaded or not.
    ContentId {
        content: Ustr,
        own: Ustr,
        writable: bool,
    },
    /// Model pivot (WorldPivotData or PrimaryPart).
    WorldPivot,
    /// Model scale: readable, changed only with ScaleTo.
    Scale,
    /// Derived from an Attachment's CFrame (and its parent's, for the World forms).
    Attachment(crate::attachment::Derived),
    /// BasePart.Mass, AssemblyMass and AssemblyRootPart: read-only, derived from the part,
    /// or from its assembly (`assembly.rs`).
    Mass,
    /// BasePart.ExtentsCFrame and ExtentsSize, read-only: the part's physical centre (its
    /// CFrame) and physical size (its Size, at least 0.05 studs on each axis).
    ExtentsCFrame,
    ExtentsSize,
    AssemblyMass,
    AssemblyRootPart,
    /// BasePart.CenterOfMass (the part's own, in world space) and AssemblyCenterOfMass (its
    /// assembly's, mass-weighted), read-only.
    CenterOfMass,
    AssemblyCenterOfMass,
    /// BasePart.CurrentPhysicalProperties, read-only: CustomPhysicalProperties when set,
    /// else the material's.
    CurrentPhysicalProperties,
    /// Humanoid.RootPart, read-only: its parent's child `HumanoidRootPart` (a BasePart), as
    /// the running humanoid finds it.
    HumanoidRootPart,
    /// Workspace.DistributedGameTime: how long the game has run, the virtual clock `time()`
    /// reads (a write is kept in the file and changes no read).
    DistributedGameTime,
    /// A property stored under its canonical key.
    Stored {
        key: Ustr,
        data_type: &'static DataType<'static>,
        default: Option<&'static Variant>,
        readable: bool,
        writable: bool,
        /// False for a property Roblox's files do not keep (a value derived from another
        /// one that procmodel does not derive, or runtime state): a write warns once.
        saved: bool,
    },
    /// A method of this class (see the `classes` module).
    Method,
    /// Neither a property nor a method of this class.
    Missing,
}

#[derive(Default)]
pub struct PropCache {
    /// Keyed by the member name's bytes: no UTF-8 validation on the hot path.
    by_class: FxHashMap<Ustr, FxHashMap<Box<[u8]>, Rc<Prop>>>,
    /// In front of `by_class`: the last resolution per (class, key address) pair, direct
    /// mapped. A generator's keys are its functions' constant strings, so a write like
    /// `p.CFrame = ...` in a loop finds its entry by address; the bytes are compared too, as
    /// an address may be reused by another string after a collection.
    hot: Vec<Option<Hot>>,
    /// Which classes have which methods: a name that is no property may be one.
    methods: Rc<MethodIndex>,
}

struct Hot {
    class: Ustr,
    addr: usize,
    name: Box<[u8]>,
    prop: Rc<Prop>,
}

const HOT_SLOTS: usize = 64;

impl PropCache {
    /// Sets the method index member resolution consults (once, when the VM is set up).
    pub fn set_methods(&mut self, methods: Rc<MethodIndex>) {
        self.methods = methods;
        self.by_class.clear();
        self.hot.clear();
    }

    /// Whether `name` is a property of `class` a script may name: `Name`, `Parent`,
    /// `ClassName`, one of the reflection database's, or one this host resolves (derived or
    /// legacy). `GetPropertyChangedSignal` and the property-default methods accept these.
    pub fn is_property(&mut self, class: Ustr, name: &[u8]) -> bool {
        matches!(name, b"Name" | b"Parent" | b"ClassName")
            || std::str::from_utf8(name)
                .is_ok_and(|n| procmodel_dom::find_property(class.as_str(), n).is_some())
            || !matches!(*self.get(class, name), Prop::Missing | Prop::Method)
    }

    /// The key whose writes a property signal of `name` watches: the stored property that
    /// every write of `name` (and of the names that share its value) changes, so
    /// `GetPropertyChangedSignal("Texture")` fires for a write of TextureContent and
    /// `"Enabled"` for one of Disabled. Other names are their own key.
    pub fn signal_key(&mut self, class: Ustr, name: &str) -> Ustr {
        match &*self.get(class, name.as_bytes()) {
            Prop::ContentId { content: k, .. }
            | Prop::BrickColor(k)
            | Prop::Inverted(k, _)
            | Prop::Stored { key: k, .. } => *k,
            Prop::ClockTime => Ustr::from("TimeOfDay"),
            Prop::FontEnum => Ustr::from("FontFace"),
            _ => Ustr::from(name),
        }
    }

    pub fn get(&mut self, class: Ustr, name: &[u8]) -> Rc<Prop> {
        let addr = name.as_ptr() as usize;
        let slot = ((addr >> 3) ^ (class.as_char_ptr() as usize >> 4)) % HOT_SLOTS;
        if let Some(Some(h)) = self.hot.get(slot)
            && h.addr == addr
            && h.class == class
            && *h.name == *name
        {
            return h.prop.clone();
        }
        let prop = self.resolve_cached(class, name);
        if self.hot.is_empty() {
            self.hot.resize_with(HOT_SLOTS, || None);
        }
        self.hot[slot] = Some(Hot {
            class,
            addr,
            name: name.into(),
            prop: prop.clone(),
        });
        prop
    }

    fn resolve_cached(&mut self, class: Ustr, name: &[u8]) -> Rc<Prop> {
        let per_class = self.by_class.entry(class).or_default();
        if let Some(p) = per_class.get(name) {
            return p.clone();
        }
        let p = Rc::new(match std::str::from_utf8(name) {
            Ok(s) => match resolve(class.as_str(), s) {
                Prop::Missing if self.methods.has(class.as_str(), name) => Prop::Method,
                p => p,
            },
            Err(_) => Prop::Missing,
        });
        per_class.insert(name.into(), p.clone());
        p
    }
}

fn resolve(class: &str, name: &str) -> Prop {
    use procmodel_dom::is_a;
    match name {
        "Name" => return Prop::Name,
        "ClassName" | "className" => return Prop::ClassName,
        "Parent" => return Prop::Parent,
        _ => {}
    }
    if is_a(class, "BasePart") {
        match name {
            "Position" => return Prop::Position,
            "Orientation" => return Prop::Orientation,
            "Rotation" => return Prop::Rotation,
            "BrickColor" | "brickColor" => return Prop::BrickColor(Ustr::from("Color")),
            "Mass" => return Prop::Mass,
            "ExtentsCFrame" => return Prop::ExtentsCFrame,
            "ExtentsSize" => return Prop::ExtentsSize,
            "AssemblyMass" => return Prop::AssemblyMass,
            "AssemblyRootPart" => return Prop::AssemblyRootPart,
            "CenterOfMass" => return Prop::CenterOfMass,
            "AssemblyCenterOfMass" => return Prop::AssemblyCenterOfMass,
            "CurrentPhysicalProperties" => return Prop::CurrentPhysicalProperties,
            _ => {}
        }
    }
    if name == "ClockTime" && is_a(class, "Lighting") {
        return Prop::ClockTime;
    }
    if name == "TimeOfDay" && is_a(class, "Lighting") {
        return Prop::TimeOfDay;
    }
    if name == "RootPart" && is_a(class, "Humanoid") {
        return Prop::HumanoidRootPart;
    }
    // Read-only views of whether a sound plays (Roblox reference: IsPlaying is true when
    // the sound is playing, IsPaused when it is not).
    if is_a(class, "Sound") {
        match name {
            "IsPlaying" => {
                if let Some(view) = read_only_view(class, "Playing") {
                    return view;
                }
            }
            "IsPaused" => return Prop::Inverted(Ustr::from("Playing"), false),
            _ => {}
        }
    }
    if name == "DistributedGameTime" && is_a(class, "Workspace") {
        return Prop::DistributedGameTime;
    }
    // A MeshPart's mesh size is kept in files as `InitialSize`, which scripts cannot name;
    // `MeshSize` reads it.
    if name == "MeshSize"
        && is_a(class, "MeshPart")
        && let Some(view) = read_only_view(class, "InitialSize")
    {
        return view;
    }
    if name == "Font" && procmodel_dom::find_property(class, "FontFace").is_some() {
        return Prop::FontEnum;
    }
    if let Some(target) = legacy(class, name) {
        return match target {
            Legacy::BrickColor(color3) => Prop::BrickColor(Ustr::from(color3)),
            Legacy::Inverted(key) => Prop::Inverted(Ustr::from(key), true),
            Legacy::Same(other) => resolve(class, other),
            Legacy::Hidden(other) => match procmodel_dom::find_property(class, other) {
                Some(info) => Prop::Stored {
                    key: Ustr::from(info.canonical),
                    data_type: info.data_type,
                    default: procmodel_dom::db_default(class, info.canonical),
                    readable: true,
                    writable: true,
                    saved: true,
                },
                None => Prop::Missing,
            },
        };
    }
    if is_a(class, "Attachment")
        && let Some(d) = crate::attachment::Derived::of(name)
    {
        return Prop::Attachment(d);
    }
    if is_a(class, "Model") {
        match name {
            "WorldPivot" => return Prop::WorldPivot,
            "Scale" => return Prop::Scale,
            _ => {}
        }
    }
    let Some(info) = procmodel_dom::find_property(class, name) else {
        return Prop::Missing;
    };
    // Source is "Custom" in the database (plugins may set it); a host tool may too.
    let custom_ok = info.canonical == "Source";
    let (readable, writable) = match info.scriptability {
        Scriptability::ReadWrite => (true, true),
        Scriptability::Read => (true, false),
        Scriptability::Write => (false, true),
        Scriptability::Custom if custom_ok => (true, true),
        // The database marks it unscriptable; the reference lets scripts read and write it
        // (the engine refuses results whose modules' capabilities exceed their generator's).
        Scriptability::None if info.canonical == "Capabilities" => (true, true),
        _ => return Prop::Missing,
    };
    if let Some(content) = content_migration(class, &info) {
        return Prop::ContentId {
            content,
            own: Ustr::from(info.canonical),
            writable,
        };
    }
    let default = unsaved_default(class, info.canonical)
        .or_else(|| procmodel_dom::db_default(class, info.canonical));
    let saved = !matches!(
        info.descriptor.kind,
        rbx_reflection::PropertyKind::Canonical {
            serialization: rbx_reflection::PropertySerialization::DoesNotSerialize
        }
    );
    Prop::Stored {
        key: Ustr::from(info.canonical),
        data_type: info.data_type,
        default,
        readable,
        writable,
        saved,
    }
}

/// Values of properties that are not saved, where Roblox's is not the type's zero (nor the
/// database's), each as the reference gives it: a new WeldConstraint is enabled (the
/// reference's examples make them without setting `Enabled`, and the joint code treats a
/// missing value as enabled); `Terrain.MaxExtents` is the editable region, cells -32000 to
/// 32000 on each axis; a part resizes by 1 stud on every face, a TrussPart by 2 along its
/// length (Top and Bottom); a Camera's near plane is 0.5 studs in front of it (the
/// reference: between -0.1 and -0.5); `Terrain.IsSmooth` is always true (the legacy
/// terrain engine is gone, the reference says).
fn unsaved_default(class: &str, name: &str) -> Option<&'static Variant> {
    use rbx_types::Faces;
    static TRUE: Variant = Variant::Bool(true);
    static MAX_EXTENTS: std::sync::LazyLock<Variant> = std::sync::LazyLock::new(|| {
        let corner = |c: i16| rbx_types::Vector3int16::new(c, c, c);
        Variant::Region3int16(rbx_types::Region3int16::new(corner(-32000), corner(32000)))
    });
    static ONE: Variant = Variant::Int32(1);
    static TWO: Variant = Variant::Int32(2);
    static ALL_FACES: Variant = Variant::Faces(Faces::all());
    static LENGTH_FACES: std::sync::LazyLock<Variant> = std::sync::LazyLock::new(|| {
        Variant::Faces(
            Faces::from_bits(Faces::TOP.bits() | Faces::BOTTOM.bits()).unwrap_or(Faces::TOP),
        )
    });
    static NEAR_PLANE: Variant = Variant::Float32(-0.5);
    let truss = || procmodel_dom::is_a(class, "TrussPart");
    match name {
        "Enabled" if procmodel_dom::is_a(class, "WeldConstraint") => Some(&TRUE),
        "MaxExtents" if procmodel_dom::is_a(class, "Terrain") => Some(&MAX_EXTENTS),
        "IsSmooth" if procmodel_dom::is_a(class, "Terrain") => Some(&TRUE),
        "ResizeIncrement" if truss() => Some(&TWO),
        "ResizeIncrement" if procmodel_dom::is_a(class, "BasePart") => Some(&ONE),
        "ResizeableFaces" if truss() => Some(&LENGTH_FACES),
        "ResizeableFaces" if procmodel_dom::is_a(class, "BasePart") => Some(&ALL_FACES),
        "NearPlaneZ" if procmodel_dom::is_a(class, "Camera") => Some(&NEAR_PLANE),
        _ => None,
    }
}

/// What a legacy property that files do not keep stands for.
enum Legacy {
    /// A BrickColor form of this Color3 property.
    BrickColor(&'static str),
    /// This boolean, inverted.
    Inverted(&'static str),
    /// This property, under its other name.
    Same(&'static str),
    /// This property, which scripts cannot name themselves (Humanoid.Health_XML).
    Hidden(&'static str),
}

/// The legacy spellings old scripts still write (and the few new names whose value files
/// keep under the old one), which Roblox keeps through another property (the database
/// marks them as not serialised): written through to that one, so the value is saved.
/// A read-only name for the saved property `stored` of `class` (MeshPart.MeshSize of
/// InitialSize, Sound.IsPlaying of Playing).
fn read_only_view(class: &str, stored: &str) -> Option<Prop> {
    let info = procmodel_dom::find_property(class, stored)?;
    Some(Prop::Stored {
        key: Ustr::from(info.canonical),
        data_type: info.data_type,
        default: procmodel_dom::db_default(class, info.canonical),
        readable: true,
        writable: false,
        saved: true,
    })
}

fn legacy(class: &str, name: &str) -> Option<Legacy> {
    use procmodel_dom::is_a;
    let text = ["TextLabel", "TextButton", "TextBox"]
        .iter()
        .any(|c| is_a(class, c));
    Some(match name {
        "BackgroundColor" if is_a(class, "GuiObject") => Legacy::BrickColor("BackgroundColor3"),
        "BorderColor" if is_a(class, "GuiObject") => Legacy::BrickColor("BorderColor3"),
        "Transparency" if is_a(class, "GuiObject") => Legacy::Same("BackgroundTransparency"),
        "Color" if is_a(class, "GuiBase3d") => Legacy::BrickColor("Color3"),
        "SurfaceColor" if is_a(class, "SelectionBox") || is_a(class, "SelectionSphere") => {
            Legacy::BrickColor("SurfaceColor3")
        }
        "TextColor" if text => Legacy::BrickColor("TextColor3"),
        "TextWrap" if text => Legacy::Same("TextWrapped"),
        "HeadColor" if is_a(class, "BodyColors") => Legacy::BrickColor("HeadColor3"),
        "TorsoColor" if is_a(class, "BodyColors") => Legacy::BrickColor("TorsoColor3"),
        "LeftArmColor" if is_a(class, "BodyColors") => Legacy::BrickColor("LeftArmColor3"),
        "RightArmColor" if is_a(class, "BodyColors") => Legacy::BrickColor("RightArmColor3"),
        "LeftLegColor" if is_a(class, "BodyColors") => Legacy::BrickColor("LeftLegColor3"),
        "RightLegColor" if is_a(class, "BodyColors") => Legacy::BrickColor("RightLegColor3"),
        "Color" if is_a(class, "Sparkles") => Legacy::Same("SparkleColor"),
        "Pitch" if is_a(class, "Sound") => Legacy::Same("PlaybackSpeed"),
        "Enabled" if is_a(class, "BaseScript") => Legacy::Inverted("Disabled"),
        "Health" if is_a(class, "Humanoid") => Legacy::Hidden("Health_XML"),
        // Decal's image under the names the reference uses now: files keep it as
        // TextureContent (the database marks ColorMapContent as not saved).
        "ColorMapContent" if is_a(class, "Decal") => Legacy::Same("TextureContent"),
        "ColorMap" if is_a(class, "Decal") => Legacy::Same("Texture"),
        // Files keep a truss's style as `style`, a property of its own in the database.
        "Style" if is_a(class, "TrussPart") => Legacy::Hidden("style"),
        _ => return None,
    })
}

/// Method names and the classes that have them (built by the `classes` module).
#[derive(Default)]
pub struct MethodIndex(FxHashMap<Box<[u8]>, Vec<&'static str>>);

impl MethodIndex {
    pub fn new(by_name: FxHashMap<Box<[u8]>, Vec<&'static str>>) -> MethodIndex {
        MethodIndex(by_name)
    }

    pub fn has(&self, class: &str, name: &[u8]) -> bool {
        self.0
            .get(name)
            .is_some_and(|classes| classes.iter().any(|c| procmodel_dom::is_a(class, c)))
    }
}

/// The Content property a ContentId property migrates to in files, when it has one.
fn content_migration(class: &str, info: &procmodel_dom::PropertyInfo) -> Option<Ustr> {
    use rbx_reflection::{PropertyKind, PropertySerialization};
    use rbx_types::VariantType;
    if !matches!(info.data_type, DataType::Value(VariantType::ContentId)) {
        return None;
    }
    let PropertyKind::Canonical {
        serialization: PropertySerialization::Migrate(m),
    } = &info.descriptor.kind
    else {
        return None;
    };
    let [target] = m.new_property_names() else {
        return None;
    };
    procmodel_dom::find_property(class, target)
        .filter(|t| matches!(t.data_type, DataType::Value(VariantType::Content)))
        .map(|t| Ustr::from(t.canonical))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hot_cache_compares_bytes_not_only_addresses() {
        let mut cache = PropCache::default();
        let part = Ustr::from("Part");
        // One buffer, two names: the second lookup has the first one's address and length.
        let mut key = *b"Size";
        assert!(matches!(*cache.get(part, &key), Prop::Stored { key, .. } if key == "Size"));
        key.copy_from_slice(b"Name");
        assert!(matches!(*cache.get(part, &key), Prop::Name));
        // Same address and bytes, another class.
        let model = Ustr::from("Model");
        key.copy_from_slice(b"Size");
        assert!(matches!(*cache.get(model, &key), Prop::Missing));
        assert!(matches!(*cache.get(part, &key), Prop::Stored { .. }));
    }
}

/// Hours after midnight of a `TimeOfDay` string (`HH:MM:SS`; missing parts are zero).
pub fn clock_time(time_of_day: &str) -> f64 {
    let mut parts = time_of_day
        .split(':')
        .map(|p| p.trim().parse::<f64>().unwrap_or(0.0));
    let h = parts.next().unwrap_or(0.0);
    let m = parts.next().unwrap_or(0.0);
    let s = parts.next().unwrap_or(0.0);
    (h + m / 60.0 + s / 3600.0).rem_euclid(24.0)
}

/// Hours after midnight of a time of day a script writes: `H`, `H:M` or `H:M:S`, each part
/// a number (`"5"`, `"17:30"`, `"06:00:00"`, `"-1"`); `None` for anything else.
pub fn parse_time_of_day(text: &str) -> Option<f64> {
    let mut hours = 0.0;
    let mut count = 0;
    for (part, scale) in text.split(':').zip([1.0, 60.0, 3600.0]) {
        let x = part.trim().parse::<f64>().ok().filter(|x| x.is_finite())?;
        hours += x / scale;
        count += 1;
    }
    (text.split(':').count() == count).then_some(hours)
}

/// Lighting's hours after midnight: its `TimeOfDay`, stored or else the class default.
pub fn lighting_hours(inst: &rbx_dom_weak::Instance) -> f64 {
    let stored = inst
        .properties
        .get(&Ustr::from("TimeOfDay"))
        .or_else(|| procmodel_dom::db_default(&inst.class, "TimeOfDay"));
    match stored {
        Some(Variant::String(s)) => clock_time(s),
        _ => 14.0,
    }
}

/// The `TimeOfDay` string of `hours` after midnight (wrapped into a day, whole seconds).
pub fn time_of_day(hours: f64) -> String {
    let secs = (hours.rem_euclid(24.0) * 3600.0).round() as u64 % 86_400;
    format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

#[cfg(test)]
mod clock_tests {
    use super::*;

    #[test]
    fn clock_time_and_time_of_day_agree() {
        assert_eq!(clock_time("14:00:00"), 14.0);
        assert_eq!(clock_time("06:30:00"), 6.5);
        assert_eq!(time_of_day(6.5), "06:30:00");
        assert_eq!(time_of_day(-1.0), "23:00:00");
        assert_eq!(time_of_day(24.0), "00:00:00");
        assert_eq!(time_of_day(23.99999999), "00:00:00");
        assert_eq!(clock_time(&time_of_day(17.25)), 17.25);
    }

    #[test]
    fn times_of_day_scripts_write_are_read_in_full() {
        assert_eq!(parse_time_of_day("5"), Some(5.0));
        assert_eq!(parse_time_of_day("17:30"), Some(17.5));
        assert_eq!(parse_time_of_day(" 06:00:36 "), Some(6.01));
        assert_eq!(parse_time_of_day("-1"), Some(-1.0));
        assert_eq!(time_of_day(parse_time_of_day("25:30").unwrap()), "01:30:00");
        for bad in ["", "noon", "5:x", "1:2:3:4", "nan", "inf"] {
            assert_eq!(parse_time_of_day(bad), None, "{bad}");
        }
    }
}
