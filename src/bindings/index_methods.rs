//! `Tensor` methods of advanced indexing: index_put(_), index_fill(_), masked_fill_,
//! nonzero and argwhere. `ferrograd.op(input, ...)` is the same method
//! (python/ferrograd/_functional.py).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::bindings::convert::*;
use crate::bindings::errors::run;
use crate::bindings::tensor::{to_py, tuple_of, PyTensor};
use crate::dtype::Scalar;
use crate::ops::{advanced_index, index, index_write, view};
use crate::tensor::Tensor;

type Obj<'py> = Bound<'py, PyAny>;
type Out = PyResult<Py<PyAny>>;

/// index_put's `indices`: a tuple or list of tensors (or None).
fn indices_arg(indices: &Obj<'_>, name: &str) -> PyResult<Vec<Option<Tensor>>> {
    let bad = || {
        PyTypeError::new_err(format!(
            "{name}(): argument 'indices' (position 1) must be tuple of Tensors, not {}",
            indices
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    };
    if !(indices.is_instance_of::<PyTuple>() || indices.is_instance_of::<PyList>()) {
        return Err(bad());
    }
    let mut out = Vec::new();
    for item in indices.try_iter()? {
        let item = item?;
        if item.is_none() {
            out.push(None);
        } else {
            out.push(Some(as_tensor_ref(&item).ok_or_else(bad)?));
        }
    }
    Ok(out)
}

fn number_arg(value: &Obj<'_>, what: &str) -> PyResult<Scalar> {
    as_scalar(value).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "{what} must be Number, not {}",
            value
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

/// index_add / index_copy's tensors and alpha (1 when not given).
fn write_args(
    index: &Obj<'_>,
    source: &Obj<'_>,
    alpha: Option<&Obj<'_>>,
    name: &str,
) -> PyResult<(Tensor, Tensor, Scalar)> {
    let index = extract_tensor(index, &format!("{name}(): argument 'index' (position 2)"))?;
    let source = extract_tensor(source, &format!("{name}(): argument 'source' (position 3)"))?;
    let alpha = match alpha {
        Some(a) => number_arg(a, &format!("{name}(): argument 'alpha'"))?,
        None => Scalar::Int(1),
    };
    Ok((index, source, alpha))
}

#[pymethods]
impl PyTensor {
    #[pyo3(signature = (indices, values, accumulate=false))]
    fn index_put(
        &self,
        py: Python<'_>,
        indices: &Obj<'_>,
        values: &Obj<'_>,
        accumulate: bool,
    ) -> Out {
        let indices = indices_arg(indices, "index_put")?;
        let values = extract_tensor(values, "index_put(): argument 'values' (position 2)")?;
        to_py(
            py,
            run(|| advanced_index::index_put(&self.t, &indices, &values, accumulate))?,
        )
    }
    #[pyo3(signature = (indices, values, accumulate=false))]
    fn index_put_<'py>(
        slf: Bound<'py, Self>,
        indices: &Obj<'py>,
        values: &Obj<'py>,
        accumulate: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let indices = indices_arg(indices, "index_put_")?;
        let values = extract_tensor(values, "index_put_(): argument 'values' (position 2)")?;
        run(|| advanced_index::index_put_(&slf.get().t, &indices, &values, accumulate))?;
        Ok(slf)
    }
    fn index_fill(&self, py: Python<'_>, dim: i64, index: &Obj<'_>, value: &Obj<'_>) -> Out {
        let index = extract_tensor(index, "index_fill(): argument 'index' (position 2)")?;
        let out = match as_tensor_ref(value) {
            Some(v) => run(|| advanced_index::index_fill_tensor(&self.t, dim, &index, &v))?,
            None => {
                let value = number_arg(value, "index_fill(): argument 'value' (position 3)")?;
                run(|| advanced_index::index_fill(&self.t, dim, &index, value))?
            }
        };
        to_py(py, out)
    }
    fn index_fill_<'py>(
        slf: Bound<'py, Self>,
        dim: i64,
        index: &Obj<'py>,
        value: &Obj<'py>,
    ) -> PyResult<Bound<'py, Self>> {
        let index = extract_tensor(index, "index_fill_(): argument 'index' (position 2)")?;
        let x = &slf.get().t;
        match as_tensor_ref(value) {
            Some(v) => run(|| advanced_index::index_fill_tensor_(x, dim, &index, &v))?,
            None => {
                let value = number_arg(value, "index_fill_(): argument 'value' (position 3)")?;
                run(|| advanced_index::index_fill_(x, dim, &index, value))?
            }
        }
        Ok(slf)
    }
    fn masked_fill_<'py>(
        slf: Bound<'py, Self>,
        mask: &Obj<'py>,
        value: &Obj<'py>,
    ) -> PyResult<Bound<'py, Self>> {
        let mask = extract_tensor(mask, "masked_fill_(): argument 'mask' (position 1)")?;
        let x = &slf.get().t;
        match as_tensor_ref(value) {
            Some(v) => run(|| index::masked_fill_tensor_(x, &mask, &v))?,
            None => {
                let value = number_arg(value, "masked_fill_(): argument 'value' (position 2)")?;
                run(|| index::masked_fill_(x, &mask, value))?
            }
        }
        Ok(slf)
    }
    #[pyo3(signature = (dim, index, source, *, alpha=None))]
    fn index_add(
        &self,
        py: Python<'_>,
        dim: i64,
        index: &Obj<'_>,
        source: &Obj<'_>,
        alpha: Option<&Obj<'_>>,
    ) -> Out {
        let (index, source, alpha) = write_args(index, source, alpha, "index_add")?;
        to_py(
            py,
            run(|| index_write::index_add(&self.t, dim, &index, &source, alpha))?,
        )
    }
    #[pyo3(signature = (dim, index, source, *, alpha=None))]
    fn index_add_<'py>(
        slf: Bound<'py, Self>,
        dim: i64,
        index: &Obj<'py>,
        source: &Obj<'py>,
        alpha: Option<&Obj<'py>>,
    ) -> PyResult<Bound<'py, Self>> {
        let (index, source, alpha) = write_args(index, source, alpha, "index_add_")?;
        run(|| index_write::index_write_(&slf.get().t, dim, &index, &source, Some(alpha)))?;
        Ok(slf)
    }
    fn index_copy(&self, py: Python<'_>, dim: i64, index: &Obj<'_>, source: &Obj<'_>) -> Out {
        let (index, source, _) = write_args(index, source, None, "index_copy")?;
        to_py(
            py,
            run(|| index_write::index_copy(&self.t, dim, &index, &source))?,
        )
    }
    fn index_copy_<'py>(
        slf: Bound<'py, Self>,
        dim: i64,
        index: &Obj<'py>,
        source: &Obj<'py>,
    ) -> PyResult<Bound<'py, Self>> {
        let (index, source, _) = write_args(index, source, None, "index_copy_")?;
        run(|| index_write::index_write_(&slf.get().t, dim, &index, &source, None))?;
        Ok(slf)
    }
    fn take(&self, py: Python<'_>, index: &Obj<'_>) -> Out {
        let index = extract_tensor(index, "take(): argument 'index' (position 1)")?;
        to_py(py, run(|| index_write::take(&self.t, &index))?)
    }
    fn masked_select(&self, py: Python<'_>, mask: &Obj<'_>) -> Out {
        let mask = extract_tensor(mask, "masked_select(): argument 'mask' (position 1)")?;
        to_py(py, run(|| index_write::masked_select(&self.t, &mask))?)
    }
    fn masked_scatter(&self, py: Python<'_>, mask: &Obj<'_>, source: &Obj<'_>) -> Out {
        let mask = extract_tensor(mask, "masked_scatter(): argument 'mask' (position 1)")?;
        let source = extract_tensor(source, "masked_scatter(): argument 'source' (position 2)")?;
        to_py(
            py,
            run(|| index_write::masked_scatter(&self.t, &mask, &source))?,
        )
    }
    fn masked_scatter_<'py>(
        slf: Bound<'py, Self>,
        mask: &Obj<'py>,
        source: &Obj<'py>,
    ) -> PyResult<Bound<'py, Self>> {
        let mask = extract_tensor(mask, "masked_scatter_(): argument 'mask' (position 1)")?;
        let source = extract_tensor(source, "masked_scatter_(): argument 'source' (position 2)")?;
        run(|| index_write::masked_scatter_(&slf.get().t, &mask, &source))?;
        Ok(slf)
    }
    #[pyo3(signature = (*, as_tuple=false))]
    fn nonzero(&self, py: Python<'_>, as_tuple: bool) -> Out {
        if !as_tuple {
            return to_py(py, run(|| advanced_index::nonzero(&self.t))?);
        }
        // As torch, a 0-dim input counts as one element.
        let columns = run(|| {
            let line = if self.t.dim() == 0 {
                view::reshape(&self.t, &[1])?
            } else {
                self.t.clone()
            };
            view::unbind(&advanced_index::nonzero(&line)?, 1)
        })?;
        tuple_of(py, columns)
    }
    fn argwhere(&self, py: Python<'_>) -> Out {
        let out = run(|| advanced_index::argwhere(&self.t))?;
        crate::bindings::errors::flush_warnings(py)?;
        to_py(py, out)
    }
}
