//! Broadcasting arithmetic, comparisons and clamp on the CPU: one closure per kind and
//! type (a runtime match inside the element loop would stop the compiler vectorizing).

// The ordered kernels are instantiated for bool too, where clippy flags `v < l`.
#![allow(clippy::bool_comparison)]

use crate::dtype::{Category, DType, Element, Scalar};
use crate::error::{Error, Result};
use crate::kernels::elementwise::{as_dtype, map, zip};
use crate::kernels::kinds::{Binary, Bitwise, Compare, Extremum};
use crate::kernels::traits::{Arith, Real};
use crate::storage::Data;

#[inline(always)]
fn eval<T: Arith>(op: Binary, a: T, b: T) -> T {
    match op {
        Binary::Add => a + b,
        Binary::Sub => a - b,
        Binary::Mul => a * b,
        Binary::Div => a / b,
        Binary::Pow => a.powf(b),
    }
}

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
    crate::with_arith!(dtype, op.name(), T => match op {
        Binary::Add => zip::<T, T>(a, b, |x, y| x + y),
        Binary::Sub => zip::<T, T>(a, b, |x, y| x - y),
        Binary::Mul => zip::<T, T>(a, b, |x, y| x * y),
        Binary::Div => zip::<T, T>(a, b, |x, y| x / y),
        Binary::Pow => zip::<T, T>(a, b, Arith::powf),
    })
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
    crate::with_arith!(dtype, op.name(), T => {
        let v = T::from_scalar(s);
        let a = as_dtype::<T>(a);
        Ok(match (op, reversed) {
            (Binary::Sub, true) => map::<T, T>(&a, move |x| v - x),
            (Binary::Pow, false) => map::<T, T>(&a, move |x| Arith::powf(x, v)),
            (Binary::Pow, true) => map::<T, T>(&a, move |x| Arith::powf(v, x)),
            _ => map::<T, T>(&a, move |x| if reversed { eval(op, v, x) } else { eval(op, x, v) }),
        })
    })
}

pub fn compare(a: &Data, b: &Data, op: Compare, dtype: DType) -> Result<Data> {
    match dtype {
        DType::C64 => complex_eq::<num_complex::Complex32>(a, b, op),
        DType::C128 => complex_eq::<num_complex::Complex64>(a, b, op),
        d => crate::with_real!(d, op.name(), T => zip::<T, bool>(a, b, move |x, y| op.eval(x, y))),
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
    Ok(crate::with_real!(dtype, "clamp", T => {
        let lo = lo.map(T::from_scalar);
        let hi = hi.map(T::from_scalar);
        map::<T, T>(&as_dtype::<T>(x), move |v| {
            if v.is_nan_r() { return v; }
            let v = match lo { Some(l) if v < l => l, _ => v };
            match hi { Some(h) if v > h => h, _ => v }
        })
    }))
}
