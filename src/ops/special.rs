//! Special-function unary ops (issue 11): erfc, erfinv, lgamma, digamma, polygamma,
//! sinc, logit, nan_to_num and signbit, with torch's derivatives (derivatives.yaml).
//! Integer and bool inputs compute in the default float dtype; complex is refused with
//! torch's kernel error except by sinc (and nan_to_num / signbit, which say so).

use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::{Special, Unary};
use crate::ops::binary::{compare_scalar, div, mul, mul_scalar, sub_scalar_rev, where_, Cmp};
use crate::ops::clamp::clamp;
use crate::ops::classify::{isfinite, isnan, isneginf, isposinf};
use crate::ops::rules::{batch_unary, composite, elementwise_jvp, linear_jvp, Partial};
use crate::ops::unary::{cos, exp, float_dtype, float_unary_op, log, neg, run, sin, to_dtype};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::tensor::Tensor;

fn float(v: f64, like: &Tensor) -> Tensor {
    Tensor::scalar(Scalar::Float(v), like.dtype())
}

float_unary_op!(@kind Unary::Special(Special::Erfc),
/// erfc; d/dx = -2/sqrt(pi) exp(-x^2).
Erfc, erfc, "ErfcBackward0", save: SaveRef::Input(0),
    d: |x| Partial::Mul(mul_scalar(&exp(&neg(&mul(x, x)?)?)?, Scalar::Float(-std::f64::consts::FRAC_2_SQRT_PI))?));
float_unary_op!(@kind Unary::Special(Special::Erfinv),
/// erfinv; d/dx = sqrt(pi)/2 exp(erfinv(x)^2) (torch recomputes erfinv from `self`).
Erfinv, erfinv, "ErfinvBackward0", save: SaveRef::Input(0),
    d: |x| {
        let y = erfinv(x)?;
        Partial::Mul(mul_scalar(&exp(&mul(&y, &y)?)?, Scalar::Float(0.5 * std::f64::consts::PI.sqrt()))?)
    });
float_unary_op!(@kind Unary::Special(Special::Lgamma),
/// ln|Γ(x)|; d/dx = ψ(x).
Lgamma, lgamma, "LgammaBackward0", save: SaveRef::Input(0),
    d: |x| Partial::Mul(digamma(x)?));
float_unary_op!(@kind Unary::Special(Special::Polygamma(0)),
/// ψ(x); d/dx = ψ1(x).
Digamma, digamma, "DigammaBackward0", save: SaveRef::Input(0),
    d: |x| Partial::Mul(polygamma(1, x)?));
float_unary_op!(@kind Unary::Special(Special::Sinc),
/// sin(pi x)/(pi x); d/dx = (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x = 0.
Sinc, sinc, "SincBackward0", save: SaveRef::Input(0),
    d: |x| Partial::Mul(sinc_derivative(x)?));

fn sinc_derivative(x: &Tensor) -> Result<Tensor> {
    let px = mul_scalar(x, Scalar::Float(std::f64::consts::PI))?;
    let num = crate::ops::binary::sub(&mul(&px, &cos(&px)?)?, &sin(&px)?, Scalar::Int(1))?;
    let d = div(&num, &mul(&px, x)?)?;
    where_(
        &compare_scalar(x, Scalar::Int(0), Cmp::Eq)?,
        &float(0.0, &d),
        &d,
    )
}

/// ψ^(n)(x) (PolygammaBackward0); d/dx = ψ^(n+1)(x).
pub struct Polygamma {
    pub n: u32,
    /// `polygamma_` records PolygammaBackward1.
    pub inplace: bool,
}
impl Polygamma {
    fn partial(&self, x: &Tensor) -> Result<Partial> {
        Ok(Partial::Mul(polygamma(self.n as i64 + 1, x)?))
    }
}
impl Op for Polygamma {
    fn name(&self) -> &'static str {
        if self.inplace {
            "PolygammaBackward1"
        } else {
            "PolygammaBackward0"
        }
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        run(
            x,
            Unary::Special(Special::Polygamma(self.n)),
            float_dtype(x),
        )
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0))]
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("n", SavedAttr::Scalar(Scalar::Int(self.n as i64))),
            ("self", SavedAttr::Slot(0)),
        ]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![Some(
            self.partial(ctx.saved(0)?)?.vjp(&ctx.grad(0)?)?
        )])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        elementwise_jvp(ctx, |_| self.partial(&ctx.primals[0]))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_unary(ctx, |x| polygamma(self.n as i64, x))
    }
}
fn order(n: i64) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::runtime("polygamma(n, x) does not support negative n."))
}
pub fn polygamma(n: i64, x: &Tensor) -> Result<Tensor> {
    let op = Polygamma {
        n: order(n)?,
        inplace: false,
    };
    apply1(op, std::slice::from_ref(x))
}
pub fn polygamma_(n: i64, x: &Tensor) -> Result<()> {
    let op = Polygamma {
        n: order(n)?,
        inplace: true,
    };
    crate::ops::inplace::unary_(op, x)
}

/// log(x / (1 - x)), with x clamped to [eps, 1 - eps] when eps is given (LogitBackward0).
pub struct Logit {
    pub eps: Option<f64>,
}
impl Logit {
    /// torch's logit_backward: 1/(x(1-x)) inside the range; outside it NaN without eps,
    /// 0 with eps (the clamp's flat part).
    fn partial(&self, x: &Tensor) -> Result<Partial> {
        let (lo, hi, fill) = match self.eps {
            Some(e) => (e, 1.0 - e, 0.0),
            None => (0.0, 1.0, f64::NAN),
        };
        let inside = crate::ops::unary::reciprocal(&mul(x, &sub_scalar_rev(Scalar::Int(1), x)?)?)?;
        let out = crate::ops::bitwise::logical(
            &compare_scalar(x, Scalar::Float(lo), Cmp::Lt)?,
            &compare_scalar(x, Scalar::Float(hi), Cmp::Gt)?,
            crate::kernels::kinds::Bitwise::Or,
        )?;
        Ok(Partial::Mul(where_(&out, &float(fill, &inside), &inside)?))
    }
}
impl Op for Logit {
    fn name(&self) -> &'static str {
        "LogitBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        if x.dtype().is_complex() {
            return Err(crate::dtype::unsupported("logit_cpu", x.dtype()));
        }
        composite(inputs, |v| {
            let x = to_dtype(&v[0], float_dtype(&v[0]))?;
            let x = match self.eps {
                Some(e) => clamp(&x, Some(Scalar::Float(e)), Some(Scalar::Float(1.0 - e)))?,
                None => x,
            };
            Ok(smallvec![log(&div(
                &x,
                &sub_scalar_rev(Scalar::Int(1), &x)?
            )?)?])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0))]
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        let mut v = vec![("self", SavedAttr::Slot(0))];
        if let Some(e) = self.eps {
            v.push(("eps", SavedAttr::Scalar(Scalar::Float(e))));
        }
        v
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![Some(
            self.partial(ctx.saved(0)?)?.vjp(&ctx.grad(0)?)?
        )])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        elementwise_jvp(ctx, |_| self.partial(&ctx.primals[0]))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_unary(ctx, |x| logit(x, self.eps))
    }
}
/// torch ignores a negative eps (no clamping).
fn logit_op(eps: Option<f64>) -> Logit {
    Logit {
        eps: eps.filter(|&e| e >= 0.0),
    }
}
pub fn logit(x: &Tensor, eps: Option<f64>) -> Result<Tensor> {
    apply1(logit_op(eps), std::slice::from_ref(x))
}
pub fn logit_(x: &Tensor, eps: Option<f64>) -> Result<()> {
    crate::ops::inplace::unary_(logit_op(eps), x)
}

/// NaN and ±inf replaced (NanToNumBackward0: the gradient passes where x is finite).
pub struct NanToNum {
    pub nan: f64,
    pub posinf: Option<f64>,
    pub neginf: Option<f64>,
}
/// The largest finite value of a float dtype (nan_to_num's default for +inf).
fn finite_max(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => 65504.0,
        DType::BF16 => 3.3895313892515355e38,
        DType::F32 => f32::MAX as f64,
        _ => f64::MAX,
    }
}
impl Op for NanToNum {
    fn name(&self) -> &'static str {
        "NanToNumBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |v| {
            let x = &v[0];
            let d = x.dtype();
            if !d.is_floating_point() {
                // Integers and bool hold no NaN or infinity: a copy.
                return Ok(smallvec![crate::ops::unary::clone(x)?]);
            }
            let big = finite_max(d);
            let fill = |v: f64| Tensor::scalar(Scalar::Float(v), d);
            let y = where_(&isnan(x)?, &fill(self.nan), x)?;
            let y = where_(&isposinf(x)?, &fill(self.posinf.unwrap_or(big)), &y)?;
            Ok(smallvec![where_(
                &isneginf(x)?,
                &fill(self.neginf.unwrap_or(-big)),
                &y
            )?])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0))]
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("self", SavedAttr::Slot(0))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![Some(mul(
            &ctx.grad(0)?,
            &isfinite(ctx.saved(0)?)?
        )?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let mask = isfinite(&ctx.primals[0])?;
        linear_jvp(ctx, |t| mul(t, &mask))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_unary(ctx, |x| nan_to_num(x, self.nan, self.posinf, self.neginf))
    }
}
pub fn nan_to_num(
    x: &Tensor,
    nan: f64,
    posinf: Option<f64>,
    neginf: Option<f64>,
) -> Result<Tensor> {
    apply1(
        nan_to_num_op(x, nan, posinf, neginf)?,
        std::slice::from_ref(x),
    )
}
pub fn nan_to_num_(x: &Tensor, nan: f64, posinf: Option<f64>, neginf: Option<f64>) -> Result<()> {
    crate::ops::inplace::unary_(nan_to_num_op(x, nan, posinf, neginf)?, x)
}
fn nan_to_num_op(
    x: &Tensor,
    nan: f64,
    posinf: Option<f64>,
    neginf: Option<f64>,
) -> Result<NanToNum> {
    if x.dtype().is_complex() {
        return Err(Error::not_implemented(
            "nan_to_num of complex tensors is not supported yet",
        ));
    }
    Ok(NanToNum {
        nan,
        posinf,
        neginf,
    })
}

/// Whether the sign bit is set: a bool result without history.
pub struct Signbit;
impl Op for Signbit {
    fn name(&self) -> &'static str {
        "SignbitBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        run(x, Unary::Signbit, x.dtype())
    }
    fn vjp(&self, _ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![None])
    }
    fn jvp(&self, _ctx: &JvpCtx) -> Result<Tangents> {
        Ok(smallvec![None])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_unary(ctx, signbit)
    }
}
pub fn signbit(x: &Tensor) -> Result<Tensor> {
    apply1(Signbit, std::slice::from_ref(x))
}
