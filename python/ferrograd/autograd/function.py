"""Custom differentiable operations: ``autograd.Function`` (spec function.md).

A subclass defines static ``forward`` and ``backward`` (or ``vjp``). ``apply`` runs
``forward`` with grad mode off, then ``_C._function_record`` builds one graph node whose
backward calls back into ``_do_backward`` here. The ctx object passed to ``forward`` /
``backward`` is an instance of the generated ``<Name>Backward`` class, and is also what
``out.grad_fn`` returns.
"""

import collections
import functools
import inspect
import sys
import warnings

from .. import _C
from .grad_mode import no_grad

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]

_Tensor = _C.Tensor


class FunctionCtx:
    """The methods ``forward`` / ``setup_context`` may call on ctx."""

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, _Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of "
                    f"type {type(t).__name__}"
                )
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        assert all(t is None or isinstance(t, _Tensor) for t in tensors), (
            "save_for_forward expects all arguments to be tensors; you should save "
            "non-tensors as attributes on ctx."
        )
        self._to_save_for_forward = tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        self._materialize = bool(value)

    def mark_shared_storage(self, *pairs):
        warnings.warn(
            "`mark_shared_storage` is deprecated. Tensors with shared storages are "
            "automatically tracked. Note that calls to `set_()` are not tracked",
            FutureWarning,
            stacklevel=2,
        )


class BackwardCFunction(_C._FunctionBase, FunctionCtx):
    """Base of the generated ``<Name>Backward`` classes (one per Function subclass)."""

    _materialize = True

    def name(self):
        return type(self).__name__

    @property
    def metadata(self):
        meta = self.__dict__.get("_metadata")
        if meta is None:
            meta = self.__dict__["_metadata"] = {}
        return meta

    @property
    def saved_tensors(self):
        # Inside a jvp: what forward saved with save_for_forward.
        fw_saved = self.__dict__.get("_fw_saved")
        if fw_saved is not None:
            return tuple(fw_saved)
        if self._forward_cls.clear_saved_tensors_on_access:
            if self.__dict__.get("_saved_accessed"):
                raise RuntimeError(
                    "saved_tensors can only be accessed once when "
                    "clear_saved_tensors_on_access=True is set on the autograd.Function. "
                    "Either access saved_tensors only once, or set "
                    "clear_saved_tensors_on_access=False."
                )
            self.__dict__["_saved_accessed"] = True
            values = _C._FunctionBase.saved_tensors.__get__(self)
            self._release_saved()
            return values
        return _C._FunctionBase.saved_tensors.__get__(self)

    def register_hook(self, fn):
        return self._register_hook(fn, False)

    def register_prehook(self, fn):
        return self._register_hook(fn, True)

    def _register_hook_dict(self, tensor):
        from .graph import _register_hook_dict

        _register_hook_dict(tensor)

    def _do_backward(self, grads):
        """Called by the engine with one gradient per tensor output; returns one
        gradient per forward argument after torch's checks."""
        cls = self._forward_cls
        overrides_backward = cls.backward is not Function.backward
        overrides_vjp = cls.vjp is not Function.vjp
        if overrides_backward and overrides_vjp:
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                "You should only implement one of them."
            )
        backward_fn = cls.vjp if overrides_vjp else cls.backward
        grad_outputs = [None] * self._n_outputs
        for pos, g in zip(self._tensor_output_positions, grads):
            grad_outputs[pos] = g
        if cls.boxed_grads_call:
            result = backward_fn(self, grad_outputs)
        else:
            result = backward_fn(self, *grad_outputs)
        if not isinstance(result, tuple):
            result = (result,)
        return self._check_backward_result(result)

    def _check_backward_result(self, result):
        name = self.name()
        n_args = len(self._arg_is_tensor)
        if len(result) > n_args and all(r is None for r in result[n_args:]):
            result = result[:n_args]
        if len(result) != n_args:
            raise RuntimeError(
                f"function {name} returned an incorrect number of gradients (expected "
                f"{n_args}, got {len(result)})"
            )
        for i, (r, is_tensor) in enumerate(zip(result, self._arg_is_tensor)):
            if r is None:
                continue
            if not isinstance(r, _Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
            if not is_tensor:
                raise RuntimeError(
                    f"function {name} returned a gradient different than None at position "
                    f"{i + 1}, but the corresponding forward input was not a Variable"
                )
        return result


class FunctionMeta(type):
    """Creates the ``<Name>Backward`` class once per Function subclass."""

    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        backward_cls.__qualname__ = name + "Backward"
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


def _is_overridden(cls, name):
    return getattr(cls, name) is not getattr(Function, name)


class Function(metaclass=FunctionMeta):
    """Base class of custom differentiable operations; see the module docstring."""

    generate_vmap_rule = False
    clear_saved_tensors_on_access = False
    boxed_grads_call = False

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions "
            "are all static, so you should invoke them on the class itself. Instantiating "
            "an autograd function will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please "
            "use new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it "
            "with forward mode AD."
        )

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap "
            "staticmethod or set generate_vmap_rule=True."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        separate = _is_overridden(cls, "setup_context")
        func_state = sys.modules.get("ferrograd.func._state")
        transforms = func_state.user_transforms() if func_state is not None else 0
        if transforms and not separate:
            raise RuntimeError(_ERR_NEEDS_SETUP_CONTEXT)
        if transforms and _C._vmap_active():
            batched = _innermost_batched(args)
            if batched is not None:
                custom = _vmap_rule(cls)
                if custom:
                    return _apply_vmap_rule(cls, batched, args)
        ctx = cls._backward_cls()
        if separate:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            inputs = tuple(bound.arguments.values())
        else:
            inputs = args
        ctx.needs_input_grad = tuple(isinstance(a, _Tensor) and a.requires_grad for a in inputs)
        ctx._arg_is_tensor = tuple(isinstance(a, _Tensor) for a in inputs)
        # forward's own ops give no tangents (the jvp rule does, below).
        fw_prev = _C._is_fwd_grad_enabled()
        _C._set_fwd_grad_enabled(False)
        try:
            with no_grad():
                if separate:
                    output = cls.forward(*args, **kwargs)
                    cls.setup_context(ctx, inputs, output)
                else:
                    output = cls.forward(ctx, *args, **kwargs)
        finally:
            _C._set_fwd_grad_enabled(fw_prev)
        is_tuple = isinstance(output, tuple)
        outputs = list(output) if is_tuple else [output]
        positions = [i for i, o in enumerate(outputs) if isinstance(o, _Tensor)]
        ctx._n_outputs = len(outputs)
        ctx._tensor_output_positions = positions
        recorded = _C._function_record(
            ctx,
            ctx.name(),
            inputs,
            [outputs[i] for i in positions],
            ctx.__dict__.get("_to_save", ()),
            ctx.__dict__.get("_dirty", ()),
            ctx.__dict__.get("_non_differentiable", ()),
            ctx._materialize,
        )
        for i, t in zip(positions, recorded):
            outputs[i] = t
        if fw_prev:
            _forward_mode(cls, ctx, inputs, outputs)
        return tuple(outputs) if is_tuple else outputs[0]


_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"
_ERR_NEEDS_SETUP_CONTEXT = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
    f"jacrev, ...), it must override the setup_context staticmethod. {_DOCS}"
)

VmapInfo = collections.namedtuple("VmapInfo", ["batch_size", "randomness"])


def _innermost_batched(args):
    """``(level, randomness)`` of the innermost vmap level among the arguments' batched
    wrappers, or None."""
    best = None
    for a in args:
        if isinstance(a, _Tensor):
            info = _C._batch_info(a)
            if info is not None and (best is None or info[3] > best[0]):
                best = (info[3], info[4])
    return best


def _vmap_rule(cls):
    """Whether ``cls`` batches through its own ``vmap`` (True) or through its ops
    (``generate_vmap_rule``: False); torch's errors for neither and both."""
    custom = _is_overridden(cls, "vmap")
    if custom and cls.generate_vmap_rule:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True "
            "and an overridden vmap staticmethod. Please set generate_vmap_rule=False or "
            "delete the overridden vmap staticmethod to avoid ambiguity. " + _DOCS
        )
    if not custom and not cls.generate_vmap_rule:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. "
            "Please override and implement the vmap staticmethod or set "
            "generate_vmap_rule=True. " + _DOCS
        )
    return custom


def _apply_vmap_rule(cls, batched, args):
    """``cls.vmap(info, in_dims, *args)`` on the physical values of the innermost level,
    its outputs wrapped back at that level by the ``out_dims`` it returns."""
    level, randomness = batched
    unwrapped, in_dims, batch_size = [], [], None
    for a in args:
        info = _C._batch_info(a) if isinstance(a, _Tensor) else None
        if info is not None and info[3] == level:
            value, bdim = info[2], info[1]
            batch_size = value.shape[bdim]
            unwrapped.append(value)
            in_dims.append(bdim)
        else:
            unwrapped.append(a)
            in_dims.append(None)
    output, out_dims = cls.vmap(VmapInfo(batch_size, randomness), tuple(in_dims), *unwrapped)
    if isinstance(output, tuple):
        if not isinstance(out_dims, tuple):
            out_dims = (out_dims,) * len(output)
        return tuple(_wrap_output(o, d, level) for o, d in zip(output, out_dims))
    return _wrap_output(output, out_dims, level)


def _wrap_output(output, out_dim, level):
    if out_dim is None or not isinstance(output, _Tensor):
        return output
    return _C._add_batch_dim(output, out_dim, level)


_ERR_JVP_INPLACE = (
    "An inplace custom Function is not modifying the forward mode gradients inplace. If "
    "the forward is modifying an input inplace, then the jvp function must modify the "
    "corresponding gradient inplace."
)
_ERR_JVP_VIEW = (
    "A custom Function's forward is returning a view (or an input as-is) but the jvp is "
    "not returning a view."
)


def _forward_mode(cls, ctx, inputs, outputs):
    """Inside a dual level, when an input carries a tangent: call ``cls.jvp`` (tangents
    of tensor inputs, zeros where an input has none; None for other arguments) with
    forward AD off, and give the outputs its results with torch's checks."""
    from . import forward_ad

    level = forward_ad._current_level
    if level < 0 or _C.is_inference_mode_enabled():
        return
    tangents = [_C._fw_grad(a, level=level) if isinstance(a, _Tensor) else None for a in inputs]
    if all(t is None for t in tangents):
        return
    tangents = [
        t if t is not None or not isinstance(a, _Tensor) else _zeros_like(a)
        for a, t in zip(inputs, tangents)
    ]
    ctx.__dict__["_fw_saved"] = ctx.__dict__.get("_to_save_for_forward", ())
    _C._set_fwd_grad_enabled(False)
    try:
        result = cls.jvp(ctx, *tangents)
    finally:
        _C._set_fwd_grad_enabled(True)
        ctx.__dict__.pop("_fw_saved", None)
    results = result if isinstance(result, tuple) else (result,)
    if len(results) != len(outputs):
        raise RuntimeError(
            "Function's jvp returned an invalid number of forward gradients (expected "
            f"{len(outputs)} but got {len(results)})"
        )
    dirty = ctx.__dict__.get("_dirty", ())
    non_diff = ctx.__dict__.get("_non_differentiable", ())
    for out, g in zip(outputs, results):
        if not isinstance(out, _Tensor) or g is None or any(out is n for n in non_diff):
            continue
        if not (out.is_floating_point() or out.is_complex()):
            continue
        if any(out is d for d in dirty):
            source = next(t for a, t in zip(inputs, tangents) if a is out)
            if g is not source:
                raise RuntimeError(_ERR_JVP_INPLACE)
        elif out._is_view() and not g._is_view():
            raise RuntimeError(_ERR_JVP_VIEW)
        _C._set_fw_grad(out, g, level=level)


def _zeros_like(t):
    from .. import zeros_like

    return zeros_like(t)


def once_differentiable(fn):
    """Decorate a ``backward`` that is not itself differentiable: it runs under
    ``no_grad``, and under ``create_graph=True`` its results carry an error node."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not _C.is_grad_enabled():
            return outputs
        if not any(isinstance(a, _Tensor) and a.requires_grad for a in args):
            return outputs
        message = (
            "trying to differentiate twice a function that was marked with @once_differentiable"
        )
        is_tuple = isinstance(outputs, tuple)
        outs = outputs if is_tuple else (outputs,)
        # Like torch, each result hangs off a detached alias of itself that requires grad:
        # the error node reaches no real input, so it only fires when backward runs
        # through it (gradgradcheck then sees zero analytical grads, not this error).
        wrapped = tuple(
            _C._error_node(o, [o.detach().requires_grad_()], message)
            if isinstance(o, _Tensor)
            else o
            for o in outs
        )
        return wrapped if is_tuple else wrapped[0]

    return wrapper


class InplaceFunction(Function):
    """Legacy base kept for compatibility."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace
