//! torch's thread-count functions (`set_num_threads` and friends), with torch's argument
//! checks and texts. The counts themselves live in `crate::threads`.

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyTuple};

use crate::bindings::errors::to_pyerr;

/// CPython's check for a one-argument builtin (METH_O), in its words.
fn single_arg<'py>(
    name: &str,
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    if kwargs.is_some_and(|k| !k.is_empty()) {
        return Err(PyTypeError::new_err(format!(
            "ferrograd.{name}() takes no keyword arguments"
        )));
    }
    if args.len() != 1 {
        return Err(PyTypeError::new_err(format!(
            "ferrograd.{name}() takes exactly one argument ({} given)",
            args.len()
        )));
    }
    args.get_item(0)
}

/// CPython's check for a builtin without arguments (METH_NOARGS), in its words.
fn no_args(
    name: &str,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    if kwargs.is_some_and(|k| !k.is_empty()) {
        return Err(PyTypeError::new_err(format!(
            "ferrograd.{name}() takes no keyword arguments"
        )));
    }
    if !args.is_empty() {
        return Err(PyTypeError::new_err(format!(
            "ferrograd.{name}() takes no arguments ({} given)",
            args.len()
        )));
    }
    Ok(())
}

/// A type's C-level name (`tp_name`), as torch prints it: `float`, `NoneType`,
/// `numpy.float64`; classes defined in Python (ours too) by their bare name.
fn tp_name(o: &Bound<'_, PyAny>) -> String {
    const HEAP_TYPE: u64 = 1 << 9;
    let ty = o.get_type();
    let name = ty.name().map(|n| n.to_string()).unwrap_or_default();
    let heap = ty
        .getattr("__flags__")
        .and_then(|f| f.extract::<u64>())
        .is_ok_and(|f| f & HEAP_TYPE != 0);
    let module = ty.module().map(|m| m.to_string()).unwrap_or_default();
    if heap || module.is_empty() || module == "builtins" {
        name
    } else {
        format!("{module}.{name}")
    }
}

/// Whether `o` is a numpy integer scalar (torch accepts those as ints). numpy is only
/// looked up when already imported: otherwise `o` cannot be one.
fn is_numpy_int(o: &Bound<'_, PyAny>) -> bool {
    let py = o.py();
    let Ok(modules) = py.import("sys").and_then(|s| s.getattr("modules")) else {
        return false;
    };
    let Ok(np) = modules.get_item("numpy") else {
        return false;
    };
    np.getattr("integer")
        .and_then(|int| o.is_instance(&int))
        .unwrap_or(false)
}

/// A positive thread count, checked as torch checks it: an int (not a bool), within
/// int32, above zero.
fn thread_count(name: &str, o: &Bound<'_, PyAny>) -> PyResult<usize> {
    let is_int = (o.is_instance_of::<PyInt>() && !o.is_instance_of::<PyBool>()) || is_numpy_int(o);
    if !is_int {
        return Err(PyRuntimeError::new_err(format!(
            "{name} expects an int, but got {}",
            tp_name(o)
        )));
    }
    let wide: i64 = o
        .extract()
        .map_err(|_| PyValueError::new_err("Overflow when unpacking long long"))?;
    let n =
        i32::try_from(wide).map_err(|_| PyValueError::new_err("Overflow when unpacking long"))?;
    usize::try_from(n)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| PyRuntimeError::new_err(format!("{name} expects a positive integer")))
}

/// A setter's call: torch's argument checks, then `set` (which checks nothing more).
fn set_count(
    name: &str,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    set: fn(usize) -> crate::error::Result<()>,
) -> PyResult<()> {
    let n = thread_count(name, &single_arg(name, args, kwargs)?)?;
    set(n).map_err(to_pyerr)
}

/// `set_num_threads(int)`: the threads kernels split big ops over.
#[pyfunction]
#[pyo3(signature = (*args, **kwargs))]
pub fn set_num_threads(
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    set_count(
        "set_num_threads",
        args,
        kwargs,
        crate::threads::set_num_threads,
    )
}

/// `get_num_threads() -> int`
#[pyfunction]
#[pyo3(signature = (*args, **kwargs))]
pub fn get_num_threads(
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<usize> {
    no_args("get_num_threads", args, kwargs).map(|()| crate::threads::num_threads())
}

/// `set_num_interop_threads(int)`: the threads a backward pass runs independent nodes on;
/// once, before the first parallel backward.
#[pyfunction]
#[pyo3(signature = (*args, **kwargs))]
pub fn set_num_interop_threads(
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    set_count(
        "set_num_interop_threads",
        args,
        kwargs,
        crate::threads::set_num_interop_threads,
    )
}

/// `get_num_interop_threads() -> int`
#[pyfunction]
#[pyo3(signature = (*args, **kwargs))]
pub fn get_num_interop_threads(
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<usize> {
    no_args("get_num_interop_threads", args, kwargs).map(|()| crate::threads::num_interop_threads())
}
