//! Humanoid methods that mean something without a simulation: `TakeDamage`,
//! `AddAccessory`, `GetAccessories`, `RemoveAccessories`, `BuildRigFromAttachments`,
//! `GetLimb`, `GetBodyPartR15`, `SetStateEnabled`, `GetStateEnabled`, `GetMoveVelocity` (zero:
//! nothing is simulated); `GetPlayingAnimationTracks` (Humanoid, AnimationController,
//! Animator) and `Animator:GetTrackByAnimationId`, which find no track (animations are never
//! loaded); and the Teams service's
//! `GetTeams` and `Team:GetPlayers` (nobody joins a headless session).

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

/// `Humanoid:AddAccessory(accessory)` (Roblox reference): the accessory goes into the
/// humanoid's parent; an Attachment of its Handle that shares its name with an Attachment of
/// the character (in a part, outside the accessory; the first in tree order) is welded to it
/// by a Weld "AccessoryWeld" in the Handle (Part0 the Handle, C0 its attachment, Part1 the
/// character's part, C1 that attachment), with the Handle placed where the two attachments
/// coincide, as the running weld would put it. No such pair leaves it unattached.
const ADD_ACCESSORY_LUAU: &str = r#"
return function(self, accessory)
    if typeof(accessory) ~= "Instance" or not accessory:IsA("Accessory") then
        error(`Humanoid:AddAccessory: the accessory must be an Accessory, got {typeof(accessory) == "Instance" and accessory.ClassName or typeof(accessory)}`, 0)
    end
    local character = self.Parent
    if character == nil then
        error("Humanoid:AddAccessory: the Humanoid has no parent (character) to attach to", 0)
    end
    accessory.Parent = character
    local handle = accessory:FindFirstChild("Handle")
    if handle == nil or not handle:IsA("BasePart") then
        return
    end
    local byName = {}
    for _, d in character:GetDescendants() do
        if d:IsA("Attachment") and byName[d.Name] == nil and d.Parent:IsA("BasePart")
            and not d:IsDescendantOf(accessory) then
            byName[d.Name] = d
        end
    end
    for _, own in handle:GetChildren() do
        local target = own:IsA("Attachment") and byName[own.Name]
        if target then
            local part = target.Parent
            handle.CFrame = part.CFrame * target.CFrame * own.CFrame:Inverse()
            local weld = Instance.new("Weld")
            weld.Name = "AccessoryWeld"
            weld.Part0 = handle
            weld.C0 = own.CFrame
            weld.Part1 = part
            weld.C1 = target.CFrame
            weld.Parent = handle
            return
        end
    end
end
"#;

/// `Humanoid:BuildRigFromAttachments()`, `RemoveAccessories()`, `GetLimb(part)` and
/// `GetBodyPartR15(part)` (Roblox reference), one chunk called with the method's name.
///
/// BuildRigFromAttachments starts at the humanoid's RootPart and, for each Attachment of the
/// current part whose name ends in `RigAttachment` (in child order), looks for an Attachment of
/// that name in another part of the character (the BaseParts among its children, in order)
/// not yet in the rig; it joins the two with a Motor6D named for the attachment
/// (`NeckRigAttachment` → `Neck`) in the other part — reusing a Motor6D of that name there —
/// with Part0 the current part, C0 its attachment's CFrame, Part1 the other part, C1 that
/// attachment's CFrame, places the other part where the joint holds it, and goes on from the
/// other part before the current part's next attachment. A BodyColors in the character
/// colours each limb (`GetLimb`'s grouping). The scale values an avatar carries
/// (BodyHeightScale, ...) are not applied.
const RIG_LUAU: &str = r#"
local LIMBS = {
    Head = "Head",
    Torso = "Torso", UpperTorso = "Torso", LowerTorso = "Torso",
    ["Left Arm"] = "LeftArm", LeftUpperArm = "LeftArm", LeftLowerArm = "LeftArm", LeftHand = "LeftArm",
    ["Right Arm"] = "RightArm", RightUpperArm = "RightArm", RightLowerArm = "RightArm", RightHand = "RightArm",
    ["Left Leg"] = "LeftLeg", LeftUpperLeg = "LeftLeg", LeftLowerLeg = "LeftLeg", LeftFoot = "LeftLeg",
    ["Right Leg"] = "RightLeg", RightUpperLeg = "RightLeg", RightLowerLeg = "RightLeg", RightFoot = "RightLeg",
}
local COLORS = {
    Head = "HeadColor3", Torso = "TorsoColor3", LeftArm = "LeftArmColor3",
    RightArm = "RightArmColor3", LeftLeg = "LeftLegColor3", RightLeg = "RightLegColor3",
}
local R15 = {
    Head = true, UpperTorso = true, LowerTorso = true,
    LeftFoot = true, LeftLowerLeg = true, LeftUpperLeg = true,
    RightFoot = true, RightLowerLeg = true, RightUpperLeg = true,
    LeftHand = true, LeftLowerArm = true, LeftUpperArm = true,
    RightHand = true, RightLowerArm = true, RightUpperArm = true,
}

local function part_arg(method, part)
    if typeof(part) ~= "Instance" then
        error(`invalid argument #1 to '{method}' (Instance expected, got {typeof(part)})`, 0)
    end
end

local function build(self)
    local character = self.Parent
    if character == nil then
        error("Humanoid:BuildRigFromAttachments: the Humanoid has no parent (character) to rig", 0)
    end
    local root = self.RootPart
    if root == nil then
        error(`Humanoid:BuildRigFromAttachments: {character:GetFullName()} has no HumanoidRootPart to start the rig from`, 0)
    end
    local parts = {}
    for _, child in character:GetChildren() do
        if child:IsA("BasePart") then
            table.insert(parts, child)
        end
    end
    -- Each part's first child of each "...RigAttachment" name, when that child is an
    -- Attachment (what `FindFirstChild(name)` on the part would find): the parts a name can
    -- join, in the character's order.
    local byName = {}
    for _, part in parts do
        local seen = {}
        for _, child in part:GetChildren() do
            local name = child.Name
            if not seen[name] then
                seen[name] = true
                if child:IsA("Attachment") and string.match(name, "^.+RigAttachment$") then
                    local list = byName[name]
                    if list == nil then
                        list = {}
                        byName[name] = list
                    end
                    table.insert(list, { part = part, attachment = child })
                end
            end
        end
    end
    local joined = { [root] = true }
    local cursor = {} -- per name, the first entry not yet joined (parts only ever join)
    local function join(part, own, other, match, joint)
        joined[other] = true
        local motor = other:FindFirstChild(joint)
        if motor and motor:IsA("Motor6D") then
            motor.Part1 = nil -- the part moves alone, not with the rig
        else
            motor = Instance.new("Motor6D")
        end
        other.CFrame = part.CFrame * own.CFrame * match.CFrame:Inverse()
        motor.Name = joint
        motor.Part0 = part
        motor.C0 = own.CFrame
        motor.C1 = match.CFrame
        motor.Part1 = other
        motor.Parent = other
    end
    -- Depth first, without recursion (a chain of thousands of parts is a chain of frames):
    -- a joined part's attachments are followed before the next attachment of its parent.
    local stack = { { part = root, children = root:GetChildren(), at = 0 } }
    while #stack > 0 do
        local top = stack[#stack]
        top.at += 1
        local own = top.children[top.at]
        if own == nil then
            table.remove(stack)
        elseif own:IsA("Attachment") then
            local joint = string.match(own.Name, "^(.+)RigAttachment$")
            local list = joint and byName[own.Name]
            if list then
                local at = cursor[own.Name] or 1
                while list[at] and joined[list[at].part] do
                    at += 1
                end
                cursor[own.Name] = at
                local found = list[at]
                if found then
                    join(top.part, own, found.part, found.attachment, joint)
                    table.insert(stack, { part = found.part, children = found.part:GetChildren(), at = 0 })
                end
            end
        end
    end
    local colors = character:FindFirstChildOfClass("BodyColors")
    if colors then
        for _, part in parts do
            local limb = LIMBS[part.Name]
            if limb then
                part.Color = colors[COLORS[limb]]
            end
        end
    end
end

-- Per humanoid, the states SetStateEnabled turned off: state the running humanoid keeps
-- and Roblox's files do not, so it lasts as long as this VM.
local disabled = {}

-- The state an argument names: the enum item, or its name or value, as Roblox takes enums.
local function state_arg(method, state)
    local item = state
    if type(state) == "string" then
        item = Enum.HumanoidStateType:FromName(state)
    elseif type(state) == "number" then
        item = Enum.HumanoidStateType:FromValue(state)
    end
    if typeof(item) ~= "EnumItem" or item.EnumType ~= Enum.HumanoidStateType then
        error(`invalid argument #1 to '{method}' (Enum.HumanoidStateType expected, got {if type(state) == "string" then `"{state}"` else typeof(state)})`, 0)
    end
    return item
end

return function(self, method, part, enabled)
    if method == "BuildRigFromAttachments" then
        return build(self)
    end
    if method == "SetStateEnabled" then
        part = state_arg(method, part)
        if type(enabled) ~= "boolean" then
            error(`invalid argument #2 to 'SetStateEnabled' (boolean expected, got {typeof(enabled)})`, 0)
        end
        local off = disabled[self]
        if off == nil then
            off = {}
            disabled[self] = off
        end
        off[part] = not enabled or nil
        return
    end
    if method == "GetStateEnabled" then
        part = state_arg(method, part)
        local off = disabled[self]
        return not (off and off[part])
    end
    if method == "RemoveAccessories" then
        -- Accessories and the legacy Hats (both Accoutrements) the character wears.
        local character = self.Parent
        if character ~= nil then
            for _, child in character:GetChildren() do
                if child:IsA("Accoutrement") then
                    child:Destroy()
                end
            end
        end
        return
    end
    part_arg(method, part)
    local sibling = self.Parent ~= nil and part.Parent == self.Parent
    if method == "GetLimb" then
        if not sibling then
            error(`Humanoid:GetLimb: {part:GetFullName()} is not in the humanoid's character ({if self.Parent then self.Parent:GetFullName() else "no parent"})`, 0)
        end
        return Enum.Limb[LIMBS[part.Name] or "Unknown"]
    end
    if not sibling then
        return Enum.BodyPartR15.Unknown
    end
    if part.Name == "HumanoidRootPart" then
        return Enum.BodyPartR15.RootPart
    end
    return Enum.BodyPartR15[if R15[part.Name] then part.Name else "Unknown"]
end
"#;

/// Calls [`RIG_LUAU`] for `method` on the humanoid.
fn rig_method(
    lua: &mlua::Lua,
    this: &crate::context::Instance,
    method: &str,
    part: Value,
) -> mlua::Result<Value> {
    rig_method_with(lua, this, method, part, Value::Nil)
}

/// [`rig_method`] with a second argument.
fn rig_method_with(
    lua: &mlua::Lua,
    this: &crate::context::Instance,
    method: &str,
    first: Value,
    second: Value,
) -> mlua::Result<Value> {
    crate::methods::call_luau_method(
        lua,
        this,
        ("procmodel.humanoid_rig", "=[Humanoid]", RIG_LUAU),
        || Ok(()),
        (method, first, second),
    )
}

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
    m.add_method("AddAccessory", |lua, this, accessory: Value| {
        crate::methods::call_luau_method::<_, _, ()>(
            lua,
            this,
            (
                "procmodel.add_accessory",
                "=[AddAccessory]",
                ADD_ACCESSORY_LUAU,
            ),
            || Ok(()),
            accessory,
        )
    });
    // The Accessories the humanoid's parent (its character) holds, attached or not.
    m.add_method("GetAccessories", |lua, this, ()| {
        let parent = ctx(lua)?
            .dom
            .get_by_ref(this.r)
            .map_or_else(Ref::none, |i| i.parent());
        children_of_class(lua, parent, "Accessory")
    });
    m.add_method("BuildRigFromAttachments", |lua, this, ()| {
        rig_method(lua, this, "BuildRigFromAttachments", Value::Nil).map(|_| ())
    });
    // States the running humanoid may enter: kept for the VM's life, never saved (nor are
    // they in Roblox's files).
    m.add_method(
        "SetStateEnabled",
        |lua, this, (state, enabled): (Value, Value)| {
            rig_method_with(lua, this, "SetStateEnabled", state, enabled).map(|_| ())
        },
    );
    m.add_method("GetStateEnabled", |lua, this, state: Value| {
        rig_method(lua, this, "GetStateEnabled", state)
    });
    m.add_method("RemoveAccessories", |lua, this, ()| {
        rig_method(lua, this, "RemoveAccessories", Value::Nil).map(|_| ())
    });
    m.add_method("GetLimb", |lua, this, part: Value| {
        rig_method(lua, this, "GetLimb", part)
    });
    m.add_method("GetBodyPartR15", |lua, this, part: Value| {
        rig_method(lua, this, "GetBodyPartR15", part)
    });
    // Nothing is simulated: a humanoid never moves of itself.
    m.add_method("GetMoveVelocity", |_lua, _this, ()| {
        Ok(procmodel_luau_types::Vector3(glam::Vec3::ZERO))
    });
    // LoadAnimation is refused, so no track is ever loaded or playing.
    for class in ["Humanoid", "AnimationController", "Animator"] {
        m.class(class);
        m.add_method("GetPlayingAnimationTracks", |lua, _this, ()| {
            lua.create_table()
        });
    }
    m.add_method("GetTrackByAnimationId", |_lua, _this, id: Value| match id {
        Value::String(_) => Ok(Value::Nil),
        other => Err(mlua::Error::runtime(format!(
            "invalid argument #1 to 'GetTrackByAnimationId' (string expected, got {})",
            procmodel_luau_types::type_name(&other)
        ))),
    });
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
