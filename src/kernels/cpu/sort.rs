//! Sorting along one dim on the CPU: sort, top-k, k-th value and median of every line.
//!
//! Note: sort keys. Each element becomes a `u128`: an order-preserving `u64` key of its
//! value (NaN the largest and equal to NaN, -0 equal to +0) above its position in the
//! line. The keys are distinct, so an unstable sort or selection of them gives exactly
//! what a stable sort of the values would, and needs no comparison callback. Lines are
//! independent and split over the pool; each one's result does not depend on threads.

use crate::error::Result;
use crate::kernels::kinds::SortKind;
use crate::kernels::traits::Real;
use crate::kernels::{contiguous_data, data_from, par_chunks_mut, PARALLEL_GRAIN};
use crate::storage::Data;

/// An order-preserving key: `a < b` (NaN largest, all NaNs equal, -0 == +0) exactly
/// when `key(a) < key(b)`.
fn key<T: Real>(v: T) -> u64 {
    const SIGN: u64 = 1 << 63;
    if !T::DTYPE.is_floating_point() {
        return (v.to_i64() as u64) ^ SIGN;
    }
    let x = v.to_f64();
    if x.is_nan() {
        return u64::MAX;
    }
    // -0 and +0 share a key; otherwise flip negatives so larger magnitude sorts first.
    let bits = if x == 0.0 { 0 } else { x.to_bits() };
    if bits & SIGN != 0 {
        !bits
    } else {
        bits | SIGN
    }
}

/// NaN-aware ascending order (NaN the largest and equal to NaN, -0 equal to +0): the
/// order of the keys.
pub(crate) fn ascending<T: Real>(a: T, b: T) -> std::cmp::Ordering {
    key(a).cmp(&key(b))
}

/// A line's element `k` as a sort entry: its key (complemented for descending order)
/// above its position.
fn entry<T: Real>(v: T, k: usize, descending: bool) -> u128 {
    let key = if descending { !key(v) } else { key(v) };
    (u128::from(key) << 64) | k as u128
}

fn position(e: u128) -> usize {
    e as u64 as usize
}

/// A top-k with `k * SMALL_TOPK_RATIO <= len` keeps a sorted buffer of the best `k`
/// entries seen (most elements fail one comparison with its worst), instead of building
/// and selecting from all `len` entries.
const SMALL_TOPK_RATIO: usize = 16;

/// The `out.len()` smallest entries of the line, ascending: the same entries a selection
/// over the whole line picks, since entries are distinct.
fn smallest_entries<T: Real>(
    len: usize,
    at: impl Fn(usize) -> T,
    descending: bool,
    out: &mut [u128],
) {
    let k = out.len();
    let mut filled = 0;
    // The worst kept entry's key: an element whose key is not below it cannot enter (on
    // an equal key its later position loses), which one u64 comparison tells.
    let mut worst = u64::MAX;
    // Once the buffer is full, its worst value: an element that does not beat it (in
    // value order; an equal one loses on position, -0 ties +0) is passed over after one
    // float comparison, before its key is made. NaN compares false, so it goes on.
    let mut worst_value: Option<T> = None;
    for p in 0..len {
        let v = at(p);
        if let Some(w) = worst_value {
            if if descending { v <= w } else { v >= w } {
                continue;
            }
        }
        let sort_key = if descending { !key(v) } else { key(v) };
        if filled == k && sort_key >= worst {
            continue;
        }
        let e = (u128::from(sort_key) << 64) | p as u128;
        let end = if filled < k { filled } else { k - 1 };
        let slot = out[..end].partition_point(|&x| x < e);
        out.copy_within(slot..end, slot + 1);
        out[slot] = e;
        filled = (filled + 1).min(k);
        worst = (out[k - 1] >> 64) as u64;
        if filled == k {
            worst_value = Some(at(position(out[k - 1])));
        }
    }
}

/// Values and source indices of every line of `x` along `dim`, per `kind`: the sorted
/// line (same shape as x), the top `k` (`k` along `dim`), or one element (dim dropped).
pub fn sort(x: &Data, dim: usize, kind: SortKind) -> Result<(Data, Data)> {
    let shape = x.layout().shape.clone();
    let len = shape.get(dim).copied().unwrap_or(1);
    let inner: usize = shape.get(dim + 1..).map_or(1, |s| s.iter().product());
    let outer: usize = shape[..dim.min(shape.len())].iter().product();
    let kept = match kind {
        SortKind::Sort { .. } => len,
        SortKind::Topk { k, .. } => k.min(len),
        SortKind::Kth { .. } | SortKind::Median { .. } => 1,
    };
    let mut out_shape = shape.clone();
    match kind {
        SortKind::Kth { .. } | SortKind::Median { .. } if !out_shape.is_empty() => {
            out_shape.remove(dim);
        }
        _ if !out_shape.is_empty() => out_shape[dim] = kept,
        _ => {}
    }
    Ok(crate::with_real!(x.dtype(), "sort", T => {
        // SAFETY: read-only; dropped before returning; the outputs are fresh Vecs.
        let v = unsafe { contiguous_data::<T>(x) };
        let lines = outer * inner;
        // picked[n * kept..][..kept]: what line n = (o, i) keeps, as sort entries.
        let mut picked = vec![0u128; lines * kept];
        let one_line = |n: usize, out: &mut [u128], scratch: &mut Vec<u128>| {
            // The line's elements are line[k * inner]; a local copy of the slice (not a
            // capture by reference) lets the loops keep it in registers.
            let line = &v[(n / inner) * len * inner + n % inner..];
            if inner == 1 {
                // Contiguous lines get their own copy of the loops, which vectorize.
                let line = &line[..len];
                pick_line(len, move |k: usize| line[k], kind, out, scratch);
            } else {
                pick_line(len, move |k: usize| line[k * inner], kind, out, scratch);
            }
        };
        if kept > 0 {
            if lines > 1 && lines * len >= PARALLEL_GRAIN / 4 {
                // Tasks of whole lines, about 16K elements each, with a scratch each.
                let lines_per_task = (1usize << 14).div_ceil(len);
                par_chunks_mut(&mut picked, lines_per_task * kept, |t, out| {
                    let mut scratch = Vec::with_capacity(len);
                    for (j, out) in out.chunks_mut(kept).enumerate() {
                        one_line(t * lines_per_task + j, out, &mut scratch);
                    }
                });
            } else {
                let mut scratch = Vec::with_capacity(len);
                for (n, out) in picked.chunks_mut(kept).enumerate() {
                    one_line(n, out, &mut scratch);
                }
            }
        }
        // Lay each line's entries back along `dim`: element (o, k, i) of the output.
        let total = outer * kept * inner;
        let mut values: Vec<T> = Vec::with_capacity(total);
        let mut indices: Vec<i64> = Vec::with_capacity(total);
        for o in 0..outer {
            for k in 0..kept {
                for i in 0..inner {
                    let p = position(picked[(o * inner + i) * kept + k]);
                    values.push(v[o * len * inner + p * inner + i]);
                    indices.push(p as i64);
                }
            }
        }
        (data_from(values, &out_shape), data_from(indices, &out_shape))
    }))
}

/// What `kind` keeps of one line of `len` elements (`at(k)`), as sort entries in `out`
/// (`out.len()` of them); `scratch` is reused between lines.
fn pick_line<T: Real>(
    len: usize,
    at: impl Fn(usize) -> T,
    kind: SortKind,
    out: &mut [u128],
    scratch: &mut Vec<u128>,
) {
    let descending = matches!(
        kind,
        SortKind::Sort { descending: true } | SortKind::Topk { largest: true, .. }
    );
    if let SortKind::Topk { k, .. } = kind {
        if k > 0 && k.saturating_mul(SMALL_TOPK_RATIO) <= len {
            return smallest_entries(len, at, descending, out);
        }
    }
    scratch.clear();
    scratch.extend((0..len).map(|k| entry(at(k), k, descending)));
    match kind {
        SortKind::Sort { .. } => {
            scratch.sort_unstable();
            out.copy_from_slice(scratch);
        }
        SortKind::Topk { k, .. } => {
            if k < len {
                scratch.select_nth_unstable(k);
            }
            let top = &mut scratch[..k];
            top.sort_unstable();
            out.copy_from_slice(top);
        }
        SortKind::Kth { k } => {
            out[0] = *scratch.select_nth_unstable(k - 1).1;
        }
        SortKind::Median { ignore_nan } => out[0] = median(scratch, ignore_nan, at),
    }
}

/// The lower median of a nonempty line's entries (see `SortKind::Median`).
fn median<T: Real>(entries: &mut [u128], ignore_nan: bool, at: impl Fn(usize) -> T) -> u128 {
    let nan = |e: &u128| at(position(*e)).is_nan_r();
    let numbers = entries.iter().filter(|e| !nan(e)).count();
    if numbers < entries.len() && !ignore_nan {
        // The first NaN in line order is the answer.
        return entries
            .iter()
            .copied()
            .filter(nan)
            .min_by_key(|&e| position(e))
            .unwrap_or(0);
    }
    // All NaN (only when ignoring them): torch answers NaN at index 0. Otherwise the NaNs
    // sort last, so the lower median of the numbers is the entry of rank (numbers-1)/2.
    let k = numbers.saturating_sub(1) / 2;
    if numbers == 0 {
        return entries
            .iter()
            .copied()
            .min_by_key(|&e| position(e))
            .unwrap_or(0);
    }
    *entries.select_nth_unstable(k).1
}
