//! Bitwise and logical ops (bool or integer results, no history): bitwise_and/or/xor,
//! the shifts, bitwise_not, and logical_and/or/xor/not (any dtype, by nonzero-ness).

use crate::dtype::{result_type, DType, Scalar};
use crate::error::Result;
use crate::kernels::kinds::Bitwise;
use crate::ops::binary::{compare_scalar, wrapped_scalar, Cmp};
use crate::ops::device::{backend, wrap};
use crate::ops::rules::batch_broadcast;
use crate::tensor::Tensor;

/// `a op b` with broadcasting and torch's type promotion; floats refuse.
pub fn bitwise(a: &Tensor, b: &Tensor, op: Bitwise) -> Result<Tensor> {
    let pair = [a.clone(), b.clone()];
    let _range = crate::profiler::named_op_range(op.aten_name(), &pair);
    if crate::functorch::batched::any_batched(&pair) {
        let mut out = crate::functorch::batched::dispatch(&pair, |ctx| {
            batch_broadcast(ctx, |args| bitwise(&args[0], &args[1], op))
        })?;
        return Ok(out.swap_remove(0));
    }
    let dtype = result_type(&[(a.dtype(), a.dim() == 0), (b.dtype(), b.dim() == 0)], &[]);
    Ok(wrap(backend(a)?.bitwise(
        &a.data(),
        &b.data(),
        op,
        dtype,
    )?))
}

/// `a op s` for a Python number `s` (a wrapped 0-dim operand, as torch promotes it).
pub fn bitwise_scalar(a: &Tensor, s: Scalar, op: Bitwise) -> Result<Tensor> {
    bitwise(a, &wrapped_scalar(a, s), op)
}

/// `~x`: logical not of bool, all bits flipped for integers (x ^ -1).
pub fn bitwise_not(x: &Tensor) -> Result<Tensor> {
    match x.dtype() {
        DType::Bool => bitwise_scalar(x, Scalar::Bool(true), Bitwise::Xor),
        d if d.is_floating_point() || d.is_complex() => {
            Err(crate::dtype::unsupported("bitwise_not_cpu", d))
        }
        _ => bitwise_scalar(x, Scalar::Int(-1), Bitwise::Xor),
    }
}

/// Whether each element is nonzero (the truth value logical ops use).
fn truth(x: &Tensor) -> Result<Tensor> {
    if x.dtype() == DType::Bool {
        return Ok(x.clone());
    }
    compare_scalar(x, Scalar::Int(0), Cmp::Ne)
}

/// logical_and / logical_or / logical_xor (bool results for any dtypes).
pub fn logical(a: &Tensor, b: &Tensor, op: Bitwise) -> Result<Tensor> {
    bitwise(&truth(a)?, &truth(b)?, op)
}

pub fn logical_not(x: &Tensor) -> Result<Tensor> {
    compare_scalar(x, Scalar::Int(0), Cmp::Eq)
}
