//! The scalar level: libm one element at a time (std's functions, the `libm` crate for
//! erf). It runs where no SIMD level is available, and where a kernel has no vector form
//! (f64 pow).

use super::simd::Real;

/// libm's functions on one element type.
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
    fn powf(self, e: Self) -> Self;
    fn one() -> Self;
    fn div(self, d: Self) -> Self;
    fn add(self, b: Self) -> Self;
    fn neg_abs(self) -> Self;
    fn is_negative(self) -> bool;
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
            fn powf(self, e: Self) -> Self {
                $t::powf(self, e)
            }
            fn one() -> Self {
                1.0
            }
            fn div(self, d: Self) -> Self {
                self / d
            }
            fn add(self, b: Self) -> Self {
                self + b
            }
            fn neg_abs(self) -> Self {
                -self.abs()
            }
            fn is_negative(self) -> bool {
                self < 0.0
            }
        }
    };
}
impl_libm!(f32, libm::erff);
impl_libm!(f64, libm::erf);

/// As the vector sigmoid: from e = exp(-|x|), 1/(1+e) or e/(1+e).
pub fn sigmoid<E: Libm>(x: E) -> E {
    let e = x.neg_abs().exp();
    let num = if x.is_negative() { e } else { E::one() };
    num.div(E::one().add(e))
}

pub fn rsqrt<E: Libm>(x: E) -> E {
    E::one().div(x.sqrt())
}

pub fn recip<E: Libm>(x: E) -> E {
    E::one().div(x)
}
