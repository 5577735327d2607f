//! Python's cycle collector and the Python objects the core holds.
//!
//! Every Python object stored on the Rust side (hooks, packed saved values, Function
//! contexts, node metadata) is wrapped in `HeldPy`, which counts them: while none exist,
//! tensors and nodes have nothing to report and skip the walk. Otherwise their
//! `__traverse__` reports what `autograd::foreign` finds they own.
//!
//! One collection calls `__traverse__` on an object several times and needs the same
//! answer each time, but engine threads can change the graph meanwhile (they run
//! without the GIL). So answers are kept for the length of a collection (between the
//! "start" and "stop" calls of `gc.callbacks`) and recomputed only if a held object or
//! an owner was freed in between (an address could then be stale).

use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::{PyTraverseError, PyVisit};

/// A Python object held by the core.
pub struct HeldPy(Py<PyAny>);

/// How many `HeldPy` exist.
static HELD: AtomicUsize = AtomicUsize::new(0);
/// Bumped whenever a `HeldPy` or an owner (tensor or node object) is freed during a
/// collection: cached answers may then name freed objects, or belong to a freed owner
/// whose address a new object now has. Outside a collection nothing is cached, so
/// freeing (a hot path) only reads `COLLECTING`.
static FREED: AtomicU64 = AtomicU64::new(0);
static COLLECTING: AtomicBool = AtomicBool::new(false);

/// A held object or a tensor or node object is being freed.
pub fn owner_freed() {
    if COLLECTING.load(Ordering::Relaxed) {
        FREED.fetch_add(1, Ordering::Relaxed);
    }
}

impl HeldPy {
    pub fn new(obj: Py<PyAny>) -> HeldPy {
        HELD.fetch_add(1, Ordering::Relaxed);
        HeldPy(obj)
    }
}

impl Drop for HeldPy {
    fn drop(&mut self) {
        owner_freed();
        HELD.fetch_sub(1, Ordering::Relaxed);
    }
}

impl std::ops::Deref for HeldPy {
    type Target = Py<PyAny>;
    fn deref(&self) -> &Py<PyAny> {
        &self.0
    }
}

impl crate::autograd::foreign::Foreign for HeldPy {
    fn foreign_refs(&self, out: &mut Vec<usize>) {
        out.push(self.0.as_ptr() as usize);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Answers given during the collection in progress, by owner address.
struct Collection {
    freed: u64,
    answers: HashMap<usize, Vec<usize>>,
}

static COLLECTION: Mutex<Option<Collection>> = Mutex::new(None);

/// Registered in `gc.callbacks` at import.
#[pyfunction]
pub fn _gc_callback(phase: &str, info: &Bound<'_, PyAny>) {
    // Before older generations are collected, free the `.grad` cycles that became
    // unreachable since (freeing may run Python code, which is fine here).
    if phase == "start" {
        let generation: u32 = info
            .get_item("generation")
            .and_then(|g| g.extract())
            .unwrap_or(0);
        if generation >= 1 {
            crate::autograd::foreign::retry_grad_cycles();
        }
    }
    let start = phase == "start";
    if start {
        COLLECTING.store(true, Ordering::Relaxed);
    }
    let mut c = COLLECTION.lock().unwrap_or_else(|e| e.into_inner());
    *c = start.then(|| Collection {
        freed: FREED.load(Ordering::Relaxed),
        answers: HashMap::new(),
    });
    drop(c);
    if !start {
        COLLECTING.store(false, Ordering::Relaxed);
        crate::autograd::foreign::drop_deferred();
    }
}

/// `__traverse__` of a tensor or node object at `owner`: visit what `find` reports.
pub fn visit_owned(
    owner: usize,
    visit: &PyVisit<'_>,
    find: impl FnOnce(&mut Vec<usize>),
) -> Result<(), PyTraverseError> {
    if HELD.load(Ordering::Relaxed) == 0 {
        return Ok(());
    }
    let refs = {
        let mut c = COLLECTION.lock().unwrap_or_else(|e| e.into_inner());
        match c.as_mut() {
            Some(col) => {
                let freed = FREED.load(Ordering::Relaxed);
                if col.freed != freed {
                    col.answers.clear();
                    col.freed = freed;
                }
                col.answers
                    .entry(owner)
                    .or_insert_with(|| collect(find))
                    .clone()
            }
            None => collect(find),
        }
    };
    for ptr in refs {
        // SAFETY: the collector runs attached; `ptr` is an object the core holds a
        // reference to (checked fresh above). ManuallyDrop: borrowed, never released.
        let obj = ManuallyDrop::new(unsafe {
            Bound::from_owned_ptr(Python::assume_attached(), ptr as *mut pyo3::ffi::PyObject)
        });
        visit.call(obj.as_unbound())?;
    }
    Ok(())
}

fn collect(find: impl FnOnce(&mut Vec<usize>)) -> Vec<usize> {
    let mut out = Vec::new();
    find(&mut out);
    out
}
