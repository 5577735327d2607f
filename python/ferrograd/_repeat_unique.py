"""repeat_interleave as torch builds it (an int repeat: unsqueeze, expand, clone, view;
a tensor of repeats: index_select with the repeated positions), and the module forms
of scatter_reduce, unique and unique_consecutive (the Tensor methods,
src/bindings/norm_methods.rs)."""

import numbers

from . import _C
from ._C import Tensor as _T
from ._composite import _wrap_dim
from ._functional import _C_TYPE

__all__ = ["repeat_interleave", "scatter_reduce", "unique", "unique_consecutive"]

scatter_reduce = _T.scatter_reduce
unique = _T.unique
unique_consecutive = _T.unique_consecutive


def _positions(repeats):
    """torch.repeat_interleave(repeats): each position i repeated repeats[i] times."""
    if repeats.dim() != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (_C.int32, _C.int64):
        raise NotImplementedError(
            f"\"repeat_interleave_cpu\" not implemented for '{_C_TYPE[repeats.dtype]}'"
        )
    counts = repeats.tolist()
    if any(c < 0 for c in counts):
        raise RuntimeError("repeats can not be negative")
    return _C.tensor([i for i, c in enumerate(counts) for _ in range(c)], dtype=_C.int64)


def _check_output_size(output_size, n):
    if output_size is not None and output_size != n:
        raise RuntimeError(
            f"repeat_interleave: Invalid output_size, expected {n} but got {output_size}"
        )


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along `dim`; of the flattened input when dim is None)
    repeated `repeats` times in place; `repeat_interleave(repeats)` alone gives the
    repeated positions."""
    if repeats is None:
        return _positions(input)
    if dim is None:
        input, dim = input.flatten(), 0
    if isinstance(repeats, _T):
        n = input.shape[_wrap_dim(dim, input.dim())] if input.dim() else 1
        if repeats.dim() > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats.numel() == 1:
            repeats = repeats.reshape(1).expand(n)
        elif repeats.shape[0] != n:
            raise RuntimeError(
                "repeats must have the same size as input along dim, but got "
                f"repeats.size(0) = {repeats.shape[0]} and input.size({dim}) = {n}"
            )
        positions = _positions(repeats)
        if output_size is not None and output_size != positions.numel():
            raise RuntimeError("allocated size does not match required size")
        return input.index_select(dim, positions)
    if not isinstance(repeats, numbers.Integral) or isinstance(repeats, bool):
        raise TypeError(
            "repeat_interleave() received an invalid combination of arguments - got "
            f"({type(repeats).__name__}), but expected one of:\n"
            " * (Tensor repeats, int dim = None, *, int output_size = None)\n"
            " * (int repeats, int dim = None, *, int output_size = None)\n"
        )
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    d = _wrap_dim(dim, input.dim())
    shape = list(input.shape)
    _check_output_size(output_size, shape[d] * repeats if shape else repeats)
    wide = input.unsqueeze(d + 1)
    sizes = list(wide.shape)
    sizes[d + 1] = repeats
    shape[d] *= repeats
    return wide.expand(sizes).clone().view(shape)


def _tensor_repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
    return repeat_interleave(self, repeats, dim, output_size=output_size)


_T.repeat_interleave = _tensor_repeat_interleave
