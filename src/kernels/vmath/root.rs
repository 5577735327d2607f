//! sqrt (correctly rounded by the hardware), rsqrt and reciprocal (one division each, as
//! torch computes them).

use super::simd::Fx;

#[inline(always)]
pub(super) fn sqrt<F: Fx>(f: F, x: F::V) -> F::V {
    f.sqrt(x)
}

#[inline(always)]
pub(super) fn rsqrt<F: Fx>(f: F, x: F::V) -> F::V {
    f.div(f.splat(1.0), f.sqrt(x))
}

#[inline(always)]
pub(super) fn recip<F: Fx>(f: F, x: F::V) -> F::V {
    f.div(f.splat(1.0), x)
}
