//! Indexing along one dim with index tensors: `gather`, `scatter` (a tensor or a value),
//! `scatter_add`, `index_select`, and `masked_fill`. The public functions check shapes
//! and index dtypes with torch's errors before any kernel runs (the kernels check the
//! index values themselves).

use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::ops::binary::where_;
use crate::ops::device::{backend, wrap};
use crate::ops::linalg::{gather as gather_unchecked, scatter_into_zeros};
use crate::ops::rules::{
    batch_broadcast, batch_size, composite, front_or_expand, linear_jvp, sum_tangents,
};
use crate::ops::unary::to_dtype;
use crate::ops::view::{expand, narrow, reshape};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::shape::{broadcast_shapes, fmt_dims, wrap_dim};
use crate::tensor::Tensor;

/// An int32 or int64 index, as int64 (what the kernels read).
pub(crate) fn index_i64(index: &Tensor, op: &str, expected: &str) -> Result<Tensor> {
    match index.dtype() {
        DType::I64 => Ok(index.clone()),
        DType::I32 => to_dtype(index, DType::I64),
        _ => Err(Error::runtime(format!(
            "{op}(): Expected dtype {expected} for index"
        ))),
    }
}

/// gather/scatter's shape rule: `index` has `x`'s number of dims and is no larger
/// than `x` apart from `dim` (and no larger than `src`, when there is one).
pub(crate) fn check_index_shape(
    x: &Tensor,
    dim: usize,
    index: &Tensor,
    src: Option<&Tensor>,
) -> Result<()> {
    if index.dim() != x.dim().max(1) && !(index.dim() == 0 && x.dim() == 0) && index.numel() != 0 {
        return Err(Error::runtime(
            "Index tensor must have the same number of dimensions as input tensor",
        ));
    }
    let (xs, is) = (x.shape(), index.shape());
    let fits_x = is
        .iter()
        .enumerate()
        .all(|(d, &n)| d == dim || n <= xs.get(d).copied().unwrap_or(1));
    let fits_src = src.is_none_or(|s| {
        let ss = s.shape();
        is.iter()
            .enumerate()
            .all(|(d, &n)| n <= ss.get(d).copied().unwrap_or(1))
    });
    match src {
        _ if fits_x && fits_src => Ok(()),
        None => Err(Error::runtime(format!(
            "Size does not match at dimension {} expected index {} to be smaller than self {} apart from dimension {dim}",
            is.iter().enumerate().position(|(d, &n)| d != dim && n > xs[d]).unwrap_or(0),
            fmt_dims(&is),
            fmt_dims(&xs)
        ))),
        Some(s) => Err(Error::runtime(format!(
            "Expected index {} to be no larger than self {} apart from dimension {dim} and to be no larger size than src {}",
            fmt_dims(&is),
            fmt_dims(&xs),
            fmt_dims(&s.shape())
        ))),
    }
}

/// `src` cut to `index`'s shape: the part of it a scatter reads.
pub(crate) fn src_for(src: &Tensor, index: &Tensor) -> Result<Tensor> {
    let mut s = src.clone();
    for (d, &n) in index.shape().iter().enumerate() {
        if s.shape()[d] != n {
            s = narrow(&s, d as i64, 0, n as i64)?;
        }
    }
    Ok(s)
}

/// `gather(x, dim, index)` (GatherBackward0).
pub fn gather(x: &Tensor, dim: i64, index: &Tensor) -> Result<Tensor> {
    let dim = wrap_dim(dim, x.dim())?;
    let index = index_i64(index, "gather", "int32/int64")?;
    check_index_shape(x, dim, &index, None)?;
    if x.dim() == 0 {
        // A scalar is a one-element line; the result has the index's shape.
        let flat_index = reshape(&index, &[index.numel()])?;
        let line = gather_unchecked(&reshape(x, &[1])?, 0, &flat_index)?;
        return reshape(&line, &index.shape());
    }
    gather_unchecked(x, dim, &index)
}

// ---------------------------------------------------------------- scatter

/// `scatter(x, dim, index, src)` (ScatterBackward0, inputs [x, index, src]),
/// `scatter(x, dim, index, value)` (ScatterBackward1, inputs [x, index]) and
/// `scatter_add(x, dim, index, src)` (ScatterAddBackward0). `src` has index's shape.
#[derive(Clone, Copy)]
pub struct Scatter {
    pub dim: usize,
    pub value: Option<Scalar>,
    pub add: bool,
}

impl Scatter {
    /// The written values: `src`, or `value` in index's shape and x's dtype.
    fn src(&self, inputs: &[Tensor]) -> Result<Tensor> {
        match self.value {
            Some(v) => crate::ops::creation::full(&inputs[1].shape(), v, inputs[0].dtype()),
            None => Ok(inputs[2].clone()),
        }
    }
}

impl Op for Scatter {
    fn name(&self) -> &'static str {
        match (self.add, self.value) {
            (true, _) => "ScatterAddBackward0",
            (false, None) => "ScatterBackward0",
            (false, Some(_)) => "ScatterBackward1",
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        let mut attrs = vec![
            ("dim", SavedAttr::Scalar(Scalar::Int(self.dim as i64))),
            ("index", SavedAttr::Slot(0)),
        ];
        if let Some(v) = self.value {
            attrs.push(("value", SavedAttr::Scalar(v)));
        }
        attrs
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (x, index) = (&inputs[0], &inputs[1]);
        let src = self.src(inputs)?;
        let out = backend(x)?.scatter(&x.data(), self.dim, &index.data(), &src.data(), self.add)?;
        Ok(smallvec![wrap(out)])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(1))]
    }
    /// x's gradient: all of it for scatter_add, else zero where it was overwritten;
    /// src's: the gradient at the written positions.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (g, index) = (ctx.grad(0)?, ctx.saved(0)?);
        let gx = if !ctx.needs(0) {
            None
        } else if self.add {
            Some(g.clone())
        } else {
            let zero = Scatter {
                value: Some(Scalar::Int(0)),
                add: false,
                dim: self.dim,
            };
            Some(apply1(zero, &[g.clone(), index.clone()])?)
        };
        let mut grads: Grads = smallvec![gx, None];
        if self.value.is_none() {
            grads.push(
                ctx.needs(2)
                    .then(|| gather_unchecked(&g, self.dim, index))
                    .transpose()?,
            );
        }
        Ok(grads)
    }
    /// Linear in (x, src): the same scatter of the tangents (a zero x tangent: the
    /// scattered src tangent alone; a zero src tangent: zeros written).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (x, index) = (&ctx.primals[0], &ctx.primals[1]);
        let tsrc = ctx.tangent(2);
        if ctx.tangent(0).is_none() && tsrc.is_none() {
            return Ok(smallvec![None]);
        }
        let tx = match ctx.tangent(0) {
            Some(t) => t.clone(),
            None => crate::ops::creation::zeros_like(x)?,
        };
        let mut inputs: SmallVec<[Tensor; 3]> = smallvec![tx, index.clone()];
        let op = match (self.value, tsrc) {
            (Some(_), _) => Scatter {
                value: Some(Scalar::Int(0)),
                ..*self
            },
            (None, Some(t)) => {
                inputs.push(t.clone());
                *self
            }
            (None, None) if self.add => return Ok(smallvec![Some(inputs[0].clone())]),
            (None, None) => Scatter {
                value: Some(Scalar::Int(0)),
                ..*self
            },
        };
        Ok(smallvec![Some(apply1(op, &inputs)?)])
    }
    /// Every operand batched alike (in front), scattered one dim further in.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let batch = batch_size(ctx);
        let args: SmallVec<[Tensor; 3]> = ctx
            .inputs
            .iter()
            .map(|(t, b)| front_or_expand(t, *b, batch))
            .collect::<Result<_>>()?;
        let op = Scatter {
            dim: self.dim + 1,
            ..*self
        };
        Ok(smallvec![(apply1(op, &args)?, Some(0))])
    }
}

/// scatter / scatter_add with a tensor `src`; `value` scatters a number instead.
pub fn scatter(
    x: &Tensor,
    dim: i64,
    index: &Tensor,
    src: Option<&Tensor>,
    value: Option<Scalar>,
    add: bool,
) -> Result<Tensor> {
    if x.dim() == 0 {
        scatter_op(x, dim, index, src, value, add)?; // torch's checks, on the scalar
        let line = scatter(
            &reshape(x, &[1])?,
            0,
            &flat(index)?,
            flat_src(src)?.as_ref(),
            value,
            add,
        )?;
        return reshape(&line, &[]);
    }
    let (op, inputs) = scatter_op(x, dim, index, src, value, add)?;
    apply1(op, &inputs)
}

/// `scatter_` / `scatter_add_`: `scatter` written into `x`.
pub fn scatter_(
    x: &Tensor,
    dim: i64,
    index: &Tensor,
    src: Option<&Tensor>,
    value: Option<Scalar>,
    add: bool,
) -> Result<()> {
    if x.dim() == 0 {
        scatter_op(x, dim, index, src, value, add)?;
        let line = reshape(x, &[1])?;
        return scatter_(&line, 0, &flat(index)?, flat_src(src)?.as_ref(), value, add);
    }
    let (op, inputs) = scatter_op(x, dim, index, src, value, add)?;
    if let Some(s) = src {
        crate::ops::inplace::check_no_overlap(x, s, false)?;
    }
    crate::ops::inplace::apply_inplace(op, &inputs)
}

/// A scalar is a one-element line, written through a 1-d index and source.
fn flat(t: &Tensor) -> Result<Tensor> {
    reshape(t, &[t.numel()])
}
fn flat_src(src: Option<&Tensor>) -> Result<Option<Tensor>> {
    src.map(flat).transpose()
}

/// The checked op and inputs of a scatter into an at least 1-d `x`.
fn scatter_op(
    x: &Tensor,
    dim: i64,
    index: &Tensor,
    src: Option<&Tensor>,
    value: Option<Scalar>,
    add: bool,
) -> Result<(Scatter, Vec<Tensor>)> {
    let name = if add { "scatter_add" } else { "scatter" };
    let dim = wrap_dim(dim, x.dim())?;
    let index = index_i64(index, name, "int32/int64")?;
    check_index_shape(x, dim, &index, src)?;
    let op = Scatter { dim, value, add };
    match src {
        Some(s) => {
            if s.dtype() != x.dtype() {
                return Err(Error::runtime(format!(
                    "{name}(): Expected self.dtype to be equal to src.dtype"
                )));
            }
            let src = src_for(s, &index)?;
            Ok((op, vec![x.clone(), index, src]))
        }
        None => Ok((op, vec![x.clone(), index])),
    }
}

// ---------------------------------------------------------------- index_select

/// `index_select(x, dim, index)` (IndexSelectBackward0): a gather whose index is the
/// 1-d `index` broadcast across the other dims.
#[derive(Clone, Copy)]
pub struct IndexSelect {
    pub dim: usize,
}

impl IndexSelect {
    /// The 1-d index laid along `dim` of a tensor shaped like `like` with `n` there.
    fn full_index(&self, index: &Tensor, like: &[usize]) -> Result<Tensor> {
        let n = index.numel();
        let mut line: SmallVec<[usize; 6]> = smallvec![1; like.len()];
        line[self.dim] = n;
        let mut shape: SmallVec<[usize; 6]> = like.into();
        shape[self.dim] = n;
        expand(&reshape(index, &line)?, &shape)
    }
}

impl Op for IndexSelect {
    fn name(&self) -> &'static str {
        "IndexSelectBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("dim", SavedAttr::Scalar(Scalar::Int(self.dim as i64))),
            ("index", SavedAttr::Slot(0)),
            ("self_sym_sizes", SavedAttr::InputSizes(0)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (x, index) = (&inputs[0], &inputs[1]);
        let out = backend(x)?
            .index_select(&x.data(), self.dim, &index.data())?
            .map_err(|_| Error::index("index out of range in self"))?;
        Ok(smallvec![wrap(out)])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(1))]
    }
    /// The gradient added back at the selected positions (repeats add up).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let shape = &ctx.inputs[0].shape;
        let g = ctx.grad(0)?;
        let full = self.full_index(ctx.saved(0)?, &g.shape())?;
        let g = if shape.is_empty() {
            reshape(&g, &[1])?
        } else {
            g
        };
        let padded: SmallVec<[usize; 6]> = if shape.is_empty() {
            smallvec![1]
        } else {
            shape.clone()
        };
        let gx = scatter_into_zeros(&g, self.dim, &full, &padded)?;
        Ok(smallvec![Some(reshape(&gx, shape)?), None])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| apply1(*self, &[t.clone(), ctx.primals[1].clone()]))
    }
    /// The input's batch dim in front; a batched index has no rule.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let ((x, bx), (index, bi)) = (&ctx.inputs[0], &ctx.inputs[1]);
        if bi.is_some() {
            return Err(crate::ops::no_batch_rule(self.name()));
        }
        let x = crate::ops::rules::to_front(x, *bx)?;
        let shift = usize::from(bx.is_some());
        let out = apply1(
            IndexSelect {
                dim: self.dim + shift,
            },
            &[x, index.clone()],
        )?;
        Ok(smallvec![(out, bx.map(|_| 0))])
    }
}

pub fn index_select(x: &Tensor, dim: i64, index: &Tensor) -> Result<Tensor> {
    let dim = wrap_dim(dim, x.dim())?;
    if x.dim() == 0 {
        if index.numel() != 1 {
            return Err(Error::runtime(format!(
                "index_select(): Index to scalar can have only 1 value, got {} value(s)",
                index.numel()
            )));
        }
        // A scalar is a one-element line here; the result stays a scalar.
        let line = index_select(&reshape(x, &[1])?, 0, index)?;
        return reshape(&line, &[]);
    }
    if index.dim() > 1 {
        return Err(Error::index(
            "index_select(): Index is supposed to be a vector",
        ));
    }
    let index = index_i64(index, "index_select", "int32 or int64")?;
    let index = reshape(&index, &[index.numel()])?;
    apply1(IndexSelect { dim }, &[x.clone(), index])
}

// ---------------------------------------------------------------- masked_fill

/// `masked_fill(x, mask, value)` (MaskedFillBackward0): `value` where the bool mask is
/// set; the result has the broadcast shape of `x` and `mask` (the out-of-place op
/// broadcasts both).
#[derive(Clone, Copy)]
pub struct MaskedFill {
    pub value: Scalar,
}

impl Op for MaskedFill {
    fn name(&self) -> &'static str {
        "MaskedFillBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("mask", SavedAttr::Slot(0))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (x, mask) = (&inputs[0], &inputs[1]);
        let value = Tensor::scalar(self.value, x.dtype());
        let out = backend(x)?.select(&mask.data(), &value.data(), &x.data(), x.dtype())?;
        Ok(smallvec![wrap(out)])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(1))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let zero = Tensor::scalar(Scalar::Int(0), g.dtype());
        Ok(smallvec![Some(where_(ctx.saved(0)?, &zero, &g)?), None])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let mask = &ctx.primals[1];
        let parts = [ctx
            .tangent(0)
            .map(|t| {
                let zero = Tensor::scalar(Scalar::Int(0), t.dtype());
                where_(mask, &zero, t)
            })
            .transpose()];
        Ok(smallvec![sum_tangents(parts)?])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let op = *self;
        batch_broadcast(ctx, |args| apply1(op, args))
    }
}

fn check_mask(mask: &Tensor) -> Result<()> {
    if mask.dtype() != DType::Bool {
        return Err(Error::runtime(format!(
            "masked_fill_ only supports boolean masks, but got mask with dtype {}",
            mask.dtype().scalar_type_name().to_lowercase()
        )));
    }
    Ok(())
}

pub fn masked_fill(x: &Tensor, mask: &Tensor, value: Scalar) -> Result<Tensor> {
    apply1(masked_fill_op(x, mask, value)?, &[x.clone(), mask.clone()])
}

/// `x.masked_fill_(mask, value)`.
pub fn masked_fill_(x: &Tensor, mask: &Tensor, value: Scalar) -> Result<()> {
    let op = masked_fill_op(x, mask, value)?;
    // torch expands the mask to self's shape, so a size mismatch names self first.
    broadcast_shapes(&x.shape(), &mask.shape())?;
    crate::ops::inplace::apply_inplace(op, &[x.clone(), mask.clone()])
}

fn masked_fill_op(x: &Tensor, mask: &Tensor, value: Scalar) -> Result<MaskedFill> {
    check_mask(mask)?;
    if let Scalar::Complex(c) = value {
        if !x.dtype().is_complex() && c.im != 0.0 {
            return Err(Error::runtime(format!(
                "value cannot be converted to type {} without overflow",
                x.dtype().cpp_name()
            )));
        }
    }
    Ok(MaskedFill { value })
}

/// `masked_fill(x, mask, value)` for a tensor `value` (MaskedFillBackward1; 0-dim from
/// the user, broadcast under vmap): inputs `[x, mask, value]`. The value's gradient is
/// the gradient's sum where the mask is set.
#[derive(Clone, Copy)]
pub struct MaskedFillTensor;

impl Op for MaskedFillTensor {
    fn name(&self) -> &'static str {
        "MaskedFillBackward1"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("mask", SavedAttr::Slot(0))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (x, mask) = (&inputs[0], &inputs[1]);
        let value = composite(&inputs[2..], |v| to_dtype(&v[0], x.dtype()))?;
        let out = backend(x)?.select(&mask.data(), &value.data(), &x.data(), x.dtype())?;
        Ok(smallvec![wrap(out)])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(1))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (g, mask) = (ctx.grad(0)?, ctx.saved(0)?);
        let zero = Tensor::scalar(Scalar::Int(0), g.dtype());
        let gx = ctx.needs(0).then(|| where_(mask, &zero, &g)).transpose()?;
        let gv = if ctx.needs(2) {
            let set = where_(mask, &g, &zero)?;
            Some(crate::ops::reduce::sum(&set, None, false, None)?)
        } else {
            None
        };
        Ok(smallvec![gx, None, gv])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        crate::ops::rules::jointly_linear_jvp(ctx, self, &[0, 2])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_broadcast(ctx, |args| apply1(*self, args))
    }
}

fn masked_fill_tensor_inputs(x: &Tensor, mask: &Tensor, value: &Tensor) -> Result<[Tensor; 3]> {
    check_mask(mask)?;
    if value.dim() != 0 {
        return Err(Error::runtime(format!(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
            value.dim()
        )));
    }
    Ok([x.clone(), mask.clone(), value.clone()])
}

/// `masked_fill(x, mask, value)` with a 0-dim tensor value.
pub fn masked_fill_tensor(x: &Tensor, mask: &Tensor, value: &Tensor) -> Result<Tensor> {
    apply1(
        MaskedFillTensor,
        &masked_fill_tensor_inputs(x, mask, value)?,
    )
}

/// `x.masked_fill_(mask, value)` with a 0-dim tensor value.
pub fn masked_fill_tensor_(x: &Tensor, mask: &Tensor, value: &Tensor) -> Result<()> {
    let inputs = masked_fill_tensor_inputs(x, mask, value)?;
    // As masked_fill_: the mask expands to self, so a mismatch names self first.
    broadcast_shapes(&x.shape(), &mask.shape())?;
    crate::ops::inplace::apply_inplace(MaskedFillTensor, &inputs)
}
