//! Extreme values: `amax` / `amin` over dims, `argmax` / `argmin`, and the elementwise
//! `maximum` / `minimum` / `fmax` / `fmin` of two tensors.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{result_type, DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::Extremum;
use crate::ops::binary::{compare, div, mul, where_, Cmp};
use crate::ops::device::{backend, wrap};
use crate::ops::reduce::{
    extreme_dim, keepdim_shape, resolve_dims, restore_dims, sum_over, Extreme,
};
use crate::ops::rules::{batch_broadcast, batch_reduction, elementwise_jvp, linear_jvp, Partial};
use crate::ops::view::reshape;
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::shape::Dims;
use crate::tensor::Tensor;

/// `amax` / `amin` over `dims` (AmaxBackward0 / AminBackward0): the gradient is shared
/// evenly among the tied extrema of each reduced slice.
#[derive(Clone)]
pub struct Amax {
    pub which: Extreme,
    pub dims: Dims,
    pub keepdim: bool,
}

impl Amax {
    fn op_name(&self) -> &'static str {
        match self.which {
            Extreme::Max => "amax",
            Extreme::Min => "amin",
        }
    }
    /// Where `x` equals its slice's extreme, and how many such elements each slice has.
    fn ties(&self, x: &Tensor, r: &Tensor) -> Result<(Tensor, Tensor)> {
        let r = restore_dims(r, &x.shape(), &self.dims, self.keepdim)?;
        let mask = compare(x, &r, Cmp::Eq)?;
        let count = sum_over(&mask, &self.dims, true, false)?;
        Ok((mask, count))
    }
    /// The vjp for result `r` of `x`: `g` shared evenly among each slice's tied extrema
    /// (aminmax's rule too).
    pub(crate) fn spread(&self, x: &Tensor, r: &Tensor, g: &Tensor) -> Result<Tensor> {
        let (mask, count) = self.ties(x, r)?;
        let g = restore_dims(g, &x.shape(), &self.dims, self.keepdim)?;
        mul(&div(&g, &count)?, &mask)
    }
    /// The jvp: the mean of the tangent `t` over each slice's tied extrema.
    pub(crate) fn pick(&self, x: &Tensor, r: &Tensor, t: &Tensor) -> Result<Tensor> {
        let (mask, count) = self.ties(x, r)?;
        let picked = sum_over(&mul(t, &mask)?, &self.dims, true, false)?;
        let mean = div(&picked, &count)?;
        if self.keepdim {
            Ok(mean)
        } else {
            reshape(&mean, &r.shape())
        }
    }
}

impl Op for Amax {
    fn name(&self) -> &'static str {
        match self.which {
            Extreme::Max => "AmaxBackward0",
            Extreme::Min => "AminBackward0",
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            (
                "dim",
                SavedAttr::Ints(self.dims.iter().map(|&d| d as i64).collect()),
            ),
            ("keepdim", SavedAttr::Scalar(Scalar::Bool(self.keepdim))),
            ("self", SavedAttr::Slot(0)),
            ("result", SavedAttr::Slot(1)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        if x.dtype().is_complex() {
            let kernel = match self.which {
                Extreme::Max => "max_values_cpu",
                Extreme::Min => "min_values_cpu",
            };
            return Err(crate::dtype::unsupported(kernel, x.dtype()));
        }
        let shape = x.shape();
        if let Some(&d) = self.dims.iter().find(|&&d| shape[d] == 0) {
            return Err(Error::index(format!(
                "{}(): Expected reduction dim {d} to have non-zero size.",
                self.op_name()
            )));
        }
        let kind = match self.which {
            Extreme::Max => crate::kernels::kinds::Reduce::Max,
            Extreme::Min => crate::kernels::kinds::Reduce::Min,
        };
        let mut out = wrap(backend(x)?.reduce(&x.data(), &self.dims, kind, x.dtype())?);
        if self.keepdim {
            out = out.fresh_with_shape(&keepdim_shape(&shape, &self.dims));
        }
        Ok(smallvec![out])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Output(0))]
    }
    /// torch's scale_grad_by_count: grad / (ties per slice), at the tied positions.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (x, r) = (ctx.saved(0)?, ctx.saved(1)?);
        Ok(smallvec![Some(self.spread(x, r, &ctx.grad(0)?)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (x, r) = (&ctx.primals[0], &ctx.outputs[0]);
        linear_jvp(ctx, |t| self.pick(x, r, t))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| Amax {
            dims: self.dims.iter().map(|&d| d + shift).collect(),
            ..self.clone()
        })
    }
}

/// `amax(x, dim, keepdim)` / `amin`: `dims` None or empty reduces every dim.
/// `amax` / `amin` over already-resolved `dims` (none: nothing reduced).
pub(crate) fn amax_over(
    x: &Tensor,
    which: Extreme,
    dims: &[usize],
    keepdim: bool,
) -> Result<Tensor> {
    let op = Amax {
        which,
        dims: dims.into(),
        keepdim,
    };
    apply1(op, std::slice::from_ref(x))
}

pub fn amax(x: &Tensor, which: Extreme, dims: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
    let op = Amax {
        which,
        dims: resolve_dims(x, dims)?,
        keepdim,
    };
    if x.numel() == 0 && dims.is_none_or(|d| d.is_empty()) {
        return Err(Error::runtime(format!(
            "{}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.",
            op.op_name()
        )));
    }
    apply1(op, std::slice::from_ref(x))
}

/// `argmax` / `argmin`: the index of the extreme along `dim`, or in the flattened
/// tensor when `dim` is None (then `keepdim` gives every dim size 1). Ties pick the
/// first; NaN counts as the extreme.
pub fn arg_extreme(x: &Tensor, which: Extreme, dim: Option<i64>, keepdim: bool) -> Result<Tensor> {
    let name = match which {
        Extreme::Max => "argmax",
        Extreme::Min => "argmin",
    };
    if x.dtype().is_complex() {
        return Err(Error::type_error(format!(
            "{name}(): does not support complex input"
        )));
    }
    let _no_grad = crate::autograd::grad_mode::NoGradGuard::new();
    match dim {
        None => {
            if x.numel() == 0 {
                return Err(Error::index(format!(
                    "{name}(): Expected reduction dim to be specified for input.numel() == 0."
                )));
            }
            let flat = reshape(x, &[x.numel()])?;
            let idx = extreme_dim(&flat, which, 0, false)?.1;
            if keepdim {
                reshape(&idx, &vec![1; x.dim()])
            } else {
                Ok(idx)
            }
        }
        Some(d) => {
            let wrapped = crate::shape::wrap_dim(d, x.dim())?;
            if x.dim() == 0 {
                // A scalar's only element, at index 0 (as a one-element line).
                let idx = extreme_dim(&reshape(x, &[1])?, which, 0, false)?.1;
                return reshape(&idx, &[]);
            }
            if x.shape()[wrapped] == 0 {
                return Err(Error::index(format!(
                    "{name}(): Expected reduction dim {wrapped} to have non-zero size."
                )));
            }
            Ok(extreme_dim(x, which, d, keepdim)?.1)
        }
    }
}

// ---------------------------------------------------------------- maximum / minimum

/// `maximum(a, b)` and kin, elementwise with broadcasting. A tie sends half the
/// gradient to each side for maximum/minimum and all of it to `a` for fmax/fmin
/// (torch's formulas); a NaN result's gradient goes where the NaN came from.
pub struct Pairwise(pub Extremum);

impl Pairwise {
    /// The share of the gradient that goes to `a` (b gets the rest), as a float mask.
    fn weight_a(&self, a: &Tensor, b: &Tensor, dtype: DType) -> Result<Tensor> {
        let w = |v: f64| Tensor::scalar(Scalar::Float(v), dtype);
        match self.0 {
            Extremum::Maximum | Extremum::Minimum => {
                let loses = if self.0 == Extremum::Maximum {
                    Cmp::Lt
                } else {
                    Cmp::Gt
                };
                let tie = where_(&compare(a, b, Cmp::Eq)?, &w(0.5), &w(1.0))?;
                where_(&compare(a, b, loses)?, &w(0.0), &tie)
            }
            // All of it to `a` where `a` is at least as good as `b`, or `b` is NaN.
            Extremum::Fmax | Extremum::Fmin => {
                let holds = if self.0 == Extremum::Fmax {
                    Cmp::Ge
                } else {
                    Cmp::Le
                };
                let to_a = where_(&compare(a, b, holds)?, &w(1.0), &w(0.0))?;
                where_(&compare(b, b, Cmp::Ne)?, &w(1.0), &to_a)
            }
        }
    }
    fn partials(&self, a: &Tensor, b: &Tensor, dtype: DType) -> Result<(Partial, Partial)> {
        let wa = self.weight_a(a, b, dtype)?;
        let wb = crate::ops::binary::sub_scalar_rev(Scalar::Int(1), &wa)?;
        Ok((Partial::Mul(wa), Partial::Mul(wb)))
    }
}

impl Op for Pairwise {
    fn name(&self) -> &'static str {
        match self.0 {
            Extremum::Maximum => "MaximumBackward0",
            Extremum::Minimum => "MinimumBackward0",
            Extremum::Fmax => "FmaxBackward0",
            Extremum::Fmin => "FminBackward0",
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("self", SavedAttr::Slot(0)), ("other", SavedAttr::Slot(1))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (a, b) = (&inputs[0], &inputs[1]);
        let dtype = result_type(&[(a.dtype(), a.dim() == 0), (b.dtype(), b.dim() == 0)], &[]);
        Ok(smallvec![wrap(backend(a)?.extremum(
            &a.data(),
            &b.data(),
            self.0,
            dtype
        )?)])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Input(1))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let (pa, pb) = self.partials(ctx.saved(0)?, ctx.saved(1)?, g.dtype())?;
        Ok(smallvec![
            ctx.needs(0).then(|| pa.vjp(&g)).transpose()?,
            ctx.needs(1).then(|| pb.vjp(&g)).transpose()?,
        ])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let dtype = ctx.outputs[0].dtype();
        let (pa, pb) = self.partials(&ctx.primals[0], &ctx.primals[1], dtype)?;
        elementwise_jvp(ctx, |i| Ok(if i == 0 { pa.clone() } else { pb.clone() }))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_broadcast(ctx, |args| pairwise(&args[0], &args[1], self.0))
    }
}

pub fn pairwise(a: &Tensor, b: &Tensor, op: Extremum) -> Result<Tensor> {
    apply1(Pairwise(op), &[a.clone(), b.clone()])
}
