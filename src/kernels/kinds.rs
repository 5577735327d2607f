//! What a kernel computes, named by kind: the vocabulary ops speak to a `Backend` in.
//! Kinds are plain values (no element type, no closure), so every backend can match on
//! them and compile its own code per kind and dtype.

use crate::dtype::{DType, Scalar};
use crate::error::Error;

/// The transcendental functions with vector kernels (the table in vmath/mod.rs).
pub use crate::kernels::vmath::Unary as Math;

/// Floating-point functions without vector kernels (computed element by element; half
/// types in float32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Asinh,
    Acosh,
    Atanh,
    Exp2,
    Log2,
    Log10,
    /// Degrees to radians (x * pi / 180) and back.
    Deg2Rad,
    Rad2Deg,
}

impl Func {
    pub fn name(self) -> &'static str {
        match self {
            Func::Asin => "asin",
            Func::Acos => "acos",
            Func::Atan => "atan",
            Func::Sinh => "sinh",
            Func::Cosh => "cosh",
            Func::Asinh => "asinh",
            Func::Acosh => "acosh",
            Func::Atanh => "atanh",
            Func::Exp2 => "exp2",
            Func::Log2 => "log2",
            Func::Log10 => "log10",
            Func::Deg2Rad => "deg2rad",
            Func::Rad2Deg => "rad2deg",
        }
    }
}

/// Elementwise functions of one tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    /// A floating-point function (exp, sin, ...): float and complex dtypes only.
    Math(Math),
    /// The same, for the functions without vector kernels.
    Func(Func),
    Neg,
    /// |x|; of a complex tensor, its (real) modulus.
    Abs,
    /// max(x, 0), NaN kept.
    Relu,
    /// sign(x) for real tensors, x / |x| for complex (torch's sgn).
    Sgn,
    Conj,
    /// The real part of a complex tensor.
    Real,
    /// Rounding to an integral value, or the part rounding drops (real floats only).
    Round(Rounding),
    /// Special functions of real floats (kernels::special).
    Special(Special),
    /// Whether the sign bit is set (-0.0 and -NaN too): a bool result, real dtypes.
    Signbit,
}

/// Special functions of real floating-point values (no complex kernels, as in torch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    Erfc,
    Erfinv,
    Lgamma,
    /// The polygamma function of order n (0: digamma).
    Polygamma(u32),
    /// sin(pi x) / (pi x).
    Sinc,
}

impl Special {
    /// torch's kernel name, in "not implemented for 'ComplexFloat'" errors.
    pub fn kernel_name(self) -> &'static str {
        match self {
            Special::Erfc => "erfc_vml_cpu",
            Special::Erfinv => "erfinv_vml_cpu",
            Special::Lgamma => "lgamma_vml_cpu",
            Special::Polygamma(0) => "digamma",
            Special::Polygamma(1) => "trigamma",
            Special::Polygamma(_) => "polygamma",
            Special::Sinc => "sinc_cpu",
        }
    }
}

/// Rounding functions of real floating-point values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    Floor,
    Ceil,
    Trunc,
    /// To the nearest integer, ties to even (torch's `std::nearbyint`).
    Nearest,
    /// To `decimals` decimal places (torch's `round(decimals=)`): ties to even, scaled.
    Decimals(i64),
    /// `x - trunc(x)`.
    Frac,
}

impl Rounding {
    pub fn name(self) -> &'static str {
        match self {
            Rounding::Floor => "floor",
            Rounding::Ceil => "ceil",
            Rounding::Trunc => "trunc",
            Rounding::Nearest | Rounding::Decimals(_) => "round",
            Rounding::Frac => "frac",
        }
    }
}

impl Unary {
    /// torch's kernel name, in "not implemented for 'Bool'"-style errors.
    pub fn name(self) -> &'static str {
        match self {
            Unary::Math(m) => math_name(m),
            Unary::Func(f) => f.name(),
            Unary::Neg => "neg",
            Unary::Abs => "abs",
            Unary::Relu => "relu",
            Unary::Sgn => "sign",
            Unary::Conj => "conj",
            Unary::Real => "real",
            Unary::Round(r) => r.name(),
            Unary::Special(f) => f.kernel_name(),
            Unary::Signbit => "signbit",
        }
    }

    /// The dtype of the result for an input (computed in) `dtype`.
    pub fn out_dtype(self, dtype: DType) -> DType {
        match self {
            Unary::Abs | Unary::Real => dtype.to_real(),
            Unary::Signbit => DType::Bool,
            _ => dtype,
        }
    }
}

/// Broadcasting arithmetic of two operands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Binary {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

impl Binary {
    /// Why `self` cannot compute on bool (only `Add` = or and `Mul` = and can).
    pub fn bool_error(self) -> Error {
        match self {
            Binary::Sub => Error::runtime("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead."),
            _ => crate::dtype::unsupported(self.name(), DType::Bool),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Binary::Add => "add",
            Binary::Sub => "sub",
            Binary::Mul => "mul",
            Binary::Div => "div",
            Binary::Pow => "pow",
        }
    }
}

/// Fused pointwise ops of three operands (two and a scalar for `LerpScalar`), in one
/// pass with torch's CPU formulas and rounding (ops::ternary).
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Ternary {
    /// lerp(start, end, weight) with a number as the weight: operands (start, end).
    LerpScalar(Scalar),
    /// lerp(start, end, weight) with a tensor weight: operands (start, end, weight).
    Lerp,
    /// self + value * tensor1 * tensor2: operands (self, tensor1, tensor2).
    Addcmul(Scalar),
    /// self + value * tensor1 / tensor2.
    Addcdiv(Scalar),
}

impl Ternary {
    /// torch's kernel name, in "not implemented for" errors.
    pub fn kernel_name(self) -> &'static str {
        match self {
            Ternary::LerpScalar(_) => "lerp_kernel_scalar",
            Ternary::Lerp => "lerp_kernel_tensor",
            Ternary::Addcmul(_) => "addcmul_cpu_out",
            Ternary::Addcdiv(_) => "addcdiv_cpu_out",
        }
    }
}

/// The larger or smaller of two values, elementwise with broadcasting (real dtypes).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Extremum {
    /// NaN wins.
    Maximum,
    Minimum,
    /// NaN loses (the other value is taken; NaN only when both are).
    Fmax,
    Fmin,
}

impl Extremum {
    pub fn name(self) -> &'static str {
        match self {
            Extremum::Maximum => "maximum",
            Extremum::Minimum => "minimum",
            Extremum::Fmax => "fmax",
            Extremum::Fmin => "fmin",
        }
    }
}

/// Elementwise math of two real tensors with broadcasting (ops::binary_math).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BinaryMath {
    Atan2,
    Hypot,
    Copysign,
    /// The next representable value after `a` towards `b`.
    Nextafter,
    /// a * log(b), 0 where a == 0 (NaN where b is).
    Xlogy,
    /// a * log1p(b), likewise.
    Xlog1py,
    Logaddexp,
    Logaddexp2,
    /// Division rounded towards -inf / towards zero (integers too; a zero divisor of
    /// integers is torch's ZeroDivisionError; INT_MIN / -1 wraps).
    DivFloor,
    DivTrunc,
    /// Python's modulo (the sign of the divisor) and C's fmod (the sign of the dividend).
    Remainder,
    Fmod,
}

impl BinaryMath {
    /// torch's kernel name, in "not implemented for 'Bool'" errors.
    pub fn kernel_name(self) -> &'static str {
        match self {
            BinaryMath::Atan2 => "atan2_cpu",
            BinaryMath::Hypot => "hypot_cpu",
            BinaryMath::Copysign => "copysign_cpu",
            BinaryMath::Nextafter => "nextafter_cpu",
            BinaryMath::Xlogy => "xlogy_cpu",
            BinaryMath::Xlog1py => "xlog1py_cpu",
            BinaryMath::Logaddexp => "logaddexp_cpu",
            BinaryMath::Logaddexp2 => "logaddexp2_cpu",
            BinaryMath::DivFloor => "div_floor_cpu",
            BinaryMath::DivTrunc => "div_trunc_cpu",
            BinaryMath::Remainder => "remainder_cpu",
            BinaryMath::Fmod => "fmod_cpu",
        }
    }
    /// Whether integer dtypes compute as integers (the others promote to float).
    pub fn integral(self) -> bool {
        matches!(
            self,
            BinaryMath::DivFloor | BinaryMath::DivTrunc | BinaryMath::Remainder | BinaryMath::Fmod
        )
    }
}

/// Bitwise ops of integer and bool tensors, with broadcasting.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bitwise {
    And,
    Or,
    Xor,
    /// `a << b`: 0 once `b` reaches the type's width (or is negative).
    LeftShift,
    /// `a >> b`, arithmetic: the sign fills once `b` reaches the type's width.
    RightShift,
}

impl Bitwise {
    /// torch's kernel name, in "not implemented for 'Float'" errors.
    pub fn kernel_name(self) -> &'static str {
        match self {
            Bitwise::And => "bitwise_and_cpu",
            Bitwise::Or => "bitwise_or_cpu",
            Bitwise::Xor => "bitwise_xor_cpu",
            Bitwise::LeftShift => "lshift_cpu",
            Bitwise::RightShift => "rshift_cpu",
        }
    }
    /// torch's op name (`aten::bitwise_and`).
    pub fn aten_name(self) -> &'static str {
        match self {
            Bitwise::And => "aten::bitwise_and",
            Bitwise::Or => "aten::bitwise_or",
            Bitwise::Xor => "aten::bitwise_xor",
            Bitwise::LeftShift => "aten::bitwise_left_shift",
            Bitwise::RightShift => "aten::bitwise_right_shift",
        }
    }
}

/// Comparisons (bool results).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Compare {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Compare {
    /// torch's op name (`aten::eq`).
    pub fn aten_name(self) -> &'static str {
        match self {
            Compare::Eq => "aten::eq",
            Compare::Ne => "aten::ne",
            Compare::Lt => "aten::lt",
            Compare::Le => "aten::le",
            Compare::Gt => "aten::gt",
            Compare::Ge => "aten::ge",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compare::Eq => "eq",
            Compare::Ne => "ne",
            Compare::Lt => "lt",
            Compare::Le => "le",
            Compare::Gt => "gt",
            Compare::Ge => "ge",
        }
    }
}

/// Random fills from a generator (kernels::random), in a fixed order so a seed gives
/// torch-like reproducible streams on one backend.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Random {
    /// Uniform on [0, 1) (real and imaginary parts each, for complex).
    Uniform,
    /// Standard normal (a complex value has variance 1 in total).
    Normal,
    /// Integers uniform on [low, high).
    Int { low: i64, high: i64 },
    /// A random permutation of `0..n` for a 1-d shape `[n]` (`randperm`).
    Permutation,
}

/// Reductions over a set of dims.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reduce {
    /// The sum (for bool: whether any element is set).
    Sum,
    /// The largest element; NaN wins (torch propagates NaN).
    Max,
    /// The smallest element; NaN wins.
    Min,
    /// The product (for bool: whether every element is set).
    Prod,
    /// log(sum(exp(x))), the maximum taken out first (floating dtypes; half types
    /// compute in float32).
    LogSumExp,
    /// The sum with NaN counted as zero (`nansum`).
    NanSum,
    /// The sum of squares of real elements (the 2-norm before its square root).
    SumOfSquares,
}

/// Inclusive scans along one dim.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scan {
    Sum,
    Prod,
    /// log(sum(exp)) so far, without overflow (floating dtypes).
    LogSumExp,
    /// The running maximum / minimum with its index (`scan_with_index`): a later equal
    /// value takes over, and NaN, once seen, stays.
    Max,
    Min,
}

/// The op's name for a vector-kernel function (as torch's errors spell it).
fn math_name(m: Math) -> &'static str {
    match m {
        Math::Exp => "exp",
        Math::Expm1 => "expm1",
        Math::Log => "log",
        Math::Log1p => "log1p",
        Math::Sin => "sin",
        Math::Cos => "cos",
        Math::Tan => "tan",
        Math::Tanh => "tanh",
        Math::Sigmoid => "sigmoid",
        Math::Erf => "erf",
        Math::Sqrt => "sqrt",
        Math::Rsqrt => "rsqrt",
        Math::Reciprocal => "reciprocal",
    }
}

/// What a sort-based kernel keeps of each sorted line (see `Backend::sort`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SortKind {
    /// The whole line, ascending or descending (stable; NaN sorts as the largest).
    Sort { descending: bool },
    /// The `k` largest (or smallest) in order, ties in line order (as a stable sort's
    /// first `k`); `k` is at most the line's length.
    Topk { k: usize, largest: bool },
    /// The k-th smallest (1-based; as a stable sort's k-th), the dim dropped.
    Kth { k: usize },
    /// The median: the lower middle of the line; a NaN in the line is the answer (at
    /// its first position), unless `ignore_nan`, when the NaNs are left out.
    Median { ignore_nan: bool },
}

/// How `scatter_reduce` combines the values scattered to one position.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ScatterReduce {
    Sum,
    Prod,
    Mean,
    Amax,
    Amin,
}

impl ScatterReduce {
    pub fn name(self) -> &'static str {
        match self {
            ScatterReduce::Sum => "sum",
            ScatterReduce::Prod => "prod",
            ScatterReduce::Mean => "mean",
            ScatterReduce::Amax => "amax",
            ScatterReduce::Amin => "amin",
        }
    }
}

/// The groups of equal rows `Backend::unique_rows` finds: each group's first row (in
/// sorted order, or in order of appearance for consecutive runs), every row's group,
/// and each group's size.
pub struct Groups {
    pub first: Vec<i64>,
    pub inverse: Vec<i64>,
    pub counts: Vec<i64>,
}

/// The dense matrix kernels of `Backend::decompose` (faer on the CPU). Every input is a
/// batch of matrices `(.., m, n)`; inputs of one call share their batch dims. `info`
/// outputs are int32 with the batch shape: 0 for success, else LAPACK's 1-based
/// position of the failure.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Decomp {
    /// `[A] -> [A^-1, info]`: info is the first zero pivot of A's LU factorization.
    Inv,
    /// `[A] -> [det]`.
    Det,
    /// `[A] -> [sign, logabsdet]` (logabsdet real; sign 0 and -inf for a singular A).
    Slogdet,
    /// `[A (.., n, n), B (.., n, k)] -> [X, info]` with `A X = B`.
    Solve,
    /// `[A (.., n, n), B (.., n, k)] -> [X]` with `A X = B`, reading one triangle of A.
    SolveTriangular { upper: bool, unitriangular: bool },
    /// `[A] -> [L, info]`: the lower Cholesky factor from A's lower triangle; info is the
    /// order of the first leading minor that is not positive-definite.
    Cholesky,
    /// `[A] -> [eigenvalues (real, ascending), eigenvectors (columns)]` of the Hermitian
    /// matrix in A's `upper` or lower triangle.
    Eigh { upper: bool },
    /// `[A (.., m, n)] -> [U, S (real, descending), Vh]`: U `(m, m)` and Vh `(n, n)` when
    /// `full`, else `(m, k)` and `(k, n)` with `k = min(m, n)`.
    Svd { full: bool },
    /// `[A (.., m, n)] -> [Q, R]` with LAPACK's conventions (R's diagonal real):
    /// Q `(m, m)` and R `(m, n)` when `complete`, else `(m, k)` and `(k, n)`.
    Qr { complete: bool },
    /// `[A (.., n, n)] -> [eigenvalues, eigenvectors (columns)]`, both complex (of A's
    /// precision), in LAPACK geev's conventions: unit 2-norm columns, a complex one
    /// turned so that its largest component is real (positive for a complex A, with the
    /// sign of its real part for a real A's complex pair).
    Eig,
    /// `[A (.., m, n), B (.., m, k)] -> [X (.., n, k), |diag R| (.., n) float64]`, m >= n:
    /// the least-squares solution through A's column-pivoted QR, `A P = Q R`
    /// (`X = P R^-1 Q^H B`, meaningful where A has full column rank), with the
    /// magnitudes of R's diagonal for the caller's rank test (gelsy's).
    LstsqQr,
}
