//! `Tensor` methods of issue 11's norms, scatter_reduce, unfold and unique groups.
//! `linalg.vector_norm` is `Tensor._linalg_vector_norm`; torch.norm, Tensor.norm,
//! linalg.norm and linalg.matrix_norm are built on it in python/ferrograd/_norms.py.
//! `ferrograd.scatter_reduce` / `unique` / `unique_consecutive` are these methods
//! (python/ferrograd/_norms.py).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::bindings::convert::*;
use crate::bindings::errors::run;
use crate::bindings::tensor::{to_py, PyTensor};
use crate::ops::{norm, scatter_reduce as sr, unique, view};
use crate::tensor::Tensor;

type Obj<'py> = Bound<'py, PyAny>;
type Out = PyResult<Py<PyAny>>;

#[pymethods]
impl PyTensor {
    /// `dist(self, other, p=2)`: the p-norm of `self - other` (DistBackward0).
    #[pyo3(signature = (other, p=2.0))]
    fn dist(&self, py: Python<'_>, other: &Obj<'_>, p: f64) -> Out {
        let other = extract_tensor(other, "dist(): argument 'other' (position 1)")?;
        to_py(py, run(|| norm::dist(&self.t, &other, p))?)
    }
    /// `linalg.vector_norm(self, ord, dim, keepdim, dtype=)` (the Python wrapper checks
    /// that `ord` is a number, with torch's TypeError); `_op` names the caller in the
    /// dtype errors.
    #[pyo3(signature = (ord=2.0, dim=None, keepdim=false, *, dtype=None, _op="linalg.vector_norm"))]
    fn _linalg_vector_norm(
        &self,
        py: Python<'_>,
        ord: f64,
        dim: Option<&Obj<'_>>,
        keepdim: bool,
        dtype: Option<&Obj<'_>>,
        _op: &str,
    ) -> Out {
        let dims = opt_dims(dim)?;
        let dtype = opt_dtype(dtype)?;
        to_py(
            py,
            run(|| norm::vector_norm(&self.t, ord, dims.as_deref(), keepdim, dtype, _op))?,
        )
    }
    fn unfold(&self, py: Python<'_>, dimension: i64, size: i64, step: i64) -> Out {
        to_py(py, run(|| view::unfold(&self.t, dimension, size, step))?)
    }
    #[pyo3(signature = (dim, index, src, reduce, *, include_self=None))]
    fn scatter_reduce(
        &self,
        py: Python<'_>,
        dim: i64,
        index: &Obj<'_>,
        src: &Obj<'_>,
        reduce: &str,
        include_self: Option<&Obj<'_>>,
    ) -> Out {
        let (index, src, include) = reduce_args("scatter_reduce", index, src, include_self)?;
        to_py(
            py,
            run(|| sr::scatter_reduce(&self.t, dim, &index, &src, reduce, include))?,
        )
    }
    #[pyo3(signature = (dim, index, src, reduce, *, include_self=None))]
    fn scatter_reduce_<'py>(
        slf: Bound<'py, Self>,
        dim: i64,
        index: &Obj<'py>,
        src: &Obj<'py>,
        reduce: &str,
        include_self: Option<&Obj<'py>>,
    ) -> PyResult<Bound<'py, Self>> {
        let (index, src, include) = reduce_args("scatter_reduce_", index, src, include_self)?;
        run(|| sr::scatter_reduce_(&slf.get().t, dim, &index, &src, reduce, include))?;
        Ok(slf)
    }
    /// `sorted` is accepted: the values always come sorted (as torch's CPU unique).
    #[pyo3(signature = (sorted=true, return_inverse=false, return_counts=false, dim=None))]
    fn unique(
        &self,
        py: Python<'_>,
        sorted: bool,
        return_inverse: bool,
        return_counts: bool,
        dim: Option<i64>,
    ) -> Out {
        let _ = sorted;
        let out = run(|| unique::unique(&self.t, dim, false))?;
        unique_result(py, out, return_inverse, return_counts)
    }
    #[pyo3(signature = (return_inverse=false, return_counts=false, dim=None))]
    fn unique_consecutive(
        &self,
        py: Python<'_>,
        return_inverse: bool,
        return_counts: bool,
        dim: Option<i64>,
    ) -> Out {
        let out = run(|| unique::unique(&self.t, dim, true))?;
        unique_result(py, out, return_inverse, return_counts)
    }
}

/// scatter_reduce's tensors and `include_self` (a bool only, as torch's parser).
fn reduce_args(
    op: &str,
    index: &Obj<'_>,
    src: &Obj<'_>,
    include_self: Option<&Obj<'_>>,
) -> PyResult<(Tensor, Tensor, bool)> {
    let index = extract_tensor(index, &format!("{op}(): argument 'index' (position 2)"))?;
    let src = extract_tensor(src, &format!("{op}(): argument 'src' (position 3)"))?;
    let include = match include_self {
        None => true,
        Some(b) => b
            .cast::<pyo3::types::PyBool>()
            .map(|b| b.is_true())
            .map_err(|_| {
                let name = b
                    .get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default();
                PyTypeError::new_err(format!(
                    "{op}(): argument 'include_self' must be bool, not {name}"
                ))
            })?,
    };
    Ok((index, src, include))
}

/// The values alone, or a tuple with the inverse and / or counts asked for.
fn unique_result(
    py: Python<'_>,
    (values, inverse, counts): (Tensor, Tensor, Tensor),
    return_inverse: bool,
    return_counts: bool,
) -> Out {
    if !return_inverse && !return_counts {
        return to_py(py, values);
    }
    let mut items = vec![to_py(py, values)?];
    if return_inverse {
        items.push(to_py(py, inverse)?);
    }
    if return_counts {
        items.push(to_py(py, counts)?);
    }
    Ok(PyTuple::new(py, items)?.into_any().unbind())
}
