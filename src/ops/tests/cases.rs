//! One entry per op: how to build it and random inputs for it, in a given dtype
//! (float64 or complex128; index and condition inputs keep their own dtypes).

use crate::dtype::{DType, Scalar};
use crate::kernels::kinds::{Extremum, Rounding};
use crate::layout::Layout;
use crate::ops::binary::{Add, Div, Mul, Pow, ScalarOp, ScalarOpKind, Sub, Where};
use crate::ops::clamp::{Clamp, ClampFn, ClampTensor};
use crate::ops::cumulative::{Cummax, Cumprod, Logcumsumexp};
use crate::ops::diag::{DiagEmbed, DiagonalCopy};
use crate::ops::extrema::{Amax, Pairwise};
use crate::ops::index::{IndexSelect, MaskedFill, Scatter};
use crate::ops::inplace::{Copy, Fill};
use crate::ops::join::Stack;
use crate::ops::linalg::{Bmm, Dot, Gather, Mm, Mv, ScatterIntoZeros};
use crate::ops::matrix_ops::{AddProduct, Cross, Product, Trace, Vdot};
use crate::ops::nan_reduce::{Aminmax, Nansum};
use crate::ops::prod::Prod;
use crate::ops::reduce::{Extreme, ExtremeAll, ExtremeDim, Sum};
use crate::ops::roll::{NarrowCopy, Roll, Rot90};
use crate::ops::rounding::Round;
use crate::ops::scan::Cumsum;
use crate::ops::shape::{Flip, Repeat, Triangle};
use crate::ops::softmax::{LogSumExp, Softmax};
use crate::ops::stats::Moments;
use crate::ops::ternary::{Addc, Lerp};
use crate::ops::unary::*;
use crate::ops::view::{AsStrided, MultiView, Restride, ViewKind, ViewOp};
use crate::ops::Op;
use crate::tensor::Tensor;

pub struct Case {
    pub name: &'static str,
    /// Whether the op is also checked in complex128.
    pub complex: bool,
    pub op: fn(DType) -> Box<dyn Op>,
    pub inputs: fn(DType) -> Vec<Tensor>,
}

pub(super) fn randn(shape: &[usize], dtype: DType) -> Tensor {
    crate::ops::creation::randn(shape, dtype).unwrap()
}

/// Away from zero and (complex) from the negative real axis: log, sqrt, 1/x, division.
fn positive(shape: &[usize], dtype: DType) -> Tensor {
    let x = randn(shape, dtype);
    if dtype.is_complex() {
        crate::ops::binary::add_scalar(&x, Scalar::Float(2.0)).unwrap()
    } else {
        crate::ops::binary::add_scalar(&abs(&x).unwrap(), Scalar::Float(0.5)).unwrap()
    }
}

fn index(values: Vec<i64>, shape: &[usize]) -> Tensor {
    Tensor::from_vec(values, shape).unwrap()
}

fn condition(shape: &[usize]) -> Tensor {
    crate::ops::binary::gt_scalar(&randn(shape, DType::F64), Scalar::Int(0)).unwrap()
}

/// A scalar operand of the dtype's kind (complex ones check the conjugations).
fn scalar(re: f64, im: f64, dtype: DType) -> Scalar {
    if dtype.is_complex() {
        Scalar::Complex(num_complex::Complex64::new(re, im))
    } else {
        Scalar::Float(re)
    }
}

fn view(name: &'static str, kind: ViewKind, tracked_view: bool) -> Box<dyn Op> {
    Box::new(ViewOp {
        name,
        kind,
        tracked_view,
    })
}

fn sum(dims: &[usize], keepdim: bool, mean: bool) -> Box<dyn Op> {
    Box::new(Sum {
        dims: dims.into(),
        keepdim,
        dtype: None,
        full: false,
        mean,
    })
}

pub(super) fn c(
    name: &'static str,
    complex: bool,
    op: fn(DType) -> Box<dyn Op>,
    inputs: fn(DType) -> Vec<Tensor>,
) -> Case {
    Case {
        name,
        complex,
        op,
        inputs,
    }
}

pub(super) fn one(d: DType) -> Vec<Tensor> {
    vec![randn(&[3, 4], d)]
}
fn one_positive(d: DType) -> Vec<Tensor> {
    vec![positive(&[3, 4], d)]
}
/// Inside (-0.8, 0.8): the domain of asin, acos and atanh.
fn one_unit(d: DType) -> Vec<Tensor> {
    let t = crate::ops::unary::tanh(&randn(&[3, 4], d)).expect("tanh");
    vec![crate::ops::binary::mul_scalar(&t, Scalar::Float(0.8)).expect("scale")]
}
/// Above 1: the domain of acosh.
fn one_above_one(d: DType) -> Vec<Tensor> {
    vec![crate::ops::binary::add_scalar(&positive(&[3, 4], d), Scalar::Int(1)).expect("shift")]
}
/// A [3, 4] and a [4] operand: every broadcasting op is checked broadcasting.
fn two(d: DType) -> Vec<Tensor> {
    vec![randn(&[3, 4], d), randn(&[4], d)]
}

/// start [3, 4], end [4], weight [3, 1]: lerp / addcmul / addcdiv broadcast all three.
fn three(d: DType) -> Vec<Tensor> {
    vec![randn(&[3, 4], d), randn(&[4], d), randn(&[3, 1], d)]
}
/// As `three`, the divisor away from zero.
fn three_divisor(d: DType) -> Vec<Tensor> {
    vec![randn(&[3, 4], d), randn(&[4], d), positive(&[3, 1], d)]
}
/// A [3, 4] input with zeros along dim 1: one in row 0, two in row 1, none in row 2
/// (cumprod's rules through zeros).
fn one_with_zeros(d: DType) -> Vec<Tensor> {
    let x = randn(&[3, 4], d);
    let mask = Tensor::from_vec(
        vec![1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        &[3, 4],
    )
    .expect("mask");
    vec![crate::ops::binary::mul(&x, &mask).expect("zeros")]
}

/// x [3, 4] between bounds min [4] near -0.5 and max [3, 1] near 0.5 (min < max, so
/// torch's vjp and jvp of clamp agree and the transpose identity holds).
fn clamp_bounds(d: DType) -> Vec<Tensor> {
    let near = |shape: &[usize], at: f64| {
        let r = crate::ops::binary::mul_scalar(&randn(shape, d), Scalar::Float(0.1)).unwrap();
        crate::ops::binary::add_scalar(&r, Scalar::Float(at)).unwrap()
    };
    vec![randn(&[3, 4], d), near(&[4], -0.5), near(&[3, 1], 0.5)]
}

fn ternary_cases() -> Vec<Case> {
    vec![
        c(
            "lerp_scalar",
            true,
            |d| {
                Box::new(Lerp {
                    weight: Some(scalar(0.3, 0.2, d)),
                })
            },
            two,
        ),
        c(
            "lerp_tensor",
            true,
            |_| Box::new(Lerp { weight: None }),
            three,
        ),
        c(
            "addcmul",
            true,
            |d| {
                Box::new(Addc {
                    value: scalar(-1.5, 0.5, d),
                    divide: false,
                })
            },
            three,
        ),
        c(
            "addcdiv",
            true,
            |d| {
                Box::new(Addc {
                    value: scalar(0.5, -1.0, d),
                    divide: true,
                })
            },
            three_divisor,
        ),
        c(
            "cumprod",
            true,
            |_| {
                Box::new(Cumprod {
                    dim: 1,
                    dtype: None,
                })
            },
            one,
        ),
        c(
            "cumprod_zeros",
            true,
            |_| {
                Box::new(Cumprod {
                    dim: 1,
                    dtype: None,
                })
            },
            one_with_zeros,
        ),
        c(
            "cummax",
            false,
            |_| {
                Box::new(Cummax {
                    dim: 1,
                    which: Extreme::Max,
                })
            },
            one,
        ),
        c(
            "cummin",
            false,
            |_| {
                Box::new(Cummax {
                    dim: 0,
                    which: Extreme::Min,
                })
            },
            one,
        ),
        c(
            "logcumsumexp",
            false,
            |_| Box::new(Logcumsumexp { dim: 1 }),
            one,
        ),
        c(
            "nansum",
            false,
            |_| {
                Box::new(Nansum {
                    dims: (&[1][..]).into(),
                    keepdim: false,
                    dtype: None,
                })
            },
            one,
        ),
        c(
            "aminmax",
            false,
            |_| {
                Box::new(Aminmax {
                    dims: (&[0][..]).into(),
                    keepdim: true,
                })
            },
            one,
        ),
    ]
}

pub fn cases() -> Vec<Case> {
    let mut all = base_cases();
    all.extend(ternary_cases());
    all
}

fn base_cases() -> Vec<Case> {
    vec![
        c("exp", true, |_| Box::new(Exp), one),
        c("log", true, |_| Box::new(Log), one_positive),
        c("sin", true, |_| Box::new(Sin), one),
        c("cos", true, |_| Box::new(Cos), one),
        c("tanh", true, |_| Box::new(Tanh), one),
        c("sigmoid", true, |_| Box::new(Sigmoid), one),
        c("sqrt", true, |_| Box::new(Sqrt), one_positive),
        c("reciprocal", true, |_| Box::new(Reciprocal), one_positive),
        c("tan", true, |_| Box::new(Tan), one),
        c("rsqrt", true, |_| Box::new(Rsqrt), one_positive),
        c("expm1", true, |_| Box::new(Expm1), one),
        c("log1p", true, |_| Box::new(Log1p), one_positive),
        c("erf", false, |_| Box::new(Erf), one),
        c("asin", false, |_| Box::new(Asin), one_unit),
        c("acos", false, |_| Box::new(Acos), one_unit),
        c("atan", false, |_| Box::new(Atan), one),
        c("sinh", true, |_| Box::new(Sinh), one),
        c("cosh", true, |_| Box::new(Cosh), one),
        c("asinh", false, |_| Box::new(Asinh), one),
        c("acosh", false, |_| Box::new(Acosh), one_above_one),
        c("atanh", false, |_| Box::new(Atanh), one_unit),
        c("exp2", true, |_| Box::new(Exp2), one),
        c("log2", true, |_| Box::new(Log2), one_positive),
        c("log10", true, |_| Box::new(Log10), one_positive),
        c("deg2rad", false, |_| Box::new(Deg2Rad), one),
        c("rad2deg", false, |_| Box::new(Rad2Deg), one),
        c("neg", true, |_| Box::new(Neg), one),
        c("relu", false, |_| Box::new(Relu), one),
        c("abs", true, |_| Box::new(Abs), one),
        c("sgn", true, |_| Box::new(Sgn { called_sign: false }), one),
        c("conj", true, |_| Box::new(Conj), one),
        c("real", true, |_| Box::new(Real_), one),
        c("clone", true, |_| Box::new(Clone_), one),
        c(
            "to_dtype",
            true,
            // real -> complex and complex -> real
            |d| {
                Box::new(ToCopy {
                    dtype: if d.is_complex() {
                        DType::F64
                    } else {
                        DType::C128
                    },
                })
            },
            one,
        ),
        c(
            "clamp",
            false,
            |_| {
                Box::new(Clamp {
                    min: Some(Scalar::Float(-0.5)),
                    max: Some(Scalar::Float(0.7)),
                    func: ClampFn::Clamp,
                })
            },
            one,
        ),
        c(
            "clamp_tensors",
            false,
            |_| {
                Box::new(ClampTensor {
                    has_min: true,
                    has_max: true,
                    func: ClampFn::Clamp,
                })
            },
            clamp_bounds,
        ),
        c(
            "clamp_min_tensor",
            false,
            |_| {
                Box::new(ClampTensor {
                    has_min: true,
                    has_max: false,
                    func: ClampFn::Min,
                })
            },
            two,
        ),
        c(
            "clamp_max_tensor",
            false,
            |_| {
                Box::new(ClampTensor {
                    has_min: false,
                    has_max: true,
                    func: ClampFn::Max,
                })
            },
            two,
        ),
        c("undefined_grad", true, |_| Box::new(UndefinedGrad), one),
        c(
            "add",
            true,
            |d| {
                Box::new(Add {
                    alpha: scalar(-1.5, 0.5, d),
                })
            },
            two,
        ),
        c(
            "sub",
            true,
            |d| {
                Box::new(Sub {
                    alpha: scalar(2.0, -1.0, d),
                })
            },
            two,
        ),
        c(
            "rsub",
            true,
            |d| {
                Box::new(ScalarOp {
                    kind: ScalarOpKind::Rsub,
                    scalar: scalar(2.0, 1.0, d),
                })
            },
            one,
        ),
        c(
            "pow_scalar",
            true,
            |d| {
                Box::new(ScalarOp {
                    kind: ScalarOpKind::Pow,
                    scalar: scalar(2.5, 0.5, d),
                })
            },
            one_positive,
        ),
        c(
            "pow_scalar_zero",
            true,
            |_| {
                Box::new(ScalarOp {
                    kind: ScalarOpKind::Pow,
                    scalar: Scalar::Int(0),
                })
            },
            one,
        ),
        c(
            "rpow_scalar",
            true,
            |d| {
                Box::new(ScalarOp {
                    kind: ScalarOpKind::RPow,
                    scalar: scalar(1.7, -0.3, d),
                })
            },
            one,
        ),
        c("mul", true, |_| Box::new(Mul), two),
        c(
            "div",
            true,
            |_| Box::new(Div),
            |d| vec![randn(&[3, 4], d), positive(&[4], d)],
        ),
        c(
            "pow",
            true,
            |_| Box::new(Pow),
            |d| vec![positive(&[3, 4], d), randn(&[4], d)],
        ),
        c(
            "where",
            true,
            |_| Box::new(Where),
            |d| vec![condition(&[3, 4]), randn(&[3, 4], d), randn(&[4], d)],
        ),
        c("sum_dim", true, |_| sum(&[1], false, false), one),
        c("sum_all", true, |_| sum(&[0, 1], false, false), one),
        c("mean_keepdim", true, |_| sum(&[0], true, true), one),
        c(
            "amax_dim",
            false,
            |_| {
                Box::new(Amax {
                    which: Extreme::Max,
                    dims: (&[1][..]).into(),
                    keepdim: false,
                })
            },
            one,
        ),
        c(
            "amin_all_keepdim",
            false,
            |_| {
                Box::new(Amax {
                    which: Extreme::Min,
                    dims: (&[0, 1][..]).into(),
                    keepdim: true,
                })
            },
            one,
        ),
        c(
            "maximum",
            false,
            |_| Box::new(Pairwise(Extremum::Maximum)),
            two,
        ),
        c(
            "minimum",
            false,
            |_| Box::new(Pairwise(Extremum::Minimum)),
            two,
        ),
        c("fmax", false, |_| Box::new(Pairwise(Extremum::Fmax)), two),
        c("fmin", false, |_| Box::new(Pairwise(Extremum::Fmin)), two),
        c(
            "prod_dim",
            true,
            |_| {
                Box::new(Prod {
                    dims: (&[1][..]).into(),
                    keepdim: false,
                    dtype: None,
                    full: false,
                })
            },
            one,
        ),
        c(
            "prod_all",
            true,
            |_| {
                Box::new(Prod {
                    dims: (&[0, 1][..]).into(),
                    keepdim: false,
                    dtype: None,
                    full: true,
                })
            },
            one,
        ),
        c(
            "logsumexp",
            false,
            |_| {
                Box::new(LogSumExp {
                    dims: (&[0][..]).into(),
                    keepdim: false,
                })
            },
            one,
        ),
        c(
            "logsumexp_keepdim",
            false,
            |_| {
                Box::new(LogSumExp {
                    dims: (&[0, 1][..]).into(),
                    keepdim: true,
                })
            },
            one,
        ),
        c(
            "softmax",
            false,
            |_| Box::new(Softmax { dim: 1, log: false }),
            one,
        ),
        c(
            "log_softmax",
            false,
            |_| Box::new(Softmax { dim: 0, log: true }),
            one,
        ),
        c(
            "var",
            true,
            |_| {
                Box::new(Moments {
                    dims: (&[1][..]).into(),
                    correction: 1.0,
                    keepdim: false,
                    std: false,
                    with_mean: false,
                })
            },
            one,
        ),
        c(
            "std_keepdim",
            true,
            |_| {
                Box::new(Moments {
                    dims: (&[0][..]).into(),
                    correction: 0.0,
                    keepdim: true,
                    std: true,
                    with_mean: false,
                })
            },
            one,
        ),
        c(
            "var_mean",
            true,
            |_| {
                Box::new(Moments {
                    dims: (&[0, 1][..]).into(),
                    correction: 2.0,
                    keepdim: false,
                    std: false,
                    with_mean: true,
                })
            },
            one,
        ),
        c(
            "std_mean",
            false,
            |_| {
                Box::new(Moments {
                    dims: (&[1][..]).into(),
                    correction: 1.0,
                    keepdim: true,
                    std: true,
                    with_mean: true,
                })
            },
            one,
        ),
        c(
            "cumsum",
            true,
            |_| {
                Box::new(Cumsum {
                    dim: 1,
                    dtype: None,
                })
            },
            one,
        ),
        c(
            "flip",
            true,
            |_| {
                Box::new(Flip {
                    dims: (&[0, 1][..]).into(),
                })
            },
            one,
        ),
        c("floor", false, |_| Box::new(Round(Rounding::Floor)), one),
        c(
            "round_decimals",
            false,
            |_| Box::new(Round(Rounding::Decimals(1))),
            one,
        ),
        c("frac", false, |_| Box::new(Round(Rounding::Frac)), one),
        c(
            "max_all",
            false,
            |_| {
                Box::new(ExtremeAll {
                    which: Extreme::Max,
                })
            },
            one,
        ),
        c(
            "min_dim",
            false,
            |_| {
                Box::new(ExtremeDim {
                    which: Extreme::Min,
                    dim: 1,
                    keepdim: false,
                })
            },
            one,
        ),
        c(
            "max_dim_keepdim",
            false,
            |_| {
                Box::new(ExtremeDim {
                    which: Extreme::Max,
                    dim: 0,
                    keepdim: true,
                })
            },
            one,
        ),
        c(
            "view",
            true,
            |_| view("ViewBackward0", ViewKind::View((&[2, 6][..]).into()), true),
            one,
        ),
        c(
            "unsafe_view",
            true,
            |_| {
                view(
                    "UnsafeViewBackward0",
                    ViewKind::View((&[12][..]).into()),
                    false,
                )
            },
            one,
        ),
        c(
            "permute",
            true,
            |_| {
                view(
                    "PermuteBackward0",
                    ViewKind::Permute((&[1, -1, 0][..]).into()),
                    true,
                )
            },
            |d| vec![randn(&[2, 3, 4], d)],
        ),
        c(
            "transpose",
            true,
            |_| view("TransposeBackward0", ViewKind::Transpose(0, -1), true),
            one,
        ),
        c(
            "expand",
            true,
            |_| {
                view(
                    "ExpandBackward0",
                    ViewKind::Expand((&[2, 3, 4][..]).into()),
                    true,
                )
            },
            |d| vec![randn(&[3, 1], d)],
        ),
        c(
            "squeeze_all",
            true,
            |_| view("SqueezeBackward0", ViewKind::Squeeze(None), true),
            |d| vec![randn(&[3, 1, 4], d)],
        ),
        c(
            "unsqueeze",
            true,
            |_| view("UnsqueezeBackward0", ViewKind::Unsqueeze(-1), true),
            one,
        ),
        c(
            "slice",
            true,
            |_| {
                let kind = ViewKind::Slice {
                    dim: 1,
                    start: 1,
                    end: 4,
                    step: 2,
                };
                view("SliceBackward0", kind, true)
            },
            one,
        ),
        c(
            "select",
            true,
            |_| {
                let kind = ViewKind::Select { dim: -2, index: 1 };
                view("SelectBackward0", kind, true)
            },
            one,
        ),
        c(
            "diagonal",
            true,
            |_| {
                let kind = ViewKind::Diagonal {
                    offset: 1,
                    dim1: 0,
                    dim2: 1,
                };
                view("DiagonalBackward0", kind, true)
            },
            one,
        ),
        c(
            "as_strided_view",
            true,
            |_| {
                let kind = ViewKind::AsStrided {
                    size: (&[2, 2][..]).into(),
                    stride: (&[1, 4][..]).into(),
                    offset: 1,
                };
                view("AsStridedBackward0", kind, true)
            },
            one,
        ),
        c(
            "alias",
            true,
            |_| view("AliasBackward0", ViewKind::Alias, true),
            one,
        ),
        c(
            "restride",
            true,
            |_| {
                Box::new(Restride {
                    from: Layout::contiguous(&[3, 4]),
                    to: Layout::contiguous(&[4, 3]).transpose(0, 1).unwrap(),
                })
            },
            one,
        ),
        c(
            "as_strided",
            true,
            |_| {
                Box::new(AsStrided {
                    layout: Layout {
                        shape: (&[2, 3][..]).into(),
                        strides: (&[4, 1][..]).into(),
                        offset: 1,
                    },
                })
            },
            one,
        ),
        c(
            "split",
            true,
            |_| {
                Box::new(MultiView {
                    name: "SplitBackward0",
                    dim: 1,
                    pieces: vec![(0, 3), (3, 1)],
                    squeeze: false,
                })
            },
            one,
        ),
        c(
            "unbind",
            true,
            |_| {
                Box::new(MultiView {
                    name: "UnbindBackward0",
                    dim: 0,
                    pieces: vec![(0, 1), (1, 1), (2, 1)],
                    squeeze: true,
                })
            },
            one,
        ),
        c(
            "mm",
            true,
            |_| Box::new(Mm::default()),
            |d| vec![randn(&[3, 4], d), randn(&[4, 2], d)],
        ),
        c(
            "bmm",
            true,
            |_| Box::new(Bmm),
            |d| vec![randn(&[2, 3, 4], d), randn(&[2, 4, 5], d)],
        ),
        c(
            "mv",
            true,
            |_| Box::new(Mv),
            |d| vec![randn(&[3, 4], d), randn(&[4], d)],
        ),
        c(
            "dot",
            true,
            |_| Box::new(Dot),
            |d| vec![randn(&[4], d), randn(&[4], d)],
        ),
        c(
            "scatter_into_zeros",
            true,
            |_| {
                Box::new(ScatterIntoZeros {
                    dim: 1,
                    shape: (&[3, 5][..]).into(),
                })
            },
            |d| vec![randn(&[3, 2], d), index(vec![4, 0, 2, 2, 1, 3], &[3, 2])],
        ),
        c(
            "tril",
            true,
            |_| {
                Box::new(Triangle {
                    diagonal: 0,
                    upper: false,
                })
            },
            one,
        ),
        c(
            "triu_offset",
            true,
            |_| {
                Box::new(Triangle {
                    diagonal: 1,
                    upper: true,
                })
            },
            |d| vec![randn(&[2, 3, 4], d)],
        ),
        c(
            "repeat",
            true,
            |_| {
                Box::new(Repeat {
                    sizes: (&[2, 1, 3][..]).into(),
                })
            },
            one,
        ),
        c(
            "index_select",
            true,
            |_| Box::new(IndexSelect { dim: 1 }),
            |d| vec![randn(&[3, 4], d), index(vec![0, 2, 2], &[3])],
        ),
        c(
            "scatter",
            true,
            |_| {
                Box::new(Scatter {
                    dim: 1,
                    value: None,
                    add: false,
                })
            },
            |d| {
                vec![
                    randn(&[3, 4], d),
                    index(vec![3, 0, 1, 2, 0, 3], &[3, 2]),
                    randn(&[3, 2], d),
                ]
            },
        ),
        c(
            "scatter_value",
            true,
            |_| {
                Box::new(Scatter {
                    dim: 0,
                    value: Some(Scalar::Float(1.5)),
                    add: false,
                })
            },
            |d| vec![randn(&[3, 4], d), index(vec![2, 0, 1, 0], &[1, 4])],
        ),
        c(
            "scatter_add",
            true,
            |_| {
                Box::new(Scatter {
                    dim: 1,
                    value: None,
                    add: true,
                })
            },
            |d| {
                vec![
                    randn(&[3, 4], d),
                    index(vec![3, 3, 1, 1, 0, 0], &[3, 2]),
                    randn(&[3, 2], d),
                ]
            },
        ),
        c(
            "masked_fill",
            true,
            |_| {
                Box::new(MaskedFill {
                    value: Scalar::Float(1.5),
                })
            },
            |d| vec![randn(&[3, 4], d), condition(&[4])],
        ),
        c(
            "stack",
            true,
            |_| Box::new(Stack { dim: 1 }),
            |d| vec![randn(&[3, 4], d), randn(&[3, 4], d)],
        ),
        c(
            "gather",
            true,
            |_| Box::new(Gather { dim: 1 }),
            |d| vec![randn(&[3, 5], d), index(vec![4, 0, 2, 2, 1, 4], &[3, 2])],
        ),
        c(
            "copy_",
            true,
            |_| Box::new(Copy),
            |d| vec![randn(&[3, 4], DType::F64), randn(&[4], d)],
        ),
        c(
            "fill_",
            true,
            |_| {
                Box::new(Fill {
                    value: Scalar::Float(1.5),
                    zero: false,
                })
            },
            one,
        ),
        // issue 11, matrix and shape ops (matops): self broadcasts in the add-products
        c(
            "addmm",
            true,
            |d| add_product(Product::Mm, d),
            |d| vec![randn(&[4], d), randn(&[3, 2], d), randn(&[2, 4], d)],
        ),
        c(
            "addmv",
            true,
            |d| add_product(Product::Mv, d),
            |d| vec![randn(&[1], d), randn(&[3, 4], d), randn(&[4], d)],
        ),
        c(
            "baddbmm",
            true,
            |d| add_product(Product::Bmm, d),
            |d| {
                vec![
                    randn(&[3, 4], d),
                    randn(&[2, 3, 5], d),
                    randn(&[2, 5, 4], d),
                ]
            },
        ),
        c(
            "addbmm",
            true,
            |d| add_product(Product::SumBmm, d),
            |d| {
                vec![
                    randn(&[3, 4], d),
                    randn(&[2, 3, 5], d),
                    randn(&[2, 5, 4], d),
                ]
            },
        ),
        c(
            "vdot",
            true,
            |_| Box::new(Vdot),
            |d| vec![randn(&[4], d), randn(&[4], d)],
        ),
        c(
            "linalg_cross",
            true,
            |_| Box::new(Cross { dim: 1 }),
            |d| vec![randn(&[4, 3], d), randn(&[1, 3], d)],
        ),
        c("trace", true, |_| Box::new(Trace), one),
        c(
            "diag_embed",
            true,
            |_| {
                Box::new(DiagEmbed {
                    offset: 1,
                    dim1: 0,
                    dim2: 2,
                })
            },
            one,
        ),
        c(
            "diagonal_copy",
            true,
            |_| {
                Box::new(DiagonalCopy {
                    offset: -1,
                    dim1: 0,
                    dim2: 1,
                })
            },
            one,
        ),
        c(
            "roll",
            true,
            |_| {
                Box::new(Roll {
                    shifts: [1, -2][..].into(),
                    dims: [0, 1][..].into(),
                })
            },
            one,
        ),
        c(
            "roll_flattened",
            true,
            |_| {
                Box::new(Roll {
                    shifts: [5][..].into(),
                    dims: Default::default(),
                })
            },
            one,
        ),
        c(
            "rot90",
            true,
            |_| Box::new(Rot90 { k: 1, dims: [0, 1] }),
            one,
        ),
        c(
            "narrow_copy",
            true,
            |_| {
                Box::new(NarrowCopy {
                    dim: 1,
                    start: 1,
                    length: 2,
                })
            },
            one,
        ),
    ]
    .into_iter()
    .chain(super::norm_cases::cases())
    .chain(super::complex_cases::cases())
    .collect()
}

fn add_product(product: Product, d: DType) -> Box<dyn Op> {
    Box::new(AddProduct {
        product,
        beta: scalar(0.5, -1.0, d),
        alpha: scalar(-1.5, 0.5, d),
        col_major: [false; 2],
    })
}
