//! atan2(y, x). With lo = min(|x|, |y|) and hi = max(|x|, |y|), the angle of (hi, lo) is
//! atan(lo / hi) in [0, pi/4]; above tan(pi/8) it is pi/4 + atan((lo - hi) / (lo + hi)),
//! so the polynomial only covers |u| <= tan(pi/8) and one division serves both halves.
//! Swapping x and y (|y| > |x|) reflects the angle to pi/2 - a, a negative x (sign bit,
//! so -0 too) to pi - a; together the angle is k pi/4 + s atan(u) for an integer k in 0..=4
//! and s = ±1, summed as k (pi/4 hi) + (k (pi/4 lo) + s atan(u)) with one rounding of the
//! large term (fused), and y's sign bit is copied onto it. Where k > 0 the result is at
//! least pi/8 and |atan(u)| at most pi/8, so the errors of u and of the polynomial weigh at
//! most as much as in atan(u) itself. 0/0 and inf/inf are set apart (atan2(±0, ±0) and
//! atan2(±inf, ±inf) as libm), and a NaN operand gives NaN. Coefficients:
//! tools/vmath_fit.py (ATAN_A64, ATAN_A32).

use std::mem::MaybeUninit;

use super::dispatch::{at_level, Elem, Job, Level, MAX_LANES};
use super::simd::Fx;

/// atan(u) = u + u^3 A(u^2) on |u| <= tan(pi/8); relative error 0.27 * 2^-53.
const ATAN_A64: [f64; 11] = [
    -0.3333333333333333,
    0.19999999999998488,
    -0.1428571428494593,
    0.11111111009287371,
    -0.09090903435769582,
    0.0769214250791378,
    -0.06663815962006574,
    0.058515209489752154,
    -0.050493854529632363,
    0.03818174096659071,
    -0.017905984596555978,
];
/// The same for f32; relative error 0.05 * 2^-24.
const ATAN_A32: [f64; 5] = [
    -0.3333333134651184,
    0.19999022781848907,
    -0.14248153567314148,
    0.1059904545545578,
    -0.06043329834938049,
];

/// pi/4 = hi + lo, each part rounded to the element type.
const PIO4_64: [f64; 2] = [std::f64::consts::FRAC_PI_4, 3.061616997868383e-17];
const PIO4_32: [f64; 2] = [0.7853981852531433, -2.1855694143368964e-08];

/// tan(pi/8) (the split between the two halves: any value near it works, the fit covers
/// a little more).
const TAN_PI_8: f64 = 0.41421356237309503;

/// Above this `lo + hi` could overflow, so both are halved first (exactly: they are far
/// from the subnormals there, or lo / hi underflows to 0 regardless).
const LARGE64: f64 = 1e300;
const LARGE32: f64 = 1e37;

/// atan2(y, x) lane by lane.
#[inline(always)]
pub(super) fn atan2<F: Fx>(f: F, y: F::V, x: F::V) -> F::V {
    let zero = f.splat(0.0);
    let one = f.splat(1.0);
    let inf = f.splat(f64::INFINITY);
    let (ax, ay) = (f.abs(x), f.abs(y));
    let swap = f.gt(ay, ax);
    let lo = f.select(swap, ax, ay);
    let hi = f.select(swap, ay, ax);
    let half = f.select(
        f.gt(hi, f.splat(F::pick(LARGE32, LARGE64))),
        f.splat(0.5),
        one,
    );
    let (lo_h, hi_h) = (f.mul(lo, half), f.mul(hi, half));
    // Both infinite: the upper half with u = 0 (pi/4).
    let upper = f.or_m(f.gt(lo, f.mul(hi, f.splat(TAN_PI_8))), f.eq(lo, inf));
    let num = f.select(upper, f.sub(lo_h, hi_h), lo_h);
    let den = f.select(upper, f.add(lo_h, hi_h), hi_h);
    // lo == hi: u = 0 (covers 0/0 and inf/inf; a finite pair gives 0 anyway).
    let u = f.select(f.eq(lo, hi), zero, f.div(num, den));
    let z = f.mul(u, u);
    let poly = f.poly(z, F::pick(&ATAN_A32[..], &ATAN_A64[..]));
    let a = f.fma(f.mul(u, z), poly, u);
    // k quarter turns and the sign of a: upper k = 1; swapped 2 - k, -a; x negative
    // 4 - k, -a.
    let sign = f.splat(-0.0);
    let k = f.select(upper, one, zero);
    let k = f.select(swap, f.sub(f.splat(2.0), k), k);
    let a = f.select(swap, f.neg(a), a);
    let sign_bits = f.bits(sign);
    let x_negative = f.eq_u(f.and_u(f.bits(x), sign_bits), sign_bits);
    let k = f.select(x_negative, f.sub(f.splat(4.0), k), k);
    let a = f.select(x_negative, f.neg(a), a);
    let [hi_c, lo_c] = F::pick(PIO4_32, PIO4_64);
    let r = f.fma(k, f.splat(hi_c), f.fma(k, f.splat(lo_c), a));
    // r >= 0 (k = 0 only with a >= 0): y's sign bit makes it atan2's sign.
    let r = f.or_f(r, f.and_f(y, sign));
    let nan = f.or_m(f.is_nan(x), f.is_nan(y));
    f.select(nan, f.add(x, y), r)
}

/// `dst[i] = atan2(y[i], x[i])` on this thread at `level`; every element of `dst` is
/// written (the three have equal lengths).
pub fn atan2_at<E: Elem>(level: Level, y: &[E], x: &[E], dst: &mut [MaybeUninit<E>]) {
    let job = Atan2Job { y, x, dst };
    if let Err(job) = at_level::<E, _>(level, job) {
        for ((d, &b), &a) in job.dst.iter_mut().zip(job.y).zip(job.x) {
            d.write(b.atan2(a));
        }
    }
}

struct Atan2Job<'a, E> {
    y: &'a [E],
    x: &'a [E],
    dst: &'a mut [MaybeUninit<E>],
}

impl<E: Elem> Job<E> for Atan2Job<'_, E> {
    #[inline(always)]
    fn run<F: Fx<E = E>>(self, f: F) {
        let (ys, y_tail) = F::split(self.y);
        let (xs, x_tail) = F::split(self.x);
        let (ds, d_tail) = F::split_uninit(self.dst);
        for ((d, y), x) in ds.iter_mut().zip(ys).zip(xs) {
            d.write(atan2(f, *y, *x));
        }
        if !y_tail.is_empty() {
            let mut tail = [E::default(); MAX_LANES];
            let r = atan2(f, f.load_part(y_tail), f.load_part(x_tail));
            f.store_part(&mut tail[..y_tail.len()], r);
            for (d, &v) in d_tail.iter_mut().zip(&tail) {
                d.write(v);
            }
        }
    }
}
