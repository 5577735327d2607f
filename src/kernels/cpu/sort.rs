//! Sorting along one dim on the CPU (sort, and the medians picked from sorted lines).

use std::cmp::Ordering;

use crate::error::Result;
use crate::kernels::kinds::SortKind;
use crate::kernels::traits::Real;
use crate::kernels::{data_from, gather_data};
use crate::storage::Data;

/// NaN-aware ascending order: NaN is larger than every number and equal to NaN.
pub(crate) fn ascending<T: Real>(a: T, b: T) -> Ordering {
    match (a.is_nan_r(), b.is_nan_r()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// Values and source indices of every line of `x` along `dim`, per `kind`: the whole
/// sorted line (same shape as x), or one element (the dim dropped).
pub fn sort(x: &Data, dim: usize, kind: SortKind) -> Result<(Data, Data)> {
    let shape = x.layout().shape.clone();
    let len = shape.get(dim).copied().unwrap_or(1);
    let inner: usize = shape.get(dim + 1..).map_or(1, |s| s.iter().product());
    let outer: usize = shape[..dim.min(shape.len())].iter().product();
    let mut out_shape = shape.clone();
    if matches!(kind, SortKind::Median { .. }) && !out_shape.is_empty() {
        out_shape.remove(dim);
    }
    let out_shape = &out_shape;
    Ok(crate::with_real!(x.dtype(), "sort", T => {
        let v = gather_data::<T>(x);
        let mut values = Vec::with_capacity(v.len());
        let mut indices = Vec::with_capacity(v.len());
        let mut line: Vec<(T, i64)> = Vec::with_capacity(len);
        // One pass per line, lines in row-major order of the other dims.
        let mut picked: Vec<(T, i64)> = Vec::with_capacity(outer * inner);
        for o in 0..outer {
            for i in 0..inner {
                line.clear();
                line.extend((0..len).map(|k| (v[o * len * inner + k * inner + i], k as i64)));
                match kind {
                    SortKind::Sort { descending } => {
                        line.sort_by(|a, b| {
                            let ord = ascending(a.0, b.0);
                            if descending { ord.reverse() } else { ord }
                        });
                        picked.extend_from_slice(&line);
                    }
                    SortKind::Median { ignore_nan } => picked.push(median(&mut line, ignore_nan)),
                }
            }
        }
        match kind {
            SortKind::Sort { .. } => {
                // `picked` holds lines (o, i) each of `len`; lay them back along `dim`.
                values.extend_from_slice(&v);
                indices.resize(v.len(), 0);
                for (n, chunk) in picked.chunks(len.max(1)).enumerate() {
                    let (o, i) = (n / inner.max(1), n % inner.max(1));
                    for (k, &(val, idx)) in chunk.iter().enumerate() {
                        values[o * len * inner + k * inner + i] = val;
                        indices[o * len * inner + k * inner + i] = idx;
                    }
                }
            }
            SortKind::Median { .. } => {
                let (v, i): (Vec<T>, Vec<i64>) = picked.into_iter().unzip();
                values = v;
                indices = i;
            }
        }
        (data_from(values, out_shape), data_from(indices, out_shape))
    }))
}

/// The lower median of a nonempty line (see `SortKind::Median`).
fn median<T: Real>(line: &mut [(T, i64)], ignore_nan: bool) -> (T, i64) {
    if !ignore_nan {
        if let Some(&nan) = line.iter().find(|(v, _)| v.is_nan_r()) {
            return nan;
        }
    }
    line.sort_by(|a, b| ascending(a.0, b.0));
    let numbers = line.iter().filter(|(v, _)| !v.is_nan_r()).count();
    // All NaN (only when ignoring them): torch answers NaN at index 0.
    let k = if numbers == 0 { 0 } else { (numbers - 1) / 2 };
    line[k]
}
