//! Checks a binary Roblox file (rbx-dom's docs/binary.md) before rbx_binary decodes it:
//! header, chunk headers, compressed and uncompressed sizes against the file, each chunk's
//! decompressed size, and every count and length inside the chunks that rbx_binary would
//! size a buffer from. rbx_binary panics on some malformed chunks and trusts those counts
//! for allocations (a corrupt count could ask for more memory than exists, which aborts
//! the process); after this check its reads stay within the file's real data.

use super::attributes::check_attributes;
use std::collections::{HashMap, HashSet};

const MAGIC: &[u8; 8] = b"<roblox!";
const SIGNATURE: &[u8; 6] = b"\x89\xff\x0d\x0a\x1a\x0a";
const HEADER_LEN: usize = 32;
const CHUNK_HEADER_LEN: usize = 16;
const ZSTD_MAGIC: &[u8; 4] = &[0x28, 0xb5, 0x2f, 0xfd];
/// Output bytes an LZ4 block can produce per input byte (a match-length byte adds 255), plus
/// the first sequence's token.
const LZ4_MAX_RATIO: u64 = 255;
/// A zstd RLE block: a 3-byte header and one byte for up to 128 KiB.
const ZSTD_MAX_RATIO: u64 = 1 << 15;

/// Checks `file` and rewrites the header's class and instance counts (capacity hints for
/// rbx_binary, which allocates them up front) to the numbers the chunks really hold.
pub fn check(file: &mut [u8]) -> Result<(), String> {
    if file.len() < HEADER_LEN {
        return Err(format!(
            "{} bytes is too short for the 32-byte header",
            file.len()
        ));
    }
    if &file[..8] != MAGIC {
        return Err("does not start with the `<roblox!` magic".into());
    }
    if &file[8..14] != SIGNATURE {
        return Err("the header signature is wrong (the file was changed by a text tool?)".into());
    }
    let version = u16::from_le_bytes([file[14], file[15]]);
    if version != 0 {
        return Err(format!("unknown format version {version} (expected 0)"));
    }
    if file[24..32] != [0; 8] {
        return Err("the header's reserved bytes are not zero".into());
    }
    let mut classes: HashMap<u32, u32> = HashMap::new();
    let mut instances: u64 = 0;
    let mut referents: HashSet<i32> = HashSet::new();
    let mut scratch = Vec::new();
    let mut at = HEADER_LEN;
    let mut index = 0usize;
    loop {
        index += 1;
        if file.len() - at < CHUNK_HEADER_LEN {
            return Err(format!(
                "ends at byte {} inside chunk #{index}'s header, before the END chunk",
                file.len()
            ));
        }
        let h = &file[at..at + CHUNK_HEADER_LEN];
        let name: [u8; 4] = [h[0], h[1], h[2], h[3]];
        let word = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        let (compressed, len, reserved) = (word(4), word(8), word(12));
        let label = format!("chunk #{index} ({}) at byte {at}", show(&name));
        if reserved != 0 {
            return Err(format!("{label}: reserved field is {reserved}, not 0"));
        }
        let body = at + CHUNK_HEADER_LEN;
        let left = (file.len() - body) as u64;
        let stored = if compressed == 0 { len } else { compressed } as u64;
        if stored > left {
            return Err(format!(
                "{label}: {stored} bytes of data, but the file has {left} left (truncated?)"
            ));
        }
        let raw = &file[body..body + stored as usize];
        let data: &[u8] = if compressed == 0 {
            raw
        } else {
            inflate(raw, len, &mut scratch).map_err(|e| format!("{label}: {e}"))?;
            &scratch
        };
        at = body + stored as usize;
        let mut chunk = Reader { bytes: data, at: 0 };
        let checked = match &name {
            b"META" => meta(&mut chunk),
            b"SSTR" => sstr(&mut chunk),
            b"INST" => inst(&mut chunk, &mut classes, &mut instances, &mut referents),
            b"PROP" => prop(&mut chunk, &classes),
            b"PRNT" => prnt(&mut chunk, &referents),
            b"END\0" => break,
            // Unknown chunks are skipped by rbx_binary, as by Roblox.
            _ => Ok(()),
        };
        checked.map_err(|e| format!("{label}: {e}"))?;
    }
    let types = u32::try_from(classes.len()).unwrap_or(u32::MAX);
    let instances = u32::try_from(instances).unwrap_or(u32::MAX);
    file[16..20].copy_from_slice(&types.to_le_bytes());
    file[20..24].copy_from_slice(&instances.to_le_bytes());
    Ok(())
}

/// Decompresses a chunk body into `out`, which must come out `len` bytes exactly.
fn inflate(raw: &[u8], len: u32, out: &mut Vec<u8>) -> Result<(), String> {
    let zstd = raw.starts_with(ZSTD_MAGIC);
    if raw.len() < ZSTD_MAGIC.len() {
        // rbx_binary reads 4 bytes to tell the two apart.
        return Err(format!(
            "compressed data of {} bytes is too short",
            raw.len()
        ));
    }
    let ratio = if zstd { ZSTD_MAX_RATIO } else { LZ4_MAX_RATIO };
    let bound = raw.len() as u64 * ratio + 64;
    if u64::from(len) > bound {
        return Err(format!(
            "claims to expand {} bytes to {len}, more than {} can hold",
            raw.len(),
            if zstd { "ZSTD" } else { "LZ4" }
        ));
    }
    out.clear();
    out.resize(len as usize, 0);
    let n = if zstd {
        zstd::bulk::decompress_to_buffer(raw, out.as_mut_slice())
            .map_err(|e| format!("ZSTD data does not decompress: {e}"))?
    } else {
        lz4_flex::block::decompress_into(raw, out.as_mut_slice())
            .map_err(|e| format!("LZ4 data does not decompress: {e}"))?
    };
    if n != len as usize {
        return Err(format!("decompresses to {n} bytes, the header says {len}"));
    }
    Ok(())
}

/// The chunk name as text when it is printable.
fn show(name: &[u8; 4]) -> String {
    let trimmed: &[u8] = match name.iter().position(|&b| b == 0) {
        Some(end) => &name[..end],
        None => name,
    };
    match std::str::from_utf8(trimmed) {
        Ok(s) if s.chars().all(|c| c.is_ascii_graphic()) => s.to_owned(),
        _ => format!("{name:02x?}"),
    }
}

fn meta(r: &mut Reader<'_>) -> Result<(), String> {
    let n = r.u32("entry count")?;
    for _ in 0..n {
        r.string("metadata key")?;
        r.string("metadata value")?;
    }
    Ok(())
}

fn sstr(r: &mut Reader<'_>) -> Result<(), String> {
    r.u32("version")?;
    let n = r.u32("string count")?;
    for i in 0..n {
        r.skip(16, "hash")
            .and_then(|()| r.string("shared string").map(drop))
            .map_err(|e| format!("shared string #{i}: {e}"))?;
    }
    Ok(())
}

fn inst(
    r: &mut Reader<'_>,
    classes: &mut HashMap<u32, u32>,
    instances: &mut u64,
    referents: &mut HashSet<i32>,
) -> Result<(), String> {
    let id = r.u32("class id")?;
    let name = r.string("class name")?;
    let format = r.u8("object format")?;
    let n = r.u32("instance count")?;
    let class = String::from_utf8_lossy(name);
    let refs = r
        .referents(n, "referents")
        .map_err(|e| format!("class {class}: {e}"))?;
    for referent in refs {
        if !referents.insert(referent) {
            return Err(format!(
                "class {class}: referent {referent} belongs to two instances"
            ));
        }
    }
    if format != 0 {
        r.array(n, 1, "service markers")
            .map_err(|e| format!("class {class}: {e}"))?;
    }
    if classes.insert(id, n).is_some() {
        return Err(format!("class id {id} ({class}) is defined twice"));
    }
    *instances += u64::from(n);
    Ok(())
}

fn prop(r: &mut Reader<'_>, classes: &HashMap<u32, u32>) -> Result<(), String> {
    let id = r.u32("class id")?;
    let name = r.string("property name")?;
    let prop = String::from_utf8_lossy(name).into_owned();
    let ty = r.u8("type id")?;
    let Some(&n) = classes.get(&id) else {
        return Err(format!(
            "property {prop} is for class id {id}, which no INST chunk defines"
        ));
    };
    values(r, ty, n, &prop).map_err(|e| format!("property {prop} (type 0x{ty:02x}): {e}"))
}

/// Checks the `n` values of a PROP chunk whose sizes come from the data itself; fixed-size
/// values are read by rbx_binary with bounded buffers and checked there.
fn values(r: &mut Reader<'_>, ty: u8, n: u32, prop: &str) -> Result<(), String> {
    match ty {
        // String, Bytecode.
        0x01 | 0x1d => {
            for i in 0..n {
                let s = r.string("string").map_err(|e| format!("value #{i}: {e}"))?;
                if prop == "AttributesSerialize" {
                    check_attributes(s).map_err(|e| format!("instance #{i}: {e}"))?;
                }
            }
            Ok(())
        }
        // NumberSequence, ColorSequence: a keypoint count, then 3 or 5 f32 per keypoint.
        0x15 | 0x16 => {
            let size = if ty == 0x15 { 12 } else { 20 };
            for i in 0..n {
                let k = r.u32("keypoint count")?;
                r.array(k, size, "keypoints")
                    .map_err(|e| format!("value #{i}: {e}"))?;
            }
            Ok(())
        }
        // CFrame: a rotation id per value (0: a 9-f32 matrix follows), then the positions.
        0x10 => cframes(r, n),
        // OptionalCoordinateFrame: the CFrame type id, CFrames, the Bool type id, flags.
        0x1e => {
            r.u8("CFrame type id")?;
            cframes(r, n)?;
            r.u8("Bool type id")?;
            r.array(n, 1, "presence flags")
        }
        // PhysicalProperties: flags, then 5 or 6 f32 when custom.
        0x19 => {
            for i in 0..n {
                let flags = r.u8("flags")?;
                if flags & 1 != 0 {
                    let size = if flags & 2 != 0 { 24 } else { 20 };
                    r.skip(size, "custom properties")
                        .map_err(|e| format!("value #{i}: {e}"))?;
                }
            }
            Ok(())
        }
        // Font: family, weight, style, cached face id.
        0x20 => {
            for i in 0..n {
                r.string("family")
                    .and_then(|_| r.skip(3, "weight and style"))
                    .and_then(|()| r.string("cached face id").map(drop))
                    .map_err(|e| format!("value #{i}: {e}"))?;
            }
            Ok(())
        }
        // Content: source types, URIs, object referents, external object referents.
        // Each value of source type 1 (a URI) or 2 (an object) takes the next URI or object.
        // The types are the format's interleaved i32s: big-endian bytes of the zigzag form.
        0x22 => {
            let at = r.at;
            r.array(n, 4, "source types")?;
            let types = &r.bytes[at..r.at];
            let n = n as usize;
            let (mut want_uris, mut want_objects) = (0u64, 0u64);
            for j in 0..n {
                let stored = u32::from_be_bytes([
                    types[j],
                    types[n + j],
                    types[2 * n + j],
                    types[3 * n + j],
                ]);
                let ty = (stored >> 1) as i32 ^ -((stored & 1) as i32);
                match ty {
                    1 => want_uris += 1,
                    2 => want_objects += 1,
                    _ => {}
                }
            }
            let uris = r.u32("URI count")?;
            for i in 0..uris {
                r.string("URI").map_err(|e| format!("URI #{i}: {e}"))?;
            }
            let objects = r.u32("object count")?;
            r.array(objects, 4, "object referents")?;
            let external = r.u32("external object count")?;
            r.array(external, 4, "external object referents")?;
            if want_uris > u64::from(uris) || want_objects > u64::from(objects) {
                return Err(format!(
                    "{want_uris} values are URIs and {want_objects} objects, but the chunk has {uris} URIs and {objects} objects"
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn cframes(r: &mut Reader<'_>, n: u32) -> Result<(), String> {
    for i in 0..n {
        if r.u8("rotation id")? == 0 {
            r.skip(36, "rotation matrix")
                .map_err(|e| format!("value #{i}: {e}"))?;
        }
    }
    r.array(n, 12, "positions")
}

/// The parent links: every child and every parent (other than -1, none) is an instance of
/// the file, and no instance gets two parents.
fn prnt(r: &mut Reader<'_>, referents: &HashSet<i32>) -> Result<(), String> {
    r.u8("version")?;
    let n = r.u32("instance count")?;
    // Both arrays are checked against the chunk's length before either is read.
    let mut probe = Reader {
        bytes: r.bytes,
        at: r.at,
    };
    probe.array(n, 8, "child and parent referents")?;
    let children = r.referents(n, "child referents")?;
    let parents = r.referents(n, "parent referents")?;
    let mut parented = HashSet::with_capacity(children.len());
    for (child, parent) in children.into_iter().zip(parents) {
        if !referents.contains(&child) {
            return Err(format!(
                "child referent {child} is not an instance of the file"
            ));
        }
        if parent != -1 && !referents.contains(&parent) {
            return Err(format!(
                "parent referent {parent} (of {child}) is not an instance of the file"
            ));
        }
        if !parented.insert(child) {
            return Err(format!("instance {child} is given a parent twice"));
        }
    }
    Ok(())
}

/// A reader over decompressed chunk data that never reads past its end.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if n > self.left() {
            return Err(format!(
                "{what}: {n} bytes needed at byte {} of the chunk, {} left",
                self.at,
                self.left()
            ));
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn skip(&mut self, n: usize, what: &str) -> Result<(), String> {
        self.take(n, what).map(drop)
    }

    /// `n` values of `size` bytes.
    fn array(&mut self, n: u32, size: usize, what: &str) -> Result<(), String> {
        let need = (n as usize).saturating_mul(size);
        if need > self.left() {
            return Err(format!(
                "{n} {what} need {need} bytes at byte {} of the chunk, {} left",
                self.at,
                self.left()
            ));
        }
        self.at += need;
        Ok(())
    }

    /// `n` referents (docs/binary.md, "Referent"): byte-interleaved big-endian transformed
    /// i32 differences, accumulated.
    fn referents(&mut self, n: u32, what: &str) -> Result<Vec<i32>, String> {
        let n = n as usize;
        let at = self.at;
        self.array(n as u32, 4, what)?;
        let bytes = &self.bytes[at..at + 4 * n];
        let mut out = Vec::with_capacity(n);
        let mut value = 0i32;
        for j in 0..n {
            let x =
                u32::from_be_bytes([bytes[j], bytes[n + j], bytes[2 * n + j], bytes[3 * n + j]]);
            let delta = ((x >> 1) as i32) ^ -((x & 1) as i32);
            value = value.wrapping_add(delta);
            out.push(value);
        }
        Ok(out)
    }

    fn u8(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.take(1, what)?[0])
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A u32 length and that many bytes.
    fn string(&mut self, what: &str) -> Result<&'a [u8], String> {
        let at = self.at;
        let n = self.u32(what)? as usize;
        if n > self.left() {
            return Err(format!(
                "{what} of {n} bytes at byte {at} of the chunk, {} left",
                self.left()
            ));
        }
        self.take(n, what)
    }
}
