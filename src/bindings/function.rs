//! Custom `autograd.Function` support: the ctx object (`_C._FunctionBase`, base of every
//! generated `<Name>Backward` class, which is also what `out.grad_fn` returns) and the
//! core node whose backward calls back into Python.
//!
//! Ownership: the node owns its ctx (a strong Python reference); the ctx only knows its
//! node weakly, so a graph and its ctx objects go away together.

use std::sync::{Arc, Mutex, Weak};

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use smallvec::SmallVec;

use crate::autograd::node::{CustomBackward, Edge, Node, NodeKind, TensorMeta};
use crate::autograd::saved::{SavedTensor, ERR_FREED};
use crate::bindings::convert::as_tensor_ref;
use crate::bindings::errors::{run, PyErrBox};
use crate::bindings::tensor::{opt_to_py, to_py};
use crate::error::Error;
use crate::ops::{recording, Grads};
use crate::tensor::Tensor;

#[pyclass(
    name = "_FunctionBase",
    module = "ferrograd._C",
    subclass,
    dict,
    weakref,
    frozen
)]
pub struct PyFunctionCtx {
    node: Mutex<Weak<Node>>,
}

impl PyFunctionCtx {
    pub fn node(&self) -> Option<Arc<Node>> {
        self.node
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .upgrade()
    }
}

#[pymethods]
impl PyFunctionCtx {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> Self {
        PyFunctionCtx {
            node: Mutex::new(Weak::new()),
        }
    }

    /// The tensors given to `save_for_backward`, unpacked (version-checked).
    #[getter]
    fn saved_tensors(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        let node = self
            .node()
            .ok_or_else(|| PyRuntimeError::new_err(ERR_FREED))?;
        // Copied out of the lock: unpacking may run an unpack hook.
        let slots = {
            let s = node.saved_slots();
            if s.released {
                return Err(PyRuntimeError::new_err(ERR_FREED));
            }
            s.slots.clone()
        };
        let mut out = Vec::with_capacity(slots.len());
        for s in slots.iter() {
            out.push(match s {
                Some(st) => to_py(py, run(|| st.unpack(&node))?)?,
                None => py.None(),
            });
        }
        Ok(PyTuple::new(py, out)?.unbind())
    }

    #[getter]
    fn next_functions(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        match self.node() {
            Some(n) => crate::bindings::autograd::next_functions_of(py, &n),
            None => Ok(PyTuple::empty(py).unbind()),
        }
    }

    fn _sequence_nr(&self) -> u64 {
        self.node().map_or(0, |n| n.sequence_nr)
    }

    fn _register_hook(
        &self,
        hook: Py<PyAny>,
        pre: bool,
    ) -> PyResult<crate::bindings::hooks::RemovableHandle> {
        let node = self
            .node()
            .ok_or_else(|| PyRuntimeError::new_err("the node of this Function has been freed"))?;
        Ok(crate::bindings::hooks::register_node_hook(&node, hook, pre))
    }

    fn _release_saved(&self) {
        if let Some(n) = self.node() {
            n.release_saved();
        }
    }
}

/// The core side of a Function node: calls `ctx._do_backward(grads)`.
struct PyBackward {
    ctx: crate::bindings::gc::HeldPy,
    name: String,
    materialize: bool,
    /// For each forward argument: Some(edge index) when it is a tensor.
    arg_edges: Vec<Option<usize>>,
}

impl CustomBackward for PyBackward {
    fn name(&self) -> &str {
        &self.name
    }
    fn materialize_grads(&self) -> bool {
        self.materialize
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn foreign_refs(&self, out: &mut Vec<usize>) {
        crate::autograd::foreign::Foreign::foreign_refs(&self.ctx, out)
    }
    fn apply(&self, node: &Arc<Node>, grads: Vec<Option<Tensor>>) -> crate::error::Result<Grads> {
        Python::attach(|py| {
            let call = || -> PyResult<Grads> {
                let args: PyResult<Vec<Py<PyAny>>> =
                    grads.into_iter().map(|g| opt_to_py(py, g)).collect();
                let result = self
                    .ctx
                    .bind(py)
                    .call_method1("_do_backward", (PyTuple::new(py, args?)?,))?;
                let result = result.cast::<PyTuple>()?;
                let mut out: Grads = (0..node.next_edges.len()).map(|_| None).collect();
                for (arg, edge) in self.arg_edges.iter().enumerate() {
                    let Some(e) = edge else { continue };
                    let item = result.get_item(arg)?;
                    if !item.is_none() {
                        out[*e] =
                            Some(as_tensor_ref(&item).ok_or_else(|| {
                                PyTypeError::new_err("expected Variable or None")
                            })?);
                    }
                }
                Ok(out)
            };
            call().map_err(|e| Error::External {
                message: e.to_string(),
                payload: Arc::new(PyErrBox(e)),
            })
        })
    }
}

/// The Python ctx of a custom node (its `grad_fn` object), if `node` is one.
pub fn custom_ctx(py: Python<'_>, node: &Node) -> Option<Py<PyAny>> {
    match &node.kind {
        NodeKind::Custom(c) => c
            .as_any()
            .downcast_ref::<PyBackward>()
            .map(|b| b.ctx.clone_ref(py)),
        _ => None,
    }
}

/// After `forward` ran: record the node (when grad mode is on and a tensor argument
/// requires grad) and return the outputs, with history, in forward's order.
#[pyfunction]
#[pyo3(signature = (ctx, name, args, outputs, saved, dirty, non_differentiable, materialize))]
#[allow(clippy::too_many_arguments)]
pub fn _function_record(
    py: Python<'_>,
    ctx: &Bound<'_, PyFunctionCtx>,
    name: String,
    args: &Bound<'_, PyTuple>,
    outputs: &Bound<'_, PyList>,
    saved: &Bound<'_, PyAny>,
    dirty: &Bound<'_, PyAny>,
    non_differentiable: &Bound<'_, PyAny>,
    materialize: bool,
) -> PyResult<Py<PyList>> {
    let arg_tensors: Vec<Option<Tensor>> = args.iter().map(|a| as_tensor_ref(&a)).collect();
    let dirty: Vec<Tensor> = tensors_of(dirty)?;
    let non_diff: Vec<Tensor> = tensors_of(non_differentiable)?;
    let mut outs: Vec<Tensor> = Vec::with_capacity(outputs.len());
    for o in outputs.iter() {
        outs.push(
            as_tensor_ref(&o).ok_or_else(|| PyTypeError::new_err("outputs must be tensors"))?,
        );
    }
    for d in &dirty {
        if !outs.iter().any(|o| o.ptr_eq(d)) {
            return Err(PyRuntimeError::new_err("Some elements marked as dirty during the forward method were not returned as output. The inputs that are modified inplace must all be outputs of the Function."));
        }
    }
    let is_input = |t: &Tensor| arg_tensors.iter().flatten().any(|a| a.ptr_eq(t));
    let is_dirty = |t: &Tensor| dirty.iter().any(|d| d.ptr_eq(t));
    let needs: Vec<bool> = arg_tensors
        .iter()
        .map(|t| t.as_ref().is_some_and(|t| t.requires_grad()))
        .collect();
    let record = recording() && needs.contains(&true);
    // Outputs that are views and not modified in place (an input returned unchanged, or a
    // view made inside forward) come back as new views marked as this Function's: an
    // in-place op on them must not replace the custom backward (torch's
    // IN_CUSTOM_FUNCTION / MULTI_OUTPUT_NODE, issue 7 §6). `replaced` keeps what forward
    // returned, so saving such an output still saves an output.
    // Per output, decided on what forward returned (before any output is replaced).
    let differentiable: Vec<bool> = outs
        .iter()
        .map(|o| !non_diff.iter().any(|n| n.ptr_eq(o)) && o.dtype().is_differentiable())
        .collect();
    let n_diff = differentiable.iter().filter(|&&d| d).count();
    let mut replaced: Vec<(Tensor, usize)> = Vec::new();
    for (j, o) in outs.iter_mut().enumerate() {
        if is_dirty(o) {
            continue;
        }
        if record && (is_input(o) || o.is_view()) {
            let meta = crate::tensor::CreationMeta::CustomFunction(j, n_diff > 1);
            let view = run(|| o.make_view(o.layout().clone(), meta))?;
            if !is_input(o) {
                replaced.push((o.clone(), j));
            }
            *o = view;
        } else if is_input(o) {
            *o = run(|| o.make_view(o.layout().clone(), crate::tensor::CreationMeta::Default))?;
        }
    }
    if record {
        for d in &dirty {
            if d.is_leaf() && d.requires_grad() {
                return Err(PyRuntimeError::new_err(
                    "a leaf Variable that requires grad has been used in an in-place operation.",
                ));
            }
            if d.is_view() {
                run(|| crate::ops::inplace::check_inplace(d))?;
            }
        }
        let mut next_edges: SmallVec<[Option<Edge>; 2]> = SmallVec::new();
        let mut input_meta: SmallVec<[TensorMeta; 2]> = SmallVec::new();
        let mut arg_edges = Vec::with_capacity(arg_tensors.len());
        for (t, &need) in arg_tensors.iter().zip(&needs) {
            match t {
                Some(t) => {
                    arg_edges.push(Some(next_edges.len()));
                    next_edges.push(if need { t.gradient_edge() } else { None });
                    input_meta.push(TensorMeta::of(t));
                }
                None => arg_edges.push(None),
            }
        }
        let mut saved_slots: SmallVec<[Option<SavedTensor>; 2]> = SmallVec::new();
        for s in saved.try_iter()? {
            let s = s?;
            saved_slots.push(match as_tensor_ref(&s) {
                None => None,
                Some(t) => Some(run(|| {
                    let replacement = replaced.iter().find(|(r, _)| r.ptr_eq(&t));
                    match outs.iter().position(|o| o.ptr_eq(&t)) {
                        Some(j) => SavedTensor::output(&t, j),
                        None => match replacement {
                            Some((_, j)) => SavedTensor::output(&outs[*j], *j),
                            None => SavedTensor::input(&t),
                        },
                    }
                })?),
            });
        }
        let output_meta = outs.iter().map(TensorMeta::of).collect();
        let backward = PyBackward {
            ctx: crate::bindings::gc::HeldPy::new(ctx.clone().into_any().unbind()),
            name,
            materialize,
            arg_edges,
        };
        let node = Node::new(
            NodeKind::Custom(Box::new(backward)),
            next_edges,
            input_meta,
            output_meta,
            saved_slots,
        );
        *ctx.get().node.lock().unwrap_or_else(|e| e.into_inner()) = Arc::downgrade(&node);
        for (j, o) in outs.iter().enumerate() {
            if !differentiable[j] {
                continue;
            }
            // A view modified in place: its base takes the new history (CopySlices),
            // as an in-place op on a view does; the view's grad_fn is regenerated.
            match o.view_base() {
                Some(base) if is_dirty(o) => {
                    crate::autograd::view::rebase_history_on_view(&base, o, node.clone());
                    crate::autograd::view::regenerate_view_grad_fn(o);
                }
                _ => o.set_grad_fn(node.clone(), j),
            }
        }
    }
    let objs: PyResult<Vec<Py<PyAny>>> = outs.into_iter().map(|o| to_py(py, o)).collect();
    Ok(PyList::new(py, objs?)?.unbind())
}

fn tensors_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Tensor>> {
    let mut out = Vec::new();
    for item in obj.try_iter()? {
        let item = item?;
        if let Some(t) = as_tensor_ref(&item) {
            out.push(t);
        }
    }
    Ok(out)
}

/// `once_differentiable`: `value` aliased behind a node that raises `message` if
/// differentiated, connected to the `connect` tensors.
#[pyfunction]
pub fn _error_node(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    connect: &Bound<'_, PyAny>,
    message: String,
) -> PyResult<Py<PyAny>> {
    let v = as_tensor_ref(value).ok_or_else(|| PyTypeError::new_err("value must be a Tensor"))?;
    let c = tensors_of(connect)?;
    to_py(py, run(|| crate::ops::unary::error_node(&v, &c, message))?)
}
