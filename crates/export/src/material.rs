//! Roblox surface appearance (Color, Transparency, Enum.Material) mapped to a
//! metallic-roughness PBR approximation shared by the glTF and OBJ writers.

use std::collections::HashMap;
use std::sync::OnceLock;

/// The appearance a part is exported with. Parts with equal appearance share
/// one material.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Appearance {
    /// sRGB colour in 0..=1, as Roblox stores `Color3`.
    pub color: [f32; 3],
    /// 0 = opaque, 1 = invisible.
    pub transparency: f32,
    /// `Enum.Material` value.
    pub material: u32,
    /// Both faces drawn (`MeshPart.DoubleSided`).
    pub double_sided: bool,
    /// The scene's texture painting it (an `EditableImage`'s pixels on a MeshPart), and
    /// whether its alpha makes the part see-through (else it is composited over `color`).
    pub texture: Option<(u32, bool)>,
}

impl Appearance {
    /// Bit-exact identity used to deduplicate materials.
    pub fn key(&self) -> ([u32; 3], u32, u32, bool, Option<(u32, bool)>) {
        // `+ 0.0` folds -0 into 0 so they share a material.
        (
            self.color.map(|c| (c + 0.0).to_bits()),
            (self.transparency + 0.0).to_bits(),
            self.material,
            self.double_sided,
            self.texture,
        )
    }

    pub fn alpha(&self) -> f32 {
        1.0 - self.transparency
    }

    pub fn pbr(&self) -> Pbr {
        pbr_for(material_name(self.material).unwrap_or("Plastic"))
    }

    /// `Enum.Material` name, or `Plastic` for values the reflection database
    /// does not know (the scene walker reports those as warnings).
    pub fn material_name(&self) -> &'static str {
        material_name(self.material).unwrap_or("Plastic")
    }

    /// Linear-light colour for glTF's `baseColorFactor` / `emissiveFactor`.
    pub fn linear_color(&self) -> [f32; 3] {
        self.color.map(srgb_to_linear)
    }

    /// Six lowercase hex digits, like Roblox's `Color3:ToHex()`.
    pub fn hex(&self) -> String {
        let [r, g, b] = self
            .color
            .map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8);
        format!("{r:02x}{g:02x}{b:02x}")
    }
}

/// A metallic-roughness approximation of one Roblox material.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pbr {
    pub metallic: f32,
    pub roughness: f32,
    /// Neon glows in its own colour.
    pub emissive: bool,
}

const fn pbr(metallic: f32, roughness: f32) -> Pbr {
    Pbr {
        metallic,
        roughness,
        emissive: false,
    }
}

/// The approximation table, by `Enum.Material` name. Values are eyeballed from
/// Roblox's material appearance: metals metallic, ice/glass/water smooth,
/// ground-like materials rough, Neon emissive.
fn pbr_for(name: &str) -> Pbr {
    match name {
        "Neon" => Pbr {
            metallic: 0.0,
            roughness: 0.5,
            emissive: true,
        },
        "Metal" => pbr(1.0, 0.35),
        "DiamondPlate" => pbr(1.0, 0.45),
        "Foil" => pbr(1.0, 0.25),
        "CorrodedMetal" => pbr(0.8, 0.8),
        "Glass" => pbr(0.0, 0.05),
        "Water" => pbr(0.0, 0.05),
        "Ice" => pbr(0.0, 0.1),
        "Glacier" => pbr(0.0, 0.15),
        "ForceField" => pbr(0.0, 0.2),
        "SmoothPlastic" => pbr(0.0, 0.4),
        "Marble" | "CeramicTiles" => pbr(0.0, 0.3),
        "Leather" => pbr(0.0, 0.6),
        "Plastic" | "ClayRoofTiles" => pbr(0.0, 0.7),
        "Granite" | "Snow" => pbr(0.0, 0.75),
        "Wood" | "WoodPlanks" | "Slate" | "Limestone" | "Pebble" | "Cobblestone" | "Salt"
        | "Rubber" => pbr(0.0, 0.85),
        "Fabric" | "Carpet" | "Grass" | "LeafyGrass" | "Sand" | "Ground" => pbr(0.0, 1.0),
        // Basalt, CrackedLava, Concrete, Pavement, Brick, Rock, Sandstone, Mud,
        // Asphalt, Cardboard, RoofShingles, Plaster, Air and anything newer.
        _ => pbr(0.0, 0.9),
    }
}

/// `Enum.Material` value → name, from the bundled reflection database (never a
/// local override, so output does not depend on the machine).
pub(crate) fn material_name(value: u32) -> Option<&'static str> {
    static NAMES: OnceLock<HashMap<u32, &'static str>> = OnceLock::new();
    NAMES
        .get_or_init(|| {
            let db = rbx_reflection_database::get_bundled();
            db.enums
                .get("Material")
                .map(|e| {
                    e.items
                        .iter()
                        .map(|(name, value)| (*value, *name))
                        .collect()
                })
                .unwrap_or_default()
        })
        .get(&value)
        .copied()
}

/// The name of item `value` of enum `enum_name`, from the bundled reflection database.
pub(crate) fn enum_item_name(enum_name: &str, value: u32) -> Option<&'static str> {
    let db = rbx_reflection_database::get_bundled();
    let e = db.enums.get(enum_name)?;
    e.items.iter().find(|(_, v)| **v == value).map(|(n, _)| *n)
}

pub(crate) fn srgb_to_linear(c: f32) -> f32 {
    let c = c.clamp(0.0, 1.0);
    if c <= 0.040_45 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_name(name: &str) -> u32 {
        let db = rbx_reflection_database::get_bundled();
        db.enums["Material"].items[name]
    }

    #[test]
    fn names_come_from_the_reflection_database() {
        assert_eq!(material_name(256), Some("Plastic"));
        assert_eq!(material_name(by_name("Neon")), Some("Neon"));
        assert_eq!(material_name(12345), None);
    }

    #[test]
    fn metals_are_metallic_glass_is_smooth_neon_glows() {
        let look = |name: &str| {
            Appearance {
                color: [1.0; 3],
                transparency: 0.0,
                material: by_name(name),
                double_sided: false,
                texture: None,
            }
            .pbr()
        };
        for metal in ["Metal", "DiamondPlate", "CorrodedMetal", "Foil"] {
            assert!(look(metal).metallic > 0.5, "{metal}");
        }
        for smooth in ["Glass", "Ice"] {
            assert!(look(smooth).roughness < 0.2, "{smooth}");
        }
        assert!(look("Neon").emissive);
        assert!(!look("Plastic").emissive);
        assert_eq!(look("Plastic").metallic, 0.0);
    }

    #[test]
    fn colour_conversion() {
        assert_eq!(srgb_to_linear(0.0), 0.0);
        assert_eq!(srgb_to_linear(1.0), 1.0);
        assert!((srgb_to_linear(0.5) - 0.214_041).abs() < 1e-5);
        let a = Appearance {
            color: [163.0 / 255.0, 162.0 / 255.0, 165.0 / 255.0],
            transparency: 0.0,
            material: 256,
            double_sided: false,
            texture: None,
        };
        assert_eq!(a.hex(), "a3a2a5");
    }
}
