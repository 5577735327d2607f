//! Joining tensors: `cat` and `stack`. Its gradient is the slices of the incoming gradient, its
//! tangent the join of the tangents, and its batching rule a join one dim further in.

use smallvec::{smallvec, SmallVec};

use crate::dtype::result_type;
use crate::error::{Error, Result};
use crate::ops::device::{backend, wrap};
use crate::ops::rules::{batch_size, composite, front_or_expand};
use crate::ops::view::{select, unsqueeze};
use crate::ops::{apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, Tangents, VjpCtx};
use crate::shape::{wrap_dim, Dims};
use crate::storage::Data;
use crate::tensor::Tensor;

/// torch skips 1-d empty tensors in `cat` whatever the other shapes (legacy behaviour).
fn skipped(t: &Tensor) -> bool {
    t.dim() == 1 && t.numel() == 0
}

/// The joined shape, after torch's checks (`dim` already wrapped).
fn cat_shape(inputs: &[Tensor], dim: usize) -> Result<Dims> {
    let Some(first) = inputs.iter().find(|t| !skipped(t)) else {
        return Ok(Dims::from_slice(&[0]));
    };
    let mut shape = first.dims();
    shape[dim] = 0;
    for (i, t) in inputs.iter().enumerate() {
        if skipped(t) {
            continue;
        }
        if t.dim() != shape.len() {
            return Err(Error::runtime(format!(
                "Tensors must have same number of dimensions: got {} and {}",
                shape.len(),
                t.dim()
            )));
        }
        for (d, (&want, &got)) in first.shape().iter().zip(t.shape().iter()).enumerate() {
            if d != dim && want != got {
                return Err(Error::runtime(format!(
                    "Sizes of tensors must match except in dimension {dim}. Expected size {want} but got size {got} for tensor number {i} in the list."
                )));
            }
        }
        shape[dim] += t.shape()[dim];
    }
    Ok(shape)
}

/// A join's tangent: the same join of the inputs' tangents, zeros for missing ones.
fn join_tangents(ctx: &JvpCtx, join: impl FnOnce(&[Tensor]) -> Result<Tensor>) -> Result<Tangents> {
    if ctx.tangents.iter().all(Option::is_none) {
        return Ok(smallvec![None]);
    }
    let parts: Vec<Tensor> = ctx
        .primals
        .iter()
        .enumerate()
        .map(|(i, p)| match ctx.tangent(i) {
            Some(t) => Ok(t.clone()),
            None => crate::ops::creation::zeros_like(p),
        })
        .collect::<Result<_>>()?;
    Ok(smallvec![Some(join(&parts)?)])
}

/// A join's batching rule: batch dims in front (unbatched inputs expanded), then `join`
/// (one dim further in).
fn join_batched(ctx: &BatchCtx, join: impl FnOnce(&[Tensor]) -> Result<Tensor>) -> Result<Batched> {
    let batch = batch_size(ctx);
    let parts: Vec<Tensor> = ctx
        .inputs
        .iter()
        .map(|(x, b)| front_or_expand(x, *b, batch))
        .collect::<Result<_>>()?;
    Ok(smallvec![(join(&parts)?, Some(0))])
}

pub struct Cat {
    pub dim: usize,
}

impl Op for Cat {
    fn name(&self) -> &'static str {
        "CatBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let shape = cat_shape(inputs, self.dim)?;
        let dtypes: SmallVec<[_; 4]> = inputs.iter().map(|t| (t.dtype(), false)).collect();
        let parts: Vec<Data> = inputs
            .iter()
            .filter(|t| !skipped(t))
            .map(|t| t.data().clone())
            .collect();
        // One strided copy per part into its slice of the output (Note: strided copies).
        let be = backend(&inputs[0])?;
        let out = be.cat(&parts, self.dim, &shape, result_type(&dtypes, &[]))?;
        Ok(smallvec![wrap(out)])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let mut start = 0i64;
        let mut grads = Grads::new();
        for (i, meta) in ctx.inputs.iter().enumerate() {
            if meta.shape.len() == 1 && meta.shape[0] == 0 {
                grads.push(
                    ctx.needs(i)
                        .then(|| Tensor::zeros(&[0], meta.dtype))
                        .transpose()?,
                );
                continue;
            }
            let n = meta.shape[self.dim] as i64;
            grads.push(if ctx.needs(i) {
                Some(crate::ops::view::narrow(&g, self.dim as i64, start, n)?)
            } else {
                None
            });
            start += n;
        }
        Ok(grads)
    }
    /// The join of the tangents, zeros standing for missing ones.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        join_tangents(ctx, |parts| cat(parts, self.dim as i64))
    }
    /// Batch dims in front (unbatched inputs expanded), joined one dim further in.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        join_batched(ctx, |parts| cat(parts, self.dim as i64 + 1))
    }
}

/// `cat(tensors, dim)`.
pub fn cat(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
    let Some(first) = tensors.iter().find(|t| !skipped(t)).or(tensors.first()) else {
        return Err(Error::value(
            "torch.cat(): expected a non-empty list of Tensors",
        ));
    };
    if let Some(i) = tensors.iter().position(|t| t.dim() == 0) {
        return Err(Error::runtime(format!(
            "zero-dimensional tensor (at position {i}) cannot be concatenated"
        )));
    }
    let dim = wrap_dim(dim, first.dim())?;
    apply1(Cat { dim }, tensors)
}

/// `stack(tensors, dim)` (StackBackward0): the tensors joined along a new dim.
pub struct Stack {
    pub dim: usize,
}

impl Op for Stack {
    fn name(&self) -> &'static str {
        "StackBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let out = composite(inputs, |parts| {
            let parts: Vec<Tensor> = parts
                .iter()
                .map(|t| unsqueeze(t, self.dim as i64))
                .collect::<Result<_>>()?;
            cat(&parts, self.dim as i64)
        })?;
        Ok(smallvec![out])
    }
    /// Each input's slice of the gradient.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        (0..ctx.inputs.len())
            .map(|i| {
                ctx.needs(i)
                    .then(|| select(&g, self.dim as i64, i as i64))
                    .transpose()
            })
            .collect()
    }
    /// The stack of the tangents, zeros standing for missing ones.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        join_tangents(ctx, |parts| stack(parts, self.dim as i64))
    }
    /// Batch dims in front (unbatched inputs expanded), stacked one dim further in.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        join_batched(ctx, |parts| stack(parts, self.dim as i64 + 1))
    }
}

/// `stack(tensors, dim)`: every tensor of one shape.
pub fn stack(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
    let Some(first) = tensors.first() else {
        return Err(Error::runtime("stack expects a non-empty TensorList"));
    };
    for (i, t) in tensors.iter().enumerate().skip(1) {
        if t.shape() != first.shape() {
            return Err(Error::runtime(format!(
                "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {i}",
                crate::shape::fmt_dims(&first.shape()),
                crate::shape::fmt_dims(&t.shape())
            )));
        }
    }
    let dim = wrap_dim(dim, first.dim() + 1)?;
    apply1(Stack { dim }, tensors)
}
