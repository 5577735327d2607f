//! `scatter_reduce(x, dim, index, src, reduce, include_self)` (ScatterReduceBackward0):
//! src's values combined into a copy of x by sum, prod, mean, amax or amin.
//!
//! Every output element is one position of x combined with the src values scattered
//! to it, so the derivative is a weight per x element and per src element: vjp =
//! (grad * w_self, gather(grad) * w_src) and jvp = t_self * w_self + the src tangents
//! times w_src added at their positions. The weights are torch's
//! scatter_reduce_backward with grad 1: prod is exact through zeros (a single zero in
//! a position's src values gets the product of the others), amax / amin share the
//! gradient evenly among the tied values, and without include_self x's weight is 0
//! where src was scattered.

use smallvec::{smallvec, SmallVec};

use crate::dtype::Scalar;
use crate::error::{Error, Result};
use crate::kernels::kinds::Bitwise;
use crate::kernels::kinds::ScatterReduce;
use crate::ops::binary::{add, compare, compare_scalar, div, mul, where_, Cmp};
use crate::ops::bitwise::logical;
use crate::ops::creation::{ones_like, zeros_like};
use crate::ops::device::{backend, wrap};
use crate::ops::index::{check_index_shape, index_i64, src_for, Scatter};
use crate::ops::linalg::{gather, scatter_into_zeros};
use crate::ops::rules::{batch_size, front_or_expand};
use crate::ops::unary::{conj, to_dtype};
use crate::ops::view::reshape;
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::shape::wrap_dim;
use crate::tensor::Tensor;

#[derive(Clone, Copy)]
pub struct ScatterReduceOp {
    pub dim: usize,
    pub reduce: ScatterReduce,
    pub include_self: bool,
}

fn one(like: &Tensor) -> Tensor {
    Tensor::scalar(Scalar::Int(1), like.dtype())
}

/// `t` with its zeros replaced by 1.
fn zeros_to_one(t: &Tensor, is_zero: &Tensor) -> Result<Tensor> {
    where_(is_zero, &one(t), t)
}

impl ScatterReduceOp {
    fn run(&self, x: &Tensor, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        apply1(*self, &[x.clone(), index.clone(), src.clone()])
    }
    /// `base` plus `v` added at `index` (differentiable in both).
    fn add_at(&self, base: &Tensor, index: &Tensor, v: &Tensor) -> Result<Tensor> {
        add(
            base,
            &scatter_into_zeros(v, self.dim, index, &base.shape())?,
        )
    }

    /// (w_self, w_src); see the module docs.
    fn weights(
        &self,
        x: &Tensor,
        index: &Tensor,
        src: &Tensor,
        result: &Tensor,
    ) -> Result<(Tensor, Tensor)> {
        let dim = self.dim;
        let (w_self, w_src) = match self.reduce {
            ScatterReduce::Sum => (ones_like(x)?, ones_like(src)?),
            ScatterReduce::Mean => {
                let base = if self.include_self {
                    ones_like(result)?
                } else {
                    zeros_like(result)?
                };
                let n = self.add_at(&base, index, &ones_like(src)?)?;
                let n = zeros_to_one(&n, &compare_scalar(&n, Scalar::Int(0), Cmp::Eq)?)?;
                let inv = div(&one(&n), &n)?;
                let w_src = gather(&inv, dim, index)?;
                (inv, w_src)
            }
            ScatterReduce::Amax | ScatterReduce::Amin => {
                let value = gather(result, dim, index)?;
                let self_is = to_dtype(&compare(x, result, Cmp::Eq)?, x.dtype())?;
                let src_is = to_dtype(&compare(src, &value, Cmp::Eq)?, x.dtype())?;
                let n = self.add_at(&self_is, index, &src_is)?;
                let w_src = div(&src_is, &gather(&n, dim, index)?)?;
                (div(&self_is, &n)?, w_src)
            }
            ScatterReduce::Prod => {
                let zero = Scalar::Int(0);
                let masked_self = zeros_to_one(x, &compare_scalar(x, zero, Cmp::Eq)?)?;
                let w_self = div(&self.run(&masked_self, index, src)?, &masked_self)?;
                let src_zero = compare_scalar(src, zero, Cmp::Eq)?;
                let zeros_here =
                    self.add_at(&zeros_like(x)?, index, &to_dtype(&src_zero, x.dtype())?)?;
                let zeros_here = gather(&zeros_here, dim, index)?;
                let single = logical(
                    &src_zero,
                    &compare_scalar(&zeros_here, Scalar::Int(1), Cmp::Eq)?,
                    Bitwise::And,
                )?;
                let others = gather(
                    &self.run(x, index, &zeros_to_one(src, &single)?)?,
                    dim,
                    index,
                )?;
                let by_result = div(&gather(result, dim, index)?, &zeros_to_one(src, &src_zero)?)?;
                (w_self, where_(&single, &others, &by_result)?)
            }
        };
        if self.include_self {
            return Ok((w_self, w_src));
        }
        let written = Scatter {
            dim,
            value: Some(Scalar::Int(0)),
            add: false,
        };
        Ok((apply1(written, &[w_self, index.clone()])?, w_src))
    }
}

impl Op for ScatterReduceOp {
    fn name(&self) -> &'static str {
        "ScatterReduceBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("dim", SavedAttr::Scalar(Scalar::Int(self.dim as i64))),
            (
                "include_self",
                SavedAttr::Scalar(Scalar::Bool(self.include_self)),
            ),
            ("self", SavedAttr::Slot(0)),
            ("index", SavedAttr::Slot(1)),
            ("src", SavedAttr::Slot(2)),
            ("result", SavedAttr::Slot(3)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (x, index, src) = (&inputs[0], &inputs[1], &inputs[2]);
        let out = backend(x)?.scatter_reduce(
            &x.data(),
            self.dim,
            &index.data(),
            &src.data(),
            self.reduce,
            self.include_self,
        )?;
        Ok(smallvec![wrap(out)])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![
            Some(SaveRef::Input(0)),
            Some(SaveRef::Input(1)),
            Some(SaveRef::Input(2)),
            Some(SaveRef::Output(0))
        ]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (x, index, src) = (ctx.saved(0)?, ctx.saved(1)?, ctx.saved(2)?);
        let (w_self, w_src) = self.weights(x, index, src, ctx.saved(3)?)?;
        let g = ctx.grad(0)?;
        let gx = ctx.needs(0).then(|| mul(&g, &conj(&w_self)?)).transpose()?;
        let gsrc = ctx
            .needs(2)
            .then(|| mul(&gather(&g, self.dim, index)?, &conj(&w_src)?))
            .transpose()?;
        Ok(smallvec![gx, None, gsrc])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (x, index, src) = (&ctx.primals[0], &ctx.primals[1], &ctx.primals[2]);
        let (tx, tsrc) = (ctx.tangent(0), ctx.tangent(2));
        if tx.is_none() && tsrc.is_none() {
            return Ok(smallvec![None]);
        }
        let result = &ctx.outputs[0];
        let (w_self, w_src) = self.weights(x, index, src, result)?;
        let from_self = match tx {
            Some(t) => mul(t, &w_self)?,
            None => zeros_like(result)?,
        };
        let out = match tsrc {
            Some(t) => self.add_at(&from_self, index, &mul(t, &w_src)?)?,
            None => from_self,
        };
        Ok(smallvec![Some(out)])
    }
    /// Every operand batched alike (in front), reduced one dim further in.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let batch = batch_size(ctx);
        let args: SmallVec<[Tensor; 3]> = ctx
            .inputs
            .iter()
            .map(|(t, b)| front_or_expand(t, *b, batch))
            .collect::<Result<_>>()?;
        let op = ScatterReduceOp {
            dim: self.dim + 1,
            ..*self
        };
        Ok(smallvec![(apply1(op, &args)?, Some(0))])
    }
}

/// torch's names for the reductions.
pub fn parse_reduce(reduce: &str) -> Result<ScatterReduce> {
    Ok(match reduce {
        "sum" => ScatterReduce::Sum,
        "prod" => ScatterReduce::Prod,
        "mean" => ScatterReduce::Mean,
        "amax" => ScatterReduce::Amax,
        "amin" => ScatterReduce::Amin,
        _ => {
            return Err(Error::runtime(format!(
                "reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
            )))
        }
    })
}

/// The op and its inputs after scatter's checks (torch's order); a 0-dim x (and its index and src) is
/// read as a one-element line.
fn prepare(
    x: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
    reduce: &str,
    include_self: bool,
) -> Result<(ScatterReduceOp, [Tensor; 3])> {
    let dim = wrap_dim(dim, x.dim())?;
    let index = index_i64(index, "scatter", "int32/int64")?;
    check_index_shape(x, dim, &index, Some(src))?;
    if src.dtype() != x.dtype() {
        return Err(Error::runtime(
            "scatter(): Expected self.dtype to be equal to src.dtype",
        ));
    }
    // torch names a bad reduction after scatter's own checks.
    let reduce = parse_reduce(reduce)?;
    let op = ScatterReduceOp {
        dim,
        reduce,
        include_self,
    };
    if x.dim() == 0 {
        let flat = |t: &Tensor| reshape(t, &[t.numel()]);
        return Ok((op, [flat(x)?, flat(&index)?, flat(src)?]));
    }
    let src = src_for(src, &index)?;
    Ok((op, [x.clone(), index, src]))
}

/// `scatter_reduce(x, dim, index, src, reduce, include_self)`.
pub fn scatter_reduce(
    x: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
    reduce: &str,
    include_self: bool,
) -> Result<Tensor> {
    let (op, inputs) = prepare(x, dim, index, src, reduce, include_self)?;
    let out = apply1(op, &inputs)?;
    if x.dim() == 0 {
        return reshape(&out, &[]);
    }
    Ok(out)
}

/// `x.scatter_reduce_(dim, index, src, reduce, include_self)`.
pub fn scatter_reduce_(
    x: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
    reduce: &str,
    include_self: bool,
) -> Result<()> {
    let (op, inputs) = prepare(x, dim, index, src, reduce, include_self)?;
    crate::ops::inplace::apply_inplace(op, &inputs)
}
