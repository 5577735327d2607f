//! Element types, Python-side scalars and torch's type-promotion rules.

use half::{bf16, f16};
use num_complex::{Complex32, Complex64};

use crate::error::{Error, Result};

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum DType {
    Bool,
    U8,
    I32,
    I64,
    F16,
    BF16,
    F32,
    F64,
    C64,
    C128,
}

/// Promotion category: a Python scalar or zero-dim tensor only takes part in promotion
/// when its category is higher than the dimensioned operands'.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Category {
    Bool,
    Integral,
    Floating,
    Complex,
}

pub const ALL_DTYPES: [DType; 10] = [
    DType::Bool,
    DType::U8,
    DType::I32,
    DType::I64,
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::F64,
    DType::C64,
    DType::C128,
];

impl DType {
    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool | DType::U8 => 1,
            DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::F32 => 4,
            DType::I64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }
    pub fn category(self) -> Category {
        match self {
            DType::Bool => Category::Bool,
            DType::U8 | DType::I32 | DType::I64 => Category::Integral,
            DType::F16 | DType::BF16 | DType::F32 | DType::F64 => Category::Floating,
            DType::C64 | DType::C128 => Category::Complex,
        }
    }
    pub fn is_floating_point(self) -> bool {
        self.category() == Category::Floating
    }
    pub fn is_complex(self) -> bool {
        self.category() == Category::Complex
    }
    /// Types that can require grad.
    pub fn is_differentiable(self) -> bool {
        self.category() >= Category::Floating
    }
    /// Python name: `float32`, `int64`, ...
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "uint8",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
        }
    }
    /// c10's ScalarType name (`Float`, `Double`, `Long`...), used in several messages.
    pub fn scalar_type_name(self) -> &'static str {
        match self {
            DType::Bool => "Bool",
            DType::U8 => "Byte",
            DType::I32 => "Int",
            DType::I64 => "Long",
            DType::F16 => "Half",
            DType::BF16 => "BFloat16",
            DType::F32 => "Float",
            DType::F64 => "Double",
            DType::C64 => "ComplexFloat",
            DType::C128 => "ComplexDouble",
        }
    }
    /// C++ element type name, as torch prints it in a few messages (`float`, `double`).
    pub fn cpp_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "unsigned char",
            DType::I32 => "int",
            DType::I64 => "long int",
            DType::F16 => "c10::Half",
            DType::BF16 => "c10::BFloat16",
            DType::F32 => "float",
            DType::F64 => "double",
            DType::C64 => "c10::complex<float>",
            DType::C128 => "c10::complex<double>",
        }
    }
    /// Legacy tensor type name without the module prefix (`FloatTensor`).
    pub fn legacy_type_name(self) -> &'static str {
        match self {
            DType::Bool => "BoolTensor",
            DType::U8 => "ByteTensor",
            DType::I32 => "IntTensor",
            DType::I64 => "LongTensor",
            DType::F16 => "HalfTensor",
            DType::BF16 => "BFloat16Tensor",
            DType::F32 => "FloatTensor",
            DType::F64 => "DoubleTensor",
            DType::C64 => "ComplexFloatTensor",
            DType::C128 => "ComplexDoubleTensor",
        }
    }
    pub fn from_name(name: &str) -> Option<DType> {
        Some(match name {
            "bool" => DType::Bool,
            "uint8" => DType::U8,
            "int32" | "int" => DType::I32,
            "int64" | "long" => DType::I64,
            "float16" | "half" => DType::F16,
            "bfloat16" => DType::BF16,
            "float32" | "float" => DType::F32,
            "float64" | "double" => DType::F64,
            "complex64" | "cfloat" => DType::C64,
            "complex128" | "cdouble" => DType::C128,
            _ => return None,
        })
    }
    /// The real counterpart of a complex type (`abs` of complex64 is float32).
    pub fn to_real(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        }
    }
    pub fn to_complex(self) -> DType {
        match self {
            DType::F64 | DType::C128 => DType::C128,
            _ => DType::C64,
        }
    }
}

/// torch's promote_types table, written as rules.
pub fn promote_types(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    let (ca, cb) = (a.category(), b.category());
    if ca != cb {
        let (lo, hi) = if ca < cb { (a, b) } else { (b, a) };
        // Mixing complex with a wider real type widens the complex type.
        return match (hi, lo) {
            (C64, F64) => C128,
            _ => hi,
        };
    }
    match (a, b) {
        (F16, BF16) | (BF16, F16) => F32,
        _ => a.max(b),
    }
}

/// A Python number (or a value read out of a tensor).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    Complex(Complex64),
}

impl Scalar {
    pub fn category(self) -> Category {
        match self {
            Scalar::Bool(_) => Category::Bool,
            Scalar::Int(_) => Category::Integral,
            Scalar::Float(_) => Category::Floating,
            Scalar::Complex(_) => Category::Complex,
        }
    }
    /// The dtype a tensor made from this scalar alone gets.
    pub fn default_dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::I64,
            Scalar::Float(_) => default_float_dtype(),
            Scalar::Complex(_) => default_float_dtype().to_complex(),
        }
    }
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as i64 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
            Scalar::Complex(c) => c.re,
        }
    }
    pub fn to_c64(self) -> Complex64 {
        match self {
            Scalar::Complex(c) => c,
            s => Complex64::new(s.to_f64(), 0.0),
        }
    }
    pub fn is_zero(self) -> bool {
        self.to_c64() == Complex64::new(0.0, 0.0)
    }
    pub fn is_one(self) -> bool {
        self.to_c64() == Complex64::new(1.0, 0.0)
    }
}

/// The default dtype for floating point results. Fixed at float32 for now; a settable
/// default would live here.
pub fn default_float_dtype() -> DType {
    DType::F32
}

/// The result dtype when a tensor of dtype `t` meets a Python scalar `s`
/// (torch: wrapped numbers only promote across categories).
pub fn promote_with_scalar(t: DType, s: Scalar) -> DType {
    let sc = s.category();
    if sc <= t.category() {
        return t;
    }
    match sc {
        Category::Complex => {
            if t == DType::F64 {
                DType::C128
            } else if t.is_floating_point() && t != DType::F32 {
                // half types meeting a complex scalar: ComplexHalf is not supported here.
                DType::C64
            } else {
                default_float_dtype().to_complex()
            }
        }
        Category::Floating => default_float_dtype(),
        Category::Integral => DType::I64,
        Category::Bool => DType::Bool,
    }
}

/// torch.result_type over tensors given as (dtype, is_zero_dim) and scalars.
pub fn result_type(tensors: &[(DType, bool)], scalars: &[Scalar]) -> DType {
    let mut dim_t: Option<DType> = None;
    let mut zero_t: Option<DType> = None;
    for &(d, zero_dim) in tensors {
        let slot = if zero_dim { &mut zero_t } else { &mut dim_t };
        *slot = Some(slot.map_or(d, |s| promote_types(s, d)));
    }
    let mut out = match (dim_t, zero_t) {
        (Some(a), Some(z)) => {
            if z.category() > a.category() {
                promote_types(a, z)
            } else {
                a
            }
        }
        (Some(a), None) => a,
        (None, Some(z)) => z,
        (None, None) => {
            return scalars.iter().fold(DType::Bool, |acc, s| {
                let d = s.default_dtype();
                if d.category() > acc.category() {
                    d
                } else {
                    acc
                }
            })
        }
    };
    for &s in scalars {
        out = promote_with_scalar(out, s);
    }
    out
}

/// Typed element access. Conversions go through the widest type of each category so
/// that casting never loses more than the target type must.
pub trait Element: Copy + Send + Sync + 'static + PartialEq + std::fmt::Debug {
    const DTYPE: DType;
    fn zero() -> Self;
    fn one() -> Self;
    fn to_f64(self) -> f64;
    fn to_i64(self) -> i64;
    fn to_c64(self) -> Complex64;
    fn to_bool(self) -> bool;
    fn from_f64(v: f64) -> Self;
    fn from_i64(v: i64) -> Self;
    fn from_c64(v: Complex64) -> Self;
    fn from_bool(v: bool) -> Self;
    fn from_scalar(s: Scalar) -> Self {
        match s {
            Scalar::Bool(b) => Self::from_bool(b),
            Scalar::Int(i) => Self::from_i64(i),
            Scalar::Float(f) => Self::from_f64(f),
            Scalar::Complex(c) => Self::from_c64(c),
        }
    }
    fn to_scalar(self) -> Scalar {
        match Self::DTYPE.category() {
            Category::Bool => Scalar::Bool(self.to_bool()),
            Category::Integral => Scalar::Int(self.to_i64()),
            Category::Floating => Scalar::Float(self.to_f64()),
            Category::Complex => Scalar::Complex(self.to_c64()),
        }
    }
}

/// Cast one element between any two types, with torch's semantics (float → int
/// truncates toward zero, complex → real keeps the real part, nonzero → true).
#[inline(always)]
pub fn cast<T: Element, U: Element>(x: T) -> U {
    match U::DTYPE.category() {
        Category::Complex => U::from_c64(x.to_c64()),
        Category::Floating => U::from_f64(x.to_f64()),
        Category::Integral => match T::DTYPE.category() {
            Category::Bool | Category::Integral => U::from_i64(x.to_i64()),
            _ => U::from_f64(x.to_f64()),
        },
        Category::Bool => U::from_bool(x.to_bool()),
    }
}

macro_rules! int_element {
    ($t:ty, $d:expr) => {
        impl Element for $t {
            const DTYPE: DType = $d;
            fn zero() -> Self {
                0
            }
            fn one() -> Self {
                1
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn to_i64(self) -> i64 {
                self as i64
            }
            fn to_c64(self) -> Complex64 {
                Complex64::new(self as f64, 0.0)
            }
            fn to_bool(self) -> bool {
                self != 0
            }
            fn from_f64(v: f64) -> Self {
                v as i64 as $t
            }
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            fn from_c64(v: Complex64) -> Self {
                v.re as i64 as $t
            }
            fn from_bool(v: bool) -> Self {
                v as $t
            }
        }
    };
}
int_element!(u8, DType::U8);
int_element!(i32, DType::I32);
int_element!(i64, DType::I64);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn zero() -> Self {
        false
    }
    fn one() -> Self {
        true
    }
    fn to_f64(self) -> f64 {
        self as i64 as f64
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn to_c64(self) -> Complex64 {
        Complex64::new(self as i64 as f64, 0.0)
    }
    fn to_bool(self) -> bool {
        self
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    fn from_c64(v: Complex64) -> Self {
        v.re != 0.0 || v.im != 0.0
    }
    fn from_bool(v: bool) -> Self {
        v
    }
}

macro_rules! float_element {
    ($t:ty, $d:expr, $to:expr, $from:expr) => {
        impl Element for $t {
            const DTYPE: DType = $d;
            fn zero() -> Self {
                $from(0.0)
            }
            fn one() -> Self {
                $from(1.0)
            }
            fn to_f64(self) -> f64 {
                $to(self)
            }
            fn to_i64(self) -> i64 {
                $to(self) as i64
            }
            fn to_c64(self) -> Complex64 {
                Complex64::new($to(self), 0.0)
            }
            fn to_bool(self) -> bool {
                $to(self) != 0.0
            }
            fn from_f64(v: f64) -> Self {
                $from(v)
            }
            fn from_i64(v: i64) -> Self {
                $from(v as f64)
            }
            fn from_c64(v: Complex64) -> Self {
                $from(v.re)
            }
            fn from_bool(v: bool) -> Self {
                $from(v as i64 as f64)
            }
        }
    };
}
float_element!(f32, DType::F32, |x: f32| x as f64, |v: f64| v as f32);
float_element!(f64, DType::F64, |x: f64| x, |v: f64| v);
float_element!(f16, DType::F16, |x: f16| x.to_f64(), f16::from_f64);
float_element!(bf16, DType::BF16, |x: bf16| x.to_f64(), bf16::from_f64);

impl Element for Complex32 {
    const DTYPE: DType = DType::C64;
    fn zero() -> Self {
        Complex32::new(0.0, 0.0)
    }
    fn one() -> Self {
        Complex32::new(1.0, 0.0)
    }
    fn to_f64(self) -> f64 {
        self.re as f64
    }
    fn to_i64(self) -> i64 {
        self.re as i64
    }
    fn to_c64(self) -> Complex64 {
        Complex64::new(self.re as f64, self.im as f64)
    }
    fn to_bool(self) -> bool {
        self.re != 0.0 || self.im != 0.0
    }
    fn from_f64(v: f64) -> Self {
        Complex32::new(v as f32, 0.0)
    }
    fn from_i64(v: i64) -> Self {
        Complex32::new(v as f32, 0.0)
    }
    fn from_c64(v: Complex64) -> Self {
        Complex32::new(v.re as f32, v.im as f32)
    }
    fn from_bool(v: bool) -> Self {
        Complex32::new(v as i64 as f32, 0.0)
    }
}

impl Element for Complex64 {
    const DTYPE: DType = DType::C128;
    fn zero() -> Self {
        Complex64::new(0.0, 0.0)
    }
    fn one() -> Self {
        Complex64::new(1.0, 0.0)
    }
    fn to_f64(self) -> f64 {
        self.re
    }
    fn to_i64(self) -> i64 {
        self.re as i64
    }
    fn to_c64(self) -> Complex64 {
        self
    }
    fn to_bool(self) -> bool {
        self.re != 0.0 || self.im != 0.0
    }
    fn from_f64(v: f64) -> Self {
        Complex64::new(v, 0.0)
    }
    fn from_i64(v: i64) -> Self {
        Complex64::new(v as f64, 0.0)
    }
    fn from_c64(v: Complex64) -> Self {
        v
    }
    fn from_bool(v: bool) -> Self {
        Complex64::new(v as i64 as f64, 0.0)
    }
}

/// Run `$body` with `$T` bound to the Rust element type of `$dtype`.
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {{
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
            __D::C64 => {
                type $T = num_complex::Complex32;
                $body
            }
            __D::C128 => {
                type $T = num_complex::Complex64;
                $body
            }
        }
    }};
}

/// torch's dispatch error for a kernel without the dtype (a NotImplementedError).
pub fn unsupported(op: &str, d: DType) -> Error {
    Error::not_implemented(format!(
        "\"{op}\" not implemented for '{}'",
        d.scalar_type_name()
    ))
}

pub fn check(cond: bool, op: &str, d: DType) -> Result<()> {
    if cond {
        Ok(())
    } else {
        Err(unsupported(op, d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn promotion_follows_torch() {
        assert_eq!(promote_types(DType::I64, DType::F32), DType::F32);
        assert_eq!(promote_types(DType::F16, DType::BF16), DType::F32);
        assert_eq!(promote_types(DType::C64, DType::F64), DType::C128);
        assert_eq!(promote_types(DType::Bool, DType::U8), DType::U8);
        assert_eq!(
            promote_with_scalar(DType::I64, Scalar::Float(1.5)),
            DType::F32
        );
        assert_eq!(
            promote_with_scalar(DType::F64, Scalar::Complex(Complex64::new(0.0, 1.0))),
            DType::C128
        );
        assert_eq!(
            result_type(&[(DType::F32, false), (DType::F64, true)], &[]),
            DType::F32
        );
        assert_eq!(
            result_type(&[(DType::I64, false), (DType::F64, true)], &[]),
            DType::F64
        );
    }
    #[test]
    fn casts_truncate_like_torch() {
        assert_eq!(cast::<f64, i64>(-1.7), -1);
        assert!(cast::<f32, bool>(0.5));
        assert_eq!(cast::<Complex64, f32>(Complex64::new(2.0, 3.0)), 2.0);
    }
}
