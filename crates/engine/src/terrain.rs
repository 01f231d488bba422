//! Terrain written by generators: each model's voxels merged into the scene's
//! `Workspace.Terrain`, and the bookkeeping that lets a model own them.
//!
//! A run's `params.Terrain` voxels arrive in its results as a TerrainRegion named
//! [`procmodel_script::GENERATED_TERRAIN`] (local space). Applying the results places them with
//! the model's pivot ([`Placement`]) and writes them over the scene's voxels in the cells they
//! occupy — the model's *owned cells*, those where its voxel is not empty. What the scene held
//! there before (hand-made terrain, or nothing) is kept as the model's *under* voxels.
//!
//! - **Ownership.** [`Book`] lists the layers now in the scene's Terrain, in the order they
//!   were applied. [`Book::sync`] brings the Terrain in line with the results folders in the
//!   scene: a layer whose folder left the scene (regenerated, failed, deleted, undone) gives
//!   its owned cells back to their under voxels; a folder that came back (undo, redo) is
//!   written again over what is under it now, at the placement it was applied with.
//! - **Overlap.** A model whose voxels would occupy a cell another model owns fails (its error
//!   names both models and the cell); nothing is overwritten. Models are applied in scene
//!   order, so which of two overlapping models fails does not depend on `--jobs`.
//! - **Persistence.** The results folder's `ProcmodelTerrain` attribute (a binary string)
//!   records the placement and the under voxels, so a saved place keeps ownership; the
//!   scene's `Terrain.SmoothGrid` holds the merged voxels as Roblox reads them.
//!
//! **Invariant:** the scene's Terrain in a model's owned cells is the model's voxels until the
//! model's layer is removed; removal writes back exactly the under voxels, so regenerating,
//! deleting or undoing a model never touches a cell it did not own.

use procmodel_script::GENERATED_TERRAIN;
use procmodel_terrain::{CHUNK, Chunk, Terrain, Voxel};
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use rbx_types::{BinaryString, Ref, Variant};

use glam::{Affine3A, IVec3};

/// Attribute of a results folder whose model wrote terrain: placement and under voxels.
pub const RECORD_ATTRIBUTE: &str = "ProcmodelTerrain";

/// How far a pivot's rotation may stray from a whole quarter turn about Y (matrix entries).
const ROTATION_EPSILON: f32 = 1e-4;
/// Cells from the origin a placement may reach (the terrain's ±2^23-stud extent).
const MAX_OFFSET: i32 = 1 << 21;

/// Where a model's local voxel grid lands in the scene's: a whole number of cells, turned
/// about Y by `turns` quarter turns (Roblox's sense: one turn takes +X to −Z).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Placement {
    /// Translation in cells (the pivot's position ÷ 4, rounded to the nearest cell).
    pub offset: IVec3,
    /// Quarter turns about Y, 0..4.
    pub turns: u8,
}

impl Placement {
    /// The placement of a transform: the rotation must be a whole number of quarter turns
    /// about Y (within 1e-4), the translation is rounded to the 4-stud grid.
    pub fn from_transform(t: &Affine3A) -> Result<Placement, String> {
        let (x, y, z) = (t.matrix3.x_axis, t.matrix3.y_axis, t.matrix3.z_axis);
        let near = |a: f32, b: f32| (a - b).abs() <= ROTATION_EPSILON;
        let upright = near(y.x, 0.0) && near(y.y, 1.0) && near(y.z, 0.0);
        let turns = (0u8..4).find(|&k| {
            let (c, s) = [(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)][usize::from(k)];
            upright
                && near(x.x, c)
                && near(x.y, 0.0)
                && near(x.z, -s)
                && near(z.x, s)
                && near(z.y, 0.0)
                && near(z.z, c)
        });
        let Some(turns) = turns else {
            let (ry, rx, rz) = glam::Mat3::from(t.matrix3).to_euler(glam::EulerRot::YXZ);
            return Err(format!(
                "its pivot is rotated (orientation {:.3}, {:.3}, {:.3} degrees); voxels can only be placed turned about Y in whole quarter turns (0, 90, 180 or 270 degrees)",
                rx.to_degrees(),
                ry.to_degrees(),
                rz.to_degrees()
            ));
        };
        let p = glam::Vec3::from(t.translation);
        let mut offset = [0i32; 3];
        for (o, v) in offset.iter_mut().zip(p.to_array()) {
            let cells = (v / 4.0).round();
            if !cells.is_finite() || cells.abs() > MAX_OFFSET as f32 {
                return Err(format!(
                    "its pivot position {v} is outside the terrain's range"
                ));
            }
            *o = cells as i32;
        }
        Ok(Placement {
            offset: IVec3::from_array(offset),
            turns,
        })
    }

    /// The scene cell a local cell lands in: its centre turned and moved, exactly.
    pub fn cell(&self, local: IVec3) -> IVec3 {
        let c = local * 4 + IVec3::splat(2);
        let r = match self.turns & 3 {
            0 => c,
            1 => IVec3::new(c.z, c.y, -c.x),
            2 => IVec3::new(-c.x, c.y, -c.z),
            _ => IVec3::new(-c.z, c.y, c.x),
        };
        r.div_euclid(IVec3::splat(4)) + self.offset
    }

    /// The voxels of `local` placed in the scene's grid.
    pub fn place(&self, local: &Terrain) -> Terrain {
        let mut out = Terrain::new();
        each_voxel(local, |c, v| out.set(self.cell(c), v));
        out.compact();
        out
    }
}

/// Calls `f` for every non-empty voxel of `t`, in chunk order.
pub fn each_voxel(t: &Terrain, mut f: impl FnMut(IVec3, Voxel)) {
    for (key, chunk) in t.chunks() {
        let base = key * CHUNK;
        if let Chunk::Uniform(v) = chunk
            && v.is_empty()
        {
            continue;
        }
        for y in 0..CHUNK {
            for z in 0..CHUNK {
                for x in 0..CHUNK {
                    let v = chunk.get(x, y, z);
                    if !v.is_empty() {
                        f(base + IVec3::new(x, y, z), v);
                    }
                }
            }
        }
    }
}

/// One model's voxels as they are in the scene's Terrain.
struct Layer {
    model: Ref,
    folder: Ref,
    /// The model's voxels in scene cells (its owned cells are the non-empty ones).
    voxels: Terrain,
    /// What the scene held in those cells before.
    under: Terrain,
}

/// The layers now written into the scene's Terrain, in the order they were applied.
#[derive(Default)]
pub struct Book {
    layers: Vec<Layer>,
}

/// The TerrainRegion carrying a results folder's local voxels, if any. The host appends it
/// after the generator returned, so it is the folder's last child (moves, saves, the cache
/// and undo keep child order); only that child is looked at — a results folder of 100,000
/// parts is not scanned on every apply.
pub fn generated_region(dom: &WeakDom, folder: Ref) -> Option<Ref> {
    let last = *dom.get_by_ref(folder)?.children().last()?;
    dom.get_by_ref(last)
        .is_some_and(|i| i.class == "TerrainRegion" && i.name == GENERATED_TERRAIN)
        .then_some(last)
}

/// The local voxels of a results folder (None when it carries none).
pub fn local_voxels(dom: &WeakDom, folder: Ref) -> Result<Option<Terrain>, String> {
    let Some(r) = generated_region(dom, folder) else {
        return Ok(None);
    };
    let inst = dom.get_by_ref(r).ok_or("results changed")?;
    match inst.properties.get(&"SmoothGrid".into()) {
        Some(Variant::BinaryString(b)) => procmodel_terrain::smoothgrid::decode(b.as_ref())
            .map(Some)
            .map_err(|e| format!("{}: {e}", procmodel_dom::full_name(dom, r))),
        _ => Ok(None),
    }
}

/// The scene's `Workspace.Terrain`, made when `create` and missing.
fn scene_terrain_ref(dom: &mut WeakDom, create: bool) -> Result<Option<Ref>, String> {
    let child = |dom: &WeakDom, r: Ref, class: &str| {
        dom.get_by_ref(r)?
            .children()
            .iter()
            .copied()
            .find(|&c| dom.get_by_ref(c).is_some_and(|i| i.class == class))
    };
    let Some(ws) = child(dom, dom.root_ref(), "Workspace") else {
        return if create {
            Err("the scene has no Workspace to hold terrain".into())
        } else {
            Ok(None)
        };
    };
    if let Some(t) = child(dom, ws, "Terrain") {
        return Ok(Some(t));
    }
    Ok(create.then(|| dom.insert(ws, InstanceBuilder::new("Terrain").with_name("Terrain"))))
}

/// The voxels of the Terrain instance `r` (none when it has no SmoothGrid).
fn read_terrain(dom: &WeakDom, r: Option<Ref>) -> Result<Terrain, String> {
    match r
        .and_then(|r| dom.get_by_ref(r))
        .and_then(|i| i.properties.get(&"SmoothGrid".into()))
    {
        Some(Variant::BinaryString(b)) if !AsRef::<[u8]>::as_ref(b).is_empty() => {
            procmodel_terrain::smoothgrid::decode(b.as_ref())
                .map_err(|e| format!("Workspace.Terrain: {e}"))
        }
        _ => Ok(Terrain::new()),
    }
}

/// Decodes the scene's Terrain voxels, lets `f` edit them and writes them back.
fn edit_scene_terrain<R>(
    dom: &mut WeakDom,
    f: impl FnOnce(&mut Terrain, &WeakDom) -> R,
) -> Result<R, String> {
    let r = scene_terrain_ref(dom, true)?.ok_or("no Workspace.Terrain")?;
    let mut t = read_terrain(dom, Some(r))?;
    let out = f(&mut t, dom);
    t.compact();
    let grid = procmodel_terrain::smoothgrid::encode(&t);
    if let Some(i) = dom.get_by_ref_mut(r) {
        i.properties
            .insert("SmoothGrid".into(), BinaryString::from(grid).into());
    }
    Ok(out)
}

/// A results folder's record: placement, then the under voxels (SmoothGrid bytes).
fn encode_record(p: Placement, under: &Terrain) -> Vec<u8> {
    let mut b = vec![b'P', b'T', 1, p.turns];
    for v in p.offset.to_array() {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(&procmodel_terrain::smoothgrid::encode(under));
    b
}

fn decode_record(b: &[u8]) -> Result<(Placement, Terrain), String> {
    if b.len() < 16 || &b[..3] != b"PT\x01" || b[3] > 3 {
        return Err("unknown record (expected version 1)".into());
    }
    let int = |i: usize| i32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let offset = IVec3::new(int(4), int(8), int(12));
    if offset.abs().max_element() > MAX_OFFSET {
        return Err("placement outside the terrain's range".into());
    }
    let under = if b.len() == 16 {
        Terrain::new()
    } else {
        procmodel_terrain::smoothgrid::decode(&b[16..]).map_err(|e| e.to_string())?
    };
    Ok((
        Placement {
            offset,
            turns: b[3],
        },
        under,
    ))
}

fn record_of(dom: &WeakDom, folder: Ref) -> Option<Vec<u8>> {
    let inst = dom.get_by_ref(folder)?;
    match inst.properties.get(&procmodel_dom::keys::KEYS.attributes) {
        Some(Variant::Attributes(a)) => match a.get(RECORD_ATTRIBUTE) {
            Some(Variant::BinaryString(b)) => Some(AsRef::<[u8]>::as_ref(b).to_vec()),
            Some(Variant::String(s)) => Some(s.as_bytes().to_vec()),
            _ => None,
        },
        _ => None,
    }
}

/// Records `placement` (and `under`) on a results folder.
pub fn set_record(
    dom: &mut WeakDom,
    folder: Ref,
    placement: Placement,
    under: &Terrain,
) -> Result<(), String> {
    let record = encode_record(placement, under);
    crate::apply::set_attribute(
        dom,
        folder,
        RECORD_ATTRIBUTE,
        Some(Variant::BinaryString(record.into())),
    )
    .map_err(|e| e.to_string())
}

/// Results folders in the scene that carry voxels, with their models, in scene order.
fn live(dom: &WeakDom) -> Vec<(Ref, Ref)> {
    live_of(dom, crate::apply::models_in_scene(dom))
}

fn live_of(dom: &WeakDom, models: impl IntoIterator<Item = Ref>) -> Vec<(Ref, Ref)> {
    models
        .into_iter()
        .filter_map(|m| {
            let f = crate::apply::results_folder(dom, m)?;
            generated_region(dom, f).map(|_| (m, f))
        })
        .collect()
}

/// Whether `folder` is still `model`'s results, in the scene, with voxels.
fn is_live(dom: &WeakDom, model: Ref, folder: Ref) -> bool {
    procmodel_dom::in_scene(dom, model)
        && crate::apply::results_folder(dom, model) == Some(folder)
        && generated_region(dom, folder).is_some()
}

/// Which results [`Book::sync`] looks at for voxels not merged yet.
#[derive(Clone, Copy)]
pub enum Discover<'a> {
    /// None: only layers whose results left the scene are removed.
    Nothing,
    /// These models' results.
    Models(&'a [Ref]),
    /// Every model in the scene (after an undo or a redo).
    All,
}

/// The first cell of `voxels` another model (not `model`) owns.
fn overlap<'a>(layers: &'a [Layer], voxels: &Terrain, model: Ref) -> Option<(&'a Layer, IVec3)> {
    let mut found = None;
    for l in layers.iter().filter(|l| l.model != model) {
        each_voxel(voxels, |c, _| {
            if found.is_none() && !l.voxels.get(c).is_empty() {
                found = Some(c);
            }
        });
        if let Some(c) = found {
            return Some((l, c));
        }
    }
    None
}

/// The message for a model whose voxels would overlap another's.
fn overlap_message(dom: &WeakDom, other: &Layer, cell: IVec3) -> String {
    let name = if dom.get_by_ref(other.model).is_some() {
        procmodel_dom::full_name(dom, other.model)
    } else {
        "a removed model".into()
    };
    let s = cell * 4;
    format!(
        "terrain: its voxels overlap the voxels of {name} at cell ({}, {}, {}) (studs {}..{}, {}..{}, {}..{}); two models never write the same cell — move one of them or shrink what it writes",
        cell.x,
        cell.y,
        cell.z,
        s.x,
        s.x + 4,
        s.y,
        s.y + 4,
        s.z,
        s.z + 4
    )
}

impl Book {
    /// The book of a scene just loaded: every results folder with voxels and a record is
    /// taken as already merged (the saved Terrain holds its voxels). A folder with voxels
    /// but no readable record is merged again at the next [`Book::sync`].
    pub fn adopt(dom: &WeakDom) -> Book {
        let mut layers = Vec::new();
        for (model, folder) in live(dom) {
            let Some(Ok((placement, under))) = record_of(dom, folder).map(|b| decode_record(&b))
            else {
                continue;
            };
            let Ok(Some(local)) = local_voxels(dom, folder) else {
                continue;
            };
            layers.push(Layer {
                model,
                folder,
                voxels: placement.place(&local),
                under,
            });
        }
        Book { layers }
    }

    /// Whether no model's voxels are in the scene's Terrain.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// Whether [`Book::sync`] has anything to do (read-only: no Terrain decoded). With
    /// [`Discover::Nothing`] this is a walk up from each layer's model, no scene walk.
    pub fn needs_sync(&self, dom: &WeakDom, discover: Discover) -> bool {
        let (gone, fresh) = self.plan(dom, discover);
        !gone.is_empty() || !fresh.is_empty()
    }

    /// The layers whose results left the scene, and the results with voxels not merged yet.
    fn plan(&self, dom: &WeakDom, discover: Discover) -> (Vec<usize>, Vec<(Ref, Ref)>) {
        let live = match discover {
            Discover::Nothing => Vec::new(),
            Discover::Models(models) => live_of(dom, models.iter().copied()),
            Discover::All => live(dom),
        };
        let gone: Vec<usize> = (0..self.layers.len())
            .filter(|&i| !is_live(dom, self.layers[i].model, self.layers[i].folder))
            .collect();
        let fresh: Vec<(Ref, Ref)> = live
            .into_iter()
            .filter(|&(m, f)| !self.layers.iter().any(|l| l.model == m && l.folder == f))
            .collect();
        (gone, fresh)
    }

    /// Checks the new results `folder` of `model` before they replace the old ones: places
    /// its voxels with `transform` (the move that placed its parts) and refuses an overlap
    /// with another model's voxels. Records the placement on the folder. Nothing is written
    /// to the Terrain here ([`Book::sync`] does that once the folder is in the scene).
    pub fn check_new(
        &self,
        dom: &mut WeakDom,
        model: Ref,
        folder: Ref,
        transform: &Affine3A,
        scale: f32,
    ) -> Result<(), String> {
        let Some(local) = local_voxels(dom, folder)? else {
            return Ok(());
        };
        if scale != 1.0 {
            return Err(format!(
                "terrain: the model's Scale is {scale}, and voxels cannot be scaled; a model that writes params.Terrain needs Scale 1"
            ));
        }
        let placement =
            Placement::from_transform(transform).map_err(|e| format!("terrain: {e}"))?;
        let voxels = placement.place(&local);
        if let Some((other, cell)) = overlap(&self.layers, &voxels, model) {
            return Err(overlap_message(dom, other, cell));
        }
        // The merge must not fail once the results are swapped in: the scene's Terrain has
        // to be there to write, and readable.
        let scene = scene_terrain_ref(dom, true)?;
        read_terrain(dom, scene).map_err(|e| format!("terrain: {e}"))?;
        set_record(dom, folder, placement, &Terrain::new())
    }

    /// Brings the scene's Terrain in line with the results in the scene: layers whose
    /// folder left the scene give their cells back to what was under them (newest first); a
    /// results folder with voxels not yet merged is merged over what is there now (scene
    /// order). Returns the models whose voxels could not be merged because another model
    /// owns one of their cells (the caller regenerates them, which reports the overlap).
    pub fn sync(&mut self, dom: &mut WeakDom, discover: Discover) -> Result<Vec<Ref>, String> {
        let (gone, fresh) = self.plan(dom, discover);
        if gone.is_empty() && fresh.is_empty() {
            return Ok(Vec::new());
        }
        // Read what the fresh folders need before the Terrain is borrowed.
        let mut incoming = Vec::new();
        for &(model, folder) in &fresh {
            let placement = match record_of(dom, folder).map(|b| decode_record(&b)) {
                Some(Ok((p, _))) => p,
                // Results put in the scene some other way: placed at the model's pivot.
                _ => {
                    let pivot = procmodel_dom::get_pivot(dom, model).unwrap_or_default();
                    Placement::from_transform(&pivot).map_err(|e| {
                        format!("{}: terrain: {e}", procmodel_dom::full_name(dom, model))
                    })?
                }
            };
            let local = local_voxels(dom, folder)?.unwrap_or_default();
            incoming.push((model, folder, placement, placement.place(&local)));
        }
        let mut removed = Vec::new();
        for &i in gone.iter().rev() {
            removed.push(self.layers.remove(i));
        }
        let layers = &mut self.layers;
        let mut conflicts = Vec::new();
        let mut records = Vec::new();
        let edited = edit_scene_terrain(dom, |t, _| {
            for l in &removed {
                each_voxel(&l.voxels, |c, _| t.set(c, l.under.get(c)));
            }
            for (model, folder, placement, voxels) in incoming {
                if overlap(layers, &voxels, model).is_some() {
                    conflicts.push(model);
                    continue;
                }
                let mut under = Terrain::new();
                each_voxel(&voxels, |c, v| {
                    under.set(c, t.get(c));
                    t.set(c, v);
                });
                under.compact();
                records.push((folder, placement, encode_record(placement, &under)));
                layers.push(Layer {
                    model,
                    folder,
                    voxels,
                    under,
                });
            }
        });
        if let Err(e) = edited {
            // The Terrain could not be read: nothing was written, so the removed layers are
            // still in it (a later sync gives their cells back).
            self.layers.extend(removed.into_iter().rev());
            return Err(e);
        }
        for (folder, _, record) in records {
            crate::apply::set_attribute(
                dom,
                folder,
                RECORD_ATTRIBUTE,
                Some(Variant::BinaryString(record.into())),
            )
            .map_err(|e| e.to_string())?;
        }
        Ok(conflicts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use procmodel_terrain::Material;

    fn turned(turns: u8) -> Affine3A {
        Affine3A::from_rotation_y(f32::from(turns) * std::f32::consts::FRAC_PI_2)
    }

    #[test]
    fn quarter_turns_are_recognised_and_exact() {
        for k in 0..4u8 {
            let mut t = turned(k);
            t.translation = glam::Vec3A::new(9.0, -6.1, 2.0);
            let p = Placement::from_transform(&t).unwrap();
            assert_eq!(p.turns, k);
            // 9/4 = 2.25 → 2; −6.1/4 = −1.525 → −2; 2/4 = 0.5 → 1 (half away from zero).
            assert_eq!(p.offset, IVec3::new(2, -2, 1));
        }
    }

    #[test]
    fn a_cell_lands_where_its_centre_turns() {
        // One turn takes +X to −Z (glam's and Roblox's rotation about Y agree).
        let p = Placement {
            offset: IVec3::ZERO,
            turns: 1,
        };
        let centre = turned(1).transform_point3(glam::Vec3::new(4.0 * 3.0 + 2.0, 2.0, 2.0));
        assert!((centre - glam::Vec3::new(2.0, 2.0, -14.0)).length() < 1e-4);
        assert_eq!(p.cell(IVec3::new(3, 0, 0)), IVec3::new(0, 0, -4));
        // Every turn is a bijection on cells: four turns give the cell back.
        let c = IVec3::new(-5, 7, 11);
        let mut x = c;
        for _ in 0..4 {
            x = p.cell(x);
        }
        assert_eq!(x, c);
    }

    #[test]
    fn tilted_pivots_are_refused_by_name() {
        let t = Affine3A::from_rotation_x(0.3);
        let e = Placement::from_transform(&t).unwrap_err();
        assert!(e.contains("quarter turns"), "{e}");
        let t = turned(0) * Affine3A::from_rotation_y(0.2);
        assert!(Placement::from_transform(&t).is_err());
        let mut t = Affine3A::IDENTITY;
        t.translation.x = f32::NAN;
        assert!(
            Placement::from_transform(&t)
                .unwrap_err()
                .contains("outside")
        );
    }

    #[test]
    fn records_round_trip_and_reject_damage() {
        let mut under = Terrain::new();
        under.set(IVec3::new(1, 2, 3), Voxel::solid(Material::Rock, 200));
        let p = Placement {
            offset: IVec3::new(-3, 4, 5),
            turns: 2,
        };
        let b = encode_record(p, &under);
        let (p2, u2) = decode_record(&b).unwrap();
        assert_eq!(p2, p);
        assert_eq!(u2.get(IVec3::new(1, 2, 3)), under.get(IVec3::new(1, 2, 3)));
        assert!(decode_record(&b[..10]).is_err());
        let mut bad = b.clone();
        bad[3] = 9;
        assert!(decode_record(&bad).is_err());
    }
}
