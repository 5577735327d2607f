//! Elementwise functions of one tensor on the CPU: one closure per kind and type (a
//! runtime match inside the element loop would stop the compiler from vectorizing).

// The ordered kernels are instantiated for bool too, where clippy flags `v > x`.
#![allow(clippy::bool_comparison)]

use std::borrow::Cow;

use half::{bf16, f16};
use num_complex::{Complex32, Complex64};

use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::kernels::cast_data;
use crate::kernels::elementwise::{map, map_float};
use crate::kernels::kinds::{Func, Math, Rounding, Special, Unary};
use crate::kernels::traits::{Arith, Float, Real};
use crate::storage::Data;

pub fn unary(x: &Data, op: Unary, dtype: DType) -> Result<Data> {
    let x = if x.dtype() == dtype {
        Cow::Borrowed(x)
    } else {
        Cow::Owned(cast_data(x, dtype))
    };
    let x = &*x;
    Ok(match op {
        Unary::Math(m) => crate::with_float!(dtype, op.name(), T => math::<T>(x, m)?),
        Unary::Func(f) => crate::with_float!(dtype, op.name(), T => func::<T>(x, f)),
        Unary::Neg => crate::with_arith!(dtype, "neg", T => map::<T, T>(x, Arith::neg)),
        Unary::Relu => crate::with_real!(dtype, "relu", T => map::<T, T>(x, |v| {
            if v.is_nan_r() || v > T::zero() { v } else { T::zero() }
        })),
        Unary::Abs => match dtype {
            DType::C64 => map::<Complex32, f32>(x, |v| v.norm()),
            DType::C128 => map::<Complex64, f64>(x, |v| v.norm()),
            DType::Bool => return Err(crate::dtype::unsupported("abs_cpu", DType::Bool)),
            // Floats: the sign bit cleared, as torch (abs(-0.0) = +0.0, abs(-nan) = nan);
            // a compare-and-negate kept -0.0 and did not vectorize.
            DType::F32 => map::<f32, f32>(x, f32::abs),
            DType::F64 => map::<f64, f64>(x, f64::abs),
            DType::F16 => map::<f16, f16>(x, |v| f16::from_bits(v.to_bits() & 0x7fff)),
            DType::BF16 => map::<bf16, bf16>(x, |v| bf16::from_bits(v.to_bits() & 0x7fff)),
            // Integers wrap (abs(MIN) = MIN), as torch's.
            DType::I32 => map::<i32, i32>(x, i32::wrapping_abs),
            DType::I64 => map::<i64, i64>(x, i64::wrapping_abs),
            DType::U8 => map::<u8, u8>(x, |v| v),
        },
        Unary::Sgn => match dtype {
            DType::C64 => map::<Complex32, Complex32>(x, |v| {
                let n = v.norm();
                if n == 0.0 {
                    v
                } else {
                    v / n
                }
            }),
            DType::C128 => map::<Complex64, Complex64>(x, |v| {
                let n = v.norm();
                if n == 0.0 {
                    v
                } else {
                    v / n
                }
            }),
            d => crate::with_real!(d, "sign", T => map::<T, T>(x, |v| {
                let f = v.to_f64();
                T::from_f64(if f > 0.0 { 1.0 } else if f < 0.0 { -1.0 } else { f })
            })),
        },
        Unary::Conj => crate::with_float!(dtype, "conj", T => map::<T, T>(x, |v| v.conj_())),
        Unary::Round(r) => round(x, r, dtype)?,
        Unary::Special(f) => special(x, f, dtype)?,
        Unary::Signbit => match dtype {
            DType::C64 | DType::C128 => {
                return Err(crate::error::Error::not_implemented(
                    "signbit is not implemented for complex tensors.",
                ))
            }
            // Integers and bool through f64 keep their sign; floats keep -0.0 and -NaN.
            d => crate::with_dtype!(d, T => map::<T, bool>(x, |v| v.to_f64().is_sign_negative())),
        },
        Unary::Real => match dtype {
            DType::C64 => map::<Complex32, f32>(x, |v| v.re),
            DType::C128 => map::<Complex64, f64>(x, |v| v.re),
            d => cast_data(x, d),
        },
    })
}

/// Rounding of real floats. Each value is rounded in float64, which is exact for every
/// float type (the result is representable in the input's type); `Decimals` scales in
/// the input's own precision first, as torch does.
fn round(x: &Data, r: Rounding, dtype: DType) -> Result<Data> {
    if dtype.is_complex() || !dtype.is_floating_point() {
        return Err(crate::dtype::unsupported(r.name(), dtype));
    }
    Ok(crate::with_float!(dtype, r.name(), T => match r {
        Rounding::Floor => map::<T, T>(x, |v| T::from_f64(v.to_f64().floor())),
        Rounding::Ceil => map::<T, T>(x, |v| T::from_f64(v.to_f64().ceil())),
        Rounding::Trunc => map::<T, T>(x, |v| T::from_f64(v.to_f64().trunc())),
        Rounding::Nearest => map::<T, T>(x, |v| T::from_f64(v.to_f64().round_ties_even())),
        Rounding::Frac => map::<T, T>(x, |v| v - T::from_f64(v.to_f64().trunc())),
        Rounding::Decimals(d) => {
            // 10^|d| in the input's precision; negative decimals divide first.
            let scale = T::from_f64(10f64.powi(d.unsigned_abs().min(400) as i32));
            let nearest = |v: T| T::from_f64(v.to_f64().round_ties_even());
            if d >= 0 {
                map::<T, T>(x, |v| nearest(v * scale) / scale)
            } else {
                map::<T, T>(x, |v| nearest(v / scale) * scale)
            }
        }
    }))
}

/// The special functions: real floats in float64 (kernels::special), rounded once;
/// complex only for sinc (torch has no complex kernels for the others).
fn special(x: &Data, f: Special, dtype: DType) -> Result<Data> {
    use crate::kernels::special as sp;
    fn each<T: Element>(x: &Data, g: fn(f64) -> f64) -> Data {
        map::<T, T>(x, move |v| T::from_f64(g(v.to_f64())))
    }
    match (f, dtype) {
        (Special::Sinc, DType::C64) => return Ok(map::<Complex32, Complex32>(x, complex_sinc32)),
        (Special::Sinc, DType::C128) => return Ok(map::<Complex64, Complex64>(x, complex_sinc64)),
        (_, d) if d.is_complex() || !d.is_floating_point() => {
            return Err(crate::dtype::unsupported(f.kernel_name(), d))
        }
        _ => {}
    }
    Ok(crate::with_float!(dtype, f.kernel_name(), T => match f {
        Special::Erfc => each::<T>(x, sp::erfc),
        Special::Erfinv => each::<T>(x, sp::erfinv),
        Special::Lgamma => each::<T>(x, sp::lgamma),
        Special::Sinc => each::<T>(x, sp::sinc),
        Special::Polygamma(0) => each::<T>(x, sp::digamma),
        Special::Polygamma(n) => map::<T, T>(x, move |v| T::from_f64(sp::polygamma(n, v.to_f64()))),
    }))
}

/// sin(pi z) / (pi z), 1 at 0 (complex64 and complex128).
macro_rules! complex_sinc {
    ($name:ident, $c:ty, $f:ty) => {
        fn $name(z: $c) -> $c {
            if z.re == 0.0 && z.im == 0.0 {
                return <$c>::new(1.0, 0.0);
            }
            let p = z.scale(std::f64::consts::PI as $f);
            p.sin() / p
        }
    };
}
complex_sinc!(complex_sinc32, Complex32, f32);
complex_sinc!(complex_sinc64, Complex64, f64);

/// One closure per function, so the match on the kind stays outside the element loop.
fn func<T: Float>(x: &Data, f: Func) -> Data {
    macro_rules! each {
        ($($k:ident),*) => {
            match f { $(Func::$k => map::<T, T>(x, |v| v.func_(Func::$k)),)* }
        };
    }
    each!(Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Exp2, Log2, Log10, Deg2Rad, Rad2Deg)
}

/// A vector-kernel function: f32 and f64 run kernels::vmath; the other float and complex
/// types compute element by element where they have the function.
fn math<T: Float>(x: &Data, m: Math) -> Result<Data> {
    Ok(match m {
        Math::Exp => map_float::<T>(x, m, |v| v.exp_()),
        Math::Log => map_float::<T>(x, m, |v| v.ln_()),
        Math::Sin => map_float::<T>(x, m, |v| v.sin_()),
        Math::Cos => map_float::<T>(x, m, |v| v.cos_()),
        Math::Tanh => map_float::<T>(x, m, |v| v.tanh_()),
        Math::Sigmoid => map_float::<T>(x, m, |v| v.sigmoid_()),
        Math::Sqrt => map_float::<T>(x, m, |v| v.sqrt_()),
        Math::Reciprocal => map_float::<T>(x, m, |v| v.recip_()),
        // Half types compute the rest in float32 by the vector kernels (as torch on CPU).
        _ if matches!(T::DTYPE, DType::F16 | DType::BF16) => {
            cast_data(&math::<f32>(&cast_data(x, DType::F32), m)?, T::DTYPE)
        }
        // Complex numbers have these too.
        Math::Tan => map_float::<T>(x, m, |v| v.tan_()),
        Math::Rsqrt => map_float::<T>(x, m, |v| v.sqrt_().recip_()),
        // Only the vector kernels have the others.
        _ if matches!(T::DTYPE, DType::F32 | DType::F64) => map_float::<T>(x, m, |v| v),
        // expm1 and log1p of complex numbers (issue 11).
        Math::Expm1 | Math::Log1p => super::complex_math::math(x, m, T::DTYPE)?,
        _ => return Err(crate::dtype::unsupported(Unary::Math(m).name(), T::DTYPE)),
    })
}
