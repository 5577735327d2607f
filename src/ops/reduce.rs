//! Reductions: sum, mean, max/min (whole tensor, and along a dim with indices).

use smallvec::{smallvec, SmallVec};

use crate::dtype::{Category, DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::Reduce;
use crate::ops::binary::{div, div_scalar, mul};
use crate::ops::device::{backend, wrap};
use crate::ops::rules::{linear_jvp, logical_rank, to_front};
use crate::ops::view::{expand, reshape};
use crate::ops::{
    apply, apply1, no_batch_rule, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef,
    SavedAttr, Tangents, VjpCtx,
};
use crate::shape::{reduction_dims, Dims};
use crate::tensor::Tensor;

/// Dims to reduce: all when `dims` is None or empty (torch treats `dim=[]` as all). A
/// scalar accepts dim 0 / -1 and has no dim to reduce.
pub(crate) fn resolve_dims(x: &Tensor, dims: Option<&[i64]>) -> Result<Dims> {
    match dims {
        Some(d) if !d.is_empty() => {
            let resolved = reduction_dims(d, x.dim())?;
            Ok(if x.dim() == 0 { Dims::new() } else { resolved })
        }
        _ => Ok((0..x.dim()).collect()),
    }
}

pub(crate) fn keepdim_shape(shape: &[usize], dims: &[usize]) -> Dims {
    shape
        .iter()
        .enumerate()
        .map(|(i, &s)| if dims.contains(&i) { 1 } else { s })
        .collect()
}

/// Integer/bool sums accumulate in int64 (torch's default), floats in their own type.
pub(crate) fn sum_dtype(x: DType, requested: Option<DType>) -> DType {
    requested.unwrap_or(if x.category() <= Category::Integral {
        DType::I64
    } else {
        x
    })
}

fn sum_kernel(x: &Tensor, dims: &[usize], dtype: DType, kind: Reduce) -> Result<Tensor> {
    Ok(wrap(backend(x)?.reduce(&x.data(), dims, kind, dtype)?))
}

/// sum / mean. `full` distinguishes torch's overloads (SumBackward0 vs SumBackward1).
#[derive(Clone)]
pub struct Sum {
    pub dims: Dims,
    pub keepdim: bool,
    pub dtype: Option<DType>,
    pub full: bool,
    pub mean: bool,
}
impl Sum {
    /// The sum (mean) of `kind`'s terms (`Reduce::Sum`, `NanSum` or `SumOfSquares`) of
    /// `x`, without recording: the forward of this op, and of nansum and the 2-norm.
    pub fn compute(&self, x: &Tensor, kind: Reduce) -> Result<Tensor> {
        let dtype = if self.mean {
            let d = self.dtype.unwrap_or(x.dtype());
            if d.category() <= Category::Integral {
                return Err(Error::runtime(format!(
                    "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {}",
                    d.scalar_type_name()
                )));
            }
            d
        } else {
            sum_dtype(x.dtype(), self.dtype)
        };
        let mut out = sum_kernel(x, &self.dims, dtype, kind)?;
        if self.mean {
            let count: usize = self.dims.iter().map(|&d| x.shape()[d]).product();
            let _g = crate::autograd::grad_mode::NoGradGuard::new();
            out = div_scalar(&out, Scalar::Int(count as i64))?;
        }
        if self.keepdim {
            out = out.fresh_with_shape(&keepdim_shape(&x.shape(), &self.dims));
        }
        Ok(out)
    }
}

impl Op for Sum {
    fn name(&self) -> &'static str {
        match (self.mean, self.full) {
            (false, true) => "SumBackward0",
            (false, false) => "SumBackward1",
            (true, true) => "MeanBackward0",
            (true, false) => "MeanBackward1",
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        let mut attrs = vec![("self_sym_sizes", SavedAttr::InputSizes(0))];
        if !self.full {
            attrs.push((
                "dim",
                SavedAttr::Ints(self.dims.iter().map(|&d| d as i64).collect()),
            ));
            attrs.push(("keepdim", SavedAttr::Scalar(Scalar::Bool(self.keepdim))));
        }
        attrs
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        Ok(smallvec![self.compute(&inputs[0], Reduce::Sum)?])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let shape = &ctx.inputs[0].shape;
        let g = restore_dims(&ctx.grad(0)?, shape, &self.dims, self.keepdim)?;
        let mut g = expand(&g, shape)?;
        if self.mean {
            let count: usize = self.dims.iter().map(|&d| shape[d]).product();
            g = div_scalar(&g, Scalar::Int(count as i64))?;
        }
        Ok(smallvec![Some(g)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| apply1(self.clone(), std::slice::from_ref(t)))
    }
    /// Reduction family: the batch dim goes to the front, the reduced dims shift by one.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (x, b) = &ctx.inputs[0];
        if b.is_none() {
            return Ok(smallvec![(
                apply1(self.clone(), std::slice::from_ref(x))?,
                None
            )]);
        }
        let op = Sum {
            dims: self.dims.iter().map(|&d| d + 1).collect(),
            ..self.clone()
        };
        Ok(smallvec![(apply1(op, &[to_front(x, *b)?])?, Some(0))])
    }
}

pub fn sum(
    x: &Tensor,
    dims: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<DType>,
) -> Result<Tensor> {
    let full = dims.is_none();
    let dims = resolve_dims(x, dims)?;
    apply1(
        Sum {
            dims,
            keepdim,
            dtype,
            full,
            mean: false,
        },
        std::slice::from_ref(x),
    )
}

pub fn mean(
    x: &Tensor,
    dims: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<DType>,
) -> Result<Tensor> {
    let full = dims.is_none();
    let dims = resolve_dims(x, dims)?;
    apply1(
        Sum {
            dims,
            keepdim,
            dtype,
            full,
            mean: true,
        },
        std::slice::from_ref(x),
    )
}

/// A reduction's result (or gradient) with its reduced `dims` back as size-1 dims of
/// the input's `shape` (unchanged when the reduction kept them), ready to broadcast.
pub(crate) fn restore_dims(
    r: &Tensor,
    shape: &[usize],
    dims: &[usize],
    keepdim: bool,
) -> Result<Tensor> {
    if keepdim {
        Ok(r.clone())
    } else {
        reshape(r, &keepdim_shape(shape, dims))
    }
}

/// sum (or mean) over already-resolved `dims`, where an empty list reduces nothing
/// (the public `sum` reads `dim=[]` as every dim): for rules of multi-dim reductions.
pub(crate) fn sum_over(x: &Tensor, dims: &[usize], keepdim: bool, mean: bool) -> Result<Tensor> {
    let op = Sum {
        dims: dims.into(),
        keepdim,
        dtype: None,
        full: false,
        mean,
    };
    apply1(op, std::slice::from_ref(x))
}

/// Sum `g` down to `shape` (the engine's broadcast reduction; also expand's rule).
pub fn sum_to_size(g: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if g.shape() == shape {
        return Ok(g.clone());
    }
    let lead = g.dim() - shape.len();
    let mut dims: SmallVec<[i64; 6]> = (0..lead as i64).collect();
    for (i, &s) in shape.iter().enumerate() {
        if s == 1 && g.shape()[lead + i] != 1 {
            dims.push((lead + i) as i64);
        }
    }
    let mut out = if dims.is_empty() {
        g.clone()
    } else {
        sum(g, Some(&dims), false, None)?
    };
    if out.shape() != shape {
        out = reshape(&out, shape)?;
    }
    Ok(out)
}

// ---------------------------------------------------------------- max / min

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Extreme {
    Max,
    Min,
}

impl Extreme {
    fn kind(self) -> Reduce {
        match self {
            Extreme::Max => Reduce::Max,
            Extreme::Min => Reduce::Min,
        }
    }
}

/// max()/min() over all elements (MaxBackward1 / MinBackward1): the gradient is shared
/// evenly among tied maxima.
pub struct ExtremeAll {
    pub which: Extreme,
}
impl Op for ExtremeAll {
    fn name(&self) -> &'static str {
        match self.which {
            Extreme::Max => "MaxBackward1",
            Extreme::Min => "MinBackward1",
        }
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        if x.numel() == 0 {
            return Err(Error::runtime(format!(
                "{}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.",
                if self.which == Extreme::Max { "max" } else { "min" }
            )));
        }
        let dims: Dims = (0..x.dim()).collect();
        let out = backend(x)?.reduce(&x.data(), &dims, self.which.kind(), x.dtype())?;
        Ok(smallvec![wrap(out)])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Output(0))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (x, r) = (ctx.saved(0)?, ctx.saved(1)?);
        let mask = crate::ops::binary::compare(x, r, crate::ops::binary::Cmp::Eq)?;
        let count = sum(&mask, None, false, None)?;
        let g = div(&ctx.grad(0)?, &count)?;
        Ok(smallvec![Some(mul(&mask, &g)?)])
    }
    /// The mean of the tangent over the tied extrema (the transpose of the vjp).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (x, r) = (&ctx.primals[0], &ctx.outputs[0]);
        linear_jvp(ctx, |t| {
            let mask = crate::ops::binary::compare(x, r, crate::ops::binary::Cmp::Eq)?;
            let count = sum(&mask, None, false, None)?;
            div(&sum(&mul(t, &mask)?, None, false, None)?, &count)
        })
    }
    /// Each example flattened, then reduced along that one dim.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (x, b) = &ctx.inputs[0];
        let Some(bd) = *b else {
            return Ok(smallvec![(extreme_all(x, self.which)?, None)]);
        };
        let flat = reshape(
            &to_front(x, *b)?,
            &[x.shape()[bd], x.numel() / x.shape()[bd].max(1)],
        )?;
        Ok(smallvec![(
            extreme_dim(&flat, self.which, 1, false)?.0,
            Some(0)
        )])
    }
}

/// max(dim)/min(dim) returning (values, indices) (MaxBackward0 / MinBackward0).
pub struct ExtremeDim {
    pub which: Extreme,
    pub dim: usize,
    pub keepdim: bool,
}
impl Op for ExtremeDim {
    fn name(&self) -> &'static str {
        match self.which {
            Extreme::Max => "MaxBackward0",
            Extreme::Min => "MinBackward0",
        }
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        let dims = [self.dim];
        if x.dim() > 0 && x.shape()[self.dim] == 0 {
            return Err(Error::index(format!(
                "{}(): Expected reduction dim {} to have non-zero size.",
                if self.which == Extreme::Max {
                    "max"
                } else {
                    "min"
                },
                self.dim
            )));
        }
        let dims: &[usize] = if x.dim() == 0 { &[] } else { &dims };
        let (values, indices) =
            backend(x)?.reduce_with_index(&x.data(), dims, self.which.kind())?;
        let (mut values, mut indices) = (wrap(values), wrap(indices));
        if self.keepdim {
            let shape = keepdim_shape(&x.shape(), dims);
            values = values.fresh_with_shape(&shape);
            indices = indices.fresh_with_shape(&shape);
        }
        Ok(smallvec![values, indices])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Output(1))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = crate::ops::sort::picked_vjp(ctx, self.dim, !self.keepdim)?;
        Ok(smallvec![Some(g)])
    }
    /// The tangent at the chosen indices; the indices have none.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        crate::ops::sort::picked_jvp(ctx, self.dim, !self.keepdim)
    }
    /// Reduction family: the batch dim goes to the front, the reduced dim shifts by one.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (x, b) = &ctx.inputs[0];
        if b.is_some() && logical_rank(x, *b) == 0 {
            return Err(no_batch_rule(self.name()));
        }
        let shift = usize::from(b.is_some());
        let op = ExtremeDim {
            which: self.which,
            dim: self.dim + shift,
            keepdim: self.keepdim,
        };
        let bdim = b.map(|_| 0);
        let out = apply(op, &[to_front(x, *b)?])?;
        Ok(out.into_iter().map(|o| (o, bdim)).collect())
    }
}

pub fn extreme_all(x: &Tensor, which: Extreme) -> Result<Tensor> {
    apply1(ExtremeAll { which }, std::slice::from_ref(x))
}

pub fn extreme_dim(
    x: &Tensor,
    which: Extreme,
    dim: i64,
    keepdim: bool,
) -> Result<(Tensor, Tensor)> {
    let d = crate::shape::wrap_dim(dim, x.dim())?;
    let mut out = apply(
        ExtremeDim {
            which,
            dim: d,
            keepdim,
        },
        std::slice::from_ref(x),
    )?;
    let idx = out.pop().expect("two outputs");
    let val = out.pop().expect("two outputs");
    Ok((val, idx))
}
