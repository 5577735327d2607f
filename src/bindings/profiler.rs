//! The profiler's entry points for `ferrograd.autograd.profiler` (recording is in
//! `crate::profiler`; everything torch shows is computed from these raw events in Python).

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::bindings::errors::to_pyerr;
use crate::profiler::{self, Config, Event};

#[pyfunction]
pub fn _profiler_start(
    record_shapes: bool,
    profile_memory: bool,
    with_stack: bool,
) -> PyResult<()> {
    profiler::start(Config {
        record_shapes,
        profile_memory,
        with_stack,
    })
    .map_err(to_pyerr)
}

/// Stop this thread's session: `(events, start_ns, unix_start_ns)`; event times are ns
/// since the session started (so `start_ns` is 0).
#[pyfunction]
pub fn _profiler_stop(py: Python<'_>) -> PyResult<Py<PyAny>> {
    let recording = profiler::stop().map_err(to_pyerr)?;
    let events = PyList::empty(py);
    for e in &recording.events {
        events.append(event_tuple(py, e)?)?;
    }
    let unix_start = u64::try_from(recording.unix_origin_ns).unwrap_or(u64::MAX);
    Ok((events, 0u64, unix_start)
        .into_pyobject(py)?
        .into_any()
        .unbind())
}

fn event_tuple<'py>(py: Python<'py>, e: &Event) -> PyResult<Bound<'py, PyTuple>> {
    let (shapes, dtypes, strides) = match &e.inputs {
        Some(i) => (
            Some(i.shapes.clone()),
            Some(i.dtypes.clone()),
            Some(i.strides.clone()),
        ),
        None => (None, None, None),
    };
    let items: [Bound<'py, PyAny>; 14] = [
        e.id.into_pyobject(py)?.into_any(),
        e.name().into_pyobject(py)?.into_any(),
        e.kind.as_str().into_pyobject(py)?.into_any(),
        e.thread.into_pyobject(py)?.into_any(),
        e.start_ns.into_pyobject(py)?.into_any(),
        e.end_ns.into_pyobject(py)?.into_any(),
        e.sequence_nr.into_pyobject(py)?.into_any(),
        e.fwd_thread.into_pyobject(py)?.into_any(),
        shapes.into_pyobject(py)?.into_any(),
        dtypes.into_pyobject(py)?.into_any(),
        strides.into_pyobject(py)?.into_any(),
        e.mem_bytes.into_pyobject(py)?.into_any(),
        e.stack.clone().into_pyobject(py)?.into_any(),
        e.args.clone().into_pyobject(py)?.into_any(),
    ];
    PyTuple::new(py, items)
}

#[pyfunction]
pub fn _profiler_active() -> bool {
    profiler::current().is_some()
}

#[pyfunction]
#[pyo3(signature = (name, args=None))]
pub fn _record_function_enter(name: String, args: Option<String>) -> u64 {
    profiler::enter_user_range(name, args)
}

#[pyfunction]
pub fn _record_function_exit(handle: u64) {
    profiler::exit_user_range(handle)
}

/// The Python stack of an op's call (`with_stack`), innermost frame first, as torch
/// shows it (`file.py(12): f`), without ferrograd's own frames. Not inside backward
/// (ops there have no Python caller, and engine helpers must not wait for the GIL).
pub fn python_stack() -> Option<Vec<String>> {
    if crate::engine::modes::reentrant_depth() > 0 {
        return None;
    }
    Python::attach(|py| {
        let sys = py.import("sys").ok()?;
        let mut frame = sys.call_method1("_getframe", (0,)).ok()?;
        let mut frames = Vec::new();
        while !frame.is_none() {
            let module: String = frame
                .getattr("f_globals")
                .and_then(|g| g.get_item("__name__"))
                .and_then(|n| n.extract())
                .unwrap_or_default();
            if !module.starts_with("ferrograd") {
                let code = frame.getattr("f_code").ok()?;
                let file: String = code.getattr("co_filename").ok()?.extract().ok()?;
                let func: String = code.getattr("co_name").ok()?.extract().ok()?;
                let line: i64 = frame.getattr("f_lineno").ok()?.extract().unwrap_or(0);
                frames.push(format!("{file}({line}): {func}"));
            }
            frame = frame.getattr("f_back").ok()?;
        }
        Some(frames)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    profiler::set_stack_provider(python_stack);
    m.add_function(wrap_pyfunction!(_profiler_start, m)?)?;
    m.add_function(wrap_pyfunction!(_profiler_stop, m)?)?;
    m.add_function(wrap_pyfunction!(_profiler_active, m)?)?;
    m.add_function(wrap_pyfunction!(_record_function_enter, m)?)?;
    m.add_function(wrap_pyfunction!(_record_function_exit, m)?)?;
    Ok(())
}
