//! The backward engine: `run_backward` walks the graph reachable from the roots and
//! runs each node once all gradients for it have arrived.
//!
//! Read it as micrograd's topological loop plus:
//! - a per-call arena (`GraphTask`) with dependency counts instead of a sorted list;
//! - `inputs=` support: only nodes on a path to a requested input run, and gradients
//!   arriving at a requested input are captured instead of (or as well as) accumulated;
//! - ready nodes run highest sequence number first; several large ready nodes run in
//!   parallel (a "wave", shared with up to `get_num_interop_threads() - 1` helper
//!   threads, never on the kernels' pool: see `workers`), small ones inline on the
//!   calling thread; every thread working for a call carries its thread-local modes
//!   (`modes`);
//! - a backward nested more than a few levels deep in another (a custom Function's
//!   backward calling backward) continues on a fresh thread, as in torch;
//! - contributions to one input buffer are summed in a fixed order (by producing node
//!   and output position), so results are bitwise identical for any thread count.

mod addr_map;
pub mod current;
mod graph_task;
pub mod modes;
pub mod ready_heap;
mod workers;

use std::sync::Arc;

use crate::autograd::accumulate::accumulate;
use crate::autograd::grad_mode::GradModeGuard;
use crate::autograd::hooks::TensorHook;
use crate::autograd::node::{Edge, Node, NodeKind};
use crate::error::{Error, Result};
use crate::ops::Grads;
use crate::tensor::Tensor;

pub use graph_task::run_backward;

/// Options of one backward call.
#[derive(Clone, Copy, Debug)]
pub struct BackwardOptions {
    pub retain_graph: bool,
    pub create_graph: bool,
    /// `backward()` accumulates into leaves; `grad()` only captures.
    pub accumulate_grad: bool,
}

/// One root: where its gradient enters the graph, and the gradient.
pub struct Root {
    pub edge: Edge,
    pub grad: Tensor,
}

/// Run one node's function on its (summed) incoming gradients.
pub fn apply_node(
    node: &Arc<Node>,
    grads: Vec<Option<Tensor>>,
    create_graph: bool,
) -> Result<Grads> {
    let _mode = GradModeGuard::new(create_graph);
    match &node.kind {
        NodeKind::Op(op) => {
            if grads.iter().all(|g| g.is_none()) {
                return Ok(node.next_edges.iter().map(|_| None).collect());
            }
            let out = crate::ops::run_vjp(node, op.as_ref(), &grads)?;
            if out.len() != node.next_edges.len() {
                return Err(Error::runtime(format!(
                    "function {} returned an incorrect number of gradients (expected {}, got {})",
                    node.name(),
                    node.next_edges.len(),
                    out.len()
                )));
            }
            Ok(out)
        }
        NodeKind::AccumulateGrad(leaf) => {
            if let Some(Some(g)) = grads.into_iter().next() {
                accumulate(leaf, g, create_graph)?;
                let hooks = leaf.meta().post_accumulate_hooks.snapshot();
                for h in hooks {
                    h.call(leaf)?;
                }
            }
            Ok(Grads::new())
        }
        NodeKind::Custom(custom) => {
            // User code always runs (it may expect None grads when materialization is off).
            let grads = if custom.materialize_grads() {
                grads
                    .into_iter()
                    .zip(&node.output_meta)
                    .map(|(g, m)| match g {
                        Some(g) => Ok(Some(g)),
                        None => Tensor::zeros(&m.shape, m.dtype).map(Some),
                    })
                    .collect::<Result<Vec<_>>>()?
            } else {
                grads
            };
            custom.apply(node, grads)
        }
        NodeKind::CopySlices(cs) => {
            let g = match grads.into_iter().next().flatten() {
                Some(g) => g,
                None => return Ok(node.next_edges.iter().map(|_| None).collect()),
            };
            cs.apply(g, create_graph)
        }
    }
}

/// Tensor pre-hooks of the tensors whose gradients arrive at `node` (a leaf's hooks for
/// its AccumulateGrad), in registration order, each seeing the previous result.
pub fn run_tensor_pre_hooks(
    node: &Node,
    mut grads: Vec<Option<Tensor>>,
) -> Result<Vec<Option<Tensor>>> {
    let hooks: Vec<(usize, Arc<dyn TensorHook>)> = match &node.kind {
        NodeKind::AccumulateGrad(leaf) => leaf
            .meta()
            .leaf_hooks
            .snapshot()
            .into_iter()
            .map(|h| (0, h))
            .collect(),
        _ => node
            .extras_if_any()
            .map(|e| {
                e.tensor_pre_hooks
                    .iter()
                    .map(|(slot, _, h)| (*slot, h.clone()))
                    .collect()
            })
            .unwrap_or_default(),
    };
    for (slot, hook) in hooks {
        if let Some(g) = grads.get_mut(slot).and_then(|g| g.take()) {
            grads[slot] = Some(hook.call(&g)?.unwrap_or(g));
        }
    }
    Ok(grads)
}

/// Node pre-hooks: each may replace the whole list of incoming gradients.
pub fn run_node_pre_hooks(
    node: &Node,
    mut grads: Vec<Option<Tensor>>,
) -> Result<Vec<Option<Tensor>>> {
    let hooks = node
        .extras_if_any()
        .map(|e| e.pre_hooks.snapshot())
        .unwrap_or_default();
    for hook in hooks {
        if let Some(new) = hook.call(&grads)? {
            grads = new;
        }
    }
    Ok(grads)
}

/// Node post-hooks: each may replace the node's results.
pub fn run_node_post_hooks(node: &Node, outputs: Grads, grads: &[Option<Tensor>]) -> Result<Grads> {
    let hooks = node
        .extras_if_any()
        .map(|e| e.post_hooks.snapshot())
        .unwrap_or_default();
    let mut outputs = outputs;
    for hook in hooks {
        if let Some(new) = hook.call(&outputs, grads)? {
            outputs = new.into_iter().collect();
        }
    }
    Ok(outputs)
}

/// Make a node's output gradient match what its next edge expects: sum broadcast
/// dims away and cast the dtype (torch's validate_outputs).
pub fn validate_output(node: &Node, index: usize, grad: Tensor) -> Result<Tensor> {
    let meta = &node.input_meta[index];
    let mut grad = grad;
    if grad.shape() != meta.shape[..] {
        if !crate::shape::is_expandable_to(&meta.shape, &grad.shape()) {
            return Err(Error::runtime(format!(
                "Function {} returned an invalid gradient at index {} - got {} but expected shape compatible with {}",
                node.name(),
                index,
                crate::shape::fmt_dims(&grad.shape()),
                crate::shape::fmt_dims(&meta.shape)
            )));
        }
        grad = crate::ops::reduce::sum_to_size(&grad, &meta.shape)?;
    }
    if grad.dtype() != meta.dtype {
        if grad.dtype().is_complex() && !meta.dtype.is_complex() {
            grad = crate::ops::unary::real(&grad)?;
        }
        if grad.dtype() != meta.dtype {
            grad = crate::ops::unary::to_dtype(&grad, meta.dtype)?;
        }
    }
    Ok(grad)
}

/// `root.backward()` for Rust callers (tests, benches): a one-element root gets a
/// gradient of one; the result accumulates into the leaves' `.grad`.
pub fn backward(root: &Tensor, retain_graph: bool) -> Result<()> {
    let edge = root.gradient_edge().ok_or_else(|| {
        Error::runtime("element 0 of tensors does not require grad and does not have a grad_fn")
    })?;
    if root.numel() != 1 {
        return Err(Error::runtime(
            "grad can be implicitly created only for scalar outputs",
        ));
    }
    let grad = crate::ops::creation::ones_like(root)?;
    let opts = BackwardOptions {
        retain_graph,
        create_graph: false,
        accumulate_grad: true,
    };
    run_backward(vec![Root { edge, grad }], &[], opts)?;
    Ok(())
}

#[cfg(test)]
mod tests;
