//! `Tensor` methods of issue 11's linalg decompositions (src/ops/decomp/): inverse, det,
//! logdet, slogdet, and the `_linalg_*` methods python/ferrograd/linalg.py builds
//! torch.linalg's functions from. `LinAlgError` is torch.linalg.LinAlgError.

use pyo3::prelude::*;

use crate::bindings::convert::extract_tensor;
use crate::bindings::errors::run;
use crate::bindings::tensor::{to_py, tuple_of, values_indices, PyTensor};
use crate::ops::decomp;

type Obj<'py> = Bound<'py, PyAny>;
type Out = PyResult<Py<PyAny>>;

pyo3::create_exception!(
    ferrograd.linalg,
    LinAlgError,
    pyo3::exceptions::PyRuntimeError,
    "Error raised by torch.linalg functions when the numerical computation fails (a singular or not positive-definite input)."
);

#[pymethods]
impl PyTensor {
    fn inverse(&self, py: Python<'_>) -> Out {
        to_py(py, run(|| decomp::inv(&self.t))?)
    }
    fn det(&self, py: Python<'_>) -> Out {
        to_py(py, run(|| decomp::det(&self.t))?)
    }
    fn logdet(&self, py: Python<'_>) -> Out {
        to_py(py, run(|| decomp::logdet(&self.t))?)
    }
    fn slogdet(&self, py: Python<'_>) -> Out {
        let (sign, logabs) = run(|| decomp::slogdet(&self.t))?;
        values_indices(py, "slogdet", sign, logabs)
    }
    fn _linalg_slogdet(&self, py: Python<'_>) -> Out {
        let (sign, logabs) = run(|| decomp::slogdet(&self.t))?;
        values_indices(py, "linalg_slogdet", sign, logabs)
    }
    #[pyo3(signature = (check_errors=false))]
    fn _linalg_inv_ex(&self, py: Python<'_>, check_errors: bool) -> Out {
        let (inv, info) = run(|| decomp::inv_ex(&self.t, check_errors))?;
        values_indices(py, "linalg_inv_ex", inv, info)
    }
    #[pyo3(signature = (b, left=true, check_errors=false))]
    fn _linalg_solve_ex(&self, py: Python<'_>, b: &Obj<'_>, left: bool, check_errors: bool) -> Out {
        let b = extract_tensor(b, "linalg_solve(): argument 'B' (position 2)")?;
        let (x, info) = run(|| decomp::solve_ex(&self.t, &b, left, check_errors))?;
        values_indices(py, "linalg_solve_ex", x, info)
    }
    #[pyo3(signature = (b, left=true))]
    fn _linalg_solve(&self, py: Python<'_>, b: &Obj<'_>, left: bool) -> Out {
        let b = extract_tensor(b, "linalg_solve(): argument 'B' (position 2)")?;
        to_py(py, run(|| decomp::solve(&self.t, &b, left))?)
    }
    #[pyo3(signature = (upper=false))]
    fn _linalg_cholesky(&self, py: Python<'_>, upper: bool) -> Out {
        to_py(py, run(|| decomp::cholesky(&self.t, upper))?)
    }
    #[pyo3(signature = (b, upper, left=true, unitriangular=false))]
    fn _linalg_solve_triangular(
        &self,
        py: Python<'_>,
        b: &Obj<'_>,
        upper: bool,
        left: bool,
        unitriangular: bool,
    ) -> Out {
        let b = extract_tensor(b, "linalg_solve_triangular(): argument 'B' (position 2)")?;
        to_py(
            py,
            run(|| decomp::solve_triangular(&self.t, &b, upper, left, unitriangular))?,
        )
    }
    #[pyo3(signature = (upper=false, check_errors=false))]
    fn _linalg_cholesky_ex(&self, py: Python<'_>, upper: bool, check_errors: bool) -> Out {
        let (l, info) = run(|| decomp::cholesky_ex(&self.t, upper, check_errors))?;
        values_indices(py, "linalg_cholesky_ex", l, info)
    }
    #[pyo3(signature = (uplo="L"))]
    fn _linalg_eigh(&self, py: Python<'_>, uplo: &str) -> Out {
        let (w, v) = run(|| decomp::eigh(&self.t, uplo))?;
        values_indices(py, "linalg_eigh", w, v)
    }
    #[pyo3(signature = (uplo="L"))]
    fn _linalg_eigvalsh(&self, py: Python<'_>, uplo: &str) -> Out {
        to_py(py, run(|| decomp::eigvalsh(&self.t, uplo))?)
    }
    /// `(U, S, Vh)` as a plain tuple (python/ferrograd/linalg.py names it).
    #[pyo3(signature = (full_matrices=true))]
    fn _linalg_svd(&self, py: Python<'_>, full_matrices: bool) -> Out {
        let (u, s, vh) = run(|| decomp::svd(&self.t, full_matrices))?;
        tuple_of(py, vec![u, s, vh])
    }
    fn _linalg_svdvals(&self, py: Python<'_>) -> Out {
        to_py(py, run(|| decomp::svdvals(&self.t))?)
    }
    #[pyo3(signature = (mode="reduced"))]
    fn _linalg_qr(&self, py: Python<'_>, mode: &str) -> Out {
        let (q, r) = run(|| decomp::qr(&self.t, mode))?;
        values_indices(py, "linalg_qr", q, r)
    }
    #[pyo3(signature = (atol=None, rtol=None, hermitian=false))]
    fn _linalg_pinv(
        &self,
        py: Python<'_>,
        atol: Option<f64>,
        rtol: Option<f64>,
        hermitian: bool,
    ) -> Out {
        to_py(py, run(|| decomp::pinv(&self.t, atol, rtol, hermitian))?)
    }
    /// `linalg.pinv` with tensor tolerances (python/ferrograd/linalg.py picks it).
    #[pyo3(signature = (atol=None, rtol=None, hermitian=false))]
    fn _linalg_pinv_tensors(
        &self,
        py: Python<'_>,
        atol: Option<&Obj<'_>>,
        rtol: Option<&Obj<'_>>,
        hermitian: bool,
    ) -> Out {
        let atol = atol
            .map(|t| extract_tensor(t, "linalg_pinv(): argument 'atol'"))
            .transpose()?;
        let rtol = rtol
            .map(|t| extract_tensor(t, "linalg_pinv(): argument 'rtol'"))
            .transpose()?;
        let out = run(|| decomp::pinv_tensors(&self.t, atol.as_ref(), rtol.as_ref(), hermitian))?;
        to_py(py, out)
    }
    #[pyo3(signature = (input2, upper=false))]
    fn cholesky_solve(&self, py: Python<'_>, input2: &Obj<'_>, upper: bool) -> Out {
        let l = extract_tensor(input2, "cholesky_solve(): argument 'input2' (position 1)")?;
        to_py(py, run(|| decomp::cholesky_solve(&self.t, &l, upper))?)
    }
    #[pyo3(signature = (upper=false))]
    fn cholesky_inverse(&self, py: Python<'_>, upper: bool) -> Out {
        to_py(py, run(|| decomp::cholesky_inverse(&self.t, upper))?)
    }
    fn matrix_exp(&self, py: Python<'_>) -> Out {
        to_py(py, run(|| decomp::matrix_exp(&self.t))?)
    }
    /// `(solution, residuals, rank, singular_values)` as a plain tuple
    /// (python/ferrograd/linalg.py names it).
    #[pyo3(signature = (b, rcond=None, driver=None))]
    fn _linalg_lstsq(
        &self,
        py: Python<'_>,
        b: &Obj<'_>,
        rcond: Option<f64>,
        driver: Option<&str>,
    ) -> Out {
        let b = extract_tensor(b, "linalg_lstsq(): argument 'b' (position 2)")?;
        let (x, res, rank, s) = run(|| decomp::lstsq(&self.t, &b, rcond, driver))?;
        tuple_of(py, vec![x, res, rank, s])
    }
    fn _linalg_eig(&self, py: Python<'_>) -> Out {
        let (w, v) = run(|| decomp::eig(&self.t))?;
        values_indices(py, "linalg_eig", w, v)
    }
    fn _linalg_eigvals(&self, py: Python<'_>) -> Out {
        to_py(py, run(|| decomp::eigvals(&self.t))?)
    }
    fn orgqr(&self, py: Python<'_>, input2: &Obj<'_>) -> Out {
        let tau = extract_tensor(input2, "orgqr(): argument 'input2' (position 1)")?;
        to_py(py, run(|| decomp::householder_product(&self.t, &tau))?)
    }
}
