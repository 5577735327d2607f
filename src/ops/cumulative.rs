//! Scans beyond cumsum (which is in scan.rs): `cumprod`, `cummax` / `cummin` (values
//! and indices) and `logcumsumexp`, each along one dim, on the kernel's `Scan` kinds.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::Result;
use crate::kernels::kinds::{Bitwise, Scan};
use crate::ops::binary::{add, compare_scalar, div, mul, sub, where_, Cmp};
use crate::ops::bitwise::logical;
use crate::ops::device::{backend, wrap};
use crate::ops::extrema::amax_over;
use crate::ops::index::{gather, scatter};
use crate::ops::reduce::{sum, sum_dtype, Extreme};
use crate::ops::rules::{batch_reduction, linear_jvp};
use crate::ops::scan::{cumsum, rev_cumsum, run_scan, scan_dim};
use crate::ops::shape::{flip, movedim, triangle};
use crate::ops::unary::{abs, conj, exp, log, to_dtype};
use crate::ops::view::{expand, unsqueeze};
use crate::ops::{
    apply, apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents,
    VjpCtx,
};
use crate::tensor::Tensor;

fn dim_attr(dim: usize) -> (&'static str, SavedAttr) {
    ("dim", SavedAttr::Scalar(Scalar::Int(dim as i64)))
}

fn one_like(x: &Tensor) -> Tensor {
    Tensor::scalar(Scalar::Int(1), x.dtype())
}

// ---------------------------------------------------------------- cumprod

/// `cumprod(x, dim, dtype)` (CumprodBackward0): integer and bool inputs multiply in
/// int64. Its derivatives stay exact through zeros (see `cumprod_vjp`).
#[derive(Clone)]
pub struct Cumprod {
    pub dim: usize,
    pub dtype: Option<DType>,
}

impl Op for Cumprod {
    fn name(&self) -> &'static str {
        "CumprodBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            dim_attr(self.dim),
            ("self", SavedAttr::Slot(0)),
            ("result", SavedAttr::Slot(1)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        run_scan(x, self.dim, Scan::Prod, sum_dtype(x.dtype(), self.dtype))
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Output(0))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        if g.dim() == 0 || g.numel() <= 1 {
            return Ok(smallvec![Some(g)]);
        }
        let x = to_dtype(ctx.saved(0)?, g.dtype())?;
        let y = ctx.saved(1)?;
        let higher = crate::autograd::forward_ad::active() || differentiated(&[&g, &x, y]);
        let gx = if higher {
            let jac = conj(&cumprod_jacobian(&x, self.dim)?)?;
            contract(&jac, &g, self.dim, -1)?
        } else {
            cumprod_vjp(&x, y, &g, self.dim)?
        };
        Ok(smallvec![Some(gx)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let y = &ctx.outputs[0];
        linear_jvp(ctx, |t| {
            if t.dim() == 0 || t.numel() <= 1 {
                return to_dtype(t, y.dtype());
            }
            let x = to_dtype(&ctx.primals[0], y.dtype())?;
            if differentiated(&[t, &x]) {
                contract(&cumprod_jacobian(&x, self.dim)?, t, self.dim, -2)
            } else {
                cumprod_jvp(&x, y, t, self.dim)
            }
        })
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| Cumprod {
            dim: self.dim + shift,
            dtype: self.dtype,
        })
    }
}

/// Whether a rule's result will itself be differentiated (grad mode on and a value it
/// reads requires grad): then cumprod's rules take the O(n²) form that is exact to
/// every order, as torch's cumprod_backward does in grad mode.
fn differentiated(values: &[&Tensor]) -> bool {
    crate::autograd::grad_mode::is_grad_enabled() && values.iter().any(|v| v.requires_grad())
}

/// Where `x` is zero along `dim`, where no zero has come yet, and where the first zero
/// of each line is.
fn zero_masks(x: &Tensor, dim: usize) -> Result<(Tensor, Tensor, Tensor)> {
    let zero = compare_scalar(x, Scalar::Int(0), Cmp::Eq)?;
    let count = cumsum(&zero, dim as i64, None)?;
    let before = compare_scalar(&count, Scalar::Int(0), Cmp::Eq)?;
    let first = logical(
        &zero,
        &compare_scalar(&count, Scalar::Int(1), Cmp::Eq)?,
        Bitwise::And,
    )?;
    Ok((zero, before, first))
}

/// The running product of `x` with each line's first zero counted as 1: at and after
/// that zero it is dy_j / dx_first.
fn skip_first_zero(x: &Tensor, first: &Tensor, dim: usize) -> Result<Tensor> {
    cumprod(&where_(first, &one_like(x), x)?, dim as i64, None)
}

/// dL/dx_k = sum_{j >= k} g_j conj(dy_j/dx_k), in O(n), exact through zeros (first
/// order): before a line's first zero it is revcumsum(g * conj(y))_k / conj(x_k); at the
/// first zero the products skip it; after it every dy_j/dx_k has the zero as a factor.
fn cumprod_vjp(x: &Tensor, y: &Tensor, g: &Tensor, dim: usize) -> Result<Tensor> {
    let (zero, before, first) = zero_masks(x, dim)?;
    let xc = conj(x)?;
    let safe = where_(&zero, &one_like(x), &xc)?;
    let early = div(&rev_cumsum(&mul(g, &conj(y)?)?, dim)?, &safe)?;
    let skipped = conj(&skip_first_zero(x, &first, dim)?)?;
    let at_zero = rev_cumsum(&mul(g, &skipped)?, dim)?;
    let nothing = Tensor::scalar(Scalar::Int(0), g.dtype());
    where_(&before, &early, &where_(&first, &at_zero, &nothing)?)
}

/// dy_j = sum_{k <= j} t_k dy_j/dx_k, in O(n): y_j * cumsum(t / x)_j before the first
/// zero, t_first * (the product skipping it) from there on.
fn cumprod_jvp(x: &Tensor, y: &Tensor, t: &Tensor, dim: usize) -> Result<Tensor> {
    let (zero, before, first) = zero_masks(x, dim)?;
    let safe = where_(&zero, &one_like(x), x)?;
    let early = mul(y, &cumsum(&div(t, &safe)?, dim as i64, None)?)?;
    let t_first = sum(&mul(t, &first)?, Some(&[dim as i64][..]), true, None)?;
    let late = mul(&t_first, &skip_first_zero(x, &first, dim)?)?;
    where_(&before, &early, &late)
}

/// J[..., k, j] = dy_j/dx_k = prod_{i <= j, i != k} x_i for j >= k (else 0), with the
/// scanned dim of `x` moved last: row k is the cumprod of `x` with x_k replaced by 1.
fn cumprod_jacobian(x: &Tensor, dim: usize) -> Result<Tensor> {
    let line = movedim(x, &[dim as i64], &[-1])?;
    let n = x.shape()[dim];
    let mut square = line.dims();
    square.insert(square.len() - 1, n);
    let rows = expand(&unsqueeze(&line, -2)?, &square)?;
    let diagonal = crate::ops::creation::eye(n, n, DType::Bool)?;
    let skipped = where_(&diagonal, &one_like(x), &rows)?;
    triangle(&cumprod(&skipped, -1, None)?, 0, true)
}

/// `v` (scanned dim `dim`) contracted with the Jacobian over its `over` axis (-1: j,
/// giving the vjp's k; -2: k, giving the jvp's j), the result's line put back at `dim`.
fn contract(jac: &Tensor, v: &Tensor, dim: usize, over: i64) -> Result<Tensor> {
    let line = movedim(v, &[dim as i64], &[-1])?;
    let spread = unsqueeze(&line, if over == -1 { -2 } else { -1 })?;
    let summed = sum(&mul(jac, &spread)?, Some(&[over][..]), false, None)?;
    movedim(&summed, &[-1], &[dim as i64])
}

pub fn cumprod(x: &Tensor, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
    let dim = scan_dim(x, dim)?;
    apply1(Cumprod { dim, dtype }, std::slice::from_ref(x))
}
pub fn cumprod_(x: &Tensor, dim: i64, dtype: Option<DType>) -> Result<()> {
    let dim = scan_dim(x, dim)?;
    crate::ops::inplace::apply_inplace(Cumprod { dim, dtype }, std::slice::from_ref(x))
}

// ---------------------------------------------------------------- cummax / cummin

/// `cummax` / `cummin` (CummaxBackward0 / CumminBackward0): each gradient goes to the
/// element its running extreme came from.
#[derive(Clone)]
pub struct Cummax {
    pub dim: usize,
    pub which: Extreme,
}

impl Op for Cummax {
    fn name(&self) -> &'static str {
        match self.which {
            Extreme::Max => "CummaxBackward0",
            Extreme::Min => "CumminBackward0",
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![dim_attr(self.dim), ("indices", SavedAttr::Slot(0))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        let kind = match self.which {
            Extreme::Max => Scan::Max,
            Extreme::Min => Scan::Min,
        };
        let (values, indices) = backend(x)?.scan_with_index(&x.data(), self.dim, kind)?;
        Ok(smallvec![wrap(values), wrap(indices)])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Output(1))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        if g.dim() == 0 || g.numel() == 0 {
            return Ok(smallvec![Some(g)]);
        }
        let zeros = Tensor::zeros(&ctx.inputs[0].shape, g.dtype())?;
        let gx = scatter(&zeros, self.dim as i64, ctx.saved(0)?, Some(&g), None, true)?;
        Ok(smallvec![Some(gx)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let indices = &ctx.outputs[1];
        let t = match ctx.tangent(0) {
            Some(t) if t.dim() == 0 || t.numel() == 0 => Some(t.clone()),
            Some(t) => Some(gather(t, self.dim as i64, indices)?),
            None => None,
        };
        Ok(smallvec![t, None])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| Cummax {
            dim: self.dim + shift,
            which: self.which,
        })
    }
}

/// `cummax(x, dim)` / `cummin`: (values, indices).
pub fn cummax(x: &Tensor, dim: i64, which: Extreme) -> Result<(Tensor, Tensor)> {
    let dim = scan_dim(x, dim)?;
    let mut out = apply(Cummax { dim, which }, std::slice::from_ref(x))?;
    let indices = out.swap_remove(1);
    Ok((out.swap_remove(0), indices))
}

// ---------------------------------------------------------------- logcumsumexp

/// `logcumsumexp(x, dim)` (LogcumsumexpBackward0), floating dtypes.
#[derive(Clone)]
pub struct Logcumsumexp {
    pub dim: usize,
}

/// The most negative finite value of `dtype` (the log of a zero gradient part, as torch
/// writes it: -inf would give inf - inf).
fn lowest(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => half::f16::MIN.to_f64(),
        DType::BF16 => half::bf16::MIN.to_f64(),
        DType::F32 => f32::MIN as f64,
        _ => f64::MIN,
    }
}

impl Logcumsumexp {
    /// logcumsumexp from each position to the end of its line.
    fn reversed(&self, v: &Tensor) -> Result<Tensor> {
        let d = [self.dim as i64];
        flip(&logcumsumexp(&flip(v, &d)?, self.dim as i64)?, &d)
    }
}

impl Op for Logcumsumexp {
    fn name(&self) -> &'static str {
        "LogcumsumexpBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            dim_attr(self.dim),
            ("self", SavedAttr::Slot(0)),
            ("result", SavedAttr::Slot(1)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        run_scan(x, self.dim, Scan::LogSumExp, x.dtype())
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Output(0))]
    }
    /// torch's formula: dL/dx_k = sum_{j >= k} g_j exp(x_k - y_j), with g split into its
    /// positive and negative parts, each summed in log space.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        if g.dim() == 0 {
            return Ok(smallvec![Some(g)]);
        }
        let (x, y) = (ctx.saved(0)?, ctx.saved(1)?);
        let floor = Tensor::scalar(Scalar::Float(lowest(g.dtype())), g.dtype());
        let log_abs = log(&abs(&g)?)?;
        let part = |cmp: Cmp| -> Result<Tensor> {
            let sign = compare_scalar(&g, Scalar::Int(0), cmp)?;
            let log_part = where_(&sign, &log_abs, &floor)?;
            exp(&add(
                &self.reversed(&sub(&log_part, y, Scalar::Int(1))?)?,
                x,
            )?)
        };
        Ok(smallvec![Some(sub(
            &part(Cmp::Gt)?,
            &part(Cmp::Lt)?,
            Scalar::Int(1)
        )?)])
    }
    /// dy_j = sum_{k <= j} t_k exp(x_k - y_j): a softmax-weighted running sum, shifted by
    /// each line's maximum so nothing overflows.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let x = &ctx.primals[0];
        linear_jvp(ctx, |t| {
            if t.dim() == 0 || t.numel() == 0 {
                return Ok(t.clone());
            }
            let d = self.dim as i64;
            let top = amax_over(x, Extreme::Max, &[self.dim], true)?;
            let weights = exp(&sub(x, &top, Scalar::Int(1))?)?;
            div(
                &cumsum(&mul(t, &weights)?, d, None)?,
                &cumsum(&weights, d, None)?,
            )
        })
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| Logcumsumexp {
            dim: self.dim + shift,
        })
    }
}

pub fn logcumsumexp(x: &Tensor, dim: i64) -> Result<Tensor> {
    let dim = scan_dim(x, dim)?;
    apply1(Logcumsumexp { dim }, std::slice::from_ref(x))
}
