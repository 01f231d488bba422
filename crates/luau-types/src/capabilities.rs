//! `SecurityCapabilities` (Roblox reference): an immutable set of `Enum.SecurityCapability`
//! items, the value of `Instance.Capabilities` that restricts a sandboxed container's
//! scripts. Bit `n` of the set is the item whose value is `n`, as files store it.
//! `SecurityCapabilities.fromCurrent` (the calling function's own set) is the host's to know
//! and is not installed here.

use mlua::{Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods};

use crate::args::{Args, as_ud, impl_from_lua};
use crate::enums::EnumItem;

/// A Roblox `SecurityCapabilities`: the bit of each capability it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct SecurityCapabilities(pub u64);

impl_from_lua!(SecurityCapabilities => "SecurityCapabilities");

impl From<rbx_types::SecurityCapabilities> for SecurityCapabilities {
    fn from(c: rbx_types::SecurityCapabilities) -> Self {
        SecurityCapabilities(c.bits())
    }
}

impl From<SecurityCapabilities> for rbx_types::SecurityCapabilities {
    fn from(c: SecurityCapabilities) -> Self {
        rbx_types::SecurityCapabilities::from_bits(c.0)
    }
}

/// The bit of a capability item (values run 0..=63).
fn bit(item: &EnumItem) -> u64 {
    1u64.checked_shl(item.value).unwrap_or(0)
}

/// The set the arguments of `func` name: `Enum.SecurityCapability` items (any number) or one
/// `SecurityCapabilities`.
fn set_of(func: &str, a: MultiValue) -> mlua::Result<u64> {
    let n = a.len();
    let args = Args::new(func, a);
    if n == 1
        && let Some(set) = as_ud::<SecurityCapabilities>(args.get(1))
    {
        return Ok(set.0);
    }
    let mut bits = 0;
    for i in 1..=n {
        match as_ud::<EnumItem>(args.get(i)) {
            Some(item) if item.enum_name == "SecurityCapability" => bits |= bit(&item),
            _ => return Err(args.bad(i, "Enum.SecurityCapability")),
        }
    }
    Ok(bits)
}

impl UserData for SecurityCapabilities {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "SecurityCapabilities");
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("Add", |_, s, a: MultiValue| {
            Ok(SecurityCapabilities(s.0 | set_of("Add", a)?))
        });
        m.add_method("Remove", |_, s, a: MultiValue| {
            Ok(SecurityCapabilities(s.0 & !set_of("Remove", a)?))
        });
        m.add_method("Contains", |_, s, a: MultiValue| {
            let want = set_of("Contains", a)?;
            Ok(s.0 & want == want)
        });
        // The item names in value order, as the Properties window lists them.
        m.add_meta_method(MetaMethod::ToString, |_, s, ()| {
            let names: Vec<&str> = EnumItem::all("SecurityCapability")
                .into_iter()
                .filter(|i| s.0 & bit(i) != 0)
                .map(|i| i.name)
                .collect();
            Ok(names.join(", "))
        });
        crate::args::value_meta::<SecurityCapabilities, M>(m, "SecurityCapabilities");
    }
}

/// Installs the `SecurityCapabilities` constructor table.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    crate::args::install_constructor(
        lua,
        "SecurityCapabilities",
        lua.create_function(|_, a: MultiValue| Ok(SecurityCapabilities(set_of("new", a)?)))?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_follow_the_enum_values_and_convert_both_ways() {
        let basic = EnumItem::from_name("SecurityCapability", "Basic").unwrap();
        let create = EnumItem::from_name("SecurityCapability", "CreateInstances").unwrap();
        let set = SecurityCapabilities(bit(&basic) | bit(&create));
        assert_eq!(set.0, (1 << basic.value) | (1 << create.value));
        let rbx: rbx_types::SecurityCapabilities = set.into();
        assert_eq!(SecurityCapabilities::from(rbx), set);
    }
}
