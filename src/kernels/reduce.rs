//! Reductions over a set of dims. Inputs are viewed with kept dims first and reduced
//! dims last, so every output element reduces one contiguous row.

use std::borrow::Cow;

use smallvec::SmallVec;

use crate::dtype::Element;
use crate::kernels::{at_widest, PARALLEL_GRAIN};
use crate::layout::Layout;
use crate::shape::Dims;
use crate::storage::Data;

/// Shape of the result with `dims` removed (keepdim is a view applied by the caller).
pub fn reduced_shape(shape: &[usize], dims: &[usize]) -> Dims {
    shape
        .iter()
        .enumerate()
        .filter(|(i, _)| !dims.contains(i))
        .map(|(_, &s)| s)
        .collect()
}

/// `x` viewed in memory order, with `dims` renumbered to match, when its layout is a
/// permutation of a contiguous one (a transpose, a `permute`) that keeps the kept dims in
/// their order: the results' row-major order is then unchanged, and the reduction reads
/// memory as it lies instead of gathering a copy first. None when `x` is contiguous
/// already or not of that form.
pub fn in_memory_order(x: &Data, dims: &[usize]) -> Option<(Data, Dims)> {
    let layout = x.layout();
    if layout.is_contiguous() || !layout.is_non_overlapping_and_dense() {
        return None;
    }
    // Outermost first; ties (size-1 dims) keep their order.
    let mut perm: SmallVec<[usize; 6]> = (0..layout.ndim()).collect();
    perm.sort_by_key(|&d| std::cmp::Reverse(layout.strides[d] * (layout.shape[d] > 1) as usize));
    let kept = perm.iter().filter(|d| !dims.contains(d));
    if !kept.clone().zip(kept.skip(1)).all(|(a, b)| a < b) {
        return None;
    }
    let order: SmallVec<[i64; 6]> = perm.iter().map(|&d| d as i64).collect();
    let permuted = layout.permute(&order).ok()?;
    if !permuted.is_contiguous() {
        return None;
    }
    let mut new_dims: Dims = (0..perm.len())
        .filter(|&i| dims.contains(&perm[i]))
        .collect();
    new_dims.sort_unstable();
    Some((x.with_layout(permuted).ok()?, new_dims))
}

/// Apply `row_fn` to each contiguous row of reduced elements; one result per output
/// element, in row-major output order.
pub fn reduce_rows<T: Element, U: Send>(
    x: &Data,
    dims: &[usize],
    row_fn: impl Fn(&[T]) -> U + Sync + Send,
) -> Vec<U> {
    let nd = x.layout().ndim();
    let mut perm: SmallVec<[i64; 6]> = (0..nd)
        .filter(|d| !dims.contains(d))
        .map(|d| d as i64)
        .collect();
    perm.extend(dims.iter().map(|&d| d as i64));
    let layout: Layout = x.layout().permute(&perm).expect("valid permutation");
    let shape = &x.layout().shape;
    let row_len: usize = dims.iter().map(|&d| shape[d]).product();
    let out_len: usize = reduced_shape(shape, dims).iter().product();
    // SAFETY: read-only; `data` is dropped before returning; outputs are fresh Vecs.
    let data = unsafe { read_as::<T>(x, layout) };
    if row_len == 0 {
        return (0..out_len).map(|_| row_fn(&[])).collect();
    }
    if out_len * row_len < PARALLEL_GRAIN || out_len == 1 {
        return data.chunks(row_len).map(&row_fn).collect();
    }
    // Tasks of whole rows, about TASK_ELEMENTS each.
    let rows_per_task = (TASK_ELEMENTS / row_len).max(1);
    let mut out: Vec<U> = Vec::with_capacity(out_len);
    crate::kernels::par_chunks_mut(
        &mut out.spare_capacity_mut()[..out_len],
        rows_per_task,
        |t, o| {
            let rows = data[t * rows_per_task * row_len..].chunks(row_len);
            for (o, row) in o.iter_mut().zip(rows) {
                o.write(row_fn(row));
            }
        },
    );
    // SAFETY: each chunk of `out_len` results met as many whole rows (`data` holds
    // `out_len` rows), so every result was written.
    unsafe { out.set_len(out_len) };
    out
}

/// Elements one task of a split reduction reads, about.
const TASK_ELEMENTS: usize = 1 << 14;

/// Columns one task of `reduce_columns` folds side by side: their accumulators stay in
/// the L1 cache.
const COLUMN_BLOCK: usize = 512;

/// How `reduce_columns` folds one column: `first` starts it at the column's first
/// element, `step(acc, v, r)` folds in the element of row `r` (from 1 on, in order), and
/// `finish` gives the result.
pub struct ColumnFold<First, Step, Finish> {
    pub first: First,
    pub step: Step,
    pub finish: Finish,
}

/// The reduction of `dims` of a contiguous `x` that are followed by kept dims (say dim 0
/// of a matrix), without gathering: `x` is then `[outer, rows, inner]`, each output element
/// folds a column of `rows` elements `inner` apart, and the fold runs down whole rows of
/// `COLUMN_BLOCK` columns at a time, which vectorizes and reads memory in order. Results
/// in row-major output order, as `reduce_rows`; None when `x` or `dims` are not of that
/// form or a column is empty (then `reduce_rows` serves).
pub fn reduce_columns<T, A, U, First, Step, Finish>(
    x: &Data,
    dims: &[usize],
    fold: ColumnFold<First, Step, Finish>,
) -> Option<Vec<U>>
where
    T: Element,
    A: Copy + Send,
    U: Send,
    First: Fn(T) -> A + Sync,
    Step: Fn(A, T, usize) -> A + Sync,
    Finish: Fn(A) -> U + Sync,
{
    let layout = x.layout();
    let shape = &layout.shape;
    let (&d0, &d1) = (dims.iter().min()?, dims.iter().max()?);
    let run = dims.len() == d1 - d0 + 1 && d1 + 1 < shape.len();
    if !run || !layout.is_contiguous() || T::DTYPE != x.dtype() {
        return None;
    }
    let outer: usize = shape[..d0].iter().product();
    let rows: usize = shape[d0..=d1].iter().product();
    let inner: usize = shape[d1 + 1..].iter().product();
    if rows == 0 || inner < 8 {
        return None;
    }
    // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
    let data = unsafe { crate::kernels::contiguous_data::<T>(x) };
    // A task folds columns [c0, c0 + width) of slabs [o0, o1): several whole slabs when
    // one block spans a slab, else one block of one slab. Either way its results are one
    // run of the output, and the tasks' runs follow each other in output order.
    let blocks = inner.div_ceil(COLUMN_BLOCK);
    let slabs_per_task = match blocks {
        1 => (TASK_ELEMENTS / (rows * inner)).max(1),
        _ => 1,
    };
    let tasks: Vec<(usize, usize, usize, usize)> = (0..outer)
        .step_by(slabs_per_task)
        .flat_map(|o0| {
            let o1 = (o0 + slabs_per_task).min(outer);
            (0..inner)
                .step_by(COLUMN_BLOCK)
                .map(move |c0| (o0, o1, c0, COLUMN_BLOCK.min(inner - c0)))
        })
        .collect();
    let mut out: Vec<U> = Vec::with_capacity(outer * inner);
    let mut rest = &mut out.spare_capacity_mut()[..outer * inner];
    let mut parts = Vec::with_capacity(tasks.len());
    for &(o0, o1, _, width) in &tasks {
        let (part, tail) = rest.split_at_mut((o1 - o0) * width);
        parts.push(part);
        rest = tail;
    }
    let fold_task = |t: usize, dst: &mut [std::mem::MaybeUninit<U>]| {
        let (o0, o1, c0, width) = tasks[t];
        let mut acc: Vec<A> = Vec::with_capacity(width);
        for (o, dst) in (o0..o1).zip(dst.chunks_mut(width)) {
            let row = |r: usize| &data[(o * rows + r) * inner + c0..][..width];
            acc.clear();
            acc.extend(row(0).iter().map(|&v| (fold.first)(v)));
            let (folded, slab, step) = (&mut acc[..], &data[o * rows * inner + c0..], &fold.step);
            // At the widest SIMD level, with every capture moved in (see `at_widest`):
            // the fold down the rows vectorizes across the columns.
            at_widest(
                #[inline(always)]
                move || {
                    for r in 1..rows {
                        for (a, &v) in folded.iter_mut().zip(&slab[r * inner..][..width]) {
                            *a = step(*a, v, r);
                        }
                    }
                },
            );
            for (d, &a) in dst.iter_mut().zip(&acc) {
                d.write((fold.finish)(a));
            }
        }
    };
    if data.len() >= PARALLEL_GRAIN && tasks.len() > 1 {
        crate::kernels::par_map_owned(parts, fold_task);
    } else {
        parts
            .into_iter()
            .enumerate()
            .for_each(|(t, dst)| fold_task(t, dst));
    }
    // SAFETY: the parts tile the output, and each task wrote every element of its part:
    // (o1 - o0) slabs of `width` results.
    unsafe { out.set_len(outer * inner) };
    Some(out)
}

/// `x`'s elements in the row-major order of `layout` (a permutation of x's own), as `T`:
/// borrowed when they already lie that way in x's dtype, else gathered and cast.
///
/// # Safety
/// As `contiguous_data`: nothing may write x's storage while the result lives.
pub unsafe fn read_as<T: Element>(x: &Data, layout: Layout) -> Cow<'_, [T]> {
    crate::with_dtype!(x.dtype(), S => {
        let src = crate::kernels::access_as::<S>(x, layout);
        // SAFETY: the caller keeps the storage unwritten while the borrow lives.
        match unsafe { src.contiguous() } {
            Some(s) if S::DTYPE == T::DTYPE => {
                // SAFETY: S and T are the same type (same dtype), so this is a no-op cast.
                Cow::Borrowed(unsafe { std::slice::from_raw_parts(s.as_ptr() as *const T, s.len()) })
            }
            _ => Cow::Owned(crate::kernels::gather_cast::<S, T>(&src)),
        }
    })
}
