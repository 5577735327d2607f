"""Issue 11, linalg decompositions (src/ops/decomp/: inv, det, slogdet, solve,
solve_triangular, cholesky, qr, eigh, svd, pinv; kernels in
src/kernels/cpu/decomp.rs, python/ferrograd/linalg.py): errors (torch's classes,
messages and order of checks; the numerical failures are torch.linalg.LinAlgError, a
RuntimeError subclass, naming the batch element), the `_ex` forms' info, and
reconstructions (A = L Lᴴ, A A⁻¹ = I, ...) checked against numpy.

The error table is checked on torch 2.15 by running this file with torch's Python
(`/root/torchvenv/bin/python tests/test_linalg_decomp.py`: `ferrograd` is torch there).
Names: a (3, 3) float64 invertible, s (3, 3) float64 singular (last row = first row,
its LU's third pivot is zero), r (2, 3) float64, v (3,) float64, l (3, 3) int64,
h (3, 3) float16, f (3, 3) float32, np2 (2, 2) float64 symmetric but not positive-definite.
"""

import sys

if __name__ == "__main__":
    import torch

    sys.modules["ferrograd"] = torch

import ferrograd as torch  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from error_table import check, run_on_torch  # noqa: E402

F64 = torch.float64
_S = [[1.0, 2.0, 3.0], [2.0, 5.0, 1.0], [1.0, 2.0, 3.0]]
NAMES = {
    "torch": torch,
    "a": torch.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], dtype=F64),
    "s": torch.tensor(_S, dtype=F64),
    "r": torch.ones(2, 3, dtype=F64),
    "v": torch.ones(3, dtype=F64),
    "l": torch.ones(3, 3, dtype=torch.int64),
    "h": torch.ones(3, 3, dtype=torch.float16),
    "f": torch.eye(3),
    "np2": torch.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=F64),
}

SINGULAR_INV = (
    "The diagonal element 3 is zero, the inversion could not be completed because the "
    "input matrix is singular."
)
SINGULAR_SOLVE = "The solver failed because the input matrix is singular."
NOT_PD = (
    "The factorization could not be completed because the input is not positive-definite "
    "(the leading minor of order 2 is not positive-definite)."
)
LONG = "Expected a floating point or complex tensor as input. Got Long"

# (call, exception class, message); a message ending in "..." is compared as a prefix.
CASES = [
    # inv
    ("torch.linalg.inv(s)", torch.linalg.LinAlgError, f"linalg.inv: {SINGULAR_INV}"),
    (
        "torch.linalg.inv(torch.stack([a, s]))",
        torch.linalg.LinAlgError,
        f"linalg.inv: (Batch element 1): {SINGULAR_INV}",
    ),
    ("torch.inverse(s)", torch.linalg.LinAlgError, f"linalg.inv: {SINGULAR_INV}"),
    (
        "torch.linalg.inv_ex(s, check_errors=True)",
        torch.linalg.LinAlgError,
        f"linalg.inv_ex: {SINGULAR_INV}",
    ),
    (
        "torch.linalg.solve_ex(s, v, check_errors=True)",
        torch.linalg.LinAlgError,
        f"torch.linalg.solve_ex: {SINGULAR_SOLVE}",
    ),
    (
        "torch.linalg.cholesky_ex(np2, check_errors=True)",
        torch.linalg.LinAlgError,
        f"linalg.cholesky_ex: {NOT_PD}",
    ),
    (
        "torch.linalg.inv(r)",
        RuntimeError,
        "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices",
    ),
    ("torch.linalg.inv(v)", RuntimeError,
     "linalg.inv: The input tensor A must have at least 2 dimensions."),
    ("torch.linalg.inv(l)", NotImplementedError, f"linalg.inv: {LONG}"),
    ("torch.linalg.inv(h)", NotImplementedError,
     "linalg.inv: Low precision dtypes not supported. Got Half"),
    # det, slogdet, logdet
    ("torch.linalg.det(l)", NotImplementedError, f"linalg.det: {LONG}"),
    (
        "torch.linalg.det(r)",
        RuntimeError,
        "linalg.det: A must be batches of square matrices, but they are 2 by 3 matrices",
    ),
    ("torch.det(v)", RuntimeError,
     "linalg.det: The input tensor A must have at least 2 dimensions."),
    (
        "torch.linalg.slogdet(r)",
        RuntimeError,
        "linalg.slogdet: A must be batches of square matrices, but they are 2 by 3 matrices",
    ),
    ("torch.linalg.slogdet(l)", NotImplementedError, f"linalg.slogdet: {LONG}"),
    (
        "torch.logdet(r)",
        RuntimeError,
        "logdet: A must be batches of square matrices, but they are 2 by 3 matrices",
    ),
    ("torch.logdet(l)", NotImplementedError, f"logdet: {LONG}"),
    # solve
    ("torch.linalg.solve(s, v)", torch.linalg.LinAlgError, f"torch.linalg.solve: {SINGULAR_SOLVE}"),
    (
        "torch.linalg.solve(torch.stack([a, s]), v)",
        torch.linalg.LinAlgError,
        f"torch.linalg.solve: (Batch element 1): {SINGULAR_SOLVE}",
    ),
    (
        "torch.linalg.solve(a, torch.ones(4, dtype=torch.float64))",
        RuntimeError,
        "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x1)",
    ),
    (
        "torch.linalg.solve(a, torch.ones(4, 2, dtype=torch.float64))",
        RuntimeError,
        "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x2)",
    ),
    (
        "torch.linalg.solve(a, r)",
        RuntimeError,
        "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 2x3)",
    ),
    (
        "torch.linalg.solve(r, torch.ones(2, dtype=torch.float64))",
        RuntimeError,
        "linalg.solve: A must be batches of square matrices, but they are 2 by 3 matrices",
    ),
    (
        "torch.linalg.solve(f, v)",
        RuntimeError,
        "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and "
        "B of type Double instead",
    ),
    ("torch.linalg.solve(l, torch.ones(3, dtype=torch.int64))", NotImplementedError,
     f"linalg.solve: {LONG}"),
    # solve_triangular
    (
        "torch.linalg.solve_triangular(a, torch.ones(3, 2, dtype=torch.float64), upper=True, "
        "left=False)",
        RuntimeError,
        "linalg.solve_triangular: Incompatible shapes of A and B for the equation XA = B "
        "(3x3 and 3x2)",
    ),
    (
        "torch.linalg.solve_triangular(r, torch.ones(3, 2, dtype=torch.float64), upper=True)",
        RuntimeError,
        "linalg.solve_triangular: A must be batches of square matrices, but they are 2 by 3 "
        "matrices",
    ),
    (
        "torch.linalg.solve_triangular(l, torch.ones(3, 2, dtype=torch.int64), upper=True)",
        NotImplementedError,
        "\"triangular_solve_cpu\" not implemented for 'Long'",
    ),
    # cholesky
    ("torch.linalg.cholesky(np2)", torch.linalg.LinAlgError, f"linalg.cholesky: {NOT_PD}"),
    (
        "torch.linalg.cholesky(torch.stack([torch.eye(2, dtype=torch.float64), np2]))",
        torch.linalg.LinAlgError,
        f"linalg.cholesky: (Batch element 1): {NOT_PD}",
    ),
    (
        "torch.linalg.cholesky(torch.tensor([[-1.0, 0.0], [0.0, 1.0]]))",
        torch.linalg.LinAlgError,
        "linalg.cholesky: The factorization could not be completed because the input is not "
        "positive-definite (the leading minor of order 1 is not positive-definite).",
    ),
    (
        # upper=True reads the upper triangle: [[4, 100], [., 5]] is not positive-definite.
        "torch.linalg.cholesky(torch.tensor([[4.0, 100.0], [2.0, 5.0]]), upper=True)",
        torch.linalg.LinAlgError,
        f"linalg.cholesky: {NOT_PD}",
    ),
    (
        "torch.linalg.cholesky(r)",
        RuntimeError,
        "linalg.cholesky: A must be batches of square matrices, but they are 2 by 3 matrices",
    ),
    ("torch.linalg.cholesky(l)", NotImplementedError, f"linalg.cholesky: {LONG}"),
    # qr
    (
        "torch.linalg.qr(a, mode='x')",
        RuntimeError,
        "qr received unrecognized mode 'x' but expected one of 'reduced' (default), 'r', or "
        "'complete'",
    ),
    ("torch.linalg.qr(v)", RuntimeError,
     "linalg.qr: The input tensor A must have at least 2 dimensions."),
    ("torch.linalg.qr(l)", NotImplementedError, f"linalg.qr: {LONG}"),
    # eigh, eigvalsh
    ("torch.linalg.eigh(a, UPLO='X')", RuntimeError,
     "Expected UPLO argument to be 'L' or 'U', but got X"),
    ("torch.linalg.eigh(l)", NotImplementedError,
     "\"linalg_eigh_cpu\" not implemented for 'Long'"),
    ("torch.linalg.eigh(h)", NotImplementedError,
     "\"linalg_eigh_cpu\" not implemented for 'Half'"),
    (
        "torch.linalg.eigh(r)",
        RuntimeError,
        "linalg.eigh: A must be batches of square matrices, but they are 2 by 3 matrices",
    ),
    ("torch.linalg.eigvalsh(v)", RuntimeError,
     "linalg.eigh: The input tensor A must have at least 2 dimensions."),
    # svd, svdvals
    ("torch.linalg.svd(v)", RuntimeError,
     "linalg.svd: The input tensor A must have at least 2 dimensions."),
    ("torch.linalg.svd(l)", NotImplementedError, f"linalg.svd: {LONG}"),
    ("torch.linalg.svdvals(v)", RuntimeError,
     "linalg.svd: The input tensor A must have at least 2 dimensions."),
    # pinv
    (
        "torch.linalg.pinv(torch.ones(3))",
        RuntimeError,
        "linalg.pinv(Float{[3]}): expected a tensor with 2 or more dimensions of float, "
        "double, cfloat or cdouble types",
    ),
    (
        "torch.linalg.pinv(l)",
        RuntimeError,
        "linalg.pinv(Long{[3, 3]}): expected a tensor with 2 or more dimensions of float, "
        "double, cfloat or cdouble types",
    ),
    # pinv's tensor tolerances: not differentiable, not complex, broadcast with the batch
    (
        "torch.linalg.pinv(a, atol=torch.ones(1, dtype=torch.float64, requires_grad=True))",
        RuntimeError,
        "The function 'linalg_pinv' is not differentiable with respect to argument 'atol'. "
        "This input cannot have requires_grad True.",
    ),
    (
        "torch.linalg.pinv(a, rtol=torch.tensor(0.5, requires_grad=True))",
        RuntimeError,
        "The function 'linalg_pinv' is not differentiable with respect to argument 'rtol'. "
        "This input cannot have requires_grad True.",
    ),
    (
        "torch.linalg.pinv(v, atol=torch.ones(2, dtype=torch.float64))",
        RuntimeError,
        "linalg.pinv(Double{[3]}): expected a tensor with 2 or more dimensions of float, "
        "double, cfloat or cdouble types",
    ),
    (
        "torch.linalg.pinv(a, atol=torch.tensor(0.5 + 0j))",
        RuntimeError,
        "torch.linalg.pinv: atol tensor of complex type is not supported. Got ComplexFloat",
    ),
    (
        "torch.linalg.pinv(a, atol=torch.ones(2), rtol=torch.ones(1, dtype=torch.complex128))",
        RuntimeError,
        "torch.linalg.pinv: rtol tensor of complex type is not supported. Got ComplexDouble",
    ),
    (
        "torch.linalg.pinv(torch.ones(3, 2, 2, dtype=torch.float64), atol=torch.ones(2))",
        RuntimeError,
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
        "dimension 0",
    ),
    (
        "torch.linalg.pinv(a, atol=torch.ones(3), rtol=0.5)",
        TypeError,
        "linalg_pinv() received an invalid combination of arguments - got (Tensor, "
        "rtol=float, atol=Tensor), but expected one of:\n"
        " * (Tensor input, *, Tensor atol = None, Tensor rtol = None, bool hermitian = False, "
        "Tensor out = None)\n"
        " * (Tensor input, *, float atol = None, float rtol = None, bool hermitian = False, "
        "Tensor out = None)\n"
        " * (Tensor input, Tensor rcond, bool hermitian = False, *, Tensor out = None)\n"
        " * (Tensor input, float rcond, bool hermitian = False, *, Tensor out = None)\n",
    ),
]


@pytest.mark.parametrize("call, kind, message", CASES, ids=[c[0] for c in CASES])
def test_error(call, kind, message):
    check(NAMES, call, kind, message)


def test_linalg_error_is_a_runtime_error():
    assert issubclass(torch.linalg.LinAlgError, RuntimeError)
    with pytest.raises(RuntimeError):
        torch.linalg.inv(NAMES["s"])


def _rand(*shape, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _np(t):
    """A tensor's values (torch's conjugate views need resolving first)."""
    return (t.resolve_conj() if hasattr(t, "resolve_conj") else t).detach().numpy()


def _eye_like(a):
    return np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)


def _np_pinv(a, atol, rtol, hermitian=False):
    """numpy's pinv of each matrix of `a` with the singular values (the eigenvalues'
    absolute values for `hermitian`) at or below max(atol, rtol * the largest) dropped;
    atol and rtol broadcast against the batch."""
    if hermitian:
        s, u = np.linalg.eigh(a)
        left = u
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        left = vh.conj().swapaxes(-1, -2)
    size = np.abs(s)
    top = size.max(-1, keepdims=True)
    tol = np.maximum(np.asarray(atol)[..., None], np.asarray(rtol)[..., None] * top)
    inv = np.where(size > tol, 1 / np.where(size > tol, s, 1), 0)
    return left * inv[..., None, :] @ u.conj().swapaxes(-1, -2)


def test_pinv_tensor_tolerances():
    a = _rand(3, 4, 5)
    s = np.linalg.svd(a, compute_uv=False)
    eps = np.finfo(np.float64).eps * 5
    # One atol per matrix, each between two of its singular values.
    atol = (s[:, 1] + s[:, 2]) / 2
    A = torch.tensor(a)
    out = torch.linalg.pinv(A, atol=torch.tensor(atol))
    assert out.shape == (3, 5, 4)
    np.testing.assert_allclose(_np(out), _np_pinv(a, atol, 0.0), atol=1e-10)
    # Broadcast past the batch: (3, 1) against (3,) gives (3, 3).
    col = torch.tensor(atol).reshape(3, 1)
    wide = torch.linalg.pinv(A, atol=col)
    assert wide.shape == (3, 3, 5, 4)
    np.testing.assert_allclose(_np(wide), _np_pinv(a, atol[:, None], 0.0), atol=1e-10)
    # rtol alone (atol 0), and an int and a float32 atol.
    rtol = torch.tensor([0.1, 0.5, 0.9], dtype=F64)
    np.testing.assert_allclose(
        _np(torch.linalg.pinv(A, rtol=rtol)), _np_pinv(a, 0.0, _np(rtol)), atol=1e-10
    )
    ints = torch.linalg.pinv(A, atol=torch.tensor([0, 1, 2]))
    np.testing.assert_allclose(_np(ints), _np_pinv(a, [0, 1, 2], [eps, 0, 0]), atol=1e-10)
    f32 = torch.linalg.pinv(A, atol=torch.tensor([0.1, 1.0, 5.0]))
    assert f32.dtype == F64
    # Without rtol: eps * max(m, n) where atol is not positive, else 0.
    mixed = torch.tensor([0.0, -1.0, 2.0], dtype=F64)
    np.testing.assert_allclose(
        _np(torch.linalg.pinv(A, atol=mixed)),
        _np_pinv(a, _np(mixed), [eps, eps, 0.0]),
        atol=1e-10,
    )
    # hermitian: the eigenvalues' absolute values against the tolerances.
    h = a[:, :4, :4] + a[:, :4, :4].swapaxes(-1, -2)
    w = np.sort(np.abs(np.linalg.eigvalsh(h)), -1)
    hatol = (w[:, 1] + w[:, 2]) / 2
    herm = torch.linalg.pinv(torch.tensor(h), atol=torch.tensor(hatol), hermitian=True)
    np.testing.assert_allclose(_np(herm), _np_pinv(h, hatol, 0.0), atol=1e-10)


def test_pinv_tensor_tolerances_are_not_differentiated():
    a = torch.tensor(_rand(2, 3, 4), requires_grad=True)
    # Below every singular value: torch's rule is the gradient of the exact pinv.
    atol = torch.tensor([1e-3, 2e-3], dtype=F64)
    out = torch.linalg.pinv(a, atol=atol)
    assert out.grad_fn.name() == "LinalgPinvBackward0"
    assert torch.autograd.gradcheck(lambda x: torch.linalg.pinv(x, atol=atol), (a,))
    with torch.no_grad():
        free = torch.linalg.pinv(a, atol=atol.clone().requires_grad_())
    assert not free.requires_grad


def test_pinv_tensor_tolerances_under_vmap():
    a = torch.tensor(_rand(4, 3, 4, 5))
    atol = torch.tensor([0.5, 1.0, 2.0], dtype=F64)
    vmapped = torch.func.vmap(lambda x: torch.linalg.pinv(x, atol=atol))(a)
    looped = torch.stack([torch.linalg.pinv(x, atol=atol) for x in a])
    np.testing.assert_allclose(_np(vmapped), _np(looped), atol=1e-12)
    both = torch.func.vmap(lambda x, t: torch.linalg.pinv(x, atol=t))(a, atol.expand(4, 3) * 1)
    np.testing.assert_allclose(_np(both), _np(looped), atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_reconstructions(dtype):
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    x = _rand(2, 4, 4, dtype=dtype)
    a = x @ np.conj(np.swapaxes(x, -1, -2)) + 4 * np.eye(4, dtype=dtype)  # Hermitian PD
    ta = torch.tensor(a)
    # A A^-1 = I, batched, against a broadcast identity
    inv = torch.linalg.inv(ta).numpy()
    np.testing.assert_allclose(a @ inv, _eye_like(a), atol=tol)
    # A = L L^H, L lower triangular with a real positive diagonal
    low = torch.linalg.cholesky(ta).numpy()
    np.testing.assert_allclose(low, np.tril(low))
    assert (np.diagonal(low, axis1=-2, axis2=-1).real > 0).all()
    np.testing.assert_allclose(low @ np.conj(np.swapaxes(low, -1, -2)), a, rtol=tol, atol=tol)
    up = torch.linalg.cholesky(ta, upper=True).numpy()
    np.testing.assert_allclose(np.conj(np.swapaxes(up, -1, -2)) @ up, a, rtol=tol, atol=tol)
    # A X = B and X A = B
    b = _rand(2, 4, 3, dtype=dtype, seed=1)
    xs = torch.linalg.solve(ta, torch.tensor(b)).numpy()
    np.testing.assert_allclose(a @ xs, b, atol=tol)
    bt = np.swapaxes(b, -1, -2)
    xr = _np(torch.linalg.solve(ta, torch.tensor(bt), left=False))
    np.testing.assert_allclose(xr @ a, bt, atol=tol)
    # triangular: only the triangle is read
    xt = torch.linalg.solve_triangular(ta, torch.tensor(b), upper=True).numpy()
    np.testing.assert_allclose(np.triu(a) @ xt, b, atol=tol)
    xu = torch.linalg.solve_triangular(ta, torch.tensor(b), upper=False, unitriangular=True)
    unit = np.tril(a, -1) + _eye_like(a)
    np.testing.assert_allclose(unit @ xu.numpy(), b, atol=tol)
    # det = sign * exp(logabsdet), against numpy
    det = torch.linalg.det(ta).numpy()
    sign, logabs = torch.linalg.slogdet(ta)
    np.testing.assert_allclose(det, np.linalg.det(a), rtol=tol)
    np.testing.assert_allclose(sign.numpy() * np.exp(logabs.numpy()), det, rtol=tol)


def test_ex_forms_report_info():
    s, a = NAMES["s"], NAMES["a"]
    inv, info = torch.linalg.inv_ex(torch.stack([a, s]))
    assert info.dtype == torch.int32
    assert info.tolist() == [0, 3]
    low, info = torch.linalg.cholesky_ex(torch.stack([torch.eye(2, dtype=F64), NAMES["np2"]]))
    assert info.tolist() == [0, 2]
    x, info = torch.linalg.solve_ex(torch.stack([a, s]), NAMES["v"])
    assert info.tolist()[0] == 0 and info.tolist()[1] != 0
    assert type(torch.linalg.inv_ex(a)).__name__ == "linalg_inv_ex"
    ex = torch.linalg.inv_ex(a)
    assert ex.inverse is ex[0] and ex.info is ex[1]
    ex = torch.linalg.slogdet(a)
    assert ex.sign is ex[0] and ex.logabsdet is ex[1]
    ex = torch.slogdet(a)
    assert ex.sign is ex[0] and ex.logabsdet is ex[1]
    ex = torch.linalg.cholesky_ex(a)
    assert ex.L is ex[0] and ex.info is ex[1]
    ex = torch.linalg.solve_ex(a, NAMES["v"])
    assert ex.result is ex[0] and ex.info is ex[1]
    ex = torch.linalg.qr(a)
    assert ex.Q is ex[0] and ex.R is ex[1]
    ex = torch.linalg.eigh(a)
    assert ex.eigenvalues is ex[0] and ex.eigenvectors is ex[1]
    ex = torch.linalg.svd(a)
    assert ex.U is ex[0] and ex.S is ex[1] and ex.Vh is ex[2]


def test_singular_values_of_det_and_slogdet():
    # a zero column: an exactly zero pivot whatever the elimination order
    s = torch.tensor([[1.0, 2.0, 0.0], [2.0, 5.0, 0.0], [1.0, 3.0, 0.0]], dtype=F64)
    assert torch.linalg.det(s).item() == 0.0
    sign, logabs = torch.linalg.slogdet(s)
    assert sign.item() == 0.0 and logabs.item() == -np.inf
    assert torch.logdet(s).item() == -np.inf
    assert np.isnan(torch.logdet(-torch.eye(3, dtype=F64)).item())


def test_det_gradient_at_a_singular_matrix_is_the_cofactor_matrix():
    s = torch.tensor(_S, dtype=F64, requires_grad=True)
    (g,) = torch.autograd.grad(torch.linalg.det(s), s)
    m = np.array(_S)
    cof = np.array([
        [(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(m, i, 0), j, 1)) for j in range(3)]
        for i in range(3)
    ])
    np.testing.assert_allclose(g.numpy(), cof, atol=1e-12)
    assert torch.autograd.gradcheck(torch.linalg.det, (s,))
    assert torch.autograd.gradgradcheck(torch.linalg.det, (s,))


def _singular(dtype, seed=0):
    """Random 3x3 with its last row equal to its first: an exactly zero LU pivot."""
    a = _rand(3, 3, dtype=dtype, seed=seed)
    a[-1] = a[0]
    return a


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_det_rules_at_singular_matrices(dtype):
    # torch 2.15 fails these (its det jvp solves with the singular matrix, its complex
    # singular gradient is off): the cofactor matrix is smooth, and ours uses it.
    good = _rand(3, 3, dtype=dtype, seed=3) + 3 * np.eye(3)
    for a in (_singular(dtype), np.stack([good, _singular(dtype, 1)])):
        x = torch.tensor(a, requires_grad=True)
        assert torch.autograd.gradcheck(
            torch.linalg.det, (x,), check_forward_ad=True, check_batched_grad=True,
            check_batched_forward_grad=True,
        )
        assert torch.autograd.gradgradcheck(
            torch.linalg.det, (x,), check_batched_grad=True, check_fwd_over_rev=True
        )


def test_solve_broadcasts_batch_dims_of_different_ranks():
    # (torch's vmap fails on these; the values and gradients do not)
    a = torch.tensor(_rand(2, 1, 3, 3, seed=4) + 3 * np.eye(3), requires_grad=True)
    b = torch.tensor(_rand(4, 3, 2, seed=5), requires_grad=True)
    x = torch.linalg.solve(a, b)
    assert tuple(x.shape) == (2, 4, 3, 2)
    np.testing.assert_allclose(_np(a) @ _np(x), np.broadcast_to(_np(b), (2, 4, 3, 2)),
                               atol=1e-12)
    assert tuple(torch.linalg.solve_ex(a, b).info.shape) == (2, 1)
    assert torch.autograd.gradcheck(lambda a, b: torch.linalg.solve(a, b), (a, b),
                                    check_forward_ad=True)
    xs = torch.func.vmap(torch.linalg.solve)(a, b.expand(2, 4, 3, 2))
    np.testing.assert_allclose(_np(xs), _np(x), atol=1e-12)


def test_solve_left_false_complex():
    a = torch.tensor(_rand(3, 3, dtype=np.complex128, seed=6) + 3 * np.eye(3),
                     requires_grad=True)
    b = torch.tensor(_rand(2, 3, dtype=np.complex128, seed=7), requires_grad=True)
    x = torch.linalg.solve(a, b, left=False)
    np.testing.assert_allclose(_np(x) @ _np(a), _np(b), atol=1e-12)
    assert torch.autograd.gradcheck(lambda a, b: torch.linalg.solve(a, b, left=False), (a, b),
                                    check_forward_ad=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_spectral_reconstructions(dtype):
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    a = _rand(2, 5, 3, dtype=dtype, seed=8)
    ta = torch.tensor(a)
    # QR: numpy's (LAPACK's) factors exactly, R's diagonal real
    for mode in ("reduced", "complete"):
        q, r = torch.linalg.qr(ta, mode=mode)
        nq, nr = np.linalg.qr(a, mode)
        np.testing.assert_allclose(q.numpy(), nq, atol=tol)
        np.testing.assert_allclose(r.numpy(), nr, atol=tol)
    q, r = torch.linalg.qr(torch.tensor(np.swapaxes(a, -1, -2).copy()))
    np.testing.assert_allclose(q.numpy() @ r.numpy(), np.swapaxes(a, -1, -2), atol=tol)
    assert np.all(np.diagonal(r.numpy(), axis1=-2, axis2=-1).imag == 0)
    _, r_only = torch.linalg.qr(ta, mode="r")
    np.testing.assert_allclose(r_only.numpy(), np.linalg.qr(a, "r"), atol=tol)
    # eigh: V diag(w) Vᴴ = A, eigenvalues ascending and numpy's
    h = a[..., :3, :] + np.conj(np.swapaxes(a[..., :3, :], -1, -2))
    w, v = torch.linalg.eigh(torch.tensor(h))
    w, v = w.numpy(), v.numpy()
    assert w.dtype == np.abs(h).dtype
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h), atol=tol)
    assert np.all(np.diff(w, axis=-1) >= 0)
    np.testing.assert_allclose((v * w[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2)), h,
                               atol=tol * 10)
    np.testing.assert_allclose(np.conj(np.swapaxes(v, -1, -2)) @ v,
                               np.broadcast_to(np.eye(3), h.shape), atol=tol)
    # svd: U diag(S) Vh = A, singular values descending and numpy's
    for full in (True, False):
        u, s, vh = torch.linalg.svd(ta, full_matrices=full)
        u, s, vh = u.numpy(), s.numpy(), vh.numpy()
        np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), atol=tol)
        assert np.all(np.diff(s, axis=-1) <= 0)
        np.testing.assert_allclose((u[..., :, :3] * s[..., None, :]) @ vh[..., :3, :], a,
                                   atol=tol * 10)
        assert u.shape == ((2, 5, 5) if full else (2, 5, 3)) and vh.shape == (2, 3, 3)
    np.testing.assert_allclose(torch.linalg.svdvals(ta).numpy(),
                               np.linalg.svd(a, compute_uv=False), atol=tol)


def test_qr_backward_errors():
    a = torch.tensor(_rand(4, 3, seed=9), requires_grad=True)
    _, r = torch.linalg.qr(a, mode="r")
    assert r.grad_fn.name() == "LinalgQrBackward0"
    with pytest.raises(RuntimeError) as info:
        r.sum().backward()
    assert str(info.value) == (
        "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
        "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
        "linalg.qr."
    )
    q, r = torch.linalg.qr(a, mode="complete")
    with pytest.raises(RuntimeError) as info:
        (q.sum() + r.sum()).backward()
    assert str(info.value) == (
        "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
    )
    q, r = torch.linalg.qr(a.detach().mT.clone().requires_grad_(), mode="complete")
    (q.sum() + r.sum()).backward()  # m <= n: differentiable


def test_gauge_errors():
    c = torch.tensor(_rand(3, 3, dtype=np.complex128, seed=10), requires_grad=True)
    _, v = torch.linalg.eigh(c + c.mH)
    with pytest.raises(RuntimeError) as info:
        torch.autograd.grad(v.sum().abs(), c)
    assert str(info.value) == (
        "linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
        "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
        "so it is ill-defined."
    )
    u, _, _ = torch.linalg.svd(c)
    with pytest.raises(RuntimeError) as info:
        torch.autograd.grad(u.sum().abs(), c)
    assert str(info.value) == (
        "svd_backward: The singular vectors in the complex case are specified up to "
        "multiplication by e^{i phi}. The specified loss function depends on this phase "
        "term, making it ill-defined."
    )
    # a gauge-invariant loss is fine
    u, s, vh = torch.linalg.svd(c)
    torch.autograd.grad(((u * s.unsqueeze(-2)) @ vh).abs().sum(), c)


def test_huge_square_factors_fail_before_allocating():
    # a full SVD / complete QR of a (300000, 1) matrix needs a 300000² float32 U or Q (360 GB)
    tall = torch.zeros(300000, 1)
    with pytest.raises(RuntimeError):
        torch.linalg.svd(tall)
    with pytest.raises(RuntimeError):
        torch.linalg.qr(tall, mode="complete")
    assert tuple(torch.linalg.qr(tall).Q.shape) == (300000, 1)


def test_grad_fn_names():
    a = NAMES["a"].clone().requires_grad_()
    assert torch.linalg.inv(a).grad_fn.name() == "LinalgInvExBackward0"
    assert torch.inverse(a).grad_fn.name() == "LinalgInvExBackward0"
    assert torch.det(a).grad_fn.name() == "LinalgDetBackward0"
    assert torch.slogdet(a)[0].grad_fn.name() == "LinalgSlogdetBackward0"
    assert torch.logdet(a).grad_fn.name() == "WhereBackward0"
    assert torch.linalg.solve(a, NAMES["v"]).grad_fn.name() == "LinalgSolveExBackward0"
    assert torch.linalg.cholesky(a).grad_fn.name() == "LinalgCholeskyExBackward0"
    t = torch.linalg.solve_triangular(a, torch.ones(3, 2, dtype=F64), upper=True)
    assert t.grad_fn.name() == "LinalgSolveTriangularBackward0"
    assert torch.linalg.inv_ex(a).info.requires_grad is False
    assert torch.linalg.qr(a).Q.grad_fn.name() == "LinalgQrBackward0"
    assert torch.linalg.eigh(a).eigenvalues.grad_fn.name() == "LinalgEighBackward0"
    assert torch.linalg.eigvalsh(a).grad_fn.name() == "LinalgEighBackward0"
    assert torch.linalg.svd(a).U.grad_fn.name() == "LinalgSvdBackward0"
    assert torch.linalg.svdvals(a).grad_fn.name() == "LinalgSvdBackward0"
    assert torch.linalg.pinv(a).grad_fn.name() == "LinalgPinvBackward0"
    assert torch.linalg.matrix_norm(a, "nuc").grad_fn.name() == "SumBackward1"
    assert torch.linalg.matrix_norm(a, 2).grad_fn.name() == "AmaxBackward0"
    assert torch.linalg.norm(a, -2).grad_fn.name() == "AminBackward0"


if __name__ == "__main__":
    run_on_torch(torch, NAMES, CASES)
