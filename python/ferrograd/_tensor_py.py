"""The parts of Tensor that are naturally Python (called from the Rust class):
backward's argument handling, repr, deepcopy, named return tuples."""

import collections

from . import _C


def set_warn_always(b):
    """When True, warnings torch gives once per process are given every time (a global
    flag, as in torch)."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _C._set_warn_always(b)


def is_warn_always_enabled():
    return _C._get_warn_always()


def get_default_dtype():
    return _C.float32


def is_tensor(obj):
    return isinstance(obj, _C.Tensor)


def backward(self, gradient, retain_graph, create_graph, inputs):
    from .autograd import backward as _backward

    _backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def tensor_repr(t):
    from ._tensor_str import tensor_repr as _repr

    info = _C._batch_info(t)
    if info is not None:
        # A vmap wrapper shows its physical value, as torch's BatchedTensor does.
        level, bdim, value = info[:3]
        inner = tensor_repr(value).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={level}, bdim={bdim}, value=\n    {inner}\n)"
    return _repr(t)


def deepcopy(t, memo):
    """``copy.deepcopy`` as torch does it: leaves only; the copy keeps dtype, strides and
    storage offset over a copy of the whole memory (tensors sharing memory in one deepcopy
    share the copy), ``requires_grad``, a deep copy of ``.grad`` and of ``__dict__``."""
    if not t.is_leaf:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
            "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
            "because of a torch.nn.utils.weight_norm usage, see "
            "https://github.com/pytorch/pytorch/pull/103001"
        )
    if id(t) in memo:
        return memo[id(t)]
    import copy

    key = ("ferrograd.storage", t._fg_storage_id())
    flat = memo.get(key)
    if flat is None:
        flat = t._fg_copy_storage()
        memo[key] = flat
        # Keep `t` alive while the memo is: its storage id must not be reused.
        memo.setdefault(id(memo), []).append(t)
    new = flat._fg_alias_layout(tuple(t.shape), t.stride(), t.storage_offset())
    if type(t) is not _C.Tensor:
        new = type(t)(new, t.requires_grad)
    else:
        new.requires_grad_(t.requires_grad)
    if t.grad is not None:
        new.grad = copy.deepcopy(t.grad, memo)
    state = getattr(t, "__dict__", None)
    if state:
        for k, v in state.items():
            setattr(new, k, copy.deepcopy(v, memo))
    memo[id(t)] = new
    return new


def shallow_copy(t):
    """``copy.copy``: what torch's pickling path gives without copying memory: a new
    leaf (not a view) over the same memory and layout, with its own version counter,
    ``requires_grad`` and the same ``__dict__`` values, but no ``.grad``."""
    new = t._fg_alias_layout(tuple(t.shape), t.stride(), t.storage_offset())
    if type(t) is not _C.Tensor:
        new = type(t)(new, t.requires_grad)
    else:
        new.requires_grad_(t.requires_grad)
    state = getattr(t, "__dict__", None)
    if state:
        for k, v in state.items():
            setattr(new, k, v)
    return new


def reduce_ex(t, protocol):
    """Pickling: the whole memory (as a list or NumPy array), the layout, requires_grad
    and ``__dict__``, as torch's ``_rebuild_tensor_v2`` keeps them (``.grad`` is not)."""
    flat = t._fg_copy_storage()
    if t.dtype == _C.bfloat16:
        data = flat.tolist()
    else:
        data = flat.numpy()
    state = dict(getattr(t, "__dict__", None) or {})
    args = (
        data,
        str(t.dtype),
        tuple(t.shape),
        t.stride(),
        t.storage_offset(),
        t.requires_grad,
        state,
    )
    return (_rebuild_tensor, args)


def _rebuild_tensor(data, dtype, size, stride, offset, requires_grad, state):
    import ferrograd

    dtype = getattr(ferrograd, dtype.rsplit(".", 1)[-1])
    if isinstance(data, list):
        flat = _C.tensor(data, dtype=dtype)
    else:
        flat = _C.from_numpy(data).clone()
    t = flat._fg_alias_layout(size, stride, offset)
    t.requires_grad_(requires_grad)
    for k, v in state.items():
        setattr(t, k, v)
    return t


# The named pairs whose fields are not (values, indices).
_FIELDS = {"aminmax": ("min", "max")}


class _ReturnTypes:
    """``ferrograd.return_types``: the (values, indices) tuples of max/min along a dim."""

    def __init__(self):
        self._types = {}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._types:
            cls = collections.namedtuple(name, _FIELDS.get(name, ("values", "indices")))
            cls.__module__ = "ferrograd.return_types"
            # torch prints one field per line under the qualified name.
            cls.__repr__ = lambda self, _n=name: (
                f"ferrograd.return_types.{_n}(\n"
                + ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
                + ")"
            )
            self._types[name] = cls
        return self._types[name]

    def __call__(self, name, values, indices):
        return getattr(self, name)(values, indices)


return_types = _ReturnTypes()
