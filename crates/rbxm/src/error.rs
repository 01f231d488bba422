use std::io;

use rbx_dom_weak::types::Ref;

/// Why a DOM could not be written. The cases and messages mirror `rbx_binary`'s
/// serializer errors, so a failing write fails here too and names the same
/// instance (its full name, `.`-separated) and property.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The output writer failed.
    #[error(transparent)]
    Io(#[from] io::Error),

    /// A property value's type is not one its binary column can hold.
    #[error(
        "Property type mismatch: Expected {type_name}.{prop_name} to be of type {valid_type_names}, \
        but it was of type {actual_type_name} on instance {instance_full_name}"
    )]
    PropTypeMismatch {
        type_name: String,
        prop_name: String,
        valid_type_names: &'static str,
        actual_type_name: String,
        instance_full_name: String,
    },

    /// The property's type has no binary encoding (or no default value to fill
    /// instances that lack it).
    #[error("Unsupported property type: {type_name}.{prop_name} is of type {prop_type}")]
    UnsupportedPropType {
        type_name: String,
        prop_name: String,
        prop_type: String,
    },

    /// The value has the right type but cannot be encoded (bad attributes, an
    /// unknown kind of `Content`).
    #[error(
        "Invalid property value: The instance {instance_full_name} had a property \
        ({type_name}.{prop_name}) of type {prop_type} with a value that could \
        not be written."
    )]
    InvalidPropValue {
        instance_full_name: String,
        type_name: String,
        prop_name: String,
        prop_type: String,
    },

    /// A root passed to the writer is not in the DOM.
    #[error("The instance with referent {referent:?} was not present in the dom.")]
    InvalidInstanceId { referent: Ref },

    /// `rbx_reflection_database::get()` failed (a local database file exists
    /// but is invalid). `rbx_binary` panics here.
    #[error("could not load the reflection database: {0}")]
    Database(#[from] rbx_reflection_database::Error),
}
