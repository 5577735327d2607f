//! Broadcasting binary ops (tensor ⊕ tensor and tensor ⊕ Python scalar), comparisons
//! and `where`. Operands are promoted to torch's result type before the kernel runs;
//! the engine casts and sum-reduces gradients back to each input's dtype and shape.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{
    default_float_dtype, promote_with_scalar, result_type, Category, DType, Scalar,
};
use crate::error::{Error, Result};
use crate::ops::device::{backend, wrap};
use crate::ops::rules::{
    batch_broadcast, batch_unary, elementwise_jvp, fit, linear_jvp, sum_tangents, Partial,
};
use crate::ops::unary::{conj, log, neg};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::tensor::Tensor;

/// The arithmetic kinds (the backend's `Binary`), as the op table names them.
pub use crate::kernels::kinds::Binary as Arithmetic;
/// The comparison kinds (the backend's `Compare`).
pub use crate::kernels::kinds::Compare as Cmp;

/// The dtype the op computes in (true division promotes integers to float).
fn compute_dtype(kind: Arithmetic, d: DType) -> DType {
    if kind == Arithmetic::Div && d.category() <= Category::Integral {
        default_float_dtype()
    } else {
        d
    }
}

fn tensor_dtype(kind: Arithmetic, a: &Tensor, b: &Tensor) -> DType {
    compute_dtype(
        kind,
        result_type(&[(a.dtype(), a.dim() == 0), (b.dtype(), b.dim() == 0)], &[]),
    )
}

/// a ⊕ b with broadcasting, computed in `dtype` by the operands' backend.
fn arith_tensor(kind: Arithmetic, a: &Tensor, b: &Tensor, dtype: DType) -> Result<Tensor> {
    Ok(wrap(backend(a)?.binary(
        &a.data(),
        &b.data(),
        kind,
        dtype,
    )?))
}

/// a ⊕ s (or s ⊕ a when `reversed`), computed in `dtype`.
fn arith_scalar(
    kind: Arithmetic,
    a: &Tensor,
    s: Scalar,
    reversed: bool,
    dtype: DType,
) -> Result<Tensor> {
    Ok(wrap(backend(a)?.binary_scalar(
        &a.data(),
        s,
        kind,
        reversed,
        dtype,
    )?))
}

/// Whether `dst ⊕= alpha * other` can be written straight into dst (Op::writes_in_place,
/// asked only outside vmap): the result's dtype is dst's own and other's, both live on
/// one device, and the layouts pass `kernels::copy::can_update`.
fn updates_in_place(kind: Arithmetic, dst: &Tensor, other: &Tensor) -> bool {
    let dtype = tensor_dtype(kind, dst, other);
    dtype == dst.dtype()
        && other.dtype() == dtype
        && other.device() == dst.device()
        && crate::kernels::copy::can_update(&dst.data(), &other.data())
}

/// The write `updates_in_place` allowed.
fn update_in_place(kind: Arithmetic, alpha: Scalar, inputs: &[Tensor]) -> Result<()> {
    let (dst, other) = (&inputs[0], &inputs[1]);
    if backend(dst)?.binary_in_place(&dst.data(), &other.data(), kind, alpha)? {
        return Ok(());
    }
    // The backend has no kernel for these operands: compute, then copy in.
    let value = arith_tensor(
        kind,
        dst,
        &scaled_operand(other, alpha, dst.dtype())?,
        dst.dtype(),
    )?;
    crate::ops::device::write_into(dst, &value)
}

/// `alpha * b` in `dtype` (b itself when alpha is one).
fn scaled_operand(b: &Tensor, alpha: Scalar, dtype: DType) -> Result<Tensor> {
    if alpha.is_one() {
        Ok(b.clone())
    } else {
        arith_scalar(Arithmetic::Mul, b, alpha, false, dtype)
    }
}

fn one(t: Tensor) -> Result<Outputs> {
    Ok(smallvec![t])
}

// ---------------------------------------------------------------- add / sub

pub struct Add {
    pub alpha: Scalar,
}
impl Op for Add {
    fn name(&self) -> &'static str {
        "AddBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("alpha", SavedAttr::Scalar(self.alpha))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (a, b) = (&inputs[0], &inputs[1]);
        let dtype = tensor_dtype(Arithmetic::Add, a, b);
        let b = scaled_operand(b, self.alpha, dtype)?;
        one(arith_tensor(Arithmetic::Add, a, &b, dtype)?)
    }
    fn writes_in_place(&self, inputs: &[Tensor]) -> bool {
        updates_in_place(Arithmetic::Add, &inputs[0], &inputs[1])
    }
    fn write_in_place(&self, inputs: &[Tensor]) -> Result<()> {
        update_in_place(Arithmetic::Add, self.alpha, inputs)
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let g_other = if ctx.needs(1) {
            Some(scale(&g, self.alpha)?)
        } else {
            None
        };
        Ok(smallvec![Some(g), g_other])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        add_jvp(ctx, self.alpha, false)
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_broadcast(ctx, |a| add_alpha(&a[0], &a[1], self.alpha))
    }
}

pub struct Sub {
    pub alpha: Scalar,
}
impl Op for Sub {
    fn name(&self) -> &'static str {
        "SubBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("alpha", SavedAttr::Scalar(self.alpha))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (a, b) = (&inputs[0], &inputs[1]);
        let dtype = tensor_dtype(Arithmetic::Sub, a, b);
        if dtype == DType::Bool {
            return Err(Arithmetic::Sub.bool_error());
        }
        let b = scaled_operand(b, self.alpha, dtype)?;
        one(arith_tensor(Arithmetic::Sub, a, &b, dtype)?)
    }
    fn writes_in_place(&self, inputs: &[Tensor]) -> bool {
        updates_in_place(Arithmetic::Sub, &inputs[0], &inputs[1])
    }
    fn write_in_place(&self, inputs: &[Tensor]) -> Result<()> {
        update_in_place(Arithmetic::Sub, self.alpha, inputs)
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let g_other = if ctx.needs(1) {
            Some(neg(&scale(&g, self.alpha)?)?)
        } else {
            None
        };
        Ok(smallvec![Some(g), g_other])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        add_jvp(ctx, self.alpha, true)
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_broadcast(ctx, |a| sub(&a[0], &a[1], self.alpha))
    }
}

/// Linear family: the tangent of `a ± alpha * b` is `ta ± alpha * tb` (alpha itself, not
/// its conjugate: that is the vjp's).
fn add_jvp(ctx: &JvpCtx, alpha: Scalar, negate: bool) -> Result<Tangents> {
    let tb = match ctx.tangent(1) {
        None => None,
        Some(tb) => {
            let s = if alpha.is_one() {
                tb.clone()
            } else {
                mul_scalar(tb, alpha)?
            };
            Some(if negate { neg(&s)? } else { s })
        }
    };
    let total = sum_tangents([Ok(ctx.tangent(0).cloned()), Ok(tb)])?;
    Ok(smallvec![total
        .map(|t| fit(t, &ctx.outputs[0]))
        .transpose()?])
}

/// g * conj(alpha), skipping the multiply for alpha == 1.
fn scale(g: &Tensor, alpha: Scalar) -> Result<Tensor> {
    if alpha.is_one() {
        return Ok(g.clone());
    }
    let a = match alpha {
        Scalar::Complex(c) => Scalar::Complex(c.conj()),
        s => s,
    };
    mul_scalar(g, a)
}

pub fn add(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    apply1(
        Add {
            alpha: Scalar::Int(1),
        },
        &[a.clone(), b.clone()],
    )
}
pub fn add_alpha(a: &Tensor, b: &Tensor, alpha: Scalar) -> Result<Tensor> {
    apply1(Add { alpha }, &[a.clone(), b.clone()])
}
pub fn sub(a: &Tensor, b: &Tensor, alpha: Scalar) -> Result<Tensor> {
    apply1(Sub { alpha }, &[a.clone(), b.clone()])
}

/// A Python number as the 0-dim "wrapped number" tensor torch's operators use: its dtype
/// is what the number promotes `peer` to, so it never widens the result beyond torch's
/// scalar promotion rules.
pub fn wrapped_scalar(peer: &Tensor, s: Scalar) -> Tensor {
    Tensor::scalar(s, promote_with_scalar(peer.dtype(), s))
}

pub fn add_scalar(a: &Tensor, s: Scalar) -> Result<Tensor> {
    add(a, &wrapped_scalar(a, s))
}
pub fn sub_scalar(a: &Tensor, s: Scalar) -> Result<Tensor> {
    sub(a, &wrapped_scalar(a, s), Scalar::Int(1))
}
pub fn mul_scalar(a: &Tensor, s: Scalar) -> Result<Tensor> {
    mul(a, &wrapped_scalar(a, s))
}
pub fn div_scalar(a: &Tensor, s: Scalar) -> Result<Tensor> {
    div(a, &wrapped_scalar(a, s))
}

/// The ops torch records with a Scalar operand: `s - x` (RsubBackward1), `x ** s`
/// (PowBackward0) and `s ** x` (PowBackward2).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ScalarOpKind {
    Rsub,
    Pow,
    RPow,
}

pub struct ScalarOp {
    pub kind: ScalarOpKind,
    pub scalar: Scalar,
}

impl Op for ScalarOp {
    fn name(&self) -> &'static str {
        match self.kind {
            ScalarOpKind::Rsub => "RsubBackward1",
            ScalarOpKind::Pow => "PowBackward0",
            ScalarOpKind::RPow => "PowBackward2",
        }
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let a = &inputs[0];
        let (kind, reversed) = match self.kind {
            ScalarOpKind::Rsub => (Arithmetic::Sub, true),
            ScalarOpKind::Pow => (Arithmetic::Pow, false),
            ScalarOpKind::RPow => (Arithmetic::Pow, true),
        };
        let dtype = compute_dtype(kind, promote_with_scalar(a.dtype(), self.scalar));
        if self.kind == ScalarOpKind::Pow && dtype.category() == Category::Integral {
            if let Scalar::Int(e) = self.scalar {
                if e < 0 {
                    return Err(Error::runtime(
                        "Integers to negative integer powers are not allowed.",
                    ));
                }
            }
        }
        one(arith_scalar(kind, a, self.scalar, reversed, dtype)?)
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        match self.kind {
            ScalarOpKind::Rsub => vec![("other", SavedAttr::Scalar(self.scalar))],
            ScalarOpKind::Pow => vec![
                ("self", SavedAttr::Slot(0)),
                ("exponent", SavedAttr::Scalar(self.scalar)),
            ],
            ScalarOpKind::RPow => vec![
                ("self", SavedAttr::Scalar(self.scalar)),
                ("result", SavedAttr::Slot(0)),
            ],
        }
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        match self.kind {
            ScalarOpKind::Rsub => smallvec![],
            ScalarOpKind::Pow => smallvec![Some(SaveRef::Input(0))],
            ScalarOpKind::RPow => smallvec![Some(SaveRef::Output(0))],
        }
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let out = match self.kind {
            ScalarOpKind::Rsub => neg(&g)?,
            ScalarOpKind::Pow if self.scalar.is_zero() => crate::ops::creation::zeros_like(&g)?,
            _ => self.partial(ctx.saved(0)?)?.vjp(&g)?,
        };
        Ok(smallvec![Some(out)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        match self.kind {
            ScalarOpKind::Rsub => linear_jvp(ctx, neg),
            ScalarOpKind::Pow if self.scalar.is_zero() => {
                linear_jvp(ctx, crate::ops::creation::zeros_like)
            }
            ScalarOpKind::Pow => elementwise_jvp(ctx, |_| self.partial(&ctx.primals[0])),
            ScalarOpKind::RPow => elementwise_jvp(ctx, |_| self.partial(&ctx.outputs[0])),
        }
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let op = || ScalarOp {
            kind: self.kind,
            scalar: self.scalar,
        };
        batch_unary(ctx, |x| apply1(op(), std::slice::from_ref(x)))
    }
}

impl ScalarOp {
    /// The derivative, from the saved value `v` (the input for `x ** s`, the result for
    /// `s ** x`). `s - x` is linear (its rules negate) and asks for none.
    fn partial(&self, v: &Tensor) -> Result<Partial> {
        let s = self.scalar;
        Ok(Partial::Mul(match self.kind {
            ScalarOpKind::Rsub => Tensor::scalar(Scalar::Int(-1), v.dtype()),
            ScalarOpKind::Pow => {
                let e_minus_1 = match s {
                    Scalar::Int(i) => Scalar::Int(i - 1),
                    Scalar::Bool(b) => Scalar::Int(b as i64 - 1),
                    Scalar::Float(f) => Scalar::Float(f - 1.0),
                    Scalar::Complex(c) => Scalar::Complex(c - 1.0),
                };
                mul_scalar(&pow_scalar(v, e_minus_1)?, s)?
            }
            ScalarOpKind::RPow => {
                // d(s^x)/dx = s^x * ln(s)
                let ln_s = s.to_c64().ln();
                let ln_s = if ln_s.im == 0.0 {
                    Scalar::Float(ln_s.re)
                } else {
                    Scalar::Complex(ln_s)
                };
                mul_scalar(v, ln_s)?
            }
        }))
    }
}

/// s - a
pub fn sub_scalar_rev(s: Scalar, a: &Tensor) -> Result<Tensor> {
    apply1(
        ScalarOp {
            kind: ScalarOpKind::Rsub,
            scalar: s,
        },
        std::slice::from_ref(a),
    )
}
pub fn pow_scalar(a: &Tensor, e: Scalar) -> Result<Tensor> {
    apply1(
        ScalarOp {
            kind: ScalarOpKind::Pow,
            scalar: e,
        },
        std::slice::from_ref(a),
    )
}
/// s ** a
/// `x * x` as torch computes it: `pow(x, 2)` (PowBackward0).
pub fn square(x: &Tensor) -> Result<Tensor> {
    pow_scalar(x, Scalar::Int(2))
}

pub fn pow_scalar_rev(s: Scalar, a: &Tensor) -> Result<Tensor> {
    apply1(
        ScalarOp {
            kind: ScalarOpKind::RPow,
            scalar: s,
        },
        std::slice::from_ref(a),
    )
}

// ---------------------------------------------------------------- mul / div / pow

pub struct Mul;
impl Op for Mul {
    fn name(&self) -> &'static str {
        "MulBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("other", SavedAttr::Slot(0)), ("self", SavedAttr::Slot(1))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (a, b) = (&inputs[0], &inputs[1]);
        one(arith_tensor(
            Arithmetic::Mul,
            a,
            b,
            tensor_dtype(Arithmetic::Mul, a, b),
        )?)
    }
    fn writes_in_place(&self, inputs: &[Tensor]) -> bool {
        updates_in_place(Arithmetic::Mul, &inputs[0], &inputs[1])
    }
    fn write_in_place(&self, inputs: &[Tensor]) -> Result<()> {
        update_in_place(Arithmetic::Mul, Scalar::Int(1), inputs)
    }
    fn save(&self, needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![
            needs[0].then_some(SaveRef::Input(1)),
            needs[1].then_some(SaveRef::Input(0))
        ]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let ga = if ctx.needs(0) {
            Some(mul(&g, &conj(ctx.saved(0)?)?)?)
        } else {
            None
        };
        let gb = if ctx.needs(1) {
            Some(mul(&g, &conj(ctx.saved(1)?)?)?)
        } else {
            None
        };
        Ok(smallvec![ga, gb])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        elementwise_jvp(ctx, |i| Ok(Partial::Mul(ctx.primals[1 - i].clone())))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_broadcast(ctx, |a| mul(&a[0], &a[1]))
    }
}
pub fn mul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    apply1(Mul, &[a.clone(), b.clone()])
}

pub struct Div;
impl Op for Div {
    fn name(&self) -> &'static str {
        "DivBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("self", SavedAttr::Slot(0)), ("other", SavedAttr::Slot(1))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (a, b) = (&inputs[0], &inputs[1]);
        one(arith_tensor(
            Arithmetic::Div,
            a,
            b,
            tensor_dtype(Arithmetic::Div, a, b),
        )?)
    }
    fn writes_in_place(&self, inputs: &[Tensor]) -> bool {
        updates_in_place(Arithmetic::Div, &inputs[0], &inputs[1])
    }
    fn write_in_place(&self, inputs: &[Tensor]) -> Result<()> {
        update_in_place(Arithmetic::Div, Scalar::Int(1), inputs)
    }
    fn save(&self, needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![
            needs[1].then_some(SaveRef::Input(0)),
            Some(SaveRef::Input(1))
        ]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let b = ctx.saved(1)?;
        let ga = if ctx.needs(0) {
            Some(div(&g, &conj(b)?)?)
        } else {
            None
        };
        let gb = if ctx.needs(1) {
            let a = ctx.saved(0)?;
            let q = div(&div(a, b)?, b)?;
            Some(neg(&mul(&g, &conj(&q)?)?)?)
        } else {
            None
        };
        Ok(smallvec![ga, gb])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (a, b) = (&ctx.primals[0], &ctx.primals[1]);
        elementwise_jvp(ctx, |i| {
            Ok(if i == 0 {
                Partial::Div(b.clone())
            } else {
                Partial::Mul(neg(&div(&div(a, b)?, b)?)?)
            })
        })
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_broadcast(ctx, |a| div(&a[0], &a[1]))
    }
}
pub fn div(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    apply1(Div, &[a.clone(), b.clone()])
}

pub struct Pow;
impl Op for Pow {
    fn name(&self) -> &'static str {
        "PowBackward1"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("self", SavedAttr::Slot(0)),
            ("exponent", SavedAttr::Slot(1)),
            ("result", SavedAttr::Slot(2)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (a, b) = (&inputs[0], &inputs[1]);
        // The backend refuses negative integer exponents (it owns the elements).
        let dtype = tensor_dtype(Arithmetic::Pow, a, b);
        one(arith_tensor(Arithmetic::Pow, a, b, dtype)?)
    }
    fn save(&self, needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![
            Some(SaveRef::Input(0)),
            Some(SaveRef::Input(1)),
            needs[1].then_some(SaveRef::Output(0))
        ]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let (x, e) = (ctx.saved(0)?, ctx.saved(1)?);
        let gx = if ctx.needs(0) {
            Some(pow_partial_base(x, e)?.vjp(&g)?)
        } else {
            None
        };
        let ge = if ctx.needs(1) {
            Some(pow_partial_exponent(x, e, ctx.saved(2)?)?.vjp(&g)?)
        } else {
            None
        };
        Ok(smallvec![gx, ge])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (x, e) = (&ctx.primals[0], &ctx.primals[1]);
        elementwise_jvp(ctx, |i| {
            if i == 0 {
                pow_partial_base(x, e)
            } else {
                pow_partial_exponent(x, e, &ctx.outputs[0])
            }
        })
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_broadcast(ctx, |a| pow(&a[0], &a[1]))
    }
}

/// d(x ** e)/dx = e * x ** (e - 1).
fn pow_partial_base(x: &Tensor, e: &Tensor) -> Result<Partial> {
    let d = mul(e, &pow(x, &sub_scalar(e, Scalar::Int(1))?)?)?;
    // 0 ** 0 has derivative 0 in torch, not e * 0 ** -1.
    Ok(Partial::Mul(where_(
        &eq_scalar(e, Scalar::Int(0))?,
        &crate::ops::creation::zeros_like(&d)?,
        &d,
    )?))
}

/// d(x ** e)/de = result * log(x).
fn pow_partial_exponent(x: &Tensor, e: &Tensor, result: &Tensor) -> Result<Partial> {
    let d = mul(result, &log(x)?)?;
    // x == 0 with e >= 0: the limit is 0 (torch masks the NaN/inf from log(0)).
    let mask = mul(
        &eq_scalar(x, Scalar::Int(0))?,
        &ge_scalar(&real_part(e)?, Scalar::Int(0))?,
    )?;
    Ok(Partial::Mul(where_(
        &mask,
        &crate::ops::creation::zeros_like(&d)?,
        &d,
    )?))
}
pub fn pow(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    apply1(Pow, &[a.clone(), b.clone()])
}

fn real_part(t: &Tensor) -> Result<Tensor> {
    crate::ops::unary::real(t)
}

// ---------------------------------------------------------------- comparisons

/// Comparison results are bool tensors and never carry history.
pub fn compare(a: &Tensor, b: &Tensor, cmp: Cmp) -> Result<Tensor> {
    let pair = [a.clone(), b.clone()];
    let _range = crate::profiler::named_op_range(cmp.aten_name(), &pair);
    if crate::functorch::batched::any_batched(&pair) {
        let mut out = crate::functorch::batched::dispatch(&pair, |ctx| {
            batch_broadcast(ctx, |args| compare(&args[0], &args[1], cmp))
        })?;
        return Ok(out.swap_remove(0));
    }
    let dtype = result_type(&[(a.dtype(), a.dim() == 0), (b.dtype(), b.dim() == 0)], &[]);
    Ok(wrap(backend(a)?.compare(
        &a.data(),
        &b.data(),
        cmp,
        dtype,
    )?))
}

pub fn compare_scalar(a: &Tensor, s: Scalar, cmp: Cmp) -> Result<Tensor> {
    let dtype = promote_with_scalar(a.dtype(), s);
    let other = Tensor::scalar(s, dtype);
    compare(a, &other, cmp)
}

pub fn eq_scalar(a: &Tensor, s: Scalar) -> Result<Tensor> {
    compare_scalar(a, s, Cmp::Eq)
}
pub fn gt_scalar(a: &Tensor, s: Scalar) -> Result<Tensor> {
    compare_scalar(a, s, Cmp::Gt)
}
pub fn ge_scalar(a: &Tensor, s: Scalar) -> Result<Tensor> {
    compare_scalar(a, s, Cmp::Ge)
}
pub fn le_scalar(a: &Tensor, s: Scalar) -> Result<Tensor> {
    compare_scalar(a, s, Cmp::Le)
}

// ---------------------------------------------------------------- where

pub struct Where;
impl Op for Where {
    fn name(&self) -> &'static str {
        "WhereBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("condition", SavedAttr::Slot(0))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (c, a, b) = (&inputs[0], &inputs[1], &inputs[2]);
        if c.dtype() != DType::Bool && c.dtype() != DType::U8 {
            return Err(Error::runtime(format!(
                "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
                c.dtype().scalar_type_name()
            )));
        }
        let dtype = result_type(&[(a.dtype(), a.dim() == 0), (b.dtype(), b.dim() == 0)], &[]);
        one(wrap(backend(a)?.select(
            &c.data(),
            &a.data(),
            &b.data(),
            dtype,
        )?))
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let c = ctx.saved(0)?;
        let zero = crate::ops::creation::zeros_like(&g)?;
        let ga = if ctx.needs(1) {
            Some(where_(c, &g, &zero)?)
        } else {
            None
        };
        let gb = if ctx.needs(2) {
            Some(where_(c, &zero, &g)?)
        } else {
            None
        };
        Ok(smallvec![None, ga, gb])
    }
    /// Linear in the two values: `where(c, ta, tb)`, a zero tangent as a 0-dim zero.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let out = &ctx.outputs[0];
        if ctx.tangent(1).is_none() && ctx.tangent(2).is_none() {
            return Ok(smallvec![None]);
        }
        let zero = || Tensor::scalar(Scalar::Int(0), out.dtype());
        let ta = ctx.tangent(1).cloned().unwrap_or_else(zero);
        let tb = ctx.tangent(2).cloned().unwrap_or_else(zero);
        Ok(smallvec![Some(fit(
            where_(&ctx.primals[0], &ta, &tb)?,
            out
        )?)])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_broadcast(ctx, |a| where_(&a[0], &a[1], &a[2]))
    }
}
pub fn where_(cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    apply1(Where, &[cond.clone(), a.clone(), b.clone()])
}
