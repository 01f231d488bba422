//! Property resolution with the reflection database: canonical names, types, defaults, and the
//! derived properties generators rely on (Position/Orientation move the CFrame, BrickColor ↔
//! Color, WorldPivot, Scale). Resolutions are cached per (class, name).

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
    /// Derived from CFrame: YXZ Euler angles in degrees (BasePart Orientation and Rotation).
    Orientation,
    /// Derived from Color (BasePart).
    BrickColor,
    /// Model pivot (WorldPivotData or PrimaryPart).
    WorldPivot,
    /// Model scale: readable, changed only with ScaleTo.
    Scale,
    /// A property stored under its canonical key.
    Stored {
        key: Ustr,
        data_type: &'static DataType<'static>,
        default: Option<&'static Variant>,
        readable: bool,
        writable: bool,
    },
    /// Not a property of this class.
    Missing,
}

#[derive(Default)]
pub struct PropCache {
    /// Keyed by the member name's bytes: no UTF-8 validation on the hot path.
    by_class: FxHashMap<Ustr, FxHashMap<Box<[u8]>, Rc<Prop>>>,
}

impl PropCache {
    pub fn get(&mut self, class: Ustr, name: &[u8]) -> Rc<Prop> {
        let per_class = self.by_class.entry(class).or_default();
        if let Some(p) = per_class.get(name) {
            return p.clone();
        }
        let p = Rc::new(match std::str::from_utf8(name) {
            Ok(s) => resolve(class.as_str(), s),
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
        "ClassName" => return Prop::ClassName,
        "Parent" => return Prop::Parent,
        _ => {}
    }
    if is_a(class, "BasePart") {
        match name {
            "Position" => return Prop::Position,
            "Orientation" | "Rotation" => return Prop::Orientation,
            "BrickColor" | "brickColor" => return Prop::BrickColor,
            _ => {}
        }
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
        _ => return Prop::Missing,
    };
    let default = procmodel_dom::db().find_default_property(
        procmodel_dom::db()
            .classes
            .get(class)
            .expect("class from database"),
        info.canonical,
    );
    Prop::Stored {
        key: Ustr::from(info.canonical),
        data_type: info.data_type,
        default,
        readable,
        writable,
    }
}

/// The value used when a stored property was never set on an instance.
pub fn fallback(data_type: &DataType<'_>) -> Option<Variant> {
    use rbx_types::VariantType as T;
    Some(match data_type {
        DataType::Enum(_) => Variant::Enum(rbx_types::Enum::from_u32(0)),
        DataType::Value(t) => match t {
            T::Bool => Variant::Bool(false),
            T::Float32 => Variant::Float32(0.0),
            T::Float64 => Variant::Float64(0.0),
            T::Int32 => Variant::Int32(0),
            T::Int64 => Variant::Int64(0),
            T::String => Variant::String(String::new()),
            T::Ref => Variant::Ref(rbx_types::Ref::none()),
            T::Vector3 => Variant::Vector3(rbx_types::Vector3::new(0.0, 0.0, 0.0)),
            T::CFrame => Variant::CFrame(rbx_types::CFrame::identity()),
            _ => return None,
        },
        _ => return None,
    })
}
