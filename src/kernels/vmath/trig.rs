//! sin, cos, tan: x = k pi/2 + r with |r| <= pi/4, r kept as a double-length pair
//! (r, rl) from a three-part pi/2 (Cody-Waite with fused steps and an exact two-sum), then
//! minimax polynomials for sin(r) and cos(r) and the quadrant k mod 4. Lanes with |x| past
//! `limit`, where three parts of pi/2 no longer cover the cancellation, go to libm one by
//! one (a Payne-Hanek reduction there). Coefficients: tools/vmath_fit.py (fits named as
//! the constants).

use super::dispatch::MAX_LANES;
use super::simd::{Fx, Real};

/// sin(r) = r + r^3 S(r^2) on |r| <= pi/4; relative error 0.2 * 2^-53.
const SIN_S64: [f64; 6] = [
    -0.16666666666666663,
    0.008333333333328578,
    -0.000198412698327625,
    2.755731415929458e-06,
    -2.505076749518354e-08,
    1.5894713505647207e-10,
];
const SIN_S32: [f64; 3] = [
    -0.16666658222675323,
    0.008332165889441967,
    -0.00019503955263644457,
];
/// cos(r) = 1 - r^2/2 + r^4 C(r^2) on |r| <= pi/4; relative error 0.005 * 2^-53.
const COS_C64: [f64; 6] = [
    0.041666666666666664,
    -0.0013888888888885914,
    2.4801587296265638e-05,
    -2.755731605597669e-07,
    2.0875918321364606e-09,
    -1.1367982863656064e-11,
];
const COS_C32: [f64; 3] = [
    0.0416666604578495,
    -0.0013887719251215458,
    2.4463819499942474e-05,
];

/// pi/2 = P1 + P2 + P3, each part rounded to the element type.
const PIO2_64: [f64; 3] = [
    std::f64::consts::FRAC_PI_2,
    6.123233995736766e-17,
    -1.4973849048591698e-33,
];
const PIO2_32: [f64; 3] = [
    1.5707963705062866,
    -4.371138828673793e-08,
    -1.7151245100058819e-15,
];

/// Which function a lane computes, for the scalar path of huge arguments.
#[derive(Clone, Copy)]
pub(super) enum Trig {
    Sin,
    Cos,
    Tan,
}

impl Trig {
    /// libm's value (f32 through f64, which then rounds correctly but for double rounding).
    fn libm<E: Real>(self, x: E) -> E {
        let x = x.to_f64();
        E::from_f64(match self {
            Trig::Sin => x.sin(),
            Trig::Cos => x.cos(),
            Trig::Tan => x.tan(),
        })
    }
}

/// x = k pi/2 + (r + rl): (bits of k + magic, r, rl).
#[inline(always)]
fn reduce<F: Fx>(f: F, x: F::V) -> (F::U, F::V, F::V) {
    let [p1, p2, p3] = F::pick(PIO2_32, PIO2_64);
    let m = super::exp::magic(f);
    let t = f.fma(x, f.splat(std::f64::consts::FRAC_2_PI), m);
    let k = f.sub(t, m);
    // x - k*p1 is exact: both are multiples of ulp(p1) (or x is small) and the result is
    // below 1.
    let a = f.fnma(k, f.splat(p1), x);
    let p = f.mul(k, f.splat(p2));
    let p_lo = f.fma(k, f.splat(p2), f.neg(p));
    let b = f.sub(a, p);
    let bb = f.sub(b, a);
    let err = f.sub(f.sub(a, f.sub(b, bb)), f.add(p, bb));
    let rl = f.fnma(k, f.splat(p3), f.sub(err, p_lo));
    let r = f.add(b, rl);
    let rl = f.sub(rl, f.sub(r, b));
    (f.bits(t), r, rl)
}

/// sin(r + rl) for |r| <= pi/4, as a pair hi + lo.
#[inline(always)]
fn sin_kernel<F: Fx>(f: F, r: F::V, rl: F::V, z: F::V) -> (F::V, F::V) {
    let s = f.poly(z, F::pick(&SIN_S32[..], &SIN_S64[..]));
    // sin(r + rl) = sin(r) + rl cos(r), with cos(r) = 1 - z/2 to the needed precision.
    let rl_cos = f.fnma(f.mul(rl, f.splat(0.5)), z, rl);
    fast_two_sum(f, r, f.fma(f.mul(r, z), s, rl_cos))
}

/// cos(r + rl) for |r| <= pi/4, as a pair hi + lo; 1 - z/2 is split so its rounding
/// error is kept.
#[inline(always)]
fn cos_kernel<F: Fx>(f: F, r: F::V, rl: F::V, z: F::V) -> (F::V, F::V) {
    let c = f.poly(z, F::pick(&COS_C32[..], &COS_C64[..]));
    let one = f.splat(1.0);
    let hz = f.mul(z, f.splat(0.5));
    let w = f.sub(one, hz);
    let w_err = f.sub(f.sub(one, w), hz);
    let tail = f.fnma(r, rl, f.mul(f.mul(z, z), c));
    fast_two_sum(f, w, f.add(w_err, tail))
}

/// a + b = s + err exactly, for |a| >= |b|.
#[inline(always)]
fn fast_two_sum<F: Fx>(f: F, a: F::V, b: F::V) -> (F::V, F::V) {
    let s = f.add(a, b);
    (s, f.sub(b, f.sub(s, a)))
}

/// Beyond this |x| the lanes go to libm.
#[inline(always)]
fn limit<F: Fx>(f: F) -> F::V {
    f.splat(F::pick(65536.0, 268435456.0))
}

/// Below this |x|, sin x and tan x round to x (and keep the sign of ±0).
#[inline(always)]
fn tiny<F: Fx>(f: F) -> F::V {
    f.splat(F::pick(2f64.powi(-13), 2f64.powi(-27)))
}

/// sin or cos of f32 lanes with one polynomial per lane: each lane evaluates the sin or
/// the cos polynomial of r as its quadrant asks, with the coefficients chosen per lane,
/// instead of both. r comes from a plain three-part reduction (no low part): near a
/// multiple of pi/2 its error is within half an ulp of r, so the result stays within
/// about 1.5 ulp, at half the work of the double-length path that f64 needs.
#[inline(always)]
fn sin_cos_f32<F: Fx>(f: F, x: F::V, q_offset: u64) -> F::V {
    let [p1, p2, p3] = PIO2_32;
    let m = super::exp::magic(f);
    let t = f.fma(x, f.splat(std::f64::consts::FRAC_2_PI), m);
    let k = f.sub(t, m);
    let r = f.fnma(k, f.splat(p1), x);
    let r = f.fnma(k, f.splat(p2), r);
    let r = f.fnma(k, f.splat(p3), r);
    // cos(x) = sin(x + pi/2): one quadrant on.
    let q = f.add_u(f.bits(t), f.splat_u(q_offset));
    let zero_u = f.splat_u(0);
    let even = f.eq_u(f.and_u(q, f.splat_u(1)), zero_u);
    let upper = f.eq_u(f.and_u(q, f.splat_u(2)), zero_u);
    let z = f.mul(r, r);
    // sin(r) = r + (r z) S(z); cos(r) = (1 - z/2) + z^2 C(z), with 1 - z/2 split so that
    // its rounding error joins the small term.
    let pick = |i: usize| f.select(even, f.splat(SIN_S32[i]), f.splat(COS_C32[i]));
    let p = f.fma(f.fma(pick(2), z, pick(1)), z, pick(0));
    let one = f.splat(1.0);
    let hz = f.mul(z, f.splat(0.5));
    let w = f.sub(one, hz);
    let w_err = f.sub(f.sub(one, w), hz);
    let head = f.select(even, r, w);
    let scale = f.mul(z, f.select(even, r, z));
    let tail = f.fma(scale, p, f.select(even, f.splat(0.0), w_err));
    let y = f.add(head, tail);
    let y = f.xor_f(y, f.select(upper, f.splat(0.0), f.splat(-0.0)));
    // sin rounds to x below `tiny`, and keeps the sign of -0 (the sum above gives +0).
    let y = match q_offset {
        0 => f.select(f.lt(f.abs(x), tiny(f)), x, y),
        _ => y,
    };
    let big = f.gt(f.abs(x), limit(f));
    if f.any(big) {
        let op = if q_offset == 0 { Trig::Sin } else { Trig::Cos };
        return patch_lanes(f, x, y, big, |v| op.libm(v));
    }
    y
}

#[inline(always)]
fn trig<F: Fx>(f: F, x: F::V, op: Trig) -> F::V {
    if !F::E::IS_F64 {
        match op {
            Trig::Sin => return sin_cos_f32(f, x, 0),
            Trig::Cos => return sin_cos_f32(f, x, 1),
            Trig::Tan => {}
        }
    }
    let (q, r, rl) = reduce(f, x);
    let z = f.mul(r, r);
    let (s, s_lo) = sin_kernel(f, r, rl, z);
    let (c, c_lo) = cos_kernel(f, r, rl, z);
    let one_u = f.splat_u(1);
    let zero_u = f.splat_u(0);
    let even = f.eq_u(f.and_u(q, one_u), zero_u);
    let y = match op {
        Trig::Sin | Trig::Cos => {
            // cos(x) = sin(x + pi/2): one quadrant on.
            let q = match op {
                Trig::Cos => f.add_u(q, one_u),
                _ => q,
            };
            let even = f.eq_u(f.and_u(q, one_u), zero_u);
            let upper = f.eq_u(f.and_u(q, f.splat_u(2)), zero_u);
            let y = f.select(even, s, c);
            f.xor_f(y, f.select(upper, f.splat(0.0), f.splat(-0.0)))
        }
        Trig::Tan => {
            // tan = sin/cos in even quadrants, -cos/sin in odd ones; the quotient of the
            // pairs, corrected by its residual.
            let num = f.select(even, s, f.neg(c));
            let num_lo = f.select(even, s_lo, f.neg(c_lo));
            let den = f.select(even, c, s);
            let den_lo = f.select(even, c_lo, s_lo);
            let inv = f.div(f.splat(1.0), den);
            let q = f.mul(num, inv);
            let residual = f.add(f.fnma(q, den_lo, f.fnma(q, den, num)), num_lo);
            f.fma(residual, inv, q)
        }
    };
    let y = match op {
        Trig::Cos => y,
        _ => f.select(f.lt(f.abs(x), tiny(f)), x, y),
    };
    let big = f.gt(f.abs(x), limit(f));
    if f.any(big) {
        return patch_lanes(f, x, y, big, |v| op.libm(v));
    }
    y
}

/// `y` with the lanes under `mask` replaced by `g` of the same lanes of `x`.
///
/// Inlined, so that the vectors reach memory only on this (rare) path: a call taking
/// them would pass them by address, and the compiler then stores `x` and `y` to the stack
/// on every iteration of the caller's loop and reloads them. Where such a 64-byte reload
/// straddles a cache line (the stack's offset varies per process), store forwarding fails
/// and sin / cos of f32 ran 5x slower in some processes (Zen 4, AVX-512).
#[inline(always)]
fn patch_lanes<F: Fx>(f: F, x: F::V, y: F::V, mask: F::M, g: impl Fn(F::E) -> F::E) -> F::V {
    let zero = F::E::default();
    let (mut xs, mut ys, mut ms) = ([zero; MAX_LANES], [zero; MAX_LANES], [zero; MAX_LANES]);
    let n = F::LANES;
    f.store_part(&mut xs[..n], x);
    f.store_part(&mut ys[..n], y);
    f.store_part(&mut ms[..n], f.select(mask, f.splat(1.0), f.splat(0.0)));
    patch_marked(&xs[..n], &mut ys[..n], &ms[..n], g);
    f.load_part(&ys[..n])
}

/// `ys[i] = g(xs[i])` where `marks[i]` is set: the out-of-line part of `patch_lanes`.
#[cold]
#[inline(never)]
fn patch_marked<E: Real>(xs: &[E], ys: &mut [E], marks: &[E], g: impl Fn(E) -> E) {
    for ((y, &x), &m) in ys.iter_mut().zip(xs).zip(marks) {
        if m != E::default() {
            *y = g(x);
        }
    }
}

#[inline(always)]
pub(super) fn sin<F: Fx>(f: F, x: F::V) -> F::V {
    trig(f, x, Trig::Sin)
}

#[inline(always)]
pub(super) fn cos<F: Fx>(f: F, x: F::V) -> F::V {
    trig(f, x, Trig::Cos)
}

#[inline(always)]
pub(super) fn tan<F: Fx>(f: F, x: F::V) -> F::V {
    trig(f, x, Trig::Tan)
}
