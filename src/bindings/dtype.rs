//! `ferrograd.float32` and friends: one immutable Python object per dtype.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::dtype::{DType, ALL_DTYPES};

#[pyclass(name = "dtype", module = "ferrograd", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub struct PyDType {
    pub dtype: DType,
}

#[pymethods]
impl PyDType {
    fn __repr__(&self) -> String {
        format!("ferrograd.{}", self.dtype.name())
    }
    fn __str__(&self) -> String {
        self.__repr__()
    }
    #[getter]
    fn is_floating_point(&self) -> bool {
        self.dtype.is_floating_point()
    }
    #[getter]
    fn is_complex(&self) -> bool {
        self.dtype.is_complex()
    }
    #[getter]
    fn is_signed(&self) -> bool {
        !matches!(self.dtype, DType::Bool | DType::U8)
    }
    #[getter]
    fn itemsize(&self) -> usize {
        self.dtype.itemsize()
    }
    fn to_real(&self, py: Python<'_>) -> Py<PyDType> {
        dtype_object(py, self.dtype.to_real())
    }
    fn to_complex(&self, py: Python<'_>) -> Py<PyDType> {
        dtype_object(py, self.dtype.to_complex())
    }
    fn __reduce__(&self) -> (String,) {
        (self.dtype.name().to_string(),)
    }
}

static DTYPES: PyOnceLock<Vec<Py<PyDType>>> = PyOnceLock::new();

/// The unique Python object for `d` (so `x.dtype is ferrograd.float32`).
pub fn dtype_object(py: Python<'_>, d: DType) -> Py<PyDType> {
    let all = DTYPES.get_or_init(py, || {
        ALL_DTYPES
            .iter()
            .map(|&dtype| Py::new(py, PyDType { dtype }).expect("allocate dtype"))
            .collect()
    });
    let i = ALL_DTYPES
        .iter()
        .position(|&x| x == d)
        .expect("known dtype");
    all[i].clone_ref(py)
}
