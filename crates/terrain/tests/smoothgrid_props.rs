//! SmoothGrid property tests: random terrains round-trip byte-stably, and corrupted or random
//! blobs never panic the decoder.

use glam::IVec3;
use procmodel_terrain::*;
use proptest::prelude::*;

fn voxel() -> impl Strategy<Value = Voxel> {
    (0u8..23, any::<u8>(), prop_oneof![Just(0u8), any::<u8>()]).prop_map(|(m, o, l)| {
        Voxel {
            material: Material::from_index(m).unwrap(),
            occupancy: o,
            liquid: l,
        }
        .normalized()
    })
}

fn terrain() -> impl Strategy<Value = Terrain> {
    prop::collection::vec(
        ((-70i32..70, -70i32..70, -70i32..70), voxel(), 1usize..40),
        0..40,
    )
    .prop_map(|edits| {
        let mut t = Terrain::new();
        for ((x, y, z), v, run) in edits {
            for k in 0..run as i32 {
                t.set(IVec3::new(x + k, y, z), v);
            }
        }
        t.compact();
        t
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn round_trip(t in terrain()) {
        let b = smoothgrid::encode(&t);
        let back = smoothgrid::decode(&b).unwrap();
        prop_assert_eq!(&back, &t);
        prop_assert_eq!(smoothgrid::encode(&back), b);
    }

    #[test]
    fn corrupted_blobs_never_panic(
        t in terrain(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut b = smoothgrid::encode(&t);
        for (i, v) in flips {
            let n = b.len();
            b[i.index(n)] = v;
        }
        if truncate {
            let n = b.len();
            b.truncate(cut.index(n + 1));
        }
        match smoothgrid::decode(&b) {
            Ok(d) => {
                // Whatever decoded re-encodes to something that decodes to the same terrain.
                let again = smoothgrid::decode(&smoothgrid::encode(&d)).unwrap();
                prop_assert_eq!(again, d);
            }
            Err(TerrainError::SmoothGrid { offset, .. }) => prop_assert!(offset <= b.len()),
            Err(e) => prop_assert!(false, "unexpected error kind {e}"),
        }
    }

    #[test]
    fn random_bytes_never_panic(tail in prop::collection::vec(any::<u8>(), 0..2000)) {
        let mut b = vec![1, 5];
        b.extend(tail);
        let _ = smoothgrid::decode(&b);
    }
}
