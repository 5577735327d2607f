//! Python objects as `autograd::foreign`'s walks see them (`Host`).

use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::Borrowed;

use crate::autograd::foreign::{Handle, Host, HostKind};
use crate::bindings::autograd::PyNode;
use crate::bindings::tensor::PyTensor;

/// Whether walks may look into ordinary Python objects: that needs `PyType_GetSlot` on
/// static types (Python 3.10+).
static LOOK_INTO_OBJECTS: AtomicBool = AtomicBool::new(false);

/// Called as a collection starts (before any walk of it).
pub fn set_python_version(py: Python<'_>) {
    LOOK_INTO_OBJECTS.store(py.version_info() >= (3, 10), Ordering::Relaxed);
}

/// Python objects as `autograd::foreign`'s walks see them. Every method runs inside a
/// traverse (attached, nothing else running), on objects reached through references.
pub struct PyHost;

/// One of the bindings' tensor or node objects, borrowed.
enum Wrapper<'a> {
    Tensor(&'a PyTensor),
    Node(&'a PyNode),
}

impl Wrapper<'_> {
    fn key(&self) -> usize {
        match self {
            Wrapper::Tensor(t) => *t as *const PyTensor as usize,
            Wrapper::Node(n) => *n as *const PyNode as usize,
        }
    }
    fn handle(&self) -> Option<Handle> {
        match self {
            Wrapper::Tensor(t) => t.gc_tensor().map(|t| Handle::Tensor(t.clone())),
            Wrapper::Node(n) => n.gc_node().map(|n| Handle::Node(n.clone())),
        }
    }
    fn ready(&self) -> bool {
        match self {
            Wrapper::Tensor(t) => t.gc_tensor().is_some(),
            Wrapper::Node(n) => n.gc_node().is_some(),
        }
    }
}

fn wrapper<'a>(obj: usize) -> Option<Wrapper<'a>> {
    // SAFETY: attached (see PyHost); `obj` is a live object, borrowed for this call.
    let any =
        unsafe { Borrowed::from_ptr(Python::assume_attached(), obj as *mut pyo3::ffi::PyObject) };
    if let Ok(t) = any.cast::<PyTensor>() {
        // SAFETY: the object outlives the walk (nothing is freed while it runs).
        return Some(Wrapper::Tensor(unsafe { &*(t.get() as *const PyTensor) }));
    }
    if let Ok(n) = any.cast::<PyNode>() {
        // SAFETY: as above.
        return Some(Wrapper::Node(unsafe { &*(n.get() as *const PyNode) }));
    }
    None
}

impl Host for PyHost {
    fn refcount(&self, obj: usize) -> usize {
        // SAFETY: a live object (see PyHost).
        let n = unsafe { pyo3::ffi::Py_REFCNT(obj as *mut pyo3::ffi::PyObject) };
        usize::try_from(n).unwrap_or(usize::MAX)
    }
    fn kind(&self, obj: usize) -> HostKind {
        match wrapper(obj) {
            Some(w) if w.ready() => HostKind::Owner(w.key()),
            // Not written yet: its traverse must not be called either.
            Some(_) => HostKind::Opaque,
            None if LOOK_INTO_OBJECTS.load(Ordering::Relaxed) => HostKind::Plain,
            None => HostKind::Opaque,
        }
    }
    fn handle(&self, obj: usize) -> Option<Handle> {
        wrapper(obj)?.handle()
    }
    fn referents(&self, obj: usize, limit: usize, out: &mut Vec<usize>) {
        struct Sink<'a> {
            out: &'a mut Vec<usize>,
            limit: usize,
        }
        unsafe extern "C" fn push(o: *mut ffi::PyObject, arg: *mut std::ffi::c_void) -> i32 {
            // SAFETY: `arg` is the Sink below, alive for the traverse call.
            let sink = unsafe { &mut *(arg as *mut Sink<'_>) };
            if sink.out.len() >= sink.limit {
                return 1; // stops the traverse
            }
            if !o.is_null() {
                sink.out.push(o as usize);
            }
            0
        }
        let o = obj as *mut ffi::PyObject;
        // SAFETY: a live object (see PyHost); its type's traverse slot is called as the
        // collector itself calls it, with a visitor that only records. For the bindings'
        // own objects that reaches `visit_owned`, which answers nothing while a walk
        // holds the collection's lock: what is left is their Python side (`__dict__`).
        unsafe {
            let tp = ffi::Py_TYPE(o);
            if ffi::PyType_GetFlags(tp) & ffi::Py_TPFLAGS_HAVE_GC == 0 {
                return;
            }
            let slot = ffi::PyType_GetSlot(tp, ffi::Py_tp_traverse);
            if slot.is_null() {
                return;
            }
            let traverse: ffi::traverseproc = std::mem::transmute(slot);
            let mut sink = Sink { out, limit };
            traverse(o, push, &mut sink as *mut Sink<'_> as *mut std::ffi::c_void);
        }
    }
}
