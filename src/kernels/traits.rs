//! Numeric capabilities of element types, and macros that dispatch a dtype to the
//! types that have a capability (raising torch's "not implemented for 'Bool'" error
//! for the rest).

use crate::kernels::kinds::Func;
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};

use crate::dtype::Element;

/// `+ - * /` on a type. Division on integers is only used after promotion to float,
/// except by integer-only kernels that check for zero themselves.
pub trait Arith:
    Element
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    fn neg(self) -> Self;
    fn powf(self, e: Self) -> Self;
}

macro_rules! arith_int {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn neg(self) -> Self { (0 as $t).wrapping_sub(self) }
            fn powf(self, e: Self) -> Self {
                if (e as i64) < 0 { return 0; }
                (self as i64).wrapping_pow(e as u32) as $t
            }
        }
    )*};
}
arith_int!(u8, i32, i64);

macro_rules! arith_float {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn neg(self) -> Self { -self }
            fn powf(self, e: Self) -> Self { <$t as Float>::powf_(self, e) }
        }
    )*};
}
arith_float!(f16, bf16, f32, f64, Complex32, Complex64);

/// Transcendental functions (floating point and complex types).
pub trait Float: Arith {
    fn exp_(self) -> Self;
    fn ln_(self) -> Self;
    fn sin_(self) -> Self;
    fn cos_(self) -> Self;
    fn tanh_(self) -> Self;
    fn sqrt_(self) -> Self;
    fn powf_(self, e: Self) -> Self;
    fn sigmoid_(self) -> Self {
        Self::one() / (Self::one() + self.neg().exp_())
    }
    fn tan_(self) -> Self {
        self.sin_() / self.cos_()
    }
    /// The functions of `kinds::Func`.
    fn func_(self, f: crate::kernels::kinds::Func) -> Self;
    fn recip_(self) -> Self {
        Self::one() / self
    }
    fn conj_(self) -> Self {
        self
    }
    fn is_nan_(self) -> bool;
    /// `op` over `src` by the vector kernels (kernels::vmath), for the types that have them.
    fn vmath(_op: crate::kernels::vmath::Unary, _src: &[Self]) -> Option<Vec<Self>> {
        None
    }
}

/// `kinds::Func` by the type's own methods (real and complex types share all but the
/// base-2 and base-10 ones).
macro_rules! func_match {
    ($v:ident, $f:ident, $exp2:expr, $log2:expr, $log10:expr, $rad:expr, $deg:expr) => {
        match $f {
            Func::Asin => $v.asin(),
            Func::Acos => $v.acos(),
            Func::Atan => $v.atan(),
            Func::Sinh => $v.sinh(),
            Func::Cosh => $v.cosh(),
            Func::Asinh => $v.asinh(),
            Func::Acosh => $v.acosh(),
            Func::Atanh => $v.atanh(),
            Func::Exp2 => $exp2,
            Func::Log2 => $log2,
            Func::Log10 => $log10,
            Func::Deg2Rad => $rad,
            Func::Rad2Deg => $deg,
        }
    };
}

macro_rules! float_native {
    ($($t:ty),*) => {$(
        impl Float for $t {
            fn exp_(self) -> Self { self.exp() }
            fn ln_(self) -> Self { self.ln() }
            fn sin_(self) -> Self { self.sin() }
            fn cos_(self) -> Self { self.cos() }
            fn tanh_(self) -> Self { self.tanh() }
            fn tan_(self) -> Self { self.tan() }
            #[inline(always)]
            fn func_(self, f: Func) -> Self {
                func_match!(
                    self,
                    f,
                    self.exp2(),
                    self.log2(),
                    self.log10(),
                    self.to_radians(),
                    self.to_degrees()
                )
            }
            fn sqrt_(self) -> Self { self.sqrt() }
            fn powf_(self, e: Self) -> Self { self.powf(e) }
            fn sigmoid_(self) -> Self { 1.0 / (1.0 + (-self).exp()) }
            fn is_nan_(self) -> bool { self.is_nan() }
            fn vmath(op: crate::kernels::vmath::Unary, src: &[Self]) -> Option<Vec<Self>> {
                Some(crate::kernels::vmath::map_vec(op, src))
            }
        }
    )*};
}
float_native!(f32, f64);

macro_rules! float_half {
    ($($t:ty),*) => {$(
        impl Float for $t {
            fn exp_(self) -> Self { <$t>::from_f32(self.to_f32().exp()) }
            fn ln_(self) -> Self { <$t>::from_f32(self.to_f32().ln()) }
            fn sin_(self) -> Self { <$t>::from_f32(self.to_f32().sin()) }
            fn cos_(self) -> Self { <$t>::from_f32(self.to_f32().cos()) }
            fn tanh_(self) -> Self { <$t>::from_f32(self.to_f32().tanh()) }
            fn sqrt_(self) -> Self { <$t>::from_f32(self.to_f32().sqrt()) }
            fn powf_(self, e: Self) -> Self { <$t>::from_f32(self.to_f32().powf(e.to_f32())) }
            fn sigmoid_(self) -> Self { <$t>::from_f32(1.0 / (1.0 + (-self.to_f32()).exp())) }
            fn func_(self, f: Func) -> Self { <$t>::from_f32(self.to_f32().func_(f)) }
            fn is_nan_(self) -> bool { self.is_nan() }
        }
    )*};
}
float_half!(f16, bf16);

macro_rules! float_complex {
    ($($t:ty),*) => {$(
        impl Float for $t {
            fn exp_(self) -> Self { self.exp() }
            fn ln_(self) -> Self { self.ln() }
            fn sin_(self) -> Self { self.sin() }
            fn cos_(self) -> Self { self.cos() }
            fn tanh_(self) -> Self { self.tanh() }
            fn tan_(self) -> Self { self.tan() }
            #[inline(always)]
            fn func_(self, f: Func) -> Self {
                // num_complex has no base-2 / base-10 functions: through e.
                func_match!(
                    self,
                    f,
                    self.scale(std::f64::consts::LN_2 as _).exp(),
                    self.ln().unscale(std::f64::consts::LN_2 as _),
                    self.ln().unscale(std::f64::consts::LN_10 as _),
                    self.scale((std::f64::consts::PI / 180.0) as _),
                    self.scale((180.0 / std::f64::consts::PI) as _)
                )
            }
            fn sqrt_(self) -> Self { self.sqrt() }
            fn powf_(self, e: Self) -> Self {
                if self.re == 0.0 && self.im == 0.0 {
                    return if e.re == 0.0 && e.im == 0.0 { Self::one() } else { Self::zero() };
                }
                self.powc(e)
            }
            fn conj_(self) -> Self { self.conj() }
            fn is_nan_(self) -> bool { self.re.is_nan() || self.im.is_nan() }
        }
    )*};
}
float_complex!(Complex32, Complex64);

/// Totally ordered enough for max/min/clamp/comparisons (NaN handled by kernels).
pub trait Real: Element + PartialOrd {
    fn is_nan_r(self) -> bool;
}
macro_rules! real_impl {
    ($($t:ty => $nan:expr),*) => {$( impl Real for $t { fn is_nan_r(self) -> bool { $nan(self) } } )*};
}
real_impl!(bool => |_| false, u8 => |_| false, i32 => |_| false, i64 => |_| false,
    f16 => |x: f16| x.is_nan(), bf16 => |x: bf16| x.is_nan(), f32 => |x: f32| x.is_nan(),
    f64 => |x: f64| x.is_nan());

/// Dispatch over types with `Arith` (all but bool).
#[macro_export]
macro_rules! with_arith {
    ($dtype:expr, $op:expr, $T:ident => $body:expr) => {{
        use $crate::dtype::DType as __D;
        match $dtype {
            __D::U8 => {
                type $T = u8;
                $body
            }
            __D::I32 => {
                type $T = i32;
                $body
            }
            __D::I64 => {
                type $T = i64;
                $body
            }
            __D::F16 => {
                type $T = half::f16;
                $body
            }
            __D::BF16 => {
                type $T = half::bf16;
                $body
            }
            __D::F32 => {
                type $T = f32;
                $body
            }
            __D::F64 => {
                type $T = f64;
                $body
            }
            __D::C64 => {
                type $T = num_complex::Complex32;
                $body
            }
            __D::C128 => {
                type $T = num_complex::Complex64;
                $body
            }
            d => return Err($crate::dtype::unsupported($op, d)),
        }
    }};
}

/// Dispatch over floating point and complex types.
#[macro_export]
macro_rules! with_float {
    ($dtype:expr, $op:expr, $T:ident => $body:expr) => {{
        use $crate::dtype::DType as __D;
        match $dtype {
            __D::F16 => {
                type $T = half::f16;
                $body
            }
            __D::BF16 => {
                type $T = half::bf16;
                $body
            }
            __D::F32 => {
                type $T = f32;
                $body
            }
            __D::F64 => {
                type $T = f64;
                $body
            }
            __D::C64 => {
                type $T = num_complex::Complex32;
                $body
            }
            __D::C128 => {
                type $T = num_complex::Complex64;
                $body
            }
            d => return Err($crate::dtype::unsupported($op, d)),
        }
    }};
}

/// Dispatch over real (ordered) types, including bool.
#[macro_export]
macro_rules! with_real {
    ($dtype:expr, $op:expr, $T:ident => $body:expr) => {{
        use $crate::dtype::DType as __D;
        match $dtype {
            __D::Bool => {
                type $T = bool;
                $body
            }
            __D::U8 => {
                type $T = u8;
                $body
            }
            __D::I32 => {
                type $T = i32;
                $body
            }
            __D::I64 => {
                type $T = i64;
                $body
            }
            __D::F16 => {
                type $T = half::f16;
                $body
            }
            __D::BF16 => {
                type $T = half::bf16;
                $body
            }
            __D::F32 => {
                type $T = f32;
                $body
            }
            __D::F64 => {
                type $T = f64;
                $body
            }
            d => return Err($crate::dtype::unsupported($op, d)),
        }
    }};
}
