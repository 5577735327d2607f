//! log and log1p: u = 2^k m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), and
//! log(1+f) = 2 atanh(s) = f - f^2/2 + s (f^2/2 + R(s^2)) with s = f / (2 + f), the form
//! that keeps the large terms exact. log1p adds the rounding error of u = 1 + x as
//! err / u. Coefficients: tools/vmath_fit.py (fits named as the constants).

use super::exp::{LN2_HI32, LN2_HI64, LN2_LO32, LN2_LO64};
use super::simd::Fx;

/// R(z) = z Q(z) on z = s^2 <= ((sqrt2 - 1) / (sqrt2 + 1))^2; error 0.1 * 2^-53 of log.
const LOG_Q64: [f64; 7] = [
    0.666666666666667,
    0.3999999999983735,
    0.2857142867048227,
    0.22222203300190121,
    0.1818344281112894,
    0.1531453493477889,
    0.1481206523090881,
];
/// The same for f32; 0.05 * 2^-24.
const LOG_Q32: [f64; 3] = [0.6666674017906189, 0.3997730314731598, 0.2992679476737976];

/// Bits of sqrt(1/2), and 1.0's bits minus them: adding the difference to a float's bits
/// carries into the exponent exactly when its mantissa is at least sqrt(2).
const SQRT_HALF64: u64 = 0x3fe6_a09e_667f_3bcd;
const ONE_MINUS_SQRT_HALF64: u64 = 0x3ff0_0000_0000_0000 - SQRT_HALF64;
const SQRT_HALF32: u64 = 0x3f35_04f3;
const ONE_MINUS_SQRT_HALF32: u64 = 0x3f80_0000 - SQRT_HALF32;

/// log(u) + c for positive finite u, c a small correction (|c| below ulp(log u)).
#[inline(always)]
fn log_core<F: Fx>(f: F, u: F::V, c: F::V) -> F::V {
    // Subnormals: scale up by 2^MANT first.
    let two_mant = (1u64 << F::MANT) as f64;
    let sub = f.lt(
        u,
        f.splat(F::pick(f32::MIN_POSITIVE as f64, f64::MIN_POSITIVE)),
    );
    let u = f.select(sub, f.mul(u, f.splat(two_mant)), u);
    let k_adjust = f.select(sub, f.splat(-(F::MANT as f64)), f.splat(0.0));

    let sqrt_half = F::pick(SQRT_HALF32, SQRT_HALF64);
    let t = f.add_u(
        f.bits(u),
        f.splat_u(F::pick(ONE_MINUS_SQRT_HALF32, ONE_MINUS_SQRT_HALF64)),
    );
    let k = f.u_to_f(f.shr_mant(t));
    let k = f.add(k, f.sub(k_adjust, f.splat(F::BIAS as f64)));
    let mant_mask = (1u64 << F::MANT) - 1;
    let m = f.of_bits(f.add_u(f.and_u(t, f.splat_u(mant_mask)), f.splat_u(sqrt_half)));

    let one = f.splat(1.0);
    let fm = f.sub(m, one);
    let s = f.div(fm, f.add(fm, f.splat(2.0)));
    let z = f.mul(s, s);
    let r = f.mul(z, f.poly(z, F::pick(&LOG_Q32[..], &LOG_Q64[..])));
    let hfsq = f.mul(f.splat(0.5), f.mul(fm, fm));
    let lo = f.fma(k, f.splat(F::pick(LN2_LO32, LN2_LO64)), c);
    let tail = f.fma(s, f.add(hfsq, r), lo);
    let body = f.sub(fm, f.sub(hfsq, tail));
    f.fma(k, f.splat(F::pick(LN2_HI32, LN2_HI64)), body)
}

/// libm's values where the argument u of log is not positive and finite: log(±0) = -inf,
/// log(u < 0) = NaN, log(inf) = inf, NaN stays NaN.
#[inline(always)]
fn log_specials<F: Fx>(f: F, u: F::V, y: F::V) -> F::V {
    let zero = f.splat(0.0);
    let inf = f.splat(f64::INFINITY);
    let finite_positive = f.and_m(f.gt(u, zero), f.lt(u, inf));
    if !f.any(f.not_m(finite_positive)) {
        return y;
    }
    let y = f.select(f.eq(u, zero), f.splat(f64::NEG_INFINITY), y);
    let y = f.select(f.lt(u, zero), f.splat(f64::NAN), y);
    let y = f.select(f.eq(u, inf), inf, y);
    f.select(f.is_nan(u), u, y)
}

#[inline(always)]
pub(super) fn log<F: Fx>(f: F, x: F::V) -> F::V {
    let y = log_core(f, x, f.splat(0.0));
    log_specials(f, x, y)
}

#[inline(always)]
pub(super) fn log1p<F: Fx>(f: F, x: F::V) -> F::V {
    let one = f.splat(1.0);
    let u = f.add(one, x);
    // Two-sum: u + err = 1 + x exactly.
    let b = f.sub(u, one);
    let err = f.add(f.sub(one, f.sub(u, b)), f.sub(x, b));
    let y = log_core(f, u, f.div(err, u));
    // Tiny x (and ±0, subnormals): log1p(x) = x to within half an ulp.
    let tiny = f.lt(f.abs(x), f.splat(F::pick(2f64.powi(-25), 2f64.powi(-54))));
    let y = f.select(tiny, x, y);
    log_specials(f, u, y)
}
