//! `softmax`, `log_softmax` along a dim and `logsumexp` over dims. Forwards subtract
//! the maximum first (no overflow); half types compute in float32, as torch on CPU.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{default_float_dtype, DType, Scalar};
use crate::error::Result;
use crate::kernels::kinds::Reduce;
use crate::ops::binary::{add, compare_scalar, mul, sub, where_, Cmp};
use crate::ops::device::{backend, wrap};
use crate::ops::extrema::amax_over;
use crate::ops::reduce::{keepdim_shape, resolve_dims, restore_dims, sum, sum_over, Extreme};
use crate::ops::rules::{
    batch_reduction, batch_size, composite, front_or_expand, linear_jvp, sum_tangents,
};
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
        let out = backend(x)?.softmax(&x.data(), self.dim, self.log)?;
        Ok(smallvec![wrap(out)])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Output(0))]
    }
    /// softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g) (one fused op,
    /// torch's _softmax_backward_data).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (g, y) = (ctx.grad(0)?, ctx.saved(0)?);
        Ok(smallvec![Some(self.backward_data().apply(&g, y)?)])
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
                self.backward_data().apply(t, y)
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
    fn backward_data(&self) -> SoftmaxBackwardData {
        SoftmaxBackwardData {
            dim: self.dim,
            log: self.log,
        }
    }
}

/// The gradient of softmax's (log_softmax's) input from the gradient `g` of its output
/// `y` (torch's `_softmax_backward_data`): softmax y * (g - sum(g * y)), log_softmax
/// g - exp(y) * sum(g), sums along `dim`. Linear in g, so it is also softmax's jvp.
#[derive(Clone)]
pub struct SoftmaxBackwardData {
    pub dim: usize,
    pub log: bool,
}

impl SoftmaxBackwardData {
    fn apply(&self, g: &Tensor, y: &Tensor) -> Result<Tensor> {
        apply1(self.clone(), &[g.clone(), y.clone()])
    }

    fn sum_keep(&self, x: &Tensor) -> Result<Tensor> {
        sum_keep(x, &[self.dim as i64])
    }

    /// The output's change along a change `ty` of y, g held: softmax
    /// ty * (g - sum(g * y)) - y * sum(g * ty); log_softmax -ty * exp(y) * sum(g). Its
    /// Jacobian is symmetric for log_softmax; softmax's transpose swaps the roles of
    /// y and the incoming vector in the last term (see `vjp`).
    fn along_y(&self, g: &Tensor, y: &Tensor, ty: &Tensor) -> Result<Tensor> {
        let one = Scalar::Int(1);
        if self.log {
            let scaled = mul(&mul(ty, &exp(y)?)?, &self.sum_keep(g)?)?;
            return crate::ops::unary::neg(&scaled);
        }
        let centred = sub(g, &self.sum_keep(&mul(g, y)?)?, one)?;
        sub(
            &mul(ty, &centred)?,
            &mul(y, &self.sum_keep(&mul(g, ty)?)?)?,
            one,
        )
    }
}

impl Op for SoftmaxBackwardData {
    fn name(&self) -> &'static str {
        if self.log {
            "LogSoftmaxBackwardDataBackward0"
        } else {
            "SoftmaxBackwardDataBackward0"
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("dim", SavedAttr::Scalar(Scalar::Int(self.dim as i64))),
            ("grad_output", SavedAttr::Slot(0)),
            ("output", SavedAttr::Slot(1)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let y = &inputs[1];
        if y.numel() == 0 {
            return Ok(smallvec![Tensor::zeros(&y.shape(), y.dtype())?]);
        }
        let g = composite(&inputs[..1], |p| to_dtype(&p[0], y.dtype()))?;
        let out = backend(y)?.softmax_backward(&g.data(), &y.data(), self.dim, self.log)?;
        Ok(smallvec![wrap(out)])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Input(1))]
    }
    /// d/dg: softmax's is this op again (a symmetric map), log_softmax's
    /// G - sum(G * exp(y)). d/dy: softmax G * (g - sum(g * y)) - g * sum(G * y),
    /// log_softmax as `along_y`.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let big_g = ctx.grad(0)?;
        let (g, y) = (ctx.saved(0)?, ctx.saved(1)?);
        let one = Scalar::Int(1);
        let d_g = match (ctx.needs(0), self.log) {
            (false, _) => None,
            (true, false) => Some(self.apply(&big_g, y)?),
            (true, true) => Some(sub(&big_g, &self.sum_keep(&mul(&big_g, &exp(y)?)?)?, one)?),
        };
        let d_y = match (ctx.needs(1), self.log) {
            (false, _) => None,
            (true, true) => Some(self.along_y(g, y, &big_g)?),
            (true, false) => {
                let centred = sub(g, &self.sum_keep(&mul(g, y)?)?, one)?;
                let cross = mul(g, &self.sum_keep(&mul(&big_g, y)?)?)?;
                Some(sub(&mul(&big_g, &centred)?, &cross, one)?)
            }
        };
        Ok(smallvec![d_g, d_y])
    }
    /// Linear in g (the op applied to g's tangent) plus `along_y` for y's.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (g, y) = (&ctx.primals[0], &ctx.primals[1]);
        let total = sum_tangents([
            ctx.tangent(0).map(|tg| self.apply(tg, y)).transpose(),
            ctx.tangent(1).map(|ty| self.along_y(g, y, ty)).transpose(),
        ])?;
        Ok(smallvec![total])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let batch = batch_size(ctx);
        let [(g, gb), (y, yb)] = [&ctx.inputs[0], &ctx.inputs[1]];
        let op = SoftmaxBackwardData {
            dim: self.dim + 1,
            log: self.log,
        };
        let args = [
            front_or_expand(g, *gb, batch)?,
            front_or_expand(y, *yb, batch)?,
        ];
        Ok(smallvec![(apply1(op, &args)?, Some(0))])
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
        let x = &inputs[0];
        if x.dtype().is_floating_point() && x.numel() > 0 {
            let reduced = backend(x)?.reduce(&x.data(), &self.dims, Reduce::LogSumExp, x.dtype());
            let mut out = wrap(reduced?);
            if self.keepdim {
                out = out.fresh_with_shape(&keepdim_shape(&x.shape(), &self.dims));
            }
            return Ok(smallvec![out]);
        }
        // Complex, or empty.
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
