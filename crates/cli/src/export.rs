//! `procmodel export`: write a whole scene as glTF or OBJ (no regeneration); a
//! `Workspace.Terrain` with voxels is meshed and added (on its glTF node, or as an OBJ object).

use crate::output::{self, Format};
use anyhow::{Context, Result, anyhow, bail};
use procmodel_engine::{Engine, EngineConfig};
use procmodel_export::ExportOptions;
use procmodel_export::terrain::{TerrainPrimitive, terrain_glb};
use procmodel_terrain::{TerrainMesh, mesh_terrain, smoothgrid};
use rbx_dom_weak::WeakDom;
use rbx_types::Variant;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The scene (.rbxl, .rbxlx, .rbxm, .rbxmx).
    pub scene: PathBuf,
    /// Output (.glb, .gltf, .obj).
    #[arg(short, long)]
    pub output: PathBuf,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let format = Format::from_path(&args.output)?;
    crate::output::destination(&args.output)?;
    if !matches!(format, Format::Glb | Format::Gltf | Format::Obj) {
        bail!(
            "{}: export writes .glb, .gltf or .obj",
            args.output.display()
        );
    }
    let engine = Engine::load(
        procmodel_luau::runtime(),
        &args.scene,
        EngineConfig::default(),
    )?;
    engine.with_dom(|dom| {
        let roots = world_roots(dom);
        write_with_terrain(dom, &roots, format, &args.output, &args.scene).map(|_| ())
    })?;
    eprintln!(
        "exported {} -> {}",
        args.scene.display(),
        args.output.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// What a scene shows: a place's Workspace (what Roblox renders, its Terrain meshed on its
/// node; templates kept in ReplicatedStorage or ServerStorage are not in the world), or a
/// model file's top instances.
fn world_roots(dom: &WeakDom) -> Vec<rbx_types::Ref> {
    match procmodel_dom::world(dom) {
        Some(w) => vec![w],
        None => dom
            .root()
            .children()
            .iter()
            .copied()
            .filter(|&r| dom.get_by_ref(r).is_some_and(procmodel_dom::is_archivable))
            .collect(),
    }
}

/// `roots` of `dom` as `.glb` bytes with the scene's `Workspace.Terrain` mesh, as `export`
/// writes them (the studio's Export .glb).
pub(crate) fn glb_bytes(dom: &WeakDom, roots: &[rbx_types::Ref]) -> Result<Vec<u8>> {
    let scene = Path::new("scene.glb");
    match terrain_mesh(dom, scene)? {
        Some(t) => {
            let mut files = gltf_with_terrain(dom, roots, &t, Format::Glb, scene)?;
            Ok(files.swap_remove(0).1)
        }
        None => {
            let e = procmodel_export::to_glb(dom, roots, &ExportOptions::default())
                .with_context(output::cannot_export(scene))?;
            output::print_warnings(&e.warnings, true);
            Ok(e.output)
        }
    }
}

/// Writes `roots` of `dom` to `path` in `format`; glTF and OBJ get the scene's
/// `Workspace.Terrain` mesh in the same document when it has voxels (`scene` names the source
/// in errors). Returns the main file's size and hash.
pub(crate) fn write_with_terrain(
    dom: &WeakDom,
    roots: &[rbx_types::Ref],
    format: Format,
    path: &Path,
    scene: &Path,
) -> Result<output::Written> {
    let t = match format {
        Format::Glb | Format::Gltf | Format::Obj => terrain_mesh(dom, scene)?,
        _ => None,
    };
    let Some(t) = t else {
        // No terrain voxels to draw (none, or an empty Terrain): nothing to warn about.
        return output::write(dom, roots, format, path, true);
    };
    let files = if format == Format::Obj {
        obj_with_terrain(dom, roots, &t, path)?
    } else {
        gltf_with_terrain(dom, roots, &t, format, path)?
    };
    let mut main = None;
    let mut batch = output::Batch::default();
    for (p, bytes) in files {
        batch.stage(&p, &bytes)?;
        main.get_or_insert(output::Written {
            len: bytes.len() as u64,
            hash: blake3::hash(&bytes),
        });
    }
    batch.commit()?;
    main.ok_or_else(|| anyhow!("{}: nothing to write", path.display()))
}

/// The mesh of the scene's `Workspace.Terrain` and its material colours, when it has voxels.
pub(crate) struct SceneTerrain {
    pub(crate) mesh: TerrainMesh,
    pub(crate) colors: procmodel_terrain::MaterialColors,
    /// The water surface's opacity: one minus `Terrain.WaterTransparency`.
    pub(crate) water_opacity: f32,
}

impl SceneTerrain {
    /// How opaque a material's surface is drawn: water at its opacity, the rest fully.
    fn opacity(&self, m: procmodel_terrain::Material) -> f32 {
        match m {
            procmodel_terrain::Material::Water => self.water_opacity,
            _ => 1.0,
        }
    }
}

fn terrain_mesh(dom: &WeakDom, scene: &Path) -> Result<Option<SceneTerrain>> {
    let Some(terrain) = procmodel_dom::workspace_terrain(dom) else {
        return Ok(None);
    };
    let Some(Variant::BinaryString(grid)) = terrain.properties.get(&"SmoothGrid".into()) else {
        return Ok(None);
    };
    let bytes: &[u8] = grid.as_ref();
    let voxels = smoothgrid::decode(bytes)
        .map_err(|e| anyhow!("{}: Workspace.Terrain.SmoothGrid: {e}", scene.display()))?;
    let mut colors = procmodel_terrain::MaterialColors::default();
    if let Some(Variant::MaterialColors(mc)) = terrain.properties.get(&"MaterialColors".into()) {
        colors = procmodel_terrain::MaterialColors::decode(&mc.encode())
            .map_err(|e| anyhow!("{}: Workspace.Terrain.MaterialColors: {e}", scene.display()))?;
    }
    // Water's colour and transparency are the Terrain's own properties.
    let (water, water_opacity) = procmodel_dom::terrain_water(Some(terrain));
    colors.set(procmodel_terrain::Material::Water, water);
    let mesh = mesh_terrain(&voxels);
    Ok((mesh.triangle_count() > 0).then_some(SceneTerrain {
        mesh,
        colors,
        water_opacity,
    }))
}

/// The scene's instances as glTF (`.glb`, or `.gltf` + `.bin`) with the terrain mesh added
/// to the same document: the files to write, main file first. Export warnings go to stderr.
pub(crate) fn gltf_with_terrain(
    dom: &WeakDom,
    roots: &[rbx_types::Ref],
    t: &SceneTerrain,
    format: Format,
    path: &Path,
) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
    let opts = ExportOptions {
        bin_name: format!("{stem}.bin"),
        ..ExportOptions::default()
    };
    let names: Vec<&str> = t.mesh.parts.iter().map(|p| p.material.name()).collect();
    let prims: Vec<TerrainPrimitive<'_>> = t
        .mesh
        .parts
        .iter()
        .zip(&names)
        .map(|(p, name)| TerrainPrimitive {
            name,
            color: t.colors.get(p.material),
            opacity: t.opacity(p.material),
            positions: &p.positions,
            normals: &p.normals,
            indices: &p.indices,
        })
        .collect();
    let (terrain_json, terrain_bin) = split_glb(&terrain_glb(&prims, opts.scale)?)?;
    let (mut doc, mut bin, warnings) = match format {
        Format::Glb => {
            let e = procmodel_export::to_glb(dom, roots, &opts)
                .with_context(output::cannot_export(path))?;
            let (j, b) = split_glb(&e.output)?;
            (j, b, e.warnings)
        }
        Format::Gltf => {
            let e = procmodel_export::to_gltf(dom, roots, &opts)
                .with_context(output::cannot_export(path))?;
            let j = serde_json::from_str(&e.output.json).context("the exported glTF JSON")?;
            (j, e.output.bin, e.warnings)
        }
        _ => bail!("{}: terrain meshes go into .glb or .gltf", path.display()),
    };
    output::print_warnings(&warnings, true);
    let uri = (format == Format::Gltf).then_some(opts.bin_name.as_str());
    append_gltf(&mut doc, &mut bin, terrain_json, &terrain_bin, uri)?;
    Ok(match format {
        Format::Glb => vec![(path.to_owned(), join_glb(&doc, &bin)?)],
        _ => {
            let mut json = serde_json::to_string_pretty(&doc)?;
            json.push('\n');
            vec![
                (path.to_owned(), json.into_bytes()),
                (path.with_file_name(&opts.bin_name), bin),
            ]
        }
    })
}

/// The scene as OBJ + MTL with the terrain appended: an `o Workspace.Terrain` object with a
/// `usemtl terrain_<Material>` group per material (MTL `Kd` in sRGB, as the parts' are).
fn obj_with_terrain(
    dom: &WeakDom,
    roots: &[rbx_types::Ref],
    t: &SceneTerrain,
    path: &Path,
) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    use std::fmt::Write;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
    let opts = ExportOptions {
        mtl_name: format!("{stem}.mtl"),
        ..ExportOptions::default()
    };
    let e =
        procmodel_export::to_obj(dom, roots, &opts).with_context(output::cannot_export(path))?;
    output::print_warnings(&e.warnings, true);
    let (mut obj, mut mtl) = (e.output.obj, e.output.mtl);
    let textures: Vec<(PathBuf, Vec<u8>)> = e
        .output
        .textures
        .into_iter()
        .map(|(name, png)| (path.with_file_name(name), png))
        .collect();
    let mut next = 1 + obj.lines().filter(|l| l.starts_with("v ")).count();
    let num = |v: f32| v + 0.0;
    // Writing to a String cannot fail.
    let _ = writeln!(obj, "o Workspace.Terrain");
    for p in &t.mesh.parts {
        if p.indices.is_empty() {
            continue;
        }
        for v in &p.positions {
            let _ = writeln!(obj, "v {} {} {}", num(v[0]), num(v[1]), num(v[2]));
        }
        for n in &p.normals {
            let _ = writeln!(obj, "vn {} {} {}", num(n[0]), num(n[1]), num(n[2]));
        }
        let _ = writeln!(obj, "usemtl terrain_{}", p.material.name());
        for tri in p.indices.chunks(3) {
            let [a, b, c] = [0, 1, 2].map(|i| tri[i] as usize + next);
            let _ = writeln!(obj, "f {a}//{a} {b}//{b} {c}//{c}");
        }
        next += p.positions.len();
        let [r, g, b] = t.colors.get(p.material).map(|c| f32::from(c) / 255.0);
        let _ = writeln!(mtl);
        let _ = writeln!(mtl, "newmtl terrain_{}", p.material.name());
        let _ = writeln!(mtl, "Kd {} {} {}", num(r), num(g), num(b));
        let _ = writeln!(mtl, "Ks 0 0 0");
        let _ = writeln!(mtl, "Ns 0");
        let _ = writeln!(mtl, "d {}", num(t.opacity(p.material)));
        let _ = writeln!(mtl, "Pr 1");
        let _ = writeln!(mtl, "Pm 0");
        let _ = writeln!(mtl, "illum 1");
    }
    // The OBJ first: the caller reports it as what was written.
    let mut files = vec![
        (path.to_owned(), obj.into_bytes()),
        (path.with_file_name(&opts.mtl_name), mtl.into_bytes()),
    ];
    files.extend(textures);
    Ok(files)
}

/// A `.glb`'s JSON document and BIN chunk (empty when it has none).
fn split_glb(glb: &[u8]) -> Result<(Value, Vec<u8>)> {
    let u32_at = |at: usize| -> Result<usize> {
        let b = glb
            .get(at..at + 4)
            .ok_or_else(|| anyhow!("glb truncated at byte {at}"))?;
        Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
    };
    if glb.get(..4) != Some(b"glTF") {
        bail!("not a glb");
    }
    let json_len = u32_at(12)?;
    let json_end = 20 + json_len;
    let json = serde_json::from_slice(
        glb.get(20..json_end)
            .ok_or_else(|| anyhow!("glb JSON chunk truncated"))?,
    )?;
    let bin = if glb.len() > json_end {
        let n = u32_at(json_end)?;
        glb.get(json_end + 8..json_end + 8 + n)
            .ok_or_else(|| anyhow!("glb BIN chunk truncated"))?
            .to_vec()
    } else {
        Vec::new()
    };
    Ok((json, bin))
}

fn join_glb(doc: &Value, bin: &[u8]) -> Result<Vec<u8>> {
    let mut json = serde_json::to_vec(doc)?;
    while !json.len().is_multiple_of(4) {
        json.push(b' ');
    }
    let mut bin = bin.to_vec();
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let total = 12 + 8 + json.len() + if bin.is_empty() { 0 } else { 8 + bin.len() };
    let total = u32::try_from(total).map_err(|_| anyhow!("the glb exceeds 4 GiB"))?;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    if !bin.is_empty() {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
    }
    Ok(out)
}

fn array<'a>(doc: &'a mut Value, key: &str) -> &'a mut Vec<Value> {
    let obj = doc.as_object_mut().expect("a glTF document is an object");
    obj.entry(key)
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .expect("glTF top-level lists are arrays")
}

/// The node of the scene's `Workspace.Terrain` instance, if it is there without a mesh.
fn workspace_terrain_node(doc: &Value) -> Option<usize> {
    let nodes = doc.get("nodes")?.as_array()?;
    let scene = doc.get("scene").and_then(Value::as_u64).unwrap_or(0) as usize;
    let roots = doc.get("scenes")?.get(scene)?.get("nodes")?.as_array()?;
    let named = |i: &Value, name: &str| {
        let n = nodes.get(i.as_u64()? as usize)?;
        (n.get("name")?.as_str()? == name).then_some(i.as_u64()? as usize)
    };
    let ws = roots.iter().find_map(|r| named(r, "Workspace"))?;
    let children = nodes[ws].get("children")?.as_array()?;
    children
        .iter()
        .filter_map(|c| named(c, "Terrain"))
        .find(|&t| nodes[t].get("mesh").is_none())
}

/// Adds `by` to the index at `key` of `v`, if it has one (absent keys stay absent).
fn shift(v: &mut Value, key: &str, by: usize) {
    if let Some(x) = v.get_mut(key)
        && let Some(i) = x.as_u64()
    {
        *x = Value::from(i + by as u64);
    }
}

/// Appends document `add` (as `terrain_glb` writes it: one buffer, one node) to `doc`: its
/// data goes after `bin` in buffer 0 and every index is shifted past `doc`'s. Its mesh goes
/// on the scene's own `Workspace.Terrain` node when there is one (identity transform, no
/// mesh), else its nodes join `doc`'s default scene.
fn append_gltf(
    doc: &mut Value,
    bin: &mut Vec<u8>,
    mut add: Value,
    add_bin: &[u8],
    uri: Option<&str>,
) -> Result<()> {
    let count = |d: &mut Value, k: &str| array(d, k).len();
    let (views, accessors, materials, meshes, nodes) = (
        count(doc, "bufferViews"),
        count(doc, "accessors"),
        count(doc, "materials"),
        count(doc, "meshes"),
        count(doc, "nodes"),
    );
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let offset = bin.len();
    bin.extend_from_slice(add_bin);
    if !bin.is_empty() {
        let buffers = array(doc, "buffers");
        if buffers.is_empty() {
            let mut b = serde_json::json!({ "byteLength": 0 });
            if let Some(u) = uri {
                b["uri"] = Value::from(u);
            }
            buffers.push(b);
        }
        buffers[0]["byteLength"] = Value::from(bin.len());
    }
    for mut v in std::mem::take(array(&mut add, "bufferViews")) {
        v["buffer"] = Value::from(0);
        let at = v.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
        v["byteOffset"] = Value::from(at + offset);
        array(doc, "bufferViews").push(v);
    }
    for mut a in std::mem::take(array(&mut add, "accessors")) {
        shift(&mut a, "bufferView", views);
        array(doc, "accessors").push(a);
    }
    array(doc, "materials").append(array(&mut add, "materials"));
    let mut new_meshes = std::mem::take(array(&mut add, "meshes"));
    for m in &mut new_meshes {
        let prims = m.get_mut("primitives").and_then(Value::as_array_mut);
        for p in prims.into_iter().flatten() {
            let attrs = p.get_mut("attributes").and_then(Value::as_object_mut);
            for (_, a) in attrs.into_iter().flatten() {
                if let Some(i) = a.as_u64() {
                    *a = Value::from(i + accessors as u64);
                }
            }
            shift(p, "indices", accessors);
            shift(p, "material", materials);
        }
    }
    if new_meshes.is_empty() {
        return Ok(());
    }
    array(doc, "meshes").append(&mut new_meshes);
    if let Some(node) = workspace_terrain_node(doc) {
        doc["nodes"][node]["mesh"] = Value::from(meshes);
        return Ok(());
    }
    let add_scene = add.get("scene").and_then(Value::as_u64).unwrap_or(0) as usize;
    let roots: Vec<usize> = add
        .get("scenes")
        .and_then(|s| s.get(add_scene))
        .and_then(|s| s.get("nodes"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_u64)
        .map(|n| n as usize + nodes)
        .collect();
    for mut n in std::mem::take(array(&mut add, "nodes")) {
        shift(&mut n, "mesh", meshes);
        let children = n.get_mut("children").and_then(Value::as_array_mut);
        for c in children.into_iter().flatten() {
            if let Some(i) = c.as_u64() {
                *c = Value::from(i + nodes as u64);
            }
        }
        array(doc, "nodes").push(n);
    }
    if array(doc, "scenes").is_empty() {
        array(doc, "scenes").push(serde_json::json!({ "nodes": [] }));
        doc["scene"] = Value::from(0);
    }
    let scene = doc.get("scene").and_then(Value::as_u64).unwrap_or(0) as usize;
    let list = array(doc, "scenes")
        .get_mut(scene)
        .and_then(Value::as_object_mut)
        .ok_or_else(|| anyhow!("the glTF document has no scene {scene}"))?
        .entry("nodes")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| anyhow!("the glTF scene's nodes are not a list"))?;
    list.extend(roots.into_iter().map(Value::from));
    Ok(())
}
