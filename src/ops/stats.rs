//! `var` / `std` over dims with a `correction` (Bessel's is 1), and `var_mean` /
//! `std_mean`, which also return the mean. Complex inputs give real variances.

use smallvec::{smallvec, SmallVec};

use crate::dtype::Scalar;
use crate::error::{Error, Result};
use crate::ops::binary::{compare_scalar, div, div_scalar, mul, mul_scalar, sub, where_, Cmp};
use crate::ops::reduce::{restore_dims, sum_over};
use crate::ops::rules::{batch_reduction, composite, sum_tangents};
use crate::ops::unary::{conj, real, sqrt};
use crate::ops::view::expand;
use crate::ops::{
    apply, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::shape::Dims;
use crate::tensor::Tensor;

#[derive(Clone)]
pub struct Moments {
    pub dims: Dims,
    pub correction: f64,
    pub keepdim: bool,
    /// The standard deviation instead of the variance.
    pub std: bool,
    /// A second output: the mean.
    pub with_mean: bool,
}

impl Moments {
    fn dims_i64(&self) -> SmallVec<[i64; 6]> {
        self.dims.iter().map(|&d| d as i64).collect()
    }
    fn count(&self, shape: &[usize]) -> usize {
        self.dims.iter().map(|&d| shape[d]).product()
    }
    /// The divisor: elements minus the correction, never below 0 (torch's; 0 gives
    /// inf or nan, as there).
    fn dof(&self, shape: &[usize]) -> f64 {
        (self.count(shape) as f64 - self.correction).max(0.0)
    }
    /// `x` minus its mean over the reduced dims (kept, to broadcast).
    fn centered(&self, x: &Tensor) -> Result<Tensor> {
        sub(x, &sum_over(x, &self.dims, true, true)?, Scalar::Int(1))
    }
    /// d var: 2 (x - mean) / dof, times `g` (the gradient or tangent of the variance,
    /// restored to broadcast). For std, d var = d std / (2 std), 0 where std is 0.
    fn scale_for_output(&self, g: &Tensor, out: &Tensor, shape: &[usize]) -> Result<Tensor> {
        let g = restore_dims(g, shape, &self.dims, self.keepdim)?;
        if !self.std {
            return Ok(g);
        }
        let s = restore_dims(out, shape, &self.dims, self.keepdim)?;
        let zero = Tensor::scalar(Scalar::Int(0), g.dtype());
        let g = div(&g, &mul_scalar(&s, Scalar::Int(2))?)?;
        where_(&compare_scalar(&s, Scalar::Int(0), Cmp::Eq)?, &zero, &g)
    }
}

impl Op for Moments {
    fn name(&self) -> &'static str {
        match (self.std, self.with_mean) {
            (false, false) => "VarBackward0",
            (true, false) => "StdBackward0",
            (false, true) => "VarMeanBackward0",
            (true, true) => "StdMeanBackward0",
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("dim", SavedAttr::Ints(self.dims_i64().to_vec())),
            (
                "correction",
                SavedAttr::Scalar(Scalar::Float(self.correction)),
            ),
            ("keepdim", SavedAttr::Scalar(Scalar::Bool(self.keepdim))),
            ("self", SavedAttr::Slot(0)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        if !(x.dtype().is_floating_point() || x.dtype().is_complex()) {
            let what = match (self.with_mean, self.std) {
                (false, _) => "std and var",
                (true, false) => "var_mean",
                (true, true) => "std_mean",
            };
            return Err(Error::not_implemented(format!(
                "{what} only support floating point and complex dtypes"
            )));
        }
        composite(inputs, |p| {
            let d = self.centered(&p[0])?;
            let sq = if d.dtype().is_complex() {
                real(&mul(&d, &conj(&d)?)?)?
            } else {
                mul(&d, &d)?
            };
            let total = sum_over(&sq, &self.dims, self.keepdim, false)?;
            let mut v = div_scalar(&total, Scalar::Float(self.dof(&x.shape())))?;
            if self.std {
                v = sqrt(&v)?;
            }
            let mut out = smallvec![v];
            if self.with_mean {
                out.push(sum_over(&p[0], &self.dims, self.keepdim, true)?);
            }
            Ok(out)
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Output(0))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (x, out) = (ctx.saved(0)?, ctx.saved(1)?);
        let shape = x.shape();
        let mut parts: SmallVec<[Result<Option<Tensor>>; 2]> = SmallVec::new();
        if let Some(g) = &ctx.grads[0] {
            let g = self.scale_for_output(g, out, &shape)?;
            let k = 2.0 / self.dof(&shape);
            parts.push(mul(&mul_scalar(&g, Scalar::Float(k))?, &self.centered(x)?).map(Some));
        }
        if self.with_mean {
            if let Some(gm) = &ctx.grads[1] {
                let gm = restore_dims(gm, &shape, &self.dims, self.keepdim)?;
                let n = self.count(&shape) as i64;
                parts.push(div_scalar(&expand(&gm, &shape)?, Scalar::Int(n)).map(Some));
            }
        }
        Ok(smallvec![sum_tangents(parts)?])
    }
    /// d var = 2/dof * sum(Re(conj(x - mean) * t)); d std = d var / (2 std); d mean =
    /// mean(t).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let Some(t) = ctx.tangent(0) else {
            return Ok(smallvec![None; ctx.outputs.len()]);
        };
        let (x, out) = (&ctx.primals[0], &ctx.outputs[0]);
        let mut prod = mul(&conj(&self.centered(x)?)?, t)?;
        if prod.dtype().is_complex() {
            prod = real(&prod)?;
        }
        let k = 2.0 / self.dof(&x.shape());
        let dvar = mul_scalar(
            &sum_over(&prod, &self.dims, self.keepdim, false)?,
            Scalar::Float(k),
        )?;
        let first = if self.std {
            let zero = Tensor::scalar(Scalar::Int(0), dvar.dtype());
            let scaled = div(&dvar, &mul_scalar(out, Scalar::Int(2))?)?;
            where_(
                &compare_scalar(out, Scalar::Int(0), Cmp::Eq)?,
                &zero,
                &scaled,
            )?
        } else {
            dvar
        };
        let mut tangents = smallvec![Some(first)];
        if self.with_mean {
            tangents.push(Some(sum_over(t, &self.dims, self.keepdim, true)?));
        }
        Ok(tangents)
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| Moments {
            dims: self.dims.iter().map(|&d| d + shift).collect(),
            ..self.clone()
        })
    }
}

/// var / std (and with the mean) over `dims` (None or empty: every dim).
pub fn moments(
    x: &Tensor,
    dims: Option<&[i64]>,
    correction: f64,
    keepdim: bool,
    std: bool,
    with_mean: bool,
) -> Result<Vec<Tensor>> {
    let dims = crate::ops::reduce::resolve_dims(x, dims)?;
    let op = Moments {
        dims,
        correction,
        keepdim,
        std,
        with_mean,
    };
    Ok(apply(op, std::slice::from_ref(x))?.into_vec())
}
