//! Vectorized elementwise math for f32 and f64 slices.
//!
//! # Note: vectorized math
//!
//! Each function is one algorithm written over `simd::Fx` (a vector of f32 or f64 at one
//! SIMD level, on top of pulp): range reduction (Cody-Waite with split constants and fused
//! steps), a minimax polynomial fitted by tools/vmath_fit.py, and a rescale done in the
//! exponent bits. The same code runs at 16 lanes (AVX-512), 8 (AVX2 + FMA), or is
//! replaced by libm per element where neither is available (`Level::Scalar`). The level
//! is detected once per process; `map_at` takes it explicitly (tests and benches run every
//! level the CPU has).
//!
//! Accuracy (tests.rs checks it against libm over special values, every f32 exponent,
//! dense runs near 0, the overflow thresholds and multiples of pi/2, and random points):
//! within 4 ulp everywhere, libm's special values (±0, ±inf, NaN, domain errors) exactly.
//! Observed: f32 at most 1.7 ulp from the correctly rounded result (sin and cos, which
//! evaluate one polynomial per lane from a plain reduction; tanh 1.5, sigmoid and rsqrt
//! 1.5, the rest at most 1.2, over every 7th f32 in the ignored sweep test), f64 at most 2 ulp
//! from glibc (tanh, and sigmoid against a double-double reference; the rest 1; where
//! glibc's tanh is an ulp off itself). Lanes of sin/cos/tan past |x| = 2^16 (f32) or
//! 2^28 (f64) are handed to libm, whose reduction covers any size.
//! f64 pow stays libm (a vector form within 4 ulp needs log in double-double), f32 pow
//! computes in f64 lanes.
//!
//! Lanes are independent, so an element's result does not depend on its position in a
//! slice or on the thread count; `map` splits slices above `PARALLEL_GRAIN` over the pool
//! in fixed chunks.

mod atan2;
mod dispatch;
mod erf;
mod exp;
mod hyper;
mod log;
mod pow;
mod root;
mod scalar;
mod simd;
mod softmax;
#[cfg(test)]
mod tests;
mod trig;

use std::mem::MaybeUninit;

use dispatch::{map_with, Kernel};
pub use dispatch::{Elem, Level};
pub use pow::{pow, pow_at, pow_scalar_vec, pow_vec, Exponent, PowElem};
pub use scalar::Libm;
use simd::Fx;
pub use simd::Real;
pub use softmax::{logsumexp_row, softmax_backward_rows, softmax_rows};

macro_rules! unary_table {
    ($($(#[$doc:meta])* $op:ident => $vector:path, $scalar:path;)*) => {
        /// The functions with vector kernels (one row of the table in vmath/mod.rs each).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Unary {
            $($(#[$doc])* $op,)*
        }

        impl Unary {
            pub const ALL: &'static [Unary] = &[$(Unary::$op),*];
        }

        mod kernel {
            use super::*;
            $(
                pub struct $op;
                impl Kernel for $op {
                    #[inline(always)]
                    fn vector<F: Fx>(f: F, x: F::V) -> F::V {
                        $vector(f, x)
                    }
                    fn scalar<E: Libm>(x: E) -> E {
                        $scalar(x)
                    }
                }
            )*
        }

        /// `dst[i] = op(src[i])` on this thread at `level`; every element of `dst` is
        /// written (`src` and `dst` have equal lengths).
        fn map_uninit<E: Elem>(level: Level, op: Unary, src: &[E], dst: &mut [MaybeUninit<E>]) {
            match op {
                $(Unary::$op => map_with::<E, kernel::$op>(level, src, dst),)*
            }
        }
    };
}

unary_table! {
    Exp => exp::exp, Libm::exp;
    Expm1 => exp::expm1, Libm::exp_m1;
    Log => log::log, Libm::ln;
    Log1p => log::log1p, Libm::ln_1p;
    Sin => trig::sin, Libm::sin;
    Cos => trig::cos, Libm::cos;
    Tan => trig::tan, Libm::tan;
    Tanh => hyper::tanh, Libm::tanh;
    /// 1 / (1 + exp(-x)).
    Sigmoid => hyper::sigmoid, Libm::sigmoid;
    Erf => erf::erf, Libm::erf;
    Sqrt => root::sqrt, Libm::sqrt;
    /// 1 / sqrt(x).
    Rsqrt => root::rsqrt, Libm::rsqrt;
    /// 1 / x.
    Reciprocal => root::recip, Libm::recip;
}

/// Elements per task when a slice is split over the pool.
const CHUNK: usize = 1 << 14;

/// `dst[i] = atan2(y[i], x[i])` on this thread at `level`, over the common length.
pub fn atan2_at<E: Elem>(level: Level, y: &[E], x: &[E], dst: &mut [E]) {
    let n = y.len().min(x.len()).min(dst.len());
    atan2::atan2_at(level, &y[..n], &x[..n], as_uninit(&mut dst[..n]));
}

/// `atan2(y[i], x[i])` (equal lengths) into a new vector at the detected level, split
/// over the pool in fixed chunks when large.
pub fn atan2_vec<E: Elem>(y: &[E], x: &[E]) -> Vec<E> {
    let n = y.len().min(x.len());
    let level = Level::detect();
    let mut out = Vec::with_capacity(n);
    let dst = &mut out.spare_capacity_mut()[..n];
    if n >= crate::kernels::PARALLEL_GRAIN {
        crate::kernels::par_chunks_mut(dst, CHUNK, |c, d| {
            let start = c * CHUNK;
            atan2::atan2_at(level, &y[start..][..d.len()], &x[start..][..d.len()], d)
        });
    } else {
        atan2::atan2_at(level, &y[..n], &x[..n], dst);
    }
    // SAFETY: `atan2_at` wrote every one of the `n` elements of `dst`.
    unsafe { out.set_len(n) };
    out
}

/// `dst[i] = op(src[i])` on this thread at `level`, over the common length.
pub fn map_at<E: Elem>(level: Level, op: Unary, src: &[E], dst: &mut [E]) {
    let n = src.len().min(dst.len());
    map_uninit(level, op, &src[..n], as_uninit(&mut dst[..n]));
}

/// `dst[i] = op(src[i])` at the detected level, over the common length.
pub fn map<E: Elem>(op: Unary, src: &[E], dst: &mut [E]) {
    let n = src.len().min(dst.len());
    map_into(op, &src[..n], as_uninit(&mut dst[..n]));
}

/// `op` over `src` into a new vector.
pub fn map_vec<E: Elem>(op: Unary, src: &[E]) -> Vec<E> {
    let mut out = Vec::with_capacity(src.len());
    map_into(op, src, &mut out.spare_capacity_mut()[..src.len()]);
    // SAFETY: `map_into` wrote every one of the `src.len()` elements.
    unsafe { out.set_len(src.len()) };
    out
}

/// At the detected level, writing every element of `dst` (as long as `src`); slices above
/// `PARALLEL_GRAIN` are split over the pool in fixed chunks.
fn map_into<E: Elem>(op: Unary, src: &[E], dst: &mut [MaybeUninit<E>]) {
    let level = Level::detect();
    if src.len() >= crate::kernels::PARALLEL_GRAIN {
        crate::kernels::par_chunks_mut(dst, CHUNK, |c, d| {
            map_uninit(level, op, &src[c * CHUNK..][..d.len()], d)
        });
    } else {
        map_uninit(level, op, src, dst);
    }
}

/// An initialized slice as one the kernels write into.
fn as_uninit<E>(s: &mut [E]) -> &mut [MaybeUninit<E>] {
    // SAFETY: MaybeUninit<E> has E's layout, and the kernels only ever write initialized
    // values through the result, so `s` stays initialized.
    unsafe { &mut *(s as *mut [E] as *mut [MaybeUninit<E>]) }
}
