//! Python callables as backward hooks (see autograd::hooks), with torch's checks on what
//! they return, and the `RemovableHandle` that unregisters them.

use std::sync::{Arc, Mutex, Weak};

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::autograd::foreign::Foreign;
use crate::autograd::hooks::{Grads, NodePostHook, NodePreHook, PostAccumulateHook, TensorHook};
use crate::autograd::node::Node;
use crate::bindings::convert::as_tensor_ref;
use crate::bindings::errors::PyErrBox;
use crate::bindings::gc::HeldPy;
use crate::bindings::tensor::{opt_to_py, to_py};
use crate::error::{Error, Result};
use crate::tensor::{Tensor, WeakTensor};

fn external(e: PyErr) -> Error {
    Error::External {
        message: e.to_string(),
        payload: Arc::new(PyErrBox(e)),
    }
}

pub fn type_name(o: &Bound<'_, PyAny>) -> String {
    o.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default()
}

fn hook_name(py: Python<'_>, f: &Py<PyAny>) -> String {
    f.bind(py)
        .getattr("__name__")
        .and_then(|n| n.extract())
        .unwrap_or_else(|_| "<hook>".into())
}

/// A tensor the hook returned, checked against the one it replaces.
fn checked_value(
    py: Python<'_>,
    f: &Py<PyAny>,
    value: &Bound<'_, PyAny>,
    original: Option<&Tensor>,
) -> PyResult<Option<Tensor>> {
    if value.is_none() {
        return Ok(None);
    }
    let t = as_tensor_ref(value).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "expected Variable, but hook returned '{}'",
            type_name(value)
        ))
    })?;
    if let Some(o) = original {
        if o.shape() != t.shape() {
            return Err(PyRuntimeError::new_err(format!(
                "hook '{}' has changed the size of value",
                hook_name(py, f)
            )));
        }
    }
    Ok(Some(t))
}

/// A hook's replacement tuple for `current`: same length, same sizes.
fn checked_tuple(
    py: Python<'_>,
    f: &Py<PyAny>,
    value: &Bound<'_, PyAny>,
    current: &[Option<Tensor>],
) -> PyResult<Option<Grads>> {
    if value.is_none() {
        return Ok(None);
    }
    let tuple = value.cast::<PyTuple>().map_err(|_| {
        PyTypeError::new_err(format!(
            "expected tuple, but hook returned '{}'",
            type_name(value)
        ))
    })?;
    if tuple.len() != current.len() {
        return Err(PyRuntimeError::new_err(format!(
            "hook '{}' has returned an incorrect number of values (got {}, but expected {})",
            hook_name(py, f),
            tuple.len(),
            current.len()
        )));
    }
    let mut out = Vec::with_capacity(current.len());
    for (item, orig) in tuple.iter().zip(current) {
        out.push(checked_value(py, f, &item, orig.as_ref())?);
    }
    Ok(Some(out))
}

fn tuple_of<'py>(py: Python<'py>, grads: &[Option<Tensor>]) -> PyResult<Bound<'py, PyTuple>> {
    let items: PyResult<Vec<Py<PyAny>>> = grads.iter().map(|g| opt_to_py(py, g.clone())).collect();
    PyTuple::new(py, items?)
}

/// A Python callable as a backward hook (one type for every kind of hook).
pub struct PyHook(pub HeldPy);

impl TensorHook for PyHook {
    fn call(&self, grad: &Tensor) -> Result<Option<Tensor>> {
        Python::attach(|py| {
            let r = self.0.bind(py).call1((to_py(py, grad.clone())?,))?;
            checked_value(py, &self.0, &r, Some(grad))
        })
        .map_err(external)
    }
    fn foreign_refs(&self, out: &mut Vec<usize>) {
        self.0.foreign_refs(out)
    }
}

impl NodePreHook for PyHook {
    fn call(&self, grad_outputs: &[Option<Tensor>]) -> Result<Option<Grads>> {
        Python::attach(|py| {
            let r = self.0.bind(py).call1((tuple_of(py, grad_outputs)?,))?;
            checked_tuple(py, &self.0, &r, grad_outputs)
        })
        .map_err(external)
    }
    fn foreign_refs(&self, out: &mut Vec<usize>) {
        self.0.foreign_refs(out)
    }
}

impl NodePostHook for PyHook {
    fn call(
        &self,
        grad_inputs: &[Option<Tensor>],
        grad_outputs: &[Option<Tensor>],
    ) -> Result<Option<Grads>> {
        Python::attach(|py| {
            let r = self
                .0
                .bind(py)
                .call1((tuple_of(py, grad_inputs)?, tuple_of(py, grad_outputs)?))?;
            checked_tuple(py, &self.0, &r, grad_inputs)
        })
        .map_err(external)
    }
    fn foreign_refs(&self, out: &mut Vec<usize>) {
        self.0.foreign_refs(out)
    }
}

impl PostAccumulateHook for PyHook {
    fn call(&self, param: &Tensor) -> Result<()> {
        Python::attach(|py| {
            let p = to_py(py, param.clone())?;
            let r = self.0.bind(py).call1((p.clone_ref(py),))?;
            // Returning the parameter itself (`lambda p: p.add_(...)`) is tolerated.
            if !r.is_none() && !r.is(p.bind(py)) {
                return Err(PyRuntimeError::new_err(
                    "Tensor post accumulate grad hooks should return None.",
                ));
            }
            Ok(())
        })
        .map_err(external)
    }
    fn foreign_refs(&self, out: &mut Vec<usize>) {
        self.0.foreign_refs(out)
    }
}

/// What a handle unregisters from.
enum Target {
    LeafHook(WeakTensor),
    PostAccumulate(WeakTensor),
    TensorPre(Weak<Node>),
    NodePre(Weak<Node>),
    NodePost(Weak<Node>),
}

#[pyclass(name = "RemovableHandle", module = "ferrograd.utils.hooks", frozen)]
pub struct RemovableHandle {
    target: Mutex<Option<Target>>,
    #[pyo3(get)]
    id: u64,
}

#[pymethods]
impl RemovableHandle {
    /// Unregister the hook (a second call does nothing).
    fn remove(&self) {
        let Some(target) = self.target.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return;
        };
        let id = self.id;
        match target {
            Target::LeafHook(t) => {
                if let Some(t) = t.upgrade() {
                    let removed = t.meta().leaf_hooks.remove(id);
                    drop(removed); // after the lock: a hook's finalizer may run Python
                }
            }
            Target::PostAccumulate(t) => {
                if let Some(t) = t.upgrade() {
                    let removed = t.meta().post_accumulate_hooks.remove(id);
                    drop(removed);
                }
            }
            Target::TensorPre(n) => {
                if let Some(n) = n.upgrade() {
                    let removed: Vec<_> = {
                        let mut extras = n.extras();
                        let hooks = &mut extras.tensor_pre_hooks;
                        let (gone, kept) = std::mem::take(hooks)
                            .into_iter()
                            .partition(|(_, i, _)| *i == id);
                        *hooks = kept;
                        gone
                    };
                    drop(removed);
                }
            }
            Target::NodePre(n) => {
                if let Some(n) = n.upgrade() {
                    let removed = n.extras().pre_hooks.remove(id);
                    drop(removed);
                }
            }
            Target::NodePost(n) => {
                if let Some(n) = n.upgrade() {
                    let removed = n.extras().post_hooks.remove(id);
                    drop(removed);
                }
            }
        }
    }
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }
    fn __exit__(&self, _a: &Bound<'_, PyAny>, _b: &Bound<'_, PyAny>, _c: &Bound<'_, PyAny>) {
        self.remove()
    }
}

fn handle(target: Target, id: u64) -> RemovableHandle {
    RemovableHandle {
        target: Mutex::new(Some(target)),
        id,
    }
}

const NO_GRAD_HOOK: &str = "cannot register a hook on a tensor that doesn't require gradient";

pub fn register_tensor_hook(t: &Tensor, f: Py<PyAny>) -> PyResult<RemovableHandle> {
    if !t.requires_grad() {
        return Err(PyRuntimeError::new_err(NO_GRAD_HOOK));
    }
    let hook: Arc<dyn TensorHook> = Arc::new(PyHook(HeldPy::new(f)));
    match t.grad_fn() {
        None => {
            let id = t.meta().leaf_hooks.push(hook);
            Ok(handle(Target::LeafHook(t.downgrade()), id))
        }
        Some(node) => {
            let id = crate::autograd::hooks::next_hook_id();
            node.extras()
                .tensor_pre_hooks
                .push((t.output_nr(), id, hook));
            Ok(handle(Target::TensorPre(Arc::downgrade(&node)), id))
        }
    }
}

pub fn register_post_accumulate_hook(t: &Tensor, f: Py<PyAny>) -> PyResult<RemovableHandle> {
    if !t.requires_grad() {
        return Err(PyRuntimeError::new_err(NO_GRAD_HOOK));
    }
    if !t.is_leaf() {
        return Err(PyRuntimeError::new_err(
            "post accumulate grad hooks cannot be registered on non-leaf tensors",
        ));
    }
    let id = t
        .meta()
        .post_accumulate_hooks
        .push(Arc::new(PyHook(HeldPy::new(f))));
    Ok(handle(Target::PostAccumulate(t.downgrade()), id))
}

pub fn register_node_hook(node: &Arc<Node>, f: Py<PyAny>, pre: bool) -> RemovableHandle {
    let hook = Arc::new(PyHook(HeldPy::new(f)));
    if pre {
        let id = node.extras().pre_hooks.push(hook);
        handle(Target::NodePre(Arc::downgrade(node)), id)
    } else {
        let id = node.extras().post_hooks.push(hook);
        handle(Target::NodePost(Arc::downgrade(node)), id)
    }
}

/// A (pack, unpack) pair of Python callables (`saved_tensors_hooks`).
struct PySavedHooks {
    pack: Py<PyAny>,
    unpack: Py<PyAny>,
}

/// A packed value with its own reference to the unpack hook: each is reported to the
/// collector by the node that saved it, so a hook (or value) that refers back to the
/// graph is collected with it (issue 7, section 4).
struct PyPacked {
    value: HeldPy,
    unpack: HeldPy,
}

impl crate::autograd::saved_hooks::SavedTensorHooks for PySavedHooks {
    fn pack(&self, t: &Tensor) -> Result<Box<dyn crate::autograd::saved_hooks::Packed>> {
        Python::attach(|py| {
            let value = self.pack.bind(py).call1((to_py(py, t.clone())?,))?.unbind();
            Ok(Box::new(PyPacked {
                value: HeldPy::new(value),
                unpack: HeldPy::new(self.unpack.clone_ref(py)),
            })
                as Box<dyn crate::autograd::saved_hooks::Packed>)
        })
        .map_err(external)
    }
}

impl crate::autograd::saved_hooks::Packed for PyPacked {
    fn foreign_refs(&self, out: &mut Vec<usize>) {
        self.value.foreign_refs(out);
        self.unpack.foreign_refs(out);
    }
    fn unpack(&self) -> Result<Tensor> {
        Python::attach(|py| {
            let r = self.unpack.bind(py).call1((self.value.clone_ref(py),))?;
            as_tensor_ref(&r).ok_or_else(|| {
                PyTypeError::new_err(format!(
                    "Output of saved tensor unpack_hook expected to be a Tensor but got result of type {}",
                    type_name(&r)
                ))
            })
        })
        .map_err(external)
    }
}

#[pyfunction]
pub fn _push_saved_tensors_hooks(pack: Py<PyAny>, unpack: Py<PyAny>) -> PyResult<()> {
    let hooks = Arc::new(PySavedHooks { pack, unpack });
    crate::bindings::errors::run(|| crate::autograd::saved_hooks::push_hooks(hooks))
}

/// A Python callable told about in-place writes (`allow_mutation_on_saved_tensors`).
struct PyMutationObserver(Py<PyAny>);

impl crate::autograd::mutation::MutationObserver for PyMutationObserver {
    fn before_write(&self, target: &Tensor) -> Result<()> {
        Python::attach(|py| {
            let t = to_py(py, target.clone()).map_err(external)?;
            self.0.call1(py, (t,)).map_err(external)?;
            Ok(())
        })
    }
}

/// Install (or with None remove) this thread's in-place write observer.
#[pyfunction]
pub fn _set_inplace_observer(observer: Option<Py<PyAny>>) {
    let observer = observer.map(|f| {
        Arc::new(PyMutationObserver(f)) as Arc<dyn crate::autograd::mutation::MutationObserver>
    });
    crate::autograd::mutation::set_observer(observer);
}

#[pyfunction]
pub fn _push_saved_tensors_hooks_disabled(message: String) -> PyResult<()> {
    crate::bindings::errors::run(|| crate::autograd::saved_hooks::push_disabled(message))
}

#[pyfunction]
pub fn _pop_saved_tensors_hooks() {
    crate::autograd::saved_hooks::pop()
}

/// `grad_fn._raw_saved_<name>`: one saved value of a node, which can take its own
/// (pack, unpack) pair after the fact.
#[pyclass(name = "SavedTensor", module = "ferrograd._C", frozen)]
pub struct PySavedTensor {
    /// Keeps the node alive, like torch's SavedTensor object does.
    pub node: Arc<Node>,
    pub slot: usize,
}

#[pymethods]
impl PySavedTensor {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<Self> {
        Err(PyRuntimeError::new_err(
            "Trying to create a SavedTensor object from Python is forbidden.",
        ))
    }
    /// Pack the saved value now; unpack it whenever it is needed.
    fn register_hooks(&self, pack_hook: Py<PyAny>, unpack_hook: Py<PyAny>) -> PyResult<()> {
        let node = &self.node;
        let value = {
            let slots = node.saved_slots();
            match slots.slots.get(self.slot) {
                Some(Some(st)) if st.has_hooks() => {
                    return Err(PyRuntimeError::new_err(
                        crate::autograd::saved::ERR_HOOKS_TWICE,
                    ))
                }
                Some(Some(st)) => st.stored_value(),
                _ => None,
            }
        };
        let value =
            value.ok_or_else(|| PyRuntimeError::new_err(crate::autograd::saved::ERR_FREED))?;
        // The pack hook runs without the node's lock held: it may look at the node.
        let hooks = PySavedHooks {
            pack: pack_hook,
            unpack: unpack_hook,
        };
        let packed = crate::autograd::saved_hooks::SavedTensorHooks::pack(&hooks, &value)
            .map_err(crate::bindings::errors::to_pyerr)?;
        let mut slots = node.saved_slots();
        match slots.slots.get_mut(self.slot) {
            Some(Some(st)) => st
                .set_packed(packed)
                .map_err(crate::bindings::errors::to_pyerr),
            _ => Err(PyRuntimeError::new_err(crate::autograd::saved::ERR_FREED)),
        }
    }
}
