//! Thread-local autograd modes (grad mode, inference mode, multithreading) and RAII guards.
//! The engine carries the relevant modes to worker threads explicitly.

use std::cell::Cell;

thread_local! {
    static GRAD_ENABLED: Cell<bool> = const { Cell::new(true) };
    static INFERENCE: Cell<bool> = const { Cell::new(false) };
    static MULTITHREADING: Cell<bool> = const { Cell::new(true) };
}

pub fn is_grad_enabled() -> bool {
    GRAD_ENABLED.with(|c| c.get())
}
pub fn set_grad_enabled(on: bool) {
    GRAD_ENABLED.with(|c| c.set(on))
}
pub fn is_inference_mode() -> bool {
    INFERENCE.with(|c| c.get())
}
pub fn set_inference_mode(on: bool) {
    INFERENCE.with(|c| c.set(on))
}
pub fn is_multithreading_enabled() -> bool {
    MULTITHREADING.with(|c| c.get())
}
pub fn set_multithreading_enabled(on: bool) {
    MULTITHREADING.with(|c| c.set(on))
}

/// This module's modes on one thread, to carry to a thread working for it.
#[derive(Clone, Copy, Debug)]
pub struct Modes {
    grad: bool,
    inference: bool,
    multithreading: bool,
}

pub fn snapshot() -> Modes {
    Modes {
        grad: is_grad_enabled(),
        inference: is_inference_mode(),
        multithreading: is_multithreading_enabled(),
    }
}

/// Install `modes` on this thread, returning the ones replaced.
pub fn replace(modes: Modes) -> Modes {
    let prev = snapshot();
    set_grad_enabled(modes.grad);
    set_inference_mode(modes.inference);
    set_multithreading_enabled(modes.multithreading);
    prev
}

/// Sets grad mode for a scope and restores the previous value on drop.
pub struct GradModeGuard {
    prev: bool,
}

impl GradModeGuard {
    pub fn new(enabled: bool) -> Self {
        let prev = is_grad_enabled();
        set_grad_enabled(enabled);
        GradModeGuard { prev }
    }
}

impl Drop for GradModeGuard {
    fn drop(&mut self) {
        set_grad_enabled(self.prev)
    }
}

pub struct NoGradGuard(#[allow(dead_code)] GradModeGuard);

impl NoGradGuard {
    pub fn new() -> Self {
        NoGradGuard(GradModeGuard::new(false))
    }
}

impl Default for NoGradGuard {
    fn default() -> Self {
        Self::new()
    }
}
