//! The `Op` trait and the dispatcher that runs an op's forward and records its node.
//!
//! # What a rule receives (cf. torch's derivatives.yaml header)
//! Every op states three rules (DESIGN.md "An op"); most get them from one statement
//! through the rule families in [`rules`].
//!
//! `Op::vjp` gets a [`VjpCtx`]:
//! - `grads[j]`: the gradient of forward output `j`, or `None` when nothing flowed into
//!   it (`ctx.grad(j)` materializes zeros for rules that need a tensor);
//! - `needs[i]`: whether forward input `i` needs a gradient; a rule may return `None`
//!   for inputs that do not (it must not return garbage for those that do);
//! - `saved[k]`: the tensors the op asked to save (`Op::save`), in the positions it
//!   declared, already unpacked and version-checked;
//! - `inputs` / `outputs`: shape and dtype of every forward input / output.
//!
//! A rule returns one entry per forward input. It does NOT have to sum broadcast
//! gradients back to the input's shape or cast them to the input's dtype: the engine
//! does both, in one place. Rules are written with differentiable ops (never detach), so
//! running them with grad mode on (`create_graph=True`) records higher-order graphs.
//!
//! `Op::jvp` gets a [`JvpCtx`]: the primals, the outputs the forward produced, and one
//! tangent per input (`None`: zero tangent, e.g. a non-differentiable input). It returns
//! one tangent per output (`None`: zero). Like vjp rules, jvp rules use differentiable
//! ops only.
//!
//! `Op::batch` gets a [`BatchCtx`]: each input with its batch dim (`None`: not batched),
//! and returns each output with its batch dim (vmap).

pub mod advanced_index;
pub mod binary;
pub mod binary_math;
pub mod bitwise;
pub mod clamp;
pub mod classify;
pub mod complex;
pub mod creation;
pub mod cumulative;
pub mod decomp;
pub mod device;
pub mod diag;
pub mod extrema;
pub mod index;
pub mod index_write;
pub mod inplace;
pub mod join;
pub mod linalg;
pub mod matrix_ops;
pub mod nan_reduce;
pub mod norm;
pub mod prod;
pub mod random_ops;
pub mod reduce;
pub mod roll;
pub mod rounding;
pub mod rules;
pub mod scan;
pub mod scatter_reduce;
pub mod shape;
pub mod softmax;
pub mod sort;
pub mod special;
pub mod stats;
pub mod ternary;
pub mod unary;
pub mod unique;
pub mod view;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use smallvec::SmallVec;

use crate::autograd::grad_mode;
use crate::autograd::node::{Node, NodeKind, TensorMeta};
use crate::autograd::saved::SavedTensor;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

pub type Outputs = SmallVec<[Tensor; 1]>;
pub type Grads = SmallVec<[Option<Tensor>; 2]>;
/// One tangent per output; `None` is a zero tangent.
pub type Tangents = SmallVec<[Option<Tensor>; 1]>;
/// Values with their batch dims, as batching rules take and return them.
pub type Batched = SmallVec<[(Tensor, Option<usize>); 1]>;

/// Which value an op saves for backward.
#[derive(Clone, Copy, Debug)]
pub enum SaveRef {
    Input(usize),
    Output(usize),
}

pub struct VjpCtx<'a> {
    pub grads: &'a [Option<Tensor>],
    pub saved: &'a [Option<Tensor>],
    pub needs: &'a [bool],
    pub inputs: &'a [TensorMeta],
    pub outputs: &'a [TensorMeta],
}

impl VjpCtx<'_> {
    /// Gradient of output `j`, zeros when undefined.
    pub fn grad(&self, j: usize) -> Result<Tensor> {
        match &self.grads[j] {
            Some(g) => Ok(g.clone()),
            None => Tensor::zeros(&self.outputs[j].shape, self.outputs[j].dtype),
        }
    }
    pub fn saved(&self, k: usize) -> Result<&Tensor> {
        self.saved
            .get(k)
            .and_then(|s| s.as_ref())
            .ok_or_else(|| Error::runtime(format!("internal error: saved value {k} missing")))
    }
    pub fn needs(&self, i: usize) -> bool {
        self.needs[i]
    }
}

/// What a forward-mode rule sees (see the module docs).
pub struct JvpCtx<'a> {
    pub primals: &'a [Tensor],
    pub outputs: &'a [Tensor],
    pub tangents: &'a [Option<Tensor>],
}

impl JvpCtx<'_> {
    pub fn tangent(&self, i: usize) -> Option<&Tensor> {
        self.tangents.get(i).and_then(|t| t.as_ref())
    }
}

/// What a batching rule sees: each input with its batch dim (`None`: not batched).
pub struct BatchCtx<'a> {
    pub inputs: &'a [(Tensor, Option<usize>)],
}

/// A value a node shows as `_saved_<name>` (torch's attribute names).
#[derive(Clone, Debug)]
pub enum SavedAttr {
    /// The tensor in this save slot (see `Op::save`).
    Slot(usize),
    Scalar(crate::dtype::Scalar),
    Ints(Vec<i64>),
    /// The shape of forward input `i` (`self_sym_sizes`).
    InputSizes(usize),
}

pub trait Op: Send + Sync + 'static {
    /// The backward node's name, exactly torch's (`MulBackward0`).
    fn name(&self) -> &'static str;
    /// Compute the outputs from the inputs with kernels only (no autograd).
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs>;
    /// What to save, given which inputs need a gradient (positions are the rule's own).
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        SmallVec::new()
    }
    /// What the node exposes as `_saved_<name>`, with torch's names.
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        Vec::new()
    }
    /// Reverse-mode rule; see the module docs for its contract.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads>;
    /// Forward-mode rule; see the module docs for its contract.
    fn jvp(&self, _ctx: &JvpCtx) -> Result<Tangents> {
        let short = self
            .name()
            .trim_end_matches(char::is_numeric)
            .trim_end_matches("Backward");
        Err(Error::not_implemented(format!(
            "Trying to use forward AD with {} that does not support it because it has not been implemented yet.",
            short.to_lowercase()
        )))
    }
    /// Batching rule (vmap): values with their batch dims.
    fn batch(&self, _ctx: &BatchCtx) -> Result<Batched> {
        Err(no_batch_rule(self.name()))
    }
    /// As the in-place form (`x.add_(y)`, outside vmap), whether the result can be
    /// written straight into `inputs[0]` by `write_in_place`, with no temporary: no side
    /// effects, and a yes means the forward's result has inputs[0]'s shape and dtype.
    fn writes_in_place(&self, _inputs: &[Tensor]) -> bool {
        false
    }
    /// Write the forward's result into `inputs[0]` (only after `writes_in_place` said yes).
    fn write_in_place(&self, _inputs: &[Tensor]) -> Result<()> {
        Err(Error::runtime(format!(
            "{}: no in-place kernel (internal error)",
            self.name()
        )))
    }
}

/// The typed error for a missing batching rule.
pub fn no_batch_rule(name: &str) -> Error {
    Error::not_implemented(format!("Batching rule not implemented for {name}"))
}

/// Run `op`; when grad mode is on and an input requires grad, record its node, and when
/// an input has a tangent at the current dual level, give the outputs theirs.
pub fn apply<O: Op>(op: O, inputs: &[Tensor]) -> Result<Outputs> {
    let mut range = crate::profiler::op_range(op.name(), false, inputs);
    let outputs = forward(&op, inputs)?;
    if crate::autograd::forward_ad::active() {
        crate::autograd::forward_ad::propagate(&op, inputs, &outputs)?;
    }
    if !recording() {
        return Ok(outputs);
    }
    let needs: SmallVec<[bool; 4]> = inputs.iter().map(|t| t.requires_grad()).collect();
    if needs.contains(&true) {
        let node = build_node(Box::new(op), inputs, &outputs, &needs, None)?;
        if let Some(range) = &mut range {
            range.set_sequence_nr(node.sequence_nr, 0);
        }
        for (j, out) in outputs.iter().enumerate() {
            if out.dtype().is_differentiable() {
                out.set_grad_fn(node.clone(), j);
            }
        }
        if let NodeKind::Op(op) = &node.kind {
            save_outputs(&node, op.as_ref(), &needs, &outputs)?;
        }
    }
    Ok(outputs)
}

/// The op's outputs: its kernels, or its batching rule when a vmap wrapper is among the
/// inputs (see functorch).
#[inline]
pub(crate) fn forward(op: &dyn Op, inputs: &[Tensor]) -> Result<Outputs> {
    if crate::functorch::batched::any_batched(inputs) {
        return crate::functorch::batched::dispatch(inputs, |ctx| op.batch(ctx));
    }
    op.forward(inputs)
}

/// `apply` for single-output ops.
pub fn apply1<O: Op>(op: O, inputs: &[Tensor]) -> Result<Tensor> {
    let mut out = apply(op, inputs)?;
    Ok(out.swap_remove(0))
}

pub fn recording() -> bool {
    grad_mode::is_grad_enabled() && !grad_mode::is_inference_mode()
}

/// Build a node for `op` whose forward read `inputs` and produced `outputs`.
/// `replaced_self`, for in-place ops, is a copy of input 0's value before the write,
/// saved in place of input 0 itself.
pub(crate) fn build_node(
    op: Box<dyn Op>,
    inputs: &[Tensor],
    outputs: &[Tensor],
    needs: &[bool],
    replaced_self: Option<&Tensor>,
) -> Result<Arc<Node>> {
    let mut saved = SmallVec::new();
    for s in op.save(needs) {
        saved.push(match s {
            // Outputs are saved by `save_outputs`, once they carry this node as grad_fn
            // (saved-tensor hooks see them as torch shows them).
            None | Some(SaveRef::Output(_)) => None,
            Some(SaveRef::Input(0)) if replaced_self.is_some() => {
                Some(SavedTensor::input(replaced_self.expect("checked"))?)
            }
            Some(SaveRef::Input(i)) => Some(SavedTensor::input(&inputs[i])?),
        });
    }
    let next_edges = inputs
        .iter()
        .zip(needs)
        .map(|(t, &n)| if n { t.gradient_edge() } else { None })
        .collect();
    let input_meta = inputs.iter().map(TensorMeta::of).collect();
    let output_meta = outputs.iter().map(TensorMeta::of).collect();
    Ok(Node::new(
        NodeKind::Op(op),
        next_edges,
        input_meta,
        output_meta,
        saved,
    ))
}

/// Save the outputs `op` asked for, after they were attached to `node`.
pub(crate) fn save_outputs(
    node: &Arc<Node>,
    op: &dyn Op,
    needs: &[bool],
    outputs: &[Tensor],
) -> Result<()> {
    for (slot, s) in op.save(needs).iter().enumerate() {
        if let Some(SaveRef::Output(j)) = s {
            let saved = SavedTensor::output(&outputs[*j], *j)?;
            node.saved_slots().slots[slot] = Some(saved);
        }
    }
    Ok(())
}

/// Run an op's rule for `node` (unpacking its saved tensors).
pub fn run_vjp(node: &Arc<Node>, op: &dyn Op, grads: &[Option<Tensor>]) -> Result<Grads> {
    // Copied out of the lock first: unpacking may run an unpack hook (Python).
    let (slots, released) = {
        let s = node.saved_slots();
        (s.slots.clone(), s.released)
    };
    if released && slots.iter().any(|s| s.is_some()) {
        return Err(Error::runtime(crate::autograd::saved::ERR_FREED));
    }
    let saved: SmallVec<[Option<Tensor>; 2]> = slots
        .iter()
        .map(|s| s.as_ref().map(|st| st.unpack(node)).transpose())
        .collect::<Result<_>>()?;
    let needs: SmallVec<[bool; 4]> = node.next_edges.iter().map(|e| e.is_some()).collect();
    let ctx = VjpCtx {
        grads,
        saved: &saved,
        needs: &needs,
        inputs: &node.input_meta,
        outputs: &node.output_meta,
    };
    op.vjp(&ctx)
}
