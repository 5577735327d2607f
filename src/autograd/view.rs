//! Note: views and in-place.
//!
//! A view shares storage and the version counter with its base. Two things keep
//! gradients right when either side is written in place:
//! 1. In-place on a view whose base is part of a graph gives the base a `CopySlices`
//!    grad_fn: the base's incoming gradient is cloned, the slice the view covers is
//!    replaced by what the in-place op's own rule returns for it, and the op's other
//!    inputs get their gradients as usual.
//! 2. A view remembers the version at which its grad_fn was set (`attr_version`). When
//!    the shared version has moved on, its grad_fn is regenerated on access as an
//!    `AsStridedBackward0` of the base (torch's default, view replay off).

use std::sync::Arc;

use smallvec::smallvec;

use crate::autograd::node::{Edge, Node, NodeKind, TensorMeta};
use crate::error::Result;
use crate::layout::Layout;
use crate::ops::complex::{strided_view, Reading, ViewAsComplex, ViewAsReal};
use crate::ops::view::AsStrided;
use crate::ops::{Grads, Op};
use crate::tensor::{CreationMeta, Tensor};

pub struct CopySlices {
    /// Layout of the base and of the modified view, over the same storage (the view's
    /// in its own elements: see `reading`).
    pub base_layout: Layout,
    pub view_layout: Layout,
    /// How the view reads the base's storage (`x.real` reads a complex base's
    /// components: see Note: real views of complex storage in storage.rs).
    pub reading: Reading,
    /// The in-place op's own node; its edge 0 (the view's old value) is unused.
    pub inner: Arc<Node>,
}

/// Regenerate a view's grad_fn after its base (or a sibling view) changed in place.
pub fn refresh_view_grad_fn(view: &Tensor) {
    let Some(info) = view.view_info() else { return };
    let current = view.version();
    {
        let mut m = view.meta();
        if m.attr_version == current {
            return;
        }
        if info.creation != CreationMeta::Default || !info.base.requires_grad() {
            m.attr_version = current;
            return;
        }
    }
    regenerate_view_grad_fn(view);
}

/// Give a view a fresh AsStrided grad_fn over its base's current history (also used
/// right after a custom Function rebased the base: forward's write already bumped the
/// version, so the version check alone would not see the change).
pub fn regenerate_view_grad_fn(view: &Tensor) {
    let Some(info) = view.view_info() else { return };
    let base = &info.base;
    let (edge, meta) = match Reading::between(base.dtype(), view.dtype()) {
        Reading::Same => (base.gradient_edge(), TensorMeta::of(base)),
        // As torch: an AsStridedBackward0 over the base's components
        // (ViewAsRealBackward0), or over its pairs read as complex.
        reading => match reinterpreted_edge(base, reading) {
            Some(found) => found,
            None => {
                view.meta().attr_version = view.version();
                return;
            }
        },
    };
    let op = AsStrided {
        layout: view.layout().clone(),
    };
    let node = Node::new(
        NodeKind::Op(Box::new(op)),
        smallvec![edge],
        smallvec![meta],
        smallvec![TensorMeta::of(view)],
        smallvec![],
    );
    view.set_grad_fn(node, 0);
}

/// A node reading `base` as the other side of its complex pair (view_as_real, or
/// view_as_complex where the base's layout allows it), recorded over the base's
/// history, and the metadata of what it reads.
fn reinterpreted_edge(base: &Tensor, reading: Reading) -> Option<(Option<Edge>, TensorMeta)> {
    let op: Box<dyn Op> = match reading {
        Reading::RealOfComplex => Box::new(ViewAsReal),
        _ => Box::new(ViewAsComplex),
    };
    let read = op.forward(std::slice::from_ref(base));
    let read = read.ok()?.into_iter().next()?;
    let meta = TensorMeta::of(&read);
    let node = Node::new(
        NodeKind::Op(op),
        smallvec![base.gradient_edge()],
        smallvec![TensorMeta::of(base)],
        smallvec![meta.clone()],
        smallvec![],
    );
    Some((Some(Edge { node, input_nr: 0 }), meta))
}

/// Give `base` a CopySlices grad_fn after `inner` (the in-place op's node) wrote to `view`.
pub fn rebase_history_on_view(base: &Tensor, view: &Tensor, inner: Arc<Node>) {
    let mut next_edges = smallvec![base.gradient_edge()];
    next_edges.extend(inner.next_edges.iter().skip(1).cloned());
    let mut input_meta = smallvec![TensorMeta::of(base)];
    input_meta.extend(inner.input_meta.iter().skip(1).cloned());
    let cs = CopySlices {
        base_layout: base.layout().clone(),
        view_layout: view.layout().clone(),
        reading: Reading::between(base.dtype(), view.dtype()),
        inner,
    };
    let node = Node::new(
        NodeKind::CopySlices(Box::new(cs)),
        next_edges,
        input_meta,
        smallvec![TensorMeta::of(base)],
        smallvec![],
    );
    base.set_grad_fn(node, 0);
}

impl CopySlices {
    /// Gradient for (base, inner op's other inputs...) from the gradient of the base.
    pub fn apply(&self, grad: Tensor, create_graph: bool) -> Result<Grads> {
        // A buffer shaped like the base's storage, holding the incoming gradient; for a
        // batched gradient (vmap), one such stretch per example, side by side.
        // In base elements; even when the view reads pairs of them as complex.
        let reading = self.reading;
        let mut extent = self
            .base_layout
            .storage_extent()?
            .max(reading.to_base_units(self.view_layout.storage_extent()?)?);
        if reading == Reading::ComplexOfReal {
            extent += extent % 2;
        }
        let batch = grad
            .batch_info()
            .map(|b| (b.level, b.value.shape()[b.bdim]));
        let (examples, level) = batch.map_or((1, None), |(l, n)| (n, Some(l)));
        let with_batch_stride = |l: &Layout, stride: usize| match level {
            None => l.clone(),
            Some(_) => l.with_leading_dim(examples, stride),
        };
        let with_batch = |l: &Layout| with_batch_stride(l, extent);
        let len = extent
            .checked_mul(examples)
            .ok_or_else(|| crate::error::Error::runtime("CopySlices: gradient too large"))?;
        let storage = crate::storage::Storage::zeros(grad.dtype(), len)?;
        let result = Tensor::from_storage(storage, with_batch(&self.base_layout))?;
        let rewrap = |t: Tensor| match level {
            Some(l) => Tensor::batched(t, 0, l, None),
            None => Ok(t),
        };
        // Writes into the buffer go through its physical layout: the batch dim in front.
        let physical = |t: &Tensor| -> Result<Tensor> {
            match (level, t.batch_info()) {
                (Some(l), Some(b)) if b.level == l => {
                    crate::ops::rules::to_front(&b.value, Some(b.bdim))
                }
                _ => Ok(t.clone()),
            }
        };
        crate::ops::inplace::copy_(&result, &physical(&grad)?)?;
        // The part the in-place op wrote goes through that op's own rule.
        let view_layout = with_batch_stride(&self.view_layout, reading.to_view_units(extent)?);
        let grad_slice = strided_view(&result, view_layout, reading)?;
        let slice_value = rewrap(crate::ops::unary::clone(&grad_slice)?)?;
        let inner_grads =
            crate::engine::apply_node(&self.inner, vec![Some(slice_value)], create_graph)?;
        match inner_grads.first().cloned().flatten() {
            Some(g) => crate::ops::inplace::copy_(&grad_slice, &physical(&g)?)?,
            None => crate::ops::inplace::zero_(&grad_slice)?,
        }
        let mut out: Grads = smallvec![Some(rewrap(result)?)];
        out.extend(inner_grads.into_iter().skip(1));
        Ok(out)
    }
}
