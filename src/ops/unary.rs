//! Elementwise unary ops. Complex gradients follow torch's conjugate-Wirtinger
//! convention: for holomorphic f, grad_in = grad * conj(f'(z)).

use smallvec::{smallvec, SmallVec};

use crate::dtype::Scalar;
use crate::dtype::{default_float_dtype, DType};
use crate::error::Result;
use crate::kernels::kinds::{Func, Math, Unary};
use crate::ops::binary::{add_scalar, mul, mul_scalar, sub_scalar, sub_scalar_rev};
use crate::ops::device::{backend, cast, wrap};
use crate::ops::rules::{batch_unary, elementwise_jvp, linear_jvp, Partial};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::tensor::Tensor;

/// Integer and bool inputs of floating ops compute in the default float dtype.
pub(crate) fn float_dtype(x: &Tensor) -> DType {
    if x.dtype().is_differentiable() {
        x.dtype()
    } else {
        default_float_dtype()
    }
}

/// `op` over `x` by its device's backend, computed in `dtype`.
pub(crate) fn run(x: &Tensor, op: Unary, dtype: DType) -> Result<Outputs> {
    Ok(smallvec![wrap(backend(x)?.unary(&x.data(), op, dtype)?)])
}

/// One elementwise float op from its derivative, stated once as a [`Partial`] of the
/// saved value `v` (the input or the result, per `save`): vjp, jvp and batching follow.
macro_rules! float_unary_op {
    // The kernel kind: a function of `kinds::Func`, or else of the vector kernels (`Math`).
    ($(#[$doc:meta])* $ty:ident, $fn_name:ident, $name:literal, func $f:ident, $($rest:tt)*) => {
        float_unary_op!(@kind Unary::Func(Func::$f), $(#[$doc])* $ty, $fn_name, $name, $($rest)*);
    };
    ($(#[$doc:meta])* $ty:ident, $fn_name:ident, $name:literal, $vmath:ident, $($rest:tt)*) => {
        float_unary_op!(@kind Unary::Math(Math::$vmath), $(#[$doc])* $ty, $fn_name, $name, $($rest)*);
    };
    (@kind $kind:expr, $(#[$doc:meta])* $ty:ident, $fn_name:ident, $name:literal, save: $save:expr, d: |$v:ident| $d:expr) => {
        $(#[$doc])*
        pub struct $ty;
        impl $ty {
            fn partial($v: &Tensor) -> Result<Partial> { Ok($d) }
        }
        impl Op for $ty {
            fn name(&self) -> &'static str { $name }
            fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
                let x = &inputs[0];
                run(x, $kind, float_dtype(x))
            }
            fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> { smallvec![Some($save)] }
            fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
                let name = if matches!($save, SaveRef::Output(_)) { "result" } else { "self" };
                vec![(name, SavedAttr::Slot(0))]
            }
            fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
                Ok(smallvec![Some(Self::partial(ctx.saved(0)?)?.vjp(&ctx.grad(0)?)?)])
            }
            fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
                let v = match $save {
                    SaveRef::Output(j) => &ctx.outputs[j],
                    SaveRef::Input(i) => &ctx.primals[i],
                };
                elementwise_jvp(ctx, |_| Self::partial(v))
            }
            fn batch(&self, ctx: &BatchCtx) -> Result<Batched> { batch_unary(ctx, $fn_name) }
        }
        pub fn $fn_name(x: &Tensor) -> Result<Tensor> { apply1($ty, std::slice::from_ref(x)) }
    };
}

pub(crate) use float_unary_op;

float_unary_op!(Exp, exp, "ExpBackward0", Exp, save: SaveRef::Output(0),
    d: |y| Partial::Mul(y.clone()));
float_unary_op!(Log, log, "LogBackward0", Log, save: SaveRef::Input(0),
    d: |x| Partial::Div(x.clone()));
float_unary_op!(Sin, sin, "SinBackward0", Sin, save: SaveRef::Input(0),
    d: |x| Partial::Mul(cos(x)?));
float_unary_op!(Cos, cos, "CosBackward0", Cos, save: SaveRef::Input(0),
    d: |x| Partial::Mul(neg(&sin(x)?)?));
float_unary_op!(Tanh, tanh, "TanhBackward0", Tanh, save: SaveRef::Output(0),
    d: |y| Partial::Mul(sub_scalar_rev(Scalar::Int(1), &mul(y, y)?)?));
float_unary_op!(Sigmoid, sigmoid, "SigmoidBackward0", Sigmoid, save: SaveRef::Output(0),
    d: |y| Partial::Mul(mul(y, &sub_scalar_rev(Scalar::Int(1), y)?)?));
float_unary_op!(Sqrt, sqrt, "SqrtBackward0", Sqrt, save: SaveRef::Output(0),
    d: |y| Partial::Div(mul_scalar(y, Scalar::Int(2))?));

float_unary_op!(Tan, tan, "TanBackward0", Tan, save: SaveRef::Output(0),
    d: |y| Partial::Mul(add_scalar(&mul(y, y)?, Scalar::Int(1))?));
float_unary_op!(Expm1, expm1, "Expm1Backward0", Expm1, save: SaveRef::Output(0),
    d: |y| Partial::Mul(add_scalar(y, Scalar::Int(1))?));
float_unary_op!(Log1p, log1p, "Log1PBackward0", Log1p, save: SaveRef::Input(0),
    d: |x| Partial::Div(add_scalar(x, Scalar::Int(1))?));
float_unary_op!(Rsqrt, rsqrt, "RsqrtBackward0", Rsqrt, save: SaveRef::Output(0),
    d: |y| Partial::Mul(mul_scalar(&mul(&mul(y, y)?, y)?, Scalar::Float(-0.5))?));
float_unary_op!(
/// erf; d/dx = 2/sqrt(pi) exp(-x^2).
Erf, erf, "ErfBackward0", Erf, save: SaveRef::Input(0),
    d: |x| Partial::Mul(mul_scalar(&exp(&neg(&mul(x, x)?)?)?, Scalar::Float(std::f64::consts::FRAC_2_SQRT_PI))?));

float_unary_op!(Asin, asin, "AsinBackward0", func Asin, save: SaveRef::Input(0),
    d: |x| Partial::Div(sqrt(&sub_scalar_rev(Scalar::Int(1), &mul(x, x)?)?)?));
float_unary_op!(Acos, acos, "AcosBackward0", func Acos, save: SaveRef::Input(0),
    d: |x| Partial::Div(neg(&sqrt(&sub_scalar_rev(Scalar::Int(1), &mul(x, x)?)?)?)?));
float_unary_op!(Atan, atan, "AtanBackward0", func Atan, save: SaveRef::Input(0),
    d: |x| Partial::Div(add_scalar(&mul(x, x)?, Scalar::Int(1))?));
float_unary_op!(Sinh, sinh, "SinhBackward0", func Sinh, save: SaveRef::Input(0),
    d: |x| Partial::Mul(cosh(x)?));
float_unary_op!(Cosh, cosh, "CoshBackward0", func Cosh, save: SaveRef::Input(0),
    d: |x| Partial::Mul(sinh(x)?));
float_unary_op!(Asinh, asinh, "AsinhBackward0", func Asinh, save: SaveRef::Input(0),
    d: |x| Partial::Div(sqrt(&add_scalar(&mul(x, x)?, Scalar::Int(1))?)?));
float_unary_op!(Acosh, acosh, "AcoshBackward0", func Acosh, save: SaveRef::Input(0),
    d: |x| Partial::Div(sqrt(&sub_scalar(&mul(x, x)?, Scalar::Int(1))?)?));
float_unary_op!(Atanh, atanh, "AtanhBackward0", func Atanh, save: SaveRef::Input(0),
    d: |x| Partial::Div(sub_scalar_rev(Scalar::Int(1), &mul(x, x)?)?));
float_unary_op!(Exp2, exp2, "Exp2Backward0", func Exp2, save: SaveRef::Output(0),
    d: |y| Partial::Mul(mul_scalar(y, Scalar::Float(std::f64::consts::LN_2))?));
float_unary_op!(Log2, log2, "Log2Backward0", func Log2, save: SaveRef::Input(0),
    d: |x| Partial::Div(mul_scalar(x, Scalar::Float(std::f64::consts::LN_2))?));
float_unary_op!(Log10, log10, "Log10Backward0", func Log10, save: SaveRef::Input(0),
    d: |x| Partial::Div(mul_scalar(x, Scalar::Float(std::f64::consts::LN_10))?));

float_unary_op!(
/// deg2rad for real tensors (see `deg2rad`); the derivative is the constant.
Deg2Rad, deg2rad_real, "Deg2RadBackward0", func Deg2Rad, save: SaveRef::Input(0),
    d: |x| Partial::Mul(Tensor::scalar(Scalar::Float(std::f64::consts::PI / 180.0), x.dtype())));
float_unary_op!(
/// rad2deg for real tensors (see `rad2deg`).
Rad2Deg, rad2deg_real, "Rad2DegBackward0", func Rad2Deg, save: SaveRef::Input(0),
    d: |x| Partial::Mul(Tensor::scalar(Scalar::Float(180.0 / std::f64::consts::PI), x.dtype())));

/// `deg2rad` / `rad2deg`: real tensors only (integers and bool compute in the default
/// float dtype), as torch.
fn real_angles(x: &Tensor, name: &str) -> Result<()> {
    if x.dtype().is_complex() {
        return Err(crate::error::Error::not_implemented(format!(
            "{name} is not supported for complex tensors."
        )));
    }
    Ok(())
}
pub fn deg2rad(x: &Tensor) -> Result<Tensor> {
    real_angles(x, "deg2rad")?;
    deg2rad_real(x)
}
pub fn rad2deg(x: &Tensor) -> Result<Tensor> {
    real_angles(x, "rad2deg")?;
    rad2deg_real(x)
}
pub fn deg2rad_(x: &Tensor) -> Result<()> {
    real_angles(x, "deg2rad")?;
    crate::ops::inplace::apply_inplace(Deg2Rad, std::slice::from_ref(x))
}
pub fn rad2deg_(x: &Tensor) -> Result<()> {
    real_angles(x, "rad2deg")?;
    crate::ops::inplace::apply_inplace(Rad2Deg, std::slice::from_ref(x))
}

float_unary_op!(
/// 1/x; also how torch computes `scalar / tensor` (reciprocal, then multiply).
Reciprocal, reciprocal, "ReciprocalBackward0", Reciprocal, save: SaveRef::Output(0),
    d: |r| Partial::Mul(neg(&mul(r, r)?)?));

pub struct Neg;
impl Op for Neg {
    fn name(&self) -> &'static str {
        "NegBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        if x.dtype() == DType::Bool {
            return Err(crate::error::Error::runtime("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."));
        }
        run(x, Unary::Neg, x.dtype())
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![Some(neg(&ctx.grad(0)?)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, neg)
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_unary(ctx, neg)
    }
}
pub fn neg(x: &Tensor) -> Result<Tensor> {
    apply1(Neg, std::slice::from_ref(x))
}

/// relu: the rule masks with the saved result (torch's threshold_backward).
pub struct Relu;
impl Op for Relu {
    fn name(&self) -> &'static str {
        "ReluBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        if x.dtype() == DType::Bool {
            return Err(crate::dtype::unsupported("clamp_min_cpu", DType::Bool));
        }
        run(x, Unary::Relu, x.dtype())
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Output(0))]
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("result", SavedAttr::Slot(0))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![Some(
            relu_partial(ctx.saved(0)?)?.vjp(&ctx.grad(0)?)?
        )])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        elementwise_jvp(ctx, |_| relu_partial(&ctx.outputs[0]))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_unary(ctx, relu)
    }
}
/// The derivative is the mask `!(result <= 0)` (a bool tensor: conj leaves it alone):
/// torch's threshold_backward, which passes the gradient where the result is NaN.
fn relu_partial(result: &Tensor) -> Result<Partial> {
    let at_most_zero = crate::ops::binary::le_scalar(result, Scalar::Int(0))?;
    Ok(Partial::Mul(crate::ops::bitwise::logical_not(
        &at_most_zero,
    )?))
}
pub fn relu(x: &Tensor) -> Result<Tensor> {
    apply1(Relu, std::slice::from_ref(x))
}

pub struct Abs;
impl Op for Abs {
    fn name(&self) -> &'static str {
        "AbsBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        run(x, Unary::Abs, x.dtype())
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0))]
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("self", SavedAttr::Slot(0))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![Some(mul(&ctx.grad(0)?, &sgn(ctx.saved(0)?)?)?)])
    }
    /// `Re(t * conj(sgn(x)))`: the transpose of `grad * sgn(x)` (the result is real).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| real(&mul(t, &conj(&sgn(&ctx.primals[0])?)?)?))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_unary(ctx, abs)
    }
}
pub fn abs(x: &Tensor) -> Result<Tensor> {
    apply1(Abs, std::slice::from_ref(x))
}

/// sign for real tensors, z/|z| for complex (torch's sgn; `sign` is the same op on
/// real tensors under its own node name). Its gradient is zero almost everywhere.
pub struct Sgn {
    pub called_sign: bool,
}
impl Op for Sgn {
    fn name(&self) -> &'static str {
        if self.called_sign {
            "SignBackward0"
        } else {
            "SgnBackward0"
        }
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        run(x, Unary::Sgn, x.dtype())
    }
    fn save(&self, needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![needs[0].then_some(SaveRef::Input(0))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        if ctx.inputs[0].dtype.is_complex() {
            return Ok(smallvec![Some(complex_sgn_derivative(ctx.saved(0)?, &g)?)]);
        }
        Ok(smallvec![Some(crate::ops::creation::zeros_like(&g)?)])
    }
    /// Zero for real inputs (the transpose of the vjp); complex as the vjp (the map is
    /// self-adjoint).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let x = &ctx.primals[0];
        if x.dtype().is_complex() {
            return linear_jvp(ctx, |t| complex_sgn_derivative(x, t));
        }
        linear_jvp(ctx, crate::ops::creation::zeros_like)
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let called_sign = self.called_sign;
        batch_unary(ctx, |x| {
            apply1(Sgn { called_sign }, std::slice::from_ref(x))
        })
    }
}
/// The derivative of z / |z| applied to `v` (a gradient or a tangent: the map is
/// self-adjoint under Re<a, b>): (v - s Re(conj(s) v)) / |z| with s = sgn(z); 0 at z = 0,
/// where |z| is replaced by 1 first so no branch divides by zero.
fn complex_sgn_derivative(z: &Tensor, v: &Tensor) -> Result<Tensor> {
    let s = sgn(z)?;
    let r = abs(z)?;
    let at_zero = crate::ops::binary::eq_scalar(&r, Scalar::Int(0))?;
    let safe_r =
        crate::ops::binary::where_(&at_zero, &Tensor::scalar(Scalar::Int(1), r.dtype()), &r)?;
    let along = mul(&s, &real(&mul(&conj(&s)?, v)?)?)?;
    let d = crate::ops::binary::div(
        &crate::ops::binary::sub(v, &along, Scalar::Int(1))?,
        &safe_r,
    )?;
    crate::ops::binary::where_(&at_zero, &Tensor::scalar(Scalar::Int(0), d.dtype()), &d)
}

pub fn sgn(x: &Tensor) -> Result<Tensor> {
    apply1(Sgn { called_sign: false }, std::slice::from_ref(x))
}
pub fn sgn_(x: &Tensor) -> Result<()> {
    crate::ops::inplace::apply_inplace(Sgn { called_sign: false }, std::slice::from_ref(x))
}
/// `sign`: real tensors only (torch points complex users to `sgn`).
fn sign_of(x: &Tensor) -> Result<Sgn> {
    if x.dtype().is_complex() {
        return Err(crate::error::Error::not_implemented(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.",
        ));
    }
    Ok(Sgn { called_sign: true })
}
pub fn sign(x: &Tensor) -> Result<Tensor> {
    apply1(sign_of(x)?, std::slice::from_ref(x))
}
pub fn sign_(x: &Tensor) -> Result<()> {
    crate::ops::inplace::apply_inplace(sign_of(x)?, std::slice::from_ref(x))
}

/// Complex conjugate (a copy; identity for real tensors, which return themselves).
pub struct Conj;
impl Op for Conj {
    fn name(&self) -> &'static str {
        "ConjBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        run(x, Unary::Conj, x.dtype())
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![Some(conj(&ctx.grad(0)?)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, conj)
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_unary(ctx, conj)
    }
}
pub fn conj(x: &Tensor) -> Result<Tensor> {
    if !x.dtype().is_complex() {
        return Ok(x.clone());
    }
    apply1(Conj, std::slice::from_ref(x))
}

/// Real part of a complex tensor (identity for real ones).
pub struct Real_;
impl Op for Real_ {
    fn name(&self) -> &'static str {
        "RealBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        if !x.dtype().is_complex() {
            return Ok(smallvec![x.clone()]);
        }
        run(x, Unary::Real, x.dtype())
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        Ok(smallvec![Some(to_dtype(&g, ctx.inputs[0].dtype)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, real)
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_unary(ctx, real)
    }
}
pub fn real(x: &Tensor) -> Result<Tensor> {
    if !x.dtype().is_complex() {
        return Ok(x.clone());
    }
    apply1(Real_, std::slice::from_ref(x))
}

pub struct Clone_;
impl Op for Clone_ {
    fn name(&self) -> &'static str {
        "CloneBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        Ok(smallvec![cast(x, x.dtype())?])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![Some(ctx.grad(0)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, clone)
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_unary(ctx, clone)
    }
}
/// A new contiguous tensor with the same values (and history, when recording).
pub fn clone(x: &Tensor) -> Result<Tensor> {
    apply1(Clone_, std::slice::from_ref(x))
}

/// `.to(dtype)` / `.float()` ...: a cast copy; gradients are cast back by the engine.
pub struct ToCopy {
    pub dtype: DType,
}
impl Op for ToCopy {
    fn name(&self) -> &'static str {
        "ToCopyBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        Ok(smallvec![cast(&inputs[0], self.dtype)?])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let g = if g.dtype().is_complex() && !ctx.inputs[0].dtype.is_complex() {
            real(&g)?
        } else {
            g
        };
        Ok(smallvec![Some(g)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| crate::ops::rules::fit(t.clone(), &ctx.outputs[0]))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_unary(ctx, |x| to_dtype(x, self.dtype))
    }
}
pub fn to_dtype(x: &Tensor, dtype: DType) -> Result<Tensor> {
    if x.dtype() == dtype {
        return Ok(x.clone());
    }
    apply1(ToCopy { dtype }, std::slice::from_ref(x))
}

/// Identity whose backward sends an undefined gradient (gradcheck's undefined-grad
/// check: every rule must cope with missing output gradients).
pub struct UndefinedGrad;
impl Op for UndefinedGrad {
    fn name(&self) -> &'static str {
        "UndefinedGradBackward"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        Ok(smallvec![cast(&inputs[0], inputs[0].dtype())?])
    }
    fn vjp(&self, _ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![None])
    }
    /// The transpose of a vjp that sends nothing: a zero tangent.
    fn jvp(&self, _ctx: &JvpCtx) -> Result<Tangents> {
        Ok(smallvec![None])
    }
}
pub fn undefined_grad(x: &Tensor) -> Result<Tensor> {
    apply1(UndefinedGrad, std::slice::from_ref(x))
}

/// The node `once_differentiable` puts on results computed under create_graph: an
/// alias of input 0 whose backward refuses to run (torch's `torch::autograd::Error`).
/// The other inputs only connect the node to what the gradient would have needed.
pub struct ErrorNode {
    pub message: String,
}
impl Op for ErrorNode {
    fn name(&self) -> &'static str {
        "torch::autograd::Error"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        Ok(smallvec![inputs[0].alias_detached()])
    }
    fn vjp(&self, _ctx: &VjpCtx) -> Result<Grads> {
        Err(crate::error::Error::runtime(self.message.clone()))
    }
    fn jvp(&self, _ctx: &JvpCtx) -> Result<Tangents> {
        Err(crate::error::Error::runtime(self.message.clone()))
    }
}
pub fn error_node(value: &Tensor, connect: &[Tensor], message: String) -> Result<Tensor> {
    let mut inputs = vec![value.clone()];
    inputs.extend(connect.iter().cloned());
    apply1(ErrorNode { message }, &inputs)
}
