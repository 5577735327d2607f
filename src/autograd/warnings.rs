//! Warnings raised inside the core (possibly on engine worker threads). The bindings
//! drain them after each call and re-issue them with Python's `warnings.warn`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarningKind {
    User,
    Future,
}

static PENDING: Mutex<Vec<(WarningKind, String)>> = Mutex::new(Vec::new());

pub fn warn(kind: WarningKind, message: impl Into<String>) {
    PENDING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((kind, message.into()));
}

pub fn take_pending() -> Vec<(WarningKind, String)> {
    std::mem::take(&mut *PENDING.lock().unwrap_or_else(|e| e.into_inner()))
}

/// torch's `set_warn_always`: warnings torch gives once per process are given every time.
static WARN_ALWAYS: AtomicBool = AtomicBool::new(false);

pub fn set_warn_always(on: bool) {
    WARN_ALWAYS.store(on, Ordering::Relaxed);
}

pub fn warn_always() -> bool {
    WARN_ALWAYS.load(Ordering::Relaxed)
}

/// Whether a once-per-process warning whose "given" mark is `given` is due now (marking
/// it given): the first time, and every time while `set_warn_always(True)` is on.
pub fn once_due(given: &AtomicBool) -> bool {
    !given.swap(true, Ordering::Relaxed) || warn_always()
}
