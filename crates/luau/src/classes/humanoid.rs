//! Humanoid methods that mean something without a simulation: `TakeDamage`.

use crate::methods::MethodTable;
use mlua::Value;

/// `Humanoid:TakeDamage(amount)` (Roblox reference): lowers Health by `amount` (a negative
/// one raises it) unless a ForceField protects the humanoid — one sharing its parent, one
/// under its HumanoidRootPart, or one under an ancestor other than Workspace. Health is
/// written through the ordinary property path (kept within 0..MaxHealth).
const TAKE_DAMAGE_LUAU: &str = r#"
local function shielded(at)
    return at ~= nil and at:FindFirstChildOfClass("ForceField") ~= nil
end
return function(self, amount)
    if amount ~= amount then
        return -- NaN is no amount: Health stays a number
    end
    local parent = self.Parent
    if shielded(parent) then
        return
    end
    local root = parent and parent:FindFirstChild("HumanoidRootPart")
    if shielded(root) then
        return
    end
    local at = parent and parent.Parent
    while at ~= nil and at ~= workspace and at ~= game do
        if shielded(at) then
            return
        end
        at = at.Parent
    end
    self.Health = math.clamp(self.Health - amount, 0, self.MaxHealth)
end
"#;

pub fn register(m: &mut MethodTable) {
    m.class("Humanoid");
    m.add_method("TakeDamage", |lua, this, amount: Value| {
        let amount = match amount {
            Value::Number(n) => n,
            Value::Integer(n) => n as f64,
            other => {
                return Err(mlua::Error::runtime(format!(
                    "Humanoid:TakeDamage: the amount must be a number, got {}",
                    procmodel_luau_types::type_name(&other)
                )));
            }
        };
        crate::methods::call_luau_method::<_, _, ()>(
            lua,
            this,
            ("procmodel.take_damage", "=[TakeDamage]", TAKE_DAMAGE_LUAU),
            || Ok(()),
            amount,
        )
    });
}
