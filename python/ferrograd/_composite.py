"""Ops torch builds from other ops (its CompositeImplicitAutograd ops), built here the
same way from ferrograd's ops: their graphs hold the constituents' nodes, as torch's do
(`kron(a, b).grad_fn` is UnsafeViewBackward0, `take_along_dim`'s is GatherBackward0), so they
need no rules of their own. Forward AD and vmap come from the constituents' rules too.

Ops torch gives a backward node of its own (narrow_copy: NarrowCopyBackward0) are not
here: they belong in the Rust op blocks. einsum lives in _einsum.py, `ferrograd.linalg`
in linalg.py.
"""

import warnings

from . import _C
from ._C import Tensor as _T
from ._einsum import einsum
from ._functional import _C_TYPE, _broadcast_pair

__all__ = [
    "take_along_dim",
    "tensor_split",
    "meshgrid",
    "cartesian_prod",
    "kron",
    "tensordot",
    "einsum",
    "inner",
    "matrix_power",
    "chain_matmul",
    "all",
    "any",
    "count_nonzero",
    "logspace",
    "tril_indices",
    "triu_indices",
]


def _wrap_dim(dim, ndim):
    """`dim` counted from the front, with torch's error (a 0-dim tensor takes 0 and -1)."""
    n = ndim if ndim else 1
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim + n if dim < 0 else dim


def _shape(t):
    """A shape as torch's messages print it: [3, 4]."""
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


# ----------------------------------------------------------------------------- indexing


def take_along_dim(input, indices, dim=None):
    """input's values at `indices` along `dim` (of the flattened input when dim is None);
    input and indices broadcast against each other except along `dim`: a gather."""
    if indices.dtype != _C.int64:
        raise RuntimeError(
            "torch.take_along_dim(): dtype of indices should be Long but got "
            f"{_C_TYPE[indices.dtype]}"
        )
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    if input.dim() != indices.dim():
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {input.dim()} dimensions for input, and {indices.dim()} "
            "dimensions for indices"
        )
    dim = _wrap_dim(dim, input.dim())
    # Each side broadcast to the other's shape, except along `dim` (the index's length
    # there is the result's, the input's is what it gathers from).
    input_shape, index_shape = list(input.shape), list(indices.shape)
    if input.dim():
        input_shape[dim], index_shape[dim] = indices.shape[dim], input.shape[dim]
    index_shape, input_shape = (
        _broadcast_pair(input_shape, indices.shape),
        _broadcast_pair(index_shape, input.shape),
    )
    return input.expand(input_shape).gather(dim, indices.expand(index_shape))


def tensor_split(
    input,
    indices_or_sections=None,
    dim=0,
    *,
    sections=None,
    indices=None,
    tensor_indices_or_sections=None,
):
    """Views of `input` along `dim`: `sections` near-equal parts (the first ones one
    longer), or the parts between the given indices (clamped, as Python slices are)."""
    split = next(
        (
            s
            for s in (indices_or_sections, sections, indices, tensor_indices_or_sections)
            if s is not None
        ),
        None,
    )
    if input.dim() == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    if isinstance(split, _T):
        if split.dim() > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                f"one-dimensional tensor, but got a tensor with {split.dim()} dims"
            )
        if split.dtype != _C.int64:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to have dtype of long, but "
                f"got {_C_TYPE[split.dtype]}"
            )
        split = split.item() if split.dim() == 0 else split.tolist()
    dim = _wrap_dim(dim, input.dim())
    length = input.shape[dim]
    if isinstance(split, int):
        if split <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {split}")
        size, longer = divmod(length, split)
        bounds, start = [], 0
        for i in range(split - 1):
            start += size + (i < longer)
            bounds.append(start)
    else:
        bounds = list(split)
    lead = (slice(None),) * dim
    starts = [0, *bounds]
    ends = [*bounds, None]
    return tuple(input[(*lead, slice(s, e))] for s, e in zip(starts, ends))


# ----------------------------------------------------------------------------- grids

_MESHGRID_WARNED = [False]


def _tensor_list(tensors):
    """meshgrid(a, b) and meshgrid([a, b]) alike."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


def meshgrid(*tensors, indexing=None):
    """Each 0-d or 1-d tensor expanded along its own dim of the grid ("ij": dims in the
    inputs' order; "xy": the first two swapped, as numpy's default)."""
    tensors = _tensor_list(tensors)
    if indexing is None:
        _warn_once(
            _MESHGRID_WARNED,
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
            "argument.",
        )
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                f"{t.dim()}-D tensor of shape {_shape(t)}"
            )
    if [t for t in tensors if t.dtype != tensors[0].dtype]:  # (`any` is the op here)
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = [t.numel() for t in tensors]
    grids = []
    for i, t in enumerate(tensors):
        view = [1] * len(tensors)
        view[i] = -1
        grids.append(t.reshape(view).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors):
    """The rows of every combination of the 1-d inputs' elements (itertools.product)."""
    tensors = _tensor_list(tensors)
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {_shape(t)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(tensors, indexing="ij")
    return _C.stack([g.flatten() for g in grids], 1)


# ----------------------------------------------------------------------------- products


def kron(input, other):
    """Kronecker product: input's and other's dims interleaved by a broadcast multiply
    ((a0, 1, a1, 1) * (1, b0, 1, b1)), then each pair merged by torch's `_unsafe_view`
    (UnsafeViewBackward0)."""
    n = input.dim() if input.dim() >= other.dim() else other.dim()
    a = (1,) * (n - input.dim()) + tuple(input.shape)
    b = (1,) * (n - other.dim()) + tuple(other.shape)
    left = input.reshape([s for x in a for s in (x, 1)])
    right = other.reshape([s for x in b for s in (1, x)])
    return _C._unsafe_view(left * right, [x * y for x, y in zip(a, b)])


def _dims_pair(dims):
    """tensordot's `dims` as two lists of dims."""
    if isinstance(dims, _T):
        dims = dims.item() if dims.dim() == 0 else dims.tolist()
    if isinstance(dims, (list, tuple)) and len(dims) == 2:
        for position, part in enumerate(dims):
            if isinstance(part, int):
                name = ("dims_self", "dims_other")[position]
                raise TypeError(
                    f"tensordot(): argument '{name}' (position {3 + position}) must be tuple "
                    "of ints, not int"
                )
        return list(dims[0]), list(dims[1])
    if isinstance(dims, (list, tuple)):
        raise ValueError(f"too many values to unpack (expected 2, got {len(dims)})")
    if not isinstance(dims, int) or isinstance(dims, bool):
        raise RuntimeError(
            "tensordot expects dims to be int or tuple[list[int], list[int]] or "
            f"list[list[int]] containing two lists, but got dims={dims}"
        )
    return None


def tensordot(a, b, dims=2, out=None):
    """Sum over the paired dims of a and b: both permuted to (free, contracted) and
    (contracted, free), flattened to matrices, one mm, reshaped to the free dims."""
    if out is not None:
        raise NotImplementedError("tensordot: out= is not supported by ferrograd")
    pair = _dims_pair(dims)
    if pair is None:
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        pair = list(range(-dims, 0)), list(range(dims))
    dims_a, dims_b = pair
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    wrapped_a = [_wrap_dim(d, a.dim()) for d in dims_a]
    wrapped_b = [_wrap_dim(d, b.dim()) for d in dims_b]
    for da, db, wa, wb in zip(dims_a, dims_b, wrapped_a, wrapped_b):
        sa, sb = a.shape[wa], b.shape[wb]
        if sa == sb:
            continue
        if sb == 1:  # torch sums a size-1 partner's dim out of the other operand first
            a = a.sum(wa, keepdim=True)
        elif sa == 1:
            b = b.sum(wb, keepdim=True)
        else:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {sa} in dim {da} "
                f"and second has size {sb} in dim {db}"
            )
    free_a = [d for d in range(a.dim()) if d not in wrapped_a]
    free_b = [d for d in range(b.dim()) if d not in wrapped_b]
    rows, size, cols = (
        _prod(a.shape[d] for d in free_a),
        _prod(a.shape[d] for d in wrapped_a),
        _prod(b.shape[d] for d in free_b),
    )
    left = a.permute(*free_a, *wrapped_a).reshape(rows, size)
    right = b.permute(*wrapped_b, *free_b).reshape(size, cols)
    return left.mm(right).reshape([a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def inner(input, other):
    """Sum over the last dims of both (a product when either is 0-dim)."""
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{_shape(input)} and {_shape(other)}"
        )
    return tensordot(input, other, ([-1], [-1]))


def matrix_power(input, n):
    """input @ input @ ... (n times) by repeated squaring; the identity for n == 0."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(
            f"matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}"
        )
    if input.dim() < 2:
        raise RuntimeError(
            "linalg.matrix_power: The input tensor A must have at least 2 dimensions."
        )
    rows, cols = input.shape[-2], input.shape[-1]
    if rows != cols:
        raise RuntimeError(
            "linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{rows} by {cols} matrices"
        )
    if n == 0:
        # torch's graph: a clone overwritten by the identity (its gradient is zero)
        eye = _C.eye(rows, dtype=input.dtype).expand(input.shape)
        return input.clone().copy_(eye)
    if n < 0:
        # A negative power is a positive power of the inverse (torch's graph: the
        # inverse's own node when n == -1, no clone).
        input, n = input.inverse(), -n
        if n == 1:
            return input
    elif n == 1:
        return input.clone()
    result, power = None, input
    while True:
        if n & 1:
            result = power if result is None else result.matmul(power)
        n >>= 1
        if not n:
            return result
        power = power.matmul(power)


def chain_matmul(*matrices):
    """Deprecated in torch in favour of linalg.multi_dot (which it calls)."""
    from .linalg import multi_dot

    _warn_once(
        _CHAIN_MATMUL_WARNED,
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
        "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors "
        "rather than multiple parameters.",
    )
    matrices = _tensor_list(matrices)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)


_CHAIN_MATMUL_WARNED = [False]


def _warn_once(flag, message):
    """torch's TORCH_WARN_ONCE: once per process, unless set_warn_always(True)."""
    if not flag[0] or _C._get_warn_always():
        flag[0] = True
        warnings.warn(message, UserWarning, stacklevel=3)


# ----------------------------------------------------------------------------- reductions


def _count(mask, dim, keepdim):
    """How many elements of a bool mask along `dim` (all of them when None) are set."""
    if dim is None:
        dim = tuple(range(mask.dim())) if keepdim else ()
    return mask.sum(dim, keepdim=keepdim) if dim != () else mask.sum()


def _as_input(out, input):
    """A bool reduction's result in torch's dtype: uint8 stays uint8."""
    return out.to(_C.uint8) if input.dtype == _C.uint8 else out


def all(input, dim=None, keepdim=False):  # noqa: A001 - torch's name
    """Whether every element along `dim` is nonzero: no zero is found (true when empty)."""
    # A bool input is its own mask (`== 0` would compare it as int64).
    zero = input.logical_not() if input.dtype == _C.bool else input == 0
    return _as_input(_count(zero, dim, keepdim) == 0, input)


def any(input, dim=None, keepdim=False):  # noqa: A001 - torch's name
    """Whether some element along `dim` is nonzero."""
    nonzero = input if input.dtype == _C.bool else input != 0
    return _as_input(_count(nonzero, dim, keepdim) > 0, input)


def count_nonzero(input, dim=None):
    return _count(input != 0, dim, False)


# ----------------------------------------------------------------------------- creation


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """base ** linspace(start, end, steps), computed in float64 and cast (integer dtypes
    truncate, as torch's)."""
    for name, value in (("start", start), ("end", end)):
        if isinstance(value, _T):
            if value.dim() != 0:
                raise RuntimeError(
                    "logspace only supports 0-dimensional start and end tensors, but got "
                    f"{name} with {value.dim()} dimension(s)."
                )
    start = start.item() if isinstance(start, _T) else start
    end = end.item() if isinstance(end, _T) else end
    exponents = _C.linspace(start, end, steps, dtype=_C.float64, device=device)
    out = float(base) ** exponents
    out = out.to(dtype or _C.float32)
    return out.requires_grad_(requires_grad) if requires_grad else out


def _triangle_indices(name, row, col, offset, dtype, below):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if dtype not in (_C.int64, _C.int32):
        raise NotImplementedError(f"\"{name}\" not implemented for '{_C_TYPE[dtype]}'")
    rows, cols = [], []
    for r in range(row):
        # tril keeps columns c <= r + offset, triu keeps c >= r + offset
        lo, hi = (0, r + offset + 1) if below else (r + offset, col)
        lo, hi = (lo if lo > 0 else 0), (hi if hi < col else col)
        if hi > lo:
            rows.append(_C.full((hi - lo,), r, dtype=dtype))
            cols.append(_C.arange(lo, hi, dtype=dtype))
    if not rows:
        return _C.zeros((2, 0), dtype=dtype)
    return _C.stack([_C.cat(rows, 0), _C.cat(cols, 0)], 0)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, col) indices of the lower triangle (c <= r + offset), row by row."""
    return _triangle_indices("tril_indices", row, col, offset, dtype or _C.int64, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, col) indices of the upper triangle (c >= r + offset), row by row."""
    return _triangle_indices("triu_indices", row, col, offset, dtype or _C.int64, False)


# ----------------------------------------------------------------------------- methods


def _conj_transpose(self):
    """Tensor.H: the conjugate transpose of a matrix."""
    if self.dim() == 0:
        warnings.warn(
            "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
            UserWarning,
            stacklevel=2,
        )
        return self.conj()
    if self.dim() != 2:
        hint = " For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D "
            f"tensor.{hint}"
        )
    return self.transpose(-2, -1).conj()


def _batch_conj_transpose(self):
    """Tensor.mH: the conjugate transpose of the last two dims."""
    if self.dim() < 2:
        raise RuntimeError(
            "tensor.mH is only supported on matrices or batches of matrices. Got "
            f"{self.dim()}-D tensor."
        )
    return self.transpose(-2, -1).conj()


_METHODS = {
    "take_along_dim": take_along_dim,
    "tensor_split": tensor_split,
    "kron": kron,
    "inner": inner,
    "matrix_power": matrix_power,
    "all": all,
    "any": any,
    "count_nonzero": count_nonzero,
}


def _install_methods(methods):
    """Make each function a Tensor method, unless the core already defines one."""
    for name, fn in methods.items():
        if not hasattr(_T, name):
            setattr(_T, name, fn)


_install_methods(_METHODS)
_T.H = property(_conj_transpose)
_T.mH = property(_batch_conj_transpose)
