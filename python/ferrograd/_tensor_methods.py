"""Tensor methods that are queries or thin constructors in torch too: `new_zeros` and
its kin (a new tensor with this one's dtype and device unless told otherwise),
`type_as`, `byte`, and the flag queries (`is_signed`, `is_conj`,
`is_nonzero`, ...).

ferrograd has no lazy conjugate or negative bit: `conj()` of a complex tensor makes its
values, so `is_conj()` and `is_neg()` are always False and `resolve_conj()` /
`resolve_neg()` return the tensor itself, which is what torch returns for a tensor with
the bit unset.
"""

import warnings

from . import _C
from ._C import Tensor as _T
from ._composite import _install_methods

_UNSIGNED = {_C.uint8, _C.bool}


def _new(self, make, size, dtype, device, requires_grad, *extra):
    """`make(size, ...)` in this tensor's dtype and device unless told otherwise (the
    factory parses `size` as torch's does: ints, one tuple or list, or a Size)."""
    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else device
    return make(*size, *extra, dtype=dtype, device=device, requires_grad=requires_grad)


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, **_ignored):
    return _new(self, _C.zeros, size, dtype, device, requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False, **_ignored):
    return _new(self, _C.ones, size, dtype, device, requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False, **_ignored):
    return _new(self, _C.empty, size, dtype, device, requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, **_ignored):
    return _new(self, _C.full, (size,), dtype, device, requires_grad, fill_value)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, **_ignored):
    """A new leaf holding a copy of `data`, in this tensor's dtype and device unless told
    otherwise."""
    if isinstance(data, _T):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
            "requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        data = data.detach()
    return _new(self, _C.tensor, (data,), dtype, device, requires_grad)


def type_as(self, other):
    """This tensor in `other`'s dtype (itself when they already agree)."""
    if not isinstance(other, _T):
        raise TypeError(
            f"type_as(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}"
        )
    return self.to(other.dtype)


def is_signed(self):
    return self.dtype not in _UNSIGNED


def is_conj(self):
    return False


def is_neg(self):
    return False


def resolve_conj(self):
    return self


def resolve_neg(self):
    return self


def is_nonzero(self):
    """Whether the one value of this tensor is not zero (torch's error otherwise)."""
    n = self.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(self.item() != 0)


def is_same_size(self, other):
    return tuple(self.shape) == tuple(other.shape)


def get_device(self):
    """The device's index: -1 on the CPU, as torch."""
    device = self.device
    return -1 if device.type == "cpu" else (device.index or 0)


def positive(self):
    """`+x`: the tensor itself (torch refuses bool tensors)."""
    if self.dtype == _C.bool:
        raise NotImplementedError("The `+` operator, on a bool tensor is not supported.")
    return self


def _nbytes(self):
    return self.numel() * self.element_size()


_METHODS = {
    "new_zeros": new_zeros,
    "new_ones": new_ones,
    "new_empty": new_empty,
    "new_full": new_full,
    "new_tensor": new_tensor,
    "type_as": type_as,
    "is_signed": is_signed,
    "is_conj": is_conj,
    "is_neg": is_neg,
    "resolve_conj": resolve_conj,
    "resolve_neg": resolve_neg,
    "is_nonzero": is_nonzero,
    "is_same_size": is_same_size,
    "get_device": get_device,
    "positive": positive,
    "byte": lambda self: self.to(_C.uint8),
}
_install_methods(_METHODS)
if not hasattr(_T, "nbytes"):
    _T.nbytes = property(_nbytes)

# torch has these as functions of the module too.
__all__ = ["is_signed", "is_conj", "is_neg", "resolve_conj", "resolve_neg", "is_nonzero"]
__all__ += ["is_same_size", "get_device", "positive"]
