//! Core errors → Python exceptions, panics → RuntimeError, core warnings → warnings.warn.

use std::any::Any;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use pyo3::exceptions::{
    PyFutureWarning, PyIndexError, PyNotImplementedError, PyRuntimeError, PyTypeError,
    PyUserWarning, PyValueError,
};
use pyo3::prelude::*;

use crate::autograd::warnings::{take_pending, WarningKind};
use crate::error::Error;

pub fn to_pyerr(e: Error) -> PyErr {
    match e {
        Error::Runtime(m) => PyRuntimeError::new_err(m),
        Error::Type(m) => PyTypeError::new_err(m),
        Error::Index(m) => PyIndexError::new_err(m),
        Error::Value(m) => PyValueError::new_err(m),
        Error::NotImplemented(m) => PyNotImplementedError::new_err(m),
        Error::LinAlg(m) => crate::bindings::linalg_methods::LinAlgError::new_err(m),
        Error::External { message, payload } => match payload.downcast_ref::<PyErrBox>() {
            Some(b) => Python::attach(|py| b.0.clone_ref(py)),
            None => PyRuntimeError::new_err(message),
        },
    }
}

/// A Python exception carried through the core (from user code run by the engine).
pub struct PyErrBox(pub PyErr);

thread_local! {
    /// The last panic on this thread, "message (file:line)", kept by the panic hook for
    /// the RuntimeError `run` raises.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn payload_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into())
}

/// Replace the default panic hook (which prints to stderr) by one that only records
/// the message and location on the panicking thread. Installed once, at module init; it
/// covers every thread, the intra-op team's included (their panics reach the caller as
/// the payload `run` reads).
pub fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let location = info
                .location()
                .map(|l| format!(" ({}:{})", l.file(), l.line()))
                .unwrap_or_default();
            let text = format!("{}{location}", payload_message(info.payload()));
            // try_with: a panic while this thread's locals are being destroyed is dropped.
            let _ = LAST_PANIC.try_with(|p| *p.borrow_mut() = Some(text));
        }));
    });
}

/// Run a core call: map its error, turn a panic into RuntimeError (never let it unwind
/// into Python as PanicException).
pub fn run<T>(f: impl FnOnce() -> crate::error::Result<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_pyerr(e)),
        Err(panic) => {
            // The hook's record has the location when the panic was on this thread; a
            // worker's panic arrives as its payload alone.
            let recorded = LAST_PANIC.with(|p| p.borrow_mut().take());
            let payload = payload_message(panic.as_ref());
            let msg = match recorded {
                Some(r)
                    if r.strip_prefix(payload.as_str())
                        .is_some_and(|loc| loc.starts_with(" (")) =>
                {
                    r
                }
                _ => payload,
            };
            Err(PyRuntimeError::new_err(format!(
                "internal error in ferrograd: {msg}"
            )))
        }
    }
}

/// Test only (`ferrograd._C._test_panic`): panic inside a core call, on this thread or
/// on the intra-op team, so tests can check a panic is a RuntimeError and prints nothing.
#[pyfunction]
#[pyo3(signature = (on_worker=false))]
pub fn _test_panic(on_worker: bool) -> PyResult<()> {
    run(|| {
        if on_worker {
            // Enough tasks that members take some, whichever thread reaches the last.
            crate::kernels::par_for(64, |i| {
                if i == 63 {
                    panic!("test panic on a worker");
                }
            });
        } else {
            panic!("test panic");
        }
        Ok(())
    })
}

/// Re-issue warnings raised inside the core.
pub fn flush_warnings(py: Python<'_>) -> PyResult<()> {
    for (kind, msg) in take_pending() {
        let category = match kind {
            WarningKind::User => py.get_type::<PyUserWarning>(),
            WarningKind::Future => py.get_type::<PyFutureWarning>(),
        };
        let c = std::ffi::CString::new(msg.replace('\0', " ")).unwrap_or_default();
        PyErr::warn(py, category.as_any(), &c, 1)?;
    }
    Ok(())
}

pub fn warn(py: Python<'_>, kind: WarningKind, msg: &str) -> PyResult<()> {
    crate::autograd::warnings::warn(kind, msg);
    flush_warnings(py)
}
