//! Random numbers: `ferrograd.Generator` objects (and `default_generator`), the
//! `generator=` argument every random function takes, `randperm`, `normal`,
//! `bernoulli`, and the in-place fills `Tensor.normal_` / `uniform_` / `exponential_` /
//! `random_` / `bernoulli_`. `multinomial` is built on these in Python
//! (python/ferrograd/_random_ops.py).

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;

use crate::bindings::convert::as_tensor_ref;
use crate::bindings::device::{device_arg, torch_type_name, DeviceUse};
use crate::bindings::errors::run;
use crate::bindings::factory_args::dtype_arg;
use crate::bindings::tensor::{to_py, PyTensor};
use crate::dtype::DType;
use crate::kernels::random::{RngHandle, STATE_BYTES};
use crate::ops::creation;
use crate::ops::random_ops::{self, Draw};
use crate::tensor::Tensor;

type Out = PyResult<Py<PyAny>>;

/// `ferrograd.Generator(device='cpu')`: a random generator of its own, seeded with
/// torch's default seed until `manual_seed`.
#[pyclass(name = "Generator", module = "ferrograd", frozen)]
pub struct PyGenerator {
    pub handle: RngHandle,
}

#[pymethods]
impl PyGenerator {
    #[new]
    #[pyo3(signature = (device=None))]
    fn new(device: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        device_arg(device, DeviceUse::alloc("Generator"))?;
        Ok(PyGenerator {
            handle: RngHandle::default(),
        })
    }
    /// Seed it (a negative seed counts as its 64-bit two's complement, as torch's);
    /// returns the generator.
    fn manual_seed<'py>(
        slf: &Bound<'py, Self>,
        seed: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        slf.get().handle.manual_seed(seed_value(seed)?);
        Ok(slf.clone())
    }
    /// Seed it from the operating system's randomness and return the seed.
    fn seed(&self) -> PyResult<u64> {
        let seed = os_seed()?;
        self.handle.manual_seed(seed);
        Ok(seed)
    }
    fn initial_seed(&self) -> u64 {
        self.handle.initial_seed()
    }
    fn get_state(&self, py: Python<'_>) -> Out {
        state_tensor(py, &self.handle)
    }
    fn set_state<'py>(
        slf: &Bound<'py, Self>,
        new_state: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        set_state_from(&slf.get().handle, new_state)?;
        Ok(slf.clone())
    }
    #[getter]
    fn device(&self) -> crate::bindings::device::PyDevice {
        crate::bindings::device::PyDevice {
            device: crate::device::Device::CPU,
        }
    }
}

/// A seed as torch reads one: any integer in [-2^63, 2^64).
pub fn seed_value(seed: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(v) = seed.extract::<u64>() {
        return Ok(v);
    }
    match seed.extract::<i64>() {
        Ok(v) => Ok(v as u64),
        Err(_) if seed.is_instance_of::<pyo3::types::PyInt>() => Err(
            pyo3::exceptions::PyValueError::new_err("Overflow when unpacking long long"),
        ),
        Err(_) => Err(PyTypeError::new_err(format!(
            "manual_seed expected a long, but got {}",
            torch_type_name(seed)
        ))),
    }
}

fn os_seed() -> PyResult<u64> {
    let mut bytes = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .map_err(|e| PyRuntimeError::new_err(format!("could not read a seed: {e}")))?;
    // torch's non-deterministic seeds fit in 63 bits.
    Ok(u64::from_le_bytes(bytes) >> 1)
}

/// A generator's state as a uint8 tensor.
pub fn state_tensor(py: Python<'_>, gen: &RngHandle) -> Out {
    let bytes = gen.get_state().to_vec();
    to_py(py, run(|| Tensor::from_vec(bytes, &[STATE_BYTES]))?)
}

/// Restore a state a `get_state` / `get_rng_state` returned.
pub fn set_state_from(gen: &RngHandle, new_state: &Bound<'_, PyAny>) -> PyResult<()> {
    let Some(t) = as_tensor_ref(new_state) else {
        return Err(PyTypeError::new_err(format!(
            "expected a ferrograd.ByteTensor, but got {}",
            torch_type_name(new_state)
        )));
    };
    if t.dtype() != DType::U8 {
        return Err(PyTypeError::new_err(
            "RNG state must be a ferrograd.ByteTensor",
        ));
    }
    let bytes = t.to_vec::<u8>();
    run(|| gen.set_state(&bytes))
}

/// The generator a `generator=` argument names: the default one for None.
pub fn generator_arg(fname: &str, o: Option<&Bound<'_, PyAny>>) -> PyResult<RngHandle> {
    match o.filter(|o| !o.is_none()) {
        None => Ok(RngHandle::default_cpu().clone()),
        Some(o) => match o.cast::<PyGenerator>() {
            Ok(g) => Ok(g.get().handle.clone()),
            Err(_) => Err(PyTypeError::new_err(format!(
                "{fname}(): argument 'generator' must be ferrograd.Generator, not {}",
                torch_type_name(o)
            ))),
        },
    }
}

/// `ferrograd.default_generator`: a Generator object naming the process-wide one.
pub fn default_generator() -> PyGenerator {
    PyGenerator {
        handle: RngHandle::default_cpu().clone(),
    }
}

/// `randperm(n, *, generator=None, dtype=torch.int64, device=None, requires_grad=False)`.
#[pyfunction]
#[pyo3(signature = (n, *, generator=None, out=None, dtype=None, layout=None, device=None, pin_memory=false, requires_grad=false))]
#[allow(clippy::too_many_arguments)]
pub fn randperm(
    py: Python<'_>,
    n: i64,
    generator: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    pin_memory: bool,
    requires_grad: bool,
) -> Out {
    let _ = (layout, pin_memory);
    refuse_out(out, "randperm")?;
    device_arg(device, DeviceUse::alloc("randperm"))?;
    let gen = generator_arg("randperm", generator)?;
    if n < 0 {
        return Err(PyRuntimeError::new_err(format!(
            "Trying to create tensor with negative dimension {n}: [{n}]"
        )));
    }
    let dtype = dtype_arg("randperm", dtype)?.unwrap_or(DType::I64);
    let _range = crate::profiler::named_op_range("aten::randperm", &[]);
    let t = run(|| creation::randperm(n as usize, dtype, &gen))?;
    crate::bindings::functions::finish(py, t, requires_grad)
}

/// A `mean` / `std` argument of `normal`: a tensor or a number.
fn tensor_or_number(
    fname: &str,
    name: &str,
    o: &Bound<'_, PyAny>,
) -> PyResult<(Option<Tensor>, f64)> {
    if let Some(t) = as_tensor_ref(o) {
        return Ok((Some(t.clone()), 0.0));
    }
    o.extract::<f64>().map(|v| (None, v)).map_err(|_| {
        PyTypeError::new_err(format!(
            "{fname}(): argument '{name}' must be Tensor or float, not {}",
            torch_type_name(o)
        ))
    })
}

/// `normal(mean, std, size=None, *, generator=None)`: a tensor mean and/or std, or two
/// numbers and a size.
#[pyfunction]
#[pyo3(signature = (mean, std=None, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None, pin_memory=false, requires_grad=false))]
#[allow(clippy::too_many_arguments)]
pub fn normal(
    py: Python<'_>,
    mean: &Bound<'_, PyAny>,
    std: Option<&Bound<'_, PyAny>>,
    size: Option<&Bound<'_, PyAny>>,
    generator: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    pin_memory: bool,
    requires_grad: bool,
) -> Out {
    let _ = (layout, pin_memory);
    refuse_out(out, "normal")?;
    let gen = generator_arg("normal", generator)?;
    let mean = tensor_or_number("normal", "mean", mean)?;
    let std = match std {
        Some(s) => tensor_or_number("normal", "std", s)?,
        None => (None, 1.0),
    };
    let _range = crate::profiler::named_op_range("aten::normal", &[]);
    if mean.0.is_none() && std.0.is_none() {
        let Some(size) = size.filter(|s| !s.is_none()) else {
            return Err(PyTypeError::new_err(
                "normal() received an invalid combination of arguments: two numbers need a size",
            ));
        };
        device_arg(device, DeviceUse::alloc("normal"))?;
        let shape = crate::bindings::factory_args::size_value("normal", size, 3)?;
        let dtype = dtype_arg("normal", dtype)?.unwrap_or(crate::dtype::default_float_dtype());
        let t = run(|| {
            let like = Tensor::zeros(&shape, dtype)?;
            let draw = Draw::NormalFill {
                mean: mean.1,
                std: std.1,
            };
            random_ops::fill_(&like, draw, None, &gen)?;
            Ok(like)
        })?;
        return crate::bindings::functions::finish(py, t, requires_grad);
    }
    let t = run(|| random_ops::normal((mean.0.as_ref(), mean.1), (std.0.as_ref(), std.1), &gen))?;
    to_py(py, t)
}

/// `bernoulli(input, p=None, *, generator=None)`: 1 with the input's probability, or
/// with `p` everywhere (a tensor of input's shape and dtype).
#[pyfunction]
#[pyo3(signature = (input, p=None, *, generator=None, out=None))]
pub fn bernoulli(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    p: Option<f64>,
    generator: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
) -> Out {
    refuse_out(out, "bernoulli")?;
    input.bernoulli(py, p, generator)
}

#[pymethods]
impl PyTensor {
    #[pyo3(name = "bernoulli", signature = (p=None, *, generator=None))]
    fn bernoulli(
        &self,
        py: Python<'_>,
        p: Option<f64>,
        generator: Option<&Bound<'_, PyAny>>,
    ) -> Out {
        let gen = generator_arg("bernoulli", generator)?;
        let t = match p {
            None => run(|| random_ops::bernoulli(&self.t, &gen))?,
            Some(p) => run(|| {
                let out = Tensor::zeros(&self.t.shape(), self.t.dtype())?;
                random_ops::fill_(&out, Draw::BernoulliFill { p: Some(p) }, None, &gen)?;
                Ok(out)
            })?,
        };
        to_py(py, t)
    }
    #[pyo3(signature = (mean=0.0, std=1.0, *, generator=None))]
    fn normal_(
        slf: &Bound<'_, Self>,
        mean: f64,
        std: f64,
        generator: Option<&Bound<'_, PyAny>>,
    ) -> Out {
        fill(
            slf,
            Draw::NormalFill { mean, std },
            None,
            "normal_",
            generator,
        )
    }
    #[pyo3(signature = (from_=0.0, to=1.0, *, generator=None))]
    fn uniform_(
        slf: &Bound<'_, Self>,
        from_: f64,
        to: f64,
        generator: Option<&Bound<'_, PyAny>>,
    ) -> Out {
        let draw = Draw::UniformFill { from: from_, to };
        fill(slf, draw, None, "uniform_", generator)
    }
    #[pyo3(signature = (lambd=1.0, *, generator=None))]
    fn exponential_(
        slf: &Bound<'_, Self>,
        lambd: f64,
        generator: Option<&Bound<'_, PyAny>>,
    ) -> Out {
        fill(
            slf,
            Draw::ExponentialFill { lambd },
            None,
            "exponential_",
            generator,
        )
    }
    /// `random_()`, `random_(to)`, `random_(from, to)` (`to=None`: up to the dtype's
    /// largest value).
    #[pyo3(signature = (*args, generator=None, **kwargs))]
    fn random_(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, pyo3::types::PyTuple>,
        generator: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> Out {
        let dtype = slf.get().t.dtype();
        // torch's overloads: random_(), random_(to), random_(from, to) (to=None: the top).
        let (mut from, mut to, mut overload) = (None, None, 2);
        match args.len() {
            0 => {}
            1 => (to, overload) = (Some(args.get_item(0)?), 1),
            _ => (from, to, overload) = (Some(args.get_item(0)?), Some(args.get_item(1)?), 0),
        }
        if let Some(k) = kwargs {
            if let Some(f) = k.get_item("from")? {
                (from, overload) = (Some(f), 0);
            }
            if let Some(t) = k.get_item("to")? {
                to = Some(t);
                overload = overload.min(1);
            }
        }
        let as_int = |o: Option<Bound<'_, PyAny>>| -> PyResult<Option<i64>> {
            match o {
                Some(o) if !o.is_none() => o.extract::<i64>().map(Some),
                _ => Ok(None),
            }
        };
        let draw = Draw::RandomFill {
            from: as_int(from)?.unwrap_or(0),
            to: as_int(to)?.unwrap_or(random_top(dtype)),
            overload,
        };
        fill(slf, draw, None, "random_", generator)
    }
    /// `bernoulli_(p=0.5)`: `p` a number or a tensor broadcast to self's shape.
    #[pyo3(signature = (p=None, *, generator=None))]
    fn bernoulli_(
        slf: &Bound<'_, Self>,
        p: Option<&Bound<'_, PyAny>>,
        generator: Option<&Bound<'_, PyAny>>,
    ) -> Out {
        let p = p.filter(|p| !p.is_none());
        match p.and_then(as_tensor_ref) {
            Some(pt) => {
                let pt = pt.clone();
                fill(
                    slf,
                    Draw::BernoulliFill { p: None },
                    Some(&pt),
                    "bernoulli_",
                    generator,
                )
            }
            None => {
                let p = p.map(|p| p.extract::<f64>()).transpose()?.unwrap_or(0.5);
                fill(
                    slf,
                    Draw::BernoulliFill { p: Some(p) },
                    None,
                    "bernoulli_",
                    generator,
                )
            }
        }
    }
}

/// The exclusive top of `random_()` without bounds: integers up to the dtype's largest,
/// floats up to the last integer their mantissa holds exactly, as torch.
fn random_top(dtype: DType) -> i64 {
    match dtype {
        DType::Bool => 2,
        DType::U8 => 1 << 8,
        DType::I32 => 1 << 31,
        DType::I64 => i64::MAX,
        DType::F16 => (1 << 11) + 1,
        DType::BF16 => (1 << 8) + 1,
        DType::F32 | DType::C64 => (1 << 24) + 1,
        DType::F64 | DType::C128 => (1 << 53) + 1,
    }
}

/// Write `draw` into the tensor in place and return it.
fn fill(
    slf: &Bound<'_, PyTensor>,
    draw: Draw,
    p: Option<&Tensor>,
    fname: &str,
    generator: Option<&Bound<'_, PyAny>>,
) -> Out {
    let gen = generator_arg(fname, generator)?;
    run(|| random_ops::fill_(&slf.get().t, draw, p, &gen))?;
    Ok(slf.clone().into_any().unbind())
}

/// `out=` is accepted by the signatures (torch's) but not implemented: say so rather
/// than ignore it.
fn refuse_out(out: Option<&Bound<'_, PyAny>>, op: &str) -> PyResult<()> {
    match out {
        Some(o) if !o.is_none() => Err(PyTypeError::new_err(format!(
            "{op}(): out= is not supported"
        ))),
        _ => Ok(()),
    }
}
