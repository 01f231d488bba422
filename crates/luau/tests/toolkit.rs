//! The `@procmodel/*` toolkit modules against the algorithm crates: golden values per seed
//! computed in Rust must come out of Luau bit for bit, and the example generators run
//! deterministically.

use procmodel_luau::{Host, HostConfig, HostError, RunInputs};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn host() -> Host {
    Host::new(HostConfig {
        echo_output: false,
        ..HostConfig::default()
    })
    .unwrap()
}

/// Runs a Luau script (written to a temp file) and returns its error text, if any.
fn run(name: &str, source: &str) -> Result<(), String> {
    let dir = procmodel_testkit::scratch("toolkit");
    let path = dir.join(format!("{name}.luau"));
    std::fs::write(&path, source).unwrap();
    host().run_script_file(&path).map_err(|e| match e {
        HostError::Script { message, .. } => message,
        other => other.to_string(),
    })
}

fn check(name: &str, source: &str) {
    if let Err(e) = run(name, source) {
        panic!("{name}: {e}");
    }
}

/// A Luau string literal holding `bytes` exactly.
fn lua_bytes(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 4 + 2);
    s.push('"');
    for b in bytes {
        write!(s, "\\x{b:02x}").unwrap();
    }
    s.push('"');
    s
}

fn lua_str(text: &str) -> String {
    lua_bytes(text.as_bytes())
}

#[test]
fn noise_grids_equal_the_rust_crate_bit_for_bit() {
    use procmodel_noise::{
        Basis, CellDistance, CellReturn, Cellular, Exec, Fractal, Grid2, Grid3, Noise, NoiseConfig,
        Warp,
    };
    let cases: [(&str, NoiseConfig); 5] = [
        ("{}", NoiseConfig::default()),
        (
            "{ basis = 'simplex', seed = 42, fractal = 'fbm', octaves = 5, frequency = 0.125 }",
            NoiseConfig {
                basis: Basis::Simplex,
                seed: 42,
                fractal: Fractal::Fbm,
                octaves: 5,
                frequency: 0.125,
                ..NoiseConfig::default()
            },
        ),
        (
            "{ seed = -1, fractal = 'ridged', octaves = 3, lacunarity = 2.5, persistence = 0.4 }",
            NoiseConfig {
                seed: u64::MAX,
                fractal: Fractal::Ridged,
                octaves: 3,
                lacunarity: 2.5,
                gain: 0.4,
                ..NoiseConfig::default()
            },
        ),
        (
            "{ basis = 'worley', seed = 9, cell = 'f2-f1', distance = 'manhattan', jitter = 0.75 }",
            NoiseConfig {
                basis: Basis::Worley(Cellular {
                    distance: CellDistance::Manhattan,
                    ret: CellReturn::F2MinusF1,
                    jitter: 0.75,
                }),
                seed: 9,
                ..NoiseConfig::default()
            },
        ),
        (
            "{ basis = 'opensimplex2', seed = 3, fractal = 'billow', octaves = 2, warp = { amplitude = 1.5, frequency = 0.5 } }",
            NoiseConfig {
                basis: Basis::OpenSimplex2,
                seed: 3,
                fractal: Fractal::Billow,
                octaves: 2,
                warp: Some(Warp {
                    amplitude: 1.5,
                    frequency: 0.5,
                }),
                ..NoiseConfig::default()
            },
        ),
    ];
    let mut src = String::from("local noise = require('@procmodel/noise')\n");
    for (k, (lua_cfg, cfg)) in cases.iter().enumerate() {
        let n = Noise::new(*cfg).unwrap();
        let g2 = Grid2 {
            origin: [-3.5, 10.25],
            step: [0.75, 1.5],
            size: [13, 9],
        };
        let mut out = vec![0.0f32; 13 * 9];
        n.fill2(&g2, &mut out, Exec::default()).unwrap();
        let bytes: Vec<u8> = out.iter().flat_map(|v| v.to_le_bytes()).collect();
        writeln!(
            src,
            "assert(buffer.tostring(noise.grid2({lua_cfg}, 13, 9, Vector2.new(-3.5, 10.25), Vector2.new(0.75, 1.5))) == {}, 'grid2 case {k}')",
            lua_bytes(&bytes)
        )
        .unwrap();
        let g3 = Grid3 {
            origin: [1.0, -2.0, 0.5],
            step: [0.5, 0.5, 2.0],
            size: [5, 4, 3],
        };
        let mut out = vec![0.0f32; 60];
        n.fill3(&g3, &mut out, Exec::default()).unwrap();
        let bytes: Vec<u8> = out.iter().flat_map(|v| v.to_le_bytes()).collect();
        writeln!(
            src,
            "assert(buffer.tostring(noise.grid3({lua_cfg}, 5, 4, 3, Vector3.new(1, -2, 0.5), Vector3.new(0.5, 0.5, 2))) == {}, 'grid3 case {k}')",
            lua_bytes(&bytes)
        )
        .unwrap();
        let v = f64::from(n.sample2(0.3, -7.25));
        writeln!(
            src,
            "assert(noise.sample({lua_cfg}, 0.3, -7.25) == {v:?}, 'sample case {k}')"
        )
        .unwrap();
    }
    // Pinned values: a change of output must be deliberate.
    let simplex = Noise::new(NoiseConfig {
        basis: Basis::Simplex,
        seed: 7,
        ..NoiseConfig::default()
    })
    .unwrap()
    .sample2(1.25, 2.5);
    assert_eq!(simplex.to_bits(), GOLDEN_SIMPLEX_SEED7, "{simplex}");
    writeln!(
        src,
        "assert(noise.simplex2(1.25, 2.5, 7) == {:?})",
        f64::from(simplex)
    )
    .unwrap();
    check("noise_golden", &src);
}

const GOLDEN_SIMPLEX_SEED7: u32 = 3_197_575_682;

#[test]
fn caves_equal_the_rust_crate() {
    use procmodel_automata::{CaveConfig, Rule, check_connected, run};
    let mut src = String::from("local automata = require('@procmodel/automata')\n");
    for seed in [0u64, 7, 12345] {
        let cfg = CaveConfig {
            width: 60,
            height: 40,
            seed,
            min_region_size: 10,
            corridor_width: 2,
            rule: Rule::parse("B5678/S45678").unwrap(),
            ..CaveConfig::default()
        };
        let cave = run(&cfg).unwrap();
        assert!(check_connected(&cave.grid).is_ok());
        writeln!(
            src,
            "do local c = automata.cave({{ width = 60, height = 40, seed = {seed}, minRegion = 10, corridorWidth = 2 }})\n\
             assert(automata.toAscii(c.mask, 60, 40) == {}, 'cave {seed}')\n\
             assert(#c.corridors == {} and c.regions == {} and c.steps == {} and c.removedCells == {})\n\
             assert(automata.isConnected(c.mask, 60, 40)) end",
            lua_str(&cave.grid.to_ascii()),
            cave.corridors.len(),
            cave.regions_before,
            cave.steps,
            cave.removed_cells,
        )
        .unwrap();
        if seed == 7 {
            assert_eq!(cave.grid.fingerprint(), GOLDEN_CAVE_SEED7);
        }
    }
    // 3D: the same pipeline composed from the crate's parts.
    {
        use procmodel_automata::{
            Automaton3, ConnectConfig, EdgePolicy, check_connected3, connect3, random_fill3,
        };
        let grid = random_fill3(20, 14, 12, 0.5, 3).unwrap();
        let mut a = Automaton3::new(
            grid,
            Rule::parse_3d("B13-26/S14-26").unwrap(),
            EdgePolicy::Wall,
        );
        for _ in 0..5 {
            if a.step() == 0 {
                break;
            }
        }
        let mut grid = a.into_grid();
        let corridors = connect3(&mut grid, &ConnectConfig { corridor_width: 1 }).unwrap();
        check_connected3(&grid).unwrap();
        writeln!(
            src,
            "do local c = automata.cave3({{ width = 20, height = 14, depth = 12, seed = 3 }})\n\
             assert(buffer.tostring(c.mask) == {}, 'cave3')\n\
             assert(#c.corridors == {} and c.connected) end",
            lua_bytes(grid.cells()),
            corridors.len()
        )
        .unwrap();
    }
    check("automata_golden", &src);
}

const GOLDEN_CAVE_SEED7: u64 = 11_978_373_640_397_648_130;

#[test]
fn lsystems_equal_the_rust_crate() {
    use procmodel_lsystem::{LSystem, Limits, TurtleConfig, interpret};
    let plant = "axiom: X\nX -> (2) F[+X][-X]FX\nX -> (1) F[&X]F[^X]L\nF -> FF";
    let sys = LSystem::parse(plant).unwrap();
    let mut src = String::from("local lsystem = require('@procmodel/lsystem')\n");
    for seed in [0u64, 1, 99] {
        let s = sys.derive(4, seed, &Limits::default()).unwrap();
        let out = interpret(
            &s,
            &TurtleConfig {
                angle_degrees: 25.0,
                step: 0.5,
                ..TurtleConfig::default()
            },
        )
        .unwrap();
        let last = out.segments.last().unwrap().end.as_vec3();
        writeln!(
            src,
            "do local s = lsystem.derive({}, 4, {seed})\n\
             assert(s == {}, 'derive {seed}')\n\
             local t = lsystem.interpret(s, {{ angle = 25, step = 0.5 }})\n\
             assert(#t.segments == {} and #t.leaves == {})\n\
             assert(t.segments[#t.segments].to == Vector3.new({:?}, {:?}, {:?})) end",
            lua_str(plant),
            lua_str(&s.to_string()),
            out.segments.len(),
            out.leaves.len(),
            last.x,
            last.y,
            last.z,
        )
        .unwrap();
        if seed == 1 {
            assert_eq!(s.len(), GOLDEN_PLANT_SEED1_LEN, "{s}");
        }
    }
    // Koch curve lengths: 5^n segments, end at 3^n along the heading.
    let koch = LSystem::parse("axiom: F\nF -> F+F-F-F+F").unwrap();
    for n in 0..5u32 {
        let out = interpret(
            &koch.derive(n, 0, &Limits::default()).unwrap(),
            &TurtleConfig::default(),
        )
        .unwrap();
        assert_eq!(out.segments.len(), 5usize.pow(n));
        assert_eq!(out.segments.last().unwrap().end.y, 3f64.powi(n as i32));
    }
    check("lsystem_golden", &src);
}

const GOLDEN_PLANT_SEED1_LEN: usize = 379;

#[test]
fn wfc_results_equal_the_rust_crate_and_satisfy_their_rules() {
    use procmodel_wfc::{
        Direction, GridShape, OverlappingConfig, OverlappingModel, Rules, Sample, Solver,
        SolverConfig, check_solution,
    };
    // Tiled, explicit adjacency: a striped pattern language over 3 tiles.
    let pairs = [
        (0, Direction::Right, 0),
        (0, Direction::Right, 1),
        (1, Direction::Right, 2),
        (2, Direction::Right, 0),
        (2, Direction::Right, 2),
        (0, Direction::Down, 0),
        (1, Direction::Down, 1),
        (2, Direction::Down, 2),
        (0, Direction::Down, 2),
        (2, Direction::Down, 0),
    ];
    let rules = Rules::from_adjacency(vec![1.0, 0.5, 2.0], 4, &pairs).unwrap();
    let names = ["a", "b", "c"];
    let dir = |d: Direction| match d {
        Direction::Right => "+X",
        _ => "+Y",
    };
    let adjacency: Vec<String> = pairs
        .iter()
        .map(|(a, d, b)| format!("{{'{}', '{}', '{}'}}", names[*a], dir(*d), names[*b]))
        .collect();
    let mut src = String::from("local wfc = require('@procmodel/wfc')\n");
    for seed in [0u64, 5, 77] {
        let sol = Solver::new(
            &rules,
            GridShape::new_2d(16, 11, false),
            SolverConfig::with_seed(seed),
        )
        .unwrap()
        .run()
        .unwrap();
        assert_eq!(check_solution(&rules, &sol), None);
        let cells: Vec<String> = sol.patterns.iter().map(|p| (p + 1).to_string()).collect();
        writeln!(
            src,
            "do local r = wfc.tiled({{ tiles = {{ {{ name = 'a' }}, {{ name = 'b', weight = 0.5 }}, {{ name = 'c', weight = 2 }} }},\n\
             adjacency = {{ {} }}, width = 16, height = 11, seed = {seed} }})\n\
             assert(table.concat(r.cells, ',') == '{}', 'tiled {seed}') end",
            adjacency.join(", "),
            cells.join(","),
        )
        .unwrap();
    }
    // Overlapping.
    let pixels: Vec<u32> = (0..64)
        .map(|i| {
            let (x, y) = (i % 8, i / 8);
            if x == 3 || y == 5 { 0x00ff00 } else { 0x202020 }
        })
        .collect();
    let model = OverlappingModel::new(
        Sample {
            pixels: &pixels,
            width: 8,
            height: 8,
        },
        OverlappingConfig {
            n: 3,
            symmetry: 4,
            ..OverlappingConfig::default()
        },
    )
    .unwrap();
    let sol = model.run(24, 18, SolverConfig::with_seed(4)).unwrap();
    assert_eq!(model.check(&sol), None);
    let colours: Vec<String> = model
        .colourise(&sol)
        .iter()
        .map(|c| c.to_string())
        .collect();
    let sample: Vec<String> = pixels.iter().map(|c| c.to_string()).collect();
    writeln!(
        src,
        "local o = wfc.overlapping({{ sample = {{ {} }}, width = 8, height = 8, N = 3, symmetry = 4, outputWidth = 24, outputHeight = 18, seed = 4 }})\n\
         assert(table.concat(o.colors, ',') == '{}', 'overlapping')\n\
         assert(o.patterns == {})",
        sample.join(", "),
        colours.join(","),
        model.pattern_count(),
    )
    .unwrap();
    check("wfc_golden", &src);
}

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// A stable text form of a subtree: class, name and sorted properties of every instance.
fn describe(h: &Host, root: rbx_types::Ref) -> (usize, String) {
    h.with_dom_ref(|dom| {
        let mut out = String::new();
        let mut count = 0;
        let mut stack = vec![(root, 0usize)];
        while let Some((r, depth)) = stack.pop() {
            let inst = dom.get_by_ref(r).unwrap();
            count += 1;
            let mut props: Vec<_> = inst
                .properties
                .iter()
                .filter(|(_, v)| !matches!(v, rbx_types::Variant::Ref(_)))
                .map(|(k, v)| format!("{k}={v:?}"))
                .collect();
            props.sort();
            writeln!(
                out,
                "{}{} {} {}",
                " ".repeat(depth),
                inst.class,
                inst.name,
                props.join(" ")
            )
            .unwrap();
            for &c in inst.children().iter().rev() {
                stack.push((c, depth + 1));
            }
        }
        (count, out)
    })
}

fn run_example(name: &str) -> (usize, String) {
    let mut h = host();
    let root = h.with_dom_ref(|d| d.root_ref());
    let path = examples_dir().join(name);
    let g = h
        .load_generator_file(&path, root)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let out = h
        .run_generator(
            &g,
            &RunInputs {
                attributes: Vec::new(),
                size: glam::Vec3::new(64.0, 32.0, 64.0),
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    describe(&h, out.container)
}

#[test]
fn examples_generate_deterministically() {
    for name in ["LSystemTree.luau", "WfcDungeon.luau", "Cave.luau"] {
        let (count, a) = run_example(name);
        assert!(count > 10, "{name} produced only {count} instances");
        assert!(count < 5000, "{name} produced {count} instances");
        let (_, b) = run_example(name);
        assert!(a == b, "{name} differs between two runs");
    }
}

/// The child of `parent` with `class` (and `name`, if given).
fn child(dom: &rbx_dom_weak::WeakDom, parent: rbx_types::Ref, class: &str) -> rbx_types::Ref {
    dom.get_by_ref(parent)
        .unwrap()
        .children()
        .iter()
        .copied()
        .find(|&r| dom.get_by_ref(r).unwrap().class == class)
        .unwrap_or_else(|| panic!("no {class}"))
}

fn position(dom: &rbx_dom_weak::WeakDom, r: rbx_types::Ref) -> [f32; 3] {
    match dom.get_by_ref(r).unwrap().properties.get(&"CFrame".into()) {
        Some(rbx_types::Variant::CFrame(c)) => [c.position.x, c.position.y, c.position.z],
        other => panic!("CFrame: {other:?}"),
    }
}

/// `examples/village/village.luau` (the world file's world as a Luau table, written chunk by
/// chunk) makes exactly the Terrain `procmodel terrain examples/village/world.toml` writes —
/// the CLI's steps: the file through `WorldSpec::plan`, its cells and floor, `write_voxels`,
/// compact, encode — and its resources where the CLI puts them.
#[test]
fn village_script_equals_the_world_file() {
    use procmodel_terrain::{ResourceKind, Terrain, WorldSpec, smoothgrid};
    let village = examples_dir().join("village");
    let spec: WorldSpec =
        toml::from_str(&std::fs::read_to_string(village.join("world.toml")).unwrap()).unwrap();
    let plan = spec.plan().unwrap();
    let mut t = Terrain::new();
    plan.world
        .write_voxels(
            &mut t,
            plan.cells().unwrap(),
            plan.floor().unwrap().unwrap(),
            |_| std::ops::ControlFlow::Continue(()),
        )
        .unwrap();
    t.compact();
    let want = smoothgrid::encode(&t);
    let placed = plan
        .world
        .place_resources(
            plan.resource_area().unwrap(),
            plan.resources.as_ref().unwrap(),
        )
        .unwrap();
    assert!(placed.len() > 50, "{}", placed.len());

    let mut h = host();
    h.run_script_file(&village.join("village.luau"))
        .unwrap_or_else(|e| panic!("village.luau: {e}"));
    let dom = h.take_dom();
    let ws = child(&dom, dom.root_ref(), "Workspace");
    let terrain = child(&dom, ws, "Terrain");
    let got = match dom
        .get_by_ref(terrain)
        .unwrap()
        .properties
        .get(&"SmoothGrid".into())
    {
        Some(rbx_types::Variant::BinaryString(b)) => AsRef::<[u8]>::as_ref(b).to_vec(),
        other => panic!("SmoothGrid: {other:?}"),
    };
    assert!(want.len() > 10_000, "{}", want.len());
    assert!(
        got == want,
        "SmoothGrid differs ({} vs {} bytes)",
        got.len(),
        want.len()
    );

    let folder = child(&dom, ws, "Folder");
    let items = dom.get_by_ref(folder).unwrap().children().to_vec();
    assert_eq!(items.len(), placed.len());
    for (r, p) in items.iter().zip(&placed) {
        let inst = dom.get_by_ref(*r).unwrap();
        let (body, centre) = match p.kind {
            ResourceKind::Tree => {
                assert_eq!(inst.name, "Tree");
                (child(&dom, *r, "Part"), p.bottom + p.height / 2.0)
            }
            ResourceKind::Rock => {
                assert_eq!(inst.name, "Rock");
                (*r, p.bottom + p.height / 2.0)
            }
        };
        assert_eq!(
            position(&dom, body),
            [p.x as f32, centre as f32, p.z as f32],
            "{p:?}"
        );
    }
}

/// `types/procmodel.d.luau` lists exactly the functions each module table has.
#[test]
fn type_definitions_match_the_modules() {
    let defs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("types/procmodel.d.luau"),
    )
    .unwrap();
    let mut src = String::new();
    for (module, ty) in [
        ("noise", "ProcmodelNoise"),
        ("automata", "ProcmodelAutomata"),
        ("lsystem", "ProcmodelLSystem"),
        ("wfc", "ProcmodelWfc"),
        ("terrain", "ProcmodelTerrain"),
    ] {
        let start = defs
            .find(&format!("type {ty} = {{"))
            .unwrap_or_else(|| panic!("{ty} missing"));
        let body = &defs[start..];
        let body = &body[..body.find("\n}").unwrap()];
        let names: Vec<String> = body
            .lines()
            .filter_map(|l| {
                let l = l.strip_prefix('\t')?;
                let name = l.split(':').next()?;
                (!name.starts_with(['\t', ' ', '-'])
                    && name.chars().all(|c| c.is_ascii_alphanumeric()))
                .then(|| format!("{name} = true"))
            })
            .collect();
        // Every module declares at least two members (terrain: world, materials).
        assert!(names.len() >= 2, "{ty}: {names:?}");
        writeln!(
            src,
            "do local m = require('@procmodel/{module}')\n\
             local declared = {{ {} }}\n\
             for k in m do assert(declared[k], '{ty} does not declare ' .. k) end\n\
             for k in declared do assert(m[k] ~= nil, '{module} has no ' .. k) end end",
            names.join(", ")
        )
        .unwrap();
    }
    check("type_definitions", &src);
}
