//! Pivots, bounding boxes and scaling with Roblox semantics for BaseParts and Models.

use crate::classes::is_a;
use crate::drawn::{part_cframe, part_size};
use crate::geometry::{affine_to_cframe, cframe_to_affine, from_vec3};
use crate::keys::KEYS;
use glam::{Affine3A, Vec3};
use rbx_dom_weak::{Instance, WeakDom};
use rbx_types::{Ref, Variant};

fn pivot_offset(inst: &Instance) -> Affine3A {
    match inst.properties.get(&KEYS.pivot_offset) {
        Some(Variant::CFrame(cf)) => cframe_to_affine(cf),
        _ => Affine3A::IDENTITY,
    }
}

fn world_pivot_data(inst: &Instance) -> Option<Affine3A> {
    match inst.properties.get(&KEYS.world_pivot_data) {
        Some(Variant::OptionalCFrame(Some(cf))) => Some(cframe_to_affine(cf)),
        Some(Variant::CFrame(cf)) => Some(cframe_to_affine(cf)),
        _ => None,
    }
}

fn primary_part(dom: &WeakDom, inst: &Instance) -> Option<Ref> {
    match inst.properties.get(&KEYS.primary_part) {
        Some(Variant::Ref(r)) if is_strict_descendant(dom, *r, inst.referent()) => Some(*r),
        _ => None,
    }
}

/// A Model's `PrimaryPart` as Roblox reads it: the stored part while it is a descendant of the
/// model (destroyed or moved-out parts read nil).
pub fn primary_part_of(dom: &WeakDom, model: Ref) -> Option<Ref> {
    dom.get_by_ref(model)
        .and_then(|inst| primary_part(dom, inst))
}

fn is_strict_descendant(dom: &WeakDom, r: Ref, ancestor: Ref) -> bool {
    let mut cur = dom.get_by_ref(r).map(|i| i.parent());
    while let Some(p) = cur.filter(|p| p.is_some()) {
        if p == ancestor {
            return true;
        }
        cur = dom.get_by_ref(p).map(|i| i.parent());
    }
    false
}

/// The Model's scale factor (1 when unset).
pub fn model_scale(inst: &Instance) -> f32 {
    match inst.properties.get(&KEYS.scale) {
        Some(Variant::Float32(s)) if *s > 0.0 => *s,
        _ => 1.0,
    }
}

/// Descendant BaseParts of `root` (including `root` itself when it is one), in DOM order.
fn parts_of(dom: &WeakDom, root: Ref) -> Vec<Ref> {
    let mut out = Vec::new();
    crate::preorder(dom, &[root], |r, inst| {
        if is_a(&inst.class, "BasePart") {
            out.push(r);
        }
        true
    });
    out
}

/// `PVInstance:GetPivot()`. BasePart: `CFrame * PivotOffset`. Model: its PrimaryPart's pivot,
/// else its WorldPivot, else the centre of its parts' world axis-aligned bounds, else identity.
/// Other classes have no pivot (`None`).
pub fn get_pivot(dom: &WeakDom, r: Ref) -> Option<Affine3A> {
    let inst = dom.get_by_ref(r)?;
    if is_a(&inst.class, "BasePart") {
        return Some(part_cframe(inst) * pivot_offset(inst));
    }
    if is_a(&inst.class, "Model") {
        if let Some(pp) = primary_part(dom, inst) {
            return get_pivot(dom, pp);
        }
        if let Some(p) = world_pivot_data(inst) {
            return Some(p);
        }
        return Some(match world_aabb(dom, r) {
            Some((min, max)) => Affine3A::from_translation((min + max) * 0.5),
            None => Affine3A::IDENTITY,
        });
    }
    None
}

/// `PVInstance:PivotTo(target)`: moves the instance and every descendant BasePart so the pivot
/// lands on `target`; a Model without PrimaryPart gets `WorldPivot = target`.
pub fn pivot_to(dom: &mut WeakDom, r: Ref, target: Affine3A) {
    let Some(current) = get_pivot(dom, r) else {
        return;
    };
    let delta = target * current.inverse();
    move_by(dom, r, delta);
    // A Model without a PrimaryPart keeps the target as its WorldPivot, even when it holds
    // no parts (its pivot would otherwise stay where it was).
    if let Some(inst) = dom.get_by_ref(r)
        && is_a(&inst.class, "Model")
        && primary_part(dom, inst).is_none()
        && let Some(inst) = dom.get_by_ref_mut(r)
    {
        inst.properties.insert(
            KEYS.world_pivot_data,
            Variant::OptionalCFrame(Some(affine_to_cframe(&orthonormal(target)))),
        );
    }
}

/// Applies a rigid transform to every part (and model pivot) in the subtree of `r`
/// (including `r`).
pub fn move_by(dom: &mut WeakDom, r: Ref, delta: Affine3A) {
    let mut stack = vec![r];
    while let Some(cur) = stack.pop() {
        let Some(inst) = dom.get_by_ref_mut(cur) else {
            continue;
        };
        if is_a(&inst.class, "BasePart") {
            let cf = orthonormal(delta * part_cframe(inst));
            inst.properties
                .insert(KEYS.cframe, Variant::CFrame(affine_to_cframe(&cf)));
        } else if is_a(&inst.class, "Model")
            && let Some(p) = world_pivot_data(inst)
        {
            let cf = orthonormal(delta * p);
            inst.properties.insert(
                KEYS.world_pivot_data,
                Variant::OptionalCFrame(Some(affine_to_cframe(&cf))),
            );
        }
        stack.extend(inst.children().iter().copied());
    }
    // A model without explicit pivot data follows its parts automatically.
}

/// Keeps rotation exactly orthonormal after composition (f32 drift otherwise accumulates).
fn orthonormal(a: Affine3A) -> Affine3A {
    let x = Vec3::from(a.matrix3.x_axis).normalize_or_zero();
    let y0 = Vec3::from(a.matrix3.y_axis);
    let z = x.cross(y0).normalize_or_zero();
    let y = z.cross(x);
    if x == Vec3::ZERO || z == Vec3::ZERO {
        return a;
    }
    Affine3A::from_cols(x.into(), y.into(), z.into(), a.translation)
}

fn world_aabb(dom: &WeakDom, r: Ref) -> Option<(Vec3, Vec3)> {
    bounds_in(dom, r, Affine3A::IDENTITY)
}

/// Bounds of all parts under `r` measured in the frame `frame` (local min/max).
fn bounds_in(dom: &WeakDom, r: Ref, frame: Affine3A) -> Option<(Vec3, Vec3)> {
    let inv = frame.inverse();
    let mut acc: Option<(Vec3, Vec3)> = None;
    for p in parts_of(dom, r) {
        let inst = dom.get_by_ref(p)?;
        let (cframe, size) = crate::drawn::drawn_box(inst);
        let local = inv * cframe;
        let half = size * 0.5;
        let (c, m) = (Vec3::from(local.translation), local.matrix3);
        // Extent of an oriented box along each axis: sum of |axis component| * half.
        let ext = Vec3::new(
            m.x_axis.x.abs() * half.x + m.y_axis.x.abs() * half.y + m.z_axis.x.abs() * half.z,
            m.x_axis.y.abs() * half.x + m.y_axis.y.abs() * half.y + m.z_axis.y.abs() * half.z,
            m.x_axis.z.abs() * half.x + m.y_axis.z.abs() * half.y + m.z_axis.z.abs() * half.z,
        );
        let (lo, hi) = (c - ext, c + ext);
        acc = Some(match acc {
            None => (lo, hi),
            Some((a, b)) => (a.min(lo), b.max(hi)),
        });
    }
    acc
}

/// `Model:GetBoundingBox()` / a part's own box: (centre CFrame, size). The box is aligned with
/// the pivot's orientation. `None` when there are no parts.
pub fn bounding_box(dom: &WeakDom, r: Ref) -> Option<(Affine3A, Vec3)> {
    let pivot = get_pivot(dom, r).unwrap_or(Affine3A::IDENTITY);
    let rot = Affine3A::from_mat3_translation(pivot.matrix3.into(), pivot.translation.into());
    let (min, max) = bounds_in(dom, r, rot)?;
    let centre = rot * Affine3A::from_translation((min + max) * 0.5);
    Some((centre, max - min))
}

/// Scales the subtrees of `roots` by `factor` about `origin`: part sizes and offsets, and
/// the pivots of nested models (as `ScaleTo` does for a model's contents).
pub fn scale_about(dom: &mut WeakDom, roots: &[Ref], origin: Vec3, factor: f32) {
    let mut stack: Vec<Ref> = roots.to_vec();
    while let Some(cur) = stack.pop() {
        let Some(inst) = dom.get_by_ref_mut(cur) else {
            continue;
        };
        if is_a(&inst.class, "BasePart") {
            let mut cf = part_cframe(inst);
            cf.translation = (origin + (Vec3::from(cf.translation) - origin) * factor).into();
            let size = part_size(inst) * factor;
            inst.properties
                .insert(KEYS.cframe, Variant::CFrame(affine_to_cframe(&cf)));
            inst.properties
                .insert(KEYS.size, Variant::Vector3(from_vec3(size)));
        } else if is_a(&inst.class, "Model")
            && let Some(mut p) = world_pivot_data(inst)
        {
            p.translation = (origin + (Vec3::from(p.translation) - origin) * factor).into();
            inst.properties.insert(
                KEYS.world_pivot_data,
                Variant::OptionalCFrame(Some(affine_to_cframe(&p))),
            );
        }
        stack.extend(inst.children().iter().copied());
    }
}

/// `Model:ScaleTo(scale)`: scales every part's size and offset from the model's pivot by
/// `scale / current`, nested model pivots likewise, and records the new `Scale`.
pub fn scale_to(dom: &mut WeakDom, model: Ref, scale: f32) {
    let Some(inst) = dom.get_by_ref(model) else {
        return;
    };
    let factor = scale / model_scale(inst);
    let Some(pivot) = get_pivot(dom, model) else {
        return;
    };
    let origin = Vec3::from(pivot.translation);
    let old = model_scale(inst);
    let children = inst.children().to_vec();
    scale_about(dom, &children, origin, factor);
    if let Some(inst) = dom.get_by_ref_mut(model) {
        inst.properties.insert(KEYS.scale, Variant::Float32(scale));
        // A ProceduralModel's Size is the box at its current scale: it scales with the
        // model, so the generator's input (Size ÷ Scale) stays the same and nothing
        // regenerates.
        if inst.class == "ProceduralModel"
            && let Some(Variant::Vector3(s)) = inst.properties.get(&KEYS.size).cloned()
        {
            let size = rbx_types::Vector3::new(
                size_at_scale(s.x, old, scale),
                size_at_scale(s.y, old, scale),
                size_at_scale(s.z, old, scale),
            );
            inst.properties.insert(KEYS.size, Variant::Vector3(size));
        }
    }
}

/// The generator's input size (`Size ÷ Scale`, one component) as the engine compares it:
/// rounded to 16 significant bits (a relative step of 1.5e-5), so that rescaling a model,
/// which cannot keep the quotient exact in f32, never looks like a new input.
pub fn input_size_key(size: f32, scale: f32) -> u32 {
    let q = size / scale;
    if !q.is_finite() || q <= 0.0 {
        return q.to_bits();
    }
    (q.to_bits() + (1 << 6)) >> 7
}

/// The size at scale `new` of a box that is `size` at scale `old`: `size * new / old`,
/// nudged by a few rounding steps where needed so that its [`input_size_key`] is unchanged.
pub fn size_at_scale(size: f32, old: f32, new: f32) -> f32 {
    let key = input_size_key(size, old);
    let input = size / old;
    let mut s = input * new;
    for _ in 0..64 {
        let k = input_size_key(s, new);
        if k == key || !s.is_finite() {
            break;
        }
        s = if k < key { s.next_up() } else { s.next_down() };
    }
    s
}

#[cfg(test)]
mod scale_tests {
    use super::size_at_scale;

    #[test]
    fn the_input_size_survives_any_rescale() {
        use super::input_size_key;
        let scales = [
            1.0f32,
            1.1,
            0.3,
            2.0,
            7.77,
            0.013,
            123.4,
            1.0 / 3.0,
            0.5,
            64.0,
        ];
        for size in [7.0f32, 0.1, 12.0, 100.3, 4097.0, 1.0e-3, 1.7, 2048.25] {
            let mut s = size;
            let mut old = 1.0f32;
            for &new in scales.iter().cycle().take(60) {
                let before = input_size_key(s, old);
                s = size_at_scale(s, old, new);
                assert_eq!(
                    input_size_key(s, new),
                    before,
                    "size {size} at {old} -> {new}"
                );
                old = new;
            }
            assert_eq!(input_size_key(s, old), input_size_key(size, 1.0));
            assert!(
                (s / old - size).abs() <= size * 1e-4,
                "{s} / {old} vs {size}"
            );
        }
    }

    #[test]
    fn small_real_size_changes_are_new_inputs() {
        use super::input_size_key;
        assert_ne!(input_size_key(1000.0, 1.0), input_size_key(1000.1, 1.0));
        assert_ne!(input_size_key(1.0, 1.0), input_size_key(1.001, 1.0));
        assert_eq!(input_size_key(7.0, 1.0), input_size_key(7.0000005, 1.0));
    }
}
