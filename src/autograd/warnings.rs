//! Warnings raised inside the core (possibly on engine worker threads). The bindings
//! drain them after each call and re-issue them with Python's `warnings.warn`.

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
