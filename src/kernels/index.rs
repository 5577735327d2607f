//! Gather / scatter along one dim, and whole-slice selects and writes along one dim
//! (index_select, index_add / index_copy, and advanced indexing's rows form).
//!
//! Note: no per-element div/mod. A kernel walks its index row by row: the storage offset
//! of each row's start comes from an odometer over the leading dims (`Layout::offsets`),
//! and the row itself is a strided or contiguous run. Gathers and selects split rows over
//! the pool (each output element is written once, so threads cannot change results);
//! writes that may add into the same element twice run in index order on one thread.

use std::mem::MaybeUninit;

use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::kernels::traits::Arith;
use crate::kernels::{
    contiguous_data, par_chunks_map, par_chunks_mut, par_map, par_map_owned, PARALLEL_GRAIN,
};
use crate::layout::Layout;
use crate::shape::{contiguous_strides, Dims};
use crate::storage::Data;

#[inline(always)]
fn check_index(i: i64, size: usize, dim: usize) -> Result<usize> {
    // A negative i is a huge u64, so one compare covers both ends.
    if (i as u64) < size as u64 {
        Ok(i as usize)
    } else {
        Err(out_of_bounds(i, size, dim))
    }
}

#[cold]
fn out_of_bounds(i: i64, size: usize, dim: usize) -> Error {
    Error::runtime(format!(
        "index {i} is out of bounds for dimension {dim} with size {size}"
    ))
}

/// Output rows per task when a kernel splits its rows over the pool.
fn rows_per_task(row_len: usize) -> usize {
    (PARALLEL_GRAIN / 8 / row_len.max(1)).max(1)
}

/// The walk of an index of shape `ishape` (a scalar counts as `[1]`) over a row-major
/// tensor of `shape`: the storage offset where each index row starts (the index's last
/// dim is a row; `dim` contributes nothing, the index supplies it), the row length,
/// and the strides along the row and along `dim`.
struct RowWalk {
    starts: Vec<usize>,
    row_len: usize,
    row_stride: usize,
    dim_stride: usize,
    /// Whether the row runs along `dim` itself (the index's last dim is `dim`).
    along_dim: bool,
}

impl RowWalk {
    fn new(ishape: &[usize], shape: &[usize], dim: usize) -> Result<RowWalk> {
        // A scalar is a one-element line here.
        let one: Dims = smallvec::smallvec![1];
        let ishape = if ishape.is_empty() { &one[..] } else { ishape };
        let shape = if shape.is_empty() { &one[..] } else { shape };
        if ishape.len() != shape.len() {
            return Err(Error::runtime(
                "Index tensor must have the same number of dimensions as input tensor",
            ));
        }
        let strides = contiguous_strides(shape);
        let last = ishape.len() - 1;
        let mut lead_strides: Dims = strides[..last].into();
        if dim < last {
            lead_strides[dim] = 0;
        }
        let lead = Layout {
            shape: ishape[..last].into(),
            strides: lead_strides,
            offset: 0,
        };
        Ok(RowWalk {
            starts: lead.offsets().collect(),
            row_len: ishape[last],
            row_stride: strides[last],
            dim_stride: strides[dim.min(last)],
            along_dim: dim == last,
        })
    }
}

/// out[..., i, ...] = src[..., index[..., i, ...], ...] along `dim`; out has index's shape.
pub fn gather<T: Element>(src: &Data, dim: usize, index: &Data) -> Result<Vec<T>> {
    // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
    let (idx, data) = unsafe { (contiguous_data::<i64>(index), contiguous_data::<T>(src)) };
    let sshape = &src.layout().shape;
    let size = sshape.get(dim).copied().unwrap_or(1);
    let walk = RowWalk::new(&index.layout().shape, sshape, dim)?;
    let n = idx.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut out: Vec<T> = Vec::with_capacity(n);
    let dst = &mut out.spare_capacity_mut()[..n];
    let rows = rows_per_task(walk.row_len);
    let task = |(t, (d, ix)): (usize, (&mut [MaybeUninit<T>], &[i64]))| -> Result<()> {
        let starts = &walk.starts[t * rows..];
        let rows = d.chunks_mut(walk.row_len).zip(ix.chunks(walk.row_len));
        let (row_stride, dim_stride) = (walk.row_stride, walk.dim_stride);
        for ((d, ix), &start) in rows.zip(starts) {
            if walk.along_dim && dim_stride == 1 {
                // Along a contiguous last dim: one line, one bounds check per element.
                let line = &data[start..start + size];
                for (o, &i) in d.iter_mut().zip(ix) {
                    o.write(line[check_index(i, size, dim)?]);
                }
            } else if walk.along_dim {
                for (o, &i) in d.iter_mut().zip(ix) {
                    o.write(data[start + check_index(i, size, dim)? * dim_stride]);
                }
            } else {
                for (j, (o, &i)) in d.iter_mut().zip(ix).enumerate() {
                    let at = start + j * row_stride + check_index(i, size, dim)? * dim_stride;
                    o.write(data[at]);
                }
            }
        }
        Ok(())
    };
    let chunk = rows * walk.row_len;
    if n >= PARALLEL_GRAIN {
        let results = par_chunks_map(dst, chunk, |i, d| {
            let ix = &idx[i * chunk..][..d.len()];
            task((i, (d, ix)))
        });
        results.into_iter().collect::<Result<()>>()?;
    } else {
        dst.chunks_mut(chunk)
            .zip(idx.chunks(chunk))
            .enumerate()
            .try_for_each(task)?;
    }
    // SAFETY: every element of `dst` was written: the chunks of `dst` and of the index
    // pair up exactly, and a task that failed returned the error before this line.
    unsafe { out.set_len(n) };
    Ok(out)
}

/// zeros(`bshape`) with out[..., index[i], ...] += src[i] along `dim`.
pub fn scatter_add<T: Arith>(
    bshape: &[usize],
    dim: usize,
    index: &Data,
    src: &Data,
) -> Result<Vec<T>> {
    let n = crate::shape::checked_numel(bshape)?;
    crate::storage::ensure_allocatable(n, std::mem::size_of::<T>())?;
    scatter_into(vec![T::zero(); n], bshape, dim, index, src, true)
}

/// `out` (row-major over `bshape`) with src[i] written at out[..., index[i], ...] along
/// `dim` (added when `accumulate`, else the last write wins), in index order. The
/// callers have checked that index fits in both `src` and `bshape` apart from `dim`.
pub fn scatter_into<T: Arith>(
    mut out: Vec<T>,
    bshape: &[usize],
    dim: usize,
    index: &Data,
    src: &Data,
    accumulate: bool,
) -> Result<Vec<T>> {
    // SAFETY: read-only; dropped before returning; `out` is the caller's fresh Vec.
    let (idx, vals) = unsafe { (contiguous_data::<i64>(index), contiguous_data::<T>(src)) };
    let (ishape, sshape) = (&index.layout().shape, &src.layout().shape);
    // One walk for each kind of write, so neither tests `accumulate` per element.
    // Along the last dim, with the same leading dims everywhere, the rows of index, out
    // and src pair up one to one and each is one contiguous line.
    let nd = ishape.len();
    let lines = nd > 0
        && dim == nd - 1
        && bshape.len() == nd
        && bshape[nd - 1] > 0
        && sshape.len() == nd
        && ishape[..nd - 1] == bshape[..nd - 1]
        && ishape[..nd - 1] == sshape[..nd - 1];
    let write = |out: &mut [T], idx: &[i64], vals: &[T], level: usize| {
        let shapes = [&ishape[..], bshape, sshape];
        if lines {
            let widths = (ishape[nd - 1], bshape[nd - 1], sshape[nd - 1]);
            match accumulate {
                true => scatter_lines(out, idx, vals, widths, dim, |o: &mut T, v| *o = *o + v),
                false => scatter_lines(out, idx, vals, widths, dim, |o: &mut T, v| *o = v),
            }
        } else if accumulate {
            walk_scatter(idx, shapes, dim, level, |o, v| out[o] = out[o] + vals[v])
        } else {
            walk_scatter(idx, shapes, dim, level, |o, v| out[o] = vals[v])
        }
    };
    // Index entries that differ along a dim other than `dim` never land on the same
    // element: slabs along dim 0 (when that is not `dim`) go to different threads, each
    // still in index order. The first error in slab order is the one reported.
    let slab = |shape: &[usize]| shape.get(1..).map_or(0, |s| s.iter().product::<usize>());
    let (islab, oslab, sslab) = (slab(ishape), slab(bshape), slab(sshape));
    if dim > 0 && idx.len() >= PARALLEL_GRAIN && islab > 0 && oslab > 0 && sslab > 0 {
        // The index may have fewer slabs than `out`: its length bounds the tasks.
        let slabs = idx.len() / islab;
        let results = par_chunks_map(&mut out[..slabs * oslab], oslab, |s, o| {
            write(
                o,
                &idx[s * islab..][..islab],
                &vals[s * sslab..][..sslab],
                1,
            )
        });
        results.into_iter().collect::<Result<()>>()?;
    } else {
        write(&mut out, &idx, &vals, 0)?;
    }
    Ok(out)
}

/// `scatter_into`'s walk when index, out and src are rows of widths `(index, out, src)`
/// that pair up one to one: each line of `out` is indexed directly (one range check per
/// element, no offset arithmetic beyond it), in index order.
fn scatter_lines<T: Copy>(
    out: &mut [T],
    idx: &[i64],
    vals: &[T],
    (iw, ow, sw): (usize, usize, usize),
    dim: usize,
    write: impl Fn(&mut T, T),
) -> Result<()> {
    if iw == 0 {
        return Ok(());
    }
    let rows = idx
        .chunks_exact(iw)
        .zip(out.chunks_exact_mut(ow))
        .zip(vals.chunks(sw));
    for ((ix, line), src) in rows {
        for (&i, &v) in ix.iter().zip(src) {
            if (i as u64) >= line.len() as u64 {
                return Err(out_of_bounds(i, line.len(), dim));
            }
            write(&mut line[i as usize], v);
        }
    }
    Ok(())
}

/// `f(out_offset, src_offset)` for each element of `index`, in row-major order: where
/// it lands in a row-major `bshape` (its value along `dim`, checked against the size
/// there) and where its value sits in a row-major `src_shape`. The callers have checked
/// that index fits in both apart from `dim`.
pub fn for_each_scatter(
    index: &Data,
    bshape: &[usize],
    src_shape: &[usize],
    dim: usize,
    f: impl FnMut(usize, usize),
) -> Result<()> {
    // SAFETY: read-only; dropped before returning.
    let idx = unsafe { contiguous_data::<i64>(index) };
    walk_scatter(&idx, [&index.layout().shape, bshape, src_shape], dim, 0, f)
}

/// `for_each_scatter` over a row-major index, with the first `level` dims of the three
/// shapes (index, output, source) left out: `idx`, and the offsets passed to `f`, cover
/// one slab below them. Errors name `dim` as the caller knows it.
fn walk_scatter(
    idx: &[i64],
    [ishape, bshape, src_shape]: [&[usize]; 3],
    dim: usize,
    level: usize,
    mut f: impl FnMut(usize, usize),
) -> Result<()> {
    let [ishape, bshape, src_shape] =
        [ishape, bshape, src_shape].map(|shape| &shape[level.min(shape.len())..]);
    let (shown_dim, dim) = (dim, dim - level);
    let size = bshape.get(dim).copied().unwrap_or(1);
    let to = RowWalk::new(ishape, bshape, dim)?;
    // The values are read at the index's own positions: `dim` walks like any other dim.
    let from = RowWalk::new(ishape, src_shape, usize::MAX)?;
    if idx.is_empty() {
        return Ok(());
    }
    let (row_stride, dim_stride, src_stride) = (to.row_stride, to.dim_stride, from.row_stride);
    for ((ix, &start), &vstart) in idx.chunks(to.row_len).zip(&to.starts).zip(&from.starts) {
        // The two shapes of walk in their own loops (no per-element test of which).
        if to.along_dim {
            for (j, &i) in ix.iter().enumerate() {
                let at = start + check_index(i, size, shown_dim)? * dim_stride;
                f(at, vstart + j * src_stride);
            }
        } else {
            for (j, &i) in ix.iter().enumerate() {
                let at = start + j * row_stride + check_index(i, size, shown_dim)? * dim_stride;
                f(at, vstart + j * src_stride);
            }
        }
    }
    Ok(())
}

/// A row-major shape split around `dim`: the element counts before it, along it and
/// after it (a scalar is one element along its only dim).
fn around(shape: &[usize], dim: usize) -> (usize, usize, usize) {
    let outer = shape[..dim.min(shape.len())].iter().product();
    let len = shape.get(dim).copied().unwrap_or(1);
    let inner = shape.get(dim + 1..).map_or(1, |s| s.iter().product());
    (outer, len, inner)
}

/// The first index outside `0..len`.
fn first_out_of_range(index: &[i64], len: usize) -> Option<i64> {
    first_refused(index, move |i| (i as u64) < len as u64)
}

/// Index elements one task of an index pass reads.
const INDEX_CHUNK: usize = 1 << 14;

/// The first element of `index` that `ok` refuses. Blocks are tested whole, without a
/// branch per element (which vectorizes), split over the team when long; only when one
/// fails is the culprit looked for.
fn first_refused(index: &[i64], ok: impl Fn(i64) -> bool + Sync) -> Option<i64> {
    let all_ok = |block: &[i64]| all_accepted(block, &ok);
    let fine = if index.len() >= PARALLEL_GRAIN {
        let blocks = index.len().div_ceil(INDEX_CHUNK);
        let block = |t: usize| &index[t * INDEX_CHUNK..index.len().min((t + 1) * INDEX_CHUNK)];
        par_map(blocks, |t| all_ok(block(t))).into_iter().all(|b| b)
    } else {
        all_ok(index)
    };
    match fine {
        true => None,
        false => index.iter().copied().find(|&i| !ok(i)),
    }
}

/// Whether `ok` holds for every element of `block`, tested without a branch. Out of
/// line so that `ok`'s captures (the bounds) are known not to change inside the loop (see
/// elementwise::map_run); inlined into a task closure, they were reloaded per element
/// and the loop stayed scalar.
#[inline(never)]
fn all_accepted(block: &[i64], ok: &impl Fn(i64) -> bool) -> bool {
    block.iter().fold(true, |all, &i| all & ok(i))
}

/// `index_select`: `out[o, k, i] = src[o, index[k], i]`, splitting `src` around `dim`
/// (out has index.len() along `dim`). `Err(i)`: the first index out of range.
pub fn select_rows<T: Element>(
    src: &Data,
    dim: usize,
    index: &[i64],
) -> std::result::Result<Vec<T>, i64> {
    let (outer, len, inner) = around(&src.layout().shape, dim);
    if let Some(bad) = first_out_of_range(index, len) {
        return Err(bad);
    }
    let n = outer * index.len() * inner;
    if n == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
    let data = unsafe { contiguous_data::<T>(src) };
    let mut out: Vec<T> = Vec::with_capacity(n);
    let dst = &mut out.spare_capacity_mut()[..n];
    let rows = rows_per_task(inner);
    // Output row r is slice (o, k) = (r / index.len(), r % index.len()).
    let task = |(t, d): (usize, &mut [MaybeUninit<T>])| {
        let first = t * rows;
        let (mut o, mut k) = (first / index.len(), first % index.len());
        if inner == 1 {
            // Rows of one element (take, x[idx] of a vector): a plain gather.
            for x in d.iter_mut() {
                x.write(data[o * len + index[k] as usize]);
                k += 1;
                if k == index.len() {
                    (o, k) = (o + 1, 0);
                }
            }
            return;
        }
        for row in d.chunks_mut(inner) {
            let start = (o * len + index[k] as usize) * inner;
            row.write_copy_of_slice(&data[start..start + inner]);
            k += 1;
            if k == index.len() {
                (o, k) = (o + 1, 0);
            }
        }
    };
    if n >= PARALLEL_GRAIN {
        par_chunks_mut(dst, rows * inner, |t, d| task((t, d)));
    } else {
        dst.chunks_mut(rows * inner).enumerate().for_each(task);
    }
    // SAFETY: every element of `dst` was written: its chunks are whole rows of `inner`.
    unsafe { out.set_len(n) };
    Ok(out)
}

/// `index_copy` / `index_add` along `dim`: `out` (row-major over `shape`) with
/// `src[o, k, i]` written (added when `accumulate`) at `out[o, index[k], i]`, in index
/// order, so repeated indices add up in order and the last copy wins.
/// `Err(i)`: the first index out of range.
pub fn write_rows<T: Arith>(
    mut out: Vec<T>,
    shape: &[usize],
    dim: usize,
    index: &[i64],
    src: &Data,
    accumulate: bool,
) -> std::result::Result<Vec<T>, i64> {
    write_rows_into(&mut out, shape, dim, index, src, accumulate)?;
    Ok(out)
}

/// `write_rows` into `out` itself (an in-place `index_add_`): the indices are checked
/// before anything is written.
pub fn write_rows_into<T: Arith>(
    out: &mut [T],
    shape: &[usize],
    dim: usize,
    index: &[i64],
    src: &Data,
    accumulate: bool,
) -> std::result::Result<(), i64> {
    let (outer, len, inner) = around(shape, dim);
    if let Some(bad) = first_out_of_range(index, len) {
        return Err(bad);
    }
    if outer * index.len() * inner == 0 {
        return Ok(());
    }
    // SAFETY: read-only; dropped before returning; `out` is the caller's fresh Vec.
    let vals = unsafe { contiguous_data::<T>(src) };
    let write = |to: &mut [T], row: &[T]| {
        if accumulate {
            crate::kernels::copy::update_zip_run(to, row, &|d, v| d + v);
        } else {
            to.copy_from_slice(row);
        }
    };
    let slab = |(dst, from): (&mut [T], &[T])| {
        for (&i, row) in index.iter().zip(from.chunks(inner)) {
            let start = i as usize * inner;
            write(&mut dst[start..start + inner], row);
        }
    };
    // Slabs (one `o` each) are disjoint, so they can go to different threads.
    let (slab_len, from_len) = (len * inner, index.len() * inner);
    if outer == 1 && from_len >= PARALLEL_GRAIN && len > 1 {
        // One slab: threads own ranges of its rows, each going through the whole index
        // and taking the entries that land in its range, still in index order.
        let rows_per_task = len.div_ceil(4 * crate::threads::num_threads().max(1));
        let src_rows = vals.chunks(inner);
        par_chunks_mut(out, rows_per_task * inner, |t, dst| {
            let rows = t * rows_per_task..t * rows_per_task + dst.len() / inner;
            for (&i, row) in index.iter().zip(src_rows.clone()) {
                if rows.contains(&(i as usize)) {
                    let start = (i as usize - rows.start) * inner;
                    write(&mut dst[start..start + inner], row);
                }
            }
        });
    } else if outer > 1 && outer * from_len >= PARALLEL_GRAIN {
        par_chunks_mut(out, slab_len, |o, dst| {
            slab((dst, &vals[o * from_len..][..from_len]))
        });
    } else {
        out.chunks_mut(slab_len)
            .zip(vals.chunks(from_len))
            .for_each(slab);
    }
    Ok(())
}

/// Move values between two layouts over one virtual storage: scatter-add `x` (row-major,
/// shape `from.shape`) at `from`'s offsets into zeros, then read `to` row-major. With
/// `to` the input's layout and `from` a view's, this is the adjoint of every view op.
pub fn restride<T: Arith>(
    x: &Data,
    from: &crate::layout::Layout,
    to: &crate::layout::Layout,
) -> Result<Vec<T>> {
    let extent = from.storage_extent()?.max(to.storage_extent()?);
    crate::storage::ensure_allocatable(extent + to.numel(), std::mem::size_of::<T>())?;
    let mut buf = vec![T::zero(); extent];
    // SAFETY: read-only; dropped before returning; `buf` is a fresh Vec.
    let vals = unsafe { contiguous_data::<T>(x) };
    for (off, &v) in from.offsets().zip(vals.iter()) {
        buf[off] = buf[off] + v;
    }
    Ok(to.offsets().map(|o| buf[o]).collect())
}

/// An int64 index checked against a dim of `size` and wrapped (a negative index counts
/// from the end, where `negative` allows it), contiguous; `Err(i)` is the first index out
/// of range (each caller words its own error).
pub fn wrap_index(index: &Data, size: usize, negative: bool) -> std::result::Result<Vec<i64>, i64> {
    // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
    let idx = unsafe { contiguous_data::<i64>(index) };
    let n = i64::try_from(size).unwrap_or(i64::MAX);
    let low = if negative { -n } else { 0 };
    if let Some(bad) = first_refused(&idx, move |i| low <= i && i < n) {
        return Err(bad);
    }
    // All in range: a negative index (only there when allowed) gets `n` added.
    let wrap = |d: &mut [MaybeUninit<i64>], from: &[i64]| wrap_negative(d, from, n);
    let mut out = Vec::with_capacity(idx.len());
    let dst = &mut out.spare_capacity_mut()[..idx.len()];
    if idx.len() >= PARALLEL_GRAIN {
        par_chunks_mut(dst, INDEX_CHUNK, |t, d| wrap(d, &idx[t * INDEX_CHUNK..]));
    } else {
        wrap(dst, &idx);
    }
    // SAFETY: every element was written: the chunks tile `dst`, each paired with as many
    // indices.
    unsafe { out.set_len(idx.len()) };
    Ok(out)
}

/// `d[k] = from[k]`, plus `n` where negative, without a branch (the sign bit spread over
/// the word selects `n`); out of line as `all_accepted`, so `n` stays in a register.
#[inline(never)]
fn wrap_negative(d: &mut [MaybeUninit<i64>], from: &[i64], n: i64) {
    for (o, &i) in d.iter_mut().zip(from) {
        o.write(i + ((i >> 63) & n));
    }
}

/// How many elements of a bool `mask` are true, and their coordinates, row-major,
/// as a flat `[count, mask.dim()]` list (a 0-dim mask has a count and no coordinates).
pub fn nonzero(mask: &Data) -> (usize, Vec<i64>) {
    // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
    let vals = unsafe { contiguous_data::<bool>(mask) };
    let shape = &mask.layout().shape;
    let Some((&row_len, lead)) = shape.split_last() else {
        return (usize::from(vals.first() == Some(&true)), Vec::new());
    };
    if row_len == 0 || vals.is_empty() {
        return (0, Vec::new());
    }
    let nd = shape.len();
    // Tasks of whole rows: each counts its trues, then writes its coordinates into its
    // own part of the output (so the result does not depend on threads).
    let task_rows = (PARALLEL_GRAIN / 4 / row_len).max(1);
    let tasks: Vec<&[bool]> = vals.chunks(task_rows * row_len).collect();
    let count = |t: &[bool]| t.iter().map(|&b| usize::from(b)).sum::<usize>();
    let parallel = vals.len() >= PARALLEL_GRAIN && tasks.len() > 1;
    let counts: Vec<usize> = if parallel {
        crate::kernels::par_map(tasks.len(), |t| count(tasks[t]))
    } else {
        tasks.iter().map(|t| count(t)).collect()
    };
    let total: usize = counts.iter().sum();
    let mut out: Vec<i64> = Vec::with_capacity(total * nd);
    let mut parts = Vec::with_capacity(tasks.len());
    let mut rest = &mut out.spare_capacity_mut()[..total * nd];
    for &c in &counts {
        let (part, tail) = rest.split_at_mut(c * nd);
        parts.push(part);
        rest = tail;
    }
    let write = |(t, part): (usize, &mut [MaybeUninit<i64>])| {
        let first_row = t * task_rows;
        let at = unravel(first_row, lead);
        write_coordinates(tasks[t], row_len, lead, at, part);
    };
    if parallel {
        par_map_owned(parts, |t, part| write((t, part)));
    } else {
        parts.into_iter().enumerate().for_each(write);
    }
    // SAFETY: each part got the coordinates of exactly as many trues as it holds.
    unsafe { out.set_len(total * nd) };
    (total, out)
}

/// The coordinates of row-major position `flat` in `shape`.
fn unravel(mut flat: usize, shape: &[usize]) -> Dims {
    let mut at: Dims = smallvec::smallvec![0; shape.len()];
    for (c, &n) in at.iter_mut().zip(shape).rev() {
        (*c, flat) = (flat % n.max(1), flat / n.max(1));
    }
    at
}

/// The coordinates of the trues of `rows` (whole rows of `row_len`, the first at `at`
/// over the leading dims `lead`) into `out`, which holds exactly their count. Branch-
/// free on the mask: every element writes its coordinates at the next free slot, and
/// only a true one moves past it (a random mask would mispredict every other branch).
fn write_coordinates(
    rows: &[bool],
    row_len: usize,
    lead: &[usize],
    mut at: Dims,
    out: &mut [MaybeUninit<i64>],
) {
    let nd = lead.len() + 1;
    let slots = out.len() / nd;
    let mut next = 0;
    for row in rows.chunks(row_len) {
        for (j, &v) in row.iter().enumerate() {
            if next < slots {
                let slot = &mut out[next * nd..(next + 1) * nd];
                for (o, &c) in slot.iter_mut().zip(at.iter()) {
                    o.write(c as i64);
                }
                slot[nd - 1].write(j as i64);
            }
            next += usize::from(v);
        }
        for d in (0..lead.len()).rev() {
            at[d] += 1;
            if at[d] < lead[d] {
                break;
            }
            at[d] = 0;
        }
    }
}
