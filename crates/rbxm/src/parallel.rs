//! The PROP chunks of a large file encoded and compressed on two threads. The caller takes
//! chunks from the front, in file order, and writes each as soon as it is encoded; one
//! helper thread takes the small fixed-size columns from the back and hands them over
//! compressed. Each chunk is claimed once, so when the caller reaches a chunk the helper
//! took, every later chunk the helper could take is done or in progress. The bytes, and the
//! error a bad value gives (the first failing chunk in file order, after the chunks before
//! it were written), are those of the one-thread writer.
//!
//! Memory: the helper only takes columns of at most 12 bytes a value, so its buffers hold
//! one such column (1.2 MB for 100,000 instances); the caller's buffers are the writer's
//! own, as without the helper.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use rbx_dom_weak::WeakDom;

use crate::{
    ChunkWriter, Error, Prop, collect::Collected, compress, encode_prop, types::Type, write_chunk,
};

/// A chunk the helper encoded and compressed.
struct Ready {
    uncompressed: usize,
    compressed: Vec<u8>,
}

/// Columns whose values take at most 12 bytes each (so a helper's buffer never holds
/// more than 12 bytes an instance).
fn small_fixed(ty: Type) -> bool {
    matches!(
        ty,
        Type::Bool
            | Type::Int32
            | Type::Float32
            | Type::Float64
            | Type::UDim
            | Type::Faces
            | Type::Axes
            | Type::BrickColor
            | Type::Color3
            | Type::Vector2
            | Type::Vector3
            | Type::Enum
            | Type::Ref
            | Type::Vector3int16
            | Type::NumberRange
            | Type::Color3uint8
            | Type::Int64
    )
}

/// Writes the `props` chunks. Returns `Ok(false)`, having written nothing, when no helper
/// thread could be started (the caller then writes them alone). With `helper_first` the
/// helper claims every chunk it may take before the caller starts (for tests).
pub(crate) fn write_props<'a, W: Write>(
    out: &mut ChunkWriter<W>,
    dom: &'a WeakDom,
    c: &Collected<'a>,
    props: &[Prop],
    exact_rotations: bool,
    helper_first: bool,
) -> Result<bool, Error> {
    let helper_may_take: Vec<usize> = (0..props.len())
        .rev()
        .filter(|&j| match props[j] {
            Prop::Column(class, k) => small_fixed(c.classes[class].columns[k].ty),
            Prop::Name(_) => false,
        })
        .collect();
    if helper_may_take.is_empty() {
        return Ok(false);
    }
    let taken: Vec<AtomicBool> = props.iter().map(|_| AtomicBool::new(false)).collect();
    if helper_first {
        for &j in &helper_may_take {
            taken[j].store(true, Ordering::Relaxed);
        }
    }
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, Result<Ready, Error>)>();
    std::thread::scope(|s| {
        let helper = std::thread::Builder::new()
            .name("procmodel-rbxm".into())
            .spawn_scoped(s, || {
                let tx = tx;
                // Room for the largest column it may take, resident only where written.
                let largest = c.classes.iter().map(|class| class.instances.len()).max();
                let mut buf = Vec::with_capacity(64 + 12 * largest.unwrap_or(0));
                let mut compressed = Vec::new();
                let mut scratch = Vec::new();
                for &j in &helper_may_take {
                    // The caller claims in file order: once it has one, it has every
                    // chunk before it.
                    let claimed = helper_first || !taken[j].swap(true, Ordering::AcqRel);
                    if stop.load(Ordering::Relaxed) || !claimed {
                        break;
                    }
                    buf.clear();
                    let ready =
                        encode_prop(&mut buf, dom, c, props[j], exact_rotations, &mut scratch).map(
                            |()| {
                                let len = compress(&buf, &mut compressed);
                                Ready {
                                    uncompressed: buf.len(),
                                    compressed: compressed[..len].to_vec(),
                                }
                            },
                        );
                    if tx.send((j, ready)).is_err() {
                        break;
                    }
                }
            });
        if helper.is_err() {
            return Ok(false);
        }
        let result = write_in_order(out, dom, c, props, exact_rotations, &taken, &rx);
        // On an error the helper stops after its current chunk.
        stop.store(true, Ordering::Relaxed);
        drop(rx);
        result.map(|()| true)
    })
}

/// The caller's side: every chunk in file order, encoded here unless the helper claimed it
/// first, in which case its bytes are awaited.
fn write_in_order<'a, W: Write>(
    out: &mut ChunkWriter<W>,
    dom: &'a WeakDom,
    c: &Collected<'a>,
    props: &[Prop],
    exact_rotations: bool,
    taken: &[AtomicBool],
    rx: &mpsc::Receiver<(usize, Result<Ready, Error>)>,
) -> Result<(), Error> {
    let mut from_helper: Vec<Option<Result<Ready, Error>>> = props.iter().map(|_| None).collect();
    let mut scratch = Vec::new();
    for (j, &prop) in props.iter().enumerate() {
        if !taken[j].swap(true, Ordering::AcqRel) {
            encode_prop(&mut out.buf, dom, c, prop, exact_rotations, &mut scratch)
                .inspect_err(|_| out.buf.clear())?;
            out.finish(b"PROP")?;
            continue;
        }
        while from_helper[j].is_none() {
            match rx.recv() {
                Ok((k, r)) => from_helper[k] = Some(r),
                // The helper sends every chunk it claims; gone early means it panicked.
                Err(_) => {
                    return Err(Error::Io(std::io::Error::other(
                        "the thread encoding PROP chunks stopped early",
                    )));
                }
            }
        }
        let ready = from_helper[j].take().expect("received above")?;
        write_chunk(
            &mut out.writer,
            b"PROP",
            ready.uncompressed,
            &ready.compressed,
        )?;
    }
    Ok(())
}
