//! Complex views and ops of issue 11 (src/ops/complex.rs): the `real` / `imag`
//! attributes, `conj_physical_`, and the module functions `real`, `imag`,
//! `view_as_real`, `view_as_complex`, `complex` and `polar` (`angle` and
//! `conj_physical` are op-table lines).

use pyo3::prelude::*;

use crate::bindings::convert::extract_tensor;
use crate::bindings::errors::run;
use crate::bindings::tensor::{to_py, PyTensor};
use crate::ops::complex;
use crate::tensor::Tensor;

type Obj<'py> = Bound<'py, PyAny>;
type Out = PyResult<Py<PyAny>>;

/// `value` written into the view `part` of a tensor (`x.real = value`).
fn assign(part: Tensor, value: &Obj<'_>, what: &str) -> PyResult<()> {
    let value = match crate::bindings::convert::as_tensor_ref(value) {
        Some(t) => t,
        None => {
            let s = crate::bindings::convert::as_scalar(value).ok_or_else(|| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "{what}: expected a Tensor or a number"
                ))
            })?;
            Tensor::scalar(s, part.dtype())
        }
    };
    run(|| crate::ops::inplace::copy_(&part, &value))
}

#[pymethods]
impl PyTensor {
    #[getter]
    fn real(&self, py: Python<'_>) -> Out {
        to_py(py, run(|| complex::real(&self.t))?)
    }
    #[setter]
    fn set_real(&self, value: &Obj<'_>) -> PyResult<()> {
        assign(run(|| complex::real(&self.t))?, value, "real")
    }
    #[getter]
    fn imag(&self, py: Python<'_>) -> Out {
        to_py(py, run(|| complex::imag(&self.t))?)
    }
    #[setter]
    fn set_imag(&self, value: &Obj<'_>) -> PyResult<()> {
        assign(run(|| complex::imag(&self.t))?, value, "imag")
    }
    fn conj_physical_<'py>(slf: Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        run(|| complex::conj_physical_(&slf.get().t))?;
        Ok(slf)
    }
}

/// One-tensor module functions.
macro_rules! tensor_fns {
    ($($name:ident => $f:path;)*) => {$(
        #[pyfunction]
        pub fn $name(py: Python<'_>, input: &Obj<'_>) -> Out {
            let what = concat!(stringify!($name), "(): argument 'input' (position 1)");
            let x = extract_tensor(input, what)?;
            to_py(py, run(|| $f(&x))?)
        }
    )*};
}

tensor_fns! {
    real => complex::real;
    imag => complex::imag;
    view_as_real => complex::view_as_real;
    view_as_complex => complex::view_as_complex;
}

#[pyfunction]
#[pyo3(name = "complex")]
pub fn complex_py(py: Python<'_>, real: &Obj<'_>, imag: &Obj<'_>) -> Out {
    let re = extract_tensor(real, "complex(): argument 'real' (position 1)")?;
    let im = extract_tensor(imag, "complex(): argument 'imag' (position 2)")?;
    to_py(py, run(|| complex::complex(&re, &im))?)
}

#[pyfunction]
pub fn polar(py: Python<'_>, abs: &Obj<'_>, angle: &Obj<'_>) -> Out {
    let a = extract_tensor(abs, "polar(): argument 'abs' (position 1)")?;
    let t = extract_tensor(angle, "polar(): argument 'angle' (position 2)")?;
    to_py(py, run(|| complex::polar(&a, &t))?)
}
