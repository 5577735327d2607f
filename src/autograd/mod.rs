//! Reverse-mode bookkeeping: graph nodes, saved tensors, leaf accumulation, views.
//!
//! # Locks
//!
//! The internal locks — a tensor's metadata (`Tensor::meta`), a node's extras and saved
//! slots (`Node::extras`, `Node::saved_slots`), and the hook lists inside them — guard
//! plain data, and follow one rule: **no internal lock is held while calling an op, a
//! kernel that uses the thread pool, or Python** (a hook, an unpack hook, anomaly mode's
//! stack, dropping a Python object). Ops lock their operands' metadata (which may be the
//! very tensor whose lock is held: `t.backward(t)`), pool workers and Python code may
//! need the same locks, and the GIL orders against all of them. Read or clone what is
//! needed under the lock (hook lists give `snapshot()`, saved tensors clone cheaply),
//! release it, do the work, and re-lock to publish; where concurrent publishers must not
//! lose an update, publish only if the state is still the one read (compare and retry,
//! as `accumulate` does).
//!
//! The one exception is a leaf's accumulation lock (`Tensor::accumulation_guard`), held
//! over a whole `.grad` update as torch holds AccumulateGrad's mutex: it is taken only in
//! `accumulate`, always without the GIL, and never twice on one stack (see there).

pub mod accumulate;
pub mod anomaly;
pub mod foreign;
pub mod forward_ad;
pub mod grad_mode;
pub mod hooks;
pub mod mutation;
pub mod node;
pub mod saved;
pub mod saved_hooks;
pub mod teardown;
pub mod view;
pub mod warnings;

pub use node::{Edge, Node, NodeKind, TensorMeta};
