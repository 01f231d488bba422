//! Methods of DataModel and the services (RunService, Players, HttpService, CollectionService,
//! ChangeHistoryService, Debris, Lighting, LogService, MaterialService, TestService); the services themselves are made in `crate::services`.

use crate::context::{Ctx, Instance, MessageType, ctx};
use crate::instance::opt_instance;
use crate::methods::MethodTable;
use crate::services::{HistoryRequest, find_service, get_service, state};
use mlua::{MultiValue, Value};
use rbx_types::{Ref, Variant};

fn refuse_in_generator(c: &Ctx, what: &str) -> mlua::Result<()> {
    if c.outside_write_locked {
        return Err(mlua::Error::runtime(format!(
            "{what} is not available to generators (outputs must be reproducible: use params.Seed)"
        )));
    }
    Ok(())
}

/// Whether MaterialService can override `material`: the reflection database gives the
/// service a string property `<Material>Name` for each one it can (the Roblox reference:
/// "Specify MaterialVariant name to override built-in Grass").
fn overridable(material: &str) -> bool {
    procmodel_luau_types::enums::database()
        .classes
        .get("MaterialService")
        .is_some_and(|class| {
            class
                .properties
                .contains_key(format!("{material}Name").as_str())
        })
}

/// The materials MaterialService can override, in the database's (alphabetical) order.
fn overridables() -> impl Iterator<Item = &'static str> {
    let mut names: Vec<&'static str> = procmodel_luau_types::enums::database()
        .classes
        .get("MaterialService")
        .into_iter()
        .flat_map(|class| class.properties.keys())
        .filter_map(|p| p.strip_suffix("Name"))
        .filter(|m| !m.is_empty())
        .collect();
    names.sort_unstable();
    names.into_iter()
}

/// The MaterialService property holding `material`'s override: an error naming the argument
/// for anything but an Enum.Material, and naming the material for one with no override.
fn override_key(material: &Value, method: &str) -> mlua::Result<rbx_dom_weak::Ustr> {
    let value = super::instance::enum_arg(material, "Material", method, 1)?;
    // enum_arg gives only the values of the enum's items
    let name = procmodel_luau_types::EnumItem::from_value("Material", value).map_or("", |i| i.name);
    if !overridable(name) {
        return Err(mlua::Error::runtime(format!(
            "MaterialService:{method}: Enum.Material.{name} has no override (a MaterialVariant can override {})",
            overridables().collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(rbx_dom_weak::ustr(&format!("{name}Name")))
}

/// `MaterialService:GetMaterialVariant(material, name)`: the first MaterialVariant among the
/// service's descendants with that name and BaseMaterial, or nil (the Roblox reference).
const GET_MATERIAL_VARIANT_LUAU: &str = r#"
return function(self, material, name)
    if typeof(material) ~= "EnumItem" or material.EnumType ~= Enum.Material then
        error(`invalid argument #1 to 'GetMaterialVariant' (Enum.Material expected, got {typeof(material)})`, 0)
    end
    if type(name) ~= "string" then
        error(`invalid argument #2 to 'GetMaterialVariant' (string expected, got {typeof(name)})`, 0)
    end
    for _, d in self:GetDescendants() do
        if d:IsA("MaterialVariant") and d.Name == name and d.BaseMaterial == material then
            return d
        end
    end
    return nil
end
"#;

/// Tags of an instance, in order.
fn tags(c: &Ctx, r: Ref) -> Vec<String> {
    match c
        .dom
        .get_by_ref(r)
        .and_then(|i| i.properties.get(&crate::keys::KEYS.tags))
    {
        Some(Variant::Tags(t)) => t.iter().map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// Registry name of `Debris:AddItem`'s scheduler ([`DEBRIS_ADD_LUAU`]).
const DEBRIS_ADD: &str = "procmodel.debris_add";

/// Given `task.delay`: a function scheduling `item:Destroy()` in `lifetime` seconds (an item
/// destroyed already by then is left alone).
const DEBRIS_ADD_LUAU: &str = r#"
local delay = ...
return function(item, lifetime)
    delay(lifetime, function()
        pcall(item.Destroy, item)
    end)
end
"#;

/// Registry name of the functions `game:BindToClose` bound, in the order they were bound.
pub(crate) const CLOSE: &str = "procmodel.bind_to_close";

/// Keeps the functions connected to `game.Close` with those `BindToClose` bound, before a
/// script's run ends and its connections are cut: the session runs them all when it closes.
pub(crate) fn keep_close_handlers(lua: &mlua::Lua) -> mlua::Result<()> {
    let handlers = crate::signals::close_handlers(&*ctx(lua)?);
    if handlers.is_empty() {
        return Ok(());
    }
    let list = registry_list(lua, CLOSE)?;
    for f in handlers {
        list.raw_push(f)?;
    }
    Ok(())
}

/// Given the bound functions and `task.spawn`, `task.wait`, `task.cancel`: runs each function
/// in a thread of its own and waits for them, as a closing server does, for at most 30 seconds
/// (of virtual time); returns how many were still running then and were ended.
pub(crate) const CLOSE_LUAU: &str = r#"
local fns, spawn, wait, cancel = ...
local threads = {}
for i, f in fns do
    threads[i] = spawn(f)
end
local waited = 0
while true do
    local running = false
    for _, t in threads do
        if coroutine.status(t) ~= "dead" then
            running = true
            break
        end
    end
    if not running then
        return 0
    end
    if waited >= 30 then
        break
    end
    waited += wait()
end
local ended = 0
for _, t in threads do
    if coroutine.status(t) ~= "dead" then
        cancel(t)
        ended += 1
    end
end
return ended
"#;

/// Service methods that cannot run headless, by class, with the reason their error gives.
const UNAVAILABLE: &[(&str, &[&str], &str)] = &[
    (
        "HttpService",
        &["GetAsync", "PostAsync", "RequestAsync"],
        "HTTP requests are not available (scripts have no network access)",
    ),
    (
        "InsertService",
        &[
            "LoadAsset",
            "LoadAssetVersion",
            "GetFreeModels",
            "GetFreeDecals",
        ],
        "assets cannot be loaded (scripts have no network access); put the model in the place or project and clone it",
    ),
    (
        "DataStoreService",
        &[
            "GetDataStore",
            "GetGlobalDataStore",
            "GetOrderedDataStore",
            "ListDataStoresAsync",
        ],
        "data stores are not available (a headless session has no experience to store for)",
    ),
    (
        "MarketplaceService",
        &[
            "GetProductInfo",
            "GetProductInfoAsync",
            "UserOwnsGamePassAsync",
            "PlayerOwnsAsset",
        ],
        "the marketplace is not available (scripts have no network access)",
    ),
    (
        "BasePart",
        &[
            "SetNetworkOwner",
            "GetNetworkOwner",
            "SetNetworkOwnershipAuto",
            "GetNetworkOwnershipAuto",
            "CanSetNetworkOwnership",
        ],
        "network ownership is not available (a headless session has no clients)",
    ),
    (
        "BasePart",
        &[
            "ApplyImpulse",
            "ApplyAngularImpulse",
            "ApplyImpulseAtPosition",
            "GetVelocityAtPosition",
        ],
        "physics is not simulated (procmodel builds scenes, it does not run them)",
    ),
    (
        "Players",
        &[
            "CreateHumanoidModelFromDescription",
            "CreateHumanoidModelFromDescriptionAsync",
            "CreateHumanoidModelFromUserId",
            "CreateHumanoidModelFromUserIdAsync",
            "GetHumanoidDescriptionFromUserId",
            "GetHumanoidDescriptionFromUserIdAsync",
            "GetHumanoidDescriptionFromOutfitId",
            "GetCharacterAppearanceInfoAsync",
            "GetUserIdFromNameAsync",
            "GetNameFromUserIdAsync",
        ],
        "avatars and accounts come from Roblox's servers (scripts have no network access); build a character from parts and rig it with Humanoid:BuildRigFromAttachments",
    ),
    (
        "Humanoid",
        &[
            "ApplyDescription",
            "ApplyDescriptionAsync",
            "ApplyDescriptionReset",
            "ApplyDescriptionResetAsync",
        ],
        "applying a HumanoidDescription loads avatar assets from Roblox's servers (scripts have no network access); build a character from parts and rig it with Humanoid:BuildRigFromAttachments",
    ),
    (
        "Humanoid",
        &["MoveTo", "Move", "ChangeState", "GetState", "LoadAnimation"],
        "humanoids are not simulated and animations are not played (procmodel builds scenes, it does not run them)",
    ),
    (
        "Animator",
        &["LoadAnimation"],
        "animations are not played (procmodel builds scenes, it does not run them)",
    ),
    (
        "AnimationController",
        &["LoadAnimation"],
        "animations are not played (procmodel builds scenes, it does not run them)",
    ),
    (
        "Camera",
        &[
            "WorldToViewportPoint",
            "WorldToScreenPoint",
            "ViewportPointToRay",
            "ScreenPointToRay",
        ],
        "there is no viewport (procmodel renders nothing, so ViewportSize is 0, 0); project with the camera's CFrame and FieldOfView yourself",
    ),
    (
        "PathfindingService",
        &[
            "CreatePath",
            "FindPathAsync",
            "ComputeRawPathAsync",
            "ComputeSmoothPathAsync",
        ],
        "paths are found on Roblox's navigation mesh, which procmodel does not build (it builds scenes, it does not run them)",
    ),
    (
        "Lighting",
        &["GetSunDirection", "GetMoonDirection"],
        "Roblox does not document how it places the sun and moon from ClockTime, GeographicLatitude and the date, so procmodel cannot give its answer; read ClockTime and GeographicLatitude",
    ),
    (
        "TextService",
        &["GetTextSize", "GetTextBoundsAsync", "FilterStringAsync"],
        "text measuring and filtering are not available (procmodel has no font metrics or filter)",
    ),
];

/// Registry name of the Selection service's list.
const SELECTION: &str = "procmodel.selection";

fn selection(lua: &mlua::Lua) -> mlua::Result<mlua::Table> {
    registry_list(lua, SELECTION)
}

/// The list the registry keeps under `name`, made empty the first time it is asked for.
fn registry_list(lua: &mlua::Lua, name: &str) -> mlua::Result<mlua::Table> {
    match lua.named_registry_value::<Value>(name)? {
        Value::Table(t) => Ok(t),
        _ => {
            let t = lua.create_table()?;
            lua.set_named_registry_value(name, &t)?;
            Ok(t)
        }
    }
}

/// Appends `v` to the selection list `list` unless it is there already.
fn push_new(list: &mlua::Table, v: Value) -> mlua::Result<()> {
    for x in list.sequence_values::<Value>() {
        if x? == v {
            return Ok(());
        }
    }
    list.raw_push(v)
}

/// Registry name of the SharedTableRegistry's stores, one per run (keyed by its group).
const SHARED_TABLES: &str = "procmodel.shared_tables";

/// The running run's SharedTableRegistry store (name → SharedTable).
fn run_shared_tables(lua: &mlua::Lua) -> mlua::Result<mlua::Table> {
    let all = registry_list(lua, SHARED_TABLES)?;
    let group = crate::sched::current_group(lua)?;
    match all.raw_get::<Value>(group)? {
        Value::Table(t) => Ok(t),
        _ => {
            let t = lua.create_table()?;
            all.raw_set(group, &t)?;
            Ok(t)
        }
    }
}

/// Forgets the SharedTables run `group` registered (when the run ends).
pub(crate) fn end_shared_tables(lua: &mlua::Lua, group: u32) -> mlua::Result<()> {
    registry_list(lua, SHARED_TABLES)?.raw_set(group, Value::Nil)
}

fn instance_arg(c: &Ctx, v: &Value, method: &str) -> mlua::Result<Instance> {
    opt_instance(c, v)?
        .ok_or_else(|| mlua::Error::runtime(format!("{method}: Argument 1 missing or nil")))
}

pub fn register(m: &mut MethodTable) {
    m.class("DataModel");
    // `service` and `getService`: the deprecated spellings old scripts use.
    for method in ["GetService", "getService", "service"] {
        m.add_method(method, |lua, _this, name: String| {
            let mut c = ctx(lua)?;
            let r = get_service(&mut c, &name)?;
            c.push(r)
        });
    }
    // Functions to run when the session closes: `procmodel run` calls them after the script
    // and its threads are done (see `Host::close_session`).
    m.add_method("BindToClose", |lua, _this, f: Value| {
        let Value::Function(f) = f else {
            return Err(mlua::Error::runtime(format!(
                "BindToClose: Argument 1 must be a function, got {}",
                procmodel_luau_types::type_name(&f)
            )));
        };
        registry_list(lua, CLOSE)?.raw_push(f)
    });
    // A headless session is a server: the place is loaded before any script runs, so the
    // `if not game:IsLoaded() then game.Loaded:Wait() end` idiom goes straight on.
    m.add_method("IsLoaded", |_lua, _this, ()| Ok(true));
    m.add_method("FindService", |lua, _this, name: String| {
        let mut c = ctx(lua)?;
        match find_service(&c, &name) {
            Some(r) => c.push(r),
            None => Ok(Value::Nil),
        }
    });

    m.class("RunService");
    // RunService: a headless Studio session in edit mode, where generators run; the
    // reference's context table gives edit mode true for both IsServer and IsClient.
    for (name, answer) in [
        ("IsStudio", true),
        ("IsServer", true),
        ("IsClient", true),
        ("IsRunning", false),
        ("IsRunMode", false),
        ("IsEdit", true),
    ] {
        m.add_method(name, move |_lua, _this, ()| Ok(answer));
    }

    // BindToRenderStep/UnbindFromRenderStep: functions called each frame at PreRender, lowest
    // priority first, as PreRender connections of the run that bound them.
    m.add_method(
        "BindToRenderStep",
        |lua, this, (name, priority, f): (Value, Value, Value)| {
            let bad = |n: u32, want: &str, v: &Value, hint: &str| {
                mlua::Error::runtime(format!(
                    "invalid argument #{n} to 'BindToRenderStep' ({want} expected, got {}{hint})",
                    procmodel_luau_types::type_name(v)
                ))
            };
            let Value::String(name) = &name else {
                return Err(bad(1, "string", &name, ""));
            };
            let priority = match priority {
                Value::Integer(i) => i as f64,
                Value::Number(n) => n,
                other => {
                    return Err(bad(
                        2,
                        "number",
                        &other,
                        "; use Enum.RenderPriority.X.Value",
                    ));
                }
            };
            let Value::Function(f) = f else {
                return Err(bad(3, "function", &f, ""));
            };
            crate::signals::bind_render_step(lua, this.r, &name.to_string_lossy(), priority, f)
        },
    );
    m.add_method("UnbindFromRenderStep", |lua, _this, name: String| {
        crate::signals::unbind_render_step(lua, &name)
    });

    m.class("LogService");
    // LogService's structured logging (reference): `{key}` placeholders filled from the
    // context table; Output and Info print, Warn warns, Error (and Log at MessageError) warns
    // and throws a table with message, template, context and stack whose tostring is the
    // message. Written in Luau so that the thrown table reaches the script's pcall intact.
    let log = m
        .lua()
        .create_function(|lua, (ty, text): (u32, String)| output(lua, message_type(ty), text));
    match log.and_then(|log| {
        m.lua()
            .load(LOG_SERVICE_LUAU)
            .set_name("=[LogService]")
            .call::<mlua::Table>(log)
    }) {
        Ok(t) => {
            for name in ["Output", "Info", "Warn", "Error", "Log"] {
                match t.raw_get::<mlua::Function>(name) {
                    Ok(f) => m.add_function(name, f),
                    Err(e) => m.fail(e),
                }
            }
        }
        Err(e) => m.fail(e),
    }

    // What scripts output (`signals::script_output` keeps it), oldest first.
    m.add_method("GetLogHistory", |lua, _this, ()| {
        let lines: Vec<(String, u32, f64)> = ctx(lua)?
            .log_history
            .iter()
            .map(|l| (l.message.to_string(), l.ty as u32, l.timestamp))
            .collect();
        let out = lua.create_table_with_capacity(lines.len(), 0)?;
        for (message, ty, timestamp) in lines {
            let line = lua.create_table_with_capacity(0, 3)?;
            line.raw_set("message", message)?;
            line.raw_set(
                "messageType",
                procmodel_luau_types::variant_to_lua(
                    lua,
                    &Variant::Enum(rbx_types::Enum::from_u32(ty)),
                    Some("MessageType"),
                )?,
            )?;
            line.raw_set("timestamp", timestamp)?;
            out.raw_push(line)?;
        }
        Ok(out)
    });
    // Clears the history too, as the reference says.
    m.add_method("ClearOutput", |lua, _this, ()| {
        ctx(lua)?.log_history.clear();
        Ok(())
    });

    m.class("TestService");
    // TestService's output methods (what TestEZ's reporter and old test places call): the
    // reference's lines, blue ones printed and red or yellow ones warned. `Require` failing
    // says the test ended, as Roblox prints it; nothing stops.
    for (name, pass, fail) in [
        ("Check", "Check passed: ", "Check failed: "),
        (
            "Require",
            "Require passed: ",
            "Require failed. Test ended: ",
        ),
        ("Warn", "Warning passed: ", "Warning: "),
    ] {
        m.add_method(
            name,
            move |lua, _this, (condition, description): (Value, Value)| {
                let text = tostring(lua, description)?;
                let ok = !matches!(condition, Value::Nil | Value::Boolean(false));
                let (ty, prefix) = match (ok, name) {
                    (true, _) => (MessageType::Info, pass),
                    (false, "Warn") => (MessageType::Warning, fail),
                    (false, _) => (MessageType::Error, fail),
                };
                output(lua, ty, format!("{prefix}{text}"))
            },
        );
    }
    for (name, prefix, ty) in [
        ("Message", "TestService: ", MessageType::Info),
        ("Checkpoint", "Test checkpoint: ", MessageType::Info),
        ("Error", "TestService: ", MessageType::Error),
        ("Fail", "TestService: ", MessageType::Error),
    ] {
        m.add_method(name, move |lua, _this, text: Value| {
            let text = tostring(lua, text)?;
            output(lua, ty, format!("{prefix}{text}"))
        });
    }
    m.add_method("Done", |lua, _this, ()| {
        output(lua, MessageType::Info, "Testing Done".into())
    });

    m.class("Debris");
    // `Debris:AddItem(item, lifetime = 10)`: destroys the item after `lifetime` seconds of the
    // run's virtual clock (a `task.delay`, so a generation that ends first ends it too).
    for name in ["AddItem", "addItem"] {
        m.add_method(
            name,
            |lua, _this, (item, lifetime): (Value, Option<f64>)| {
                if ctx(lua)?.instance(&item).is_none() {
                    return Err(mlua::Error::runtime(format!(
                        "AddItem: the item must be an Instance, got {}",
                        procmodel_luau_types::type_name(&item)
                    )));
                }
                let lifetime = lifetime.unwrap_or(10.0);
                if !lifetime.is_finite() {
                    return Err(mlua::Error::runtime(format!(
                        "AddItem: lifetime must be a finite number, got {lifetime}"
                    )));
                }
                let add = crate::methods::luau_function(
                    lua,
                    DEBRIS_ADD,
                    "=[Debris]",
                    DEBRIS_ADD_LUAU,
                    || {
                        lua.globals()
                            .get::<mlua::Table>("task")?
                            .get::<mlua::Function>("delay")
                    },
                )?;
                add.call::<()>((item, lifetime.max(0.0)))
            },
        );
    }

    m.class("SharedTableRegistry");
    // One registry per run (a generation, a script), made empty when the run starts and
    // forgotten when it ends: a generation sees only what it registered itself, so its
    // results depend on its inputs alone, not on the runs before it on its VM.
    m.add_method("GetSharedTable", |lua, _this, a: MultiValue| {
        let name = string_arg(a.front().unwrap_or(&Value::Nil), "GetSharedTable")?;
        procmodel_luau_types::shared_table::registry_get(lua, &run_shared_tables(lua)?, &name)
    });
    m.add_method("SetSharedTable", |lua, _this, a: MultiValue| {
        let name = string_arg(a.front().unwrap_or(&Value::Nil), "SetSharedTable")?;
        let st = a.get(1).cloned().unwrap_or(Value::Nil);
        procmodel_luau_types::shared_table::registry_set(&run_shared_tables(lua)?, &name, &st)
    });

    m.class("Selection");
    // A headless session has no viewport to select in: the selection is what scripts set,
    // empty at first (command-bar and plugin scripts read it).
    m.add_method("Get", |lua, _this, ()| {
        let list = selection(lua)?;
        let out = lua.create_table()?;
        for v in list.sequence_values::<Value>() {
            let v = v?;
            if ctx(lua)?.instance(&v).is_some() {
                out.raw_push(v)?;
            }
        }
        Ok(out)
    });
    m.add_method("Set", |lua, _this, items: mlua::Table| {
        let list = lua.create_table()?;
        for v in items.sequence_values::<Value>() {
            let v = v?;
            if ctx(lua)?.instance(&v).is_none() {
                return Err(mlua::Error::runtime(format!(
                    "Selection:Set: instances expected, got {}",
                    procmodel_luau_types::type_name(&v)
                )));
            }
            push_new(&list, v)?;
        }
        lua.set_named_registry_value(SELECTION, list)
    });
    m.add_method("Add", |lua, _this, items: mlua::Table| {
        let list = selection(lua)?;
        for v in items.sequence_values::<Value>() {
            let v = v?;
            if ctx(lua)?.instance(&v).is_some() {
                push_new(&list, v)?;
            }
        }
        Ok(())
    });
    m.add_method("Remove", |lua, _this, items: mlua::Table| {
        let drop: Vec<Value> = items.sequence_values::<Value>().collect::<Result<_, _>>()?;
        let list = lua.create_table()?;
        for v in selection(lua)?.sequence_values::<Value>() {
            let v = v?;
            if !drop.contains(&v) {
                list.raw_push(v)?;
            }
        }
        lua.set_named_registry_value(SELECTION, list)
    });

    m.class("Lighting");
    // Minutes after midnight: the TimeOfDay string, like ClockTime (`crate::props`).
    m.add_method("GetMinutesAfterMidnight", |lua, this, ()| {
        let c = ctx(lua)?;
        let hours = c
            .dom
            .get_by_ref(this.r)
            .map_or(14.0, crate::props::lighting_hours);
        Ok(hours * 60.0)
    });
    // "There is no way to change the moon's phase so this will always return 0.75" (the
    // Roblox reference).
    m.add_method("GetMoonPhase", |_, _, ()| Ok(0.75));
    m.add_method("SetMinutesAfterMidnight", |lua, this, minutes: f64| {
        if !minutes.is_finite() {
            return Err(mlua::Error::runtime(
                "SetMinutesAfterMidnight: minutes must be a finite number",
            ));
        }
        let mut c = ctx(lua)?;
        c.check_write(this.r, || "SetMinutesAfterMidnight".into())?;
        if let Some(i) = c.dom.get_by_ref_mut(this.r) {
            i.properties.insert(
                rbx_dom_weak::ustr("TimeOfDay"),
                Variant::String(crate::props::time_of_day(minutes / 60.0)),
            );
        }
        Ok(())
    });

    m.class("MaterialService");
    m.add_method("GetBaseMaterialOverride", |lua, this, material: Value| {
        let c = ctx(lua)?;
        let key = override_key(&material, "GetBaseMaterialOverride")?;
        match c
            .dom
            .get_by_ref(this.r)
            .and_then(|i| i.properties.get(&key))
        {
            Some(Variant::String(name)) => lua.create_string(name),
            _ => lua.create_string(""),
        }
    });
    m.add_method(
        "SetBaseMaterialOverride",
        |lua, this, (material, name): (Value, Value)| {
            let key = override_key(&material, "SetBaseMaterialOverride")?;
            let Value::String(name) = name else {
                return Err(mlua::Error::runtime(format!(
                    "invalid argument #2 to 'SetBaseMaterialOverride' (string expected, got {})",
                    procmodel_luau_types::type_name(&name)
                )));
            };
            let name = name.to_str()?.to_owned();
            let mut c = ctx(lua)?;
            c.check_write(this.r, || "SetBaseMaterialOverride".into())?;
            c.charge_text(&Variant::String(name.clone()))?;
            if let Some(i) = c.dom.get_by_ref_mut(this.r) {
                i.properties.insert(key, Variant::String(name));
            }
            Ok(())
        },
    );
    m.add_method(
        "GetMaterialVariant",
        |lua, this, (material, name): (Value, Value)| {
            crate::methods::call_luau_method::<_, _, Value>(
                lua,
                this,
                (
                    "procmodel.get_material_variant",
                    "=[GetMaterialVariant]",
                    GET_MATERIAL_VARIANT_LUAU,
                ),
                || Ok(()),
                (material, name),
            )
        },
    );

    m.class("Players");
    // Players: nobody joins a headless session.
    m.add_method("GetPlayers", |lua, _this, ()| lua.create_table());
    for name in ["GetPlayerFromCharacter", "GetPlayerByUserId"] {
        m.add_method(name, move |_lua, _this, _: MultiValue| Ok(Value::Nil));
    }

    m.class("HttpService");
    // HttpService
    m.add_method("GenerateGUID", |lua, _this, wrap: Option<bool>| {
        {
            let c = ctx(lua)?;
            refuse_in_generator(&c, "HttpService:GenerateGUID")?;
        }
        let mut s = state(lua)?;
        let mut b = [0u8; 16];
        for chunk in b.chunks_mut(4) {
            chunk.copy_from_slice(&s.next_u32().to_be_bytes());
        }
        // A version-4 (random) UUID, upper-case as Roblox writes them.
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        let hex: String = b.iter().map(|x| format!("{x:02X}")).collect();
        let guid = format!(
            "{}-{}-{}-{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        );
        Ok(if wrap.unwrap_or(true) {
            format!("{{{guid}}}")
        } else {
            guid
        })
    });
    m.add_method("JSONEncode", |_lua, _this, v: Value| {
        crate::json::encode(&v)
    });
    m.add_method("JSONDecode", |lua, _this, text: String| {
        crate::json::decode(lua, &text)
    });
    m.add_method("UrlEncode", |_lua, _this, text: String| {
        let mut out = String::new();
        for b in text.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        Ok(out)
    });
    // Methods that need Roblox's servers or the client's fonts: each says why it cannot run
    // here, rather than "not a valid member" of a class the reference gives it.
    for &(class, methods, reason) in UNAVAILABLE {
        m.class(class);
        for &name in methods {
            m.add_method(
                name,
                move |_lua, _this, _: MultiValue| -> mlua::Result<()> {
                    Err(mlua::Error::runtime(format!("{class}:{name}: {reason}")))
                },
            );
        }
    }

    m.class("Instance");
    // Tags: Instance:AddTag(tag) and CollectionService:AddTag(instance, tag) share one function.
    m.add_method("AddTag", |lua, this, (a, b): (Value, Option<String>)| {
        let collection = this.class == "CollectionService";
        let (target, tag) = {
            let c = ctx(lua)?;
            if collection {
                let t = instance_arg(&c, &a, "AddTag")?;
                (t, b.unwrap_or_default())
            } else {
                (*this, string_arg(&a, "AddTag")?)
            }
        };
        super::instance::add_tag(lua, &target, tag)
    });
    m.add_method("RemoveTag", |lua, this, (a, b): (Value, Option<String>)| {
        let collection = this.class == "CollectionService";
        let (target, tag) = {
            let c = ctx(lua)?;
            if collection {
                (instance_arg(&c, &a, "RemoveTag")?, b.unwrap_or_default())
            } else {
                (*this, string_arg(&a, "RemoveTag")?)
            }
        };
        super::instance::remove_tag(lua, &target, tag)
    });
    m.add_method("HasTag", |lua, this, (a, b): (Value, Option<String>)| {
        let c = ctx(lua)?;
        let (target, tag) = if this.class == "CollectionService" {
            (instance_arg(&c, &a, "HasTag")?, b.unwrap_or_default())
        } else {
            (*this, string_arg(&a, "HasTag")?)
        };
        Ok(tags(&c, target.r).contains(&tag))
    });
    m.add_method("GetTags", |lua, this, a: Value| {
        let c = ctx(lua)?;
        let target = if this.class == "CollectionService" {
            instance_arg(&c, &a, "GetTags")?
        } else {
            *this
        };
        lua.create_sequence_from(tags(&c, target.r))
    });
    m.class("CollectionService");
    m.add_method("GetTagged", |lua, _this, tag: String| {
        let mut c = ctx(lua)?;
        let root = c.dom.root_ref();
        let found: Vec<Ref> = c
            .dom
            .descendants_of(root)
            .filter(|i| crate::services::has_tag(i, &tag))
            .map(|i| i.referent())
            .collect();
        // What the scene holds with a tag (or that nothing does) is a fact about it.
        c.note_lookup(root, &found, crate::context::Lookup::Other);
        super::instance::push_list(lua, &mut c, &found)
    });
    // The deprecated `GetCollection(class)`: the instances of `class` in the DataModel, for
    // the five classes the reference says it works for (others find nothing).
    m.add_method("GetCollection", |lua, _this, class: String| {
        const COLLECTED: [&str; 5] = [
            "Configuration",
            "CustomEvent",
            "CustomEventReceiver",
            "Dialog",
            "VehicleSeat",
        ];
        let mut c = ctx(lua)?;
        let root = c.dom.root_ref();
        let found: Vec<Ref> = if COLLECTED.contains(&class.as_str()) {
            c.dom
                .descendants_of(root)
                .filter(|i| i.class == class.as_str())
                .map(|i| i.referent())
                .collect()
        } else {
            Vec::new()
        };
        c.note_lookup(root, &found, crate::context::Lookup::Other);
        super::instance::push_list(lua, &mut c, &found)
    });
    m.add_method("GetAllTags", |lua, _this, ()| {
        let c = ctx(lua)?;
        let root = c.dom.root_ref();
        let mut all: Vec<String> = Vec::new();
        for i in c.dom.descendants_of(root) {
            if let Some(Variant::Tags(t)) = i.properties.get(&crate::keys::KEYS.tags) {
                for x in t.iter() {
                    if !all.iter().any(|a| a == x) {
                        all.push(x.to_owned());
                    }
                }
            }
        }
        lua.create_sequence_from(all)
    });
    m.add_method("GetInstanceAddedSignal", |lua, _this, tag: String| {
        crate::signals::tag_signal(lua, &tag, true)
    });
    m.add_method("GetInstanceRemovedSignal", |lua, _this, tag: String| {
        crate::signals::tag_signal(lua, &tag, false)
    });

    m.class("ChangeHistoryService");
    // ChangeHistoryService: requests for the engine's undo history.
    m.add_method("SetWaypoint", |lua, _this, name: String| {
        state(lua)?.history.push(HistoryRequest::Waypoint(name));
        Ok(())
    });
    m.add_method("Undo", |lua, _this, ()| {
        state(lua)?.history.push(HistoryRequest::Undo);
        Ok(())
    });
    m.add_method("Redo", |lua, _this, ()| {
        state(lua)?.history.push(HistoryRequest::Redo);
        Ok(())
    });
    m.add_method(
        "TryBeginRecording",
        |lua, _this, (name, _display): (String, Option<String>)| {
            let mut s = state(lua)?;
            if !s.recordings.is_empty() {
                // As in Studio: one recording at a time.
                return Ok(None);
            }
            s.next_recording += 1;
            let id = format!("{}", s.next_recording);
            s.recordings.push((id.clone(), name));
            Ok(Some(id))
        },
    );
    // Whether a recording is open (any, or the one named by `identifier`).
    m.add_method("IsRecordingInProgress", |lua, _this, id: Option<String>| {
        let s = state(lua)?;
        Ok(match id {
            None => !s.recordings.is_empty(),
            Some(id) => s.recordings.iter().any(|(r, _)| *r == id),
        })
    });
    m.add_method(
        "FinishRecording",
        |lua, _this, (id, op): (String, Value)| {
            let commit = match &op {
                Value::Nil => true,
                // Cancel = 0, Commit = 1, Append = 2.
                other => {
                    super::instance::enum_arg(
                        other,
                        "FinishRecordingOperation",
                        "FinishRecording",
                        2,
                    )? != 0
                }
            };
            let mut s = state(lua)?;
            let Some(i) = s.recordings.iter().position(|(r, _)| *r == id) else {
                return Err(mlua::Error::runtime(format!(
                    "FinishRecording: no recording with identifier \"{id}\" is open"
                )));
            };
            let (_, name) = s.recordings.remove(i);
            if commit {
                s.history.push(HistoryRequest::Waypoint(name));
            }
            Ok(())
        },
    );
}

/// LogService's logging methods (see `register`).
const LOG_SERVICE_LUAU: &str = r#"
local log = ...
-- Each method raises its own errors at level 2 (the caller's line): helpers return the text,
-- as the compiler may inline them and shift the levels.
local function checked(self, name)
    if typeof(self) ~= "Instance" or not self:IsA("LogService") then
        return `Expected ':' not '.' calling member function {name}`
    end
    return nil
end
local function render(name, message, context, first)
    if type(message) ~= "string" then
        return nil, `invalid argument #{first} to '{name}' (string expected, got {typeof(message)})`
    end
    if context == nil then
        return message
    end
    if type(context) ~= "table" then
        return nil, `invalid argument #{first + 1} to '{name}' (table expected, got {typeof(context)})`
    end
    return (string.gsub(message, "{([%w_]+)}", function(key)
        local value = context[key]
        if value == nil then
            return nil
        end
        return tostring(value)
    end))
end
local ERROR_META = { __tostring = function(e) return e.message end }
local function thrown(text, template, context)
    log(3, text)
    return setmetatable({
        message = text,
        template = template,
        context = context,
        stack = debug.traceback(nil, 3),
    }, ERROR_META)
end
-- `log(value, text)`: the value of the line's Enum.MessageType (MessageOutput 0,
-- MessageInfo 1, MessageWarning 2, MessageError 3).
local function logger(name, messageType)
    return function(self, message, context)
        local bad = checked(self, name)
        if bad then error(bad, 2) end
        local text, err = render(name, message, context, 1)
        if err then error(err, 2) end
        log(messageType, text)
    end
end
local methods = {
    Output = logger("Output", 0),
    Info = logger("Info", 1),
    Warn = logger("Warn", 2),
}
function methods.Error(self, message, context)
    local bad = checked(self, "Error")
    if bad then error(bad, 2) end
    local text, err = render("Error", message, context, 1)
    if err then error(err, 2) end
    error(thrown(text, message, context), 0)
end
function methods.Log(self, messageType, message, context)
    local bad = checked(self, "Log")
    if bad then error(bad, 2) end
    if typeof(messageType) ~= "EnumItem" or messageType.EnumType ~= Enum.MessageType then
        error(`invalid argument #1 to 'Log' (Enum.MessageType expected, got {typeof(messageType)})`, 2)
    end
    local text, err = render("Log", message, context, 2)
    if err then error(err, 2) end
    if messageType == Enum.MessageType.MessageError then
        error(thrown(text, message, context), 0)
    end
    log(messageType.Value, text)
end
return methods
"#;

/// A line LogService's or TestService's output methods print, as a script's output.
fn output(lua: &mlua::Lua, ty: MessageType, text: String) -> mlua::Result<()> {
    crate::signals::script_output(lua, ty, text.clone(), &text, None)
}

/// `Enum.MessageType`'s item of value `v` (MessageOutput for any other value).
fn message_type(v: u32) -> MessageType {
    match v {
        1 => MessageType::Info,
        2 => MessageType::Warning,
        3 => MessageType::Error,
        _ => MessageType::Output,
    }
}

/// What `tostring` gives for `v` (the text the output methods print).
fn tostring(lua: &mlua::Lua, v: Value) -> mlua::Result<String> {
    let f: mlua::Function = lua.globals().get("tostring")?;
    Ok(f.call::<mlua::LuaString>(v)?.to_string_lossy())
}

fn string_arg(v: &Value, method: &str) -> mlua::Result<String> {
    match v {
        Value::String(s) => Ok(s.to_str()?.to_owned()),
        other => Err(mlua::Error::runtime(format!(
            "{method}: string expected, got {}",
            procmodel_luau_types::type_name(other)
        ))),
    }
}
