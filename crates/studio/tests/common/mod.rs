//! Shared set-up of the studio tests: the staircase generator and a running studio on it.

#![allow(dead_code)]

pub mod browser_env;

use procmodel_studio::{Options, Studio};
use std::path::PathBuf;
use std::time::Duration;

/// `Steps` parts in a staircase; `Grid` > 0: Grid² parts instead; `Hang`: never yields.
/// The `-- FAIL HERE` line is where the tests put an error.
pub const STAIRCASE: &str = r#"
local G = {}
G.Attributes = {
    Steps = 10,
    StepSize = 1,
    Grid = 0,
    Hang = false,
    Color = Color3.fromRGB(200, 120, 60),
    Offset = Vector3.new(0, 0, 0),
    Label = "stairs",
}
function G.OnGenerate(params, target)
    local a = params.Attributes
    -- FAIL HERE
    if a.Hang then
        local n = 0
        while true do n += 1 end
    end
    if a.Grid > 0 then
        for x = 1, a.Grid do
            for z = 1, a.Grid do
                local p = Instance.new("Part")
                p.Anchored = true
                p.Size = Vector3.new(0.9, 0.5 + ((x * z) % 5) * 0.3, 0.9)
                p.Position = Vector3.new(x - a.Grid / 2, 0, z - a.Grid / 2)
                p.Color = a.Color
                p.Parent = target
            end
        end
        return
    end
    for i = 1, a.Steps do
        local p = Instance.new("Part")
        p.Anchored = true
        p.Name = "Step" .. i
        p.Size = Vector3.new(4, a.StepSize, 1)
        p.Position = a.Offset + Vector3.new(0, i * a.StepSize, i)
        p.Color = a.Color:Lerp(Color3.new(1, 1, 1), i / math.max(a.Steps, 1) * 0.5)
        p.Parent = target
    end
end
return G
"#;

/// A fresh folder with the staircase in it.
pub fn fixture(name: &str) -> (PathBuf, PathBuf) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("studio-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("Staircase.luau");
    std::fs::write(&file, STAIRCASE).unwrap();
    (dir, file)
}

/// A studio on `path` on a free port; generators may run a minute without yielding (the
/// cancel tests stop them long before).
pub fn studio(path: &std::path::Path) -> Studio {
    let mut o = Options::new(path);
    o.host.timeout = Duration::from_secs(60);
    Studio::start(o).expect("the studio starts")
}

/// `Hill.rbxl` in `dir`: a place whose `Workspace.Terrain` has an 8×8 patch of Grass under
/// one of Rock (two materials), and nothing else.
pub fn terrain_place(dir: &std::path::Path) -> PathBuf {
    use procmodel_terrain::{Material, Terrain, Voxel, smoothgrid};
    let mut t = Terrain::new();
    for x in 0..8 {
        for z in 0..8 {
            t.set(
                glam::IVec3::new(x, 0, z),
                Voxel::solid(Material::Grass, 255),
            );
            t.set(glam::IVec3::new(x, 1, z), Voxel::solid(Material::Rock, 255));
        }
    }
    let grid = smoothgrid::encode(&t);
    let place = dir.join("Hill.rbxl");
    let mut engine =
        procmodel_engine::Engine::new(procmodel_luau::runtime(), Default::default()).unwrap();
    let ws = engine.workspace();
    engine.with_dom_mut(|d| {
        let existing = d
            .get_by_ref(ws)
            .unwrap()
            .children()
            .iter()
            .copied()
            .find(|&c| d.get_by_ref(c).is_some_and(|i| i.class == "Terrain"));
        let terrain = existing.unwrap_or_else(|| {
            d.insert(
                ws,
                rbx_dom_weak::InstanceBuilder::new("Terrain").with_name("Terrain"),
            )
        });
        d.get_by_ref_mut(terrain).unwrap().properties.insert(
            "SmoothGrid".into(),
            rbx_types::Variant::BinaryString(grid.into()),
        );
    });
    engine.save(&place).unwrap();
    place
}
