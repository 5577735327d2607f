//! Internal view functions for the Python composites (python/ferrograd/_composite.py).

use pyo3::prelude::*;

use crate::bindings::errors::run;
use crate::bindings::tensor::{to_py, PyTensor};
use crate::ops::view;

/// torch's `aten::_unsafe_view`: a reshape recorded as UnsafeViewBackward0, not tracked
/// as a view of its input (kron and the like end in one).
#[pyfunction(name = "_unsafe_view")]
pub fn reshape_untracked(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    size: Vec<i64>,
) -> PyResult<Py<PyAny>> {
    let out = run(|| {
        let shape = crate::shape::infer_size(&size, input.t.numel())?;
        view::unsafe_view(&input.t, &shape)
    })?;
    to_py(py, out)
}
