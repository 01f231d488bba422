//! `Instance` as Luau userdata: property reads and writes with reflection-database types,
//! derived properties, children by name, and identity (one userdata per instance).

use crate::context::{Ctx, ctx};
use crate::props::{Prop, fallback};
use glam::{EulerRot, Mat3, Vec3};
use mlua::{Lua, MetaMethod, UserData, UserDataMethods, Value};
use procmodel_dom::{affine_to_cframe, get_pivot};
use rbx_dom_weak::Ustr;
use rbx_types::{Ref, Variant};

/// A handle to one instance in the run's DOM.
#[derive(Clone, Copy, Debug)]
pub struct Instance {
    pub r: Ref,
    pub class: Ustr,
}

impl mlua::FromLua for Instance {
    fn from_lua(value: Value, _: &Lua) -> mlua::Result<Self> {
        match &value {
            Value::UserData(ud) => ud.borrow::<Instance>().map(|i| *i).map_err(|_| {
                mlua::Error::runtime(format!(
                    "Instance expected, got {}",
                    procmodel_luau_types::type_name(&value)
                ))
            }),
            _ => Err(mlua::Error::runtime(format!(
                "Instance expected, got {}",
                procmodel_luau_types::type_name(&value)
            ))),
        }
    }
}

/// Reads `Instance` from an optional argument (`nil` → `None`).
pub fn opt_instance(v: &Value) -> mlua::Result<Option<Instance>> {
    match v {
        Value::Nil => Ok(None),
        Value::UserData(ud) => match ud.borrow::<Instance>() {
            Ok(i) => Ok(Some(*i)),
            Err(_) => Err(mlua::Error::runtime(format!(
                "Instance expected, got {}",
                procmodel_luau_types::type_name(v)
            ))),
        },
        _ => Err(mlua::Error::runtime(format!(
            "Instance expected, got {}",
            procmodel_luau_types::type_name(v)
        ))),
    }
}

impl UserData for Instance {
    fn add_fields<F: mlua::UserDataFields<Self>>(fields: &mut F) {
        fields.add_meta_field(MetaMethod::Type, "Instance");
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::Index, |lua, this, key: mlua::LuaString| {
            index(lua, this, &key.as_bytes())
        });
        methods.add_meta_method(
            MetaMethod::NewIndex,
            |lua, this, (key, value): (mlua::LuaString, Value)| {
                newindex(lua, this, &key.as_bytes(), value)
            },
        );
        methods.add_meta_method(MetaMethod::ToString, |lua, this, ()| {
            let c = ctx(lua)?;
            Ok(c.dom
                .get_by_ref(this.r)
                .map(|i| i.name.clone())
                .unwrap_or_default())
        });
        methods.add_meta_method(MetaMethod::Eq, |_, this, other: Value| {
            Ok(matches!(opt_instance(&other), Ok(Some(o)) if o.r == this.r))
        });
        crate::methods::add(methods);
    }
}

pub fn not_member(c: &Ctx, this: &Instance, key: &str) -> mlua::Error {
    mlua::Error::runtime(format!(
        "{key} is not a valid member of {} \"{}\"",
        this.class,
        c.full_name(this.r)
    ))
}

fn index(lua: &Lua, this: &Instance, key_bytes: &[u8]) -> mlua::Result<Value> {
    let key = || String::from_utf8_lossy(key_bytes);
    let mut c = ctx(lua)?;
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
                c.push(lua, p).map(Value::UserData)
            }
        }
        Prop::Position => {
            let cf = procmodel_dom::part_cframe(inst);
            lua.create_userdata(procmodel_luau_types::Vector3(Vec3::from(cf.translation)))
                .map(Value::UserData)
        }
        Prop::Orientation => {
            let cf = procmodel_dom::part_cframe(inst);
            let (y, x, z) = Mat3::from(cf.matrix3).to_euler(EulerRot::YXZ);
            let deg = Vec3::new(x, y, z) * (180.0 / std::f32::consts::PI);
            lua.create_userdata(procmodel_luau_types::Vector3(deg))
                .map(Value::UserData)
        }
        Prop::BrickColor => {
            let color = read_stored(
                inst,
                crate::keys::KEYS.color,
                procmodel_dom::db_default(this.class.as_str(), "Color"),
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
        Prop::WorldPivot => {
            let pivot = get_pivot(&c.dom, this.r).unwrap_or_default();
            procmodel_luau_types::variant_to_lua(
                lua,
                &Variant::CFrame(affine_to_cframe(&pivot)),
                None,
            )
        }
        Prop::Scale => Ok(Value::Number(procmodel_dom::model_scale(inst) as f64)),
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
            let value = match inst.properties.get(k) {
                Some(v) => v.clone(),
                None => match default {
                    Some(v) => (*v).clone(),
                    None => fallback(data_type).unwrap_or(Variant::Bool(false)),
                },
            };
            if let Variant::Ref(r) = value {
                if r.is_some() && c.dom.get_by_ref(r).is_some() {
                    return c.push(lua, r).map(Value::UserData);
                }
                return Ok(Value::Nil);
            }
            let enum_name = match data_type {
                rbx_reflection::DataType::Enum(n) => Some(*n),
                _ => None,
            };
            procmodel_luau_types::variant_to_lua(lua, &value, enum_name)
        }
        Prop::Missing => {
            // A yielding method cannot be a Rust method: it is a Luau function.
            if key_bytes == b"WaitForGenerationAsync" && this.class == "ProceduralModel" {
                let f: mlua::Function =
                    lua.named_registry_value("procmodel.wait_for_generation")?;
                return Ok(Value::Function(f));
            }
            // Children by name come after properties and methods, as in Roblox.
            if let Some(&child) = inst.children().iter().find(|&&ch| {
                c.dom
                    .get_by_ref(ch)
                    .is_some_and(|i| i.name.as_bytes() == key_bytes)
            }) {
                return c.push(lua, child).map(Value::UserData);
            }
            Err(not_member(c, this, &key()))
        }
    }
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

fn newindex(lua: &Lua, this: &Instance, key_bytes: &[u8], value: Value) -> mlua::Result<()> {
    let key = || String::from_utf8_lossy(key_bytes);
    let mut guard = ctx(lua)?;
    let prop = guard.props.get(this.class, key_bytes);
    let c = &mut *guard;
    if c.outside_write_locked {
        c.check_write(this.r, &format!("setting {}", key()))?;
    }
    match &*prop {
        Prop::Name => {
            let name = match &value {
                Value::String(s) => s.to_str()?.to_owned(),
                Value::Number(n) => n.to_string(),
                Value::Integer(n) => n.to_string(),
                _ => return Err(assign_error("Name", "string", &value)),
            };
            inst_mut(c, this)?.name = name;
            Ok(())
        }
        Prop::ClassName => Err(mlua::Error::runtime(
            "unable to assign property ClassName: property is read only",
        )),
        Prop::Parent => {
            let parent =
                opt_instance(&value).map_err(|_| assign_error("Parent", "Instance", &value))?;
            set_parent(c, this.r, parent.map(|p| p.r).unwrap_or_else(Ref::none))
        }
        Prop::Position => {
            let v: procmodel_luau_types::Vector3 = lua
                .unpack(value.clone())
                .map_err(|_| assign_error(&key(), "Vector3", &value))?;
            let inst = inst_mut(c, this)?;
            let mut cf = procmodel_dom::part_cframe(inst);
            cf.translation = v.0.into();
            inst.properties.insert(
                crate::keys::KEYS.cframe,
                Variant::CFrame(affine_to_cframe(&cf)),
            );
            Ok(())
        }
        Prop::Orientation => {
            let v: procmodel_luau_types::Vector3 = lua
                .unpack(value.clone())
                .map_err(|_| assign_error(&key(), "Vector3", &value))?;
            let rad = v.0 * (std::f32::consts::PI / 180.0);
            let inst = inst_mut(c, this)?;
            let mut cf = procmodel_dom::part_cframe(inst);
            cf.matrix3 = Mat3::from_euler(EulerRot::YXZ, rad.y, rad.x, rad.z).into();
            inst.properties.insert(
                crate::keys::KEYS.cframe,
                Variant::CFrame(affine_to_cframe(&cf)),
            );
            Ok(())
        }
        Prop::BrickColor => {
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
            inst_mut(c, this)?
                .properties
                .insert(crate::keys::KEYS.color, Variant::Color3(c3));
            Ok(())
        }
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
        Prop::Stored {
            key: k,
            data_type,
            writable,
            ..
        } => {
            if !writable {
                return Err(mlua::Error::runtime(format!(
                    "unable to assign property {}: property is read only",
                    key()
                )));
            }
            let variant = if data_type.ty() == rbx_types::VariantType::Ref {
                let target =
                    opt_instance(&value).map_err(|_| assign_error(&key(), "Instance", &value))?;
                Variant::Ref(target.map(|t| t.r).unwrap_or_else(Ref::none))
            } else {
                procmodel_luau_types::lua_to_variant(&value, data_type).map_err(|e| {
                    mlua::Error::runtime(format!("unable to assign property {}: {e}", key()))
                })?
            };
            let k = *k;
            let inst = inst_mut(c, this)?;
            inst.properties.insert(k, variant);
            if inst.class == "ProceduralModel" && matches!(k.as_str(), "Size" | "Generator") {
                // An input changed: the model regenerates at the next frame.
                inst.properties
                    .insert(rbx_dom_weak::ustr("Dirty"), Variant::Bool(true));
            }
            Ok(())
        }
        Prop::Missing => Err(not_member(c, this, &key())),
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

/// Reparents with Roblox's checks: locked parents, cycles.
pub fn set_parent(c: &mut Ctx, r: Ref, parent: Ref) -> mlua::Result<()> {
    if c.outside_write_locked {
        c.check_write(r, "setting Parent")?;
        c.check_write(parent, "setting Parent")?;
    }
    if c.destroyed.contains(&r) {
        return Err(mlua::Error::runtime(format!(
            "the Parent property of {} is locked, current parent: NULL, new parent {}",
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
    let current = c
        .dom
        .get_by_ref(r)
        .map(|i| i.parent())
        .unwrap_or_else(Ref::none);
    if current == parent {
        return Ok(());
    }
    if parent.is_some() {
        if c.dom.get_by_ref(parent).is_none() {
            return Err(mlua::Error::runtime("new parent no longer exists"));
        }
        // Refuse cycles: the new parent may not be r or one of its descendants.
        let mut cur = parent;
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
    Ok(())
}
