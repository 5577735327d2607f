//! Classification of values: isnan, isinf, isfinite, isposinf, isneginf (bool results,
//! no history), built from comparisons.

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::ops::binary::{compare, compare_scalar, sub, Cmp};
use crate::ops::creation::full;
use crate::ops::unary::abs;
use crate::tensor::Tensor;

fn all(x: &Tensor, value: bool) -> Result<Tensor> {
    full(&x.shape(), Scalar::Bool(value), DType::Bool)
}

fn has_infinities(x: &Tensor) -> bool {
    x.dtype().is_floating_point() || x.dtype().is_complex()
}

/// NaN is the one value unequal to itself.
pub fn isnan(x: &Tensor) -> Result<Tensor> {
    compare(x, x, Cmp::Ne)
}

pub fn isinf(x: &Tensor) -> Result<Tensor> {
    if !has_infinities(x) {
        return all(x, false);
    }
    compare_scalar(&abs(x)?, Scalar::Float(f64::INFINITY), Cmp::Eq)
}

/// x - x is 0 exactly when x is finite (inf - inf and NaN give NaN).
pub fn isfinite(x: &Tensor) -> Result<Tensor> {
    if !has_infinities(x) {
        return all(x, true);
    }
    compare_scalar(&sub(x, x, Scalar::Int(1))?, Scalar::Int(0), Cmp::Eq)
}

/// isposinf (`negative: false`) / isneginf.
pub fn is_signed_inf(x: &Tensor, negative: bool) -> Result<Tensor> {
    let name = if negative { "isneginf" } else { "isposinf" };
    if x.dtype().is_complex() {
        return Err(Error::type_error(format!(
            "{name} does not support complex inputs."
        )));
    }
    if !has_infinities(x) {
        return all(x, false);
    }
    let inf = if negative {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    compare_scalar(x, Scalar::Float(inf), Cmp::Eq)
}

pub fn isposinf(x: &Tensor) -> Result<Tensor> {
    is_signed_inf(x, false)
}
pub fn isneginf(x: &Tensor) -> Result<Tensor> {
    is_signed_inf(x, true)
}
