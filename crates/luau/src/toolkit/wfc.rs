//! `@procmodel/wfc`: Wave Function Collapse over `procmodel-wfc` — the overlapping model from
//! an array of integer colours, the simple tiled model from a Luau table (mxgmn-style tiles
//! with symmetry and `neighbors`, or explicit `adjacency` in 2D and 3D), one-call solves and
//! step-by-step solver objects for animation. Contradictions become Luau errors naming the
//! cell and the tile.

use std::rc::Rc;

use mlua::{Lua, MultiValue, Table, UserData, UserDataMethods, Value};
use procmodel_wfc::{
    Contradiction, Direction, GridShape, NeighborRule, OverlappingConfig, OverlappingModel, Rules,
    Sample, Solution, Solver, SolverConfig, Step, TileDesc, TileSet, TileSymmetry, TiledModel,
    WfcError,
};

use super::{Options, cells, err, integer, show};

/// Largest `cells × patterns × directions` a solve may allocate support counters for
/// (2 bytes each: 64 MiB).
const MAX_STATE: usize = 1 << 25;
/// Largest sample image.
const MAX_SAMPLE: usize = 1 << 20;

pub(super) fn module(lua: &Lua) -> mlua::Result<Table> {
    let m = lua.create_table()?;
    m.raw_set(
        "overlapping",
        lua.create_function(|lua, o: Value| {
            let mut s = Problem::overlapping("wfc.overlapping", o)?.solver()?;
            let sol = s.solver.run().map_err(|e| s.problem.error(&e))?;
            s.problem.result(lua, &sol)
        })?,
    )?;
    m.raw_set(
        "tiled",
        lua.create_function(|lua, o: Value| {
            let mut s = Problem::tiled("wfc.tiled", o)?.solver()?;
            let sol = s.solver.run().map_err(|e| s.problem.error(&e))?;
            s.problem.result(lua, &sol)
        })?,
    )?;
    m.raw_set(
        "overlappingSolver",
        lua.create_function(|_, o: Value| {
            Problem::overlapping("wfc.overlappingSolver", o)?.solver()
        })?,
    )?;
    m.raw_set(
        "tiledSolver",
        lua.create_function(|_, o: Value| Problem::tiled("wfc.tiledSolver", o)?.solver())?,
    )?;
    Ok(m)
}

/// The compiled rules a solver borrows.
enum Model {
    Overlapping(OverlappingModel),
    Tiled(Rules),
}

/// A parsed problem: the model, the output grid and how to name things.
struct Problem {
    func: &'static str,
    model: Rc<Model>,
    shape: GridShape,
    /// Output image size (overlapping) or grid size (tiled).
    out: [usize; 3],
    three_d: bool,
    config: SolverConfig,
    /// Tiled: `(name, tile index in the input, orientation)` per variant.
    variants: Vec<(String, usize, usize)>,
}

/// A solver object (`wfc.tiledSolver`, `wfc.overlappingSolver`).
pub(crate) struct SolverObject {
    // Drop order matters: `solver` borrows the model inside `problem.model` and is declared
    // first, so it is dropped before that `Rc` is released.
    solver: Solver<'static>,
    problem: Problem,
    /// Whether `step` or `run` was called (before that the solver's wave is not built yet,
    /// so every cell reports all options).
    started: bool,
}

fn direction(func: &str, s: &str) -> mlua::Result<Direction> {
    Ok(match s {
        "+X" | "+x" => Direction::Right,
        "-X" | "-x" => Direction::Left,
        "+Y" | "+y" => Direction::Down,
        "-Y" | "-y" => Direction::Up,
        "+Z" | "+z" => Direction::Front,
        "-Z" | "-z" => Direction::Back,
        other => {
            return Err(err(
                func,
                format!("direction must be one of +X, -X, +Y, -Y, +Z, -Z, got {other:?}"),
            ));
        }
    })
}

fn direction_name(d: Direction) -> &'static str {
    match d {
        Direction::Right => "+X",
        Direction::Left => "-X",
        Direction::Down => "+Y",
        Direction::Up => "-Y",
        Direction::Front => "+Z",
        Direction::Back => "-Z",
    }
}

fn solver_config(o: &Options) -> mlua::Result<SolverConfig> {
    let d = SolverConfig::default();
    Ok(SolverConfig {
        seed: o.seed("seed")?,
        max_backtracks: o.int_or("maxBacktracks", i64::from(d.max_backtracks), 0, 1_000_000)?
            as u32,
        max_attempts: o.int_or("maxAttempts", i64::from(d.max_attempts), 1, 1000)? as u32,
    })
}

fn colour(func: &str, name: &str, v: &Value) -> mlua::Result<u32> {
    Ok(integer(func, name, v, 0, i64::from(u32::MAX))? as u32)
}

impl Problem {
    fn overlapping(func: &'static str, v: Value) -> mlua::Result<Problem> {
        if v.is_nil() {
            return Err(err(func, "expected an options table"));
        }
        let o = Options::new(
            func,
            "options",
            v,
            &[
                "sample",
                "width",
                "height",
                "N",
                "symmetry",
                "periodicInput",
                "periodic",
                "ground",
                "outputWidth",
                "outputHeight",
                "seed",
                "maxBacktracks",
                "maxAttempts",
            ],
        )?;
        let (sw, sh) = (o.dim("width")?, o.dim("height")?);
        let count = cells(func, &[sw, sh])?;
        if count > MAX_SAMPLE {
            return Err(err(
                func,
                format!("sample of {count} pixels is larger than {MAX_SAMPLE}"),
            ));
        }
        let pixels: Vec<u32> = match o.get("sample")? {
            Value::Table(t) => {
                if t.raw_len() != count {
                    return Err(err(
                        func,
                        format!(
                            "sample has {} colours, expected width*height = {count}",
                            t.raw_len()
                        ),
                    ));
                }
                (1..=count)
                    .map(|i| colour(func, &format!("sample[{i}]"), &t.raw_get::<Value>(i)?))
                    .collect::<mlua::Result<_>>()?
            }
            Value::Buffer(b) => {
                if b.len() != count * 4 {
                    return Err(err(
                        func,
                        format!(
                            "sample buffer has {} bytes, expected 4*width*height = {}",
                            b.len(),
                            count * 4
                        ),
                    ));
                }
                b.to_vec()
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect()
            }
            other => {
                return Err(err(
                    func,
                    format!(
                        "sample must be an array of integer colours or a buffer of u32, got {}",
                        show(&other)
                    ),
                ));
            }
        };
        let config = OverlappingConfig {
            n: o.int_or("N", 3, 1, 8)? as usize,
            symmetry: o.int_or("symmetry", 8, 1, 8)? as usize,
            periodic_input: o.bool_or("periodicInput", true)?,
            periodic_output: o.bool_or("periodic", false)?,
            ground: o.bool_or("ground", false)?,
        };
        let (ow, oh) = (o.dim("outputWidth")?, o.dim("outputHeight")?);
        cells(func, &[ow, oh])?;
        let solver_config = solver_config(&o)?;
        let model = OverlappingModel::new(
            Sample {
                pixels: &pixels,
                width: sw,
                height: sh,
            },
            config,
        )
        .map_err(|e| err(func, e))?;
        let shape = model.wave_shape(ow, oh).map_err(|e| err(func, e))?;
        check_state(func, shape.len(), model.pattern_count(), 4)?;
        Ok(Problem {
            func,
            model: Rc::new(Model::Overlapping(model)),
            shape,
            out: [ow, oh, 1],
            three_d: false,
            config: solver_config,
            variants: Vec::new(),
        })
    }

    fn tiled(func: &'static str, v: Value) -> mlua::Result<Problem> {
        if v.is_nil() {
            return Err(err(func, "expected an options table"));
        }
        let o = Options::new(
            func,
            "options",
            v,
            &[
                "tiles",
                "neighbors",
                "adjacency",
                "subsets",
                "subset",
                "width",
                "height",
                "depth",
                "periodic",
                "seed",
                "maxBacktracks",
                "maxAttempts",
            ],
        )?;
        let (w, h) = (o.dim("width")?, o.dim("height")?);
        let depth = match o.get("depth")? {
            Value::Nil => None,
            d => Some(super::dim(func, "depth", &d)?),
        };
        let n = cells(func, &[w, h, depth.unwrap_or(1)])?;
        let periodic = o.bool_or("periodic", false)?;
        let config = solver_config(&o)?;
        let Value::Table(tiles_t) = o.get("tiles")? else {
            return Err(err(
                func,
                "tiles must be an array of { name, symmetry?, weight? }",
            ));
        };
        let mut tiles = Vec::new();
        for i in 1..=tiles_t.raw_len() {
            let to = Options::new(
                func,
                &format!("tiles[{i}]"),
                tiles_t.raw_get(i)?,
                &["name", "symmetry", "weight"],
            )?;
            let name = to
                .str("name")?
                .ok_or_else(|| err(func, format!("tiles[{i}].name is required")))?;
            // Adjacency rules name tiles: a second tile of a name would be unreachable (and
            // the rules' failure a puzzling contradiction).
            if let Some(j) = tiles.iter().position(|t: &TileDesc| t.name == name) {
                return Err(err(
                    func,
                    format!(
                        "tiles[{i}].name {name:?} is tiles[{}]'s too: tile names must be unique",
                        j + 1
                    ),
                ));
            }
            let symmetry = match to.str("symmetry")? {
                None => TileSymmetry::X,
                Some(s) => {
                    let mut chars = s.chars();
                    match (chars.next().and_then(TileSymmetry::from_char), chars.next()) {
                        (Some(sym), None) => sym,
                        _ => {
                            return Err(err(
                                func,
                                format!(
                                    "tiles[{i}].symmetry must be one of X, L, T, I, \\, F, got {s:?}"
                                ),
                            ));
                        }
                    }
                }
            };
            let weight = to.f64_or("weight", 1.0)?;
            if weight <= 0.0 {
                return Err(err(
                    func,
                    format!("tiles[{i}].weight must be positive, got {weight}"),
                ));
            }
            tiles.push(TileDesc {
                name,
                symmetry,
                weight,
            });
        }
        if tiles.is_empty() {
            return Err(err(func, "tiles must not be empty"));
        }
        let (neighbors, adjacency) = (o.get("neighbors")?, o.get("adjacency")?);
        let (model, variants, three_d) = match (neighbors, adjacency) {
            (Value::Table(nt), Value::Nil) => {
                if depth.is_some() {
                    return Err(err(func, "3D tile sets take adjacency, not neighbors"));
                }
                let mut set = TileSet {
                    tiles: tiles.clone(),
                    ..TileSet::default()
                };
                for i in 1..=nt.raw_len() {
                    let no = Options::new(
                        func,
                        &format!("neighbors[{i}]"),
                        nt.raw_get(i)?,
                        &["left", "right"],
                    )?;
                    let (Some(l), Some(r)) = (no.str("left")?, no.str("right")?) else {
                        return Err(err(func, format!("neighbors[{i}] needs left and right")));
                    };
                    set.neighbors.push(
                        NeighborRule::parse(&l, &r)
                            .map_err(|e| err(func, format!("neighbors[{i}]: {e}")))?,
                    );
                }
                if let Value::Table(st) = o.get("subsets")? {
                    let mut names = Vec::new();
                    for pair in st.pairs::<String, Vec<String>>() {
                        names.push(pair.map_err(|e| err(func, format!("subsets: {e}")))?);
                    }
                    names.sort();
                    set.subsets = names;
                }
                let subset = o.str("subset")?;
                let m = TiledModel::new(&set, subset.as_deref()).map_err(|e| err(func, e))?;
                let variants = (0..m.rules().len())
                    .map(|k| {
                        let (t, r) = m.orientation(k);
                        (m.name(k).to_owned(), t, r)
                    })
                    .collect();
                (m.rules().clone(), variants, false)
            }
            (Value::Nil, Value::Table(at)) => {
                let dirs = if depth.is_some() { 6 } else { 4 };
                let index = |name: &str| tiles.iter().position(|t| t.name == name);
                let mut pairs = Vec::new();
                for i in 1..=at.raw_len() {
                    let entry: Table = at.raw_get::<Value>(i).and_then(|v| match v {
                        Value::Table(t) => Ok(t),
                        other => Err(err(
                            func,
                            format!(
                                "adjacency[{i}] must be {{ a, direction, b }}, got {}",
                                show(&other)
                            ),
                        )),
                    })?;
                    let field = |k: usize| -> mlua::Result<String> {
                        match entry.raw_get::<Value>(k)? {
                            Value::String(v) => Ok(v.to_str()?.to_owned()),
                            other => Err(err(
                                func,
                                format!(
                                    "adjacency[{i}][{k}] must be a string, got {}",
                                    show(&other)
                                ),
                            )),
                        }
                    };
                    let (a, d, b) = (field(1)?, field(2)?, field(3)?);
                    let dir = direction(func, &d)?;
                    if dirs == 4 && dir.index() >= 4 {
                        return Err(err(
                            func,
                            format!("adjacency[{i}]: direction {d} needs a 3D grid (give depth)"),
                        ));
                    }
                    let find = |n: &str| {
                        index(n)
                            .ok_or_else(|| err(func, format!("adjacency[{i}]: unknown tile {n:?}")))
                    };
                    pairs.push((find(&a)?, dir, find(&b)?));
                }
                let weights = tiles.iter().map(|t| t.weight).collect();
                let rules =
                    Rules::from_adjacency(weights, dirs, &pairs).map_err(|e| err(func, e))?;
                let variants = tiles
                    .iter()
                    .enumerate()
                    .map(|(k, t)| (t.name.clone(), k, 0))
                    .collect();
                (rules, variants, depth.is_some())
            }
            (Value::Nil, Value::Nil) => {
                return Err(err(
                    func,
                    "give neighbors (2D, mxgmn style) or adjacency (2D or 3D)",
                ));
            }
            _ => return Err(err(func, "give either neighbors or adjacency, not both")),
        };
        let shape = match depth {
            Some(d) => GridShape::new_3d(w, h, d, periodic),
            None => GridShape::new_2d(w, h, periodic),
        };
        check_state(func, n, model.len(), model.directions())?;
        Ok(Problem {
            func,
            model: Rc::new(Model::Tiled(model)),
            shape,
            out: [w, h, depth.unwrap_or(1)],
            three_d,
            config,
            variants,
        })
    }

    fn solver(self) -> mlua::Result<SolverObject> {
        // SAFETY: the reference points into the `Rc` allocation kept alive by
        // `SolverObject::problem.model` for as long as the solver exists (the solver field is
        // dropped first), and the model is never mutated or handed out mutably.
        let model: &'static Model = unsafe { &*Rc::as_ptr(&self.model) };
        let solver = match model {
            Model::Overlapping(m) => m.solver(self.out[0], self.out[1], self.config),
            Model::Tiled(rules) => Solver::new(rules, self.shape, self.config),
        }
        .map_err(|e| err(self.func, e))?;
        Ok(SolverObject {
            solver,
            problem: self,
            started: false,
        })
    }

    fn pattern_name(&self, k: usize) -> String {
        match self.variants.get(k) {
            Some((name, _, _)) => format!("tile {name:?}"),
            None => format!("pattern {}", k + 1),
        }
    }

    fn cell(&self, c: [usize; 3]) -> String {
        if self.three_d {
            format!("({}, {}, {})", c[0], c[1], c[2])
        } else {
            format!("({}, {})", c[0], c[1])
        }
    }

    fn contradiction(&self, c: &Contradiction) -> String {
        let mut s = format!(
            "cell {} has no option left: {} ",
            self.cell(c.cell),
            self.pattern_name(c.pattern)
        );
        match c.neighbour {
            Some((d, n)) => s.push_str(&format!(
                "lost its last support from the neighbour at {} ({})",
                self.cell(n),
                direction_name(d)
            )),
            None => s.push_str("was removed by a constraint"),
        }
        s
    }

    fn error(&self, e: &WfcError) -> mlua::Error {
        match e {
            WfcError::Unsatisfiable(c) => {
                err(self.func, format!("no solution: {}", self.contradiction(c)))
            }
            WfcError::GaveUp { attempts, last } => err(
                self.func,
                format!(
                    "gave up after {attempts} attempts (raise maxBacktracks/maxAttempts or relax the rules); last contradiction: {}",
                    self.contradiction(last)
                ),
            ),
            other => err(self.func, other),
        }
    }

    fn result(&self, lua: &Lua, sol: &Solution) -> mlua::Result<Table> {
        let t = lua.create_table()?;
        t.raw_set("width", self.out[0])?;
        t.raw_set("height", self.out[1])?;
        t.raw_set("depth", self.out[2])?;
        t.raw_set("attempts", sol.attempts)?;
        t.raw_set("backtracks", sol.backtracks)?;
        match &*self.model {
            Model::Overlapping(m) => {
                let colours = m.colourise(sol);
                t.raw_set(
                    "colors",
                    super::int_array(lua, colours.iter().map(|&c| i64::from(c)))?,
                )?;
                t.raw_set("patterns", m.pattern_count())?;
            }
            Model::Tiled(_) => {
                t.raw_set(
                    "cells",
                    super::int_array(lua, sol.patterns.iter().map(|&p| i64::from(p) + 1))?,
                )?;
                let vs = lua.create_table_with_capacity(self.variants.len(), 0)?;
                for (k, (name, tile, orientation)) in self.variants.iter().enumerate() {
                    let v = lua.create_table_with_capacity(0, 3)?;
                    let base = name.split(' ').next().unwrap_or(name);
                    v.raw_set("name", base)?;
                    v.raw_set("tile", tile + 1)?;
                    v.raw_set("orientation", *orientation)?;
                    vs.raw_set(k + 1, v)?;
                }
                t.raw_set("variants", vs)?;
            }
        }
        Ok(t)
    }

    /// The flat wave index of `(x, y, z?)` arguments (0-based), with bounds checks.
    fn index(&self, func: &str, a: &[Value]) -> mlua::Result<usize> {
        let at = |i: usize| a.get(i).cloned().unwrap_or(Value::Nil);
        let s = self.shape;
        let x = integer(func, "x", &at(0), 0, s.width as i64 - 1)? as usize;
        let y = integer(func, "y", &at(1), 0, s.height as i64 - 1)? as usize;
        let z = match at(2) {
            Value::Nil => 0,
            v => integer(func, "z", &v, 0, s.depth as i64 - 1)? as usize,
        };
        Ok(s.index(x, y, z))
    }
}

fn check_state(func: &str, cells: usize, patterns: usize, dirs: usize) -> mlua::Result<()> {
    if cells.saturating_mul(patterns).saturating_mul(dirs) > MAX_STATE {
        return Err(err(
            func,
            format!(
                "{cells} cells x {patterns} patterns is too large (cells x patterns x directions must stay within {MAX_STATE})"
            ),
        ));
    }
    Ok(())
}

impl UserData for SolverObject {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method("__tostring", |_, _, ()| Ok("WfcSolver"));
        m.add_method_mut("step", |lua, s, ()| {
            s.started = true;
            let step = s.solver.step().map_err(|e| s.problem.error(&e))?;
            let shape = s.problem.shape;
            let mut out = MultiValue::new();
            let push_cell = |out: &mut MultiValue, c: [usize; 3]| {
                out.push_back(Value::Integer(c[0] as i64));
                out.push_back(Value::Integer(c[1] as i64));
                out.push_back(Value::Integer(c[2] as i64));
            };
            match step {
                Step::Observed { cell, pattern } => {
                    out.push_back(Value::String(lua.create_string("observed")?));
                    push_cell(&mut out, shape.coords(cell));
                    out.push_back(Value::Integer(pattern as i64 + 1));
                }
                Step::Backtracked(c) => {
                    out.push_back(Value::String(lua.create_string("backtracked")?));
                    push_cell(&mut out, c.cell);
                }
                Step::Restarted { last, .. } => {
                    out.push_back(Value::String(lua.create_string("restarted")?));
                    push_cell(&mut out, last.cell);
                }
                Step::Done => out.push_back(Value::String(lua.create_string("done")?)),
            }
            Ok(out)
        });
        m.add_method("get", |_, s, a: MultiValue| {
            let a: Vec<Value> = a.into_iter().collect();
            let i = s.problem.index("WfcSolver:get", &a)?;
            Ok(s.solver.observed(i).map(|p| p + 1))
        });
        m.add_method("remaining", |_, s, a: MultiValue| {
            let a: Vec<Value> = a.into_iter().collect();
            let i = s.problem.index("WfcSolver:remaining", &a)?;
            Ok(if s.started {
                s.solver.remaining(i)
            } else {
                s.solver.rules().len()
            })
        });
        m.add_method("isDone", |_, s, ()| Ok(s.solver.solution().is_some()));
        m.add_method("result", |lua, s, ()| match s.solver.solution() {
            Some(sol) => s.problem.result(lua, &sol).map(Some),
            None => Ok(None),
        });
        m.add_method_mut("run", |lua, s, ()| {
            s.started = true;
            let sol = s.solver.run().map_err(|e| s.problem.error(&e))?;
            s.problem.result(lua, &sol)
        });
    }
}
