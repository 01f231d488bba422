//! `@procmodel/lsystem`: L-system derivation, 3D turtle interpretation (segments and leaves as
//! tables of `Vector3`/`CFrame`) and the shape grammar, over `procmodel-lsystem`.

use glam::{DVec3, Mat3, Vec3};
use mlua::{Lua, Table, Value};
use procmodel_lsystem::{
    GrammarConfig, LString, LSystem, Limits, Node, ShapeGrammar, TurtleConfig,
};
use procmodel_luau_types::{CFrame, Vector3};

use super::{Options, err, integer, seed, show};

/// Most modules in a derived string.
const MAX_MODULES: usize = 1_000_000;
/// Most parameters summed over a derived string.
const MAX_PARAMS: usize = 4_000_000;
/// Most modules rewritten over all iterations of one call (bounds the time of a call whose
/// string stops growing).
const MAX_WORK: usize = 20_000_000;
/// Most segments plus leaves `interpret` returns.
const MAX_SHAPES: usize = 200_000;
/// Most nodes `expand` may build.
const MAX_NODES: i64 = 1_000_000;

pub(super) fn module(lua: &Lua) -> mlua::Result<Table> {
    let m = lua.create_table()?;
    m.raw_set("derive", lua.create_function(derive)?)?;
    m.raw_set("interpret", lua.create_function(interpret)?)?;
    m.raw_set("expand", lua.create_function(expand)?)?;
    Ok(m)
}

/// The L-system text of a `derive` argument: the text itself, or a table
/// `{ axiom = "F", rules = { F = "F+F" } | { "F -> F+F" }, ignore = "+-" }`.
fn system_text(func: &str, v: Value) -> mlua::Result<String> {
    match v {
        Value::String(s) => Ok(s.to_str()?.to_owned()),
        Value::Table(_) => {
            let o = Options::new(func, "system", v, &["axiom", "rules", "ignore"])?;
            let axiom = o
                .str("axiom")?
                .ok_or_else(|| err(func, "system.axiom is required"))?;
            let mut text = format!("axiom: {axiom}\n");
            if let Some(ignore) = o.str("ignore")? {
                text.push_str(&format!("ignore: {ignore}\n"));
            }
            match o.get("rules")? {
                Value::Nil => {}
                Value::Table(rules) => {
                    // Array entries are whole productions in order; string keys are
                    // predecessors (sorted, so the text never depends on table order).
                    let mut keyed = Vec::new();
                    for pair in rules.pairs::<Value, Value>() {
                        let (k, val) = pair?;
                        let Value::String(val) = val else {
                            return Err(err(
                                func,
                                format!("system.rules values must be strings, got {}", show(&val)),
                            ));
                        };
                        match k {
                            Value::String(k) => {
                                keyed.push((k.to_str()?.to_owned(), val.to_str()?.to_owned()))
                            }
                            Value::Integer(_) | Value::Number(_) => {}
                            other => {
                                return Err(err(
                                    func,
                                    format!("system.rules has a {} key", show(&other)),
                                ));
                            }
                        }
                    }
                    for i in 1..=rules.raw_len() {
                        let line = match rules.raw_get::<Value>(i)? {
                            Value::String(l) => l.to_str()?.to_owned(),
                            other => {
                                return Err(err(
                                    func,
                                    format!(
                                        "system.rules[{i}] must be a string, got {}",
                                        show(&other)
                                    ),
                                ));
                            }
                        };
                        text.push_str(&line);
                        text.push('\n');
                    }
                    keyed.sort();
                    for (k, v) in keyed {
                        text.push_str(&format!("{k} -> {v}\n"));
                    }
                }
                other => {
                    return Err(err(
                        func,
                        format!("system.rules must be a table, got {}", show(&other)),
                    ));
                }
            }
            Ok(text)
        }
        other => Err(err(
            func,
            format!("rules must be a string or a table, got {}", show(&other)),
        )),
    }
}

/// `lsystem.derive(system, iterations, seed?) -> string`
fn derive(_: &Lua, (system, n, s): (Value, Value, Value)) -> mlua::Result<String> {
    const F: &str = "lsystem.derive";
    let text = system_text(F, system)?;
    let iterations = integer(F, "iterations", &n, 0, 1000)? as u32;
    let seed = seed(F, "seed", &s)?;
    let sys = LSystem::parse(&text).map_err(|e| err(F, format!("rules: {e}")))?;
    let limits = Limits {
        max_modules: MAX_MODULES,
        max_params: MAX_PARAMS,
    };
    let mut current = sys.axiom().clone();
    let mut next = LString::new();
    let mut work = 0usize;
    for iteration in 1..=iterations {
        work += current.len();
        if work > MAX_WORK {
            return Err(err(
                F,
                format!(
                    "too much work: more than {MAX_WORK} modules rewritten by iteration {iteration}"
                ),
            ));
        }
        sys.rewrite_into(&current, iteration, seed, &limits, &mut next)
            .map_err(|e| err(F, e))?;
        std::mem::swap(&mut current, &mut next);
    }
    Ok(current.to_string())
}

fn symbols(func: &str, name: &str, v: Value, default: &[char]) -> mlua::Result<Vec<char>> {
    match super::string(func, name, &v)? {
        None => Ok(default.to_vec()),
        Some(s) => Ok(s.chars().filter(|c| !c.is_whitespace()).collect()),
    }
}

fn v3(v: DVec3) -> Vec3 {
    v.as_vec3()
}

/// A CFrame at the segment's midpoint whose X axis (RightVector) runs from `a` to `b`: the
/// axis of a Roblox Cylinder part.
fn segment_cframe(a: DVec3, b: DVec3) -> CFrame {
    let mid = v3((a + b) * 0.5);
    let d = b - a;
    if d.length_squared() == 0.0 {
        return CFrame::from_position(mid);
    }
    let x = d.normalize();
    let helper = if x.y.abs() < 0.99 { DVec3::Y } else { DVec3::Z };
    let z = x.cross(helper).normalize();
    let y = z.cross(x);
    CFrame {
        position: mid,
        rotation: Mat3::from_cols(v3(x), v3(y), v3(z)),
    }
}

/// `lsystem.interpret(s, options?) -> { segments, leaves }`
fn interpret(lua: &Lua, (s, opts): (Value, Value)) -> mlua::Result<Table> {
    const F: &str = "lsystem.interpret";
    let text = match &s {
        Value::String(s) => s.to_str()?.to_owned(),
        other => {
            return Err(err(
                F,
                format!("s must be a module string, got {}", show(other)),
            ));
        }
    };
    let o = Options::new(
        F,
        "options",
        opts,
        &[
            "step",
            "angle",
            "width",
            "widthFactor",
            "leafSize",
            "draw",
            "move",
            "leaf",
        ],
    )?;
    let d = TurtleConfig::default();
    let config = TurtleConfig {
        step: o.f64_or("step", d.step)?,
        angle_degrees: o.f64_or("angle", d.angle_degrees)?,
        width: o.f64_or("width", d.width)?,
        width_factor: o.f64_or("widthFactor", d.width_factor)?,
        leaf_size: o.f64_or("leafSize", d.leaf_size)?,
        draw_symbols: symbols(F, "draw", o.get("draw")?, &d.draw_symbols)?,
        move_symbols: symbols(F, "move", o.get("move")?, &d.move_symbols)?,
        leaf_symbols: symbols(F, "leaf", o.get("leaf")?, &d.leaf_symbols)?,
    };
    let modules = LString::parse(&text).map_err(|e| err(F, format!("s: {e}")))?;
    let out = procmodel_lsystem::interpret(&modules, &config).map_err(|e| err(F, e))?;
    let total = out.segments.len() + out.leaves.len();
    if total > MAX_SHAPES {
        return Err(err(
            F,
            format!("{total} segments and leaves is more than the limit of {MAX_SHAPES}"),
        ));
    }
    let segments = lua.create_table_with_capacity(out.segments.len(), 0)?;
    for (i, seg) in out.segments.iter().enumerate() {
        let t = lua.create_table_with_capacity(0, 6)?;
        t.raw_set("from", Vector3(v3(seg.start)).value())?;
        t.raw_set("to", Vector3(v3(seg.end)).value())?;
        t.raw_set("width", seg.width)?;
        t.raw_set("depth", seg.depth)?;
        t.raw_set("length", (seg.end - seg.start).length())?;
        t.raw_set("cframe", segment_cframe(seg.start, seg.end))?;
        segments.raw_set(i + 1, t)?;
    }
    let leaves = lua.create_table_with_capacity(out.leaves.len(), 0)?;
    for (i, leaf) in out.leaves.iter().enumerate() {
        let t = lua.create_table_with_capacity(0, 4)?;
        let position = v3(leaf.position);
        t.raw_set("position", Vector3(position).value())?;
        t.raw_set(
            "cframe",
            CFrame {
                position,
                rotation: Mat3::from_quat(leaf.orientation.as_quat()),
            },
        )?;
        t.raw_set("size", leaf.size)?;
        t.raw_set("depth", leaf.depth)?;
        leaves.raw_set(i + 1, t)?;
    }
    let result = lua.create_table_with_capacity(0, 2)?;
    result.raw_set("segments", segments)?;
    result.raw_set("leaves", leaves)?;
    Ok(result)
}

fn node_table(lua: &Lua, n: &Node) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(0, 3)?;
    t.raw_set("symbol", n.symbol.as_str())?;
    if let Some(line) = n.rule_line {
        t.raw_set("line", line)?;
    }
    let children = lua.create_table_with_capacity(n.children.len(), 0)?;
    for (i, c) in n.children.iter().enumerate() {
        children.raw_set(i + 1, node_table(lua, c)?)?;
    }
    t.raw_set("children", children)?;
    Ok(t)
}

/// `lsystem.expand(grammar, options?) -> { root, terminals, nodes, truncated }`
fn expand(lua: &Lua, (g, opts): (Value, Value)) -> mlua::Result<Table> {
    const F: &str = "lsystem.expand";
    let text = match &g {
        Value::String(s) => s.to_str()?.to_owned(),
        other => {
            return Err(err(
                F,
                format!("grammar must be a string, got {}", show(other)),
            ));
        }
    };
    let o = Options::new(F, "options", opts, &["seed", "maxDepth", "maxNodes"])?;
    let d = GrammarConfig::default();
    let config = GrammarConfig {
        seed: o.seed("seed")?,
        max_depth: o.int_or("maxDepth", d.max_depth as i64, 0, 256)? as usize,
        max_nodes: o.int_or("maxNodes", d.max_nodes as i64, 1, MAX_NODES)? as usize,
    };
    let grammar = ShapeGrammar::parse(&text).map_err(|e| err(F, format!("grammar: {e}")))?;
    let x = grammar.expand(&config).map_err(|e| err(F, e))?;
    let t = lua.create_table()?;
    t.raw_set("root", node_table(lua, &x.root)?)?;
    let terms = lua.create_table()?;
    for (i, s) in x.terminals().into_iter().enumerate() {
        terms.raw_set(i + 1, s)?;
    }
    t.raw_set("terminals", terms)?;
    t.raw_set("nodes", x.nodes)?;
    t.raw_set("truncated", x.truncated)?;
    Ok(t)
}
