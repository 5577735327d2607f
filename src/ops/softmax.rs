//! `softmax`, `log_softmax` along a dim and `logsumexp` over dims. Forwards subtract
//! the maximum first (no overflow); half types compute in float32, as torch on CPU.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{default_float_dtype, DType, Scalar};
use crate::error::Result;
use crate::ops::binary::{add, compare_scalar, mul, sub, where_, Cmp};
use crate::ops::extrema::{amax, amax_over};
use crate::ops::reduce::{resolve_dims, restore_dims, sum, sum_over, Extreme};
use crate::ops::rules::{batch_reduction, composite, linear_jvp};
use crate::ops::unary::{abs, conj, exp, log, to_dtype};
use crate::ops::view::reshape;
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::shape::{wrap_dim, Dims};
use crate::tensor::Tensor;

fn sum_keep(x: &Tensor, dims: &[i64]) -> Result<Tensor> {
    sum(x, Some(dims), true, None)
}

/// The dtype a half-precision input computes in.
fn compute_dtype(d: DType) -> DType {
    match d {
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    }
}

/// `f` on `x` in its compute dtype, the result back in `x`'s dtype.
fn in_compute_dtype(x: &Tensor, f: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<Tensor> {
    let wide = compute_dtype(x.dtype());
    if wide == x.dtype() {
        return f(x);
    }
    to_dtype(&f(&to_dtype(x, wide)?)?, x.dtype())
}

/// softmax (`log: false`) or log_softmax along `dim` (SoftmaxBackward0 /
/// LogSoftmaxBackward0). Inputs have at least one dim (scalars are reshaped around it).
#[derive(Clone)]
pub struct Softmax {
    pub dim: usize,
    pub log: bool,
}

impl Op for Softmax {
    fn name(&self) -> &'static str {
        if self.log {
            "LogSoftmaxBackward0"
        } else {
            "SoftmaxBackward0"
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("dim", SavedAttr::Scalar(Scalar::Int(self.dim as i64))),
            ("result", SavedAttr::Slot(0)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        if !x.dtype().is_floating_point() {
            let last = if self.dim + 1 == x.dim() {
                "lastdim_"
            } else {
                ""
            };
            let log = if self.log { "log_" } else { "" };
            return Err(crate::dtype::unsupported(
                &format!("{log}softmax_{last}kernel_impl"),
                x.dtype(),
            ));
        }
        if x.numel() == 0 {
            return Ok(smallvec![Tensor::zeros(&x.shape(), x.dtype())?]);
        }
        let dim = [self.dim as i64];
        let out = composite(inputs, |p| {
            in_compute_dtype(&p[0], |x| {
                let shifted = sub(x, &amax(x, Extreme::Max, Some(&dim), true)?, Scalar::Int(1))?;
                let e = exp(&shifted)?;
                let total = sum_keep(&e, &dim)?;
                if self.log {
                    sub(&shifted, &log(&total)?, Scalar::Int(1))
                } else {
                    crate::ops::binary::div(&e, &total)
                }
            })
        })?;
        Ok(smallvec![out])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Output(0))]
    }
    /// softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (g, y) = (ctx.grad(0)?, ctx.saved(0)?);
        Ok(smallvec![Some(self.rule(&g, y)?)])
    }
    /// softmax's Jacobian is symmetric (the same map); log_softmax's is I - 1 softmax^T,
    /// so its tangent is t - sum(t * softmax).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let y = &ctx.outputs[0];
        linear_jvp(ctx, |t| {
            if self.log {
                let dim = [self.dim as i64];
                sub(t, &sum_keep(&mul(t, &exp(y)?)?, &dim)?, Scalar::Int(1))
            } else {
                self.rule(t, y)
            }
        })
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| Softmax {
            dim: self.dim + shift,
            log: self.log,
        })
    }
}

impl Softmax {
    /// The transposed Jacobian of softmax / log_softmax at output `y`, applied to `v`.
    fn rule(&self, v: &Tensor, y: &Tensor) -> Result<Tensor> {
        let dim = [self.dim as i64];
        if self.log {
            sub(v, &mul(&exp(y)?, &sum_keep(v, &dim)?)?, Scalar::Int(1))
        } else {
            let vy = mul(v, y)?;
            sub(&vy, &mul(y, &sum_keep(&vy, &dim)?)?, Scalar::Int(1))
        }
    }
}

/// `softmax(x, dim, dtype)` / `log_softmax`: `dtype` casts the input first.
pub fn softmax(x: &Tensor, dim: i64, log: bool, dtype: Option<DType>) -> Result<Tensor> {
    let x = match dtype {
        Some(d) if d != x.dtype() => to_dtype(x, d)?,
        _ => x.clone(),
    };
    let d = wrap_dim(dim, x.dim())?;
    if x.dim() == 0 {
        let out = apply1(Softmax { dim: 0, log }, &[reshape(&x, &[1])?])?;
        return reshape(&out, &[]);
    }
    apply1(Softmax { dim: d, log }, &[x])
}

// ---------------------------------------------------------------- logsumexp

#[derive(Clone)]
pub struct LogSumExp {
    pub dims: Dims,
    pub keepdim: bool,
}

impl LogSumExp {
    fn dims_i64(&self) -> SmallVec<[i64; 6]> {
        self.dims.iter().map(|&d| d as i64).collect()
    }
    /// d result / d x = exp(x - result): softmax over the reduced dims.
    fn weights(&self, x: &Tensor, r: &Tensor) -> Result<Tensor> {
        let r = restore_dims(r, &x.shape(), &self.dims, self.keepdim)?;
        exp(&sub(x, &r, Scalar::Int(1))?)
    }
}

impl Op for LogSumExp {
    fn name(&self) -> &'static str {
        "LogsumexpBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("dim", SavedAttr::Ints(self.dims_i64().to_vec())),
            ("keepdim", SavedAttr::Scalar(Scalar::Bool(self.keepdim))),
            ("self", SavedAttr::Slot(0)),
            ("result", SavedAttr::Slot(1)),
        ]
    }
    /// torch's: the maximum (0 where it is infinite) taken out before exp, added back.
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let out = composite(inputs, |p| {
            in_compute_dtype(&p[0], |x| {
                if x.numel() == 0 {
                    // Nothing to take a maximum of: log(0) = -inf for empty slices.
                    return log(&sum_over(&exp(x)?, &self.dims, self.keepdim, false)?);
                }
                let m = amax_over(x, Extreme::Max, &self.dims, true)?;
                let inf = compare_scalar(&abs(&m)?, Scalar::Float(f64::INFINITY), Cmp::Eq)?;
                let m = where_(&inf, &Tensor::scalar(Scalar::Int(0), m.dtype()), &m)?;
                let e = exp(&sub(x, &m, Scalar::Int(1))?)?;
                let s = log(&sum_over(&e, &self.dims, self.keepdim, false)?)?;
                let m = if self.keepdim {
                    m
                } else {
                    reshape(&m, &s.shape())?
                };
                add(&s, &m)
            })
        })?;
        Ok(smallvec![out])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Output(0))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (x, r) = (ctx.saved(0)?, ctx.saved(1)?);
        let g = restore_dims(&ctx.grad(0)?, &x.shape(), &self.dims, self.keepdim)?;
        Ok(smallvec![Some(mul(&g, &conj(&self.weights(x, r)?)?)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (x, r) = (&ctx.primals[0], &ctx.outputs[0]);
        linear_jvp(ctx, |t| {
            sum_over(
                &mul(t, &self.weights(x, r)?)?,
                &self.dims,
                self.keepdim,
                false,
            )
        })
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| LogSumExp {
            dims: self.dims.iter().map(|&d| d + shift).collect(),
            keepdim: self.keepdim,
        })
    }
}

/// `logsumexp(x, dim, keepdim)`; integer inputs compute in the default float dtype.
pub fn logsumexp(x: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor> {
    let x = if x.dtype().is_floating_point() || x.dtype().is_complex() {
        x.clone()
    } else {
        to_dtype(x, default_float_dtype())?
    };
    let dims = resolve_dims(&x, Some(dims))?;
    apply1(LogSumExp { dims, keepdim }, &[x])
}
