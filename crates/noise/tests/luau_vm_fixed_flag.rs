//! With Luau's `FixMathNoisePrecision` fast flag switched on (a process-global setting, hence
//! this separate test binary with a single test), `math.noise` equals `perlin3_wrapped`, and
//! differs from the default (flag-off) `perlin3` for large coordinates.

use mlua::Lua;
use procmodel_base::Pcg32;
use procmodel_noise::{perlin3, perlin3_wrapped};

#[test]
fn flag_on_vm_matches_perlin3_wrapped() {
    Lua::set_fflag("FixMathNoisePrecision", true).unwrap();
    let lua = Lua::new();
    let mut rng = Pcg32::new(77);
    let n = 200_000;
    let mut pts = Vec::with_capacity(n * 3);
    for i in 0..n * 3 {
        let scale = [600.0, 2.0e6, 2.0e10][i % 3];
        pts.push((rng.next_f64() - 0.5) * scale);
    }
    let bytes: Vec<u8> = pts.iter().flat_map(|v| v.to_le_bytes()).collect();
    let input = lua.create_buffer(bytes).unwrap();
    let output = lua.create_buffer_with_capacity(n * 8).unwrap();
    lua.load(
        r#"
        local input, output, n = ...
        local noise, readf64, writef64 = math.noise, buffer.readf64, buffer.writef64
        for i = 0, n - 1 do
            local o = i * 24
            writef64(output, i * 8, noise(readf64(input, o), readf64(input, o + 8), readf64(input, o + 16)))
        end
        "#,
    )
    .call::<()>((input, output.clone(), n))
    .unwrap();
    let vm: Vec<f64> = output
        .to_vec()
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let mut differs_from_default = 0;
    for (i, &r) in vm.iter().enumerate() {
        let (x, y, z) = (pts[i * 3], pts[i * 3 + 1], pts[i * 3 + 2]);
        let ours = perlin3_wrapped(x, y, z);
        assert_eq!(
            ours.to_bits(),
            r.to_bits(),
            "math.noise({x}, {y}, {z}) = {r}, ours {ours}"
        );
        if perlin3(x, y, z).to_bits() != r.to_bits() {
            differs_from_default += 1;
        }
    }
    assert!(differs_from_default > n / 2, "{differs_from_default}");
}
