//! Reductions over a set of dims. Inputs are viewed with kept dims first and reduced
//! dims last, so every output element reduces one contiguous row.

use std::borrow::Cow;
use std::mem::MaybeUninit;

use smallvec::SmallVec;

use crate::dtype::Element;
use crate::kernels::sum::{
    sum_in_chunks, sum_rows, sum_rows_in_pieces, sum_trailing, Rows, SumElem, Term, SUM_CHUNK,
};
use crate::kernels::{at_widest, strided, PARALLEL_GRAIN};
use crate::layout::Layout;
use crate::shape::Dims;
use crate::storage::{Access, Data};

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

/// A contiguous copy of `x` when it is strided (a slice) and some kept dim (of more than
/// one element) follows a reduced one, say a column sum of `x[:, ::2]`: copied in its
/// own order (runs read as they lie, over the team), the contiguous kernels then fold
/// its columns in place, where `reduce_rows` would gather the transpose (3x slower).
pub fn strided_columns_copy(x: &Data, dims: &[usize]) -> Option<Data> {
    let layout = x.layout();
    let first_reduced = *dims.iter().min()?;
    let kept_after =
        (first_reduced..layout.ndim()).any(|d| !dims.contains(&d) && layout.shape[d] > 1);
    (kept_after && !layout.is_contiguous()).then(|| crate::kernels::cast_data(x, x.dtype()))
}

/// Apply `row_fn` to each contiguous row of reduced elements; one result per output
/// element, in row-major output order.
///
/// Rows come from memory in place when x's layout puts them one after the other, or each
/// in one run of its own (`x[::2]` reduced over its last dim); else a task gathers its
/// rows into a buffer of its own (`x[:, ::2]`), which stays in cache; else (a transpose,
/// or a cast) all of x is gathered first.
pub fn reduce_rows<T: Element, U: Send>(
    x: &Data,
    dims: &[usize],
    row_fn: impl Fn(&[T]) -> U + Sync + Send,
) -> Vec<U> {
    let write_rows = |rows: &mut dyn Iterator<Item = &[T]>, out: &mut [MaybeUninit<U>]| {
        for (o, row) in out.iter_mut().zip(rows) {
            o.write(row_fn(row));
        }
    };
    let RowsView {
        layout,
        kept,
        row_len,
        out_len,
    } = RowsView::of(x, dims);
    let mut out: Vec<U> = Vec::with_capacity(out_len);
    let spare = &mut out.spare_capacity_mut()[..out_len];
    let parallel = out_len * row_len >= PARALLEL_GRAIN && out_len > 1;
    // Tasks of whole rows, about TASK_ELEMENTS each.
    let rows_per_task = match parallel {
        true => (TASK_ELEMENTS / row_len.max(1)).max(1),
        false => out_len.max(1),
    };
    let run_tasks = |out: &mut [MaybeUninit<U>],
                     task: &(dyn Fn(usize, &mut [MaybeUninit<U>]) + Sync)| {
        if parallel {
            crate::kernels::par_chunks_mut(out, rows_per_task, task);
        } else {
            task(0, out);
        }
    };
    // SAFETY (all reads below): read-only; nothing here outlives this call; the outputs
    // are fresh Vecs.
    match unsafe { RowSource::of(x, layout, kept, row_len, parallel) } {
        _ if row_len == 0 => write_rows(&mut std::iter::repeat(&[][..]), spare),
        RowSource::Whole(data) => run_tasks(spare, &|t, o| {
            let first = t * rows_per_task * row_len;
            write_rows(&mut data[first..].chunks(row_len), o);
        }),
        RowSource::Runs(src) => run_tasks(spare, &|t, o| {
            let starts = RowStarts::new(src.layout(), kept, t * rows_per_task);
            // SAFETY: the rows are runs of the layout (RowSource::of), read-only.
            let row = |start| unsafe { src.run(start, row_len) }.expect("a sliceable dtype");
            write_rows(&mut starts.map(row), o);
        }),
        RowSource::Pieces(src) => {
            let pieces = strided::Pieces::new(&src).expect("not a transpose (RowSource::of)");
            run_tasks(spare, &|t, o| {
                let from = t * rows_per_task * row_len;
                let mut buf = Vec::new();
                pieces.gather_into(from, from + o.len() * row_len, &mut buf);
                write_rows(&mut buf.chunks(row_len), o);
            });
        }
    }
    // SAFETY: each chunk of `out_len` results met as many whole rows (there are
    // `out_len` rows, and wrote a result for each.
    unsafe { out.set_len(out_len) };
    out
}

/// `x` seen as rows: its layout with the kept dims first and the reduced ones last, the
/// number of kept dims, the elements of a row and the number of rows.
struct RowsView {
    layout: Layout,
    kept: usize,
    row_len: usize,
    out_len: usize,
}

impl RowsView {
    fn of(x: &Data, dims: &[usize]) -> Self {
        let nd = x.layout().ndim();
        let mut perm: SmallVec<[i64; 6]> = (0..nd)
            .filter(|d| !dims.contains(d))
            .map(|d| d as i64)
            .collect();
        perm.extend(dims.iter().map(|&d| d as i64));
        let shape = &x.layout().shape;
        RowsView {
            layout: x.layout().permute(&perm).expect("valid permutation"),
            kept: nd - dims.len(),
            row_len: dims.iter().map(|&d| shape[d]).product(),
            out_len: reduced_shape(shape, dims).iter().product(),
        }
    }
}

/// The sums of the rows of a strided `x` reduced over `dims` (in row-major order of the
/// kept dims), each bitwise equal to `sum_slice` of its row, through the row kernels
/// that read four rows side by side: rows that are runs of storage (`x[::2]`,
/// `x[:, :512]`) in place, other layouts from one row-major gather.
pub fn sum_strided_rows<T: SumElem, W: Term>(x: &Data, dims: &[usize]) -> Vec<T> {
    let RowsView {
        layout,
        kept,
        row_len,
        out_len,
    } = RowsView::of(x, dims);
    if row_len == 0 {
        return vec![T::zero(); out_len];
    }
    let in_place = x.dtype() == T::DTYPE && Access::<T>::SLICEABLE;
    if in_place && row_len >= ROW_RUN_MIN && rows_are_runs(&layout, kept) {
        let rows = RunRows {
            src: crate::kernels::access_as::<T>(x, layout),
            kept,
            len: row_len,
        };
        return sum_rows::<T, W, _>(&rows, out_len, row_len);
    }
    let (one_long_sum, rows_of_a_chunk) =
        (out_len == 1 && row_len > SUM_CHUNK, row_len <= SUM_CHUNK);
    if in_place && (one_long_sum || rows_of_a_chunk) {
        // Gathered a piece at a time: a chunk of one long sum (`x[:, ::2].sum()`), or a
        // block of rows (`x[:, ::2].sum(1)`).
        let src = crate::kernels::access_as::<T>(x, layout.clone());
        if let Some(pieces) = strided::Pieces::new(&src) {
            let fill = |from, to, buf: &mut Vec<T>| pieces.gather_into(from, to, buf);
            return if one_long_sum {
                vec![sum_in_chunks::<T, W>(row_len, fill)]
            } else {
                sum_rows_in_pieces::<T, W>(out_len, row_len, fill)
            };
        }
    }
    // SAFETY: read-only; the data is dropped before returning.
    let data = unsafe { read_as::<T>(x, layout) };
    sum_trailing::<T, W>(&data, out_len, row_len)
}

/// Rows that each lie as one run of storage (the dims after the first `kept` of the
/// access's layout, `rows_are_runs`), found by the kept dims and read in place.
struct RunRows<'a, T: Element> {
    src: Access<'a, T>,
    kept: usize,
    len: usize,
}

impl<T: Element> Rows<T> for RunRows<'_, T> {
    #[inline(always)]
    fn row(&self, i: usize) -> &[T] {
        let layout = self.src.layout();
        let (mut rest, mut start) = (i, layout.offset);
        for d in (0..self.kept).rev() {
            start += (rest % layout.shape[d]) * layout.strides[d];
            rest /= layout.shape[d];
        }
        // SAFETY: the row is a run of the layout (`rows_are_runs`, checked where these
        // rows are made); only read, and the rows never outlive the kernel that made
        // them, during which nothing writes the storage.
        unsafe { self.src.run(start, self.len) }.expect("a sliceable dtype")
    }
}

/// Where `reduce_rows` reads its rows from.
enum RowSource<'a, T: Element> {
    /// All rows one after the other.
    Whole(Cow<'a, [T]>),
    /// Each row one run of storage, found by the kept dims of the access's layout.
    Runs(Access<'a, T>),
    /// Gathered piece by piece.
    Pieces(Access<'a, T>),
}

impl<'a, T: Element> RowSource<'a, T> {
    /// The source for `x` viewed as `layout` (kept dims first, then the `row_len`
    /// reduced elements of each row); pieces only for `split` work (else one gather, in
    /// parallel when large, serves better).
    ///
    /// # Safety
    /// As `contiguous_data`: nothing may write x's storage while the result lives.
    unsafe fn of(x: &'a Data, layout: Layout, kept: usize, row_len: usize, split: bool) -> Self {
        let strided = x.dtype() == T::DTYPE && !layout.is_contiguous() && Access::<T>::SLICEABLE;
        if strided && row_len >= ROW_RUN_MIN && rows_are_runs(&layout, kept) {
            return RowSource::Runs(crate::kernels::access_as::<T>(x, layout));
        }
        if strided && split {
            let src = crate::kernels::access_as::<T>(x, layout.clone());
            if strided::Pieces::new(&src).is_some() {
                return RowSource::Pieces(src);
            }
        }
        RowSource::Whole(read_as::<T>(x, layout))
    }
}

/// Shortest row read in place as a run: shorter ones cost more in finding each row's
/// start than a gather of their elements does.
const ROW_RUN_MIN: usize = 64;

/// Whether the dims of `layout` after the first `kept` lie as one contiguous run (their
/// elements row-major at stride 1, size-1 dims aside).
fn rows_are_runs(layout: &Layout, kept: usize) -> bool {
    let mut expected = 1;
    for d in (kept..layout.ndim()).rev() {
        if layout.shape[d] != 1 {
            if layout.strides[d] != expected {
                return false;
            }
            expected *= layout.shape[d];
        }
    }
    true
}

/// The storage offsets where the rows of `layout` start (its first `kept` dims walked
/// row-major), from row `first` on.
struct RowStarts<'l> {
    layout: &'l Layout,
    index: SmallVec<[usize; 6]>,
    offset: usize,
    done: bool,
}

impl<'l> RowStarts<'l> {
    fn new(layout: &'l Layout, kept: usize, first: usize) -> Self {
        let mut index: SmallVec<[usize; 6]> = SmallVec::from_elem(0, kept);
        let (mut rest, mut offset) = (first, layout.offset);
        for d in (0..kept).rev() {
            index[d] = rest % layout.shape[d];
            rest /= layout.shape[d];
            offset += index[d] * layout.strides[d];
        }
        RowStarts {
            layout,
            index,
            offset,
            done: rest > 0,
        }
    }
}

impl Iterator for RowStarts<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.done {
            return None;
        }
        let start = self.offset;
        // The odometer: the last kept dim steps, carrying into the ones before it.
        self.done = true;
        for d in (0..self.index.len()).rev() {
            self.index[d] += 1;
            self.offset += self.layout.strides[d];
            if self.index[d] < self.layout.shape[d] {
                self.done = false;
                break;
            }
            self.offset -= self.index[d] * self.layout.strides[d];
            self.index[d] = 0;
        }
        Some(start)
    }
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
