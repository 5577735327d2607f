//! Anomaly detection (spec autograd.md §8): process-global flags, the forward stack
//! each node records while the mode is on, and the NaN check on backward results.
//! Recording a stack costs nothing when the mode is off (one atomic load per node).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crate::autograd::node::Node;
use crate::autograd::warnings::{warn, WarningKind};

static ENABLED: AtomicBool = AtomicBool::new(false);
static CHECK_NAN: AtomicBool = AtomicBool::new(true);
/// Supplied by the bindings: the current (Python) call stack as text.
static STACK_PROVIDER: OnceLock<fn() -> Option<String>> = OnceLock::new();

pub fn is_enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

pub fn check_nan() -> bool {
    CHECK_NAN.load(Ordering::Relaxed)
}

pub fn set(enabled: bool, check_nan: bool) {
    ENABLED.store(enabled, Ordering::Relaxed);
    CHECK_NAN.store(check_nan, Ordering::Relaxed);
}

pub fn set_stack_provider(f: fn() -> Option<String>) {
    let _ = STACK_PROVIDER.set(f);
}

/// The stack of the forward call creating a node (None when the mode is off).
pub fn capture_stack() -> Option<String> {
    if !is_enabled() {
        return None;
    }
    STACK_PROVIDER.get().and_then(|f| f())
}

thread_local! {
    /// The nodes this thread is running backward for, innermost last (anomaly mode only).
    static EXECUTING: RefCell<Vec<Arc<Node>>> = const { RefCell::new(Vec::new()) };
}

/// Marks `node` as running on this thread while alive, so nodes recorded meanwhile (by a
/// backward that itself runs ops) know which calculation induced them.
pub struct Executing(bool);

impl Executing {
    pub fn new(node: &Arc<Node>) -> Executing {
        let on = is_enabled();
        if on {
            EXECUTING.with(|e| e.borrow_mut().push(node.clone()));
        }
        Executing(on)
    }
}

impl Drop for Executing {
    fn drop(&mut self) {
        if self.0 {
            EXECUTING.with(|e| e.borrow_mut().pop());
        }
    }
}

/// This thread's running nodes, to carry to a thread working for it.
pub fn executing() -> Vec<Arc<Node>> {
    EXECUTING.with(|e| e.borrow().clone())
}

/// Install `nodes` as this thread's running nodes, returning the ones replaced.
pub fn replace_executing(nodes: Vec<Arc<Node>>) -> Vec<Arc<Node>> {
    EXECUTING.with(|e| std::mem::replace(&mut *e.borrow_mut(), nodes))
}

/// The node whose backward is creating a new node now (None when the mode is off).
pub fn capture_parent() -> Option<Arc<Node>> {
    if !is_enabled() {
        return None;
    }
    EXECUTING.with(|e| e.borrow().last().cloned())
}

/// Where `node` was recorded and the node whose backward recorded it (anomaly mode).
fn anomaly_record(node: &Node) -> (Option<String>, Option<Arc<Node>>) {
    node.extras_if_any()
        .map(|e| (e.anomaly_stack.clone(), e.anomaly_parent.clone()))
        .unwrap_or_default()
}

/// torch's warnings before an error in `node`'s backward propagates: where the node was
/// recorded, then one warning per enclosing backward that induced that recording.
pub fn warn_error_in(node: &Node) {
    let (mut stack, mut parent) = anomaly_record(node);
    warn(
        WarningKind::User,
        format!(
            "Error detected in {}. Traceback of forward call that caused the error:\n{}",
            node.name(),
            stack.unwrap_or_default()
        ),
    );
    while let Some(p) = parent {
        (stack, parent) = anomaly_record(&p);
        warn(
            WarningKind::User,
            format!(
                "\n\nPrevious calculation was induced by {}. Traceback of forward call that \
                 induced the previous calculation:\n{}",
                p.name(),
                stack.as_deref().unwrap_or_default()
            ),
        );
    }
}
