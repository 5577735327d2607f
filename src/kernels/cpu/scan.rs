//! Inclusive scans along one dim on the CPU.

use std::mem::MaybeUninit;

use half::{bf16, f16};
use num_complex::{Complex32, Complex64};

use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::kernels::kinds::Scan;
use crate::kernels::traits::{Arith, Real};
use crate::kernels::{
    at_widest, cast_data, contiguous_data, data_from, par_chunks_mut, par_map_owned, PARALLEL_GRAIN,
};
use crate::storage::Data;

/// The length of the scanned dim and how far apart its elements are in row-major order.
fn line_geometry(x: &Data, dim: usize) -> (usize, usize) {
    let shape = &x.layout().shape;
    let len = shape.get(dim).copied().unwrap_or(1);
    let inner: usize = shape.get(dim + 1..).map_or(1, |s| s.iter().product());
    (len, inner)
}

pub fn scan(x: &Data, dim: usize, op: Scan, dtype: DType) -> Result<Data> {
    let shape = x.layout().shape.clone();
    let (len, inner) = line_geometry(x, dim);
    Ok(match op {
        Scan::Sum => crate::with_arith!(dtype, "cumsum_out_cpu", T => {
            data_from(scan_lines::<T>(x, len, inner, Element::zero(), |acc, v| acc + v), &shape)
        }),
        Scan::Prod => crate::with_arith!(dtype, "cumprod_out_cpu", T => {
            data_from(scan_lines::<T>(x, len, inner, Element::one(), |acc, v| acc * v), &shape)
        }),
        Scan::LogSumExp => {
            if !dtype.is_floating_point() {
                return Err(crate::dtype::unsupported("logcumsumexp_out_cpu", dtype));
            }
            // In float64 for every floating dtype (half types would lose the running sum).
            let lines = scan_lines::<f64>(x, len, inner, f64::NEG_INFINITY, log_add_exp);
            cast_data(&data_from(lines, &shape), dtype)
        }
        Scan::Max | Scan::Min => {
            return Err(Error::runtime(
                "internal error: running max/min go through scan_with_index",
            ))
        }
    })
}

/// log(exp(a) + exp(b)) from the larger of the two, so nothing overflows; two equal
/// infinities give themselves (their difference would be NaN), NaN propagates.
fn log_add_exp(a: f64, b: f64) -> f64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    if lo != hi || lo.is_finite() {
        (lo - hi).exp().ln_1p() + hi
    } else {
        a
    }
}

/// An element type and the type its running sums and products accumulate in: torch's
/// CPU accumulation type (double for float, float for the half types, complex double for
/// complex float), so a long float32 cumsum keeps counting past 2^24 as torch's does.
trait ScanElem: Element {
    type Acc: Arith;
    fn widen(self) -> Self::Acc;
    fn narrow(acc: Self::Acc) -> Self;
}

macro_rules! scan_in {
    ($($t:ty => $acc:ty, $widen:expr, $narrow:expr;)*) => {$(
        impl ScanElem for $t {
            type Acc = $acc;
            #[inline(always)]
            fn widen(self) -> $acc { $widen(self) }
            #[inline(always)]
            fn narrow(acc: $acc) -> $t { $narrow(acc) }
        }
    )*};
}
scan_in! {
    u8 => u8, |v| v, |a| a;
    i32 => i32, |v| v, |a| a;
    i64 => i64, |v| v, |a| a;
    f64 => f64, |v| v, |a| a;
    Complex64 => Complex64, |v| v, |a| a;
    f32 => f64, f64::from, |a: f64| a as f32;
    f16 => f32, f16::to_f32, f16::from_f32;
    bf16 => f32, bf16::to_f32, bf16::from_f32;
    Complex32 => Complex64, |v: Complex32| Complex64::new(v.re.into(), v.im.into()),
        |a: Complex64| Complex32::new(a.re as f32, a.im as f32);
}
/// Rows scanned side by side when the scanned dim is the last one (independent chains
/// hide the latency of each step).
const ROWS_AT_ONCE: usize = 4;

/// Every line of `len` elements, `inner` apart, scanned from `init` with `step(acc, v)`
/// in the accumulation type, into a new row-major Vec. Each line runs in order, so a
/// result does not depend on the thread count; blocks of whole lines are split over the
/// pool.
fn scan_lines<T: ScanElem>(
    x: &Data,
    len: usize,
    inner: usize,
    init: T::Acc,
    step: impl Fn(T::Acc, T::Acc) -> T::Acc + Sync + Send,
) -> Vec<T> {
    // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
    let src = unsafe { contiguous_data::<T>(x) };
    let n = src.len();
    let block = len * inner;
    let mut out = Vec::with_capacity(n);
    if block == 0 {
        return out;
    }
    let dst = &mut out.spare_capacity_mut()[..n];
    let scan = |s: &[T], d: &mut [MaybeUninit<T>]| match inner {
        1 => scan_rows(s, d, len, init, &step),
        _ => {
            for (s, d) in s.chunks(block).zip(d.chunks_mut(block)) {
                scan_columns(s, d, inner, init, &step);
            }
        }
    };
    // Tasks of whole blocks (for rows, whole groups of rows), about 64K elements each.
    let per_task = block
        * (1usize << 16)
            .div_ceil(block)
            .next_multiple_of(ROWS_AT_ONCE);
    if n >= PARALLEL_GRAIN && n > per_task {
        par_chunks_mut(dst, per_task, |t, d| {
            scan(&src[t * per_task..][..d.len()], d)
        });
    } else {
        scan(&src, dst);
    }
    // SAFETY: the scans wrote each of the n elements.
    unsafe { out.set_len(n) };
    out
}

/// Contiguous lines of `len` (the last dim scanned), `ROWS_AT_ONCE` at a time.
fn scan_rows<T: ScanElem>(
    src: &[T],
    dst: &mut [MaybeUninit<T>],
    len: usize,
    init: T::Acc,
    step: &impl Fn(T::Acc, T::Acc) -> T::Acc,
) {
    let group = len * ROWS_AT_ONCE;
    let mut groups = src.chunks_exact(group).zip(dst.chunks_exact_mut(group));
    for (s, d) in &mut groups {
        let mut acc = [init; ROWS_AT_ONCE];
        for k in 0..len {
            for (r, a) in acc.iter_mut().enumerate() {
                *a = step(*a, s[r * len + k].widen());
                d[r * len + k].write(T::narrow(*a));
            }
        }
    }
    let rest = src.len() / group * group;
    for (s, d) in src[rest..].chunks(len).zip(dst[rest..].chunks_mut(len)) {
        let mut acc = init;
        for (d, &v) in d.iter_mut().zip(s) {
            acc = step(acc, v.widen());
            d.write(T::narrow(acc));
        }
    }
}

/// One block of `len` rows of `inner` columns, scanned down the columns.
fn scan_columns<T: ScanElem>(
    src: &[T],
    dst: &mut [MaybeUninit<T>],
    inner: usize,
    init: T::Acc,
    step: &impl Fn(T::Acc, T::Acc) -> T::Acc,
) {
    let mut acc = vec![init; inner];
    for (s, d) in src.chunks_exact(inner).zip(dst.chunks_exact_mut(inner)) {
        for ((a, &v), d) in acc.iter_mut().zip(s).zip(d) {
            *a = step(*a, v.widen());
            d.write(T::narrow(*a));
        }
    }
}

/// cummax / cummin: the running extreme along `dim` and the index it came from.
pub fn scan_with_index(x: &Data, dim: usize, op: Scan) -> Result<(Data, Data)> {
    let shape = x.layout().shape.clone();
    let (len, inner) = line_geometry(x, dim);
    let (max, name) = match op {
        Scan::Max => (true, "cummax_cpu"),
        Scan::Min => (false, "cummin_cpu"),
        _ => {
            return Err(Error::runtime(
                "internal error: scan_with_index takes Max or Min",
            ))
        }
    };
    crate::with_real!(x.dtype(), name, T => {
        let (v, i) = extreme_lines::<T>(x, len, inner, max);
        Ok((data_from(v, &shape), data_from(i, &shape)))
    })
}

/// torch's rule: the new element takes over when it is NaN, or when it is at least as
/// extreme as the running value (so ties take the later index; a NaN running value
/// compares false and stays until a later NaN).
#[inline(always)]
fn takes_over<T: Real, const MAX: bool>(new: T, best: T) -> bool {
    (if MAX { new >= best } else { new <= best }) || new.is_nan_r()
}

/// Running extremes of every line (`len` elements `inner` apart) and their indices, into
/// new row-major Vecs. Lines run in order, split over the team in tasks of whole blocks
/// (for rows, whole groups of rows), as `scan_lines` does.
fn extreme_lines<T: Real>(x: &Data, len: usize, inner: usize, max: bool) -> (Vec<T>, Vec<i64>) {
    // SAFETY: read-only; dropped before returning; the outputs are fresh Vecs.
    let src = unsafe { contiguous_data::<T>(x) };
    let n = src.len();
    let block = len * inner;
    let (mut vals, mut ids) = (Vec::with_capacity(n), Vec::with_capacity(n));
    if block == 0 {
        return (vals, ids);
    }
    let run = |s: &[T], v: &mut [MaybeUninit<T>], i: &mut [MaybeUninit<i64>]| match max {
        true => extreme_blocks::<T, true>(s, v, i, len, inner),
        false => extreme_blocks::<T, false>(s, v, i, len, inner),
    };
    let per_task = block
        * (1usize << 16)
            .div_ceil(block)
            .next_multiple_of(ROWS_AT_ONCE);
    let (v_out, i_out) = (
        &mut vals.spare_capacity_mut()[..n],
        &mut ids.spare_capacity_mut()[..n],
    );
    if n >= PARALLEL_GRAIN && n > per_task {
        let parts = v_out.chunks_mut(per_task).zip(i_out.chunks_mut(per_task));
        par_map_owned(parts.collect(), |t, (v, i)| {
            run(&src[t * per_task..][..v.len()], v, i)
        });
    } else {
        run(&src, v_out, i_out);
    }
    // SAFETY: the blocks wrote each of the n values and indices.
    unsafe {
        vals.set_len(n);
        ids.set_len(n);
    }
    (vals, ids)
}

/// Whole blocks of `len × inner` elements: rows (`inner == 1`) `ROWS_AT_ONCE` at a time,
/// whose chains of compare-and-select are independent; otherwise down the columns of
/// each block, a row of `inner` running extremes at a time (which vectorizes).
fn extreme_blocks<T: Real, const MAX: bool>(
    src: &[T],
    vals: &mut [MaybeUninit<T>],
    ids: &mut [MaybeUninit<i64>],
    len: usize,
    inner: usize,
) {
    if inner == 1 {
        return extreme_rows::<T, MAX>(src, vals, ids, len);
    }
    let block = len * inner;
    let blocks = src.chunks_exact(block).zip(vals.chunks_exact_mut(block));
    for ((s, v), i) in blocks.zip(ids.chunks_exact_mut(block)) {
        let mut best = s[..inner].to_vec();
        let mut at = vec![0i64; inner];
        at_widest(
            #[inline(always)]
            move || {
                let rows = s.chunks_exact(inner).zip(v.chunks_exact_mut(inner));
                for (k, ((s, v), i)) in rows.zip(i.chunks_exact_mut(inner)).enumerate() {
                    let k = k as i64;
                    let lanes = best.iter_mut().zip(at.iter_mut()).zip(s);
                    for (((b, a), &new), (v, i)) in lanes.zip(v.iter_mut().zip(i.iter_mut())) {
                        let wins = takes_over::<T, MAX>(new, *b);
                        *b = if wins { new } else { *b };
                        *a = if wins { k } else { *a };
                        v.write(*b);
                        i.write(*a);
                    }
                }
            },
        )
    }
}

/// Contiguous lines of `len`, `ROWS_AT_ONCE` side by side (the rest one by one).
fn extreme_rows<T: Real, const MAX: bool>(
    src: &[T],
    vals: &mut [MaybeUninit<T>],
    ids: &mut [MaybeUninit<i64>],
    len: usize,
) {
    let group = len * ROWS_AT_ONCE;
    let groups = src.chunks_exact(group).zip(vals.chunks_exact_mut(group));
    for ((s, v), i) in groups.zip(ids.chunks_exact_mut(group)) {
        let mut best: [T; ROWS_AT_ONCE] = std::array::from_fn(|r| s[r * len]);
        let mut at = [0i64; ROWS_AT_ONCE];
        for k in 0..len {
            for r in 0..ROWS_AT_ONCE {
                let new = s[r * len + k];
                let wins = takes_over::<T, MAX>(new, best[r]);
                best[r] = if wins { new } else { best[r] };
                at[r] = if wins { k as i64 } else { at[r] };
                v[r * len + k].write(best[r]);
                i[r * len + k].write(at[r]);
            }
        }
    }
    let rest = src.len() / group * group;
    let lines = src[rest..].chunks(len).zip(vals[rest..].chunks_mut(len));
    for ((s, v), i) in lines.zip(ids[rest..].chunks_mut(len)) {
        let (mut best, mut at) = (s[0], 0i64);
        for (k, ((&new, v), i)) in s.iter().zip(v).zip(i).enumerate() {
            if takes_over::<T, MAX>(new, best) {
                (best, at) = (new, k as i64);
            }
            v.write(best);
            i.write(at);
        }
    }
}
