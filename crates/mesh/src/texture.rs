//! The image a part carries for a Content property set to an `EditableImage`
//! (`MeshPart.TextureContent = Content.fromObject(image)`): RGBA pixels, 8 bits a channel,
//! rows top to bottom, as `EditableImage:ReadPixelsBuffer` gives them.
//!
//! It travels as a string attribute named after the property ([`attribute_name`]: the
//! property's name without its `Content` suffix after `Procmodel`, so `ProcmodelTexture`
//! for `TextureContent`), holding a PNG file in standard base64. PNG because every viewer
//! reads it and glTF embeds it as it is; the encoder's settings are fixed here, so the same
//! pixels give the same bytes.

use base64::Engine as _;

/// Roblox's largest `EditableImage` side, in pixels.
pub const MAX_SIDE: u32 = 1024;

/// Prefix of the attributes that hold images.
pub const PREFIX: &str = "Procmodel";

/// What the texture attribute of a part held, when it could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TextureError {
    #[error("the image attribute is not base64 ({0})")]
    Base64(String),
    #[error("the image attribute is not a PNG file ({0})")]
    Png(String),
    #[error("the image is {width}×{height} pixels; each side must be 1 to {MAX_SIDE}")]
    Size { width: u32, height: u32 },
}

/// An image: `width × height` RGBA pixels, rows top to bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Texture {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

/// The attribute that holds the image of Content property `property`, or None for a
/// property that is not a Content property by its name.
pub fn attribute_name(property: &str) -> Option<String> {
    let stem = property.strip_suffix("Content")?;
    (!stem.is_empty()).then(|| format!("{PREFIX}{stem}"))
}

impl Texture {
    /// A texture over `rgba`, which must hold `width × height × 4` bytes.
    pub fn new(width: u32, height: u32, rgba: Vec<u8>) -> Result<Texture, TextureError> {
        if !(1..=MAX_SIDE).contains(&width) || !(1..=MAX_SIDE).contains(&height) {
            return Err(TextureError::Size { width, height });
        }
        assert_eq!(
            rgba.len(),
            width as usize * height as usize * 4,
            "RGBA bytes"
        );
        Ok(Texture {
            width,
            height,
            rgba,
        })
    }

    /// The image as a PNG file (8-bit RGBA, no interlacing, fixed compression and filter).
    pub fn to_png(&self) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut e = png::Encoder::new(&mut out, self.width, self.height);
            e.set_color(png::ColorType::Rgba);
            e.set_depth(png::BitDepth::Eight);
            e.set_compression(png::Compression::Fast);
            e.set_filter(png::Filter::Paeth);
            let mut w = e.write_header().expect("writing to memory");
            w.write_image_data(&self.rgba)
                .expect("the size was checked");
        }
        out
    }

    /// Reads a PNG file of any colour type and depth a PNG decoder expands to 8-bit RGB(A) or
    /// grey, as RGBA; each side at most [`MAX_SIDE`].
    pub fn from_png(bytes: &[u8]) -> Result<Texture, TextureError> {
        let bad = |e: png::DecodingError| TextureError::Png(e.to_string());
        let mut d = png::Decoder::new(std::io::Cursor::new(bytes));
        d.set_transformations(png::Transformations::normalize_to_color8());
        let header = d.read_header_info().map_err(bad)?;
        let (width, height) = (header.width, header.height);
        if !(1..=MAX_SIDE).contains(&width) || !(1..=MAX_SIDE).contains(&height) {
            return Err(TextureError::Size { width, height });
        }
        let mut reader = d.read_info().map_err(bad)?;
        let mut buf = vec![
            0;
            reader.output_buffer_size().ok_or_else(|| {
                TextureError::Png("the image is too large to decode".to_owned())
            })?
        ];
        let info = reader.next_frame(&mut buf).map_err(bad)?;
        let pixels = width as usize * height as usize;
        let data = &buf[..info.buffer_size()];
        let rgba = match info.color_type {
            png::ColorType::Rgba => data.to_vec(),
            png::ColorType::Rgb => data
                .chunks_exact(3)
                .flat_map(|p| [p[0], p[1], p[2], 255])
                .collect(),
            png::ColorType::GrayscaleAlpha => data
                .chunks_exact(2)
                .flat_map(|p| [p[0], p[0], p[0], p[1]])
                .collect(),
            png::ColorType::Grayscale => data.iter().flat_map(|&g| [g, g, g, 255]).collect(),
            png::ColorType::Indexed => {
                return Err(TextureError::Png(
                    "an indexed image was not expanded".to_owned(),
                ));
            }
        };
        if rgba.len() != pixels * 4 {
            return Err(TextureError::Png(format!(
                "{} bytes of pixels for {width}×{height}",
                rgba.len()
            )));
        }
        Ok(Texture {
            width,
            height,
            rgba,
        })
    }

    /// The attribute text: the PNG in standard base64.
    pub fn to_attribute(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.to_png())
    }

    /// Reads an attribute written by [`Texture::to_attribute`] (or any PNG in base64).
    pub fn from_attribute(text: &str) -> Result<Texture, TextureError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| TextureError::Base64(e.to_string()))?;
        Texture::from_png(&bytes)
    }

    /// The pixels composited over an opaque `color` (sRGB 0–1), as Roblox shows a MeshPart's
    /// texture over its `Color`: every pixel opaque.
    pub fn over_color(&self, color: [f32; 3]) -> Texture {
        let bg = color.map(|c| c.clamp(0.0, 1.0) * 255.0);
        let rgba = self
            .rgba
            .chunks_exact(4)
            .flat_map(|p| {
                let a = p[3] as f32 / 255.0;
                let mix = |i: usize| (p[i] as f32 * a + bg[i] * (1.0 - a)).round() as u8;
                [mix(0), mix(1), mix(2), 255]
            })
            .collect();
        Texture {
            width: self.width,
            height: self.height,
            rgba,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(w: u32, h: u32) -> Texture {
        let rgba = (0..w * h)
            .flat_map(|i| [(i * 7) as u8, (i * 13) as u8, (i * 29) as u8, (i * 3) as u8])
            .collect();
        Texture::new(w, h, rgba).unwrap()
    }

    #[test]
    fn an_image_round_trips_through_its_attribute_with_the_same_bytes() {
        let t = sample(37, 5);
        let text = t.to_attribute();
        assert_eq!(Texture::from_attribute(&text).unwrap(), t);
        assert_eq!(
            sample(37, 5).to_attribute(),
            text,
            "same pixels, same bytes"
        );
    }

    #[test]
    fn attribute_names_follow_the_property() {
        assert_eq!(
            attribute_name("TextureContent").as_deref(),
            Some("ProcmodelTexture")
        );
        assert_eq!(
            attribute_name("ColorMapContent").as_deref(),
            Some("ProcmodelColorMap")
        );
        assert_eq!(attribute_name("Content"), None);
        assert_eq!(attribute_name("TextureID"), None);
    }

    #[test]
    fn garbage_and_oversized_images_are_refused() {
        assert!(matches!(
            Texture::from_attribute("not base64 !"),
            Err(TextureError::Base64(_))
        ));
        assert!(matches!(
            Texture::from_attribute("aGVsbG8="),
            Err(TextureError::Png(_))
        ));
        let big = Texture {
            width: 1025,
            height: 1,
            rgba: vec![0; 1025 * 4],
        };
        let text = big.to_attribute();
        assert_eq!(
            Texture::from_attribute(&text),
            Err(TextureError::Size {
                width: 1025,
                height: 1
            })
        );
        // A truncated file.
        let png = sample(8, 8).to_png();
        assert!(Texture::from_png(&png[..png.len() / 2]).is_err());
        assert_eq!(
            Texture::new(0, 4, Vec::new()),
            Err(TextureError::Size {
                width: 0,
                height: 4
            })
        );
    }

    proptest::proptest! {
        /// A damaged PNG (flipped bytes, a cut) is refused or decoded, never a panic; what
        /// decodes is within the limits.
        #[test]
        fn damaged_images_never_panic(
            flips in proptest::collection::vec((0usize..4096, 0u8..=255), 0..8),
            cut in 0usize..4096,
        ) {
            let mut png = sample(23, 17).to_png();
            for (at, byte) in flips {
                let n = png.len();
                png[at % n] ^= byte;
            }
            png.truncate(cut.max(8));
            if let Ok(t) = Texture::from_png(&png) {
                proptest::prop_assert!(t.width <= MAX_SIDE && t.height <= MAX_SIDE);
                proptest::prop_assert_eq!(t.rgba.len(), t.width as usize * t.height as usize * 4);
            }
        }
    }

    #[test]
    fn compositing_over_the_part_colour_keeps_opaque_pixels_and_fills_clear_ones() {
        let t = Texture::new(2, 1, vec![10, 20, 30, 255, 200, 200, 200, 0]).unwrap();
        let o = t.over_color([1.0, 0.0, 0.5]);
        assert_eq!(o.rgba, vec![10, 20, 30, 255, 255, 0, 128, 255]);
    }
}
