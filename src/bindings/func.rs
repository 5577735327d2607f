//! `_C` entry points of torch.func's vmap (`ferrograd.func` wraps them).

use pyo3::prelude::*;

use crate::bindings::convert::extract_tensor;
use crate::bindings::errors::run;
use crate::bindings::tensor::to_py;
use crate::functorch::{batched, levels};

#[pyfunction]
pub fn _vmap_increment_nesting(batch_size: usize, randomness: &str) -> PyResult<u64> {
    let r = run(|| levels::Randomness::parse(randomness))?;
    Ok(levels::push(batch_size, r))
}

#[pyfunction]
pub fn _vmap_decrement_nesting() -> PyResult<u64> {
    Ok(run(levels::pop)?.id)
}

#[pyfunction]
pub fn _add_batch_dim(
    py: Python<'_>,
    t: &Bound<'_, PyAny>,
    bdim: i64,
    level: u64,
) -> PyResult<Py<PyAny>> {
    let t = extract_tensor(t, "tensor")?;
    to_py(py, run(|| batched::add_batch_dim(&t, bdim, level))?)
}

#[pyfunction]
pub fn _remove_batch_dim(
    py: Python<'_>,
    t: &Bound<'_, PyAny>,
    level: u64,
    batch_size: usize,
    out_dim: i64,
) -> PyResult<Py<PyAny>> {
    let t = extract_tensor(t, "tensor")?;
    to_py(
        py,
        run(|| batched::remove_batch_dim(&t, level, batch_size, out_dim))?,
    )
}

#[pyfunction]
pub fn _is_batched_at(t: &Bound<'_, PyAny>, level: u64) -> PyResult<bool> {
    Ok(batched::is_batched_at(&extract_tensor(t, "tensor")?, level))
}

type BatchInfoTuple = (u64, usize, Py<PyAny>, u64, &'static str);

/// `(depth, bdim, value, level, randomness)` of a wrapper, or None. `depth` is the
/// level's place among this thread's open levels, from 1 (torch's numbering in reprs),
/// or its id once closed; `level` is the id the other functions take.
#[pyfunction]
pub fn _batch_info(py: Python<'_>, t: &Bound<'_, PyAny>) -> PyResult<Option<BatchInfoTuple>> {
    let t = extract_tensor(t, "tensor")?;
    let Some(b) = t.batch_info() else {
        return Ok(None);
    };
    let open = levels::open();
    let place = open.iter().position(|l| l.id == b.level);
    let depth = place.map_or(b.level, |p| p as u64 + 1);
    let randomness = match place.map(|p| open[p].randomness) {
        Some(levels::Randomness::Different) => "different",
        Some(levels::Randomness::Same) => "same",
        _ => "error",
    };
    Ok(Some((
        depth,
        b.bdim,
        to_py(py, b.value.clone())?,
        b.level,
        randomness,
    )))
}

/// Whether a vmap level is open on this thread (custom Functions check this first).
#[pyfunction]
pub fn _vmap_active() -> bool {
    levels::any_open()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_vmap_increment_nesting, m)?)?;
    m.add_function(wrap_pyfunction!(_vmap_decrement_nesting, m)?)?;
    m.add_function(wrap_pyfunction!(_add_batch_dim, m)?)?;
    m.add_function(wrap_pyfunction!(_remove_batch_dim, m)?)?;
    m.add_function(wrap_pyfunction!(_is_batched_at, m)?)?;
    m.add_function(wrap_pyfunction!(_batch_info, m)?)?;
    m.add_function(wrap_pyfunction!(_vmap_active, m)?)?;
    Ok(())
}
