//! The triangle mesh a `MeshPart` made from an `EditableMesh` carries through procmodel:
//! its data model, its byte encoding and the string attribute it travels in.
//!
//! Roblox files cannot keep an `EditableMesh` (Studio drops it with the session). procmodel
//! keeps a snapshot of its geometry on the `MeshPart` as the string attribute [`ATTRIBUTE`],
//! so the content hash, the result cache, undo, parallel workers and every file format carry
//! it like any other attribute, and the glTF exporter draws it. Studio shows the attribute and
//! ignores it.
//!
//! Owns: [`TriangleMesh`], [`TriangleMesh::encode`]/[`TriangleMesh::decode`] and their
//! checks, [`shapes`]: the triangles of Roblox's primitive part shapes, which the glTF
//! export draws and solid modelling cuts, and [`texture`]: the image a part carries for an
//! `EditableImage` (PNG in a string attribute). Must never: depend on Luau or the DOM, or accept
//! bytes it has not checked — a decoded mesh has finite values and every index in range, so
//! its users need no checks.
//!
//! # Encoding (version 1)
//!
//! `b"PMM1"`, then five u32 counts (positions, normals, UVs, colors, triangles), then the
//! positions (3 × f32 each), normals (3 × f32), UVs (2 × f32), colors (r, g, b, alpha as
//! f32) and triangles (12 × u32: three vertex, three normal, three UV and three color
//! indices), all little-endian. The attribute holds the bytes in standard base64.

use base64::Engine as _;

pub mod shapes;
pub mod texture;

/// The attribute of a `MeshPart` that holds its mesh (base64 of [`TriangleMesh::encode`]).
pub const ATTRIBUTE: &str = "ProcmodelMesh";

/// Roblox's limits for one `EditableMesh`: 60,000 vertices and 20,000 triangles.
pub const MAX_VERTICES: usize = 60_000;
/// See [`MAX_VERTICES`].
pub const MAX_TRIANGLES: usize = 20_000;

/// Normals, UVs and colors of one mesh: each triangle corner can have its own, so at most
/// three per triangle are ever in use.
pub const MAX_ATTRIBUTES: usize = 3 * MAX_TRIANGLES;

const MAGIC: &[u8; 4] = b"PMM1";

/// One triangle: for each of its three corners, in order, the index of its position,
/// normal, UV and color. Counter-clockwise corners face the viewer (as in glTF).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Triangle {
    pub vertices: [u32; 3],
    pub normals: [u32; 3],
    pub uvs: [u32; 3],
    pub colors: [u32; 3],
}

/// An indexed triangle mesh in the mesh's own space (studs), with resolved normals (unit
/// length or zero), UVs and colors (linear 0–1 RGB as Roblox's `Color3` holds them, and an
/// alpha where 1 is opaque).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TriangleMesh {
    pub positions: Vec<[f32; 3]>,
    pub normals: Vec<[f32; 3]>,
    pub uvs: Vec<[f32; 2]>,
    pub colors: Vec<[f32; 4]>,
    pub triangles: Vec<Triangle>,
}

/// Why bytes or an attribute are not a mesh.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MeshError {
    #[error("the mesh attribute is not base64 ({0})")]
    Base64(String),
    #[error("the mesh data does not start with PMM1 (not a procmodel mesh, or a newer version)")]
    Magic,
    #[error("the mesh data is {got} bytes long where its counts need {expected}")]
    Length { expected: u64, got: u64 },
    #[error("the mesh has {count} {what}, more than the {limit} allowed")]
    TooMany {
        what: &'static str,
        count: u64,
        limit: usize,
    },
    #[error("triangle {triangle} refers to {what} {index}, but the mesh has {len}")]
    Index {
        what: &'static str,
        triangle: usize,
        index: u32,
        len: usize,
    },
    #[error("{what} {index} of the mesh is not finite")]
    NotFinite { what: &'static str, index: usize },
}

/// One vertex of [`TriangleMesh::indexed`]: what a renderer or exporter draws.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DrawVertex {
    pub position: [f32; 3],
    pub normal: [f32; 3],
    pub color: [f32; 4],
    pub uv: [f32; 2],
}

impl TriangleMesh {
    /// The mesh as an indexed triangle list to draw: corners that share their position,
    /// normal, color and UV indices are one vertex (numbered in first-use order, so the same
    /// mesh gives the same list); a zero normal becomes its triangle's face normal (+Y for a
    /// degenerate triangle). Returns the vertices and three indices per triangle.
    pub fn indexed(&self) -> (Vec<DrawVertex>, Vec<u32>) {
        let mut vertices = Vec::new();
        let mut indices = Vec::with_capacity(3 * self.triangles.len());
        let mut corners: std::collections::HashMap<[u32; 4], u32> =
            std::collections::HashMap::new();
        for t in &self.triangles {
            let p = t.vertices.map(|v| self.positions[v as usize]);
            let face = face_normal(p);
            for (c, &position) in p.iter().enumerate() {
                let key = [t.vertices[c], t.normals[c], t.colors[c], t.uvs[c]];
                let index = *corners.entry(key).or_insert_with(|| {
                    let n = self.normals[t.normals[c] as usize];
                    vertices.push(DrawVertex {
                        position,
                        normal: if n == [0.0; 3] { face } else { n },
                        color: self.colors[t.colors[c] as usize],
                        uv: self.uvs[t.uvs[c] as usize],
                    });
                    vertices.len() as u32 - 1
                });
                indices.push(index);
            }
        }
        (vertices, indices)
    }

    /// How a part of `size` draws this mesh: a drawn position is `(p - offset) * stretch`,
    /// each axis stretched from the mesh's extent to the part's (an axis without extent is
    /// not stretched), about the mesh's centre when `centred` (a MeshPart's mesh) or about
    /// its origin (a solid-modelling result's triangles are in the part's own space). The
    /// one rule the exporter, the studio, solid modelling and spatial queries follow. None
    /// without positions.
    pub fn fit(&self, size: [f32; 3], centred: bool) -> Option<([f32; 3], [f32; 3])> {
        let (center, extent) = self.center_and_size()?;
        let offset = if centred { center } else { [0.0; 3] };
        let stretch = std::array::from_fn(|k| {
            if extent[k] > 0.0 {
                size[k] / extent[k]
            } else {
                1.0
            }
        });
        Some((offset, stretch))
    }

    /// The centre and size of the box [`TriangleMesh::bounds`] gives: how a MeshPart places
    /// its mesh (centred on the part, each axis stretched from the size to the part's).
    pub fn center_and_size(&self) -> Option<([f32; 3], [f32; 3])> {
        let (lo, hi) = self.bounds()?;
        Some((
            std::array::from_fn(|k| (lo[k] + hi[k]) * 0.5),
            std::array::from_fn(|k| hi[k] - lo[k]),
        ))
    }

    /// The smallest and largest coordinate of every axis over all positions, or None for a
    /// mesh without positions.
    pub fn bounds(&self) -> Option<([f32; 3], [f32; 3])> {
        let first = *self.positions.first()?;
        Some(self.positions.iter().fold((first, first), |(lo, hi), p| {
            (
                [lo[0].min(p[0]), lo[1].min(p[1]), lo[2].min(p[2])],
                [hi[0].max(p[0]), hi[1].max(p[1]), hi[2].max(p[2])],
            )
        }))
    }

    /// The version-1 bytes (module docs).
    pub fn encode(&self) -> Vec<u8> {
        let counts = [
            self.positions.len(),
            self.normals.len(),
            self.uvs.len(),
            self.colors.len(),
            self.triangles.len(),
        ];
        let floats = 3 * counts[0] + 3 * counts[1] + 2 * counts[2] + 4 * counts[3];
        let mut out = Vec::with_capacity(24 + 4 * (floats + 12 * counts[4]));
        out.extend_from_slice(MAGIC);
        for c in counts {
            out.extend_from_slice(&(c as u32).to_le_bytes());
        }
        let mut f = |v: f32| out.extend_from_slice(&v.to_le_bytes());
        self.positions.iter().flatten().for_each(|&v| f(v));
        self.normals.iter().flatten().for_each(|&v| f(v));
        self.uvs.iter().flatten().for_each(|&v| f(v));
        self.colors.iter().flatten().for_each(|&v| f(v));
        for t in &self.triangles {
            for i in [t.vertices, t.normals, t.uvs, t.colors].iter().flatten() {
                out.extend_from_slice(&i.to_le_bytes());
            }
        }
        out
    }

    /// Reads version-1 bytes, checking the length against the counts, the counts against
    /// the limits, every value finite and every index in range.
    pub fn decode(bytes: &[u8]) -> Result<TriangleMesh, MeshError> {
        if bytes.len() < 24 || &bytes[..4] != MAGIC {
            return Err(MeshError::Magic);
        }
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        let counts: [u64; 5] = std::array::from_fn(|k| u64::from(word(4 + 4 * k)));
        let limits = [
            ("positions", MAX_VERTICES),
            ("normals", MAX_ATTRIBUTES),
            ("UVs", MAX_ATTRIBUTES),
            ("colors", MAX_ATTRIBUTES),
            ("triangles", MAX_TRIANGLES),
        ];
        for (&count, (what, limit)) in counts.iter().zip(limits) {
            if count > limit as u64 {
                return Err(MeshError::TooMany { what, count, limit });
            }
        }
        let expected = 24
            + 4 * (3 * counts[0] + 3 * counts[1] + 2 * counts[2] + 4 * counts[3] + 12 * counts[4]);
        if bytes.len() as u64 != expected {
            return Err(MeshError::Length {
                expected,
                got: bytes.len() as u64,
            });
        }
        let mut at = 24;
        let mut next = || {
            let w = word(at);
            at += 4;
            w
        };
        fn floats<const N: usize>(
            what: &'static str,
            count: u64,
            next: &mut impl FnMut() -> u32,
        ) -> Result<Vec<[f32; N]>, MeshError> {
            (0..count as usize)
                .map(|index| {
                    let v: [f32; N] = std::array::from_fn(|_| f32::from_bits(next()));
                    if v.iter().all(|x| x.is_finite()) {
                        Ok(v)
                    } else {
                        Err(MeshError::NotFinite { what, index })
                    }
                })
                .collect()
        }
        let positions = floats::<3>("position", counts[0], &mut next)?;
        let normals = floats::<3>("normal", counts[1], &mut next)?;
        let uvs = floats::<2>("UV", counts[2], &mut next)?;
        let colors = floats::<4>("color", counts[3], &mut next)?;
        let lens = [positions.len(), normals.len(), uvs.len(), colors.len()];
        let whats = ["position", "normal", "UV", "color"];
        let mut triangles = Vec::with_capacity(counts[4] as usize);
        for triangle in 0..counts[4] as usize {
            let mut ids = [[0u32; 3]; 4];
            for (k, corner) in ids.iter_mut().enumerate() {
                for index in corner.iter_mut() {
                    *index = next();
                    if *index as usize >= lens[k] {
                        return Err(MeshError::Index {
                            what: whats[k],
                            triangle,
                            index: *index,
                            len: lens[k],
                        });
                    }
                }
            }
            triangles.push(Triangle {
                vertices: ids[0],
                normals: ids[1],
                uvs: ids[2],
                colors: ids[3],
            });
        }
        Ok(TriangleMesh {
            positions,
            normals,
            uvs,
            colors,
            triangles,
        })
    }

    /// The attribute text: base64 of [`TriangleMesh::encode`].
    pub fn to_attribute(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.encode())
    }

    /// Reads the attribute text written by [`TriangleMesh::to_attribute`].
    pub fn from_attribute(text: &str) -> Result<TriangleMesh, MeshError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| MeshError::Base64(e.to_string()))?;
        TriangleMesh::decode(&bytes)
    }
}

/// The unit normal of triangle `p` (counter-clockwise front), +Y when it has no area.
fn face_normal(p: [[f32; 3]; 3]) -> [f32; 3] {
    let e1: [f32; 3] = std::array::from_fn(|k| p[1][k] - p[0][k]);
    let e2: [f32; 3] = std::array::from_fn(|k| p[2][k] - p[0][k]);
    let n = [
        e1[1] * e2[2] - e1[2] * e2[1],
        e1[2] * e2[0] - e1[0] * e2[2],
        e1[0] * e2[1] - e1[1] * e2[0],
    ];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    if len > 0.0 && len.is_finite() {
        n.map(|x| x / len)
    } else {
        [0.0, 1.0, 0.0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn quad() -> TriangleMesh {
        TriangleMesh {
            positions: vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [1.0, 1.0, 0.0],
                [0.0, 1.0, 0.0],
            ],
            normals: vec![[0.0, 0.0, 1.0]],
            uvs: vec![[0.0, 0.0], [1.0, 1.0]],
            colors: vec![[1.0, 0.5, 0.25, 1.0]],
            triangles: vec![
                Triangle {
                    vertices: [0, 1, 2],
                    normals: [0; 3],
                    uvs: [0, 1, 1],
                    colors: [0; 3],
                },
                Triangle {
                    vertices: [0, 2, 3],
                    normals: [0; 3],
                    uvs: [0, 1, 0],
                    colors: [0; 3],
                },
            ],
        }
    }

    #[test]
    fn a_mesh_survives_its_attribute() {
        let m = quad();
        let text = m.to_attribute();
        assert!(text.is_ascii());
        assert_eq!(TriangleMesh::from_attribute(&text).unwrap(), m);
        assert_eq!(m.bounds(), Some(([0.0; 3], [1.0, 1.0, 0.0])));
        assert_eq!(TriangleMesh::default().bounds(), None);
    }

    #[test]
    fn bad_data_is_refused_with_what_is_wrong() {
        let bytes = quad().encode();
        assert_eq!(TriangleMesh::decode(&bytes[..10]), Err(MeshError::Magic));
        let err = TriangleMesh::decode(&bytes[..bytes.len() - 1]).unwrap_err();
        assert!(matches!(err, MeshError::Length { .. }), "{err}");
        // The second triangle's first UV index (after 2 × 12 − 3 … words) out of range.
        let mut b = bytes.clone();
        let last_triangle = b.len() - 48;
        b[last_triangle + 24..last_triangle + 28].copy_from_slice(&7u32.to_le_bytes());
        let err = TriangleMesh::decode(&b).unwrap_err();
        assert_eq!(
            err.to_string(),
            "triangle 1 refers to UV 7, but the mesh has 2"
        );
        let mut b = bytes.clone();
        b[24..28].copy_from_slice(&f32::NAN.to_le_bytes());
        assert_eq!(
            TriangleMesh::decode(&b).unwrap_err().to_string(),
            "position 0 of the mesh is not finite"
        );
        let mut b = bytes;
        b[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            TriangleMesh::decode(&b),
            Err(MeshError::TooMany { .. })
        ));
        assert!(matches!(
            TriangleMesh::from_attribute("not base64!"),
            Err(MeshError::Base64(_))
        ));
    }

    #[test]
    fn indexed_shares_corners_that_agree_and_fills_in_zero_normals() {
        let mut m = quad();
        // Both triangles use normal 0, color 0; they share vertex 0 (UV 0) and vertex 2
        // (UV 1); the second triangle's vertex 3 has UV 0.
        let (v, i) = m.indexed();
        assert_eq!(v.len(), 4);
        assert_eq!(i, [0, 1, 2, 0, 2, 3]);
        assert_eq!(v[3].uv, [0.0, 0.0]);
        // Another UV for a shared corner splits it.
        m.triangles[1].uvs = [1, 1, 0];
        assert_eq!(m.indexed().0.len(), 5);
        // A zero normal is the face's: counter-clockwise seen from +Z faces +Z.
        m.normals[0] = [0.0; 3];
        assert!(m.indexed().0.iter().all(|v| v.normal == [0.0, 0.0, 1.0]));
        assert_eq!(
            m.center_and_size(),
            Some(([0.5, 0.5, 0.0], [1.0, 1.0, 0.0]))
        );
    }

    proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let mut b = MAGIC.to_vec();
            b.extend(bytes);
            let _ = TriangleMesh::decode(&b);
        }
    }
}
