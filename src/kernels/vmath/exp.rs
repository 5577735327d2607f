//! exp and expm1: x = k ln2 + r with |r| <= ln2/2 (Cody-Waite, ln2 in two parts), a
//! minimax polynomial for exp(r) or expm1(r), then a scale by 2^k built in the exponent
//! field. Coefficients: tools/vmath_fit.py (fits named as the constants).

use super::simd::Fx;

/// exp(r) = 1 + r + r^2 P(r) on |r| <= ln2/2; relative error 0.1 * 2^-53.
const EXP_P64: [f64; 10] = [
    0.5000000000000011,
    0.16666666666666413,
    0.041666666666530155,
    0.008333333333494465,
    0.0013888888943630205,
    0.0001984126950656998,
    2.4801493098811693e-05,
    2.755758638219775e-06,
    2.763024841138517e-07,
    2.5000058807589453e-08,
];
/// The same for f32; 0.07 * 2^-24.
const EXP_P32: [f64; 5] = [
    0.4999999403953552,
    0.1666652113199234,
    0.04166838899254799,
    0.008368716575205326,
    0.001381459878757596,
];
/// expm1(r) = r + r^2/2 + r^3 P(r) on |r| <= ln2/2; relative error 0.02 * 2^-53.
const EXPM1_P64: [f64; 10] = [
    0.16666666666666677,
    0.04166666666666658,
    0.008333333333322158,
    0.0013888888888942668,
    0.0001984126988494475,
    2.480158719821888e-05,
    2.7557245291774844e-06,
    2.7557387046558456e-07,
    2.5108687353569865e-08,
    2.0878911439792425e-09,
];
/// The same for f32; 0.02 * 2^-24.
const EXPM1_P32: [f64; 5] = [
    0.1666666567325592,
    0.041666481643915176,
    0.0083334194496274,
    0.0013933252776041627,
    0.00019824125047307462,
];

/// ln2 as hi + lo, each rounded to the element type: with fused steps, x - k*hi is exact
/// for every k in range, so r carries the error of the lo step only.
pub(super) const LN2_HI64: f64 = std::f64::consts::LN_2;
pub(super) const LN2_LO64: f64 = 2.3190468138462996e-17;
pub(super) const LN2_HI32: f64 = 0.6931471824645996;
pub(super) const LN2_LO32: f64 = -1.9046542121259336e-09;

/// 1.5 * 2^MANT: adding it rounds a float below 2^(MANT-1) to an integer, which then sits
/// in the low mantissa bits (see `pow2`).
#[inline(always)]
pub(super) fn magic<F: Fx>(f: F) -> F::V {
    f.splat(1.5 * (1u64 << F::MANT) as f64)
}

/// 2^(k + offset) for the k whose "t = k + magic" bits are `t`: the low bits of t hold k
/// (two's complement), so (t + bias + offset) shifted into the exponent field is 2^k.
/// k + bias + offset must lie in [1, 2*bias] (a normal result).
#[inline(always)]
pub(super) fn pow2<F: Fx>(f: F, t: F::U, offset: i64) -> F::V {
    let biased = (F::BIAS as i64 + offset) as u64;
    f.of_bits(f.shl_mant(f.add_u(t, f.splat_u(biased))))
}

/// x = k ln2 + r: (bits of k + magic, k, r).
#[inline(always)]
fn reduce_ln2<F: Fx>(f: F, x: F::V) -> (F::U, F::V, F::V) {
    let m = magic(f);
    let t = f.fma(x, f.splat(std::f64::consts::LOG2_E), m);
    let k = f.sub(t, m);
    let r = f.fnma(k, f.splat(F::pick(LN2_HI32, LN2_HI64)), x);
    let r = f.fnma(k, f.splat(F::pick(LN2_LO32, LN2_LO64)), r);
    (f.bits(t), k, r)
}

/// exp(r) for |r| <= ln2/2.
#[inline(always)]
fn exp_poly<F: Fx>(f: F, r: F::V) -> F::V {
    let p = f.poly(r, F::pick(&EXP_P32[..], &EXP_P64[..]));
    let one = f.splat(1.0);
    f.add(one, f.fma(f.mul(r, r), p, r))
}

/// Below this |x| both exp(x) and 2^k stay normal, so one scale does.
#[inline(always)]
fn exp_safe<F: Fx>(f: F) -> F::V {
    f.splat(F::pick(87.0, 708.0))
}

#[inline(always)]
pub(super) fn exp<F: Fx>(f: F, x: F::V) -> F::V {
    let big = f.gt(f.abs(x), exp_safe(f));
    if f.any(big) {
        return exp_wide(f, x);
    }
    let (t, _, r) = reduce_ln2(f, x);
    f.mul(exp_poly(f, r), pow2(f, t, 0))
}

/// exp over the whole range: x clamped just past the overflow and underflow thresholds
/// (NaN kept), and 2^k applied in two halves so that neither half leaves the normal range;
/// the second product rounds once, also into the subnormals.
#[inline(always)]
fn exp_wide<F: Fx>(f: F, x: F::V) -> F::V {
    let (lo, hi) = F::pick((-105.0, 90.0), (-746.0, 711.0));
    let x = f.select(f.lt(x, f.splat(lo)), f.splat(lo), x);
    let x = f.select(f.gt(x, f.splat(hi)), f.splat(hi), x);
    let (_, k, r) = reduce_ln2(f, x);
    let m = magic(f);
    let t1 = f.fma(k, f.splat(0.5), m);
    let k1 = f.sub(t1, m);
    let t2 = f.add(f.sub(k, k1), m);
    let p = exp_poly(f, r);
    f.mul(f.mul(p, pow2(f, f.bits(t1), 0)), pow2(f, f.bits(t2), 0))
}

/// expm1(x) as hi + lo, for x in [-40, 710] (f64) or [-18, 89] (f32), NaN kept.
///
/// expm1(x) = 2^k (1 + p) - 1 with p = expm1(r) = 2 (h p + (h - 1/2)) with h = 2^(k-1): both
/// products are exact, and the sum is carried as a pair, as p is (p = r + q by fast
/// two-sum, |r| > |q|); rounded once, p alone would cost an ulp of the result where 2^k p
/// and the result are about as large (k = 1, r near -ln2/2).
#[inline(always)]
pub(super) fn expm1_pair<F: Fx>(f: F, x: F::V) -> (F::V, F::V) {
    let (t, _, r) = reduce_ln2(f, x);
    let p = f.poly(r, F::pick(&EXPM1_P32[..], &EXPM1_P64[..]));
    let q = f.mul(f.mul(r, r), f.fma(r, p, f.splat(0.5)));
    let p_hi = f.add(r, q);
    let p_lo = f.add(f.sub(r, p_hi), q);
    let h = pow2(f, t, -1);
    let a = f.mul(h, p_hi);
    let b = f.sub(h, f.splat(0.5));
    let (s, s_lo) = two_sum(f, a, b);
    let two = f.splat(2.0);
    (f.mul(s, two), f.mul(f.fma(h, p_lo, s_lo), two))
}

/// a + b = s + err exactly.
#[inline(always)]
pub(super) fn two_sum<F: Fx>(f: F, a: F::V, b: F::V) -> (F::V, F::V) {
    let s = f.add(a, b);
    let bb = f.sub(s, a);
    (s, f.add(f.sub(a, f.sub(s, bb)), f.sub(b, bb)))
}

#[inline(always)]
pub(super) fn expm1<F: Fx>(f: F, x: F::V) -> F::V {
    // Past these, expm1 rounds to -1 or overflows; NaN passes the selects.
    let (lo, hi) = F::pick((-18.0, 89.0), (-40.0, 710.0));
    let xc = f.select(f.lt(x, f.splat(lo)), f.splat(lo), x);
    let xc = f.select(f.gt(xc, f.splat(hi)), f.splat(hi), xc);
    let (y, y_lo) = expm1_pair(f, xc);
    let y = f.add(y, y_lo);
    // Tiny x (and ±0, subnormals): expm1(x) = x to within half an ulp.
    let tiny = f.lt(f.abs(x), f.splat(F::pick(2f64.powi(-25), 2f64.powi(-54))));
    f.select(tiny, x, y)
}
