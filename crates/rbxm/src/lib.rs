//! Streaming writer of Roblox binary model and place files (`.rbxm` / `.rbxl`)
//! from an `rbx_dom_weak::WeakDom`.
//!
//! **Owns:** turning a DOM subtree into the binary format's bytes, written to
//! any `std::io::Write`. The output is byte-identical to `rbx_binary` 3.0.1's
//! `rbx_binary::to_writer(w, dom, refs)` for every DOM: same traversal order
//! and referents, same classes and type ids, same property columns (database
//! aliases, serialized names, migrations, defaults for instances lacking a
//! property), same encodings, SSTR / INST / PROP / PRNT / END chunks, same LZ4
//! compression (`lz4_flex` block format, per chunk). Where rbx_binary fails,
//! this fails with the same error case and message.
//!
//! **How it differs inside:** one traversal records, per class, the instances
//! and which property names feed each column; values are never gathered into
//! per-property lists (they are looked up in blocks of 4096). Each PROP chunk
//! is encoded straight from the instances into one buffer reserved once for
//! the largest fixed-size chunk, and compressed into another that is replaced,
//! never grown; untouched room never becomes resident. The transient memory is
//! about the largest chunk plus its compressed bytes plus 16 bytes per
//! instance (instance, position and parent lists). Parent referents come from
//! the traversal itself; a Ref → referent map exists only for the targets of
//! Ref / Content properties. Files of 10,000 instances or more have their PROP
//! chunks encoded on two threads (`parallel.rs`): the caller's, in file order,
//! and one scoped helper taking small fixed-size columns from the end; the
//! bytes and errors are the one-thread writer's.
//!
//! **Must never:** do file I/O of its own (the caller supplies the writer and
//! buffering), let hash-map iteration order decide the output (classes and
//! columns are sorted by name, shared strings by hash; the only map iterated is
//! an instance's own property map, to pick between two names of one property
//! exactly as rbx_binary picks), or diverge from rbx_binary's bytes — the
//! differential tests in `tests/` are the contract.

mod collect;
mod encode;
mod error;
mod parallel;
mod prefetch;
mod types;

use std::io::Write;

use rbx_dom_weak::{WeakDom, types::Ref, ustr};
use rbx_reflection::ReflectionDatabase;

pub use crate::error::Error;
use crate::{
    collect::{Collected, Referents},
    encode::{ColumnValues, encode_column, put_bytes, put_referents, put_u32},
    types::Type,
};

const FILE_MAGIC_HEADER: &[u8] = b"<roblox!";
const FILE_SIGNATURE: &[u8] = b"\x89\xff\x0d\x0a\x1a\x0a";
const FILE_VERSION: u16 = 0;
const FILE_FOOTER: &[u8] = b"</roblox>";

/// Writes `refs` and their descendants as a binary model (or place, when the
/// roots are a DataModel's services), with the reflection database
/// `rbx_reflection_database::get()` returns — the one `rbx_binary` uses.
pub fn to_writer<W: Write>(writer: W, dom: &WeakDom, refs: &[Ref]) -> Result<(), Error> {
    to_writer_with_database(writer, dom, refs, rbx_reflection_database::get()?)
}

/// [`to_writer`], except that a CFrame rotation is written as a basic-rotation id only when
/// it is exactly that rotation (rbx_binary also gives the id to rotations within float noise
/// of one, e.g. `CFrame.Angles(0, 0, math.rad(90))`'s −4.37e-8 terms, which then read back
/// as exact zeros). For files that must give back the very values they were written from
/// (the result cache). Roblox reads either form.
pub fn to_writer_exact<W: Write>(writer: W, dom: &WeakDom, refs: &[Ref]) -> Result<(), Error> {
    let database = rbx_reflection_database::get()?;
    write(writer, dom, refs, database, true, Threads::Auto)
}

/// [`to_writer`] with a given reflection database (rbx_binary's
/// `Serializer::new().reflection_database(database)`).
pub fn to_writer_with_database<W: Write>(
    writer: W,
    dom: &WeakDom,
    refs: &[Ref],
    database: &ReflectionDatabase<'_>,
) -> Result<(), Error> {
    write(writer, dom, refs, database, false, Threads::Auto)
}

/// For tests only: [`to_writer`] with the PROP chunks encoded on two threads whatever the
/// file's size, the helper thread claiming every chunk it may take before the calling thread
/// starts, so tests reach the two-thread path deterministically.
#[doc(hidden)]
pub fn to_writer_helper_first<W: Write>(
    writer: W,
    dom: &WeakDom,
    refs: &[Ref],
) -> Result<(), Error> {
    let database = rbx_reflection_database::get()?;
    write(writer, dom, refs, database, false, Threads::HelperFirst)
}

/// Who encodes the PROP chunks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Threads {
    /// The calling thread alone for small files, with a helper for large ones.
    Auto,
    /// Always with the helper, which claims its chunks before the calling thread starts.
    HelperFirst,
}

fn write<W: Write>(
    writer: W,
    dom: &WeakDom,
    refs: &[Ref],
    database: &ReflectionDatabase<'_>,
    exact_rotations: bool,
    threads: Threads,
) -> Result<(), Error> {
    let collected = collect::collect(dom, database, refs)?;
    // Room for the largest fixed-size chunk at once, in both buffers: growing them chunk by
    // chunk would copy and leave each old block behind. Room no chunk uses is never touched,
    // so it costs no memory.
    let largest_class = collected.classes.iter().map(|c| c.instances.len());
    let room = 64 + MAX_FIXED_VALUE * largest_class.max().unwrap_or(0);
    let mut out = ChunkWriter {
        writer,
        buf: Vec::with_capacity(room),
        compressed: vec![0; lz4_flex::block::get_maximum_output_size(room)],
    };

    out.writer.write_all(FILE_MAGIC_HEADER)?;
    out.writer.write_all(FILE_SIGNATURE)?;
    out.writer.write_all(&FILE_VERSION.to_le_bytes())?;
    out.writer
        .write_all(&(collected.classes.len() as u32).to_le_bytes())?;
    out.writer
        .write_all(&(collected.instance_count as u32).to_le_bytes())?;
    out.writer.write_all(&[0; 8])?;

    // No META chunk: rbx_binary writes none.
    write_shared_strings(&mut out, &collected)?;

    let mut class_order: Vec<usize> = (0..collected.classes.len()).collect();
    class_order
        .sort_unstable_by(|&a, &b| collected.classes[a].name.cmp(&collected.classes[b].name));
    for &c in &class_order {
        write_instances(&mut out, &collected, c)?;
    }
    let props = prop_chunks(&collected, &class_order);
    let parallel = match threads {
        Threads::Auto => collected.instance_count >= PARALLEL_MIN_INSTANCES && props.len() > 1,
        Threads::HelperFirst => true,
    };
    let helper_first = threads == Threads::HelperFirst;
    let done_in_parallel = parallel
        && parallel::write_props(
            &mut out,
            dom,
            &collected,
            &props,
            exact_rotations,
            helper_first,
        )?;
    if !done_in_parallel {
        let mut scratch = Vec::new();
        for &prop in &props {
            encode_prop(
                &mut out.buf,
                dom,
                &collected,
                prop,
                exact_rotations,
                &mut scratch,
            )?;
            out.finish(b"PROP")?;
        }
    }
    write_parents(&mut out, &collected)?;

    out.writer.write_all(b"END\0")?;
    out.writer.write_all(&0u32.to_le_bytes())?;
    out.writer
        .write_all(&(FILE_FOOTER.len() as u32).to_le_bytes())?;
    out.writer.write_all(&0u32.to_le_bytes())?;
    out.writer.write_all(FILE_FOOTER)?;
    Ok(())
}

/// Files with fewer instances are written on the calling thread alone: a second thread
/// costs more to start than it saves on a small file.
const PARALLEL_MIN_INSTANCES: usize = 10_000;

/// The largest encoding of one fixed-size value (an OptionalCFrame: rotation id, nine
/// floats, position, flag).
const MAX_FIXED_VALUE: usize = 1 + 36 + 12 + 1;

/// The output plus the two buffers every chunk reuses.
struct ChunkWriter<W> {
    writer: W,
    /// The chunk being built (uncompressed).
    buf: Vec<u8>,
    compressed: Vec<u8>,
}

impl<W: Write> ChunkWriter<W> {
    /// Compresses `buf` as one LZ4 block (what `lz4_flex::block::compress`
    /// produces), writes the chunk and clears `buf`.
    fn finish(&mut self, name: &[u8; 4]) -> Result<(), Error> {
        let len = compress(&self.buf, &mut self.compressed);
        write_chunk(
            &mut self.writer,
            name,
            self.buf.len(),
            &self.compressed[..len],
        )?;
        self.buf.clear();
        Ok(())
    }
}

/// Compresses `buf` as one LZ4 block (what `lz4_flex::block::compress` produces) into
/// `compressed`, returning the compressed length.
fn compress(buf: &[u8], compressed: &mut Vec<u8>) -> usize {
    let bound = lz4_flex::block::get_maximum_output_size(buf.len());
    // The compressor wants room for the worst case but writes only the compressed size (a
    // small part of it for typical columns). A fresh zeroed allocation comes from pages that
    // become resident only where written, so the buffer is replaced by a larger fresh one
    // when needed, never grown in place (which would touch all of it).
    if compressed.len() < bound {
        *compressed = Vec::new();
        *compressed = vec![0u8; bound];
    }
    lz4_flex::block::compress_into(buf, compressed)
        .expect("the output buffer holds the maximum compressed size")
}

/// Writes one chunk: its name, compressed and uncompressed lengths, and bytes.
fn write_chunk<W: Write>(
    writer: &mut W,
    name: &[u8; 4],
    uncompressed: usize,
    compressed: &[u8],
) -> Result<(), Error> {
    writer.write_all(name)?;
    writer.write_all(&(compressed.len() as u32).to_le_bytes())?;
    writer.write_all(&(uncompressed as u32).to_le_bytes())?;
    writer.write_all(&0u32.to_le_bytes())?;
    writer.write_all(compressed)?;
    Ok(())
}

fn write_shared_strings<W: Write>(out: &mut ChunkWriter<W>, c: &Collected) -> Result<(), Error> {
    if c.shared_strings.is_empty() {
        return Ok(());
    }
    put_u32(&mut out.buf, 0); // version
    put_u32(&mut out.buf, c.shared_strings.len() as u32);
    for s in &c.shared_strings {
        out.buf.extend_from_slice(&[0; 16]); // hash: rbx_binary writes zeros
        put_bytes(&mut out.buf, s.data());
    }
    out.finish(b"SSTR")
}

fn write_instances<W: Write>(
    out: &mut ChunkWriter<W>,
    c: &Collected,
    class_index: usize,
) -> Result<(), Error> {
    let class = &c.classes[class_index];
    let n = class.instances.len();
    put_u32(&mut out.buf, class.type_id);
    put_bytes(&mut out.buf, class.name.as_bytes());
    out.buf.push(class.is_service as u8);
    put_u32(&mut out.buf, n as u32);
    put_referents(&mut out.buf, (0..n).map(|i| c.referent(class, i)));
    if class.is_service {
        out.buf.resize(out.buf.len() + n, 1);
    }
    out.finish(b"INST")
}

/// One PROP chunk: a column of a class (indices into `Collected::classes` and the class's
/// `columns`), or a class's `Name` column.
#[derive(Clone, Copy)]
pub(crate) enum Prop {
    Column(usize, usize),
    Name(usize),
}

/// Every PROP chunk in file order: classes by name, each class's columns by canonical name,
/// `Name` (from `Instance::name`; a `Name` entry in the property maps is ignored) at its
/// sorted place.
fn prop_chunks(c: &Collected, class_order: &[usize]) -> Vec<Prop> {
    let name = ustr("Name");
    let mut props = Vec::new();
    for &class_index in class_order {
        let class = &c.classes[class_index];
        let mut columns: Vec<usize> = (0..class.columns.len()).collect();
        columns
            .sort_unstable_by(|&a, &b| class.columns[a].canonical.cmp(&class.columns[b].canonical));
        let name_at = columns.partition_point(|&k| class.columns[k].canonical < name);
        columns.retain(|&k| class.columns[k].canonical != name);
        for (slot, &k) in columns.iter().enumerate() {
            if slot == name_at {
                props.push(Prop::Name(class_index));
            }
            props.push(Prop::Column(class_index, k));
        }
        if name_at >= columns.len() {
            props.push(Prop::Name(class_index));
        }
    }
    props
}

/// Appends one PROP chunk's uncompressed bytes to `buf`.
fn encode_prop<'a>(
    buf: &mut Vec<u8>,
    dom: &'a WeakDom,
    c: &Collected<'a>,
    prop: Prop,
    exact_rotations: bool,
    scratch: &mut Vec<u8>,
) -> Result<(), Error> {
    match prop {
        Prop::Name(class_index) => {
            let class = &c.classes[class_index];
            put_u32(buf, class.type_id);
            put_bytes(buf, b"Name");
            buf.push(Type::String as u8);
            for instance in &class.instances {
                put_bytes(buf, instance.name.as_bytes());
            }
            Ok(())
        }
        Prop::Column(class_index, k) => {
            let class = &c.classes[class_index];
            let column = &class.columns[k];
            put_u32(buf, class.type_id);
            put_bytes(buf, column.serialized.as_bytes());
            buf.push(column.ty as u8);
            let values = ColumnValues {
                dom,
                collected: c,
                class,
                column,
                exact_rotations,
            };
            encode_column(&values, buf, scratch)
        }
    }
}

fn write_parents<W: Write>(out: &mut ChunkWriter<W>, c: &Collected) -> Result<(), Error> {
    out.buf.push(0); // version
    put_u32(&mut out.buf, c.instance_count as u32);
    match &c.referents {
        Referents::Positions { parents } => {
            put_referents(&mut out.buf, 0..c.instance_count as i32);
            put_referents(&mut out.buf, parents.iter().copied());
        }
        Referents::Mapped { order } => {
            put_referents(&mut out.buf, order.iter().map(|i| c.ref_ids[&i.referent()]));
            put_referents(
                &mut out.buf,
                order.iter().map(|i| match i.parent() {
                    p if p.is_some() => c.ref_ids.get(&p).copied().unwrap_or(-1),
                    _ => -1,
                }),
            );
        }
    }
    out.finish(b"PRNT")
}
