//! `Tensor` methods of the fused matrix products and the diagonal / rolling copies:
//! addmm, addmv, baddbmm, addbmm (and their in-place forms), vdot, cross, trace,
//! diag_embed, diag, diagflat, roll, rot90 and narrow_copy. `ferrograd.op(input, ...)`
//! is the same method (python/ferrograd/_functional.py); `ferrograd.linalg.cross` is
//! `cross` with its own default dim (python/ferrograd/linalg.py).

use std::sync::atomic::AtomicBool;

use pyo3::exceptions::PyUserWarning;
use pyo3::prelude::*;

use crate::bindings::convert::*;
use crate::bindings::errors::run;
use crate::bindings::tensor::{alpha_of, to_py, PyTensor};
use crate::ops::matrix_ops::{self as mat, Product};
use crate::ops::{diag, roll};

type Obj<'py> = Bound<'py, PyAny>;
type Out = PyResult<Py<PyAny>>;

/// An int or a sequence of ints (roll's shifts and dims, rot90's dims).
fn ints_arg(obj: &Obj<'_>) -> PyResult<Vec<i64>> {
    Ok(opt_dims(Some(obj))?.unwrap_or_default())
}

/// The four add-products and their in-place forms; `$a`/`$b` are torch's keyword names
/// of the factors.
macro_rules! add_product_methods {
    ($($name:ident $ip:ident ($a:ident, $b:ident): $product:expr;)*) => {
        #[pymethods]
        impl PyTensor {
            $(#[pyo3(signature = ($a, $b, *, beta=None, alpha=None))]
            fn $name(
                &self,
                py: Python<'_>,
                $a: &Obj<'_>,
                $b: &Obj<'_>,
                beta: Option<&Obj<'_>>,
                alpha: Option<&Obj<'_>>,
            ) -> Out {
                let what = concat!(stringify!($name), "(): argument '");
                let a = extract_tensor($a, &format!("{what}{}' (position 1)", stringify!($a)))?;
                let b = extract_tensor($b, &format!("{what}{}' (position 2)", stringify!($b)))?;
                let (beta, alpha) = (alpha_of(beta)?, alpha_of(alpha)?);
                to_py(py, run(|| mat::addproduct($product, &self.t, &a, &b, beta, alpha))?)
            }
            #[pyo3(signature = ($a, $b, *, beta=None, alpha=None))]
            fn $ip<'py>(
                slf: Bound<'py, Self>,
                $a: &Obj<'py>,
                $b: &Obj<'py>,
                beta: Option<&Obj<'py>>,
                alpha: Option<&Obj<'py>>,
            ) -> PyResult<Bound<'py, Self>> {
                let what = concat!(stringify!($ip), "(): argument '");
                let a = extract_tensor($a, &format!("{what}{}' (position 1)", stringify!($a)))?;
                let b = extract_tensor($b, &format!("{what}{}' (position 2)", stringify!($b)))?;
                let (beta, alpha) = (alpha_of(beta)?, alpha_of(alpha)?);
                run(|| mat::addproduct_($product, &slf.get().t, &a, &b, beta, alpha))?;
                Ok(slf)
            })*
        }
    };
}

add_product_methods! {
    addmm addmm_ (mat1, mat2): Product::Mm;
    addmv addmv_ (mat, vec): Product::Mv;
    baddbmm baddbmm_ (batch1, batch2): Product::Bmm;
    addbmm addbmm_ (batch1, batch2): Product::SumBmm;
}

/// torch warns once per process when torch.cross picks its dim itself.
static CROSS_DIM_WARNED: AtomicBool = AtomicBool::new(false);
const CROSS_DIM_WARNING: &str = "Using torch.cross without specifying the dim arg is deprecated.
Please either pass the dim explicitly or simply use torch.linalg.cross.
The default value of dim will change to agree with that of linalg.cross in a future release.";

#[pymethods]
impl PyTensor {
    fn vdot(&self, py: Python<'_>, other: &Obj<'_>) -> Out {
        let other = extract_tensor(other, "vdot(): argument 'other' (position 1)")?;
        to_py(py, run(|| mat::vdot(&self.t, &other))?)
    }
    /// `cross(other, dim=None)`: without a dim, the first dim of size 3 (deprecated in
    /// torch, with its warning).
    #[pyo3(signature = (other, dim=None))]
    fn cross(&self, py: Python<'_>, other: &Obj<'_>, dim: Option<i64>) -> Out {
        let other = extract_tensor(other, "cross(): argument 'other' (position 1)")?;
        let dim = match dim {
            Some(d) => d,
            None => {
                if crate::autograd::warnings::once_due(&CROSS_DIM_WARNED) {
                    let category = py.get_type::<PyUserWarning>();
                    let message = std::ffi::CString::new(CROSS_DIM_WARNING)?;
                    PyErr::warn(py, &category, &message, 1)?;
                }
                run(|| mat::default_cross_dim(&self.t))?
            }
        };
        to_py(py, run(|| mat::linalg_cross(&self.t, &other, dim))?)
    }
    fn trace(&self, py: Python<'_>) -> Out {
        to_py(py, run(|| mat::trace(&self.t))?)
    }
    #[pyo3(signature = (offset=0, dim1=-2, dim2=-1))]
    fn diag_embed(&self, py: Python<'_>, offset: i64, dim1: i64, dim2: i64) -> Out {
        to_py(py, run(|| diag::diag_embed(&self.t, offset, dim1, dim2))?)
    }
    #[pyo3(signature = (diagonal=0))]
    fn diag(&self, py: Python<'_>, diagonal: i64) -> Out {
        to_py(py, run(|| diag::diag(&self.t, diagonal))?)
    }
    #[pyo3(signature = (offset=0))]
    fn diagflat(&self, py: Python<'_>, offset: i64) -> Out {
        to_py(py, run(|| diag::diagflat(&self.t, offset))?)
    }
    #[pyo3(signature = (shifts, dims=None))]
    fn roll(&self, py: Python<'_>, shifts: &Obj<'_>, dims: Option<&Obj<'_>>) -> Out {
        let shifts = ints_arg(shifts)?;
        let dims = opt_dims(dims)?.unwrap_or_default();
        to_py(py, run(|| roll::roll(&self.t, &shifts, &dims))?)
    }
    #[pyo3(signature = (k=1, dims=None))]
    fn rot90(&self, py: Python<'_>, k: i64, dims: Option<&Obj<'_>>) -> Out {
        let dims = match dims {
            Some(d) => ints_arg(d)?,
            None => vec![0, 1],
        };
        to_py(py, run(|| roll::rot90(&self.t, k, &dims))?)
    }
    fn narrow_copy(&self, py: Python<'_>, dim: i64, start: i64, length: i64) -> Out {
        to_py(py, run(|| roll::narrow_copy(&self.t, dim, start, length))?)
    }
}
