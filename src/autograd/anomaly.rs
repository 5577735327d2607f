//! Anomaly detection (spec autograd.md §8): process-global flags, the forward stack
//! each node records while the mode is on, and the NaN check on backward results.
//! Recording a stack costs nothing when the mode is off (one atomic load per node).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

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

/// torch's warning before an error in backward propagates.
pub fn warn_error_in(node_name: &str, stack: Option<&str>) {
    warn(
        WarningKind::User,
        format!(
            "Error detected in {node_name}. Traceback of forward call that caused the error:\n{}",
            stack.unwrap_or("")
        ),
    );
}
