//! `prod`: the product over all elements (ProdBackward0) or along one dim
//! (ProdBackward1), with a gradient that stays exact through zeros.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::Result;
use crate::kernels::kinds::Reduce;
use crate::ops::binary::{compare_scalar, div, mul, Cmp};
use crate::ops::cumulative::cumprod;
use crate::ops::device::{any_true, backend, wrap};
use crate::ops::join::cat;
use crate::ops::reduce::{keepdim_shape, restore_dims, sum_dtype, sum_over};
use crate::ops::rules::{batch_reduction, linear_jvp};
use crate::ops::shape::flip;
use crate::ops::unary::{conj, to_dtype};
use crate::ops::view::{expand, narrow, reshape};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::shape::Dims;
use crate::tensor::Tensor;

#[derive(Clone)]
pub struct Prod {
    /// The reduced dims: every dim for the full product, else one.
    pub dims: Dims,
    pub keepdim: bool,
    pub dtype: Option<DType>,
    pub full: bool,
}

impl Prod {
    /// d prod / d x_i = the product of the other elements of x_i's slice, as torch's
    /// prod_backward: `result / x_i` when no element is zero (its derivatives then flow
    /// through the result), else the exclusive products from the left and from the right,
    /// which are exact through any number of zeros to every order (torch's
    /// prod_safe_zeros_backward). A vmap wrapper is not read: it takes the second form.
    fn others(&self, x: &Tensor, result: &Tensor) -> Result<Tensor> {
        if self.dims.is_empty() {
            return ones_like_shape(x);
        }
        let has_zero = x.is_batched() || any_true(&compare_scalar(x, Scalar::Int(0), Cmp::Eq)?)?;
        if !has_zero {
            let result = restore_dims(result, &x.shape(), &self.dims, self.keepdim)?;
            return div(&result, x);
        }
        if self.dims.len() == 1 {
            return exclusive_products(x, self.dims[0]);
        }
        let line = reshape(x, &[x.numel()])?;
        reshape(&exclusive_products(&line, 0)?, &x.shape())
    }
}

/// A tensor of ones with `x`'s shape and dtype (an expanded scalar).
fn ones_like_shape(x: &Tensor) -> Result<Tensor> {
    expand(&Tensor::scalar(Scalar::Int(1), x.dtype()), &x.shape())
}

/// The product of the other elements of each element's line along `dim`: the cumprod of
/// the elements before it times the cumprod of those after it, each built with
/// differentiable ops only.
fn exclusive_products(x: &Tensor, dim: usize) -> Result<Tensor> {
    let n = x.shape()[dim];
    if n == 0 {
        return ones_like_shape(x);
    }
    let mut edge: Dims = Dims::from_slice(&x.shape());
    edge[dim] = 1;
    let ones = expand(&Tensor::scalar(Scalar::Int(1), x.dtype()), &edge)?;
    let d = dim as i64;
    let last = (n - 1) as i64;
    let before = cat(&[ones.clone(), narrow(x, d, 0, last)?], d)?;
    let after = cat(&[ones, flip(&narrow(x, d, 1, last)?, &[d])?], d)?;
    let left = cumprod(&before, d, None)?;
    let right = flip(&cumprod(&after, d, None)?, &[d])?;
    mul(&left, &right)
}

impl Op for Prod {
    fn name(&self) -> &'static str {
        if self.full {
            "ProdBackward0"
        } else {
            "ProdBackward1"
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        let mut attrs = vec![("self", SavedAttr::Slot(0)), ("result", SavedAttr::Slot(1))];
        if !self.full {
            attrs.push(("dim", SavedAttr::Scalar(Scalar::Int(self.dims[0] as i64))));
            attrs.push(("keepdim", SavedAttr::Scalar(Scalar::Bool(self.keepdim))));
        }
        attrs
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        let dtype = sum_dtype(x.dtype(), self.dtype);
        let mut out = wrap(backend(x)?.reduce(&x.data(), &self.dims, Reduce::Prod, dtype)?);
        if self.keepdim {
            out = out.fresh_with_shape(&keepdim_shape(&x.shape(), &self.dims));
        }
        Ok(smallvec![out])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Output(0))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let x = to_dtype(ctx.saved(0)?, g.dtype())?;
        let others = self.others(&x, ctx.saved(1)?)?;
        let g = restore_dims(&g, &x.shape(), &self.dims, self.keepdim)?;
        Ok(smallvec![Some(mul(&g, &conj(&others)?)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let out = &ctx.outputs[0];
        linear_jvp(ctx, |t| {
            let x = to_dtype(&ctx.primals[0], out.dtype())?;
            let picked = mul(t, &self.others(&x, out)?)?;
            reshape(&sum_over(&picked, &self.dims, true, false)?, &out.shape())
        })
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| Prod {
            dims: self.dims.iter().map(|&d| d + shift).collect(),
            ..self.clone()
        })
    }
}

/// `prod(x)` over every element, or along `dim`.
pub fn prod(x: &Tensor, dim: Option<i64>, keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
    let dims: Dims = match dim {
        None => (0..x.dim()).collect(),
        Some(d) if x.dim() == 0 => {
            crate::shape::wrap_dim(d, 1)?;
            Dims::new()
        }
        Some(d) => smallvec![crate::shape::wrap_dim(d, x.dim())?],
    };
    apply1(
        Prod {
            dims,
            keepdim: keepdim && dim.is_some(),
            dtype,
            full: dim.is_none(),
        },
        std::slice::from_ref(x),
    )
}
