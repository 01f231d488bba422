//! Methods of PVInstance (pivots), Model (bounding box, scale, moves; the deprecated
//! PrimaryPart CFrame pair old scripts use) and GeneratedFolder (`SetPrimaryPart`, the
//! results container's pivot part).

use crate::context::ctx;
use crate::instance::{cframe_value, inst_mut, opt_instance};
use crate::methods::MethodTable;
use mlua::Value;
use procmodel_dom::{cframe_to_affine, is_a};
use rbx_types::{Ref, Variant};

/// The model's PrimaryPart, or Roblox's error for `method` without one.
fn primary_part_or_error(
    dom: &rbx_dom_weak::WeakDom,
    model: Ref,
    method: &str,
) -> mlua::Result<Ref> {
    procmodel_dom::primary_part_of(dom, model).ok_or_else(|| {
        mlua::Error::runtime(format!(
            "Model:{method}() failed because no PrimaryPart has been set, or the PrimaryPart no longer exists. Please set Model.PrimaryPart before using this."
        ))
    })
}

pub fn register(m: &mut MethodTable) {
    m.class("PVInstance");
    m.add_method("GetPivot", |lua, this, ()| {
        let c = ctx(lua)?;
        let p = procmodel_dom::get_pivot(&c.dom, this.r).unwrap_or_default();
        drop(c);
        cframe_value(lua, &p)
    });
    m.add_method("PivotTo", |lua, this, cf: procmodel_luau_types::CFrame| {
        let mut c = ctx(lua)?;
        c.check_write(this.r, || "PivotTo".into())?;
        let target = cframe_to_affine(&rbx_types::CFrame::from(cf));
        // A part pivots by its CFrame, so its welded parts come along as with a CFrame
        // write; a model moves its own parts.
        crate::assembly::moving(&mut c, *this, |c| {
            procmodel_dom::pivot_to(&mut c.dom, this.r, target);
            Ok(())
        })
    });
    m.class("Model");
    m.add_method("GetBoundingBox", |lua, this, ()| {
        let (cf, size) = model_box(lua, this.r)?;
        Ok((
            cframe_value(lua, &cf)?,
            procmodel_luau_types::Vector3(size).value(),
        ))
    });
    // Deprecated forms old scripts call: the bounding box's CFrame and size.
    m.add_method("GetModelCFrame", |lua, this, ()| {
        cframe_value(lua, &model_box(lua, this.r)?.0)
    });
    // Deprecated: "it remains to prevent legacy scripts from throwing errors, but it does
    // nothing when called" (the reference).
    for name in ["SetIdentityOrientation", "ResetOrientationToIdentity"] {
        m.add_method(name, |_, _, ()| Ok(()));
    }
    for name in ["GetExtentsSize", "GetModelSize"] {
        m.add_method(name, |lua, this, ()| {
            Ok(procmodel_luau_types::Vector3(model_box(lua, this.r)?.1).value())
        });
    }
    m.add_method("GetScale", |lua, this, ()| {
        let c = ctx(lua)?;
        Ok(c.dom
            .get_by_ref(this.r)
            .map(procmodel_dom::model_scale)
            .unwrap_or(1.0) as f64)
    });
    m.add_method("ScaleTo", |lua, this, scale: f64| {
        let mut c = ctx(lua)?;
        c.check_write(this.r, || "ScaleTo".into())?;
        if !(scale.is_finite() && scale > 0.0) {
            return Err(mlua::Error::runtime(format!(
                "ScaleTo: scale must be a positive finite number, got {scale}"
            )));
        }
        procmodel_dom::scale_to(&mut c.dom, this.r, scale as f32);
        Ok(())
    });
    m.add_method(
        "TranslateBy",
        |lua, this, delta: procmodel_luau_types::Vector3| {
            let mut c = ctx(lua)?;
            c.check_write(this.r, || "TranslateBy".into())?;
            if !delta.0.is_finite() {
                return Err(mlua::Error::runtime(format!(
                    "TranslateBy: the offset must be finite, got {}, {}, {}",
                    delta.0.x, delta.0.y, delta.0.z
                )));
            }
            procmodel_dom::move_by(
                &mut c.dom,
                this.r,
                glam::Affine3A::from_translation(delta.0),
            );
            Ok(())
        },
    );
    // Deprecated in Roblox for PivotTo/GetPivot, still in old scripts: the PrimaryPart's
    // own CFrame (not its pivot), an error without a PrimaryPart.
    m.add_method(
        "SetPrimaryPartCFrame",
        |lua, this, cf: procmodel_luau_types::CFrame| {
            let mut c = ctx(lua)?;
            c.check_write(this.r, || "SetPrimaryPartCFrame".into())?;
            let part = primary_part_or_error(&c.dom, this.r, "SetPrimaryPartCFrame")?;
            let current = c
                .dom
                .get_by_ref(part)
                .map(procmodel_dom::part_cframe)
                .unwrap_or_default();
            let target = cframe_to_affine(&rbx_types::CFrame::from(cf));
            procmodel_dom::move_by(&mut c.dom, this.r, target * current.inverse());
            Ok(())
        },
    );
    m.add_method("GetPrimaryPartCFrame", |lua, this, ()| {
        let c = ctx(lua)?;
        let part = primary_part_or_error(&c.dom, this.r, "GetPrimaryPartCFrame")?;
        let cf = c
            .dom
            .get_by_ref(part)
            .map(procmodel_dom::part_cframe)
            .unwrap_or_default();
        drop(c);
        cframe_value(lua, &cf)
    });
    m.class("GeneratedFolder");
    m.add_method("SetPrimaryPart", |lua, this, part: Value| {
        let mut c = ctx(lua)?;
        let part = opt_instance(&c, &part)?;
        if let Some(p) = part
            && !is_a(&p.class, "BasePart")
        {
            return Err(mlua::Error::runtime(format!(
                "SetPrimaryPart: expected a BasePart, got {}",
                p.class
            )));
        }
        let value = Variant::Ref(part.map(|p| p.r).unwrap_or_else(Ref::none));
        inst_mut(&mut c, this)?
            .properties
            .insert(crate::keys::KEYS.primary_part, value);
        Ok(())
    });
}

/// A model's bounding box (`GetBoundingBox`): its CFrame and size; an empty model's is its
/// pivot and size zero.
fn model_box(lua: &mlua::Lua, r: rbx_types::Ref) -> mlua::Result<(glam::Affine3A, glam::Vec3)> {
    let c = ctx(lua)?;
    Ok(procmodel_dom::bounding_box(&c.dom, r).unwrap_or((
        procmodel_dom::get_pivot(&c.dom, r).unwrap_or_default(),
        glam::Vec3::ZERO,
    )))
}
