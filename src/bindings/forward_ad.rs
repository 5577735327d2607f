//! `_C` entry points of forward-mode AD (`ferrograd.autograd.forward_ad` wraps them).

use pyo3::prelude::*;

use crate::autograd::forward_ad as fw;
use crate::bindings::convert::extract_tensor;
use crate::bindings::errors::run;
use crate::bindings::tensor::{opt_to_py, to_py};

/// A level as Python passes it (torch's functions take a signed level).
fn level_of(level: i64) -> usize {
    usize::try_from(level).unwrap_or(usize::MAX)
}

/// `allow_nested`: torch.func's jvp nests levels; the public API does not.
#[pyfunction]
#[pyo3(signature = (allow_nested=false))]
pub fn _enter_dual_level(allow_nested: bool) -> PyResult<usize> {
    run(|| fw::enter_level(allow_nested))
}

#[pyfunction]
#[pyo3(signature = (*, level))]
pub fn _exit_dual_level(level: i64) -> PyResult<()> {
    if level < 0 {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "Dual level must be a positive number.",
        ));
    }
    run(|| fw::exit_level(level_of(level)))
}

#[pyfunction]
#[pyo3(signature = (tensor, tangent, *, level))]
pub fn _make_dual(
    py: Python<'_>,
    tensor: &Bound<'_, PyAny>,
    tangent: &Bound<'_, PyAny>,
    level: i64,
) -> PyResult<Py<PyAny>> {
    let t = extract_tensor(tensor, "tensor")?;
    let g = extract_tensor(tangent, "tangent")?;
    to_py(py, run(|| fw::make_dual(&t, &g, level_of(level)))?)
}

#[pyfunction]
#[pyo3(signature = (tensor, *, level))]
pub fn _unpack_dual(
    py: Python<'_>,
    tensor: &Bound<'_, PyAny>,
    level: i64,
) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    let t = extract_tensor(tensor, "tensor")?;
    let (primal, tangent) = run(|| fw::unpack_dual(&t, level_of(level)))?;
    Ok((to_py(py, primal)?, opt_to_py(py, tangent)?))
}

/// `t`'s tangent at `level` (None when it has none): custom Functions' jvp input.
#[pyfunction]
#[pyo3(signature = (tensor, *, level))]
pub fn _fw_grad(py: Python<'_>, tensor: &Bound<'_, PyAny>, level: i64) -> PyResult<Py<PyAny>> {
    let t = extract_tensor(tensor, "tensor")?;
    let g = run(|| fw::fw_grad(&t, level_of(level)))?;
    opt_to_py(py, g)
}

/// Give `tensor` the tangent a custom Function's jvp returned for it.
#[pyfunction]
#[pyo3(signature = (tensor, tangent, *, level))]
pub fn _set_fw_grad(
    tensor: &Bound<'_, PyAny>,
    tangent: &Bound<'_, PyAny>,
    level: i64,
) -> PyResult<()> {
    let t = extract_tensor(tensor, "tensor")?;
    let g = extract_tensor(tangent, "tangent")?;
    run(|| fw::set_checked_fw_grad(&t, &g, level_of(level)))
}

#[pyfunction]
pub fn _is_fwd_grad_enabled() -> bool {
    fw::is_fwd_grad_enabled()
}

#[pyfunction]
pub fn _set_fwd_grad_enabled(mode: bool) {
    fw::set_fwd_grad_enabled(mode)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_enter_dual_level, m)?)?;
    m.add_function(wrap_pyfunction!(_exit_dual_level, m)?)?;
    m.add_function(wrap_pyfunction!(_make_dual, m)?)?;
    m.add_function(wrap_pyfunction!(_unpack_dual, m)?)?;
    m.add_function(wrap_pyfunction!(_fw_grad, m)?)?;
    m.add_function(wrap_pyfunction!(_set_fw_grad, m)?)?;
    m.add_function(wrap_pyfunction!(_is_fwd_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_set_fwd_grad_enabled, m)?)?;
    Ok(())
}
