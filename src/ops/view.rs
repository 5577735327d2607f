//! View ops: outputs share storage and version counter with the input. Each view is a
//! pure layout transform (`ViewKind`); its gradient is the adjoint index map, computed
//! once for all kinds by `Restride` on the input's virtual contiguous layout.

use smallvec::{smallvec, SmallVec};

use crate::autograd::grad_mode;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::ops::rules::{linear_jvp, to_front};
use crate::ops::{
    apply, apply1, no_batch_rule, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SavedAttr,
    Tangents, VjpCtx,
};
use crate::shape::{infer_size, wrap_dim, Dims};
use crate::tensor::{CreationMeta, Tensor};

#[derive(Clone, Debug)]
pub enum ViewKind {
    View(Dims),
    Permute(SmallVec<[i64; 6]>),
    Transpose(i64, i64),
    Expand(Dims),
    /// Remove these (already wrapped) size-1 dims; None: all size-1 dims.
    Squeeze(Option<Dims>),
    Unsqueeze(i64),
    Slice {
        dim: usize,
        start: i64,
        end: i64,
        step: i64,
    },
    Select {
        dim: i64,
        index: i64,
    },
    Diagonal {
        offset: i64,
        dim1: i64,
        dim2: i64,
    },
    /// Storage offset relative to the input's own offset.
    AsStrided {
        size: Dims,
        stride: Dims,
        offset: isize,
    },
    /// Windows along a dim (see `Layout::unfold`).
    Unfold {
        dim: i64,
        size: i64,
        step: i64,
    },
    Alias,
}

impl ViewKind {
    pub fn apply(&self, l: &Layout) -> Result<Layout> {
        Ok(match self {
            ViewKind::View(shape) => l.view(shape).ok_or_else(|| Error::runtime(
                "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
            ))?,
            ViewKind::Permute(d) => l.permute(d)?,
            ViewKind::Transpose(a, b) => l.transpose(*a, *b)?,
            ViewKind::Expand(s) => l.expand_to(s)?,
            ViewKind::Squeeze(d) => l.squeeze(d.as_deref()),
            ViewKind::Unsqueeze(d) => l.unsqueeze(*d)?,
            ViewKind::Slice { dim, start, end, step } => l.slice(*dim, *start, *end, *step)?,
            ViewKind::Select { dim, index } => l.select(*dim, *index)?,
            ViewKind::Diagonal { offset, dim1, dim2 } => l.diagonal(*offset, *dim1, *dim2)?,
            ViewKind::AsStrided { size, stride, offset } => {
                let off = l.offset as isize + offset;
                if off < 0 {
                    return Err(Error::runtime(format!("Tensor: invalid storage offset {off}")));
                }
                // Sizes and strides were checked when the view was asked for; the
                // storage bounds are checked where the view is made (make_view).
                Layout {
                    shape: size.clone(),
                    strides: stride.clone(),
                    offset: off as usize,
                }
            }
            ViewKind::Unfold { dim, size, step } => l.unfold(*dim, *size, *step)?,
            ViewKind::Alias => l.clone(),
        })
    }

    /// View family batching: the same view of every example of a value whose batch dim
    /// (of size `batch`) is in front, i.e. this view with its dims shifted by one.
    /// `shape` is one example's shape. None where no such view exists (as_strided).
    pub fn batched(&self, shape: &[usize], batch: usize) -> Result<Option<ViewKind>> {
        let n = shape.len();
        let shift = |d: i64| -> Result<i64> { Ok(wrap_dim(d, n)? as i64 + 1) };
        let with_batch =
            |s: &[usize]| -> Dims { std::iter::once(batch).chain(s.iter().copied()).collect() };
        Ok(Some(match self {
            ViewKind::View(s) => ViewKind::View(with_batch(s)),
            ViewKind::Expand(s) => ViewKind::Expand(with_batch(s)),
            ViewKind::Permute(d) => ViewKind::Permute(
                std::iter::once(Ok(0))
                    .chain(d.iter().map(|&d| shift(d)))
                    .collect::<Result<_>>()?,
            ),
            ViewKind::Transpose(a, b) if wrap_dim(*a, n)? == wrap_dim(*b, n)? => {
                ViewKind::Transpose(0, 0)
            }
            ViewKind::Transpose(a, b) => ViewKind::Transpose(shift(*a)?, shift(*b)?),
            ViewKind::Squeeze(d) => {
                let dims: Dims = match d {
                    Some(d) => d.clone(),
                    None => (0..n).filter(|&i| shape[i] == 1).collect(),
                };
                ViewKind::Squeeze(Some(dims.iter().map(|&d| d + 1).collect()))
            }
            ViewKind::Unsqueeze(d) => ViewKind::Unsqueeze(wrap_dim(*d, n + 1)? as i64 + 1),
            ViewKind::Slice {
                dim,
                start,
                end,
                step,
            } => ViewKind::Slice {
                dim: dim + 1,
                start: *start,
                end: *end,
                step: *step,
            },
            ViewKind::Select { dim, index } => ViewKind::Select {
                dim: shift(*dim)?,
                index: *index,
            },
            ViewKind::Diagonal { offset, dim1, dim2 } => ViewKind::Diagonal {
                offset: *offset,
                dim1: shift(*dim1)?,
                dim2: shift(*dim2)?,
            },
            ViewKind::AsStrided { .. } => return Ok(None),
            // A 0-dim example's window is a new dim, not a window of the batch dim.
            ViewKind::Unfold { .. } if n == 0 => return Ok(None),
            ViewKind::Unfold { dim, size, step } => ViewKind::Unfold {
                dim: shift(*dim)?,
                size: *size,
                step: *step,
            },
            ViewKind::Alias => ViewKind::Alias,
        }))
    }
}

/// How a new view is tagged (spec §6.3): decides later in-place checks.
pub(crate) fn creation_meta(x: &Tensor, multi: Option<(&'static str, usize)>) -> CreationMeta {
    if grad_mode::is_inference_mode() && !x.is_inference() {
        CreationMeta::InferenceMode
    } else if !grad_mode::is_grad_enabled() && x.requires_grad() {
        CreationMeta::NoGradMode
    } else if let Some((name, nr)) = multi {
        CreationMeta::MultipleOutputs(name, nr)
    } else {
        CreationMeta::Default
    }
}

#[derive(Clone)]
pub struct ViewOp {
    pub name: &'static str,
    pub kind: ViewKind,
    /// `_unsafe_view` (reshape of a fresh copy): same data, but not a view for autograd.
    pub tracked_view: bool,
}

impl Op for ViewOp {
    fn name(&self) -> &'static str {
        self.name
    }
    /// ViewBackward0 and UnsafeViewBackward0 keep the input's sizes (torch's
    /// `_saved_self_sym_sizes`).
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        match self.kind {
            ViewKind::View(_) => vec![("self_sym_sizes", SavedAttr::InputSizes(0))],
            _ => Vec::new(),
        }
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        let layout = self.kind.apply(&x.layout())?;
        if !self.tracked_view {
            return Ok(smallvec![x.fresh_with_shape(&layout.shape)]);
        }
        Ok(smallvec![x.make_view(layout, creation_meta(x, None))?])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let shape = &ctx.inputs[0].shape;
        // Views that keep every element once: the inverse view of the gradient, no copy
        // (torch's rules; a moved copy of a transposed weight's gradient cost more than
        // the matmul that made it). Without a graph to record, a plain tensor over the
        // same memory instead of a view: once the incoming gradient is freed, nothing
        // else holds the buffer and AccumulateGrad takes it over instead of copying.
        let inverse_view = |v: Tensor| {
            if crate::ops::recording() {
                v
            } else {
                v.alias_fresh_version()
            }
        };
        let grad = match &self.kind {
            ViewKind::Permute(dims) => {
                inverse_view(permute(&g, &inverse_permutation(dims, shape.len())?)?)
            }
            ViewKind::Transpose(a, b) => inverse_view(transpose(&g, *a, *b)?),
            ViewKind::View(_) | ViewKind::Squeeze(_) | ViewKind::Unsqueeze(_) => {
                inverse_view(reshape(&g, shape)?)
            }
            ViewKind::Alias => g,
            // The rest scatter the gradient into zeros through the adjoint index map.
            _ => {
                let input = Layout::contiguous(shape);
                let from = self.kind.apply(&input)?;
                restride(&g, from, input)?
            }
        };
        Ok(smallvec![Some(grad)])
    }
    /// Linear family: the same view of the tangent (made contiguous, the geometry the
    /// vjp assumes).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| apply1(self.clone(), &[contiguous(t)?]))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (x, b) = &ctx.inputs[0];
        let Some(bd) = *b else {
            return Ok(smallvec![(
                apply1(self.clone(), std::slice::from_ref(x))?,
                None
            )]);
        };
        let example = &x.shape()[..];
        let example: Dims = example
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != bd)
            .map(|(_, &s)| s)
            .collect();
        if let ViewKind::AsStrided {
            size,
            stride,
            offset,
        } = &self.kind
        {
            // Each example's view at the same place within that example's memory: the
            // batch dim keeps its stride (torch's rule); storage bounds are checked.
            let kind = ViewKind::AsStrided {
                size: std::iter::once(x.shape()[bd])
                    .chain(size.iter().copied())
                    .collect(),
                stride: std::iter::once(x.strides()[bd])
                    .chain(stride.iter().copied())
                    .collect(),
                offset: *offset,
            };
            let out = apply1(
                ViewOp {
                    kind,
                    ..self.clone()
                },
                std::slice::from_ref(x),
            )?;
            return Ok(smallvec![(out, Some(0))]);
        }
        let Some(kind) = self.kind.batched(&example, x.shape()[bd])? else {
            return Err(no_batch_rule(self.name));
        };
        let mut x = to_front(x, *b)?;
        if let ViewKind::Expand(shape) = &kind {
            // New leading dims go after the batch dim, not before it.
            while x.dim() < shape.len() {
                x = unsqueeze(&x, 1)?;
            }
        }
        let out = match kind {
            // The batch dim in front may make the value non-viewable: reshape copies then.
            ViewKind::View(shape) => reshape(&x, &shape)?,
            kind => apply1(
                ViewOp {
                    kind,
                    ..self.clone()
                },
                &[x],
            )?,
        };
        Ok(smallvec![(out, Some(0))])
    }
}

/// The permutation undoing `dims` (a permutation of `0..n`, negative dims allowed).
fn inverse_permutation(dims: &[i64], n: usize) -> Result<SmallVec<[i64; 6]>> {
    let mut inverse: SmallVec<[i64; 6]> = smallvec![0; n];
    for (i, &d) in dims.iter().enumerate() {
        inverse[wrap_dim(d, n)?] = i as i64;
    }
    Ok(inverse)
}

fn view_op(x: &Tensor, name: &'static str, kind: ViewKind) -> Result<Tensor> {
    apply1(
        ViewOp {
            name,
            kind,
            tracked_view: true,
        },
        std::slice::from_ref(x),
    )
}

/// Values moved between layouts (see kernels::index::restride); linear, and its own
/// adjoint with `from`/`to` swapped, so double backward through views works.
pub struct Restride {
    pub from: Layout,
    pub to: Layout,
}
impl Op for Restride {
    fn name(&self) -> &'static str {
        "AsStridedScatterBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        let out = crate::ops::device::backend(x)?.restride(&x.data(), &self.from, &self.to)?;
        Ok(smallvec![crate::ops::device::wrap(out)])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![Some(restride(
            &ctx.grad(0)?,
            self.to.clone(),
            self.from.clone()
        )?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| restride(t, self.from.clone(), self.to.clone()))
    }
    /// Each example moved over its own stretch of one virtual storage.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (x, b) = &ctx.inputs[0];
        let Some(bd) = *b else {
            return Ok(smallvec![(
                restride(x, self.from.clone(), self.to.clone())?,
                None
            )]);
        };
        let batch = x.shape()[bd];
        let extent = self.from.storage_extent()?.max(self.to.storage_extent()?);
        let out = restride(
            &to_front(x, *b)?,
            self.from.with_leading_dim(batch, extent),
            self.to.with_leading_dim(batch, extent),
        )?;
        Ok(smallvec![(out, Some(0))])
    }
}
pub fn restride(x: &Tensor, from: Layout, to: Layout) -> Result<Tensor> {
    apply1(Restride { from, to }, std::slice::from_ref(x))
}

// ---------------------------------------------------------------- public view fns

pub fn view(x: &Tensor, shape: &[i64]) -> Result<Tensor> {
    let shape = infer_size(shape, x.numel())?;
    view_op(x, "ViewBackward0", ViewKind::View(shape))
}

/// A view when the strides allow it, else a contiguous copy reshaped.
pub fn reshape(x: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if x.layout().view(shape).is_some() {
        return view_op(x, "ViewBackward0", ViewKind::View(shape.into()));
    }
    let c = crate::ops::unary::clone(x)?;
    apply1(
        ViewOp {
            name: "UnsafeViewBackward0",
            kind: ViewKind::View(shape.into()),
            tracked_view: false,
        },
        &[c],
    )
}

/// torch's `_unsafe_view`: a reshape whose result is not tracked as a view
/// (UnsafeViewBackward0). A tensor whose strides allow no view is copied first, as
/// reshape does.
pub fn unsafe_view(x: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if x.layout().view(shape).is_none() || !x.is_contiguous() {
        return reshape(x, shape);
    }
    apply1(
        ViewOp {
            name: "UnsafeViewBackward0",
            kind: ViewKind::View(shape.into()),
            tracked_view: false,
        },
        std::slice::from_ref(x),
    )
}

pub fn reshape_infer(x: &Tensor, shape: &[i64]) -> Result<Tensor> {
    let shape = infer_size(shape, x.numel())?;
    reshape(x, &shape)
}

pub fn permute(x: &Tensor, dims: &[i64]) -> Result<Tensor> {
    view_op(x, "PermuteBackward0", ViewKind::Permute(dims.into()))
}

pub fn transpose(x: &Tensor, d0: i64, d1: i64) -> Result<Tensor> {
    view_op(x, "TransposeBackward0", ViewKind::Transpose(d0, d1))
}

pub fn t(x: &Tensor) -> Result<Tensor> {
    if x.dim() > 2 {
        return Err(Error::runtime(format!(
            "t() expects a tensor with <= 2 dimensions, but self is {}D",
            x.dim()
        )));
    }
    let kind = if x.dim() < 2 {
        ViewKind::Transpose(0, 0)
    } else {
        ViewKind::Transpose(0, 1)
    };
    view_op(x, "TBackward0", kind)
}

pub fn expand(x: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let target: SmallVec<[i64; 6]> = shape.iter().map(|&s| s as i64).collect();
    expand_sizes(x, &target)
}

/// `expand(*sizes)` where -1 keeps a dim.
pub fn expand_sizes(x: &Tensor, sizes: &[i64]) -> Result<Tensor> {
    if sizes.len() < x.dim() {
        // torch names the tensor's type here (ferrograd.DoubleTensor for float64).
        return Err(crate::error::Error::runtime(format!(
            "expand(ferrograd.{}{{{}}}, size=[{}]): the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
            x.dtype().legacy_type_name(),
            crate::shape::fmt_dims(&x.shape()),
            sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
            sizes.len(),
            x.dim()
        )));
    }
    let layout = x.layout().expand(sizes)?;
    view_op(x, "ExpandBackward0", ViewKind::Expand(layout.shape))
}

pub fn squeeze(x: &Tensor, dims: Option<&[i64]>) -> Result<Tensor> {
    let names = ["SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2"];
    let (form, kind) = squeeze_kind(x, dims)?;
    view_op(x, names[form], kind)
}

/// Which of torch's three squeeze overloads `dims` calls (none, one dim, several), and
/// the view: the dims of size 1 among them (a dim of another size stays).
fn squeeze_kind(x: &Tensor, dims: Option<&[i64]>) -> Result<(usize, ViewKind)> {
    let Some(d) = dims else {
        return Ok((0, ViewKind::Squeeze(None)));
    };
    let mut wrapped = Dims::new();
    for &v in d {
        let w = wrap_dim(v, x.dim())?;
        if x.dim() > 0 && x.shape()[w] == 1 {
            wrapped.push(w);
        }
    }
    let form = if d.len() == 1 { 1 } else { 2 };
    Ok((form, ViewKind::Squeeze(Some(wrapped))))
}

// ---------------------------------------------------------------- in-place views

/// The in-place views (`x.t_()`, `x.squeeze_(0)`, ...): x itself takes the view's
/// layout over the same storage (its identity, version counter and base stay) and the
/// view's node (`name`: torch's in-place one) as its history. The version moves on, as
/// torch's does, so a value saved before the change is refused in backward.
fn view_in_place(x: &Tensor, name: &'static str, kind: ViewKind) -> Result<()> {
    if x.is_batched() {
        return Err(Error::runtime(format!(
            "vmap: the in-place view whose node is {name} is not supported inside vmap; use its out-of-place form"
        )));
    }
    crate::ops::inplace::check_inplace(x)?;
    let view = view_op(x, name, kind)?;
    // Taken before the version moves on (after it, a view's grad_fn is regenerated).
    let node = view.meta().grad_fn.clone();
    x.set_data(&view)?;
    x.bump_version();
    if let Some(node) = node {
        x.set_grad_fn(node, 0);
    }
    if crate::autograd::forward_ad::active() {
        crate::autograd::forward_ad::copy_tangents(&view, x);
    }
    Ok(())
}

pub fn t_(x: &Tensor) -> Result<()> {
    if x.dim() > 2 {
        return Err(Error::runtime(format!(
            "t_() expects a tensor with <= 2 dimensions, but self is {}D",
            x.dim()
        )));
    }
    let d = if x.dim() < 2 { 0 } else { 1 };
    view_in_place(x, "TBackward1", ViewKind::Transpose(0, d))
}
pub fn transpose_(x: &Tensor, d0: i64, d1: i64) -> Result<()> {
    view_in_place(x, "TransposeBackward1", ViewKind::Transpose(d0, d1))
}
pub fn unsqueeze_(x: &Tensor, dim: i64) -> Result<()> {
    view_in_place(x, "UnsqueezeBackward1", ViewKind::Unsqueeze(dim))
}
pub fn squeeze_(x: &Tensor, dims: Option<&[i64]>) -> Result<()> {
    let names = ["SqueezeBackward3", "SqueezeBackward4", "SqueezeBackward5"];
    let (form, kind) = squeeze_kind(x, dims)?;
    view_in_place(x, names[form], kind)
}

/// `squeeze_(0)` of a fresh product, as torch's matmul ends a vector-matrix product
/// (SqueezeBackward4: the in-place squeeze's node).
pub fn squeeze_product_row(x: &Tensor) -> Result<Tensor> {
    view_op(
        x,
        "SqueezeBackward4",
        ViewKind::Squeeze(Some(smallvec::smallvec![0])),
    )
}

pub fn unsqueeze(x: &Tensor, dim: i64) -> Result<Tensor> {
    view_op(x, "UnsqueezeBackward0", ViewKind::Unsqueeze(dim))
}

pub fn flatten(x: &Tensor, start: i64, end: i64) -> Result<Tensor> {
    if x.dim() == 0 {
        return reshape(x, &[1]);
    }
    let (s, e) = (wrap_dim(start, x.dim())?, wrap_dim(end, x.dim())?);
    if s > e {
        return Err(Error::runtime(
            "flatten() has invalid args: start_dim cannot come after end_dim",
        ));
    }
    if s == e {
        return Ok(x.clone());
    }
    let mut shape: Dims = x.shape()[..s].into();
    shape.push(x.shape()[s..=e].iter().product());
    shape.extend_from_slice(&x.shape()[e + 1..]);
    reshape(x, &shape)
}

pub fn unflatten(x: &Tensor, dim: i64, sizes: &[i64]) -> Result<Tensor> {
    let d = wrap_dim(dim, x.dim())?;
    let inner = infer_size(sizes, x.shape()[d]).map_err(|_| {
        Error::runtime(format!(
            "unflatten: Provided sizes {:?} don't multiply up to the size of dim {} ({}) in the input tensor",
            sizes, dim, x.shape()[d]
        ))
    })?;
    let mut shape: Dims = x.shape()[..d].into();
    shape.extend_from_slice(&inner);
    shape.extend_from_slice(&x.shape()[d + 1..]);
    view_op(x, "ViewBackward0", ViewKind::View(shape))
}

pub fn slice(x: &Tensor, dim: i64, start: i64, end: i64, step: i64) -> Result<Tensor> {
    if x.dim() == 0 {
        return Err(Error::index("slice() cannot be applied to a 0-dim tensor."));
    }
    let d = wrap_dim(dim, x.dim())?;
    view_op(
        x,
        "SliceBackward0",
        ViewKind::Slice {
            dim: d,
            start,
            end,
            step,
        },
    )
}

pub fn narrow(x: &Tensor, dim: i64, start: i64, length: i64) -> Result<Tensor> {
    x.layout().narrow(dim, start, length)?;
    let d = wrap_dim(dim, x.dim())?;
    let start = if start < 0 {
        start + x.shape()[d] as i64
    } else {
        start
    };
    slice(x, d as i64, start, start + length, 1)
}

pub fn select(x: &Tensor, dim: i64, index: i64) -> Result<Tensor> {
    x.layout().select(dim, index)?;
    view_op(x, "SelectBackward0", ViewKind::Select { dim, index })
}

pub fn diagonal(x: &Tensor, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
    view_op(
        x,
        "DiagonalBackward0",
        ViewKind::Diagonal { offset, dim1, dim2 },
    )
}

/// `as_strided(size, stride, storage_offset)`: the raw signed arguments are checked in
/// torch's order and against `x`'s storage (torch's texts) before any view exists.
/// `x.unfold(dimension, size, step)` (UnfoldBackward0): a view of the windows.
pub fn unfold(x: &Tensor, dimension: i64, size: i64, step: i64) -> Result<Tensor> {
    let kind = ViewKind::Unfold {
        dim: dimension,
        size,
        step,
    };
    view_op(x, "UnfoldBackward0", kind)
}

pub fn as_strided(x: &Tensor, size: &[i64], stride: &[i64], offset: Option<i64>) -> Result<Tensor> {
    let layout = Layout::as_strided(
        size,
        stride,
        offset.unwrap_or(x.offset() as i64),
        x.dtype().itemsize(),
        x.data().storage().nbytes(),
    )?;
    let kind = ViewKind::AsStrided {
        offset: layout.offset as isize - x.offset() as isize,
        size: layout.shape,
        stride: layout.strides,
    };
    view_op(x, "AsStridedBackward0", kind)
}

/// A view with an absolute layout over `x`'s storage (CopySlices' gradient slice).
pub fn as_strided_raw(x: &Tensor, layout: Layout) -> Result<Tensor> {
    let rel = layout.offset as isize - x.offset() as isize;
    view_op(
        x,
        "AsStridedBackward0",
        ViewKind::AsStrided {
            size: layout.shape,
            stride: layout.strides,
            offset: rel,
        },
    )
}

/// View replaced in layout regeneration (see autograd::view): the op whose rule
/// regenerated grad_fns use.
pub struct AsStrided {
    pub layout: Layout,
}
impl Op for AsStrided {
    fn name(&self) -> &'static str {
        "AsStridedBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        Ok(smallvec![
            inputs[0].make_view(self.layout.clone(), CreationMeta::Default)?
        ])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        // The base is the storage owner: its own layout is the reference geometry.
        let base = Layout::contiguous(&ctx.inputs[0].shape);
        Ok(smallvec![Some(restride(
            &ctx.grad(0)?,
            self.layout.clone(),
            base
        )?)])
    }
    /// The tangent read at this view's positions (the transpose of the vjp).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let base = Layout::contiguous(&ctx.primals[0].shape());
        linear_jvp(ctx, |t| restride(t, base, self.layout.clone()))
    }
}

/// `make_dual`'s result: an alias recorded as `ViewBackward0`, as torch shows it.
pub fn dual_alias(x: &Tensor) -> Result<Tensor> {
    view_op(x, "ViewBackward0", ViewKind::Alias)
}

pub fn alias(x: &Tensor) -> Result<Tensor> {
    view_op(x, "AliasBackward0", ViewKind::Alias)
}

pub fn contiguous(x: &Tensor) -> Result<Tensor> {
    if x.is_contiguous() {
        return Ok(x.clone());
    }
    crate::ops::unary::clone(x)
}

// ---------------------------------------------------------------- multi-output views

/// unbind / split / chunk: several views along one dim (piece = (start, len)).
#[derive(Clone)]
pub struct MultiView {
    pub name: &'static str,
    pub dim: usize,
    pub pieces: Vec<(usize, usize)>,
    /// unbind removes the dim.
    pub squeeze: bool,
}

impl MultiView {
    fn piece_kinds(&self) -> Vec<ViewKind> {
        self.pieces
            .iter()
            .map(|&(start, len)| {
                if self.squeeze {
                    ViewKind::Select {
                        dim: self.dim as i64,
                        index: start as i64,
                    }
                } else {
                    ViewKind::Slice {
                        dim: self.dim,
                        start: start as i64,
                        end: (start + len) as i64,
                        step: 1,
                    }
                }
            })
            .collect()
    }
}

impl Op for MultiView {
    fn name(&self) -> &'static str {
        self.name
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        let short = self
            .name
            .trim_end_matches(char::is_numeric)
            .trim_end_matches("Backward");
        let short: &'static str = match short {
            "Unbind" => "Unbind",
            "SplitWithSizes" => "SplitWithSizes",
            _ => "Split",
        };
        let mut out = Outputs::new();
        for (j, kind) in self.piece_kinds().iter().enumerate() {
            out.push(x.make_view(kind.apply(&x.layout())?, creation_meta(x, Some((short, j))))?);
        }
        Ok(out)
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let input = Layout::contiguous(&ctx.inputs[0].shape);
        let mut total: Option<Tensor> = None;
        for (j, kind) in self.piece_kinds().iter().enumerate() {
            let Some(g) = &ctx.grads[j] else { continue };
            let part = restride(g, kind.apply(&input)?, input.clone())?;
            total = Some(match total {
                Some(t) => crate::ops::binary::add(&t, &part)?,
                None => part,
            });
        }
        let total = match total {
            Some(t) => t,
            None => Tensor::zeros(&ctx.inputs[0].shape, ctx.inputs[0].dtype)?,
        };
        Ok(smallvec![Some(total)])
    }
    /// Linear family: the same pieces of the tangent.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        match ctx.tangent(0) {
            Some(t) => Ok(apply(self.clone(), &[contiguous(t)?])?
                .into_iter()
                .map(Some)
                .collect()),
            None => Ok(self.pieces.iter().map(|_| None).collect()),
        }
    }
    /// View family: the pieces are cut along the shifted dim.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (x, b) = &ctx.inputs[0];
        let op = MultiView {
            dim: self.dim + usize::from(b.is_some()),
            ..self.clone()
        };
        let bdim = b.map(|_| 0);
        let out = apply(op, &[to_front(x, *b)?])?;
        Ok(out.into_iter().map(|o| (o, bdim)).collect())
    }
}

fn multi_view(x: &Tensor, op: MultiView) -> Result<Vec<Tensor>> {
    Ok(apply(op, std::slice::from_ref(x))?.into_vec())
}

pub fn unbind(x: &Tensor, dim: i64) -> Result<Vec<Tensor>> {
    if x.dim() == 0 {
        return Err(Error::index(
            "Dimension specified as 0 but tensor has no dimensions",
        ));
    }
    let d = wrap_dim(dim, x.dim())?;
    let pieces = (0..x.shape()[d]).map(|i| (i, 1)).collect();
    multi_view(
        x,
        MultiView {
            name: "UnbindBackward0",
            dim: d,
            pieces,
            squeeze: true,
        },
    )
}

pub fn split(x: &Tensor, size: usize, dim: i64) -> Result<Vec<Tensor>> {
    let d = wrap_dim(dim, x.dim())?;
    let n = x.shape()[d];
    if size == 0 && n != 0 {
        return Err(Error::runtime(format!(
            "split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
        )));
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < n || (pieces.is_empty() && n == 0) {
        let len = size.min(n - start);
        pieces.push((start, len));
        if size == 0 {
            break;
        }
        start += len;
    }
    multi_view(
        x,
        MultiView {
            name: "SplitBackward0",
            dim: d,
            pieces,
            squeeze: false,
        },
    )
}

pub fn split_with_sizes(x: &Tensor, sizes: &[usize], dim: i64) -> Result<Vec<Tensor>> {
    let d = wrap_dim(dim, x.dim())?;
    let total: usize = sizes.iter().sum();
    if total != x.shape()[d] {
        return Err(Error::runtime(format!(
            "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at dimension {}), but got split_sizes={:?}",
            x.shape()[d], d, sizes
        )));
    }
    let mut start = 0;
    let pieces = sizes
        .iter()
        .map(|&s| {
            let p = (start, s);
            start += s;
            p
        })
        .collect();
    multi_view(
        x,
        MultiView {
            name: "SplitWithSizesBackward0",
            dim: d,
            pieces,
            squeeze: false,
        },
    )
}

pub fn chunk(x: &Tensor, chunks: usize, dim: i64) -> Result<Vec<Tensor>> {
    if chunks == 0 {
        return Err(Error::runtime(
            "chunk expects `chunks` to be greater than 0, got: 0",
        ));
    }
    let d = wrap_dim(dim, x.dim())?;
    let n = x.shape()[d];
    let size = n.div_ceil(chunks);
    split(x, size.max(if n == 0 { 0 } else { 1 }), d as i64)
}
