//! In-place methods whose arguments fit no op-table kind: `round_`, the scans, the
//! triangles, the scatters and the in-place views (`t_`, `squeeze_`, ...). Each calls its op's in-place form in `src/ops/`, which
//! records torch's node (`FloorBackward0`, `CumsumBackward0`, `ScatterBackward0`, ...).

use pyo3::prelude::*;

use crate::bindings::convert::*;
use crate::bindings::errors::run;
use crate::bindings::tensor::PyTensor;
use crate::bindings::tensor_ops::scatter_operand;
use crate::kernels::kinds::Rounding;
use crate::ops::{cumulative, index, rounding, scan, shape, view};

type Obj<'py> = Bound<'py, PyAny>;
type Slf<'py> = PyResult<Bound<'py, PyTensor>>;

#[pymethods]
impl PyTensor {
    #[pyo3(signature = (*, decimals=None))]
    fn round_(slf: Bound<'_, Self>, decimals: Option<i64>) -> Slf<'_> {
        let r = decimals.map_or(Rounding::Nearest, Rounding::Decimals);
        run(|| rounding::round_(&slf.get().t, r))?;
        Ok(slf)
    }
    #[pyo3(signature = (dim, *, dtype=None))]
    fn cumsum_<'py>(slf: Bound<'py, Self>, dim: i64, dtype: Option<&Obj<'py>>) -> Slf<'py> {
        let dtype = opt_dtype(dtype)?;
        run(|| scan::cumsum_(&slf.get().t, dim, dtype))?;
        Ok(slf)
    }
    #[pyo3(signature = (dim, *, dtype=None))]
    fn cumprod_<'py>(slf: Bound<'py, Self>, dim: i64, dtype: Option<&Obj<'py>>) -> Slf<'py> {
        let dtype = opt_dtype(dtype)?;
        run(|| cumulative::cumprod_(&slf.get().t, dim, dtype))?;
        Ok(slf)
    }
    #[pyo3(signature = (diagonal=0))]
    fn tril_(slf: Bound<'_, Self>, diagonal: i64) -> Slf<'_> {
        run(|| shape::triangle_(&slf.get().t, diagonal, false))?;
        Ok(slf)
    }
    #[pyo3(signature = (diagonal=0))]
    fn triu_(slf: Bound<'_, Self>, diagonal: i64) -> Slf<'_> {
        run(|| shape::triangle_(&slf.get().t, diagonal, true))?;
        Ok(slf)
    }
    /// `scatter_(dim, index, src)` or `scatter_(dim, index, value)`.
    #[pyo3(signature = (dim, index, src=None, *, value=None))]
    fn scatter_<'py>(
        slf: Bound<'py, Self>,
        dim: i64,
        index: &Obj<'py>,
        src: Option<&Obj<'py>>,
        value: Option<&Obj<'py>>,
    ) -> Slf<'py> {
        let index = extract_tensor(index, "scatter_(): argument 'index' (position 2)")?;
        let (src, value) = scatter_operand(src.or(value), "scatter_")?;
        run(|| index::scatter_(&slf.get().t, dim, &index, src.as_ref(), value, false))?;
        Ok(slf)
    }
    fn scatter_add_<'py>(
        slf: Bound<'py, Self>,
        dim: i64,
        index: &Obj<'py>,
        src: &Obj<'py>,
    ) -> Slf<'py> {
        let index = extract_tensor(index, "scatter_add_(): argument 'index' (position 2)")?;
        let src = extract_tensor(src, "scatter_add_(): argument 'src' (position 3)")?;
        run(|| index::scatter_(&slf.get().t, dim, &index, Some(&src), None, true))?;
        Ok(slf)
    }
    fn t_(slf: Bound<'_, Self>) -> Slf<'_> {
        run(|| view::t_(&slf.get().t))?;
        Ok(slf)
    }
    fn transpose_(slf: Bound<'_, Self>, dim0: i64, dim1: i64) -> Slf<'_> {
        run(|| view::transpose_(&slf.get().t, dim0, dim1))?;
        Ok(slf)
    }
    fn swapaxes_(slf: Bound<'_, Self>, axis0: i64, axis1: i64) -> Slf<'_> {
        Self::transpose_(slf, axis0, axis1)
    }
    fn swapdims_(slf: Bound<'_, Self>, dim0: i64, dim1: i64) -> Slf<'_> {
        Self::transpose_(slf, dim0, dim1)
    }
    fn unsqueeze_(slf: Bound<'_, Self>, dim: i64) -> Slf<'_> {
        run(|| view::unsqueeze_(&slf.get().t, dim))?;
        Ok(slf)
    }
    #[pyo3(signature = (dim=None))]
    fn squeeze_<'py>(slf: Bound<'py, Self>, dim: Option<&Obj<'py>>) -> Slf<'py> {
        let dims = opt_dims(dim)?;
        run(|| view::squeeze_(&slf.get().t, dims.as_deref()))?;
        Ok(slf)
    }
}
