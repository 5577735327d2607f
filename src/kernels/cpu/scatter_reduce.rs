//! `scatter_reduce`: `src`'s values combined into a copy of `x` at `index` along a dim
//! by sum, prod, mean, amax or amin. Real dtypes reduce in float64 (integers up to
//! 2^53 exactly; an integer mean rounds down, as torch's), complex ones in complex128.

use num_complex::Complex64;

use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::index::for_each_scatter;
use crate::kernels::kinds::ScatterReduce;
use crate::kernels::{cast_data, data_from, gather_data};
use crate::storage::Data;

/// The reduction over a row-major copy of `x` (`shape`). `replace(cur, v)` says whether
/// `v` takes `cur`'s place (amax / amin); `mean(total, n)` divides.
#[allow(clippy::too_many_arguments)]
fn combine<T: crate::kernels::traits::Arith>(
    mut out: Vec<T>,
    shape: &[usize],
    dim: usize,
    index: &Data,
    src: &Data,
    reduce: ScatterReduce,
    include_self: bool,
    replace: impl Fn(T, T) -> bool,
    mean: impl Fn(T, usize) -> T,
) -> Result<Vec<T>> {
    let vals: Vec<T> = gather_data(src);
    // How many values each position holds (its own counts when included).
    let mut counts = vec![usize::from(include_self); out.len()];
    for_each_scatter(index, shape, &src.layout().shape, dim, |off, voff| {
        let (cur, v) = (out[off], vals[voff]);
        out[off] = if counts[off] == 0 {
            v
        } else {
            match reduce {
                ScatterReduce::Sum | ScatterReduce::Mean => cur + v,
                ScatterReduce::Prod => cur * v,
                ScatterReduce::Amax | ScatterReduce::Amin if replace(cur, v) => v,
                ScatterReduce::Amax | ScatterReduce::Amin => cur,
            }
        };
        counts[off] += 1;
    })?;
    if reduce == ScatterReduce::Mean {
        for (o, &n) in out.iter_mut().zip(&counts) {
            if n > 1 {
                *o = mean(*o, n);
            }
        }
    }
    Ok(out)
}

pub fn scatter_reduce(
    x: &Data,
    dim: usize,
    index: &Data,
    src: &Data,
    reduce: ScatterReduce,
    include_self: bool,
) -> Result<Data> {
    let shape = x.layout().shape.clone();
    let dtype = x.dtype();
    let picks_extreme = matches!(reduce, ScatterReduce::Amax | ScatterReduce::Amin);
    if dtype == DType::Bool || (dtype.is_complex() && picks_extreme) {
        let kernel = format!("scatter_gather_tensor_cpu_reduce_{}", reduce.name());
        return Err(crate::dtype::unsupported(&kernel, dtype));
    }
    let out = if dtype.is_complex() {
        let out = combine::<Complex64>(
            gather_data(x),
            &shape,
            dim,
            index,
            src,
            reduce,
            include_self,
            |_, _| false,
            |total, n| total / n as f64,
        )?;
        data_from(out, &shape)
    } else {
        let floor = !dtype.is_floating_point();
        let max = reduce == ScatterReduce::Amax;
        // NaN wins and stays (torch's extremes propagate NaN).
        let replace =
            |cur: f64, v: f64| !cur.is_nan() && (v.is_nan() || if max { v > cur } else { v < cur });
        let out = combine::<f64>(
            gather_data(x),
            &shape,
            dim,
            index,
            src,
            reduce,
            include_self,
            replace,
            |total, n| {
                let q = total / n as f64;
                if floor {
                    q.floor()
                } else {
                    q
                }
            },
        )?;
        data_from(out, &shape)
    };
    Ok(if out.dtype() == dtype {
        out
    } else {
        cast_data(&out, dtype)
    })
}
