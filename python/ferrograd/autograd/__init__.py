"""``ferrograd.autograd``: reverse-mode differentiation of scalar-valued functions.

``backward`` and ``grad`` normalize and validate their arguments here, with torch's
messages, then hand one call to the Rust engine (``_C._run_backward``), which runs the
whole pass with the GIL released.
"""

import collections.abc
import sys
import warnings

from .. import _C
from . import _legacy_vmap, forward_ad, function, graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .grad_mode import (
    _force_original_view_tracking,
    enable_grad,
    inference_mode,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .variable import Variable, variable

SavedTensor = _C.SavedTensor

__all__ = [
    "detect_anomaly",
    "set_detect_anomaly",
    "Function",
    "forward_ad",
    "function",
    "functional",
    "backward",
    "grad",
    "graph",
    "Variable",
    "variable",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "set_multithreading_enabled",
    "is_multithreading_enabled",
    "SavedTensor",
    "_force_original_view_tracking",
    "kineto_available",
    "profiler",
    "profiler_util",
]

is_multithreading_enabled = _C.is_multithreading_enabled


def kineto_available():
    """Whether the profiler runs on Kineto (PyTorch's tracing library). ferrograd's
    profiler records in its own Rust recorder, so this is False: code that checks it
    (torch's own ``export_chrome_trace``, tests marked "requires Kineto") then keeps to
    what works without Kineto, which is what ferrograd provides."""
    return False


# Custom Function nodes are graph nodes too (isinstance(out.grad_fn, graph.Node)).
graph.Node.register(function.BackwardCFunction)

_Tensor = _C.Tensor


def _as_tuple(x, n=None):
    if x is None:
        return (None,) * (n or 0)
    if isinstance(x, (_Tensor, graph.GradientEdge)):
        return (x,)
    return tuple(x)


def _normalize_inputs(inputs, caller):
    """Tensor/edge → 1-tuple; exact dict → its values; other Mappings are refused."""
    if inputs is None:
        return None, None
    if type(inputs) is dict:
        return tuple(inputs.values()), list(inputs.keys())
    if isinstance(inputs, collections.abc.Mapping):
        raise TypeError(
            f"`inputs` argument to `{caller}()` must be a dict, not {type(inputs).__name__}. "
            "Other Mapping types are not supported."
        )
    inputs = _as_tuple(inputs)
    if len(inputs) == 0:
        raise RuntimeError(f"`inputs` argument to `{caller}()` cannot be empty.")
    return inputs, None


def _make_grads(outputs, grads, is_grads_batched=False):
    """Check user-given gradients against their outputs; create ones for scalars (§2.5)."""
    new_grads = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if isinstance(out, graph.GradientEdge):
            # An edge root has no tensor to check against; its gradient must be given.
            if g is None:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            new_grads.append(g)
            continue
        if isinstance(g, _Tensor):
            g_shape = tuple(g.shape[1:]) if is_grads_batched else tuple(g.shape)
            if g_shape != tuple(out.shape):
                if is_grads_batched:
                    raise RuntimeError(
                        "If `is_grads_batched=True`, we interpret the first dimension of each "
                        "grad_output as the batch dimension. The sizes of the remaining "
                        "dimensions are expected to match the shape of corresponding output, "
                        f"but a mismatch was detected: grad_output[{i}] has a shape of "
                        f"{g.shape[1:]} and output[{i}] has a shape of {out.shape}. If you "
                        "only want some tensors in `grad_output` to be considered batched, "
                        "consider using vmap."
                    )
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                    f"output[{i}] has a shape of {out.shape}."
                )
            if out.dtype.is_complex != g.dtype.is_complex:
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have "
                    f"the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                    f"{g.dtype} and output[{i}] has a dtype of {out.dtype}."
                )
            new_grads.append(g)
        elif g is None:
            if out.requires_grad:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out.dtype.is_floating_point:
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{out.dtype}"
                    )
                new_grads.append(_C.ones_like(out))
            else:
                new_grads.append(None)
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return new_grads


def _check_roots(outputs):
    for i, out in enumerate(outputs):
        if not isinstance(out, graph.GradientEdge) and not out.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )


def backward(
    tensors,
    grad_tensors=None,
    retain_graph=None,
    create_graph=False,
    grad_variables=None,
    inputs=None,
):
    """Accumulate d(sum of tensors · grad_tensors)/d(leaf) into every reachable leaf's
    ``.grad`` (or only into ``inputs``)."""
    # ferrograd.func counts its running transforms; until it is imported none runs.
    func_state = sys.modules.get("ferrograd.func._state")
    if func_state is not None and func_state.depth:
        raise RuntimeError(
            "backward() called inside a functorch transform. This is not supported, please "
            "use functorch.grad or functorch.vjp instead or call backward() outside of "
            "functorch transforms."
        )
    if grad_variables is not None:
        warnings.warn(
            "`grad_variables` is deprecated. Use `grad_tensors` instead.",
            FutureWarning,
            stacklevel=2,
        )
        if grad_tensors is not None:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                "`backward()`. Please only use `grad_tensors`."
            )
        grad_tensors = grad_variables
    inputs, _ = _normalize_inputs(inputs, "backward")
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors, len(tensors))
    if len(tensors) != len(grad_tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grad_tensors)} gradients")
    grads = _make_grads(tensors, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between "
            "the parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after "
            "use to break the cycle and avoid the leak.",
            UserWarning,
            stacklevel=2,
        )
    _check_roots(tensors)
    for t in inputs or ():
        if isinstance(t, _Tensor) and not t.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    _C._run_backward(tensors, grads, retain_graph, create_graph, inputs or (), True)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """The vector-Jacobian products of ``outputs`` w.r.t. ``inputs`` (no ``.grad`` is
    touched). Returns a tuple, or a dict when ``inputs`` is a dict."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "torch.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
    t_inputs, keys = _normalize_inputs(inputs, "grad")
    t_outputs = _as_tuple(outputs)
    grad_outputs = _as_tuple(grad_outputs, len(t_outputs))
    if len(t_outputs) != len(grad_outputs):
        raise RuntimeError(f"got {len(t_outputs)} tensors and {len(grad_outputs)} gradients")
    grads = _make_grads(t_outputs, grad_outputs, is_grads_batched)
    if retain_graph is None:
        retain_graph = create_graph
    _check_roots(t_outputs)
    for t in t_inputs:
        if isinstance(t, _Tensor) and not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")

    if is_grads_batched:
        result = _batched_grad(t_outputs, grads, t_inputs, retain_graph, create_graph)
    else:
        result = _C._run_backward(t_outputs, grads, retain_graph, create_graph, t_inputs, False)
    result = _finish_grads(result, t_inputs, allow_unused, materialize_grads, create_graph)
    if keys is not None:
        return dict(zip(keys, result))
    return result


def _batched_grad(outputs, grads, inputs, retain_graph, create_graph):
    """`is_grads_batched=True`: one engine pass whose grad_outputs are batched at a fresh
    vmap level (dim 0 is the batch), so every vjp rule runs once on the whole batch;
    the results get the batch dim back at 0 (as torch's `_vmap(vjp)` does)."""
    batch = _legacy_vmap.batch_size(grads, "vjp")
    level = _C._vmap_increment_nesting(batch, "error")
    try:
        wrapped = [None if g is None else _C._add_batch_dim(g, 0, level) for g in grads]
        with _legacy_vmap.legacy_random_error():
            result = _C._run_backward(outputs, wrapped, retain_graph, create_graph, inputs, False)
        return tuple(
            None if r is None else _C._remove_batch_dim(r, level, batch, 0) for r in result
        )
    finally:
        _C._vmap_decrement_nesting()


def _finish_grads(result, inputs, allow_unused, materialize_grads, create_graph):
    out = []
    for i, (r, inp) in enumerate(zip(result, inputs)):
        if r is None:
            if materialize_grads:
                if isinstance(inp, graph.GradientEdge):
                    raise RuntimeError(
                        "materialize_grads cannot be used when the given input is a GradientEdge"
                    )
                r = _C.zeros_like(inp, requires_grad=create_graph)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
        out.append(r)
    return tuple(out)


# Imported on first use: most programs never touch them, and each is a noticeable share
# of `import ferrograd` (torch users reach them as attributes or by `from ...autograd
# import functional`, both of which land here).
_LAZY_SUBMODULES = ("functional", "profiler", "profiler_util")


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
