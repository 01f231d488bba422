//! Camera methods that mean something without a viewport: `SetRoll`, `GetRoll`,
//! `GetRenderCFrame`, `ZoomToExtents` and `GetPartsObscuringTarget`.
//!
//! Rules (Roblox reference, Camera):
//! - `SetRoll(angle)` works only on a `Scriptable` camera (any other gets a warning in the
//!   output and no roll); the roll is not written to `CFrame` and is lost when `CameraType`
//!   leaves `Scriptable`. `GetRoll` gives that roll (radians), `GetRenderCFrame` the
//!   `CFrame` with it applied about the camera's Z axis (no VR head: nothing else moves it).
//!   The roll lives in the VM, not in the scene: a saved place keeps only `CFrame`.
//! - `ZoomToExtents(boxCFrame, boxSize)` moves the camera, keeping its orientation, to look at
//!   the box's centre from the nearest distance at which all of the box is in view. The
//!   reference fits the box to the field of view and the viewport's aspect ratio; a headless
//!   session has no viewport, so the fit is for a square one (the vertical `FieldOfView`
//!   both ways), which leaves the box uncropped in any viewport at least as wide as it is
//!   tall.
//! - `GetPartsObscuringTarget(castPoints, ignoreList)` gives the BaseParts on the lines of
//!   sight from the camera's position to each point, less the ignored instances and their
//!   descendants; Terrain on a line stops it (the parts beyond are not given). Raycasts from
//!   the camera's WorldRoot (its Workspace), so a generator's call reads the scene as
//!   `Raycast` does. The reference leaves the order arbitrary; here it is by cast point,
//!   nearest first, each part once.

use crate::methods::{MethodTable, call_luau_method};
use mlua::{MultiValue, Value};

const CAMERA_LUAU: &str = r#"
local rolls = {}

local function scriptable(camera)
    return camera.CameraType == Enum.CameraType.Scriptable
end

local function number(v, pos, method)
    if type(v) ~= "number" then
        error(`invalid argument #{pos} to '{method}' (number expected, got {typeof(v)})`, 0)
    end
    return v
end

local function roll(camera)
    local r = rolls[camera]
    if r ~= nil and not scriptable(camera) then
        rolls[camera] = nil
        return 0
    end
    return r or 0
end

local function world(camera)
    return camera:FindFirstAncestorWhichIsA("WorldRoot") or workspace
end

local M = {}

function M.SetRoll(camera, angle)
    angle = number(angle, 1, "SetRoll")
    if not scriptable(camera) then
        warn(`Camera:SetRoll: {camera:GetFullName()}'s CameraType is {camera.CameraType.Name}; roll needs Scriptable (nothing rolled)`)
        return
    end
    -- Roblox keeps the roll as a float
    rolls[camera] = string.unpack("<f", string.pack("<f", angle))
end

function M.GetRoll(camera)
    return roll(camera)
end

function M.GetRenderCFrame(camera)
    local r = roll(camera)
    if r == 0 then
        return camera.CFrame
    end
    return camera.CFrame * CFrame.Angles(0, 0, r)
end

function M.ZoomToExtents(camera, boxCFrame, boxSize)
    if typeof(boxCFrame) ~= "CFrame" then
        error(`invalid argument #1 to 'ZoomToExtents' (CFrame expected, got {typeof(boxCFrame)})`, 0)
    end
    if typeof(boxSize) ~= "Vector3" then
        error(`invalid argument #2 to 'ZoomToExtents' (Vector3 expected, got {typeof(boxSize)})`, 0)
    end
    local cf = camera.CFrame
    local look, right, up = cf.LookVector, cf.RightVector, cf.UpVector
    local t = math.tan(math.rad(camera.FieldOfView) / 2)
    local near = -camera.NearPlaneZ
    local h = boxSize / 2
    local distance = near
    for _, sx in { -1, 1 } do
        for _, sy in { -1, 1 } do
            for _, sz in { -1, 1 } do
                local corner = boxCFrame:VectorToWorldSpace(Vector3.new(sx * h.X, sy * h.Y, sz * h.Z))
                local f = corner:Dot(look)
                distance = math.max(
                    distance,
                    math.abs(corner:Dot(right)) / t - f,
                    math.abs(corner:Dot(up)) / t - f,
                    near - f
                )
            end
        end
    end
    local centre = boxCFrame.Position
    camera.CFrame = cf.Rotation + (centre - look * distance)
end

function M.GetPartsObscuringTarget(camera, castPoints, ignoreList)
    if type(castPoints) ~= "table" then
        error(`invalid argument #1 to 'GetPartsObscuringTarget' (table expected, got {typeof(castPoints)})`, 0)
    end
    if ignoreList ~= nil and type(ignoreList) ~= "table" then
        error(`invalid argument #2 to 'GetPartsObscuringTarget' (table expected, got {typeof(ignoreList)})`, 0)
    end
    local ignored = {}
    for i, v in ignoreList or {} do
        if typeof(v) ~= "Instance" then
            error(`Camera:GetPartsObscuringTarget: ignoreList[{i}] is a {typeof(v)}, not an Instance`, 0)
        end
        table.insert(ignored, v)
    end
    local root = world(camera)
    local origin = camera.CFrame.Position
    local found, seen = {}, {}
    for i, point in castPoints do
        if typeof(point) ~= "Vector3" then
            error(`Camera:GetPartsObscuringTarget: castPoints[{i}] is a {typeof(point)}, not a Vector3`, 0)
        end
        local params = RaycastParams.new()
        params.FilterType = Enum.RaycastFilterType.Exclude
        params.FilterDescendantsInstances = ignored
        local direction = point - origin
        while direction.Magnitude > 0 do
            local hit = root:Raycast(origin, direction, params)
            if hit == nil or hit.Instance:IsA("Terrain") then
                break
            end
            if not seen[hit.Instance] then
                seen[hit.Instance] = true
                table.insert(found, hit.Instance)
            end
            params:AddToFilter(hit.Instance)
        end
    end
    return found
end

return function(camera, name, ...)
    return M[name](camera, ...)
end
"#;

/// Registry key of the chunk's dispatcher (method name, then the call's arguments).
const KEY: &str = "procmodel.camera";

pub fn register(m: &mut MethodTable) {
    m.class("Camera");
    for name in [
        "SetRoll",
        "GetRoll",
        "GetRenderCFrame",
        "ZoomToExtents",
        "GetPartsObscuringTarget",
    ] {
        m.add_method(name, move |lua, this, args: MultiValue| {
            let mut all = args;
            all.push_front(Value::String(lua.create_string(name)?));
            call_luau_method::<_, _, MultiValue>(
                lua,
                this,
                (KEY, "=[Camera]", CAMERA_LUAU),
                || Ok(()),
                all,
            )
        });
    }
}
