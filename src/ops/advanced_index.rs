//! Advanced indexing: `x[indices]` with index tensors (`index`, IndexBackward0), its
//! writing twin `index_put` (IndexPutBackward0, also `x[indices] = v`), and `nonzero`.
//!
//! Both ops work on the *rows* form of `x`: the indexed dims moved to the front and
//! flattened into one, so that the broadcast index tensors become one linear index
//! along dim 0 and the work is an `index_select` / a scatter along it. The result puts
//! the broadcast index shape where the indexed dims were when they are adjacent, and in
//! front when they are not (torch's and NumPy's rule).

use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::ops::binary::{add, mul_scalar};
use crate::ops::creation::{arange, zeros, zeros_like};
use crate::ops::device::{backend, wrap};
use crate::ops::index::index_select;
use crate::ops::reduce::{sum, sum_to_size};
use crate::ops::rules::{batch_size, composite, front_or_expand};
use crate::ops::view::{contiguous, expand, permute, reshape, select};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::shape::{broadcast_shapes, checked_numel, fmt_dims, Dims};
use crate::tensor::Tensor;

type Positions = SmallVec<[usize; 4]>;

/// Where the indexed dims of a `shape` are (`pos`, ascending) and the broadcast shape of
/// the index tensors (`bshape`).
struct Plan {
    shape: Dims,
    pos: Positions,
    bshape: Dims,
}

impl Plan {
    fn new(shape: &[usize], pos: &[usize], indices: &[Tensor]) -> Result<Plan> {
        let mut bshape = Dims::new();
        for (k, t) in indices.iter().enumerate() {
            bshape = broadcast_shapes(&bshape, &t.shape()).map_err(|_| {
                let shapes: Vec<String> =
                    indices[..=k].iter().map(|t| fmt_dims(&t.shape())).collect();
                Error::index(format!(
                    "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
                    shapes.join(", ")
                ))
            })?;
        }
        Ok(Plan {
            shape: shape.into(),
            pos: pos.into(),
            bshape,
        })
    }

    /// The dims no index tensor covers, in order.
    fn rest(&self) -> Dims {
        (0..self.shape.len())
            .filter(|d| !self.pos.contains(d))
            .collect()
    }

    fn rest_sizes(&self) -> Dims {
        self.rest().iter().map(|&d| self.shape[d]).collect()
    }

    /// How many of the rest dims come before the index dims in the result.
    fn front(&self) -> usize {
        let adjacent = self.pos.windows(2).all(|w| w[1] == w[0] + 1);
        if adjacent {
            self.pos[0]
        } else {
            0
        }
    }

    fn result_shape(&self) -> Dims {
        let (rest, front) = (self.rest_sizes(), self.front());
        let mut out: Dims = rest[..front].into();
        out.extend_from_slice(&self.bshape);
        out.extend_from_slice(&rest[front..]);
        out
    }

    /// `x` as `[indexed elements, rest...]`.
    fn rows(&self, x: &Tensor) -> Result<Tensor> {
        let perm: SmallVec<[i64; 6]> = self
            .pos
            .iter()
            .copied()
            .chain(self.rest())
            .map(|d| d as i64)
            .collect();
        let n: usize = self.pos.iter().map(|&d| self.shape[d]).product();
        let mut rows: Dims = smallvec![n];
        rows.extend(self.rest_sizes());
        reshape(&permute(x, &perm)?, &rows)
    }

    /// The inverse of [`Plan::rows`].
    fn unrows(&self, rows: &Tensor) -> Result<Tensor> {
        let order: Dims = self.pos.iter().copied().chain(self.rest()).collect();
        let sizes: Dims = order.iter().map(|&d| self.shape[d]).collect();
        let order: SmallVec<[i64; 6]> = order.iter().map(|&d| d as i64).collect();
        permute(&reshape(rows, &sizes)?, &inverse(&order))
    }

    /// The result's dims with the index dims moved in front (a permutation of it).
    fn index_dims_first(&self) -> SmallVec<[i64; 6]> {
        let (front, nb) = (self.front(), self.bshape.len());
        let total = self.result_shape().len();
        (front..front + nb)
            .chain(0..front)
            .chain(front + nb..total)
            .map(|d| d as i64)
            .collect()
    }

    /// A result-shaped tensor as `[index elements, rest...]` (the rows it reads).
    fn lines(&self, r: &Tensor) -> Result<Tensor> {
        let mut shape: Dims = smallvec![checked_numel(&self.bshape)?];
        shape.extend(self.rest_sizes());
        reshape(&permute(r, &self.index_dims_first())?, &shape)
    }

    /// The inverse of [`Plan::lines`].
    fn unlines(&self, lines: &Tensor) -> Result<Tensor> {
        let mut shape = self.bshape.clone();
        shape.extend(self.rest_sizes());
        permute(&reshape(lines, &shape)?, &inverse(&self.index_dims_first()))
    }

    /// The row each index element reads: the wrapped indices combined row-major, flat.
    fn linear(&self, x: &Tensor, indices: &[Tensor]) -> Result<Tensor> {
        let mut linear: Option<Tensor> = None;
        for (k, (t, &d)) in indices.iter().zip(&self.pos).enumerate() {
            let wrapped = wrap_index(x, t, self.shape[d], k)?;
            let inner: usize = self.pos[k + 1..].iter().map(|&e| self.shape[e]).product();
            let term = match inner {
                1 => wrapped,
                _ => mul_scalar(&wrapped, Scalar::Int(inner as i64))?,
            };
            linear = Some(match linear {
                Some(l) => add(&l, &term)?,
                None => term,
            });
        }
        let linear = linear.ok_or_else(|| Error::runtime("index: no index tensor"))?;
        reshape(
            &expand(&linear, &self.bshape)?,
            &[checked_numel(&self.bshape)?],
        )
    }
}

/// `index` checked against a dim of `size` and wrapped, with torch's error naming
/// dimension `ordinal`; `x` picks the backend.
pub fn wrap_index(x: &Tensor, index: &Tensor, size: usize, ordinal: usize) -> Result<Tensor> {
    match backend(x)?.wrap_index(&index.data(), size, true)? {
        Ok(w) => Ok(wrap(w)),
        Err(i) => Err(Error::index(format!(
            "index {i} is out of bounds for dimension {ordinal} with size {size}"
        ))),
    }
}

/// The permutation that undoes `perm`.
fn inverse(perm: &[i64]) -> SmallVec<[i64; 6]> {
    let mut out: SmallVec<[i64; 6]> = smallvec![0; perm.len()];
    for (i, &d) in perm.iter().enumerate() {
        out[d as usize] = i as i64;
    }
    out
}

fn op_indices(inputs: &[Tensor], first: usize) -> &[Tensor] {
    &inputs[first..]
}

// ---------------------------------------------------------------- index

/// `x[indices]`: inputs `[x, index tensors...]` (int64), covering dims `pos` of x.
#[derive(Clone)]
pub struct Index {
    pub pos: Positions,
}

impl Op for Index {
    fn name(&self) -> &'static str {
        "IndexBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("self_sym_sizes", SavedAttr::InputSizes(0))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |inputs| {
            let x = &inputs[0];
            let indices = op_indices(inputs, 1);
            let plan = Plan::new(&x.shape(), &self.pos, indices)?;
            let linear = plan.linear(x, indices)?;
            let picked = index_select(&plan.rows(x)?, 0, &linear)?;
            Ok(smallvec![contiguous(&plan.unlines(&picked)?)?])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        (0..self.pos.len())
            .map(|k| Some(SaveRef::Input(k + 1)))
            .collect()
    }
    /// The gradient added back at the indexed positions (repeats add up).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let mut grads: Grads = smallvec![None; self.pos.len() + 1];
        if ctx.needs(0) {
            let g = ctx.grad(0)?;
            let mut inputs = vec![zeros(&ctx.inputs[0].shape, g.dtype())?, g];
            for k in 0..self.pos.len() {
                inputs.push(ctx.saved(k)?.clone());
            }
            let put = IndexPut {
                pos: self.pos.clone(),
                accumulate: true,
                impl_: true,
            };
            grads[0] = Some(apply1(put, &inputs)?);
        }
        Ok(grads)
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        crate::ops::rules::linear_jvp(ctx, |t| {
            let mut inputs = vec![t.clone()];
            inputs.extend_from_slice(&ctx.primals[1..]);
            apply1(self.clone(), &inputs)
        })
    }
    /// Indexes the batch dim too, with an arange over it: see [`batched_indices`].
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let batch = batch_size(ctx);
        let x = front_or_expand(&ctx.inputs[0].0, ctx.inputs[0].1, batch)?;
        let (pos, mut inputs) = batched_indices(&self.pos, &ctx.inputs[1..], batch)?;
        let logical = Plan::new(
            &x.shape()[1..],
            &self.pos,
            &logical_indices(&ctx.inputs[1..]),
        )?;
        inputs.insert(0, x);
        let out = apply1(Index { pos }, &inputs)?;
        // `out` is [batch, index dims, rest]; per example the index dims sit `front` in.
        Ok(smallvec![(
            permute(&out, &batch_first_to_example(&logical))?,
            Some(0)
        )])
    }
}

/// The per-example shapes of batched index tensors (for the result layout).
fn logical_indices(indices: &[(Tensor, Option<usize>)]) -> Vec<Tensor> {
    indices
        .iter()
        .map(|(t, b)| match b {
            Some(b) => select(t, *b as i64, 0).unwrap_or_else(|_| t.clone()),
            None => t.clone(),
        })
        .collect()
}

/// An index over a batch: the batch dim (in front of x) becomes an indexed dim, read by
/// an arange shaped to broadcast against every index tensor, whose own batch dims go in
/// front. The indexed dims then start at 0 and the result is `[batch, index dims, rest]`.
fn batched_indices(
    pos: &[usize],
    indices: &[(Tensor, Option<usize>)],
    batch: usize,
) -> Result<(Positions, Vec<Tensor>)> {
    let rank = indices
        .iter()
        .map(|(t, b)| t.dim() - usize::from(b.is_some()))
        .max()
        .unwrap_or(0);
    let mut line: Dims = smallvec![batch];
    line.extend((0..rank).map(|_| 1));
    let arange = arange(
        Scalar::Int(0),
        Scalar::Int(batch as i64),
        Scalar::Int(1),
        Some(DType::I64),
    )?;
    let mut out = vec![reshape(&arange, &line)?];
    for (t, b) in indices {
        out.push(match b {
            Some(_) => {
                let front = crate::ops::rules::to_front(t, *b)?;
                let mut shape: Dims = smallvec![batch];
                shape.extend((0..rank + 1 - t.dim()).map(|_| 1));
                shape.extend_from_slice(&front.shape()[1..]);
                reshape(&front, &shape)?
            }
            None => t.clone(),
        });
    }
    let pos = std::iter::once(0)
        .chain(pos.iter().map(|p| p + 1))
        .collect();
    Ok((pos, out))
}

/// The permutation taking `[batch, index dims, rest]` to `[batch, per-example result]`.
fn batch_first_to_example(logical: &Plan) -> SmallVec<[i64; 6]> {
    let (front, nb) = (logical.front(), logical.bshape.len());
    let total = 1 + logical.result_shape().len();
    std::iter::once(0)
        .chain(1 + nb..1 + nb + front)
        .chain(1..1 + nb)
        .chain(1 + nb + front..total)
        .map(|d| d as i64)
        .collect()
}

// ---------------------------------------------------------------- index_put

/// `index_put(x, indices, values, accumulate)`: inputs `[x, values, index tensors...]`.
/// `impl_` marks torch's internal `_index_put_impl_`, which index's gradient records.
#[derive(Clone)]
pub struct IndexPut {
    pub pos: Positions,
    pub accumulate: bool,
    pub impl_: bool,
}

impl Op for IndexPut {
    fn name(&self) -> &'static str {
        if self.impl_ {
            "IndexPutImplBackward0"
        } else {
            "IndexPutBackward0"
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![(
            "accumulate",
            SavedAttr::Scalar(Scalar::Bool(self.accumulate)),
        )]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |inputs| {
            let (x, values) = (&inputs[0], &inputs[1]);
            let indices = op_indices(inputs, 2);
            let plan = Plan::new(&x.shape(), &self.pos, indices)?;
            let linear = plan.linear(x, indices)?;
            let values = expand(values, &plan.result_shape())?;
            let rows = plan.rows(x)?;
            let written = backend(x)?
                .index_write(
                    &rows.data(),
                    0,
                    &linear.data(),
                    &plan.lines(&values)?.data(),
                    self.accumulate,
                )?
                .map_err(|i| Error::runtime(format!("index_put: row {i} out of range")))?;
            Ok(smallvec![contiguous(&plan.unrows(&wrap(written))?)?])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        (0..self.pos.len())
            .map(|k| Some(SaveRef::Input(k + 2)))
            .collect()
    }
    /// x's gradient: all of it when accumulating, else zero where it was overwritten;
    /// the values': the gradient at the written positions, summed to their shape.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let indices: Vec<Tensor> = (0..self.pos.len())
            .map(|k| ctx.saved(k).cloned())
            .collect::<Result<_>>()?;
        let mut grads: Grads = smallvec![None; self.pos.len() + 2];
        if ctx.needs(0) {
            grads[0] = Some(if self.accumulate {
                g.clone()
            } else {
                let mut inputs = vec![g.clone(), zeros(&[], g.dtype())?];
                inputs.extend(indices.iter().cloned());
                apply1(self.clone(), &inputs)?
            });
        }
        if ctx.needs(1) {
            let mut inputs = vec![g];
            inputs.extend(indices);
            let picked = apply1(
                Index {
                    pos: self.pos.clone(),
                },
                &inputs,
            )?;
            grads[1] = Some(sum_to_size(&picked, &ctx.inputs[1].shape)?);
        }
        Ok(grads)
    }
    /// Linear in (x, values): the same put of the tangents (zeros for a missing one).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (tx, tv) = (ctx.tangent(0), ctx.tangent(1));
        if tx.is_none() && tv.is_none() {
            return Ok(smallvec![None]);
        }
        let x = &ctx.primals[0];
        let tx = tx.cloned().map_or_else(|| zeros_like(x), Ok)?;
        let tv = tv.cloned().map_or_else(|| zeros(&[], x.dtype()), Ok)?;
        let mut inputs = vec![tx, tv];
        inputs.extend_from_slice(&ctx.primals[2..]);
        Ok(smallvec![Some(apply1(self.clone(), &inputs)?)])
    }
    /// As [`Index::batch`]: the batch dim is indexed by an arange, and the values are
    /// laid out as the batched result `[batch, index dims, rest]`.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let batch = batch_size(ctx);
        let x = front_or_expand(&ctx.inputs[0].0, ctx.inputs[0].1, batch)?;
        let (pos, indices) = batched_indices(&self.pos, &ctx.inputs[2..], batch)?;
        let logical = Plan::new(
            &x.shape()[1..],
            &self.pos,
            &logical_indices(&ctx.inputs[2..]),
        )?;
        let result = logical.result_shape();
        let (v, bv) = &ctx.inputs[1];
        let v = front_or_expand(v, *bv, batch)?;
        if v.dim() - 1 > result.len() {
            return Err(values_mismatch(&v.shape()[1..], &result));
        }
        let mut padded: Dims = smallvec![batch];
        padded.extend((0..result.len() + 1 - v.dim()).map(|_| 1));
        padded.extend_from_slice(&v.shape()[1..]);
        let mut full: Dims = smallvec![batch];
        full.extend_from_slice(&result);
        let v = expand(&reshape(&v, &padded)?, &full)?;
        let from_example = inverse(&batch_first_to_example(&logical));
        let mut inputs = vec![x, permute(&v, &from_example)?];
        inputs.extend(indices);
        let op = IndexPut {
            pos,
            accumulate: self.accumulate,
            impl_: self.impl_,
        };
        Ok(smallvec![(apply1(op, &inputs)?, Some(0))])
    }
}

fn values_mismatch(values: &[usize], result: &[usize]) -> Error {
    Error::runtime(format!(
        "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}",
        fmt_dims(values),
        fmt_dims(result)
    ))
}

// ---------------------------------------------------------------- public functions

/// torch's index list: per dim of `x` from the left, an index tensor or nothing. A bool
/// (or uint8) mask covers as many dims as it has and stands for its nonzero coordinates.
/// Returns the indexed dims and their int64 index tensors.
fn resolve(x: &Tensor, indices: &[Option<Tensor>]) -> Result<(Positions, Vec<Tensor>)> {
    let covered: usize = indices
        .iter()
        .map(|i| match i {
            Some(t) if is_mask(t) => t.dim(),
            _ => 1,
        })
        .sum();
    if covered > x.dim() {
        return Err(Error::index(format!(
            "too many indices for tensor of dimension {} (got {covered})",
            x.dim()
        )));
    }
    let (mut pos, mut out) = (Positions::new(), Vec::new());
    let mut dim = 0;
    // torch numbers the index tensors alone in its mask error.
    let mut j = 0;
    for index in indices {
        let Some(t) = index else {
            dim += 1;
            continue;
        };
        if is_mask(t) {
            let xs = x.shape();
            if t.shape()[..] != xs[dim..dim + t.dim()] {
                return Err(Error::index(format!(
                    "The shape of the mask {} at index {j} does not match the shape of the indexed tensor {} at index {dim}",
                    fmt_dims(&t.shape()),
                    fmt_dims(&xs)
                )));
            }
            if t.is_batched() {
                return Err(Error::runtime(ERR_VMAP_MASK));
            }
            let coords = nonzero(t)?;
            for k in 0..t.dim() {
                pos.push(dim + k);
                out.push(select(&coords, 1, k as i64)?);
            }
            dim += t.dim();
            j += 1;
            continue;
        }
        let t = match t.dtype() {
            DType::I64 => t.clone(),
            DType::I32 => crate::ops::unary::to_dtype(t, DType::I64)?,
            _ => {
                return Err(Error::index(
                    "tensors used as indices must be long, int, byte or bool tensors",
                ))
            }
        };
        pos.push(dim);
        out.push(t);
        dim += 1;
        j += 1;
    }
    if pos.is_empty() {
        return Err(Error::runtime("index: expected at least one index tensor"));
    }
    Ok((pos, out))
}

fn is_mask(t: &Tensor) -> bool {
    matches!(t.dtype(), DType::Bool | DType::U8)
}

/// `x[indices]` (aten::index).
pub fn index(x: &Tensor, indices: &[Option<Tensor>]) -> Result<Tensor> {
    let (pos, tensors) = resolve(x, indices)?;
    Plan::new(&x.shape(), &pos, &tensors)?;
    let mut inputs = vec![x.clone()];
    inputs.extend(tensors);
    apply1(Index { pos }, &inputs)
}

/// The checked inputs of an index_put: `[x, values, index tensors...]` and the op.
fn put_inputs(
    x: &Tensor,
    indices: &[Option<Tensor>],
    values: &Tensor,
    accumulate: bool,
) -> Result<(IndexPut, Vec<Tensor>)> {
    if values.dtype() != x.dtype() {
        return Err(Error::runtime(format!(
            "Index put requires the source and destination dtypes match, got {} for the destination and {} for the source.",
            x.dtype().scalar_type_name(),
            values.dtype().scalar_type_name()
        )));
    }
    let (pos, tensors) = resolve(x, indices)?;
    let plan = Plan::new(&x.shape(), &pos, &tensors)?;
    let result = plan.result_shape();
    let fits = broadcast_shapes(&values.shape(), &result).is_ok_and(|b| b == result);
    if !fits {
        return Err(values_mismatch(&values.shape(), &result));
    }
    let mut inputs = vec![x.clone(), values.clone()];
    inputs.extend(tensors);
    let op = IndexPut {
        pos,
        accumulate,
        impl_: false,
    };
    Ok((op, inputs))
}

/// `index_put(x, indices, values, accumulate)`: a copy of x with `values` written (or
/// added) at the indexed positions.
pub fn index_put(
    x: &Tensor,
    indices: &[Option<Tensor>],
    values: &Tensor,
    accumulate: bool,
) -> Result<Tensor> {
    let (op, inputs) = put_inputs(x, indices, values, accumulate)?;
    apply1(op, &inputs)
}

/// `x.index_put_(indices, values, accumulate)` and `x[indices] = values`.
pub fn index_put_(
    x: &Tensor,
    indices: &[Option<Tensor>],
    values: &Tensor,
    accumulate: bool,
) -> Result<()> {
    let mut operands = vec![x.clone(), values.clone()];
    operands.extend(indices.iter().flatten().cloned());
    crate::ops::inplace::check_vmap_inplace(&operands, "index_put_")?;
    let (op, inputs) = put_inputs(x, indices, values, accumulate)?;
    crate::ops::inplace::apply_inplace(op, &inputs)
}

const ERR_VMAP_MASK: &str = "vmap: We do not support batching operators that can support dynamic shape. Attempting to batch over indexing with a boolean mask.";

/// `nonzero(x)`: the `[count, x.dim()]` int64 coordinates of x's nonzero elements.
pub fn nonzero(x: &Tensor) -> Result<Tensor> {
    if x.is_batched() {
        return Err(Error::runtime(
            "vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap over aten::nonzero. Please file an issue at https://github.com/pytorch/pytorch/issues if you need this feature.",
        ));
    }
    Ok(wrap(backend(x)?.nonzero(&x.data())?))
}

/// `argwhere(x)`: nonzero's coordinates. Under vmap it takes torch's slow fallback (it
/// has no batching rule): one call per example, the results stacked, which needs them
/// all of one shape (else stack's error), with torch's performance warning.
pub fn argwhere(x: &Tensor) -> Result<Tensor> {
    let Some(info) = x.batch_info() else {
        return nonzero(x);
    };
    let (value, bdim, level) = (info.value.clone(), info.bdim, info.level);
    let size = value.shape()[bdim];
    if size == 0 {
        return Err(Error::runtime(
            "Batching rule not implemented for aten::argwhere. The fallback path does not support vmap over dims of size 0.",
        ));
    }
    crate::autograd::warnings::warn(
        crate::autograd::warnings::WarningKind::User,
        "There is a performance drop because we have not yet implemented the batching rule for aten::argwhere. Please file us an issue on GitHub so that we can prioritize its implementation.",
    );
    let rows = (0..size)
        .map(|i| argwhere(&select(&value, bdim as i64, i as i64)?))
        .collect::<Result<Vec<_>>>()?;
    let stacked = crate::ops::join::stack(&rows, 0)?;
    crate::functorch::batched::add_batch_dim(&stacked, 0, level)
}

/// `x[..., mask] = value` for a number: a `masked_fill_` with the mask (covering the dims
/// from `dim`) padded to broadcast over the dims after it (torch's fast path).
pub fn masked_fill_at_(x: &Tensor, dim: usize, mask: &Tensor, value: Scalar) -> Result<()> {
    let xs = x.shape();
    let end = dim + mask.dim();
    if end > xs.len() || mask.shape()[..] != xs[dim..end] {
        return Err(Error::index(format!(
            "The shape of the mask {} at index {dim} does not match the shape of the indexed tensor {} at index {dim}",
            fmt_dims(&mask.shape()),
            fmt_dims(&xs)
        )));
    }
    let mut padded: Dims = mask.dims();
    padded.extend((end..xs.len()).map(|_| 1));
    crate::ops::index::masked_fill_(x, &reshape(mask, &padded)?, value)
}

// ---------------------------------------------------------------- index_fill

/// `value` (0-dim, x's dtype) written into `x` at the positions a 1-d int64 `index`
/// picks along `dim`. A 0-dim `x` is one position (index 0 or -1).
fn fill_at(x: &Tensor, dim: usize, index: &Tensor, value: &Tensor) -> Result<Tensor> {
    if x.dim() == 0 {
        let filled = fill_at(&reshape(x, &[1])?, 0, index, value)?;
        return reshape(&filled, &[]);
    }
    let wrapped = wrap_index(x, index, x.shape()[dim], dim)?;
    let mut indices: Vec<Option<Tensor>> = vec![None; dim];
    indices.push(Some(wrapped));
    index_put(x, &indices, value, false)
}

/// Batching of both index fills: x's batch dim to the front and the fill one dim
/// further in (a 0-dim example becomes a length-1 dim, dropped again after); a batched
/// index or value has no rule.
fn batch_index_fill(
    ctx: &BatchCtx,
    name: &str,
    fill: impl FnOnce(&Tensor, usize) -> Result<Tensor>,
) -> Result<Batched> {
    let (x, bx) = &ctx.inputs[0];
    if ctx.inputs[1..].iter().any(|(_, b)| b.is_some()) {
        return Err(crate::ops::no_batch_rule(name));
    }
    let Some(_) = bx else {
        return Ok(smallvec![(fill(x, 0)?, None)]);
    };
    let front = crate::ops::rules::to_front(x, *bx)?;
    let out = if front.dim() == 1 {
        let filled = fill(&reshape(&front, &[front.shape()[0], 1])?, 1)?;
        reshape(&filled, &[front.shape()[0]])?
    } else {
        fill(&front, 1)?
    };
    Ok(smallvec![(out, Some(0))])
}

/// `index_fill(x, dim, index, value)` for a number (IndexFillBackward0); inputs
/// `[x, index]`.
#[derive(Clone, Copy)]
pub struct IndexFill {
    pub dim: usize,
    pub value: Scalar,
}

impl Op for IndexFill {
    fn name(&self) -> &'static str {
        "IndexFillBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("dim", SavedAttr::Scalar(Scalar::Int(self.dim as i64))),
            ("index", SavedAttr::Slot(0)),
            ("value", SavedAttr::Scalar(self.value)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |inputs| {
            let x = &inputs[0];
            let value = crate::ops::creation::full(&[], self.value, x.dtype())?;
            Ok(smallvec![fill_at(x, self.dim, &inputs[1], &value)?])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(1))]
    }
    /// Zero where the value was written.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = zero_filled(&ctx.grad(0)?, self.dim, ctx.saved(0)?)?;
        Ok(smallvec![Some(g), None])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        crate::ops::rules::linear_jvp(ctx, |t| zero_filled(t, self.dim, &ctx.primals[1]))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let index = &ctx.inputs[1].0;
        batch_index_fill(ctx, self.name(), |x, shift| {
            let op = IndexFill {
                dim: self.dim + shift,
                ..*self
            };
            apply1(op, &[x.clone(), index.clone()])
        })
    }
}

/// `t` with zeros at the filled positions: the gradient (and tangent) of the filled input.
fn zero_filled(t: &Tensor, dim: usize, index: &Tensor) -> Result<Tensor> {
    let zero = IndexFill {
        dim,
        value: Scalar::Int(0),
    };
    apply1(zero, &[t.clone(), index.clone()])
}

/// `index_fill(x, dim, index, value)` for a 0-dim tensor `value` (IndexFillBackward1);
/// inputs `[x, index, value]`. The value's gradient is the sum of the gradient over the
/// filled positions: the whole sum less that of the zero-filled gradient, which counts a
/// repeated index once.
#[derive(Clone, Copy)]
pub struct IndexFillTensor {
    pub dim: usize,
}

impl Op for IndexFillTensor {
    fn name(&self) -> &'static str {
        "IndexFillBackward1"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("dim", SavedAttr::Scalar(Scalar::Int(self.dim as i64))),
            ("index", SavedAttr::Slot(0)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |inputs| {
            let (x, index, value) = (&inputs[0], &inputs[1], &inputs[2]);
            let value = crate::ops::unary::to_dtype(value, x.dtype())?;
            Ok(smallvec![fill_at(x, self.dim, index, &value)?])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(1))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let kept = zero_filled(&g, self.dim, ctx.saved(0)?)?;
        let gv = if ctx.needs(2) {
            let total = sum(&g, None, false, None)?;
            let unfilled = sum(&kept, None, false, None)?;
            Some(crate::ops::binary::sub(&total, &unfilled, Scalar::Int(1))?)
        } else {
            None
        };
        Ok(smallvec![Some(kept), None, gv])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        crate::ops::rules::jointly_linear_jvp(ctx, self, &[0, 2])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (index, value) = (&ctx.inputs[1].0, &ctx.inputs[2].0);
        batch_index_fill(ctx, self.name(), |x, shift| {
            let op = IndexFillTensor {
                dim: self.dim + shift,
            };
            apply1(op, &[x.clone(), index.clone(), value.clone()])
        })
    }
}

/// The checks of both index fills, in torch's order; the index as a vector.
fn index_fill_inputs(x: &Tensor, dim: i64, index: &Tensor) -> Result<(usize, Tensor)> {
    let dim = crate::shape::wrap_dim(dim, x.dim())?;
    if index.dtype() != DType::I64 {
        return Err(Error::index(
            "index_fill_(): Expected dtype int64 for index.",
        ));
    }
    if index.dim() > 1 {
        return Err(Error::runtime("Index has to be a vector/scalar"));
    }
    Ok((dim, reshape(index, &[index.numel()])?))
}

fn check_fill_value(value: &Tensor) -> Result<()> {
    if value.dim() != 0 {
        return Err(Error::runtime(format!(
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
            value.dim()
        )));
    }
    Ok(())
}

/// `index_fill(x, dim, index, value)`.
pub fn index_fill(x: &Tensor, dim: i64, index: &Tensor, value: Scalar) -> Result<Tensor> {
    let (dim, index) = index_fill_inputs(x, dim, index)?;
    apply1(IndexFill { dim, value }, &[x.clone(), index])
}

/// `x.index_fill_(dim, index, value)`.
pub fn index_fill_(x: &Tensor, dim: i64, index: &Tensor, value: Scalar) -> Result<()> {
    crate::ops::inplace::check_vmap_inplace(&[x.clone(), index.clone()], "index_fill_")?;
    let (dim, index) = index_fill_inputs(x, dim, index)?;
    crate::ops::inplace::apply_inplace(IndexFill { dim, value }, &[x.clone(), index])
}

/// `index_fill(x, dim, index, value)` with a 0-dim tensor value.
pub fn index_fill_tensor(x: &Tensor, dim: i64, index: &Tensor, value: &Tensor) -> Result<Tensor> {
    let (dim, index) = index_fill_inputs(x, dim, index)?;
    check_fill_value(value)?;
    apply1(IndexFillTensor { dim }, &[x.clone(), index, value.clone()])
}

/// `x.index_fill_(dim, index, value)` with a 0-dim tensor value.
pub fn index_fill_tensor_(x: &Tensor, dim: i64, index: &Tensor, value: &Tensor) -> Result<()> {
    let operands = [x.clone(), index.clone(), value.clone()];
    crate::ops::inplace::check_vmap_inplace(&operands, "index_fill_")?;
    let (dim, index) = index_fill_inputs(x, dim, index)?;
    check_fill_value(value)?;
    crate::ops::inplace::apply_inplace(IndexFillTensor { dim }, &[x.clone(), index, value.clone()])
}
