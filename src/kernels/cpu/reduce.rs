//! Reductions on the CPU: sums (blocked kernels in kernels/sum.rs) and max/min with
//! their positions.

use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::kernels::kinds::Reduce;
use crate::kernels::reduce::{
    in_memory_order, reduce_columns, reduce_rows, reduced_shape, strided_columns_copy,
    sum_strided_rows, ColumnFold,
};
use crate::kernels::sum::{sum_leading, sum_trailing, NanAsZero, Plain, Square, Term};
use crate::kernels::traits::{Arith, Real};
use crate::kernels::vmath::logsumexp_row;
use crate::kernels::{at_widest, cast_data, data_from};
use crate::storage::Data;

pub fn reduce(x: &Data, dims: &[usize], op: Reduce, dtype: DType) -> Result<Data> {
    if let Some((x, dims)) = in_memory_order(x, dims) {
        return reduce(&x, &dims, op, dtype);
    }
    if let Some(x) = strided_columns_copy(x, dims) {
        return reduce(&x, dims, op, dtype);
    }
    let out_shape = reduced_shape(&x.layout().shape, dims);
    match op {
        Reduce::Sum => sum::<Plain>(x, dims, dtype),
        Reduce::NanSum => sum::<NanAsZero>(x, dims, dtype),
        Reduce::SumOfSquares if dtype.is_complex() || dtype == DType::Bool => {
            Err(crate::dtype::unsupported("sum_of_squares", dtype))
        }
        Reduce::SumOfSquares => sum::<Square>(x, dims, dtype),
        Reduce::Prod if dtype == DType::Bool => {
            let v = reduce_columns(x, dims, fold(|a: bool, v: bool, _| a & v))
                .unwrap_or_else(|| reduce_rows::<bool, bool>(x, dims, |r| r.iter().all(|&b| b)));
            Ok(data_from(v, &out_shape))
        }
        Reduce::Prod => Ok(crate::with_arith!(dtype, "prod", T => {
            let v = reduce_columns(x, dims, fold(|a: T, v: T, _| a * v))
                .unwrap_or_else(|| reduce_rows::<T, T>(x, dims, product));
            data_from(v, &out_shape)
        })),
        Reduce::LogSumExp => logsumexp(x, dims, dtype),
        // NaN wins, and a row of no elements gives zero.
        Reduce::Max | Reduce::Min => Ok(crate::with_real!(dtype, "max_all", T => {
            let columns = match op == Reduce::Max {
                true => reduce_columns(x, dims, fold(column_extreme::<T, true>)),
                false => reduce_columns(x, dims, fold(column_extreme::<T, false>)),
            };
            let v = columns.unwrap_or_else(|| reduce_rows::<T, T>(x, dims, |r| {
                match (r.is_empty(), op == Reduce::Max) {
                    (true, _) => T::zero(),
                    (false, true) => extreme_value::<T, true>(r),
                    (false, false) => extreme_value::<T, false>(r),
                }
            }));
            data_from(v, &out_shape)
        })),
    }
}

fn logsumexp(x: &Data, dims: &[usize], dtype: DType) -> Result<Data> {
    let shape = reduced_shape(&x.layout().shape, dims);
    match dtype {
        DType::F32 => Ok(data_from(
            reduce_rows::<f32, f32>(x, dims, logsumexp_row),
            &shape,
        )),
        DType::F64 => Ok(data_from(
            reduce_rows::<f64, f64>(x, dims, logsumexp_row),
            &shape,
        )),
        // Computed in float32 (reduce_rows casts as it reads) and stored narrow.
        DType::F16 | DType::BF16 => {
            let wide = reduce_rows::<f32, f32>(x, dims, logsumexp_row);
            Ok(cast_data(&data_from(wide, &shape), dtype))
        }
        d => Err(crate::dtype::unsupported("logsumexp", d)),
    }
}

/// The sum over `dims` of each element's `W::term` (the element itself, or NaN as zero,
/// or its square), in `dtype`.
fn sum<W: Term>(x: &Data, dims: &[usize], dtype: DType) -> Result<Data> {
    let layout = x.layout();
    let out_shape = reduced_shape(&layout.shape, dims);
    if dtype == DType::Bool {
        let v = reduce_columns(x, dims, fold(|a: bool, v: bool, _| a | v))
            .unwrap_or_else(|| reduce_rows::<bool, bool>(x, dims, |r| r.iter().any(|&b| b)));
        return Ok(data_from(v, &out_shape));
    }
    if x.dtype() == DType::Bool && dtype == DType::I64 {
        // A count (count_nonzero, all, any): from the bools, without a cast copy.
        let v = reduce_rows::<bool, i64>(x, dims, |r| r.iter().map(|&b| b as i64).sum());
        return Ok(data_from(v, &out_shape));
    }
    // Contiguous input reduced over its leading or its trailing dims: summed in place,
    // without gathering rows first.
    let nd = layout.ndim();
    let direct = layout.is_contiguous() && x.dtype() == dtype && !dims.is_empty();
    let leading = direct && dims.iter().enumerate().all(|(i, &d)| i == d);
    let trailing = direct
        && dims
            .iter()
            .enumerate()
            .all(|(i, &d)| d == nd - dims.len() + i);
    let kept: usize = out_shape.iter().product();
    crate::with_arith!(dtype, "sum", T => {
        if (leading && kept > 1) || trailing {
            // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
            let data = unsafe { crate::kernels::contiguous_data::<T>(x) };
            let reduced = layout.numel() / kept.max(1);
            let sums = if leading && kept > 1 {
                sum_leading::<T, W>(&data, reduced, kept)
            } else {
                sum_trailing::<T, W>(&data, kept, reduced)
            };
            return Ok(data_from(sums, &out_shape));
        }
        Ok(data_from(sum_strided_rows::<T, W>(x, dims), &out_shape))
    })
}

/// Max/min over `dims` with the position of the chosen element in each row.
pub fn reduce_with_index(x: &Data, dims: &[usize], op: Reduce) -> Result<(Data, Data)> {
    // One dim only: a position over several dims is counted in x's own order.
    if let Some((x, dims)) = in_memory_order(x, dims).filter(|_| dims.len() == 1) {
        return reduce_with_index(&x, &dims, op);
    }
    if let Some(x) = strided_columns_copy(x, dims) {
        return reduce_with_index(&x, dims, op);
    }
    let shape = reduced_shape(&x.layout().shape, dims);
    Ok(crate::with_real!(x.dtype(), "max", T => {
        let columns = ColumnFold {
            first: |v: T| (v, 0i64),
            step: |pair: (T, i64), v: T, r: usize| column_arg_step(op, pair, v, r),
            finish: |pair| pair,
        };
        let pairs = reduce_columns(x, dims, columns).unwrap_or_else(|| reduce_rows::<T, (T, i64)>(x, dims, |r| {
            if r.is_empty() { return (T::zero(), 0); }
            let i = arg_extreme(r, op);
            (r[i], i as i64)
        }));
        let (v, i): (Vec<T>, Vec<i64>) = pairs.into_iter().unzip();
        (data_from(v, &shape), data_from(i, &shape))
    }))
}

/// A function from a type to itself.
type Same<T> = fn(T) -> T;

/// A column fold that starts at the first element and returns its accumulator.
fn fold<T: Copy, Step: Fn(T, T, usize) -> T>(step: Step) -> ColumnFold<Same<T>, Step, Same<T>> {
    ColumnFold {
        first: |v| v,
        step,
        finish: |a| a,
    }
}

/// One step of a column's max (`MAX`) or min: NaN wins, and stays.
#[inline(always)]
fn column_extreme<T: Real, const MAX: bool>(best: T, v: T, _row: usize) -> T {
    let better = if MAX { v > best } else { v < best };
    if better || v.is_nan_r() {
        v
    } else {
        best
    }
}

/// One step of a column's max or min with its position: the first NaN, else the first of
/// the extremes, as `arg_extreme`.
#[inline(always)]
fn column_arg_step<T: Real>(op: Reduce, (best, at): (T, i64), v: T, row: usize) -> (T, i64) {
    let better = if op == Reduce::Max {
        v > best
    } else {
        v < best
    };
    match !best.is_nan_r() && (better || v.is_nan_r()) {
        true => (v, row as i64),
        false => (best, at),
    }
}

/// The product of a row in a fixed order (so identical for any thread count): element i
/// goes to running product i % 32, and the 32 are folded in order with the tail after.
/// Independent chains let the multiplies vectorize, as torch's vectorized product does;
/// that many of them also keeps each short, so a long row of values below 1 in magnitude
/// does not crawl through subnormal partial products (each costing ~100 cycles).
/// (Folded pairwise instead, the lanes of a row of 1024 values in [0, 1) meet in
/// subnormal products on every vector lane at once: 1.6x the time on Zen 4.)
fn product<T: Arith>(row: &[T]) -> T {
    const LANES: usize = 32;
    let chunks = row.chunks_exact(LANES);
    let tail = chunks.remainder();
    // The lanes live inside the dispatched closure (a captured `&mut` would keep them in
    // memory, updated there element by element).
    let lanes = at_widest(
        #[inline(always)]
        move || {
            let mut lanes = [T::one(); LANES];
            for chunk in chunks {
                for (p, &v) in lanes.iter_mut().zip(chunk) {
                    *p = *p * v;
                }
            }
            lanes
        },
    );
    lanes.iter().chain(tail).fold(T::one(), |p, &v| p * v)
}

/// Fold 32 lanes to one in a fixed tree: lane i with lane i + 16, then i with i + 8, ...
/// The first steps vectorize, and the chain is 5 steps long instead of 31: folded in lane
/// order, the lanes of `amax` over rows of 256 floats cost about as much as the rows
/// (1.5x the time for the whole reduction).
#[inline(always)]
fn fold_lanes<T: Copy>(mut lanes: [T; 32], f: impl Fn(T, T) -> T) -> T {
    let mut width = 16;
    while width > 0 {
        let (low, high) = lanes.split_at_mut(width);
        for (a, &b) in low.iter_mut().zip(high.iter()) {
            *a = f(*a, b);
        }
        width /= 2;
    }
    lanes[0]
}

/// The max (`MAX`) or min of a nonempty row, NaN winning: 32 running extremes (independent
/// chains) and a NaN flag in a loop without early exit or index, which the compiler
/// vectorizes; the lanes (pairwise, `fold_lanes`) and the tail are folded after.
/// (`arg_extreme` serves when the position is needed.)
fn extreme_value<T: Real, const MAX: bool>(row: &[T]) -> T {
    const LANES: usize = 32;
    let better = |v: T, best: T| if MAX { v > best } else { v < best };
    let chunks = row.chunks_exact(LANES);
    let tail = chunks.remainder();
    // The lanes and the flag live inside the dispatched closure, as in `product`.
    let (lanes, mut nan) = at_widest(
        #[inline(always)]
        move || {
            let mut lanes = [row[0]; LANES];
            let mut nan = false;
            for chunk in chunks {
                for (best, &v) in lanes.iter_mut().zip(chunk) {
                    nan |= v.is_nan_r();
                    *best = if better(v, *best) { v } else { *best };
                }
            }
            (lanes, nan)
        },
    );
    // NaN never enters the lanes (it compares false), so the flag alone tracks it.
    let mut best = fold_lanes(lanes, |a, b| if better(b, a) { b } else { a });
    for &v in tail {
        nan |= v.is_nan_r();
        if better(v, best) {
            best = v;
        }
    }
    match nan {
        true => row.iter().copied().find(|v| v.is_nan_r()).unwrap_or(best),
        false => best,
    }
}

/// Index of the max (or, for any other kind, the min) of a nonempty row: the first NaN
/// (torch propagates NaN), else the first of the extremes. Found in two passes that both
/// vectorize, the extreme value and then its first position, rather than one loop that
/// carries an index and exits early.
fn arg_extreme<T: Real>(row: &[T], op: Reduce) -> usize {
    let best = match op == Reduce::Max {
        true => extreme_value::<T, true>(row),
        false => extreme_value::<T, false>(row),
    };
    let at = match best.is_nan_r() {
        true => first_position(row, |v| v.is_nan_r()),
        false => first_position(row, |v| v == best),
    };
    at.expect("the extreme is an element of the row")
}

/// The first position where `hit` holds: blocks of 32 are tested without a branch per
/// element (which vectorizes), and only the block with a hit is searched.
#[inline(always)]
fn first_position<T: Copy>(row: &[T], hit: impl Fn(T) -> bool) -> Option<usize> {
    const BLOCK: usize = 32;
    at_widest(
        #[inline(always)]
        || {
            for (b, block) in row.chunks(BLOCK).enumerate() {
                if block.iter().fold(false, |any, &v| any | hit(v)) {
                    return block.iter().position(|&v| hit(v)).map(|i| b * BLOCK + i);
                }
            }
            None
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The row loops run at the widest SIMD level (`at_widest`); their results are those
    /// of the same fixed order computed plainly: 32 running lanes, then the fold.
    #[test]
    fn row_reductions_keep_their_fixed_order() {
        let row: Vec<f32> = (0..1000)
            .map(|i| 1.0 + ((i as f32) * 0.7).sin() * 1e-3)
            .collect();
        let mut lanes = [1.0f32; 32];
        for (i, &v) in row[..992].iter().enumerate() {
            lanes[i % 32] *= v;
        }
        let expected = lanes.iter().chain(&row[992..]).fold(1.0f32, |p, &v| p * v);
        assert_eq!(product(&row).to_bits(), expected.to_bits());

        let mut with_nan = row.clone();
        assert_eq!(
            extreme_value::<f32, true>(&row),
            row.iter().copied().fold(f32::MIN, f32::max)
        );
        assert_eq!(
            extreme_value::<f32, false>(&row),
            row.iter().copied().fold(f32::MAX, f32::min)
        );
        with_nan[500] = f32::NAN;
        assert!(extreme_value::<f32, true>(&with_nan).is_nan());
        assert_eq!(arg_extreme(&with_nan, Reduce::Max), 500);
        let top = row.iter().copied().fold(f32::MIN, f32::max);
        assert_eq!(
            Some(arg_extreme(&row, Reduce::Max)),
            row.iter().position(|&v| v == top)
        );
    }
}
