//! Rule families (DESIGN.md "An op"), as JAX's `defjvp` / `deflinear` do it: an op states
//! one thing (its elementwise derivative, or that it is linear) and gets its rules here.
//!
//! - *elementwise*: a [`Partial`] per input; vjp = `grad * conj(d)`, jvp = `tangent * d`
//!   (torch's conjugate-Wirtinger convention: with the real inner product
//!   `<a, b> = Re(sum(conj(a) * b))`, `<vjp(g), t> == <g, jvp(t)>`);
//! - *linear*: jvp = the op applied to the tangents ([`linear_jvp`], [`bilinear_jvp`]);
//! - batching: [`batch_unary`] keeps the batch dim (shape-preserving ops),
//!   [`batch_broadcast`] moves batch dims to the front and lines the per-example dims up
//!   for broadcasting; reductions and views shift their dims by one after [`to_front`].
//!
//! Everything here is written with differentiable ops (no detach), so the rules
//! themselves can be differentiated.

use smallvec::{smallvec, SmallVec};

use crate::error::Result;
use crate::ops::binary::{add, div, mul};
use crate::ops::unary::{conj, real, to_dtype};
use crate::ops::view::{expand, permute, unsqueeze};
use crate::ops::{BatchCtx, Batched, JvpCtx, Tangents};
use crate::tensor::Tensor;

/// The derivative of an elementwise op's output with respect to one input.
/// `Div(q)` is the derivative `1 / q`, kept as a division so that rules divide where
/// torch's formulas divide (same values, same recorded graph).
#[derive(Clone)]
pub enum Partial {
    Mul(Tensor),
    Div(Tensor),
}

impl Partial {
    /// vjp = grad * conj(d).
    pub fn vjp(&self, g: &Tensor) -> Result<Tensor> {
        match self {
            Partial::Mul(d) => mul(g, &conj(d)?),
            Partial::Div(q) => div(g, &conj(q)?),
        }
    }
    /// jvp = tangent * d.
    pub fn jvp(&self, t: &Tensor) -> Result<Tensor> {
        match self {
            Partial::Mul(d) => mul(t, d),
            Partial::Div(q) => div(t, q),
        }
    }
}

/// The sum of tangent contributions; `None` when every one is zero.
pub fn sum_tangents(
    parts: impl IntoIterator<Item = Result<Option<Tensor>>>,
) -> Result<Option<Tensor>> {
    let mut total: Option<Tensor> = None;
    for part in parts {
        if let Some(p) = part? {
            total = Some(match total {
                Some(t) => add(&t, &p)?,
                None => p,
            });
        }
    }
    Ok(total)
}

/// A tangent brought to an output's shape and dtype (a contribution from one operand of
/// a broadcasting op has that operand's shape, and maybe a narrower dtype).
pub fn fit(t: Tensor, out: &Tensor) -> Result<Tensor> {
    let t = if t.dims() != out.dims() {
        expand(&t, &out.dims())?
    } else {
        t
    };
    if t.dtype() == out.dtype() {
        return Ok(t);
    }
    if t.dtype().is_complex() && !out.dtype().is_complex() {
        return to_dtype(&real(&t)?, out.dtype());
    }
    to_dtype(&t, out.dtype())
}

/// Elementwise family, single output: jvp = sum_i tangent_i * d_i, where `partial(i)`
/// is asked only for inputs that have a tangent.
pub fn elementwise_jvp(
    ctx: &JvpCtx,
    partial: impl Fn(usize) -> Result<Partial>,
) -> Result<Tangents> {
    let total = sum_tangents((0..ctx.tangents.len()).map(|i| match ctx.tangent(i) {
        Some(t) => partial(i)?.jvp(t).map(Some),
        None => Ok(None),
    }))?;
    Ok(smallvec![total
        .map(|t| fit(t, &ctx.outputs[0]))
        .transpose()?])
}

/// Linear family, one differentiable input (input 0): the op applied to its tangent.
pub fn linear_jvp(ctx: &JvpCtx, f: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<Tangents> {
    Ok(smallvec![ctx.tangent(0).map(f).transpose()?])
}

/// Linear in the inputs `linear` together, the others (indices, masks) held fixed (the
/// fills with a tensor value): the op applied to the tangents, zeros standing in for a
/// missing one; no tangent when none of them has one.
pub fn jointly_linear_jvp<O: crate::ops::Op + Clone>(
    ctx: &JvpCtx,
    op: &O,
    linear: &[usize],
) -> Result<Tangents> {
    if linear.iter().all(|&i| ctx.tangent(i).is_none()) {
        return Ok(smallvec![None]);
    }
    let args = ctx
        .primals
        .iter()
        .enumerate()
        .map(|(i, p)| match ctx.tangent(i) {
            Some(t) if linear.contains(&i) => Ok(t.clone()),
            None if linear.contains(&i) => crate::ops::creation::zeros_like(p),
            _ => Ok(p.clone()),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(smallvec![Some(crate::ops::apply1(op.clone(), &args)?)])
}

/// Linear in each of two arguments (matmul, dot): `f(ta, b) + f(a, tb)`.
pub fn bilinear_jvp(
    ctx: &JvpCtx,
    f: impl Fn(&Tensor, &Tensor) -> Result<Tensor>,
) -> Result<Tangents> {
    let (a, b) = (&ctx.primals[0], &ctx.primals[1]);
    let total = sum_tangents([
        ctx.tangent(0).map(|ta| f(ta, b)).transpose(),
        ctx.tangent(1).map(|tb| f(a, tb)).transpose(),
    ])?;
    Ok(smallvec![total])
}

/// `x` with its batch dim moved to the front (unchanged when unbatched or already there).
pub fn to_front(x: &Tensor, bdim: Option<usize>) -> Result<Tensor> {
    match bdim {
        Some(b) if b != 0 => {
            let mut perm: SmallVec<[i64; 6]> = (0..x.dim() as i64).collect();
            perm.remove(b);
            perm.insert(0, b as i64);
            permute(x, &perm)
        }
        _ => Ok(x.clone()),
    }
}

/// `x` with its batch dim in front; an unbatched `x` repeated `batch` times there (a
/// view: for rules whose kernels need every operand batched alike).
pub fn front_or_expand(x: &Tensor, bdim: Option<usize>, batch: usize) -> Result<Tensor> {
    if bdim.is_some() {
        return to_front(x, bdim);
    }
    let u = unsqueeze(x, 0)?;
    let mut shape = u.dims();
    shape[0] = batch;
    crate::ops::view::expand(&u, &shape)
}

/// The batch size of a rule's inputs (1 when none is batched).
pub fn batch_size(ctx: &BatchCtx) -> usize {
    ctx.inputs
        .iter()
        .find_map(|(x, b)| b.map(|b| x.shape()[b]))
        .unwrap_or(1)
}

/// Per-example rank of a batched value.
pub fn logical_rank(x: &Tensor, bdim: Option<usize>) -> usize {
    x.dim() - usize::from(bdim.is_some())
}

/// Shape-preserving single-input ops: apply the op, the batch dim stays where it is.
pub fn batch_unary(ctx: &BatchCtx, f: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<Batched> {
    let (x, b) = &ctx.inputs[0];
    Ok(smallvec![(f(x)?, *b)])
}

/// Batch dims moved to the front; `f` sees the operands and returns a value whose
/// batch dim (if any operand was batched) is at the front.
pub fn batch_front(ctx: &BatchCtx, f: impl FnOnce(&[Tensor]) -> Result<Tensor>) -> Result<Batched> {
    let args: SmallVec<[Tensor; 3]> = ctx
        .inputs
        .iter()
        .map(|(x, b)| to_front(x, *b))
        .collect::<Result<_>>()?;
    let batched = ctx.inputs.iter().any(|(_, b)| b.is_some());
    Ok(smallvec![(f(&args)?, batched.then_some(0))])
}

/// Broadcasting ops: batch dims moved to the front, and batched operands given size-1
/// dims after the batch dim up to the largest per-example rank, so that unbatched
/// operands broadcast against the per-example dims only.
pub fn batch_broadcast(
    ctx: &BatchCtx,
    f: impl FnOnce(&[Tensor]) -> Result<Tensor>,
) -> Result<Batched> {
    let rank = ctx
        .inputs
        .iter()
        .map(|(x, b)| logical_rank(x, *b))
        .max()
        .unwrap_or(0);
    let mut args: SmallVec<[Tensor; 3]> = SmallVec::new();
    for (x, b) in ctx.inputs {
        let mut y = to_front(x, *b)?;
        if b.is_some() {
            while y.dim() < rank + 1 {
                y = unsqueeze(&y, 1)?;
            }
        }
        args.push(y);
    }
    let batched = ctx.inputs.iter().any(|(_, b)| b.is_some());
    Ok(smallvec![(f(&args)?, batched.then_some(0))])
}

/// Forwards built from other ops run on detached inputs with grad mode off: they record
/// no graph and carry no tangent (the op's own rules stand for them).
pub fn composite<R>(inputs: &[Tensor], f: impl FnOnce(&[Tensor]) -> Result<R>) -> Result<R> {
    let _no_grad = crate::autograd::grad_mode::NoGradGuard::new();
    let plain: SmallVec<[Tensor; 3]> = inputs.iter().map(Tensor::alias_detached).collect();
    f(&plain)
}

/// Reduction family batching: the batch dim goes to the front and `rebuild(shift)`
/// gives the op with its dims shifted by `shift` (1 when batched).
pub fn batch_reduction<O: crate::ops::Op>(
    ctx: &BatchCtx,
    rebuild: impl FnOnce(usize) -> O,
) -> Result<Batched> {
    let (x, b) = &ctx.inputs[0];
    let out = crate::ops::apply(rebuild(usize::from(b.is_some())), &[to_front(x, *b)?])?;
    Ok(out.into_iter().map(|o| (o, b.map(|_| 0))).collect())
}
