//! tanh and sigmoid, both from one exponential per lane.

use super::exp::{exp, expm1_pair, two_sum};
use super::simd::{Fx, Real};

/// tanh(x) = x + x^3 T(x^2) on |x| <= 0.55; relative error 0.08 * 2^-24 (tools/vmath_fit.py).
const TANH_T32: [f64; 5] = [
    -0.3333333134651184,
    0.1333286166191101,
    -0.05386577174067497,
    0.021082550287246704,
    -0.006246770266443491,
];

/// tanh of f32 lanes at about half the work of the f64 form: an odd polynomial below
/// |x| = 0.55, and 1 - 2 / (e^2|x| + 1) above, where the quotient is at most as large as
/// the result, so the plain exp's error stays about an ulp.
#[inline(always)]
fn tanh_f32<F: Fx>(f: F, x: F::V) -> F::V {
    let top = f.splat(9.5);
    let ax = f.abs(x);
    let ax = f.select(f.gt(ax, top), top, ax);
    let z = f.mul(x, x);
    let near_zero = f.fma(f.mul(x, z), f.poly(z, &TANH_T32), x);
    let one = f.splat(1.0);
    let e = exp(f, f.add(ax, ax));
    let away = f.fnma(f.splat(2.0), f.div(one, f.add(e, one)), one);
    let y = f.select(f.lt(ax, f.splat(0.55)), near_zero, away);
    // tanh keeps the sign of x, -0 included (the sum above gives +0 for -0).
    f.copysign(y, x)
}

/// tanh(x) from t = expm1(±2|x|), as fdlibm: below |x| = 0.55, tanh = -t / (t + 2) with
/// t = expm1(-2|x|); above, tanh = 1 - 2 / (t + 2) with t = expm1(2|x|). Both forms avoid
/// cancellation and share the exponential and the division. t comes as a pair and the
/// quotient is corrected by its residual: -t/(t + 2) multiplies t's error by up to 1.5.
/// Past |x| = 22 (f64) or 9.1 (f32) tanh rounds to ±1; |x| is clamped there.
#[inline(always)]
pub(super) fn tanh<F: Fx>(f: F, x: F::V) -> F::V {
    if !F::E::IS_F64 {
        return tanh_f32(f, x);
    }
    let top = f.splat(F::pick(9.5, 22.0));
    let ax = f.abs(x);
    let ax = f.select(f.gt(ax, top), top, ax);
    let small = f.lt(ax, f.splat(0.55));
    let two_ax = f.add(ax, ax);
    let (t, t_lo) = expm1_pair(f, f.select(small, f.neg(two_ax), two_ax));
    let one = f.splat(1.0);
    let two = f.splat(2.0);
    let num = f.select(small, f.neg(t), two);
    let num_lo = f.select(small, f.neg(t_lo), f.splat(0.0));
    let (d, d_err) = two_sum(f, t, two);
    let d_lo = f.add(d_err, t_lo);
    let inv = f.div(one, d);
    let q = f.mul(num, inv);
    let residual = f.add(f.fnma(q, d_lo, f.fnma(q, d, num)), num_lo);
    let q = f.fma(residual, inv, q);
    let y = f.select(small, q, f.sub(one, q));
    // expm1_pair leaves ±0 as +0; tanh keeps the sign (and NaN) of x.
    f.copysign(y, x)
}

/// sigmoid(x) = 1 / (1 + e^-x), computed from e = exp(-|x|) <= 1 as 1 / (1 + e) for
/// x >= 0 and e / (1 + e) for x < 0: no overflow, and the tiny results for very negative x
/// come out as e^x (down into the subnormals) instead of 1/inf = 0.
/// The quotient is corrected by its residual, with 1 + e carried exactly as s + s_lo: that
/// leaves about the error of e alone.
#[inline(always)]
pub(super) fn sigmoid<F: Fx>(f: F, x: F::V) -> F::V {
    let one = f.splat(1.0);
    let e = exp(f, f.neg(f.abs(x)));
    let num = f.select(f.lt(x, f.splat(0.0)), e, one);
    let s = f.add(one, e);
    let s_lo = f.add(f.sub(one, s), e);
    let inv = f.div(one, s);
    let q = f.mul(num, inv);
    let residual = f.fnma(q, s_lo, f.fnma(q, s, num));
    f.fma(residual, inv, q)
}
