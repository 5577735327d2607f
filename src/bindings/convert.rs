//! Python values ↔ core values: scalars, shapes, dims, dtypes, nested data, numpy.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyDict, PyFloat, PyInt, PyList, PySequence, PyTuple};

use crate::bindings::dtype::PyDType;
use crate::bindings::errors::run;
use crate::bindings::tensor::PyTensor;
use crate::dtype::{default_float_dtype, Category, DType, Element, Scalar};
use crate::layout::Layout;
use crate::shape::Dims;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// A Python number as a core Scalar (bool before int: bool is an int subclass).
pub fn as_scalar(obj: &Bound<'_, PyAny>) -> Option<Scalar> {
    if obj.is_instance_of::<PyBool>() {
        return obj.extract::<bool>().ok().map(Scalar::Bool);
    }
    if obj.is_instance_of::<PyInt>() {
        return obj.extract::<i64>().ok().map(Scalar::Int);
    }
    if obj.is_instance_of::<PyFloat>() {
        return obj.extract::<f64>().ok().map(Scalar::Float);
    }
    if let Ok(c) = obj.cast::<PyComplex>() {
        return Some(Scalar::Complex(num_complex::Complex64::new(
            c.real(),
            c.imag(),
        )));
    }
    // numpy scalars and other number-likes.
    let tname = obj.get_type().name().ok()?.to_string();
    if tname.starts_with("float") {
        return obj.extract::<f64>().ok().map(Scalar::Float);
    }
    if tname.starts_with("int") || tname.starts_with("uint") {
        return obj.extract::<i64>().ok().map(Scalar::Int);
    }
    if tname == "bool_" || tname == "bool" {
        return obj.extract::<bool>().ok().map(Scalar::Bool);
    }
    None
}

pub fn as_tensor_ref(obj: &Bound<'_, PyAny>) -> Option<Tensor> {
    obj.cast::<PyTensor>().ok().map(|t| t.get().t.clone())
}

/// Tensor or Python number.
pub enum Operand {
    T(Tensor),
    S(Scalar),
}

pub fn as_operand(obj: &Bound<'_, PyAny>) -> Option<Operand> {
    if let Some(t) = as_tensor_ref(obj) {
        return Some(Operand::T(t));
    }
    as_scalar(obj).map(Operand::S)
}

pub fn extract_tensor(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Tensor> {
    as_tensor_ref(obj).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "{what} must be Tensor, not {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

/// `f(2, 3)`, `f((2, 3))`, `f([2, 3])`, `f(Size)` → [2, 3] (values may be -1).
pub fn int_list(args: &Bound<'_, PyTuple>) -> PyResult<Vec<i64>> {
    if args.len() == 1 {
        let a = args.get_item(0)?;
        if !a.is_instance_of::<PyInt>() {
            if let Ok(seq) = a.cast::<PySequence>() {
                return seq_ints(seq);
            }
        }
    }
    seq_ints(args.as_any().cast::<PySequence>()?)
}

pub fn seq_ints(seq: &Bound<'_, PySequence>) -> PyResult<Vec<i64>> {
    let mut out = Vec::with_capacity(seq.len()?);
    for item in seq.try_iter()? {
        let item = item?;
        out.push(index_int(&item)?);
    }
    Ok(out)
}

/// An integer argument (Python int, numpy int, or a one-element integer tensor).
pub fn index_int(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err("expected an integer, got bool"));
    }
    if let Ok(v) = obj.extract::<i64>() {
        return Ok(v);
    }
    if let Some(t) = as_tensor_ref(obj) {
        if t.numel() == 1 && t.dtype().category() <= Category::Integral {
            return Ok(t.to_vec::<i64>()[0]);
        }
    }
    Err(PyTypeError::new_err(format!(
        "'{}' object cannot be interpreted as an integer",
        obj.get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default()
    )))
}

/// A shape from factory arguments; negative sizes are torch's RuntimeError.
pub fn shape_arg(args: &Bound<'_, PyTuple>) -> PyResult<Dims> {
    to_shape(&int_list(args)?)
}

pub fn to_shape(v: &[i64]) -> PyResult<Dims> {
    let mut out = Dims::new();
    for &s in v {
        if s < 0 {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
                "Trying to create tensor with negative dimension {s}: {:?}",
                v
            )));
        }
        out.push(s as usize);
    }
    run(|| crate::shape::checked_numel(&out).map(|_| ()))?;
    Ok(out)
}

/// An optional dim argument: None, int, or a sequence of ints.
pub fn opt_dims(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<i64>>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => {
            if let Ok(v) = o.extract::<i64>() {
                return Ok(Some(vec![v]));
            }
            Ok(Some(seq_ints(o.cast::<PySequence>()?)?))
        }
    }
}

pub fn opt_dtype(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DType>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => Ok(Some(dtype_of(o)?)),
    }
}

pub fn dtype_of(o: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(d) = o.cast::<PyDType>() {
        return Ok(d.get().dtype);
    }
    // Python builtins accepted by torch: float, int, bool, complex.
    if let Ok(t) = o.cast::<pyo3::types::PyType>() {
        let name = t.name()?.to_string();
        match name.as_str() {
            "float" => return Ok(DType::F64),
            "int" => return Ok(DType::I64),
            "bool" => return Ok(DType::Bool),
            "complex" => return Ok(DType::C128),
            _ => {}
        }
    }
    Err(PyTypeError::new_err(format!(
        "dtype must be ferrograd.dtype, not {}",
        o.get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default()
    )))
}

// ---------------------------------------------------------------- nested data

/// Build a tensor from Python data (nested sequences of numbers, numpy arrays, tensors).
pub fn tensor_from_data(data: &Bound<'_, PyAny>, dtype: Option<DType>) -> PyResult<Tensor> {
    if let Some(t) = as_tensor_ref(data) {
        return run(|| crate::ops::device::cast(&t, dtype.unwrap_or(t.dtype())));
    }
    if data.hasattr("__array_interface__")? && !data.is_instance_of::<PyList>() {
        let t = from_numpy(data)?;
        return run(|| crate::ops::device::cast(&t, dtype.unwrap_or(t.dtype())));
    }
    let mut shape = Dims::new();
    let mut values = Vec::new();
    collect(data, 0, &mut shape, &mut values)?;
    let inferred = values.iter().fold(None::<DType>, |acc, s| {
        let d = s.default_dtype();
        Some(match acc {
            None => d,
            Some(a) if d.category() > a.category() => d,
            Some(a) => a,
        })
    });
    if let Some(d) = dtype {
        for &v in &values {
            crate::bindings::factory_args::check_data_value(v, d)?;
        }
    }
    let dtype = dtype.or(inferred).unwrap_or(default_float_dtype());
    crate::with_dtype!(dtype, T => {
        let v: Vec<T> = values.iter().map(|&s| T::from_scalar(s)).collect();
        run(|| Tensor::from_vec(v, &shape))
    })
}

/// Most dimensions nested data may have (torch's `MAX_DIMS` for `tensor(list)`).
const MAX_DATA_DIMS: usize = 128;

fn collect(
    obj: &Bound<'_, PyAny>,
    depth: usize,
    shape: &mut Dims,
    out: &mut Vec<Scalar>,
) -> PyResult<()> {
    if let Some(s) = as_scalar(obj) {
        if depth < shape.len() {
            return Err(PyValueError::new_err(format!(
                "expected sequence of length {} at dim {} (got 0)",
                shape[depth], depth
            )));
        }
        out.push(s);
        return Ok(());
    }
    if obj.is_instance_of::<PyInt>() {
        return Err(PyValueError::new_err("Overflow when unpacking long long"));
    }
    if let Some(t) = as_tensor_ref(obj) {
        if t.numel() != 1 {
            return Err(PyValueError::new_err(
                "only one element tensors can be converted to Python scalars",
            ));
        }
        if t.dim() == 0 {
            let v = crate::with_dtype!(t.dtype(), T => t.to_vec::<T>()[0].to_scalar());
            out.push(v);
            return Ok(());
        }
    }
    let tname = || {
        obj.get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default()
    };
    // A string is a sequence of strings: refuse it before recursing into it forever.
    if obj.is_instance_of::<pyo3::types::PyString>() || obj.is_instance_of::<pyo3::types::PyBytes>()
    {
        if depth > 0 && depth == shape.len() && out.is_empty() {
            return Err(PyValueError::new_err(format!(
                "too many dimensions '{}'",
                tname()
            )));
        }
        return Err(PyTypeError::new_err(format!(
            "new(): invalid data type '{}'",
            tname()
        )));
    }
    let seq = obj.cast::<PySequence>().map_err(|_| {
        pyo3::exceptions::PyRuntimeError::new_err(format!("Could not infer dtype of {}", tname()))
    })?;
    let n = seq.len()?;
    if depth == shape.len() {
        // Bounds this function's recursion whatever the input's nesting (torch's limit
        // and text).
        if depth >= MAX_DATA_DIMS {
            return Err(PyValueError::new_err(format!(
                "too many dimensions '{}'",
                tname()
            )));
        }
        if !out.is_empty() {
            return Err(PyValueError::new_err(format!(
                "expected sequence of length 0 at dim {depth} (got {n})"
            )));
        }
        shape.push(n);
    } else if shape[depth] != n {
        return Err(PyValueError::new_err(format!(
            "expected sequence of length {} at dim {} (got {})",
            shape[depth], depth, n
        )));
    }
    for item in seq.try_iter()? {
        collect(&item?, depth + 1, shape, out)?;
    }
    Ok(())
}

// ---------------------------------------------------------------- tolist / item

pub fn scalar_to_py(py: Python<'_>, s: Scalar) -> PyResult<Py<PyAny>> {
    Ok(match s {
        Scalar::Bool(b) => PyBool::new(py, b).to_owned().into_any().unbind(),
        Scalar::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Scalar::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
        Scalar::Complex(c) => PyComplex::from_doubles(py, c.re, c.im).into_any().unbind(),
    })
}

pub fn tolist(py: Python<'_>, t: &Tensor) -> PyResult<Py<PyAny>> {
    let values: Vec<Scalar> = crate::with_dtype!(t.dtype(), T =>
        t.to_vec::<T>().into_iter().map(|v| v.to_scalar()).collect());
    let mut items = values
        .into_iter()
        .map(|s| scalar_to_py(py, s))
        .collect::<PyResult<Vec<_>>>()?;
    // Innermost dimension first, one level at a time: no recursion per dimension.
    let shape = t.shape();
    // groups[d]: how many lists dimension d makes (the product of the sizes before it).
    let groups: Vec<usize> = std::iter::once(1)
        .chain(shape.iter().scan(1usize, |p, &n| {
            *p = p.saturating_mul(n);
            Some(*p)
        }))
        .collect();
    for d in (0..shape.len()).rev() {
        let groups = groups[d];
        let mut rest = items.into_iter();
        items = (0..groups)
            .map(|_| {
                Ok(PyList::new(py, rest.by_ref().take(shape[d]))?
                    .into_any()
                    .unbind())
            })
            .collect::<PyResult<Vec<_>>>()?;
    }
    items
        .pop()
        .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("tolist: empty result"))
}

// ---------------------------------------------------------------- numpy (no numpy import here)

/// The dtype of a numpy typestr without its byte-order character ("f4", "b1", ...).
fn typestr_dtype(kind: &str) -> Option<DType> {
    Some(match kind {
        "b1" => DType::Bool,
        "u1" => DType::U8,
        "i4" => DType::I32,
        "i8" => DType::I64,
        "f2" => DType::F16,
        "f4" => DType::F32,
        "f8" => DType::F64,
        "c8" => DType::C64,
        "c16" => DType::C128,
        _ => return None,
    })
}

fn dtype_typestr(d: DType) -> PyResult<&'static str> {
    Ok(match d {
        DType::Bool => "|b1",
        DType::U8 => "|u1",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::F16 => "<f2",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::C64 => "<c8",
        DType::C128 => "<c16",
        DType::BF16 => return Err(PyTypeError::new_err("Got unsupported ScalarType BFloat16")),
    })
}

/// torch's warning for a read-only array, given once per process (TORCH_WARN_ONCE).
const NOT_WRITABLE: &str = "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. This means writing to this tensor will result in undefined behavior. You may want to copy the array to protect its data or make it writable before converting it to a tensor. This type of warning will be suppressed for the rest of this program.";

/// Ours for a misaligned array (torch shares it; Rust may not read through a misaligned
/// pointer, so it is copied), also given once.
const MISALIGNED: &str = "The given NumPy array is not aligned for its dtype, so ferrograd copied it instead of sharing its memory: writes to the tensor will not reach the array. Copy the array (array.copy()) to avoid this warning.";

fn warn_once(py: Python<'_>, flag: &std::sync::atomic::AtomicBool, msg: &str) -> PyResult<()> {
    if !crate::autograd::warnings::once_due(flag) {
        return Ok(());
    }
    let c = std::ffi::CString::new(msg).unwrap_or_default();
    PyErr::warn(py, &py.get_type::<pyo3::exceptions::PyUserWarning>(), &c, 1)
}

fn iface_item<'py>(iface: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    iface
        .get_item(key)?
        .ok_or_else(|| PyTypeError::new_err("bad array"))
}

/// Zero-copy: the tensor's storage is the array's memory, and holds the array alive.
/// Other objects with `__array_interface__` go through `numpy.asarray` first, so the
/// memory description always comes from numpy. Checked as in torch (dtype, byte order,
/// negative or uneven strides; a read-only array warns once), and beyond it where Rust
/// needs more: a misaligned array is copied (with a warning), and bool bytes other than
/// 0/1 are read as True (see `storage::Access`), never as an invalid Rust bool.
pub fn from_numpy(arr: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    static WARNED_READONLY: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);
    static WARNED_MISALIGNED: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);
    let py = arr.py();
    let np = py.import("numpy")?;
    let arr = if arr.is_instance(&np.getattr("ndarray")?)? {
        arr.clone()
    } else {
        np.call_method1("asarray", (arr,))?
    };
    let iface = arr.getattr("__array_interface__")?;
    let iface = iface.cast::<PyDict>()?;
    let typestr: String = iface_item(iface, "typestr")?.extract()?;
    let dtype = typestr.get(1..).and_then(typestr_dtype).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "can't convert np.ndarray of type numpy.{}. The only supported types are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, and bool.",
            arr.getattr("dtype").and_then(|d| d.str()).map(|s| s.to_string()).unwrap_or(typestr.clone())
        ))
    })?;
    if typestr.starts_with('>') {
        return Err(PyValueError::new_err("given numpy array has byte order different from the native byte order. Conversion between byte orders is currently not supported."));
    }
    let (ptr, readonly): (usize, bool) = iface_item(iface, "data")?.extract()?;
    let shape: Vec<usize> = iface_item(iface, "shape")?.extract()?;
    let strides: Option<Vec<isize>> = match iface.get_item("strides")? {
        Some(s) if !s.is_none() => Some(s.extract()?),
        _ => None,
    };
    let item = dtype.itemsize() as isize;
    let elem_strides: Dims = match strides {
        None => crate::shape::contiguous_strides(&shape),
        Some(s) => {
            let mut out = Dims::new();
            for &b in &s {
                if b < 0 {
                    return Err(PyValueError::new_err("At least one stride in the given numpy array is negative, and tensors with negative strides are not currently supported. (You can probably work around this by making a copy of your array  with array.copy().) "));
                }
                if b % item != 0 {
                    return Err(PyValueError::new_err("given numpy array strides not a multiple of the element byte size. Copy the numpy array to reallocate the memory."));
                }
                out.push((b / item) as usize);
            }
            out
        }
    };
    if ptr % crate::storage::align_of(dtype) != 0 {
        warn_once(py, &WARNED_MISALIGNED, MISALIGNED)?;
        // numpy allocates copies aligned; check again rather than trust it blindly.
        let copy = np.call_method1("array", (&arr,))?;
        let (cptr, _): (usize, bool) = iface_item(
            copy.getattr("__array_interface__")?.cast::<PyDict>()?,
            "data",
        )?
        .extract()?;
        if cptr % crate::storage::align_of(dtype) != 0 {
            return Err(PyValueError::new_err(
                "given numpy array is not aligned for its dtype and could not be copied to aligned memory",
            ));
        }
        return from_numpy(&copy);
    }
    if readonly {
        warn_once(py, &WARNED_READONLY, NOT_WRITABLE)?;
    }
    let layout = Layout {
        shape: shape.iter().copied().collect(),
        strides: elem_strides,
        offset: 0,
    };
    let len = run(|| layout.storage_extent())?;
    let owner: Py<PyAny> = arr.clone().unbind();
    // SAFETY: `ptr` is aligned for `dtype` (checked above), and numpy guarantees the
    // `len` elements the array's layout reaches stay valid while the array object (kept
    // in the storage) is alive.
    let storage = unsafe { Storage::from_foreign(ptr as *mut u8, len, dtype, Box::new(owner)) };
    run(|| Tensor::from_storage(storage, layout))
}

/// Holds a tensor and exposes `__array_interface__` so numpy can view its memory.
#[pyclass(module = "ferrograd._C", frozen)]
pub struct ArrayView {
    t: Tensor,
}

#[pymethods]
impl ArrayView {
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = &self.t;
        let d = PyDict::new(py);
        let item = t.dtype().itemsize();
        d.set_item("shape", PyTuple::new(py, t.shape().iter())?)?;
        d.set_item("typestr", dtype_typestr(t.dtype())?)?;
        d.set_item("data", (t.data_ptr(), false))?;
        let strides: Vec<usize> = t.strides().iter().map(|s| s * item).collect();
        d.set_item("strides", PyTuple::new(py, strides)?)?;
        d.set_item("version", 3)?;
        Ok(d)
    }
}

pub fn to_numpy<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    dtype_typestr(t.dtype())?;
    let np = py.import("numpy")?;
    let holder = Bound::new(py, ArrayView { t: t.clone() })?;
    np.call_method1("asarray", (holder,))
}
