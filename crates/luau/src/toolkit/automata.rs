//! `@procmodel/automata`: cellular-automata caves (fill, birth/survival steps, regions, MST
//! corridors, connectivity) over `procmodel-automata`. Masks are buffers of one byte per
//! cell, row-major (`index = y * width + x`, 0-based), 1 = wall, 0 = floor.

use mlua::{Buffer, Lua, Table, Value};
use procmodel_automata::{
    Automaton, Automaton3, CaveConfig, ConnectConfig, Corridor, EdgePolicy, Grid, Regions,
    Regions3, Rule,
};

use super::{Options, cells, dim, err, finite, integer, read_mask, seed};

/// Most automaton steps one call may run (each step visits every cell).
const MAX_ITERATIONS: i64 = 1000;
/// Most cell updates (cells × iterations) one call may do, so a call stays well under a
/// second (the VM's timeout cannot interrupt native code).
const MAX_WORK: usize = 1 << 28;
/// Widest corridor brush.
const MAX_CORRIDOR: i64 = 64;

pub(super) fn module(lua: &Lua) -> mlua::Result<Table> {
    let m = lua.create_table()?;
    m.raw_set("cave", lua.create_function(cave)?)?;
    m.raw_set("cave3", lua.create_function(cave3)?)?;
    m.raw_set("fill", lua.create_function(fill)?)?;
    m.raw_set("step", lua.create_function(step)?)?;
    m.raw_set("regions", lua.create_function(regions)?)?;
    m.raw_set("removeSmallRegions", lua.create_function(remove_small)?)?;
    m.raw_set("connect", lua.create_function(connect)?)?;
    m.raw_set("isConnected", lua.create_function(is_connected)?)?;
    m.raw_set("toAscii", lua.create_function(to_ascii)?)?;
    m.raw_set("WALL", 1)?;
    m.raw_set("FLOOR", 0)?;
    Ok(m)
}

fn rule(func: &str, v: &Value) -> mlua::Result<Rule> {
    match v {
        Value::Nil => Ok(Rule::CAVE),
        Value::String(s) => Rule::parse(&s.to_str()?).map_err(|e| err(func, format!("rule: {e}"))),
        other => Err(err(
            func,
            format!(
                "rule must be a string such as \"B5678/S45678\", got {}",
                super::show(other)
            ),
        )),
    }
}

fn edge(func: &str, v: &Value) -> mlua::Result<EdgePolicy> {
    match super::string(func, "edge", v)?.as_deref() {
        None | Some("wall") => Ok(EdgePolicy::Wall),
        Some("floor") => Ok(EdgePolicy::Floor),
        Some("wrap") => Ok(EdgePolicy::Wrap),
        Some(other) => Err(err(
            func,
            format!("edge must be \"wall\", \"floor\" or \"wrap\", got {other:?}"),
        )),
    }
}

fn work(func: &str, cells: usize, iterations: u32) -> mlua::Result<()> {
    if cells.saturating_mul(iterations as usize) > MAX_WORK {
        return Err(err(
            func,
            format!(
                "{cells} cells x {iterations} iterations is too much work (at most {MAX_WORK} cell updates per call)"
            ),
        ));
    }
    Ok(())
}

/// Reads `(mask, width, height)` arguments into a grid.
fn grid_args(func: &str, mask: &Value, w: &Value, h: &Value) -> mlua::Result<Grid> {
    let (w, h) = (dim(func, "width", w)?, dim(func, "height", h)?);
    let n = cells(func, &[w, h])?;
    let data = read_mask(func, "mask", mask, n)?;
    Grid::from_cells(w, h, data).ok_or_else(|| err(func, "mask size mismatch"))
}

fn mask_buffer(lua: &Lua, grid: &Grid) -> mlua::Result<Buffer> {
    lua.create_buffer(grid.cells())
}

/// One corridor as Luau sees it, 2D or 3D: `{ from, to, length, regions }` (regions 1-based).
fn corridor_entry(
    lua: &Lua,
    from: Value,
    to: Value,
    length: usize,
    regions: (u32, u32),
) -> mlua::Result<Table> {
    let e = lua.create_table()?;
    e.raw_set("from", from)?;
    e.raw_set("to", to)?;
    e.raw_set("length", length)?;
    e.raw_set(
        "regions",
        super::int_array(
            lua,
            [regions.0 as i64 + 1, regions.1 as i64 + 1].into_iter(),
        )?,
    )?;
    Ok(e)
}

fn corridors(lua: &Lua, list: &[Corridor]) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(list.len(), 0)?;
    for (i, c) in list.iter().enumerate() {
        let v2 = |(x, y): (usize, usize)| {
            lua.create_userdata(procmodel_luau_types::Vector2(glam::Vec2::new(
                x as f32, y as f32,
            )))
            .map(Value::UserData)
        };
        let e = corridor_entry(lua, v2(c.from)?, v2(c.to)?, c.length(), c.regions)?;
        t.raw_set(i + 1, e)?;
    }
    Ok(t)
}

/// `automata.cave(options) -> Cave`
fn cave(lua: &Lua, opts: Value) -> mlua::Result<Table> {
    const F: &str = "automata.cave";
    if opts.is_nil() {
        return Err(err(F, "expected an options table with width and height"));
    }
    let o = Options::new(
        F,
        "options",
        opts,
        &[
            "width",
            "height",
            "fill",
            "rule",
            "iterations",
            "seed",
            "minRegion",
            "connect",
            "corridorWidth",
            "edge",
        ],
    )?;
    let (width, height) = (o.dim("width")?, o.dim("height")?);
    cells(F, &[width, height])?;
    let fill = o.f64_or("fill", 0.45)?;
    if !(0.0..=1.0).contains(&fill) {
        return Err(err(F, format!("fill must be in [0, 1], got {fill}")));
    }
    let config = CaveConfig {
        width,
        height,
        fill_probability: fill,
        seed: o.seed("seed")?,
        rule: rule(F, &o.get("rule")?)?,
        iterations: o.int_or("iterations", 5, 0, MAX_ITERATIONS)? as u32,
        edge: edge(F, &o.get("edge")?)?,
        min_region_size: o.int_or("minRegion", 0, 0, super::MAX_CELLS as i64)? as usize,
        connect: o.bool_or("connect", true)?,
        corridor_width: o.int_or("corridorWidth", 1, 1, MAX_CORRIDOR)? as usize,
    };
    work(F, width * height, config.iterations)?;
    let c = procmodel_automata::run(&config).map_err(|e| err(F, e))?;
    let t = lua.create_table()?;
    t.raw_set("width", width)?;
    t.raw_set("height", height)?;
    t.raw_set("mask", mask_buffer(lua, &c.grid)?)?;
    t.raw_set("steps", c.steps)?;
    t.raw_set("regions", c.regions_before)?;
    t.raw_set("removedCells", c.removed_cells)?;
    t.raw_set("floorCount", c.grid.floor_count())?;
    t.raw_set("corridors", corridors(lua, &c.corridors)?)?;
    t.raw_set("connected", procmodel_automata::is_connected(&c.grid))?;
    Ok(t)
}

/// `automata.cave3(options) -> Cave3`: a 3D cave (26-neighbour rule, 6-connected regions).
fn cave3(lua: &Lua, opts: Value) -> mlua::Result<Table> {
    const F: &str = "automata.cave3";
    if opts.is_nil() {
        return Err(err(
            F,
            "expected an options table with width, height and depth",
        ));
    }
    let o = Options::new(
        F,
        "options",
        opts,
        &[
            "width",
            "height",
            "depth",
            "fill",
            "rule",
            "iterations",
            "seed",
            "connect",
            "corridorWidth",
            "edge",
        ],
    )?;
    let (w, h, d) = (o.dim("width")?, o.dim("height")?, o.dim("depth")?);
    let n = cells(F, &[w, h, d])?;
    let fill = o.f64_or("fill", 0.5)?;
    if !(0.0..=1.0).contains(&fill) {
        return Err(err(F, format!("fill must be in [0, 1], got {fill}")));
    }
    let rule = match o.get("rule")? {
        Value::Nil => Rule::parse_3d("B13-26/S14-26"),
        Value::String(s) => Rule::parse_3d(&s.to_str()?),
        other => {
            return Err(err(
                F,
                format!(
                    "rule must be a string such as \"B13-26/S14-26\", got {}",
                    super::show(&other)
                ),
            ));
        }
    }
    .map_err(|e| err(F, format!("rule: {e}")))?;
    let iterations = o.int_or("iterations", 5, 0, MAX_ITERATIONS)? as u32;
    // A 3D step reads 26 neighbours: count it as three 2D cell updates.
    work(F, n.saturating_mul(3), iterations)?;
    let edge = edge(F, &o.get("edge")?)?;
    let corridor_width = o.int_or("corridorWidth", 1, 1, MAX_CORRIDOR)? as usize;
    let grid =
        procmodel_automata::random_fill3(w, h, d, fill, o.seed("seed")?).map_err(|e| err(F, e))?;
    let mut a = Automaton3::new(grid, rule, edge);
    let mut steps = 0;
    for _ in 0..iterations {
        steps += 1;
        if a.step() == 0 {
            break;
        }
    }
    let mut grid = a.into_grid();
    let regions = Regions3::label(&grid).count();
    let list = if o.bool_or("connect", true)? {
        let list = procmodel_automata::connect3(&mut grid, &ConnectConfig { corridor_width })
            .map_err(|e| err(F, e))?;
        procmodel_automata::check_connected3(&grid).map_err(|e| err(F, e))?;
        list
    } else {
        Vec::new()
    };
    let t = lua.create_table()?;
    t.raw_set("width", w)?;
    t.raw_set("height", h)?;
    t.raw_set("depth", d)?;
    t.raw_set("mask", lua.create_buffer(grid.cells())?)?;
    t.raw_set("steps", steps)?;
    t.raw_set("regions", regions)?;
    t.raw_set("floorCount", grid.floor_count())?;
    t.raw_set(
        "connected",
        procmodel_automata::check_connected3(&grid).is_ok(),
    )?;
    let corridors = lua.create_table_with_capacity(list.len(), 0)?;
    for (i, c) in list.iter().enumerate() {
        let v3 = |(x, y, z): (usize, usize, usize)| {
            procmodel_luau_types::Vector3(glam::Vec3::new(x as f32, y as f32, z as f32)).value()
        };
        let e = corridor_entry(lua, v3(c.from), v3(c.to), c.length(), c.regions)?;
        corridors.raw_set(i + 1, e)?;
    }
    t.raw_set("corridors", corridors)?;
    Ok(t)
}

/// `automata.fill(width, height, fill, seed?) -> buffer`
fn fill(lua: &Lua, (w, h, p, s): (Value, Value, Value, Value)) -> mlua::Result<Buffer> {
    const F: &str = "automata.fill";
    let (w, h) = (dim(F, "width", &w)?, dim(F, "height", &h)?);
    cells(F, &[w, h])?;
    let p = finite(F, "fill", &p)?;
    let g =
        procmodel_automata::random_fill(w, h, p, seed(F, "seed", &s)?).map_err(|e| err(F, e))?;
    mask_buffer(lua, &g)
}

/// `automata.step(mask, width, height, rule?, edge?, iterations?) -> (buffer, changed)`
fn step(
    lua: &Lua,
    (mask, w, h, r, e, n): (Value, Value, Value, Value, Value, Value),
) -> mlua::Result<(Buffer, usize)> {
    const F: &str = "automata.step";
    let g = grid_args(F, &mask, &w, &h)?;
    let iterations = match n {
        Value::Nil => 1,
        v => integer(F, "iterations", &v, 0, MAX_ITERATIONS)? as u32,
    };
    work(F, g.cells().len(), iterations)?;
    let mut a = Automaton::new(g, rule(F, &r)?, edge(F, &e)?);
    let mut changed = 0;
    for _ in 0..iterations {
        changed = a.step();
    }
    Ok((mask_buffer(lua, a.grid())?, changed))
}

/// `automata.regions(mask, width, height) -> (labels: buffer, sizes: {number})`
fn regions(lua: &Lua, (mask, w, h): (Value, Value, Value)) -> mlua::Result<(Buffer, Table)> {
    const F: &str = "automata.regions";
    let g = grid_args(F, &mask, &w, &h)?;
    let r = Regions::label(&g);
    let mut bytes = Vec::with_capacity(r.labels().len() * 4);
    for &l in r.labels() {
        let v = if l == u32::MAX { 0 } else { l + 1 };
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    let sizes = super::int_array(lua, r.sizes().iter().map(|&s| s as i64))?;
    Ok((lua.create_buffer(bytes)?, sizes))
}

/// `automata.removeSmallRegions(mask, width, height, minSize) -> (buffer, removed)`
fn remove_small(
    lua: &Lua,
    (mask, w, h, min): (Value, Value, Value, Value),
) -> mlua::Result<(Buffer, usize)> {
    const F: &str = "automata.removeSmallRegions";
    let mut g = grid_args(F, &mask, &w, &h)?;
    let min = integer(F, "minSize", &min, 0, super::MAX_CELLS as i64)? as usize;
    let removed = procmodel_automata::remove_small_regions(&mut g, min);
    Ok((mask_buffer(lua, &g)?, removed))
}

/// `automata.connect(mask, width, height, corridorWidth?) -> (buffer, corridors)`
fn connect(
    lua: &Lua,
    (mask, w, h, cw): (Value, Value, Value, Value),
) -> mlua::Result<(Buffer, Table)> {
    const F: &str = "automata.connect";
    let mut g = grid_args(F, &mask, &w, &h)?;
    let corridor_width = match cw {
        Value::Nil => 1,
        v => integer(F, "corridorWidth", &v, 1, MAX_CORRIDOR)? as usize,
    };
    let list = procmodel_automata::connect(&mut g, &ConnectConfig { corridor_width })
        .map_err(|e| err(F, e))?;
    Ok((mask_buffer(lua, &g)?, corridors(lua, &list)?))
}

/// `automata.isConnected(mask, width, height) -> (boolean, string?)`
fn is_connected(
    _: &Lua,
    (mask, w, h): (Value, Value, Value),
) -> mlua::Result<(bool, Option<String>)> {
    const F: &str = "automata.isConnected";
    let g = grid_args(F, &mask, &w, &h)?;
    Ok(match procmodel_automata::check_connected(&g) {
        Ok(()) => (true, None),
        Err(e) => (false, Some(e.to_string())),
    })
}

/// `automata.toAscii(mask, width, height) -> string` (`#` wall, `.` floor, one line per row)
fn to_ascii(_: &Lua, (mask, w, h): (Value, Value, Value)) -> mlua::Result<String> {
    const F: &str = "automata.toAscii";
    Ok(grid_args(F, &mask, &w, &h)?.to_ascii())
}
