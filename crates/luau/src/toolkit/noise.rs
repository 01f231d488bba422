//! `@procmodel/noise`: Perlin exactly as `math.noise`, Simplex/OpenSimplex2, Worley,
//! fBm/ridged/billow fractals, domain warp and bulk grids returned as Luau buffers of f32,
//! over `procmodel-noise`. Compiled generators are cached per VM (the last 16 configs), so
//! per-point calls with the same options do not rebuild permutation tables.

use std::cell::RefCell;
use std::rc::Rc;

use mlua::{Buffer, Lua, MultiValue, Table, UserData, UserDataMethods, Value};
use procmodel_luau_types::Vector2;
use procmodel_noise::{
    Basis, CellDistance, CellReturn, Cellular, Exec, Fractal, Grid2, Grid3, Noise, NoiseConfig,
    Warp,
};

use super::{Options, cells, dim, err, finite, integer, seed, show};

/// Compiled generators kept per VM.
const CACHE: usize = 16;
/// Grids at least this large are filled on several threads (same bytes either way).
const PARALLEL_FROM: usize = 1 << 16;

const CONFIG_KEYS: &[&str] = &[
    "basis",
    "seed",
    "frequency",
    "fractal",
    "octaves",
    "lacunarity",
    "persistence",
    "distance",
    "cell",
    "jitter",
    "warp",
];

type Cache = Rc<RefCell<Vec<(NoiseConfig, Rc<Noise>)>>>;

/// A compiled noise field (`noise.new`).
struct Field(Rc<Noise>);

pub(super) fn module(lua: &Lua) -> mlua::Result<Table> {
    let m = lua.create_table()?;
    let cache: Cache = Rc::new(RefCell::new(Vec::new()));
    m.raw_set(
        "perlin",
        lua.create_function(|lua, (x, y, z): (Value, Value, Value)| {
            const F: &str = "noise.perlin";
            // Numeric strings are accepted, as by math.noise (luaL_checknumber).
            let coerce = |v: Value| -> mlua::Result<Value> {
                Ok(match v {
                    Value::String(_) => lua.coerce_number(v.clone())?.map_or(v, Value::Number),
                    v => v,
                })
            };
            let x = super::number(F, "x", &coerce(x)?)?;
            let y = opt_num(F, "y", &coerce(y)?)?;
            let z = opt_num(F, "z", &coerce(z)?)?;
            Ok(procmodel_noise::perlin3(x, y, z))
        })?,
    )?;
    let point = |name: &'static str, basis: Basis, fractal: Fractal, dims: usize| {
        let cache = cache.clone();
        lua.create_function(move |_, args: MultiValue| {
            point_fn(&cache, name, basis, fractal, dims, args)
        })
    };
    m.raw_set(
        "simplex2",
        point("noise.simplex2", Basis::Simplex, Fractal::None, 2)?,
    )?;
    m.raw_set(
        "simplex3",
        point("noise.simplex3", Basis::Simplex, Fractal::None, 3)?,
    )?;
    m.raw_set(
        "openSimplex2",
        point("noise.openSimplex2", Basis::OpenSimplex2, Fractal::None, 2)?,
    )?;
    m.raw_set(
        "openSimplex3",
        point("noise.openSimplex3", Basis::OpenSimplex2, Fractal::None, 3)?,
    )?;
    let fractal = |name: &'static str, basis: Basis, fractal: Fractal| {
        let cache = cache.clone();
        lua.create_function(move |_, args: MultiValue| {
            fractal_fn(&cache, name, basis, fractal, args)
        })
    };
    m.raw_set("fbm", fractal("noise.fbm", Basis::Perlin, Fractal::Fbm)?)?;
    m.raw_set(
        "ridged",
        fractal("noise.ridged", Basis::Perlin, Fractal::Ridged)?,
    )?;
    m.raw_set(
        "billow",
        fractal("noise.billow", Basis::Perlin, Fractal::Billow)?,
    )?;
    m.raw_set(
        "worley",
        fractal(
            "noise.worley",
            Basis::Worley(Cellular::default()),
            Fractal::None,
        )?,
    )?;
    {
        let cache = cache.clone();
        m.raw_set(
            "sample",
            lua.create_function(move |_, (cfg, x, y, z): (Value, Value, Value, Value)| {
                const F: &str = "noise.sample";
                let n = compiled(&cache, F, config(F, cfg, Basis::Perlin, Fractal::None)?)?;
                sample(F, &n, &x, &y, &z)
            })?,
        )?;
    }
    {
        let cache = cache.clone();
        m.raw_set(
            "new",
            lua.create_function(move |_, cfg: Value| {
                const F: &str = "noise.new";
                Ok(Field(compiled(
                    &cache,
                    F,
                    config(F, cfg, Basis::Perlin, Fractal::None)?,
                )?))
            })?,
        )?;
    }
    {
        let cache = cache.clone();
        m.raw_set(
            "grid2",
            lua.create_function(
                move |lua, (cfg, w, h, o, s): (Value, Value, Value, Value, Value)| {
                    const F: &str = "noise.grid2";
                    let n = compiled(&cache, F, config(F, cfg, Basis::Perlin, Fractal::None)?)?;
                    grid2(lua, F, &n, &w, &h, &o, &s)
                },
            )?,
        )?;
    }
    {
        let cache = cache.clone();
        m.raw_set(
            "grid3",
            lua.create_function(move |lua, args: MultiValue| {
                const F: &str = "noise.grid3";
                let mut it = args.into_iter();
                let cfg = it.next().unwrap_or(Value::Nil);
                let n = compiled(&cache, F, config(F, cfg, Basis::Perlin, Fractal::None)?)?;
                let rest: Vec<Value> = it.collect();
                grid3(lua, F, &n, &rest)
            })?,
        )?;
    }
    m.raw_set(
        "at2",
        lua.create_function(|_, (b, w, x, y): (Value, Value, Value, Value)| {
            const F: &str = "noise.at2";
            let w = dim(F, "width", &w)?;
            let x = integer(F, "x", &x, 0, w as i64 - 1)? as usize;
            let y = integer(F, "y", &y, 0, super::MAX_CELLS as i64)? as usize;
            read_f32(F, &b, y.checked_mul(w).and_then(|i| i.checked_add(x)))
        })?,
    )?;
    m.raw_set(
        "at3",
        lua.create_function(|_, args: (Value, Value, Value, Value, Value, Value)| {
            const F: &str = "noise.at3";
            let (b, w, h, x, y, z) = args;
            let w = dim(F, "width", &w)?;
            let h = dim(F, "height", &h)?;
            let x = integer(F, "x", &x, 0, w as i64 - 1)? as usize;
            let y = integer(F, "y", &y, 0, h as i64 - 1)? as usize;
            let z = integer(F, "z", &z, 0, super::MAX_CELLS as i64)? as usize;
            let index = z
                .checked_mul(h)
                .and_then(|i| i.checked_add(y))
                .and_then(|i| i.checked_mul(w))
                .and_then(|i| i.checked_add(x));
            read_f32(F, &b, index)
        })?,
    )?;
    Ok(m)
}

fn opt_num(func: &str, name: &str, v: &Value) -> mlua::Result<f64> {
    match v {
        Value::Nil => Ok(0.0),
        v => super::number(func, name, v),
    }
}

/// The f32 at sample `index` of a grid buffer (`None`: the index overflowed).
fn read_f32(func: &str, b: &Value, index: Option<usize>) -> mlua::Result<f64> {
    let Value::Buffer(b) = b else {
        return Err(err(func, format!("grid must be a buffer, got {}", show(b))));
    };
    let samples = b.len() / 4;
    let Some(index) = index.filter(|&i| i < samples) else {
        let shown = index.map_or_else(|| "past 2^64".to_owned(), |i| i.to_string());
        return Err(err(
            func,
            format!("sample {shown} is outside the {samples}-sample grid"),
        ));
    };
    let offset = index * 4;
    Ok(f64::from(f32::from_le_bytes(b.read_bytes::<4>(offset))))
}

fn word<'a>(
    func: &str,
    name: &str,
    v: &Value,
    allowed: &[&'a str],
) -> mlua::Result<Option<&'a str>> {
    match super::string(func, name, v)? {
        None => Ok(None),
        Some(s) => {
            let lower = s.to_ascii_lowercase();
            allowed
                .iter()
                .find(|a| **a == lower)
                .map(|a| Some(*a))
                .ok_or_else(|| {
                    err(
                        func,
                        format!("{name} must be one of {}, got {s:?}", allowed.join(", ")),
                    )
                })
        }
    }
}

/// Parses a config table; `basis`/`fractal` give the defaults of the calling function.
fn config(func: &str, v: Value, basis: Basis, fractal: Fractal) -> mlua::Result<NoiseConfig> {
    let o = Options::new(func, "config", v, CONFIG_KEYS)?;
    let d = NoiseConfig::default();
    let mut cell = match basis {
        Basis::Worley(c) => c,
        _ => Cellular::default(),
    };
    if let Some(w) = word(
        func,
        "distance",
        &o.get("distance")?,
        &["euclidean", "manhattan"],
    )? {
        cell.distance = if w == "euclidean" {
            CellDistance::Euclidean
        } else {
            CellDistance::Manhattan
        };
    }
    if let Some(w) = word(func, "cell", &o.get("cell")?, &["f1", "f2", "f2-f1"])? {
        cell.ret = match w {
            "f1" => CellReturn::F1,
            "f2" => CellReturn::F2,
            _ => CellReturn::F2MinusF1,
        };
    }
    let jitter = o.f64_or("jitter", f64::from(cell.jitter))?;
    if !(0.0..=1.0).contains(&jitter) {
        return Err(err(func, format!("jitter must be in [0, 1], got {jitter}")));
    }
    cell.jitter = jitter as f32;
    let basis = match word(
        func,
        "basis",
        &o.get("basis")?,
        &["perlin", "simplex", "opensimplex2", "worley"],
    )? {
        None => match basis {
            Basis::Worley(_) => Basis::Worley(cell),
            b => b,
        },
        Some("perlin") => Basis::Perlin,
        Some("simplex") => Basis::Simplex,
        Some("opensimplex2") => Basis::OpenSimplex2,
        Some(_) => Basis::Worley(cell),
    };
    let fractal = match word(
        func,
        "fractal",
        &o.get("fractal")?,
        &["none", "fbm", "ridged", "billow"],
    )? {
        None => fractal,
        Some("none") => Fractal::None,
        Some("fbm") => Fractal::Fbm,
        Some("ridged") => Fractal::Ridged,
        Some(_) => Fractal::Billow,
    };
    let warp = match o.get("warp")? {
        Value::Nil => None,
        w @ Value::Table(_) => {
            let wo = Options::new(func, "config.warp", w, &["amplitude", "frequency"])?;
            Some(Warp {
                amplitude: wo.f64_or("amplitude", 1.0)? as f32,
                frequency: wo.f64_or("frequency", 1.0)? as f32,
            })
        }
        other => {
            return Err(err(
                func,
                format!(
                    "warp must be a table {{ amplitude, frequency }}, got {}",
                    show(&other)
                ),
            ));
        }
    };
    Ok(NoiseConfig {
        basis,
        seed: o.seed("seed")?,
        frequency: o.f64_or("frequency", f64::from(d.frequency))? as f32,
        fractal,
        octaves: o.int_or(
            "octaves",
            if fractal == Fractal::None { 1 } else { 4 },
            1,
            32,
        )? as u32,
        lacunarity: o.f64_or("lacunarity", f64::from(d.lacunarity))? as f32,
        gain: o.f64_or("persistence", f64::from(d.gain))? as f32,
        warp,
    })
}

fn compiled(cache: &Cache, func: &str, cfg: NoiseConfig) -> mlua::Result<Rc<Noise>> {
    let mut c = cache.borrow_mut();
    if let Some(k) = c.iter().position(|(k, _)| *k == cfg) {
        let entry = c.remove(k);
        let n = entry.1.clone();
        c.push(entry);
        return Ok(n);
    }
    let n = Rc::new(Noise::new(cfg).map_err(|e| err(func, e))?);
    if c.len() >= CACHE {
        c.remove(0);
    }
    c.push((cfg, n.clone()));
    Ok(n)
}

fn sample(func: &str, n: &Noise, x: &Value, y: &Value, z: &Value) -> mlua::Result<f64> {
    let x = super::number(func, "x", x)? as f32;
    let y = super::number(func, "y", y)? as f32;
    Ok(f64::from(match z {
        Value::Nil => n.sample2(x, y),
        z => n.sample3(x, y, super::number(func, "z", z)? as f32),
    }))
}

/// `noise.simplex2(x, y, seed?)` and friends.
fn point_fn(
    cache: &Cache,
    func: &str,
    basis: Basis,
    fractal: Fractal,
    dims: usize,
    args: MultiValue,
) -> mlua::Result<f64> {
    let a: Vec<Value> = args.into_iter().collect();
    let at = |i: usize| a.get(i).cloned().unwrap_or(Value::Nil);
    let cfg = NoiseConfig {
        basis,
        fractal,
        seed: seed(func, "seed", &at(dims))?,
        ..NoiseConfig::default()
    };
    let n = compiled(cache, func, cfg)?;
    let z = if dims == 3 { at(2) } else { Value::Nil };
    if dims == 3 && z.is_nil() {
        return Err(err(func, "z must be a number, got nil"));
    }
    sample(func, &n, &at(0), &at(1), &z)
}

/// `noise.fbm(x, y, z?, options?)` and friends: a table in third place is the options.
fn fractal_fn(
    cache: &Cache,
    func: &str,
    basis: Basis,
    fractal: Fractal,
    args: MultiValue,
) -> mlua::Result<f64> {
    let a: Vec<Value> = args.into_iter().collect();
    let at = |i: usize| a.get(i).cloned().unwrap_or(Value::Nil);
    let (z, opts) = match at(2) {
        t @ Value::Table(_) => (Value::Nil, t),
        z => (z, at(3)),
    };
    let n = compiled(cache, func, config(func, opts, basis, fractal)?)?;
    sample(func, &n, &at(0), &at(1), &z)
}

fn vec2(func: &str, name: &str, v: &Value, default: [f32; 2]) -> mlua::Result<[f32; 2]> {
    match v {
        Value::Nil => Ok(default),
        Value::Integer(_) | Value::Number(_) => {
            let s = finite(func, name, v)? as f32;
            Ok([s, s])
        }
        Value::UserData(ud) if ud.is::<Vector2>() => {
            let p = ud.borrow::<Vector2>()?.0;
            Ok([p.x, p.y])
        }
        other => Err(err(
            func,
            format!("{name} must be a Vector2 or a number, got {}", show(other)),
        )),
    }
}

fn vec3(func: &str, name: &str, v: &Value, default: [f32; 3]) -> mlua::Result<[f32; 3]> {
    match v {
        Value::Nil => Ok(default),
        Value::Integer(_) | Value::Number(_) => {
            let s = finite(func, name, v)? as f32;
            Ok([s, s, s])
        }
        Value::Vector(p) => Ok([p.x(), p.y(), p.z()]),
        other => Err(err(
            func,
            format!("{name} must be a Vector3 or a number, got {}", show(other)),
        )),
    }
}

fn exec(n: usize) -> Exec {
    Exec {
        simd: None,
        parallel: n >= PARALLEL_FROM,
    }
}

fn grid2(
    lua: &Lua,
    func: &str,
    n: &Noise,
    w: &Value,
    h: &Value,
    origin: &Value,
    step: &Value,
) -> mlua::Result<Buffer> {
    let size = [dim(func, "width", w)?, dim(func, "height", h)?];
    let count = cells(func, &size)?;
    let g = Grid2 {
        origin: vec2(func, "origin", origin, [0.0, 0.0])?,
        step: vec2(func, "step", step, [1.0, 1.0])?,
        size,
    };
    let mut out = vec![0.0f32; count];
    n.fill2(&g, &mut out, exec(count))
        .map_err(|e| err(func, e))?;
    super::f32_buffer(lua, &out)
}

/// `(width, height, depth, origin?, step?)`.
fn grid3(lua: &Lua, func: &str, n: &Noise, a: &[Value]) -> mlua::Result<Buffer> {
    let at = |i: usize| a.get(i).cloned().unwrap_or(Value::Nil);
    let size = [
        dim(func, "width", &at(0))?,
        dim(func, "height", &at(1))?,
        dim(func, "depth", &at(2))?,
    ];
    let count = cells(func, &size)?;
    let g = Grid3 {
        origin: vec3(func, "origin", &at(3), [0.0; 3])?,
        step: vec3(func, "step", &at(4), [1.0; 3])?,
        size,
    };
    let mut out = vec![0.0f32; count];
    n.fill3(&g, &mut out, exec(count))
        .map_err(|e| err(func, e))?;
    super::f32_buffer(lua, &out)
}

impl UserData for Field {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method("__tostring", |_, _, ()| Ok("NoiseField"));
        m.add_method("sample", |_, f, (x, y, z): (Value, Value, Value)| {
            sample("NoiseField:sample", &f.0, &x, &y, &z)
        });
        m.add_method(
            "grid2",
            |lua, f, (w, h, o, s): (Value, Value, Value, Value)| {
                grid2(lua, "NoiseField:grid2", &f.0, &w, &h, &o, &s)
            },
        );
        m.add_method("grid3", |lua, f, args: MultiValue| {
            let a: Vec<Value> = args.into_iter().collect();
            grid3(lua, "NoiseField:grid3", &f.0, &a)
        });
    }
}
