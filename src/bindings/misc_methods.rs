//! `Tensor` methods of issue 11's ternary ops (lerp, addcmul, addcdiv and their in-place
//! forms), scans (cumprod, cummax, cummin, logcumsumexp) and nan-reductions (nansum,
//! nanmean, aminmax). `ferrograd.op(input, ...)` is the same method
//! (python/ferrograd/_functional.py).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::bindings::convert::*;
use crate::bindings::errors::run;
use crate::bindings::tensor::{to_py, values_indices, PyTensor};
use crate::dtype::Scalar;
use crate::ops::reduce::Extreme;
use crate::ops::ternary::{self, Weight};
use crate::ops::{cumulative, nan_reduce};
use crate::tensor::Tensor;

type Obj<'py> = Bound<'py, PyAny>;
type Out = PyResult<Py<PyAny>>;

fn type_name(o: &Obj<'_>) -> String {
    o.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default()
}

/// lerp's operands: `end` a tensor, `weight` a tensor or a Python number (else torch's
/// overload error).
fn lerp_args(op: &str, end: &Obj<'_>, weight: &Obj<'_>) -> PyResult<(Tensor, LerpWeight)> {
    let w = match as_tensor_ref(weight) {
        Some(w) => Some(LerpWeight::Tensor(w)),
        None => as_scalar(weight).map(LerpWeight::Scalar),
    };
    match (as_tensor_ref(end), w) {
        (Some(end), Some(w)) => Ok((end, w)),
        _ => Err(PyTypeError::new_err(format!(
            "{op}() received an invalid combination of arguments - got ({}, {}), but expected one of:\n * (Tensor end, Tensor weight)\n * (Tensor end, Number weight)\n",
            type_name(end),
            type_name(weight)
        ))),
    }
}

/// An owned weight (the core's `Weight` borrows its tensor).
enum LerpWeight {
    Scalar(Scalar),
    Tensor(Tensor),
}

impl LerpWeight {
    fn as_weight(&self) -> Weight<'_> {
        match self {
            LerpWeight::Scalar(s) => Weight::Scalar(*s),
            LerpWeight::Tensor(t) => Weight::Tensor(t),
        }
    }
}

/// addcmul / addcdiv's operands: two tensors and the keyword `value` (default 1).
fn addc_args(
    op: &str,
    tensor1: &Obj<'_>,
    tensor2: &Obj<'_>,
    value: Option<&Obj<'_>>,
) -> PyResult<(Tensor, Tensor, Scalar)> {
    let t1 = extract_tensor(tensor1, &format!("{op}(): argument 'tensor1' (position 1)"))?;
    let t2 = extract_tensor(tensor2, &format!("{op}(): argument 'tensor2' (position 2)"))?;
    let value = match value {
        None => Scalar::Int(1),
        Some(v) => as_scalar(v).ok_or_else(|| {
            PyTypeError::new_err(format!(
                "{op}(): argument 'value' must be Number, not {}",
                type_name(v)
            ))
        })?,
    };
    Ok((t1, t2, value))
}

type NanReduceFn =
    fn(&Tensor, Option<&[i64]>, bool, Option<crate::dtype::DType>) -> crate::error::Result<Tensor>;

/// nansum / nanmean with their `(dim, keepdim, dtype)` arguments.
fn nan_reduction(
    py: Python<'_>,
    t: &Tensor,
    (dim, keepdim, dtype): (Option<&Obj<'_>>, bool, Option<&Obj<'_>>),
    f: NanReduceFn,
) -> Out {
    let (dims, dtype) = (opt_dims(dim)?, opt_dtype(dtype)?);
    to_py(py, run(|| f(t, dims.as_deref(), keepdim, dtype))?)
}

/// The ternary ops: each method and its in-place form.
macro_rules! addc_methods {
    ($($name:ident $inplace:ident: divide $divide:literal;)*) => {
        #[pymethods]
        impl PyTensor {
            $(#[pyo3(signature = (tensor1, tensor2, *, value=None))]
            fn $name(
                &self,
                py: Python<'_>,
                tensor1: &Obj<'_>,
                tensor2: &Obj<'_>,
                value: Option<&Obj<'_>>,
            ) -> Out {
                let (t1, t2, v) = addc_args(stringify!($name), tensor1, tensor2, value)?;
                to_py(py, run(|| ternary::addc(&self.t, &t1, &t2, v, $divide))?)
            }
            #[pyo3(signature = (tensor1, tensor2, *, value=None))]
            fn $inplace<'py>(
                slf: Bound<'py, Self>,
                tensor1: &Obj<'py>,
                tensor2: &Obj<'py>,
                value: Option<&Obj<'py>>,
            ) -> PyResult<Bound<'py, Self>> {
                let (t1, t2, v) = addc_args(stringify!($inplace), tensor1, tensor2, value)?;
                run(|| ternary::addc_(&slf.get().t, &t1, &t2, v, $divide))?;
                Ok(slf)
            })*
        }
    };
}

addc_methods! {
    addcmul addcmul_: divide false;
    addcdiv addcdiv_: divide true;
}

#[pymethods]
impl PyTensor {
    fn lerp(&self, py: Python<'_>, end: &Obj<'_>, weight: &Obj<'_>) -> Out {
        let (end, w) = lerp_args("lerp", end, weight)?;
        to_py(py, run(|| ternary::lerp(&self.t, &end, w.as_weight()))?)
    }
    fn lerp_<'py>(
        slf: Bound<'py, Self>,
        end: &Obj<'py>,
        weight: &Obj<'py>,
    ) -> PyResult<Bound<'py, Self>> {
        let (end, w) = lerp_args("lerp_", end, weight)?;
        run(|| ternary::lerp_(&slf.get().t, &end, w.as_weight()))?;
        Ok(slf)
    }
    #[pyo3(signature = (dim, *, dtype=None))]
    fn cumprod(&self, py: Python<'_>, dim: i64, dtype: Option<&Obj<'_>>) -> Out {
        let dtype = opt_dtype(dtype)?;
        to_py(py, run(|| cumulative::cumprod(&self.t, dim, dtype))?)
    }
    fn cummax(&self, py: Python<'_>, dim: i64) -> Out {
        let (v, i) = run(|| cumulative::cummax(&self.t, dim, Extreme::Max))?;
        values_indices(py, "cummax", v, i)
    }
    fn cummin(&self, py: Python<'_>, dim: i64) -> Out {
        let (v, i) = run(|| cumulative::cummax(&self.t, dim, Extreme::Min))?;
        values_indices(py, "cummin", v, i)
    }
    fn logcumsumexp(&self, py: Python<'_>, dim: i64) -> Out {
        to_py(py, run(|| cumulative::logcumsumexp(&self.t, dim))?)
    }
    #[pyo3(signature = (dim=None, keepdim=false, *, dtype=None))]
    fn nansum(
        &self,
        py: Python<'_>,
        dim: Option<&Obj<'_>>,
        keepdim: bool,
        dtype: Option<&Obj<'_>>,
    ) -> Out {
        nan_reduction(py, &self.t, (dim, keepdim, dtype), nan_reduce::nansum)
    }
    #[pyo3(signature = (dim=None, keepdim=false, *, dtype=None))]
    fn nanmean(
        &self,
        py: Python<'_>,
        dim: Option<&Obj<'_>>,
        keepdim: bool,
        dtype: Option<&Obj<'_>>,
    ) -> Out {
        nan_reduction(py, &self.t, (dim, keepdim, dtype), nan_reduce::nanmean)
    }
    #[pyo3(signature = (*, dim=None, keepdim=false))]
    fn aminmax(&self, py: Python<'_>, dim: Option<i64>, keepdim: bool) -> Out {
        let (min, max) = run(|| nan_reduce::aminmax(&self.t, dim, keepdim))?;
        values_indices(py, "aminmax", min, max)
    }
}
