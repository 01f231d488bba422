//! Sharded bakes of a heightmap world (a `.toml`/`.json` world file): the units are the
//! world's tiles (`tile_<x>_<z>`, as `procmodel terrain --tiles` cuts them), a shard bakes the
//! tiles whose key hashes into it and stores every file content-addressed, with one record per
//! tile (its files and their hashes) and the shard manifest last; the merge verifies every
//! file against its name and record and writes the tiles and `index.json` — the bytes
//! `procmodel terrain --tiles` writes in one process.
//!
//! Store layout (beside scene bakes'): `input/<blake3>.json` (the world file's text and the
//! tile settings: every shard and the merge agree on them through the fingerprint),
//! `files/<blake3>` (tile files), `tiles/<blake3>.json` (tile records),
//! `manifests/…`, `timings/…`.

use crate::terrain::{Plan, parse_world_text, tile_cells};
use crate::world_bake::{Bake, TileKind, TileRecord, tile_key, tiles_of};
use anyhow::{Context, Result, anyhow, bail};
use procmodel_bake::manifest::{FORMAT, InputRef};
use procmodel_bake::{
    Assignment, Manifest, Shard, Store, Timings, Unit, UnitRecord, UnitStatus, digest_hex,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

/// The input a world bake stores: the world file and the tile settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct WorldInput {
    format: String,
    /// The world file's name (its extension says how to read `text`).
    file: String,
    text: String,
    tile_studs: u32,
    outputs: Vec<String>,
}

const INPUT_FORMAT: &str = "procmodel-world-bake/1";

/// Whether `path` is a world description (by extension; a Rojo `*.project.json` is a scene).
pub fn is_world(path: &Path) -> bool {
    !crate::project::is_project(path)
        && matches!(
            path.extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase)
                .as_deref(),
            Some("toml" | "json")
        )
}

/// Tile settings from the command line (defaults as `procmodel terrain --tiles`).
pub struct TileArgs<'a> {
    pub size: Option<u32>,
    pub output: Option<&'a str>,
}

impl WorldInput {
    fn read(path: &Path, tiles: &TileArgs<'_>) -> Result<WorldInput> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let kinds = TileKind::parse(tiles.output.unwrap_or("glb,png"))?;
        Ok(WorldInput {
            format: INPUT_FORMAT.into(),
            file: path
                .file_name()
                .and_then(|f| f.to_str())
                .unwrap_or("world.toml")
                .to_owned(),
            text,
            tile_studs: tiles.size.unwrap_or(1024),
            outputs: kinds.iter().map(|k| k.extension().to_owned()).collect(),
        })
    }

    fn bytes(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).expect("a world input always serialises");
        v.push(b'\n');
        v
    }

    fn parse(bytes: &[u8], what: &str) -> Result<WorldInput> {
        let w: WorldInput = serde_json::from_slice(bytes)
            .map_err(|e| anyhow!("{what}: not a world bake input: {e}"))?;
        if w.format != INPUT_FORMAT {
            bail!(
                "{what}: world bake input format '{}' is not '{INPUT_FORMAT}'",
                w.format
            );
        }
        Ok(w)
    }

    /// The checked world, its tile side in cells and what each tile holds.
    fn plan(&self) -> Result<(Plan, i32, Vec<TileKind>)> {
        let ext = self
            .file
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        let plan = parse_world_text(&self.text, &ext, &self.file)?;
        let tile = tile_cells(self.tile_studs, plan.world.config().grid)?;
        let kinds = TileKind::parse(&self.outputs.join(","))?;
        Ok((plan, tile, kinds))
    }
}

/// The world's tiles as units, in key order, with their voxel columns as the size.
fn units(plan: &Plan, tile: i32) -> Vec<([i32; 2], Unit)> {
    let cells = plan.spec.cells().expect("a planned world has columns");
    tiles_of(cells, tile)
        .into_iter()
        .map(|t| {
            let clip = |a: usize| {
                let lo = (t[a] * tile).max(cells.min[a]);
                let hi = ((t[a] + 1) * tile).min(cells.max[a]);
                (hi - lo).max(0) as u64
            };
            let unit = Unit {
                key: tile_key(t),
                size: clip(0) * clip(1),
            };
            (t, unit)
        })
        .collect()
}

/// `procmodel plan world.toml`: the tiles, their keys, sizes and shards.
pub fn plan(input: &Path, shards: Option<u32>, json: bool, tiles: &TileArgs<'_>) -> Result<()> {
    let w = WorldInput::read(input, tiles)?;
    let (plan, tile, _) = w.plan()?;
    let units = units(&plan, tile);
    let count = shards.unwrap_or(1);
    let deal = Assignment::new(units.iter().map(|(_, u)| u), count);
    let per_shard = deal.per_shard();
    let shard_of = |key: &str| deal.shard(key).unwrap_or(0);
    if json {
        let rows: Vec<_> = units
            .iter()
            .map(|(t, Unit { key, size })| {
                let mut row = serde_json::json!({ "key": key, "tile": t, "size": size });
                if shards.is_some() {
                    row["shard"] = shard_of(key).into();
                }
                row
            })
            .collect();
        let mut out = serde_json::json!({
            "input": input.display().to_string(),
            "kind": "world",
            "tile_studs": w.tile_studs,
            "count": units.len(),
            "units": rows,
        });
        if shards.is_some() {
            out["shards"] = count.into();
            out["per_shard"] = per_shard.clone().into();
        }
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print_plan(
            units.iter().map(|(_, u)| u),
            &deal,
            shards,
            &format!("{} tiles of {} studs", units.len(), w.tile_studs),
            "voxel columns",
        );
    }
    Ok(())
}

/// A plan as text: a line per unit on stdout (its shard when `shards` is given, its size,
/// its key), then on stderr what was planned (`planned`), what the columns hold (a size
/// counts `size_unit`) and, with shards, the units each shard gets.
pub(crate) fn print_plan<'a>(
    units: impl IntoIterator<Item = &'a Unit>,
    deal: &Assignment,
    shards: Option<u32>,
    planned: &str,
    size_unit: &str,
) {
    for Unit { key, size } in units {
        match shards {
            Some(_) => println!("{:>5}  {size:>9}  {key}", deal.shard(key).unwrap_or(0)),
            None => println!("{size:>9}  {key}"),
        }
    }
    match shards {
        Some(count) => {
            let per = deal.per_shard();
            // A list per shard reads well for a cluster's worth; beyond, its spread says more.
            let spread = if per.len() <= 64 {
                format!("{per:?} per shard")
            } else {
                let idle = per.iter().filter(|&&n| n == 0).count();
                format!(
                    "{} to {} per shard, {idle} with none",
                    per.iter().min().unwrap_or(&0),
                    per.iter().max().unwrap_or(&0)
                )
            };
            eprintln!(
                "{planned} (columns: shard, size in {size_unit}, then key) over {count} shards: {spread}"
            )
        }
        None => eprintln!("{planned} (columns: size in {size_unit}, then key)"),
    }
}

fn progress(v: serde_json::Value) {
    println!("{v}");
}

/// Bakes this shard's tiles into `store`; the manifest goes last.
pub fn bake_shard(
    input: &Path,
    shard: Shard,
    store: Arc<dyn Store>,
    tiles: &TileArgs<'_>,
) -> Result<ExitCode> {
    use rayon::prelude::*;
    let started = std::time::Instant::now();
    let w = WorldInput::read(input, tiles)?;
    let (plan, tile, kinds) = w.plan()?;
    let bytes = w.bytes();
    let fingerprint = digest_hex(&bytes);
    let input_file = format!("input/{fingerprint}.json");
    let all = units(&plan, tile);
    let deal = Assignment::new(all.iter().map(|(_, u)| u), shard.count);
    let mine: Vec<&([i32; 2], Unit)> = all
        .iter()
        .filter(|(_, u)| deal.shard(&u.key) == Some(shard.index))
        .collect();
    progress(serde_json::json!({
        "event": "start", "shard": shard.to_string(), "input": input.display().to_string(),
        "units": mine.len(), "of": all.len(), "out": store.describe(),
    }));
    let bake = Bake::new(&plan.spec).map_err(|e| anyhow!("{}: {e}", input.display()))?;
    let mut records = BTreeMap::new();
    let mut entries = BTreeMap::new();
    let mut timings = Timings {
        shard: Some(shard),
        ..Timings::default()
    };
    let batch = 2 * rayon::current_num_threads().max(1);
    for group in mine.chunks(batch) {
        let done: Vec<(Result<_>, f64)> = group
            .par_iter()
            .map(|(t, _)| {
                let s = std::time::Instant::now();
                let r = bake.tile(*t, tile, &kinds);
                (r, s.elapsed().as_secs_f64() * 1000.0)
            })
            .collect();
        for (r, ms) in done {
            let t = r.map_err(|e| anyhow!("{}: {e}", input.display()))?;
            for (_, b) in &t.files {
                store.put(&format!("files/{}", digest_hex(b)), b)?;
            }
            let record = t.record();
            let mut rb = serde_json::to_vec_pretty(&record)?;
            rb.push(b'\n');
            let digest = digest_hex(&rb);
            let record_file = format!("tiles/{digest}.json");
            store.put(&record_file, &rb)?;
            entries.insert(digest.clone(), record_file);
            progress(serde_json::json!({
                "event": "unit", "tile": t.key, "ok": true, "ms": ms,
                "files": t.files.len(), "bytes": t.files.iter().map(|(_, b)| b.len()).sum::<usize>(),
            }));
            timings.units.insert(t.key.clone(), ms);
            records.insert(
                t.key.clone(),
                UnitRecord {
                    status: UnitStatus::Ok,
                    cache_key: digest.clone(),
                    content_hash: Some(digest),
                    instances: t.files.len() as u64,
                    error: None,
                },
            );
        }
    }
    store.put(&input_file, &bytes)?;
    let manifest = Manifest {
        format: FORMAT.into(),
        engine: env!("CARGO_PKG_VERSION").into(),
        input: InputRef {
            kind: "world".into(),
            file: input_file,
            fingerprint,
        },
        shard,
        units: records,
        entries,
    };
    timings.total_ms = started.elapsed().as_secs_f64() * 1000.0;
    procmodel_bake::manifest::finish_shard(store.as_ref(), &manifest, &timings)?;
    progress(serde_json::json!({
        "event": "done", "shard": shard.to_string(), "units": mine.len(), "failed": 0,
        "manifest": shard.manifest_path(), "ms": timings.total_ms,
    }));
    Ok(ExitCode::SUCCESS)
}

/// Merges a world bake into the folder `out`: checks coverage, verifies every record and file
/// against its name, writes the tiles and `index.json` (index last).
pub fn merge(
    url: &str,
    store: &Arc<dyn Store>,
    manifests: &[(String, Manifest)],
    out: &Path,
) -> Result<ExitCode> {
    let started = std::time::Instant::now();
    let first = &manifests[0].1;
    let bytes = store.get(&first.input.file)?.ok_or_else(|| {
        anyhow!(
            "{url}: the input {} named by the manifests is missing",
            first.input.file
        )
    })?;
    if digest_hex(&bytes) != first.input.fingerprint {
        bail!(
            "{url}/{}: the input's bytes do not match its fingerprint",
            first.input.file
        );
    }
    let w = WorldInput::parse(&bytes, &format!("{url}/{}", first.input.file))?;
    let (plan, tile, kinds) = w.plan()?;
    let expected: Vec<Unit> = units(&plan, tile).into_iter().map(|(_, u)| u).collect();
    let cov = procmodel_bake::manifest::coverage(&expected, manifests);
    if let Some(msg) = cov.incomplete(url, expected.len()) {
        bail!("{msg}");
    }
    // One record per unit (duplicates hold the same digest: coverage checked it).
    let mut by_key: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
    for (name, m) in manifests {
        for (k, u) in &m.units {
            let file = m.entries.get(&u.cache_key).ok_or_else(|| {
                anyhow!(
                    "{url}/{name}: unit {k}: its record {} is not listed",
                    u.cache_key
                )
            })?;
            by_key.entry(k).or_insert((file, name));
        }
    }
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut records = Vec::new();
    let mut verified = 0u64;
    for key in expected.iter().map(|u| &u.key) {
        let (file, manifest) = by_key[key.as_str()];
        let rb = store.get(file)?.ok_or_else(|| {
            anyhow!("{url}/{file}: tile record missing (unit {key}); rerun the shard of {manifest}")
        })?;
        if !file.contains(&digest_hex(&rb)) {
            bail!(
                "{url}/{file}: corrupt (its blake3 is not its name); rerun the shard of {manifest}"
            );
        }
        let record: TileRecord = serde_json::from_slice(&rb)
            .map_err(|e| anyhow!("{url}/{file}: not a tile record: {e}"))?;
        if &record.key != key {
            bail!(
                "{url}/{file}: the record is for {} but {manifest} lists it for {key}",
                record.key
            );
        }
        for f in &record.files {
            let path = format!("files/{}", f.blake3);
            let b = store.get(&path)?.ok_or_else(|| {
                anyhow!(
                    "{url}/{path}: file {} of {key} missing; rerun the shard of {manifest}",
                    f.name
                )
            })?;
            if digest_hex(&b) != f.blake3 || b.len() as u64 != f.bytes {
                bail!(
                    "{url}/{path}: corrupt (file {} of {key}); rerun the shard of {manifest}",
                    f.name
                );
            }
            if f.name.contains(['/', '\\']) || f.name.starts_with('.') {
                bail!(
                    "{url}/{file}: file name '{}' is not a plain file name",
                    f.name
                );
            }
            crate::output::write_atomic(&out.join(&f.name), &b)?;
            verified += b.len() as u64;
        }
        records.push(record);
    }
    let bake = Bake::new(&plan.spec)?;
    let index = bake.index(tile, &kinds, &records, w.text.as_bytes())?;
    crate::output::write_atomic(&out.join("index.json"), &index)?;
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "merged": out.display().to_string(),
            "kind": "world",
            "units": expected.len(),
            "manifests": manifests.len(),
            "shards": first.shard.count,
            "missing_shards": cov.missing_shards.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            "duplicates": cov.duplicates.iter().map(|(k, m)| serde_json::json!({"unit": k, "manifests": m})).collect::<Vec<_>>(),
            "verified_bytes": verified,
            "index": out.join("index.json").display().to_string(),
            "index_blake3": digest_hex(&index),
            "seconds": secs,
            "mb_per_s": verified as f64 / 1e6 / secs.max(1e-9),
        }))?
    );
    Ok(ExitCode::SUCCESS)
}
