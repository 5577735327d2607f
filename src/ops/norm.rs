//! `linalg.vector_norm` (LinalgVectorNormBackward0) and `dist` (DistBackward0, the
//! norm of a difference, with the same weights): the p-norm of the elements over
//! dims, for any real `ord` (0 counts non-zeros, ±inf takes the largest / smallest
//! magnitude). torch.norm, linalg.norm and linalg.matrix_norm's 'fro' / ±1 / ±inf are
//! built on it in python/ferrograd/linalg.py, as torch builds them.
//!
//! The forward is a composite of abs / pow / sum / amax on a detached input; the rules
//! are written once, as the weight `w` each element gets: d norm = sum(Re(conj(w) dx)),
//! so vjp = grad * w and jvp = sum(Re(conj(w) * t)). `w` is torch's
//! linalg_vector_norm_backward with grad 1, built from differentiable ops (double
//! backward works) and without 0 / 0: where the norm is 0 every element of its slice is
//! 0 and the weight is 0, as torch's masked_fill gives.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{promote_types, DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::Reduce;
use crate::ops::binary::{compare, compare_scalar, div, mul, pow_scalar, where_, Cmp};
use crate::ops::extrema::amax_over;
use crate::ops::reduce::{resolve_dims, restore_dims, sum_over, Extreme, Sum};
use crate::ops::rules::{batch_reduction, composite};
use crate::ops::unary::{abs, conj, real, sgn, sqrt, to_dtype};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::shape::{wrap_dim, Dims};
use crate::tensor::Tensor;

#[derive(Clone)]
pub struct VectorNorm {
    pub ord: f64,
    /// The reduced dims (resolved; none for a 0-dim input).
    pub dims: Dims,
    pub keepdim: bool,
    /// The dtype the norm is computed in (`dtype=`), before taking the real part.
    pub dtype: Option<DType>,
    /// The dims as the caller gave them (`_saved_dim`); None when not given.
    pub given_dims: Option<Vec<i64>>,
}

fn scalar(x: f64) -> Scalar {
    Scalar::Float(x)
}

/// `r` with its zeros replaced by 1: a divisor that is safe where the slice is all zeros
/// (the numerators are then 0 too).
fn nonzero_divisor(r: &Tensor) -> Result<Tensor> {
    let is_zero = compare_scalar(r, Scalar::Int(0), Cmp::Eq)?;
    where_(&is_zero, &Tensor::scalar(Scalar::Int(1), r.dtype()), r)
}

impl VectorNorm {
    pub(crate) fn compute(&self, x: &Tensor) -> Result<Tensor> {
        let x = match self.dtype {
            Some(d) if d != x.dtype() => to_dtype(x, d)?,
            _ => x.clone(),
        };
        let (dims, keepdim) = (&self.dims[..], self.keepdim);
        let p = self.ord;
        if p == 2.0 && !x.dtype().is_complex() {
            // |x|^2 is x * x for real x, squared inside the sum's loops.
            let squares = Sum {
                dims: self.dims.clone(),
                keepdim,
                dtype: None,
                full: false,
                mean: false,
            };
            return sqrt(&squares.compute(&x, Reduce::SumOfSquares)?);
        }
        let a = abs(&x)?;
        if p == 0.0 {
            let nonzero = compare_scalar(&a, Scalar::Int(0), Cmp::Ne)?;
            sum_over(&to_dtype(&nonzero, a.dtype())?, dims, keepdim, false)
        } else if p == 1.0 {
            sum_over(&a, dims, keepdim, false)
        } else if p == 2.0 {
            sqrt(&sum_over(&mul(&a, &a)?, dims, keepdim, false)?)
        } else if p == f64::INFINITY {
            amax_over(&a, Extreme::Max, dims, keepdim)
        } else if p == f64::NEG_INFINITY {
            amax_over(&a, Extreme::Min, dims, keepdim)
        } else {
            let powered = sum_over(&pow_scalar(&a, scalar(p))?, dims, keepdim, false)?;
            pow_scalar(&powered, scalar(1.0 / p))
        }
    }

    /// Each element's weight (see the module docs); None for ord 0, whose gradient
    /// torch leaves undefined.
    pub(crate) fn weights(&self, x: &Tensor, result: &Tensor) -> Result<Option<Tensor>> {
        let p = self.ord;
        if p == 0.0 {
            return Ok(None);
        }
        let x = match self.dtype {
            Some(d) if d != x.dtype() => to_dtype(x, d)?,
            _ => x.clone(),
        };
        let r = restore_dims(result, &x.shape(), &self.dims, self.keepdim)?;
        let w = if p == 1.0 {
            sgn(&x)?
        } else if p == 2.0 {
            div(&x, &nonzero_divisor(&r)?)?
        } else if p.is_infinite() {
            // torch shares the gradient evenly among the tied extremes of a slice.
            let mask = to_dtype(&compare(&abs(&x)?, &r, Cmp::Eq)?, r.dtype())?;
            let count = sum_over(&mask, &self.dims, true, false)?;
            mul(&sgn(&x)?, &div(&mask, &count)?)?
        } else if p < 1.0 {
            // |x|^(p-1) is infinite at 0, where sgn(x) is 0: a 1 stands in for |x| there.
            let a = abs(&x)?;
            let zero = compare_scalar(&a, Scalar::Int(0), Cmp::Eq)?;
            let a = where_(&zero, &Tensor::scalar(Scalar::Int(1), a.dtype()), &a)?;
            let scaled = mul(&sgn(&x)?, &pow_scalar(&a, scalar(p - 1.0))?)?;
            mul(&scaled, &pow_scalar(&r, scalar(1.0 - p))?)?
        } else {
            let scaled = if p < 2.0 {
                mul(&sgn(&x)?, &pow_scalar(&abs(&x)?, scalar(p - 1.0))?)?
            } else {
                mul(&x, &pow_scalar(&abs(&x)?, scalar(p - 2.0))?)?
            };
            div(
                &scaled,
                &pow_scalar(&nonzero_divisor(&r)?, scalar(p - 1.0))?,
            )?
        };
        Ok(Some(w))
    }
}

impl Op for VectorNorm {
    fn name(&self) -> &'static str {
        "LinalgVectorNormBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        let mut attrs = vec![
            ("self", SavedAttr::Slot(0)),
            ("result", SavedAttr::Slot(1)),
            ("ord", SavedAttr::Scalar(scalar(self.ord))),
            ("keepdim", SavedAttr::Scalar(Scalar::Bool(self.keepdim))),
        ];
        if let Some(d) = &self.given_dims {
            attrs.push(("dim", SavedAttr::Ints(d.clone())));
        }
        attrs
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |xs| Ok(smallvec![self.compute(&xs[0])?]))
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Output(0))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let x = ctx.saved(0)?;
        let Some(w) = self.weights(x, ctx.saved(1)?)? else {
            return Ok(smallvec![None]);
        };
        let g = restore_dims(&ctx.grad(0)?, &x.shape(), &self.dims, self.keepdim)?;
        Ok(smallvec![Some(mul(&g, &w)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let Some(t) = ctx.tangent(0) else {
            return Ok(smallvec![None]);
        };
        let Some(w) = self.weights(&ctx.primals[0], &ctx.outputs[0])? else {
            return Ok(smallvec![None]);
        };
        let along = real(&mul(&conj(&w)?, t)?)?;
        Ok(smallvec![Some(sum_over(
            &along,
            &self.dims,
            self.keepdim,
            false
        )?)])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| VectorNorm {
            dims: self.dims.iter().map(|&d| d + shift).collect(),
            ..self.clone()
        })
    }
}

/// How torch prints an order in its messages: integral values without a fraction.
fn ord_text(ord: f64) -> String {
    if ord.is_finite() && ord.fract() == 0.0 && ord.abs() < 1e15 {
        format!("{}", ord as i64)
    } else {
        format!("{ord}")
    }
}

/// `dtype=`'s checks for an input of dtype `input` (torch's wording); `op` is the
/// caller's name (linalg.vector_norm / linalg.matrix_norm).
pub fn check_norm_dtype(op: &str, input: DType, dtype: Option<DType>) -> Result<()> {
    if !input.is_floating_point() && !input.is_complex() {
        return Err(Error::not_implemented(format!(
            "{op}: Expected a floating point or complex tensor as input. Got {}",
            input.scalar_type_name()
        )));
    }
    let Some(d) = dtype else { return Ok(()) };
    if input.is_complex() != d.is_complex() {
        let kind = if input.is_complex() {
            "complex"
        } else {
            "real"
        };
        return Err(Error::runtime(format!(
            "{op}: dtype should be {kind} for {kind} inputs, but got {}",
            d.scalar_type_name()
        )));
    }
    if promote_types(input, d) != d {
        return Err(Error::runtime(format!(
            "{op}: the dtype of the input ({}) should be convertible without narrowing to the specified dtype ({})",
            input.scalar_type_name(),
            d.scalar_type_name()
        )));
    }
    Ok(())
}

/// `linalg.vector_norm(x, ord, dim, keepdim, dtype=)`: `dim` None or empty reduces
/// every dim. `caller` names the op in the dtype errors (linalg.matrix_norm calls this).
pub fn vector_norm(
    x: &Tensor,
    ord: f64,
    dim: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<DType>,
    caller: &str,
) -> Result<Tensor> {
    const OP: &str = "linalg.vector_norm";
    check_norm_dtype(caller, x.dtype(), dtype)?;
    let dims = resolve_dims(x, dim)?;
    // Orders below 0 and inf have no identity: an empty slice has no norm.
    if x.numel() == 0 && (ord < 0.0 || ord == f64::INFINITY) {
        let ord = ord_text(ord);
        match dim.filter(|d| !d.is_empty()) {
            None => {
                return Err(Error::runtime(format!(
                    "{OP} cannot compute the {ord} norm on an empty tensor because the operation does not have an identity"
                )))
            }
            Some(given) => {
                for &d in given {
                    if x.shape()[wrap_dim(d, x.dim())?] == 0 {
                        return Err(Error::runtime(format!(
                            "{OP} cannot compute the {ord} norm on the dimension {d}because this dimension is empty and the operation does not have an identity"
                        )));
                    }
                }
            }
        }
    }
    let op = VectorNorm {
        ord,
        dims,
        keepdim,
        dtype,
        given_dims: dim.map(<[i64]>::to_vec),
    };
    apply1(op, std::slice::from_ref(x))
}

/// `dist(a, b, p)`: the p-norm of every element of `a - b` (broadcast), one node with
/// both inputs as torch's DistBackward0; its weights are the norm's, of the difference.
#[derive(Clone, Copy)]
pub struct Dist {
    pub p: f64,
}

impl Dist {
    fn norm_of(&self, diff: &Tensor) -> Result<VectorNorm> {
        Ok(VectorNorm {
            ord: self.p,
            dims: resolve_dims(diff, None)?,
            keepdim: false,
            dtype: None,
            given_dims: None,
        })
    }
}

impl Op for Dist {
    fn name(&self) -> &'static str {
        "DistBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |xs| {
            let diff = crate::ops::binary::sub(&xs[0], &xs[1], Scalar::Int(1))?;
            check_norm_dtype("linalg.vector_norm", diff.dtype(), None)?;
            Ok(smallvec![self.norm_of(&diff)?.compute(&diff)?])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![
            Some(SaveRef::Input(0)),
            Some(SaveRef::Input(1)),
            Some(SaveRef::Output(0))
        ]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let diff = crate::ops::binary::sub(ctx.saved(0)?, ctx.saved(1)?, Scalar::Int(1))?;
        let norm = self.norm_of(&diff)?;
        let Some(w) = norm.weights(&diff, ctx.saved(2)?)? else {
            return Ok(smallvec![None, None]);
        };
        let g = mul(&ctx.grad(0)?, &w)?;
        let other = ctx
            .needs(1)
            .then(|| crate::ops::unary::neg(&g))
            .transpose()?;
        Ok(smallvec![ctx.needs(0).then_some(g), other])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let t = match (ctx.tangent(0), ctx.tangent(1)) {
            (None, None) => return Ok(smallvec![None]),
            (Some(a), None) => a.clone(),
            (None, Some(b)) => crate::ops::unary::neg(b)?,
            (Some(a), Some(b)) => crate::ops::binary::sub(a, b, Scalar::Int(1))?,
        };
        let diff = crate::ops::binary::sub(&ctx.primals[0], &ctx.primals[1], Scalar::Int(1))?;
        let norm = self.norm_of(&diff)?;
        let Some(w) = norm.weights(&diff, &ctx.outputs[0])? else {
            return Ok(smallvec![None]);
        };
        // The tangent may be one side's only: broadcast it to the difference's shape.
        let t = crate::ops::view::expand(&t, &diff.shape())?;
        let along = real(&mul(&conj(&w)?, &t)?)?;
        Ok(smallvec![Some(sum_over(&along, &norm.dims, false, false)?)])
    }
    /// The difference of the aligned operands, normed over each example's elements.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let p = self.p;
        let batched = ctx.inputs.iter().any(|(_, b)| b.is_some());
        crate::ops::rules::batch_broadcast(ctx, |args| {
            if !batched {
                return dist(&args[0], &args[1], p);
            }
            let mut diff = crate::ops::binary::sub(&args[0], &args[1], Scalar::Int(1))?;
            if diff.dim() == 1 {
                diff = crate::ops::view::unsqueeze(&diff, 1)?;
            }
            let dims: Vec<i64> = (1..diff.dim() as i64).collect();
            vector_norm(&diff, p, Some(&dims), false, None, "linalg.vector_norm")
        })
    }
}

pub fn dist(a: &Tensor, b: &Tensor, p: f64) -> Result<Tensor> {
    apply1(Dist { p }, &[a.clone(), b.clone()])
}
