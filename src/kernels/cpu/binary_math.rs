//! Elementwise math of two tensors with broadcasting on the CPU (`kinds::BinaryMath`):
//! float32 / float64 natively with torch's formulas (same rounding), half types in
//! float32 (nextafter in their own bits), and the division kinds on integers.

use half::{bf16, f16};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::cast_data;
use crate::kernels::elementwise::{zip, zip_slices};
use crate::kernels::kinds::BinaryMath;
use crate::storage::Data;

pub fn binary_math(a: &Data, b: &Data, op: BinaryMath, dtype: DType) -> Result<Data> {
    match dtype {
        DType::F32 => float::<f32>(a, b, op),
        DType::F64 => float::<f64>(a, b, op),
        DType::F16 | DType::BF16 if op == BinaryMath::Nextafter => match dtype {
            DType::F16 => zip::<f16, f16>(a, b, |x, y| {
                f16::from_bits(next_bits(
                    x.to_bits(),
                    y.to_bits(),
                    x.is_nan() || y.is_nan(),
                    x == y,
                    x < y,
                ))
            }),
            _ => zip::<bf16, bf16>(a, b, |x, y| {
                bf16::from_bits(next_bits(
                    x.to_bits(),
                    y.to_bits(),
                    x.is_nan() || y.is_nan(),
                    x == y,
                    x < y,
                ))
            }),
        },
        // Half types compute in float32 and store narrow (as torch on CPU).
        DType::F16 | DType::BF16 => {
            let wide = float::<f32>(&cast_data(a, DType::F32), &cast_data(b, DType::F32), op)?;
            Ok(cast_data(&wide, dtype))
        }
        // Complex numbers have logaddexp (not logaddexp2, as in torch).
        DType::C64 | DType::C128 if op == BinaryMath::Logaddexp => {
            super::complex_math::logaddexp(a, b, dtype)
        }
        DType::U8 if op.integral() => int::<u8>(a, b, op),
        DType::I32 if op.integral() => int::<i32>(a, b, op),
        DType::I64 if op.integral() => int::<i64>(a, b, op),
        d => Err(crate::dtype::unsupported(op.kernel_name(), d)),
    }
}

/// The neighbour of `x` towards `y` in a sign-magnitude float format (16 bits).
fn next_bits(x: u16, y: u16, nan: bool, equal: bool, up: bool) -> u16 {
    const NAN: u16 = 0x7e00;
    if nan {
        return if x & 0x7fff > 0x7c00 { x } else { y | NAN };
    }
    if equal {
        return y;
    }
    if x & 0x7fff == 0 {
        // From ±0: the smallest subnormal with y's sign.
        return (y & 0x8000) | 1;
    }
    let positive = x & 0x8000 == 0;
    if up == positive {
        x + 1
    } else {
        x - 1
    }
}

/// The float functions, with torch's formulas.
trait MathFloat: crate::dtype::Element + PartialOrd + std::ops::Neg<Output = Self> {
    fn atan2(self, b: Self) -> Self;
    fn hypot(self, b: Self) -> Self;
    fn copysign(self, b: Self) -> Self;
    fn nextafter(self, b: Self) -> Self;
    fn xlogy(self, b: Self) -> Self;
    fn xlog1py(self, b: Self) -> Self;
    fn logaddexp(self, b: Self) -> Self;
    fn logaddexp2(self, b: Self) -> Self;
    fn div_floor(self, b: Self) -> Self;
    fn div_trunc(self, b: Self) -> Self;
    fn remainder(self, b: Self) -> Self;
    fn fmod(self, b: Self) -> Self;
}

macro_rules! math_float {
    ($t:ty, $bits:ty) => {
        impl MathFloat for $t {
            fn atan2(self, b: Self) -> Self {
                <$t>::atan2(self, b)
            }
            fn hypot(self, b: Self) -> Self {
                <$t>::hypot(self, b)
            }
            fn copysign(self, b: Self) -> Self {
                <$t>::copysign(self, b)
            }
            fn nextafter(self, b: Self) -> Self {
                if self.is_nan() || b.is_nan() {
                    return self + b;
                }
                if self == b {
                    return b;
                }
                if self == 0.0 {
                    return <$t>::from_bits(1).copysign(b);
                }
                let bits = self.to_bits();
                // Away from zero when moving in the direction of x's sign.
                let away = (b > self) == (self > 0.0);
                <$t>::from_bits(if away { bits + 1 } else { bits - 1 })
            }
            fn xlogy(self, b: Self) -> Self {
                if b.is_nan() {
                    return <$t>::NAN;
                }
                if self == 0.0 {
                    return 0.0;
                }
                self * b.ln()
            }
            fn xlog1py(self, b: Self) -> Self {
                if b.is_nan() {
                    return <$t>::NAN;
                }
                if self == 0.0 {
                    return 0.0;
                }
                self * b.ln_1p()
            }
            fn logaddexp(self, b: Self) -> Self {
                if self.is_infinite() && self == b {
                    return self;
                }
                let m = if self >= b || self.is_nan() { self } else { b };
                m + (-(self - b).abs()).exp().ln_1p()
            }
            fn logaddexp2(self, b: Self) -> Self {
                if self.is_infinite() && self == b {
                    return self;
                }
                let m = if self >= b || self.is_nan() { self } else { b };
                m + (-(self - b).abs()).exp2().ln_1p() / std::f64::consts::LN_2 as $t
            }
            /// torch's div_floor_floating: through fmod, so that a // b and a % b agree.
            fn div_floor(self, b: Self) -> Self {
                if b == 0.0 {
                    return self / b;
                }
                let m = self % b;
                let mut div = (self - m) / b;
                if m != 0.0 && (b < 0.0) != (m < 0.0) {
                    div -= 1.0;
                }
                if div == 0.0 {
                    return (0.0 as $t).copysign(self / b);
                }
                let mut f = div.floor();
                if div - f > 0.5 {
                    f += 1.0;
                }
                f
            }
            fn div_trunc(self, b: Self) -> Self {
                (self / b).trunc()
            }
            fn remainder(self, b: Self) -> Self {
                let m = self % b;
                if m != 0.0 && (b < 0.0) != (m < 0.0) {
                    m + b
                } else {
                    m
                }
            }
            fn fmod(self, b: Self) -> Self {
                self % b
            }
        }
    };
}
math_float!(f32, u32);
math_float!(f64, u64);

/// One closure per kind, so the match stays outside the element loop.
fn float<T: MathFloat + crate::kernels::vmath::Elem>(
    a: &Data,
    b: &Data,
    op: BinaryMath,
) -> Result<Data> {
    if op == BinaryMath::Atan2 {
        // The vector atan2 (kernels::vmath), on every layout: broadcast and strided
        // operands are expanded first, so each element's result is the same everywhere.
        return zip_slices::<T, T>(a, b, crate::kernels::vmath::atan2_vec);
    }
    macro_rules! each {
        ($($k:ident => $m:ident),*) => {
            match op { $(BinaryMath::$k => zip::<T, T>(a, b, <T as MathFloat>::$m),)* }
        };
    }
    each!(Atan2 => atan2, Hypot => hypot, Copysign => copysign, Nextafter => nextafter,
        Xlogy => xlogy, Xlog1py => xlog1py, Logaddexp => logaddexp, Logaddexp2 => logaddexp2,
        DivFloor => div_floor, DivTrunc => div_trunc, Remainder => remainder, Fmod => fmod)
}

/// Integer division kinds; `MIN / -1` wraps (to MIN, remainder 0) as torch's results.
trait IntDiv: crate::dtype::Element + PartialOrd {
    fn div_floor(self, b: Self) -> Self;
    fn div_trunc(self, b: Self) -> Self;
    fn remainder(self, b: Self) -> Self;
    fn fmod(self, b: Self) -> Self;
}

macro_rules! int_div {
    ($($t:ty),*) => {$(
        impl IntDiv for $t {
            fn div_floor(self, b: Self) -> Self {
                let q = self.wrapping_div(b);
                #[allow(unused_comparisons)]
                if self.wrapping_rem(b) != 0 && ((self < 0) != (b < 0)) {
                    q - 1
                } else {
                    q
                }
            }
            fn div_trunc(self, b: Self) -> Self {
                self.wrapping_div(b)
            }
            fn remainder(self, b: Self) -> Self {
                let r = self.wrapping_rem(b);
                #[allow(unused_comparisons)]
                if r != 0 && ((r < 0) != (b < 0)) {
                    r + b
                } else {
                    r
                }
            }
            fn fmod(self, b: Self) -> Self {
                self.wrapping_rem(b)
            }
        }
    )*};
}
int_div!(u8, i32, i64);

fn int<T: IntDiv>(a: &Data, b: &Data, op: BinaryMath) -> Result<Data> {
    // torch checks the divisor before computing anything.
    if crate::kernels::gather_data::<T>(b).contains(&T::zero()) {
        return Err(Error::runtime("ZeroDivisionError"));
    }
    match op {
        BinaryMath::DivFloor => zip::<T, T>(a, b, T::div_floor),
        BinaryMath::DivTrunc => zip::<T, T>(a, b, T::div_trunc),
        BinaryMath::Remainder => zip::<T, T>(a, b, T::remainder),
        BinaryMath::Fmod => zip::<T, T>(a, b, T::fmod),
        _ => Err(crate::dtype::unsupported(op.kernel_name(), T::DTYPE)),
    }
}
