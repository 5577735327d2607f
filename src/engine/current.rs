//! Which backward call the current thread is working for.
//!
//! Hooks sometimes need to know about the pass that runs them: multi-grad hooks wait for
//! the gradients of exactly those tensors whose nodes this pass will execute
//! (`torch._C._current_graph_task_id`, `torch._C._will_engine_execute_node`). Each
//! `run_backward` publishes a read-only view of its plan on a thread-local stack while
//! it runs (a stack, because a Python backward may itself call `backward()`).

use crate::engine::addr_map::AddrMap;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::autograd::node::{Node, NodeKind};
use crate::error::{Error, Result};

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// The plan of one backward call, fixed once made: what the engine follows, and what
/// hooks may ask about.
pub struct TaskView {
    pub id: u64,
    /// Every node reachable from the roots, by address, to its index in the plan.
    index: AddrMap<usize, usize>,
    /// Whether each node runs its function (or is on the path to a requested input).
    pub exec: Vec<bool>,
    /// Whether each node's incoming gradient is captured for `autograd.grad`.
    pub captured: Vec<bool>,
    /// True when the call named `inputs` (only part of the graph runs).
    partial: bool,
}

impl TaskView {
    pub fn new(
        index: AddrMap<usize, usize>,
        exec: Vec<bool>,
        captured: Vec<bool>,
        partial: bool,
    ) -> Arc<TaskView> {
        Arc::new(TaskView {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            index,
            exec,
            captured,
            partial,
        })
    }

    /// Whether gradients flow into node `i` at all (it runs, or is captured).
    pub fn reached(&self, i: usize) -> bool {
        self.exec[i] || self.captured[i]
    }

    fn will_execute(&self, node: &Node) -> Result<bool> {
        let Some(&i) = self.index.get(&(node as *const Node as usize)) else {
            return Ok(false);
        };
        if !self.partial {
            return Ok(true);
        }
        // A leaf's gradient in `grad()` is captured before its AccumulateGrad node would
        // run; torch refuses to answer for that case, and so do we.
        if self.captured[i] && matches!(node.kind, NodeKind::AccumulateGrad(_)) {
            return Err(Error::runtime(
                "A leaf node was passed to _will_engine_execute_node but we are currently \
                 running autograd.grad(). This is currently not supported.",
            ));
        }
        Ok(self.reached(i))
    }
}

thread_local! {
    static CURRENT: RefCell<Vec<Arc<TaskView>>> = const { RefCell::new(Vec::new()) };
}

/// Marks the current thread as working for one backward call until dropped.
pub struct Enter(());

impl Enter {
    pub fn new(view: &Arc<TaskView>) -> Enter {
        CURRENT.with(|c| c.borrow_mut().push(view.clone()));
        Enter(())
    }
}

impl Drop for Enter {
    fn drop(&mut self) {
        CURRENT.with(|c| c.borrow_mut().pop());
    }
}

/// The id of the innermost backward call this thread is running, if any.
pub fn graph_task_id() -> Option<u64> {
    CURRENT.with(|c| c.borrow().last().map(|v| v.id))
}

/// False while the innermost running backward call runs only part of the graph (it
/// named `inputs`); true otherwise, as torch's checkpoint-valid flag.
pub fn checkpoint_valid() -> bool {
    CURRENT.with(|c| c.borrow().last().is_none_or(|v| !v.partial))
}

/// Whether the innermost running backward call will execute `node` (or capture its
/// gradient): false for nodes outside its graph or off the path to its `inputs`.
pub fn will_execute(node: &Node) -> Result<bool> {
    let view = CURRENT.with(|c| c.borrow().last().cloned());
    match view {
        Some(v) => v.will_execute(node),
        None => Err(Error::runtime(
            "_will_engine_execute_node should only be called during the backward pass",
        )),
    }
}
