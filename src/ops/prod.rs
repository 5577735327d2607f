//! `prod`: the product over all elements (ProdBackward0) or along one dim
//! (ProdBackward1), with a gradient that stays exact through zeros.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::Result;
use crate::kernels::kinds::Reduce;
use crate::ops::binary::{compare_scalar, div, mul, sub, where_, Cmp};
use crate::ops::device::{backend, wrap};
use crate::ops::reduce::{keepdim_shape, restore_dims, sum_dtype, sum_over};
use crate::ops::rules::{batch_reduction, linear_jvp};
use crate::ops::unary::{conj, to_dtype};
use crate::ops::view::reshape;
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
    /// d prod / d x_i = the product of the other elements of x_i's slice, without
    /// dividing by zero: `result / x_i` where x_i is not zero (its derivatives then
    /// flow through the result), and for a zero x_i the product of the slice's other
    /// elements when none of them is zero (else 0).
    fn others(&self, x: &Tensor, result: &Tensor) -> Result<Tensor> {
        let zero = Scalar::Int(0);
        let is_zero = compare_scalar(x, zero, Cmp::Eq)?;
        let one = Tensor::scalar(Scalar::Int(1), x.dtype());
        let nonzero = where_(&is_zero, &one, x)?;
        let result = restore_dims(result, &x.shape(), &self.dims, self.keepdim)?;
        let zeros = sum_over(&is_zero, &self.dims, true, false)?;
        let no_other_zero = compare_scalar(&sub(&zeros, &is_zero, Scalar::Int(1))?, zero, Cmp::Eq)?;
        let at_zero = where_(
            &no_other_zero,
            &prod_dims(&nonzero, &self.dims, true)?,
            &Tensor::scalar(zero, x.dtype()),
        )?;
        where_(&is_zero, &at_zero, &div(&result, &nonzero)?)
    }
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

fn prod_dims(x: &Tensor, dims: &[usize], keepdim: bool) -> Result<Tensor> {
    apply1(
        Prod {
            dims: dims.into(),
            keepdim,
            dtype: None,
            full: false,
        },
        std::slice::from_ref(x),
    )
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
