//! TweenService: `GetValue` (the easing curves of `procmodel_luau_types::tween`) and
//! `Create`, whose tweens play on the run's virtual clock, one frame (1/60 s) at a time.
//!
//! Rules (Roblox reference, TweenService/TweenBase/TweenInfo): a tween reads its start values
//! when it plays; `RepeatCount` more cycles follow the first (negative: until cancelled), each
//! played back when `Reverses` is set; `DelayTime` passes before each cycle; `Pause` keeps
//! the position, `Cancel` drops it and fires `Completed` with `Cancelled`, the end fires it
//! with `Completed`. Numbers, Vector3, Vector2, CFrame, Color3, UDim and UDim2 are
//! interpolated; booleans and enums switch at the end. Here a tween is a Luau object, not an
//! Instance: `typeof` gives "table" and it is not in the tree.
//!
//! `SmoothDamp` steps a critically damped spring (`procmodel_luau_types::tween::smooth_damp`)
//! for a number, Vector2, Vector3 or CFrame; a nil `dt` is one frame (1/60 s). A CFrame's
//! velocity is a CFrame too: its position the linear velocity, its rotation the angular
//! velocity (axis and radians per second, so a spin of more than half a turn a second wraps).

use crate::context::ctx;
use crate::methods::MethodTable;
use mlua::{MultiValue, Value};
use procmodel_luau_types::tween::{FRAME_STEP, smooth_damp, smooth_damp_cframe, smooth_damp_vec3};
use procmodel_luau_types::{CFrame, FromValue, TweenInfo, Vector2, Vector3};

/// Registry name of the Luau tween factory ([`TWEEN_LUAU`]).
const FACTORY: &str = "procmodel.tween_factory";

const TWEEN_LUAU: &str = r#"
local getValue, task, Enum = ...
local Tween = {}
Tween.__index = Tween

local function lerp(a, b, t)
    local ta = typeof(a)
    if ta ~= typeof(b) then
        return if t >= 1 then b else a
    end
    if ta == "number" then
        return a + (b - a) * t
    elseif ta == "Vector3" or ta == "Vector2" or ta == "CFrame" or ta == "Color3" or ta == "UDim2" then
        return a:Lerp(b, t)
    elseif ta == "UDim" then
        return UDim.new(a.Scale + (b.Scale - a.Scale) * t, math.round(a.Offset + (b.Offset - a.Offset) * t))
    end
    return if t >= 1 then b else a
end

local function signal()
    local s = { _handlers = {} }
    function s:Connect(f)
        local h = { f = f, Connected = true }
        table.insert(self._handlers, h)
        function h:Disconnect() self.Connected = false end
        return h
    end
    function s:Once(f)
        local h
        h = self:Connect(function(...) h:Disconnect() f(...) end)
        return h
    end
    function s:Wait()
        local result
        self:Once(function(...) result = table.pack(...) end)
        while not result do task.wait() end
        return table.unpack(result, 1, result.n)
    end
    s.connect = s.Connect
    s.wait = s.Wait
    function s:_fire(...)
        for _, h in table.clone(self._handlers) do
            if h.Connected then task.spawn(h.f, ...) end
        end
    end
    return s
end

function Tween:_apply(alpha)
    local e = getValue(alpha, self.TweenInfo.EasingStyle, self.TweenInfo.EasingDirection)
    for name, goal in self._goals do
        self.Instance[name] = lerp(self._start[name], goal, if alpha >= 1 then 1 else e)
    end
end

function Tween:Play()
    if self.PlaybackState == Enum.PlaybackState.Playing or self.PlaybackState == Enum.PlaybackState.Delayed then
        return
    end
    if self._elapsed == nil then
        self._start = {}
        for name in self._goals do
            self._start[name] = self.Instance[name]
        end
        self._elapsed = 0
        self._cycle = 0
    end
    local info = self.TweenInfo
    self._thread = task.spawn(function()
        while true do
            if self._elapsed == 0 and info.DelayTime > 0 then
                self.PlaybackState = Enum.PlaybackState.Delayed
                task.wait(info.DelayTime)
            end
            self.PlaybackState = Enum.PlaybackState.Playing
            local span = info.Time * (if info.Reverses then 2 else 1)
            while self._elapsed < span do
                self._elapsed += task.wait()
                local t = math.min(self._elapsed, span)
                local alpha = if info.Time <= 0 then 1 else t / info.Time
                if alpha > 1 then alpha = 2 - alpha end
                self:_apply(if info.Reverses then alpha else math.min(alpha, 1))
                if info.Time <= 0 then break end
            end
            if info.Reverses then self:_apply(0) else self:_apply(1) end
            self._cycle += 1
            if info.RepeatCount >= 0 and self._cycle > info.RepeatCount then break end
            if span <= 0 then task.wait() end -- an endless tween of no length still yields
            self._elapsed = 0
        end
        self._elapsed = nil
        self._thread = nil
        self.PlaybackState = Enum.PlaybackState.Completed
        self.Completed:_fire(Enum.PlaybackState.Completed)
    end)
end

function Tween:Pause()
    if self._thread and self.PlaybackState == Enum.PlaybackState.Playing then
        task.cancel(self._thread)
        self._thread = nil
        self.PlaybackState = Enum.PlaybackState.Paused
    end
end

function Tween:Cancel()
    if self._thread then
        task.cancel(self._thread)
        self._thread = nil
    end
    local was = self.PlaybackState
    self._elapsed = nil
    self.PlaybackState = Enum.PlaybackState.Cancelled
    if was ~= Enum.PlaybackState.Begin and was ~= Enum.PlaybackState.Completed and was ~= Enum.PlaybackState.Cancelled then
        self.Completed:_fire(Enum.PlaybackState.Cancelled)
    end
end

function Tween:Destroy()
    self:Cancel()
end
Tween.play = Tween.Play
Tween.pause = Tween.Pause
Tween.cancel = Tween.Cancel

return function(instance, info, goals)
    local copy = {}
    for name, goal in goals do
        if type(name) ~= "string" then
            error("TweenService:Create: property names must be strings", 0)
        end
        local ok, current = pcall(function() return instance[name] end)
        if not ok then
            error(`TweenService:Create: {name} is not a property of {instance:GetFullName()}`, 0)
        end
        local kind = typeof(current)
        if kind ~= typeof(goal) then
            error(`TweenService:Create: property {name} is a {kind}, the goal a {typeof(goal)}`, 0)
        end
        copy[name] = goal
    end
    return setmetatable({
        Instance = instance,
        TweenInfo = info,
        PlaybackState = Enum.PlaybackState.Begin,
        Completed = signal(),
        _goals = copy,
    }, Tween)
end
"#;

fn factory(lua: &mlua::Lua) -> mlua::Result<mlua::Function> {
    crate::methods::luau_function(lua, FACTORY, "=[TweenService]", TWEEN_LUAU, || {
        let get_value =
            lua.create_function(|_, (alpha, style, direction): (f64, Value, Value)| {
                Ok(get_value(alpha, &style, &direction))
            })?;
        Ok((
            get_value,
            lua.globals().get::<mlua::Table>("task")?,
            lua.globals().get::<Value>("Enum")?,
        ))
    })
}

fn enum_name(v: &Value, enum_name: &'static str) -> Option<&'static str> {
    match procmodel_luau_types::lua_to_variant(v, &rbx_reflection::DataType::Enum(enum_name)) {
        Ok(rbx_types::Variant::Enum(e)) => {
            procmodel_luau_types::EnumItem::from_value(enum_name, e.to_u32()).map(|i| i.name)
        }
        _ => None,
    }
}

fn get_value(alpha: f64, style: &Value, direction: &Value) -> f64 {
    procmodel_luau_types::tween::ease(
        alpha,
        enum_name(style, "EasingStyle").unwrap_or("Linear"),
        enum_name(direction, "EasingDirection").unwrap_or("In"),
    )
}

/// `TweenService:SmoothDamp(current, target, velocity, smoothTime, maxSpeed?, dt?)`.
fn smooth_damp_method(lua: &mlua::Lua, a: MultiValue) -> mlua::Result<(Value, Value)> {
    const F: &str = "TweenService:SmoothDamp";
    let v: Vec<Value> = a.into_iter().collect();
    let nil = Value::Nil;
    let arg = |i: usize| v.get(i).unwrap_or(&nil);
    let number = |i: usize, name: &str, default: Option<f64>| -> mlua::Result<f64> {
        match (arg(i), default) {
            (Value::Number(n), _) if !n.is_nan() => Ok(*n),
            (Value::Integer(n), _) => Ok(*n as f64),
            (Value::Nil, Some(d)) => Ok(d),
            (other, _) => Err(mlua::Error::runtime(format!(
                "{F}: {name} (argument #{}) must be a number, got {}",
                i + 1,
                procmodel_luau_types::type_name(other)
            ))),
        }
    };
    let smooth_time = number(3, "smoothTime", None)?;
    let max_speed = number(4, "maxSpeed", Some(f64::INFINITY))?;
    let dt = number(5, "dt", Some(FRAME_STEP))?;
    if max_speed < 0.0 || dt < 0.0 {
        return Err(mlua::Error::runtime(format!(
            "{F}: maxSpeed and dt must not be negative (got {max_speed} and {dt})"
        )));
    }
    let kind = procmodel_luau_types::type_name(arg(0));
    let same = (1..3).all(|i| procmodel_luau_types::type_name(arg(i)) == kind);
    let mismatch = || {
        mlua::Error::runtime(format!(
            "{F}: current, target and velocity must all be numbers, Vector2s, Vector3s or CFrames (got {}, {}, {})",
            procmodel_luau_types::type_name(arg(0)),
            procmodel_luau_types::type_name(arg(1)),
            procmodel_luau_types::type_name(arg(2))
        ))
    };
    if !same {
        return Err(mismatch());
    }
    match kind.as_str() {
        "number" => {
            let n = |i| number(i, "a value", None);
            let ([x], [vel]) = smooth_damp([n(0)?], [n(1)?], [n(2)?], smooth_time, max_speed, dt);
            Ok((Value::Number(x), Value::Number(vel)))
        }
        "Vector3" => {
            let g = |i: usize| {
                Vector3::from_value(arg(i))
                    .map(|v| v.0)
                    .ok_or_else(mismatch)
            };
            let (x, vel) = smooth_damp_vec3(g(0)?, g(1)?, g(2)?, smooth_time, max_speed, dt);
            Ok((Vector3(x).value(), Vector3(vel).value()))
        }
        "Vector2" => {
            let g = |i: usize| {
                Vector2::from_value(arg(i))
                    .map(|v| [f64::from(v.0.x), f64::from(v.0.y)])
                    .ok_or_else(mismatch)
            };
            let (x, vel) = smooth_damp(g(0)?, g(1)?, g(2)?, smooth_time, max_speed, dt);
            let v2 = |a: [f64; 2]| Vector2(glam::Vec2::new(a[0] as f32, a[1] as f32));
            Ok((
                mlua::IntoLua::into_lua(v2(x), lua)?,
                mlua::IntoLua::into_lua(v2(vel), lua)?,
            ))
        }
        "CFrame" => {
            let g = |i: usize| CFrame::from_value(arg(i)).ok_or_else(mismatch);
            let (current, target, velocity) = (g(0)?, g(1)?, g(2)?);
            let (axis, angle) = velocity.quat().to_axis_angle();
            let spin = if angle.is_finite() {
                axis * angle
            } else {
                glam::Vec3::ZERO
            };
            let (c, linear, angular) = smooth_damp_cframe(
                &current,
                &target,
                (velocity.position, spin),
                smooth_time,
                max_speed,
                dt,
            );
            let turn = glam::Quat::from_scaled_axis(angular);
            let vel = CFrame {
                position: linear,
                rotation: glam::Mat3::from_quat(turn),
            };
            Ok((
                mlua::IntoLua::into_lua(c, lua)?,
                mlua::IntoLua::into_lua(vel, lua)?,
            ))
        }
        _ => Err(mismatch()),
    }
}

pub fn register(m: &mut MethodTable) {
    m.class("TweenService");
    m.add_method("SmoothDamp", |lua, _this, a: MultiValue| {
        smooth_damp_method(lua, a)
    });
    m.add_method("GetValue", |_lua, _this, a: MultiValue| {
        let v: Vec<Value> = a.into_iter().collect();
        let alpha = match v.first() {
            Some(Value::Number(n)) => *n,
            Some(Value::Integer(n)) => *n as f64,
            other => {
                return Err(mlua::Error::runtime(format!(
                    "invalid argument #1 to 'GetValue' (number expected, got {})",
                    procmodel_luau_types::type_name(other.unwrap_or(&Value::Nil))
                )));
            }
        };
        let nil = Value::Nil;
        let (style, direction) = (v.get(1).unwrap_or(&nil), v.get(2).unwrap_or(&nil));
        for (pos, value, name) in [(2, style, "EasingStyle"), (3, direction, "EasingDirection")] {
            super::instance::enum_arg(value, name, "GetValue", pos)?;
        }
        Ok(get_value(alpha, style, direction))
    });
    m.add_method(
        "Create",
        |lua, _this, (instance, info, goals): (Value, Value, Value)| {
            if ctx(lua)?.instance(&instance).is_none() {
                return Err(mlua::Error::runtime(format!(
                    "invalid argument #1 to 'Create' (Instance expected, got {})",
                    procmodel_luau_types::type_name(&instance)
                )));
            }
            let is_info = matches!(&info, Value::UserData(ud) if ud.borrow::<TweenInfo>().is_ok());
            if !is_info {
                return Err(mlua::Error::runtime(format!(
                    "invalid argument #2 to 'Create' (TweenInfo expected, got {})",
                    procmodel_luau_types::type_name(&info)
                )));
            }
            if !matches!(goals, Value::Table(_)) {
                return Err(mlua::Error::runtime(format!(
                    "invalid argument #3 to 'Create' (table expected, got {})",
                    procmodel_luau_types::type_name(&goals)
                )));
            }
            factory(lua)?.call::<Value>((instance, info, goals))
        },
    );
}
