//! Hand-written `Tensor` methods for ops whose arguments fit no op-table kind:
//! reductions with their own overloads (amax, argmax, prod, logsumexp, var/std),
//! softmax, cumsum, flip and round. `ferrograd.op(input, ...)` is the same method
//! (python/ferrograd/_functional.py).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::bindings::convert::*;
use crate::bindings::errors::run;
use crate::bindings::tensor::{to_py, tuple_of, PyTensor};
use crate::kernels::kinds::Bitwise;
use crate::kernels::kinds::Rounding;
use crate::ops::reduce::Extreme;
use crate::ops::{bitwise, extrema, index, prod, rounding, scan, shape, softmax, stats};
use crate::tensor::Tensor;

type Obj<'py> = Bound<'py, PyAny>;
type Out = PyResult<Py<PyAny>>;

/// A dim argument that must be given: one int, or a tuple/list of them.
fn dims_arg(dim: &Obj<'_>) -> PyResult<Vec<i64>> {
    Ok(opt_dims(Some(dim))?.unwrap_or_default())
}

/// var / std's overloads: `(dim=None, *, correction=None, keepdim=False)`,
/// `(dim, unbiased, keepdim=False)` and `(unbiased)`; returns (dims, correction,
/// keepdim).
fn moments_args(
    dim: Option<&Obj<'_>>,
    unbiased: Option<bool>,
    keepdim: bool,
    correction: Option<&Obj<'_>>,
) -> PyResult<(Option<Vec<i64>>, f64, bool)> {
    // `var(True)`: the bool is `unbiased`, not a dim.
    let (dim, unbiased) = match dim {
        Some(d) if d.is_instance_of::<pyo3::types::PyBool>() => (None, Some(d.extract::<bool>()?)),
        d => (d, unbiased),
    };
    let correction = match (correction, unbiased) {
        (Some(c), None) if !c.is_none() => c.extract::<f64>()?,
        (Some(c), Some(_)) if !c.is_none() => {
            return Err(PyTypeError::new_err(
                "var(): cannot specify both unbiased and correction",
            ))
        }
        (_, Some(false)) => 0.0,
        _ => 1.0,
    };
    Ok((opt_dims(dim)?, correction, keepdim))
}

fn moments(
    py: Python<'_>,
    t: &Tensor,
    args: (Option<Vec<i64>>, f64, bool),
    std: bool,
    with_mean: bool,
) -> Out {
    let (dims, correction, keepdim) = args;
    let mut out = run(|| stats::moments(t, dims.as_deref(), correction, keepdim, std, with_mean))?;
    if with_mean {
        return tuple_of(py, out);
    }
    to_py(py, out.swap_remove(0))
}

/// var / std and the two with the mean (torch has `var_mean` / `std_mean` as module
/// functions only: `_var_mean` / `_std_mean` stand behind them in _functional.py).
macro_rules! moments_methods {
    ($($name:ident: std $std:literal, mean $mean:literal;)*) => {
        #[pymethods]
        impl PyTensor {
            $(#[pyo3(signature = (dim=None, unbiased=None, keepdim=false, *, correction=None))]
            fn $name(
                &self,
                py: Python<'_>,
                dim: Option<&Obj<'_>>,
                unbiased: Option<bool>,
                keepdim: bool,
                correction: Option<&Obj<'_>>,
            ) -> Out {
                let args = moments_args(dim, unbiased, keepdim, correction)?;
                moments(py, &self.t, args, $std, $mean)
            })*
        }
    };
}

moments_methods! {
    var: std false, mean false;
    std: std true, mean false;
    _var_mean: std false, mean true;
    _std_mean: std true, mean true;
}

#[pymethods]
impl PyTensor {
    #[pyo3(signature = (dim=None, keepdim=false))]
    fn amax(&self, py: Python<'_>, dim: Option<&Obj<'_>>, keepdim: bool) -> Out {
        let dims = opt_dims(dim)?;
        to_py(
            py,
            run(|| extrema::amax(&self.t, Extreme::Max, dims.as_deref(), keepdim))?,
        )
    }
    #[pyo3(signature = (dim=None, keepdim=false))]
    fn amin(&self, py: Python<'_>, dim: Option<&Obj<'_>>, keepdim: bool) -> Out {
        let dims = opt_dims(dim)?;
        to_py(
            py,
            run(|| extrema::amax(&self.t, Extreme::Min, dims.as_deref(), keepdim))?,
        )
    }
    #[pyo3(signature = (dim=None, keepdim=false))]
    fn argmax(&self, py: Python<'_>, dim: Option<i64>, keepdim: bool) -> Out {
        to_py(
            py,
            run(|| extrema::arg_extreme(&self.t, Extreme::Max, dim, keepdim))?,
        )
    }
    #[pyo3(signature = (dim=None, keepdim=false))]
    fn argmin(&self, py: Python<'_>, dim: Option<i64>, keepdim: bool) -> Out {
        to_py(
            py,
            run(|| extrema::arg_extreme(&self.t, Extreme::Min, dim, keepdim))?,
        )
    }
    #[pyo3(signature = (dim=None, keepdim=false, *, dtype=None))]
    fn prod(
        &self,
        py: Python<'_>,
        dim: Option<i64>,
        keepdim: bool,
        dtype: Option<&Obj<'_>>,
    ) -> Out {
        let dtype = opt_dtype(dtype)?;
        to_py(py, run(|| prod::prod(&self.t, dim, keepdim, dtype))?)
    }
    #[pyo3(signature = (dim, keepdim=false))]
    fn logsumexp(&self, py: Python<'_>, dim: &Obj<'_>, keepdim: bool) -> Out {
        let dims = dims_arg(dim)?;
        to_py(py, run(|| softmax::logsumexp(&self.t, &dims, keepdim))?)
    }
    #[pyo3(signature = (dim, dtype=None))]
    fn softmax(&self, py: Python<'_>, dim: i64, dtype: Option<&Obj<'_>>) -> Out {
        let dtype = opt_dtype(dtype)?;
        to_py(py, run(|| softmax::softmax(&self.t, dim, false, dtype))?)
    }
    #[pyo3(signature = (dim, dtype=None))]
    fn log_softmax(&self, py: Python<'_>, dim: i64, dtype: Option<&Obj<'_>>) -> Out {
        let dtype = opt_dtype(dtype)?;
        to_py(py, run(|| softmax::softmax(&self.t, dim, true, dtype))?)
    }
    #[pyo3(signature = (dim, *, dtype=None))]
    fn cumsum(&self, py: Python<'_>, dim: i64, dtype: Option<&Obj<'_>>) -> Out {
        let dtype = opt_dtype(dtype)?;
        to_py(py, run(|| scan::cumsum(&self.t, dim, dtype))?)
    }
    /// `flip(dims)`, `flip(0, 1)` or `flip([0, 1])`.
    #[pyo3(signature = (*dims))]
    fn flip(&self, py: Python<'_>, dims: &Bound<'_, PyTuple>) -> Out {
        let dims = int_list(dims)?;
        to_py(py, run(|| shape::flip(&self.t, &dims))?)
    }
    fn fliplr(&self, py: Python<'_>) -> Out {
        if self.t.dim() < 2 {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "Input must be >= 2-d.",
            ));
        }
        to_py(py, run(|| shape::flip(&self.t, &[1]))?)
    }
    fn flipud(&self, py: Python<'_>) -> Out {
        if self.t.dim() < 1 {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "Input must be >= 1-d.",
            ));
        }
        to_py(py, run(|| shape::flip(&self.t, &[0]))?)
    }
    fn movedim(&self, py: Python<'_>, source: &Obj<'_>, destination: &Obj<'_>) -> Out {
        let (src, dst) = (dims_arg(source)?, dims_arg(destination)?);
        to_py(py, run(|| shape::movedim(&self.t, &src, &dst))?)
    }
    fn moveaxis(&self, py: Python<'_>, source: &Obj<'_>, destination: &Obj<'_>) -> Out {
        self.movedim(py, source, destination)
    }
    /// `round()` (ties to even) or `round(decimals=d)`.
    #[pyo3(signature = (*, decimals=None))]
    fn round(&self, py: Python<'_>, decimals: Option<i64>) -> Out {
        let r = decimals.map_or(Rounding::Nearest, Rounding::Decimals);
        to_py(py, run(|| rounding::round(&self.t, r))?)
    }
    fn gather(&self, py: Python<'_>, dim: i64, index: &Obj<'_>) -> Out {
        let index = extract_tensor(index, "gather(): argument 'index' (position 2)")?;
        to_py(py, run(|| index::gather(&self.t, dim, &index))?)
    }
    /// `scatter(dim, index, src)` or `scatter(dim, index, value)`.
    #[pyo3(signature = (dim, index, src=None, *, value=None))]
    fn scatter(
        &self,
        py: Python<'_>,
        dim: i64,
        index: &Obj<'_>,
        src: Option<&Obj<'_>>,
        value: Option<&Obj<'_>>,
    ) -> Out {
        let index = extract_tensor(index, "scatter(): argument 'index' (position 2)")?;
        let (src, value) = scatter_operand(src.or(value), "scatter")?;
        to_py(
            py,
            run(|| index::scatter(&self.t, dim, &index, src.as_ref(), value, false))?,
        )
    }
    fn scatter_add(&self, py: Python<'_>, dim: i64, index: &Obj<'_>, src: &Obj<'_>) -> Out {
        let index = extract_tensor(index, "scatter_add(): argument 'index' (position 2)")?;
        let src = extract_tensor(src, "scatter_add(): argument 'src' (position 3)")?;
        to_py(
            py,
            run(|| index::scatter(&self.t, dim, &index, Some(&src), None, true))?,
        )
    }
    fn index_select(&self, py: Python<'_>, dim: i64, index: &Obj<'_>) -> Out {
        let index = extract_tensor(index, "index_select(): argument 'index' (position 2)")?;
        to_py(py, run(|| index::index_select(&self.t, dim, &index))?)
    }
    fn masked_fill(&self, py: Python<'_>, mask: &Obj<'_>, value: &Obj<'_>) -> Out {
        let mask = extract_tensor(mask, "masked_fill(): argument 'mask' (position 1)")?;
        if let Some(v) = as_tensor_ref(value) {
            return to_py(py, run(|| index::masked_fill_tensor(&self.t, &mask, &v))?);
        }
        let Some(value) = as_scalar(value) else {
            return Err(PyTypeError::new_err(format!(
                "masked_fill(): argument 'value' (position 2) must be Number, not {}",
                value.get_type().name()?
            )));
        };
        to_py(py, run(|| index::masked_fill(&self.t, &mask, value))?)
    }
    #[pyo3(signature = (diagonal=0))]
    fn tril(&self, py: Python<'_>, diagonal: i64) -> Out {
        to_py(py, run(|| shape::triangle(&self.t, diagonal, false))?)
    }
    #[pyo3(signature = (diagonal=0))]
    fn triu(&self, py: Python<'_>, diagonal: i64) -> Out {
        to_py(py, run(|| shape::triangle(&self.t, diagonal, true))?)
    }
    /// `repeat(2, 3)` or `repeat((2, 3))`.
    #[pyo3(signature = (*repeats))]
    fn repeat(&self, py: Python<'_>, repeats: &Bound<'_, PyTuple>) -> Out {
        if repeats.is_empty() {
            return Err(PyTypeError::new_err(
                "repeat() missing 1 required positional arguments: \"repeats\"",
            ));
        }
        let sizes = int_list(repeats)?;
        to_py(py, run(|| shape::repeat(&self.t, &sizes))?)
    }
    #[pyo3(signature = (*dims))]
    fn tile(&self, py: Python<'_>, dims: &Bound<'_, PyTuple>) -> Out {
        let dims = int_list(dims)?;
        to_py(py, run(|| shape::tile(&self.t, &dims))?)
    }
}

/// scatter's `src`: a tensor, or a number (the `value` overload).
pub(crate) fn scatter_operand(
    src: Option<&Obj<'_>>,
    op: &str,
) -> PyResult<(Option<Tensor>, Option<crate::dtype::Scalar>)> {
    let Some(src) = src else {
        return Err(PyTypeError::new_err(format!(
            "{op}() missing 1 required positional arguments: \"src\""
        )));
    };
    if let Some(t) = as_tensor_ref(src) {
        return Ok((Some(t), None));
    }
    match as_scalar(src) {
        Some(v) => Ok((None, Some(v))),
        None => Err(PyTypeError::new_err(format!(
            "{op}(): argument 'src' (position 3) must be Tensor, not {}",
            src.get_type().name()?
        ))),
    }
}

/// `a op other` for a tensor or Python number `other` (NotImplemented for anything
/// else, so Python tries the reflected operator); `reflected` computes `other op a`.
fn bitwise_op(py: Python<'_>, a: &Tensor, other: &Obj<'_>, op: Bitwise, reflected: bool) -> Out {
    let b = match as_operand(other) {
        Some(Operand::T(b)) => b,
        Some(Operand::S(s)) => crate::ops::binary::wrapped_scalar(a, s),
        None => return Ok(py.NotImplemented()),
    };
    let (x, y) = if reflected { (&b, a) } else { (a, &b) };
    to_py(py, run(|| bitwise::bitwise(x, y, op))?)
}

/// The tensor operand of a named bitwise / logical method (torch's error otherwise).
fn other_tensor(a: &Tensor, other: &Obj<'_>, op: &str) -> PyResult<Tensor> {
    match as_operand(other) {
        Some(Operand::T(b)) => Ok(b),
        Some(Operand::S(s)) => Ok(crate::ops::binary::wrapped_scalar(a, s)),
        None => Err(PyTypeError::new_err(format!(
            "{op}(): argument 'other' (position 1) must be Tensor, not {}",
            other.get_type().name()?
        ))),
    }
}

/// `t.op_(value)` for the ops torch gives no derivative: the value is written without
/// recording anything (see `inplace::write_untracked`).
fn write_back<'py>(slf: Bound<'py, PyTensor>, value: Tensor) -> PyResult<Bound<'py, PyTensor>> {
    run(|| crate::ops::inplace::write_untracked(&slf.get().t, &value))?;
    Ok(slf)
}

/// The bitwise and logical ops: each named method, its in-place form, its operator (and
/// the reflected and in-place ones).
macro_rules! bitwise_methods {
    ($($name:ident $ip:ident $dunder:ident $rdunder:ident $idunder:ident: $op:expr;)*) => {
        #[pymethods]
        impl PyTensor {
            $(fn $name(&self, py: Python<'_>, other: &Obj<'_>) -> Out {
                let b = other_tensor(&self.t, other, stringify!($name))?;
                to_py(py, run(|| bitwise::bitwise(&self.t, &b, $op))?)
            }
            fn $ip<'py>(slf: Bound<'py, Self>, other: &Obj<'py>) -> PyResult<Bound<'py, Self>> {
                let t = &slf.get().t;
                let b = other_tensor(t, other, stringify!($ip))?;
                run(|| crate::ops::inplace::check_result_cast(t, &b))?;
                let value = run(|| bitwise::bitwise(t, &b, $op))?;
                write_back(slf, value)
            }
            fn $dunder(&self, py: Python<'_>, other: &Obj<'_>) -> Out {
                bitwise_op(py, &self.t, other, $op, false)
            }
            fn $rdunder(&self, py: Python<'_>, other: &Obj<'_>) -> Out {
                bitwise_op(py, &self.t, other, $op, true)
            }
            fn $idunder<'py>(slf: Bound<'py, Self>, other: &Obj<'py>) -> PyResult<()> {
                Self::$ip(slf, other).map(|_| ())
            })*
        }
    };
}

bitwise_methods! {
    bitwise_and bitwise_and_ __and__ __rand__ __iand__: Bitwise::And;
    bitwise_or bitwise_or_ __or__ __ror__ __ior__: Bitwise::Or;
    bitwise_xor bitwise_xor_ __xor__ __rxor__ __ixor__: Bitwise::Xor;
    bitwise_left_shift bitwise_left_shift_ __lshift__ __rlshift__ __ilshift__: Bitwise::LeftShift;
    bitwise_right_shift bitwise_right_shift_ __rshift__ __rrshift__ __irshift__: Bitwise::RightShift;
}

macro_rules! logical_methods {
    ($($name:ident $ip:ident: $op:expr;)*) => {
        #[pymethods]
        impl PyTensor {
            $(fn $name(&self, py: Python<'_>, other: &Obj<'_>) -> Out {
                let b = other_tensor(&self.t, other, stringify!($name))?;
                to_py(py, run(|| bitwise::logical(&self.t, &b, $op))?)
            }
            fn $ip<'py>(slf: Bound<'py, Self>, other: &Obj<'py>) -> PyResult<Bound<'py, Self>> {
                let t = &slf.get().t;
                let b = other_tensor(t, other, stringify!($ip))?;
                let value = run(|| bitwise::logical(t, &b, $op))?;
                write_back(slf, value)
            })*
        }
    };
}

logical_methods! {
    logical_and logical_and_: Bitwise::And;
    logical_or logical_or_: Bitwise::Or;
    logical_xor logical_xor_: Bitwise::Xor;
}

#[pymethods]
impl PyTensor {
    fn bitwise_not(&self, py: Python<'_>) -> Out {
        to_py(py, run(|| bitwise::bitwise_not(&self.t))?)
    }
    fn bitwise_not_(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        let value = run(|| bitwise::bitwise_not(&slf.get().t))?;
        write_back(slf, value)
    }
    fn __invert__(&self, py: Python<'_>) -> Out {
        let d = self.t.dtype();
        if d.is_floating_point() || d.is_complex() {
            return Err(PyTypeError::new_err(
                "~ (operator.invert) is only implemented on integer and Boolean-type tensors",
            ));
        }
        self.bitwise_not(py)
    }
    fn logical_not(&self, py: Python<'_>) -> Out {
        to_py(py, run(|| bitwise::logical_not(&self.t))?)
    }
    fn logical_not_(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        let value = run(|| bitwise::logical_not(&slf.get().t))?;
        write_back(slf, value)
    }
}

// ---------------------------------------------------------------- special math (issue 11)

/// `other` of `//` and `%`: a tensor or a Python number (None: not ours, Python tries
/// the reflected operator).
fn division_operand(a: &Tensor, other: &Obj<'_>) -> Option<Tensor> {
    match as_operand(other)? {
        Operand::T(b) => Some(b),
        Operand::S(s) => Some(crate::ops::binary::wrapped_scalar(a, s)),
    }
}

/// `a // b`, `a % b` and their reflections; `reflected` computes `other op a`.
fn division_op(py: Python<'_>, a: &Tensor, other: &Obj<'_>, modulo: bool, reflected: bool) -> Out {
    use crate::kernels::kinds::BinaryMath;
    use crate::ops::binary_math as bm;
    let Some(op) = as_operand(other) else {
        return Ok(py.NotImplemented());
    };
    let r = match (op, modulo, reflected) {
        (Operand::S(s), true, false) => run(|| bm::binary_math_scalar(a, s, BinaryMath::Remainder)),
        (Operand::S(s), true, true) => {
            run(|| bm::binary_math_scalar_first(s, a, BinaryMath::Remainder))
        }
        (Operand::T(b), true, false) => run(|| bm::binary_math(a, &b, BinaryMath::Remainder)),
        (Operand::T(b), true, true) => run(|| bm::binary_math(&b, a, BinaryMath::Remainder)),
        (o, false, refl) => {
            let b = match o {
                Operand::T(b) => b,
                Operand::S(s) => crate::ops::binary::wrapped_scalar(a, s),
            };
            let (x, y) = if refl { (&b, a) } else { (a, &b) };
            run(|| bm::floor_divide(x, y))
        }
    };
    to_py(py, r?)
}

fn division_other(a: &Tensor, other: &Obj<'_>, op: &str) -> PyResult<Tensor> {
    division_operand(a, other).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "{op}(): argument 'other' (position 1) must be Tensor, not {}",
            other
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

#[pymethods]
impl PyTensor {
    fn __floordiv__(&self, py: Python<'_>, other: &Obj<'_>) -> Out {
        division_op(py, &self.t, other, false, false)
    }
    fn __rfloordiv__(&self, py: Python<'_>, other: &Obj<'_>) -> Out {
        division_op(py, &self.t, other, false, true)
    }
    fn __mod__(&self, py: Python<'_>, other: &Obj<'_>) -> Out {
        division_op(py, &self.t, other, true, false)
    }
    fn __rmod__(&self, py: Python<'_>, other: &Obj<'_>) -> Out {
        division_op(py, &self.t, other, true, true)
    }
    fn __ifloordiv__(&self, other: &Obj<'_>) -> PyResult<()> {
        let b = division_other(&self.t, other, "floor_divide_")?;
        run(|| crate::ops::binary_math::floor_divide_(&self.t, &b))
    }
    fn __imod__(&self, other: &Obj<'_>) -> PyResult<()> {
        let b = division_other(&self.t, other, "remainder_")?;
        let scalar = as_tensor_ref(other).is_none();
        run(|| {
            crate::ops::binary_math::binary_math_(
                &self.t,
                &b,
                crate::kernels::kinds::BinaryMath::Remainder,
                scalar,
            )
        })
    }
    fn floor_divide(&self, py: Python<'_>, other: &Obj<'_>) -> Out {
        let b = division_other(&self.t, other, "floor_divide")?;
        to_py(
            py,
            run(|| crate::ops::binary_math::floor_divide(&self.t, &b))?,
        )
    }
    fn floor_divide_<'py>(slf: Bound<'py, Self>, other: &Obj<'py>) -> PyResult<Bound<'py, Self>> {
        let t = slf.get().t.clone();
        let b = division_other(&t, other, "floor_divide_")?;
        run(|| crate::ops::binary_math::floor_divide_(&t, &b))?;
        Ok(slf)
    }
    fn polygamma(&self, py: Python<'_>, n: i64) -> Out {
        to_py(py, run(|| crate::ops::special::polygamma(n, &self.t))?)
    }
    fn polygamma_<'py>(slf: Bound<'py, Self>, n: i64) -> PyResult<Bound<'py, Self>> {
        run(|| crate::ops::special::polygamma_(n, &slf.get().t))?;
        Ok(slf)
    }
    #[pyo3(signature = (eps=None))]
    fn logit(&self, py: Python<'_>, eps: Option<f64>) -> Out {
        to_py(py, run(|| crate::ops::special::logit(&self.t, eps))?)
    }
    #[pyo3(signature = (eps=None))]
    fn logit_<'py>(slf: Bound<'py, Self>, eps: Option<f64>) -> PyResult<Bound<'py, Self>> {
        run(|| crate::ops::special::logit_(&slf.get().t, eps))?;
        Ok(slf)
    }
    #[pyo3(signature = (nan=0.0, posinf=None, neginf=None))]
    fn nan_to_num(
        &self,
        py: Python<'_>,
        nan: f64,
        posinf: Option<f64>,
        neginf: Option<f64>,
    ) -> Out {
        to_py(
            py,
            run(|| crate::ops::special::nan_to_num(&self.t, nan, posinf, neginf))?,
        )
    }
    #[pyo3(signature = (nan=0.0, posinf=None, neginf=None))]
    fn nan_to_num_<'py>(
        slf: Bound<'py, Self>,
        nan: f64,
        posinf: Option<f64>,
        neginf: Option<f64>,
    ) -> PyResult<Bound<'py, Self>> {
        run(|| crate::ops::special::nan_to_num_(&slf.get().t, nan, posinf, neginf))?;
        Ok(slf)
    }
}
