"""Module-level ops (``ferrograd.exp(x)``...). The op table's functions come from
``_C`` (src/bindings/op_table.rs); most others are the Tensor methods themselves
(C-level descriptors, no Python frame on the call)."""

from . import _C, _sort_args
from ._C import Tensor as _T

# Every op-table line's module function and its aliases.
_TABLE = [n for name, _kind, _arg, _inplace, aliases in _C._op_table() for n in (name, *aliases)]
globals().update({n: getattr(_C, n) for n in _TABLE})

# Bitwise and logical ops: the Tensor methods (src/bindings/tensor_ops.rs).
_BITWISE = (
    *("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"),
    *("bitwise_left_shift", "bitwise_right_shift"),
    *("logical_and", "logical_or", "logical_xor", "logical_not"),
)
globals().update({n: getattr(_T, n) for n in _BITWISE})

# Special math with signatures of their own (src/bindings/tensor_ops.rs).
logit = _T.logit
nan_to_num = _T.nan_to_num


def floor_divide(input, other):
    """torch.floor_divide(input, other): `input` may be a Python number."""
    if isinstance(input, _T):
        return input.floor_divide(other)
    return other.__rfloordiv__(input)


def polygamma(n, input):
    """torch.polygamma(n, input): the order comes first in the module function."""
    return input.polygamma(n)

# Fused matrix products, diagonals and element-moving copies: the Tensor methods
# (src/bindings/matrix_methods.rs).
_MATRIX = (
    *("addmm", "addmv", "baddbmm", "addbmm", "vdot", "cross", "trace"),
    *("diag_embed", "diag", "diagflat", "roll", "rot90", "narrow_copy"),
)
globals().update({n: getattr(_T, n) for n in _MATRIX})

__all__ = [
    "logit",
    "nan_to_num",
    "floor_divide",
    "polygamma",
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
    "swapdims",
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
    "amax",
    "amin",
    "argmax",
    "argmin",
    "prod",
    "logsumexp",
    "softmax",
    "log_softmax",
    "var",
    "std",
    "var_mean",
    "std_mean",
    "cumsum",
    "flip",
    "fliplr",
    "flipud",
    "round",
    "movedim",
    "gather",
    "scatter",
    "scatter_add",
    "index_select",
    "masked_fill",
    "index_put",
    "index_fill",
    "nonzero",
    "argwhere",
    "index_add",
    "index_copy",
    "take",
    "masked_select",
    "masked_scatter",
    "sort",
    "argsort",
    "msort",
    "topk",
    "kthvalue",
    "median",
    "nanmedian",
    "tril",
    "triu",
    "tile",
    "moveaxis",
    "hstack",
    "vstack",
    "dstack",
    "column_stack",
    "outer",
    *_BITWISE,
    *_MATRIX,
    "broadcast_to",
    "broadcast_tensors",
    "isclose",
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
transpose = _T.transpose
swapaxes = _T.swapaxes
swapdims = _T.swapdims
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
amax = _T.amax
amin = _T.amin
argmax = _T.argmax
argmin = _T.argmin
prod = _T.prod
logsumexp = _T.logsumexp
softmax = _T.softmax
log_softmax = _T.log_softmax
var = _T.var
std = _T.std
var_mean = _T._var_mean
std_mean = _T._std_mean
cumsum = _T.cumsum
fliplr = _T.fliplr
flipud = _T.flipud
round = _T.round  # noqa: A001
movedim = _T.movedim
gather = _T.gather
scatter = _T.scatter
scatter_add = _T.scatter_add
index_select = _T.index_select
masked_fill = _T.masked_fill
index_put = _T.index_put
index_put_ = _T.index_put_
index_fill = _T.index_fill
nonzero = _T.nonzero
argwhere = _T.argwhere
index_add = _T.index_add
index_copy = _T.index_copy
take = _T.take
masked_select = _T.masked_select
masked_scatter = _T.masked_scatter
_C_SORT = _T.sort
_C_ARGSORT = _T.argsort


def _sort_method(self, *args, **kwargs):
    """Tensor.sort, with torch's argument-parser errors (_sort_args.py)."""
    if kwargs or len(args) > 2:
        _sort_args.check("sort", args, kwargs, method=True)
    return _C_SORT(self, *args, **kwargs)


def _argsort_method(self, *args, **kwargs):
    """Tensor.argsort, with torch's argument-parser errors (_sort_args.py)."""
    if kwargs or len(args) > 2:
        _sort_args.check("argsort", args, kwargs, method=True)
    return _C_ARGSORT(self, *args, **kwargs)


def _module_call(name, method, args, kwargs):
    _sort_args.check(name, args, kwargs, method=False)
    if not args and "input" in kwargs:
        args = (kwargs.pop("input"),)
    return method(*args, **kwargs)


def sort(*args, **kwargs):
    """torch.sort(input, dim=-1, descending=False, *, stable=None)."""
    return _module_call("sort", _C_SORT, args, kwargs)


def argsort(*args, **kwargs):
    """torch.argsort(input, dim=-1, descending=False, *, stable=None)."""
    return _module_call("argsort", _C_ARGSORT, args, kwargs)


_T.sort = _sort_method
_T.argsort = _argsort_method
msort = _T.msort
topk = _T.topk
kthvalue = _T.kthvalue
median = _T.median
nanmedian = _T.nanmedian
tril = _T.tril
triu = _T.triu
moveaxis = _T.moveaxis


def _int_tuple(op, name, position, value):
    """torch's module functions take `dims` as a tuple or list, never a bare int."""
    if isinstance(value, int):
        raise TypeError(
            f"{op}(): argument '{name}' (position {position}) must be tuple of ints, not int"
        )
    return value


def flip(input, dims):
    return input.flip(_int_tuple("flip", "dims", 2, dims))


def tile(input, dims):
    return input.tile(_int_tuple("tile", "dims", 2, dims))


def reshape(input, shape):
    return input.reshape(shape)


def _at_least(t, n):
    """`t` with size-1 dims added as torch's atleast_1d/2d/3d add them."""
    if t.dim() >= n:
        return t
    if n == 1 or t.dim() == 0:
        return t.reshape((1,) * (n - t.dim()) + tuple(t.shape))
    if n == 2:
        return t.unsqueeze(0)
    return t.unsqueeze(0).unsqueeze(-1) if t.dim() == 1 else t.unsqueeze(-1)


def _non_empty(op, tensors):
    if len(tensors) == 0:
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    return tensors


def hstack(tensors):
    """Joined along dim 1 (dim 0 for 1-d tensors)."""
    parts = [_at_least(t, 1) for t in _non_empty("hstack", tensors)]
    return _C.cat(parts, 0 if parts and parts[0].dim() == 1 else 1)


def vstack(tensors):
    return _C.cat([_at_least(t, 2) for t in _non_empty("vstack", tensors)], 0)


def dstack(tensors):
    return _C.cat([_at_least(t, 3) for t in _non_empty("dstack", tensors)], 2)


def column_stack(tensors):
    """1-d (and 0-d) tensors become columns, then joined along dim 1."""
    tensors = _non_empty("column_stack", tensors)
    cols = [t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in tensors]
    return _C.cat(cols, 1)


def outer(input, vec2):
    """The outer product of two vectors, as torch computes it (a broadcast multiply)."""
    for name, t in (("self", input), ("vec2", vec2)):
        if t.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.dim()}-D")
    return input.reshape(-1, 1) * vec2


def broadcast_to(input, size):
    return input.expand(size)


def _broadcast_pair(a, b):
    """The broadcast shape of shapes `a` and `b`, with torch's error."""
    n = len(a) if len(a) >= len(b) else len(b)  # `max` here is the tensor op
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and 1 not in (x, y):
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                f"at non-singleton dimension {i}"
            )
        out.append(y if x == 1 else x)
    return tuple(out)


def broadcast_tensors(*tensors):
    """Every tensor expanded to their common broadcast shape."""
    shape = ()
    for t in tensors:
        shape = _broadcast_pair(shape, t.shape)
    return tuple(t.expand(shape) for t in tensors)


# c10's names of the dtypes, as torch's messages spell them.
_C_TYPE = {
    _C.bool: "Bool",
    _C.uint8: "Byte",
    _C.int32: "Int",
    _C.int64: "Long",
    _C.float16: "Half",
    _C.bfloat16: "BFloat16",
    _C.float32: "Float",
    _C.float64: "Double",
    _C.complex64: "ComplexFloat",
    _C.complex128: "ComplexDouble",
}


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other| elementwise (equal values, infinities
    included, are always close; NaNs only with equal_nan)."""
    if input.dtype != other.dtype:
        raise RuntimeError(f"{_C_TYPE[input.dtype]} did not match {_C_TYPE[other.dtype]}")
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if tol < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {tol}")
    close = input == other
    if equal_nan:
        close = close + input.isnan() * other.isnan()  # bool + is or, bool * is and
    if not (input.is_floating_point() or input.is_complex()):
        return close
    allowed = atol + rtol * other.abs()
    within = (input - other).abs() <= allowed
    return close + within * allowed.isfinite()


# --- issue 11: ternary ops, scans, nan-reductions (src/bindings/misc_methods.rs) ---
_MISC = (
    *("lerp", "addcmul", "addcdiv", "cumprod", "cummax", "cummin", "logcumsumexp"),
    *("nansum", "nanmean", "aminmax"),
)
globals().update({n: getattr(_T, n) for n in _MISC})
__all__ += _MISC


def _allclose_method(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Tensor.allclose: torch.allclose(self, ...)."""
    return _C.allclose(self, other, rtol, atol, equal_nan)


def _equal_method(self, other):
    """Tensor.equal: torch.equal(self, other)."""
    return _C.equal(self, other)


def _where_method(self, condition, y):
    """Tensor.where(condition, y): torch.where(condition, self, y)."""
    return _C.where(condition, self, y)


# Methods over the module functions (a Python function binds `self` as `input`).
_T.isclose = isclose
_T.allclose = _allclose_method
_T.equal = _equal_method
_T.where = _where_method
