//! Cumulative ops along one dim: `cumsum`.

use smallvec::smallvec;

use crate::dtype::{DType, Scalar};
use crate::error::Result;
use crate::kernels::kinds::Scan;
use crate::ops::device::{backend, wrap};
use crate::ops::reduce::sum_dtype;
use crate::ops::rules::{batch_reduction, linear_jvp};
use crate::ops::shape::flip;
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SavedAttr, Tangents, VjpCtx,
};
use crate::tensor::Tensor;

/// `cumsum(x, dim, dtype)` (CumsumBackward0): integer and bool inputs sum in int64.
#[derive(Clone)]
pub struct Cumsum {
    pub dim: usize,
    pub dtype: Option<DType>,
}

impl Op for Cumsum {
    fn name(&self) -> &'static str {
        "CumsumBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("dim", SavedAttr::Scalar(Scalar::Int(self.dim as i64)))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        run_scan(x, self.dim, Scan::Sum, sum_dtype(x.dtype(), self.dtype))
    }
    /// The sums from each position to the end: cumsum of the reversed gradient.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        if g.dim() == 0 {
            return Ok(smallvec![Some(g)]);
        }
        Ok(smallvec![Some(rev_cumsum(&g, self.dim)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| cumsum(t, self.dim as i64, None))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| Cumsum {
            dim: self.dim + shift,
            dtype: self.dtype,
        })
    }
}

/// The inclusive scan `kind` of `x` along `dim`, in `dtype` (every scan op's forward).
pub(crate) fn run_scan(x: &Tensor, dim: usize, kind: Scan, dtype: DType) -> Result<Outputs> {
    Ok(smallvec![wrap(backend(x)?.scan(
        &x.data(),
        dim,
        kind,
        dtype
    )?)])
}

/// The scanned dim of `x` (a 0-dim tensor scans along its one implicit dim 0).
pub(crate) fn scan_dim(x: &Tensor, dim: i64) -> Result<usize> {
    let dim = crate::shape::wrap_dim(dim, x.dim())?;
    Ok(dim.min(x.dim().saturating_sub(1)))
}

pub fn cumsum(x: &Tensor, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
    let dim = scan_dim(x, dim)?;
    apply1(Cumsum { dim, dtype }, std::slice::from_ref(x))
}
pub fn cumsum_(x: &Tensor, dim: i64, dtype: Option<DType>) -> Result<()> {
    let dim = scan_dim(x, dim)?;
    crate::ops::inplace::apply_inplace(Cumsum { dim, dtype }, std::slice::from_ref(x))
}

/// The sums from each position to the end of its line along `dim` (of at least 1-D `g`).
pub(crate) fn rev_cumsum(g: &Tensor, dim: usize) -> Result<Tensor> {
    let d = [dim as i64];
    flip(&cumsum(&flip(g, &d)?, dim as i64, None)?, &d)
}
