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

/// This thread's queue of orphans, and whether a drop on this thread is draining it.
struct Teardown {
    queue: RefCell<Vec<Orphan>>,
    draining: Cell<bool>,
}

thread_local! {
    static TEARDOWN: Teardown = const {
        Teardown {
            queue: RefCell::new(Vec::new()),
            draining: Cell::new(false),
        }
    };
}

/// Releases `o` without recursing: if it is the last handle and an outer drop on this
/// thread is draining, it is queued for that drop; otherwise this call is the outermost
/// one: it frees `o` itself, then everything freeing it queued.
pub fn defer(o: Orphan) {
    if !o.is_last() {
        // Another holder remains (or races us to the end; then its own drop defers
        // its children, one level down).
        drop(o);
        return;
    }
    // If the thread is exiting and its queue is gone, `o` is freed in place on return.
    let Ok(outermost) = TEARDOWN.try_with(|td| !td.draining.replace(true)) else {
        return;
    };
    if !outermost {
        TEARDOWN.with(|td| td.queue.borrow_mut().push(o));
        return;
    }
    /// Resets the flag even if a drop unwinds.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            let _ = TEARDOWN.try_with(|td| td.draining.set(false));
        }
    }
    let _reset = Reset;
    drop(o); // its children queue themselves: this frame's callee never recurses
    while let Some(next) = TEARDOWN.with(|td| td.queue.borrow_mut().pop()) {
        drop(next);
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
