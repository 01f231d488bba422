//! The 23 terrain materials: SmoothGrid indices, `Enum.Material` values, names, default colours
//! and the 69-byte `Terrain.MaterialColors` blob codec.

use crate::error::TerrainError;

macro_rules! materials {
    ($( $name:ident = $index:literal, $enum_value:literal, [$r:literal, $g:literal, $b:literal]; )*) => {
        /// A terrain material. The discriminant is the `Terrain.SmoothGrid` material index.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[repr(u8)]
        pub enum Material {
            #[default]
            $( #[doc = concat!("`Enum.Material.", stringify!($name), "` (", stringify!($enum_value), ").")] $name = $index, )*
        }

        impl Material {
            /// Every terrain material, in SmoothGrid index order (Air = 0 … Pavement = 22).
            pub const ALL: [Material; 23] = [$(Material::$name),*];

            /// The `Enum.Material` numeric value (what `ReadVoxels` returns as an EnumItem).
            pub const fn enum_value(self) -> u16 {
                match self { $(Material::$name => $enum_value,)* }
            }

            /// The `Enum.Material` name.
            pub const fn name(self) -> &'static str {
                match self { $(Material::$name => stringify!($name),)* }
            }

            /// Roblox's default terrain colour (RGB 0..255): `Terrain.MaterialColors` defaults,
            /// Air white and Water the default `WaterColor`.
            pub const fn default_color(self) -> [u8; 3] {
                match self { $(Material::$name => [$r, $g, $b],)* }
            }

            /// The material of an `Enum.Material` value; any non-terrain material (Plastic,
            /// Neon, …) or unknown value is [`TerrainError::NotTerrainMaterial`].
            pub fn from_enum_value(value: u32) -> Result<Material, TerrainError> {
                match value {
                    $($enum_value => Ok(Material::$name),)*
                    _ => Err(TerrainError::NotTerrainMaterial(value.to_string())),
                }
            }

            /// The material of an `Enum.Material` name (exact spelling, e.g. `"LeafyGrass"`).
            pub fn from_name(name: &str) -> Result<Material, TerrainError> {
                match name {
                    $(stringify!($name) => Ok(Material::$name),)*
                    _ => Err(TerrainError::NotTerrainMaterial(format!("{name:?}"))),
                }
            }
        }
    };
}

materials! {
    Air = 0, 1792, [255, 255, 255];
    Water = 1, 2048, [12, 84, 92];
    Grass = 2, 1280, [106, 127, 63];
    Slate = 3, 800, [63, 127, 107];
    Concrete = 4, 816, [127, 102, 63];
    Brick = 5, 848, [138, 86, 62];
    Sand = 6, 1296, [143, 126, 95];
    WoodPlanks = 7, 528, [139, 109, 79];
    Rock = 8, 896, [102, 108, 111];
    Glacier = 9, 1552, [101, 176, 234];
    Snow = 10, 1328, [195, 199, 218];
    Sandstone = 11, 912, [137, 90, 71];
    Mud = 12, 1344, [58, 46, 36];
    Basalt = 13, 788, [30, 30, 37];
    Ground = 14, 1360, [102, 92, 59];
    CrackedLava = 15, 804, [232, 156, 74];
    Asphalt = 16, 1376, [115, 123, 107];
    Cobblestone = 17, 880, [132, 123, 90];
    Ice = 18, 1536, [129, 194, 224];
    LeafyGrass = 19, 1284, [115, 132, 74];
    Salt = 20, 1392, [198, 189, 181];
    Limestone = 21, 820, [206, 173, 148];
    Pavement = 22, 836, [148, 148, 140];
}

impl Material {
    /// The material of a SmoothGrid index (0..=22).
    pub fn from_index(index: u8) -> Option<Material> {
        Material::ALL.get(usize::from(index)).copied()
    }

    /// The SmoothGrid material index.
    pub const fn index(self) -> u8 {
        self as u8
    }

    /// Whether this is a solid material (neither Air nor Water).
    pub const fn is_solid(self) -> bool {
        !matches!(self, Material::Air | Material::Water)
    }
}

/// The 21 solid materials whose colours `Terrain.MaterialColors` stores, in blob order.
pub const MATERIAL_COLORS_ORDER: [Material; 21] = [
    Material::Grass,
    Material::Slate,
    Material::Concrete,
    Material::Brick,
    Material::Sand,
    Material::WoodPlanks,
    Material::Rock,
    Material::Glacier,
    Material::Snow,
    Material::Sandstone,
    Material::Mud,
    Material::Basalt,
    Material::Ground,
    Material::CrackedLava,
    Material::Asphalt,
    Material::Cobblestone,
    Material::Ice,
    Material::LeafyGrass,
    Material::Salt,
    Material::Limestone,
    Material::Pavement,
];

/// Length of a `Terrain.MaterialColors` blob: 2 reserved RGB triplets + 21 colours.
pub const MATERIAL_COLORS_LEN: usize = 69;

/// Per-material colours (`GetMaterialColor`/`SetMaterialColor`), indexed by SmoothGrid index.
/// Air and Water entries are carried but not stored in the blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaterialColors(pub [[u8; 3]; 23]);

impl Default for MaterialColors {
    fn default() -> Self {
        MaterialColors(Material::ALL.map(Material::default_color))
    }
}

impl MaterialColors {
    /// The colour of a material.
    pub fn get(&self, m: Material) -> [u8; 3] {
        self.0[usize::from(m.index())]
    }

    /// Sets the colour of a material.
    pub fn set(&mut self, m: Material, rgb: [u8; 3]) {
        self.0[usize::from(m.index())] = rgb;
    }

    /// The 69-byte blob: `00 00 00 00 00 00` then 21 RGB triplets in [`MATERIAL_COLORS_ORDER`].
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0u8; 6];
        for m in MATERIAL_COLORS_ORDER {
            out.extend_from_slice(&self.get(m));
        }
        out
    }

    /// Decodes a blob; any length but 69 is an error. The reserved triplets are ignored;
    /// Air and Water keep their defaults.
    pub fn decode(bytes: &[u8]) -> Result<MaterialColors, TerrainError> {
        if bytes.len() != MATERIAL_COLORS_LEN {
            return Err(TerrainError::MaterialColorsLength(bytes.len()));
        }
        let mut c = MaterialColors::default();
        for (i, m) in MATERIAL_COLORS_ORDER.iter().enumerate() {
            let o = 6 + 3 * i;
            c.set(*m, [bytes[o], bytes[o + 1], bytes[o + 2]]);
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_and_enum_values_round_trip() {
        for (i, m) in Material::ALL.iter().enumerate() {
            assert_eq!(usize::from(m.index()), i);
            assert_eq!(Material::from_index(i as u8), Some(*m));
            assert_eq!(
                Material::from_enum_value(u32::from(m.enum_value())).unwrap(),
                *m
            );
            assert_eq!(Material::from_name(m.name()).unwrap(), *m);
        }
        assert_eq!(Material::from_index(23), None);
        assert_eq!(Material::Pavement.index(), 22);
        assert_eq!(Material::LeafyGrass.enum_value(), 1284);
        // Plastic (256) is not a terrain material.
        let e = Material::from_enum_value(256).unwrap_err();
        assert_eq!(e.to_string(), "invalid terrain material 256");
    }

    #[test]
    fn material_colors_blob() {
        let c = MaterialColors::default();
        let b = c.encode();
        assert_eq!(b.len(), 69);
        assert_eq!(&b[..9], &[0, 0, 0, 0, 0, 0, 106, 127, 63]);
        assert_eq!(&b[66..], &[148, 148, 140]);
        let mut c2 = c.clone();
        c2.set(Material::Rock, [1, 2, 3]);
        let d = MaterialColors::decode(&c2.encode()).unwrap();
        assert_eq!(d, c2);
        assert!(matches!(
            MaterialColors::decode(&b[..68]),
            Err(TerrainError::MaterialColorsLength(68))
        ));
    }
}
