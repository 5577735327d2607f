//! Core errors → Python exceptions, panics → RuntimeError, core warnings → warnings.warn.

use std::panic::{catch_unwind, AssertUnwindSafe};

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
        Error::External { message, payload } => match payload.downcast_ref::<PyErrBox>() {
            Some(b) => Python::attach(|py| b.0.clone_ref(py)),
            None => PyRuntimeError::new_err(message),
        },
    }
}

/// A Python exception carried through the core (from user code run by the engine).
pub struct PyErrBox(pub PyErr);

/// Run a core call: map its error, turn a panic into RuntimeError (never let it unwind
/// into Python as PanicException).
pub fn run<T>(f: impl FnOnce() -> crate::error::Result<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_pyerr(e)),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(PyRuntimeError::new_err(format!(
                "internal error in ferrograd: {msg}"
            )))
        }
    }
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
