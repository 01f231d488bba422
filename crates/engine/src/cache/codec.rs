//! The bytes of a cache entry's results (entry format 4): a pre-order list of instances with
//! every property value stored exactly as it is in memory (float bit patterns, the value
//! kind the generator left), decoded straight into the scene's DOM with no intermediate
//! tree and no reflection look-ups. Lossless by construction: a decoded subtree is the one
//! that was encoded, property for property.
//!
//! Layout (integers little-endian, strings a u32 byte length then UTF-8):
//! - a table of class and property names (u32 count, then the strings), in order of first
//!   use; instances and properties refer to it by u32 index;
//! - the outside table (u32 count): per reference from the subtree to a ModuleScript outside
//!   it (a nested ProceduralModel's Generator), the instance's pre-order position (u32), the
//!   property's name index (u32) and the module's path from the DataModel (u32 count, then
//!   the names, each unique among its siblings when written and when read);
//! - u32 instance count, then per instance in pre-order: class index, name, child count
//!   (u32), property count (u32), then per property its name index and value; properties
//!   are written sorted by name, so one tree always encodes to the same bytes.
//!
//! A value is a one-byte tag (the order of `rbx_types::Variant`'s variants, as the content
//! hash numbers them) and its fields in declaration order. A `Ref` is `0` (none), the
//! target's pre-order position plus one, or (a property's own value only) `u32::MAX` for a
//! module in the outside table; any other reference out of the subtree cannot be encoded.
//!
//! Owns: this encoding. Must never: resolve names through the reflection database or
//! canonicalise a value (that is the content hash's job, `procmodel_dom::hash`).

use rbx_dom_weak::{InstanceBuilder, Ustr, WeakDom};
use rbx_types::{
    Attributes, Axes, BinaryString, BrickColor, CFrame, Color3, Color3uint8, ColorSequence,
    ColorSequenceKeypoint, Content, ContentId, ContentType, CustomPhysicalProperties, Enum,
    EnumItem, Faces, Font, FontStyle, FontWeight, MaterialColors, Matrix3, NetAssetRef,
    NumberRange, NumberSequence, NumberSequenceKeypoint, PhysicalProperties, Ray, Rect, Ref,
    Region3, Region3int16, SecurityCapabilities, SharedString, Tags, UDim, UDim2, UniqueId,
    Variant, Vector2, Vector2int16, Vector3, Vector3int16,
};
use std::collections::HashMap;

/// Writes subtrees and values; strings of the name table are gathered as they are met.
pub struct Writer<'a> {
    dom: &'a WeakDom,
    root: Ref,
    /// Pre-order position of every instance of the subtree.
    positions: HashMap<Ref, u32>,
    names: Vec<Ustr>,
    name_index: HashMap<Ustr, u32>,
    body: Vec<u8>,
    /// References to ModuleScripts outside the subtree: (instance position, property name
    /// index, the module's path from the DataModel).
    outside: Vec<(u32, u32, Vec<String>)>,
}

impl<'a> Writer<'a> {
    /// A writer of the subtree of `root` (its instances numbered in pre-order).
    pub fn new(dom: &'a WeakDom, root: Ref) -> Writer<'a> {
        let mut positions = HashMap::new();
        procmodel_dom::preorder(dom, &[root], |r, _| {
            positions.insert(r, positions.len() as u32);
            true
        });
        Writer {
            dom,
            root,
            body: Vec::with_capacity(64 * positions.len()),
            positions,
            names: Vec::new(),
            name_index: HashMap::new(),
            outside: Vec::new(),
        }
    }

    /// The pre-order position of `r` in the subtree.
    pub fn position(&self, r: Ref) -> Option<u32> {
        self.positions.get(&r).copied()
    }

    /// The table of names and the encoded subtree, or what could not be encoded.
    pub fn finish(mut self) -> Result<Vec<u8>, String> {
        let (dom, root) = (self.dom, self.root);
        let mut body = std::mem::take(&mut self.body);
        put_u32(&mut body, self.positions.len() as u32);
        let mut failed = None;
        procmodel_dom::preorder(dom, &[root], |r, inst| {
            if failed.is_some() {
                return false;
            }
            let class = self.name(inst.class);
            put_u32(&mut body, class);
            put_str(&mut body, &inst.name);
            put_u32(&mut body, inst.children().len() as u32);
            let mut props: Vec<(Ustr, &Variant)> =
                inst.properties.iter().map(|(k, v)| (*k, v)).collect();
            props.sort_unstable_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
            put_u32(&mut body, props.len() as u32);
            for &(key, value) in &props {
                let k = self.name(key);
                put_u32(&mut body, k);
                if let Variant::Ref(target) = value
                    && target.is_some()
                    && !self.positions.contains_key(target)
                    && let Some(path) = module_path(dom, *target)
                {
                    body.push(REF_TAG);
                    put_u32(&mut body, OUTSIDE);
                    self.outside.push((self.positions[&r], k, path));
                    continue;
                }
                if let Err(why) = self.value(&mut body, value) {
                    failed = Some(format!("{}.{key} {why}", procmodel_dom::full_name(dom, r)));
                    return false;
                }
            }
            true
        });
        if let Some(why) = failed {
            return Err(why);
        }
        let mut out = Vec::with_capacity(body.len() + 16 * self.names.len() + 8);
        put_u32(&mut out, self.names.len() as u32);
        for n in &self.names {
            put_str(&mut out, n);
        }
        put_u32(&mut out, self.outside.len() as u32);
        for (position, key, path) in &self.outside {
            put_u32(&mut out, *position);
            put_u32(&mut out, *key);
            put_u32(&mut out, path.len() as u32);
            for name in path {
                put_str(&mut out, name);
            }
        }
        out.extend_from_slice(&body);
        Ok(out)
    }

    fn name(&mut self, s: Ustr) -> u32 {
        let next = self.names.len() as u32;
        *self.name_index.entry(s).or_insert_with(|| {
            self.names.push(s);
            next
        })
    }

    fn reference(&self, buf: &mut Vec<u8>, r: Ref) -> Result<(), String> {
        if r.is_none() {
            put_u32(buf, 0);
            return Ok(());
        }
        match self.positions.get(&r) {
            Some(&n) => {
                put_u32(buf, n + 1);
                Ok(())
            }
            None => Err("refers outside the results".into()),
        }
    }

    /// One value (module docs), or why it cannot be stored.
    pub fn value(&self, buf: &mut Vec<u8>, v: &Variant) -> Result<(), String> {
        match v {
            Variant::Axes(a) => buf.extend_from_slice(&[1, a.bits()]),
            Variant::BinaryString(b) => {
                buf.push(2);
                put_bytes(buf, b.as_ref());
            }
            Variant::Bool(b) => buf.extend_from_slice(&[3, *b as u8]),
            Variant::BrickColor(c) => {
                buf.push(4);
                buf.extend_from_slice(&(*c as u16).to_le_bytes());
            }
            Variant::CFrame(c) => {
                buf.push(5);
                put_cframe(buf, c);
            }
            Variant::Color3(c) => {
                buf.push(6);
                put_f32s(buf, &[c.r, c.g, c.b]);
            }
            Variant::Color3uint8(c) => buf.extend_from_slice(&[7, c.r, c.g, c.b]),
            Variant::ColorSequence(s) => {
                buf.push(8);
                put_u32(buf, s.keypoints.len() as u32);
                for k in &s.keypoints {
                    put_f32s(buf, &[k.time, k.color.r, k.color.g, k.color.b]);
                }
            }
            Variant::ContentId(c) => {
                buf.push(9);
                put_str(buf, c.as_str());
            }
            Variant::Enum(e) => {
                buf.push(10);
                put_u32(buf, e.to_u32());
            }
            Variant::Faces(f) => buf.extend_from_slice(&[11, f.bits()]),
            Variant::Float32(x) => {
                buf.push(12);
                put_f32s(buf, &[*x]);
            }
            Variant::Float64(x) => {
                buf.push(13);
                buf.extend_from_slice(&x.to_bits().to_le_bytes());
            }
            Variant::Int32(x) => {
                buf.push(14);
                buf.extend_from_slice(&x.to_le_bytes());
            }
            Variant::Int64(x) => {
                buf.push(15);
                buf.extend_from_slice(&x.to_le_bytes());
            }
            Variant::NumberRange(r) => {
                buf.push(16);
                put_f32s(buf, &[r.min, r.max]);
            }
            Variant::NumberSequence(s) => {
                buf.push(17);
                put_u32(buf, s.keypoints.len() as u32);
                for k in &s.keypoints {
                    put_f32s(buf, &[k.time, k.value, k.envelope]);
                }
            }
            Variant::PhysicalProperties(p) => match p {
                PhysicalProperties::Default => buf.extend_from_slice(&[18, 0]),
                PhysicalProperties::Custom(c) => {
                    buf.extend_from_slice(&[18, 1]);
                    put_f32s(
                        buf,
                        &[
                            c.density(),
                            c.friction(),
                            c.elasticity(),
                            c.friction_weight(),
                            c.elasticity_weight(),
                            c.acoustic_absorption(),
                        ],
                    );
                }
            },
            Variant::Ray(r) => {
                buf.push(19);
                put_vec3(buf, &r.origin);
                put_vec3(buf, &r.direction);
            }
            Variant::Rect(r) => {
                buf.push(20);
                put_f32s(buf, &[r.min.x, r.min.y, r.max.x, r.max.y]);
            }
            Variant::Ref(r) => {
                buf.push(REF_TAG);
                self.reference(buf, *r)?;
            }
            Variant::Region3(r) => {
                buf.push(22);
                put_vec3(buf, &r.min);
                put_vec3(buf, &r.max);
            }
            Variant::Region3int16(r) => {
                buf.push(23);
                for c in [r.min.x, r.min.y, r.min.z, r.max.x, r.max.y, r.max.z] {
                    buf.extend_from_slice(&c.to_le_bytes());
                }
            }
            Variant::SharedString(s) => {
                buf.push(24);
                put_bytes(buf, s.data());
            }
            Variant::String(s) => {
                buf.push(25);
                put_str(buf, s);
            }
            Variant::UDim(u) => {
                buf.push(26);
                put_f32s(buf, &[u.scale]);
                buf.extend_from_slice(&u.offset.to_le_bytes());
            }
            Variant::UDim2(u) => {
                buf.push(27);
                for d in [u.x, u.y] {
                    put_f32s(buf, &[d.scale]);
                    buf.extend_from_slice(&d.offset.to_le_bytes());
                }
            }
            Variant::Vector2(p) => {
                buf.push(28);
                put_f32s(buf, &[p.x, p.y]);
            }
            Variant::Vector2int16(p) => {
                buf.push(29);
                for c in [p.x, p.y] {
                    buf.extend_from_slice(&c.to_le_bytes());
                }
            }
            Variant::Vector3(p) => {
                buf.push(30);
                put_vec3(buf, p);
            }
            Variant::Vector3int16(p) => {
                buf.push(31);
                for c in [p.x, p.y, p.z] {
                    buf.extend_from_slice(&c.to_le_bytes());
                }
            }
            Variant::OptionalCFrame(c) => match c {
                None => buf.extend_from_slice(&[32, 0]),
                Some(c) => {
                    buf.extend_from_slice(&[32, 1]);
                    put_cframe(buf, c);
                }
            },
            Variant::Tags(t) => {
                buf.push(33);
                put_u32(buf, t.len() as u32);
                for tag in t.iter() {
                    put_str(buf, tag);
                }
            }
            Variant::Attributes(a) => {
                buf.push(34);
                put_u32(buf, a.len() as u32);
                for (name, value) in a.iter() {
                    put_str(buf, name);
                    self.value(buf, value)?;
                }
            }
            Variant::Font(f) => {
                buf.push(35);
                put_str(buf, &f.family);
                buf.extend_from_slice(&f.weight.as_u16().to_le_bytes());
                buf.push(f.style.as_u8());
                match &f.cached_face_id {
                    None => buf.push(0),
                    Some(id) => {
                        buf.push(1);
                        put_str(buf, id);
                    }
                }
            }
            Variant::UniqueId(u) => {
                buf.push(36);
                put_u32(buf, u.index());
                put_u32(buf, u.time());
                buf.extend_from_slice(&u.random().to_le_bytes());
            }
            // The file formats' encoding: every material's colour.
            Variant::MaterialColors(m) => {
                buf.push(37);
                put_bytes(buf, &m.encode());
            }
            Variant::SecurityCapabilities(c) => {
                buf.push(38);
                buf.extend_from_slice(&c.bits().to_le_bytes());
            }
            Variant::EnumItem(e) => {
                buf.push(39);
                put_str(buf, &e.ty);
                put_u32(buf, e.value);
            }
            Variant::Content(c) => {
                buf.push(40);
                match c.value() {
                    ContentType::None => buf.push(0),
                    ContentType::Uri(u) => {
                        buf.push(1);
                        put_str(buf, u);
                    }
                    ContentType::Object(r) => {
                        buf.push(2);
                        self.reference(buf, *r)?;
                    }
                    other => return Err(format!("is a Content of a kind not stored: {other:?}")),
                }
            }
            Variant::NetAssetRef(n) => {
                buf.push(41);
                put_bytes(buf, n.data());
            }
            other => {
                return Err(format!("is a value of a kind not stored: {:?}", other.ty()));
            }
        }
        Ok(())
    }
}

fn put_u32(buf: &mut Vec<u8>, v: u32) {
    buf.extend_from_slice(&v.to_le_bytes());
}

fn put_bytes(buf: &mut Vec<u8>, b: &[u8]) {
    put_u32(buf, b.len() as u32);
    buf.extend_from_slice(b);
}

fn put_str(buf: &mut Vec<u8>, s: &str) {
    put_bytes(buf, s.as_bytes());
}

fn put_f32s(buf: &mut Vec<u8>, xs: &[f32]) {
    for x in xs {
        buf.extend_from_slice(&x.to_bits().to_le_bytes());
    }
}

fn put_vec3(buf: &mut Vec<u8>, v: &Vector3) {
    put_f32s(buf, &[v.x, v.y, v.z]);
}

fn put_cframe(buf: &mut Vec<u8>, c: &CFrame) {
    let o = &c.orientation;
    put_vec3(buf, &c.position);
    put_vec3(buf, &o.x);
    put_vec3(buf, &o.y);
    put_vec3(buf, &o.z);
}

/// A cursor over an entry's bytes; every read is bounds-checked.
pub struct Reader<'b> {
    b: &'b [u8],
}

type R<T> = Result<T, String>;

impl<'b> Reader<'b> {
    pub fn new(b: &'b [u8]) -> Reader<'b> {
        Reader { b }
    }

    pub fn take(&mut self, n: usize) -> R<&'b [u8]> {
        if self.b.len() < n {
            return Err("entry is truncated".into());
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }

    fn array<const N: usize>(&mut self) -> R<[u8; N]> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }

    pub fn u8(&mut self) -> R<u8> {
        Ok(self.take(1)?[0])
    }

    pub fn u32(&mut self) -> R<u32> {
        self.array().map(u32::from_le_bytes)
    }

    fn i16(&mut self) -> R<i16> {
        self.array().map(i16::from_le_bytes)
    }

    fn f32(&mut self) -> R<f32> {
        self.array().map(|b| f32::from_bits(u32::from_le_bytes(b)))
    }

    fn vec3(&mut self) -> R<Vector3> {
        Ok(Vector3::new(self.f32()?, self.f32()?, self.f32()?))
    }

    fn cframe(&mut self) -> R<CFrame> {
        let p = self.vec3()?;
        let (x, y, z) = (self.vec3()?, self.vec3()?, self.vec3()?);
        Ok(CFrame::new(p, Matrix3::new(x, y, z)))
    }

    fn bytes(&mut self) -> R<&'b [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    pub fn str(&mut self) -> R<&'b str> {
        std::str::from_utf8(self.bytes()?).map_err(|_| "a string is not UTF-8".into())
    }

    /// A count of items each at least `min` bytes long, refused when the rest of the entry
    /// cannot hold them (no allocation is sized from a damaged count).
    pub fn count(&mut self, min: usize) -> R<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min) > self.b.len() {
            return Err("a count runs past the end of the entry".into());
        }
        Ok(n)
    }

    pub fn is_empty(&self) -> bool {
        self.b.is_empty()
    }

    fn reference(&mut self, refs: &[Ref]) -> R<Ref> {
        match self.u32()? {
            0 => Ok(Ref::none()),
            n => refs
                .get(n as usize - 1)
                .copied()
                .ok_or_else(|| "a reference points past the results".into()),
        }
    }

    /// One value; `refs` are the referents of the subtree's instances in pre-order.
    pub fn value(&mut self, refs: &[Ref]) -> R<Variant> {
        let tag = self.u8()?;
        Ok(match tag {
            1 => Variant::Axes(Axes::from_bits(self.u8()?).ok_or("bad Axes")?),
            2 => Variant::BinaryString(BinaryString::from(self.bytes()?.to_vec())),
            3 => Variant::Bool(self.u8()? != 0),
            4 => {
                let n = u16::from_le_bytes(self.array()?);
                Variant::BrickColor(BrickColor::from_number(n).ok_or("bad BrickColor")?)
            }
            5 => Variant::CFrame(self.cframe()?),
            6 => Variant::Color3(Color3::new(self.f32()?, self.f32()?, self.f32()?)),
            7 => Variant::Color3uint8(Color3uint8::new(self.u8()?, self.u8()?, self.u8()?)),
            8 => {
                let n = self.count(16)?;
                let mut keypoints = Vec::with_capacity(n);
                for _ in 0..n {
                    let time = self.f32()?;
                    let color = Color3::new(self.f32()?, self.f32()?, self.f32()?);
                    keypoints.push(ColorSequenceKeypoint::new(time, color));
                }
                Variant::ColorSequence(ColorSequence { keypoints })
            }
            9 => Variant::ContentId(ContentId::from(self.str()?.to_owned())),
            10 => Variant::Enum(Enum::from_u32(self.u32()?)),
            11 => Variant::Faces(Faces::from_bits(self.u8()?).ok_or("bad Faces")?),
            12 => Variant::Float32(self.f32()?),
            13 => Variant::Float64(f64::from_bits(u64::from_le_bytes(self.array()?))),
            14 => Variant::Int32(i32::from_le_bytes(self.array()?)),
            15 => Variant::Int64(i64::from_le_bytes(self.array()?)),
            16 => Variant::NumberRange(NumberRange::new(self.f32()?, self.f32()?)),
            17 => {
                let n = self.count(12)?;
                let mut keypoints = Vec::with_capacity(n);
                for _ in 0..n {
                    let (t, v, e) = (self.f32()?, self.f32()?, self.f32()?);
                    keypoints.push(NumberSequenceKeypoint::new(t, v, e));
                }
                Variant::NumberSequence(NumberSequence { keypoints })
            }
            18 => match self.u8()? {
                0 => Variant::PhysicalProperties(PhysicalProperties::Default),
                1 => {
                    let mut f = [0f32; 6];
                    for x in &mut f {
                        *x = self.f32()?;
                    }
                    Variant::PhysicalProperties(PhysicalProperties::Custom(
                        CustomPhysicalProperties::new(f[0], f[1], f[2], f[3], f[4], f[5]),
                    ))
                }
                _ => return Err("bad PhysicalProperties".into()),
            },
            19 => Variant::Ray(Ray::new(self.vec3()?, self.vec3()?)),
            20 => {
                let min = Vector2::new(self.f32()?, self.f32()?);
                Variant::Rect(Rect::new(min, Vector2::new(self.f32()?, self.f32()?)))
            }
            REF_TAG => Variant::Ref(self.reference(refs)?),
            22 => Variant::Region3(Region3::new(self.vec3()?, self.vec3()?)),
            23 => {
                let min = Vector3int16::new(self.i16()?, self.i16()?, self.i16()?);
                let max = Vector3int16::new(self.i16()?, self.i16()?, self.i16()?);
                Variant::Region3int16(Region3int16::new(min, max))
            }
            24 => Variant::SharedString(SharedString::new(self.bytes()?.to_vec())),
            25 => Variant::String(self.str()?.to_owned()),
            26 => Variant::UDim(UDim::new(self.f32()?, i32::from_le_bytes(self.array()?))),
            27 => {
                let x = UDim::new(self.f32()?, i32::from_le_bytes(self.array()?));
                let y = UDim::new(self.f32()?, i32::from_le_bytes(self.array()?));
                Variant::UDim2(UDim2::new(x, y))
            }
            28 => Variant::Vector2(Vector2::new(self.f32()?, self.f32()?)),
            29 => Variant::Vector2int16(Vector2int16::new(self.i16()?, self.i16()?)),
            30 => Variant::Vector3(self.vec3()?),
            31 => Variant::Vector3int16(Vector3int16::new(self.i16()?, self.i16()?, self.i16()?)),
            32 => match self.u8()? {
                0 => Variant::OptionalCFrame(None),
                1 => Variant::OptionalCFrame(Some(self.cframe()?)),
                _ => return Err("bad OptionalCFrame".into()),
            },
            33 => {
                let n = self.count(4)?;
                let mut tags = Vec::with_capacity(n);
                for _ in 0..n {
                    tags.push(self.str()?.to_owned());
                }
                Variant::Tags(Tags::from(tags))
            }
            34 => {
                let n = self.count(5)?;
                let mut a = Attributes::new();
                for _ in 0..n {
                    let name = self.str()?.to_owned();
                    a.insert(name, self.value(refs)?);
                }
                Variant::Attributes(a)
            }
            35 => {
                let family = self.str()?.to_owned();
                let weight = FontWeight::from_u16(u16::from_le_bytes(self.array()?))
                    .ok_or("bad FontWeight")?;
                let style = FontStyle::from_u8(self.u8()?).ok_or("bad FontStyle")?;
                let cached_face_id = match self.u8()? {
                    0 => None,
                    _ => Some(self.str()?.to_owned()),
                };
                Variant::Font(Font {
                    family,
                    weight,
                    style,
                    cached_face_id,
                })
            }
            36 => {
                let (index, time) = (self.u32()?, self.u32()?);
                let random = i64::from_le_bytes(self.array()?);
                Variant::UniqueId(UniqueId::new(index, time, random))
            }
            37 => Variant::MaterialColors(
                MaterialColors::decode(self.bytes()?).map_err(|e| e.to_string())?,
            ),
            38 => Variant::SecurityCapabilities(SecurityCapabilities::from_bits(
                u64::from_le_bytes(self.array()?),
            )),
            39 => {
                let ty = self.str()?.to_owned();
                Variant::EnumItem(EnumItem {
                    ty,
                    value: self.u32()?,
                })
            }
            40 => Variant::Content(match self.u8()? {
                0 => Content::none(),
                1 => Content::from_uri(self.str()?),
                2 => Content::from_referent(self.reference(refs)?),
                _ => return Err("bad Content".into()),
            }),
            41 => Variant::NetAssetRef(NetAssetRef::new(self.bytes()?.to_vec())),
            t => return Err(format!("unknown value tag {t}")),
        })
    }
}

/// The tag of a `Ref` value.
const REF_TAG: u8 = 21;

/// The sentinel a reference to a module outside the subtree is written as (its target is in
/// the outside table).
const OUTSIDE: u32 = u32::MAX;

/// A reference from the subtree to a ModuleScript outside it (a nested ProceduralModel's
/// Generator): the instance's pre-order position, the property and the module's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outside {
    pub position: usize,
    pub key: Ustr,
    /// Names from the DataModel down, each unique among its siblings.
    pub path: Vec<String>,
}

/// The path of `module` from the DataModel, when it is a ModuleScript and every name on the
/// way is unique among its siblings (so the path finds it again).
fn module_path(dom: &WeakDom, module: Ref) -> Option<Vec<String>> {
    let inst = dom.get_by_ref(module)?;
    if inst.class != "ModuleScript" {
        return None;
    }
    let mut path = Vec::new();
    let mut cur = module;
    while cur != dom.root_ref() {
        let i = dom.get_by_ref(cur)?;
        path.push(i.name.clone());
        cur = i.parent();
    }
    path.reverse();
    (resolve_path(dom, &path) == Some(module)).then_some(path)
}

/// The instance at `path` from the DataModel, when every step names exactly one child.
pub fn resolve_path(dom: &WeakDom, path: &[String]) -> Option<Ref> {
    let mut cur = dom.root_ref();
    for name in path {
        let mut found = None;
        for &c in dom.get_by_ref(cur)?.children() {
            if dom.get_by_ref(c).is_some_and(|i| i.name == *name) {
                if found.is_some() {
                    return None;
                }
                found = Some(c);
            }
        }
        cur = found?;
    }
    Some(cur)
}

/// The name table, the outside table and the instance count that open an encoded subtree.
fn names_and_count(r: &mut Reader<'_>) -> R<(Vec<Ustr>, Vec<Outside>, usize)> {
    let n = r.count(4)?;
    let mut names = Vec::with_capacity(n);
    for _ in 0..n {
        names.push(Ustr::from(r.str()?));
    }
    let n = r.count(12)?;
    let mut outside = Vec::with_capacity(n);
    for _ in 0..n {
        let position = r.u32()? as usize;
        let key = *names
            .get(r.u32()? as usize)
            .ok_or("a property name index is out of range")?;
        let steps = r.count(4)?;
        let mut path = Vec::with_capacity(steps);
        for _ in 0..steps {
            path.push(r.str()?.to_owned());
        }
        outside.push(Outside {
            position,
            key,
            path,
        });
    }
    // Class, name, children and properties: at least 16 bytes an instance.
    let count = r.count(16)?;
    if count == 0 {
        return Err("entry holds no results".into());
    }
    Ok((names, outside, count))
}

/// Whether the next value is a reference to a module outside the subtree (consumed if so).
fn take_outside(r: &mut Reader<'_>) -> bool {
    let mut sentinel = [REF_TAG, 0, 0, 0, 0];
    sentinel[1..].copy_from_slice(&OUTSIDE.to_le_bytes());
    if r.b.starts_with(&sentinel) {
        r.b = &r.b[5..];
        true
    } else {
        false
    }
}

/// The root of an encoded subtree, read without decoding the rest.
pub struct Root {
    /// Class, name and properties (no children). A property that refers into the subtree
    /// holds a fresh referent of no instance here ("outside", to the content hash)…
    pub builder: InstanceBuilder,
    /// …and is listed with its target's pre-order position (the root is 0).
    pub references: Vec<(Ustr, usize)>,
    /// References from anywhere in the subtree to modules outside it.
    pub outside: Vec<Outside>,
    /// Instances in the subtree, the root included.
    pub count: usize,
}

/// Reads the root of an encoded subtree ([`Root`]). A reference nested in another value
/// (a `Content`) is an error here.
pub fn peek_root(r: &mut Reader<'_>) -> R<Root> {
    let (names, outside, count) = names_and_count(r)?;
    let class = *names
        .get(r.u32()? as usize)
        .ok_or("a class name index is out of range")?;
    let name = r.str()?.to_owned();
    let _children = r.u32()?;
    let nprops = r.count(5)?;
    let mut builder = InstanceBuilder::empty().with_class(class).with_name(name);
    let mut references = Vec::new();
    for _ in 0..nprops {
        let key = *names
            .get(r.u32()? as usize)
            .ok_or("a property name index is out of range")?;
        if take_outside(r) {
            // Checked through `outside` by the caller.
            builder.add_property(key, Variant::Ref(Ref::new()));
        } else if r.b.first() == Some(&REF_TAG) {
            r.u8()?;
            match r.u32()? {
                0 => builder.add_property(key, Variant::Ref(Ref::none())),
                n => {
                    references.push((key, n as usize - 1));
                    builder.add_property(key, Variant::Ref(Ref::new()));
                }
            }
        } else {
            builder.add_property(key, r.value(&[])?);
        }
    }
    Ok(Root {
        builder,
        references,
        outside,
        count,
    })
}

/// Decodes an encoded subtree ([`Writer::subtree`]) into `dom` as an orphan (no parent):
/// its root's referent. On an error nothing is left in `dom`.
#[cfg(test)]
pub fn subtree_into(dom: &mut WeakDom, r: &mut Reader<'_>) -> R<(Ref, Vec<Ref>)> {
    subtree_into_with(dom, r, Modules::Find)
}

/// What a reference to a module outside the subtree becomes when it is decoded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Modules {
    /// The module at its path in the DOM decoded into (an error when there is none).
    Find,
    /// A referent of no instance (outside the subtree, to the content hash): for checks of
    /// an entry away from its scene.
    Placeholder,
}

/// [`subtree_into`], with references to modules outside resolved as `modules` says.
pub fn subtree_into_with(
    dom: &mut WeakDom,
    r: &mut Reader<'_>,
    modules: Modules,
) -> R<(Ref, Vec<Ref>)> {
    let (names, outside, count) = names_and_count(r)?;
    // Modules outside the subtree are found before anything is inserted.
    let mut targets: HashMap<(usize, Ustr), Ref> = HashMap::with_capacity(outside.len());
    for o in &outside {
        let target = match modules {
            Modules::Find => resolve_path(dom, &o.path).ok_or_else(|| {
                format!(
                    "the results refer to {}, which is not in the scene",
                    o.path.join(".")
                )
            })?,
            Modules::Placeholder => Ref::new(),
        };
        targets.insert((o.position, o.key), target);
    }
    let refs: Vec<Ref> = (0..count).map(|_| Ref::new()).collect();
    let mut inserted = false;
    let result = (|| -> R<()> {
        dom.reserve(count);
        // (instance, children still to come) of the open ancestors.
        let mut open: Vec<(Ref, u32)> = Vec::new();
        for (position, &referent) in refs.iter().enumerate() {
            let parent = loop {
                match open.last_mut() {
                    Some((p, left)) if *left > 0 => {
                        *left -= 1;
                        break *p;
                    }
                    Some(_) => {
                        open.pop();
                    }
                    None if inserted => return Err("more instances than the tree holds".into()),
                    None => break Ref::none(),
                }
            };
            let class = *names
                .get(r.u32()? as usize)
                .ok_or("a class name index is out of range")?;
            let name = r.str()?.to_owned();
            let children = r.u32()?;
            let nprops = r.count(5)?;
            let mut props = Vec::with_capacity(nprops);
            for _ in 0..nprops {
                let key = *names
                    .get(r.u32()? as usize)
                    .ok_or("a property name index is out of range")?;
                let value = if take_outside(r) {
                    let target = targets
                        .get(&(position, key))
                        .ok_or("a reference outside the results is not in the entry's table")?;
                    Variant::Ref(*target)
                } else {
                    r.value(&refs)?
                };
                props.push((key, value));
            }
            let mut b = InstanceBuilder::empty()
                .with_referent(referent)
                .with_class(class)
                .with_name(name);
            b.add_properties(props);
            dom.insert(parent, b);
            inserted = true;
            open.push((referent, children));
        }
        if open.iter().any(|&(_, left)| left > 0) {
            return Err("fewer instances than the tree holds".into());
        }
        Ok(())
    })();
    match result {
        Ok(()) => Ok((refs[0], refs)),
        Err(e) => {
            if inserted {
                dom.destroy(refs[0]);
            }
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One value of every kind the encoding stores, with the float cases a lossy encoding
    /// would get wrong (negative zero, NaN payloads, rotations in float noise).
    fn every_kind(target: Ref) -> Vec<Variant> {
        let mut attrs = Attributes::new();
        attrs.insert("N".into(), Variant::Float64(-0.0));
        attrs.insert("S".into(), Variant::String("x".into()));
        let near_quarter_turn = CFrame::new(
            Vector3::new(1.0, 2.0, 3.0),
            Matrix3::new(
                Vector3::new(-4.371139e-8, -1.0, 0.0),
                Vector3::new(1.0, -4.371139e-8, 0.0),
                Vector3::new(0.0, 0.0, 1.0),
            ),
        );
        vec![
            Variant::Axes(Axes::from_bits(0b101).unwrap()),
            Variant::BinaryString(BinaryString::from(vec![0, 255, 7])),
            Variant::Bool(true),
            Variant::BrickColor(BrickColor::from_number(194).unwrap()),
            Variant::CFrame(near_quarter_turn),
            Variant::Color3(Color3::new(0.123, f32::from_bits(0x7fc0_0001), -0.0)),
            Variant::Color3uint8(Color3uint8::new(1, 2, 3)),
            Variant::ColorSequence(ColorSequence {
                keypoints: vec![
                    ColorSequenceKeypoint::new(0.0, Color3::new(1.0, 0.0, 0.0)),
                    ColorSequenceKeypoint::new(1.0, Color3::new(0.0, 0.0, 1.0)),
                ],
            }),
            Variant::ContentId(ContentId::from("rbxassetid://1".to_owned())),
            Variant::Enum(Enum::from_u32(3)),
            Variant::Faces(Faces::from_bits(0b100001).unwrap()),
            Variant::Float32(1.5e-40),
            Variant::Float64(std::f64::consts::PI),
            Variant::Int32(-7),
            Variant::Int64(i64::MIN),
            Variant::NumberRange(NumberRange::new(1.0, 2.0)),
            Variant::NumberSequence(NumberSequence {
                keypoints: vec![NumberSequenceKeypoint::new(0.0, 1.0, 0.5)],
            }),
            Variant::PhysicalProperties(PhysicalProperties::Default),
            Variant::PhysicalProperties(PhysicalProperties::Custom(CustomPhysicalProperties::new(
                1.0, 0.3, 0.5, 1.0, 1.0, 0.25,
            ))),
            Variant::Ray(Ray::new(
                Vector3::new(1.0, 2.0, 3.0),
                Vector3::new(0.0, -1.0, 0.0),
            )),
            Variant::Rect(Rect::new(Vector2::new(1.0, 2.0), Vector2::new(3.0, 4.0))),
            Variant::Ref(target),
            Variant::Ref(Ref::none()),
            Variant::Region3(Region3::new(
                Vector3::new(0.0, 0.0, 0.0),
                Vector3::new(1.0, 1.0, 1.0),
            )),
            Variant::Region3int16(Region3int16::new(
                Vector3int16::new(-1, 2, -3),
                Vector3int16::new(4, -5, 6),
            )),
            Variant::SharedString(SharedString::new(b"shared".to_vec())),
            Variant::String("héllo".into()),
            Variant::UDim(UDim::new(0.5, -3)),
            Variant::UDim2(UDim2::new(UDim::new(0.1, 1), UDim::new(0.2, 2))),
            Variant::Vector2(Vector2::new(1.0, -2.0)),
            Variant::Vector2int16(Vector2int16::new(-1, 1)),
            Variant::Vector3(Vector3::new(-0.0, 1.0, 2.0)),
            Variant::Vector3int16(Vector3int16::new(1, -2, 3)),
            Variant::OptionalCFrame(None),
            Variant::OptionalCFrame(Some(near_quarter_turn)),
            Variant::Tags(Tags::from(vec!["b".to_owned(), "a".to_owned()])),
            Variant::Attributes(attrs),
            Variant::Font(Font {
                family: "rbxasset://fonts/families/SourceSansPro.json".into(),
                weight: FontWeight::Bold,
                style: FontStyle::Italic,
                cached_face_id: Some("face".into()),
            }),
            Variant::UniqueId(UniqueId::new(1, 2, -3)),
            Variant::MaterialColors(MaterialColors::default()),
            Variant::SecurityCapabilities(SecurityCapabilities::from_bits(0b1010)),
            Variant::EnumItem(EnumItem {
                ty: "Material".into(),
                value: 256,
            }),
            Variant::Content(Content::none()),
            Variant::Content(Content::from_uri("rbxassetid://2")),
            Variant::Content(Content::from_referent(target)),
            Variant::NetAssetRef(NetAssetRef::new(b"asset".to_vec())),
        ]
    }

    /// Bits of every float, so -0.0 and NaN payloads compare exactly.
    fn exact(v: &Variant) -> String {
        format!("{v:?}")
    }

    #[test]
    fn every_value_kind_round_trips_exactly() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let folder = dom.insert(root, InstanceBuilder::new("Folder").with_name("Results"));
        let target = dom.insert(folder, InstanceBuilder::new("Part").with_name("Target"));
        let values = every_kind(target);
        for (n, v) in values.iter().enumerate() {
            dom.insert(
                folder,
                InstanceBuilder::new("Configuration")
                    .with_name(format!("V{n}"))
                    .with_property("Value", v.clone()),
            );
        }
        let bytes = Writer::new(&dom, folder).finish().unwrap();
        let mut out = WeakDom::new(InstanceBuilder::new("DataModel"));
        let mut r = Reader::new(&bytes);
        let (copy, refs) = subtree_into(&mut out, &mut r).unwrap();
        assert!(r.is_empty());
        assert_eq!(refs.len(), values.len() + 2);
        let kids = out.get_by_ref(copy).unwrap().children().to_vec();
        let new_target = kids[0];
        assert_eq!(out.get_by_ref(new_target).unwrap().name, "Target");
        for (n, v) in values.iter().enumerate() {
            let i = out.get_by_ref(kids[n + 1]).unwrap();
            assert_eq!(i.name, format!("V{n}"));
            let got = i.properties.get(&Ustr::from("Value")).unwrap();
            // References point at the copy of their target.
            let want = match v {
                Variant::Ref(r) if r.is_some() => Variant::Ref(new_target),
                Variant::Content(c) if c.as_object().is_some() => {
                    Variant::Content(Content::from_referent(new_target))
                }
                other => other.clone(),
            };
            match (got, &want) {
                // Stored in the file formats' encoding, which spells out every material's
                // colour (a value that named only some reads back with all of them).
                (Variant::MaterialColors(a), Variant::MaterialColors(b)) => {
                    assert_eq!(a.encode(), b.encode(), "value {n}")
                }
                _ => assert_eq!(exact(got), exact(&want), "value {n}"),
            }
            if let (Variant::Color3(a), Variant::Color3(b)) = (got, &want) {
                assert_eq!(
                    [a.r, a.g, a.b].map(f32::to_bits),
                    [b.r, b.g, b.b].map(f32::to_bits)
                );
            }
        }
        // The same tree encodes to the same bytes.
        let again = Writer::new(&out, copy).finish().unwrap();
        assert_eq!(again, bytes);
    }

    #[test]
    fn a_reference_out_of_the_results_is_not_stored() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let outside = dom.insert(root, InstanceBuilder::new("Part"));
        let folder = dom.insert(root, InstanceBuilder::new("Folder"));
        dom.insert(
            folder,
            InstanceBuilder::new("ObjectValue")
                .with_name("V")
                .with_property("Value", Variant::Ref(outside)),
        );
        let e = Writer::new(&dom, folder).finish().unwrap_err();
        assert!(e.contains("refers outside the results"), "{e}");
    }

    /// A nested model's Generator (a module outside the results) is stored by its path and
    /// found again in another scene with that module; a module that is missing, ambiguous
    /// or not a ModuleScript is not stored, or not found.
    #[test]
    fn a_reference_to_a_module_outside_is_stored_by_its_path() {
        let scene = |extra: bool| {
            let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
            let root = dom.root_ref();
            let storage = dom.insert(root, InstanceBuilder::new("Folder").with_name("Storage"));
            if extra {
                dom.insert(root, InstanceBuilder::new("Folder").with_name("Other"));
            }
            let module = dom.insert(
                storage,
                InstanceBuilder::new("ModuleScript").with_name("Tower"),
            );
            (dom, module)
        };
        let (mut dom, module) = scene(false);
        let root = dom.root_ref();
        let folder = dom.insert(root, InstanceBuilder::new("Folder"));
        let nested = dom.insert(
            folder,
            InstanceBuilder::new("ProceduralModel")
                .with_name("T")
                .with_property("Generator", Variant::Ref(module)),
        );
        dom.insert(nested, InstanceBuilder::new("Part"));
        let bytes = Writer::new(&dom, folder).finish().unwrap();
        // Another scene (a new process) whose module has another referent.
        let (mut other, other_module) = scene(true);
        let (copy, refs) = subtree_into(&mut other, &mut Reader::new(&bytes)).unwrap();
        assert_eq!(refs.len(), 3);
        let t = other.get_by_ref(copy).unwrap().children()[0];
        assert_eq!(
            other
                .get_by_ref(t)
                .unwrap()
                .properties
                .get(&"Generator".into()),
            Some(&Variant::Ref(other_module))
        );
        let root_of = peek_root(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(
            root_of.outside,
            vec![Outside {
                position: 1,
                key: "Generator".into(),
                path: vec!["Storage".into(), "Tower".into()],
            }]
        );
        // Missing in the scene decoded into: refused, nothing left.
        let mut empty = WeakDom::new(InstanceBuilder::new("DataModel"));
        let e = subtree_into(&mut empty, &mut Reader::new(&bytes)).unwrap_err();
        assert!(e.contains("Storage.Tower"), "{e}");
        assert_eq!(empty.into_raw().1.len(), 1);
        // Ambiguous (a namesake) or not a module: not stored.
        let storage = dom.get_by_ref(module).unwrap().parent();
        let twin = dom.insert(
            storage,
            InstanceBuilder::new("ModuleScript").with_name("Tower"),
        );
        assert!(Writer::new(&dom, folder).finish().is_err());
        dom.destroy(twin);
        assert!(Writer::new(&dom, folder).finish().is_ok());
        let part = dom.insert(root, InstanceBuilder::new("Part"));
        dom.get_by_ref_mut(nested)
            .unwrap()
            .properties
            .insert("Generator".into(), Variant::Ref(part));
        assert!(Writer::new(&dom, folder).finish().is_err());
    }

    #[test]
    fn a_malformed_tree_leaves_nothing_behind() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let root = dom.root_ref();
        let folder = dom.insert(root, InstanceBuilder::new("Folder"));
        for _ in 0..3 {
            dom.insert(folder, InstanceBuilder::new("Part"));
        }
        let bytes = Writer::new(&dom, folder).finish().unwrap();
        // Every truncation fails, and leaves the DOM as it was (orphans included).
        for cut in 0..bytes.len() {
            let mut into = WeakDom::new(InstanceBuilder::new("DataModel"));
            let mut r = Reader::new(&bytes[..cut]);
            assert!(subtree_into(&mut into, &mut r).is_err(), "cut at {cut}");
            assert_eq!(into.into_raw().1.len(), 1, "cut at {cut}");
        }
        // An instance count above what the child counts hold (a fifth instance after the
        // folder's three parts): refused, nothing left.
        let at = 4 + (4 + "Folder".len()) + (4 + "Part".len()) + 4;
        assert_eq!(bytes[at..at + 4], 4u32.to_le_bytes());
        let mut bad = bytes.clone();
        bad[at..at + 4].copy_from_slice(&5u32.to_le_bytes());
        let last = bytes.len() - (4 + 4 + "Part".len() + 4 + 4);
        bad.extend_from_slice(&bytes[last..]);
        let mut into = WeakDom::new(InstanceBuilder::new("DataModel"));
        let e = subtree_into(&mut into, &mut Reader::new(&bad)).unwrap_err();
        assert!(e.contains("more instances than the tree holds"), "{e}");
        assert_eq!(into.into_raw().1.len(), 1);
    }
}
