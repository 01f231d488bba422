//! PhysicsService's collision groups: the registry, its methods (current and deprecated) and
//! the rule spatial queries apply (`RaycastParams.CollisionGroup`, `GetTouchingParts`,
//! `Resize`).
//!
//! The registry lives where Roblox's files keep it, in `Workspace.CollisionGroups`: entries
//! `name^id^mask` joined by `\`, where bit `i` of a group's mask says it collides with the
//! group of id `i`. So groups are saved with the place, every VM working on a copy of the
//! scene sees the same ones, and a generator registering one writes outside its container
//! (refused unless its module is granted `AccessOutsideWrite`). `Default` (id 0) always
//! exists; there are at most 32 groups.

use crate::context::{Ctx, ctx};
use crate::methods::MethodTable;
use mlua::{Lua, Value};
use rbx_types::{Ref, Variant};

/// Groups a place may have, `Default` included.
pub const MAX_GROUPS: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub name: String,
    pub id: u32,
    pub mask: i32,
}

/// The registry: `Default` first, then by id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registry(pub Vec<Group>);

impl Registry {
    /// Parses `Workspace.CollisionGroups`; entries that do not parse are skipped, and
    /// `Default` is added when missing.
    pub fn parse(s: &str) -> Registry {
        let mut groups: Vec<Group> = Vec::new();
        for entry in s.split('\\').filter(|e| !e.is_empty()) {
            let mut f = entry.rsplitn(3, '^');
            let (Some(mask), Some(id), Some(name)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            let (Ok(id), Ok(mask)) = (id.parse::<u32>(), mask.parse::<i64>()) else {
                continue;
            };
            if id as usize >= MAX_GROUPS || groups.iter().any(|g| g.id == id || g.name == name) {
                continue;
            }
            groups.push(Group {
                name: name.to_owned(),
                id,
                mask: mask as i32,
            });
        }
        if !groups.iter().any(|g| g.id == 0) {
            groups.retain(|g| g.name != "Default");
            groups.push(Group {
                name: "Default".into(),
                id: 0,
                mask: -1,
            });
        }
        groups.sort_by_key(|g| g.id);
        Registry(groups)
    }

    pub fn to_property(&self) -> String {
        self.0
            .iter()
            .map(|g| format!("{}^{}^{}", g.name, g.id, g.mask))
            .collect::<Vec<_>>()
            .join("\\")
    }

    pub fn get(&self, name: &str) -> Option<&Group> {
        self.0.iter().find(|g| g.name == name)
    }

    /// Whether parts of groups `a` and `b` collide (a group not registered collides like
    /// `Default`).
    pub fn collide(&self, a: &str, b: &str) -> bool {
        let default = Group {
            name: String::new(),
            id: 0,
            mask: -1,
        };
        let ga = self.get(a).unwrap_or(&default);
        let gb = self.get(b).unwrap_or(&default);
        ga.mask & (1 << gb.id) != 0 && gb.mask & (1 << ga.id) != 0
    }

    /// Whether every group collides with every other (nothing to check per part).
    pub fn all_collide(&self) -> bool {
        self.0.iter().all(|g| g.mask == -1)
    }

    fn register(&mut self, name: &str) -> Result<u32, String> {
        if let Some(g) = self.get(name) {
            return Ok(g.id);
        }
        let id = (1..MAX_GROUPS as u32)
            .find(|id| !self.0.iter().any(|g| g.id == *id))
            .ok_or_else(|| {
                format!("could not register collision group {name:?}: a place has at most {MAX_GROUPS} groups")
            })?;
        // A new group collides with every group, and every group with it.
        for g in &mut self.0 {
            g.mask |= 1 << id;
        }
        self.0.push(Group {
            name: name.to_owned(),
            id,
            mask: -1,
        });
        self.0.sort_by_key(|g| g.id);
        Ok(id)
    }

    fn set_collidable(&mut self, a: &str, b: &str, on: bool) -> Result<(), String> {
        let ia = self.get(a).map(|g| g.id).ok_or_else(|| missing(a))?;
        let ib = self.get(b).map(|g| g.id).ok_or_else(|| missing(b))?;
        for g in &mut self.0 {
            let other = if g.id == ia {
                ib
            } else if g.id == ib {
                ia
            } else {
                continue;
            };
            if on {
                g.mask |= 1 << other;
            } else {
                g.mask &= !(1 << other);
            }
        }
        Ok(())
    }
}

fn missing(name: &str) -> String {
    format!("collision group {name:?} is not registered")
}

fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.contains(['^', '\\']) || name.len() > 100 {
        return Err(format!(
            "invalid collision group name {name:?}: 1 to 100 characters, without ^ or \\"
        ));
    }
    Ok(())
}

/// The registry of the scene `c` holds.
pub fn registry(c: &Ctx) -> Registry {
    let stored = crate::services::find_service(c, "Workspace")
        .and_then(|ws| c.dom.get_by_ref(ws))
        .and_then(|i| i.properties.get(&rbx_dom_weak::ustr("CollisionGroups")))
        .and_then(procmodel_dom::attrs::string);
    Registry::parse(stored.unwrap_or(""))
}

/// A part's collision group name (`Default` when unset).
pub fn group_of(inst: &rbx_dom_weak::Instance) -> &str {
    match inst.properties.get(&rbx_dom_weak::ustr("CollisionGroup")) {
        Some(Variant::String(s)) => s,
        _ => "Default",
    }
}

fn runtime(e: String) -> mlua::Error {
    mlua::Error::runtime(e)
}

/// Reads the registry, applies `change` and stores the result in the Workspace.
fn edit<T>(
    lua: &Lua,
    method: &str,
    change: impl FnOnce(&mut Registry) -> Result<T, String>,
) -> mlua::Result<T> {
    let mut c = ctx(lua)?;
    let ws = crate::services::find_service(&c, "Workspace")
        .ok_or_else(|| runtime(format!("{method}: the place has no Workspace")))?;
    c.check_write(ws, || format!("PhysicsService:{method}"))?;
    let mut reg = registry(&c);
    let out = change(&mut reg).map_err(|e| runtime(format!("{method}: {e}")))?;
    if let Some(i) = c.dom.get_by_ref_mut(ws) {
        i.properties.insert(
            rbx_dom_weak::ustr("CollisionGroups"),
            Variant::String(reg.to_property()),
        );
    }
    Ok(out)
}

fn groups_table(lua: &Lua, reg: &Registry) -> mlua::Result<mlua::Table> {
    let t = lua.create_table()?;
    for g in &reg.0 {
        let e = lua.create_table()?;
        e.set("id", g.id)?;
        e.set("mask", g.mask)?;
        e.set("name", g.name.as_str())?;
        t.push(e)?;
    }
    Ok(t)
}

fn part_arg(c: &Ctx, v: &Value, method: &str) -> mlua::Result<Ref> {
    crate::instance::opt_instance(c, v)?
        .filter(|i| procmodel_dom::is_a(&i.class, "BasePart"))
        .map(|i| i.r)
        .ok_or_else(|| runtime(format!("{method}: a BasePart expected")))
}

pub fn register(m: &mut MethodTable) {
    m.class("BasePart");
    // Whether the two parts' collision groups collide (the reference: groups only).
    m.add_method("CanCollideWith", |lua, this, other: Value| {
        let c = ctx(lua)?;
        let other = part_arg(&c, &other, "CanCollideWith")?;
        let (Some(a), Some(b)) = (c.dom.get_by_ref(this.r), c.dom.get_by_ref(other)) else {
            return Ok(false);
        };
        Ok(registry(&c).collide(group_of(a), group_of(b)))
    });
    // The deprecated GetRenderCFrame: where the part is drawn, which headless is its CFrame.
    m.add_method("GetRenderCFrame", |lua, this, ()| {
        let c = ctx(lua)?;
        let cf = c.dom.get_by_ref(this.r).map(procmodel_dom::part_cframe);
        crate::instance::cframe_value(lua, &cf.unwrap_or_default())
    });
    m.class("PhysicsService");
    for name in ["RegisterCollisionGroup", "CreateCollisionGroup"] {
        m.add_method(name, move |lua, _this, group: String| {
            edit(lua, name, |r| {
                check_name(&group)?;
                if name == "CreateCollisionGroup" && r.get(&group).is_some() {
                    return Err(format!("collision group {group:?} already exists"));
                }
                r.register(&group)
            })
        });
    }
    for name in ["UnregisterCollisionGroup", "RemoveCollisionGroup"] {
        m.add_method(name, move |lua, _this, group: String| {
            edit(lua, name, |r| {
                if group == "Default" {
                    return Err("the Default collision group cannot be removed".into());
                }
                if let Some(id) = r.get(&group).map(|g| g.id) {
                    r.0.retain(|g| g.id != id);
                    for g in &mut r.0 {
                        g.mask |= 1 << id;
                    }
                }
                Ok(())
            })
        });
    }
    m.add_method(
        "RenameCollisionGroup",
        |lua, _this, (from, to): (String, String)| {
            edit(lua, "RenameCollisionGroup", |r| {
                check_name(&to)?;
                if from == "Default" {
                    return Err("the Default collision group cannot be renamed".into());
                }
                if r.get(&to).is_some() {
                    return Err(format!("collision group {to:?} already exists"));
                }
                let g =
                    r.0.iter_mut()
                        .find(|g| g.name == from)
                        .ok_or_else(|| missing(&from))?;
                g.name = to.clone();
                Ok(())
            })
        },
    );
    m.add_method(
        "CollisionGroupSetCollidable",
        |lua, _this, (a, b, on): (String, String, bool)| {
            edit(lua, "CollisionGroupSetCollidable", |r| {
                r.set_collidable(&a, &b, on)
            })
        },
    );
    m.add_method(
        "CollisionGroupsAreCollidable",
        |lua, _this, (a, b): (String, String)| {
            let reg = registry(&*ctx(lua)?);
            for n in [&a, &b] {
                if reg.get(n).is_none() {
                    return Err(runtime(format!(
                        "CollisionGroupsAreCollidable: {}",
                        missing(n)
                    )));
                }
            }
            Ok(reg.collide(&a, &b))
        },
    );
    m.add_method("IsCollisionGroupRegistered", |lua, _this, name: String| {
        Ok(registry(&*ctx(lua)?).get(&name).is_some())
    });
    for name in ["GetRegisteredCollisionGroups", "GetCollisionGroups"] {
        m.add_method(name, |lua, _this, ()| {
            let reg = registry(&*ctx(lua)?);
            groups_table(lua, &reg)
        });
    }
    m.add_method("GetMaxCollisionGroups", |_lua, _this, ()| {
        Ok(MAX_GROUPS as u32)
    });
    m.add_method("GetCollisionGroupId", |lua, _this, name: String| {
        registry(&*ctx(lua)?)
            .get(&name)
            .map(|g| g.id)
            .ok_or_else(|| runtime(format!("GetCollisionGroupId: {}", missing(&name))))
    });
    m.add_method("GetCollisionGroupName", |lua, _this, id: u32| {
        Ok(registry(&*ctx(lua)?)
            .0
            .iter()
            .find(|g| g.id == id)
            .map(|g| g.name.clone()))
    });
    m.add_method(
        "SetPartCollisionGroup",
        |lua, _this, (part, name): (Value, String)| {
            let mut c = ctx(lua)?;
            let r = part_arg(&c, &part, "SetPartCollisionGroup")?;
            let id = registry(&c)
                .get(&name)
                .map(|g| g.id)
                .ok_or_else(|| runtime(format!("SetPartCollisionGroup: {}", missing(&name))))?;
            c.check_write(r, || "PhysicsService:SetPartCollisionGroup".into())?;
            if let Some(i) = c.dom.get_by_ref_mut(r) {
                i.properties
                    .insert(rbx_dom_weak::ustr("CollisionGroup"), Variant::String(name));
                i.properties.insert(
                    rbx_dom_weak::ustr("CollisionGroupId"),
                    Variant::Int32(id as i32),
                );
            }
            Ok(())
        },
    );
    m.add_method(
        "CollisionGroupContainsPart",
        |lua, _this, (name, part): (String, Value)| {
            let c = ctx(lua)?;
            let r = part_arg(&c, &part, "CollisionGroupContainsPart")?;
            Ok(c.dom.get_by_ref(r).is_some_and(|i| group_of(i) == name))
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_round_trips_and_keeps_masks_symmetric() {
        let mut r = Registry::parse("");
        assert_eq!(r.to_property(), "Default^0^-1");
        assert_eq!(r.register("Props").unwrap(), 1);
        assert_eq!(
            r.register("Props").unwrap(),
            1,
            "registering twice is one group"
        );
        r.register("Ghosts").unwrap();
        r.set_collidable("Ghosts", "Default", false).unwrap();
        assert!(!r.collide("Ghosts", "Default") && !r.collide("Default", "Ghosts"));
        assert!(r.collide("Ghosts", "Props") && r.collide("Props", "Default"));
        assert!(
            r.collide("Unregistered", "Props"),
            "unknown groups act as Default"
        );
        assert!(!r.collide("Unregistered", "Ghosts"));
        let again = Registry::parse(&r.to_property());
        assert_eq!(again, r);
        assert!(r.set_collidable("Nope", "Default", true).is_err());
        for i in 3..MAX_GROUPS {
            r.register(&format!("G{i}")).unwrap();
        }
        assert!(r.register("OneTooMany").is_err());
        // Damaged entries are skipped; Default is always there.
        let damaged = Registry::parse("junk\\A^x^1\\B^2^-1");
        assert_eq!(damaged.0.len(), 2);
        assert_eq!(damaged.0[0].name, "Default");
        assert!(check_name("a^b").is_err() && check_name("").is_err());
    }
}
