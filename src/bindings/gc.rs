//! Python's cycle collector and the Python objects the core holds.
//!
//! Every Python object stored on the Rust side (hooks, packed saved values, Function
//! contexts, node metadata) is wrapped in `HeldPy`, which counts them: while none exist,
//! tensors and nodes have nothing to report and skip the walk. Otherwise their
//! `__traverse__` reports what `autograd::foreign` hands them.
//!
//! # Answers are kept, for one pass at a time
//!
//! The collector decides what is garbage in a *pass*: it subtracts every object's
//! reports from reference counts, then follows reports from what is left alive. A pass
//! needs the same reports from each object throughout (an object reported in the first
//! half and not in the second is freed while alive), and the rule that hands each
//! reference to one owner needs every owner's answer fixed once given
//! (`autograd::foreign`). Engine threads change the graph meanwhile (they run without
//! the GIL), so answers are kept, by owner, from the first traverse on.
//!
//! A collection makes a second pass after running finalizers and weakref callbacks
//! (Python code, which may have changed the graph: `live.append(garbage_tensor * 2)`
//! gives a garbage tensor's node a live holder). Answers kept from the first pass would
//! then report what is alive again as garbage's own: its hooks would be cleared while
//! the new graph still calls them. So between the passes the kept answers are dropped
//! (`window`), and traverses that Python code makes during the collection
//! (`gc.get_referents` in a finalizer) are answered fresh and not kept: the second pass
//! computes its answers after the last Python code ran.
//!
//! Answers name objects by address, so none of them may be freed while answers are
//! kept: a `HeldPy` that goes away during a collection releases its object only when
//! the collection ends. Owners can be freed (under the GIL, where Python code runs:
//! never inside a pass); answers are then dropped, since a new owner may reuse an old
//! owner's address.
//!
//! Traverses outside a collection (`gc.get_referents`), and those of a collection that
//! does not call `gc.callbacks` (CPython's last ones at exit), get answers that are not
//! kept (`foreign::Answers::Fresh`).

mod host;
mod window;

use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::{PyTraverseError, PyVisit};

use crate::autograd::foreign::{owned_refs, try_lock, Answers, Handle};

/// A Python object held by the core.
pub struct HeldPy(ManuallyDrop<Py<PyAny>>);

/// How many `HeldPy` exist.
static HELD: AtomicUsize = AtomicUsize::new(0);
/// Bumped whenever an owner (tensor or node object) is freed during a collection: kept
/// answers may then belong to a freed owner whose address a new object now has. That
/// takes the GIL, so it never happens inside a pass. Outside a collection nothing is
/// kept, so freeing (a hot path) only reads `COLLECTING`.
static FREED: AtomicU64 = AtomicU64::new(0);
static COLLECTING: AtomicBool = AtomicBool::new(false);
/// Objects whose `HeldPy` went away during a collection, released when it ends: so no
/// held object is freed during one, and an address in a kept answer never goes stale.
static RELEASE_LATER: Mutex<Vec<Py<PyAny>>> = Mutex::new(Vec::new());

/// A tensor or node object is being freed.
pub fn owner_freed() {
    if COLLECTING.load(Ordering::Relaxed) {
        FREED.fetch_add(1, Ordering::Relaxed);
    }
}

impl HeldPy {
    pub fn new(obj: Py<PyAny>) -> HeldPy {
        HELD.fetch_add(1, Ordering::Relaxed);
        HeldPy(ManuallyDrop::new(obj))
    }
}

impl Drop for HeldPy {
    fn drop(&mut self) {
        HELD.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: taken once, here, and never used again.
        let obj = unsafe { ManuallyDrop::take(&mut self.0) };
        if COLLECTING.load(Ordering::Relaxed) {
            RELEASE_LATER
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(obj);
        }
    }
}

/// Release what `HeldPy`s gave up during a collection (where Python code may run).
fn release_later() {
    let objs = std::mem::take(&mut *RELEASE_LATER.lock().unwrap_or_else(|e| e.into_inner()));
    drop(objs);
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

/// The collection in progress.
struct Collection {
    freed: u64,
    /// Answers given in the current pass, by owner key.
    answers: HashMap<usize, Vec<usize>>,
    /// What tells the collector's own traverses from Python code's (`window`).
    window: window::Window,
}

static COLLECTION: Mutex<Option<Collection>> = Mutex::new(None);

/// Registered in `gc.callbacks` at import.
#[pyfunction]
pub fn _gc_callback(phase: &str, info: &Bound<'_, PyAny>) {
    let py = info.py();
    let start = phase == "start";
    if start {
        release_later();
        // Before older generations are collected, free the `.grad` cycles that became
        // unreachable since (freeing may run Python code, which is fine here).
        let generation: u32 = info
            .get_item("generation")
            .and_then(|g| g.extract())
            .unwrap_or(0);
        if generation >= 1 {
            crate::autograd::foreign::retry_grad_cycles();
        }
        host::set_python_version(py);
        COLLECTING.store(true, Ordering::Relaxed);
    }
    // Made before taking the lock: arming runs Python code.
    let window = start.then(|| window::Window::open(py, HELD.load(Ordering::Relaxed) > 0));
    let old = {
        let mut c = COLLECTION.lock().unwrap_or_else(|e| e.into_inner());
        let new = window.map(|window| Collection {
            freed: FREED.load(Ordering::Relaxed),
            answers: HashMap::new(),
            window,
        });
        std::mem::replace(&mut *c, new)
    };
    drop(old); // outside the lock: releases Python objects
    if !start {
        COLLECTING.store(false, Ordering::Relaxed);
        crate::autograd::foreign::drop_deferred();
        release_later();
    }
}

/// The collector finished its first pass and may now run Python code: answers kept so
/// far may stop being true (see the module docs).
fn first_pass_done() {
    if let Some(col) = COLLECTION
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_mut()
    {
        col.answers.clear();
    }
}

/// `__traverse__` of the tensor or node object whose Rust part is at `key` (holding
/// `handle`; `canonical`: its address, when it is its tensor's canonical object): visit
/// what it answers for (see `autograd::foreign`).
pub fn visit_owned(
    key: usize,
    canonical: Option<usize>,
    visit: &PyVisit<'_>,
    handle: impl FnOnce() -> Handle,
) -> Result<(), PyTraverseError> {
    if HELD.load(Ordering::Relaxed) == 0 {
        return Ok(());
    }
    let refs = {
        // Only tried: a walk may look into an object whose traverse comes back here.
        let Some(mut c) = try_lock(&COLLECTION) else {
            return Ok(());
        };
        match c.as_mut() {
            Some(col) if col.window.is_collector() => {
                if !col.window.armed() {
                    // Answers could outlive Python code run mid-collection: give none.
                    return Ok(());
                }
                let freed = FREED.load(Ordering::Relaxed);
                if col.freed != freed {
                    col.answers.clear();
                    col.freed = freed;
                }
                if !col.answers.contains_key(&key) {
                    let answered = |k| col.answers.contains_key(&k);
                    let kept = Answers::Kept(&answered);
                    let found = owned_refs(key, handle(), canonical, &host::PyHost, kept);
                    col.answers.extend(found);
                }
                col.answers.get(&key).cloned().unwrap_or_default()
            }
            // Outside a collection, or Python code asking during one: fresh, not kept.
            _ => owned_refs(key, handle(), canonical, &host::PyHost, Answers::Fresh)
                .into_iter()
                .find(|(k, _)| *k == key)
                .map(|(_, refs)| refs)
                .unwrap_or_default(),
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
