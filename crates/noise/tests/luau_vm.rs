//! Bit-equality of `perlin3`/`perlin2` with `math.noise` evaluated in the real Luau VM
//! (mlua 0.12, vendored), over 1.2 million pseudo-random points batched in one Luau loop.

use mlua::Lua;
use procmodel_base::Pcg32;
use procmodel_noise::{perlin2, perlin3};

/// Point generator covering ordinary, negative, large (beyond f32 integer precision and
/// beyond i32), tiny, integer and half-integer coordinates.
fn coord(rng: &mut Pcg32, kind: u32) -> f64 {
    let u = rng.next_f64();
    match kind % 8 {
        0..=2 => (u - 0.5) * 600.0,
        3 => (u - 0.5) * 2.0e6,
        4 => (u - 0.5) * 2.0e10,
        5 => (u - 0.5) * 1.0e-6,
        6 => ((u - 0.5) * 1024.0).round(),
        _ => ((u - 0.5) * 1024.0).round() + 0.5 * f64::from(rng.next_u32() % 2),
    }
}

fn points(n: usize, seed: i64) -> Vec<f64> {
    let mut rng = Pcg32::new(seed);
    let mut v = Vec::with_capacity(n * 3);
    for _ in 0..n {
        for _ in 0..3 {
            let k = rng.next_u32();
            v.push(coord(&mut rng, k));
        }
    }
    v
}

/// Runs `math.noise` in the VM over `pts` (x, y, z triples); `dims` 3 or 2 (z omitted).
fn vm_noise(lua: &Lua, pts: &[f64], dims: u32) -> Vec<f64> {
    let bytes: Vec<u8> = pts.iter().flat_map(|v| v.to_le_bytes()).collect();
    let input = lua.create_buffer(bytes).unwrap();
    let n = pts.len() / 3;
    let output = lua.create_buffer_with_capacity(n * 8).unwrap();
    let f: mlua::Function = lua
        .load(
            r#"
            local input, output, n, dims = ...
            local noise, readf64, writef64 = math.noise, buffer.readf64, buffer.writef64
            if dims == 3 then
                for i = 0, n - 1 do
                    local o = i * 24
                    writef64(output, i * 8, noise(readf64(input, o), readf64(input, o + 8), readf64(input, o + 16)))
                end
            else
                for i = 0, n - 1 do
                    local o = i * 24
                    writef64(output, i * 8, noise(readf64(input, o), readf64(input, o + 8)))
                end
            end
            "#,
        )
        .into_function()
        .unwrap();
    f.call::<()>((input, output.clone(), n, dims)).unwrap();
    output
        .to_vec()
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn golden_matches_vm() {
    let lua = Lua::new();
    let v: f64 = lua.load("return math.noise(1.158, 5.723)").eval().unwrap();
    assert_eq!(v.to_bits(), perlin2(1.158, 5.723).to_bits());
    assert!((v - 0.483_975_321_054_46).abs() < 1e-12);
}

#[test]
fn million_points_3d_bit_identical() {
    let lua = Lua::new();
    let pts = points(1_000_000, 0x5eed);
    let vm = vm_noise(&lua, &pts, 3);
    let mut bad = Vec::new();
    for (i, &r) in vm.iter().enumerate() {
        let (x, y, z) = (pts[i * 3], pts[i * 3 + 1], pts[i * 3 + 2]);
        let ours = perlin3(x, y, z);
        if !same(ours, r) {
            bad.push((x, y, z, r, ours));
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches, first: {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
}

#[test]
fn points_2d_bit_identical() {
    let lua = Lua::new();
    let pts = points(200_000, 0x2d);
    let vm = vm_noise(&lua, &pts, 2);
    let mut bad = Vec::new();
    for (i, &r) in vm.iter().enumerate() {
        let (x, y) = (pts[i * 3], pts[i * 3 + 1]);
        if !same(perlin2(x, y), r) || !same(perlin3(x, y, 0.0), r) {
            bad.push((x, y, r, perlin2(x, y)));
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches, first: {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
}

#[test]
fn special_values_bit_identical() {
    let lua = Lua::new();
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        255.0,
        256.0,
        257.5,
        -256.25,
        1e-45,
        -1e-45,
        1e-30,
        2147483647.0,
        2147483648.0,
        -2147483648.0,
        -2147483649.0,
        1e20,
        -1e20,
        16777217.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1e300,
    ];
    let mut pts = Vec::new();
    for &a in &specials {
        for &b in &specials {
            for &c in &[0.0, -0.0, 0.25, -3.5, 1e10] {
                pts.extend([a, b, c]);
            }
        }
    }
    let vm = vm_noise(&lua, &pts, 3);
    for (i, &r) in vm.iter().enumerate() {
        let (x, y, z) = (pts[i * 3], pts[i * 3 + 1], pts[i * 3 + 2]);
        assert!(
            same(perlin3(x, y, z), r),
            "math.noise({x}, {y}, {z}) = {r}, ours {}",
            perlin3(x, y, z)
        );
    }
    let vm2 = vm_noise(&lua, &pts, 2);
    for (i, &r) in vm2.iter().enumerate() {
        let (x, y) = (pts[i * 3], pts[i * 3 + 1]);
        assert!(
            same(perlin2(x, y), r),
            "math.noise({x}, {y}) = {r}, ours {}",
            perlin2(x, y)
        );
    }
}
