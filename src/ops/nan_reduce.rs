//! Reductions that skip NaN (`nansum`, NansumBackward0; `nanmean`, torch's composite
//! nansum / count) and `aminmax` (both extremes in one node, AminmaxBackward0).

use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::Reduce;
use crate::ops::binary::{add, compare, div, mul, Cmp};
use crate::ops::extrema::Amax;
use crate::ops::reduce::{resolve_dims, restore_dims, sum, Extreme, Sum};
use crate::ops::rules::{batch_reduction, linear_jvp};
use crate::ops::{
    apply, apply1, forward, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr,
    Tangents, VjpCtx,
};
use crate::shape::Dims;
use crate::tensor::Tensor;

fn dims_attr(dims: &[usize]) -> (&'static str, SavedAttr) {
    (
        "dim",
        SavedAttr::Ints(dims.iter().map(|&d| d as i64).collect()),
    )
}

/// Where `x` is a number (not NaN).
fn not_nan(x: &Tensor) -> Result<Tensor> {
    compare(x, x, Cmp::Eq)
}

/// `nansum(x, dim, keepdim, dtype)` (NansumBackward0): NaN counts as zero; integer and
/// bool inputs sum in int64.
#[derive(Clone)]
pub struct Nansum {
    pub dims: Dims,
    pub keepdim: bool,
    pub dtype: Option<DType>,
}

impl Nansum {
    fn sum(&self) -> Sum {
        Sum {
            dims: self.dims.clone(),
            keepdim: self.keepdim,
            dtype: self.dtype,
            full: false,
            mean: false,
        }
    }
}

impl Op for Nansum {
    fn name(&self) -> &'static str {
        "NansumBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            dims_attr(&self.dims),
            ("keepdim", SavedAttr::Scalar(Scalar::Bool(self.keepdim))),
            ("self", SavedAttr::Slot(0)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        if x.dtype().is_complex() {
            return Err(Error::not_implemented(
                "nansum on CPU does not support complex inputs",
            ));
        }
        if !x.dtype().is_floating_point() {
            return forward(&self.sum(), inputs);
        }
        // NaN counted as zero inside the sum's loops (no masked copy).
        Ok(smallvec![self.sum().compute(x, Reduce::NanSum)?])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0))]
    }
    /// The gradient everywhere but at the NaNs.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let x = ctx.saved(0)?;
        let g = restore_dims(&ctx.grad(0)?, &x.shape(), &self.dims, self.keepdim)?;
        Ok(smallvec![Some(mul(&g, &not_nan(x)?)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let x = &ctx.primals[0];
        let dtype = ctx.outputs[0].dtype();
        linear_jvp(ctx, |t| {
            let kept = mul(t, &not_nan(x)?)?;
            apply1(
                Sum {
                    dtype: Some(dtype),
                    ..self.sum()
                },
                &[kept],
            )
        })
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| Nansum {
            dims: self.dims.iter().map(|&d| d + shift).collect(),
            ..self.clone()
        })
    }
}

pub fn nansum(
    x: &Tensor,
    dims: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<DType>,
) -> Result<Tensor> {
    let dims = resolve_dims(x, dims)?;
    apply1(
        Nansum {
            dims,
            keepdim,
            dtype,
        },
        std::slice::from_ref(x),
    )
}

/// torch's composite: nansum over the count of numbers (DivBackward0).
pub fn nanmean(
    x: &Tensor,
    dims: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<DType>,
) -> Result<Tensor> {
    let d = x.dtype();
    if !(d.is_floating_point() || d.is_complex()) {
        return Err(Error::not_implemented(format!(
            "nanmean(): expected input to have floating point or complex dtype but got {}",
            d.scalar_type_name()
        )));
    }
    let count = sum(&not_nan(x)?, dims, keepdim, None)?;
    div(&nansum(x, dims, keepdim, dtype)?, &count)
}

// ---------------------------------------------------------------- aminmax

/// `aminmax(x, dim=None, keepdim=False)` (AminmaxBackward0): (min, max), each with
/// amin / amax's rule (the gradient shared evenly among ties).
#[derive(Clone)]
pub struct Aminmax {
    pub dims: Dims,
    pub keepdim: bool,
}

impl Aminmax {
    fn part(&self, which: Extreme) -> Amax {
        Amax {
            which,
            dims: self.dims.clone(),
            keepdim: self.keepdim,
        }
    }
}

const PARTS: [Extreme; 2] = [Extreme::Min, Extreme::Max];

impl Op for Aminmax {
    fn name(&self) -> &'static str {
        "AminmaxBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            dims_attr(&self.dims),
            ("keepdim", SavedAttr::Scalar(Scalar::Bool(self.keepdim))),
            ("self", SavedAttr::Slot(0)),
            ("min", SavedAttr::Slot(1)),
            ("max", SavedAttr::Slot(2)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        if x.dtype().is_complex() {
            return Err(Error::type_error(format!(
                "aminmax not implemented for {}",
                x.dtype().scalar_type_name()
            )));
        }
        let mut out = Outputs::new();
        for which in PARTS {
            out.extend(forward(&self.part(which), inputs)?);
        }
        Ok(out)
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![
            Some(SaveRef::Input(0)),
            Some(SaveRef::Output(0)),
            Some(SaveRef::Output(1))
        ]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let x = ctx.saved(0)?;
        let mut total: Option<Tensor> = None;
        for (j, which) in PARTS.into_iter().enumerate() {
            let Some(g) = &ctx.grads[j] else { continue };
            let part = self.part(which).spread(x, ctx.saved(1 + j)?, g)?;
            total = Some(match total {
                Some(t) => add(&t, &part)?,
                None => part,
            });
        }
        Ok(smallvec![total])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (x, outs) = (&ctx.primals[0], ctx.outputs);
        let Some(t) = ctx.tangent(0) else {
            return Ok(smallvec![None, None]);
        };
        PARTS
            .into_iter()
            .enumerate()
            .map(|(j, which)| self.part(which).pick(x, &outs[j], t).map(Some))
            .collect()
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| Aminmax {
            dims: self.dims.iter().map(|&d| d + shift).collect(),
            keepdim: self.keepdim,
        })
    }
}

/// `aminmax`: over every element (`dim` None; keepdim keeps every dim as size 1) or
/// along one dim, with torch's errors for empty reductions.
pub fn aminmax(x: &Tensor, dim: Option<i64>, keepdim: bool) -> Result<(Tensor, Tensor)> {
    let dims: Dims = match dim {
        None => {
            if x.numel() == 0 {
                return Err(Error::runtime("aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."));
            }
            (0..x.dim()).collect()
        }
        Some(d) => {
            let dims = resolve_dims(x, Some(&[d][..]))?;
            if let Some(&d) = dims.iter().find(|&&d| x.shape()[d] == 0) {
                return Err(Error::index(format!(
                    "aminmax: Expected reduction dim {d} to have non-zero size."
                )));
            }
            dims
        }
    };
    let mut out = apply(Aminmax { dims, keepdim }, std::slice::from_ref(x))?;
    let max = out.swap_remove(1);
    Ok((out.swap_remove(0), max))
}
