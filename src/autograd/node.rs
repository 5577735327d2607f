//! A node of the backward graph: what it computes (`NodeKind`), where its results go
//! (`next_edges`, one per forward input), and what it saved.
//!
//! Terminology follows torch: a node's *inputs* are the gradients of its forward
//! outputs; its *outputs* are the gradients of its forward inputs.

use std::cell::Cell;
use std::sync::{Arc, Mutex, OnceLock};

use smallvec::SmallVec;

use crate::autograd::saved::SavedTensor;
use crate::dtype::DType;
use crate::ops::Op;
use crate::shape::Dims;
use crate::tensor::{Tensor, WeakTensor};

/// Where a gradient goes: input `input_nr` of `node`.
#[derive(Clone)]
pub struct Edge {
    pub node: Arc<Node>,
    pub input_nr: usize,
}

/// Shape and dtype of a tensor at recording time: the engine checks and fixes up
/// gradients against it (sum-to-shape, dtype cast).
#[derive(Clone, Debug)]
pub struct TensorMeta {
    pub shape: Dims,
    pub dtype: DType,
}

impl TensorMeta {
    pub fn of(t: &Tensor) -> TensorMeta {
        TensorMeta {
            shape: t.dims(),
            dtype: t.dtype(),
        }
    }
}

pub enum NodeKind {
    /// A built-in op's backward: its rule is `Op::vjp`.
    Op(Box<dyn Op>),
    /// Adds incoming gradients into a leaf's `.grad`. Holds the leaf strongly; the leaf
    /// only holds this node weakly, so there is no cycle.
    AccumulateGrad(Tensor),
    /// In-place op applied to a view: routes the gradient of the base through the op.
    CopySlices(Box<crate::autograd::view::CopySlices>),
    /// A node whose backward is user code (a Python `autograd.Function`), supplied by
    /// the bindings; the core only schedules it.
    Custom(Box<dyn CustomBackward>),
}

/// The backward of a user-defined Function. `apply` receives the node (for its saved
/// tensors) and one gradient per forward output, and returns one per next edge.
pub trait CustomBackward: Send + Sync {
    fn name(&self) -> &str;
    fn apply(
        &self,
        node: &Arc<Node>,
        grads: Vec<Option<Tensor>>,
    ) -> crate::error::Result<crate::ops::Grads>;
    /// Whether undefined incoming gradients are replaced by zeros before `apply`.
    fn materialize_grads(&self) -> bool {
        true
    }
    /// Opaque handle to the user-facing object (the bindings' Python ctx).
    fn as_any(&self) -> &dyn std::any::Any;
    /// Host-language objects this backward holds (see autograd::foreign).
    fn foreign_refs(&self, _out: &mut Vec<usize>) {}
}

/// Hooks and other per-node extras that most nodes never use.
#[derive(Default)]
pub struct NodeExtras {
    /// Non-leaf tensors that asked for `retain_grad()`: (output index, tensor).
    pub retained: SmallVec<[(usize, WeakTensor); 1]>,
    /// The bindings' `grad_fn.metadata` dict (opaque here).
    pub py_metadata: Option<Box<dyn crate::autograd::foreign::Foreign>>,
    /// Tensor pre-hooks of this node's outputs: (output_nr, hook id, hook).
    pub tensor_pre_hooks: Vec<(usize, u64, Arc<dyn crate::autograd::hooks::TensorHook>)>,
    pub pre_hooks: crate::autograd::hooks::HookList<dyn crate::autograd::hooks::NodePreHook>,
    pub post_hooks: crate::autograd::hooks::HookList<dyn crate::autograd::hooks::NodePostHook>,
    /// The forward call's stack, recorded while anomaly mode is on.
    pub anomaly_stack: Option<String>,
    /// Anomaly mode: the node whose backward was running when this one was recorded.
    pub anomaly_parent: Option<Arc<Node>>,
}

pub struct Node {
    pub sequence_nr: u64,
    /// The profiler's id of the thread that recorded this node (0 for AccumulateGrad, as
    /// torch): backward events report it as `fwd_thread`.
    pub fwd_thread: u64,
    pub kind: NodeKind,
    pub next_edges: SmallVec<[Option<Edge>; 2]>,
    /// Per forward input (next edge): what its gradient must look like.
    pub input_meta: SmallVec<[TensorMeta; 2]>,
    /// Per forward output: used to materialize undefined incoming gradients.
    pub output_meta: SmallVec<[TensorMeta; 1]>,
    pub saved: Mutex<SavedSlots>,
    /// Hooks, retained grads, metadata, anomaly records: made on first use, since most
    /// nodes never have any and a node is made (and freed) on every recorded op.
    extras: OnceLock<Box<Mutex<NodeExtras>>>,
    /// Opaque slot owned by the bindings (the node's live Python object), as on tensors.
    pub py_handle: std::sync::atomic::AtomicUsize,
}

/// Saved tensors of a node, in the positions its op declared (None = not needed for
/// the inputs that required grad). `released` is set once backward freed them.
#[derive(Default)]
pub struct SavedSlots {
    pub slots: SmallVec<[Option<SavedTensor>; 2]>,
    pub released: bool,
}

thread_local! {
    static NEXT_SEQUENCE_NR: Cell<u64> = const { Cell::new(0) };
}

/// Monotonic per-thread counter, like torch's: later ops get larger numbers and run
/// first in backward.
pub fn next_sequence_nr() -> u64 {
    NEXT_SEQUENCE_NR.with(|c| {
        let v = c.get();
        c.set(v + 1);
        v
    })
}

impl Node {
    pub fn new(
        kind: NodeKind,
        next_edges: SmallVec<[Option<Edge>; 2]>,
        input_meta: SmallVec<[TensorMeta; 2]>,
        output_meta: SmallVec<[TensorMeta; 1]>,
        saved: SmallVec<[Option<SavedTensor>; 2]>,
    ) -> Arc<Node> {
        let extras = OnceLock::new();
        let anomaly_stack = crate::autograd::anomaly::capture_stack();
        let anomaly_parent = crate::autograd::anomaly::capture_parent();
        if anomaly_stack.is_some() || anomaly_parent.is_some() {
            let _ = extras.set(Box::new(Mutex::new(NodeExtras {
                anomaly_stack,
                anomaly_parent,
                ..NodeExtras::default()
            })));
        }
        Arc::new(Node {
            sequence_nr: next_sequence_nr(),
            fwd_thread: crate::profiler::thread_id(),
            kind,
            next_edges,
            input_meta,
            output_meta,
            saved: Mutex::new(SavedSlots {
                slots: saved,
                released: false,
            }),
            extras,
            py_handle: Default::default(),
        })
    }

    pub fn accumulate_grad(leaf: Tensor) -> Arc<Node> {
        let meta = TensorMeta::of(&leaf);
        Arc::new(Node {
            // AccumulateGrad runs as soon as it is ready (torch gives it UINT64_MAX).
            sequence_nr: u64::MAX,
            fwd_thread: 0,
            kind: NodeKind::AccumulateGrad(leaf),
            next_edges: SmallVec::new(),
            input_meta: SmallVec::new(),
            output_meta: smallvec::smallvec![meta],
            saved: Mutex::new(SavedSlots::default()),
            extras: OnceLock::new(),
            py_handle: Default::default(),
        })
    }

    /// torch's node name: `MulBackward0`, `torch::autograd::AccumulateGrad`, ...
    pub fn name(&self) -> &str {
        match &self.kind {
            NodeKind::Op(op) => op.name(),
            NodeKind::AccumulateGrad(_) => "torch::autograd::AccumulateGrad",
            NodeKind::CopySlices(_) => "torch::autograd::CopySlices",
            NodeKind::Custom(c) => c.name(),
        }
    }

    pub fn num_inputs(&self) -> usize {
        self.output_meta.len()
    }

    /// See the lock rule in `autograd` (module docs): never held over ops or Python.
    pub fn saved_slots(&self) -> std::sync::MutexGuard<'_, SavedSlots> {
        self.saved.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The node's extras, made on first use: for adding to them. See the lock rule in
    /// `autograd` (module docs): never held over ops or Python.
    pub fn extras(&self) -> std::sync::MutexGuard<'_, NodeExtras> {
        let cell = self.extras.get_or_init(Default::default);
        cell.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The node's extras if it has any: for reading (None reads as all empty).
    pub fn extras_if_any(&self) -> Option<std::sync::MutexGuard<'_, NodeExtras>> {
        self.extras_cell()
            .map(|cell| cell.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The lock around the extras, if the node has any (for `try_lock` in walks).
    pub fn extras_cell(&self) -> Option<&Mutex<NodeExtras>> {
        self.extras.get().map(|b| &**b)
    }

    /// Free saved tensors (end of a backward without retain_graph).
    pub fn release_saved(&self) {
        // The values are dropped after the lock: a packed value may be a host object.
        let mut freed: SmallVec<[SavedTensor; 2]> = SmallVec::new();
        {
            let mut s = self.saved_slots();
            if !s.slots.iter().all(|x| x.is_none()) || !s.released {
                for slot in s.slots.iter_mut().flatten() {
                    freed.push(slot.clone());
                    slot.release();
                }
                s.released = true;
            }
        }
        drop(freed);
        if let NodeKind::CopySlices(cs) = &self.kind {
            cs.inner.release_saved();
        }
    }

    pub fn variable(&self) -> Option<&Tensor> {
        match &self.kind {
            NodeKind::AccumulateGrad(t) => Some(t),
            _ => None,
        }
    }
}

/// Freed without recursion (see autograd::teardown): the next nodes, saved values and
/// anomaly parent are queued; what `kind` holds is freed in place, since a tensor or
/// node freed there queues its own children in turn.
impl Drop for Node {
    fn drop(&mut self) {
        use crate::autograd::teardown::{defer_node, defer_tensor};
        for edge in std::mem::take(&mut self.next_edges).into_iter().flatten() {
            defer_node(edge.node);
        }
        let saved = self.saved.get_mut().unwrap_or_else(|e| e.into_inner());
        for slot in saved.slots.iter_mut().flatten() {
            if let Some(t) = slot.take_value() {
                defer_tensor(t);
            }
        }
        if let Some(extras) = self.extras.get_mut() {
            let extras = extras.get_mut().unwrap_or_else(|e| e.into_inner());
            if let Some(parent) = extras.anomaly_parent.take() {
                defer_node(parent);
            }
        }
    }
}

/// `retain_grad()`: ask the tensor's producer to store the incoming gradient in `.grad`.
pub fn retain_grad(t: &Tensor) -> crate::error::Result<()> {
    if !t.requires_grad() {
        return Err(crate::error::Error::runtime(
            "can't retain_grad on Tensor that has requires_grad=False",
        ));
    }
    let Some(f) = t.grad_fn() else { return Ok(()) };
    if t.retains_grad() {
        return Ok(());
    }
    f.extras().retained.push((t.output_nr(), t.downgrade()));
    t.meta().retains_grad = true;
    Ok(())
}
