//! Graph nodes as Python objects (`grad_fn`), the backward entry point, and the
//! thread-local mode switches.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};

use crate::autograd::grad_mode;
use crate::autograd::node::{Edge, Node, NodeKind};
use crate::bindings::convert::extract_tensor;
use crate::bindings::errors::{flush_warnings, run};
use crate::bindings::tensor::{opt_to_py, to_py};
use crate::engine::{run_backward, BackwardOptions, Root};
use crate::tensor::Tensor;

#[pyclass(name = "CppNode", module = "ferrograd._C", weakref, frozen, subclass)]
pub struct PyNode {
    pub node: Arc<Node>,
    me: AtomicUsize,
    /// False while Python has allocated the object but PyO3 has not written it yet (the
    /// memory is zeroed then). A collection can run in between, and must not read it.
    ready: bool,
}

impl PyNode {
    /// The node, for a collector walk (None while the object is not written yet).
    pub(crate) fn gc_node(&self) -> Option<&Arc<Node>> {
        self.ready.then_some(&self.node)
    }
}

impl Drop for PyNode {
    fn drop(&mut self) {
        crate::bindings::gc::owner_freed();
        let me = self.me.load(Ordering::Relaxed);
        if me != 0 {
            let _ =
                self.node
                    .py_handle
                    .compare_exchange(me, 0, Ordering::AcqRel, Ordering::Relaxed);
        }
    }
}

thread_local! {
    /// The node `CppNode.__new__` wraps: set by `node_to_py` just around the call, so
    /// user code cannot make a node object out of nothing.
    static PENDING_NODE: std::cell::RefCell<Option<Arc<Node>>> = const { std::cell::RefCell::new(None) };
}

/// The Python class of the nodes with this name: a subclass of `CppNode` named like
/// torch's node classes (`MulBackward0`, `AccumulateGrad`), made on first use.
fn node_type<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    static TYPES: pyo3::sync::PyOnceLock<Py<PyDict>> = pyo3::sync::PyOnceLock::new();
    let types = TYPES.get_or_init(py, || PyDict::new(py).unbind()).bind(py);
    let short = name.rsplit("::").next().unwrap_or(name);
    if let Some(t) = types.get_item(short)? {
        return Ok(t.cast_into::<PyType>()?);
    }
    let namespace = PyDict::new(py);
    namespace.set_item("__slots__", PyTuple::empty(py))?;
    namespace.set_item("__module__", "ferrograd._C")?;
    let base = py.get_type::<PyNode>();
    let t = py
        .get_type::<PyType>()
        .call1((short, (base,), namespace))?
        .cast_into::<PyType>()?;
    types.set_item(short, &t)?;
    Ok(t)
}

/// The Python object for a node (the same object while it is alive); for a custom
/// Function's node, its ctx object.
pub fn node_to_py(py: Python<'_>, node: Arc<Node>) -> PyResult<Py<PyAny>> {
    if let Some(ctx) = crate::bindings::function::custom_ctx(py, &node) {
        return Ok(ctx);
    }
    let h = node.py_handle.load(Ordering::Acquire);
    if h != 0 {
        // SAFETY: cleared under the GIL before the object is freed (see PyNode::drop).
        return Ok(unsafe { Bound::from_borrowed_ptr(py, h as *mut pyo3::ffi::PyObject) }.unbind());
    }
    let ty = node_type(py, node.name())?;
    PENDING_NODE.with(|p| *p.borrow_mut() = Some(node.clone()));
    let obj = ty.call0();
    PENDING_NODE.with(|p| p.borrow_mut().take());
    let obj = obj?.cast_into::<PyNode>()?;
    let ptr = obj.as_ptr() as usize;
    if node
        .py_handle
        .compare_exchange(0, ptr, Ordering::AcqRel, Ordering::Relaxed)
        .is_ok()
    {
        obj.get().me.store(ptr, Ordering::Relaxed);
    }
    Ok(obj.into_any().unbind())
}

#[pymethods]
impl PyNode {
    /// What this object answers for on the Rust side (see autograd::foreign).
    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if !self.ready {
            return Ok(());
        }
        let key = self as *const Self as usize;
        let me = Some(self.me.load(Ordering::Relaxed)).filter(|&me| me != 0);
        crate::bindings::gc::visit_owned(key, me, &visit, || {
            crate::autograd::foreign::Handle::Node(self.node.clone())
        })
    }
    /// Collected as garbage (see `autograd::foreign::clear_node`).
    fn __clear__(&self) {
        if self.ready {
            crate::autograd::foreign::clear_node(&self.node);
        }
    }
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let node = PENDING_NODE
            .with(|p| p.borrow_mut().take())
            .ok_or_else(|| {
                pyo3::exceptions::PyTypeError::new_err("cannot create 'CppNode' instances")
            })?;
        Ok(PyNode {
            node,
            me: AtomicUsize::new(0),
            ready: true,
        })
    }
    fn name(&self) -> String {
        self.node.name().to_string()
    }
    #[getter]
    fn next_functions(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        let mut items = Vec::with_capacity(self.node.next_edges.len());
        for e in &self.node.next_edges {
            items.push(match e {
                Some(e) => (node_to_py(py, e.node.clone())?, e.input_nr)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind(),
                None => (py.None(), 0usize).into_pyobject(py)?.into_any().unbind(),
            });
        }
        Ok(PyTuple::new(py, items)?.unbind())
    }
    #[getter]
    fn metadata(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let mut extras = self.node.extras();
        if let Some(d) = extras
            .py_metadata
            .as_ref()
            .and_then(|b| b.as_any().downcast_ref::<crate::bindings::gc::HeldPy>())
        {
            return Ok(d.bind(py).cast::<PyDict>()?.clone().unbind());
        }
        let d = PyDict::new(py).unbind();
        extras.py_metadata = Some(Box::new(crate::bindings::gc::HeldPy::new(
            d.clone_ref(py).into_any(),
        )));
        Ok(d)
    }
    #[getter]
    fn variable(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match &self.node.kind {
            NodeKind::AccumulateGrad(t) => to_py(py, t.clone()),
            _ => Err(pyo3::exceptions::PyAttributeError::new_err(format!(
                "'{}' object has no attribute 'variable'",
                self.node.name()
            ))),
        }
    }
    fn _sequence_nr(&self) -> u64 {
        self.node.sequence_nr
    }
    /// Whether any input of the forward op needed a gradient (always, for a recorded node).
    #[getter]
    fn requires_grad(&self) -> bool {
        self.node.next_edges.iter().any(|e| e.is_some())
            || matches!(self.node.kind, NodeKind::AccumulateGrad(_))
    }
    /// `grad_fn(*grads)`: apply this node's backward to the given gradients, as torch's
    /// nodes do when called (no hooks; grad mode as it is, so a graph is recorded when
    /// it is on). One result is returned as is, several as a tuple (issue 7 §6).
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        if kwargs.is_some_and(|k| !k.is_empty()) {
            return Err(PyTypeError::new_err("keyword arguments are not supported"));
        }
        let expected = self.node.num_inputs();
        if args.len() != expected {
            return Err(PyTypeError::new_err(format!(
                "expected {expected} arguments, got {} instead",
                args.len()
            )));
        }
        let mut grads = Vec::with_capacity(expected);
        for (i, a) in args.iter().enumerate() {
            if a.is_none() {
                grads.push(None);
                continue;
            }
            let t = crate::bindings::convert::as_tensor_ref(&a)
                .ok_or_else(|| PyTypeError::new_err(format!("argument {i} is not a Variable")))?;
            grads.push(Some(t));
        }
        let create_graph = grad_mode::is_grad_enabled();
        let node = self.node.clone();
        let result = py.detach(|| run(|| crate::engine::apply_node(&node, grads, create_graph)));
        flush_warnings(py)?;
        let out = result?;
        if out.len() == 1 {
            return opt_to_py(py, out.into_iter().next().flatten());
        }
        let objs: PyResult<Vec<Py<PyAny>>> = out.into_iter().map(|g| opt_to_py(py, g)).collect();
        Ok(PyTuple::new(py, objs?)?.into_any().unbind())
    }
    /// torch's legacy path for `Tensor.register_hook`: the hooks in
    /// `tensor._backward_hooks` (read at each call, in order) become a pre-hook of the
    /// tensor's slot on this node.
    fn _register_hook_dict(&self, py: Python<'_>, tensor: &Bound<'_, PyAny>) -> PyResult<()> {
        py.import("ferrograd.autograd.graph")?
            .getattr("_register_hook_dict")?
            .call1((tensor,))?;
        Ok(())
    }
    fn register_hook(&self, hook: Py<PyAny>) -> crate::bindings::hooks::RemovableHandle {
        crate::bindings::hooks::register_node_hook(&self.node, hook, false)
    }
    fn register_prehook(&self, hook: Py<PyAny>) -> crate::bindings::hooks::RemovableHandle {
        crate::bindings::hooks::register_node_hook(&self.node, hook, true)
    }
    /// `_saved_<name>`: the values the op saved, under torch's names.
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        if let Some(attr) = name.strip_prefix("_saved_") {
            if let Some(v) = saved_attr(py, &self.node, attr)? {
                return Ok(v);
            }
        }
        if let Some(attr) = name.strip_prefix("_raw_saved_") {
            if let NodeKind::Op(op) = &self.node.kind {
                if let Some((_, crate::ops::SavedAttr::Slot(slot))) =
                    op.saved_attrs().into_iter().find(|(n, _)| *n == attr)
                {
                    let raw = crate::bindings::hooks::PySavedTensor {
                        node: self.node.clone(),
                        slot,
                    };
                    return Ok(Py::new(py, raw)?.into_any());
                }
            }
        }
        Err(pyo3::exceptions::PyAttributeError::new_err(format!(
            "'{}' object has no attribute '{}'",
            self.node.name(),
            name
        )))
    }
    fn __dir__(&self) -> Vec<String> {
        let mut names: Vec<String> = [
            "metadata",
            "name",
            "next_functions",
            "register_hook",
            "register_prehook",
            "requires_grad",
            "_sequence_nr",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if let NodeKind::Op(op) = &self.node.kind {
            for (n, attr) in op.saved_attrs() {
                names.push(format!("_saved_{n}"));
                if matches!(attr, crate::ops::SavedAttr::Slot(_)) {
                    names.push(format!("_raw_saved_{n}"));
                }
            }
        }
        if matches!(self.node.kind, NodeKind::AccumulateGrad(_)) {
            names.push("variable".into());
        }
        names.sort();
        names
    }
    /// Python's default repr, as torch's nodes have: the class name (`CopySlices`,
    /// `AccumulateGrad`), not `name()` (`torch::autograd::CopySlices`).
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        Ok(format!(
            "<{} object at {:#x}>",
            slf.get_type().name()?,
            slf.as_ptr() as usize
        ))
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyNode>()
            .is_ok_and(|o| Arc::ptr_eq(&o.get().node, &self.node))
    }
    fn __hash__(&self) -> isize {
        Arc::as_ptr(&self.node) as isize
    }
}

/// The value of `_saved_<attr>` on `node`, None when the op has no such attribute.
fn saved_attr(py: Python<'_>, node: &Arc<Node>, attr: &str) -> PyResult<Option<Py<PyAny>>> {
    use crate::ops::SavedAttr;
    let NodeKind::Op(op) = &node.kind else {
        return Ok(None);
    };
    let Some((_, value)) = op.saved_attrs().into_iter().find(|(n, _)| *n == attr) else {
        return Ok(None);
    };
    Ok(Some(match value {
        SavedAttr::Slot(k) => {
            // Copied out of the lock: unpacking may run an unpack hook.
            let (slot, released) = {
                let slots = node.saved_slots();
                (slots.slots.get(k).cloned(), slots.released)
            };
            match slot {
                Some(Some(st)) => to_py(py, run(|| st.unpack(node))?)?,
                _ if released => {
                    return Err(PyRuntimeError::new_err(crate::autograd::saved::ERR_FREED))
                }
                _ => py.None(),
            }
        }
        SavedAttr::Scalar(s) => crate::bindings::convert::scalar_to_py(py, s)?,
        SavedAttr::Ints(v) => PyTuple::new(py, v)?.into_any().unbind(),
        SavedAttr::InputSizes(i) => PyTuple::new(py, node.input_meta[i].shape.iter().copied())?
            .into_any()
            .unbind(),
    }))
}

/// torch's `next_functions`: `((node, input_nr) | (None, 0), ...)`.
pub fn next_functions_of(py: Python<'_>, node: &Node) -> PyResult<Py<PyTuple>> {
    let mut items = Vec::with_capacity(node.next_edges.len());
    for e in &node.next_edges {
        items.push(match e {
            Some(e) => (node_to_py(py, e.node.clone())?, e.input_nr)
                .into_pyobject(py)?
                .into_any()
                .unbind(),
            None => (py.None(), 0usize).into_pyobject(py)?.into_any().unbind(),
        });
    }
    Ok(PyTuple::new(py, items)?.unbind())
}

/// A weak reference to a graph node: multi-grad hooks keep one per non-leaf tensor, so
/// they neither keep the graph alive nor hide its cycles from the collector.
#[pyclass(name = "_WeakNode", module = "ferrograd._C", frozen)]
pub struct PyWeakNode(std::sync::Weak<Node>);

#[pymethods]
impl PyWeakNode {
    #[new]
    fn new(node: &Bound<'_, PyAny>) -> PyResult<Self> {
        let node = node_of_py(node)
            .ok_or_else(|| pyo3::exceptions::PyTypeError::new_err("expected a graph node"))?;
        Ok(PyWeakNode(Arc::downgrade(&node)))
    }
    /// The node's Python object, or None once the node is gone.
    fn __call__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.0.upgrade().map(|n| node_to_py(py, n)).transpose()
    }
}

/// The core node behind a Python node object (a built-in node or a custom Function's
/// ctx); None for anything else, or for a ctx whose node is gone.
pub fn node_of_py(obj: &Bound<'_, PyAny>) -> Option<Arc<Node>> {
    if let Ok(n) = obj.cast::<PyNode>() {
        return Some(n.get().node.clone());
    }
    obj.cast::<crate::bindings::function::PyFunctionCtx>()
        .ok()
        .and_then(|ctx| ctx.get().node())
}

/// A `GradientEdge` named tuple `(node, output_nr, ...)` as a core edge.
fn edge_of_gradient_edge(obj: &Bound<'_, PyAny>) -> PyResult<Edge> {
    let node = node_of_py(&obj.get_item(0)?)
        .ok_or_else(|| PyRuntimeError::new_err("expected Tensors or GradientEdges"))?;
    Ok(Edge {
        node,
        input_nr: obj.get_item(1)?.extract()?,
    })
}

fn input_edge(t: &Tensor) -> Option<Edge> {
    match t.grad_fn() {
        Some(f) => Some(Edge {
            node: f,
            input_nr: t.output_nr(),
        }),
        None if t.requires_grad() => Some(Edge {
            node: t.grad_accumulator(),
            input_nr: 0,
        }),
        None => None,
    }
}

/// The engine entry point used by `autograd.backward` / `autograd.grad` (which validate
/// their arguments in Python first).
#[pyfunction]
#[pyo3(signature = (tensors, grad_tensors, keep_graph, create_graph, inputs, accumulate_grad))]
pub fn _run_backward(
    py: Python<'_>,
    tensors: Vec<Bound<'_, PyAny>>,
    grad_tensors: Vec<Bound<'_, PyAny>>,
    keep_graph: bool,
    create_graph: bool,
    inputs: Vec<Bound<'_, PyAny>>,
    accumulate_grad: bool,
) -> PyResult<Py<PyTuple>> {
    let mut roots = Vec::with_capacity(tensors.len());
    for (i, (t, g)) in tensors.iter().zip(&grad_tensors).enumerate() {
        let g = extract_tensor(g, "grad_tensors")?;
        let edge = match crate::bindings::convert::as_tensor_ref(t) {
            Some(t) => t.gradient_edge().ok_or_else(|| {
                PyRuntimeError::new_err(format!(
                    "element {i} of tensors does not require grad and does not have a grad_fn"
                ))
            })?,
            None => edge_of_gradient_edge(t)?,
        };
        roots.push(Root { edge, grad: g });
    }
    let mut input_tensors = Vec::with_capacity(inputs.len());
    let mut edges = Vec::with_capacity(inputs.len());
    for obj in &inputs {
        if let Some(t) = crate::bindings::convert::as_tensor_ref(obj) {
            let e = input_edge(&t).ok_or_else(|| {
                PyRuntimeError::new_err("One of the differentiated Tensors does not require grad")
            })?;
            edges.push(e);
            input_tensors.push(Some(t));
        } else {
            edges.push(edge_of_gradient_edge(obj)?);
            input_tensors.push(None);
        }
    }
    if accumulate_grad {
        // torch makes a non-leaf input retain its grad (so `h.retains_grad` is True
        // afterwards); the engine's retained-grad step then fills `h.grad` (issue 7 §6).
        for t in input_tensors.iter().flatten() {
            if !t.is_leaf() {
                run(|| crate::autograd::node::retain_grad(t))?;
            }
        }
    }
    let opts = BackwardOptions {
        retain_graph: keep_graph,
        create_graph,
        accumulate_grad,
    };
    let result = py.detach(|| run(|| run_backward(roots, &edges, opts)));
    flush_warnings(py)?;
    let grads = result?;
    if accumulate_grad {
        return Ok(PyTuple::empty(py).unbind());
    }
    let objs: PyResult<Vec<Py<PyAny>>> = grads.into_iter().map(|g| opt_to_py(py, g)).collect();
    Ok(PyTuple::new(py, objs?)?.unbind())
}

/// `(node, output_nr)` of a tensor's gradient edge (for `graph.get_gradient_edge`).
#[pyfunction]
pub fn _gradient_edge(py: Python<'_>, t: &Bound<'_, PyAny>) -> PyResult<(Py<PyAny>, usize)> {
    let t = extract_tensor(t, "tensor")?;
    let e = input_edge(&t).ok_or_else(|| {
        PyRuntimeError::new_err("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    })?;
    Ok((node_to_py(py, e.node)?, e.input_nr))
}

/// The id of the backward call running on this thread, or -1 outside backward.
#[pyfunction]
pub fn _current_graph_task_id() -> i64 {
    crate::engine::current::graph_task_id().map_or(-1, |id| id as i64)
}

/// torch's `_is_checkpoint_valid`: false while a backward call that names its `inputs`
/// (`autograd.grad`, `backward(inputs=...)`) runs, where re-entrant checkpointing
/// cannot work.
#[pyfunction]
pub fn _is_checkpoint_valid() -> bool {
    crate::engine::current::checkpoint_valid()
}

/// Whether the backward call running on this thread will execute `node`.
#[pyfunction]
pub fn _will_engine_execute_node(node: &Bound<'_, PyAny>) -> PyResult<bool> {
    let node = node_of_py(node).ok_or_else(|| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "_will_engine_execute_node expects a grad_fn, but got {}",
            crate::bindings::hooks::type_name(node)
        ))
    })?;
    run(|| crate::engine::current::will_execute(&node))
}

#[pyfunction]
pub fn _increment_version(t: &Bound<'_, PyAny>) -> PyResult<()> {
    extract_tensor(t, "tensor")?.bump_version();
    Ok(())
}

#[pyfunction]
pub fn is_grad_enabled() -> bool {
    grad_mode::is_grad_enabled()
}
#[pyfunction]
pub fn _set_grad_enabled(mode: bool) {
    grad_mode::set_grad_enabled(mode)
}
#[pyfunction]
pub fn is_inference_mode_enabled() -> bool {
    grad_mode::is_inference_mode()
}
#[pyfunction]
pub fn _set_inference_mode(mode: bool) {
    grad_mode::set_inference_mode(mode)
}
#[pyfunction]
pub fn is_multithreading_enabled() -> bool {
    grad_mode::is_multithreading_enabled()
}
#[pyfunction]
pub fn _set_multithreading_enabled(mode: bool) {
    grad_mode::set_multithreading_enabled(mode)
}
#[pyfunction]
pub fn _set_warn_always(on: bool) {
    crate::autograd::warnings::set_warn_always(on)
}
#[pyfunction]
pub fn _get_warn_always() -> bool {
    crate::autograd::warnings::warn_always()
}
#[pyfunction]
pub fn _live_tensor_count() -> usize {
    crate::tensor::live_tensor_count()
}

/// The kernels' pool-wait hook (see `kernels::par_for`): a thread that holds the GIL
/// releases it while it runs a job on the intra-op team. Team members never need the GIL,
/// but the threads running Python nodes of a backward pass do: holding it through a job
/// would stall them. Only big (parallel) kernels come here, so small ops never pay for
/// the release.
pub fn release_gil_while(f: &mut (dyn FnMut() + Send)) {
    extern "C" {
        // In every CPython since 3.4, though not in the limited API's headers.
        fn PyGILState_Check() -> std::os::raw::c_int;
    }
    // SAFETY: PyGILState_Check only reads this thread's state; the module is loaded, so
    // the interpreter is initialized.
    if unsafe { PyGILState_Check() } == 1 {
        // SAFETY: this thread holds the GIL (checked just above).
        let py = unsafe { Python::assume_attached() };
        py.detach(f);
    } else {
        f();
    }
}

/// `_C._functions.UndefinedGrad()(t)`: see `ops::unary::UndefinedGrad`.
#[pyclass(name = "UndefinedGrad", module = "ferrograd._C._functions", frozen)]
pub struct PyUndefinedGrad;

#[pymethods]
impl PyUndefinedGrad {
    #[new]
    fn new() -> Self {
        PyUndefinedGrad
    }
    fn __call__(&self, py: Python<'_>, t: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let t = extract_tensor(t, "input")?;
        to_py(py, run(|| crate::ops::unary::undefined_grad(&t))?)
    }
}

#[pyfunction]
#[pyo3(signature = (enabled, check_nan=true))]
pub fn _set_anomaly_enabled(enabled: bool, check_nan: bool) {
    crate::autograd::anomaly::set(enabled, check_nan)
}
#[pyfunction]
pub fn is_anomaly_enabled() -> bool {
    crate::autograd::anomaly::is_enabled()
}
#[pyfunction]
pub fn is_anomaly_check_nan_enabled() -> bool {
    crate::autograd::anomaly::check_nan()
}

/// The Python stack of the current call, for nodes recorded in anomaly mode.
pub fn python_stack() -> Option<String> {
    Python::attach(|py| {
        let tb = py.import("traceback").ok()?;
        let lines = tb.call_method0("format_stack").ok()?;
        let parts: Vec<String> = lines.extract().ok()?;
        Some(parts.concat())
    })
}
