//! Module-level functions of `ferrograd._C`: tensor construction, factories, `where`,
//! comparisons of whole tensors, the random seed.

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::bindings::convert::*;
use crate::bindings::device::{device_arg, DeviceUse};
use crate::bindings::errors::run;
use crate::bindings::factory_args::*;
use crate::bindings::random_methods::{
    default_generator, generator_arg, seed_value, set_state_from, state_tensor, PyGenerator,
};
use crate::bindings::tensor::to_py;
use crate::dtype::{default_float_dtype, DType, Scalar};
use crate::kernels::random::RngHandle;
use crate::ops::{binary, creation};
use crate::tensor::Tensor;

/// C1: factories check requires_grad with this text (requires_grad_() has another).
pub(crate) fn finish(py: Python<'_>, t: Tensor, requires_grad: bool) -> PyResult<Py<PyAny>> {
    if requires_grad {
        if !t.dtype().is_differentiable() {
            return Err(PyRuntimeError::new_err(
                "Only Tensors of floating point and complex dtype can require gradients",
            ));
        }
        run(|| t.set_requires_grad(true))?;
    }
    to_py(py, t)
}

#[pyfunction]
#[pyo3(signature = (data, *, dtype=None, device=None, requires_grad=false, pin_memory=false))]
pub fn tensor(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    pin_memory: bool,
) -> PyResult<Py<PyAny>> {
    let _ = pin_memory;
    device_arg(device, DeviceUse::copy("tensor"))?;
    let t = tensor_from_data(data, opt_dtype(dtype)?)?;
    finish(py, t, requires_grad)
}

#[pyfunction]
#[pyo3(signature = (data, dtype=None, device=None))]
pub fn as_tensor(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    device_arg(device, DeviceUse::copy("as_tensor"))?;
    let dtype = opt_dtype(dtype)?;
    if let Some(t) = as_tensor_ref(data) {
        if dtype.is_none_or(|d| d == t.dtype()) {
            return to_py(py, t);
        }
        return to_py(
            py,
            run(|| crate::ops::unary::to_dtype(&t, dtype.expect("checked")))?,
        );
    }
    if data.hasattr("__array_interface__")? {
        let t = from_numpy(data)?;
        if dtype.is_none_or(|d| d == t.dtype()) {
            return to_py(py, t);
        }
    }
    to_py(py, tensor_from_data(data, dtype)?)
}

#[pyfunction]
#[pyo3(name = "from_numpy")]
pub fn from_numpy_py(py: Python<'_>, arr: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let is_ndarray = py
        .import("numpy")
        .and_then(|np| arr.is_instance(&np.getattr("ndarray")?))
        .unwrap_or(false);
    if !is_ndarray {
        return Err(PyTypeError::new_err(format!(
            "expected np.ndarray (got {})",
            arr.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        )));
    }
    to_py(py, from_numpy(arr)?)
}

macro_rules! filled_factory {
    ($name:ident, $value:expr) => {
        #[pyfunction]
        #[pyo3(signature = (*size, dtype=None, device=None, requires_grad=false, layout=None, pin_memory=false, memory_format=None))]
        #[allow(clippy::too_many_arguments)]
        pub fn $name(
            py: Python<'_>,
            size: &Bound<'_, PyTuple>,
            dtype: Option<&Bound<'_, PyAny>>,
            device: Option<&Bound<'_, PyAny>>,
            requires_grad: bool,
            layout: Option<&Bound<'_, PyAny>>,
            pin_memory: bool,
            memory_format: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Py<PyAny>> {
            let _ = (layout, pin_memory, memory_format);
            device_arg(device, DeviceUse::alloc(stringify!($name)))?;
            let shape = size_arg(stringify!($name), size)?;
            let dtype = dtype_arg(stringify!($name), dtype)?.unwrap_or(default_float_dtype());
            let _range = crate::profiler::named_op_range(concat!("aten::", stringify!($name)), &[]);
            let t = run(|| creation::full(&shape, $value, dtype))?;
            finish(py, t, requires_grad)
        }
    };
}
filled_factory!(zeros, Scalar::Int(0));
filled_factory!(ones, Scalar::Int(1));
filled_factory!(empty, Scalar::Int(0));

macro_rules! random_factory {
    ($name:ident, $f:path) => {
        #[pyfunction]
        #[pyo3(signature = (*size, dtype=None, device=None, requires_grad=false, generator=None, layout=None))]
        pub fn $name(
            py: Python<'_>,
            size: &Bound<'_, PyTuple>,
            dtype: Option<&Bound<'_, PyAny>>,
            device: Option<&Bound<'_, PyAny>>,
            requires_grad: bool,
            generator: Option<&Bound<'_, PyAny>>,
            layout: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Py<PyAny>> {
            let _ = layout;
            device_arg(device, DeviceUse::alloc(stringify!($name)))?;
            let gen = generator_arg(stringify!($name), generator)?;
            let shape = size_arg(stringify!($name), size)?;
            let dtype = dtype_arg(stringify!($name), dtype)?.unwrap_or(default_float_dtype());
            let _range = crate::profiler::named_op_range(concat!("aten::", stringify!($name)), &[]);
            let t = run(|| $f(&shape, dtype, &gen))?;
            finish(py, t, requires_grad)
        }
    };
}
random_factory!(rand, creation::rand_from);
random_factory!(randn, creation::randn_from);

fn fill_dtype(v: Scalar) -> DType {
    v.default_dtype()
}

#[pyfunction]
#[pyo3(signature = (size, fill_value, *, dtype=None, device=None, requires_grad=false))]
pub fn full(
    py: Python<'_>,
    size: &Bound<'_, PyAny>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<Py<PyAny>> {
    device_arg(device, DeviceUse::alloc("full"))?;
    let shape = size_value("full", size, 1)?;
    let v = number_arg("full", 2, fill_value)?;
    let dtype = dtype_arg("full", dtype)?.unwrap_or(fill_dtype(v));
    check_fill(v, dtype)?;
    let _range = crate::profiler::named_op_range("aten::full", &[]);
    finish(py, run(|| creation::full(&shape, v, dtype))?, requires_grad)
}

/// `*_like` factories: same shape as `input` (and its dtype unless given).
macro_rules! like_factory {
    ($name:ident, $make:expr) => {
        #[pyfunction]
        #[pyo3(signature = (input, *, dtype=None, device=None, requires_grad=false, memory_format=None))]
        pub fn $name(
            py: Python<'_>,
            input: &Bound<'_, PyAny>,
            dtype: Option<&Bound<'_, PyAny>>,
            device: Option<&Bound<'_, PyAny>>,
            requires_grad: bool,
            memory_format: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Py<PyAny>> {
            let _range = crate::profiler::named_op_range(concat!("aten::", stringify!($name)), &[]);
            let how = DeviceUse::like(stringify!($name));
            like(py, input, dtype, (device, how), requires_grad, memory_format, $make)
        }
    };
}
like_factory!(zeros_like, |s, d| creation::full(s, Scalar::Int(0), d));
like_factory!(ones_like, |s, d| creation::full(s, Scalar::Int(1), d));
like_factory!(empty_like, |s, d| creation::full(s, Scalar::Int(0), d));
like_factory!(rand_like, creation::rand);
like_factory!(randn_like, creation::randn);

#[pyfunction]
#[pyo3(signature = (input, fill_value, *, dtype=None, device=None, requires_grad=false, memory_format=None))]
#[allow(clippy::too_many_arguments)]
pub fn full_like(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    memory_format: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let v = number_arg("full_like", 2, fill_value)?;
    let d = dtype_arg("full_like", dtype)?;
    if let Some(t) = as_tensor_ref(input) {
        check_fill(v, d.unwrap_or(t.dtype()))?;
    }
    like(
        py,
        input,
        dtype,
        (device, DeviceUse::like("full_like")),
        requires_grad,
        memory_format,
        move |s, d| creation::full(s, v, d),
    )
}

/// `*_like`: same shape (and dtype unless given); dense strides like the input.
fn like(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: (Option<&Bound<'_, PyAny>>, DeviceUse),
    requires_grad: bool,
    memory_format: Option<&Bound<'_, PyAny>>,
    make: impl Fn(&[usize], DType) -> crate::error::Result<Tensor>,
) -> PyResult<Py<PyAny>> {
    let _ = memory_format;
    device_arg(device.0, device.1)?;
    let fname = device.1.fname;
    let x = as_tensor_ref(input).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "{fname}(): argument 'input' (position 1) must be Tensor, not {}",
            crate::bindings::device::torch_type_name(input)
        ))
    })?;
    let dtype = dtype_arg(fname, dtype)?.unwrap_or(x.dtype());
    let t = run(|| make(&x.shape(), dtype))?;
    finish(py, t, requires_grad)
}

#[pyfunction]
#[pyo3(signature = (start, end=None, step=None, *, dtype=None, device=None, requires_grad=false))]
#[allow(clippy::too_many_arguments)]
pub fn arange(
    py: Python<'_>,
    start: &Bound<'_, PyAny>,
    end: Option<&Bound<'_, PyAny>>,
    step: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<Py<PyAny>> {
    device_arg(device, DeviceUse::alloc("arange"))?;
    let (s, e) = match end.filter(|e| !e.is_none()) {
        Some(e) => (arange_bound(start, "start", 1)?, arange_bound(e, "end", 2)?),
        None => (Scalar::Int(0), arange_bound(start, "end", 1)?),
    };
    let st = match step.filter(|st| !st.is_none()) {
        Some(st) => arange_bound(st, "step", 3)?,
        None => Scalar::Int(1),
    };
    let dtype = dtype_arg("arange", dtype)?;
    let all_int = [s, e, st]
        .iter()
        .all(|v| matches!(v, Scalar::Int(_) | Scalar::Bool(_)));
    let out_dtype = dtype.unwrap_or(if all_int {
        DType::I64
    } else {
        default_float_dtype()
    });
    check_arange(s, e, st, out_dtype)?;
    let _range = crate::profiler::named_op_range("aten::arange", &[]);
    finish(
        py,
        run(|| creation::arange(s, e, st, dtype))?,
        requires_grad,
    )
}

#[pyfunction]
#[pyo3(signature = (start, end, steps, *, dtype=None, device=None, requires_grad=false))]
#[allow(clippy::too_many_arguments)]
pub fn linspace(
    py: Python<'_>,
    start: f64,
    end: f64,
    steps: i64,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<Py<PyAny>> {
    device_arg(device, DeviceUse::alloc("linspace"))?;
    let dtype = dtype_arg("linspace", dtype)?.unwrap_or(default_float_dtype());
    if matches!(dtype, DType::Bool) {
        return Err(pyo3::exceptions::PyNotImplementedError::new_err(
            "\"linspace_cpu\" not implemented for 'Bool'",
        ));
    }
    let _range = crate::profiler::named_op_range("aten::linspace", &[]);
    finish(
        py,
        run(|| creation::linspace(start, end, steps, dtype))?,
        requires_grad,
    )
}

#[pyfunction]
#[pyo3(signature = (n, m=None, *, dtype=None, device=None, requires_grad=false))]
pub fn eye(
    py: Python<'_>,
    n: &Bound<'_, PyAny>,
    m: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<Py<PyAny>> {
    device_arg(device, DeviceUse::alloc("eye"))?;
    let n = int_arg("eye", "n", 1, n)?;
    let m = match m.filter(|m| !m.is_none()) {
        Some(m) => int_arg("eye", "m", 2, m)?,
        None => n,
    };
    for (name, v) in [("n", n), ("m", m)] {
        if v < 0 {
            return Err(PyRuntimeError::new_err(format!(
                "{name} must be greater or equal to 0, got {v}"
            )));
        }
    }
    let shape = to_shape(&[n, m])?;
    let dtype = dtype_arg("eye", dtype)?.unwrap_or(default_float_dtype());
    let _range = crate::profiler::named_op_range("aten::eye", &[]);
    finish(
        py,
        run(|| creation::eye(shape[0], shape[1], dtype))?,
        requires_grad,
    )
}

#[pyfunction]
#[pyo3(signature = (*args, dtype=None, device=None, requires_grad=false, generator=None))]
pub fn randint(
    py: Python<'_>,
    args: &Bound<'_, PyTuple>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    generator: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    device_arg(device, DeviceUse::alloc("randint"))?;
    let gen = generator_arg("randint", generator)?;
    let (low, high, size) = match args.len() {
        2 => (
            0,
            int_arg("randint", "high", 1, &args.get_item(0)?)?,
            size_value("randint", &args.get_item(1)?, 2)?,
        ),
        3 => (
            int_arg("randint", "low", 1, &args.get_item(0)?)?,
            int_arg("randint", "high", 2, &args.get_item(1)?)?,
            size_value("randint", &args.get_item(2)?, 3)?,
        ),
        _ => {
            return Err(PyTypeError::new_err(
                "randint() expects (high, size) or (low, high, size)",
            ))
        }
    };
    let shape = size;
    let dtype = dtype_arg("randint", dtype)?.unwrap_or(DType::I64);
    check_randint(low, high, dtype)?;
    let _range = crate::profiler::named_op_range("aten::randint", &[]);
    finish(
        py,
        run(|| creation::randint_from(low, high, &shape, dtype, &gen))?,
        requires_grad,
    )
}

/// `manual_seed(seed)`: seed the default generator; returns it, as torch.
#[pyfunction]
pub fn manual_seed(seed: &Bound<'_, PyAny>) -> PyResult<PyGenerator> {
    let g = default_generator();
    g.handle.manual_seed(seed_value(seed)?);
    Ok(g)
}

#[pyfunction]
pub fn initial_seed() -> u64 {
    crate::kernels::random::initial_seed()
}

/// `get_rng_state()`: the CPU generator's state as a uint8 tensor.
#[pyfunction]
pub fn get_rng_state(py: Python<'_>) -> PyResult<Py<PyAny>> {
    state_tensor(py, RngHandle::default_cpu())
}

/// `set_rng_state(state)`: restore a state `get_rng_state()` returned.
#[pyfunction]
pub fn set_rng_state(new_state: &Bound<'_, PyAny>) -> PyResult<()> {
    set_state_from(RngHandle::default_cpu(), new_state)
}

/// `where(condition, input, other)`; input/other may be Python numbers.
#[pyfunction]
#[pyo3(name = "where")]
pub fn where_py(
    py: Python<'_>,
    condition: &Bound<'_, PyAny>,
    input: &Bound<'_, PyAny>,
    other: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let c = extract_tensor(condition, "where(): argument 'condition'")?;
    let to_t = |o: &Bound<'_, PyAny>, peer: Option<&Tensor>| -> PyResult<Tensor> {
        match as_operand(o) {
            Some(Operand::T(t)) => Ok(t),
            Some(Operand::S(s)) => {
                let d = peer.map_or(s.default_dtype(), |p| {
                    crate::dtype::promote_with_scalar(p.dtype(), s)
                });
                Ok(Tensor::scalar(s, d))
            }
            None => Err(PyTypeError::new_err("where(): expected Tensor or Number")),
        }
    };
    let a0 = as_tensor_ref(input);
    let b0 = as_tensor_ref(other);
    let a = to_t(input, b0.as_ref())?;
    let b = to_t(other, a0.as_ref().or(Some(&a)))?;
    to_py(py, run(|| binary::where_(&c, &a, &b))?)
}

/// |a - b| <= atol + rtol * |b| everywhere (NaNs equal only with equal_nan).
#[pyfunction]
#[pyo3(signature = (input, other, rtol=1e-05, atol=1e-08, equal_nan=false))]
pub fn allclose(
    input: &Bound<'_, PyAny>,
    other: &Bound<'_, PyAny>,
    rtol: f64,
    atol: f64,
    equal_nan: bool,
) -> PyResult<bool> {
    let a = extract_tensor(input, "allclose(): argument 'input'")?;
    let b = extract_tensor(other, "allclose(): argument 'other'")?;
    if a.dtype() != b.dtype() {
        return Err(PyRuntimeError::new_err(format!(
            "{} did not match {}",
            a.dtype().scalar_type_name(),
            b.dtype().scalar_type_name()
        )));
    }
    let shape = run(|| crate::shape::broadcast_shapes(&a.shape(), &b.shape()))?;
    let ea = run(|| crate::ops::view::expand(&a.alias_detached(), &shape))?;
    let eb = run(|| crate::ops::view::expand(&b.alias_detached(), &shape))?;
    let (xa, xb) = (
        ea.to_vec::<num_complex::Complex64>(),
        eb.to_vec::<num_complex::Complex64>(),
    );
    Ok(xa.iter().zip(&xb).all(|(x, y)| {
        let nan = |v: &num_complex::Complex64| v.re.is_nan() || v.im.is_nan();
        if nan(x) || nan(y) {
            return equal_nan && nan(x) && nan(y);
        }
        if x == y {
            return true;
        }
        (x - y).norm() <= atol + rtol * y.norm()
    }))
}

#[pyfunction]
pub fn equal(input: &Bound<'_, PyAny>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
    let a = extract_tensor(input, "equal(): argument 'input'")?;
    let b = extract_tensor(other, "equal(): argument 'other'")?;
    if a.shape() != b.shape() {
        return Ok(false);
    }
    let eq = run(|| binary::compare(&a, &b, binary::Cmp::Eq))?;
    Ok(eq.to_vec::<bool>().iter().all(|&v| v))
}

#[pyfunction]
pub fn promote_types(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Py<crate::bindings::dtype::PyDType>> {
    Ok(crate::bindings::dtype::dtype_object(
        py,
        crate::dtype::promote_types(dtype_of(a)?, dtype_of(b)?),
    ))
}

/// The `tensors` argument of cat / stack: a list or tuple of tensors.
fn tensor_list(tensors: &Bound<'_, PyAny>, op: &str) -> PyResult<Vec<Tensor>> {
    if !(tensors.is_instance_of::<pyo3::types::PyList>()
        || tensors.is_instance_of::<pyo3::types::PyTuple>())
    {
        return Err(PyTypeError::new_err(format!(
            "{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not {}",
            tensors.get_type().name()?
        )));
    }
    let mut list = Vec::new();
    for (i, item) in tensors.try_iter()?.enumerate() {
        let item = item?;
        let Some(t) = as_tensor_ref(&item) else {
            return Err(PyTypeError::new_err(format!(
                "expected Tensor as element {i} in argument 0, but got {}",
                item.get_type().name()?
            )));
        };
        list.push(t);
    }
    Ok(list)
}

/// The `dim` argument of cat / stack: an int (not a bool), 0 when absent.
fn join_dim(dim: Option<&Bound<'_, PyAny>>, op: &str) -> PyResult<i64> {
    match dim {
        None => Ok(0),
        Some(d)
            if d.is_instance_of::<pyo3::types::PyInt>()
                && !d.is_instance_of::<pyo3::types::PyBool>() =>
        {
            d.extract()
        }
        Some(d) => Err(PyTypeError::new_err(format!(
            "{op}(): argument 'dim' must be int, not {}",
            d.get_type().name()?
        ))),
    }
}

/// `cat(tensors, dim=0)` (also `concat`, `concatenate`).
#[pyfunction]
#[pyo3(signature = (tensors, dim=None))]
pub fn cat(
    py: Python<'_>,
    tensors: &Bound<'_, PyAny>,
    dim: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let list = tensor_list(tensors, "cat")?;
    let dim = join_dim(dim, "cat")?;
    to_py(py, run(|| crate::ops::join::cat(&list, dim))?)
}

/// `stack(tensors, dim=0)`.
#[pyfunction]
#[pyo3(signature = (tensors, dim=None))]
pub fn stack(
    py: Python<'_>,
    tensors: &Bound<'_, PyAny>,
    dim: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let list = tensor_list(tensors, "stack")?;
    let dim = join_dim(dim, "stack")?;
    to_py(py, run(|| crate::ops::join::stack(&list, dim))?)
}
