//! The canonical content hash of a DOM subtree: what a generation produced, independent of
//! referent ids and of the file format it was saved in (in memory, `.rbxm` and `.rbxmx`
//! reloaded give one hash), and the first difference between two subtrees.
//!
//! # Encoding (version 1)
//!
//! BLAKE3 over `b"procmodel-content-v1\0"` followed by every instance of the subtree in
//! pre-order (parents before children, children in their order). An instance is its class
//! and name (strings: u64 LE byte length, then UTF-8), the number of its properties (u32 LE),
//! its properties sorted by canonical name (name, then the value), and its number of children
//! (u32 LE). [`children_hash`] hashes a container's children as if the container were an
//! instance with empty class and name and no properties.
//!
//! Properties are canonicalised the way the Roblox file formats treat them, so a file that
//! was saved and loaded again hashes as the tree it was written from:
//! - names are resolved through the reflection database's aliases;
//! - properties the database marks as not serialised are left out;
//! - a value equal to the class default (in this encoding) is left out, as if unset: the
//!   binary format fills every instance of a class with the properties any of them has;
//!   a nil `Ref` counts as unset too;
//! - a Color3 stored as Color3uint8 (e.g. `BasePart.Color`) is hashed as its 8-bit form;
//! - a CFrame rotation that the binary format stores as an axis-aligned rotation id
//!   (`Matrix3::to_basic_rotation_id`) is hashed as that exact rotation;
//! - an instance whose `Archivable` is false is left out with its subtree (a saved file does
//!   not keep it, nor does `Clone`), and a `Ref` to it, or to anything under it, counts as
//!   unset (the file writes it as none); the child count is of the instances kept.
//!
//! Values are a one-byte tag (the order of [`Variant`]'s variants, see `tag`) and their fields
//! in declaration order, little-endian. Floats are their bit patterns, with `-0.0` as `0.0`
//! and every NaN as the quiet NaN (`0x7fc00000` / `0x7ff8000000000000`). A `Ref` is `0`
//! (none), `1` and the target's position (u32) in the subtree's pre-order (the root is 0), or
//! `2` (a target outside the subtree, or one that no longer exists). Attributes are sorted by
//! name, and a string attribute is a `String` whether it was read back as one or (from the
//! binary format) as a `BinaryString`; tags keep their order. A value of a kind newer than this encoding is its tag `255`
//! and its debug form (still deterministic, but not guaranteed stable across rbx_types
//! versions).

use rbx_dom_weak::{Instance, Ustr, WeakDom};
use rbx_reflection::{DataType, PropertyKind, PropertySerialization};
use rbx_types::{Color3uint8, ContentType, PhysicalProperties, Ref, Variant};
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

const DOMAIN: &[u8] = b"procmodel-content-v1\0";

/// The content hash of `root` and everything under it (empty-tree hash if `root` is missing).
pub fn content_hash(dom: &WeakDom, root: Ref) -> [u8; 32] {
    Hasher::new(dom, root).run(true)
}

/// The content hash of `parent`'s children, in order, without `parent`'s own class, name or
/// properties (the results inside a GeneratedFolder, whatever the folder is called or holds).
pub fn children_hash(dom: &WeakDom, parent: Ref) -> [u8; 32] {
    Hasher::new(dom, parent).run(false)
}

/// [`children_hash`], with the number of instances it covered (`parent` not counted) and
/// of nested ProceduralModels among them (whose own results it leaves out).
pub fn children_hash_counted(dom: &WeakDom, parent: Ref) -> ([u8; 32], usize, usize) {
    Hasher::new(dom, parent).run_counted(false)
}

/// The digest of `r`'s own record, canonical as in [`content_hash`]: class, name and
/// properties, without children (a Ref in its properties counts as "outside"). Two
/// instances with equal records hash alike as roots of equal subtrees.
pub fn record_digest(dom: &WeakDom, r: Ref) -> [u8; 32] {
    let Some(inst) = dom.get_by_ref(r) else {
        return *blake3::hash(b"").as_bytes();
    };
    let mut buf = Vec::new();
    Hasher::new(dom, Ref::none()).own_record(&Positions::empty(), inst, &mut buf);
    *blake3::hash(&buf).as_bytes()
}

/// The BLAKE3 digest of one value's canonical encoding (a Ref counts as "none" or
/// "outside"): attribute values in input fingerprints and lockfiles.
pub fn value_digest(v: &Variant) -> [u8; 32] {
    let mut buf = Vec::new();
    encode_attribute(&mut buf, v, &Positions::empty());
    *blake3::hash(&buf).as_bytes()
}

/// Lower-case hex of a hash.
pub fn to_hex(hash: &[u8; 32]) -> String {
    hex(hash)
}

/// Lower-case hex of `bytes` (the one hex encoder of the workspace: digests, cache keys
/// and provenance records are written with it, several per generated model).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

/// The first place two subtrees differ, in pre-order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// Dotted path of the differing instance below the compared root (empty: the root).
    pub path: String,
    /// What differs there: `class`, `name`, `property X`, or `children`.
    pub what: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{} of the root", self.what)
        } else {
            write!(f, "{} of {}", self.what, self.path)
        }
    }
}

/// The first difference between the children of `a_parent` (in `a`) and of `b_parent` (in
/// `b`) under the canonical encoding, or None when [`children_hash`] would be equal.
pub fn first_difference(
    a: &WeakDom,
    a_parent: Ref,
    b: &WeakDom,
    b_parent: Ref,
) -> Option<Difference> {
    let mut ha = Hasher::new(a, a_parent);
    let mut hb = Hasher::new(b, b_parent);
    let (ia, ib) = (a.get_by_ref(a_parent)?, b.get_by_ref(b_parent)?);
    let mut stack: Vec<(Ref, Ref, String)> = Vec::new();
    // The children the hash covers.
    let covered = |dom: &WeakDom, root: Ref, i: &Instance| -> Vec<Ref> {
        let list = i.children().iter().copied();
        list.filter(|&c| dom.get_by_ref(c).is_none_or(|ci| !hidden(dom, root, c, ci)))
            .collect()
    };
    let children = |ia: &Instance, ib: &Instance, path: &str, stack: &mut Vec<_>| {
        let (la, lb) = (covered(a, a_parent, ia), covered(b, b_parent, ib));
        if la.len() != lb.len() {
            return Some(Difference {
                path: path.to_owned(),
                what: format!("children ({} against {})", la.len(), lb.len()),
            });
        }
        for (&ca, &cb) in la.iter().zip(&lb).rev() {
            let name = a.get_by_ref(ca).map(|i| i.name.as_str()).unwrap_or("?");
            let p = if path.is_empty() {
                name.to_owned()
            } else {
                format!("{path}.{name}")
            };
            stack.push((ca, cb, p));
        }
        None
    };
    if let Some(d) = children(ia, ib, "", &mut stack) {
        return Some(d);
    }
    while let Some((ra, rb, path)) = stack.pop() {
        let (Some(ia), Some(ib)) = (a.get_by_ref(ra), b.get_by_ref(rb)) else {
            return Some(Difference {
                path,
                what: "existence".into(),
            });
        };
        if ia.class != ib.class {
            return Some(Difference {
                path,
                what: format!("class ({} against {})", ia.class, ib.class),
            });
        }
        if ia.name != ib.name {
            return Some(Difference {
                path,
                what: format!("name ({:?} against {:?})", ia.name, ib.name),
            });
        }
        let pa = ha.properties(ia);
        let pb = hb.properties(ib);
        let mut i = 0;
        let mut j = 0;
        while i < pa.len() || j < pb.len() {
            let differs = match (pa.get(i), pb.get(j)) {
                (Some(x), Some(y)) if x.0 == y.0 => {
                    i += 1;
                    j += 1;
                    (x.1 != y.1).then(|| x.0.clone())
                }
                (Some(x), Some(y)) if x.0 < y.0 => Some(x.0.clone()),
                (Some(_), Some(y)) => Some(y.0.clone()),
                (Some(x), None) => Some(x.0.clone()),
                (None, Some(y)) => Some(y.0.clone()),
                (None, None) => None,
            };
            if let Some(name) = differs {
                return Some(Difference {
                    path,
                    what: format!("property {name}"),
                });
            }
        }
        if let Some(d) = children(ia, ib, &path, &mut stack) {
            return Some(d);
        }
    }
    None
}

/// How one (class, property) pair is canonicalised.
struct Rule {
    canonical: Ustr,
    /// The canonical name's first eight bytes, big-endian and zero-padded: ordering by it
    /// orders by name wherever it differs.
    order: u64,
    skip: bool,
    quantize: bool,
    /// The default value's encoding (a value encoding the same is left out).
    default: Option<Vec<u8>>,
}

/// Whether a ProceduralModel's results are left out of the hash: a ProceduralModel nested
/// inside the hashed subtree contributes its inputs but not its GeneratedFolder — those are
/// that model's own results, generated (and hashed) after the subtree's own.
fn hides_results(root: Ref, r: Ref, inst: &Instance) -> bool {
    r != root && inst.class == "ProceduralModel"
}

/// Whether `inst` (at `r`, not the root) is left out with its subtree: a nested model's
/// GeneratedFolder, or an instance that is not archivable (files do not keep it).
fn hidden(dom: &WeakDom, root: Ref, r: Ref, inst: &Instance) -> bool {
    r != root
        && (!crate::is_archivable(inst)
            || inst.class == "GeneratedFolder"
                && dom
                    .get_by_ref(inst.parent())
                    .is_some_and(|p| hides_results(root, inst.parent(), p)))
}

/// The subtree of `root` in pre-order without the results of the ProceduralModels nested in
/// it: the instances the hash covers, in the order that numbers the targets of references
/// (the root is 0). `visit` returns whether to go on; once it says no, nothing more is
/// visited.
pub fn visible_preorder(dom: &WeakDom, root: Ref, mut visit: impl FnMut(Ref, &Instance) -> bool) {
    let mut going = true;
    let roots = [root];
    crate::preorder(dom, &roots, |r, i| {
        let hidden = hidden(dom, root, r, i);
        if going && !hidden {
            going = visit(r, i);
        }
        going && !hidden
    });
}

/// Pre-order positions of a subtree's instances, for `Ref` values; the map is built the first
/// time a reference needs it (most subtrees hold none), by a walk of its own.
struct Positions<'a> {
    tree: Option<(&'a WeakDom, Ref)>,
    map: OnceLock<FxHashMap<Ref, u32>>,
}

impl<'a> Positions<'a> {
    fn empty() -> Positions<'a> {
        Positions {
            tree: None,
            map: OnceLock::new(),
        }
    }

    fn get(&self, r: Ref) -> Option<u32> {
        self.map
            .get_or_init(|| {
                let mut map = FxHashMap::default();
                if let Some((dom, root)) = self.tree {
                    visible_preorder(dom, root, |r, _| {
                        map.insert(r, map.len() as u32);
                        true
                    });
                }
                map
            })
            .get(&r)
            .copied()
    }
}

/// Bytes the hasher gathers before handing them to BLAKE3 (large updates use its SIMD paths).
const FLUSH_AT: usize = 64 * 1024;

/// Child lists at least this long are encoded by two threads (see `Hasher::run`).
const SPLIT_MIN_CHILDREN: usize = 16_384;

/// Where encoded bytes go: gathered and handed to BLAKE3 in [`FLUSH_AT`] batches, or (on a
/// helper thread, `hasher` None) kept for the hashing thread.
struct Out<'h> {
    buf: Vec<u8>,
    hasher: Option<&'h mut blake3::Hasher>,
}

impl Out<'_> {
    fn flush_if_full(&mut self) {
        if self.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if let Some(h) = self.hasher.as_deref_mut() {
            h.update(&self.buf);
            self.buf.clear();
        }
    }

    /// Appends bytes after a [`Self::flush`].
    fn write(&mut self, bytes: &[u8]) {
        match self.hasher.as_deref_mut() {
            Some(h) => {
                h.update(bytes);
            }
            None => self.buf.extend_from_slice(bytes),
        }
    }
}

thread_local! {
    /// The rules a thread worked out before, lent to its next [`Hasher`] (they depend only
    /// on the reflection database): hashing many small subtrees (one per model) would
    /// otherwise look every (class, property) pair up again each time.
    static RULES: std::cell::RefCell<FxHashMap<(Ustr, Ustr), Rule>> = Default::default();
}

impl Drop for Hasher<'_> {
    fn drop(&mut self) {
        let rules = std::mem::take(&mut self.rules);
        // A hasher alive beside another on this thread (`first_difference`) hands back the
        // larger map.
        let _ = RULES.try_with(|r| {
            let mut r = r.borrow_mut();
            if rules.len() >= r.len() {
                *r = rules;
            }
        });
    }
}

struct Hasher<'a> {
    dom: &'a WeakDom,
    root: Ref,
    positions: Positions<'a>,
    rules: FxHashMap<(Ustr, Ustr), Rule>,
    /// The encodings of the instance's properties being hashed, back to back…
    arena: Vec<u8>,
    /// …and per property its [`Rule::order`], canonical name and range in `arena`, sorted by
    /// name.
    props: Vec<(u64, Ustr, u32, u32)>,
    /// Child lists this long or longer are split between two threads.
    split_min: usize,
    /// Records written (the empty record of [`children_hash`] not counted)…
    instances: usize,
    /// …and among them ProceduralModels whose results were left out.
    nested: usize,
}

impl<'a> Hasher<'a> {
    fn new(dom: &'a WeakDom, root: Ref) -> Hasher<'a> {
        Hasher {
            dom,
            root,
            positions: Positions {
                tree: Some((dom, root)),
                map: OnceLock::new(),
            },
            rules: RULES.with(|r| r.take()),
            arena: Vec::new(),
            props: Vec::new(),
            split_min: SPLIT_MIN_CHILDREN,
            instances: 0,
            nested: 0,
        }
    }

    /// One pre-order walk (memory in the depth of the tree). A child list of
    /// [`SPLIT_MIN_CHILDREN`] or more (a generator's 100,000 parts) is encoded half on this
    /// thread and half on a scoped helper, whose bytes are hashed after the first half's:
    /// the hashed stream is the same bytes in the same order.
    fn run(self, with_root: bool) -> [u8; 32] {
        self.run_counted(with_root).0
    }

    /// [`Self::run`], with the instances hashed and the nested models among them.
    fn run_counted(mut self, with_root: bool) -> ([u8; 32], usize, usize) {
        let (dom, root) = (self.dom, self.root);
        let positions = std::mem::replace(&mut self.positions, Positions::empty());
        let mut h = blake3::Hasher::new();
        h.update(DOMAIN);
        let mut out = Out {
            buf: Vec::new(),
            hasher: Some(&mut h),
        };
        if let Some(inst) = dom.get_by_ref(root) {
            std::thread::scope(|scope| {
                self.walk(&positions, root, inst, with_root, &mut out, Some(scope));
            });
        }
        out.flush();
        (*h.finalize().as_bytes(), self.instances, self.nested)
    }

    /// Encodes the subtree of `r` (its own record only when `with_record`, else the empty
    /// record [`children_hash`] uses) into `out`. `split`: a scope the first long child list
    /// may hand its second half to (taken by that list, so one helper at most).
    fn walk<'s>(
        &mut self,
        positions: &'s Positions<'a>,
        r: Ref,
        inst: &'a Instance,
        with_record: bool,
        out: &mut Out<'_>,
        mut split: Option<&'s std::thread::Scope<'s, '_>>,
    ) where
        'a: 's,
    {
        struct Frame<'a, 's> {
            children: Vec<(Ref, &'a Instance)>,
            next: usize,
            /// Where this list's own share ends; the helper encoded the rest.
            end: usize,
            helper: Option<std::thread::ScopedJoinHandle<'s, (Vec<u8>, usize, usize)>>,
        }
        let mut stack: Vec<Frame<'a, 's>> = Vec::new();
        let mut item = Some((r, inst, with_record));
        loop {
            if let Some((r, inst, with_record)) = item.take() {
                let children = self.record(positions, r, inst, with_record, &mut out.buf);
                out.flush_if_full();
                let mut frame = Frame {
                    end: children.len(),
                    children,
                    next: 0,
                    helper: None,
                };
                if frame.end >= self.split_min
                    && let Some(scope) = split.take()
                {
                    let mid = frame.end / 2;
                    let tail: Vec<(Ref, &'a Instance)> = frame.children[mid..].to_vec();
                    let (dom, root) = (self.dom, self.root);
                    frame.end = mid;
                    frame.helper = Some(scope.spawn(move || {
                        let mut helper = Hasher::new(dom, root);
                        let mut out = Out {
                            buf: Vec::new(),
                            hasher: None,
                        };
                        for (r, inst) in tail {
                            helper.walk(positions, r, inst, true, &mut out, None);
                        }
                        (out.buf, helper.instances, helper.nested)
                    }));
                }
                stack.push(frame);
            }
            let Some(top) = stack.last_mut() else { break };
            if top.next < top.end {
                let (r, inst) = top.children[top.next];
                top.next += 1;
                item = Some((r, inst, true));
                continue;
            }
            if let Some(helper) = top.helper.take() {
                // A panic in the helper is a bug of this module: surface it here.
                let (tail, instances, nested) = helper
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e));
                self.instances += instances;
                self.nested += nested;
                out.flush();
                out.write(&tail);
            }
            stack.pop();
        }
    }

    /// Writes the record of `inst` (class, name, canonical properties, child count; or the
    /// empty record) and returns the children to encode after it.
    fn record(
        &mut self,
        positions: &Positions<'a>,
        r: Ref,
        inst: &'a Instance,
        with_record: bool,
        buf: &mut Vec<u8>,
    ) -> Vec<(Ref, &'a Instance)> {
        if with_record {
            self.instances += 1;
            self.own_record(positions, inst, buf);
        } else {
            put_str(buf, "");
            put_str(buf, "");
            put_u32(buf, 0);
        }
        let dom = self.dom;
        self.nested += usize::from(hides_results(self.root, r, inst));
        let mut children = Vec::with_capacity(inst.children().len());
        let mut left_out = 0;
        for &c in inst.children() {
            if let Some(i) = dom.get_by_ref(c) {
                if hidden(dom, self.root, c, i) {
                    left_out += 1;
                } else {
                    children.push((c, i));
                }
            }
        }
        let count = inst.children().len() - left_out;
        put_u32(buf, count as u32);
        children
    }

    /// Writes `inst`'s class, name and canonical properties.
    fn own_record(&mut self, positions: &Positions<'_>, inst: &Instance, buf: &mut Vec<u8>) {
        put_str(buf, &inst.class);
        put_str(buf, &inst.name);
        self.encode_properties(inst, positions);
        put_u32(buf, self.props.len() as u32);
        for &(_, name, start, end) in &self.props {
            put_str(buf, &name);
            buf.extend_from_slice(&self.arena[start as usize..end as usize]);
        }
    }

    /// Encodes the instance's canonical properties into `arena`/`props`, sorted by name.
    fn encode_properties(&mut self, inst: &Instance, positions: &Positions<'_>) {
        self.arena.clear();
        self.props.clear();
        for (&key, value) in &inst.properties {
            let rule = self
                .rules
                .entry((inst.class, key))
                .or_insert_with(|| rule(&inst.class, &key));
            // A nil reference is the absence of one (the binary format writes it for every
            // instance of a class that lacks the property).
            // So is one to an instance files leave out (not archivable, or under one).
            if rule.skip
                || matches!(value, Variant::Ref(r) if r.is_none() || !crate::keeps_reference(self.dom, *r))
            {
                continue;
            }
            let start = self.arena.len();
            encode(&mut self.arena, value, rule.quantize, positions);
            if rule.default.as_deref() == Some(&self.arena[start..]) {
                self.arena.truncate(start);
                continue;
            }
            self.props.push((
                rule.order,
                rule.canonical,
                start as u32,
                self.arena.len() as u32,
            ));
        }
        // Stable: of two spellings of one property (an alias beside its canonical name), the
        // first stays first, and dedup keeps it.
        // Most names differ in their first eight bytes: compared as one number first.
        self.props
            .sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.as_str().cmp(b.1.as_str())));
        self.props.dedup_by(|b, a| a.1 == b.1);
    }

    /// The instance's canonical properties, sorted by name, each with its value's encoding.
    fn properties(&mut self, inst: &Instance) -> Vec<(String, Vec<u8>)> {
        let positions = std::mem::replace(&mut self.positions, Positions::empty());
        self.encode_properties(inst, &positions);
        self.positions = positions;
        self.props
            .iter()
            .map(|&(_, name, start, end)| {
                (
                    name.to_string(),
                    self.arena[start as usize..end as usize].to_vec(),
                )
            })
            .collect()
    }
}

fn rule(class: &str, name: &str) -> Rule {
    // A ProceduralModel's Dirty flag is the engine's bookkeeping, not content: it clears when
    // a nested model generates after the results holding it were hashed.
    if name == "Dirty" && crate::is_a(class, "ProceduralModel") {
        return Rule {
            canonical: Ustr::from(name),
            order: order(name),
            skip: true,
            quantize: false,
            default: None,
        };
    }
    let Some(info) = crate::find_property(class, name) else {
        return Rule {
            canonical: Ustr::from(name),
            order: order(name),
            skip: false,
            quantize: false,
            default: None,
        };
    };
    let (skip, quantize) = match &info.descriptor.kind {
        PropertyKind::Canonical { serialization } => match serialization {
            PropertySerialization::DoesNotSerialize => (true, false),
            PropertySerialization::SerializesAs(target) => {
                let target_type = crate::db()
                    .classes
                    .get(info.declared_by)
                    .and_then(|c| c.properties.get(*target))
                    .map(|p| &p.data_type);
                let q = matches!(target_type, Some(DataType::Value(t)) if *t == rbx_types::VariantType::Color3uint8);
                (false, q)
            }
            _ => (false, false),
        },
        _ => (false, false),
    };
    let default = crate::db_default(class, info.canonical).map(|v| {
        let mut enc = Vec::new();
        encode(&mut enc, v, quantize, &Positions::empty());
        enc
    });
    Rule {
        canonical: Ustr::from(info.canonical),
        order: order(info.canonical),
        skip,
        quantize,
        default,
    }
}

/// A name's first eight bytes as a big-endian number, zero-padded ([`Rule::order`]).
fn order(name: &str) -> u64 {
    let mut b = [0u8; 8];
    let n = name.len().min(8);
    b[..n].copy_from_slice(&name.as_bytes()[..n]);
    u64::from_be_bytes(b)
}

fn put_u32(buf: &mut Vec<u8>, v: u32) {
    buf.extend_from_slice(&v.to_le_bytes());
}

fn put_str(buf: &mut Vec<u8>, s: &str) {
    put_bytes(buf, s.as_bytes());
}

fn put_bytes(buf: &mut Vec<u8>, b: &[u8]) {
    buf.extend_from_slice(&(b.len() as u64).to_le_bytes());
    buf.extend_from_slice(b);
}

fn f32_bits(x: f32) -> u32 {
    if x.is_nan() {
        0x7fc0_0000
    } else if x == 0.0 {
        0
    } else {
        x.to_bits()
    }
}

fn f64_bits(x: f64) -> u64 {
    if x.is_nan() {
        0x7ff8_0000_0000_0000
    } else if x == 0.0 {
        0
    } else {
        x.to_bits()
    }
}

fn put_f32s(buf: &mut Vec<u8>, xs: &[f32]) {
    for &x in xs {
        buf.extend_from_slice(&f32_bits(x).to_le_bytes());
    }
}

fn put_ref(buf: &mut Vec<u8>, r: Ref, positions: &Positions<'_>) {
    if r.is_none() {
        buf.push(0);
    } else if let Some(p) = positions.get(r) {
        buf.push(1);
        put_u32(buf, p);
    } else {
        buf.push(2);
    }
}

fn vec3(v: &rbx_types::Vector3) -> [f32; 3] {
    [v.x, v.y, v.z]
}

fn cframe(buf: &mut Vec<u8>, c: &rbx_types::CFrame) {
    // The binary format stores a rotation within float noise of an axis-aligned one as that
    // rotation's id: hash it as the exact matrix, as a file gives it back.
    let basic = c
        .orientation
        .to_basic_rotation_id()
        .and_then(|id| rbx_types::Matrix3::from_basic_rotation_id(id).ok());
    let o = basic.as_ref().unwrap_or(&c.orientation);
    put_f32s(buf, &vec3(&c.position));
    put_f32s(buf, &vec3(&o.x));
    put_f32s(buf, &vec3(&o.y));
    put_f32s(buf, &vec3(&o.z));
}

/// An attribute value: as [`encode`], except that a string attribute read from a binary
/// file (rbx_binary gives it as a `BinaryString`) is the `String` it was written from.
fn encode_attribute(buf: &mut Vec<u8>, v: &Variant, positions: &Positions<'_>) {
    match v {
        Variant::BinaryString(b) => {
            buf.push(25);
            put_bytes(buf, b.as_ref());
        }
        other => encode(buf, other, false, positions),
    }
}

/// The canonical encoding of one value (module docs).
fn encode(buf: &mut Vec<u8>, v: &Variant, quantize: bool, positions: &Positions<'_>) {
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
            cframe(buf, c);
        }
        Variant::Color3(c) if quantize => {
            // As the file formats store it (8 bits a channel), in the Color3uint8 encoding.
            let q = Color3uint8::from(*c);
            buf.extend_from_slice(&[7, q.r, q.g, q.b]);
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
            buf.extend_from_slice(&f64_bits(*x).to_le_bytes());
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
            put_f32s(buf, &vec3(&r.origin));
            put_f32s(buf, &vec3(&r.direction));
        }
        Variant::Rect(r) => {
            buf.push(20);
            put_f32s(buf, &[r.min.x, r.min.y, r.max.x, r.max.y]);
        }
        Variant::Ref(r) => {
            buf.push(21);
            put_ref(buf, *r, positions);
        }
        Variant::Region3(r) => {
            buf.push(22);
            put_f32s(buf, &vec3(&r.min));
            put_f32s(buf, &vec3(&r.max));
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
            put_f32s(buf, &vec3(p));
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
                cframe(buf, c);
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
            // Attributes iterate in name order (a BTreeMap).
            for (name, value) in a.iter() {
                put_str(buf, name);
                encode_attribute(buf, value, positions);
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
                    put_ref(buf, *r, positions);
                }
                other => {
                    buf.push(255);
                    put_str(buf, &format!("{other:?}"));
                }
            }
        }
        Variant::NetAssetRef(n) => {
            buf.push(41);
            put_bytes(buf, n.data());
        }
        other => {
            buf.push(255);
            put_str(buf, &format!("{other:?}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbx_dom_weak::InstanceBuilder;

    /// A long child list hashed by two threads is the stream one thread hashes: nested
    /// results hidden on both sides of the split, references across it, and the first and
    /// second halves' order all count.
    #[test]
    fn a_split_child_list_hashes_as_one_thread_does() {
        let build = |swap: bool| {
            let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
            let folder = dom.insert(dom.root_ref(), InstanceBuilder::new("GeneratedFolder"));
            let n = 40;
            let mut parts = Vec::new();
            for i in 0..n {
                let name = match (swap, i) {
                    (true, 5) => "P30".to_owned(),
                    (true, 30) => "P5".to_owned(),
                    _ => format!("P{i}"),
                };
                parts.push(dom.insert(folder, InstanceBuilder::new("Part").with_name(name)));
            }
            // A nested model in each half, with results of its own (hidden from the hash).
            for at in [3, 33] {
                let m = dom.insert(parts[at], InstanceBuilder::new("ProceduralModel"));
                let g = dom.insert(m, InstanceBuilder::new("GeneratedFolder"));
                dom.insert(g, InstanceBuilder::new("Part").with_name("Inner"));
            }
            // References from the second half into the first and back.
            let weld = dom.insert(
                parts[35],
                InstanceBuilder::new("WeldConstraint")
                    .with_property("Part0", Variant::Ref(parts[1]))
                    .with_property("Part1", Variant::Ref(parts[38])),
            );
            let _ = weld;
            (dom, folder)
        };
        let hash = |dom: &WeakDom, r: Ref, split_min: usize, with_root: bool| {
            let mut h = Hasher::new(dom, r);
            h.split_min = split_min;
            h.run(with_root)
        };
        let (dom, folder) = build(false);
        for with_root in [true, false] {
            let one = hash(&dom, folder, usize::MAX, with_root);
            for split_min in [1, 2, 16, 40] {
                assert_eq!(hash(&dom, folder, split_min, with_root), one, "{split_min}");
            }
            // The whole scene: the split happens one level down.
            assert_eq!(
                hash(&dom, dom.root_ref(), 16, with_root),
                hash(&dom, dom.root_ref(), usize::MAX, with_root)
            );
        }
        let (swapped, sf) = build(true);
        assert_ne!(hash(&swapped, sf, 16, true), hash(&dom, folder, 16, true));
        assert_ne!(
            hash(&swapped, sf, 16, true),
            hash(&swapped, sf, usize::MAX, false)
        );
    }

    #[test]
    fn counted_hash_counts_instances_and_nested_models_and_records_compare_canonically() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let folder = dom.insert(dom.root_ref(), InstanceBuilder::new("GeneratedFolder"));
        let part = dom.insert(folder, InstanceBuilder::new("Part"));
        let m = dom.insert(part, InstanceBuilder::new("ProceduralModel"));
        let hidden = dom.insert(m, InstanceBuilder::new("GeneratedFolder"));
        dom.insert(hidden, InstanceBuilder::new("Part"));
        let (hash, instances, nested) = children_hash_counted(&dom, folder);
        assert_eq!(hash, children_hash(&dom, folder));
        assert_eq!(
            (instances, nested),
            (2, 1),
            "the nested results are not counted"
        );
        // A record: a string attribute read back as a BinaryString, and a default value
        // written out, are the same record; another name is not.
        let record = |name: &str, attr: Variant, extra: Option<(&str, Variant)>| {
            let mut a = rbx_types::Attributes::new();
            a.insert("ProcmodelInputs".into(), attr);
            let mut b = InstanceBuilder::new("Part")
                .with_name(name)
                .with_property("Attributes", Variant::Attributes(a));
            if let Some((k, v)) = extra {
                b = b.with_property(k, v);
            }
            let d = WeakDom::new(b);
            record_digest(&d, d.root_ref())
        };
        let s = || Variant::String("v2 size=0".into());
        let plain = record("F", s(), None);
        assert_eq!(
            plain,
            record(
                "F",
                Variant::BinaryString(b"v2 size=0".to_vec().into()),
                None
            )
        );
        assert_eq!(
            plain,
            record("F", s(), Some(("Transparency", Variant::Float32(0.0))))
        );
        assert_ne!(plain, record("G", s(), None));
        assert_ne!(
            plain,
            record("F", s(), Some(("Transparency", Variant::Float32(0.5))))
        );
        assert_ne!(
            plain,
            record("F", Variant::String("v2 size=1".into()), None)
        );
    }

    proptest::proptest! {
        /// Ordering by the eight-byte prefix, then by the name, is ordering by the name.
        #[test]
        fn prefix_order_is_name_order(a in "[A-Za-z0-9_ ]{0,12}", b in "[A-Za-z0-9_ ]{0,12}") {
            let by_prefix = order(&a).cmp(&order(&b)).then_with(|| a.cmp(&b));
            proptest::prop_assert_eq!(by_prefix, a.cmp(&b));
        }
    }

    #[test]
    fn hex_is_two_lower_case_digits_per_byte() {
        let all: Vec<u8> = (0..=255).collect();
        let expected: String = all.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex(&all), expected);
        assert_eq!(hex(&[]), "");
        assert_eq!(to_hex(&[0xab; 32]), "ab".repeat(32));
    }

    #[test]
    fn negative_zero_and_nan_are_canonical() {
        let enc = |v: Variant| {
            let mut b = Vec::new();
            encode(&mut b, &v, false, &Positions::empty());
            b
        };
        assert_eq!(enc(Variant::Float32(-0.0)), enc(Variant::Float32(0.0)));
        assert_eq!(
            enc(Variant::Float64(f64::NAN)),
            enc(Variant::Float64(-f64::NAN))
        );
        assert_ne!(enc(Variant::Float32(1.0)), enc(Variant::Float64(1.0)));
    }

    #[test]
    fn a_nested_models_results_are_its_own_but_its_inputs_count() {
        // A results folder holding a nested ProceduralModel: the nested model's later
        // generation (its GeneratedFolder) must not change the outer results' hash.
        let build = |nested_parts: usize, size: f32| {
            let mut dom = WeakDom::new(InstanceBuilder::new("GeneratedFolder"));
            let root = dom.root_ref();
            let m = dom.insert(
                root,
                InstanceBuilder::new("ProceduralModel")
                    .with_name("Tower")
                    .with_property("Size", rbx_types::Vector3::new(size, 4.0, 4.0)),
            );
            let g = dom.insert(m, InstanceBuilder::new("GeneratedFolder"));
            for _ in 0..nested_parts {
                dom.insert(g, InstanceBuilder::new("Part"));
            }
            dom
        };
        let h = |d: &WeakDom| children_hash(d, d.root_ref());
        assert_eq!(h(&build(0, 4.0)), h(&build(3, 4.0)));
        // Nor does its Dirty flag clearing once it has generated.
        let mut clean = build(3, 4.0);
        let t = clean.root().children()[0];
        clean
            .get_by_ref_mut(t)
            .unwrap()
            .properties
            .insert("Dirty".into(), Variant::Bool(true));
        assert_eq!(h(&clean), h(&build(0, 4.0)));
        assert_ne!(h(&build(0, 4.0)), h(&build(0, 8.0)));
        // Hashed from the nested model itself, its results count.
        let (full, empty) = (build(3, 4.0), build(0, 4.0));
        let tower = |d: &WeakDom| d.root().children()[0];
        assert_ne!(
            content_hash(&full, tower(&full)),
            content_hash(&empty, tower(&empty))
        );
    }

    #[test]
    fn referents_do_not_matter_but_ref_targets_do() {
        let build = |point_at_first: bool| {
            let mut dom = WeakDom::new(InstanceBuilder::new("Folder"));
            let root = dom.root_ref();
            let a = dom.insert(root, InstanceBuilder::new("Part").with_name("A"));
            let b = dom.insert(root, InstanceBuilder::new("Part").with_name("B"));
            let target = if point_at_first { a } else { b };
            dom.insert(
                root,
                InstanceBuilder::new("ObjectValue").with_property("Value", Variant::Ref(target)),
            );
            dom
        };
        let (x, y) = (build(true), build(true));
        assert_eq!(
            content_hash(&x, x.root_ref()),
            content_hash(&y, y.root_ref())
        );
        let z = build(false);
        assert_ne!(
            children_hash(&x, x.root_ref()),
            children_hash(&z, z.root_ref())
        );
        let d = first_difference(&x, x.root_ref(), &z, z.root_ref()).expect("differs");
        assert_eq!(d.path, "ObjectValue");
        assert_eq!(d.what, "property Value");
    }
}
