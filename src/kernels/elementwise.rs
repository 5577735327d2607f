//! Elementwise kernels: map (unary), zip (broadcasting binary), zip3 (where).

use std::borrow::Cow;
use std::mem::MaybeUninit;

use crate::dtype::Element;
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
    // SAFETY: read-only; `data` is dropped before returning and the output is fresh.
    let data = unsafe { contiguous_data::<T>(x) };
    data_from(map_slice(&data, f), &x.layout().shape)
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
        return Ok(data_from(map_rows(&x, &row, &f), &shape));
    }
    if n > 0 && whole(lb) && is_row_of(la, &shape) {
        // SAFETY: as above, with the operands' roles swapped.
        let (row, y) = unsafe { (contiguous_data::<T>(&a), contiguous_data::<T>(&b)) };
        return Ok(data_from(map_rows(&y, &row, |q, p| f(p, q)), &shape));
    }
    if whole(la) && whole(lb) {
        // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
        let (x, y) = unsafe { (contiguous_data::<T>(&a), contiguous_data::<T>(&b)) };
        return Ok(data_from(zip_map_slices(&x, &y, &f), &shape));
    }
    let sa = access_as::<T>(&a, la.expand_to(&shape)?);
    let sb = access_as::<T>(&b, lb.expand_to(&shape)?);
    let mut out: Vec<U> = Vec::with_capacity(n);
    for_each_run(
        &shape,
        [sa.layout(), sb.layout()],
        |[oa, ob], [ia, ib], len| {
            // SAFETY: (oa, ia, len) and (ob, ib, len) are runs of the two checked layouts, and
            // a slice is formed only over a stride-1 run; nothing writes storage here (the
            // output is a fresh Vec).
            unsafe {
                let run_a = if ia == 1 { sa.run(oa, len) } else { None };
                let run_b = if ib == 1 { sb.run(ob, len) } else { None };
                match (run_a, run_b, ia, ib) {
                    (Some(x), Some(y), _, _) => out.extend(x.iter().zip(y).map(|(&p, &q)| f(p, q))),
                    (Some(x), None, _, 0) => {
                        let q = sb.read(ob);
                        out.extend(x.iter().map(|&p| f(p, q)))
                    }
                    (None, Some(y), 0, _) => {
                        let p = sa.read(oa);
                        out.extend(y.iter().map(|&q| f(p, q)))
                    }
                    _ => {
                        out.extend((0..len).map(|i| f(sa.read(oa + i * ia), sb.read(ob + i * ib))))
                    }
                }
            }
        },
    );
    Ok(data_from(out, &shape))
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
