//! Heightmap exports: PNG16 (linear, no gamma), R16/R32 little-endian, the sidecar, size
//! snapping and splat maps.

use procmodel_terrain::*;

fn field() -> Heightfield {
    let w = World::new(WorldConfig {
        seed: 2.0,
        zones: vec![Zone::circle(20.0, 20.0, 0.0, 10.0, 30.0).with_material(Material::Salt)],
        ..WorldConfig::default()
    })
    .unwrap();
    w.heightfield(
        SampleRect {
            min: [-3, 2],
            size: [20, 12],
        },
        false,
    )
}

fn png_chunks(b: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 8;
    while i + 8 <= b.len() {
        let len = u32::from_be_bytes(b[i..i + 4].try_into().unwrap()) as usize;
        out.push(String::from_utf8_lossy(&b[i + 4..i + 8]).into_owned());
        i += 12 + len;
    }
    out
}

#[test]
fn png16_r16_r32_and_sidecar() {
    let hf = field();
    let e = HeightmapExport::new(&hf, HeightRange::Auto, SizeSnap::Exact).unwrap();
    let (lo, hi) = hf.range().unwrap();
    assert_eq!(e.values.iter().copied().min(), Some(0));
    assert_eq!(e.values.iter().copied().max(), Some(65535));
    let png = e.png16().unwrap();
    let chunks = png_chunks(&png);
    assert_eq!(chunks.first().map(String::as_str), Some("IHDR"));
    for c in ["gAMA", "sRGB", "iCCP", "cHRM"] {
        assert!(!chunks.iter().any(|x| x == c), "{c} in {chunks:?}");
    }
    let dec = png::Decoder::new(std::io::Cursor::new(&png));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (20, 12));
    assert_eq!(info.bit_depth, png::BitDepth::Sixteen);
    assert_eq!(info.color_type, png::ColorType::Grayscale);
    let px: Vec<u16> = buf
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect();
    assert_eq!(px, e.values);
    let r16 = e.r16();
    assert_eq!(r16.len(), 20 * 12 * 2);
    assert_eq!(u16::from_le_bytes([r16[2], r16[3]]), e.values[1]);
    let r32 = e.r32();
    assert_eq!(
        f32::from_le_bytes(r32[4..8].try_into().unwrap()),
        hf.heights[1]
    );
    let j: serde_json::Value = serde_json::from_str(&e.sidecar_json()).unwrap();
    assert_eq!(j["width"], 20);
    assert_eq!(j["min_height"].as_f64().unwrap() as f32, lo);
    assert_eq!(j["max_height"].as_f64().unwrap() as f32, hi);
    assert_eq!(j["studs_per_pixel"], 4.0);
    assert_eq!(j["origin"], serde_json::json!([-12.0, 8.0]));
    // A fixed (global) range: values follow it.
    let f = HeightmapExport::new(&hf, HeightRange::Fixed(-100.0, 100.0), SizeSnap::Exact).unwrap();
    let want = ((f64::from(hf.heights[0]) + 100.0) / 200.0 * 65535.0).round() as u16;
    assert_eq!(f.values[0], want);
    assert!(HeightmapExport::new(&hf, HeightRange::Fixed(1.0, f32::NAN), SizeSnap::Exact).is_err());
}

#[test]
fn size_snapping() {
    assert_eq!(snap_size(20, SizeSnap::PowerOfTwoPlusOne).unwrap(), 33);
    assert_eq!(snap_size(257, SizeSnap::PowerOfTwoPlusOne).unwrap(), 257);
    assert_eq!(snap_size(258, SizeSnap::PowerOfTwoPlusOne).unwrap(), 513);
    assert_eq!(snap_size(1000, SizeSnap::Unreal).unwrap(), 1009);
    assert_eq!(snap_size(4033, SizeSnap::Unreal).unwrap(), 4033);
    assert!(snap_size(9000, SizeSnap::Unreal).is_err());
    assert!(snap_size(4098, SizeSnap::PowerOfTwoPlusOne).is_err());
    let e = HeightmapExport::new(&field(), HeightRange::Auto, SizeSnap::PowerOfTwoPlusOne).unwrap();
    assert_eq!((e.sidecar.width, e.sidecar.height), (33, 33));
    assert_eq!(e.values.len(), 33 * 33);
}

#[test]
fn splat_maps_pack_four_materials() {
    let hf = field();
    let palette = [
        Material::Salt,
        Material::Grass,
        Material::Ground,
        Material::Mud,
        Material::LeafyGrass,
    ];
    let maps = splat_maps(&hf, &palette).unwrap();
    assert_eq!(maps.len(), 2);
    assert_eq!(maps[1].1, vec![Material::LeafyGrass]);
    let dec = png::Decoder::new(std::io::Cursor::new(&maps[0].0));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    for (i, m) in hf.materials.iter().enumerate() {
        for k in 0..4 {
            assert_eq!(buf[i * 4 + k] == 255, palette[k] == *m);
        }
    }
    assert!(hf.materials.contains(&Material::Salt));
}
