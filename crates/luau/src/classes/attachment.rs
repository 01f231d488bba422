//! Attachment's deprecated axis methods (Roblox reference): `GetAxis`/`SetAxis` and
//! `GetSecondaryAxis`/`SetSecondaryAxis`, the `Axis` and `SecondaryAxis` properties read
//! and written through the ordinary property paths (derived from the saved CFrame).

use crate::methods::MethodTable;
use mlua::Value;

const AXIS_LUAU: &str = r#"
return function(attachment, property, value)
    if value == nil then
        return attachment[property]
    end
    attachment[property] = value
    return nil
end
"#;

pub fn register(m: &mut MethodTable) {
    m.class("Attachment");
    for (name, property, set) in [
        ("GetAxis", "Axis", false),
        ("SetAxis", "Axis", true),
        ("GetSecondaryAxis", "SecondaryAxis", false),
        ("SetSecondaryAxis", "SecondaryAxis", true),
    ] {
        m.add_method(name, move |lua, this, value: Value| {
            if set && !matches!(value, Value::Vector(_)) {
                return Err(mlua::Error::runtime(format!(
                    "Attachment:{name}: expected a Vector3, got {}",
                    procmodel_luau_types::type_name(&value)
                )));
            }
            crate::methods::call_luau_method::<_, _, Value>(
                lua,
                this,
                ("procmodel.attachment_axis", "=[Attachment]", AXIS_LUAU),
                || Ok(()),
                (property, if set { value } else { Value::Nil }),
            )
        });
    }
}
