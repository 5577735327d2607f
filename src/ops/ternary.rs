//! Ternary pointwise ops: `lerp` (scalar weight: LerpBackward0, tensor weight:
//! LerpBackward1), `addcmul` and `addcdiv`, broadcasting all three operands, and their
//! in-place forms. Forwards are one fused kernel each (kinds::Ternary), with torch's
//! formulas and rounding.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{result_type, Category, DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::Ternary;
use crate::ops::binary::{div, div_scalar, mul_scalar, sub, sub_scalar_rev};
use crate::ops::device::{backend, wrap};
use crate::ops::inplace::apply_inplace;
use crate::ops::rules::{batch_broadcast, elementwise_jvp, Partial};
use crate::ops::unary::neg;
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::tensor::Tensor;

/// lerp's weight: a Python number or a tensor.
#[derive(Clone, Copy)]
pub enum Weight<'a> {
    Scalar(Scalar),
    Tensor(&'a Tensor),
}

/// `lerp(start, end, weight)` = start + weight * (end - start). With a scalar weight
/// the inputs are (start, end), with a tensor weight (start, end, weight).
#[derive(Clone)]
pub struct Lerp {
    pub weight: Option<Scalar>,
}

/// c10's TypeMeta names, as lerp's dtype errors spell them.
fn type_meta_name(d: DType) -> &'static str {
    match d {
        DType::Bool => "bool",
        DType::U8 => "unsigned char",
        DType::I32 => "int",
        DType::I64 => "long int",
        DType::F16 => "c10::Half",
        DType::BF16 => "c10::BFloat16",
        DType::F32 => "float",
        DType::F64 => "double",
        DType::C64 => "c10::complex<float>",
        DType::C128 => "c10::complex<double>",
    }
}

fn same_dtype(start: &Tensor, other: &Tensor, what: &str) -> Result<()> {
    if other.dtype() != start.dtype() {
        return Err(Error::runtime(format!(
            "expected dtype {} for `{what}` but got dtype {}",
            type_meta_name(start.dtype()),
            type_meta_name(other.dtype())
        )));
    }
    Ok(())
}

/// 1 - w (the start's factor).
fn one_minus(w: Scalar) -> Scalar {
    match w {
        Scalar::Complex(c) => Scalar::Complex(num_complex::Complex64::new(1.0, 0.0) - c),
        Scalar::Int(i) => Scalar::Int(1 - i),
        Scalar::Bool(b) => Scalar::Int(1 - i64::from(b)),
        Scalar::Float(f) => Scalar::Float(1.0 - f),
    }
}

fn conj_scalar(s: Scalar) -> Scalar {
    match s {
        Scalar::Complex(c) => Scalar::Complex(c.conj()),
        s => s,
    }
}

/// The operands' broadcast shape, folded in argument order as torch's TensorIterator
/// does, so a mismatch names the operands as torch's message does (the shape so far is
/// tensor a), not in the order this op's composite happens to combine them.
fn broadcast_in_order(inputs: &[Tensor]) -> Result<()> {
    let mut shape = crate::shape::Dims::new();
    for t in inputs {
        shape = crate::shape::broadcast_shapes(&shape, &t.shape())?;
    }
    Ok(())
}

/// The forward of lerp and addcmul / addcdiv: one fused kernel over the operands (on
/// the first one's device), computed in `dtype`.
fn fused(inputs: &[Tensor], kind: Ternary, dtype: DType) -> Result<Outputs> {
    let data: SmallVec<[_; 3]> = inputs.iter().map(Tensor::data).collect();
    let refs: SmallVec<[&crate::storage::Data; 3]> = data.iter().map(|d| &**d).collect();
    Ok(smallvec![wrap(
        backend(&inputs[0])?.ternary(&refs, kind, dtype)?
    )])
}

impl Lerp {
    /// torch's checks: `end` (and a weight with dims) in start's dtype, a floating or
    /// complex dtype.
    fn check(&self, inputs: &[Tensor]) -> Result<()> {
        let start = &inputs[0];
        same_dtype(start, &inputs[1], "end")?;
        if let Some(w) = inputs.get(2).filter(|w| w.dim() > 0) {
            same_dtype(start, w, "weight")?;
        }
        if start.dtype().category() < Category::Floating {
            let kernel = match self.weight {
                Some(_) => "lerp_kernel_scalar",
                None => "lerp_kernel_tensor",
            };
            return Err(crate::dtype::unsupported(kernel, start.dtype()));
        }
        Ok(())
    }
}

impl Op for Lerp {
    fn name(&self) -> &'static str {
        match self.weight {
            Some(_) => "LerpBackward0",
            None => "LerpBackward1",
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        match self.weight {
            Some(w) => vec![("weight", SavedAttr::Scalar(w))],
            None => vec![
                ("self", SavedAttr::Slot(0)),
                ("end", SavedAttr::Slot(1)),
                ("weight", SavedAttr::Slot(2)),
            ],
        }
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        self.check(inputs)?;
        broadcast_in_order(inputs)?;
        let kind = match self.weight {
            Some(w) => Ternary::LerpScalar(w),
            None => Ternary::Lerp,
        };
        fused(inputs, kind, inputs[0].dtype())
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        match self.weight {
            Some(_) => SmallVec::new(),
            None => smallvec![
                Some(SaveRef::Input(0)),
                Some(SaveRef::Input(1)),
                Some(SaveRef::Input(2))
            ],
        }
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let grads = if let Some(w) = self.weight {
            let w = conj_scalar(w);
            smallvec![
                Some(mul_scalar(&g, one_minus(w))?),
                Some(mul_scalar(&g, w)?)
            ]
        } else {
            let partial = |i| self.partial(ctx.saved(0)?, ctx.saved(1)?, ctx.saved(2)?, i);
            (0..3)
                .map(|i| match ctx.needs(i) {
                    true => partial(i)?.vjp(&g).map(Some),
                    false => Ok(None),
                })
                .collect::<Result<_>>()?
        };
        Ok(grads)
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let p = ctx.primals;
        let dtype = ctx.outputs[0].dtype();
        elementwise_jvp(ctx, |i| match self.weight {
            Some(w) => {
                let factor = if i == 0 { one_minus(w) } else { w };
                Ok(Partial::Mul(Tensor::scalar(factor, dtype)))
            }
            None => self.partial(&p[0], &p[1], &p[2], i),
        })
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_broadcast(ctx, |a| {
            let weight = match self.weight {
                Some(w) => Weight::Scalar(w),
                None => Weight::Tensor(&a[2]),
            };
            lerp(&a[0], &a[1], weight)
        })
    }
}

impl Lerp {
    /// The derivative with respect to input `i` for a tensor weight: 1 - w, w, end - start.
    fn partial(&self, start: &Tensor, end: &Tensor, w: &Tensor, i: usize) -> Result<Partial> {
        Ok(Partial::Mul(match i {
            0 => sub_scalar_rev(Scalar::Int(1), w)?,
            1 => w.clone(),
            _ => sub(end, start, Scalar::Int(1))?,
        }))
    }
}

fn lerp_inputs(start: &Tensor, end: &Tensor, weight: Weight) -> (Lerp, Vec<Tensor>) {
    match weight {
        Weight::Scalar(w) => (Lerp { weight: Some(w) }, vec![start.clone(), end.clone()]),
        Weight::Tensor(w) => (
            Lerp { weight: None },
            vec![start.clone(), end.clone(), w.clone()],
        ),
    }
}

pub fn lerp(start: &Tensor, end: &Tensor, weight: Weight) -> Result<Tensor> {
    let (op, inputs) = lerp_inputs(start, end, weight);
    apply1(op, &inputs)
}

pub fn lerp_(start: &Tensor, end: &Tensor, weight: Weight) -> Result<()> {
    let (op, inputs) = lerp_inputs(start, end, weight);
    apply_inplace(op, &inputs)
}

// ---------------------------------------------------------------- addcmul / addcdiv

/// `addcmul(self, tensor1, tensor2, value)` = self + value * tensor1 * tensor2
/// (AddcmulBackward0), or with `/` for `addcdiv` (AddcdivBackward0).
#[derive(Clone)]
pub struct Addc {
    pub value: Scalar,
    pub divide: bool,
}

impl Addc {
    fn op_name(&self) -> &'static str {
        if self.divide {
            "addcdiv"
        } else {
            "addcmul"
        }
    }
    /// The result dtype: the operands' promotion (dims-0 tensors as torch weighs them).
    fn dtype(&self, inputs: &[Tensor]) -> DType {
        let operands: SmallVec<[(DType, bool); 3]> =
            inputs.iter().map(|t| (t.dtype(), t.dim() == 0)).collect();
        result_type(&operands, &[])
    }
    /// `value` as the op computes with it: integer results take its integer part, as
    /// torch converts the scalar to the result dtype.
    fn value_for(&self, inputs: &[Tensor]) -> Scalar {
        let integral = self.dtype(inputs).category() <= Category::Integral;
        match self.value {
            Scalar::Float(f) if integral => Scalar::Int(f as i64),
            v => v,
        }
    }
    fn check(&self, inputs: &[Tensor]) -> Result<()> {
        let integral = |t: &Tensor| t.dtype().category() <= Category::Integral;
        if self.divide && integral(&inputs[1]) && integral(&inputs[2]) {
            return Err(Error::runtime("Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes."));
        }
        if inputs.iter().all(|t| t.dtype() == DType::Bool) {
            let kernel = format!("{}_cpu_out", self.op_name());
            return Err(crate::dtype::unsupported(&kernel, DType::Bool));
        }
        Ok(())
    }
    /// The derivative with respect to tensor1 (`i == 1`) or tensor2 (`i == 2`):
    /// value * t2 and value * t1 for addcmul; value / t2 and -value * t1 / t2² for addcdiv.
    fn partial(&self, t1: &Tensor, t2: &Tensor, i: usize) -> Result<Partial> {
        Ok(match (self.divide, i) {
            (false, 1) => Partial::Mul(mul_scalar(t2, self.value)?),
            (false, _) => Partial::Mul(mul_scalar(t1, self.value)?),
            (true, 1) => Partial::Div(div_scalar(t2, self.value)?),
            (true, _) => Partial::Mul(neg(&mul_scalar(&div(&div(t1, t2)?, t2)?, self.value)?)?),
        })
    }
}

impl Op for Addc {
    fn name(&self) -> &'static str {
        if self.divide {
            "AddcdivBackward0"
        } else {
            "AddcmulBackward0"
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("tensor1", SavedAttr::Slot(0)),
            ("tensor2", SavedAttr::Slot(1)),
            ("value", SavedAttr::Scalar(self.value)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        self.check(inputs)?;
        broadcast_in_order(inputs)?;
        let value = self.value_for(inputs);
        let kind = match self.divide {
            true => Ternary::Addcdiv(value),
            false => Ternary::Addcmul(value),
        };
        fused(inputs, kind, self.dtype(inputs))
    }
    fn save(&self, needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        let either = needs[1] || needs[2];
        smallvec![
            either.then_some(SaveRef::Input(1)),
            either.then_some(SaveRef::Input(2))
        ]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let mut grads: Grads = smallvec![Some(g.clone())];
        for i in 1..3 {
            grads.push(match ctx.needs(i) {
                true => Some(self.partial(ctx.saved(0)?, ctx.saved(1)?, i)?.vjp(&g)?),
                false => None,
            });
        }
        Ok(grads)
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let p = ctx.primals;
        let dtype = ctx.outputs[0].dtype();
        elementwise_jvp(ctx, |i| match i {
            0 => Ok(Partial::Mul(Tensor::scalar(Scalar::Int(1), dtype))),
            i => self.partial(&p[1], &p[2], i),
        })
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_broadcast(ctx, |a| apply1(self.clone(), a))
    }
}

fn addc_inputs(x: &Tensor, t1: &Tensor, t2: &Tensor) -> [Tensor; 3] {
    [x.clone(), t1.clone(), t2.clone()]
}

/// `addcmul` (`divide: false`) or `addcdiv`.
pub fn addc(x: &Tensor, t1: &Tensor, t2: &Tensor, value: Scalar, divide: bool) -> Result<Tensor> {
    apply1(Addc { value, divide }, &addc_inputs(x, t1, t2))
}

pub fn addc_(x: &Tensor, t1: &Tensor, t2: &Tensor, value: Scalar, divide: bool) -> Result<()> {
    apply_inplace(Addc { value, divide }, &addc_inputs(x, t1, t2))
}
