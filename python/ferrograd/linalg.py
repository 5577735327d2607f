"""``ferrograd.linalg``: the part of ``torch.linalg`` built from other ops (torch's
CompositeImplicitAutograd ones): multi_dot, vecdot, and matmul (an alias); and cross
(LinalgCrossBackward0, the Tensor method with linalg's default dim); the norms
(vector_norm, matrix_norm, norm: _norms.py)."""

from . import _C
from ._composite import _shape
from ._functional import _C_TYPE
from ._norms import linalg_norm as norm
from ._norms import matrix_norm, vector_norm

__all__ = ["cross", "matmul", "matrix_norm", "multi_dot", "norm", "vecdot", "vector_norm"]

matmul = _C.Tensor.matmul


def cross(input, other, *, dim=-1):
    return input.cross(other, dim)


# The names torch's multi_dot message gives dtypes (caffe2's TypeMeta names).
_TYPE_META = {
    _C.bool: "bool",
    _C.uint8: "unsigned char",
    _C.int32: "int",
    _C.int64: "long int",
    _C.float16: "c10::Half",
    _C.bfloat16: "c10::BFloat16",
    _C.float32: "float",
    _C.float64: "double",
    _C.complex64: "c10::complex<float>",
    _C.complex128: "c10::complex<double>",
}


def _check_chain(tensors):
    """torch's checks, in its order: the count, each tensor's rank, the dtypes, then
    each neighbouring pair's inner sizes (a 1-D end being a row / a column)."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):
        if i in (0, n - 1) and t.dim() not in (1, 2):
            which = "first" if i == 0 else "last"
            raise RuntimeError(
                f"multi_dot(): the {which} tensor must be 1D or 2D but got {t.dim()}D"
            )
        if 0 < i < n - 1 and t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(
                "multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{_TYPE_META[tensors[0].dtype]} and tensor {i} {_TYPE_META[t.dtype]}"
            )
    for i in range(n - 1):
        a, b = tensors[i], tensors[i + 1]
        if a.shape[-1] != b.shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {_shape(a)} and "
                f"{_shape(b)} cannot be multiplied"
            )


def _chain_order(sizes):
    """The cheapest parenthesization of a chain of matrices (sizes[i] x sizes[i+1]):
    split[i][j] is where the product of matrices i..j splits (the textbook dynamic
    program over chain lengths)."""
    n = len(sizes) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            best = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if best is None or c < best:
                    best, split[i][j] = c, k
            cost[i][j] = best
    return split


def _multiply(matrices, split):
    """The product of the chain in the order `split` gives (a work stack, no recursion:
    the chain's length is the user's)."""
    results = {}
    stack = [(0, len(matrices) - 1, False)]
    while stack:
        i, j, ready = stack.pop()
        if i == j:
            results[(i, j)] = matrices[i]
        elif ready:
            k = split[i][j]
            results[(i, j)] = results.pop((i, k)).mm(results.pop((k + 1, j)))
        else:
            k = split[i][j]
            stack += [(i, j, True), (i, k, False), (k + 1, j, False)]
    return results[(0, len(matrices) - 1)]


def multi_dot(tensors):
    """The product of a chain of matrices, in the cheapest order; the first may be a
    row vector and the last a column vector (1-D), whose dims the result drops."""
    tensors = list(tensors)
    _check_chain(tensors)
    first, last = tensors[0], tensors[-1]
    out_shape = list(first.shape[:-1]) + list(last.shape[1:])
    matrices = [first.unsqueeze(0) if first.dim() == 1 else first, *tensors[1:-1]]
    matrices.append(last.unsqueeze(-1) if last.dim() == 1 else last)
    sizes = [m.shape[0] for m in matrices] + [matrices[-1].shape[1]]
    return _multiply(matrices, _chain_order(sizes)).reshape(out_shape)


def vecdot(x, y, *, dim=-1):
    """The dot product of x and y along `dim` (x conjugated), broadcasting the others."""
    if x.dtype != y.dtype:
        raise RuntimeError(
            "linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{_C_TYPE[x.dtype]} and y of type {_C_TYPE[y.dtype]} instead"
        )
    if not (x.is_floating_point() or x.is_complex()):
        raise NotImplementedError(
            "linalg.vecdot: Expected a floating point or complex tensor as input. Got "
            f"{_C_TYPE[x.dtype]}"
        )
    return (x.conj() * y).sum(dim)
