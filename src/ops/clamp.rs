//! `clamp` / `clip`, `clamp_min` and `clamp_max`, with number bounds (`Clamp`, torch's
//! ClampBackward1 / ClampMinBackward0 / ClampMaxBackward0) or tensor bounds
//! (`ClampTensor`, ClampBackward0 / ClampMinBackward1 / ClampMaxBackward1).

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

const NO_BOUND: &str = "torch.clamp: At least one of 'min' or 'max' must not be None";

/// Which function made the op: torch names `clamp_min(x, b)` apart from
/// `clamp(x, min=b)`, and with tensor bounds their tangents differ at a tie.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ClampFn {
    Clamp,
    Min,
    Max,
}

/// The bounds as the caller gave them: numbers, or tensors.
pub enum Bounds {
    Numbers(Option<Scalar>, Option<Scalar>),
    Tensors(Option<Tensor>, Option<Tensor>),
}

/// clamp(min, max) with number bounds; the gradient passes where min <= x <= max.
pub struct Clamp {
    pub min: Option<Scalar>,
    pub max: Option<Scalar>,
    pub func: ClampFn,
}
impl Op for Clamp {
    fn name(&self) -> &'static str {
        match self.func {
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
        batch_unary(ctx, |x| {
            clamp_with(x, Bounds::Numbers(self.min, self.max), self.func)
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
    clamp_with(x, Bounds::Numbers(min, max), ClampFn::Clamp)
}

/// `func(x, bounds)`: clamp with either kind of bounds, or clamp_min / clamp_max (whose
/// one bound the caller puts on its side).
pub fn clamp_with(x: &Tensor, bounds: Bounds, func: ClampFn) -> Result<Tensor> {
    match bounds {
        Bounds::Numbers(min, max) => apply1(Clamp { min, max, func }, std::slice::from_ref(x)),
        Bounds::Tensors(min, max) => {
            let (op, inputs) = clamp_tensor_op(x, min, max, func)?;
            apply1(op, &inputs)
        }
    }
}
pub fn clamp_with_(x: &Tensor, bounds: Bounds, func: ClampFn) -> Result<()> {
    match bounds {
        Bounds::Numbers(min, max) => {
            apply_inplace(Clamp { min, max, func }, std::slice::from_ref(x))
        }
        Bounds::Tensors(min, max) => {
            let (op, inputs) = clamp_tensor_op(x, min, max, func)?;
            apply_inplace(op, &inputs)
        }
    }
}

/// clamp with tensor bounds: inputs `[x, min]`, `[x, max]` or `[x, min, max]` (the
/// flags say which), all three broadcast and promoted together. The result is
/// `minimum(maximum(x, min), max)`, so a NaN anywhere gives NaN, as torch's kernel.
#[derive(Clone, Copy)]
pub struct ClampTensor {
    pub has_min: bool,
    pub has_max: bool,
    pub func: ClampFn,
}

impl ClampTensor {
    fn bounds<'a>(&self, inputs: &'a [Tensor]) -> (Option<&'a Tensor>, Option<&'a Tensor>) {
        let min = self.has_min.then(|| &inputs[1]);
        let max = self.has_max.then(|| &inputs[inputs.len() - 1]);
        (min, max)
    }
    /// One mask per input, in input order: where that input's gradient (`jvp`: false)
    /// or tangent (`jvp`: true) goes. The gradient follows torch's
    /// clamp_backward_min_max: x where min <= x <= max, min where x < min, max where
    /// x > max. The tangent follows torch's clamp_jvp: a bound's where it is active
    /// (max wins when min > max; with one bound, at the tie too), x's elsewhere;
    /// clamp_min's and clamp_max's give x's at the tie.
    fn masks(&self, inputs: &[Tensor], jvp: bool) -> Result<SmallVec<[Tensor; 3]>> {
        let x = &inputs[0];
        let (on_min, on_max) = match self.bounds(inputs) {
            (Some(lo), Some(hi)) if jvp => {
                let crossed = compare(lo, hi, Cmp::Gt)?;
                let below = compare(x, lo, Cmp::Lt)?;
                let above = compare(x, hi, Cmp::Gt)?;
                let on_min = and(&not(&crossed)?, &below)?;
                let on_max = or(&crossed, &and(&not(&below)?, &above)?)?;
                (Some(on_min), Some(on_max))
            }
            (lo, hi) => {
                let (below, above) = if jvp && self.func == ClampFn::Clamp {
                    (Cmp::Le, Cmp::Ge)
                } else {
                    (Cmp::Lt, Cmp::Gt)
                };
                let on_min = lo.map(|lo| compare(x, lo, below)).transpose()?;
                let on_max = hi.map(|hi| compare(x, hi, above)).transpose()?;
                (on_min, on_max)
            }
        };
        let active = match (&on_min, &on_max) {
            (Some(a), Some(b)) => or(a, b)?,
            (Some(a), None) | (None, Some(a)) => a.clone(),
            (None, None) => return Err(Error::runtime(NO_BOUND)),
        };
        let mut masks = smallvec![not(&active)?];
        masks.extend(on_min);
        masks.extend(on_max);
        Ok(masks)
    }
}

/// `t` in `dtype` (a copy only when it is not already).
fn in_dtype(t: &Tensor, dtype: crate::dtype::DType) -> Result<Tensor> {
    if t.dtype() == dtype {
        Ok(t.clone())
    } else {
        cast(t, dtype)
    }
}

impl Op for ClampTensor {
    fn name(&self) -> &'static str {
        match self.func {
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
        let mut out = in_dtype(&inputs[0], dtype)?;
        for (bound, side) in [(min, Extremum::Maximum), (max, Extremum::Minimum)] {
            if let Some(b) = bound {
                out = Pairwise(side)
                    .forward(&[out, in_dtype(b, dtype)?])?
                    .swap_remove(0);
            }
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
        let masks = self.masks(&saved, false)?;
        masks
            .iter()
            .enumerate()
            .map(|(i, m)| ctx.needs(i).then(|| where_(m, &g, &zero)).transpose())
            .collect()
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let masks = self.masks(ctx.primals, true)?;
        elementwise_jvp(ctx, |i| Ok(Partial::Mul(masks[i].clone())))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let op = *self;
        batch_broadcast(ctx, |args| apply1(op, args))
    }
}

fn clamp_tensor_op(
    x: &Tensor,
    min: Option<Tensor>,
    max: Option<Tensor>,
    func: ClampFn,
) -> Result<(ClampTensor, SmallVec<[Tensor; 3]>)> {
    if min.is_none() && max.is_none() {
        return Err(Error::runtime(NO_BOUND));
    }
    let op = ClampTensor {
        has_min: min.is_some(),
        has_max: max.is_some(),
        func,
    };
    let inputs = std::iter::once(x.clone()).chain(min).chain(max).collect();
    Ok((op, inputs))
}
