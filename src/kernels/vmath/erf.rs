//! erf: below |x| = 0.875, erf(x) = x + x P(x^2); above, erf(x) = 1 - e^{-x^2} G(u) with
//! u = 1/(|x| + s) (G is erfcx, smooth like 1/x, so a polynomial in u fits it over the
//! whole tail). erf rounds to ±1 past |x| = 5.93 (f64) or 3.92 (f32). Coefficients:
//! tools/vmath_fit.py (fits named as the constants).

use super::exp::exp;
use super::simd::Fx;

/// erf(x) = x + x P(x^2) on |x| <= 0.875; relative error 0.27 * 2^-53.
const SMALL64: [f64; 11] = [
    0.12837916709551256,
    -0.3761263890318299,
    0.11283791670915581,
    -0.026866170637142663,
    0.005223977542437364,
    -0.0008548321977257271,
    0.00012055141076310008,
    -1.4920941975877196e-05,
    1.6387374250408746e-06,
    -1.5619255574877657e-07,
    1.0456783185263257e-08,
];
const SMALL32: [f64; 6] = [
    0.12837915122509003,
    -0.3761255145072937,
    0.11282455176115036,
    -0.026791462674736977,
    0.005032181274145842,
    -0.0006203255034051836,
];
/// erfc(x) = e^{-x^2} G(u - U_MID), u = 1/(x + SHIFT), on 0.875 <= x <= 5.95; absolute
/// error 0.04 * 2^-53.
const TAIL64: [f64; 16] = [
    0.20759388997027348,
    3.0919928799706997,
    23.616784229599308,
    153.92020860863175,
    852.4957091890944,
    3964.809997529645,
    15110.26543580911,
    44867.99501893803,
    91329.71532874276,
    65448.307012273326,
    -295544.9020973157,
    -1026552.2629063978,
    -217358.75879855212,
    6112831.991758707,
    8392201.525819948,
    -33608286.925212145,
];
const U_MID64: f64 = 0.1528153588455096;
const SHIFT64: f64 = 4.0;
/// The same for f32 on 0.875 <= x <= 3.95; 0.03 * 2^-24.
const TAIL32: [f64; 7] = [
    0.2692211866378784,
    1.7711548805236816,
    3.9873435497283936,
    5.080742359161377,
    0.6760815382003784,
    -7.645611763000488,
    1.3902581930160522,
];
const U_MID32: f64 = 0.257946656923639;
const SHIFT32: f64 = 2.0;

const SPLIT: f64 = 0.875;

#[inline(always)]
pub(super) fn erf<F: Fx>(f: F, x: F::V) -> F::V {
    let small = f.lt(f.abs(x), f.splat(SPLIT));
    let z = f.mul(x, x);
    let y_small = f.fma(x, f.poly(z, F::pick(&SMALL32[..], &SMALL64[..])), x);
    // NaN is not small, so it takes the tail, which keeps it.
    if !f.any(f.not_m(small)) {
        return y_small;
    }
    f.select(small, y_small, erf_tail(f, x))
}

/// erf for |x| >= SPLIT.
#[inline(always)]
fn erf_tail<F: Fx>(f: F, x: F::V) -> F::V {
    let one = f.splat(1.0);
    let top = f.splat(F::pick(3.95, 5.95));
    let ax = f.abs(x);
    let ax = f.select(f.gt(ax, top), top, ax);
    // u = 1/d with d = ax + SHIFT, carried with its low part: G is steep enough that one
    // rounding of u would cost most of an ulp near the split.
    let shift = f.splat(F::pick(SHIFT32, SHIFT64));
    let d = f.add(ax, shift);
    let dd = f.sub(d, ax);
    let d_lo = f.add(f.sub(ax, f.sub(d, dd)), f.sub(shift, dd));
    let u = f.div(one, d);
    let u_lo = f.mul(u, f.fnma(u, d_lo, f.fnma(u, d, one)));
    let t = f.add(f.sub(u, f.splat(F::pick(U_MID32, U_MID64))), u_lo);
    let g = f.poly(t, F::pick(&TAIL32[..], &TAIL64[..]));
    // e^{-x^2} with x^2 = hi + lo exactly: e^{-hi} (1 - lo).
    let x2 = f.mul(ax, ax);
    let x2_lo = f.fma(ax, ax, f.neg(x2));
    let e = exp(f, f.neg(x2));
    let e = f.fnma(e, x2_lo, e);
    f.copysign(f.fnma(e, g, one), x)
}
