//! Telling the collector's own passes from Python code that runs in the middle of a
//! collection (see `bindings::gc`, "Answers are kept, for one pass at a time").
//!
//! - The end of the first pass: a sentinel, made garbage as the collection starts, has a
//!   weak reference whose callback the collector calls once it has decided what is
//!   garbage and before it runs any finalizer (CPython clears weak references to garbage
//!   first; the callback runs because the weak reference itself is held from here).
//! - Python code during the collection runs in frames of its own: the collector's
//!   traverses all run in the frame that was running when the collection started.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyCFunction, PyWeakrefReference};
use pyo3::{PyTraverseError, PyVisit};

use crate::autograd::foreign::try_lock;

pub struct Window {
    /// The frame object running when the collection started (held: its address stays
    /// its own), and that address.
    _frame: Option<Py<PyAny>>,
    frame_addr: usize,
    /// The weak reference to the sentinel, while its callback is to come.
    armed: Option<Py<PyAny>>,
}

impl Window {
    /// At the start of a collection. `arm`: answers will be kept (the sentinel is made).
    pub fn open(py: Python<'_>, arm: bool) -> Window {
        let frame_addr = current_frame();
        // SAFETY: attached; a borrowed frame object (or null), taken as a new reference.
        let frame =
            unsafe { pyo3::Borrowed::from_ptr_or_opt(py, frame_addr as *mut pyo3::ffi::PyObject) }
                .map(|f| f.to_owned().unbind());
        Window {
            _frame: frame,
            frame_addr,
            // A sentinel that cannot be made leaves the window unarmed: nothing is
            // reported in this collection (only a leak).
            armed: arm.then(|| sentinel(py).ok()).flatten(),
        }
    }
    /// The traverse running now is one of the collector's passes.
    pub fn is_collector(&self) -> bool {
        current_frame() == self.frame_addr
    }
    pub fn armed(&self) -> bool {
        self.armed.is_some()
    }
}

/// The frame running now (no new object: the collector's frame got one at the start).
fn current_frame() -> usize {
    // SAFETY: reads the running thread's state.
    unsafe { pyo3::ffi::PyEval_GetFrame() as usize }
}

/// Garbage from the start: it holds itself and nothing holds it.
#[pyclass(weakref, frozen)]
struct GcSentinel {
    me: Mutex<Option<Py<PyAny>>>,
}

#[pymethods]
impl GcSentinel {
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some(me) = try_lock(&self.me).as_deref().and_then(|m| m.as_ref()) {
            visit.call(me)?;
        }
        Ok(())
    }
    fn __clear__(&self) {
        let me = try_lock(&self.me).and_then(|mut m| m.take());
        drop(me);
    }
}

/// A new sentinel; returns the weak reference whose callback ends the first pass.
fn sentinel(py: Python<'_>) -> PyResult<Py<PyAny>> {
    static CALLBACK: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let callback = CALLBACK.get_or_try_init(py, || {
        PyCFunction::new_closure(py, Some(c"_gc_first_pass_done"), None, |_, _| {
            super::first_pass_done()
        })
        .map(|f| f.into_any().unbind())
    })?;
    let s = Bound::new(
        py,
        GcSentinel {
            me: Mutex::new(None),
        },
    )?;
    *s.get().me.lock().unwrap_or_else(|e| e.into_inner()) = Some(s.clone().into_any().unbind());
    Ok(PyWeakrefReference::new_with(s.as_any(), callback.bind(py))?
        .into_any()
        .unbind())
}
