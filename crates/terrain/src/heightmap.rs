//! Heightmap and splat-map exports as bytes: 16-bit grayscale PNG (linear, no gamma chunk),
//! raw R16 little-endian, raw R32 float little-endian, a JSON sidecar, size snapping to
//! 2^n+1 (Unity) or Unreal's recommended sizes, and RGBA8 splat maps (four materials a map).

use crate::error::TerrainError;
use crate::material::Material;
use crate::world::Heightfield;
use serde::Serialize;

/// Unity's heightmap resolutions (2^n + 1).
pub const UNITY_SIZES: [usize; 8] = [33, 65, 129, 257, 513, 1025, 2049, 4097];
/// Unreal Landscape's recommended sizes (components × quads + 1).
pub const UNREAL_SIZES: [usize; 7] = [127, 253, 505, 1009, 2017, 4033, 8129];

/// A size rule for heightmap exports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeSnap {
    /// Keep the size.
    Exact,
    /// The smallest 2^n + 1 ≥ the size (Unity clamps to 33..=4097).
    PowerOfTwoPlusOne,
    /// The smallest of Unreal's recommended sizes ≥ the size.
    Unreal,
}

/// The export size for `n` samples under a rule; too large for the rule is an error.
pub fn snap_size(n: usize, rule: SizeSnap) -> Result<usize, TerrainError> {
    let table: &[usize] = match rule {
        SizeSnap::Exact => return Ok(n),
        SizeSnap::PowerOfTwoPlusOne => &UNITY_SIZES,
        SizeSnap::Unreal => &UNREAL_SIZES,
    };
    table
        .iter()
        .copied()
        .find(|&s| s >= n)
        .ok_or(TerrainError::Config {
            field: "size",
            reason: format!(
                "{n} samples exceed the largest {rule:?} size {}",
                table[table.len() - 1]
            ),
        })
}

/// The height range mapped to 0..65535: the heightfield's own or a fixed one (use one
/// global range for every tile of a tiled export).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HeightRange {
    /// min/max of this heightfield.
    Auto,
    /// Fixed `(min, max)` studs.
    Fixed(f32, f32),
}

/// The JSON sidecar describing a heightmap export.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sidecar {
    /// Pixels along X.
    pub width: usize,
    /// Pixels along Z.
    pub height: usize,
    /// Height (studs) of pixel value 0.
    pub min_height: f32,
    /// Height (studs) of pixel value 65535 (R16/PNG) — R32 stores studs directly.
    pub max_height: f32,
    /// Studs between pixels.
    pub studs_per_pixel: f64,
    /// World X, Z (studs) of pixel (0, 0).
    pub origin: [f64; 2],
    /// Row order: `"north-up"` = row 0 at the smallest Z.
    pub rows: &'static str,
}

/// A heightfield prepared for export: normalised u16 values and the sidecar.
#[derive(Clone, Debug, PartialEq)]
pub struct HeightmapExport {
    /// Values 0..65535, row-major, row 0 = smallest Z.
    pub values: Vec<u16>,
    /// Heights in studs (for R32), same order.
    pub heights: Vec<f32>,
    /// Description.
    pub sidecar: Sidecar,
}

impl HeightmapExport {
    /// Normalises a heightfield: `round((h − min)/(max − min) · 65535)`, clamped; a flat field
    /// maps to 0. `size` pads the grid to a snapped size by repeating the last row/column
    /// (generate the larger rectangle instead to keep real terrain there).
    pub fn new(
        hf: &Heightfield,
        range: HeightRange,
        snap: SizeSnap,
    ) -> Result<HeightmapExport, TerrainError> {
        let [w0, d0] = hf.rect.size;
        if w0 == 0 || d0 == 0 {
            return Err(TerrainError::Config {
                field: "heightfield",
                reason: "is empty".into(),
            });
        }
        let (w, d) = (snap_size(w0, snap)?, snap_size(d0, snap)?);
        let (lo, hi) = match range {
            HeightRange::Auto => hf.range().unwrap_or((0.0, 0.0)),
            HeightRange::Fixed(a, b) => {
                if !(a.is_finite() && b.is_finite() && a <= b) {
                    return Err(TerrainError::Config {
                        field: "range",
                        reason: format!("must be finite with min ≤ max (got {a}..{b})"),
                    });
                }
                (a, b)
            }
        };
        let mut heights = Vec::with_capacity(w * d);
        for z in 0..d {
            for x in 0..w {
                heights.push(hf.at(x.min(w0 - 1), z.min(d0 - 1)));
            }
        }
        let span = f64::from(hi) - f64::from(lo);
        let values = heights
            .iter()
            .map(|&h| {
                if span <= 0.0 {
                    0
                } else {
                    ((f64::from(h) - f64::from(lo)) / span * 65535.0)
                        .round()
                        .clamp(0.0, 65535.0) as u16
                }
            })
            .collect();
        Ok(HeightmapExport {
            values,
            heights,
            sidecar: Sidecar {
                width: w,
                height: d,
                min_height: lo,
                max_height: hi,
                studs_per_pixel: hf.grid,
                origin: [
                    hf.rect.min[0] as f64 * hf.grid,
                    hf.rect.min[1] as f64 * hf.grid,
                ],
                rows: "north-up",
            },
        })
    }

    /// 16-bit grayscale PNG (big-endian samples as PNG requires; no gAMA/sRGB/iCCP chunk).
    pub fn png16(&self) -> Result<Vec<u8>, TerrainError> {
        let data: Vec<u8> = self.values.iter().flat_map(|v| v.to_be_bytes()).collect();
        encode_png(
            &data,
            self.sidecar.width,
            self.sidecar.height,
            png::ColorType::Grayscale,
            png::BitDepth::Sixteen,
        )
    }

    /// Headerless R16, little-endian.
    pub fn r16(&self) -> Vec<u8> {
        self.values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// Headerless R32 float (studs), little-endian.
    pub fn r32(&self) -> Vec<u8> {
        self.heights.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// The sidecar as pretty JSON (stable field order).
    pub fn sidecar_json(&self) -> String {
        serde_json::to_string_pretty(&self.sidecar).unwrap_or_default()
    }
}

fn encode_png(
    data: &[u8],
    w: usize,
    h: usize,
    color: png::ColorType,
    depth: png::BitDepth,
) -> Result<Vec<u8>, TerrainError> {
    let perr = |e: png::EncodingError| TerrainError::Png(e.to_string());
    let (w32, h32) = (
        u32::try_from(w).map_err(|_| TerrainError::Png(format!("width {w} too large")))?,
        u32::try_from(h).map_err(|_| TerrainError::Png(format!("height {h} too large")))?,
    );
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w32, h32);
        enc.set_color(color);
        enc.set_depth(depth);
        let mut wr = enc.write_header().map_err(perr)?;
        wr.write_image_data(data).map_err(perr)?;
        wr.finish().map_err(perr)?;
    }
    Ok(out)
}

/// Splat maps: for each group of four materials of `palette` (in order), an RGBA8 PNG whose
/// channel `k` is 255 where the sample's material is the group's `k`-th material, else 0
/// (hard edges, as Studio's colormap import). Returns the maps and the palette groups.
pub fn splat_maps(
    hf: &Heightfield,
    palette: &[Material],
) -> Result<Vec<(Vec<u8>, Vec<Material>)>, TerrainError> {
    let [w, d] = hf.rect.size;
    let mut out = Vec::new();
    for group in palette.chunks(4) {
        let mut data = vec![0u8; w * d * 4];
        for (i, m) in hf.materials.iter().enumerate() {
            if let Some(k) = group.iter().position(|g| g == m) {
                data[i * 4 + k] = 255;
            }
        }
        out.push((
            encode_png(&data, w, d, png::ColorType::Rgba, png::BitDepth::Eight)?,
            group.to_vec(),
        ));
    }
    Ok(out)
}
