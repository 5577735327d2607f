//! Broadcasting arithmetic, comparisons and clamp on the CPU: one closure per kind and
//! type (a runtime match inside the element loop would stop the compiler vectorizing).

// The ordered kernels are instantiated for bool too, where clippy flags `v < l`.
#![allow(clippy::bool_comparison)]

use crate::dtype::{Category, DType, Element, Scalar};
use crate::error::{Error, Result};
use crate::kernels::elementwise::{as_dtype, map, map_float, zip, zip3};
use crate::kernels::kinds::{Binary, Bitwise, Compare, Extremum, Ternary};
use crate::kernels::traits::{Arith, Float, Real};
use crate::kernels::vmath::{pow_scalar_vec, pow_vec, PowElem, Unary};
use crate::kernels::{contiguous_data, data_from};
use crate::layout::Layout;
use crate::storage::Data;

fn bool_arith(op: Binary) -> Result<fn(bool, bool) -> bool> {
    match op {
        Binary::Add => Ok(|a, b| a | b),
        Binary::Mul => Ok(|a, b| a & b),
        _ => Err(op.bool_error()),
    }
}

/// Whether any element of `x` (in its own dtype) is below zero.
fn any_negative(x: &Data) -> bool {
    crate::with_dtype!(x.dtype(), T =>
        crate::kernels::gather_data::<T>(x).iter().any(|v| v.to_f64() < 0.0))
}

pub fn binary(a: &Data, b: &Data, op: Binary, dtype: DType) -> Result<Data> {
    if dtype == DType::Bool {
        return zip::<bool, bool>(a, b, bool_arith(op)?);
    }
    if op == Binary::Pow && dtype.category() == Category::Integral && any_negative(b) {
        return Err(Error::runtime(
            "Integers to negative integer powers are not allowed.",
        ));
    }
    if op == Binary::Pow {
        if let Some(out) = float_pow(a, b, dtype) {
            return Ok(out);
        }
    }
    crate::with_arith!(dtype, op.name(), T => match op {
        Binary::Add => zip::<T, T>(a, b, |x, y| x + y),
        Binary::Sub => zip::<T, T>(a, b, |x, y| x - y),
        Binary::Mul => zip::<T, T>(a, b, |x, y| x * y),
        Binary::Div => zip::<T, T>(a, b, |x, y| x / y),
        Binary::Pow => zip::<T, T>(a, b, Arith::powf),
    })
}

/// `dst = dst op alpha * other` in dst's memory (kernels::copy::update_with), with the
/// same arithmetic as `binary` (`a + alpha * b` rounds the product first, as the
/// out-of-place op does). False for bool, for Pow and for layouts it cannot update.
pub fn binary_in_place(dst: &Data, other: &Data, op: Binary, alpha: Scalar) -> bool {
    fn update(dst: &Data, other: &Data, op: Binary, alpha: Scalar) -> Result<bool> {
        use crate::kernels::copy::update_with;
        let scaled = !alpha.is_one();
        Ok(crate::with_arith!(dst.dtype(), op.name(), T => {
            let a = T::from_scalar(alpha);
            match (op, scaled) {
                (Binary::Add, false) => update_with::<T>(dst, other, |x, y| x + y),
                (Binary::Add, true) => update_with::<T>(dst, other, move |x, y| x + a * y),
                (Binary::Sub, false) => update_with::<T>(dst, other, |x, y| x - y),
                (Binary::Sub, true) => update_with::<T>(dst, other, move |x, y| x - a * y),
                (Binary::Mul, false) => update_with::<T>(dst, other, |x, y| x * y),
                (Binary::Div, false) => update_with::<T>(dst, other, |x, y| x / y),
                _ => false,
            }
        }))
    }
    // Integer division is not this op's (true division computes in float).
    let integral = dst.dtype().category() <= Category::Integral;
    !(integral && op == Binary::Div) && update(dst, other, op, alpha).unwrap_or(false)
}

pub fn binary_scalar(
    a: &Data,
    s: Scalar,
    op: Binary,
    reversed: bool,
    dtype: DType,
) -> Result<Data> {
    if dtype == DType::Bool {
        let f = bool_arith(op)?;
        let v = bool::from_scalar(s);
        return Ok(map::<bool, bool>(a, move |x| {
            if reversed {
                f(v, x)
            } else {
                f(x, v)
            }
        }));
    }
    if op == Binary::Pow && !reversed && !matches!(s, Scalar::Complex(_)) {
        match dtype {
            DType::F32 => return Ok(pow_scalar::<f32>(a, s.to_f64())),
            DType::F64 => return Ok(pow_scalar::<f64>(a, s.to_f64())),
            _ => {}
        }
    }
    crate::with_arith!(dtype, op.name(), T => {
        let v = T::from_scalar(s);
        let a = as_dtype::<T>(a);
        // One closure per case: a match on `op` inside the loop kept it scalar (x * 1.01
        // of 64K floats took 3x as long as x + y).
        Ok(match (op, reversed) {
            (Binary::Add, false) => map::<T, T>(&a, move |x| x + v),
            (Binary::Add, true) => map::<T, T>(&a, move |x| v + x),
            (Binary::Sub, false) => map::<T, T>(&a, move |x| x - v),
            (Binary::Sub, true) => map::<T, T>(&a, move |x| v - x),
            (Binary::Mul, false) => map::<T, T>(&a, move |x| x * v),
            (Binary::Mul, true) => map::<T, T>(&a, move |x| v * x),
            (Binary::Div, false) => map::<T, T>(&a, move |x| x / v),
            (Binary::Div, true) => map::<T, T>(&a, move |x| v / x),
            (Binary::Pow, false) => map::<T, T>(&a, move |x| Arith::powf(x, v)),
            (Binary::Pow, true) => map::<T, T>(&a, move |x| Arith::powf(v, x)),
        })
    })
}

/// `x ** e` for f32 and f64 as torch computes it: exponents 0 and 1 give ones and a copy,
/// 2, 3 and -2 multiply, 0.5, -0.5 and -1 are sqrt, rsqrt and reciprocal, and any other
/// goes through the vector pow (kernels::vmath).
fn pow_scalar<T: Float + PowElem>(a: &Data, e: f64) -> Data {
    let a = as_dtype::<T>(a);
    let one = T::one();
    if e == 0.0 {
        return map::<T, T>(&a, move |_| one);
    }
    if e == 1.0 {
        return map::<T, T>(&a, |x| x);
    }
    if e == 0.5 {
        return map_float::<T>(&a, Unary::Sqrt, Float::sqrt_);
    }
    if e == -0.5 {
        return map_float::<T>(&a, Unary::Rsqrt, move |x| one / x.sqrt_());
    }
    if e == -1.0 {
        return map_float::<T>(&a, Unary::Reciprocal, move |x| one / x);
    }
    if e == 2.0 {
        return map::<T, T>(&a, |x| x * x);
    }
    if e == 3.0 {
        return map::<T, T>(&a, |x| x * x * x);
    }
    if e == -2.0 {
        return map::<T, T>(&a, move |x| one / (x * x));
    }
    // The exponent rounded to the tensor's type, as torch's vector loop takes it (so
    // float32 `x ** (2 + 1e-9)` is `x ** 2.0`, not NaN for negative x).
    let e = T::from_f64(e).to_f64();
    // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
    let x = unsafe { contiguous_data::<T>(&a) };
    data_from(pow_scalar_vec(&x, e), &a.layout().shape)
}

/// Tensor ** tensor for f32 and f64 operands that already have one shape, both
/// contiguous: the vector pow. None for anything else (the broadcasting kernel).
fn float_pow(a: &Data, b: &Data, dtype: DType) -> Option<Data> {
    fn same_shape<T: Float + PowElem>(a: &Data, b: &Data) -> Option<Data> {
        let (la, lb) = (a.layout(), b.layout());
        let fits = |d: &Data, l: &Layout| d.dtype() == T::DTYPE && l.is_contiguous();
        if la.shape != lb.shape || !fits(a, la) || !fits(b, lb) {
            return None;
        }
        // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
        let (x, y) = unsafe { (contiguous_data::<T>(a), contiguous_data::<T>(b)) };
        Some(data_from(pow_vec(&x, &y), &la.shape))
    }
    match dtype {
        DType::F32 => same_shape::<f32>(a, b),
        DType::F64 => same_shape::<f64>(a, b),
        _ => None,
    }
}

pub fn compare(a: &Data, b: &Data, op: Compare, dtype: DType) -> Result<Data> {
    match dtype {
        DType::C64 => complex_eq::<num_complex::Complex32>(a, b, op),
        DType::C128 => complex_eq::<num_complex::Complex64>(a, b, op),
        // One closure per comparison: a match on `op` inside the loop would keep it scalar.
        d => crate::with_real!(d, op.name(), T => match op {
            Compare::Eq => zip::<T, bool>(a, b, |x, y| x == y),
            Compare::Ne => zip::<T, bool>(a, b, |x, y| x != y),
            Compare::Lt => zip::<T, bool>(a, b, |x, y| x < y),
            Compare::Le => zip::<T, bool>(a, b, |x, y| x <= y),
            Compare::Gt => zip::<T, bool>(a, b, |x, y| x > y),
            Compare::Ge => zip::<T, bool>(a, b, |x, y| x >= y),
        }),
    }
}

pub fn extremum(a: &Data, b: &Data, op: Extremum, dtype: DType) -> Result<Data> {
    if dtype.is_complex() {
        return Err(Error::type_error(format!(
            "{} not implemented for complex tensors.",
            op.name()
        )));
    }
    crate::with_real!(dtype, op.name(), T => match op {
        Extremum::Maximum => zip::<T, T>(a, b, |x, y| {
            if x.is_nan_r() || x > y { x } else { y }
        }),
        Extremum::Minimum => zip::<T, T>(a, b, |x, y| {
            if x.is_nan_r() || x < y { x } else { y }
        }),
        Extremum::Fmax => zip::<T, T>(a, b, |x, y| {
            if y.is_nan_r() || x > y { x } else { y }
        }),
        Extremum::Fmin => zip::<T, T>(a, b, |x, y| {
            if y.is_nan_r() || x < y { x } else { y }
        }),
    })
}

pub fn bitwise(a: &Data, b: &Data, op: Bitwise, dtype: DType) -> Result<Data> {
    macro_rules! int_ops {
        ($t:ty) => {
            match op {
                Bitwise::And => zip::<$t, $t>(a, b, |x, y| x & y),
                Bitwise::Or => zip::<$t, $t>(a, b, |x, y| x | y),
                Bitwise::Xor => zip::<$t, $t>(a, b, |x, y| x ^ y),
                Bitwise::LeftShift => zip::<$t, $t>(a, b, |x, y| {
                    u32::try_from(y)
                        .ok()
                        .and_then(|s| x.checked_shl(s))
                        .unwrap_or(0)
                }),
                // Past the width: the sign bit everywhere (0 for unsigned and positive).
                Bitwise::RightShift => zip::<$t, $t>(a, b, |x, y| {
                    let fill = (x >> (<$t>::BITS - 1)) >> 1;
                    u32::try_from(y)
                        .ok()
                        .and_then(|s| x.checked_shr(s))
                        .unwrap_or(fill)
                }),
            }
        };
    }
    match dtype {
        DType::Bool => match op {
            Bitwise::And => zip::<bool, bool>(a, b, |x, y| x & y),
            Bitwise::Or => zip::<bool, bool>(a, b, |x, y| x | y),
            Bitwise::Xor => zip::<bool, bool>(a, b, |x, y| x ^ y),
            _ => Err(crate::dtype::unsupported(op.kernel_name(), dtype)),
        },
        DType::U8 => int_ops!(u8),
        DType::I32 => int_ops!(i32),
        DType::I64 => int_ops!(i64),
        d => Err(crate::dtype::unsupported(op.kernel_name(), d)),
    }
}

/// Complex numbers only support == and !=.
fn complex_eq<T: Element>(a: &Data, b: &Data, op: Compare) -> Result<Data> {
    let want_equal = match op {
        Compare::Eq => true,
        Compare::Ne => false,
        _ => return Err(crate::dtype::unsupported(op.name(), T::DTYPE)),
    };
    zip::<T, bool>(a, b, move |x, y| (x == y) == want_equal)
}

pub fn clamp(x: &Data, lo: Option<Scalar>, hi: Option<Scalar>, dtype: DType) -> Result<Data> {
    // A NaN element fails both comparisons and passes through. Each combination of
    // bounds gets its own branch-free closure, so the loop vectorizes.
    Ok(crate::with_real!(dtype, "clamp", T => {
        let x = as_dtype::<T>(x);
        match (lo.map(T::from_scalar), hi.map(T::from_scalar)) {
            (Some(l), Some(h)) => map::<T, T>(&x, move |v| {
                let v = if v < l { l } else { v };
                if v > h { h } else { v }
            }),
            (Some(l), None) => map::<T, T>(&x, move |v| if v < l { l } else { v }),
            (None, Some(h)) => map::<T, T>(&x, move |v| if v > h { h } else { v }),
            (None, None) => map::<T, T>(&x, |v| v),
        }
    }))
}

// ---------------------------------------------------------------- lerp, addcmul, addcdiv

/// The fused pointwise ops (kinds::Ternary) in one pass, with torch's CPU formulas:
/// lerp is `|w| < 0.5 ? fma(w, end - start, start) : fma(w - 1, end - start, end)`,
/// addcmul `fma(value * t1, t2, self)`, addcdiv `self + value * t1 / t2` (what torch's
/// vectorized and scalar loops both compute, FMA contraction included). Half types
/// compute in float32 with a float32 scalar and round once, as torch's opmath does.
pub fn ternary(inputs: &[&Data], op: Ternary, dtype: DType) -> Result<Data> {
    let unsupported = || Err(crate::dtype::unsupported(op.kernel_name(), dtype));
    let two = matches!(op, Ternary::LerpScalar(_));
    if inputs.len() != if two { 2 } else { 3 } {
        return Err(Error::runtime(format!(
            "{}: expected {} operands, got {}",
            op.kernel_name(),
            if two { 2 } else { 3 },
            inputs.len()
        )));
    }
    match dtype {
        DType::F32 => fused_float::<f32>(inputs, op),
        DType::F64 => fused_float::<f64>(inputs, op),
        DType::F16 | DType::BF16 => {
            let wide: Vec<Data> = inputs
                .iter()
                .map(|d| crate::kernels::cast_data(d, DType::F32))
                .collect();
            let wide: Vec<&Data> = wide.iter().collect();
            Ok(crate::kernels::cast_data(
                &fused_float::<f32>(&wide, op)?,
                dtype,
            ))
        }
        DType::C64 => fused_complex64(inputs, op),
        DType::C128 => fused_complex128(inputs, op),
        DType::U8 => fused_int::<u8>(inputs, op).unwrap_or_else(unsupported),
        DType::I32 => fused_int::<i32>(inputs, op).unwrap_or_else(unsupported),
        DType::I64 => fused_int::<i64>(inputs, op).unwrap_or_else(unsupported),
        DType::Bool => unsupported(),
    }
}

/// f32 and f64 with an explicit fused multiply-add (Rust never contracts on its own).
trait FusedFloat:
    Element
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    fn fma(self, b: Self, c: Self) -> Self;
    fn abs_(self) -> Self;
    fn from_f(v: f64) -> Self;
}

macro_rules! fused_float {
    ($($t:ty),*) => {$(
        impl FusedFloat for $t {
            #[inline(always)]
            fn fma(self, b: Self, c: Self) -> Self {
                self.mul_add(b, c)
            }
            #[inline(always)]
            fn abs_(self) -> Self {
                self.abs()
            }
            #[inline(always)]
            fn from_f(v: f64) -> Self {
                v as $t
            }
        }
    )*};
}
fused_float!(f32, f64);

/// torch's lerp of one element (aten/src/ATen/native/Lerp.h, contracted as its build is).
#[inline(always)]
fn lerp_float<T: FusedFloat>(start: T, end: T, weight: T) -> T {
    let step = end - start;
    if weight.abs_() < T::from_f(0.5) {
        weight.fma(step, start)
    } else {
        (weight - T::from_f(1.0)).fma(step, end)
    }
}

fn fused_float<T: FusedFloat>(inputs: &[&Data], op: Ternary) -> Result<Data> {
    match op {
        // The weight's test taken once, outside the loop (inside, it kept the loop scalar).
        Ternary::LerpScalar(w) => {
            let w = T::from_scalar(w);
            if w.abs_() < T::from_f(0.5) {
                zip::<T, T>(inputs[0], inputs[1], move |s, e| w.fma(e - s, s))
            } else {
                let w = w - T::from_f(1.0);
                zip::<T, T>(inputs[0], inputs[1], move |s, e| w.fma(e - s, e))
            }
        }
        Ternary::Lerp => zip3::<T, T>(inputs[0], inputs[1], inputs[2], lerp_float),
        Ternary::Addcmul(v) => {
            let v = T::from_scalar(v);
            zip3::<T, T>(inputs[0], inputs[1], inputs[2], move |s, t1, t2| {
                (v * t1).fma(t2, s)
            })
        }
        Ternary::Addcdiv(v) => {
            let v = T::from_scalar(v);
            zip3::<T, T>(inputs[0], inputs[1], inputs[2], move |s, t1, t2| {
                s + v * t1 / t2
            })
        }
    }
}

/// Complex operands: the same formulas without fusing (torch's weight test is |w| < 0.5).
macro_rules! fused_complex {
    ($name:ident, $c:ty) => {
        fn $name(inputs: &[&Data], op: Ternary) -> Result<Data> {
            let one = <$c>::new(1.0, 0.0);
            let lerp = move |s: $c, e: $c, w: $c| {
                if w.norm() < 0.5 {
                    s + w * (e - s)
                } else {
                    e - (e - s) * (one - w)
                }
            };
            let [a, b] = [inputs[0], inputs[1]];
            match op {
                Ternary::LerpScalar(w) => {
                    let w = <$c>::from_scalar(w);
                    zip::<$c, $c>(a, b, move |s, e| lerp(s, e, w))
                }
                Ternary::Lerp => zip3::<$c, $c>(a, b, inputs[2], lerp),
                Ternary::Addcmul(v) => {
                    let v = <$c>::from_scalar(v);
                    zip3::<$c, $c>(a, b, inputs[2], move |s, t1, t2| s + v * t1 * t2)
                }
                Ternary::Addcdiv(v) => {
                    let v = <$c>::from_scalar(v);
                    zip3::<$c, $c>(a, b, inputs[2], move |s, t1, t2| s + v * t1 / t2)
                }
            }
        }
    };
}
fused_complex!(fused_complex64, num_complex::Complex32);
fused_complex!(fused_complex128, num_complex::Complex64);

/// Integers: addcmul only, wrapping as torch's (lerp and addcdiv have no integer kernel).
fn fused_int<T: WrappingInt>(inputs: &[&Data], op: Ternary) -> Option<Result<Data>> {
    match op {
        Ternary::Addcmul(v) => {
            let v = T::from_scalar(v);
            Some(zip3::<T, T>(
                inputs[0],
                inputs[1],
                inputs[2],
                move |s, t1, t2| s.add_w(v.mul_w(t1).mul_w(t2)),
            ))
        }
        _ => None,
    }
}

trait WrappingInt: Element {
    fn add_w(self, b: Self) -> Self;
    fn mul_w(self, b: Self) -> Self;
}

macro_rules! wrapping_int {
    ($($t:ty),*) => {$(
        impl WrappingInt for $t {
            #[inline(always)]
            fn add_w(self, b: Self) -> Self {
                self.wrapping_add(b)
            }
            #[inline(always)]
            fn mul_w(self, b: Self) -> Self {
                self.wrapping_mul(b)
            }
        }
    )*};
}
wrapping_int!(u8, i32, i64);
