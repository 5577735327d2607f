"""``ferrograd.autograd.forward_ad``: forward-mode AD through dual tensors.

A dual tensor carries a *tangent* at a *level*; every op then computes its output's
tangent (the Jacobian-vector product) by its jvp rule. Tangents live in the Rust core
(``autograd::forward_ad``); this module keeps torch's Python-level bookkeeping: the
current level, the argument checks and their texts, and the namedtuple result.
"""

import collections

from .. import _C
from .grad_mode import _DecoratorContextManager

__all__ = [
    "UnpackedDualTensor",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
    "dual_level",
]

# As torch: -1 means no level; the first level is 0 (one level at a time).
_current_level = -1


def enter_dual_level():
    """Enter a new forward grad level and make it the current one; returns it."""
    global _current_level
    new_level = _C._enter_dual_level()
    if new_level != _current_level + 1:
        raise RuntimeError(
            "Entering a new forward AD level but the current level "
            "is not valid. Make sure you did not modify it directly."
        )
    _current_level = new_level
    return new_level


def exit_dual_level(*, level=None):
    """Exit the (latest) forward grad level; every tangent made at it is deleted."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one "
            "that was created. This is not supported."
        )
    _C._exit_dual_level(level=level)
    _current_level = level - 1


def make_dual(tensor, tangent, *, level=None):
    """A new tensor aliasing ``tensor`` that carries ``tangent`` (stored as is when its
    layout matches, copied into a matching layout otherwise). Backward-differentiable."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level "
            "exists, make sure to enter_dual_level() first."
        )
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}"
        )
    return _C._make_dual(tensor, tangent, level=level)


# A plain namedtuple (not typing.NamedTuple): `typing` alone would add several ms to
# `import ferrograd`.
UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "What unpack_dual returns: the primal and the tangent (or None)."


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)``: a view of ``tensor``'s primal and its tangent as is (None
    when it has none at ``level``). Backward-differentiable."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    primal, dual = _C._unpack_dual(tensor, level=level)
    return UnpackedDualTensor(primal, dual)


class dual_level(_DecoratorContextManager):
    """Context manager (or decorator) entering a forward AD level and exiting it after;
    ``with dual_level() as lvl`` gives the level."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()


_is_fwd_grad_enabled = _C._is_fwd_grad_enabled


class _set_fwd_grad_enabled(_DecoratorContextManager):
    """Switch forward AD on or off on this thread (applied at construction)."""

    def __init__(self, mode):
        self.prev = _is_fwd_grad_enabled()
        self.mode = mode
        _C._set_fwd_grad_enabled(mode)

    def clone(self):
        return self.__class__(self.mode)

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        _C._set_fwd_grad_enabled(self.prev)
