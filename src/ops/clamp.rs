//! `clamp` / `clip` / `clamp_min` / `clamp_max`, with number bounds (`Clamp`) or tensor
//! bounds (`ClampTensor`). torch names the nodes after the overload: ClampBackward1 for
//! numbers, ClampBackward0 for tensors, ClampMin/ClampMaxBackward0 (numbers) and
//! ClampMin/ClampMaxBackward1 (tensors) for the one-sided functions.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{result_type, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::{Bitwise, Extremum};
use crate::ops::binary::{compare, ge_scalar, le_scalar, mul, where_, Cmp};
use crate::ops::creation::zeros_like;
use crate::ops::device::{backend, cast, wrap};
use crate::ops::extrema::Pairwise;
use crate::ops::inplace::apply_inplace;
use crate::ops::rules::{batch_broadcast, batch_unary, elementwise_jvp, linear_jvp, Partial};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, Tangents, VjpCtx,
};
use crate::tensor::Tensor;

fn not(m: &Tensor) -> Result<Tensor> {
    crate::ops::bitwise::logical_not(m)
}
fn and(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    crate::ops::bitwise::bitwise(a, b, Bitwise::And)
}
fn or(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    crate::ops::bitwise::bitwise(a, b, Bitwise::Or)
}

/// Which function a clamp node came from (it names the node).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ClampFn {
    Clamp,
    Min,
    Max,
}

const NO_BOUND: &str = "torch.clamp: At least one of 'min' or 'max' must not be None";

/// clamp(min, max) with number bounds; the gradient passes where min <= x <= max.
pub struct Clamp {
    pub min: Option<Scalar>,
    pub max: Option<Scalar>,
    pub called: ClampFn,
}
impl Op for Clamp {
    fn name(&self) -> &'static str {
        match self.called {
            ClampFn::Clamp => "ClampBackward1",
            ClampFn::Min => "ClampMinBackward0",
            ClampFn::Max => "ClampMaxBackward0",
        }
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        if self.min.is_none() && self.max.is_none() {
            return Err(Error::runtime(NO_BOUND));
        }
        let dtype = [self.min, self.max]
            .iter()
            .flatten()
            .fold(x.dtype(), |d, &s| crate::dtype::promote_with_scalar(d, s));
        let out = backend(x)?.clamp(&x.data(), self.min, self.max, dtype)?;
        Ok(smallvec![wrap(out)])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        Ok(smallvec![Some(match self.partial(ctx.saved(0)?)? {
            Some(d) => d.vjp(&g)?,
            None => g,
        })])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        match self.partial(&ctx.primals[0])? {
            Some(d) => elementwise_jvp(ctx, |_| Ok(d.clone())),
            None => linear_jvp(ctx, |t| Ok(t.clone())),
        }
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (min, max, called) = (self.min, self.max, self.called);
        batch_unary(ctx, |x| {
            apply1(Clamp { min, max, called }, std::slice::from_ref(x))
        })
    }
}
impl Clamp {
    /// The mask `min <= x <= max` (None: no bound, the derivative is 1).
    fn partial(&self, x: &Tensor) -> Result<Option<Partial>> {
        let mut mask: Option<Tensor> = None;
        if let Some(lo) = self.min {
            mask = Some(ge_scalar(x, lo)?);
        }
        if let Some(hi) = self.max {
            let m = le_scalar(x, hi)?;
            mask = Some(match mask {
                Some(prev) => mul(&prev, &m)?,
                None => m,
            });
        }
        Ok(mask.map(Partial::Mul))
    }
}

pub fn clamp(x: &Tensor, min: Option<Scalar>, max: Option<Scalar>) -> Result<Tensor> {
    clamp_scalars(x, min, max, ClampFn::Clamp)
}
pub fn clamp_scalars(
    x: &Tensor,
    min: Option<Scalar>,
    max: Option<Scalar>,
    called: ClampFn,
) -> Result<Tensor> {
    apply1(Clamp { min, max, called }, std::slice::from_ref(x))
}
pub fn clamp_scalars_(
    x: &Tensor,
    min: Option<Scalar>,
    max: Option<Scalar>,
    called: ClampFn,
) -> Result<()> {
    apply_inplace(Clamp { min, max, called }, std::slice::from_ref(x))
}

/// clamp with tensor bounds: inputs `[x, min]`, `[x, max]` or `[x, min, max]` (the
/// flags say which), all three broadcast and promoted together. The result is
/// `minimum(maximum(x, min), max)`, so a NaN anywhere gives NaN, as torch's kernel.
#[derive(Clone, Copy)]
pub struct ClampTensor {
    pub has_min: bool,
    pub has_max: bool,
    pub called: ClampFn,
}

impl ClampTensor {
    fn bounds<'a>(&self, inputs: &'a [Tensor]) -> (Option<&'a Tensor>, Option<&'a Tensor>) {
        let min = self.has_min.then(|| &inputs[1]);
        let max = self.has_max.then(|| &inputs[inputs.len() - 1]);
        (min, max)
    }
    /// Where each of x, min, max gets the gradient (torch's clamp_backward_min_max):
    /// x where min <= x <= max, min where x < min, max where x > max.
    fn masks(&self, inputs: &[Tensor]) -> Result<SmallVec<[Tensor; 3]>> {
        let x = &inputs[0];
        let (min, max) = self.bounds(inputs);
        let mut masks: SmallVec<[Tensor; 3]> = SmallVec::new();
        let mut pass: Option<Tensor> = None;
        let mut sides: SmallVec<[Tensor; 2]> = SmallVec::new();
        if let Some(lo) = min {
            let inside = compare(x, lo, Cmp::Ge)?;
            sides.push(not(&inside)?);
            pass = Some(inside);
        }
        if let Some(hi) = max {
            let inside = compare(x, hi, Cmp::Le)?;
            sides.push(not(&inside)?);
            pass = Some(match pass {
                Some(p) => and(&p, &inside)?,
                None => inside,
            });
        }
        masks.push(pass.expect("ClampTensor has a bound"));
        masks.extend(sides);
        Ok(masks)
    }
}

impl Op for ClampTensor {
    fn name(&self) -> &'static str {
        match self.called {
            ClampFn::Clamp => "ClampBackward0",
            ClampFn::Min => "ClampMinBackward1",
            ClampFn::Max => "ClampMaxBackward1",
        }
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let types: SmallVec<[(crate::dtype::DType, bool); 3]> =
            inputs.iter().map(|t| (t.dtype(), t.dim() == 0)).collect();
        let dtype = result_type(&types, &[]);
        let (min, max) = self.bounds(inputs);
        let mut out = cast(&inputs[0], dtype)?;
        if let Some(lo) = min {
            out = Pairwise(Extremum::Maximum).forward(&[out, cast(lo, dtype)?])?[0].clone();
        }
        if let Some(hi) = max {
            out = Pairwise(Extremum::Minimum).forward(&[out, cast(hi, dtype)?])?[0].clone();
        }
        Ok(smallvec![out])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        let n = 1 + self.has_min as usize + self.has_max as usize;
        (0..n).map(|i| Some(SaveRef::Input(i))).collect()
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let saved: SmallVec<[Tensor; 3]> = (0..ctx.inputs.len())
            .map(|i| ctx.saved(i).cloned())
            .collect::<Result<_>>()?;
        let zero = zeros_like(&g)?;
        let masks = self.masks(&saved)?;
        masks
            .iter()
            .enumerate()
            .map(|(i, m)| ctx.needs(i).then(|| where_(m, &g, &zero)).transpose())
            .collect()
    }
    /// torch's clamp_jvp: the bound's tangent where the bound is active (max wins when
    /// min > max), x's elsewhere. With one bound, x's tangent holds where x is strictly
    /// inside (torch's choice at the tie, unlike its vjp).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let x = &ctx.primals[0];
        let (min, max) = self.bounds(ctx.primals);
        let mask = |t: Tensor| Ok(Partial::Mul(t));
        let (on_min, on_max) = match (min, max) {
            (Some(lo), Some(hi)) => {
                let crossed = compare(lo, hi, Cmp::Gt)?;
                let below = compare(x, lo, Cmp::Lt)?;
                let above = compare(x, hi, Cmp::Gt)?;
                let not_crossed = not(&crossed)?;
                let on_min = and(&not_crossed, &below)?;
                let not_below = not(&below)?;
                let on_max = or(&crossed, &and(&not_below, &above)?)?;
                (Some(on_min), Some(on_max))
            }
            (Some(lo), None) => (Some(compare(x, lo, Cmp::Le)?), None),
            (None, Some(hi)) => (None, Some(compare(x, hi, Cmp::Ge)?)),
            (None, None) => unreachable!("ClampTensor has a bound"),
        };
        let active = match (&on_min, &on_max) {
            (Some(a), Some(b)) => or(a, b)?,
            (Some(a), None) | (None, Some(a)) => a.clone(),
            (None, None) => unreachable!("ClampTensor has a bound"),
        };
        let partials = [Some(not(&active)?), on_min, on_max];
        let present: SmallVec<[Tensor; 3]> = partials.into_iter().flatten().collect();
        elementwise_jvp(ctx, |i| mask(present[i].clone()))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let op = *self;
        batch_broadcast(ctx, |args| apply1(op, args))
    }
}

/// `clamp(x, min, max)` with tensor bounds (at least one given).
pub fn clamp_tensors(
    x: &Tensor,
    min: Option<&Tensor>,
    max: Option<&Tensor>,
    called: ClampFn,
) -> Result<Tensor> {
    let (op, inputs) = clamp_tensor_op(x, min, max, called)?;
    apply1(op, &inputs)
}
pub fn clamp_tensors_(
    x: &Tensor,
    min: Option<&Tensor>,
    max: Option<&Tensor>,
    called: ClampFn,
) -> Result<()> {
    let (op, inputs) = clamp_tensor_op(x, min, max, called)?;
    apply_inplace(op, &inputs)
}

fn clamp_tensor_op(
    x: &Tensor,
    min: Option<&Tensor>,
    max: Option<&Tensor>,
    called: ClampFn,
) -> Result<(ClampTensor, SmallVec<[Tensor; 3]>)> {
    if min.is_none() && max.is_none() {
        return Err(Error::runtime(NO_BOUND));
    }
    let op = ClampTensor {
        has_min: min.is_some(),
        has_max: max.is_some(),
        called,
    };
    let inputs = std::iter::once(x).chain(min).chain(max).cloned().collect();
    Ok((op, inputs))
}
