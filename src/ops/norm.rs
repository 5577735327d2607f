//! `linalg.vector_norm` (LinalgVectorNormBackward0): the p-norm of the elements over
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
    fn compute(&self, x: &Tensor) -> Result<Tensor> {
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
    fn weights(&self, x: &Tensor, result: &Tensor) -> Result<Option<Tensor>> {
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
