//! Binary property type ids and the `VariantType` → binary type mapping, as in
//! `rbx_binary`'s `types.rs`.

use rbx_dom_weak::types::VariantType;

/// A PROP chunk's type byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Type {
    String = 0x01,
    Bool = 0x02,
    Int32 = 0x03,
    Float32 = 0x04,
    Float64 = 0x05,
    UDim = 0x06,
    UDim2 = 0x07,
    Ray = 0x08,
    Faces = 0x09,
    Axes = 0x0A,
    BrickColor = 0x0B,
    Color3 = 0x0C,
    Vector2 = 0x0D,
    Vector3 = 0x0E,
    CFrame = 0x10,
    Enum = 0x12,
    Ref = 0x13,
    Vector3int16 = 0x14,
    NumberSequence = 0x15,
    ColorSequence = 0x16,
    NumberRange = 0x17,
    Rect = 0x18,
    PhysicalProperties = 0x19,
    Color3uint8 = 0x1A,
    Int64 = 0x1B,
    SharedString = 0x1C,
    OptionalCFrame = 0x1E,
    UniqueId = 0x1F,
    Font = 0x20,
    SecurityCapabilities = 0x21,
    Content = 0x22,
}

impl Type {
    /// The column type a property of this variant type is written as; `None`
    /// for types the binary format cannot hold (Region3, Region3int16,
    /// Vector2int16, EnumItem and Attributes as a property's own type, ...).
    /// Attributes reach the String column only through the database's
    /// `AttributesSerialize` (BinaryString) declaration, as in rbx_binary.
    pub(crate) fn from_rbx_type(ty: VariantType) -> Option<Type> {
        Some(match ty {
            VariantType::String
            | VariantType::BinaryString
            | VariantType::ContentId
            | VariantType::Tags
            | VariantType::MaterialColors => Type::String,
            VariantType::SharedString | VariantType::NetAssetRef => Type::SharedString,
            VariantType::Bool => Type::Bool,
            VariantType::Int32 => Type::Int32,
            VariantType::Float32 => Type::Float32,
            VariantType::Float64 => Type::Float64,
            VariantType::UDim => Type::UDim,
            VariantType::UDim2 => Type::UDim2,
            VariantType::Ray => Type::Ray,
            VariantType::Faces => Type::Faces,
            VariantType::Axes => Type::Axes,
            VariantType::BrickColor => Type::BrickColor,
            VariantType::Color3 => Type::Color3,
            VariantType::Vector2 => Type::Vector2,
            VariantType::Vector3 => Type::Vector3,
            VariantType::CFrame => Type::CFrame,
            VariantType::Enum => Type::Enum,
            VariantType::Ref => Type::Ref,
            VariantType::Vector3int16 => Type::Vector3int16,
            VariantType::NumberSequence => Type::NumberSequence,
            VariantType::ColorSequence => Type::ColorSequence,
            VariantType::NumberRange => Type::NumberRange,
            VariantType::Rect => Type::Rect,
            VariantType::PhysicalProperties => Type::PhysicalProperties,
            VariantType::Color3uint8 => Type::Color3uint8,
            VariantType::Int64 => Type::Int64,
            VariantType::OptionalCFrame => Type::OptionalCFrame,
            VariantType::UniqueId => Type::UniqueId,
            VariantType::Font => Type::Font,
            VariantType::SecurityCapabilities => Type::SecurityCapabilities,
            VariantType::Content => Type::Content,
            _ => return None,
        })
    }
}
