//! Wavefront OBJ + MTL writer: one `o` per part with world-space vertices and
//! normals, one `usemtl` per part referencing a shared material. A textured part (a
//! MeshPart showing an EditableImage) also gets texture coordinates (`vt`, v up as OBJ
//! has it) and its material a `map_Kd` naming the PNG file the caller writes beside the
//! MTL ([`texture_name`]).
//!
//! Floats are printed with Rust's shortest round-trip formatting (never in
//! exponent notation), with `-0` normalised to `0`, so output is deterministic.

use std::fmt::Write;

use crate::material::Appearance;
use crate::scene::Scene;

/// The name a shared material gets in both MTL and glTF: its index (unique),
/// `Enum.Material` name and hex colour, e.g. `m0_Plastic_a3a2a5`.
pub(crate) fn material_name(index: usize, appearance: &Appearance) -> String {
    format!(
        "m{index}_{}_{}",
        appearance.material_name(),
        appearance.hex()
    )
}

/// Shortest round-trip decimal form of `v`, `-0` printed as `0`.
fn num(v: f32) -> impl std::fmt::Display {
    v + 0.0
}

/// OBJ names end at whitespace; keep them on one token.
fn object_name(path: &str) -> String {
    let name: String = path
        .chars()
        .map(|c| {
            if c.is_whitespace() || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    if name.is_empty() {
        "_".to_owned()
    } else {
        name
    }
}

/// The file name of the scene's texture `index` beside the MTL `mtl_name`:
/// `stairs.mtl` → `stairs_texture0.png`.
pub(crate) fn texture_name(mtl_name: &str, index: usize) -> String {
    let stem = mtl_name.strip_suffix(".mtl").unwrap_or(mtl_name);
    format!("{stem}_texture{index}.png")
}

pub(crate) fn write(scene: &Scene, mtl_name: &str) -> (String, String) {
    let mut obj = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(obj, "# procmodel");
    let _ = writeln!(obj, "mtllib {mtl_name}");
    let mut next_vertex = 1usize;
    let mut next_uv = 1usize;
    for node in &scene.nodes {
        let Some(part) = node.part else { continue };
        let mesh = &scene.geometries[part.geometry].mesh;
        let _ = writeln!(obj, "o {}", object_name(&node.path));
        for &p in &mesh.positions {
            let w = node.world.transform_point(p).as_vec3();
            let _ = writeln!(obj, "v {} {} {}", num(w.x), num(w.y), num(w.z));
        }
        for &n in &mesh.normals {
            let w = node.world.transform_vector(n).as_vec3();
            let _ = writeln!(obj, "vn {} {} {}", num(w.x), num(w.y), num(w.z));
        }
        let appearance = &scene.appearances[part.appearance];
        let textured = appearance.texture.is_some() && mesh.uvs.len() == mesh.positions.len();
        if textured {
            for &[u, v] in &mesh.uvs {
                let _ = writeln!(obj, "vt {} {}", num(u), num(1.0 - v));
            }
        }
        let _ = writeln!(obj, "usemtl {}", material_name(part.appearance, appearance));
        for tri in mesh.indices.chunks(3) {
            let [a, b, c] = [0, 1, 2].map(|i| tri[i] as usize + next_vertex);
            if textured {
                let [ta, tb, tc] = [a, b, c].map(|i| i - next_vertex + next_uv);
                let _ = writeln!(obj, "f {a}/{ta}/{a} {b}/{tb}/{b} {c}/{tc}/{c}");
            } else {
                let _ = writeln!(obj, "f {a}//{a} {b}//{b} {c}//{c}");
            }
        }
        next_vertex += mesh.positions.len();
        if textured {
            next_uv += mesh.uvs.len();
        }
    }

    let mut mtl = String::new();
    let _ = writeln!(mtl, "# procmodel");
    for (index, appearance) in scene.appearances.iter().enumerate() {
        let pbr = appearance.pbr();
        let [r, g, b] = appearance.color;
        let shininess = 1000.0 * (1.0 - pbr.roughness) * (1.0 - pbr.roughness);
        let _ = writeln!(mtl);
        let _ = writeln!(mtl, "newmtl {}", material_name(index, appearance));
        let _ = writeln!(mtl, "Kd {} {} {}", num(r), num(g), num(b));
        let _ = writeln!(mtl, "Ks 0.5 0.5 0.5");
        let _ = writeln!(mtl, "Ns {}", num(shininess));
        if pbr.emissive {
            let _ = writeln!(mtl, "Ke {} {} {}", num(r), num(g), num(b));
        }
        let _ = writeln!(mtl, "d {}", num(appearance.alpha()));
        let _ = writeln!(mtl, "Pr {}", num(pbr.roughness));
        let _ = writeln!(mtl, "Pm {}", num(pbr.metallic));
        let _ = writeln!(mtl, "illum 2");
        if let Some((texture, see_through)) = appearance.texture {
            let file = texture_name(mtl_name, texture as usize);
            let _ = writeln!(mtl, "map_Kd {file}");
            if see_through {
                let _ = writeln!(mtl, "map_d {file}");
            }
        }
    }
    (obj, mtl)
}
