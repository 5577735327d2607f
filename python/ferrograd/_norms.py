"""Norms as torch builds them: ``linalg.vector_norm`` is one op
(LinalgVectorNormBackward0, src/ops/norm.rs); ``linalg.matrix_norm``, ``linalg.norm``,
``torch.norm`` and ``Tensor.norm`` choose between it and amax/amin of it, as torch's
linalg_matrix_norm / linalg_norm / torch.functional.norm do, so their graphs hold the
same nodes as torch's (matrix_norm(A, 1) is AmaxBackward0 over a vector norm)."""

import math
import numbers

from ._C import Tensor as _T
from ._composite import _wrap_dim
from ._functional import _C_TYPE

__all__ = ["norm"]

_SVD_ORDS = ("nuc", 2, -2)


def _type_name(obj):
    return type(obj).__name__


def _dims_arg(dim, op):
    """`dim` as a list (None stays None), with torch's TypeError for anything else."""
    if dim is None:
        return None
    if isinstance(dim, numbers.Integral) and not isinstance(dim, bool):
        return [int(dim)]
    if isinstance(dim, (tuple, list)) and all(
        isinstance(d, numbers.Integral) and not isinstance(d, bool) for d in dim
    ):
        return [int(d) for d in dim]
    raise TypeError(f"{op}(): argument 'dim' must be tuple of ints, not {_type_name(dim)}")


def _check_input(A, op):
    if not isinstance(A, _T):
        raise TypeError(
            f"{op}(): argument 'input' (position 1) must be Tensor, not {_type_name(A)}"
        )


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ord-norm of x's elements over `dim` (every dim when None)."""
    _check_input(x, "linalg_vector_norm")
    if not isinstance(ord, numbers.Real):
        raise TypeError(
            "linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
            f"{_type_name(ord)}"
        )
    dims = _dims_arg(dim, "linalg_vector_norm")
    return x._linalg_vector_norm(float(ord), dims, keepdim, dtype=dtype)


def _ord_text(ord):
    if isinstance(ord, float) and ord.is_integer():
        return str(int(ord))
    return str(ord)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """'fro': the 2-norm of the elements; ±1 / ±inf: the largest / smallest column /
    row 1-norm (torch's linalg_matrix_norm, in its order of checks)."""
    _check_input(A, "linalg_matrix_norm")
    op = "linalg.matrix_norm"
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"{op}: Order {ord} not supported.")
    elif abs(ord) not in (1, 2, math.inf):
        raise RuntimeError(f"{op}: Order {_ord_text(ord)} not supported.")
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if not (A.is_floating_point() or A.is_complex()):
        raise NotImplementedError(
            f"{op}: Expected a floating point or complex tensor as input. Got {_C_TYPE[A.dtype]}"
        )
    dims = _dims_arg(dim, "linalg_matrix_norm")
    if len(dims) != 2:
        raise RuntimeError(f"{op}: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
    dims = [_wrap_dim(d, A.dim()) for d in dims]
    if dims[0] == dims[1]:
        raise RuntimeError(f"{op}: dims must be different. Got ({dims[0]}, {dims[1]})")
    if ord in _SVD_ORDS:
        return _svd_norm(A, ord, dims, keepdim, dtype)
    if ord == "fro":
        return A._linalg_vector_norm(2.0, dims, keepdim, dtype=dtype, _op=op)
    # The inf-norm is the 1-norm of the transpose: the 1-norms run along the other dim.
    if math.isinf(ord):
        dims.reverse()
    if not keepdim and dims[0] < dims[1]:
        dims[1] -= 1
    col = A._linalg_vector_norm(1.0, [dims[0]], keepdim, dtype=dtype, _op=op)
    return col.amax(dims[1], keepdim) if ord > 0 else col.amin(dims[1], keepdim)


def _svd_norm(A, ord, dims, keepdim, dtype):
    """'nuc' / ±2 as torch's linalg_matrix_norm: the two dims moved last, the singular
    values (LinalgSvdBackward0), then their sum / amax / amin over the last dim."""
    rest = [d for d in range(A.dim()) if d not in dims]
    perm = rest + dims
    B = A if dtype is None else A.to(dtype)
    s = B.permute(*perm)._linalg_svdvals()
    if ord == "nuc" or (ord > 0 and s.shape[-1] == 0):  # torch's 2-norm of nothing is 0
        result = s.sum(-1, keepdim)
    elif ord > 0:
        result = s.amax(-1, keepdim)
    else:
        result = s.amin(-1, keepdim)
    if keepdim:
        result = result.unsqueeze(-1).permute(*[perm.index(d) for d in range(A.dim())])
    return result


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm, or a matrix norm over two dims (torch's linalg_norm)."""
    _check_input(A, "linalg_norm")
    dims = _dims_arg(dim, "linalg_norm")
    if dims is not None:
        if len(dims) not in (1, 2):
            raise RuntimeError(
                f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {dims}"
            )
    elif ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
            f"Got {A.dim()}D."
        )
    if isinstance(ord, str) or (
        ord is not None and (len(dims) == 2 if dims is not None else A.dim() == 2)
    ):
        return matrix_norm(A, ord, dims if dims is not None else (0, 1), keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: 'fro' (and None) is the 2-norm of the elements, a number p the p-norm;
    other strings ('nuc') go to matrix_norm (torch.functional.norm's routing)."""
    if out is not None:
        raise NotImplementedError("norm(): out= is not supported")
    dims = [dim] if isinstance(dim, numbers.Integral) else dim
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, numbers.Integral) or len(dim) <= 2):
            return vector_norm(input, 2, dims, keepdim, dtype=dtype)
        if dims is None:
            dims = list(range(input.dim()))
        return matrix_norm(input, p, dims, keepdim, dtype=dtype)
    return vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype)


def _tensor_norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    return norm(self, p, dim, keepdim, dtype=dtype)


_T.norm = _tensor_norm
