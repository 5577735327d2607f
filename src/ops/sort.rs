//! Ops that pick values out of sorted lines: `sort`, `argsort`, `msort`, `topk`,
//! `kthvalue`, `median` / `nanmedian` along a dim, and the full `median`. Each returns
//! the values with the indices they came from; the gradient goes back to those indices.

use smallvec::{smallvec, SmallVec};

use crate::dtype::Scalar;
use crate::error::{Error, Result};
use crate::kernels::kinds::SortKind;
use crate::ops::device::{backend, wrap};
use crate::ops::linalg::{gather, scatter_into_zeros};
use crate::ops::rules::{composite, logical_rank, to_front};
use crate::ops::view::{contiguous, reshape, squeeze, unsqueeze};
use crate::ops::{
    apply, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::shape::wrap_dim;
use crate::tensor::Tensor;

/// What is kept of each sorted line along the op's dim.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Pick {
    Sort {
        descending: bool,
    },
    Topk {
        k: usize,
        largest: bool,
    },
    /// The k-th smallest (1-based).
    Kth {
        k: usize,
        keepdim: bool,
    },
    Median {
        ignore_nan: bool,
        keepdim: bool,
    },
}

impl Pick {
    /// Whether the picked dim is dropped from the results.
    fn drops_dim(self) -> bool {
        matches!(
            self,
            Pick::Kth { keepdim: false, .. } | Pick::Median { keepdim: false, .. }
        )
    }
}

/// `(values, indices)` of `x` along `dim` per `pick` (SortBackward0, TopkBackward0,
/// KthvalueBackward0, MedianBackward1, NanmedianBackward1).
#[derive(Clone, Copy)]
pub struct Picked {
    pub dim: usize,
    pub pick: Pick,
}

impl Op for Picked {
    fn name(&self) -> &'static str {
        match self.pick {
            Pick::Sort { .. } => "SortBackward0",
            Pick::Topk { .. } => "TopkBackward0",
            Pick::Kth { .. } => "KthvalueBackward0",
            Pick::Median {
                ignore_nan: false, ..
            } => "MedianBackward1",
            Pick::Median {
                ignore_nan: true, ..
            } => "NanmedianBackward1",
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("dim", SavedAttr::Scalar(Scalar::Int(self.dim as i64))),
            ("indices", SavedAttr::Slot(0)),
            ("self_sym_sizes", SavedAttr::InputSizes(0)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |inputs| {
            let x = &inputs[0];
            if x.dim() == 0 {
                // A scalar is a one-element line; the results stay scalars.
                let line = reshape(x, &[1])?;
                let op = Picked { dim: 0, ..*self };
                let out = op.forward(&[line])?;
                return out.iter().map(|t| reshape(t, &[])).collect();
            }
            let d = self.dim as i64;
            let kind = match self.pick {
                Pick::Sort { descending } => SortKind::Sort { descending },
                Pick::Topk { k, largest } => SortKind::Topk { k, largest },
                Pick::Kth { k, .. } => SortKind::Kth { k },
                Pick::Median { ignore_nan, .. } => SortKind::Median { ignore_nan },
            };
            let (v, i) = backend(x)?.sort(&x.data(), self.dim, kind)?;
            let (values, indices) = (wrap(v), wrap(i));
            // The one-element picks come back with the dim dropped.
            let (values, indices) = match self.pick {
                Pick::Kth { .. } | Pick::Median { .. } => {
                    (unsqueeze(&values, d)?, unsqueeze(&indices, d)?)
                }
                _ => (values, indices),
            };
            let finish = |t: &Tensor| -> Result<Tensor> {
                let t = if self.pick.drops_dim() {
                    squeeze(t, Some(&[d]))?
                } else {
                    t.clone()
                };
                contiguous(&t)
            };
            Ok(smallvec![finish(&values)?, finish(&indices)?])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Output(1))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = picked_vjp(ctx, self.dim, self.pick.drops_dim())?;
        Ok(smallvec![Some(g)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        picked_jvp(ctx, self.dim, self.pick.drops_dim())
    }
    /// The batch dim goes to the front; the picked dim shifts by one. Scalar examples
    /// are their own results, at index 0.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (x, b) = &ctx.inputs[0];
        if let Some(bd) = *b {
            if logical_rank(x, *b) == 0 {
                let values = contiguous(x)?;
                let indices =
                    crate::ops::creation::zeros(&[x.shape()[bd]], crate::dtype::DType::I64)?;
                return Ok(smallvec![(values, Some(0)), (indices, Some(0))]);
            }
        }
        let op = Picked {
            dim: self.dim + usize::from(b.is_some()),
            pick: self.pick,
        };
        let out = apply(op, &[to_front(x, *b)?])?;
        Ok(out.into_iter().map(|o| (o, b.map(|_| 0))).collect())
    }
}

/// The gradient of values picked along `dim` at the saved indices (output 1): the
/// gradient scattered back there, zero elsewhere. `dropped`: the results lack `dim`.
pub fn picked_vjp(ctx: &VjpCtx, dim: usize, dropped: bool) -> Result<Tensor> {
    let shape = &ctx.inputs[0].shape;
    let mut g = ctx.grad(0)?;
    if shape.is_empty() {
        return Ok(g);
    }
    let mut idx = ctx.saved(0)?.clone();
    if dropped {
        g = unsqueeze(&g, dim as i64)?;
        idx = unsqueeze(&idx, dim as i64)?;
    }
    scatter_into_zeros(&g, dim, &idx, shape)
}

/// The tangent at the picked indices (output 1); the indices have none.
pub fn picked_jvp(ctx: &JvpCtx, dim: usize, dropped: bool) -> Result<Tangents> {
    let Some(t) = ctx.tangent(0) else {
        return Ok(smallvec![None, None]);
    };
    if t.dim() == 0 {
        return Ok(smallvec![Some(t.clone()), None]);
    }
    let idx = &ctx.outputs[1];
    let idx = if dropped {
        unsqueeze(idx, dim as i64)?
    } else {
        idx.clone()
    };
    let mut v = gather(t, dim, &idx)?;
    if dropped {
        v = squeeze(&v, Some(&[dim as i64]))?;
    }
    Ok(smallvec![Some(v), None])
}

fn pick(x: &Tensor, dim: usize, p: Pick) -> Result<(Tensor, Tensor)> {
    let mut out = apply(Picked { dim, pick: p }, std::slice::from_ref(x))?;
    let indices = out.pop().expect("two outputs");
    Ok((out.pop().expect("two outputs"), indices))
}

/// torch's dispatch error for a complex or bool input (`kernel` is its kernel's name).
fn refuse_complex(x: &Tensor, kernel: &str) -> Result<()> {
    if x.dtype().is_complex() || x.dtype() == crate::dtype::DType::Bool {
        return Err(Error::not_implemented(format!(
            "\"{kernel}\" not implemented for '{}'",
            x.dtype().scalar_type_name()
        )));
    }
    Ok(())
}

/// sort and topk refuse complex input with a TypeError (its text starts with a space).
fn refuse_complex_sort(x: &Tensor, name: &str) -> Result<()> {
    if x.dtype().is_complex() {
        return Err(Error::type_error(format!(
            " {name} does not support complex dtypes on CPU"
        )));
    }
    Ok(())
}

/// `sort(x, dim, descending)` (stable: torch's `stable=False` gives the same order for
/// all but equal values, and equal values keep their order here).
pub fn sort(x: &Tensor, dim: i64, descending: bool) -> Result<(Tensor, Tensor)> {
    refuse_complex_sort(x, "Sort")?;
    let dim = wrap_dim(dim, x.dim())?;
    pick(x, dim, Pick::Sort { descending })
}

/// `topk(x, k, dim, largest)` (always sorted).
pub fn topk(x: &Tensor, k: i64, dim: i64, largest: bool) -> Result<(Tensor, Tensor)> {
    refuse_complex_sort(x, "topk")?;
    if x.dtype() == crate::dtype::DType::Bool {
        return Err(Error::not_implemented(
            "topk does not support bool dtypes on CPU",
        ));
    }
    let d = wrap_dim(dim, x.dim())?;
    let size = x.shape().get(d).copied().unwrap_or(1) as i64;
    if k < 0 || k > size {
        return Err(Error::runtime("selected index k out of range"));
    }
    pick(
        x,
        d,
        Pick::Topk {
            k: k as usize,
            largest,
        },
    )
}

/// `kthvalue(x, k, dim, keepdim)`: the k-th smallest along `dim`.
pub fn kthvalue(x: &Tensor, k: i64, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
    refuse_complex(x, "kthvalue_cpu")?;
    let d = wrap_dim(dim, x.dim())?;
    nonempty_dim(x, d, "kthvalue")?;
    let size = x.shape().get(d).copied().unwrap_or(1) as i64;
    if k < 1 || k > size {
        return Err(Error::runtime(format!(
            "kthvalue(): selected number k out of range for dimension {d}"
        )));
    }
    pick(
        x,
        d,
        Pick::Kth {
            k: k as usize,
            keepdim,
        },
    )
}

fn nonempty_dim(x: &Tensor, d: usize, name: &str) -> Result<()> {
    if x.dim() > 0 && x.shape()[d] == 0 {
        return Err(Error::index(format!(
            "{name}(): Expected reduction dim {d} to have non-zero size."
        )));
    }
    Ok(())
}

/// `median(x, dim, keepdim)` / `nanmedian(x, dim, keepdim)`: the lower median.
pub fn median_dim(
    x: &Tensor,
    dim: i64,
    keepdim: bool,
    ignore_nan: bool,
) -> Result<(Tensor, Tensor)> {
    refuse_complex(x, "median_out")?;
    let d = wrap_dim(dim, x.dim())?;
    // nanmedian's message names median too, as torch's does.
    nonempty_dim(x, d, "median")?;
    pick(
        x,
        d,
        Pick::Median {
            ignore_nan,
            keepdim,
        },
    )
}

/// `median(x)` / `nanmedian(x)` over all elements (MedianBackward0 /
/// NanmedianBackward0): the gradient is shared evenly by the elements equal to it.
#[derive(Clone, Copy)]
pub struct MedianAll {
    pub ignore_nan: bool,
}

impl Op for MedianAll {
    fn name(&self) -> &'static str {
        if self.ignore_nan {
            "NanmedianBackward0"
        } else {
            "MedianBackward0"
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("self", SavedAttr::Slot(0)), ("result", SavedAttr::Slot(1))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |inputs| {
            let x = &inputs[0];
            let line = reshape(x, &[x.numel()])?;
            let kind = SortKind::Median {
                ignore_nan: self.ignore_nan,
            };
            let (v, _) = backend(x)?.sort(&line.data(), 0, kind)?;
            Ok(smallvec![wrap(v)])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Output(0))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let share = evenly(ctx.saved(0)?, ctx.saved(1)?)?;
        Ok(smallvec![Some(crate::ops::binary::mul(
            &share,
            &ctx.grad(0)?
        )?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        crate::ops::rules::linear_jvp(ctx, |t| {
            let share = evenly(&ctx.primals[0], &ctx.outputs[0])?;
            crate::ops::reduce::sum(&crate::ops::binary::mul(&share, t)?, None, false, None)
        })
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (x, b) = &ctx.inputs[0];
        let Some(b) = *b else {
            return Ok(smallvec![(
                apply(*self, std::slice::from_ref(x))?.remove(0),
                None
            )]);
        };
        let front = to_front(x, Some(b))?;
        let rows = reshape(
            &front,
            &[front.shape()[0], front.numel() / front.shape()[0].max(1)],
        )?;
        let (v, _) = median_dim(&rows, 1, false, self.ignore_nan)?;
        Ok(smallvec![(v, Some(0))])
    }
}

/// 1 / count where `x` equals `value` (NaN equal to NaN), else 0: an even share.
fn evenly(x: &Tensor, value: &Tensor) -> Result<Tensor> {
    use crate::ops::binary::{compare, Cmp};
    let same = compare(x, value, Cmp::Eq)?;
    let both_nan = crate::ops::bitwise::logical(
        &crate::ops::classify::isnan(x)?,
        &crate::ops::classify::isnan(value)?,
        crate::kernels::kinds::Bitwise::And,
    )?;
    let hit = crate::ops::bitwise::logical(&same, &both_nan, crate::kernels::kinds::Bitwise::Or)?;
    let hit = crate::ops::unary::to_dtype(&hit, x.dtype())?;
    let count = crate::ops::reduce::sum(&hit, None, false, None)?;
    crate::ops::binary::div(&hit, &count)
}

pub fn median_all(x: &Tensor, ignore_nan: bool) -> Result<Tensor> {
    refuse_complex(x, "median_cpu")?;
    if x.numel() == 0 {
        // torch answers NaN for an empty input.
        return crate::ops::creation::full(&[], Scalar::Float(f64::NAN), x.dtype());
    }
    crate::ops::apply1(MedianAll { ignore_nan }, std::slice::from_ref(x))
}
