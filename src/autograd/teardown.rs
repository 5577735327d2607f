//! Note: freeing deep graphs without recursion.
//!
//! A graph is a chain of `Arc`s: a node owns its next nodes (edges), its saved tensors
//! and, for AccumulateGrad, its leaf; a tensor owns its grad_fn, its `.grad` and a view's
//! base. Letting Rust drop those fields in place frees a 200,000-op chain with 200,000
//! nested `drop` calls and overflows the stack (torch frees such chains; its
//! `deleteNode` defers the same way).
//!
//! So `Node` and `TensorImpl` implement `Drop` by handing the children they are the last
//! holder of to `defer`, which queues them on a per-thread list. Only the outermost drop
//! on a thread drains the list, one item at a time: every drop then runs at constant
//! depth, whatever the shape of the graph. A child someone else still holds is just
//! released in place (a count decrement, no recursion), and a drop that frees nothing
//! further never touches the queue, so freeing small graphs stays cheap.
//!
//! Host objects (Python hooks, pack results) are released in place: whatever tensor they
//! free in turn goes through the same queue, so the depth stays bounded across the
//! language boundary too.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use crate::autograd::node::Node;
use crate::tensor::Tensor;

/// Something a dying node or tensor held last.
pub enum Orphan {
    Node(Arc<Node>),
    Tensor(Tensor),
}

impl Orphan {
    /// Whether dropping this handle frees the object (and so may cascade).
    fn is_last(&self) -> bool {
        match self {
            Orphan::Node(n) => Arc::strong_count(n) == 1,
            Orphan::Tensor(t) => t.owner_count() == 1,
        }
    }
}

thread_local! {
    static QUEUE: RefCell<Vec<Orphan>> = const { RefCell::new(Vec::new()) };
    static DRAINING: Cell<bool> = const { Cell::new(false) };
}

/// Releases `o` without recursing: if it is the last handle, it is queued and freed
/// by the outermost drop on this thread (which is the caller, if none is running).
pub fn defer(o: Orphan) {
    if !o.is_last() {
        // Another holder remains (or races us to the end; then its own drop defers
        // its children, one level down).
        drop(o);
        return;
    }
    // If the thread is exiting and its queue is gone, the closure (and `o` with it) is
    // dropped unrun: freed in place.
    if QUEUE.try_with(move |q| q.borrow_mut().push(o)).is_ok() {
        drain();
    }
}

/// Free queued orphans until none is left, unless an outer call is already doing so.
fn drain() {
    if DRAINING.with(|d| d.replace(true)) {
        return;
    }
    /// Resets the flag even if a drop unwinds.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            DRAINING.with(|d| d.set(false));
        }
    }
    let _reset = Reset;
    while let Some(o) = QUEUE.with(|q| q.borrow_mut().pop()) {
        drop(o); // may queue more; never recurses past this frame's callee
    }
}

/// Queue a node's children (see `defer`).
pub fn defer_node(n: Arc<Node>) {
    defer(Orphan::Node(n));
}

/// Queue a tensor (see `defer`).
pub fn defer_tensor(t: Tensor) {
    defer(Orphan::Tensor(t));
}
