//! The thread-local modes a backward call carries to every thread that works for it
//! (wave helpers, the fresh thread of a deep re-entrant backward), so that no result
//! depends on which thread ran a node: grad / inference / multithreading mode, the
//! saved-tensor-hooks stack, the mutation observer, anomaly mode's running nodes, the
//! re-entrant depth, and the profiler session recording them. (Anomaly mode's on/off flags are process-wide already.) A new
//! thread-local mode belongs here too.

use std::cell::Cell;
use std::sync::Arc;

use crate::autograd::mutation::{self, MutationObserver};
use crate::autograd::node::Node;
use crate::autograd::{anomaly, grad_mode, saved_hooks};

thread_local! {
    /// How many backward calls are running on this thread's stack (re-entrant backward).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Nested backward calls running on this thread.
pub fn reentrant_depth() -> usize {
    DEPTH.with(|d| d.get())
}

/// Counts one more backward call on this thread while alive.
pub struct Reentrant(());

impl Reentrant {
    pub fn enter() -> Reentrant {
        DEPTH.with(|d| d.set(d.get() + 1));
        Reentrant(())
    }
}

impl Drop for Reentrant {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// One thread's modes, captured to be installed on another.
#[derive(Clone)]
pub struct ThreadModes {
    grad: grad_mode::Modes,
    saved_hooks: saved_hooks::Stack,
    observer: Option<Arc<dyn MutationObserver>>,
    executing: Vec<Arc<Node>>,
    depth: usize,
    profiler: Option<Arc<crate::profiler::Session>>,
}

impl ThreadModes {
    pub fn capture() -> ThreadModes {
        ThreadModes {
            grad: grad_mode::snapshot(),
            saved_hooks: saved_hooks::snapshot(),
            observer: mutation::observer(),
            executing: anomaly::executing(),
            depth: reentrant_depth(),
            profiler: crate::profiler::current(),
        }
    }

    /// The same modes, but as the start of a fresh stack (no backward running on it).
    pub fn on_fresh_stack(mut self) -> ThreadModes {
        self.depth = 0;
        self
    }

    /// Install these modes on the current thread until the guard drops.
    pub fn enter(&self) -> ModesGuard {
        ModesGuard(Some(self.clone().install()))
    }

    /// Install, returning what was replaced.
    fn install(self) -> ThreadModes {
        ThreadModes {
            grad: grad_mode::replace(self.grad),
            saved_hooks: saved_hooks::replace(self.saved_hooks),
            observer: mutation::replace_observer(self.observer),
            executing: anomaly::replace_executing(self.executing),
            depth: DEPTH.with(|d| d.replace(self.depth)),
            profiler: crate::profiler::replace_current(self.profiler),
        }
    }
}

/// Restores a thread's previous modes on drop.
pub struct ModesGuard(Option<ThreadModes>);

impl Drop for ModesGuard {
    fn drop(&mut self) {
        if let Some(prev) = self.0.take() {
            prev.install();
        }
    }
}
