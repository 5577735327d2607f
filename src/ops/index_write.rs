//! Ops that write or read through an index, built on advanced indexing's `index_put`:
//! `index_add` and `index_copy` (a 1-d index along one dim), `take` (an index into the
//! flattened input), `masked_select` and `masked_scatter` (a bool mask).

use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::ops::advanced_index::{index, index_put, nonzero, wrap_index, IndexFill};
use crate::ops::binary::mul_scalar;
use crate::ops::creation::{zeros, zeros_like};
use crate::ops::device::{backend, wrap};
use crate::ops::index::{index_select, masked_fill};
use crate::ops::reduce::sum_to_size;
use crate::ops::rules::{batch_size, composite, front_or_expand, linear_jvp};
use crate::ops::unary::to_dtype;
use crate::ops::view::{contiguous, expand, narrow, reshape};
use crate::ops::{
    apply1, no_batch_rule, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr,
    Tangents, VjpCtx,
};
use crate::shape::{broadcast_shapes, fmt_dims, wrap_dim};
use crate::storage::Data;
use crate::tensor::Tensor;

/// The jvp of an op with inputs `[x, index or mask, source]`, linear in (x, source):
/// the same op over their tangents (zeros for a missing one).
fn write_jvp<O: Op>(ctx: &JvpCtx, op: O) -> Result<Tangents> {
    let (tx, ts) = (ctx.tangent(0), ctx.tangent(2));
    if tx.is_none() && ts.is_none() {
        return Ok(smallvec![None]);
    }
    let or_zeros =
        |t: Option<&Tensor>, like: &Tensor| t.cloned().map_or_else(|| zeros_like(like), Ok);
    let (x, picks, source) = (&ctx.primals[0], &ctx.primals[1], &ctx.primals[2]);
    let inputs = [or_zeros(tx, x)?, picks.clone(), or_zeros(ts, source)?];
    Ok(smallvec![Some(apply1(op, &inputs)?)])
}

// ---------------------------------------------------------------- index_add / index_copy

/// `index_add(x, dim, index, source, alpha)` (IndexAddBackward0) and
/// `index_copy(x, dim, index, source)` (IndexCopyBackward0): `source`'s slices along
/// `dim` added to / written over x's slices that `index` names. Inputs `[x, index, source]`.
#[derive(Clone, Copy)]
pub struct IndexWrite {
    pub dim: usize,
    /// `Some(alpha)` adds; `None` copies.
    pub alpha: Option<Scalar>,
}

impl IndexWrite {
    /// `[x, index, source]` as the kernel takes them: x, the index checked against
    /// x's size along `dim` (torch refuses negative indices here), and the source times
    /// alpha in x's dtype.
    fn prepared<'a>(&self, inputs: &'a [Tensor]) -> Result<(&'a Tensor, Tensor, Tensor)> {
        let (x, idx, source) = (&inputs[0], &inputs[1], &inputs[2]);
        let size = x.shape()[self.dim];
        let wrapped = match backend(x)?.wrap_index(&idx.data(), size, false)? {
            Ok(w) => crate::ops::device::wrap(w),
            // torch words index_add's as a RuntimeError, index_copy's as its own.
            Err(i) => {
                let msg = format!(
                    "index {i} is out of bounds for dimension {} with size {size}",
                    self.dim
                );
                return Err(match self.alpha {
                    Some(_) => Error::runtime(msg),
                    None => Error::index(format!("index_copy_(): {msg}")),
                });
            }
        };
        let values = match self.alpha {
            Some(Scalar::Int(1)) | None => source.clone(),
            Some(alpha) => to_dtype(&mul_scalar(source, alpha)?, x.dtype())?,
        };
        Ok((x, wrapped, values))
    }
}

/// An index the kernel found out of range (prepared() checks them all first).
fn out_of_range(i: i64) -> Error {
    Error::runtime(format!("index_add: index {i} out of range"))
}

impl Op for IndexWrite {
    fn name(&self) -> &'static str {
        match self.alpha {
            Some(_) => "IndexAddBackward0",
            None => "IndexCopyBackward0",
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        let mut attrs = vec![
            ("dim", SavedAttr::Scalar(Scalar::Int(self.dim as i64))),
            ("index", SavedAttr::Slot(0)),
        ];
        if let Some(alpha) = self.alpha {
            attrs.push(("alpha", SavedAttr::Scalar(alpha)));
        }
        attrs
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |inputs| {
            let (x, idx, values) = self.prepared(inputs)?;
            let out = backend(x)?
                .index_write(
                    &x.data(),
                    self.dim,
                    &idx.data(),
                    &values.data(),
                    self.alpha.is_some(),
                )?
                .map_err(out_of_range)?;
            Ok(smallvec![crate::ops::device::wrap(out)])
        })
    }
    fn writes_in_place(&self, inputs: &[Tensor]) -> bool {
        let (x, idx, source) = (&inputs[0], &inputs[1], &inputs[2]);
        let apart = |t: &Tensor| !std::sync::Arc::ptr_eq(x.data().storage(), t.data().storage());
        inputs.iter().all(|t| t.device() == x.device())
            && x.is_contiguous()
            && source.dtype() == x.dtype()
            && apart(idx)
            && apart(source)
    }
    fn write_in_place(&self, inputs: &[Tensor]) -> Result<()> {
        composite(inputs, |inputs| {
            let (x, idx, values) = self.prepared(inputs)?;
            let accumulate = self.alpha.is_some();
            let written = backend(x)?
                .index_write_in_place(&x.data(), self.dim, &idx.data(), &values.data(), accumulate)?
                .map_err(out_of_range)?;
            if !written {
                // No kernel for these operands: compute, then copy in.
                let out = backend(x)?
                    .index_write(&x.data(), self.dim, &idx.data(), &values.data(), accumulate)?
                    .map_err(out_of_range)?;
                crate::ops::device::write_into(x, &crate::ops::device::wrap(out))?;
            }
            Ok(())
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(1))]
    }
    /// x's gradient: all of it when adding, zero at the overwritten slices when
    /// copying; source's: the gradient at the written slices (times alpha).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (g, idx) = (ctx.grad(0)?, ctx.saved(0)?);
        let gx = match (ctx.needs(0), self.alpha) {
            (false, _) => None,
            (true, Some(_)) => Some(g.clone()),
            (true, None) => {
                let zero = IndexFill {
                    dim: self.dim,
                    value: Scalar::Int(0),
                };
                Some(apply1(zero, &[g.clone(), idx.clone()])?)
            }
        };
        let gsource = if ctx.needs(2) {
            let picked = index_select(&g, self.dim as i64, idx)?;
            Some(match self.alpha {
                Some(Scalar::Int(1)) | None => picked,
                Some(alpha) => mul_scalar(&picked, alpha)?,
            })
        } else {
            None
        };
        Ok(smallvec![gx, None, gsource])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        write_jvp(ctx, *self)
    }
    /// x and source batched alike in front, written one dim further in; a batched
    /// index has no rule.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        if ctx.inputs[1].1.is_some() {
            return Err(no_batch_rule(self.name()));
        }
        let batch = batch_size(ctx);
        let (x, bx) = &ctx.inputs[0];
        let (s, bs) = &ctx.inputs[2];
        let op = IndexWrite {
            dim: self.dim + 1,
            ..*self
        };
        let inputs = [
            front_or_expand(x, *bx, batch)?,
            ctx.inputs[1].0.clone(),
            front_or_expand(s, *bs, batch)?,
        ];
        Ok(smallvec![(apply1(op, &inputs)?, Some(0))])
    }
}

/// The checks torch makes for index_add (`alpha` given) and index_copy, in its words.
fn index_write_inputs(
    x: &Tensor,
    dim: i64,
    idx: &Tensor,
    source: &Tensor,
    alpha: Option<Scalar>,
) -> Result<(IndexWrite, [Tensor; 3])> {
    let name = if alpha.is_some() {
        "index_add_"
    } else {
        "index_copy_"
    };
    let dim = wrap_dim(dim, x.dim())?;
    if x.dim() == 0 {
        return Err(Error::not_implemented(format!(
            "{name} of a 0-dim tensor is not supported yet"
        )));
    }
    let idx = match (idx.dtype(), alpha) {
        (DType::I64, _) => idx.clone(),
        (DType::I32, Some(_)) => to_dtype(idx, DType::I64)?,
        (d, Some(_)) => {
            return Err(Error::runtime(format!(
                "index_add_(): Expected dtype int32/int64 for index but got: {}",
                d.scalar_type_name()
            )))
        }
        (d, None) => {
            return Err(Error::runtime(format!(
                "index_copy_(): Expected a long tensor for index, but got {}",
                d.scalar_type_name()
            )))
        }
    };
    if idx.dim() > 1 {
        return Err(Error::index(format!(
            "{name}(): Index is supposed to be a vector, but got dim: {} with type: Long and size: {}",
            idx.dim(),
            fmt_dims(&idx.shape())
        )));
    }
    if source.dtype() != x.dtype() {
        let (a, b) = (
            x.dtype().scalar_type_name(),
            source.dtype().scalar_type_name(),
        );
        return Err(Error::runtime(match alpha {
            Some(_) => format!("index_add_(): self ({a}) and source ({b}) must have the same scalar type"),
            None => format!("index_copy_(): self and source expected to have the same dtype, but got (self) {a} and (source) {b}"),
        }));
    }
    let n = source.shape().get(dim).copied().unwrap_or(1);
    let mut expected = x.dims();
    expected[dim] = idx.numel();
    if n != idx.numel() || source.shape()[..] != expected[..] {
        return Err(match alpha {
            Some(_) => Error::runtime(format!(
                "index_add_(): Number of indices ({}) should be equal to source.size(dim): ({n}), for dim: {dim}",
                idx.numel()
            )),
            None => Error::index(format!(
                "index_copy_(): Number of indices ({}) should be equal to source.size(dim) ({n})",
                idx.numel()
            )),
        });
    }
    let idx = reshape(&idx, &[idx.numel()])?;
    Ok((IndexWrite { dim, alpha }, [x.clone(), idx, source.clone()]))
}

/// `index_add(x, dim, index, source, alpha)`.
pub fn index_add(
    x: &Tensor,
    dim: i64,
    idx: &Tensor,
    source: &Tensor,
    alpha: Scalar,
) -> Result<Tensor> {
    let (op, inputs) = index_write_inputs(x, dim, idx, source, Some(alpha))?;
    apply1(op, &inputs)
}

/// `index_copy(x, dim, index, source)`.
pub fn index_copy(x: &Tensor, dim: i64, idx: &Tensor, source: &Tensor) -> Result<Tensor> {
    let (op, inputs) = index_write_inputs(x, dim, idx, source, None)?;
    apply1(op, &inputs)
}

/// The in-place forms: `x.index_add_(...)` (`alpha` given) and `x.index_copy_(...)`.
pub fn index_write_(
    x: &Tensor,
    dim: i64,
    idx: &Tensor,
    source: &Tensor,
    alpha: Option<Scalar>,
) -> Result<()> {
    let (op, inputs) = index_write_inputs(x, dim, idx, source, alpha)?;
    for other in &inputs[1..] {
        crate::ops::inplace::check_no_overlap(x, other, false)?;
    }
    crate::ops::inplace::apply_inplace(op, &inputs)
}

// ---------------------------------------------------------------- take

/// `take(x, index)` (TakeBackward0): x's elements in row-major order at `index`
/// (any shape; the result has it). Inputs `[x, index]`.
#[derive(Clone, Copy)]
pub struct Take;

impl Op for Take {
    fn name(&self) -> &'static str {
        "TakeBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("index", SavedAttr::Slot(0))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |inputs| {
            let (x, idx) = (&inputs[0], &inputs[1]);
            let n = x.numel();
            let out_of_range = |i: i64| {
                Error::index(format!(
                    "out of range: tried to access index {i} on a tensor of {n} elements."
                ))
            };
            // The indices select single elements of the flat tensor through index_select's
            // row kernel (through advanced indexing, with its plan, a million indices took
            // three times as long). It refuses negative indices: only then are they
            // wrapped (or the first one out of range reported) and selected again.
            let line = reshape(x, &[n])?;
            let flat = Layout::contiguous(&[idx.numel()]);
            let select = |index: &Data| backend(x)?.index_select(&line.data(), 0, index);
            let picked = match select(&reshape(idx, &[idx.numel()])?.data())? {
                Ok(picked) => picked,
                Err(_) => {
                    let wrapped = backend(x)?
                        .wrap_index(&idx.data(), n, true)?
                        .map_err(out_of_range)?;
                    select(&wrapped.with_layout(flat)?)?.map_err(out_of_range)?
                }
            };
            Ok(smallvec![wrap(
                picked.with_layout(Layout::contiguous(&idx.shape()))?
            )])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(1))]
    }
    /// The gradient added back at the taken positions (repeats add up).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (g, idx) = (ctx.grad(0)?, ctx.saved(0)?);
        let shape = &ctx.inputs[0].shape;
        let n: usize = shape.iter().product();
        let wrapped = wrap_index(idx, idx, n, 0)?;
        let flat = index_put(&zeros(&[n], g.dtype())?, &[Some(wrapped)], &g, true)?;
        Ok(smallvec![Some(reshape(&flat, shape)?), None])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| apply1(Take, &[t.clone(), ctx.primals[1].clone()]))
    }
    /// Per example, a take from that example's elements: the rows of the flattened
    /// batch, indexed by an arange over the batch next to the index.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let batch = batch_size(ctx);
        let (x, bx) = &ctx.inputs[0];
        let (idx, bi) = &ctx.inputs[1];
        let x = front_or_expand(x, *bx, batch)?;
        let per = x.numel() / batch.max(1);
        let rows = reshape(&x, &[batch, per])?;
        let idx = crate::ops::rules::to_front(idx, *bi)?;
        let wrapped = match backend(&rows)?.wrap_index(&idx.data(), per, true)? {
            Ok(w) => crate::ops::device::wrap(w),
            Err(i) => {
                return Err(Error::index(format!(
                    "out of range: tried to access index {i} on a tensor of {per} elements."
                )))
            }
        };
        let logical_rank = idx.dim() - usize::from(bi.is_some());
        let mut line: crate::shape::Dims = smallvec![batch];
        line.extend((0..logical_rank).map(|_| 1));
        let arange = crate::ops::creation::arange(
            Scalar::Int(0),
            Scalar::Int(batch as i64),
            Scalar::Int(1),
            Some(DType::I64),
        )?;
        let out = index(&rows, &[Some(reshape(&arange, &line)?), Some(wrapped)])?;
        Ok(smallvec![(out, Some(0))])
    }
}

/// `take(x, index)`.
pub fn take(x: &Tensor, idx: &Tensor) -> Result<Tensor> {
    if idx.dtype() != DType::I64 {
        return Err(Error::runtime(format!(
            "take(): Expected a long tensor for index, but got {}",
            idx.dtype().scalar_type_name()
        )));
    }
    apply1(Take, &[x.clone(), idx.clone()])
}

// ---------------------------------------------------------------- masked_select / masked_scatter

/// `x` and `mask` broadcast together.
fn broadcast_pair(x: &Tensor, mask: &Tensor) -> Result<(Tensor, Tensor)> {
    let shape = broadcast_shapes(&mask.shape(), &x.shape())?;
    Ok((expand(x, &shape)?, expand(mask, &shape)?))
}

/// `masked_select(x, mask)` (MaskedSelectBackward0): the elements of x (broadcast with
/// the bool mask) where the mask is set, as a 1-d tensor. Inputs `[x, mask]`.
#[derive(Clone, Copy)]
pub struct MaskedSelect;

impl Op for MaskedSelect {
    fn name(&self) -> &'static str {
        "MaskedSelectBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("mask", SavedAttr::Slot(0))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |inputs| {
            let (x, mask) = broadcast_pair(&inputs[0], &inputs[1])?;
            Ok(smallvec![index(&x, &[Some(mask)])?])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(1))]
    }
    /// The gradient written back where the mask is set, summed to x's shape.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (g, mask) = (ctx.grad(0)?, ctx.saved(0)?);
        let shape = broadcast_shapes(&ctx.inputs[0].shape, &mask.shape())?;
        let mask = expand(mask, &shape)?;
        let full = index_put(&zeros(&shape, g.dtype())?, &[Some(mask)], &g, false)?;
        Ok(smallvec![
            Some(sum_to_size(&full, &ctx.inputs[0].shape)?),
            None
        ])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| {
            apply1(MaskedSelect, &[t.clone(), ctx.primals[1].clone()])
        })
    }
    /// With the mask shared by every example, each selects the same positions: the
    /// batch dim stays in front, the mask indexes the dims after it.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let ((x, bx), mask) = (&ctx.inputs[0], shared_mask(ctx)?);
        let (x, mask) = batched_pair(x, *bx, &mask)?;
        Ok(smallvec![(index(&x, &[None, Some(mask)])?, Some(0))])
    }
}

fn check_bool_mask(mask: &Tensor, message: String) -> Result<()> {
    if mask.dtype() != DType::Bool {
        return Err(Error::runtime(message));
    }
    Ok(())
}

/// `masked_select(x, mask)`.
pub fn masked_select(x: &Tensor, mask: &Tensor) -> Result<Tensor> {
    check_bool_mask(mask, "masked_select: expected BoolTensor for mask".into())?;
    broadcast_shapes(&mask.shape(), &x.shape())?;
    apply1(MaskedSelect, &[x.clone(), mask.clone()])
}

/// `masked_scatter(x, mask, source)` (MaskedScatterBackward0): x with the positions
/// where the bool mask is set filled, in row-major order, from the first elements of
/// `source`. Inputs `[x, mask, source]`.
#[derive(Clone, Copy)]
pub struct MaskedScatter;

impl Op for MaskedScatter {
    fn name(&self) -> &'static str {
        "MaskedScatterBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("mask", SavedAttr::Slot(0)),
            ("source_sym_sizes", SavedAttr::InputSizes(2)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |inputs| {
            let (x, mask) = broadcast_pair(&inputs[0], &inputs[1])?;
            let source = &inputs[2];
            // How many positions are set: the length of the mask's coordinate list.
            let count = nonzero(&mask)?.shape()[0];
            if source.numel() < count {
                return Err(Error::runtime(
                    "Number of elements of source < number of ones in mask",
                ));
            }
            let values = narrow(&reshape(source, &[source.numel()])?, 0, 0, count as i64)?;
            Ok(smallvec![index_put(&x, &[Some(mask)], &values, false)?])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(1))]
    }
    /// x's gradient: zero where the mask is set; source's: the gradient there, in
    /// order, then zeros for the source elements left unread.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (g, mask) = (ctx.grad(0)?, ctx.saved(0)?);
        let gx = if ctx.needs(0) {
            let kept = masked_fill(&g, mask, Scalar::Int(0))?;
            Some(sum_to_size(&kept, &ctx.inputs[0].shape)?)
        } else {
            None
        };
        let gsource = if ctx.needs(2) {
            let source_shape = &ctx.inputs[2].shape;
            let n: usize = source_shape.iter().product();
            let picked = masked_select(&g, mask)?;
            let rest = zeros(&[n - picked.numel()], g.dtype())?;
            let line = crate::ops::join::cat(&[picked, rest], 0)?;
            Some(reshape(&line, source_shape)?)
        } else {
            None
        };
        Ok(smallvec![gx, None, gsource])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        write_jvp(ctx, MaskedScatter)
    }
    /// With the mask shared by every example: each example's source fills the same
    /// positions of its x.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let batch = batch_size(ctx);
        let ((x, bx), (source, bs)) = (&ctx.inputs[0], &ctx.inputs[2]);
        let mask = shared_mask(ctx)?;
        let (x, mask) = batched_pair(&front_or_expand(x, *bx, batch)?, Some(0), &mask)?;
        let count = nonzero(&mask)?.shape()[0];
        let source = front_or_expand(source, *bs, batch)?;
        let per = source.numel() / batch.max(1);
        if per < count {
            return Err(Error::runtime(
                "Number of elements of source < number of ones in mask",
            ));
        }
        let values = narrow(&reshape(&source, &[batch, per])?, 1, 0, count as i64)?;
        let out = index_put(&x, &[None, Some(mask)], &contiguous(&values)?, false)?;
        Ok(smallvec![(out, Some(0))])
    }
}

/// The mask of a masked op's batching rule, which must be the same for every example.
fn shared_mask(ctx: &BatchCtx) -> Result<Tensor> {
    match &ctx.inputs[1] {
        (mask, None) => Ok(mask.clone()),
        _ => Err(Error::runtime(
            "vmap: We do not support batching operators that can support dynamic shape. Attempting to batch over indexing with a boolean mask.",
        )),
    }
}

/// A batched x (batch dim in front) and a shared mask broadcast together per example.
fn batched_pair(x: &Tensor, bx: Option<usize>, mask: &Tensor) -> Result<(Tensor, Tensor)> {
    let x = crate::ops::rules::to_front(x, bx)?;
    let batch = x.shape()[0];
    let per_example = broadcast_shapes(&mask.shape(), &x.shape()[1..])?;
    let mut shape: crate::shape::Dims = smallvec![batch];
    shape.extend_from_slice(&per_example);
    let x = expand(&x, &shape)?;
    let mask = expand(mask, &per_example)?;
    Ok((x, mask))
}

fn masked_scatter_inputs(x: &Tensor, mask: &Tensor, source: &Tensor) -> Result<[Tensor; 3]> {
    check_bool_mask(
        mask,
        format!(
            "masked_scatter_ only supports boolean masks, but got mask with dtype {}",
            mask.dtype().scalar_type_name()
        ),
    )?;
    if source.dtype() != x.dtype() {
        return Err(Error::runtime(format!(
            "masked_scatter: expected self and source to have same dtypes but got{} and {}",
            x.dtype().scalar_type_name(),
            source.dtype().scalar_type_name()
        )));
    }
    broadcast_shapes(&x.shape(), &mask.shape())?;
    Ok([x.clone(), mask.clone(), source.clone()])
}

/// `masked_scatter(x, mask, source)`.
pub fn masked_scatter(x: &Tensor, mask: &Tensor, source: &Tensor) -> Result<Tensor> {
    apply1(MaskedScatter, &masked_scatter_inputs(x, mask, source)?)
}

/// `x.masked_scatter_(mask, source)`.
pub fn masked_scatter_(x: &Tensor, mask: &Tensor, source: &Tensor) -> Result<()> {
    let inputs = masked_scatter_inputs(x, mask, source)?;
    crate::ops::inplace::apply_inplace(MaskedScatter, &inputs)
}
