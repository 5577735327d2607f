//! Inclusive scans along one dim on the CPU.

use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::kinds::Scan;
use crate::kernels::traits::Arith;
use crate::kernels::{data_from, gather_data};
use crate::storage::Data;

pub fn scan(x: &Data, dim: usize, op: Scan, dtype: DType) -> Result<Data> {
    let shape = x.layout().shape.clone();
    // The scanned elements of one line are `inner` apart in row-major order.
    let len = shape.get(dim).copied().unwrap_or(1);
    let inner: usize = shape.get(dim + 1..).map_or(1, |s| s.iter().product());
    Ok(match op {
        Scan::Sum => crate::with_arith!(dtype, "cumsum_out_cpu", T => {
            data_from(scan_lines::<T>(x, len, inner, |acc, v| acc + v), &shape)
        }),
    })
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
