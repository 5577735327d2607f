//! Elementwise math of two tensors with broadcasting (issue 11): atan2, hypot, copysign,
//! nextafter, xlogy, xlog1py, logaddexp, logaddexp2, div with a rounding mode,
//! floor_divide, remainder and fmod, each with torch's node name and derivative
//! (derivatives.yaml). A Python-number operand arrives as a wrapped-number tensor
//! (`binary::wrapped_scalar`), which never needs a gradient; the node name says which
//! overload torch recorded.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{default_float_dtype, result_type, DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::BinaryMath;
use crate::ops::binary::{
    add_scalar, compare_scalar, div, mul, pow_scalar_rev, sub, wrapped_scalar, Cmp,
};
use crate::ops::creation::zeros_like;
use crate::ops::device::{backend, wrap};
use crate::ops::rules::{batch_broadcast, elementwise_jvp, Partial};
use crate::ops::unary::{exp, neg, reciprocal};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::tensor::Tensor;

/// The dtype `op` computes in: torch's result type; integers and bool promote to the
/// default float for the float-only functions that accept them (atan2, copysign,
/// xlogy, xlog1py), the others refuse them in the kernel with torch's error.
fn compute_dtype(op: BinaryMath, a: &Tensor, b: &Tensor) -> DType {
    let d = result_type(&[(a.dtype(), a.dim() == 0), (b.dtype(), b.dim() == 0)], &[]);
    let promotes = matches!(
        op,
        BinaryMath::Atan2 | BinaryMath::Copysign | BinaryMath::Xlogy | BinaryMath::Xlog1py
    );
    if promotes && !d.is_floating_point() && !d.is_complex() {
        default_float_dtype()
    } else {
        d
    }
}

/// The derivative of the result with respect to one operand.
enum D {
    Zero,
    One,
    P(Partial),
}

/// `op(a, b)` recorded under torch's node `name` for the overload that was called.
pub struct MathOp {
    pub op: BinaryMath,
    pub name: &'static str,
}

impl MathOp {
    fn partials(&self, a: &Tensor, b: &Tensor, r: &Tensor) -> Result<(D, D)> {
        use BinaryMath as K;
        let m = |t: Tensor| D::P(Partial::Mul(t));
        Ok(match self.op {
            K::Atan2 => {
                let den = crate::ops::binary::add(&mul(a, a)?, &mul(b, b)?)?;
                (m(div(b, &den)?), m(neg(&div(a, &den)?)?))
            }
            K::Hypot => (m(div(a, r)?), m(div(b, r)?)),
            // torch's copysign_tensor_self_backward: result / self, 0 where self is 0.
            K::Copysign => {
                let ratio = div(r, a)?;
                let zero = compare_scalar(a, Scalar::Int(0), Cmp::Eq)?;
                let z = Tensor::scalar(Scalar::Int(0), ratio.dtype());
                (m(crate::ops::binary::where_(&zero, &z, &ratio)?), D::Zero)
            }
            K::Nextafter => (D::One, D::Zero),
            K::Xlogy | K::Xlog1py => {
                let nonzero = compare_scalar(a, Scalar::Int(0), Cmp::Ne)?;
                let (da, db) = if self.op == K::Xlogy {
                    (xlogy(&nonzero, b)?, div(a, b)?)
                } else {
                    (
                        xlog1py(&nonzero, b)?,
                        div(a, &add_scalar(b, Scalar::Int(1))?)?,
                    )
                };
                (m(da), m(db))
            }
            // 1 / (1 + e^(b - a)) and 1 / (1 + 2^(b - a)).
            K::Logaddexp | K::Logaddexp2 => {
                let side = |x: &Tensor, y: &Tensor| -> Result<Tensor> {
                    let d = sub(y, x, Scalar::Int(1))?;
                    let e = if self.op == K::Logaddexp {
                        exp(&d)?
                    } else {
                        pow_scalar_rev(Scalar::Int(2), &d)?
                    };
                    reciprocal(&add_scalar(&e, Scalar::Int(1))?)
                };
                (m(side(a, b)?), m(side(b, a)?))
            }
            K::DivFloor | K::DivTrunc => (D::Zero, D::Zero),
            // other: -grad * floor(self / other) (trunc for fmod).
            K::Remainder | K::Fmod => {
                let round = if self.op == K::Remainder {
                    K::DivFloor
                } else {
                    K::DivTrunc
                };
                (D::One, m(neg(&math(a, b, round, "DivBackward2")?)?))
            }
        })
    }
}

fn vjp_of(d: D, g: &Tensor) -> Result<Tensor> {
    match d {
        D::Zero => zeros_like(g),
        D::One => Ok(g.clone()),
        D::P(p) => p.vjp(g),
    }
}

impl Op for MathOp {
    fn name(&self) -> &'static str {
        self.name
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("self", SavedAttr::Slot(0)),
            ("other", SavedAttr::Slot(1)),
            ("result", SavedAttr::Slot(2)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (a, b) = (&inputs[0], &inputs[1]);
        let dtype = compute_dtype(self.op, a, b);
        Ok(smallvec![wrap(backend(a)?.binary_math(
            &a.data(),
            &b.data(),
            self.op,
            dtype
        )?)])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![
            Some(SaveRef::Input(0)),
            Some(SaveRef::Input(1)),
            Some(SaveRef::Output(0))
        ]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let (pa, pb) = self.partials(ctx.saved(0)?, ctx.saved(1)?, ctx.saved(2)?)?;
        Ok(smallvec![
            ctx.needs(0).then(|| vjp_of(pa, &g)).transpose()?,
            ctx.needs(1).then(|| vjp_of(pb, &g)).transpose()?,
        ])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (a, b, r) = (&ctx.primals[0], &ctx.primals[1], &ctx.outputs[0]);
        let (pa, pb) = self.partials(a, b, r)?;
        let one = |t: &Tensor| Partial::Mul(Tensor::scalar(Scalar::Int(1), t.dtype()));
        let zero = |t: &Tensor| Partial::Mul(Tensor::scalar(Scalar::Int(0), t.dtype()));
        let pick = |d: &D| match d {
            D::Zero => zero(r),
            D::One => one(r),
            D::P(p) => p.clone(),
        };
        elementwise_jvp(ctx, |i| Ok(if i == 0 { pick(&pa) } else { pick(&pb) }))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_broadcast(ctx, |args| math(&args[0], &args[1], self.op, self.name))
    }
}

/// `op(a, b)` recorded as `name`.
pub fn math(a: &Tensor, b: &Tensor, op: BinaryMath, name: &'static str) -> Result<Tensor> {
    apply1(MathOp { op, name }, &[a.clone(), b.clone()])
}

/// torch's node name for `op` with a tensor `other`.
pub fn tensor_name(op: BinaryMath) -> &'static str {
    match op {
        BinaryMath::Atan2 => "Atan2Backward0",
        BinaryMath::Hypot => "HypotBackward0",
        BinaryMath::Copysign => "CopysignBackward0",
        BinaryMath::Nextafter => "NextafterBackward0",
        BinaryMath::Xlogy => "XlogyBackward0",
        BinaryMath::Xlog1py => "SpecialXlog1PyBackward0",
        BinaryMath::Logaddexp => "LogaddexpBackward0",
        BinaryMath::Logaddexp2 => "Logaddexp2Backward0",
        BinaryMath::DivFloor | BinaryMath::DivTrunc => "DivBackward2",
        BinaryMath::Remainder => "RemainderBackward1",
        BinaryMath::Fmod => "FmodBackward1",
    }
}

/// torch's node name for `op` with a Python-number `other` (its Scalar overload).
fn scalar_name(op: BinaryMath) -> &'static str {
    match op {
        BinaryMath::Copysign => "CopysignBackward1",
        BinaryMath::Xlogy => "XlogyBackward2",
        BinaryMath::Xlog1py => "SpecialXlog1PyBackward2",
        BinaryMath::Remainder => "RemainderBackward0",
        BinaryMath::Fmod => "FmodBackward0",
        other => tensor_name(other),
    }
}

/// `op(a, b)` for two tensors.
pub fn binary_math(a: &Tensor, b: &Tensor, op: BinaryMath) -> Result<Tensor> {
    math(a, b, op, tensor_name(op))
}

/// `op(a, s)` for a Python number `s`.
pub fn binary_math_scalar(a: &Tensor, s: Scalar, op: BinaryMath) -> Result<Tensor> {
    math(a, &wrapped_scalar(a, s), op, scalar_name(op))
}

/// `op(s, b)` for a Python number `s` first: xlogy / xlog1py have their own overload
/// (XlogyBackward1); torch has no derivative for the reflected remainder.
pub fn binary_math_scalar_first(s: Scalar, b: &Tensor, op: BinaryMath) -> Result<Tensor> {
    let a = wrapped_scalar(b, s);
    match op {
        BinaryMath::Xlogy => math(&a, b, op, "XlogyBackward1"),
        BinaryMath::Xlog1py => math(&a, b, op, "SpecialXlog1PyBackward1"),
        BinaryMath::Remainder => not_differentiable(&a, b, op, "aten::remainder"),
        _ => math(&a, b, op, tensor_name(op)),
    }
}

/// A Python number as `t`'s in-place operand.
pub fn wrapped_scalar_for(t: &Tensor, s: Scalar) -> Tensor {
    wrapped_scalar(t, s)
}

/// `t.op_(b)` in place (`scalar`: `b` is a wrapped Python number).
pub fn binary_math_(t: &Tensor, b: &Tensor, op: BinaryMath, scalar: bool) -> Result<()> {
    let name = if scalar {
        scalar_name(op)
    } else {
        tensor_name(op)
    };
    crate::ops::inplace::apply_inplace(MathOp { op, name }, &[t.clone(), b.clone()])
}

/// `t.floor_divide_(b)` / `t //= b`.
pub fn floor_divide_(t: &Tensor, b: &Tensor) -> Result<()> {
    let op = NoDerivative {
        op: BinaryMath::DivFloor,
        aten: "aten::floor_divide",
    };
    crate::ops::inplace::apply_inplace(op, &[t.clone(), b.clone()])
}

pub fn xlogy(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary_math(a, b, BinaryMath::Xlogy)
}
pub fn xlog1py(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary_math(a, b, BinaryMath::Xlog1py)
}

/// `div(a, b, rounding_mode=...)`: None is true division.
pub fn div_rounding(a: &Tensor, b: &Tensor, mode: Option<&str>) -> Result<Tensor> {
    match mode {
        None => div(a, b),
        Some("trunc") => binary_math(a, b, BinaryMath::DivTrunc),
        Some("floor") => binary_math(a, b, BinaryMath::DivFloor),
        Some(m) => Err(Error::runtime(format!(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{m}'"
        ))),
    }
}

/// `floor_divide` / `//`: torch records no derivative (torch::autograd::NotImplemented).
pub fn floor_divide(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    not_differentiable(a, b, BinaryMath::DivFloor, "aten::floor_divide")
}

/// An op torch has no derivative for: its node refuses backward and forward AD with
/// torch's messages.
pub struct NoDerivative {
    pub op: BinaryMath,
    pub aten: &'static str,
}
impl Op for NoDerivative {
    fn name(&self) -> &'static str {
        "torch::autograd::NotImplemented"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        MathOp {
            op: self.op,
            name: "",
        }
        .forward(inputs)
    }
    fn vjp(&self, _ctx: &VjpCtx) -> Result<Grads> {
        Err(Error::runtime(format!(
            "derivative for {} is not implemented",
            self.aten
        )))
    }
    fn jvp(&self, _ctx: &JvpCtx) -> Result<Tangents> {
        Err(Error::not_implemented(format!(
            "Trying to use forward AD with {} that does not support it.",
            self.aten
        )))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_broadcast(ctx, |args| {
            not_differentiable(&args[0], &args[1], self.op, self.aten)
        })
    }
}
fn not_differentiable(
    a: &Tensor,
    b: &Tensor,
    op: BinaryMath,
    aten: &'static str,
) -> Result<Tensor> {
    apply1(NoDerivative { op, aten }, &[a.clone(), b.clone()])
}
