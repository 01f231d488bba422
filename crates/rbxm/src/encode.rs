//! PROP chunk bodies: one function per binary type, each reading the column's
//! values straight from the instances and appending the encoded bytes to the
//! chunk buffer (byte planes of interleaved arrays are written in place).
//! Values are visited in instance order and the first bad one is reported,
//! as rbx_binary does.

use std::borrow::Cow;

use rbx_dom_weak::{
    Instance, WeakDom,
    types::{Color3uint8, ContentType, Matrix3, PhysicalProperties, Variant},
};

use crate::{
    Error,
    collect::{Class, Collected, Column},
    prefetch::{PREFETCH_DISTANCE, prefetch},
    types::Type,
};

/// Everything needed to produce one column's values and its error messages.
pub(crate) struct ColumnValues<'a, 'c> {
    pub dom: &'a WeakDom,
    pub collected: &'c Collected<'a>,
    pub class: &'c Class<'a>,
    pub column: &'c Column<'a>,
    /// Basic-rotation ids only for exact basic rotations (`to_writer_exact`).
    pub exact_rotations: bool,
}

/// Instances whose values [`ColumnValues::each`] looks up at a time: enough for the
/// prefetches to overlap their cache misses, small enough to keep no column-sized list.
const BLOCK: usize = 4096;

/// Looks up the values of `instances` (a block of the class) for the column into `out`, in
/// one tight loop (the lookups touch each instance's property table once, and independent
/// lookups overlap their cache misses).
fn gather<'a>(instances: &[&'a Instance], column: &Column<'a>, out: &mut Vec<&'a Variant>) {
    out.clear();
    if let ([name], []) = (column.direct.as_slice(), column.migrated.as_slice()) {
        out.extend(instances.iter().enumerate().map(|(k, i)| {
            if let Some(ahead) = instances.get(k + 2 * PREFETCH_DISTANCE) {
                prefetch(&ahead.properties);
            }
            i.properties.get(name).unwrap_or(column.default)
        }));
    } else {
        out.extend(instances.iter().map(|&i| raw(column, i)));
    }
}

/// The instance's own value for the column (first matching name in its
/// property map, direct names before migration sources) or the default.
fn raw<'a>(column: &Column<'a>, instance: &'a Instance) -> &'a Variant {
    let properties = &instance.properties;
    let first = |names: &[rbx_dom_weak::Ustr]| {
        if names.is_empty() {
            return None;
        }
        properties
            .iter()
            .find(|(name, _)| names.contains(name))
            .map(|(_, value)| value)
    };
    first(&column.direct)
        .or_else(|| first(&column.migrated))
        .unwrap_or(column.default)
}

impl<'a> ColumnValues<'a, '_> {
    fn len(&self) -> usize {
        self.class.instances.len()
    }

    /// Calls `f` with each instance's value, migrated when the column migrates
    /// (a value the migration rejects is written as-is, like rbx_binary).
    fn each(&self, mut f: impl FnMut(usize, &Variant) -> Result<(), Error>) -> Result<(), Error> {
        let mut values = Vec::with_capacity(BLOCK.min(self.len()));
        for (b, block) in self.class.instances.chunks(BLOCK).enumerate() {
            gather(block, self.column, &mut values);
            for (k, &value) in values.iter().enumerate() {
                if let Some(&ahead) = values.get(k + PREFETCH_DISTANCE) {
                    prefetch(ahead);
                }
                let value = match self.column.migration {
                    None => Cow::Borrowed(value),
                    Some(m) => m.perform(value).map_or(Cow::Borrowed(value), Cow::Owned),
                };
                f(b * BLOCK + k, &value)?;
            }
        }
        Ok(())
    }

    fn full_name(&self, i: usize) -> String {
        self.dom
            .full_path_of(self.class.instances[i].referent(), ".")
    }

    fn mismatch(&self, i: usize, value: &Variant, valid_type_names: &'static str) -> Error {
        Error::PropTypeMismatch {
            type_name: self.class.name.to_string(),
            prop_name: self.column.canonical.to_string(),
            valid_type_names,
            actual_type_name: format!("{:?}", value.ty()),
            instance_full_name: self.full_name(i),
        }
    }

    fn invalid(&self, i: usize, value: &Variant) -> Error {
        Error::InvalidPropValue {
            instance_full_name: self.full_name(i),
            type_name: self.class.name.to_string(),
            prop_name: self.column.canonical.to_string(),
            prop_type: format!("{:?}", value.ty()),
        }
    }

    /// Appends `K` arrays of `len()` values, each stored as `N` byte planes
    /// (byte `b` of value `i` of array `k` at `(k * N + b) * len + i`), in one
    /// pass over the instances.
    fn planes<const N: usize, const K: usize>(
        &self,
        buf: &mut Vec<u8>,
        mut f: impl FnMut(usize, &Variant) -> Result<[[u8; N]; K], Error>,
    ) -> Result<(), Error> {
        let n = self.len();
        let base = buf.len();
        buf.resize(base + N * K * n, 0);
        let region = &mut buf[base..];
        self.each(|i, value| {
            for (k, bytes) in f(i, value)?.iter().enumerate() {
                for (b, &byte) in bytes.iter().enumerate() {
                    region[(k * N + b) * n + i] = byte;
                }
            }
            Ok(())
        })
    }
}

/// Appends the column's PROP chunk body (after the type byte).
pub(crate) fn encode_column(
    v: &ColumnValues<'_, '_>,
    buf: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) -> Result<(), Error> {
    match v.column.ty {
        Type::String => string(v, buf, scratch),
        Type::Bool => bool(v, buf),
        Type::Int32 => int32(v, buf),
        Type::Float32 => float32(v, buf),
        Type::Float64 => float64(v, buf),
        Type::UDim => udim(v, buf),
        Type::UDim2 => udim2(v, buf),
        Type::Ray => ray(v, buf),
        Type::Faces => faces(v, buf),
        Type::Axes => axes(v, buf),
        Type::BrickColor => brick_color(v, buf),
        Type::Color3 => color3(v, buf),
        Type::Vector2 => vector2(v, buf),
        Type::Vector3 => vector3(v, buf),
        Type::CFrame => cframe(v, buf),
        Type::Enum => enumeration(v, buf),
        Type::Ref => referent(v, buf),
        Type::Vector3int16 => vector3int16(v, buf),
        Type::NumberSequence => number_sequence(v, buf),
        Type::ColorSequence => color_sequence(v, buf),
        Type::NumberRange => number_range(v, buf),
        Type::Rect => rect(v, buf),
        Type::PhysicalProperties => physical_properties(v, buf),
        Type::Color3uint8 => color3uint8(v, buf),
        Type::Int64 => int64(v, buf),
        Type::SharedString => shared_string(v, buf),
        Type::OptionalCFrame => optional_cframe(v, buf),
        Type::UniqueId => unique_id(v, buf),
        Type::Font => font(v, buf),
        Type::SecurityCapabilities => security_capabilities(v, buf),
        Type::Content => content(v, buf),
    }
}

// Byte helpers shared with the other chunks.

pub(crate) fn put_u32(buf: &mut Vec<u8>, value: u32) {
    buf.extend_from_slice(&value.to_le_bytes());
}

pub(crate) fn put_f32(buf: &mut Vec<u8>, value: f32) {
    buf.extend_from_slice(&value.to_le_bytes());
}

pub(crate) fn put_bytes(buf: &mut Vec<u8>, value: &[u8]) {
    put_u32(buf, value.len() as u32);
    buf.extend_from_slice(value);
}

/// Roblox's zigzag transform of interleaved signed integers.
pub(crate) fn zigzag32(value: i32) -> [u8; 4] {
    ((value << 1) ^ (value >> 31)).to_be_bytes()
}

fn zigzag64(value: i64) -> [u8; 8] {
    ((value << 1) ^ (value >> 63)).to_be_bytes()
}

fn rotated(value: f32) -> [u8; 4] {
    value.to_bits().rotate_left(1).to_be_bytes()
}

/// Appends a referent array: delta-encoded, zigzagged, interleaved i32s.
pub(crate) fn put_referents(buf: &mut Vec<u8>, ids: impl ExactSizeIterator<Item = i32>) {
    let n = ids.len();
    let base = buf.len();
    buf.resize(base + 4 * n, 0);
    let region = &mut buf[base..];
    let mut last = 0i32;
    for (i, id) in ids.enumerate() {
        let bytes = zigzag32(id.wrapping_sub(last));
        last = id;
        for (b, &byte) in bytes.iter().enumerate() {
            region[b * n + i] = byte;
        }
    }
}

fn string(v: &ColumnValues, buf: &mut Vec<u8>, scratch: &mut Vec<u8>) -> Result<(), Error> {
    v.each(|i, value| {
        match value {
            Variant::String(s) => put_bytes(buf, s.as_bytes()),
            Variant::ContentId(s) => put_bytes(buf, AsRef::<str>::as_ref(s).as_bytes()),
            Variant::BinaryString(s) => put_bytes(buf, s.as_ref()),
            Variant::Tags(tags) => {
                // Tags::encode joins the tags with NULs.
                let len: usize = tags.iter().map(|t| t.len() + 1).sum::<usize>();
                put_u32(buf, len.saturating_sub(1) as u32);
                for (k, tag) in tags.iter().enumerate() {
                    if k > 0 {
                        buf.push(0);
                    }
                    buf.extend_from_slice(tag.as_bytes());
                }
            }
            Variant::Attributes(attributes) => {
                scratch.clear();
                attributes
                    .to_writer(&mut *scratch)
                    .map_err(|_| v.invalid(i, value))?;
                // Roblox wants PropertiesSerialize's count even when empty.
                if scratch.is_empty() && v.column.serialized == "PropertiesSerialize" {
                    scratch.extend_from_slice(&0u32.to_le_bytes());
                }
                put_bytes(buf, scratch);
            }
            Variant::MaterialColors(colors) => put_bytes(buf, &colors.encode()),
            _ => {
                return Err(v.mismatch(
                    i,
                    value,
                    "String, ContentId, Tags, Attributes, MaterialColors, or BinaryString",
                ));
            }
        }
        Ok(())
    })
}

fn bool(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.each(|i, value| match value {
        Variant::Bool(b) => {
            buf.push(*b as u8);
            Ok(())
        }
        _ => Err(v.mismatch(i, value, "Bool")),
    })
}

fn int32(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.planes(buf, |i, value| match value {
        Variant::Int32(x) => Ok([zigzag32(*x)]),
        _ => Err(v.mismatch(i, value, "Int32")),
    })
}

fn float32(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.planes(buf, |i, value| match value {
        Variant::Float32(x) => Ok([rotated(*x)]),
        _ => Err(v.mismatch(i, value, "Float32")),
    })
}

fn float64(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.each(|i, value| {
        let x = match value {
            Variant::Float64(x) => *x,
            Variant::Float32(x) => *x as f64,
            _ => return Err(v.mismatch(i, value, "Float64")),
        };
        buf.extend_from_slice(&x.to_le_bytes());
        Ok(())
    })
}

fn udim(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.planes(buf, |i, value| match value {
        Variant::UDim(u) => Ok([rotated(u.scale), zigzag32(u.offset)]),
        _ => Err(v.mismatch(i, value, "UDim")),
    })
}

fn udim2(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.planes(buf, |i, value| match value {
        Variant::UDim2(u) => Ok([
            rotated(u.x.scale),
            rotated(u.y.scale),
            zigzag32(u.x.offset),
            zigzag32(u.y.offset),
        ]),
        _ => Err(v.mismatch(i, value, "UDim2")),
    })
}

fn ray(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.each(|i, value| match value {
        Variant::Ray(r) => {
            for x in [
                r.origin.x,
                r.origin.y,
                r.origin.z,
                r.direction.x,
                r.direction.y,
                r.direction.z,
            ] {
                put_f32(buf, x);
            }
            Ok(())
        }
        _ => Err(v.mismatch(i, value, "Ray")),
    })
}

fn faces(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.each(|i, value| match value {
        Variant::Faces(f) => {
            buf.push(f.bits());
            Ok(())
        }
        _ => Err(v.mismatch(i, value, "Faces")),
    })
}

fn axes(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.each(|i, value| match value {
        Variant::Axes(a) => {
            buf.push(a.bits());
            Ok(())
        }
        _ => Err(v.mismatch(i, value, "Axes")),
    })
}

fn brick_color(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.planes(buf, |i, value| match value {
        Variant::BrickColor(c) => Ok([(*c as u32).to_be_bytes()]),
        Variant::Int32(x) => Ok([(*x as u32).to_be_bytes()]),
        _ => Err(v.mismatch(i, value, "BrickColor")),
    })
}

fn color3(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.planes(buf, |i, value| match value {
        Variant::Color3(c) => Ok([rotated(c.r), rotated(c.g), rotated(c.b)]),
        _ => Err(v.mismatch(i, value, "Color3")),
    })
}

fn vector2(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.planes(buf, |i, value| match value {
        Variant::Vector2(p) => Ok([rotated(p.x), rotated(p.y)]),
        _ => Err(v.mismatch(i, value, "Vector2")),
    })
}

fn vector3(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.planes(buf, |i, value| match value {
        Variant::Vector3(p) => Ok([rotated(p.x), rotated(p.y), rotated(p.z)]),
        _ => Err(v.mismatch(i, value, "Vector3")),
    })
}

/// A rotation: its basic-rotation id, or 0 and the nine floats. With `exact`, the id only
/// when the id's rotation is this matrix bit for bit.
fn put_rotation(buf: &mut Vec<u8>, m: &Matrix3, exact: bool) {
    let id = m.to_basic_rotation_id().filter(|&id| {
        !exact || Matrix3::from_basic_rotation_id(id).is_ok_and(|b| same_bits(&b, m))
    });
    match id {
        Some(id) => buf.push(id),
        None => {
            buf.push(0);
            for row in [m.x, m.y, m.z] {
                put_f32(buf, row.x);
                put_f32(buf, row.y);
                put_f32(buf, row.z);
            }
        }
    }
}

fn same_bits(a: &Matrix3, b: &Matrix3) -> bool {
    let bits = |m: &Matrix3| [m.x, m.y, m.z].map(|r| [r.x.to_bits(), r.y.to_bits(), r.z.to_bits()]);
    bits(a) == bits(b)
}

fn cframe(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    // Rotations (variable size) first, then the positions as three arrays.
    v.each(|i, value| match value {
        Variant::CFrame(c) => {
            put_rotation(buf, &c.orientation, v.exact_rotations);
            Ok(())
        }
        _ => Err(v.mismatch(i, value, "CFrame")),
    })?;
    v.planes(buf, |i, value| match value {
        Variant::CFrame(c) => Ok([
            rotated(c.position.x),
            rotated(c.position.y),
            rotated(c.position.z),
        ]),
        _ => Err(v.mismatch(i, value, "CFrame")),
    })
}

fn optional_cframe(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    buf.push(Type::CFrame as u8);
    v.each(|i, value| match value {
        Variant::OptionalCFrame(c) => {
            put_rotation(
                buf,
                &c.map_or_else(Matrix3::identity, |c| c.orientation),
                v.exact_rotations,
            );
            Ok(())
        }
        _ => Err(v.mismatch(i, value, "OptionalCFrame")),
    })?;
    v.planes(buf, |i, value| match value {
        Variant::OptionalCFrame(c) => {
            let p = c.map_or([0.0; 3], |c| [c.position.x, c.position.y, c.position.z]);
            Ok([rotated(p[0]), rotated(p[1]), rotated(p[2])])
        }
        _ => Err(v.mismatch(i, value, "OptionalCFrame")),
    })?;
    buf.push(Type::Bool as u8);
    v.each(|i, value| match value {
        Variant::OptionalCFrame(c) => {
            buf.push(c.is_some() as u8);
            Ok(())
        }
        _ => Err(v.mismatch(i, value, "OptionalCFrame")),
    })
}

fn enumeration(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.planes(buf, |i, value| match value {
        Variant::Enum(e) => Ok([e.to_u32().to_be_bytes()]),
        Variant::EnumItem(e) => Ok([e.value.to_be_bytes()]),
        _ => Err(v.mismatch(i, value, "Enum or EnumItem")),
    })
}

fn referent(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    let mut last = 0i32;
    v.planes(buf, |i, value| match value {
        Variant::Ref(target) => {
            let id = v.collected.ref_id(*target);
            let delta = id.wrapping_sub(last);
            last = id;
            Ok([zigzag32(delta)])
        }
        _ => Err(v.mismatch(i, value, "Ref")),
    })
}

fn vector3int16(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.each(|i, value| match value {
        Variant::Vector3int16(p) => {
            for x in [p.x, p.y, p.z] {
                buf.extend_from_slice(&x.to_le_bytes());
            }
            Ok(())
        }
        _ => Err(v.mismatch(i, value, "Vector3int16")),
    })
}

fn number_sequence(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.each(|i, value| match value {
        Variant::NumberSequence(s) => {
            put_u32(buf, s.keypoints.len() as u32);
            for k in &s.keypoints {
                put_f32(buf, k.time);
                put_f32(buf, k.value);
                put_f32(buf, k.envelope);
            }
            Ok(())
        }
        _ => Err(v.mismatch(i, value, "NumberSequence")),
    })
}

fn color_sequence(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.each(|i, value| match value {
        Variant::ColorSequence(s) => {
            put_u32(buf, s.keypoints.len() as u32);
            for k in &s.keypoints {
                // The trailing 0.0 is an envelope Roblox stores but ignores.
                for x in [k.time, k.color.r, k.color.g, k.color.b, 0.0] {
                    put_f32(buf, x);
                }
            }
            Ok(())
        }
        _ => Err(v.mismatch(i, value, "ColorSequence")),
    })
}

fn number_range(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.each(|i, value| match value {
        Variant::NumberRange(r) => {
            put_f32(buf, r.min);
            put_f32(buf, r.max);
            Ok(())
        }
        _ => Err(v.mismatch(i, value, "NumberRange")),
    })
}

fn rect(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.planes(buf, |i, value| match value {
        Variant::Rect(r) => Ok([
            rotated(r.min.x),
            rotated(r.min.y),
            rotated(r.max.x),
            rotated(r.max.y),
        ]),
        _ => Err(v.mismatch(i, value, "Rect")),
    })
}

fn physical_properties(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.each(|i, value| match value {
        Variant::PhysicalProperties(PhysicalProperties::Default) => {
            buf.push(0b00);
            Ok(())
        }
        Variant::PhysicalProperties(PhysicalProperties::Custom(p)) => {
            // AcousticAbsorption is written only when not 1.0 (rbx_binary's
            // choice, for round trips of older files).
            let skip_acoustics = p.acoustic_absorption() == 1.0;
            buf.push(if skip_acoustics { 0b01 } else { 0b11 });
            for x in [
                p.density(),
                p.friction(),
                p.elasticity(),
                p.friction_weight(),
                p.elasticity_weight(),
            ] {
                put_f32(buf, x);
            }
            if !skip_acoustics {
                put_f32(buf, p.acoustic_absorption());
            }
            Ok(())
        }
        _ => Err(v.mismatch(i, value, "PhysicalProperties")),
    })
}

fn color3uint8(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    // All reds, then all greens, then all blues.
    v.planes(buf, |i, value| {
        let c = match value {
            Variant::Color3uint8(c) => *c,
            Variant::Color3(c) => Color3uint8::from(*c),
            _ => return Err(v.mismatch(i, value, "Color3uint8 or Color3")),
        };
        Ok([[c.r], [c.g], [c.b]])
    })
}

fn int64(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.planes(buf, |i, value| match value {
        Variant::Int64(x) => Ok([zigzag64(*x)]),
        Variant::Int32(x) => Ok([zigzag64(*x as i64)]),
        _ => Err(v.mismatch(i, value, "Int64")),
    })
}

fn shared_string(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.planes(buf, |i, value| {
        let s = match value {
            Variant::SharedString(s) => s,
            Variant::NetAssetRef(n) => n.as_ref(),
            _ => return Err(v.mismatch(i, value, "SharedString or NetAssetRef")),
        };
        Ok([v.collected.shared_string_id(s).to_be_bytes()])
    })
}

fn unique_id(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.planes(buf, |i, value| match value {
        Variant::UniqueId(u) => {
            let mut blob = [0; 16];
            blob[0..4].copy_from_slice(&u.index().to_be_bytes());
            blob[4..8].copy_from_slice(&u.time().to_be_bytes());
            blob[8..].copy_from_slice(&u.random().rotate_left(1).to_be_bytes());
            Ok([blob])
        }
        _ => Err(v.mismatch(i, value, "UniqueId")),
    })
}

fn font(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.each(|i, value| match value {
        Variant::Font(f) => {
            put_bytes(buf, f.family.as_bytes());
            buf.extend_from_slice(&f.weight.as_u16().to_le_bytes());
            buf.push(f.style.as_u8());
            put_bytes(
                buf,
                f.cached_face_id.as_deref().unwrap_or_default().as_bytes(),
            );
            Ok(())
        }
        _ => Err(v.mismatch(i, value, "Font")),
    })
}

fn security_capabilities(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    v.planes(buf, |i, value| match value {
        Variant::SecurityCapabilities(s) => Ok([zigzag64(s.bits() as i64)]),
        _ => Err(v.mismatch(i, value, "SecurityCapabilities")),
    })
}

fn content(v: &ColumnValues, buf: &mut Vec<u8>) -> Result<(), Error> {
    // Source kinds; URIs and object referents follow as separate lists.
    let mut uri_count = 0u32;
    let mut objects = Vec::new();
    v.planes(buf, |i, value| match value {
        Variant::Content(c) => Ok([zigzag32(match c.value() {
            ContentType::None => 0,
            ContentType::Uri(_) => {
                uri_count += 1;
                1
            }
            ContentType::Object(target) => {
                objects.push(v.collected.ref_id(*target));
                2
            }
            _ => return Err(v.invalid(i, value)),
        })]),
        _ => Err(v.mismatch(i, value, "Content")),
    })?;
    put_u32(buf, uri_count);
    v.each(|_, value| {
        if let Variant::Content(c) = value
            && let ContentType::Uri(uri) = c.value()
        {
            put_bytes(buf, uri.as_bytes());
        }
        Ok(())
    })?;
    put_u32(buf, objects.len() as u32);
    put_referents(buf, objects.into_iter());
    // External object referents: none.
    put_u32(buf, 0);
    Ok(())
}
