//! `Terrain.SmoothGrid` (and `TerrainRegion.SmoothGrid`) encoder and decoder: bytes ↔
//! [`Terrain`].
//!
//! # Format
//! `01 05` (version 1, log2 of the chunk edge = 5), then chunks to the end of the blob. A
//! chunk is a 12-byte offset — the delta in chunks from the previous chunk (the first from
//! (0, 0, 0)) as three `i32`, **big-endian two's complement, byte-interleaved** (the four
//! bytes of x, y, z most significant first, stored as x₀ y₀ z₀ x₁ y₁ z₁ …) — followed by
//! records covering exactly 32³ voxels in X-fastest, then Z, then Y order. A record is
//! `flag` (bits 0..5 material index, 0x40 "occupancy byte follows", 0x80 "count byte
//! follows"), then `[occupancy]`, then `[count]` = additional repeats (a run of count + 1 ≤
//! 256 voxels); a count byte of 0 means the next byte is the Shorelines water occupancy and
//! the record is one voxel. Chunks are written in ascending (x, y, z) order.
//!
//! # The two open points, settled
//! - **Negative offsets** are big-endian two's complement, not zig-zag and not little-endian:
//!   `(-1, 0, -2)` is `FF 00 FF FF 00 FF FF 00 FF FF 00 FE` (tests `negative_offsets_*`).
//!   Every published vector (positive deltas) agrees; negative ones follow from the writer
//!   using `i32::to_be_bytes` with no transform.
//! - **A record without the occupancy byte is FULL occupancy** (value 255), never 0 (tests
//!   `missing_occupancy_byte_means_full`); so an occupancy that quantizes to 0 is written as
//!   Air, and a full voxel never carries the byte.
//!
//! Water: a water-only voxel is written as material Water (with its level as the occupancy
//! byte when below full); a solid voxel with water uses the water byte. Decoding accepts
//! both spellings, and Air records with an occupancy byte are empty.

use crate::error::TerrainError;
use crate::material::Material;
use crate::storage::{CHUNK_VOXELS, Chunk, Terrain, Voxel};

/// The header of every blob: version 1, 2^5 voxels per chunk edge.
pub const HEADER: [u8; 2] = [0x01, 0x05];
/// Chunk coordinates allowed (the engine's ±2^23-stud extent / 128 studs per chunk).
pub const MAX_CHUNK_COORD: i64 = 65_536;

const HAS_OCC: u8 = 0x40;
const HAS_COUNT: u8 = 0x80;

fn put_offset(out: &mut Vec<u8>, d: [i32; 3]) {
    let b = d.map(i32::to_be_bytes);
    for i in 0..4 {
        for axis in &b {
            out.push(axis[i]);
        }
    }
}

fn push_voxel(out: &mut Vec<u8>, v: Voxel, count: usize) {
    debug_assert!((1..=256).contains(&count));
    let (mat, occ, water) = if v.occupancy == 0 {
        if v.liquid > 0 {
            (Material::Water, v.liquid, 0)
        } else {
            (Material::Air, 255, 0)
        }
    } else {
        (v.material, v.occupancy, v.liquid)
    };
    let mut flag = mat.index();
    if occ != 255 {
        flag |= HAS_OCC;
    }
    if count > 1 || water > 0 {
        flag |= HAS_COUNT;
    }
    out.push(flag);
    if occ != 255 {
        out.push(occ);
    }
    if water > 0 {
        out.push(0);
        out.push(water);
    } else if count > 1 {
        out.push((count - 1) as u8);
    }
}

/// Encodes the terrain (chunks compacted first is not required: uniform and dense chunks
/// encode alike). Same terrain → same bytes.
pub fn encode(t: &Terrain) -> Vec<u8> {
    let mut e = Encoder::new();
    e.append(t);
    e.finish()
}

/// A SmoothGrid blob written piece by piece: a large world voxelised in strips of chunk
/// columns (all chunks of one chunk X, then the next) is encoded strip by strip and each strip
/// dropped, so only the blob stays in memory. Chunks must come in SmoothGrid order (x, then
/// y, then z, ascending) across every [`Encoder::append`]; the bytes then equal [`encode`] of
/// the whole terrain.
#[derive(Debug)]
pub struct Encoder {
    out: Vec<u8>,
    prev: [i32; 3],
    last: Option<(i32, i32, i32)>,
}

impl Default for Encoder {
    fn default() -> Self {
        Encoder::new()
    }
}

impl Encoder {
    /// An empty blob (the header only).
    pub fn new() -> Encoder {
        Encoder {
            out: HEADER.to_vec(),
            prev: [0; 3],
            last: None,
        }
    }

    /// Appends every chunk of `t`; its first chunk must come after the last one appended
    /// (else [`TerrainError::Config`] naming the chunk, and nothing is appended).
    pub fn try_append(&mut self, t: &Terrain) -> Result<(), TerrainError> {
        if let (Some(last), Some((&first, _))) = (self.last, t.chunks.first_key_value())
            && first <= last
        {
            return Err(TerrainError::Config {
                field: "smoothgrid",
                reason: format!(
                    "chunk {first:?} appended after chunk {last:?}: strips must come in x, y, z order"
                ),
            });
        }
        self.append(t);
        Ok(())
    }

    fn append(&mut self, t: &Terrain) {
        for (&key, chunk) in &t.chunks {
            self.push(key, chunk);
        }
    }

    fn push(&mut self, (x, y, z): (i32, i32, i32), chunk: &Chunk) {
        // A chunk edited back to nothing (e.g. carved with Air) is stored dense but holds no
        // terrain: the same voxels give the same bytes however they were made.
        let empty = match chunk {
            Chunk::Uniform(v) => *v == Voxel::EMPTY,
            Chunk::Dense(d) => d.iter().all(|v| *v == Voxel::EMPTY),
        };
        if empty {
            return;
        }
        let out = &mut self.out;
        let prev = self.prev;
        let d = [
            x.wrapping_sub(prev[0]),
            y.wrapping_sub(prev[1]),
            z.wrapping_sub(prev[2]),
        ];
        put_offset(out, d);
        self.prev = [x, y, z];
        self.last = Some((x, y, z));
        match chunk {
            Chunk::Uniform(v) => {
                if v.liquid > 0 && v.occupancy > 0 {
                    for _ in 0..CHUNK_VOXELS {
                        push_voxel(out, *v, 1);
                    }
                } else {
                    for _ in 0..CHUNK_VOXELS / 256 {
                        push_voxel(out, *v, 256);
                    }
                }
            }
            Chunk::Dense(d) => {
                let mut i = 0;
                while i < d.len() {
                    let v = d[i];
                    let mut n = 1;
                    if !(v.liquid > 0 && v.occupancy > 0) {
                        while n < 256 && i + n < d.len() && d[i + n] == v {
                            n += 1;
                        }
                    }
                    push_voxel(out, v, n);
                    i += n;
                }
            }
        }
    }

    /// Bytes so far.
    pub fn len(&self) -> usize {
        self.out.len()
    }

    /// Whether only the header has been written.
    pub fn is_empty(&self) -> bool {
        self.last.is_none()
    }

    /// The blob.
    pub fn finish(self) -> Vec<u8> {
        self.out
    }
}

fn err(offset: usize, reason: impl Into<String>) -> TerrainError {
    TerrainError::SmoothGrid {
        offset,
        reason: reason.into(),
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn byte(&mut self, what: &str) -> Result<u8, TerrainError> {
        let v = *self.b.get(self.pos).ok_or_else(|| {
            err(
                self.pos,
                format!("blob ends inside a voxel record ({what} missing)"),
            )
        })?;
        self.pos += 1;
        Ok(v)
    }
}

/// Decodes a blob. Never panics: every malformation is a [`TerrainError::SmoothGrid`] with
/// the byte offset and what is wrong (bad header, truncated offset or record, unknown
/// material index, a run past the end of its chunk, a chunk out of range or repeated).
pub fn decode(bytes: &[u8]) -> Result<Terrain, TerrainError> {
    if bytes.is_empty() {
        return Err(err(0, "empty blob (expected the version byte 0x01)"));
    }
    if bytes[0] != HEADER[0] {
        return Err(err(
            0,
            format!("unsupported version {} (expected 1)", bytes[0]),
        ));
    }
    match bytes.get(1) {
        None => return Err(err(1, "blob ends before the chunk-size byte")),
        Some(&5) => {}
        Some(&s) => {
            return Err(err(
                1,
                format!("chunk size 2^{s} unsupported (expected 2^5)"),
            ));
        }
    }
    let mut r = Reader { b: bytes, pos: 2 };
    let mut t = Terrain::new();
    let mut at = [0i64; 3];
    let mut voxels = vec![Voxel::EMPTY; CHUNK_VOXELS];
    while r.pos < bytes.len() {
        let start = r.pos;
        if bytes.len() - start < 12 {
            return Err(err(
                start,
                format!(
                    "truncated chunk offset ({} of 12 bytes)",
                    bytes.len() - start
                ),
            ));
        }
        let o = &bytes[start..start + 12];
        for (a, c) in at.iter_mut().enumerate() {
            let d = i32::from_be_bytes([o[a], o[3 + a], o[6 + a], o[9 + a]]);
            *c += i64::from(d);
            if c.abs() > MAX_CHUNK_COORD {
                return Err(err(
                    start,
                    format!("chunk coordinate {c} out of range (|c| ≤ {MAX_CHUNK_COORD})"),
                ));
            }
        }
        r.pos += 12;
        let key = (at[0] as i32, at[1] as i32, at[2] as i32);
        if t.chunks.contains_key(&key) {
            return Err(err(start, format!("chunk {key:?} appears twice")));
        }
        let mut filled = 0usize;
        while filled < CHUNK_VOXELS {
            let rec = r.pos;
            let flag = r.byte("flag")?;
            let mat = Material::from_index(flag & 0x3f)
                .ok_or_else(|| err(rec, format!("unknown material index {}", flag & 0x3f)))?;
            let occ = if flag & HAS_OCC != 0 {
                r.byte("occupancy")?
            } else {
                255
            };
            let (count, water) = if flag & HAS_COUNT != 0 {
                match r.byte("count")? {
                    0 => (1, r.byte("water occupancy")?),
                    c => (usize::from(c) + 1, 0),
                }
            } else {
                (1, 0)
            };
            if filled + count > CHUNK_VOXELS {
                return Err(err(
                    rec,
                    format!(
                        "run of {count} voxels overflows the chunk ({} left)",
                        CHUNK_VOXELS - filled
                    ),
                ));
            }
            let v = match mat {
                Material::Air => Voxel {
                    material: Material::Air,
                    occupancy: 0,
                    liquid: water,
                },
                Material::Water => Voxel {
                    material: Material::Air,
                    occupancy: 0,
                    liquid: occ.max(water),
                },
                m => Voxel {
                    material: m,
                    occupancy: occ,
                    liquid: water,
                },
            }
            .normalized();
            voxels[filled..filled + count].fill(v);
            filled += count;
        }
        t.insert_chunk(key, Chunk::Dense(voxels.clone().into_boxed_slice()));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::IVec3;

    fn chunk_bytes(offset: [u8; 12], records: &[u8]) -> Vec<u8> {
        let mut v = offset.to_vec();
        v.extend_from_slice(records);
        v
    }

    /// Records for "first `head` records, then Air to fill the chunk".
    fn air_tail(mut rec: Vec<u8>, used: usize) -> Vec<u8> {
        let mut left = CHUNK_VOXELS - used;
        while left > 0 {
            let n = left.min(256);
            if n == 1 {
                rec.push(0x00);
            } else {
                rec.extend_from_slice(&[0x80, (n - 1) as u8]);
            }
            left -= n;
        }
        rec
    }

    #[test]
    fn empty_terrain_is_the_default_blob() {
        assert_eq!(encode(&Terrain::new()), vec![1, 5]);
        assert!(decode(&[1, 5]).unwrap().is_empty());
    }

    #[test]
    fn terrain_carved_back_to_nothing_encodes_as_empty() {
        let mut t = Terrain::new();
        let cf = glam::Affine3A::from_translation(glam::Vec3::new(6.0, 6.0, 6.0));
        t.fill_block(cf, glam::Vec3::splat(4.0), Material::Rock)
            .unwrap();
        assert_ne!(encode(&t), vec![1, 5]);
        t.fill_block(cf, glam::Vec3::splat(8.0), Material::Air)
            .unwrap();
        assert!(t.is_empty());
        assert_eq!(encode(&t), vec![1, 5]);
    }

    #[test]
    fn published_vector_shape() {
        // chunk (0,0,0): Water, Pavement, 32766 Air; chunk (1,0,0): the same.
        let recs = air_tail(vec![0x01, 0x16], 2);
        assert_eq!(&recs[2..4], &[0x80, 0xFF]);
        assert_eq!(&recs[recs.len() - 2..], &[0x80, 0xFD]);
        let mut blob = vec![1, 5];
        blob.extend(chunk_bytes([0; 12], &recs));
        blob.extend(chunk_bytes([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0], &recs));
        let t = decode(&blob).unwrap();
        for cx in [0, 32] {
            let w = t.get(IVec3::new(cx, 0, 0));
            assert_eq!((w.material, w.occupancy, w.liquid), (Material::Air, 0, 255));
            assert_eq!(
                t.get(IVec3::new(cx + 1, 0, 0)),
                Voxel::solid(Material::Pavement, 255)
            );
            assert_eq!(t.get(IVec3::new(cx + 2, 0, 0)), Voxel::EMPTY);
        }
        assert_eq!(encode(&t), blob);
    }

    #[test]
    fn negative_offsets_encode_big_endian_twos_complement() {
        let mut t = Terrain::new();
        t.set(IVec3::new(-32, 0, -64), Voxel::solid(Material::Rock, 255));
        let b = encode(&t);
        assert_eq!(
            &b[2..14],
            &[
                0xFF, 0x00, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0x00, 0xFE
            ]
        );
        // Then a chunk one step back on Y and forward on X: delta (+1, -1, 0)... from (-1,0,-2).
        t.set(IVec3::new(0, -32, -64), Voxel::solid(Material::Rock, 255));
        let b = encode(&t);
        let again = decode(&b).unwrap();
        assert_eq!(again, {
            let mut c = t.clone();
            c.compact();
            c
        });
    }

    #[test]
    fn negative_offsets_decode_big_endian_twos_complement() {
        // Hand-built: chunk at (-1, 0, -2), first voxel Grass at 50%, rest Air; then a chunk
        // at delta (2, -1, 0) → (1, -1, -2), all Snow.
        let recs = air_tail(vec![0x42, 0x80], 1);
        let mut blob = vec![1, 5];
        blob.extend(chunk_bytes(
            [
                0xFF, 0x00, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0x00, 0xFE,
            ],
            &recs,
        ));
        let mut snow = Vec::new();
        for _ in 0..128 {
            snow.extend_from_slice(&[0x8A, 0xFF]);
        }
        blob.extend(chunk_bytes(
            [0, 0xFF, 0, 0, 0xFF, 0, 0, 0xFF, 0, 0x02, 0xFF, 0],
            &snow,
        ));
        let t = decode(&blob).unwrap();
        assert_eq!(
            t.get(IVec3::new(-32, 0, -64)),
            Voxel::solid(Material::Grass, 0x80)
        );
        assert_eq!(t.get(IVec3::new(-31, 0, -64)), Voxel::EMPTY);
        assert_eq!(
            t.get(IVec3::new(32 + 5, -32 + 7, -64 + 9)),
            Voxel::solid(Material::Snow, 255)
        );
        assert_eq!(t.chunk_counts(), (2, 1));
        // Little-endian reading would put the first chunk near i32::MIN: out of range here.
        assert_eq!(encode(&t), blob);
    }

    #[test]
    fn missing_occupancy_byte_means_full() {
        // Decoding: flag 0x08 (Rock, no 0x40) is a full voxel.
        let mut blob = vec![1, 5];
        blob.extend(chunk_bytes([0; 12], &air_tail(vec![0x08], 1)));
        assert_eq!(
            decode(&blob).unwrap().get(IVec3::ZERO),
            Voxel::solid(Material::Rock, 255)
        );
        // Encoding: a full voxel carries no occupancy byte; a partial one does.
        let mut t = Terrain::new();
        t.set(IVec3::ZERO, Voxel::solid(Material::Rock, 255));
        t.set(IVec3::X, Voxel::solid(Material::Rock, 1));
        let b = encode(&t);
        assert_eq!(&b[14..17], &[0x08, 0x48, 0x01]);
    }

    #[test]
    fn water_byte_and_runs() {
        let mut t = Terrain::new();
        let wet = Voxel {
            material: Material::Sand,
            occupancy: 100,
            liquid: 200,
        };
        t.set(IVec3::new(0, 0, 0), wet);
        t.set(IVec3::new(1, 0, 0), wet);
        t.set(
            IVec3::new(2, 0, 0),
            Voxel {
                material: Material::Air,
                occupancy: 0,
                liquid: 255,
            },
        );
        t.set(
            IVec3::new(3, 0, 0),
            Voxel {
                material: Material::Air,
                occupancy: 0,
                liquid: 7,
            },
        );
        for x in 4..8 {
            t.set(IVec3::new(x, 0, 0), Voxel::solid(Material::Mud, 255));
        }
        let b = encode(&t);
        assert_eq!(
            &b[14..30],
            &[
                0xC6, 100, 0x00, 200, // Sand 100 + water 200, one voxel
                0xC6, 100, 0x00, 200,  // again (runs with water go voxel by voxel)
                0x01, // water-only, full
                0x41, 7, // water-only at 7/255
                0x8C, 3, // Mud ×4
                0x80, 0xFF, 0x80, // Air ×256 …
            ][..16]
        );
        assert_eq!(decode(&b).unwrap(), t);
    }

    #[test]
    fn zero_occupancy_solid_is_air_and_air_byte_is_empty() {
        let mut blob = vec![1, 5];
        // Rock with occupancy byte 0, Air with occupancy byte 9.
        blob.extend(chunk_bytes(
            [0; 12],
            &air_tail(vec![0x48, 0x00, 0x40, 0x09], 2),
        ));
        let t = decode(&blob).unwrap();
        assert!(t.is_empty());
    }

    #[test]
    fn errors_name_the_byte() {
        let e = |b: &[u8]| decode(b).unwrap_err().to_string();
        assert_eq!(
            e(&[]),
            "SmoothGrid: empty blob (expected the version byte 0x01) at byte 0"
        );
        assert_eq!(
            e(&[2, 5]),
            "SmoothGrid: unsupported version 2 (expected 1) at byte 0"
        );
        assert_eq!(
            e(&[1, 4]),
            "SmoothGrid: chunk size 2^4 unsupported (expected 2^5) at byte 1"
        );
        assert_eq!(
            e(&[1, 5, 0, 0]),
            "SmoothGrid: truncated chunk offset (2 of 12 bytes) at byte 2"
        );
        let mut b = vec![1, 5];
        b.extend([0; 12]);
        b.push(0x17);
        assert_eq!(e(&b), "SmoothGrid: unknown material index 23 at byte 14");
        b.pop();
        b.extend([0x48]);
        assert_eq!(
            e(&b),
            "SmoothGrid: blob ends inside a voxel record (occupancy missing) at byte 15"
        );
        let mut b = vec![1, 5];
        b.extend([0; 12]);
        for _ in 0..128 {
            b.extend([0x88, 0xFF]);
        }
        let ok = b.clone();
        b.extend([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0]);
        for _ in 0..127 {
            b.extend([0x88, 0xFF]);
        }
        b.extend([0x88, 0xFE, 0x88, 0x01]);
        assert_eq!(
            e(&b),
            format!(
                "SmoothGrid: run of 2 voxels overflows the chunk (1 left) at byte {}",
                b.len() - 2
            )
        );
        let mut dup = ok.clone();
        dup.extend_from_slice(&ok[2..]);
        assert_eq!(
            e(&dup),
            "SmoothGrid: chunk (0, 0, 0) appears twice at byte 270"
        );
        let mut far = vec![1, 5];
        far.extend([0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert!(e(&far).contains("out of range"));
    }
}
