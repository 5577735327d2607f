//! `ferrograd.device` (torch.device's constructor forms, repr, equality, hash and its
//! use as a context manager that sets the default device of factories), the reading of
//! every `device=` argument, and torch's error for a device this build cannot use.

use std::cell::RefCell;

use pyo3::exceptions::{PyAssertionError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyString, PyTuple};

use crate::bindings::dtype::PyDType;
use crate::bindings::errors::{run, to_pyerr};
use crate::bindings::hooks::type_name;
use crate::device::{Device, Unavailable, Use};

#[pyclass(
    name = "device",
    module = "ferrograd",
    frozen,
    eq,
    hash,
    skip_from_py_object
)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyDevice {
    pub device: Device,
}

const DEVICE_SIGNATURES: &str = " * (ferrograd.device device)\n * (str type, int index = -1)\n";

#[pymethods]
impl PyDevice {
    #[new]
    #[pyo3(signature = (*args, **kwargs))]
    fn new(args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let kw = |name: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
            kwargs.map_or(Ok(None), |k| k.get_item(name))
        };
        let nkw = kwargs.map_or(0, |k| k.len());
        let first = match args.len() {
            0 => kw("type")?,
            _ => Some(args.get_item(0)?),
        };
        let index = match args.len() {
            0 | 1 => kw("index")?.map(|i| (i, "")),
            _ => Some((args.get_item(1)?, " (position 2)")),
        };
        let known = usize::from(args.is_empty() && kw("type")?.is_some())
            + usize::from(args.len() < 2 && kw("index")?.is_some());
        let Some(first) = first.filter(|_| args.len() <= 2 && nkw == known) else {
            return Err(invalid_combination(
                "device",
                args,
                kwargs,
                DEVICE_SIGNATURES,
            ));
        };
        let device = if let Ok(d) = first.cast::<PyDevice>() {
            if index.is_some() {
                return Err(PyTypeError::new_err(
                    "device(): argument 'type' (position 1) must be str, not ferrograd.device",
                ));
            }
            d.get().device
        } else if let Ok(s) = first.cast::<PyString>() {
            let index = match index {
                Some((i, _)) if i.is_none() => None,
                Some((i, pos)) => Some(int_arg(&i).ok_or_else(|| {
                    PyTypeError::new_err(format!(
                        "device(): argument 'index'{pos} must be int, not {}",
                        torch_type_name(&i)
                    ))
                })?),
                None => None,
            };
            let s = s.to_cow()?;
            run(|| Device::new(&s, index))?
        } else if let (Some(i), None) = (int_arg(&first), &index) {
            run(|| Device::from_index(i))?
        } else if index.is_some() {
            return Err(PyTypeError::new_err(format!(
                "device(): argument 'type' (position 1) must be str, not {}",
                torch_type_name(&first)
            )));
        } else {
            // torch explains why a lone argument did not fit the first form.
            let signatures = match (args.len(), nkw) {
                (1, 0) => format!(
                    " * (ferrograd.device device)\n      didn't match because some of the arguments have invalid types: (!{}!)\n * (str type, int index = -1)\n",
                    torch_type_name(&first)
                ),
                _ => DEVICE_SIGNATURES.to_string(),
            };
            return Err(invalid_combination("device", args, kwargs, &signatures));
        };
        Ok(PyDevice { device })
    }

    #[getter(r#type)]
    fn type_(&self) -> &'static str {
        self.device.kind.name()
    }
    #[getter]
    fn index(&self) -> Option<i16> {
        self.device.index
    }
    fn __repr__(&self) -> String {
        match self.device.index {
            Some(i) => format!("device(type='{}', index={i})", self.device.kind.name()),
            None => format!("device(type='{}')", self.device.kind.name()),
        }
    }
    fn __str__(&self) -> String {
        self.device.to_string()
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let d = slf.get().device;
        let args = match d.index {
            Some(i) => PyTuple::new(
                slf.py(),
                [
                    d.kind.name().into_pyobject(slf.py())?.into_any(),
                    i.into_pyobject(slf.py())?.into_any(),
                ],
            )?,
            None => PyTuple::new(slf.py(), [d.kind.name()])?,
        };
        PyTuple::new(slf.py(), [slf.get_type().into_any(), args.into_any()])
    }
    /// `with ferrograd.device(d):` makes `d` the default device of the factories that
    /// torch's device context covers (not the `*_like` ones), on this thread.
    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        DEFAULT_DEVICES.with(|s| s.borrow_mut().push(slf.get().device));
        slf
    }
    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, PyTuple>) {
        DEFAULT_DEVICES.with(|s| s.borrow_mut().pop());
    }
}

thread_local! {
    /// The devices of the `with ferrograd.device(...)` blocks open on this thread.
    static DEFAULT_DEVICES: RefCell<Vec<Device>> = const { RefCell::new(Vec::new()) };
}

fn default_device() -> Device {
    DEFAULT_DEVICES.with(|s| s.borrow().last().copied().unwrap_or(Device::CPU))
}

/// `ferrograd.get_default_device()`.
#[pyfunction]
pub fn get_default_device() -> PyDevice {
    PyDevice {
        device: default_device(),
    }
}

/// A Python int or an object with `__index__` (numpy ints), but not a bool or a tensor.
fn int_arg(o: &Bound<'_, PyAny>) -> Option<i64> {
    if o.is_instance_of::<PyBool>() || o.is_instance_of::<crate::bindings::tensor::PyTensor>() {
        return None;
    }
    if o.is_instance_of::<PyInt>() || o.hasattr("__index__").unwrap_or(false) {
        return o.extract::<i64>().ok();
    }
    None
}

/// How torch's argument parser names a value's type in its errors, with ferrograd's
/// own classes named `ferrograd.*` where torch writes `torch.*`.
pub fn torch_type_name(o: &Bound<'_, PyAny>) -> String {
    if o.is_instance_of::<PyDType>() {
        "ferrograd.dtype".into()
    } else if o.is_instance_of::<PyDevice>() {
        "ferrograd.device".into()
    } else {
        type_name(o)
    }
}

/// torch's "received an invalid combination of arguments" TypeError.
pub fn invalid_combination(
    fname: &str,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    signatures: &str,
) -> PyErr {
    let positional: Vec<String> = args.iter().map(|a| torch_type_name(&a)).collect();
    let keywords: Vec<String> = kwargs
        .map(|k| {
            k.iter()
                .map(|(n, v)| format!("{n}={}", torch_type_name(&v)))
                .collect()
        })
        .unwrap_or_default();
    // torch's parser closes a keyword-only list with ", ".
    let got = match (positional.is_empty(), keywords.is_empty()) {
        (_, true) => positional.join(", "),
        (true, false) => format!("{}, ", keywords.join(", ")),
        (false, false) => format!("{}, {}", positional.join(", "), keywords.join(", ")),
    };
    PyTypeError::new_err(format!(
        "{fname}() received an invalid combination of arguments - got ({got}), but expected one of:\n{signatures}"
    ))
}

/// A device-like value (`ferrograd.device`, a string, an int) or `None`; anything else is
/// not a device.
pub fn as_device(o: &Bound<'_, PyAny>) -> Option<PyResult<Device>> {
    if let Ok(d) = o.cast::<PyDevice>() {
        return Some(Ok(d.get().device));
    }
    if let Ok(s) = o.cast::<PyString>() {
        return Some(s.to_cow().and_then(|s| run(|| Device::parse(&s))));
    }
    int_arg(o).map(|i| run(|| Device::from_index(i)))
}

/// Raise torch's error when tensors cannot live on `d` in this build.
pub fn check_available(d: Device, usage: Use) -> PyResult<()> {
    d.check_available(usage).map_err(|e| match e {
        Unavailable::NotCompiled(m) => PyAssertionError::new_err(m),
        Unavailable::Other(e) => to_pyerr(e),
    })
}

/// How a factory uses its `device=`: torch's device context supplies a default to the
/// plain factories (not to the `*_like` ones), and the refusal names the allocating op.
#[derive(Clone, Copy)]
pub struct DeviceUse {
    pub fname: &'static str,
    pub usage: Use,
    pub context_default: bool,
}

pub const EMPTY: &str = "aten::empty.memory_format";
pub const EMPTY_STRIDED: &str = "aten::empty_strided";

impl DeviceUse {
    pub const fn alloc(fname: &'static str) -> Self {
        DeviceUse {
            fname,
            usage: Use::Allocate(EMPTY),
            context_default: true,
        }
    }
    pub const fn like(fname: &'static str) -> Self {
        DeviceUse {
            fname,
            usage: Use::Allocate(EMPTY_STRIDED),
            context_default: false,
        }
    }
    pub const fn copy(fname: &'static str) -> Self {
        DeviceUse {
            fname,
            usage: Use::Copy,
            context_default: true,
        }
    }
}

/// Read and check a factory's `device=` argument.
pub fn device_arg(o: Option<&Bound<'_, PyAny>>, how: DeviceUse) -> PyResult<Device> {
    let d = match o.filter(|o| !o.is_none()) {
        None if how.context_default => default_device(),
        None => Device::CPU,
        Some(o) => as_device(o).unwrap_or_else(|| {
            Err(PyTypeError::new_err(format!(
                "{}(): argument 'device' must be ferrograd.device, not {}",
                how.fname,
                torch_type_name(o)
            )))
        })?,
    };
    check_available(d, how.usage)?;
    Ok(d)
}

/// What `Tensor.to(...)` asks for, after torch's overload resolution.
pub struct ToArgs {
    pub device: Option<Device>,
    pub dtype: Option<crate::dtype::DType>,
    pub copy: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Slot {
    Device,
    Dtype,
    RequiredDtype,
    Tensor,
    Bool,
    MemoryFormat,
}

/// torch's three `to` overloads: (name, slot) in positional order; `memory_format` is
/// keyword-only in all of them.
const TO_OVERLOADS: [&[(&str, Slot)]; 3] = [
    &[
        ("device", Slot::Device),
        ("dtype", Slot::Dtype),
        ("non_blocking", Slot::Bool),
        ("copy", Slot::Bool),
    ],
    &[
        ("dtype", Slot::RequiredDtype),
        ("non_blocking", Slot::Bool),
        ("copy", Slot::Bool),
    ],
    &[
        ("tensor", Slot::Tensor),
        ("non_blocking", Slot::Bool),
        ("copy", Slot::Bool),
    ],
];

const TO_SIGNATURES: &str = " * (ferrograd.device device = None, ferrograd.dtype dtype = None, bool non_blocking = False, bool copy = False, *, ferrograd.memory_format memory_format = None)\n * (ferrograd.dtype dtype, bool non_blocking = False, bool copy = False, *, ferrograd.memory_format memory_format = None)\n * (Tensor tensor, bool non_blocking = False, bool copy = False, *, ferrograd.memory_format memory_format = None)\n";

fn fits(slot: Slot, v: &Bound<'_, PyAny>) -> bool {
    let is_dtype = || crate::bindings::convert::dtype_of(v).is_ok();
    match slot {
        Slot::Device => {
            v.is_none()
                || v.is_instance_of::<PyDevice>()
                || v.is_instance_of::<PyString>()
                || int_arg(v).is_some()
        }
        Slot::Dtype => v.is_none() || is_dtype(),
        Slot::RequiredDtype => is_dtype(),
        Slot::Tensor => crate::bindings::convert::as_tensor_ref(v).is_some(),
        Slot::Bool => v.is_instance_of::<PyBool>(),
        Slot::MemoryFormat => true,
    }
}

/// Bind `args`/`kwargs` to one overload; `None` when they do not fit it.
fn bind_overload<'py>(
    params: &[(&'static str, Slot)],
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> Option<Vec<(&'static str, Slot, Bound<'py, PyAny>)>> {
    if args.len() > params.len() {
        return None;
    }
    let mut bound: Vec<_> = params
        .iter()
        .zip(args.iter())
        .map(|(&(n, s), v)| (n, s, v))
        .collect();
    for (k, v) in kwargs.into_iter().flat_map(|k| k.iter()) {
        let name: String = k.extract().ok()?;
        let slot = match params.iter().find(|(n, _)| *n == name) {
            Some(&(_, s)) => s,
            None if name == "memory_format" => Slot::MemoryFormat,
            None => return None,
        };
        if bound.iter().any(|(n, _, _)| *n == name) {
            return None;
        }
        let n = params
            .iter()
            .map(|(n, _)| *n)
            .chain(["memory_format"])
            .find(|n| *n == name)?;
        bound.push((n, slot, v));
    }
    let required_missing = params.iter().any(|&(n, s)| {
        matches!(s, Slot::RequiredDtype | Slot::Tensor) && !bound.iter().any(|b| b.0 == n)
    });
    if required_missing || !bound.iter().all(|(_, s, v)| fits(*s, v)) {
        return None;
    }
    Some(bound)
}

/// Resolve `Tensor.to(*args, **kwargs)` as torch does, with its errors.
pub fn parse_to(args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<ToArgs> {
    let bound = TO_OVERLOADS
        .iter()
        .find_map(|p| bind_overload(p, args, kwargs))
        .ok_or_else(|| invalid_combination("to", args, kwargs, TO_SIGNATURES))?;
    let mut out = ToArgs {
        device: None,
        dtype: None,
        copy: false,
    };
    for (name, slot, v) in bound {
        match slot {
            Slot::Device if !v.is_none() => {
                out.device = as_device(&v).transpose()?;
            }
            Slot::Dtype | Slot::RequiredDtype => {
                out.dtype = crate::bindings::convert::opt_dtype(Some(&v))?;
            }
            Slot::Tensor => {
                let t = crate::bindings::convert::as_tensor_ref(&v).expect("checked by fits");
                out.dtype = Some(t.dtype());
                out.device = Some(Device::CPU);
            }
            Slot::Bool if name == "copy" => out.copy = v.extract()?,
            _ => {}
        }
    }
    Ok(out)
}

/// `Tensor.cuda(device)`'s error: the device must be a CUDA one, and this build has
/// no CUDA backend (the error once one exists names what is still missing).
pub fn cuda_error(device: Option<&Bound<'_, PyAny>>) -> PyErr {
    let d = match device.filter(|d| !d.is_none()) {
        None => Device::from_index(0).map_err(to_pyerr),
        Some(o) => as_device(o).unwrap_or_else(|| {
            Err(PyTypeError::new_err(format!(
                "cuda(): argument 'device' (position 1) must be ferrograd.device, not {}",
                torch_type_name(o)
            )))
        }),
    };
    match d {
        Err(e) => e,
        Ok(d) if d.kind != crate::device::DeviceType::Cuda => {
            pyo3::exceptions::PyRuntimeError::new_err("Invalid device, must be cuda device")
        }
        Ok(d) => check_available(d, Use::Copy).err().unwrap_or_else(|| {
            pyo3::exceptions::PyNotImplementedError::new_err("ferrograd has no CUDA backend")
        }),
    }
}
