//! Inclusive scans along one dim on the CPU.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::kinds::Scan;
use crate::kernels::traits::{Arith, Real};
use crate::kernels::{cast_data, data_from, gather_data};
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
            data_from(scan_lines::<T>(x, len, inner, |acc, v| acc + v), &shape)
        }),
        Scan::Prod => crate::with_arith!(dtype, "cumprod_out_cpu", T => {
            data_from(scan_lines::<T>(x, len, inner, |acc, v| acc * v), &shape)
        }),
        Scan::LogSumExp => {
            if !dtype.is_floating_point() {
                return Err(crate::dtype::unsupported("logcumsumexp_out_cpu", dtype));
            }
            // In float64 for every floating dtype (half types would lose the running sum).
            let lines = scan_lines::<f64>(x, len, inner, log_add_exp);
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

/// Every line of `len` elements, `inner` apart, scanned with `step(acc, v)` in place of
/// a row-major copy of `x` (one pass, in order, so results do not depend on threads).
fn scan_lines<T: Arith>(x: &Data, len: usize, inner: usize, step: impl Fn(T, T) -> T) -> Vec<T> {
    let mut v = gather_data::<T>(x);
    if len == 0 || inner == 0 {
        return v;
    }
    for block in v.chunks_mut(len * inner) {
        for k in 1..len {
            let (done, rest) = block.split_at_mut(k * inner);
            let prev = &done[(k - 1) * inner..];
            for (cur, &p) in rest[..inner].iter_mut().zip(prev) {
                *cur = step(p, *cur);
            }
        }
    }
    v
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

/// torch's rule: the new element takes over when it is NaN, or when the running value
/// is not NaN and the new one is at least as extreme (so ties take the later index).
fn extreme_lines<T: Real>(x: &Data, len: usize, inner: usize, max: bool) -> (Vec<T>, Vec<i64>) {
    let mut v = gather_data::<T>(x);
    let mut idx = vec![0i64; v.len()];
    if len == 0 || inner == 0 {
        return (v, idx);
    }
    let block = len * inner;
    for (vals, ids) in v.chunks_mut(block).zip(idx.chunks_mut(block)) {
        for k in 1..len {
            for c in 0..inner {
                let (p, cur) = ((k - 1) * inner + c, k * inner + c);
                let (best, new) = (vals[p], vals[cur]);
                let wins = if max { new >= best } else { new <= best };
                if new.is_nan_r() || (!best.is_nan_r() && wins) {
                    ids[cur] = k as i64;
                } else {
                    vals[cur] = best;
                    ids[cur] = ids[p];
                }
            }
        }
    }
    (v, idx)
}
