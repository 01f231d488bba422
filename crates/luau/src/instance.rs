//! The instance handles' metatable: property reads and writes with reflection-database
//! types, derived properties, and the member resolution (properties, then methods, then
//! events, then children by name, as in Roblox). The hot reads and writes are answered by
//! `ffi`'s raw callbacks through [`read_direct`] and [`write_direct`]; everything else by the
//! mlua functions here. Destroyed instances (and their descendants) keep answering reads;
//! their Parent is locked.

use crate::attachment::{Euler, euler_degrees, from_euler_degrees};
use crate::context::{Ctx, Instance, Lookup, ctx};
use crate::ffi::{FastValue, Read};
use crate::methods::{Methods, not_member};
use crate::props::Prop;
use glam::{Mat3, Vec3};
use mlua::{Lua, Value};
use procmodel_dom::{affine_to_cframe, get_pivot};
use procmodel_luau_types::raw::Key;
use rbx_dom_weak::Ustr;
use rbx_reflection::DataType;
use rbx_types::VariantType;
use rbx_types::{Ref, Variant};

/// Reads `Instance` from an optional argument (`nil` → `None`).
pub fn opt_instance(c: &Ctx, v: &Value) -> mlua::Result<Option<Instance>> {
    match v {
        Value::Nil => Ok(None),
        _ => match c.instance(v) {
            Some(i) => Ok(Some(i)),
            None => Err(mlua::Error::runtime(format!(
                "Instance expected, got {}",
                procmodel_luau_types::type_name(v)
            ))),
        },
    }
}

/// Message for an unknown instance handle (cannot happen for handles this VM made).
fn stale() -> mlua::Error {
    mlua::Error::runtime("instance no longer exists")
}

/// Installs the metatable every instance handle shares (Luau keeps one metatable per
/// primitive type; in these VMs the only light userdata are instance handles), with the
/// methods of every class (`classes::methods`). Members resolve as in Roblox: properties,
/// then methods, then children by name.
pub fn install(lua: &Lua, methods: Methods) -> mlua::Result<()> {
    crate::context::ctx(lua)?
        .props
        .set_methods(std::rc::Rc::new(methods.index()));
    let meta = lua.create_table()?;
    // The fast path's table: it is consulted only after the member resolution found the
    // method on the instance's class.
    let method_table = lua.create_table()?;
    for (name, f) in methods.unambiguous() {
        method_table.raw_set(lua.create_string(name)?, f.clone())?;
    }
    let slow = lua.create_function(move |lua, (h, key): (Value, Key)| {
        index(lua, &h, key.bytes(), &methods)
    })?;
    meta.raw_set(
        "__index",
        procmodel_luau_types::raw::closure_with(
            lua,
            crate::ffi::raw_index::<Ctx>,
            slow,
            (method_table, crate::context::cell_value(lua)?),
        )?,
    )?;
    let slow = lua.create_function(|lua, (h, key, value): (Value, Key, FastValue)| {
        newindex_fast(lua, &h, key.bytes(), value)?;
        crate::context::after_call(lua)
    })?;
    meta.raw_set(
        "__newindex",
        procmodel_luau_types::raw::closure_with(
            lua,
            crate::ffi::raw_newindex::<Ctx>,
            slow,
            crate::context::cell_value(lua)?,
        )?,
    )?;
    meta.raw_set(
        "__tostring",
        lua.create_function(|lua, h: Value| {
            let c = ctx(lua)?;
            let this = c.instance(&h).ok_or_else(stale)?;
            Ok(c.dom
                .get_by_ref(this.r)
                .map(|i| i.name.clone())
                .unwrap_or_default())
        })?,
    )?;
    meta.raw_set("__type", "Instance")?;
    // As in Roblox: scripts may not read or replace an instance's metatable.
    meta.raw_set("__metatable", "The metatable is locked")?;
    meta.set_readonly(true);
    lua.set_type_metatable::<mlua::LightUserData>(Some(meta));
    Ok(())
}

fn index(lua: &Lua, h: &Value, key_bytes: &[u8], methods: &Methods) -> mlua::Result<Value> {
    let key = || String::from_utf8_lossy(key_bytes);
    let mut c = ctx(lua)?;
    let this = &c.instance(h).ok_or_else(stale)?;
    let prop = c.props.get(this.class, key_bytes);
    let c = &mut *c;
    let Some(inst) = c.dom.get_by_ref(this.r) else {
        return Err(mlua::Error::runtime("instance no longer exists"));
    };
    match &*prop {
        Prop::Name => lua.create_string(&inst.name).map(Value::String),
        Prop::ClassName => lua.create_string(inst.class.as_str()).map(Value::String),
        Prop::Parent => {
            let p = inst.parent();
            if p.is_none() {
                Ok(Value::Nil)
            } else {
                c.push(p)
            }
        }
        Prop::Position => {
            let cf = procmodel_dom::part_cframe(inst);
            Ok(procmodel_luau_types::Vector3(Vec3::from(cf.translation)).value())
        }
        Prop::Orientation | Prop::Rotation => {
            let cf = procmodel_dom::part_cframe(inst);
            let deg = euler_degrees(Mat3::from(cf.matrix3), euler_order(&prop));
            Ok(procmodel_luau_types::Vector3(deg).value())
        }
        Prop::BrickColor(color_key) => {
            let color = read_stored(
                inst,
                *color_key,
                procmodel_dom::db_default(this.class.as_str(), color_key.as_str()),
            );
            let bc = match color {
                Some(Variant::Color3(c3)) => nearest_brick_color(c3.r, c3.g, c3.b),
                Some(Variant::Color3uint8(c8)) => nearest_brick_color(
                    c8.r as f32 / 255.0,
                    c8.g as f32 / 255.0,
                    c8.b as f32 / 255.0,
                ),
                _ => rbx_types::BrickColor::MediumStoneGrey,
            };
            procmodel_luau_types::variant_to_lua(lua, &Variant::BrickColor(bc), None)
        }
        Prop::ClockTime => {
            c.note_state_read(*this);
            Ok(Value::Number(crate::props::lighting_hours(inst)))
        }
        Prop::TimeOfDay => {
            c.note_state_read(*this);
            let text = crate::props::time_of_day(crate::props::lighting_hours(inst));
            Ok(Value::String(lua.create_string(text)?))
        }
        Prop::FontEnum => {
            let face = read_stored(
                inst,
                Ustr::from("FontFace"),
                procmodel_dom::db_default(this.class.as_str(), "FontFace"),
            );
            let name = match &face {
                Some(Variant::Font(f)) => procmodel_luau_types::font::to_enum(f),
                _ => None,
            };
            let item =
                procmodel_luau_types::enums::EnumItem::from_name("Font", name.unwrap_or("Unknown"))
                    .ok_or_else(|| {
                        mlua::Error::runtime("Enum.Font is missing from the database")
                    })?;
            procmodel_luau_types::enums::enum_item_value(lua, item)
        }
        Prop::ContentId { content, own, .. } => {
            let uri = match inst.properties.get(content) {
                Some(Variant::Content(v)) => match v.value() {
                    rbx_types::ContentType::Uri(u) => u.as_str(),
                    _ => "",
                },
                _ => match inst.properties.get(own) {
                    Some(Variant::ContentId(id)) => id.as_str(),
                    _ => "",
                },
            };
            lua.create_string(uri).map(Value::String)
        }
        Prop::Inverted(k, _) => {
            let stored = read_stored(
                inst,
                *k,
                procmodel_dom::db_default(this.class.as_str(), k.as_str()),
            );
            Ok(Value::Boolean(!matches!(stored, Some(Variant::Bool(true)))))
        }
        Prop::WorldPivot => cframe_value(lua, &get_pivot(&c.dom, this.r).unwrap_or_default()),
        Prop::Scale => Ok(Value::Number(procmodel_dom::model_scale(inst) as f64)),
        Prop::Mass => Ok(Value::Number(crate::assembly::mass(inst))),
        Prop::ExtentsCFrame => cframe_value(lua, &procmodel_dom::part_cframe(inst)),
        Prop::ExtentsSize => {
            let size = procmodel_dom::part_size(inst).max(Vec3::splat(PHYSICAL_SIZE_MIN));
            Ok(procmodel_luau_types::Vector3(size).value())
        }
        Prop::AssemblyMass => {
            let parts = crate::assembly::assembly(c, this.r, "AssemblyMass")?;
            let mut total = 0.0;
            for r in parts {
                let Some(i) = c.dom.get_by_ref(r) else {
                    continue;
                };
                if crate::assembly::anchored(i) {
                    // An anchored assembly's mass is infinite (the reference).
                    return Ok(Value::Number(f64::INFINITY));
                }
                total += crate::assembly::mass(i);
            }
            Ok(Value::Number(total))
        }
        Prop::CenterOfMass => Ok(
            procmodel_luau_types::Vector3(crate::assembly::center_of_mass(c, &[this.r])).value(),
        ),
        Prop::AssemblyCenterOfMass => {
            let parts = crate::assembly::assembly(c, this.r, "AssemblyCenterOfMass")?;
            Ok(procmodel_luau_types::Vector3(crate::assembly::center_of_mass(c, &parts)).value())
        }
        Prop::CurrentPhysicalProperties => {
            mlua::IntoLua::into_lua(crate::assembly::physical_properties(inst), lua)
        }
        Prop::DistributedGameTime => Ok(Value::Number(crate::sched::now(lua))),
        Prop::HumanoidRootPart => {
            let parent = inst.parent();
            let found = c.dom.get_by_ref(parent).and_then(|p| {
                p.children().iter().copied().find(|&r| {
                    c.dom.get_by_ref(r).is_some_and(|i| {
                        i.name == "HumanoidRootPart" && procmodel_dom::is_a(&i.class, "BasePart")
                    })
                })
            });
            if parent.is_none() {
                return Ok(Value::Nil);
            }
            c.push_found(parent, found, Lookup::Child("HumanoidRootPart"))
        }
        Prop::AssemblyRootPart => {
            let parts = crate::assembly::assembly(c, this.r, "AssemblyRootPart")?;
            match crate::assembly::root_part(c, &parts) {
                Some(r) => c.push(r),
                None => Ok(Value::Nil),
            }
        }
        Prop::Attachment(d) => {
            let v = crate::attachment::read(&c.dom, this.r, *d);
            procmodel_luau_types::variant_to_lua(lua, &v, None)
        }
        Prop::Stored {
            key: k,
            data_type,
            default,
            readable,
            ..
        } => {
            if !readable {
                return Err(mlua::Error::runtime(format!(
                    "{} is not a readable member of {} \"{}\"",
                    key(),
                    this.class,
                    c.full_name(this.r)
                )));
            }
            if data_type.ty() == rbx_types::VariantType::Content
                && let Some(image) = crate::classes::image::shown(c, this.r, *k)
            {
                return mlua::IntoLua::into_lua(image, lua);
            }
            let value = match inst.properties.get(k) {
                Some(v) => v.clone(),
                None => match default {
                    Some(v) => (*v).clone(),
                    None => procmodel_luau_types::zero_value(data_type).ok_or_else(|| {
                        mlua::Error::runtime(format!(
                            "{} of {} \"{}\" has no value to read",
                            key(),
                            this.class,
                            c.full_name(this.r)
                        ))
                    })?,
                },
            };
            if *k == crate::keys::KEYS.primary_part {
                // Roblox reads PrimaryPart as nil once the part is no longer a descendant.
                return match procmodel_dom::primary_part_of(&c.dom, this.r) {
                    Some(r) => c.push(r),
                    None => Ok(Value::Nil),
                };
            }
            if let Variant::Ref(r) = value {
                if r.is_some() && c.dom.get_by_ref(r).is_some() {
                    return c.push(r);
                }
                // `game.Workspace` (and its old spelling `game.workspace`): the Workspace
                // service (Roblox fills this property in).
                if this.class == "DataModel"
                    && k.as_str().eq_ignore_ascii_case("Workspace")
                    && let Some(&ws) = inst
                        .children()
                        .iter()
                        .find(|&&ch| c.dom.get_by_ref(ch).is_some_and(|i| i.class == "Workspace"))
                {
                    return c.push(ws);
                }
                // The DataModel's other service properties (`game.lighting`,
                // `game.RunService`): that service, as `GetService` gives it.
                let service = match k.as_str() {
                    "lighting" => Some("Lighting"),
                    "RunService" => Some("RunService"),
                    _ => None,
                };
                if this.class == "DataModel"
                    && let Some(service) = service
                    && let Ok(r) = crate::services::get_service(c, service)
                {
                    return c.push(r);
                }
                // `Workspace.Terrain`: its Terrain child, made on first use.
                if let Some(terrain) = crate::services::workspace_terrain(c, this, key_bytes) {
                    return c.push(terrain);
                }
                // `Workspace.CurrentCamera`: its Camera, made on first use.
                if let Some(camera) = crate::services::workspace_camera(c, this, key_bytes) {
                    return c.push(camera);
                }
                return Ok(Value::Nil);
            }
            c.note_state_read(*this);
            let enum_name = match data_type {
                rbx_reflection::DataType::Enum(n) => Some(*n),
                _ => None,
            };
            procmodel_luau_types::variant_to_lua(lua, &value, enum_name)
        }
        Prop::Method => match methods.lookup(this.class.as_str(), key_bytes) {
            Some(method) => Ok(Value::Function(method.clone())),
            None => Err(not_member(c, this, &key())),
        },
        Prop::Missing => {
            // The managed class's methods (`managed.rs`); the wait yields, so it is a Luau
            // function.
            if let Some(m) = c.managed.as_ref().filter(|m| m.class == this.class) {
                let name = if key_bytes == m.wait_method.as_bytes() {
                    Some(crate::context::MANAGED_WAIT)
                } else if key_bytes == m.force_method.as_bytes() {
                    Some(crate::context::MANAGED_FORCE)
                } else {
                    None
                };
                if let Some(name) = name {
                    let f: mlua::Function = lua.named_registry_value(name)?;
                    return Ok(Value::Function(f));
                }
            }
            if key_bytes == b"WaitForChild" || key_bytes == b"waitForChild" {
                let f: mlua::Function = lua.named_registry_value("procmodel.wait_for_child")?;
                return Ok(Value::Function(f));
            }
            // Events are members too: they come before children.
            if let Some(signal) = crate::signals::member(lua, this, key_bytes)? {
                return Ok(signal);
            }
            // Children by name come after properties and methods, as in Roblox.
            if let Some(&child) = inst.children().iter().find(|&&ch| {
                c.dom
                    .get_by_ref(ch)
                    .is_some_and(|i| i.name.as_bytes() == key_bytes)
            }) {
                return c.push(child);
            }
            // `game.Lighting` and the other standard services, made on first use.
            if let Some(service) = crate::services::standard_child(c, this, key_bytes) {
                return c.push(service);
            }
            Err(not_member(c, this, &key()))
        }
    }
}

/// What the raw `__index` and `__newindex` of instance handles (`ffi`) do on the run context.
impl crate::ffi::PropertyAccess for Ctx {
    #[inline]
    fn read(&mut self, this: &Value, key: &[u8]) -> mlua::Result<Option<Read>> {
        read_direct(self, this, key)
    }

    #[inline]
    fn write(&mut self, this: &Value, key: &[u8], value: FastValue) -> mlua::Result<bool> {
        if self.signals.immediate {
            // The write's handlers run before it returns: the mlua function does that.
            return Ok(false);
        }
        Ok(matches!(
            write_direct(self, this, key, value)?,
            Direct::Done
        ))
    }
}

/// The common property reads (stored values of plain types, Name, Parent, Position) with no
/// Lua state; None means "take the general path" (derived properties, enums, errors...).
pub fn read_direct(c: &mut Ctx, h: &Value, key_bytes: &[u8]) -> mlua::Result<Option<Read>> {
    let this = c.instance(h).ok_or_else(stale)?;
    let prop = c.props.get(this.class, key_bytes);
    let Some(inst) = c.dom.get_by_ref(this.r) else {
        return Err(stale());
    };
    let handle = |c: &mut Ctx, r: Ref| -> mlua::Result<Read> {
        if r.is_none() || c.dom.get_by_ref(r).is_none() {
            return Ok(Read::Nil);
        }
        match c.push(r)? {
            Value::LightUserData(p) => Ok(Read::Handle(p.0)),
            _ => Err(mlua::Error::runtime("internal error: no handle")),
        }
    };
    Ok(Some(match &*prop {
        Prop::Name => Read::Str(inst.name.clone()),
        Prop::Parent => {
            let p = inst.parent();
            return handle(c, p).map(Some);
        }
        Prop::Position => Read::Vector(procmodel_dom::part_cframe(inst).translation.into()),
        Prop::Stored {
            key: k,
            default,
            readable: true,
            ..
        } => {
            let value = match inst.properties.get(k) {
                Some(v) => v,
                None => match default {
                    Some(v) => *v,
                    None => return Ok(None),
                },
            };
            let read = match value {
                Variant::Bool(b) => Read::Bool(*b),
                Variant::Float32(n) => Read::Number(*n as f64),
                Variant::Float64(n) => Read::Number(*n),
                Variant::Int32(n) => Read::Number(*n as f64),
                Variant::Int64(n) => Read::Number(*n as f64),
                Variant::String(s) => Read::Str(s.clone()),
                Variant::Vector3(v) => Read::Vector(Vec3::new(v.x, v.y, v.z)),
                Variant::CFrame(cf) => Read::CFrame((*cf).into()),
                Variant::Color3(c3) => Read::Color3((*c3).into()),
                // References keep their rules (PrimaryPart) in one place: the general path.
                _ => return Ok(None),
            };
            c.note_state_read(this);
            read
        }
        Prop::Method => Read::Method,
        _ => return Ok(None),
    }))
}

fn read_stored(
    inst: &rbx_dom_weak::Instance,
    key: Ustr,
    default: Option<&Variant>,
) -> Option<Variant> {
    inst.properties.get(&key).or(default).cloned()
}

fn nearest_brick_color(r: f32, g: f32, b: f32) -> rbx_types::BrickColor {
    procmodel_dom::nearest_brick_color(r, g, b)
}

fn assign_error(prop: &str, expected: &str, value: &Value) -> mlua::Error {
    mlua::Error::runtime(format!(
        "unable to assign property {prop}: {expected} expected, got {}",
        procmodel_luau_types::type_name(value)
    ))
}

/// Property writes: the common cases (a value of exactly the property's type) are stored
/// straight from the stack copy; everything else takes the general conversion path.
fn newindex_fast(lua: &Lua, h: &Value, key_bytes: &[u8], value: FastValue) -> mlua::Result<()> {
    let mut guard = ctx(lua)?;
    let c = &mut *guard;
    match write_direct(c, h, key_bytes, value)? {
        Direct::Done => Ok(()),
        Direct::General(this, prop, value) => {
            newindex(c, &this, &prop, key_bytes, value.into_value(lua)?)
        }
    }
}

/// What [`write_direct`] did.
pub enum Direct {
    Done,
    /// Not a value of exactly the property's type: the general path converts it.
    General(Instance, std::rc::Rc<Prop>, FastValue),
}

/// A property write without any Luau value: the sandbox check, then the values of exactly
/// the property's type stored at once (no Lua state needed, so raw C callbacks use it too).
pub fn write_direct(
    c: &mut Ctx,
    h: &Value,
    key_bytes: &[u8],
    value: FastValue,
) -> mlua::Result<Direct> {
    let key = || String::from_utf8_lossy(key_bytes);
    let this = &c.instance(h).ok_or_else(stale)?;
    let prop = c.props.get(this.class, key_bytes);
    c.check_write(this.r, || format!("setting {}", key()))?;
    let done = |r: mlua::Result<()>| r.map(|()| Direct::Done);
    let direct = match (&*prop, value) {
        (Prop::Name, FastValue::Str(s)) => return done(set_name(c, this, s)),
        (Prop::Parent, FastValue::Nil) => return done(set_parent(c, this.r, Ref::none())),
        (Prop::Position, FastValue::Vector3(v)) => {
            let inst = inst_mut(c, this)?;
            let mut cf = procmodel_dom::part_cframe(inst);
            let same = cf.translation == v.0.into();
            cf.translation = v.0.into();
            let cf = Variant::CFrame(affine_to_cframe(&cf));
            if c.signals.watch.any && !same {
                crate::signals::prop_changed(c, this.r, "Position");
            }
            return done(store(c, this, crate::keys::KEYS.cframe, cf));
        }
        (Prop::Orientation | Prop::Rotation, FastValue::Vector3(v)) => {
            let inst = inst_mut(c, this)?;
            let mut cf = procmodel_dom::part_cframe(inst);
            cf.matrix3 = from_euler_degrees(v.0, euler_order(&prop)).into();
            let cf = Variant::CFrame(affine_to_cframe(&cf));
            return done(store(c, this, crate::keys::KEYS.cframe, cf));
        }
        (Prop::Parent, FastValue::Handle(v)) => {
            let p = c.instance(&v).ok_or_else(stale)?;
            return done(set_parent(c, this.r, p.r));
        }
        (
            Prop::Stored {
                key: k,
                data_type,
                writable: true,
                saved: true,
                ..
            },
            v,
        ) => match (data_type, v) {
            (DataType::Value(VariantType::Vector3), FastValue::Vector3(v)) => {
                Ok((*k, Variant::Vector3(v.into())))
            }
            (DataType::Value(VariantType::CFrame), FastValue::CFrame(v)) => {
                Ok((*k, Variant::CFrame(v.into())))
            }
            (DataType::Value(VariantType::Color3), FastValue::Color3(v)) => {
                Ok((*k, Variant::Color3(v.into())))
            }
            (DataType::Value(VariantType::Bool), FastValue::Bool(b)) => Ok((*k, Variant::Bool(b))),
            (DataType::Value(VariantType::Float32), FastValue::Number(n)) => {
                Ok((*k, Variant::Float32(n as f32)))
            }
            (DataType::Value(VariantType::Float64), FastValue::Number(n)) => {
                Ok((*k, Variant::Float64(n)))
            }
            (DataType::Enum(name), FastValue::Enum(item)) if item.enum_name == *name => {
                Ok((*k, Variant::Enum(rbx_types::Enum::from_u32(item.value))))
            }
            (_, v) => Err(v),
        },
        (_, v) => Err(v),
    };
    match direct {
        Ok((k, variant)) if k == crate::keys::KEYS.cframe => done(store_cframe(c, this, variant)),
        Ok((k, variant)) => done(store(c, this, k, variant)),
        Err(value) => Ok(Direct::General(*this, prop, value)),
    }
}

/// The angle order of a part's `Orientation` or `Rotation`.
fn euler_order(prop: &Prop) -> Euler {
    match prop {
        Prop::Rotation => Euler::Rotation,
        _ => Euler::Orientation,
    }
}

/// A scene transform as a Luau CFrame.
pub(crate) fn cframe_value(lua: &Lua, a: &glam::Affine3A) -> mlua::Result<Value> {
    procmodel_luau_types::variant_to_lua(lua, &Variant::CFrame(affine_to_cframe(a)), None)
}

/// Roblox's error for a write to a read-only property.
fn read_only(name: &str) -> mlua::Error {
    mlua::Error::runtime(format!(
        "unable to assign property {name}: property is read only"
    ))
}

/// Roblox refuses a name this long or longer (its error quotes the limit; the reference's
/// older "100 characters" no longer holds: longer names are kept whole).
const NAME_MAX: usize = 200_000;

/// Renames an instance: the name counts against the output quota, and `Changed` fires.
fn set_name(c: &mut Ctx, this: &Instance, name: String) -> mlua::Result<()> {
    if name.len() >= NAME_MAX {
        return Err(mlua::Error::runtime(format!(
            "Unable to assign property Name. Provided string length ({}) is greater than or equal to max length ({NAME_MAX})",
            name.len()
        )));
    }
    c.charge_bytes(name.len())?;
    let old = std::mem::replace(&mut inst_mut(c, this)?.name, name);
    // Roblox fires the change signals only for a change; comparing costs only a listener.
    if c.signals.watch.any && inst_mut(c, this)?.name != old {
        crate::signals::prop_changed(c, this.r, "Name");
    }
    Ok(())
}

/// The smallest dimension the physics engine gives a part (BasePart.Size, Roblox reference).
const PHYSICAL_SIZE_MIN: f32 = 0.05;

/// The range of each of a part's dimensions (BasePart.Size, Roblox reference).
const PART_SIZE_MIN: f32 = 0.001;
const PART_SIZE_MAX: f32 = 2048.0;

/// A write of the `CFrame` property itself (not Position or Orientation, which move only
/// the part): a part in the Workspace brings the parts welded to it along
/// ([`crate::assembly::moving`]).
fn store_cframe(c: &mut Ctx, this: &Instance, variant: Variant) -> mlua::Result<()> {
    crate::assembly::moving(c, *this, |c| {
        store(c, this, crate::keys::KEYS.cframe, variant)
    })
}

/// Stores a converted property value; an input of the managed class sets its flag.
fn store(c: &mut Ctx, this: &Instance, k: Ustr, variant: Variant) -> mlua::Result<()> {
    // A part's dimensions are kept within the reference's limits, as Roblox keeps them.
    let variant = match variant {
        Variant::Vector3(v)
            if k == crate::keys::KEYS.size
                && procmodel_dom::is_a(this.class.as_str(), "BasePart") =>
        {
            let clamp = |x: f32| x.clamp(PART_SIZE_MIN, PART_SIZE_MAX);
            Variant::Vector3(rbx_types::Vector3::new(clamp(v.x), clamp(v.y), clamp(v.z)))
        }
        other => other,
    };
    c.charge_text(&variant)?;
    if let Variant::Ref(target) = &variant
        && target.is_some()
        && crate::assembly::joins_rigidly(this.class.as_str())
    {
        c.jointed.insert(*target);
        c.joints.insert(this.r);
    }
    let flag = c
        .managed
        .as_ref()
        .filter(|m| m.class == this.class && m.inputs.contains(&k))
        .map(|m| m.flag);
    let inst = inst_mut(c, this)?;
    let old = inst.properties.insert(k, variant);
    if let Some(flag) = flag {
        // An input changed: the instance is processed at the next frame.
        inst.properties.insert(flag, Variant::Bool(true));
    }
    // A module the running generation made is code no model has run yet (a nested model
    // that uses it is new, so dirty): only other modules' changes are looked into.
    let code_changed = k == crate::keys::KEYS.source
        && procmodel_dom::is_a(this.class.as_str(), "ModuleScript")
        && inst.properties.get(&k) != old.as_ref()
        && !c.handles.born_in_run(this.r);
    if code_changed {
        if !c.code_changed.contains(&this.r) {
            c.code_changed.push(this.r);
        }
        if c.managed.as_ref().is_some_and(|m| m.code.is_some()) {
            flag_code_users(c, this.r);
        }
    }
    if c.signals.watch.any && c.signals.watch.listens(this.r, crate::signals::WRITE_KINDS) {
        // Roblox fires the change signals only for a change (a value never written is the
        // class default); the comparison costs only writes someone listens to.
        let inst = inst_mut(c, this)?;
        let new = inst.properties.get(&k);
        let old = old
            .as_ref()
            .or_else(|| procmodel_dom::db_default(inst.class.as_str(), k.as_str()));
        if old.is_none() || old != new {
            crate::signals::prop_changed(c, this.r, k.as_str());
        }
    }
    Ok(())
}

/// A script changed the Source of `module`: every instance of the managed class whose code
/// property names it, or names a module that required it (directly or through others), is
/// flagged now, so a wait that follows waits for it (the engine would find the change only
/// at its next frame). The scene is walked once; Source writes are rare.
fn flag_code_users(c: &mut Ctx, module: Ref) {
    let Some(m) = c.managed.as_ref() else { return };
    let (class, flag, Some(code)) = (m.class, m.flag, m.code) else {
        return;
    };
    let mut affected = c.requirers(module);
    affected.insert(module);
    let users: Vec<Ref> = c
        .dom
        .descendants()
        .filter(|i| i.class == class)
        .filter(
            |i| matches!(i.properties.get(&code), Some(Variant::Ref(g)) if affected.contains(g)),
        )
        .map(|i| i.referent())
        .collect();
    for r in users {
        if let Some(i) = c.dom.get_by_ref_mut(r) {
            i.properties.insert(flag, Variant::Bool(true));
        }
    }
}

/// Stores `variant` as property `name` of `this` whatever a script may write (methods that
/// set read-only properties, as Roblox's own do).
pub(crate) fn store_raw(
    c: &mut Ctx,
    this: &Instance,
    name: &str,
    variant: Variant,
) -> mlua::Result<()> {
    store(c, this, Ustr::from(name), variant)
}

/// Removes property `name` of `this` (back to its default), whatever a script may write.
pub(crate) fn remove_raw(c: &mut Ctx, this: &Instance, name: &str) -> mlua::Result<()> {
    if inst_mut(c, this)?
        .properties
        .remove(&Ustr::from(name))
        .is_some()
        && c.signals.watch.any
    {
        crate::signals::prop_changed(c, this.r, name);
    }
    Ok(())
}

/// The general write path: conversions by the property's type, derived properties, errors.
fn newindex(
    c: &mut Ctx,
    this: &Instance,
    prop: &Prop,
    key_bytes: &[u8],
    value: Value,
) -> mlua::Result<()> {
    let key = || String::from_utf8_lossy(key_bytes);
    match prop {
        Prop::Name => {
            let name = match &value {
                Value::String(s) => s.to_str()?.to_owned(),
                Value::Number(n) => n.to_string(),
                Value::Integer(n) => n.to_string(),
                _ => return Err(assign_error("Name", "string", &value)),
            };
            set_name(c, this, name)
        }
        Prop::ClassName => Err(mlua::Error::runtime(
            "unable to assign property ClassName: property is read only",
        )),
        Prop::Parent => {
            let parent =
                opt_instance(c, &value).map_err(|_| assign_error("Parent", "Instance", &value))?;
            set_parent(c, this.r, parent.map(|p| p.r).unwrap_or_else(Ref::none))
        }
        // A Vector3 took the fast path: anything else is the wrong type.
        Prop::Position | Prop::Orientation | Prop::Rotation => {
            Err(assign_error(&key(), "Vector3", &value))
        }
        Prop::BrickColor(color_key) => {
            let data_type = rbx_reflection::DataType::Value(rbx_types::VariantType::BrickColor);
            let bc = match procmodel_luau_types::lua_to_variant(&value, &data_type) {
                Ok(Variant::BrickColor(bc)) => bc,
                _ => return Err(assign_error(&key(), "BrickColor", &value)),
            };
            let c8 = bc.to_color3uint8();
            let c3 = rbx_types::Color3::new(
                c8.r as f32 / 255.0,
                c8.g as f32 / 255.0,
                c8.b as f32 / 255.0,
            );
            store(c, this, *color_key, Variant::Color3(c3))
        }
        Prop::ClockTime => match procmodel_luau_types::lua_to_variant(
            &value,
            &DataType::Value(rbx_types::VariantType::Float64),
        ) {
            Ok(Variant::Float64(h)) if h.is_finite() => store(
                c,
                this,
                Ustr::from("TimeOfDay"),
                Variant::String(crate::props::time_of_day(h)),
            ),
            _ => Err(assign_error(&key(), "finite number", &value)),
        },
        Prop::TimeOfDay => {
            let hours = match &value {
                Value::String(s) => crate::props::parse_time_of_day(&s.to_string_lossy()),
                Value::Number(n) => Some(*n).filter(|n| n.is_finite()),
                Value::Integer(n) => Some(*n as f64),
                _ => return Err(assign_error(&key(), "string", &value)),
            };
            let Some(hours) = hours else {
                return Err(mlua::Error::runtime(format!(
                    "unable to assign property {}: {} is not a time of day (HH:MM:SS, or hours)",
                    key(),
                    match &value {
                        Value::String(s) => format!("{:?}", s.to_string_lossy()),
                        other => format!("{other:?}"),
                    }
                )));
            };
            store(
                c,
                this,
                Ustr::from("TimeOfDay"),
                Variant::String(crate::props::time_of_day(hours)),
            )
        }
        Prop::DistributedGameTime => match procmodel_luau_types::lua_to_variant(
            &value,
            &DataType::Value(rbx_types::VariantType::Float64),
        ) {
            Ok(v @ Variant::Float64(_)) => store(c, this, Ustr::from("DistributedGameTime"), v),
            _ => Err(assign_error(&key(), "number", &value)),
        },
        Prop::FontEnum => {
            let face = match procmodel_luau_types::lua_to_variant(&value, &DataType::Enum("Font")) {
                Ok(Variant::Enum(e)) => {
                    procmodel_luau_types::enums::EnumItem::from_value("Font", e.to_u32())
                        .and_then(|item| procmodel_luau_types::font::from_enum(item.name))
                }
                _ => return Err(assign_error(&key(), "Enum.Font", &value)),
            };
            match face {
                Some(f) => store(c, this, Ustr::from("FontFace"), Variant::Font(f.0)),
                None => Err(mlua::Error::runtime(format!(
                    "unable to assign property {}: Enum.Font.Unknown names no font face",
                    key()
                ))),
            }
        }
        Prop::ContentId {
            content,
            own,
            writable,
        } => {
            if !writable {
                return Err(read_only(&key()));
            }
            let data_type = DataType::Value(rbx_types::VariantType::ContentId);
            let uri = match procmodel_luau_types::lua_to_variant(&value, &data_type) {
                Ok(Variant::ContentId(id)) => id.as_str().to_owned(),
                _ => return Err(assign_error(&key(), "string", &value)),
            };
            let v = if uri.is_empty() {
                rbx_types::Content::none()
            } else {
                rbx_types::Content::from_uri(uri)
            };
            // One value: a ContentId a loaded file kept under the old name goes.
            inst_mut(c, this)?.properties.remove(own);
            if c.signals.watch.any {
                crate::signals::prop_changed(c, this.r, own.as_str());
            }
            store(c, this, *content, Variant::Content(v))
        }
        Prop::Inverted(_, false) => Err(read_only(&key())),
        Prop::Inverted(k, true) => match value {
            Value::Boolean(b) => store(c, this, *k, Variant::Bool(!b)),
            other => Err(assign_error(&key(), "boolean", &other)),
        },
        Prop::WorldPivot => {
            let data_type = rbx_reflection::DataType::Value(rbx_types::VariantType::CFrame);
            let cf = match procmodel_luau_types::lua_to_variant(&value, &data_type) {
                Ok(Variant::CFrame(cf)) => cf,
                _ => return Err(assign_error(&key(), "CFrame", &value)),
            };
            inst_mut(c, this)?.properties.insert(
                crate::keys::KEYS.world_pivot_data,
                Variant::OptionalCFrame(Some(cf)),
            );
            Ok(())
        }
        Prop::Scale => Err(mlua::Error::runtime(
            "unable to assign property Scale: use Model:ScaleTo(scale) to change a model's scale",
        )),
        Prop::Mass
        | Prop::ExtentsCFrame
        | Prop::ExtentsSize
        | Prop::AssemblyMass
        | Prop::AssemblyRootPart
        | Prop::HumanoidRootPart
        | Prop::CenterOfMass
        | Prop::AssemblyCenterOfMass
        | Prop::CurrentPhysicalProperties => Err(read_only(&key())),
        Prop::Attachment(d) => {
            let (ty, name) = if d.is_cframe() {
                (rbx_types::VariantType::CFrame, "CFrame")
            } else {
                (rbx_types::VariantType::Vector3, "Vector3")
            };
            let v = procmodel_luau_types::lua_to_variant(&value, &DataType::Value(ty))
                .map_err(|_| assign_error(&key(), name, &value))?;
            let cf = crate::attachment::write(&c.dom, this.r, *d, &v).map_err(|e| {
                mlua::Error::runtime(format!("unable to assign property {}: {e}", key()))
            })?;
            store(c, this, crate::keys::KEYS.cframe, Variant::CFrame(cf))
        }
        Prop::Stored {
            key: k,
            data_type,
            writable,
            saved,
            ..
        } => {
            if !writable {
                return Err(read_only(&key()));
            }
            // An image is carried by an attribute whether or not files save the property.
            if data_type.ty() == rbx_types::VariantType::Content {
                if let Some(image) = crate::classes::image::image_of(&value) {
                    return crate::classes::image::assign(c, this.r, this.class, *k, image);
                }
                crate::classes::image::unlink(c, this.r, *k);
            }
            if !saved && c.unsaved_warned.insert((this.class, *k)) {
                c.log(
                    crate::context::LogLevel::Warn,
                    format!(
                        "{}.{} is not saved in place or model files (Roblox keeps it through another property, or not at all): the value lasts only while the script runs",
                        this.class, k
                    ),
                );
            }
            let variant = if data_type.ty() == rbx_types::VariantType::Ref {
                let target = opt_instance(c, &value)
                    .map_err(|_| assign_error(&key(), "Instance", &value))?;
                Variant::Ref(target.map(|t| t.r).unwrap_or_else(Ref::none))
            } else {
                procmodel_luau_types::lua_to_variant(&value, data_type).map_err(|e| {
                    mlua::Error::runtime(format!("unable to assign property {}: {e}", key()))
                })?
            };
            if *k == crate::keys::KEYS.cframe {
                return store_cframe(c, this, variant);
            }
            store(c, this, *k, variant)
        }
        Prop::Missing | Prop::Method => {
            // A callback: kept for the instance (BindableFunction:Invoke calls OnInvoke;
            // nothing headless calls a RemoteFunction's or ProcessReceipt).
            if let Some((_, name)) = crate::api::callback(&this.class, &key()) {
                match value {
                    Value::Function(f) => {
                        c.signals.callbacks.insert((this.r, name), f);
                    }
                    Value::Nil => {
                        c.signals.callbacks.remove(&(this.r, name));
                    }
                    other => return Err(assign_error(name, "function", &other)),
                }
                return Ok(());
            }
            Err(not_member(c, this, &key()))
        }
    }
}

pub fn inst_mut<'a>(
    c: &'a mut Ctx,
    this: &Instance,
) -> mlua::Result<&'a mut rbx_dom_weak::Instance> {
    c.dom
        .get_by_ref_mut(this.r)
        .ok_or_else(|| mlua::Error::runtime("instance no longer exists"))
}

/// Whether `r` or an ancestor was destroyed (a destroyed instance's descendants are
/// destroyed with it).
fn is_destroyed(c: &Ctx, r: Ref) -> bool {
    let mut cur = r;
    while cur.is_some() {
        if c.destroyed.contains(&cur) {
            return true;
        }
        cur = c.dom.get_by_ref(cur).map_or(Ref::none(), |i| i.parent());
    }
    false
}

/// Reparents with Roblox's checks: locked parents, cycles.
pub fn set_parent(c: &mut Ctx, r: Ref, parent: Ref) -> mlua::Result<()> {
    c.check_write(r, || "setting Parent".into())?;
    c.check_write(parent, || "setting Parent".into())?;
    if !c.destroyed.is_empty() && is_destroyed(c, r) {
        return Err(mlua::Error::runtime(format!(
            "The Parent property of {} is locked, current parent: NULL, new parent {}",
            c.full_name(r),
            if parent.is_none() {
                "NULL".to_owned()
            } else {
                c.full_name(parent)
            }
        )));
    }
    if r == c.dom.root_ref() {
        return Err(mlua::Error::runtime(
            "the Parent property of the DataModel is locked",
        ));
    }
    let managed = c.managed.as_ref().map(|m| m.class);
    let (current, leaf, model) = c
        .dom
        .get_by_ref(r)
        .map(|i| {
            let model = Some(i.class) == managed;
            (i.parent(), i.children().is_empty(), model)
        })
        .unwrap_or((Ref::none(), true, false));
    if current == parent {
        return Ok(());
    }
    // Services (the DataModel's children) keep their parent; a cheap test for the rest.
    if current == c.dom.root_ref()
        && let Some(e) = crate::services::locked_parent(c, r)
    {
        return Err(e);
    }
    c.may_have_managed |= model;
    if parent.is_some() {
        if c.dom.get_by_ref(parent).is_none() {
            return Err(mlua::Error::runtime("new parent no longer exists"));
        }
        // Refuse cycles: the new parent may not be r or one of its descendants (a leaf has
        // none, so only r itself needs checking — most reparents are of fresh leaves).
        let mut cur = if leaf && parent != r {
            Ref::none()
        } else {
            parent
        };
        while cur.is_some() {
            if cur == r {
                return Err(mlua::Error::runtime(format!(
                    "attempt to set parent of {} to {} would result in circular reference",
                    c.full_name(r),
                    c.full_name(parent)
                )));
            }
            cur = c
                .dom
                .get_by_ref(cur)
                .map(|i| i.parent())
                .unwrap_or_else(Ref::none);
        }
    }
    c.dom.transfer_within(r, parent);
    c.tree_changed();
    c.parented(r, parent);
    if c.signals.watch.any {
        crate::signals::reparented(c, r, current, parent);
    }
    Ok(())
}
