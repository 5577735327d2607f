//! The scalar level: libm one element at a time (std's functions, the `libm` crate for
//! erf), where no SIMD level is available.

use super::simd::Real;

/// libm's functions on one element type, and the vector kernels' formulas for those
/// libm lacks.
pub trait Libm: Real {
    fn exp(self) -> Self;
    fn exp_m1(self) -> Self;
    fn ln(self) -> Self;
    fn ln_1p(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn tanh(self) -> Self;
    fn sqrt(self) -> Self;
    fn erf(self) -> Self;
    /// As the vector sigmoid: from e = exp(-|x|), 1/(1+e) or e/(1+e).
    fn sigmoid(self) -> Self;
    fn rsqrt(self) -> Self;
    fn recip(self) -> Self;
    /// atan2(self, x): the angle of the point (x, self).
    fn atan2(self, x: Self) -> Self;
}

macro_rules! impl_libm {
    ($t:ident, $erf:path) => {
        impl Libm for $t {
            fn exp(self) -> Self {
                $t::exp(self)
            }
            fn exp_m1(self) -> Self {
                $t::exp_m1(self)
            }
            fn ln(self) -> Self {
                $t::ln(self)
            }
            fn ln_1p(self) -> Self {
                $t::ln_1p(self)
            }
            fn sin(self) -> Self {
                $t::sin(self)
            }
            fn cos(self) -> Self {
                $t::cos(self)
            }
            fn tan(self) -> Self {
                $t::tan(self)
            }
            fn tanh(self) -> Self {
                $t::tanh(self)
            }
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            fn erf(self) -> Self {
                $erf(self)
            }
            fn sigmoid(self) -> Self {
                let e = (-self.abs()).exp();
                (if self < 0.0 { e } else { 1.0 }) / (1.0 + e)
            }
            fn rsqrt(self) -> Self {
                1.0 / self.sqrt()
            }
            fn recip(self) -> Self {
                1.0 / self
            }
            fn atan2(self, x: Self) -> Self {
                $t::atan2(self, x)
            }
        }
    };
}
impl_libm!(f32, libm::erff);
impl_libm!(f64, libm::erf);
