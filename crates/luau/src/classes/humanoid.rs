//! Humanoid methods that mean something without a simulation: `TakeDamage`,
//! `GetAccessories`; and the Teams service's `GetTeams` and `Team:GetPlayers` (nobody joins a
//! headless session).

use crate::context::{Lookup, ctx};
use crate::methods::MethodTable;
use mlua::Value;
use rbx_types::Ref;

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

/// The children of `parent` whose class is `class` (or derives from it), the lookup noted
/// as a read of the scene.
fn children_of_class(lua: &mlua::Lua, parent: Ref, class: &str) -> mlua::Result<mlua::Table> {
    let mut c = ctx(lua)?;
    let children: Vec<Ref> = c
        .dom
        .get_by_ref(parent)
        .map(|i| i.children().to_vec())
        .unwrap_or_default();
    if parent.is_some() {
        c.note_lookup(parent, &children, Lookup::Subtree);
    }
    let found: Vec<Ref> = children
        .into_iter()
        .filter(|&r| {
            c.dom
                .get_by_ref(r)
                .is_some_and(|i| procmodel_dom::is_a(&i.class, class))
        })
        .collect();
    super::instance::push_list(lua, &mut c, &found)
}

pub fn register(m: &mut MethodTable) {
    m.class("Teams");
    // "Only returns Team objects that are parented to the Teams service" (the reference).
    m.add_method("GetTeams", |lua, this, ()| {
        children_of_class(lua, this.r, "Team")
    });
    m.class("Team");
    m.add_method("GetPlayers", |lua, _this, ()| lua.create_table());

    m.class("Humanoid");
    // The Accessories the humanoid's parent (its character) holds, attached or not.
    m.add_method("GetAccessories", |lua, this, ()| {
        let parent = ctx(lua)?
            .dom
            .get_by_ref(this.r)
            .map_or_else(Ref::none, |i| i.parent());
        children_of_class(lua, parent, "Accessory")
    });
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
