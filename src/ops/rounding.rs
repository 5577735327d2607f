//! Rounding: floor, ceil, trunc, round (optionally to decimals) and frac. Their
//! derivative is zero almost everywhere (frac's is one), as torch defines it.

use smallvec::smallvec;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::kinds::{Rounding, Unary};
use crate::ops::creation::zeros_like;
use crate::ops::device::{backend, wrap};
use crate::ops::rules::batch_unary;
use crate::ops::{apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, Tangents, VjpCtx};
use crate::tensor::Tensor;

#[derive(Clone, Copy)]
pub struct Round(pub Rounding);

impl Op for Round {
    fn name(&self) -> &'static str {
        match self.0 {
            Rounding::Floor => "FloorBackward0",
            Rounding::Ceil => "CeilBackward0",
            Rounding::Trunc => "TruncBackward0",
            Rounding::Nearest => "RoundBackward0",
            Rounding::Decimals(_) => "RoundBackward1",
            Rounding::Frac => "FracBackward0",
        }
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        let out = backend(x)?.unary(&x.data(), Unary::Round(self.0), x.dtype())?;
        Ok(smallvec![wrap(out)])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        Ok(smallvec![Some(match self.0 {
            Rounding::Frac => g,
            _ => zeros_like(&g)?,
        })])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        Ok(smallvec![match (ctx.tangent(0), self.0) {
            (None, _) => None,
            (Some(t), Rounding::Frac) => Some(t.clone()),
            (Some(t), _) => Some(zeros_like(t)?),
        }])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let op = *self;
        batch_unary(ctx, |x| apply1(op, std::slice::from_ref(x)))
    }
}

/// What rounding `x` takes: refused (complex, and the kinds integers lack), nothing
/// (integers are already whole: floor/ceil/trunc/round give them back as they are, as
/// torch does), or the op.
fn rounding_of(x: &Tensor, r: Rounding) -> Result<Option<Round>> {
    let d = x.dtype();
    if d.is_complex() {
        // torch: frac and round reach a kernel without complex; the others refuse first.
        return Err(match r {
            Rounding::Frac => crate::dtype::unsupported("frac_cpu", d),
            Rounding::Nearest => crate::dtype::unsupported("round_vml_cpu", d),
            Rounding::Decimals(_) => crate::dtype::unsupported("round_cpu", d),
            _ => {
                Error::not_implemented(format!("{} is not supported for complex inputs", r.name()))
            }
        });
    }
    if !d.is_floating_point() {
        let whole = matches!(
            r,
            Rounding::Floor | Rounding::Ceil | Rounding::Trunc | Rounding::Nearest
        );
        return match (whole, d) {
            (true, DType::Bool) => Err(crate::dtype::unsupported(
                &format!("{}_vml_cpu", r.name()),
                d,
            )),
            (true, _) => Ok(None),
            (false, _) => Err(crate::dtype::unsupported(&format!("{}_cpu", r.name()), d)),
        };
    }
    Ok(Some(Round(r)))
}

/// floor/ceil/trunc/round/frac of `x` (a copy for whole-number kinds of integers).
pub fn round(x: &Tensor, r: Rounding) -> Result<Tensor> {
    match rounding_of(x, r)? {
        Some(op) => apply1(op, std::slice::from_ref(x)),
        None => crate::ops::unary::clone(x),
    }
}

/// `floor_`, `round_(decimals=)`, ...: `x` rounded in place (integers stay as they are).
pub fn round_(x: &Tensor, r: Rounding) -> Result<()> {
    match rounding_of(x, r)? {
        Some(op) => crate::ops::inplace::apply_inplace(op, std::slice::from_ref(x)),
        None => crate::ops::inplace::check_inplace(x),
    }
}

pub fn floor(x: &Tensor) -> Result<Tensor> {
    round(x, Rounding::Floor)
}
pub fn ceil(x: &Tensor) -> Result<Tensor> {
    round(x, Rounding::Ceil)
}
pub fn trunc(x: &Tensor) -> Result<Tensor> {
    round(x, Rounding::Trunc)
}
pub fn frac(x: &Tensor) -> Result<Tensor> {
    round(x, Rounding::Frac)
}
pub fn floor_(x: &Tensor) -> Result<()> {
    round_(x, Rounding::Floor)
}
pub fn ceil_(x: &Tensor) -> Result<()> {
    round_(x, Rounding::Ceil)
}
pub fn trunc_(x: &Tensor) -> Result<()> {
    round_(x, Rounding::Trunc)
}
pub fn frac_(x: &Tensor) -> Result<()> {
    round_(x, Rounding::Frac)
}
