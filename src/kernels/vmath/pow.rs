//! pow. f32: exp(y log|x|) in f64 lanes, where the error of y log|x| (at most 2^-52 of
//! a value below 150 wherever the f32 result is finite and nonzero) is far below f32's ulp;
//! then the sign and libm's special cases. f64: libm per element, since the same formula in
//! f64 would need log|x| to about 2^-70 (double-double) to stay within 4 ulp.

use std::mem::MaybeUninit;

use super::as_uninit;
use super::dispatch::{at_level, Job, Level};
use super::exp::exp;
use super::log::log;
use super::simd::Fx;

/// pow for f64 lanes that hold f32 values.
#[inline(always)]
fn pow_lanes<F: Fx<E = f64>>(f: F, x: F::V, y: F::V) -> F::V {
    let zero = f.splat(0.0);
    let one = f.splat(1.0);
    let inf = f.splat(f64::INFINITY);
    let ax = f.abs(x);
    let ay = f.abs(y);
    let p = exp(f, f.mul(y, log(f, ax)));

    // y is an integer: at or above 2^52 always; below, when rounding to an integer (by
    // adding and removing 2^52) keeps it. Odd: an integer whose half is not one (below
    // 2^53; all larger floats are even).
    let two52 = f.splat(2f64.powi(52));
    let round = |v: F::V| f.sub(f.add(v, two52), two52);
    let integer = f.or_m(f.le(two52, ay), f.eq(round(ay), ay));
    let half = f.mul(ay, f.splat(0.5));
    let odd = f.and_m(
        f.and_m(integer, f.lt(ay, f.splat(2f64.powi(53)))),
        f.not_m(f.eq(round(half), half)),
    );
    // x with its sign bit set (-0 and -inf included) and y odd: the result is negative.
    let y_sign = f.and_f(x, f.select(odd, f.splat(-0.0), zero));
    let r = f.xor_f(p, y_sign);
    // A negative finite x and a finite non-integer y: NaN.
    let domain = f.and_m(
        f.and_m(f.lt(x, zero), f.lt(f.splat(f64::NEG_INFINITY), x)),
        f.not_m(integer),
    );
    let r = f.select(domain, f.splat(f64::NAN), r);
    // pow(x, ±0) = 1 and pow(1, y) = 1 even for NaN; pow(-1, ±inf) = 1.
    let unit = f.or_m(
        f.or_m(f.eq(y, zero), f.eq(x, one)),
        f.and_m(f.eq(ax, one), f.eq(ay, inf)),
    );
    f.select(unit, one, r)
}

/// `dst[i] = x[i]^y[i]` at the detected level, over the common length.
pub fn pow<E: PowElem>(x: &[E], y: &[E], dst: &mut [E]) {
    pow_at(Level::detect(), x, y, dst)
}

/// `dst[i] = x[i]^y[i]` on this thread at `level`, over the common length.
pub fn pow_at<E: PowElem>(level: Level, x: &[E], y: &[E], dst: &mut [E]) {
    let n = x.len().min(y.len()).min(dst.len());
    E::pow_at(
        level,
        &x[..n],
        Exponent::Each(&y[..n]),
        as_uninit(&mut dst[..n]),
    )
}

/// `x[i]^y[i]` (equal lengths) into a new vector, split over the team when large.
pub fn pow_vec<E: PowElem>(x: &[E], y: &[E]) -> Vec<E> {
    assert_eq!(x.len(), y.len(), "pow_vec: operands of unequal length");
    pow_into(x, |c, len| Exponent::Each(&y[c * CHUNK..][..len]))
}

/// `x[i]^y` into a new vector, split over the team when large.
pub fn pow_scalar_vec<E: PowElem>(x: &[E], y: f64) -> Vec<E> {
    pow_into(x, |_, _| Exponent::All(y))
}

/// Elements per task when a slice is split over the team.
const CHUNK: usize = 1 << 14;

fn pow_into<'y, E: PowElem + 'y>(
    x: &[E],
    exponent: impl Fn(usize, usize) -> Exponent<'y, E> + Sync,
) -> Vec<E> {
    let level = Level::detect();
    let mut out = Vec::with_capacity(x.len());
    let dst = &mut out.spare_capacity_mut()[..x.len()];
    if x.len() >= crate::kernels::PARALLEL_GRAIN {
        crate::kernels::par_chunks_mut(dst, CHUNK, |c, d| {
            E::pow_at(level, &x[c * CHUNK..][..d.len()], exponent(c, d.len()), d)
        });
    } else {
        E::pow_at(level, x, exponent(0, x.len()), dst);
    }
    // SAFETY: `pow_at` wrote every element of `dst`, which is `x.len()` long.
    unsafe { out.set_len(x.len()) };
    out
}

/// The exponents of one call: one per base, or one double for all.
#[derive(Clone, Copy)]
pub enum Exponent<'a, E> {
    Each(&'a [E]),
    All(f64),
}

/// The element types pow runs on.
pub trait PowElem: Copy + Send + Sync {
    /// `dst[i] = x[i]^y(i)`, writing every element of `dst` (as long as `x`).
    fn pow_at(level: Level, x: &[Self], y: Exponent<'_, Self>, dst: &mut [MaybeUninit<Self>]);
}

impl PowElem for f64 {
    fn pow_at(_level: Level, x: &[f64], y: Exponent<'_, f64>, dst: &mut [MaybeUninit<f64>]) {
        match y {
            Exponent::Each(y) => {
                for ((d, &a), &b) in dst.iter_mut().zip(x).zip(y) {
                    d.write(a.powf(b));
                }
            }
            Exponent::All(v) => {
                for (d, &a) in dst.iter_mut().zip(x) {
                    d.write(a.powf(v));
                }
            }
        }
    }
}

impl PowElem for f32 {
    fn pow_at(level: Level, x: &[f32], y: Exponent<'_, f32>, dst: &mut [MaybeUninit<f32>]) {
        if let Err(job) = at_level::<f32, _>(level, PowJob { x, y, dst }) {
            for (i, (d, &a)) in job.dst.iter_mut().zip(job.x).enumerate() {
                let b = match job.y {
                    Exponent::Each(y) => y[i] as f64,
                    Exponent::All(v) => v,
                };
                // The f64 power of f32 values rounds once, as the vector path does.
                d.write((a as f64).powf(b) as f32);
            }
        }
    }
}

struct PowJob<'a> {
    x: &'a [f32],
    y: Exponent<'a, f32>,
    dst: &'a mut [MaybeUninit<f32>],
}

impl Job<f32> for PowJob<'_> {
    #[inline(always)]
    fn run<F: Fx<E = f32>>(self, f: F) {
        // Blocks widened to f64 on the stack (the conversions vectorize here too).
        const BLOCK: usize = 64;
        let w = f.f64_lanes();
        let (mut xw, mut yw, mut rw) = ([0f64; BLOCK], [0f64; BLOCK], [0f64; BLOCK]);
        if let Exponent::All(v) = self.y {
            yw = [v; BLOCK];
        }
        let blocks = self.x.chunks(BLOCK).zip(self.dst.chunks_mut(BLOCK));
        for (b, (xs, ds)) in blocks.enumerate() {
            let n = xs.len();
            for i in 0..n {
                xw[i] = xs[i] as f64;
            }
            if let Exponent::Each(y) = self.y {
                for i in 0..n {
                    yw[i] = y[b * BLOCK + i] as f64;
                }
            }
            let step = <F::F64 as Fx>::LANES;
            let mut i = 0;
            while i < n {
                let end = (i + step).min(n);
                let r = pow_lanes(w, w.load_part(&xw[i..end]), w.load_part(&yw[i..end]));
                w.store_part(&mut rw[i..end], r);
                i = end;
            }
            for i in 0..n {
                ds[i].write(rw[i] as f32);
            }
        }
    }
}
