//! Surface meshes of the voxel occupancy by surface nets, one part per material, seam-free
//! across chunks: each 32³ chunk is meshed from its voxels plus a one-voxel border of its
//! neighbours, and owns exactly the surface crossings whose lower sample lies inside it.
//!
//! # Model
//! Samples sit at voxel centres with value = occupancy; the surface is the 0.5 level
//! (`inside ⇔ occupancy > 0.5`), so a lone full voxel is a closed surface at its faces'
//! midpoints, and a heightmap's top voxel with occupancy `o ≥ 0.5` (empty above) puts the
//! surface `4·(o − 0.5)/o` studs above its centre. A vertex sits in every cube of 8 samples whose signs differ, at
//! the mean of the crossings on its edges; a quad joins the 4 cubes around each sign-changing
//! edge, wound counter-clockwise seen from outside, in the material of the edge's inside
//! sample. Normals are the normalised negative occupancy gradient of the cube. Vertex
//! positions depend only on the cube's samples and global position, so chunks agree bit for
//! bit on shared vertices.
//!
//! Sign tests use one 64-bit mask per sample row: whole rows of cubes with no sign change
//! are skipped without touching their samples.

use crate::error::TerrainError;
use crate::material::Material;
use crate::storage::{CHUNK, CellRegion, Chunk, Terrain};
use glam::IVec3;

/// Vertices and triangles of one material.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshPart {
    /// The material.
    pub material: Material,
    /// World positions (studs).
    pub positions: Vec<[f32; 3]>,
    /// Unit normals.
    pub normals: Vec<[f32; 3]>,
    /// Triangles, counter-clockwise seen from outside.
    pub indices: Vec<u32>,
}

/// A terrain mesh: parts sorted by material index, empty parts omitted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TerrainMesh {
    /// One part per material present.
    pub parts: Vec<MeshPart>,
}

impl TerrainMesh {
    /// Total triangles.
    pub fn triangle_count(&self) -> usize {
        self.parts.iter().map(|p| p.indices.len() / 3).sum()
    }

    /// Appends another mesh's parts, merging parts of the same material.
    pub fn append(&mut self, other: TerrainMesh) {
        for p in other.parts {
            match self.parts.binary_search_by_key(&p.material, |q| q.material) {
                Ok(i) => {
                    let q = &mut self.parts[i];
                    let base = q.positions.len() as u32;
                    q.positions.extend(p.positions);
                    q.normals.extend(p.normals);
                    q.indices.extend(p.indices.iter().map(|i| i + base));
                }
                Err(i) => self.parts.insert(i, p),
            }
        }
    }
}

/// A block of samples for the mesher: `dims` samples (X fastest, then Y, then Z; X ≤ 64)
/// whose sample (0, 0, 0) is the centre of cell `origin`.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleBlock {
    /// Samples per axis.
    pub dims: [usize; 3],
    /// Cell of sample (0, 0, 0).
    pub origin: IVec3,
    /// Occupancy 0..1 per sample.
    pub occupancy: Vec<f32>,
    /// Solid material per sample.
    pub materials: Vec<Material>,
}

impl SampleBlock {
    /// The samples of cells `[region.min − 1, region.max + 1)` (the region plus a one-voxel
    /// border).
    pub fn from_terrain(t: &Terrain, region: CellRegion) -> SampleBlock {
        SampleBlock::sampled(t, region, |v| (f32::from(v.occupancy) / 255.0, v.material))
    }

    /// The water samples of the same cells as [`SampleBlock::from_terrain`], or `None` when
    /// none of them holds water. A sample's value is how full the cell is (the larger of its
    /// solid and liquid occupancy) and its material `Water` where the liquid fills more of it
    /// than the solid: meshed, the quads of `Water` are the water's surface against air, and
    /// water against terrain has no surface (both sides are inside).
    pub fn liquid_from_terrain(t: &Terrain, region: CellRegion) -> Option<SampleBlock> {
        let mut wet = false;
        let b = SampleBlock::sampled(t, region, |v| {
            let full = f32::from(v.occupancy.max(v.liquid)) / 255.0;
            if v.liquid > v.occupancy {
                wet = true;
                (full, Material::Water)
            } else {
                (full, v.material)
            }
        });
        wet.then_some(b)
    }

    /// The cells of `region` plus a one-voxel border, each sampled by `sample` (empty cells
    /// of absent chunks are 0 and Air).
    fn sampled(
        t: &Terrain,
        region: CellRegion,
        mut sample: impl FnMut(crate::storage::Voxel) -> (f32, Material),
    ) -> SampleBlock {
        let padded = CellRegion {
            min: region.min - IVec3::ONE,
            max: region.max + IVec3::ONE,
        };
        let s = padded.size();
        let dims = [s.x as usize, s.y as usize, s.z as usize];
        let n = dims[0] * dims[1] * dims[2];
        let mut occupancy = vec![0f32; n];
        let mut materials = vec![Material::Air; n];
        t.visit(padded, |c, v| {
            let l = c - padded.min;
            let i = l.x as usize + dims[0] * (l.y as usize + dims[1] * l.z as usize);
            (occupancy[i], materials[i]) = sample(v);
        });
        SampleBlock {
            dims,
            origin: padded.min,
            occupancy,
            materials,
        }
    }
}

const NONE: u32 = u32::MAX;

/// Meshes a sample block, emitting the quads of sign-changing edges whose lower sample lies in
/// `[owned_lo, owned_hi)` (sample coordinates; edges need both samples in the block and their
/// four cubes). [`mesh_region`] owns `[1, dims − 1)`.
pub fn mesh_block(
    b: &SampleBlock,
    owned_lo: [usize; 3],
    owned_hi: [usize; 3],
) -> Result<TerrainMesh, TerrainError> {
    let [nx, ny, nz] = b.dims;
    if nx > 64 || nx * ny * nz != b.occupancy.len() || b.materials.len() != b.occupancy.len() {
        return Err(TerrainError::Config {
            field: "sample block",
            reason: format!(
                "dims {:?} (x ≤ 64) do not match {} samples",
                b.dims,
                b.occupancy.len()
            ),
        });
    }
    if nx < 2 || ny < 2 || nz < 2 {
        return Ok(TerrainMesh::default());
    }
    SCRATCH.with(|sc| {
        let mut sc = sc.borrow_mut();
        mesh_with(b, owned_lo, owned_hi, &mut sc)
    })
}

/// Reused buffers (per thread): row masks and the cube → vertex table. The table is never
/// cleared: only cubes with a sign change are read, and those are written first.
#[derive(Default)]
struct Scratch {
    mask: Vec<u64>,
    cube_vert: Vec<u32>,
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    quads: Vec<(Material, [u32; 4])>,
    remap: Vec<u32>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

fn mesh_with(
    b: &SampleBlock,
    owned_lo: [usize; 3],
    owned_hi: [usize; 3],
    sc: &mut Scratch,
) -> Result<TerrainMesh, TerrainError> {
    let Scratch {
        mask,
        cube_vert,
        positions,
        normals,
        quads,
        remap,
    } = sc;
    let [nx, ny, nz] = b.dims;
    let idx = |x: usize, y: usize, z: usize| x + nx * (y + ny * z);
    // Inside masks per (y, z) row, eight samples at a time.
    mask.clear();
    for row in b.occupancy.chunks_exact(nx) {
        let mut m = 0u64;
        let mut chunks = row.chunks_exact(8);
        let mut shift = 0;
        for c in &mut chunks {
            let mut byte = 0u64;
            for (k, &o) in c.iter().enumerate() {
                byte |= u64::from(o > 0.5) << k;
            }
            m |= byte << shift;
            shift += 8;
        }
        for (k, &o) in chunks.remainder().iter().enumerate() {
            m |= u64::from(o > 0.5) << (shift + k);
        }
        mask.push(m);
    }
    let (cx, cy, cz) = (nx - 1, ny - 1, nz - 1);
    let cube_bits = if cx >= 64 { u64::MAX } else { (1u64 << cx) - 1 };
    if cube_vert.len() < cx * cy * cz {
        cube_vert.resize(cx * cy * cz, NONE);
    }
    positions.clear();
    normals.clear();
    let occ = &b.occupancy;
    for z in 0..cz {
        for y in 0..cy {
            let m00 = mask[y + ny * z];
            let m10 = mask[y + 1 + ny * z];
            let m01 = mask[y + ny * (z + 1)];
            let m11 = mask[y + 1 + ny * (z + 1)];
            let all = m00 & m10 & m01 & m11;
            let any = m00 | m10 | m01 | m11;
            let mut mixed = ((any | (any >> 1)) & !(all & (all >> 1))) & cube_bits;
            while mixed != 0 {
                let x = mixed.trailing_zeros() as usize;
                mixed &= mixed - 1;
                let mut f = [0f32; 8];
                for (k, v) in f.iter_mut().enumerate() {
                    *v = occ[idx(x + (k & 1), y + ((k >> 1) & 1), z + (k >> 2))];
                }
                let signs = (((m00 >> x) & 3)
                    | (((m10 >> x) & 3) << 2)
                    | (((m01 >> x) & 3) << 4)
                    | (((m11 >> x) & 3) << 6)) as u32;
                let (mut sx, mut sy, mut sz, mut count) = (0f32, 0f32, 0f32, 0f32);
                let cross = |a: usize, bb: usize| {
                    (((signs >> a) ^ (signs >> bb)) & 1 != 0).then(|| (0.5 - f[a]) / (f[bb] - f[a]))
                };
                // The 12 cube edges, four per axis (corner bit 0 = +X, 1 = +Y, 2 = +Z).
                for (a, bb) in [(0, 1), (2, 3), (4, 5), (6, 7)] {
                    if let Some(t) = cross(a, bb) {
                        sx += t;
                        sy += ((a >> 1) & 1) as f32;
                        sz += (a >> 2) as f32;
                        count += 1.0;
                    }
                }
                for (a, bb) in [(0, 2), (1, 3), (4, 6), (5, 7)] {
                    if let Some(t) = cross(a, bb) {
                        sx += (a & 1) as f32;
                        sy += t;
                        sz += (a >> 2) as f32;
                        count += 1.0;
                    }
                }
                for (a, bb) in [(0, 4), (1, 5), (2, 6), (3, 7)] {
                    if let Some(t) = cross(a, bb) {
                        sx += (a & 1) as f32;
                        sy += ((a >> 1) & 1) as f32;
                        sz += t;
                        count += 1.0;
                    }
                }
                let sum = [sx, sy, sz];
                let o = b.origin + IVec3::new(x as i32, y as i32, z as i32);
                let p = [0, 1, 2].map(|a| (o[a] as f32) * 4.0 + 2.0 + 4.0 * sum[a] / count);
                let g = [
                    (f[1] - f[0]) + (f[3] - f[2]) + (f[5] - f[4]) + (f[7] - f[6]),
                    (f[2] - f[0]) + (f[3] - f[1]) + (f[6] - f[4]) + (f[7] - f[5]),
                    (f[4] - f[0]) + (f[5] - f[1]) + (f[6] - f[2]) + (f[7] - f[3]),
                ];
                let len = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
                let nrm = if len > 0.0 {
                    [-g[0] / len, -g[1] / len, -g[2] / len]
                } else {
                    [0.0, 1.0, 0.0]
                };
                cube_vert[x + cx * (y + cy * z)] = positions.len() as u32;
                positions.push(p);
                normals.push(nrm);
            }
        }
    }
    // Quads per material: (material, [v0, v1, v2, v3]).
    quads.clear();
    let lo = owned_lo.map(|v| v.max(1));
    let hi = [
        owned_hi[0].min(nx - 1),
        owned_hi[1].min(ny - 1),
        owned_hi[2].min(nz - 1),
    ];
    let own_bits = if hi[0] <= lo[0] {
        0
    } else {
        (((1u128 << hi[0]) - 1) as u64) & !((1u64 << lo[0]) - 1)
    };
    for z in lo[2]..hi[2] {
        for y in lo[1]..hi[1] {
            let m = mask[y + ny * z];
            let rows = [
                (0usize, m ^ (m >> 1)),
                (1, m ^ mask[y + 1 + ny * z]),
                (2, m ^ mask[y + ny * (z + 1)]),
            ];
            for (axis, diff) in rows {
                let mut bits = diff & own_bits;
                while bits != 0 {
                    let x = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let a = [x, y, z];
                    let mut bpos = a;
                    bpos[axis] += 1;
                    let ia = idx(a[0], a[1], a[2]);
                    let ib = idx(bpos[0], bpos[1], bpos[2]);
                    let a_in = occ[ia] > 0.5;
                    let mat = if a_in {
                        b.materials[ia]
                    } else {
                        b.materials[ib]
                    };
                    // The four cubes around the edge, counter-clockwise seen from +axis.
                    let stride = [1, cx, cx * cy];
                    let (su, sv) = (stride[(axis + 1) % 3], stride[(axis + 2) % 3]);
                    let ci = x + cx * (y + cy * z);
                    let q = [
                        cube_vert[ci - su - sv],
                        cube_vert[ci - sv],
                        cube_vert[ci],
                        cube_vert[ci - su],
                    ];
                    let q = if a_in { q } else { [q[3], q[2], q[1], q[0]] };
                    quads.push((mat, q));
                }
            }
        }
    }
    Ok(split_parts(positions, normals, quads, remap))
}

fn split_parts(
    positions: &[[f32; 3]],
    normals: &[[f32; 3]],
    quads: &[(Material, [u32; 4])],
    remap: &mut Vec<u32>,
) -> TerrainMesh {
    // Part slot per material, in material order.
    let mut slot = [u8::MAX; 23];
    for (m, _) in quads {
        slot[usize::from(m.index())] = 0;
    }
    let mut mesh = TerrainMesh::default();
    for m in Material::ALL {
        let s = &mut slot[usize::from(m.index())];
        if *s == 0 {
            *s = mesh.parts.len() as u8;
            mesh.parts.push(MeshPart {
                material: m,
                ..MeshPart::default()
            });
        }
    }
    let nv = positions.len();
    remap.clear();
    remap.resize(nv * mesh.parts.len(), NONE);
    // Exact sizes: count each part's quads first.
    let mut nq = vec![0usize; mesh.parts.len()];
    for (m, _) in quads {
        nq[usize::from(slot[usize::from(m.index())])] += 1;
    }
    for (part, n) in mesh.parts.iter_mut().zip(&nq) {
        part.indices.reserve_exact(6 * n);
        part.positions.reserve(2 * n);
        part.normals.reserve(2 * n);
    }
    for (m, q) in quads {
        let k = usize::from(slot[usize::from(m.index())]);
        let part = &mut mesh.parts[k];
        let table = &mut remap[k * nv..(k + 1) * nv];
        let mut ids = [0u32; 4];
        for (j, &v) in q.iter().enumerate() {
            let r = &mut table[v as usize];
            if *r == NONE {
                *r = part.positions.len() as u32;
                part.positions.push(positions[v as usize]);
                part.normals.push(normals[v as usize]);
            }
            ids[j] = *r;
        }
        part.indices
            .extend_from_slice(&[ids[0], ids[1], ids[2], ids[0], ids[2], ids[3]]);
    }
    mesh
}

/// Meshes the terrain over a cell region, chunk by chunk (32³ pieces aligned to the chunk
/// grid, each with its neighbour border). The union of the meshes of any partition of a
/// region into sub-regions equals the mesh of the region.
pub fn mesh_region(t: &Terrain, region: CellRegion) -> TerrainMesh {
    let mut mesh = TerrainMesh::default();
    if region.is_empty() {
        return mesh;
    }
    let k0 = region.min.div_euclid(IVec3::splat(CHUNK));
    let k1 = (region.max - IVec3::ONE).div_euclid(IVec3::splat(CHUNK));
    // The region's chunks holding water: most terrain has none, and then no second field is
    // sampled.
    let wet: Vec<(i32, i32, i32)> = chunks_near(t, region)
        .filter(|(_, c)| match c {
            Chunk::Uniform(v) => v.liquid > 0,
            // An OR over the chunk rather than an early exit: it vectorises.
            Chunk::Dense(d) => d.iter().fold(0u8, |a, v| a | v.liquid) > 0,
        })
        .map(|(&k, _)| k)
        .collect();
    for kz in k0.z..=k1.z {
        for ky in k0.y..=k1.y {
            for kx in k0.x..=k1.x {
                let base = IVec3::new(kx, ky, kz) * CHUNK;
                let sub = region.intersect(&CellRegion {
                    min: base,
                    max: base + IVec3::splat(CHUNK),
                });
                if sub.is_empty() || !has_voxels_near(t, sub) {
                    continue;
                }
                let block = SampleBlock::from_terrain(t, sub);
                let d = block.dims;
                if let Ok(m) = mesh_block(&block, [1, 1, 1], [d[0] - 1, d[1] - 1, d[2] - 1]) {
                    mesh.append(m);
                }
                // Water's surface: a second field, of which only the Water quads are kept
                // (its solid quads are the terrain's, meshed above from the solid field).
                let around = keys_near(sub);
                if wet.iter().any(|&k| within(k, around))
                    && let Some(wet) = SampleBlock::liquid_from_terrain(t, sub)
                    && let Ok(mut m) = mesh_block(&wet, [1, 1, 1], [d[0] - 1, d[1] - 1, d[2] - 1])
                {
                    m.parts.retain(|p| p.material == Material::Water);
                    mesh.append(m);
                }
            }
        }
    }
    mesh
}

/// The chunk keys `r` grown by one voxel touches: from `lo` to `hi` (inclusive) per axis.
fn keys_near(r: CellRegion) -> (IVec3, IVec3) {
    (
        (r.min - IVec3::ONE).div_euclid(IVec3::splat(CHUNK)),
        r.max.div_euclid(IVec3::splat(CHUNK)),
    )
}

/// Whether chunk key `k` lies in `keys` ([`keys_near`]).
fn within((x, y, z): (i32, i32, i32), (lo, hi): (IVec3, IVec3)) -> bool {
    (lo.x..=hi.x).contains(&x) && (lo.y..=hi.y).contains(&y) && (lo.z..=hi.z).contains(&z)
}

/// The stored chunks `r` grown by one voxel touches.
fn chunks_near(t: &Terrain, r: CellRegion) -> impl Iterator<Item = (&(i32, i32, i32), &Chunk)> {
    let keys = keys_near(r);
    t.chunks
        .range((keys.0.x, i32::MIN, i32::MIN)..=(keys.1.x, i32::MAX, i32::MAX))
        .filter(move |(k, _)| within(**k, keys))
}

/// Whether any stored chunk touches the region grown by one voxel.
fn has_voxels_near(t: &Terrain, r: CellRegion) -> bool {
    chunks_near(t, r).next().is_some()
}

/// Meshes every stored voxel.
pub fn mesh_terrain(t: &Terrain) -> TerrainMesh {
    match t.chunk_bounds() {
        Some(r) => mesh_region(
            t,
            CellRegion {
                min: r.min - IVec3::ONE,
                max: r.max + IVec3::ONE,
            },
        ),
        None => TerrainMesh::default(),
    }
}
