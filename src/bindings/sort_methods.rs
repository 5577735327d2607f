//! `Tensor` methods of the sort family: sort, argsort, msort, topk, kthvalue, median,
//! nanmedian. `ferrograd.op(input, ...)` is the same method (python/ferrograd/_functional.py).

use pyo3::prelude::*;

use crate::bindings::errors::run;
use crate::bindings::factory_args::int_arg;
use crate::bindings::tensor::{to_py, values_indices, PyTensor};
use crate::ops::sort;

type Out = PyResult<Py<PyAny>>;

#[pymethods]
impl PyTensor {
    /// `stable` is accepted: this sort is always stable.
    #[pyo3(signature = (dim=-1, descending=false, *, stable=None))]
    fn sort(&self, py: Python<'_>, dim: i64, descending: bool, stable: Option<bool>) -> Out {
        let _ = stable;
        let (v, i) = run(|| sort::sort(&self.t, dim, descending))?;
        values_indices(py, "sort", v, i)
    }
    #[pyo3(signature = (dim=-1, descending=false, *, stable=None))]
    fn argsort(&self, py: Python<'_>, dim: i64, descending: bool, stable: Option<bool>) -> Out {
        let _ = stable;
        to_py(py, run(|| sort::sort(&self.t, dim, descending))?.1)
    }
    fn msort(&self, py: Python<'_>) -> Out {
        to_py(py, run(|| sort::sort(&self.t, 0, false))?.0)
    }
    #[pyo3(signature = (k, dim=-1, largest=true, sorted=true))]
    fn topk(
        &self,
        py: Python<'_>,
        k: &Bound<'_, PyAny>,
        dim: i64,
        largest: bool,
        sorted: bool,
    ) -> Out {
        // The values always come sorted, which `sorted=False` allows.
        let _ = sorted;
        let k = int_arg("topk", "k", 1, k)?;
        let (v, i) = run(|| sort::topk(&self.t, k, dim, largest))?;
        values_indices(py, "topk", v, i)
    }
    #[pyo3(signature = (k, dim=-1, keepdim=false))]
    fn kthvalue(&self, py: Python<'_>, k: &Bound<'_, PyAny>, dim: i64, keepdim: bool) -> Out {
        let k = int_arg("kthvalue", "k", 1, k)?;
        let (v, i) = run(|| sort::kthvalue(&self.t, k, dim, keepdim))?;
        values_indices(py, "kthvalue", v, i)
    }
    #[pyo3(signature = (dim=None, keepdim=false))]
    fn median(&self, py: Python<'_>, dim: Option<i64>, keepdim: bool) -> Out {
        median(py, &self.t, dim, keepdim, false)
    }
    #[pyo3(signature = (dim=None, keepdim=false))]
    fn nanmedian(&self, py: Python<'_>, dim: Option<i64>, keepdim: bool) -> Out {
        median(py, &self.t, dim, keepdim, true)
    }
}

fn median(
    py: Python<'_>,
    t: &crate::tensor::Tensor,
    dim: Option<i64>,
    keepdim: bool,
    ignore_nan: bool,
) -> Out {
    let Some(dim) = dim else {
        return to_py(py, run(|| sort::median_all(t, ignore_nan))?);
    };
    let (v, i) = run(|| sort::median_dim(t, dim, keepdim, ignore_nan))?;
    let name = if ignore_nan { "nanmedian" } else { "median" };
    values_indices(py, name, v, i)
}
