//! `ferrograd.Tensor`: the Python face of `crate::tensor::Tensor`. Hot paths (operators,
//! op methods, autograd attributes) are Rust; a few naturally-Python methods
//! (`backward`, `__repr__`, deepcopy) call into `ferrograd._tensor_py`.

use std::sync::atomic::{AtomicUsize, Ordering};

use pyo3::exceptions::{PyNotImplementedError, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyTuple};

use crate::autograd::warnings::WarningKind;
use crate::bindings::autograd::node_to_py;
use crate::bindings::convert::*;
use crate::bindings::dtype::{dtype_object, PyDType};
use crate::bindings::errors::{flush_warnings, run, warn};
use crate::dtype::{Category, DType, Element, Scalar};
use crate::ops::binary::{self as bin, Arithmetic, Cmp};
use crate::ops::{inplace, linalg, reduce, unary, view};
use crate::tensor::Tensor;

#[pyclass(name = "Tensor", module = "ferrograd", subclass, weakref, dict, frozen)]
pub struct PyTensor {
    pub t: Tensor,
    /// Address of this Python object when it is the tensor's canonical object.
    me: AtomicUsize,
    /// False while Python has allocated the object but PyO3 has not written it yet (the
    /// memory is zeroed then). A collection can run in between, and must not read it.
    ready: bool,
}

impl PyTensor {
    fn new(t: Tensor) -> PyTensor {
        PyTensor {
            t,
            me: AtomicUsize::new(0),
            ready: true,
        }
    }
}

impl PyTensor {
    /// The tensor, for a collector walk (None while the object is not written yet).
    pub(crate) fn gc_tensor(&self) -> Option<&Tensor> {
        self.ready.then_some(&self.t)
    }
}

impl Drop for PyTensor {
    fn drop(&mut self) {
        crate::bindings::gc::owner_freed();
        let me = self.me.load(Ordering::Relaxed);
        if me != 0 {
            let _ = self
                .t
                .py_handle()
                .compare_exchange(me, 0, Ordering::AcqRel, Ordering::Relaxed);
            crate::autograd::foreign::break_grad_cycle(&self.t);
        }
    }
}

/// The Python object for `t`: the existing one if it is alive, else a new one.
pub fn to_py(py: Python<'_>, t: Tensor) -> PyResult<Py<PyAny>> {
    let h = t.py_handle().load(Ordering::Acquire);
    if h != 0 {
        // SAFETY: the handle is cleared (under the GIL) before the object is freed, so a
        // nonzero handle read under the GIL points to a live object.
        return Ok(unsafe { Bound::from_borrowed_ptr(py, h as *mut pyo3::ffi::PyObject) }.unbind());
    }
    let obj = Bound::new(py, PyTensor::new(t.clone()))?;
    register(obj.as_any(), &obj.get().me, &t);
    Ok(obj.into_any().unbind())
}

fn register(obj: &Bound<'_, PyAny>, me: &AtomicUsize, t: &Tensor) {
    let ptr = obj.as_ptr() as usize;
    if t.py_handle()
        .compare_exchange(0, ptr, Ordering::AcqRel, Ordering::Relaxed)
        .is_ok()
    {
        me.store(ptr, Ordering::Relaxed);
    }
}

pub fn opt_to_py(py: Python<'_>, t: Option<Tensor>) -> PyResult<Py<PyAny>> {
    match t {
        Some(t) => to_py(py, t),
        None => Ok(py.None()),
    }
}

/// Python helpers implemented in `ferrograd/_tensor_py.py`.
fn py_helper<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let m = MODULE.get_or_try_init(py, || py.import("ferrograd._tensor_py").map(|m| m.unbind()))?;
    m.bind(py).getattr(name)
}

pub fn size_object<'py>(py: Python<'py>, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    static SIZE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let cls = SIZE.get_or_try_init(py, || {
        py.import("ferrograd._size")?
            .getattr("Size")
            .map(|c| c.unbind())
    })?;
    cls.bind(py).call1((PyTuple::new(py, shape)?,))
}

fn not_implemented(py: Python<'_>) -> Py<PyAny> {
    py.NotImplemented()
}

type Binary = fn(&Tensor, &Tensor) -> crate::error::Result<Tensor>;
type WithScalar = fn(&Tensor, Scalar) -> crate::error::Result<Tensor>;

/// `self ⊕ other` for operators: NotImplemented for foreign operands.
fn binop(
    py: Python<'_>,
    a: &Tensor,
    other: &Bound<'_, PyAny>,
    tt: Binary,
    ts: WithScalar,
) -> PyResult<Py<PyAny>> {
    match as_operand(other) {
        Some(Operand::T(b)) => to_py(py, run(|| tt(a, &b))?),
        Some(Operand::S(s)) => to_py(py, run(|| ts(a, s))?),
        None => Ok(not_implemented(py)),
    }
}

pub(crate) fn cmp_op(
    py: Python<'_>,
    a: &Tensor,
    other: &Bound<'_, PyAny>,
    cmp: Cmp,
) -> PyResult<Py<PyAny>> {
    match as_operand(other) {
        Some(Operand::T(b)) => to_py(py, run(|| bin::compare(a, &b, cmp))?),
        Some(Operand::S(s)) => to_py(py, run(|| bin::compare_scalar(a, s, cmp))?),
        None => Ok(not_implemented(py)),
    }
}

pub(crate) fn expect_operand(other: &Bound<'_, PyAny>, op: &str) -> PyResult<Operand> {
    as_operand(other).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "{op}(): argument 'other' must be Tensor or Number, not {}",
            other
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

pub(crate) fn alpha_of(alpha: Option<&Bound<'_, PyAny>>) -> PyResult<Scalar> {
    match alpha {
        None => Ok(Scalar::Int(1)),
        Some(a) => as_scalar(a).ok_or_else(|| PyTypeError::new_err("alpha must be a Number")),
    }
}

pub(crate) fn mul_scalars(a: Scalar, b: Scalar) -> Scalar {
    if b.is_one() {
        return a;
    }
    match (a, b) {
        (Scalar::Int(x), Scalar::Int(y)) => Scalar::Int(x * y),
        (Scalar::Complex(_), _) | (_, Scalar::Complex(_)) => {
            Scalar::Complex(a.to_c64() * b.to_c64())
        }
        _ => Scalar::Float(a.to_f64() * b.to_f64()),
    }
}

/// `s / t`: torch computes reciprocal(t) * s (so the node is MulBackward0).
fn rdiv(t: &Tensor, s: Scalar) -> crate::error::Result<Tensor> {
    let r = unary::reciprocal(t)?;
    let s_dtype = crate::dtype::promote_with_scalar(r.dtype(), s);
    bin::mul(&r, &Tensor::scalar(s, s_dtype))
}

/// `s ⊕ b` for a Python number `s`: the reflected operators (`2 - t`) and the module
/// functions called with a number first (`ferrograd.sub(2, t)`).
pub fn arith_number_first(s: Scalar, b: &Tensor, kind: Arithmetic) -> crate::error::Result<Tensor> {
    match kind {
        Arithmetic::Add => bin::add_scalar(b, s),
        Arithmetic::Sub => bin::sub_scalar_rev(s, b),
        Arithmetic::Mul => bin::mul_scalar(b, s),
        Arithmetic::Div => rdiv(b, s),
        Arithmetic::Pow => bin::pow_scalar_rev(s, b),
    }
}

pub const ERR_VMAP_ITEM: &str = "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on a Tensor, please try to rewrite what you're doing with other operations. If error is occurring somewhere inside PyTorch internals, please file a bug report.";
const ERR_NO_STORAGE: &str = "Cannot access data pointer of Tensor that doesn't have storage";
const ERR_VMAP_CONTROL_FLOW: &str = "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .";

/// Host reads of a vmap wrapper have no single answer (torch's texts).
pub fn refuse_batched(t: &Tensor, msg: &str) -> PyResult<()> {
    if t.is_batched() {
        return Err(PyRuntimeError::new_err(msg.to_string()));
    }
    Ok(())
}

fn item_scalar(t: &Tensor) -> PyResult<Scalar> {
    refuse_batched(t, ERR_VMAP_ITEM)?;
    if t.numel() != 1 {
        return Err(PyRuntimeError::new_err(format!(
            "a Tensor with {} elements cannot be converted to Scalar",
            t.numel()
        )));
    }
    Ok(crate::with_dtype!(t.dtype(), T => t.to_vec::<T>()[0].to_scalar()))
}

// ---------------------------------------------------------------- the class

#[pymethods]
impl PyTensor {
    /// What this object answers for on the Rust side (see autograd::foreign).
    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if !self.ready {
            return Ok(());
        }
        let canonical = Some(self.me.load(Ordering::Relaxed)).filter(|&me| me != 0);
        let key = self as *const Self as usize;
        crate::bindings::gc::visit_owned(key, canonical, &visit, || {
            crate::autograd::foreign::Handle::Tensor(self.t.clone())
        })
    }
    /// Collected as garbage (see `autograd::foreign::clear_tensor`).
    fn __clear__(&self) {
        if self.ready {
            let canonical = self.me.load(Ordering::Relaxed) != 0;
            crate::autograd::foreign::clear_tensor(&self.t, canonical);
        }
    }
    /// `Tensor(tensor)` aliases the data (used by subclasses such as nn.Parameter);
    /// `Tensor(list)` copies data; `Tensor(*sizes)` makes a zero-filled float tensor.
    #[new]
    #[pyo3(signature = (*args))]
    fn py_new(args: &Bound<'_, PyTuple>) -> PyResult<Self> {
        let t = if args.is_empty() {
            run(|| Tensor::zeros(&[0], crate::dtype::default_float_dtype()))?
        } else if args.len() == 1 && as_tensor_ref(&args.get_item(0)?).is_some() {
            as_tensor_ref(&args.get_item(0)?)
                .expect("checked")
                .alias_detached()
        } else if args.len() == 1 && !args.get_item(0)?.is_instance_of::<pyo3::types::PyInt>() {
            tensor_from_data(
                &args.get_item(0)?,
                Some(crate::dtype::default_float_dtype()),
            )?
        } else {
            let shape = shape_arg(args)?;
            run(|| Tensor::zeros(&shape, crate::dtype::default_float_dtype()))?
        };
        Ok(PyTensor::new(t))
    }

    /// Make this object the canonical Python object of its tensor (subclass __new__).
    fn _fg_register(slf: &Bound<'_, Self>) {
        let this = slf.get();
        register(slf.as_any(), &this.me, &this.t);
    }

    // ----- metadata

    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        size_object(py, &self.t.shape())
    }
    #[pyo3(signature = (dim=None))]
    fn size<'py>(&self, py: Python<'py>, dim: Option<i64>) -> PyResult<Bound<'py, PyAny>> {
        match dim {
            None => size_object(py, &self.t.shape()),
            Some(d) => {
                let w = run(|| crate::shape::wrap_dim(d, self.t.dim()))?;
                Ok(self
                    .t
                    .shape()
                    .get(w)
                    .copied()
                    .unwrap_or(1)
                    .into_pyobject(py)?
                    .into_any())
            }
        }
    }
    #[pyo3(signature = (dim=None))]
    fn stride<'py>(&self, py: Python<'py>, dim: Option<i64>) -> PyResult<Bound<'py, PyAny>> {
        match dim {
            None => Ok(PyTuple::new(py, self.t.strides())?.into_any()),
            Some(d) => {
                let w = run(|| crate::shape::wrap_dim(d, self.t.dim()))?;
                Ok(self
                    .t
                    .strides()
                    .get(w)
                    .copied()
                    .unwrap_or(1)
                    .into_pyobject(py)?
                    .into_any())
            }
        }
    }
    fn storage_offset(&self) -> usize {
        self.t.offset()
    }
    fn data_ptr(&self) -> usize {
        self.t.data_ptr()
    }
    fn dim(&self) -> usize {
        self.t.dim()
    }
    #[getter]
    fn ndim(&self) -> usize {
        self.t.dim()
    }
    fn numel(&self) -> usize {
        self.t.numel()
    }
    fn nelement(&self) -> usize {
        self.t.numel()
    }
    fn element_size(&self) -> usize {
        self.t.dtype().itemsize()
    }
    #[getter]
    fn itemsize(&self) -> usize {
        self.t.dtype().itemsize()
    }
    #[getter]
    fn dtype(&self, py: Python<'_>) -> Py<PyDType> {
        dtype_object(py, self.t.dtype())
    }
    #[getter]
    fn device(&self) -> crate::bindings::device::PyDevice {
        crate::bindings::device::PyDevice {
            device: self.t.device(),
        }
    }
    #[getter]
    fn is_cpu(&self) -> bool {
        self.t.device().kind == crate::device::DeviceType::Cpu
    }
    #[getter]
    fn is_cuda(&self) -> bool {
        self.t.device().kind == crate::device::DeviceType::Cuda
    }
    fn is_contiguous(&self) -> bool {
        self.t.is_contiguous()
    }
    fn is_floating_point(&self) -> bool {
        self.t.dtype().is_floating_point()
    }
    fn is_complex(&self) -> bool {
        self.t.dtype().is_complex()
    }
    fn is_inference(&self) -> bool {
        self.t.is_inference()
    }
    #[pyo3(name = "type")]
    fn type_name(&self) -> String {
        format!("ferrograd.{}", self.t.dtype().legacy_type_name())
    }

    // ----- autograd attributes

    #[getter]
    fn get_requires_grad(&self) -> bool {
        self.t.requires_grad()
    }
    #[setter]
    fn set_requires_grad(&self, value: bool) -> PyResult<()> {
        // Unlike `requires_grad_(True)`, the attribute setter refuses any change on a
        // non-leaf; torch's text for `True` has no hint (C4, C5, issue 7 §6).
        if value && !self.t.is_leaf() {
            return Err(PyRuntimeError::new_err(
                "you can only change requires_grad flags of leaf variables.",
            ));
        }
        run(|| {
            self.t.set_requires_grad_with(
                value,
                "only Tensors of floating point and complex dtype can require gradients",
            )
        })
    }
    #[pyo3(signature = (requires_grad=true))]
    fn requires_grad_(slf: Bound<'_, Self>, requires_grad: bool) -> PyResult<Bound<'_, Self>> {
        run(|| slf.get().t.set_requires_grad(requires_grad))?;
        Ok(slf)
    }
    #[getter]
    fn is_leaf(&self) -> bool {
        self.t.is_leaf()
    }
    #[getter]
    fn grad_fn(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.t.grad_fn() {
            Some(n) => node_to_py(py, n),
            None => Ok(py.None()),
        }
    }
    #[getter]
    fn get_grad(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let g = self.t.grad();
        if g.is_none() && !self.t.is_leaf() && !self.t.retains_grad() {
            warn(py, WarningKind::User, "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more informations.")?;
        }
        opt_to_py(py, g)
    }
    #[setter]
    fn set_grad(&self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let value = match value {
            None => None,
            Some(v) if v.is_none() => None,
            Some(v) => Some(as_tensor_ref(v).ok_or_else(|| {
                PyTypeError::new_err(format!(
                    "assigned grad expected to be a Tensor or None but got grad of type {}",
                    v.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })?),
        };
        if let Some(g) = &value {
            if g.dtype() != self.t.dtype() {
                return Err(PyRuntimeError::new_err(format!(
                    "attempting to assign a gradient with dtype '{}' to a tensor with grad_dtype '{}'. Please ensure that the gradient and the tensor have the same dtype",
                    g.dtype().cpp_name(),
                    self.t.dtype().scalar_type_name()
                )));
            }
            if g.shape() != self.t.shape() {
                return Err(PyRuntimeError::new_err(format!(
                    "attempting to assign a gradient of size '{}' to a tensor of size '{}'. Please ensure that the gradient and the tensor are the same size",
                    crate::shape::fmt_dims(&g.shape()),
                    crate::shape::fmt_dims(&self.t.shape())
                )));
            }
        }
        self.t.set_grad_unchecked(value);
        Ok(())
    }
    #[getter]
    fn retains_grad(&self) -> bool {
        self.t.retains_grad()
    }
    fn retain_grad(&self) -> PyResult<()> {
        run(|| crate::autograd::node::retain_grad(&self.t))
    }
    #[getter]
    fn output_nr(&self) -> usize {
        self.t.output_nr()
    }
    #[getter]
    fn _version(&self) -> PyResult<u64> {
        if self.t.is_inference() {
            return Err(PyRuntimeError::new_err(
                "Inference tensors do not track version counter.",
            ));
        }
        Ok(self.t.version())
    }
    /// Whether this tensor is a view of another (its `_base` is set).
    fn _is_view(&self) -> bool {
        self.t.is_view()
    }
    #[getter]
    fn _base(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        opt_to_py(py, self.t.view_base())
    }
    #[getter]
    fn get_data(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, self.t.alias_fresh_version())
    }
    /// `x.data = y`: x's elements become y's; x keeps its version counter, history,
    /// hooks and identity (see `Tensor::set_data`).
    #[setter]
    fn set_data(&self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let Some(value) = value else {
            return Err(PyTypeError::new_err("can't delete attribute"));
        };
        let Some(other) = crate::bindings::convert::as_tensor_ref(value) else {
            return Err(PyTypeError::new_err(format!(
                "Variable data has to be a tensor, but got {}",
                crate::bindings::hooks::type_name(value)
            )));
        };
        run(|| self.t.set_data(&other))
    }
    fn detach(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, self.t.alias_detached())
    }
    fn detach_(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        run(|| slf.get().t.detach_())?;
        Ok(slf)
    }

    #[pyo3(signature = (gradient=None, retain_graph=None, create_graph=false, inputs=None))]
    fn backward(
        slf: &Bound<'_, Self>,
        gradient: Option<&Bound<'_, PyAny>>,
        retain_graph: Option<bool>,
        create_graph: bool,
        inputs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let py = slf.py();
        py_helper(py, "backward")?.call1((slf, gradient, retain_graph, create_graph, inputs))?;
        Ok(())
    }
    fn register_hook(&self, hook: Py<PyAny>) -> PyResult<crate::bindings::hooks::RemovableHandle> {
        crate::bindings::hooks::register_tensor_hook(&self.t, hook)
    }
    fn register_post_accumulate_grad_hook(
        &self,
        hook: Py<PyAny>,
    ) -> PyResult<crate::bindings::hooks::RemovableHandle> {
        crate::bindings::hooks::register_post_accumulate_hook(&self.t, hook)
    }
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        py_helper(slf.py(), "tensor_repr")?.call1((slf,))?.extract()
    }
    fn __deepcopy__(slf: &Bound<'_, Self>, memo: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Ok(py_helper(slf.py(), "deepcopy")?
            .call1((slf, memo))?
            .unbind())
    }
    fn __copy__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        Ok(py_helper(slf.py(), "shallow_copy")?.call1((slf,))?.unbind())
    }
    fn __reduce_ex__(slf: &Bound<'_, Self>, protocol: i64) -> PyResult<Py<PyAny>> {
        Ok(py_helper(slf.py(), "reduce_ex")?
            .call1((slf, protocol))?
            .unbind())
    }
    /// deepcopy/pickle: a fresh 1-D tensor holding a copy of this tensor's whole storage.
    fn _fg_copy_storage(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        refuse_batched(&self.t, ERR_NO_STORAGE)?;
        let len = self.t.data().storage_len();
        let flat = run(|| {
            self.t
                .alias_with_layout(crate::layout::Layout::contiguous(&[len]))
        })?;
        to_py(py, run(|| crate::ops::device::cast(&flat, flat.dtype()))?)
    }
    /// Identity of this tensor's memory (deepcopy keeps shared memory shared).
    fn _fg_storage_id(&self) -> usize {
        std::sync::Arc::as_ptr(self.t.data().storage()) as usize
    }
    /// A non-view tensor over this tensor's memory with the given layout.
    fn _fg_alias_layout(
        &self,
        py: Python<'_>,
        size: Vec<usize>,
        stride: Vec<usize>,
        offset: usize,
    ) -> PyResult<Py<PyAny>> {
        let layout = crate::layout::Layout {
            shape: size.as_slice().into(),
            strides: stride.as_slice().into(),
            offset,
        };
        to_py(py, run(|| self.t.alias_with_layout(layout))?)
    }
    fn __hash__(slf: &Bound<'_, Self>) -> isize {
        slf.as_ptr() as isize
    }

    // ----- conversion

    fn tolist(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        refuse_batched(&self.t, ERR_NO_STORAGE)?;
        tolist(py, &self.t)
    }
    fn item(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        scalar_to_py(py, item_scalar(&self.t)?)
    }
    #[pyo3(signature = (*, force=false))]
    fn numpy<'py>(&self, py: Python<'py>, force: bool) -> PyResult<Bound<'py, PyAny>> {
        refuse_batched(&self.t, ERR_NO_STORAGE)?;
        // torch only refuses while grad mode is on: under no_grad() numpy() works.
        if !force && crate::autograd::grad_mode::is_grad_enabled() && self.t.requires_grad() {
            return Err(PyRuntimeError::new_err("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."));
        }
        to_numpy(py, &self.t)
    }
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = copy;
        refuse_batched(&self.t, ERR_NO_STORAGE)?;
        let arr = to_numpy(py, &self.t.alias_detached())?;
        match dtype {
            Some(d) if !d.is_none() => arr.call_method1("astype", (d,)),
            _ => Ok(arr),
        }
    }
    fn __len__(&self) -> PyResult<usize> {
        if self.t.dim() == 0 {
            return Err(PyTypeError::new_err("len() of a 0-d tensor"));
        }
        Ok(self.t.shape()[0])
    }
    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if self.t.dim() == 0 {
            return Err(PyTypeError::new_err("iteration over a 0-d tensor"));
        }
        let parts = run(|| view::unbind(&self.t, 0))?;
        let objs: PyResult<Vec<Py<PyAny>>> = parts.into_iter().map(|p| to_py(py, p)).collect();
        Ok(PyList::new(py, objs?)?.try_iter()?.into_any().unbind())
    }
    fn __bool__(&self) -> PyResult<bool> {
        refuse_batched(&self.t, ERR_VMAP_CONTROL_FLOW)?;
        if self.t.numel() != 1 {
            return Err(PyRuntimeError::new_err(format!(
                "Boolean value of Tensor with {} values is ambiguous",
                if self.t.numel() == 0 {
                    "no"
                } else {
                    "more than one"
                }
            )));
        }
        Ok(item_scalar(&self.t)?.to_c64() != num_complex::Complex64::new(0.0, 0.0))
    }
    fn __float__(&self) -> PyResult<f64> {
        Ok(item_scalar(&self.t)?.to_f64())
    }
    fn __int__(&self) -> PyResult<i64> {
        Ok(match item_scalar(&self.t)? {
            Scalar::Int(i) => i,
            Scalar::Bool(b) => b as i64,
            s => s.to_f64().trunc() as i64,
        })
    }
    fn __index__(&self) -> PyResult<i64> {
        if self.t.dtype().category() > Category::Integral || self.t.numel() != 1 {
            return Err(PyTypeError::new_err(
                "only integer tensors of a single element can be converted to an index",
            ));
        }
        self.__int__()
    }
    fn __complex__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyComplex>> {
        let c = item_scalar(&self.t)?.to_c64();
        Ok(pyo3::types::PyComplex::from_doubles(py, c.re, c.im))
    }

    /// torch's three overloads: `to(device, dtype, non_blocking, copy)`, `to(dtype, ...)`,
    /// `to(other, ...)`. Returns `self` when nothing changes and no copy is asked for.
    #[pyo3(signature = (*args, **kwargs))]
    fn to(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let req = crate::bindings::device::parse_to(args, kwargs)?;
        if let Some(d) = req.device {
            crate::bindings::device::check_available(d, crate::device::Use::Copy)?;
        }
        let t = &slf.get().t;
        let dtype = req.dtype.unwrap_or(t.dtype());
        if !req.copy && dtype == t.dtype() {
            return Ok(slf.clone().into_any().unbind());
        }
        let copy = unary::ToCopy { dtype };
        to_py(
            slf.py(),
            run(|| crate::ops::apply1(copy, std::slice::from_ref(t)))?,
        )
    }
    fn float(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| unary::to_dtype(&self.t, DType::F32))?)
    }
    fn double(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| unary::to_dtype(&self.t, DType::F64))?)
    }
    fn half(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| unary::to_dtype(&self.t, DType::F16))?)
    }
    fn bfloat16(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| unary::to_dtype(&self.t, DType::BF16))?)
    }
    fn long(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| unary::to_dtype(&self.t, DType::I64))?)
    }
    fn int(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| unary::to_dtype(&self.t, DType::I32))?)
    }
    fn bool(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| unary::to_dtype(&self.t, DType::Bool))?)
    }
    fn cfloat(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| unary::to_dtype(&self.t, DType::C64))?)
    }
    fn cdouble(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| unary::to_dtype(&self.t, DType::C128))?)
    }
    #[pyo3(signature = (*, memory_format=None))]
    fn cpu<'py>(
        slf: Bound<'py, Self>,
        memory_format: Option<&Bound<'py, PyAny>>,
    ) -> Bound<'py, Self> {
        let _ = memory_format;
        slf
    }
    /// No CUDA backend exists yet: raises torch's error for the device asked for.
    #[pyo3(signature = (device=None, non_blocking=false, memory_format=None))]
    fn cuda(
        &self,
        device: Option<&Bound<'_, PyAny>>,
        non_blocking: bool,
        memory_format: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = (non_blocking, memory_format);
        Err(crate::bindings::device::cuda_error(device))
    }

    // ----- operators

    fn __add__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(py, &self.t, o, bin::add, bin::add_scalar)
    }
    fn __radd__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(py, &self.t, o, |a, b| bin::add(b, a), bin::add_scalar)
    }
    fn __sub__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(
            py,
            &self.t,
            o,
            |a, b| bin::sub(a, b, Scalar::Int(1)),
            bin::sub_scalar,
        )
    }
    fn __rsub__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(
            py,
            &self.t,
            o,
            |a, b| bin::sub(b, a, Scalar::Int(1)),
            |a, s| arith_number_first(s, a, Arithmetic::Sub),
        )
    }
    fn __mul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(py, &self.t, o, bin::mul, bin::mul_scalar)
    }
    fn __rmul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(py, &self.t, o, |a, b| bin::mul(b, a), bin::mul_scalar)
    }
    fn __truediv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(py, &self.t, o, bin::div, bin::div_scalar)
    }
    fn __rtruediv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(
            py,
            &self.t,
            o,
            |a, b| bin::div(b, a),
            |a, s| arith_number_first(s, a, Arithmetic::Div),
        )
    }
    fn __pow__(
        &self,
        py: Python<'_>,
        o: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = modulo;
        binop(py, &self.t, o, bin::pow, bin::pow_scalar)
    }
    fn __rpow__(
        &self,
        py: Python<'_>,
        o: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = modulo;
        binop(
            py,
            &self.t,
            o,
            |a, b| bin::pow(b, a),
            |a, s| arith_number_first(s, a, Arithmetic::Pow),
        )
    }
    fn __matmul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        match as_tensor_ref(o) {
            Some(b) => to_py(py, run(|| linalg::matmul(&self.t, &b))?),
            None => Ok(not_implemented(py)),
        }
    }
    fn __rmatmul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        match as_tensor_ref(o) {
            Some(a) => to_py(py, run(|| linalg::matmul(&a, &self.t))?),
            None => Ok(not_implemented(py)),
        }
    }
    fn __neg__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| unary::neg(&self.t))?)
    }
    fn __pos__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }
    fn __abs__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| unary::abs(&self.t))?)
    }
    fn __eq__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        cmp_op(py, &self.t, o, Cmp::Eq)
    }
    fn __ne__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        cmp_op(py, &self.t, o, Cmp::Ne)
    }
    fn __lt__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        cmp_op(py, &self.t, o, Cmp::Lt)
    }
    fn __le__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        cmp_op(py, &self.t, o, Cmp::Le)
    }
    fn __gt__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        cmp_op(py, &self.t, o, Cmp::Gt)
    }
    fn __ge__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        cmp_op(py, &self.t, o, Cmp::Ge)
    }
    fn __iadd__(&self, o: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::bindings::op_table::arith_(&self.t, o, Arithmetic::Add, Scalar::Int(1), "inplace")
    }
    fn __isub__(&self, o: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::bindings::op_table::arith_(&self.t, o, Arithmetic::Sub, Scalar::Int(1), "inplace")
    }
    fn __imul__(&self, o: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::bindings::op_table::arith_(&self.t, o, Arithmetic::Mul, Scalar::Int(1), "inplace")
    }
    fn __itruediv__(&self, o: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::bindings::op_table::arith_(&self.t, o, Arithmetic::Div, Scalar::Int(1), "inplace")
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        to_py(py, crate::bindings::indexing::get(&self.t, key)?)
    }
    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        crate::bindings::indexing::set(&self.t, key, value)?;
        flush_warnings(py)
    }

    // ----- math methods (the elementwise ones and sum/mean are in op_table.rs)

    #[pyo3(signature = (dim=None, keepdim=false))]
    fn max(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        keepdim: bool,
    ) -> PyResult<Py<PyAny>> {
        extreme(py, &self.t, dim, keepdim, reduce::Extreme::Max)
    }
    #[pyo3(signature = (dim=None, keepdim=false))]
    fn min(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        keepdim: bool,
    ) -> PyResult<Py<PyAny>> {
        extreme(py, &self.t, dim, keepdim, reduce::Extreme::Min)
    }
    fn matmul(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let b = extract_tensor(other, "matmul(): argument 'other'")?;
        to_py(py, run(|| linalg::matmul(&self.t, &b))?)
    }
    fn mm(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let b = extract_tensor(other, "mm(): argument 'mat2'")?;
        to_py(py, run(|| linalg::mm(&self.t, &b))?)
    }
    fn bmm(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let b = extract_tensor(other, "bmm(): argument 'mat2'")?;
        to_py(py, run(|| linalg::bmm(&self.t, &b))?)
    }
    fn mv(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let b = extract_tensor(other, "mv(): argument 'vec'")?;
        to_py(py, run(|| linalg::mv(&self.t, &b))?)
    }
    fn dot(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let b = extract_tensor(other, "dot(): argument 'tensor'")?;
        to_py(py, run(|| linalg::dot(&self.t, &b))?)
    }
    #[pyo3(signature = (*, memory_format=None))]
    fn clone(
        &self,
        py: Python<'_>,
        memory_format: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = memory_format;
        to_py(py, run(|| unary::clone(&self.t))?)
    }
    #[pyo3(signature = (*, memory_format=None))]
    fn contiguous(
        &self,
        py: Python<'_>,
        memory_format: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = memory_format;
        to_py(py, run(|| view::contiguous(&self.t))?)
    }
    // ----- views

    #[pyo3(signature = (*shape))]
    fn view(&self, py: Python<'_>, shape: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        if shape.len() == 1 {
            if let Ok(d) = dtype_of(&shape.get_item(0)?) {
                if d == self.t.dtype() {
                    return to_py(py, run(|| view::alias(&self.t))?);
                }
                return Err(PyNotImplementedError::new_err(
                    "view(dtype) reinterpretation is not supported yet",
                ));
            }
        }
        let s = int_list(shape)?;
        to_py(py, run(|| view::view(&self.t, &s))?)
    }
    #[pyo3(signature = (*shape))]
    fn reshape(&self, py: Python<'_>, shape: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let s = int_list(shape)?;
        to_py(py, run(|| view::reshape_infer(&self.t, &s))?)
    }
    fn view_as(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let o = extract_tensor(other, "view_as(): argument 'other'")?;
        let s: Vec<i64> = o.shape().iter().map(|&x| x as i64).collect();
        to_py(py, run(|| view::view(&self.t, &s))?)
    }
    fn reshape_as(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let o = extract_tensor(other, "reshape_as(): argument 'other'")?;
        to_py(py, run(|| view::reshape(&self.t, &o.shape()))?)
    }
    #[pyo3(signature = (*dims))]
    fn permute(&self, py: Python<'_>, dims: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let d = int_list(dims)?;
        to_py(py, run(|| view::permute(&self.t, &d))?)
    }
    fn transpose(&self, py: Python<'_>, dim0: i64, dim1: i64) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| view::transpose(&self.t, dim0, dim1))?)
    }
    fn swapaxes(&self, py: Python<'_>, axis0: i64, axis1: i64) -> PyResult<Py<PyAny>> {
        self.transpose(py, axis0, axis1)
    }
    fn swapdims(&self, py: Python<'_>, dim0: i64, dim1: i64) -> PyResult<Py<PyAny>> {
        self.transpose(py, dim0, dim1)
    }
    fn t(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| view::t(&self.t))?)
    }
    #[getter(T)]
    fn big_t(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let dims: Vec<i64> = (0..self.t.dim() as i64).rev().collect();
        to_py(py, run(|| view::permute(&self.t, &dims))?)
    }
    #[getter(mT)]
    fn m_t(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if self.t.dim() < 2 {
            return Err(PyRuntimeError::new_err(format!(
                "tensor.mT is only supported on matrices or batches of matrices. Got {}-D tensor.",
                self.t.dim()
            )));
        }
        to_py(py, run(|| view::transpose(&self.t, -2, -1))?)
    }
    #[pyo3(signature = (*sizes))]
    fn expand(&self, py: Python<'_>, sizes: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let s = int_list(sizes)?;
        to_py(py, run(|| view::expand_sizes(&self.t, &s))?)
    }
    fn expand_as(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let o = extract_tensor(other, "expand_as(): argument 'other'")?;
        to_py(py, run(|| view::expand(&self.t, &o.shape()))?)
    }
    #[pyo3(signature = (dim=None))]
    fn squeeze(&self, py: Python<'_>, dim: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let dims = opt_dims(dim)?;
        to_py(py, run(|| view::squeeze(&self.t, dims.as_deref()))?)
    }
    fn unsqueeze(&self, py: Python<'_>, dim: i64) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| view::unsqueeze(&self.t, dim))?)
    }
    #[pyo3(signature = (start_dim=0, end_dim=-1))]
    fn flatten(&self, py: Python<'_>, start_dim: i64, end_dim: i64) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| view::flatten(&self.t, start_dim, end_dim))?)
    }
    fn unflatten(&self, py: Python<'_>, dim: i64, sizes: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let s = seq_ints(sizes.cast()?)?;
        to_py(py, run(|| view::unflatten(&self.t, dim, &s))?)
    }
    fn narrow(&self, py: Python<'_>, dim: i64, start: i64, length: i64) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| view::narrow(&self.t, dim, start, length))?)
    }
    fn select(&self, py: Python<'_>, dim: i64, index: i64) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| view::select(&self.t, dim, index))?)
    }
    #[pyo3(signature = (dim=0))]
    fn unbind(&self, py: Python<'_>, dim: i64) -> PyResult<Py<PyAny>> {
        tuple_of(py, run(|| view::unbind(&self.t, dim))?)
    }
    #[pyo3(signature = (split_size_or_sections, dim=0))]
    fn split(
        &self,
        py: Python<'_>,
        split_size_or_sections: &Bound<'_, PyAny>,
        dim: i64,
    ) -> PyResult<Py<PyAny>> {
        split_any(py, &self.t, split_size_or_sections, dim)
    }
    #[pyo3(signature = (chunks, dim=0))]
    fn chunk(&self, py: Python<'_>, chunks: usize, dim: i64) -> PyResult<Py<PyAny>> {
        tuple_of(py, run(|| view::chunk(&self.t, chunks, dim))?)
    }
    #[pyo3(signature = (offset=0, dim1=0, dim2=1))]
    fn diagonal(&self, py: Python<'_>, offset: i64, dim1: i64, dim2: i64) -> PyResult<Py<PyAny>> {
        to_py(py, run(|| view::diagonal(&self.t, offset, dim1, dim2))?)
    }
    #[pyo3(signature = (size, stride, storage_offset=None))]
    fn as_strided(
        &self,
        py: Python<'_>,
        size: &Bound<'_, PyAny>,
        stride: &Bound<'_, PyAny>,
        storage_offset: Option<i64>,
    ) -> PyResult<Py<PyAny>> {
        let size = seq_ints(size.cast()?)?;
        let stride = seq_ints(stride.cast()?)?;
        to_py(
            py,
            run(|| view::as_strided(&self.t, &size, &stride, storage_offset))?,
        )
    }

    // ----- in-place

    // add_, mul_, exp_, clamp_, ...: op_table.rs
    fn zero_(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        run(|| inplace::zero_(&slf.get().t))?;
        Ok(slf)
    }
    fn fill_<'py>(slf: Bound<'py, Self>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        let s = match as_operand(value) {
            Some(Operand::S(s)) => s,
            Some(Operand::T(t)) if t.dim() == 0 => item_scalar(&t)?,
            _ => {
                return Err(PyTypeError::new_err(
                    "fill_(): argument 'value' must be Number",
                ))
            }
        };
        run(|| inplace::fill_(&slf.get().t, s))?;
        Ok(slf)
    }
    #[pyo3(signature = (src, non_blocking=false))]
    fn copy_<'py>(
        slf: Bound<'py, Self>,
        src: &Bound<'py, PyAny>,
        non_blocking: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let _ = non_blocking;
        let s = extract_tensor(src, "copy_(): argument 'src'")?;
        run(|| inplace::copy_checked(&slf.get().t, &s))?;
        flush_warnings(slf.py())?;
        Ok(slf)
    }
}

pub(crate) fn bound_scalar(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Scalar>> {
    match v {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => match as_operand(o) {
            Some(Operand::S(s)) => Ok(Some(s)),
            Some(Operand::T(t)) if t.numel() == 1 => Ok(Some(item_scalar(&t)?)),
            _ => Err(PyNotImplementedError::new_err(
                "clamp with tensor bounds is not supported yet",
            )),
        },
    }
}

pub fn extreme(
    py: Python<'_>,
    t: &Tensor,
    dim: Option<&Bound<'_, PyAny>>,
    keepdim: bool,
    which: reduce::Extreme,
) -> PyResult<Py<PyAny>> {
    match dim {
        Some(d) if !d.is_none() => {
            // max(a, b) / min(a, b): torch's overload for maximum / minimum.
            if let Some(other) = as_tensor_ref(d) {
                let op = match which {
                    reduce::Extreme::Max => crate::kernels::kinds::Extremum::Maximum,
                    reduce::Extreme::Min => crate::kernels::kinds::Extremum::Minimum,
                };
                return to_py(py, run(|| crate::ops::extrema::pairwise(t, &other, op))?);
            }
            let d: i64 = d.extract()?;
            let (v, i) = run(|| reduce::extreme_dim(t, which, d, keepdim))?;
            let name = if which == reduce::Extreme::Max {
                "max"
            } else {
                "min"
            };
            values_indices(py, name, v, i)
        }
        _ => to_py(py, run(|| reduce::extreme_all(t, which))?),
    }
}

/// `ferrograd.return_types.<name>(values, indices)`, the named pair torch returns.
pub fn values_indices(py: Python<'_>, name: &str, v: Tensor, i: Tensor) -> PyResult<Py<PyAny>> {
    let ret = py_helper(py, "return_types")?.call1((name, to_py(py, v)?, to_py(py, i)?))?;
    Ok(ret.unbind())
}

pub fn tuple_of(py: Python<'_>, parts: Vec<Tensor>) -> PyResult<Py<PyAny>> {
    let objs: PyResult<Vec<Py<PyAny>>> = parts.into_iter().map(|p| to_py(py, p)).collect();
    Ok(PyTuple::new(py, objs?)?.into_any().unbind())
}

pub fn split_any(
    py: Python<'_>,
    t: &Tensor,
    spec: &Bound<'_, PyAny>,
    dim: i64,
) -> PyResult<Py<PyAny>> {
    if let Ok(n) = spec.extract::<i64>() {
        if n < 0 {
            return Err(PyRuntimeError::new_err(format!(
                "split expects split_size be non-negative, but got split_size={n}"
            )));
        }
        return tuple_of(py, run(|| view::split(t, n as usize, dim))?);
    }
    let sizes = to_shape(&seq_ints(spec.cast()?)?)?;
    tuple_of(py, run(|| view::split_with_sizes(t, &sizes, dim))?)
}
