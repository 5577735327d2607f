"""More of torch's CompositeImplicitAutograd ops, built from ferrograd's as torch builds
them, so their graphs hold the same nodes: the numpy-style splits (`hsplit`, `vsplit`,
`dsplit`: slices), `split_with_sizes`, `atleast_1d/2d/3d`, `broadcast_shapes`, `ravel`,
`sum_to_size`, `diff` (SubBackward0 of two narrows), `float_power` (ToCopyBackward0 then
PowBackward), `pinverse` (linalg.pinv) and `ger` (outer); the module form of `dist`; and
the methods `outer` and `broadcast_to`.
"""

from . import _C
from ._C import Tensor as _T
from ._composite import _install_methods, _wrap_dim, tensor_split
from ._functional import _C_TYPE, _broadcast_pair, broadcast_to, outer
from ._size import Size

__all__ = [
    "hsplit",
    "vsplit",
    "dsplit",
    "split_with_sizes",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_shapes",
    "ravel",
    "diff",
    "float_power",
    "pinverse",
    "ger",
    "dist",
]


# ----------------------------------------------------------------------------- splits


def _numpy_split(name, input, sections, dim, min_dims):
    """hsplit / vsplit / dsplit: tensor_split along `dim`, except that a number of
    sections must divide the dim exactly."""
    if input.dim() < min_dims:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a "
            f"tensor with {input.dim()} dimensions!"
        )
    if isinstance(sections, int):
        length = input.shape[dim]
        if sections == 0 or length % sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                f"dimension {length} is not divisible by the split_size {sections}!"
            )
        return input.split(length // sections, dim)
    return tensor_split(input, list(sections), dim)


def hsplit(input, indices_or_sections):
    dim = 1 if input.dim() > 1 else 0
    return _numpy_split("hsplit", input, indices_or_sections, dim, 1)


def vsplit(input, indices_or_sections):
    return _numpy_split("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    return _numpy_split("dsplit", input, indices_or_sections, 2, 3)


def split_with_sizes(input, split_sizes, dim=0):
    """Parts of the given sizes along `dim` (SplitWithSizesBackward0)."""
    return input.split(list(split_sizes), dim)


# ----------------------------------------------------------------------------- shapes


def _atleast(name, tensors, make):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_atleast(name, tuple(tensors[0]), make))
    for t in tensors:
        if not isinstance(t, _T):
            got = type(t).__name__
            why = f"      didn't match because some of the arguments have invalid types: (!{got}!)"
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got ({got}), but "
                f"expected one of:\n * (Tensor input)\n{why}\n * (tuple of Tensors tensors)\n"
                f"{why}\n"
            )
    out = tuple(make(t) for t in tensors)
    return out[0] if len(out) == 1 else out


def _at_least_1d(t):
    return t.reshape(1) if t.dim() == 0 else t


def _at_least_2d(t):
    if t.dim() == 0:
        return t.reshape(1, 1)
    return t.unsqueeze(0) if t.dim() == 1 else t


def _at_least_3d(t):
    if t.dim() == 0:
        return t.reshape(1, 1, 1)
    if t.dim() == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if t.dim() == 2 else t


def atleast_1d(*tensors):
    return _atleast("atleast_1d", tensors, _at_least_1d)


def atleast_2d(*tensors):
    return _atleast("atleast_2d", tensors, _at_least_2d)


def atleast_3d(*tensors):
    return _atleast("atleast_3d", tensors, _at_least_3d)


def broadcast_shapes(*shapes):
    """The shape tensors of these shapes would broadcast to (ints count as 1-d shapes)."""
    out = ()
    for index, shape in enumerate(shapes):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        for s in shape:
            if s < 0:
                raise RuntimeError(
                    f"Trying to create tensor with negative dimension {s}: {list(shape)}"
                )
        try:
            out = _broadcast_pair(out, shape)
        except RuntimeError:
            n = len(out) if len(out) >= len(shape) else len(shape)
            a = (1,) * (n - len(out)) + tuple(out)
            b = (1,) * (n - len(shape)) + shape
            at = next(i for i in range(n) if a[i] != b[i] and 1 not in (a[i], b[i]))
            raise RuntimeError(
                f"Attempting to broadcast a dimension of length {b[at]} at {at - n}! "
                f"Mismatching argument at index {index} had {shape}; but expected shape "
                f"should be broadcastable to {list(out)}"
            ) from None
    return Size(out)


def _sum_to_size(self, *size):
    """This tensor summed down to `size`, a shape it expands from: leading dims summed
    away, dims of size 1 in `size` summed with keepdim (one sum, then a view where dims
    were dropped, as torch's sum_to)."""
    if len(size) == 1 and not isinstance(size[0], int):
        size = size[0]
    size, shape = tuple(int(s) for s in size), tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s not in (1, n) for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    if size == shape:
        return self
    dims = list(range(lead))
    dims += [lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1]
    summed = self.sum(dims, keepdim=True) if dims else self
    return summed.view(size) if lead else summed


def ravel(input):
    """The elements as one dim: a view of a contiguous tensor, else of a copy."""
    return input.contiguous().view(-1)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along `dim`, after prepend / append are joined on."""
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = _wrap_dim(dim, input.dim())
    parts = [t for t in (prepend, input, append) if t is not None]
    for t in (prepend, append):
        if t is not None and t.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    x = _C.cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[dim]
        if length == 0:
            break
        later, earlier = x.narrow(dim, 1, length - 1), x.narrow(dim, 0, length - 1)
        x = later.logical_xor(earlier) if x.dtype == _C.bool else later - earlier
    return x


# ----------------------------------------------------------------------------- math


def _float_power_dtype(*operands):
    complex_ = any(
        (o.is_complex() if isinstance(o, _T) else isinstance(o, complex)) for o in operands
    )
    return _C.complex128 if complex_ else _C.float64


def float_power(input, exponent):
    """input ** exponent computed in float64 (complex128 if either side is complex)."""
    dtype = _float_power_dtype(input, exponent)
    if isinstance(exponent, _T):
        exponent = exponent.to(dtype)
    if not isinstance(input, _T):
        return _C.pow(input, exponent)
    return input.to(dtype).pow(exponent)


def _float_power_(self, exponent):
    dtype = _float_power_dtype(self, exponent)
    if self.dtype != dtype:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {_C_TYPE[self.dtype]} but the "
            f"operation's result requires dtype {_C_TYPE[dtype]}"
        )
    if isinstance(exponent, _T):
        exponent = exponent.to(dtype)
    return self.pow_(exponent)


def dist(input, other, p=2):
    """The p-norm of input - other (DistBackward0)."""
    if not isinstance(input, _T):
        raise TypeError(
            f"dist(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    return input.dist(other, p)


def pinverse(input, rcond=1e-15):
    """torch.pinverse: linalg.pinv with `rcond` as the relative tolerance."""
    from .linalg import pinv

    return pinv(input, atol=0.0, rtol=rcond)


def ger(input, vec2):
    """The outer product (torch's older name)."""
    return outer(input, vec2)


_METHODS = {
    "hsplit": hsplit,
    "vsplit": vsplit,
    "dsplit": dsplit,
    "split_with_sizes": split_with_sizes,
    "ravel": ravel,
    "sum_to_size": _sum_to_size,
    "diff": diff,
    "float_power": float_power,
    "float_power_": _float_power_,
    "pinverse": pinverse,
    "ger": ger,
    "outer": outer,
    "broadcast_to": broadcast_to,
}
_install_methods(_METHODS)
