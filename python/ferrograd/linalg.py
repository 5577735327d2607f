"""``ferrograd.linalg``: the part of ``torch.linalg`` built from other ops (torch's
CompositeImplicitAutograd ones): multi_dot, vecdot, and matmul (an alias); and cross
(LinalgCrossBackward0, the Tensor method with linalg's default dim); the norms
(vector_norm, matrix_norm, norm: _norms.py). The decompositions and solvers (inv, det,
slogdet, solve, solve_triangular, cholesky and their ``_ex`` forms, qr, eigh, svd, pinv,
matrix_exp, lstsq, eig, householder_product; torch's cholesky_solve, cholesky_inverse and
orgqr) are single nodes in the core (src/ops/decomp/); ``LinAlgError`` is the
RuntimeError subclass their numerical failures raise."""

from . import _C
from ._composite import _shape, _wrap_dim
from ._composite import matrix_power as _matrix_power
from ._functional import _C_TYPE
from ._norms import linalg_norm as norm
from ._norms import matrix_norm, vector_norm
from ._sort_args import _invalid_combination
from ._tensor_py import _FIELDS, return_types

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cross",
    "det",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "householder_product",
    "inv",
    "inv_ex",
    "lstsq",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "diagonal",
    "matrix_rank",
    "cond",
    "vander",
    "tensorinv",
    "tensorsolve",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "vecdot",
    "vector_norm",
]

LinAlgError = _C.LinAlgError

# The fields of the named tuples the decompositions return (ferrograd.return_types).
_FIELDS.update({
    "slogdet": ("sign", "logabsdet"),
    "linalg_slogdet": ("sign", "logabsdet"),
    "linalg_inv_ex": ("inverse", "info"),
    "linalg_solve_ex": ("result", "info"),
    "linalg_cholesky_ex": ("L", "info"),
    "linalg_eigh": ("eigenvalues", "eigenvectors"),
    "linalg_svd": ("U", "S", "Vh"),
    "linalg_qr": ("Q", "R"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_eig": ("eigenvalues", "eigenvectors"),
})


def _tensor(x, fn, arg, pos):
    """torch's argument parser error for a non-tensor argument."""
    if not isinstance(x, _C.Tensor):
        raise TypeError(
            f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}"
        )
    return x


def inv(A, *, out=None):
    return _tensor(A, "linalg_inv", "A", 1).inverse()


def inv_ex(A, *, check_errors=False, out=None):
    return _tensor(A, "linalg_inv_ex", "A", 1)._linalg_inv_ex(check_errors)


def det(A, *, out=None):
    return _tensor(A, "linalg_det", "A", 1).det()


def slogdet(A, *, out=None):
    return _tensor(A, "linalg_slogdet", "A", 1)._linalg_slogdet()


def solve(A, B, *, left=True, out=None):
    return _tensor(A, "linalg_solve", "A", 1)._linalg_solve(B, left)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    return _tensor(A, "linalg_solve_ex", "A", 1)._linalg_solve_ex(B, left, check_errors)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    A = _tensor(A, "linalg_solve_triangular", "A", 1)
    return A._linalg_solve_triangular(B, upper, left, unitriangular)


def cholesky(A, *, upper=False, out=None):
    return _tensor(A, "linalg_cholesky", "A", 1)._linalg_cholesky(upper)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    return _tensor(A, "linalg_cholesky_ex", "A", 1)._linalg_cholesky_ex(upper, check_errors)


_PINV_OVERLOADS = (
    (
        "(Tensor input, *, Tensor atol = None, Tensor rtol = None, bool hermitian = False, "
        "Tensor out = None)",
    ),
    (
        "(Tensor input, *, float atol = None, float rtol = None, bool hermitian = False, "
        "Tensor out = None)",
    ),
    ("(Tensor input, Tensor rcond, bool hermitian = False, *, Tensor out = None)",),
    ("(Tensor input, float rcond, bool hermitian = False, *, Tensor out = None)",),
)


def _tensor_only(tol):
    """Whether torch's parser takes a tolerance only as a tensor (its float overload
    takes numbers and 0-dim real tensors that do not require grad)."""
    if not isinstance(tol, _C.Tensor):
        return False
    return tol.dim() > 0 or tol.requires_grad or tol.is_complex()


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """torch.linalg.pinv. Tolerance tensors broadcast against the batch of A's singular
    values and are not differentiated (torch's atol_rtol_tensor overload)."""
    A = _tensor(A, "linalg_pinv", "A", 1)
    if _tensor_only(atol) or _tensor_only(rtol):
        for tol in (atol, rtol):
            if tol is not None and not isinstance(tol, _C.Tensor):
                # (The keywords as given, as far as they can be told apart from defaults.)
                kwargs = {"atol": atol, "rtol": rtol, "hermitian": hermitian}
                given = {k: v for k, v in kwargs.items() if v is not None and v is not False}
                raise _invalid_combination("linalg_pinv", _PINV_OVERLOADS, (A,), given)
        return A._linalg_pinv_tensors(atol, rtol, hermitian)
    atol = None if atol is None else float(atol)
    rtol = None if rtol is None else float(rtol)
    return A._linalg_pinv(atol, rtol, hermitian)


def qr(A, mode="reduced", *, out=None):
    return _tensor(A, "linalg_qr", "A", 1)._linalg_qr(mode)


def eig(A, *, out=None):
    return _tensor(A, "linalg_eig", "input", 1)._linalg_eig()


def eigvals(A, *, out=None):
    return _tensor(A, "linalg_eigvals", "input", 1)._linalg_eigvals()


def eigh(A, UPLO="L", *, out=None):
    return _tensor(A, "linalg_eigh", "A", 1)._linalg_eigh(UPLO)


def eigvalsh(A, UPLO="L", *, out=None):
    return _tensor(A, "linalg_eigvalsh", "A", 1)._linalg_eigvalsh(UPLO)


def svd(A, full_matrices=True, *, driver=None, out=None):
    return return_types.linalg_svd(*_tensor(A, "linalg_svd", "A", 1)._linalg_svd(full_matrices))


def svdvals(A, *, driver=None, out=None):
    return _tensor(A, "linalg_svdvals", "A", 1)._linalg_svdvals()


def lstsq(A, B, rcond=None, *, driver=None):
    A = _tensor(A, "linalg_lstsq", "input", 1)
    _tensor(B, "linalg_lstsq", "b", 2)
    if rcond is not None:
        if isinstance(rcond, bool) or not isinstance(rcond, (int, float)):
            raise TypeError(
                "linalg_lstsq(): argument 'rcond' (position 3) must be float, not "
                f"{type(rcond).__name__}"
            )
        rcond = float(rcond)
    return return_types.linalg_lstsq(*A._linalg_lstsq(B, rcond, driver))


def householder_product(A, tau, *, out=None):
    _tensor(tau, "linalg_householder_product", "tau", 2)
    return _tensor(A, "linalg_householder_product", "input", 1).orgqr(tau)


def _orgqr(input, input2):
    _tensor(input2, "orgqr", "input2", 2)
    return _tensor(input, "orgqr", "input", 1).orgqr(input2)


def matrix_exp(A):
    return _tensor(A, "linalg_matrix_exp", "input", 1).matrix_exp()


def _matrix_exp(input):
    return _tensor(input, "matrix_exp", "input", 1).matrix_exp()


def _cholesky_solve(input, input2, upper=False, *, out=None):
    _tensor(input2, "cholesky_solve", "input2", 2)
    return _tensor(input, "cholesky_solve", "input", 1).cholesky_solve(input2, upper)


def _cholesky_inverse(input, upper=False, *, out=None):
    return _tensor(input, "cholesky_inverse", "input", 1).cholesky_inverse(upper)


def _inverse(input, *, out=None):
    return _tensor(input, "inverse", "input", 1).inverse()


def _det(input):
    return _tensor(input, "det", "input", 1).det()


def _logdet(input):
    return _tensor(input, "logdet", "input", 1).logdet()


def _slogdet(input, *, out=None):
    return _tensor(input, "slogdet", "input", 1).slogdet()


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


# ----------------------------------------------------------------------------- composites


def matrix_power(A, n, *, out=None):
    """A to the integer power n (negative: of A's inverse); the identity for n == 0."""
    return _matrix_power(_tensor(A, "linalg_matrix_power", "A", 1), n)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """torch.linalg.diagonal: Tensor.diagonal with the matrix dims last by default."""
    return _tensor(A, "linalg_diagonal", "A", 1).diagonal(offset, dim1, dim2)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    """How many singular values (eigenvalue magnitudes when `hermitian`) exceed
    max(atol, rtol * the largest); rtol defaults to eps(dtype) * max(m, n) when atol is
    not given either, as torch."""
    A = _tensor(A, "linalg_matrix_rank", "A", 1)
    if tol is not None:
        atol, rtol = tol, 0.0
    values = eigvalsh(A).abs() if hermitian else svdvals(A)
    if rtol is None:
        eps = {_C.float32: 1.1920928955078125e-07, _C.complex64: 1.1920928955078125e-07}
        rtol = 0.0 if atol is not None else eps.get(A.dtype, 2.220446049250313e-16) * max(
            A.shape[-2], A.shape[-1]
        )
    atol = 0.0 if atol is None else atol
    if values.shape[-1] == 0:
        return _C.zeros(list(values.shape[:-1]), dtype=_C.int64)
    largest = values.amax(-1, keepdim=True)
    threshold = (largest * rtol).clamp_min(atol)
    return (values > threshold).sum(-1)


def cond(A, p=None):
    """The condition number of A in the `p` norm (2, the default: the ratio of the
    largest to the smallest singular value; else norm(A, p) * norm(inv(A), p))."""
    A = _tensor(A, "linalg_cond", "A", 1)
    if p is None or p in (2, -2):
        s = svdvals(A)
        ratio = s[..., 0] / s[..., -1]
        return ratio if p in (None, 2) else 1 / ratio
    rows, cols = A.shape[-2], A.shape[-1]
    if rows != cols:
        raise RuntimeError(
            f"linalg.cond(ord={p}): A must be batches of square matrices, but they are "
            f"{rows} by {cols} matrices"
        )
    # A singular matrix has an infinite condition number (torch maps the NaN it gets to
    # inf the same way).
    return (matrix_norm(A, p) * matrix_norm(inv(A), p)).nan_to_num(float("inf"))


def vander(x, *, N=None):
    """Columns x**0, x**1, ..., x**(N-1) (N defaults to len(x)): cumulative products."""
    x = _tensor(x, "linalg_vander", "x", 1)
    n = (x.shape[-1] if x.dim() else 0) if N is None else N
    if n < 1 or x.dim() == 0:
        raise RuntimeError("N must be greater than 1.")
    ones = _C.ones([*x.shape, 1], dtype=x.dtype)
    if n == 1:
        return ones
    powers = x.unsqueeze(-1).expand([*x.shape, n - 1]).cumprod(-1)
    return _C.cat([ones, powers], -1)


def tensorinv(A, ind=2, *, out=None):
    """The inverse of A read as a matrix of its first `ind` dims by the rest, shaped
    (rest..., first...)."""
    A = _tensor(A, "linalg_tensorinv", "A", 1)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = 1, 1
    for s in A.shape[:ind]:
        rows *= s
    for s in A.shape[ind:]:
        cols *= s
    if rows != cols:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            "prod(self.shape[:ind]), but got "
            f"{cols} != {rows}"
        )
    return inv(A.reshape(rows, cols)).reshape([*A.shape[ind:], *A.shape[:ind]])


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.dim()) == B."""
    A = _tensor(A, "linalg_tensorsolve", "A", 1)
    B = _tensor(B, "linalg_tensorsolve", "B", 2)
    if dims is not None:
        n = A.dim()
        moved = [_wrap_dim(d, n) for d in dims]
        A = A.permute([d for d in range(n) if d not in moved] + moved)
    rows = B.numel()
    rest = list(A.shape[B.dim():])
    cols = 1
    for s in rest:
        cols *= s
    if rows != cols:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {cols} != {rows}"
        )
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(rest)

