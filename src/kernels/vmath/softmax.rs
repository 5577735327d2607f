//! softmax and log_softmax of contiguous rows, fused: one pass for the maximum, one that
//! takes exp(x - max) and sums it, one that scales (softmax) or shifts (log_softmax).
//! The row never leaves the cache between passes, where the composite (amax, sub, exp,
//! sum, div) would write and read four full-size temporaries.
//!
//! The maximum skips NaN, but a NaN anywhere in a row reaches the sum and so every
//! output of that row, as in torch; so does a row whose maximum is infinite (inf - inf).
//! Sums add lanes in a fixed order, so a row's result does not depend on threads.
//!
//! The backward rows (the gradient of the input from that of the output) are fused the
//! same way: one pass for the row's sum, one for the result.

use std::mem::MaybeUninit;

use super::dispatch::{at_level, Elem, Job, Level, MAX_LANES};
use super::exp::exp;
use super::simd::{Fx, Real};

/// What a row kernel computes.
#[derive(Clone, Copy)]
enum RowOp {
    /// softmax (or log_softmax, `log`) of the row.
    Forward { log: bool },
    /// The gradient of the input from the gradient `g` of the output `y` (the other
    /// source): softmax y * (g - sum(g * y)), log_softmax g - exp(y) * sum(g).
    Backward { log: bool },
}

/// `dst` = softmax (or log_softmax, `log`) of each row of `len` elements of `src`; every
/// element of `dst` (as long as `src`, a whole number of rows) is written. Rows are
/// split over the pool in fixed groups when there are enough elements.
pub fn softmax_rows<E: Elem>(src: &[E], dst: &mut [MaybeUninit<E>], len: usize, log: bool) {
    rows(RowOp::Forward { log }, [src, src], dst, len);
}

/// `dst` = the gradient of softmax's (log_softmax's, `log`) input from `grad`, the
/// gradient of its output `out`, row by row (all three have the same length).
pub fn softmax_backward_rows<E: Elem>(
    grad: &[E],
    out: &[E],
    dst: &mut [MaybeUninit<E>],
    len: usize,
    log: bool,
) {
    rows(RowOp::Backward { log }, [out, grad], dst, len);
}

/// `op` over each row of `len` elements of the sources (the second one is read by
/// `Backward` only) into `dst`, splitting groups of rows over the pool.
fn rows<E: Elem>(op: RowOp, sources: [&[E]; 2], dst: &mut [MaybeUninit<E>], len: usize) {
    if len == 0 {
        return;
    }
    let level = Level::detect();
    let run = |first: usize, dst: &mut [MaybeUninit<E>]| {
        let [x, aux] = sources.map(|s| &s[first..first + dst.len()]);
        let job = RowsJob {
            op,
            x,
            aux,
            dst,
            len,
        };
        if let Err(job) = at_level::<E, _>(level, job) {
            let rows = job.x.chunks_exact(len).zip(job.aux.chunks_exact(len));
            for ((x, aux), y) in rows.zip(job.dst.chunks_exact_mut(len)) {
                scalar_row(op, x, aux, y);
            }
        }
    };
    let rows_per_task = (1usize << 14).div_ceil(len);
    let task = rows_per_task * len;
    if dst.len() >= crate::kernels::PARALLEL_GRAIN && dst.len() > task {
        crate::kernels::par_chunks_mut(dst, task, |t, d| run(t * task, d));
    } else {
        run(0, dst);
    }
}

struct RowsJob<'a, E> {
    op: RowOp,
    x: &'a [E],
    aux: &'a [E],
    dst: &'a mut [MaybeUninit<E>],
    len: usize,
}

impl<E: Elem> Job<E> for RowsJob<'_, E> {
    #[inline(always)]
    fn run<F: Fx<E = E>>(self, f: F) {
        let rows = self
            .x
            .chunks_exact(self.len)
            .zip(self.aux.chunks_exact(self.len));
        for ((x, aux), y) in rows.zip(self.dst.chunks_exact_mut(self.len)) {
            match self.op {
                RowOp::Forward { log } => vector_row(f, x, y, log),
                RowOp::Backward { log } => vector_backward_row(f, x, aux, y, log),
            }
        }
    }
}

/// The lanes of `v` folded in order by `op`, in f64.
#[inline(always)]
fn fold_lanes<F: Fx>(f: F, v: F::V, init: f64, op: impl Fn(f64, f64) -> f64) -> f64 {
    let mut lanes = [F::E::default(); MAX_LANES];
    f.store_part(&mut lanes[..F::LANES], v);
    lanes[..F::LANES]
        .iter()
        .fold(init, |a, v| op(a, v.to_f64()))
}

fn max_skipping_nan(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// The largest element of a row (NaN skipped; -inf for none), in f64.
#[inline(always)]
fn row_max<F: Fx>(f: F, xs: &[F::V], tail: &[F::E]) -> f64 {
    let mut vmax = f.splat(f64::NEG_INFINITY);
    for &v in xs {
        vmax = f.select(f.gt(v, vmax), v, vmax);
    }
    tail.iter().fold(
        fold_lanes(f, vmax, f64::NEG_INFINITY, max_skipping_nan),
        |a, v| max_skipping_nan(a, v.to_f64()),
    )
}

/// Where a row's exp terms are written: its whole vectors and its tail.
type Terms<'a, F> = (
    &'a mut [MaybeUninit<<F as Fx>::V>],
    &'a mut [MaybeUninit<<F as Fx>::E>],
);

/// The sum of exp(x - shift) over a row, in f64; with `keep`, the terms are written
/// there too (vectors, then the tail).
#[inline(always)]
fn exp_sum<F: Fx>(
    f: F,
    (xs, x_tail): (&[F::V], &[F::E]),
    shift: F::V,
    keep: Option<Terms<'_, F>>,
) -> f64 {
    let mut vsum = f.splat(0.0);
    let mut tail = [F::E::default(); MAX_LANES];
    f.store_part(&mut tail, exp(f, f.sub(f.load_part(x_tail), shift)));
    let tail = &tail[..x_tail.len()];
    match keep {
        Some((ys, y_tail)) => {
            for (out, &v) in ys.iter_mut().zip(xs) {
                let e = exp(f, f.sub(v, shift));
                vsum = f.add(vsum, e);
                out.write(e);
            }
            for (out, &e) in y_tail.iter_mut().zip(tail) {
                out.write(e);
            }
        }
        None => {
            for &v in xs {
                vsum = f.add(vsum, exp(f, f.sub(v, shift)));
            }
        }
    }
    tail.iter()
        .fold(fold_lanes(f, vsum, 0.0, |a, b| a + b), |a, v| {
            a + v.to_f64()
        })
}

#[inline(always)]
fn vector_row<F: Fx>(f: F, x: &[F::E], y: &mut [MaybeUninit<F::E>], log: bool) {
    let x = F::split(x);
    let max = row_max(f, x.0, x.1);
    let shift = f.splat(max);
    let (ys, y_tail) = F::split_uninit(y);
    if log {
        let sum = exp_sum(f, x, shift, None);
        // x - (max + log(sum)), torch's order.
        let c = f.splat(max + sum.ln());
        for (out, &v) in ys.iter_mut().zip(x.0) {
            out.write(f.sub(v, c));
        }
        write_tail(f, y_tail, f.sub(f.load_part(x.1), c));
    } else {
        let sum = exp_sum(f, x, shift, Some((&mut *ys, &mut *y_tail)));
        // e * (1 / sum), torch's order.
        let r = f.splat(1.0 / sum);
        for out in ys.iter_mut() {
            // SAFETY: exp_sum wrote every vector of the row.
            let e = unsafe { out.assume_init() };
            out.write(f.mul(e, r));
        }
        let mut e = [F::E::default(); MAX_LANES];
        for (e, out) in e.iter_mut().zip(y_tail.iter()) {
            // SAFETY: exp_sum wrote the tail.
            *e = unsafe { out.assume_init() };
        }
        write_tail(f, y_tail, f.mul(f.load_part(&e[..y_tail.len()]), r));
    }
}

/// The first `y_tail.len()` lanes of `v` into `y_tail`.
#[inline(always)]
fn write_tail<F: Fx>(f: F, y_tail: &mut [MaybeUninit<F::E>], v: F::V) {
    let mut t = [F::E::default(); MAX_LANES];
    f.store_part(&mut t, v);
    for (out, &v) in y_tail.iter_mut().zip(&t) {
        out.write(v);
    }
}

/// log(sum(exp(row))) as torch computes it: the maximum taken out first (0 in its place
/// when it is infinite, so rows of -inf give -inf and rows with +inf give inf) and added
/// back after the log.
pub fn logsumexp_row<E: Elem>(row: &[E]) -> E {
    struct LseJob<'a, E> {
        row: &'a [E],
        out: &'a mut f64,
    }
    impl<E: Elem> Job<E> for LseJob<'_, E> {
        #[inline(always)]
        fn run<F: Fx<E = E>>(self, f: F) {
            let x = F::split(self.row);
            let m = lse_shift(row_max(f, x.0, x.1));
            *self.out = exp_sum(f, x, f.splat(m), None).ln() + m;
        }
    }
    let mut out = 0.0;
    let job = LseJob { row, out: &mut out };
    if let Err(job) = at_level::<E, _>(Level::detect(), job) {
        let m = lse_shift(
            row.iter()
                .fold(f64::NEG_INFINITY, |a, v| max_skipping_nan(a, v.to_f64())),
        );
        let sum: f64 = row
            .iter()
            .map(|v| E::from_f64(v.to_f64() - m).exp().to_f64())
            .sum();
        *job.out = sum.ln() + m;
    }
    E::from_f64(out)
}

/// The maximum a logsumexp subtracts: 0 in place of an infinite one.
fn lse_shift(max: f64) -> f64 {
    if max.is_infinite() {
        0.0
    } else {
        max
    }
}

/// The same at `Level::Scalar`, with libm's exp.
fn scalar_row<E: Elem>(op: RowOp, x: &[E], aux: &[E], y: &mut [MaybeUninit<E>]) {
    let log = match op {
        RowOp::Forward { log } => log,
        RowOp::Backward { log } => return scalar_backward_row(x, aux, y, log),
    };
    let max = x
        .iter()
        .fold(f64::NEG_INFINITY, |a, v| max_skipping_nan(a, v.to_f64()));
    let exps = x.iter().map(|v| E::from_f64(v.to_f64() - max).exp());
    if log {
        let sum = exps.fold(0.0, |a, e| a + e.to_f64());
        let c = max + sum.ln();
        for (out, v) in y.iter_mut().zip(x) {
            out.write(E::from_f64(v.to_f64() - c));
        }
    } else {
        let mut sum = 0.0;
        for (out, e) in y.iter_mut().zip(exps) {
            sum += e.to_f64();
            out.write(e);
        }
        let r = E::from_f64(1.0 / sum).to_f64();
        for out in y.iter_mut() {
            // SAFETY: the loop above wrote every element of the row.
            let e = unsafe { out.assume_init() }.to_f64();
            out.write(E::from_f64(e * r));
        }
    }
}

/// The backward row at `Level::Scalar`: `out` is the forward's output, `g` its gradient.
fn scalar_backward_row<E: Elem>(out: &[E], g: &[E], y: &mut [MaybeUninit<E>], log: bool) {
    let terms = out.iter().zip(g).map(|(o, g)| (o.to_f64(), g.to_f64()));
    if log {
        let sum: f64 = g.iter().map(|v| v.to_f64()).sum();
        for (dst, (o, g)) in y.iter_mut().zip(terms) {
            dst.write(E::from_f64(g - E::from_f64(o).exp().to_f64() * sum));
        }
    } else {
        let sum: f64 = terms.clone().map(|(o, g)| o * g).sum();
        for (dst, (o, g)) in y.iter_mut().zip(terms) {
            dst.write(E::from_f64(o * (g - sum)));
        }
    }
}

/// The backward row in vectors: `out` is the forward's output, `g` its gradient.
#[inline(always)]
fn vector_backward_row<F: Fx>(
    f: F,
    out: &[F::E],
    g: &[F::E],
    y: &mut [MaybeUninit<F::E>],
    log: bool,
) {
    let (outs, out_tail) = F::split(out);
    let (gs, g_tail) = F::split(g);
    let (ys, y_tail) = F::split_uninit(y);
    let (o_t, g_t) = (f.load_part(out_tail), f.load_part(g_tail));
    // The row's sum: of g (log_softmax) or of g * out (softmax); padding lanes are zero.
    let mut vsum = f.splat(0.0);
    for (&o, &g) in outs.iter().zip(gs) {
        vsum = if log {
            f.add(vsum, g)
        } else {
            f.fma(g, o, vsum)
        };
    }
    let tail_sum = if log { g_t } else { f.mul(g_t, o_t) };
    let sum = f
        .splat(fold_lanes(f, vsum, 0.0, |a, b| a + b) + fold_lanes(f, tail_sum, 0.0, |a, b| a + b));
    for ((dst, &o), &g) in ys.iter_mut().zip(outs).zip(gs) {
        dst.write(backward_terms(f, o, g, sum, log));
    }
    write_tail(f, y_tail, backward_terms(f, o_t, g_t, sum, log));
}

/// log_softmax g - exp(out) * sum, softmax out * (g - sum). (A function, not a closure:
/// a closure is not inlined into the SIMD level's target features, so each vector op
/// in it would become a call.)
#[inline(always)]
fn backward_terms<F: Fx>(f: F, out: F::V, g: F::V, sum: F::V, log: bool) -> F::V {
    if log {
        f.fnma(exp(f, out), sum, g)
    } else {
        f.mul(out, f.sub(g, sum))
    }
}
