"""``ferrograd.utils.checkpoint``: activation checkpointing, as ``torch.utils.checkpoint``.

A checkpointed function keeps none of the tensors its backward needs; backward runs the
function a second time to get them back. Two variants, chosen by ``use_reentrant``:

* ``use_reentrant=True``: the whole function is one custom ``Function`` node. Its forward
  runs the function under ``no_grad``; its backward reruns it under ``enable_grad`` and
  calls ``backward()`` on the rerun (a backward inside a backward, hence "re-entrant").
  Like torch's, it cannot serve ``autograd.grad()`` or ``backward(inputs=...)``.
* ``use_reentrant=False``: the function runs normally, building its graph, but under
  saved-tensor hooks: packing keeps only a small handle, and the first unpack during a
  backward reruns the function once (with recording hooks) and hands out the tensors
  the rerun saved, in the order they were saved.

With ``preserve_rng_state`` (the default) the rerun draws the same random numbers as the
first run, and the caller's random sequence is left as it was.
"""

import contextlib
import functools
import warnings

from .. import _C
from ..autograd import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import saved_tensors_hooks
from ..random import fork_rng, get_rng_state, set_rng_state

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "detach_variable",
    "noop_context_fn",
]

_DEFAULT_DETERMINISM_MODE = "default"


class CheckpointError(RuntimeError):
    """The rerun during backward did not save what the first run saved."""


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def _is_tensor(x):
    return isinstance(x, _C.Tensor)


def detach_variable(inputs):
    """Detached copies of the tensors in ``inputs`` that keep their ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for x in inputs:
        if _is_tensor(x):
            d = x.detach()
            d.requires_grad = x.requires_grad
            x = d
        out.append(x)
    return tuple(out)


_USE_REENTRANT_WARNING = (
    "{where}: the use_reentrant parameter should be passed explicitly. "
    "{future}use_reentrant=False is recommended, but if you need to preserve the current "
    "default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
    "the differences between the two variants."
)


def _unexpected_kwargs(kwargs):
    return ValueError("Unexpected keyword arguments: " + ",".join(kwargs))


def checkpoint(
    function=None,
    *args,
    use_reentrant=None,
    preserve_rng_state=True,
    context_fn=noop_context_fn,
    determinism_check=_DEFAULT_DETERMINISM_MODE,
    debug=False,
    early_stop=True,
    respect_saved_tensors_hooks=None,
    **kwargs,
):
    """Run ``function(*args, **kwargs)`` without keeping its saved tensors; backward
    reruns it. ``checkpoint(use_reentrant=False)(fn)`` (no function) makes a decorator.

    ``debug`` and ``early_stop`` are accepted for torch's signature: the rerun always
    runs to the end, and errors carry no operator trace."""
    options = dict(
        use_reentrant=use_reentrant,
        preserve_rng_state=preserve_rng_state,
        context_fn=context_fn,
        determinism_check=determinism_check,
        debug=debug,
        early_stop=early_stop,
        respect_saved_tensors_hooks=respect_saved_tensors_hooks,
    )
    if function is None and not args:
        if kwargs:
            raise _unexpected_kwargs(kwargs)
        return lambda fn: _Checkpointed(fn, options)
    return _run_checkpoint(function, args, kwargs, **options)


class _Checkpointed:
    """A function that runs under ``checkpoint`` with fixed options (the decorator form);
    as a method decorator it binds to the instance first."""

    def __init__(self, function, options):
        self.function = function
        self.options = options
        functools.update_wrapper(self, function, updated=())

    def __call__(self, *args, **kwargs):
        return _run_checkpoint(self.function, args, kwargs, **self.options)

    def __get__(self, instance, owner=None):
        get = getattr(self.function, "__get__", None)
        if instance is None or get is None:
            return self
        return _Checkpointed(get(instance, owner), self.options)


def _run_checkpoint(
    function,
    args,
    kwargs,
    *,
    use_reentrant,
    preserve_rng_state,
    context_fn,
    determinism_check,
    debug,
    early_stop,
    respect_saved_tensors_hooks,
):
    if use_reentrant is None:
        warnings.warn(
            _USE_REENTRANT_WARNING.format(
                where="torch.utils.checkpoint",
                future="In a future release, calling checkpoint without use_reentrant "
                "will raise an exception. ",
            ),
            stacklevel=4,
        )
        use_reentrant = True
    if kwargs and use_reentrant:
        raise _unexpected_kwargs(kwargs)
    if use_reentrant:
        if (
            context_fn is not noop_context_fn
            or debug is not False
            or respect_saved_tensors_hooks is not None
        ):
            raise ValueError(
                "Passing `context_fn`, `debug`, or `respect_saved_tensors_hooks` "
                "is only supported when use_reentrant=False."
            )
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    if determinism_check not in _METADATA:
        raise ValueError(
            f"determinism_check should be one of {list(_METADATA)}, but got {determinism_check}"
        )
    return _checkpoint_with_hooks(
        function, args, kwargs, preserve_rng_state, context_fn, _METADATA[determinism_check]
    )


# ----------------------------------------------------------------- use_reentrant=True


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(_is_tensor(a) and a.requires_grad for a in args):
            warnings.warn(
                "None of the inputs have requires_grad=True. Gradients will be None",
                stacklevel=2,
            )
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.rng_state = get_rng_state()
        # Tensors go through save_for_backward (version-checked); the rest stays as is.
        ctx.tensor_positions = [i for i, a in enumerate(args) if _is_tensor(a)]
        ctx.other_args = [None if _is_tensor(a) else a for a in args]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_positions))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        if not _C._is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible"
                " with .grad() or passing an `inputs` parameter to .backward()."
                " To resolve this error, you can either set use_reentrant=False,"
                " or call .backward() without passing the `inputs` argument."
            )
        args = list(ctx.other_args)
        for i, t in zip(ctx.tensor_positions, ctx.saved_tensors):
            args[i] = t
        with fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                set_rng_state(ctx.rng_state)
            inputs = detach_variable(tuple(args))
            with enable_grad():
                outputs = ctx.run_function(*inputs)
        if _is_tensor(outputs):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if _is_tensor(o) and o.requires_grad]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        from ..autograd import backward

        backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(x.grad if _is_tensor(x) else None for x in inputs)
        return (None, None) + grads


# ---------------------------------------------------------------- use_reentrant=False


def _shape_dtype_device(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_METADATA = {_DEFAULT_DETERMINISM_MODE: _shape_dtype_device, "none": lambda _x: None}


class _Handle:
    """What the pack hook keeps instead of a tensor: its position in the save order."""

    __slots__ = ("frame", "index")

    def __init__(self, frame, index):
        self.frame = frame
        self.index = index


class _Frame:
    """One call of a checkpointed function: how to rerun it, what its first run saved
    (metadata only), and the tensors of the latest rerun while a backward needs them."""

    def __init__(self, function, args, kwargs, preserve_rng_state, recompute_context, metadata_fn):
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self.rng_state = get_rng_state() if preserve_rng_state else None
        self.recompute_context = recompute_context
        self.metadata_fn = metadata_fn
        self.metadata = []  # per saved tensor, from the first run
        self.recomputed = None  # tensors saved by the rerun, in order
        self.recomputed_for = None  # the backward call they were made for
        self.unpacked = 0

    def pack(self, x):
        self.metadata.append(self.metadata_fn(x))
        return _Handle(self, len(self.metadata) - 1)

    def unpack(self, handle):
        task = _C._current_graph_task_id()
        if self.recomputed is None or self.recomputed_for != task:
            self._recompute()
            self.recomputed_for = task
            self.unpacked = 0
        x = self.recomputed[handle.index]
        self.unpacked += 1
        if self.unpacked == len(self.recomputed):
            # Every saved tensor was handed out: free them (a later backward reruns).
            self.recomputed = None
        return x

    def _recompute(self):
        saved = []

        def record(x):
            saved.append(x.detach() if x.requires_grad else x)
            return None

        with contextlib.ExitStack() as stack:
            if self.rng_state is not None:
                stack.enter_context(fork_rng())
                set_rng_state(self.rng_state)
            stack.enter_context(enable_grad())
            stack.enter_context(self.recompute_context)
            stack.enter_context(saved_tensors_hooks(record, lambda _none: None))
            self.function(*self.args, **self.kwargs)
        self._check(saved)
        self.recomputed = saved

    def _check(self, saved):
        if len(saved) != len(self.metadata):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved "
                "during the original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.metadata)}\n"
                f"Number of tensors saved during recomputation: {len(saved)}.\n"
            )
        different = ""
        for i, (meta, x) in enumerate(zip(self.metadata, saved)):
            now = self.metadata_fn(x)
            if meta != now:
                different += (
                    f"tensor at position {i}:\nsaved metadata: {meta}\nrecomputed metadata: {now}\n"
                )
        if different:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors "
                f"have different metadata than during the forward pass.\n{different}.\n"
            )


def _checkpoint_with_hooks(function, args, kwargs, preserve_rng_state, context_fn, metadata_fn):
    forward_context, recompute_context = context_fn()
    frame = _Frame(function, args, kwargs, preserve_rng_state, recompute_context, metadata_fn)
    with saved_tensors_hooks(frame.pack, _unpack), forward_context:
        return function(*args, **kwargs)


def _unpack(handle):
    return handle.frame.unpack(handle)


# ---------------------------------------------------------------------------- sequential


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a list of callables, or an ``nn.Sequential``) one after the
    other on ``input``, checkpointing each of the first ``segments - 1`` chunks; the last
    chunk runs normally."""
    if use_reentrant is None:
        warnings.warn(
            _USE_REENTRANT_WARNING.format(
                where="torch.utils.checkpoint.checkpoint_sequential",
                future="In a future release, we will raise an exception if use_reentrant "
                "is not passed. ",
            ),
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise _unexpected_kwargs(kwargs)
    children = getattr(functions, "children", None)
    functions = list(children()) if callable(children) else list(functions)

    def chain(start, stop):
        def run(x):
            for f in functions[start:stop]:
                x = f(x)
            return x

        return run

    size = len(functions) // segments
    start = 0
    for _ in range(segments - 1):
        if size == 0:
            break
        input = checkpoint(
            chain(start, start + size),
            input,
            use_reentrant=use_reentrant,
            preserve_rng_state=preserve,
        )
        start += size
    return chain(start, len(functions))(input)
