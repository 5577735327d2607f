"""The parts of Tensor that are naturally Python (called from the Rust class):
backward's argument handling, repr, deepcopy, named return tuples."""

import collections

from . import _C


def get_default_dtype():
    return _C.float32


def is_tensor(obj):
    return isinstance(obj, _C.Tensor)


def backward(self, gradient, retain_graph, create_graph, inputs):
    from .autograd import backward as _backward

    _backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def tensor_repr(t):
    from ._tensor_str import tensor_repr as _repr

    return _repr(t)


def deepcopy(t, memo):
    if not t.is_leaf:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
            "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
            "because of a torch.nn.utils.weight_norm usage, see "
            "https://github.com/pytorch/pytorch/pull/103001"
        )
    if id(t) in memo:
        return memo[id(t)]
    from .autograd.grad_mode import no_grad

    with no_grad():
        new = t.detach().clone()
        if type(t) is not _C.Tensor:
            new = type(t)(new, t.requires_grad)
        else:
            new.requires_grad_(t.requires_grad)
        if t.grad is not None:
            import copy

            new.grad = copy.deepcopy(t.grad, memo)
    memo[id(t)] = new
    return new


class _ReturnTypes:
    """``ferrograd.return_types``: the (values, indices) tuples of max/min along a dim."""

    def __init__(self):
        self._types = {}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._types:
            cls = collections.namedtuple(name, ["values", "indices"])
            cls.__module__ = "ferrograd.return_types"
            self._types[name] = cls
        return self._types[name]

    def __call__(self, name, values, indices):
        return getattr(self, name)(values, indices)


return_types = _ReturnTypes()
