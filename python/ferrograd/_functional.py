"""Module-level ops (``ferrograd.exp(x)``...). The op table's functions come from
``_C`` (src/bindings/op_table.rs); most others are the Tensor methods themselves
(C-level descriptors, no Python frame on the call)."""

from . import _C
from ._C import Tensor as _T

# Every op-table line's module function and its aliases.
_TABLE = [n for name, _kind, _arg, _inplace, aliases in _C._op_table() for n in (name, *aliases)]
globals().update({n: getattr(_C, n) for n in _TABLE})

__all__ = [
    "max",
    "min",
    "matmul",
    "mm",
    "bmm",
    "mv",
    "dot",
    "clone",
    "detach",
    "reshape",
    "permute",
    "transpose",
    "swapaxes",
    "t",
    "squeeze",
    "unsqueeze",
    "flatten",
    "unflatten",
    "narrow",
    "select",
    "unbind",
    "split",
    "chunk",
    "diagonal",
    "as_strided",
    "numel",
    "is_floating_point",
    "is_complex",
    "is_inference",
    *_TABLE,
]

max = _T.max  # noqa: A001
min = _T.min  # noqa: A001
matmul = _T.matmul
mm = _T.mm
bmm = _T.bmm
mv = _T.mv
dot = _T.dot
clone = _T.clone
detach = _T.detach
permute = _T.permute
transpose = swapaxes = _T.transpose
t = _T.t
squeeze = _T.squeeze
unsqueeze = _T.unsqueeze
flatten = _T.flatten
unflatten = _T.unflatten
narrow = _T.narrow
select = _T.select
unbind = _T.unbind
split = _T.split
chunk = _T.chunk
diagonal = _T.diagonal
as_strided = _T.as_strided
numel = _T.numel
is_floating_point = _T.is_floating_point
is_complex = _T.is_complex
is_inference = _T.is_inference


def reshape(input, shape):
    return input.reshape(shape)
