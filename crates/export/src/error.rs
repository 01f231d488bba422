//! Errors and warnings reported while exporting a DOM subtree.

use std::fmt;

/// An export failed. The message names the instance (`GetFullName` style,
/// e.g. `Model.Part`) or the option that caused it.
///
/// The variants behind this type are private so they can evolve without
/// breaking callers; match on the message or use [`ExportError::instance_path`].
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ExportError(Box<ErrorKind>);

impl ExportError {
    /// The `GetFullName`-style path of the instance the error is about, if any.
    pub fn instance_path(&self) -> Option<&str> {
        match &*self.0 {
            ErrorKind::PropertyType { path, .. }
            | ErrorKind::NotFinite { path, .. }
            | ErrorKind::NotARotation { path } => Some(path),
            ErrorKind::MissingRoot { .. }
            | ErrorKind::InvalidOption { .. }
            | ErrorKind::TooLarge { .. } => None,
        }
    }
}

impl From<ErrorKind> for ExportError {
    fn from(kind: ErrorKind) -> Self {
        Self(Box::new(kind))
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ErrorKind {
    #[error("root {referent} is not an instance of the DOM")]
    MissingRoot { referent: String },
    #[error("{path}: property `{property}` is {given}, expected {expected}")]
    PropertyType {
        path: String,
        property: &'static str,
        expected: &'static str,
        given: String,
    },
    #[error("{path}: property `{property}` is not finite")]
    NotFinite {
        path: String,
        property: &'static str,
    },
    #[error("{path}: property `CFrame` is not a rotation (orthonormal, right-handed)")]
    NotARotation { path: String },
    #[error("invalid export option `{option}`: {reason}")]
    InvalidOption {
        option: &'static str,
        reason: String,
    },
    #[error("{what} exceeds the {limit} limit of the format")]
    TooLarge {
        what: &'static str,
        limit: &'static str,
    },
}

/// Something the export could not represent faithfully; the output is still valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportWarning {
    /// `GetFullName`-style path of the instance concerned.
    pub path: String,
    /// What was approximated or left out.
    pub kind: WarningKind,
}

/// The reason for an [`ExportWarning`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WarningKind {
    /// A part whose real geometry lives in an asset (MeshPart, unions) was
    /// exported as its bounding box.
    BoundingBoxOnly { class: String },
    /// A part class with no geometry this exporter can produce (Terrain,
    /// NegateOperation); its node is kept without a mesh.
    GeometrySkipped { class: String },
    /// An instance that changes a part's look in Roblox (SpecialMesh, Decal,
    /// SurfaceAppearance, ...) and is ignored here.
    AppearanceIgnored { class: String },
    /// A SurfaceGui or BillboardGui (a sign's text, a label over a part): glTF has no GUI,
    /// so it is left out.
    GuiNotDrawn { class: String },
    /// An `Enum.Material` value the reflection database does not know; Plastic is used.
    UnknownMaterial { value: u32 },
    /// An `Enum.PartType` value the exporter does not know; Block is used.
    UnknownShape { value: u32 },
    /// A MeshPart's script-built mesh attribute that is not a mesh; its bounding box is used.
    InvalidMesh { reason: String },
    /// A part's image attribute (an `EditableImage` it showed) that is not an image; the
    /// part is drawn untextured.
    InvalidTexture { attribute: String, reason: String },
    /// A light glTF has no exact counterpart for (a SurfaceLight on a part shines from a
    /// whole face): exported as a spot light at the face's centre.
    LightApproximated { class: String },
}

impl fmt::Display for ExportWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.path)?;
        match &self.kind {
            WarningKind::BoundingBoxOnly { class } => {
                write!(
                    f,
                    "{class} has no mesh data here, exported as its bounding box"
                )
            }
            WarningKind::GeometrySkipped { class } => {
                write!(
                    f,
                    "{class} geometry is not supported, node exported without a mesh"
                )
            }
            WarningKind::AppearanceIgnored { class } => {
                write!(f, "{class} is not applied to the exported geometry")
            }
            WarningKind::GuiNotDrawn { class } => {
                write!(f, "{class} is not drawn in the export (glTF has no GUI)")
            }
            WarningKind::UnknownMaterial { value } => {
                write!(
                    f,
                    "unknown Enum.Material value {value}, exported as Plastic"
                )
            }
            WarningKind::UnknownShape { value } => {
                write!(f, "unknown Enum.PartType value {value}, exported as Block")
            }
            WarningKind::InvalidMesh { reason } => write!(
                f,
                "its {} attribute is not a usable mesh ({reason}), exported as its bounding box",
                procmodel_mesh::ATTRIBUTE
            ),
            WarningKind::InvalidTexture { attribute, reason } => write!(
                f,
                "its {attribute} attribute is not a usable image ({reason}), exported untextured"
            ),
            WarningKind::LightApproximated { class } => write!(
                f,
                "{class} shines from a whole face, exported as a spot light at the face's centre"
            ),
        }
    }
}
