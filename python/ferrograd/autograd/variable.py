"""Legacy ``Variable`` (deprecated): constructing one returns a plain Tensor."""

from .. import _C


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _C.Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(t, requires_grad=...)`` is ``t.detach().requires_grad_(...)``."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            data = _C.empty(0)
        t = data.detach()
        if requires_grad:
            t.requires_grad_(True)
        return t


def variable(*args, **kwargs):
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")
