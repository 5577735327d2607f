//! Elementwise kernels: map (unary), zip (broadcasting binary), zip3 (where).

use std::borrow::Cow;
use std::mem::MaybeUninit;

use smallvec::SmallVec;

use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::kernels::traits::Float;
use crate::kernels::vmath::Unary;
use crate::kernels::{
    access, access_as, at_widest, coalesce, contiguous_data, data_from, PARALLEL_GRAIN,
};
use crate::layout::Layout;
use crate::shape::broadcast_shapes;
use crate::storage::Data;

/// `f` applied to every element of `x` (read as `T`), giving a contiguous result of `U`.
pub fn map<T: Element, U: Element>(x: &Data, f: impl Fn(T) -> U + Sync + Send) -> Data {
    let l = x.layout();
    if x.dtype() == T::DTYPE && !l.is_contiguous() && l.numel() > 0 {
        // Strided (`x[::2] * 2`): read in place, split over the team by rows, instead of
        // a one-thread gather first.
        let sx = access::<T>(x);
        let mut out: Vec<U> = Vec::with_capacity(l.numel());
        let dst = &mut out.spare_capacity_mut()[..l.numel()];
        par_tiles(&l.shape, [l], dst, |t, d| {
            let x = TileOperand::new(&sx, t, 0);
            for r in 0..t.rows.len() {
                match x.row(r) {
                    Src::Run(run) => map_run(run, t.piece(d, r), &f),
                    Src::One(v) => t.piece(d, r).iter_mut().for_each(|o| {
                        o.write(f(v));
                    }),
                }
            }
        });
        // SAFETY: par_tiles hands every element of `dst` to exactly one tile row, and each
        // is written in full.
        unsafe { out.set_len(l.numel()) };
        return data_from(out, &l.shape);
    }
    // SAFETY: read-only; `data` is dropped before returning and the output is fresh.
    let data = unsafe { contiguous_data::<T>(x) };
    data_from(map_slice(&data, f), &x.layout().shape)
}

/// `x` as `dtype` (Backend::cast): between f32, f64, i32 and i64 through `map` (split
/// over the team, vectorized, strided sources read in place); other pairs and same-dtype
/// copies through `kernels::cast_data`.
pub fn cast(x: &Data, dtype: DType) -> Data {
    use crate::dtype::cast as convert;
    macro_rules! pairs {
        ($($s:ident => $t:ty: [$($d:ident => $u:ty),*];)*) => {
            match (x.dtype(), dtype) {
                $($((DType::$s, DType::$d) => map::<$t, $u>(x, convert::<$t, $u>),)*)*
                _ => crate::kernels::cast_data(x, dtype),
            }
        };
    }
    pairs! {
        F32 => f32: [F64 => f64, I32 => i32, I64 => i64];
        F64 => f64: [F32 => f32, I32 => i32, I64 => i64];
        I32 => i32: [F32 => f32, F64 => f64, I64 => i64];
        I64 => i64: [F32 => f32, F64 => f64, I32 => i32];
    }
}

/// `map` for a float function with a vector kernel (kernels::vmath): f32 and f64 go
/// through it, other types element by element with `f`.
pub fn map_float<T: Float>(x: &Data, op: Unary, f: impl Fn(T) -> T + Sync + Send) -> Data {
    // SAFETY: as in `map`.
    let data = unsafe { contiguous_data::<T>(x) };
    let out = T::vmath(op, &data).unwrap_or_else(|| map_slice(&data, f));
    data_from(out, &x.layout().shape)
}

/// Elements per task when a slice is split over the team.
const CHUNK: usize = 1 << 14;

/// `f` over a slice, split over the team when it is big enough.
fn map_slice<T: Element, U: Element>(data: &[T], f: impl Fn(T) -> U + Sync + Send) -> Vec<U> {
    let mut out: Vec<U> = Vec::with_capacity(data.len());
    let dst = &mut out.spare_capacity_mut()[..data.len()];
    if data.len() < PARALLEL_GRAIN {
        map_run(data, dst, &f);
    } else {
        crate::kernels::par_chunks_mut(dst, CHUNK, |c, d| map_run(&data[c * CHUNK..], d, &f));
    }
    // SAFETY: every element of the spare capacity was written (`data` is as long).
    unsafe { out.set_len(data.len()) };
    out
}

/// `dst[i] = f(src[i])` over `dst`'s length (`src` is at least as long).
///
/// Out of line on purpose, as are `zip_run`'s loops: reference arguments promise the
/// compiler that nothing written through `dst` changes `f`'s captures (a scalar
/// operand), so it keeps them in registers and vectorizes. Inlined into a task closure,
/// the captures sat behind pointers it could not prove unaliased, and it reloaded them
/// for every element in a scalar loop (`x * 1.01` took three times as long as `x + y`).
#[inline(never)]
fn map_run<T: Copy, U>(src: &[T], dst: &mut [MaybeUninit<U>], f: &impl Fn(T) -> U) {
    at_widest(
        #[inline(always)]
        || {
            for (o, &v) in dst.iter_mut().zip(src) {
                o.write(f(v));
            }
        },
    )
}

/// `dst[i] = f(x[i], y[i])` over `dst`'s length (see `map_run` for why out of line).
#[inline(never)]
fn zip_run<T: Copy, U>(x: &[T], y: &[T], dst: &mut [MaybeUninit<U>], f: &impl Fn(T, T) -> U) {
    at_widest(
        #[inline(always)]
        || {
            for ((o, &p), &q) in dst.iter_mut().zip(x).zip(y) {
                o.write(f(p, q));
            }
        },
    )
}

/// `f` over two slices of one length, split over the team when they are big enough.
fn zip_map_slices<T: Element, U: Element>(
    x: &[T],
    y: &[T],
    f: impl Fn(T, T) -> U + Sync,
) -> Vec<U> {
    let n = x.len().min(y.len());
    let mut out: Vec<U> = Vec::with_capacity(n);
    let dst = &mut out.spare_capacity_mut()[..n];
    if n < PARALLEL_GRAIN {
        zip_run(x, y, dst, &f);
    } else {
        crate::kernels::par_chunks_mut(dst, CHUNK, |c, d| {
            zip_run(&x[c * CHUNK..], &y[c * CHUNK..], d, &f)
        });
    }
    // SAFETY: every element was written (both inputs are at least `n` long).
    unsafe { out.set_len(n) };
    out
}

/// Walk `shape` for N operands with the given (already broadcast) layouts, calling
/// `f(offsets, inner_strides, inner_len)` once per innermost run.
fn for_each_run<const N: usize>(
    shape: &[usize],
    layouts: [&Layout; N],
    mut f: impl FnMut([usize; N], [usize; N], usize),
) {
    let stride_refs: [&[usize]; N] = std::array::from_fn(|k| &layouts[k].strides[..]);
    let (cshape, cstrides) = coalesce(shape, &stride_refs);
    if cshape.contains(&0) {
        return;
    }
    let nd = cshape.len();
    let inner = cshape[nd - 1];
    let inner_strides: [usize; N] = std::array::from_fn(|k| cstrides[k][nd - 1]);
    let outer: usize = cshape[..nd - 1].iter().product();
    let mut idx: crate::shape::Dims = smallvec::smallvec![0; nd - 1];
    let mut offs: [usize; N] = std::array::from_fn(|k| layouts[k].offset);
    for _ in 0..outer {
        f(offs, inner_strides, inner);
        for d in (0..nd - 1).rev() {
            idx[d] += 1;
            if idx[d] < cshape[d] {
                for k in 0..N {
                    offs[k] += cstrides[k][d];
                }
                break;
            }
            for k in 0..N {
                offs[k] -= (cshape[d] - 1) * cstrides[k][d];
            }
            idx[d] = 0;
        }
    }
}

/// An operand read as `T`: borrowed when it already has dtype `T`, else a contiguous
/// cast copy.
pub fn as_dtype<T: Element>(d: &Data) -> Cow<'_, Data> {
    if d.dtype() == T::DTYPE {
        Cow::Borrowed(d)
    } else {
        Cow::Owned(crate::kernels::cast_data(d, T::DTYPE))
    }
}

/// Broadcasting binary kernel.
pub fn zip<T: Element, U: Element>(
    a: &Data,
    b: &Data,
    f: impl Fn(T, T) -> U + Sync + Send,
) -> Result<Data> {
    let shape = broadcast_shapes(&a.layout().shape, &b.layout().shape)?;
    let n = crate::shape::checked_numel(&shape)?;
    crate::storage::ensure_allocatable(n, std::mem::size_of::<U>())?;
    let (a, b) = (as_dtype::<T>(a), as_dtype::<T>(b));
    let (la, lb) = (a.layout(), b.layout());
    // One operand is a single value and the other already has the output's shape, in
    // order (`x * 0.5`, a scalar tensor times a tensor): read the value once and map.
    let whole = |l: &Layout| l.shape == shape && l.is_contiguous();
    if lb.numel() == 1 && whole(la) {
        // SAFETY: read-only; `x` is dropped before returning; the offset is the single
        // element of b's checked layout.
        let (x, q) = unsafe { (contiguous_data::<T>(&a), access::<T>(&b).read(lb.offset)) };
        return Ok(data_from(map_slice(&x, move |p| f(p, q)), &shape));
    }
    if la.numel() == 1 && whole(lb) {
        // SAFETY: as above, with the operands' roles swapped.
        let (p, y) = unsafe { (access::<T>(&a).read(la.offset), contiguous_data::<T>(&b)) };
        return Ok(data_from(map_slice(&y, move |q| f(p, q)), &shape));
    }
    // One operand is whole, the other a contiguous row the size of the output's trailing
    // dims (`x + bias`): output row i is f(row i of the whole one, the row).
    if n > 0 && whole(la) && is_row_of(lb, &shape) {
        // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
        let (x, row) = unsafe { (contiguous_data::<T>(&a), contiguous_data::<T>(&b)) };
        return Ok(data_from(map_rows(&x, &row, f), &shape));
    }
    if n > 0 && whole(lb) && is_row_of(la, &shape) {
        // SAFETY: as above, with the operands' roles swapped.
        let (row, y) = unsafe { (contiguous_data::<T>(&a), contiguous_data::<T>(&b)) };
        return Ok(data_from(map_rows(&y, &row, move |q, p| f(p, q)), &shape));
    }
    // One operand holds one value per output row, the other a contiguous row for each
    // (`x + v[:, None]`, the outer product `v[:, None] * w`). Through `par_tiles` the
    // bookkeeping of each row cost half as much again as its arithmetic.
    let rows_side = |l: &Layout| whole(l) || is_row_of(l, &shape);
    if n > 0 && rows_side(la) && is_column_of(lb, &shape) {
        // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
        let (rows, col) = unsafe { (contiguous_data::<T>(&a), contiguous_data::<T>(&b)) };
        if let Some(out) = map_columns::<T, U, false>(&col, &rows, &shape, &f) {
            return Ok(data_from(out, &shape));
        }
    }
    if n > 0 && rows_side(lb) && is_column_of(la, &shape) {
        // SAFETY: as above, with the operands' roles swapped.
        let (col, rows) = unsafe { (contiguous_data::<T>(&a), contiguous_data::<T>(&b)) };
        if let Some(out) = map_columns::<T, U, true>(&col, &rows, &shape, &f) {
            return Ok(data_from(out, &shape));
        }
    }
    if whole(la) && whole(lb) {
        // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
        let (x, y) = unsafe { (contiguous_data::<T>(&a), contiguous_data::<T>(&b)) };
        // `f` itself, not a reference to it: through `&&F` the compiler could not keep a
        // captured value in a register and the loop stayed scalar (lerp by a number).
        return Ok(data_from(zip_map_slices(&x, &y, f), &shape));
    }
    let sa = access_as::<T>(&a, la.expand_to(&shape)?);
    let sb = access_as::<T>(&b, lb.expand_to(&shape)?);
    let mut out: Vec<U> = Vec::with_capacity(n);
    let dst = &mut out.spare_capacity_mut()[..n];
    let f = &f;
    par_tiles(&shape, [sa.layout(), sb.layout()], dst, |t, out| {
        let (x, y) = (TileOperand::new(&sa, t, 0), TileOperand::new(&sb, t, 1));
        for r in 0..t.rows.len() {
            let d = t.piece(out, r);
            match (x.row(r), y.row(r)) {
                (Src::Run(p), Src::Run(q)) => zip_run(p, q, d, f),
                (Src::Run(p), Src::One(q)) => map_run(p, d, &move |v| f(v, q)),
                (Src::One(p), Src::Run(q)) => map_run(q, d, &move |v| f(p, v)),
                (Src::One(p), Src::One(q)) => d.iter_mut().for_each(|o| {
                    o.write(f(p, q));
                }),
            }
        }
    });
    // SAFETY: par_tiles hands every element of `dst` to exactly one tile row, and each is
    // written in full.
    unsafe { out.set_len(n) };
    Ok(data_from(out, &shape))
}

/// `dst[i] = f(x[i], y[i], z[i])` over `dst`'s length (see `map_run` for why out of line).
#[inline(never)]
fn zip3_run<T: Copy, U>(
    x: &[T],
    y: &[T],
    z: &[T],
    dst: &mut [MaybeUninit<U>],
    f: &impl Fn(T, T, T) -> U,
) {
    at_widest(
        #[inline(always)]
        || {
            for (((o, &p), &q), &r) in dst.iter_mut().zip(x).zip(y).zip(z) {
                o.write(f(p, q, r));
            }
        },
    )
}

/// Broadcasting ternary kernel (lerp with a tensor weight, addcmul, addcdiv): `f` of the
/// three operands read as `T`, in one pass.
pub fn zip3<T: Element, U: Element>(
    a: &Data,
    b: &Data,
    c: &Data,
    f: impl Fn(T, T, T) -> U + Sync + Send,
) -> Result<Data> {
    let shape = broadcast_shapes(
        &broadcast_shapes(&a.layout().shape, &b.layout().shape)?,
        &c.layout().shape,
    )?;
    let n = crate::shape::checked_numel(&shape)?;
    crate::storage::ensure_allocatable(n, std::mem::size_of::<U>())?;
    let (a, b, c) = (as_dtype::<T>(a), as_dtype::<T>(b), as_dtype::<T>(c));
    let operands = [
        access_as::<T>(&a, a.layout().expand_to(&shape)?),
        access_as::<T>(&b, b.layout().expand_to(&shape)?),
        access_as::<T>(&c, c.layout().expand_to(&shape)?),
    ];
    let layouts = [
        operands[0].layout(),
        operands[1].layout(),
        operands[2].layout(),
    ];
    let mut out: Vec<U> = Vec::with_capacity(n);
    let dst = &mut out.spare_capacity_mut()[..n];
    par_tiles(&shape, layouts, dst, |t, d| {
        let ops: [TileOperand<'_, '_, T, 3>; 3] =
            std::array::from_fn(|k| TileOperand::new(&operands[k], t, k));
        // A row's single values spread over the width, so the arithmetic is always the
        // one vectorized loop over three slices.
        let mut spread: [Vec<T>; 3] = Default::default();
        for r in 0..t.rows.len() {
            let rows: [Src<'_, T>; 3] = std::array::from_fn(|k| ops[k].row(r));
            for k in 0..3 {
                if let Src::One(v) = rows[k] {
                    spread[k].clear();
                    spread[k].resize(t.width, v);
                }
            }
            let slice = |k: usize| match rows[k] {
                Src::Run(run) => run,
                Src::One(_) => &spread[k][..],
            };
            zip3_run(slice(0), slice(1), slice(2), t.piece(d, r), &f);
        }
    });
    // SAFETY: par_tiles hands every element of `dst` to exactly one tile row, and each is
    // written in full.
    unsafe { out.set_len(n) };
    Ok(data_from(out, &shape))
}

/// Output elements per task of `par_tiles`.
const RUN_CHUNK: usize = 1 << 14;
/// Columns per tile when an operand's inner stride is neither 0 nor 1 (`x.t() + y`).
const TILE: usize = 64;

/// One tile of the output: some whole-row range of a task, over the columns
/// `c0..c0 + width` of the innermost dim.
struct Tile<'a, const N: usize> {
    /// Per row of the tile, each operand's offset of column `c0`.
    rows: &'a [[usize; N]],
    /// Each operand's stride along the innermost dim, and along the rows (the next dim
    /// out; 0 for a 1-d walk).
    strides: [usize; N],
    row_strides: [usize; N],
    width: usize,
    /// Where row 0 of the tile starts in the task's output, and the output's row pitch.
    base: usize,
    pitch: usize,
}

impl<const N: usize> Tile<'_, N> {
    /// Row `r`'s part of the task's output `d`.
    fn piece<'d, U>(&self, d: &'d mut [MaybeUninit<U>], r: usize) -> &'d mut [MaybeUninit<U>] {
        &mut d[self.base + r * self.pitch..][..self.width]
    }
}

/// Walk the output of `shape` (row-major, as `dst` is laid out) for N operands with the
/// given layouts (already broadcast to `shape`), calling `run(tile, d)` with a task's
/// part `d` of `dst`, where `tile.piece(d, r)` is the part that row `r` of the tile covers
/// (`tile.width` consecutive elements of one innermost row), and operand k's element for the j-th
/// element of row r is at `tile.rows[r][k] + j * tile.strides[k]` of its layout. Every
/// element of `dst` (which must hold the shape's numel) is in exactly one tile row. Split
/// over the team in whole rows when large; an element's operands never depend on the split.
///
/// Where an operand's inner stride is neither 0 nor 1 (`x.t() + y`), tiles are `TILE`
/// columns wide, so that an operand gathered tile by tile (`TileOperand`) reads each
/// cache line it brings in to the end at once (at a power-of-two stride the lines of a
/// wider walk all fall into one L1 set and evict each other: 5 ns an element for
/// x.t() + y of 1024 x 1024 against 1.5 ns at 1000 x 1000).
fn par_tiles<const N: usize, U: Send>(
    shape: &[usize],
    layouts: [&Layout; N],
    dst: &mut [MaybeUninit<U>],
    run: impl Fn(&Tile<'_, N>, &mut [MaybeUninit<U>]) + Sync,
) {
    let stride_refs: [&[usize]; N] = std::array::from_fn(|k| &layouts[k].strides[..]);
    let (cshape, cstrides) = coalesce(shape, &stride_refs);
    if cshape.contains(&0) || dst.is_empty() {
        return;
    }
    let nd = cshape.len();
    let inner = cshape[nd - 1];
    let strides: [usize; N] = std::array::from_fn(|k| cstrides[k][nd - 1]);
    let row_strides: [usize; N] =
        std::array::from_fn(|k| if nd > 1 { cstrides[k][nd - 2] } else { 0 });
    let outer_shape = &cshape[..nd - 1];
    // Tiles of at most TILE_ELEMS elements (so that gathered operands stay in L1).
    const TILE_ELEMS: usize = 1 << 12;
    let tile = if strides.iter().any(|&s| s > 1) && nd > 1 {
        TILE
    } else {
        inner.min(TILE_ELEMS)
    };
    // Each operand's offset of output row `row`.
    let row_start = |mut row: usize| -> [usize; N] {
        let mut offs: [usize; N] = std::array::from_fn(|k| layouts[k].offset);
        for dim in (0..nd - 1).rev() {
            let i = row % outer_shape[dim];
            row /= outer_shape[dim];
            for k in 0..N {
                offs[k] += i * cstrides[k][dim];
            }
        }
        offs
    };
    if inner > RUN_CHUNK {
        // Long rows (a whole contiguous tensor is one row): tasks are flat runs of
        // RUN_CHUNK elements, each within one or two rows, walked one row piece at a time.
        let task = |t: usize, d: &mut [MaybeUninit<U>]| {
            let (mut flat, mut done) = (t * RUN_CHUNK, 0);
            while done < d.len() {
                let (row, col) = (flat / inner, flat % inner);
                let width = (inner - col).min(d.len() - done).min(tile);
                let start = row_start(row);
                let at = [std::array::from_fn::<usize, N, _>(|k| {
                    start[k] + col * strides[k]
                })];
                let t = Tile {
                    rows: &at,
                    strides,
                    row_strides,
                    width,
                    base: done,
                    pitch: 0,
                };
                run(&t, d);
                done += width;
                flat += width;
            }
        };
        if dst.len() >= PARALLEL_GRAIN {
            crate::kernels::par_chunks_mut(dst, RUN_CHUNK, task);
        } else {
            task(0, dst);
        }
        return;
    }
    let rows_per_task = (RUN_CHUNK / inner).max(1);
    let task = |t: usize, d: &mut [MaybeUninit<U>]| {
        let first = t * rows_per_task;
        let rows = d.len() / inner;
        // Row offsets by an odometer from the task's first row.
        let mut idx: SmallVec<[usize; 6]> = SmallVec::from_elem(0, nd - 1);
        let mut rest = first;
        for dim in (0..nd - 1).rev() {
            idx[dim] = rest % outer_shape[dim];
            rest /= outer_shape[dim];
        }
        let mut offs = row_start(first);
        let mut starts: Vec<[usize; N]> = Vec::with_capacity(rows);
        for _ in 0..rows {
            starts.push(offs);
            for dim in (0..nd - 1).rev() {
                idx[dim] += 1;
                if idx[dim] < outer_shape[dim] {
                    for k in 0..N {
                        offs[k] += cstrides[k][dim];
                    }
                    break;
                }
                for k in 0..N {
                    offs[k] -= (outer_shape[dim] - 1) * cstrides[k][dim];
                }
                idx[dim] = 0;
            }
        }
        let mut at: Vec<[usize; N]> = Vec::with_capacity(rows);
        for c0 in (0..inner).step_by(tile) {
            let width = tile.min(inner - c0);
            let group = (TILE_ELEMS / width).max(1);
            for r0 in (0..rows).step_by(group) {
                let r1 = (r0 + group).min(rows);
                at.clear();
                at.extend(
                    starts[r0..r1]
                        .iter()
                        .map(|o| std::array::from_fn::<usize, N, _>(|k| o[k] + c0 * strides[k])),
                );
                let t = Tile {
                    rows: &at,
                    strides,
                    row_strides,
                    width,
                    base: r0 * inner + c0,
                    pitch: inner,
                };
                run(&t, d);
            }
        }
    };
    if dst.len() >= PARALLEL_GRAIN {
        crate::kernels::par_chunks_mut(dst, rows_per_task * inner, task);
    } else {
        task(0, dst);
    }
}

/// A row of one operand in a tile: elements in order, or one value for all of them.
#[derive(Clone, Copy)]
enum Src<'a, T> {
    Run(&'a [T]),
    One(T),
}

/// Operand k of a tile, row by row: stride-1 runs read in place, a broadcast value (stride
/// 0) read once per row, anything else (strided, transposed, bool bytes) gathered for the
/// whole tile into a buffer first, in the order that walks its memory (down the rows when
/// they are closer together than the columns, as in a transposed operand).
struct TileOperand<'a, 't, T: Element, const N: usize> {
    acc: &'a crate::storage::Access<'a, T>,
    tile: &'t Tile<'t, N>,
    k: usize,
    buf: Vec<T>,
}

impl<'a, 't, T: Element, const N: usize> TileOperand<'a, 't, T, N> {
    fn new(acc: &'a crate::storage::Access<'a, T>, tile: &'t Tile<'t, N>, k: usize) -> Self {
        let (stride, width) = (tile.strides[k], tile.width);
        let mut buf = Vec::new();
        // SAFETY (reads): each (row offset, stride, width) is a run of the operand's checked
        // layout (par_tiles' promise); nothing writes the operands meanwhile.
        let sliceable = stride == 1 && unsafe { acc.run(tile.rows[0][k], width) }.is_some();
        if stride != 0 && !sliceable {
            buf.resize(tile.rows.len() * width, T::zero());
            if tile.row_strides[k] < stride {
                for c in 0..width {
                    for (r, o) in tile.rows.iter().enumerate() {
                        // SAFETY: column c < width of row r's run (see above).
                        buf[r * width + c] = unsafe { acc.read(o[k] + c * stride) };
                    }
                }
            } else {
                for (row, o) in buf.chunks_mut(width).zip(tile.rows) {
                    for (c, v) in row.iter_mut().enumerate() {
                        // SAFETY: column c < width of this row's run (see above).
                        *v = unsafe { acc.read(o[k] + c * stride) };
                    }
                }
            }
        }
        TileOperand { acc, tile, k, buf }
    }

    fn row(&self, r: usize) -> Src<'_, T> {
        let (o, stride, width) = (
            self.tile.rows[r][self.k],
            self.tile.strides[self.k],
            self.tile.width,
        );
        if !self.buf.is_empty() {
            return Src::Run(&self.buf[r * width..][..width]);
        }
        // SAFETY: as in `new`; a slice only over a stride-1 run of a sliceable operand.
        unsafe {
            match stride {
                0 => Src::One(self.acc.read(o)),
                _ => Src::Run(self.acc.run(o, width).unwrap_or(&[])),
            }
        }
    }
}

/// A binary kernel over whole slices (a vector-math function of two arguments): both
/// operands as `T` in the broadcast shape's row-major order (borrowed where they already
/// are, expanded copies where they broadcast or are strided), so that every layout gets
/// the same per-element results.
pub fn zip_slices<T: Element, U: Element>(
    a: &Data,
    b: &Data,
    f: impl FnOnce(&[T], &[T]) -> Vec<U>,
) -> Result<Data> {
    let shape = broadcast_shapes(&a.layout().shape, &b.layout().shape)?;
    let n = crate::shape::checked_numel(&shape)?;
    crate::storage::ensure_allocatable(n, std::mem::size_of::<U>())?;
    let (a, b) = (as_dtype::<T>(a), as_dtype::<T>(b));
    fn whole<'d, T: Element>(d: &'d Data, shape: &[usize]) -> Result<Cow<'d, [T]>> {
        let l = d.layout();
        if l.shape[..] == shape[..] && l.is_contiguous() {
            // SAFETY: read-only; the borrowed slice is dropped before the kernel returns.
            return Ok(unsafe { contiguous_data::<T>(d) });
        }
        let expanded = access_as::<T>(d, l.expand_to(shape)?);
        Ok(Cow::Owned(crate::kernels::gather_cast::<T, T>(&expanded)))
    }
    let (x, y) = (whole::<T>(&a, &shape)?, whole::<T>(&b, &shape)?);
    Ok(data_from(f(&x, &y), &shape))
}

/// Whether `l` is contiguous and, leading 1s aside, the trailing dims of `shape`: one row
/// that broadcasting repeats over the leading dims.
fn is_row_of(l: &Layout, shape: &[usize]) -> bool {
    let own = &l.shape[l.shape.iter().take_while(|&&d| d == 1).count()..];
    !own.is_empty() && own.len() < shape.len() && shape.ends_with(own) && l.is_contiguous()
}

/// `f(x[i], row[i % row.len()])` for every element of `x` (whose length is a nonzero
/// multiple of the row's), split over the pool by rows when big enough.
fn map_rows<T: Element, U: Element>(
    x: &[T],
    row: &[T],
    f: impl Fn(T, T) -> U + Sync + Send,
) -> Vec<U> {
    let mut out: Vec<U> = Vec::with_capacity(x.len());
    let dst = &mut out.spare_capacity_mut()[..x.len()];
    let one_row = |(xs, d): (&[T], &mut [MaybeUninit<U>])| zip_run(xs, row, d, &f);
    if x.len() >= PARALLEL_GRAIN {
        let rows = (CHUNK / row.len()).max(1);
        crate::kernels::par_chunks_mut(dst, rows * row.len(), |c, d| {
            let xs = &x[c * rows * row.len()..][..d.len()];
            xs.chunks(row.len())
                .zip(d.chunks_mut(row.len()))
                .for_each(one_row)
        });
    } else {
        x.chunks(row.len())
            .zip(dst.chunks_mut(row.len()))
            .for_each(one_row);
    }
    // SAFETY: every row of `dst` was written in full: `x.len()` is a multiple of the
    // row's length, so the chunks of `x` and `dst` pair up exactly.
    unsafe { out.set_len(x.len()) };
    out
}

/// Whether `l`, leading 1s aside, is the dims of `shape` before its last (or trailing ones
/// of them) followed by a 1, where `shape`'s last dim is wider: one value per output row,
/// repeated over the leading dims it lacks. Any strides: `map_columns` reads it gathered.
fn is_column_of(l: &Layout, shape: &[usize]) -> bool {
    let own = &l.shape[l.shape.iter().take_while(|&&d| d == 1).count()..];
    match (own.split_last(), shape.split_last()) {
        (Some((&1, lead)), Some((&last, rows))) => {
            last > 1 && !lead.is_empty() && rows.ends_with(lead)
        }
        _ => false,
    }
}

/// The output of `shape` where each row r of its last dim combines `col[r % col.len()]`
/// with row `r % k` of `rows` (its k rows of that width): `f(col value, element)` when
/// COL_LEFT, else `f(element, col value)`. Split over the team in fixed runs of whole
/// rows, so no element depends on the thread count. None when the operands are not of
/// that form or the output is empty.
fn map_columns<T: Element, U: Element, const COL_LEFT: bool>(
    col: &[T],
    rows: &[T],
    shape: &[usize],
    f: &(impl Fn(T, T) -> U + Sync),
) -> Option<Vec<U>> {
    let n: usize = shape.iter().product();
    let width = *shape.last()?;
    if n == 0 || col.is_empty() || rows.is_empty() || !rows.len().is_multiple_of(width) {
        return None;
    }
    let mut out: Vec<U> = Vec::with_capacity(n);
    let dst = &mut out.spare_capacity_mut()[..n];
    if n >= PARALLEL_GRAIN {
        let per_task = (CHUNK / width).max(1);
        crate::kernels::par_chunks_mut(dst, per_task * width, |c, d| {
            column_run::<T, U, COL_LEFT>(col, rows, c * per_task, width, d, f)
        });
    } else {
        column_run::<T, U, COL_LEFT>(col, rows, 0, width, dst, f);
    }
    // SAFETY: `column_run` writes every element of the whole rows it is given (`col` and
    // `rows` are nonempty, checked above), and the tasks' parts of `dst` are whole rows
    // (`n` is the product of the dims, the last of which is `width`) that cover it.
    unsafe { out.set_len(n) };
    Some(out)
}

/// Output rows `first..` of `map_columns`, `dst` holding whole rows. One dispatched
/// function for all of them, the value of a row held in a local, so that each row's loop
/// is a vectorized scalar broadcast without a call or a reload per row (see `map_run`
/// for why out of line).
#[inline(never)]
fn column_run<T: Copy, U, const COL_LEFT: bool>(
    col: &[T],
    rows: &[T],
    first: usize,
    width: usize,
    dst: &mut [MaybeUninit<U>],
    f: &impl Fn(T, T) -> U,
) {
    let k = rows.len() / width;
    // Wrapping counters, not a division per row.
    let (mut i, mut j) = (first % col.len(), first % k);
    at_widest(
        #[inline(always)]
        || {
            for d in dst.chunks_exact_mut(width) {
                let (q, row) = (col[i], &rows[j * width..][..width]);
                if COL_LEFT {
                    for (o, &p) in d.iter_mut().zip(row) {
                        o.write(f(q, p));
                    }
                } else {
                    for (o, &p) in d.iter_mut().zip(row) {
                        o.write(f(p, q));
                    }
                }
                i = if i + 1 == col.len() { 0 } else { i + 1 };
                j = if j + 1 == k { 0 } else { j + 1 };
            }
        },
    )
}

/// Broadcasting ternary kernel for `where(cond, a, b)`.
pub fn select<T: Element>(cond: &Data, a: &Data, b: &Data) -> Result<Data> {
    let shape = broadcast_shapes(
        &broadcast_shapes(&cond.layout().shape, &a.layout().shape)?,
        &b.layout().shape,
    )?;
    crate::storage::ensure_allocatable(
        crate::shape::checked_numel(&shape)?,
        std::mem::size_of::<T>(),
    )?;
    let cond = as_dtype::<bool>(cond);
    let (a, b) = (as_dtype::<T>(a), as_dtype::<T>(b));
    if let Some(out) = select_whole::<T>(&cond, &a, &b, &shape) {
        return Ok(out);
    }
    let sc = access_as::<bool>(&cond, cond.layout().expand_to(&shape)?);
    let sa = access_as::<T>(&a, a.layout().expand_to(&shape)?);
    let sb = access_as::<T>(&b, b.layout().expand_to(&shape)?);
    let mut out: Vec<T> = Vec::with_capacity(shape.iter().product());
    for_each_run(
        &shape,
        [sc.layout(), sa.layout(), sb.layout()],
        |[oc, oa, ob], [ic, ia, ib], len| {
            // SAFETY: runs of the three checked layouts; nothing writes storage here.
            out.extend((0..len).map(|i| unsafe {
                if sc.read(oc + i * ic) {
                    sa.read(oa + i * ia)
                } else {
                    sb.read(ob + i * ib)
                }
            }))
        },
    );
    Ok(data_from(out, &shape))
}

/// An operand of `select_whole`: all of the output's elements in order, or one value.
enum Side<'a, T: Element> {
    Whole(Cow<'a, [T]>),
    One(T),
}

/// `where` when the condition is contiguous in the output's shape and each value operand
/// is too or is a single value (`where(mask, x, 0.0)`): one pass over the condition's
/// bytes with a select per element, no branch. None for any other layout.
fn select_whole<T: Element>(cond: &Data, a: &Data, b: &Data, shape: &[usize]) -> Option<Data> {
    let whole = |l: &Layout| l.shape[..] == shape[..] && l.is_contiguous();
    fn side<'d, T: Element>(d: &'d Data, whole: impl Fn(&Layout) -> bool) -> Option<Side<'d, T>> {
        let l = d.layout();
        if l.numel() == 1 {
            // SAFETY: the offset is the single element of the checked layout.
            Some(Side::One(unsafe { access::<T>(d).read(l.offset) }))
        } else if whole(l) {
            // SAFETY: read-only; dropped before the kernel returns.
            Some(Side::Whole(unsafe { contiguous_data::<T>(d) }))
        } else {
            None
        }
    }
    let lc = cond.layout();
    if !whole(lc) || lc.numel() == 0 {
        return None;
    }
    let (p, q) = (side::<T>(a, whole)?, side::<T>(b, whole)?);
    let sc = access::<bool>(cond);
    // SAFETY: the whole contiguous layout of `cond`, read only while the kernel runs.
    let bytes = unsafe { sc.bool_bytes(lc.offset, lc.numel()) }?;
    Some(data_from(pick(bytes, &p, &q), shape))
}

/// `cond[i] != 0 ? x[i] : y[i]` for every byte of `cond`, split over the team when large.
fn pick<T: Element>(cond: &[u8], x: &Side<'_, T>, y: &Side<'_, T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(cond.len());
    let run = |c: usize, d: &mut [MaybeUninit<T>]| {
        let start = c * CHUNK;
        let range = start..start + d.len();
        pick_run(
            &cond[range.clone()],
            x.part(range.clone()),
            y.part(range),
            d,
        );
    };
    let dst = &mut out.spare_capacity_mut()[..cond.len()];
    if cond.len() >= PARALLEL_GRAIN {
        crate::kernels::par_chunks_mut(dst, CHUNK, run);
    } else {
        run(0, dst);
    }
    // SAFETY: every element of `dst` (as long as `cond`) was written.
    unsafe { out.set_len(cond.len()) };
    out
}

impl<T: Element> Side<'_, T> {
    /// The operand over the output elements `range`.
    fn part(&self, range: std::ops::Range<usize>) -> Part<'_, T> {
        match self {
            Side::Whole(v) => Part::Run(&v[range]),
            &Side::One(v) => Part::One(v),
        }
    }
}

/// A value operand of one chunk of `pick`: its elements there, or the single value.
#[derive(Clone, Copy)]
enum Part<'a, T> {
    Run(&'a [T]),
    One(T),
}

/// One chunk of `pick` (all slices as long as `d`): one loop per kind of operand pair, so
/// that each vectorizes, out of line as `map_run`.
#[inline(never)]
fn pick_run<T: Copy>(cond: &[u8], x: Part<'_, T>, y: Part<'_, T>, d: &mut [MaybeUninit<T>]) {
    at_widest(
        #[inline(always)]
        || {
            let either = |k: u8, p: T, q: T| if k != 0 { p } else { q };
            let lanes = d.iter_mut().zip(cond);
            match (x, y) {
                (Part::Run(x), Part::Run(y)) => {
                    for (((o, &k), &p), &q) in lanes.zip(x).zip(y) {
                        o.write(either(k, p, q));
                    }
                }
                (Part::Run(x), Part::One(q)) => {
                    for ((o, &k), &p) in lanes.zip(x) {
                        o.write(either(k, p, q));
                    }
                }
                (Part::One(p), Part::Run(y)) => {
                    for ((o, &k), &q) in lanes.zip(y) {
                        o.write(either(k, p, q));
                    }
                }
                (Part::One(p), Part::One(q)) => {
                    for (o, &k) in lanes {
                        o.write(either(k, p, q));
                    }
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Awkward f32 values: signed zeros, subnormals, infinities, NaN, and ordinary ones.
    fn values(n: usize) -> Vec<f32> {
        let special = [
            0.0,
            -0.0,
            1e-40,
            -1e-45,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        (0..n)
            .map(|i| match i % 11 {
                k if k < special.len() => special[k],
                _ => (i as f32 * 0.37).sin() * 1e3,
            })
            .collect()
    }

    fn written<U: Copy>(d: &[MaybeUninit<U>]) -> Vec<U> {
        // SAFETY: the callers pass buffers their loop has written in full.
        d.iter().map(|v| unsafe { v.assume_init() }).collect()
    }

    fn same_bits(a: &[f32], b: &[f32]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
    }

    /// The loops `at_widest` compiles for AVX2 / AVX-512 give the bits of a plain loop
    /// built for the baseline (no FMA contraction, no reordering), as its note promises.
    #[test]
    fn dispatched_loops_match_the_baseline_bit_for_bit() {
        let (x, y) = (values(1000), values(1003)[3..].to_vec());
        let (v, w) = (1.01f32, -3.5f32);
        let f = move |p: f32| p * v + w;
        let mut d = vec![MaybeUninit::uninit(); x.len()];
        map_run(&x, &mut d, &f);
        let expected: Vec<f32> = x.iter().map(|&p| std::hint::black_box(p * v) + w).collect();
        assert!(same_bits(&written(&d), &expected));

        let g = |p: f32, q: f32| p * q - p / q;
        zip_run(&x, &y, &mut d, &g);
        let expected: Vec<f32> = x.iter().zip(&y).map(|(&p, &q)| g(p, q)).collect();
        assert!(same_bits(&written(&d), &expected));

        let cond: Vec<u8> = (0..x.len()).map(|i| (i % 3 == 0) as u8).collect();
        pick_run(&cond, Part::Run(&x), Part::One(w), &mut d);
        let expected: Vec<f32> = x
            .iter()
            .zip(&cond)
            .map(|(&p, &k)| if k != 0 { p } else { w })
            .collect();
        assert!(same_bits(&written(&d), &expected));

        let mut z = x.clone();
        crate::kernels::copy::update_zip_run(&mut z, &y, &move |p, q| p - v * q);
        let expected: Vec<f32> = x.iter().zip(&y).map(|(&p, &q)| p - v * q).collect();
        assert!(same_bits(&z, &expected));
    }
}
