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
        let dtype = sum_dtype(x.dtype(), self.dtype);
        Ok(smallvec![wrap(backend(x)?.scan(
            &x.data(),
            self.dim,
            Scan::Sum,
            dtype
        )?)])
    }
    /// The sums from each position to the end: cumsum of the reversed gradient.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        if g.dim() == 0 {
            return Ok(smallvec![Some(g)]);
        }
        let dim = [self.dim as i64];
        let reversed = cumsum(&flip(&g, &dim)?, self.dim as i64, None)?;
        Ok(smallvec![Some(flip(&reversed, &dim)?)])
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

pub fn cumsum(x: &Tensor, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
    let dim = crate::shape::wrap_dim(dim, x.dim())?;
    let dim = dim.min(x.dim().saturating_sub(1));
    apply1(Cumsum { dim, dtype }, std::slice::from_ref(x))
}
