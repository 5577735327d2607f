//! Note: strided copies. Every copy that moves a layout's elements into a fresh buffer
//! (`contiguous`, clone and cast of a strided tensor, `repeat`, `flip`, `cat`,
//! `diag_embed`) runs through one kernel, `copy_plan`. The source and destination
//! layouts over one shape are coalesced together (`Plan`), the row-major index space is
//! cut into fixed chunks over the intra-op team, and each chunk walks its runs of the
//! innermost dim: a memcpy when both sides step one element forwards, a reversed loop
//! (it vectorizes) when the source steps one element back (a flipped dim), element by
//! element otherwise. A plan whose source walks the two inner dims transposed (`x.t()`,
//! batched or not) is copied in 16x16 blocks through a local buffer instead: writing a
//! column's elements to rows 4 KiB apart puts every write in one L1 set, so element by
//! element that copy of a 1024x1024 f32 took 3.6 ms on one thread, in blocks 0.45 ms.
//! Each element is written once, by one task, so the result is the same for any thread
//! count.
//!
//! Bounds: source strides are signed here (a flipped dim is walked backwards from its
//! last element), though layouts never are. A plan is only made by `Plan::new`, from a
//! checked source layout with some dims reversed (the same elements, visited in another
//! order) and a destination layout checked against the fresh buffer's length; merging
//! dims keeps the offsets each side reaches. So every offset a plan produces is one its
//! layouts reach.

use std::mem::MaybeUninit;

use smallvec::SmallVec;

use crate::dtype::{cast, Element};
use crate::error::{Error, Result};
use crate::kernels::PARALLEL_GRAIN;
use crate::kernels::{access, coalesce_with, contiguous_data, par_chunks_mut, par_for};
use crate::layout::Layout;
use crate::shape::Dims;
use crate::storage::{Access, Data};

type Steps = SmallVec<[isize; 6]>;

/// A copy between two layouts of one shape, coalesced (see Note: strided copies).
#[derive(Clone)]
struct Plan {
    shape: Dims,
    /// Per dim, the step in elements of the destination and of the source (negative
    /// where the source walks a flipped dim).
    dst: Steps,
    src: Steps,
    dst_off: isize,
    src_off: isize,
}

impl Plan {
    /// `src` (its dims in `reversed` walked backwards) onto `dst`, a layout of the same
    /// shape over a buffer of `dst_len` elements. Err (an internal bug) otherwise.
    fn new(src: &Layout, reversed: &[usize], dst: &Layout, dst_len: usize) -> Result<Plan> {
        if src.shape != dst.shape || dst.storage_extent()? > dst_len {
            return Err(Error::runtime(format!(
                "internal error: a copy of shape {:?} onto a layout of shape {:?} within {dst_len} elements",
                src.shape, dst.shape
            )));
        }
        // Sizes and offsets fit in isize: checked layouts reach at most isize::MAX bytes.
        // Size-1 dims may have any stride, but coalescing drops them before it is used.
        let mut src_off = src.offset as isize;
        let mut src_steps: Steps = src.strides.iter().map(|&s| s as isize).collect();
        for (d, step) in src_steps.iter_mut().enumerate() {
            if reversed.contains(&d) && src.shape[d] > 1 {
                src_off += ((src.shape[d] - 1) * src.strides[d]) as isize;
                *step = -*step;
            }
        }
        let dst_steps: Steps = dst.strides.iter().map(|&s| s as isize).collect();
        let (shape, mut steps) = coalesce_with(&dst.shape, &[&dst_steps, &src_steps], 1, |s, n| {
            s.checked_mul(isize::try_from(n).ok()?)
        });
        Ok(Plan {
            shape,
            src: steps.pop().expect("two operands"),
            dst: steps.pop().expect("two operands"),
            dst_off: dst.offset as isize,
            src_off,
        })
    }

    fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// The (destination, source) offsets of index `i` over the first `dims` dims.
    fn offsets_of(&self, mut i: usize, dims: usize) -> (isize, isize) {
        let (mut d, mut s) = (self.dst_off, self.src_off);
        for k in (0..dims).rev() {
            let at = (i % self.shape[k]) as isize;
            i /= self.shape[k];
            d += at * self.dst[k];
            s += at * self.src[k];
        }
        (d, s)
    }

    /// Whether the source walks the two inner dims transposed: down a column of the
    /// destination's row-major matrix (see Note: strided copies).
    fn is_transpose(&self) -> bool {
        let nd = self.shape.len();
        nd >= 2
            && self.src[nd - 2] == 1
            && self.dst[nd - 1] == 1
            && self.shape[nd - 2] >= TILE
            && self.shape[nd - 1] >= TILE
    }
}

/// The destination buffer, shared by the tasks of one copy (each writes its own elements).
struct Out<T>(*mut T);
// SAFETY: the tasks of `copy_plan` write disjoint elements of the buffer and nothing
// else touches it meanwhile (copy_plan's contract).
unsafe impl<T: Send> Sync for Out<T> {}

/// Elements per task of the run path: 256 KiB of the wider side for unit-step runs;
/// 4096 for element-by-element ones, which cost far more per element (a diagonal
/// written one element per page faults a page in each).
fn chunk_len<S, T>(unit_steps: bool) -> usize {
    if !unit_steps {
        return 1 << 12;
    }
    (1 << 18)
        / std::mem::size_of::<S>()
            .max(std::mem::size_of::<T>())
            .max(1)
}

/// The block side of the transposed path, and the rows of one of its tasks.
const TILE: usize = 16;
const STRIP: usize = 4 * TILE;

/// `src`'s elements written at the plan's destination offsets in `dst`, cast to `T`;
/// over the team when large and `parallel`.
///
/// # Safety
/// `plan` was made by `Plan::new` with `src.layout()` as its source and a destination
/// within `dst`'s buffer; nothing else reads or writes that buffer meanwhile; and when
/// `parallel`, the destination layout reaches each element at most once.
unsafe fn copy_plan<S: Element, T: Element>(
    src: &Access<'_, S>,
    dst: *mut T,
    plan: &Plan,
    parallel: bool,
) {
    let n = plan.numel();
    if n == 0 {
        return;
    }
    let out = Out(dst);
    let run_tasks = |tasks: usize, task: &(dyn Fn(usize) + Sync)| {
        if parallel && n >= PARALLEL_GRAIN {
            par_for(tasks, task);
        } else {
            (0..tasks).for_each(task);
        }
    };
    let nd = plan.shape.len();
    if plan.is_transpose() {
        // A task takes STRIP rows: its neighbours' rows are far enough that two cores
        // do not fetch the same (or adjacent, prefetched in pairs) source lines.
        let strips = plan.shape[nd - 2].div_ceil(STRIP);
        let tasks = n / (plan.shape[nd - 2] * plan.shape[nd - 1]) * strips;
        // SAFETY: (all tasks) as copy_tiles; the strips of rows are disjoint.
        run_tasks(tasks, &|t| unsafe {
            copy_tiles(src, &out, plan, t / strips, t % strips)
        });
        return;
    }
    let chunk = chunk_len::<S, T>(plan.dst[nd - 1] == 1 && plan.src[nd - 1].abs() == 1);
    // SAFETY: (all tasks) as copy_runs; the chunks of positions are disjoint.
    run_tasks(n.div_ceil(chunk), &|t| unsafe {
        copy_runs(src, &out, plan, t * chunk, n.min(t * chunk + chunk))
    });
}

/// The elements at row-major positions `from..to` of the plan, run by run of its
/// innermost dim.
///
/// # Safety
/// As `copy_plan`; no other task writes these positions.
unsafe fn copy_runs<S: Element, T: Element>(
    src: &Access<'_, S>,
    out: &Out<T>,
    plan: &Plan,
    from: usize,
    to: usize,
) {
    let nd = plan.shape.len();
    let inner = plan.shape[nd - 1];
    let (ds, ss) = (plan.dst[nd - 1], plan.src[nd - 1]);
    let (row, mut at) = (from / inner, from % inner);
    let mut pos = from;
    // The row's offsets once per chunk, then an odometer over the outer dims.
    let mut idx: Dims = Dims::from_elem(0, nd - 1);
    let mut rest = row;
    for k in (0..nd - 1).rev() {
        idx[k] = rest % plan.shape[k];
        rest /= plan.shape[k];
    }
    let (mut d, mut s) = plan.offsets_of(row, nd - 1);
    while pos < to {
        let len = (inner - at).min(to - pos);
        let a = at as isize;
        copy_run(src, out.0, d + a * ds, s + a * ss, len, ds, ss);
        pos += len;
        at = 0;
        for k in (0..nd - 1).rev() {
            idx[k] += 1;
            d += plan.dst[k];
            s += plan.src[k];
            if idx[k] < plan.shape[k] {
                break;
            }
            let back = plan.shape[k] as isize;
            d -= back * plan.dst[k];
            s -= back * plan.src[k];
            idx[k] = 0;
        }
    }
}

/// `x` as `T`: the same bits when the dtypes agree (a cast through f64 would quiet a
/// signalling NaN), torch's cast otherwise.
#[inline(always)]
fn convert<S: Element, T: Element>(x: S) -> T {
    if S::DTYPE == T::DTYPE {
        // SAFETY: one dtype is one element type, so this reads a T as itself.
        unsafe { std::mem::transmute_copy(&x) }
    } else {
        cast::<S, T>(x)
    }
}

/// One run of `len` elements: the destination from `d` by `ds`, the source from `s` by
/// `ss`.
///
/// # Safety
/// As `copy_runs`: both runs are ones the plan reaches.
#[inline(always)]
unsafe fn copy_run<S: Element, T: Element>(
    src: &Access<'_, S>,
    dst: *mut T,
    d: isize,
    s: isize,
    len: usize,
    ds: isize,
    ss: isize,
) {
    let to = || std::slice::from_raw_parts_mut(dst.offset(d) as *mut MaybeUninit<T>, len);
    if ds == 1 && ss == 1 {
        if let Some(from) = src.run(s as usize, len) {
            if S::DTYPE == T::DTYPE {
                // S and T are one type (one dtype); the buffer is never storage memory.
                memcpy(from.as_ptr() as *const T, dst.offset(d), len);
            } else {
                to().iter_mut().zip(from).for_each(|(o, &x)| {
                    o.write(cast::<S, T>(x));
                });
            }
            return;
        }
        if let Some(bytes) = src.bool_bytes(s as usize, len) {
            // Bools from their bytes, normalized without a branch per element.
            to().iter_mut().zip(bytes).for_each(|(o, &b)| {
                o.write(cast::<u8, T>((b != 0) as u8));
            });
            return;
        }
    }
    if ds == 1 && ss == -1 {
        if let Some(from) = src.run((s + 1 - len as isize) as usize, len) {
            to().iter_mut().zip(from.iter().rev()).for_each(|(o, &x)| {
                o.write(convert::<S, T>(x));
            });
            return;
        }
    }
    if ds == 1 && S::DTYPE == T::DTYPE && Access::<S>::SLICEABLE {
        // A small constant step (`x[:, ::2]`): a loop the compiler vectorizes.
        let (to, from) = (
            dst.offset(d) as *mut S,
            src.base_ptr().add(s as usize) as *const S,
        );
        match ss {
            2 => return copy_stepped::<S, 2>(from, to, len),
            3 => return copy_stepped::<S, 3>(from, to, len),
            4 => return copy_stepped::<S, 4>(from, to, len),
            _ => {}
        }
    }
    for i in 0..len as isize {
        dst.offset(d + i * ds)
            .write(convert::<S, T>(src.read((s + i * ss) as usize)));
    }
}

/// `len` elements from every `STEP`-th one at `from` to consecutive ones at `to` (a
/// buffer, never storage memory). Only the elements copied are read.
///
/// # Safety
/// `from + i * STEP` for `i < len` are elements of the run's layout (as `copy_runs`);
/// `to` has room for `len`.
#[inline(always)]
unsafe fn copy_stepped<S: Copy, const STEP: usize>(from: *const S, to: *mut S, len: usize) {
    for i in 0..len {
        to.add(i).write(from.add(i * STEP).read());
    }
}

/// `len` elements from `from` to `to` (not overlapping). glibc copies 2 KiB and more
/// with `rep movsb`, which on Zen runs 12x slower when the destination lies a few bytes
/// after the source modulo 4 KiB (a false dependency of each load on the stores before
/// it): that is where `cat` and `roll` put their slices (rows of 1023 floats one
/// element on: 1.2 ms instead of 0.1 for 4 MiB). There the run goes in 1 KiB pieces,
/// which glibc copies with vector loads and stores.
///
/// # Safety
/// As `std::ptr::copy_nonoverlapping`.
#[inline(always)]
unsafe fn memcpy<T>(from: *const T, to: *mut T, len: usize) {
    const PIECE: usize = 1 << 10;
    let bytes = len * std::mem::size_of::<T>();
    let ahead = (to as usize).wrapping_sub(from as usize) % 4096;
    if bytes < 2 * PIECE || ahead == 0 || ahead >= 256 {
        return std::ptr::copy_nonoverlapping(from, to, len);
    }
    let step = (PIECE / std::mem::size_of::<T>().max(1)).max(1);
    for at in (0..len).step_by(step) {
        std::ptr::copy_nonoverlapping(from.add(at), to.add(at), step.min(len - at));
    }
}

/// Strip `strip` (STRIP rows) of matrix `mat` of a transposed plan, in TILE x TILE
/// blocks.
///
/// # Safety
/// As `copy_runs`, for the elements of that strip.
unsafe fn copy_tiles<S: Element, T: Element>(
    src: &Access<'_, S>,
    out: &Out<T>,
    plan: &Plan,
    mat: usize,
    strip: usize,
) {
    let nd = plan.shape.len();
    let (rows, cols) = (plan.shape[nd - 2], plan.shape[nd - 1]);
    let (dr, sc) = (plan.dst[nd - 2], plan.src[nd - 1]);
    let (d0, s0) = plan.offsets_of(mat, nd - 2);
    let end = rows.min(strip * STRIP + STRIP);
    for r0 in (strip * STRIP..end).step_by(TILE) {
        let rr = TILE.min(rows - r0);
        for c0 in (0..cols).step_by(TILE) {
            let cc = TILE.min(cols - c0);
            // The block's first source element and its first destination element.
            let s = s0 + c0 as isize * sc + r0 as isize;
            let d = d0 + r0 as isize * dr + c0 as isize;
            // Full blocks with constant bounds, so that the loops unroll and vectorize.
            if rr == TILE && cc == TILE {
                copy_block(src, out.0, s, sc, d, dr, TILE, TILE);
            } else {
                copy_block(src, out.0, s, sc, d, dr, rr, cc);
            }
        }
    }
}

/// One block of `rr` destination rows by `cc` columns: source columns (stepping 1
/// down a column, `sc` between columns) read into a local buffer, then written out row
/// by row (`dr` between rows).
///
/// # Safety
/// As `copy_tiles`, for the elements of that block.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn copy_block<S: Element, T: Element>(
    src: &Access<'_, S>,
    dst: *mut T,
    s: isize,
    sc: isize,
    d: isize,
    dr: isize,
    rr: usize,
    cc: usize,
) {
    let mut buf = [[MaybeUninit::<T>::uninit(); TILE]; TILE];
    for (c, b) in buf.iter_mut().enumerate().take(cc) {
        let column = (s + c as isize * sc) as usize;
        match src.run(column, rr) {
            Some(from) => b.iter_mut().zip(from).for_each(|(o, &x)| {
                o.write(convert::<S, T>(x));
            }),
            None => b.iter_mut().take(rr).enumerate().for_each(|(r, o)| {
                o.write(convert::<S, T>(src.read(column + r)));
            }),
        }
    }
    for r in 0..rr {
        let to = dst.offset(d + r as isize * dr);
        for (c, b) in buf.iter().enumerate().take(cc) {
            // SAFETY: the loop above wrote b[r] for every r < rr and c < cc.
            to.add(c).write(b[r].assume_init());
        }
    }
}

/// Whether no two elements of `layout` share an offset (a sufficient test: each dim,
/// in order of stride, steps past everything the smaller ones reach).
fn non_overlapping(layout: &Layout) -> bool {
    let mut dims: SmallVec<[(usize, usize); 6]> = (layout.shape.iter().copied())
        .zip(layout.strides.iter().copied())
        .filter(|&(n, _)| n > 1)
        .collect();
    dims.sort_unstable_by_key(|&(_, s)| s);
    let mut reach = 0usize;
    for (n, s) in dims {
        if s <= reach {
            return false;
        }
        reach = match (n - 1).checked_mul(s).and_then(|r| r.checked_add(reach)) {
            Some(r) => r,
            None => return false,
        };
    }
    true
}

/// `src`'s elements row-major in a fresh Vec, cast to `T`; the dims in `reversed`
/// walked backwards (flip).
pub fn gather<S: Element, T: Element>(src: &Access<'_, S>, reversed: &[usize]) -> Vec<T> {
    let layout = src.layout();
    let n = layout.numel();
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    let plan = Plan::new(layout, reversed, &Layout::contiguous(&layout.shape), n)
        .expect("a contiguous layout of the source's shape");
    // SAFETY: the plan's source is src's layout and its destination the contiguous
    // layout of that shape, which reaches each of `out`'s n elements exactly once; so
    // all n are written when copy_plan returns.
    unsafe {
        copy_plan(src, out.as_mut_ptr(), &plan, true);
        out.set_len(n);
    }
    out
}

/// `src`'s row-major gather made a piece at a time, each piece into a buffer of its own:
/// a kernel that folds a strided tensor in tasks gathers each task's part into a
/// buffer that stays in cache, instead of all of it into one buffer first.
pub struct Pieces<'s, 'a, S> {
    src: &'s Access<'a, S>,
    plan: Plan,
}

impl<'s, 'a, S: Element> Pieces<'s, 'a, S> {
    /// None when the source walks the two inner dims transposed: that gather is fast
    /// only whole, in tiles (see Note: strided copies).
    pub fn new(src: &'s Access<'a, S>) -> Option<Self> {
        let layout = src.layout();
        let plan = Plan::new(
            layout,
            &[],
            &Layout::contiguous(&layout.shape),
            layout.numel(),
        )
        .expect("a contiguous layout of the source's shape");
        (!plan.is_transpose()).then_some(Pieces { src, plan })
    }

    /// The elements at row-major positions `from..to` into `buf` (replacing what it held).
    pub fn gather_into<T: Element>(&self, from: usize, to: usize, buf: &mut Vec<T>) {
        assert!(
            from <= to && to <= self.plan.numel(),
            "a piece of the source"
        );
        buf.clear();
        buf.reserve(to - from);
        if from == to {
            return;
        }
        // The destination is the contiguous layout, position p at offset p: shifted by
        // `from`, positions from..to land at 0..to - from of `buf`.
        let mut plan = self.plan.clone();
        plan.dst_off -= from as isize;
        // SAFETY: the plan's source is src's layout and its destination reaches offsets
        // 0..to - from of `buf`'s capacity for these positions, each once, written by this
        // call alone; so all to - from elements are written when copy_runs returns.
        unsafe {
            copy_runs(self.src, &Out(buf.as_mut_ptr()), &plan, from, to);
            buf.set_len(to - from);
        }
    }
}

/// `parts` joined along `dim` into a fresh row-major `shape`, each cast to `T`: part i
/// fills the slice of the output along `dim` after the earlier parts. Err (an internal
/// bug) when they do not tile `shape`.
pub fn cat<T: Element>(parts: &[Data], dim: usize, shape: &[usize]) -> Result<Vec<T>> {
    let tiles = dim < shape.len()
        && parts
            .iter()
            .map(|p| p.layout().shape.get(dim).copied().unwrap_or(0))
            .sum::<usize>()
            == shape[dim]
        && parts.iter().all(|p| {
            let ps = &p.layout().shape;
            ps.len() == shape.len() && (0..ps.len()).all(|d| d == dim || ps[d] == shape[d])
        });
    if !tiles {
        return Err(Error::runtime(
            "internal error: cat parts that do not tile the output",
        ));
    }
    let n: usize = shape.iter().product();
    crate::storage::ensure_allocatable(n, std::mem::size_of::<T>())?;
    let mut out: Vec<T> = Vec::with_capacity(n);
    let full = Layout::contiguous(shape);
    let mut start = 0;
    for p in parts {
        let len = p.layout().shape[dim];
        let into = full.narrow(dim as i64, start as i64, len as i64)?;
        let plan = Plan::new(p.layout(), &[], &into, n)?;
        // SAFETY: the plan's source is p's own layout; its destination, a slice of the
        // contiguous output, reaches each element once and inside `out`'s n elements.
        crate::with_dtype!(p.dtype(), S => unsafe {
            copy_plan(&access::<S>(p), out.as_mut_ptr(), &plan, true)
        });
        start += len;
    }
    // SAFETY: the slices along `dim` tile the output (checked above), so every element
    // was written.
    unsafe { out.set_len(n) };
    Ok(out)
}

/// A fresh row-major `shape` of zeros with `x`'s elements (row-major, cast to `T`) at
/// the offsets of `into`, a layout of x's shape over it (diag_embed's diagonal).
pub fn embed<T: Element>(x: &Data, into: &Layout, shape: &[usize]) -> Result<Vec<T>> {
    let n: usize = shape.iter().product();
    crate::storage::ensure_allocatable(n, std::mem::size_of::<T>())?;
    // Zeroed pages from the allocator for large numeric buffers (calloc): the pages the
    // copy does not write are never touched here.
    let mut out = vec![T::zero(); n];
    let plan = Plan::new(x.layout(), &[], into, n)?;
    // SAFETY: the plan's source is x's own layout and its destination lies within
    // `out`; the copy runs in parallel only when no two elements share an offset.
    crate::with_dtype!(x.dtype(), S => unsafe {
        copy_plan(&access::<S>(x), out.as_mut_ptr(), &plan, non_overlapping(into))
    });
    Ok(out)
}

/// Rows per task of `triangle`: about 256 KiB of output.
fn rows_per_task<T>(cols: usize) -> usize {
    ((1 << 18) / std::mem::size_of::<T>().max(1) / cols.max(1)).max(1)
}

/// `x` with the elements above (`upper`: below) its `diagonal`-th diagonal of the last
/// two dims zeroed, as a fresh row-major Vec: each row copies its kept columns and
/// zeroes the rest, in one pass.
pub fn triangle<T: Element>(x: &Data, diagonal: i64, upper: bool) -> Vec<T> {
    let shape = &x.layout().shape;
    let nd = shape.len();
    let (rows, cols) = (shape[nd - 2], shape[nd - 1]);
    let n = x.layout().numel();
    let mut out: Vec<T> = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
    let values = unsafe { contiguous_data::<T>(x) };
    // The kept columns lo..hi of matrix row r (col - r <= diagonal for tril, >= for triu).
    let kept = |r: usize| {
        let edge = |c: i64| c.clamp(0, cols as i64) as usize;
        let first = (r as i64).saturating_add(diagonal);
        if upper {
            (edge(first), cols)
        } else {
            (0, edge(first.saturating_add(1)))
        }
    };
    let per_task = rows_per_task::<T>(cols);
    par_chunks_mut(
        &mut out.spare_capacity_mut()[..n],
        per_task * cols,
        |t, d| {
            for (k, to) in d.chunks_mut(cols).enumerate() {
                let g = t * per_task + k;
                let (lo, hi) = kept(g % rows);
                let from = &values[g * cols..(g + 1) * cols];
                to[..lo].iter_mut().for_each(|o| {
                    o.write(T::zero());
                });
                to[lo..hi].write_copy_of_slice(&from[lo..hi]);
                to[hi..].iter_mut().for_each(|o| {
                    o.write(T::zero());
                });
            }
        },
    );
    // SAFETY: the chunks tile the n elements and each row was written in full.
    unsafe { out.set_len(n) };
    out
}
