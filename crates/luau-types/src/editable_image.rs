//! `EditableImage`: Roblox's object for drawing an image at run time, and the snapshot of it
//! a part carries for a Content property set to it ([`EditableImage::snapshot`], a
//! [`procmodel_mesh::texture::Texture`]).
//!
//! Follows the engine reference: pixels are RGBA, 8 bits a channel, with (0, 0) the top-left
//! pixel and (Size.X − 1, Size.Y − 1) the bottom-right one; each side is 1 to 1024 pixels
//! (512 × 512 by default); a new image is transparent black. The drawing methods take a
//! colour and a *transparency*, the buffer methods *alpha*. Positions outside the image are
//! allowed (what falls outside is clipped); the buffer methods' regions must lie inside it.
//! Every image of a VM draws on one shared [`ImageBudget`], so a script cannot escape the
//! VM's memory limit through images: `AssetService:CreateEditableImage` returns nil once it
//! is spent, as Roblox does when its editable-memory budget is.
//!
//! Where the reference does not say, this module decides (docs/differences.md):
//! - a pixel is the unit square whose top-left corner is its coordinates; shapes are
//!   sampled at pixel centres, positions and sizes rounded to whole pixels;
//! - `DrawCircle` covers the pixels whose centre is within `radius` of `center` (its soft
//!   edge, with anti-aliasing, fades over one pixel across that circle);
//! - `DrawLine` is one pixel wide, both ends included (Bresenham);
//! - `DrawImageTransformed` turns by `rotation` degrees clockwise (the y axis points down),
//!   samples bilinearly (`Pixelated`: the nearest pixel) and clamps at the source's edges;
//! - the combine types act on 0–1 values: `Overwrite` stores the source; `BlendSourceOver`
//!   is Porter–Duff source-over; `AlphaBlend` mixes the colours by the source's alpha
//!   whatever the destination's; `Multiply` multiplies all four channels; `Add` and
//!   `Subtract` add or subtract the source colour weighted by its alpha and keep the
//!   destination's alpha; `NormalMapBlend` is `AlphaBlend` with the colour renormalised as a
//!   tangent-space normal.
//!
//! `DrawImageProjected` is not available (it says so when called).

use std::cell::Cell;
use std::rc::Rc;

use glam::Vec2;
use mlua::{AnyUserData, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value};
use procmodel_mesh::texture::{MAX_SIDE, Texture};

use crate::args::Args;
use crate::color3::Color3;
use crate::enums::EnumItem;
use crate::vector2::Vector2;

/// Bytes of pixels the images of one VM may hold at once: 64 images at Roblox's largest
/// size (4 MiB each).
pub const DEFAULT_BUDGET: usize = 256 << 20;

/// The pixel bytes every image of one VM draws on; an image gives them back when it is
/// destroyed or collected. It also numbers the VM's images.
#[derive(Clone, Debug)]
pub struct ImageBudget(Rc<Cell<usize>>, Rc<Cell<u64>>);

impl ImageBudget {
    pub fn new(bytes: usize) -> Self {
        ImageBudget(Rc::new(Cell::new(bytes)), Rc::default())
    }

    /// Bytes still available.
    pub fn remaining(&self) -> usize {
        self.0.get()
    }
}

/// How drawn pixels (the source) are combined with the image's (the destination):
/// `Enum.ImageCombineType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    BlendSourceOver,
    Overwrite,
    Add,
    Multiply,
    AlphaBlend,
    NormalMapBlend,
    Subtract,
}

impl Combine {
    fn from_item(item: &EnumItem) -> Option<Combine> {
        (item.enum_name == "ImageCombineType").then_some(())?;
        Some(match item.name {
            "BlendSourceOver" => Combine::BlendSourceOver,
            "Overwrite" => Combine::Overwrite,
            "Add" => Combine::Add,
            "Multiply" => Combine::Multiply,
            "AlphaBlend" => Combine::AlphaBlend,
            "NormalMapBlend" => Combine::NormalMapBlend,
            "Subtract" => Combine::Subtract,
            _ => return None,
        })
    }
}

fn to_byte(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

/// `dst` combined with source colour `s` (0–1) of alpha `sa` (0–1), by `how`.
pub fn combine(dst: [u8; 4], s: [f32; 3], sa: f32, how: Combine) -> [u8; 4] {
    let d = [dst[0], dst[1], dst[2]].map(|c| c as f32 / 255.0);
    let da = dst[3] as f32 / 255.0;
    let (rgb, a) = match how {
        Combine::Overwrite => (s, sa),
        Combine::BlendSourceOver => {
            let a = sa + da * (1.0 - sa);
            let mix = |i: usize| {
                if a > 0.0 {
                    (s[i] * sa + d[i] * da * (1.0 - sa)) / a
                } else {
                    0.0
                }
            };
            ([mix(0), mix(1), mix(2)], a)
        }
        Combine::AlphaBlend | Combine::NormalMapBlend => {
            let mix = |i: usize| s[i] * sa + d[i] * (1.0 - sa);
            let mut rgb = [mix(0), mix(1), mix(2)];
            if how == Combine::NormalMapBlend {
                let n = glam::Vec3::from(rgb) * 2.0 - 1.0;
                let n = n.normalize_or(glam::Vec3::Z);
                rgb = (n * 0.5 + 0.5).into();
            }
            (rgb, sa + da * (1.0 - sa))
        }
        Combine::Multiply => ([d[0] * s[0], d[1] * s[1], d[2] * s[2]], da * sa),
        Combine::Add => ([0, 1, 2].map(|i| d[i] + s[i] * sa), da),
        Combine::Subtract => ([0, 1, 2].map(|i| d[i] - s[i] * sa), da),
    };
    [
        to_byte(rgb[0]),
        to_byte(rgb[1]),
        to_byte(rgb[2]),
        to_byte(a),
    ]
}

/// A Roblox `EditableImage` (module docs).
#[derive(Debug)]
pub struct EditableImage {
    width: u32,
    height: u32,
    pixels: Vec<u8>,
    destroyed: bool,
    /// Counts the calls that may have changed the image (parts showing it re-read it).
    version: u64,
    uid: u64,
    budget: ImageBudget,
    charged: usize,
}

impl Drop for EditableImage {
    fn drop(&mut self) {
        self.refund();
    }
}

type R<T> = mlua::Result<T>;

impl EditableImage {
    /// A transparent image of `width × height` pixels, or None when the budget cannot
    /// hold it. The size must already be checked ([`check_size`]).
    pub fn new(width: u32, height: u32, budget: &ImageBudget) -> Option<EditableImage> {
        let bytes = width as usize * height as usize * 4;
        if budget.remaining() < bytes {
            return None;
        }
        budget.0.set(budget.remaining() - bytes);
        let uid = budget.1.get() + 1;
        budget.1.set(uid);
        Some(EditableImage {
            width,
            height,
            pixels: vec![0; bytes],
            destroyed: false,
            version: 0,
            uid,
            budget: budget.clone(),
            charged: bytes,
        })
    }

    fn refund(&mut self) {
        self.budget.0.set(self.budget.0.get() + self.charged);
        self.charged = 0;
    }

    fn alive(&self, func: &str) -> R<()> {
        if self.destroyed {
            return Err(mlua::Error::runtime(format!(
                "{func}: this EditableImage has been destroyed"
            )));
        }
        Ok(())
    }

    /// Whether `Destroy` was called.
    pub fn is_destroyed(&self) -> bool {
        self.destroyed
    }

    /// Counts the calls that may have changed the image.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// This image's number among its VM's images.
    pub fn uid(&self) -> u64 {
        self.uid
    }

    /// (width, height) in pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// The pixels as a texture a part carries (None once destroyed).
    pub fn snapshot(&self) -> Option<Texture> {
        (!self.destroyed).then(|| Texture {
            width: self.width,
            height: self.height,
            rgba: self.pixels.clone(),
        })
    }

    /// A copy of the pixels on the same budget (None when it cannot hold them).
    pub fn duplicate(&self) -> Option<EditableImage> {
        let mut copy = EditableImage::new(self.width, self.height, &self.budget)?;
        copy.pixels.copy_from_slice(&self.pixels);
        Some(copy)
    }

    /// The pixel at (x, y), which must be inside the image.
    fn pixel(&self, x: i64, y: i64) -> [u8; 4] {
        let i = (y as usize * self.width as usize + x as usize) * 4;
        [
            self.pixels[i],
            self.pixels[i + 1],
            self.pixels[i + 2],
            self.pixels[i + 3],
        ]
    }

    /// Combines source colour `s` of alpha `sa` into the pixel at (x, y), when it is inside.
    fn plot(&mut self, x: i64, y: i64, s: [f32; 3], sa: f32, how: Combine) {
        if x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 {
            return;
        }
        let i = (y as usize * self.width as usize + x as usize) * 4;
        let out = combine(self.pixel(x, y), s, sa, how);
        self.pixels[i..i + 4].copy_from_slice(&out);
    }

    /// The pixel range `[lo, hi)` of one axis that is inside the image, for `lo..hi`.
    fn clip(lo: i64, hi: i64, side: u32) -> std::ops::Range<i64> {
        lo.max(0)..hi.min(side as i64)
    }

    pub fn draw_rectangle(
        &mut self,
        pos: (i64, i64),
        size: (i64, i64),
        s: [f32; 3],
        sa: f32,
        how: Combine,
    ) {
        for y in Self::clip(pos.1, pos.1.saturating_add(size.1), self.height) {
            for x in Self::clip(pos.0, pos.0.saturating_add(size.0), self.width) {
                self.plot(x, y, s, sa, how);
            }
        }
        self.version += 1;
    }

    pub fn draw_circle(
        &mut self,
        c: Vec2,
        radius: f32,
        s: [f32; 3],
        sa: f32,
        how: Combine,
        smooth: bool,
    ) {
        let reach = radius + 1.0;
        let (x0, x1) = ((c.x - reach).floor() as i64, (c.x + reach).ceil() as i64);
        let (y0, y1) = ((c.y - reach).floor() as i64, (c.y + reach).ceil() as i64);
        for y in Self::clip(y0, y1 + 1, self.height) {
            for x in Self::clip(x0, x1 + 1, self.width) {
                let d = (Vec2::new(x as f32 + 0.5, y as f32 + 0.5) - c).length();
                let cover = if smooth {
                    (radius - d + 0.5).clamp(0.0, 1.0)
                } else if d <= radius {
                    1.0
                } else {
                    0.0
                };
                if cover > 0.0 {
                    self.plot(x, y, s, sa * cover, how);
                }
            }
        }
        self.version += 1;
    }

    /// One pixel per step along the line's longer axis, both ends included, the other
    /// coordinate rounded; only the steps inside the image are walked, so a line of any
    /// length costs at most the image's side.
    pub fn draw_line(
        &mut self,
        p1: (i64, i64),
        p2: (i64, i64),
        s: [f32; 3],
        sa: f32,
        how: Combine,
    ) {
        self.version += 1;
        let (dx, dy) = (p2.0 - p1.0, p2.1 - p1.1);
        // (major, minor) coordinates of the ends, and the image's side along the major axis.
        let steep = dy.abs() > dx.abs();
        let (a1, b1, a2, b2, side) = if steep {
            (p1.1, p1.0, p2.1, p2.0, self.height)
        } else {
            (p1.0, p1.1, p2.0, p2.1, self.width)
        };
        let (lo, hi) = (a1.min(a2), a1.max(a2));
        let slope = if a1 == a2 {
            0.0
        } else {
            (b2 - b1) as f64 / (a2 - a1) as f64
        };
        for a in lo.max(0)..=hi.min(side as i64 - 1) {
            let b = (b1 as f64 + (a - a1) as f64 * slope + 0.5).floor() as i64;
            let (x, y) = if steep { (b, a) } else { (a, b) };
            self.plot(x, y, s, sa, how);
        }
    }

    /// Draws `src` (width, height, RGBA) with its top-left pixel at `pos`.
    pub fn draw_image(&mut self, pos: (i64, i64), src: &Texture, how: Combine) {
        for sy in 0..src.height as i64 {
            for sx in 0..src.width as i64 {
                let i = (sy as usize * src.width as usize + sx as usize) * 4;
                let p = &src.rgba[i..i + 4];
                let s = [p[0], p[1], p[2]].map(|c| c as f32 / 255.0);
                self.plot(pos.0 + sx, pos.1 + sy, s, p[3] as f32 / 255.0, how);
            }
        }
        self.version += 1;
    }

    /// Draws `src` scaled by `scale` and turned `degrees` clockwise about `pivot` (in the
    /// source's pixels), with the pivot at `pos`.
    #[allow(clippy::too_many_arguments)]
    pub fn draw_transformed(
        &mut self,
        pos: Vec2,
        scale: Vec2,
        degrees: f32,
        src: &Texture,
        pivot: Vec2,
        how: Combine,
        nearest: bool,
    ) {
        self.version += 1;
        if scale.x == 0.0 || scale.y == 0.0 {
            return;
        }
        let (sin, cos) = degrees.to_radians().sin_cos();
        let forward = |p: Vec2| {
            let q = (p - pivot) * scale;
            pos + Vec2::new(q.x * cos - q.y * sin, q.x * sin + q.y * cos)
        };
        let (w, h) = (src.width as f32, src.height as f32);
        let corners = [
            Vec2::ZERO,
            Vec2::new(w, 0.0),
            Vec2::new(0.0, h),
            Vec2::new(w, h),
        ]
        .map(forward);
        let lo = corners.iter().fold(Vec2::INFINITY, |a, &b| a.min(b));
        let hi = corners.iter().fold(Vec2::NEG_INFINITY, |a, &b| a.max(b));
        let span = |a: f32, b: f32, side: u32| {
            let a = a.floor().clamp(-1.0, side as f32 + 1.0) as i64;
            let b = b.ceil().clamp(-1.0, side as f32 + 1.0) as i64;
            Self::clip(a, b, side)
        };
        let texel = |x: i64, y: i64| {
            let x = x.clamp(0, src.width as i64 - 1) as usize;
            let y = y.clamp(0, src.height as i64 - 1) as usize;
            let i = (y * src.width as usize + x) * 4;
            [0, 1, 2, 3].map(|k| src.rgba[i + k] as f32 / 255.0)
        };
        for y in span(lo.y, hi.y, self.height) {
            for x in span(lo.x, hi.x, self.width) {
                // Back into the source: undo the turn, then the scale.
                let d = Vec2::new(x as f32 + 0.5, y as f32 + 0.5) - pos;
                let q = Vec2::new(d.x * cos + d.y * sin, -d.x * sin + d.y * cos) / scale + pivot;
                if !(q.x >= 0.0 && q.y >= 0.0 && q.x < w && q.y < h) {
                    continue;
                }
                let c = if nearest {
                    texel(q.x as i64, q.y as i64)
                } else {
                    let t = q - 0.5;
                    let (fx, fy) = (t.x.floor(), t.y.floor());
                    let (ax, ay) = (t.x - fx, t.y - fy);
                    let (ix, iy) = (fx as i64, fy as i64);
                    let [p00, p10, p01, p11] = [
                        texel(ix, iy),
                        texel(ix + 1, iy),
                        texel(ix, iy + 1),
                        texel(ix + 1, iy + 1),
                    ];
                    [0, 1, 2, 3].map(|k| {
                        let top = p00[k] + (p10[k] - p00[k]) * ax;
                        let bottom = p01[k] + (p11[k] - p01[k]) * ax;
                        top + (bottom - top) * ay
                    })
                };
                self.plot(x, y, [c[0], c[1], c[2]], c[3], how);
            }
        }
    }

    /// The checked region `pos`, `size` of a buffer method: inside the image, not empty.
    fn region(&self, a: &Args, pos: Vec2, size: Vec2) -> R<(usize, usize, usize, usize)> {
        let (x, y) = (whole(a, 1, pos.x)?, whole(a, 1, pos.y)?);
        let (w, h) = (whole(a, 2, size.x)?, whole(a, 2, size.y)?);
        if w < 1 || h < 1 {
            return Err(a.error(
                2,
                &format!("the region is {w}×{h} pixels; it must not be empty"),
            ));
        }
        if x < 0 || y < 0 || x + w > self.width as i64 || y + h > self.height as i64 {
            return Err(a.error(
                1,
                &format!(
                    "the region at ({x}, {y}) of {w}×{h} pixels is outside the {}×{} image",
                    self.width, self.height
                ),
            ));
        }
        Ok((x as usize, y as usize, w as usize, h as usize))
    }
}

/// Roblox's sides for an image, checked: 1 to 1024 pixels each.
pub fn check_size(func: &str, size: Vec2) -> R<(u32, u32)> {
    let ok = |v: f32| v.is_finite() && v >= 1.0 && v <= MAX_SIDE as f32;
    if !(ok(size.x) && ok(size.y)) {
        return Err(mlua::Error::runtime(format!(
            "{func}: Size {}, {} is not a valid image size (each side 1 to {MAX_SIDE} pixels)",
            size.x, size.y
        )));
    }
    Ok((size.x.round() as u32, size.y.round() as u32))
}

/// A coordinate rounded to a whole pixel (finite, within ±2³¹).
fn whole(a: &Args, pos: usize, v: f32) -> R<i64> {
    if !v.is_finite() || v.abs() > i32::MAX as f32 {
        return Err(a.error(pos, &format!("{v} is not a pixel coordinate")));
    }
    Ok(v.round() as i64)
}

fn point(a: &Args, pos: usize) -> R<(i64, i64)> {
    let v = a.ud::<Vector2>(pos, "Vector2")?.0;
    Ok((whole(a, pos, v.x)?, whole(a, pos, v.y)?))
}

fn finite_vec2(a: &Args, pos: usize) -> R<Vec2> {
    let v = a.ud::<Vector2>(pos, "Vector2")?.0;
    if !v.is_finite() {
        return Err(a.error(pos, "the vector must be finite"));
    }
    Ok(v)
}

fn color(a: &Args, pos: usize) -> R<[f32; 3]> {
    let c = a.ud::<Color3>(pos, "Color3")?;
    Ok([c.r, c.g, c.b].map(|v| {
        if v.is_finite() {
            v.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }))
}

/// A transparency argument as the source's alpha.
fn alpha(a: &Args, pos: usize) -> R<f32> {
    let t = a.number(pos)?;
    if !t.is_finite() {
        return Err(a.error(pos, "transparency must be finite"));
    }
    Ok(1.0 - t.clamp(0.0, 1.0) as f32)
}

fn combine_arg(a: &Args, pos: usize) -> R<Combine> {
    crate::args::as_ud::<EnumItem>(a.get(pos))
        .and_then(|i| Combine::from_item(&i))
        .ok_or_else(|| a.bad(pos, "Enum.ImageCombineType"))
}

/// The source image of a drawing call, copied (it may be the image drawn into).
fn source(a: &Args, pos: usize) -> R<Texture> {
    let image = match a.get(pos) {
        Value::UserData(ud) if ud.is::<EditableImage>() => ud.borrow::<EditableImage>()?,
        _ => return Err(a.bad(pos, "EditableImage")),
    };
    image
        .snapshot()
        .ok_or_else(|| a.error(pos, "the EditableImage has been destroyed"))
}

fn item_option(t: &mlua::Table, name: &str, enum_name: &str, func: &str) -> R<Option<EnumItem>> {
    match t.raw_get::<Value>(name)? {
        Value::Nil => Ok(None),
        v => match crate::args::as_ud::<EnumItem>(&v) {
            Some(i) if i.enum_name == enum_name => Ok(Some(i)),
            _ => Err(mlua::Error::runtime(format!(
                "{func}: option {name} must be an Enum.{enum_name}, got {}",
                crate::type_name(&v)
            ))),
        },
    }
}

/// Runs a drawing method on the image `this` names (its arguments after `self`).
fn with_image<T>(
    this: &AnyUserData,
    func: &str,
    f: impl FnOnce(&mut EditableImage) -> R<T>,
) -> R<T> {
    let mut image = this.borrow_mut::<EditableImage>()?;
    image.alive(func)?;
    f(&mut image)
}

impl UserData for EditableImage {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        // An Object, not an Instance (the engine reference's class tree).
        f.add_meta_field(MetaMethod::Type, "Object");
        f.add_field_method_get("ClassName", |_, _| Ok("EditableImage"));
        f.add_field_method_get("Size", |_, this| {
            Ok(Vector2(Vec2::new(this.width as f32, this.height as f32)))
        });
        f.add_field_method_set("Size", |_, _, _: Value| -> R<()> {
            Err(mlua::Error::runtime(
                "unable to assign property Size: property is read only (make a new EditableImage and draw this one into it with DrawImageTransformed)",
            ))
        });
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, _, ()| Ok("EditableImage"));
        m.add_method("IsA", |_, _, class: String| {
            Ok(class == "EditableImage" || class == "Object")
        });
        m.add_method("DrawImageProjected", |_, _, _: MultiValue| -> R<()> {
            Err(mlua::Error::runtime(
                "EditableImage:DrawImageProjected is a Roblox method that procmodel does not implement",
            ))
        });
        // The pixels return to the budget now; parts showing the image keep what they
        // showed last.
        m.add_method_mut("Destroy", |_, this, ()| {
            if !this.destroyed {
                this.destroyed = true;
                this.pixels = Vec::new();
                this.refund();
            }
            Ok(())
        });
        m.add_function(
            "DrawRectangle",
            |_, (this, args): (AnyUserData, MultiValue)| {
                let a = Args::new("DrawRectangle", args);
                let (pos, size) = (point(&a, 1)?, point(&a, 2)?);
                let (s, sa, how) = (color(&a, 3)?, alpha(&a, 4)?, combine_arg(&a, 5)?);
                with_image(&this, "DrawRectangle", |i| {
                    i.draw_rectangle(pos, size, s, sa, how);
                    Ok(())
                })
            },
        );
        m.add_function(
            "DrawCircle",
            |_, (this, args): (AnyUserData, MultiValue)| {
                let a = Args::new("DrawCircle", args);
                let center = finite_vec2(&a, 1)?;
                let radius = a.number(2)?;
                if !radius.is_finite() || radius < 0.0 {
                    return Err(a.error(2, "radius must be a finite number, 0 or more"));
                }
                let (s, sa, how) = (color(&a, 3)?, alpha(&a, 4)?, combine_arg(&a, 5)?);
                let smooth = match a.get(6) {
                    Value::Nil => true,
                    v => match crate::args::as_ud::<EnumItem>(v) {
                        Some(i) if i.enum_name == "AntiAliasing" => i.name != "Disabled",
                        _ => return Err(a.bad(6, "Enum.AntiAliasing")),
                    },
                };
                with_image(&this, "DrawCircle", |i| {
                    i.draw_circle(center, radius.min(1e6) as f32, s, sa, how, smooth);
                    Ok(())
                })
            },
        );
        m.add_function("DrawLine", |_, (this, args): (AnyUserData, MultiValue)| {
            let a = Args::new("DrawLine", args);
            let (p1, p2) = (point(&a, 1)?, point(&a, 2)?);
            let (s, sa, how) = (color(&a, 3)?, alpha(&a, 4)?, combine_arg(&a, 5)?);
            with_image(&this, "DrawLine", |i| {
                i.draw_line(p1, p2, s, sa, how);
                Ok(())
            })
        });
        m.add_function("DrawImage", |_, (this, args): (AnyUserData, MultiValue)| {
            let a = Args::new("DrawImage", args);
            let pos = point(&a, 1)?;
            let src = source(&a, 2)?;
            let how = combine_arg(&a, 3)?;
            with_image(&this, "DrawImage", |i| {
                i.draw_image(pos, &src, how);
                Ok(())
            })
        });
        m.add_function("DrawImageTransformed", |_, (this, args): (AnyUserData, MultiValue)| {
            const F: &str = "DrawImageTransformed";
            let a = Args::new(F, args);
            let pos = finite_vec2(&a, 1)?;
            let scale = finite_vec2(&a, 2)?;
            let rotation = a.number(3)?;
            if !rotation.is_finite() {
                return Err(a.error(3, "rotation must be finite"));
            }
            let src = source(&a, 4)?;
            let (mut how, mut nearest) = (Combine::AlphaBlend, false);
            let mut pivot = Vec2::new(src.width as f32, src.height as f32) / 2.0;
            match a.get(5) {
                Value::Nil => {}
                Value::Table(t) => {
                    for pair in t.clone().pairs::<Value, Value>() {
                        let (k, _) = pair?;
                        let known = matches!(&k, Value::String(s)
                            if matches!(s.to_str().as_deref(), Ok("CombineType" | "SamplingMode" | "PivotPoint")));
                        if !known {
                            return Err(mlua::Error::runtime(format!(
                                "{F}: unknown option {} (CombineType, SamplingMode, PivotPoint)",
                                match &k {
                                    Value::String(s) => s.to_string_lossy(),
                                    other => crate::type_name(other),
                                }
                            )));
                        }
                    }
                    if let Some(i) = item_option(t, "CombineType", "ImageCombineType", F)? {
                        how = Combine::from_item(&i).expect("an ImageCombineType item");
                    }
                    if let Some(i) = item_option(t, "SamplingMode", "ResamplerMode", F)? {
                        nearest = i.name == "Pixelated";
                    }
                    match t.raw_get::<Value>("PivotPoint")? {
                        Value::Nil => {}
                        v => match crate::args::as_ud::<Vector2>(&v) {
                            Some(p) if p.0.is_finite() => pivot = p.0,
                            _ => {
                                return Err(mlua::Error::runtime(format!(
                                    "{F}: option PivotPoint must be a finite Vector2, got {}",
                                    crate::type_name(&v)
                                )));
                            }
                        },
                    }
                }
                _ => return Err(a.bad(5, "table")),
            }
            with_image(&this, F, |i| {
                i.draw_transformed(pos, scale, rotation as f32, &src, pivot, how, nearest);
                Ok(())
            })
        });
        m.add_function(
            "ReadPixelsBuffer",
            |lua, (this, args): (AnyUserData, MultiValue)| {
                let a = Args::new("ReadPixelsBuffer", args);
                let (pos, size) = (finite_vec2(&a, 1)?, finite_vec2(&a, 2)?);
                let bytes = with_image(&this, "ReadPixelsBuffer", |i| {
                    let (x, y, w, h) = i.region(&a, pos, size)?;
                    let mut out = Vec::with_capacity(w * h * 4);
                    for row in y..y + h {
                        let start = (row * i.width as usize + x) * 4;
                        out.extend_from_slice(&i.pixels[start..start + w * 4]);
                    }
                    Ok(out)
                })?;
                lua.create_buffer(bytes)
            },
        );
        m.add_function(
            "WritePixelsBuffer",
            |_, (this, args): (AnyUserData, MultiValue)| {
                let a = Args::new("WritePixelsBuffer", args);
                let (pos, size) = (finite_vec2(&a, 1)?, finite_vec2(&a, 2)?);
                let Value::Buffer(b) = a.get(3) else {
                    return Err(a.bad(3, "buffer"));
                };
                let data = b.to_vec();
                with_image(&this, "WritePixelsBuffer", |i| {
                    let (x, y, w, h) = i.region(&a, pos, size)?;
                    if data.len() != w * h * 4 {
                        return Err(a.error(
                        3,
                        &format!(
                            "the buffer holds {} bytes; a {w}×{h} region needs {} (4 per pixel)",
                            data.len(),
                            w * h * 4
                        ),
                    ));
                    }
                    for (r, row) in (y..y + h).enumerate() {
                        let start = (row * i.width as usize + x) * 4;
                        i.pixels[start..start + w * 4]
                            .copy_from_slice(&data[r * w * 4..(r + 1) * w * 4]);
                    }
                    i.version += 1;
                    Ok(())
                })
            },
        );
    }
}

/// The `Size` option of `CreateEditableImage` (512 × 512 without one).
pub fn size_option(func: &str, options: &Value) -> R<(u32, u32)> {
    match options {
        Value::Nil => Ok((512, 512)),
        Value::Table(t) => match t.raw_get::<Value>("Size")? {
            Value::Nil => Ok((512, 512)),
            v => match crate::args::as_ud::<Vector2>(&v) {
                Some(s) => check_size(func, s.0),
                None => Err(mlua::Error::runtime(format!(
                    "{func}: option Size must be a Vector2, got {}",
                    crate::type_name(&v)
                ))),
            },
        },
        other => Err(mlua::Error::runtime(format!(
            "invalid argument #1 to '{func}' (table expected, got {})",
            crate::type_name(other)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(w: u32, h: u32) -> EditableImage {
        EditableImage::new(w, h, &ImageBudget::new(DEFAULT_BUDGET)).unwrap()
    }

    fn at(i: &EditableImage, x: i64, y: i64) -> [u8; 4] {
        i.pixel(x, y)
    }

    #[test]
    fn combine_types_follow_their_definitions() {
        let red = [1.0, 0.0, 0.0];
        // Source-over onto nothing gives the source; onto opaque blue, a mix.
        assert_eq!(
            combine([0; 4], red, 0.5, Combine::BlendSourceOver),
            [255, 0, 0, 128]
        );
        assert_eq!(
            combine([0, 0, 255, 255], red, 0.5, Combine::BlendSourceOver),
            [128, 0, 128, 255]
        );
        // AlphaBlend mixes with the destination's colour even where it is transparent.
        assert_eq!(
            combine([0, 0, 255, 0], red, 0.5, Combine::AlphaBlend),
            [128, 0, 128, 128]
        );
        assert_eq!(
            combine([0, 0, 255, 0], red, 0.5, Combine::BlendSourceOver),
            [255, 0, 0, 128]
        );
        assert_eq!(
            combine([9, 9, 9, 9], red, 0.25, Combine::Overwrite),
            [255, 0, 0, 64]
        );
        assert_eq!(
            combine([255, 128, 0, 255], [0.5, 0.5, 1.0], 1.0, Combine::Multiply),
            [128, 64, 0, 255]
        );
        assert_eq!(
            combine([200, 10, 0, 100], red, 0.5, Combine::Add),
            [255, 10, 0, 100]
        );
        assert_eq!(
            combine([200, 10, 0, 100], red, 0.5, Combine::Subtract),
            [73, 10, 0, 100]
        );
        // A normal map stays unit length: (1, 1, 1) blended in full comes back normalised.
        let n = combine(
            [128, 128, 255, 255],
            [1.0, 1.0, 1.0],
            1.0,
            Combine::NormalMapBlend,
        );
        let v = glam::Vec3::new(n[0] as f32, n[1] as f32, n[2] as f32) / 255.0 * 2.0 - 1.0;
        assert!((v.length() - 1.0).abs() < 0.02, "{n:?}");
    }

    #[test]
    fn rectangles_clip_and_cover_exactly_their_pixels() {
        let mut i = image(8, 6);
        i.draw_rectangle((-2, 4), (4, 10), [0.0, 1.0, 0.0], 1.0, Combine::Overwrite);
        let covered: Vec<_> = (0..6)
            .flat_map(|y| (0..8).map(move |x| (x, y)))
            .filter(|&(x, y)| at(&i, x, y)[3] == 255)
            .collect();
        assert_eq!(covered, vec![(0, 4), (1, 4), (0, 5), (1, 5)]);
        assert_eq!(at(&i, 1, 5), [0, 255, 0, 255]);
    }

    #[test]
    fn circles_are_round_and_soft_only_at_the_edge() {
        let mut i = image(32, 32);
        i.draw_circle(
            Vec2::new(16.0, 16.0),
            8.0,
            [1.0; 3],
            1.0,
            Combine::Overwrite,
            false,
        );
        let inside = (0..32 * 32).filter(|&p| i.pixels[p * 4 + 3] == 255).count();
        // About π r²; symmetric about the centre.
        assert!(
            (inside as f32 - std::f32::consts::PI * 64.0).abs() < 12.0,
            "{inside}"
        );
        for (x, y) in [(10, 16), (16, 9), (20, 20)] {
            assert_eq!(at(&i, x, y), at(&i, 31 - x, 31 - y));
        }
        let mut s = image(32, 32);
        s.draw_circle(
            Vec2::new(16.0, 16.0),
            8.0,
            [1.0; 3],
            1.0,
            Combine::Overwrite,
            true,
        );
        assert_eq!(at(&s, 16, 16)[3], 255);
        let soft = (0..32 * 32)
            .filter(|&p| (1..255).contains(&s.pixels[p * 4 + 3]))
            .count();
        assert!(soft > 20 && soft < 80, "{soft} edge pixels");
        assert_eq!(at(&s, 0, 0)[3], 0);
    }

    #[test]
    fn lines_include_both_ends_and_have_no_gaps() {
        let mut i = image(10, 10);
        i.draw_line((1, 1), (8, 4), [1.0; 3], 1.0, Combine::Overwrite);
        assert_eq!(at(&i, 1, 1)[3], 255);
        assert_eq!(at(&i, 8, 4)[3], 255);
        for x in 1..=8 {
            assert_eq!(
                (0..10).filter(|&y| at(&i, x, y)[3] == 255).count(),
                1,
                "column {x}"
            );
        }
        // A line far outside the image touches nothing and ends.
        let mut j = image(4, 4);
        j.draw_line(
            (-1_000_000, -5),
            (2_000_000_000, -5),
            [1.0; 3],
            1.0,
            Combine::Overwrite,
        );
        assert!(j.pixels.iter().all(|&b| b == 0));
        // A steep one: one pixel per row; the same pixels drawn either way.
        let mut k = image(10, 10);
        k.draw_line((2, 0), (5, 9), [1.0; 3], 1.0, Combine::Overwrite);
        for y in 0..10 {
            assert_eq!(
                (0..10).filter(|&x| at(&k, x, y)[3] == 255).count(),
                1,
                "row {y}"
            );
        }
        let mut back = image(10, 10);
        back.draw_line((5, 9), (2, 0), [1.0; 3], 1.0, Combine::Overwrite);
        assert_eq!(back.pixels, k.pixels);
        // A line crossing the image from far away draws the part inside.
        let mut long = image(8, 8);
        long.draw_line(
            (-2_000_000_000, 4),
            (2_000_000_000, 4),
            [1.0; 3],
            1.0,
            Combine::Overwrite,
        );
        assert_eq!((0..8).filter(|&x| at(&long, x, 4)[3] == 255).count(), 8);
    }

    #[test]
    fn a_transformed_image_turns_clockwise_and_scales_about_its_pivot() {
        // A 2×1 source: red on the left, blue on the right.
        let src = Texture::new(2, 1, vec![255, 0, 0, 255, 0, 0, 255, 255]).unwrap();
        let mut i = image(8, 8);
        // Turned 90° clockwise about its centre, at (4.5, 4): red above, blue below.
        i.draw_transformed(
            Vec2::new(4.5, 4.0),
            Vec2::ONE,
            90.0,
            &src,
            Vec2::new(1.0, 0.5),
            Combine::Overwrite,
            true,
        );
        assert_eq!(at(&i, 4, 3), [255, 0, 0, 255]);
        assert_eq!(at(&i, 4, 4), [0, 0, 255, 255]);
        assert_eq!(
            i.pixels
                .iter()
                .skip(3)
                .step_by(4)
                .filter(|&&a| a == 255)
                .count(),
            2
        );
        // Scaled 2× with the pivot at the top-left: four pixels wide, two high.
        let mut j = image(8, 8);
        j.draw_transformed(
            Vec2::ZERO,
            Vec2::splat(2.0),
            0.0,
            &src,
            Vec2::ZERO,
            Combine::Overwrite,
            true,
        );
        assert_eq!(at(&j, 0, 1), [255, 0, 0, 255]);
        assert_eq!(at(&j, 3, 1), [0, 0, 255, 255]);
        assert_eq!(at(&j, 4, 0)[3], 0);
        assert_eq!(at(&j, 0, 2)[3], 0);
    }

    #[test]
    fn the_budget_is_shared_and_given_back() {
        let budget = ImageBudget::new(2 * 4 * 16);
        let a = EditableImage::new(4, 4, &budget).unwrap();
        let b = EditableImage::new(4, 4, &budget).unwrap();
        assert!(EditableImage::new(1, 1, &budget).is_none());
        assert_ne!(a.uid(), b.uid());
        drop(a);
        assert_eq!(budget.remaining(), 64);
        assert!(b.duplicate().is_some());
    }
}
