//! Blocks allocated on one thread and freed on another, in and out of the pools, and
//! reallocations across classes keep their bytes.

use procmodel_alloc::Allocator;

#[global_allocator]
static GLOBAL: Allocator = Allocator;

fn filled(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect()
}

#[test]
fn growing_and_shrinking_across_classes_keeps_the_bytes() {
    for &steps in &[
        [600usize, 660, 672, 1300, 2000, 650, 1290, 10],
        [641, 1281, 1312, 673, 700, 642, 1, 5000],
    ] {
        let mut v: Vec<u8> = Vec::new();
        for (k, &len) in steps.iter().enumerate() {
            let keep = v.len().min(len);
            let expect: Vec<u8> = v[..keep].to_vec();
            v.truncate(len);
            v.shrink_to_fit();
            v.reserve_exact(len - v.len());
            assert_eq!(&v[..keep], &expect[..], "step {k}");
            v.extend(filled(len - v.len(), k as u8).iter().take(len - keep));
            assert_eq!(v.len(), len);
        }
    }
}

#[test]
fn blocks_cross_threads_and_nothing_is_handed_out_twice() {
    // Each block holds its own id in every word: two live blocks sharing memory would show
    // the other's id.
    let id = |t: u32, round: u32, i: u32| t << 24 | round << 16 | i;
    let (tx, rx) = std::sync::mpsc::channel::<(u32, u32, Vec<Box<[u32]>>)>();
    let producers: Vec<_> = (0..4u32)
        .map(|t| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for round in 0..50u32 {
                    let batch: Vec<Box<[u32]>> = (0..200u32)
                        .map(|i| {
                            // 664, 1312, 648, 1288, 100 and 672 bytes.
                            let words = [166, 328, 162, 322, 25, 168][i as usize % 6];
                            vec![id(t, round, i); words].into_boxed_slice()
                        })
                        .collect();
                    tx.send((t, round, batch)).unwrap();
                }
            })
        })
        .collect();
    drop(tx);
    let mut seen = 0;
    for (t, round, batch) in rx {
        for (i, b) in batch.iter().enumerate() {
            let want = id(t, round, i as u32);
            assert!(
                b.iter().all(|&x| x == want),
                "a block was shared by two owners"
            );
        }
        seen += batch.len();
    }
    for p in producers {
        p.join().unwrap();
    }
    assert_eq!(seen, 4 * 50 * 200);
}
