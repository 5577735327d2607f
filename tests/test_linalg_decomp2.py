"""Issue 11, linalg 2 (src/ops/decomp/cholesky_solve.rs, matrix_exp.rs, lstsq.rs):
cholesky_solve, cholesky_inverse, matrix_exp, lstsq, eig / eigvals and householder_product /
orgqr. Errors (torch's classes,
messages and order of checks; a zero on a factor's diagonal is
torch.linalg.LinAlgError naming the batch element), the broadcasting of cholesky_solve's
batch dims, matrix_exp against exact references (the eigendecomposition of a symmetric
matrix, a nilpotent matrix: a finite series, a diagonal one, a float64 Taylor series for
small norms), lstsq's outputs per driver against numpy's SVD, and eig's LAPACK
conventions (unit columns, complex ones with a real largest component), and
householder_product of numpy's geqrf reflectors (qr mode='raw') against numpy's Q.

The error table is checked on torch 2.15 by running this file with torch's Python
(`/root/torchvenv/bin/python tests/test_linalg_decomp2.py`: `ferrograd` is torch there).
Names: l (3, 3) float64 lower-triangular factor, b (3, 2) float64, v (3,) float64,
r (3, 4) float64, t (5, 3) float64, c (5, 2) float64, f (3, 3) float32, i (3, 3) int64,
h (3, 3) float16, z a (3, 3, 3) float64 batch of identities whose element 1 has a zero
at (3, 3).
"""

import math
import sys

if __name__ == "__main__":
    import torch

    sys.modules["ferrograd"] = torch

import ferrograd as torch  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from error_table import check, run_on_torch  # noqa: E402
from test_linalg_decomp import _np, _rand  # noqa: E402

F64 = torch.float64
_Z = np.stack([np.eye(3)] * 3)
_Z[1, 2, 2] = 0.0
NAMES = {
    "torch": torch,
    "l": torch.tensor([[2.0, 0.0, 0.0], [0.5, 1.5, 0.0], [0.3, -0.2, 1.2]], dtype=F64),
    "b": torch.ones(3, 2, dtype=F64),
    "v": torch.ones(3, dtype=F64),
    "r": torch.ones(3, 4, dtype=F64),
    "t": torch.ones(5, 3, dtype=F64),
    "c": torch.ones(5, 2, dtype=F64),
    "f": torch.eye(3),
    "i": torch.ones(3, 3, dtype=torch.int64),
    "h": torch.ones(3, 3, dtype=torch.float16),
    "z": torch.tensor(_Z, dtype=F64),
}

SINGULAR = (
    "The diagonal element 3 is zero, the inversion could not be completed because the "
    "input matrix is singular."
)

# (call, exception class, message); a message ending in "..." is compared as a prefix.
CASES = [
    # cholesky_solve(B, L): ranks, dtypes, squareness, sizes, batch broadcast, dtype support
    ("torch.cholesky_solve(v, l)", RuntimeError,
     "b should have at least 2 dimensions, but has 1 dimensions instead"),
    ("torch.cholesky_solve(b, v)", RuntimeError,
     "u should have at least 2 dimensions, but has 1 dimensions instead"),
    ("torch.cholesky_solve(b, f)", RuntimeError,
     "Expected b and A to have the same dtype, but found b of type Double and A of type "
     "Float instead."),
    ("torch.cholesky_solve(b, r)", RuntimeError,
     "A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("torch.cholesky_solve(b.T, l)", RuntimeError,
     "Incompatible matrix sizes for cholesky_solve: each A matrix is 3 by 3 but each b "
     "matrix is 2 by 3"),
    ("torch.cholesky_solve(torch.ones(2, 3, 2, dtype=torch.float64), z)", RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
     "dimension 0"),
    ("torch.cholesky_solve(i, i)", NotImplementedError,
     "\"cholesky_solve_cpu\" not implemented for 'Long'"),
    ("torch.cholesky_solve(h, h)", NotImplementedError,
     "\"cholesky_solve_cpu\" not implemented for 'Half'"),
    ("torch.cholesky_solve(1, l)", TypeError,
     "cholesky_solve(): argument 'input' (position 1) must be Tensor, not int"),
    ("torch.cholesky_solve(b, 1)", TypeError,
     "cholesky_solve(): argument 'input2' (position 2) must be Tensor, not int"),
    ("b.cholesky_solve(1)", TypeError,
     "cholesky_solve(): argument 'input2' (position 1) must be Tensor, not int"),
    # cholesky_inverse
    ("torch.cholesky_inverse(v)", RuntimeError,
     "cholesky_inverse: The input tensor A must have at least 2 dimensions."),
    ("torch.cholesky_inverse(r)", RuntimeError,
     "cholesky_inverse: A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("torch.cholesky_inverse(i)", NotImplementedError,
     "\"cholesky_inverse_out_cpu\" not implemented for 'Long'"),
    ("torch.cholesky_inverse(h)", NotImplementedError,
     "\"cholesky_inverse_out_cpu\" not implemented for 'Half'"),
    ("torch.cholesky_inverse(z[1])", torch.linalg.LinAlgError, f"cholesky_inverse: {SINGULAR}"),
    ("torch.cholesky_inverse(z)", torch.linalg.LinAlgError,
     f"cholesky_inverse: (Batch element 1): {SINGULAR}"),
    ("z.cholesky_inverse(upper=True)", torch.linalg.LinAlgError,
     f"cholesky_inverse: (Batch element 1): {SINGULAR}"),
    ("torch.cholesky_inverse(1)", TypeError,
     "cholesky_inverse(): argument 'input' (position 1) must be Tensor, not int"),
    # matrix_exp
    ("torch.linalg.matrix_exp(v)", RuntimeError,
     "linalg.matrix_exp: The input tensor A must have at least 2 dimensions."),
    ("torch.linalg.matrix_exp(r)", RuntimeError,
     "linalg.matrix_exp: A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("torch.matrix_exp(r)", RuntimeError,
     "linalg.matrix_exp: A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("r.matrix_exp()", RuntimeError,
     "linalg.matrix_exp: A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("torch.linalg.matrix_exp(i)", NotImplementedError,
     "linalg.matrix_exp: Expected a floating point or complex tensor as input. Got Long"),
    ("torch.linalg.matrix_exp(1)", TypeError,
     "linalg_matrix_exp(): argument 'input' (position 1) must be Tensor, not int"),
    ("torch.matrix_exp(1)", TypeError,
     "matrix_exp(): argument 'input' (position 1) must be Tensor, not int"),
    # lstsq
    ("torch.linalg.lstsq(v, c.float())", RuntimeError,
     "torch.linalg.lstsq: input must have at least 2 dimensions."),
    ("torch.linalg.lstsq(t, c.float())", RuntimeError,
     "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
     "dtype Double and other's dtype Float"),
    ("torch.linalg.lstsq(t, c.expand(3, 5, 2))", RuntimeError,
     "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
     "(input.dim() - other.dim()) <= 1"),
    ("torch.linalg.lstsq(t, c[:3])", RuntimeError,
     "torch.linalg.lstsq: input.size(-2) should match other.size(-2)"),
    ("torch.linalg.lstsq(t, v)", RuntimeError,
     "torch.linalg.lstsq: input.size(-2) should match other.size(-1)"),
    ("torch.linalg.lstsq(t.expand(2, 5, 3), c)", RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (5) at non-singleton "
     "dimension 0"),
    ("torch.linalg.lstsq(t.expand(2, 5, 3), c.expand(3, 5, 2))", RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
     "dimension 0"),
    ("torch.linalg.lstsq(t, c, driver='foo')", RuntimeError,
     "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"),
    ("torch.linalg.lstsq(t.long(), c.long())", RuntimeError,
     "This function doesn't handle types other than float and double"),
    ("torch.linalg.lstsq(t.half(), c.half())", RuntimeError,
     "This function doesn't handle types other than float and double"),
    ("torch.linalg.lstsq(1, c)", TypeError,
     "linalg_lstsq(): argument 'input' (position 1) must be Tensor, not int"),
    ("torch.linalg.lstsq(t, 1)", TypeError,
     "linalg_lstsq(): argument 'b' (position 2) must be Tensor, not int"),
    ("torch.linalg.lstsq(t, c, 'gels')", TypeError,
     "linalg_lstsq(): argument 'rcond' (position 3) must be float, not str"),
    # eig, eigvals
    ("torch.linalg.eig(v)", RuntimeError,
     "linalg.eig: The input tensor A must have at least 2 dimensions."),
    ("torch.linalg.eig(r)", RuntimeError,
     "linalg.eig: A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("torch.linalg.eigvals(v)", RuntimeError,
     "linalg.eigvals: The input tensor A must have at least 2 dimensions."),
    ("torch.linalg.eig(i)", RuntimeError, "Unknown Complex ScalarType for Long"),
    ("torch.linalg.eigvals(i)", RuntimeError, "Unknown Complex ScalarType for Long"),
    ("torch.linalg.eig(h)", NotImplementedError,
     "\"linalg_eig_out_cpu\" not implemented for 'Half'"),
    ("torch.linalg.eig(torch.full((2, 2), float('nan')))", RuntimeError,
     "torch.linalg.eig: input tensor should not contain infs or NaNs."),
    ("torch.linalg.eig(torch.stack([l, l * float('inf')]))", RuntimeError,
     "torch.linalg.eig: input tensor should not contain infs or NaNs."),
    ("torch.linalg.eig(1)", TypeError,
     "linalg_eig(): argument 'input' (position 1) must be Tensor, not int"),
    ("torch.linalg.eigvals(1)", TypeError,
     "linalg_eigvals(): argument 'input' (position 1) must be Tensor, not int"),
    ("torch.linalg.eig(torch.tensor([[0.0, -2.0], [2.0, 1.0]], requires_grad=True))[1]"
     ".real.sum().backward()", RuntimeError,
     "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
     "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
     "so it is ill-defined."),
    # householder_product, orgqr
    ("torch.linalg.householder_product(v, v[:2])", RuntimeError,
     "torch.linalg.householder_product: input must have at least 2 dimensions."),
    ("torch.linalg.householder_product(t.T, v[:2])", RuntimeError,
     "torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
     "input.shape[-1]"),
    ("torch.linalg.householder_product(t, torch.ones(4, dtype=torch.float64))", RuntimeError,
     "torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
     "tau.shape[-1]"),
    ("torch.linalg.householder_product(t, v[None, :2])", RuntimeError,
     "torch.linalg.householder_product: Expected tau to have one dimension less than input, "
     "but got tau.ndim equal to 2 and input.ndim is equal to 2"),
    ("torch.linalg.householder_product(t.expand(2, 5, 3), v[:2].expand(3, 2))", RuntimeError,
     "torch.linalg.householder_product: Expected batch dimensions of tau to be equal to "
     "input.shape[:-2], but got [3]"),
    ("torch.linalg.householder_product(t, v[:2].float())", RuntimeError,
     "torch.linalg.householder_product: tau dtype Float does not match input dtype Double"),
    ("torch.linalg.householder_product(t.long(), v[:2].long())", NotImplementedError,
     "\"orgqr_cpu\" not implemented for 'Long'"),
    ("torch.linalg.householder_product(t.half(), v[:2].half())", NotImplementedError,
     "\"orgqr_cpu\" not implemented for 'Half'"),
    ("torch.linalg.householder_product(t, v[0])", IndexError,
     "Dimension specified as -1 but tensor has no dimensions"),
    ("torch.linalg.householder_product(1, v)", TypeError,
     "linalg_householder_product(): argument 'input' (position 1) must be Tensor, not int"),
    ("torch.linalg.householder_product(t, 1)", TypeError,
     "linalg_householder_product(): argument 'tau' (position 2) must be Tensor, not int"),
    ("torch.orgqr(1, v)", TypeError,
     "orgqr(): argument 'input' (position 1) must be Tensor, not int"),
    ("t.orgqr(1)", TypeError,
     "orgqr(): argument 'input2' (position 1) must be Tensor, not int"),
]


@pytest.mark.parametrize("call, kind, message", CASES, ids=[c[0] for c in CASES])
def test_error(call, kind, message):
    check(NAMES, call, kind, message)


def _factor(dtype, *shape, seed=0, upper=False):
    """A Cholesky factor (real positive diagonal) of a well-conditioned matrix."""
    x = _rand(*shape, dtype=dtype, seed=seed)
    a = x @ np.conj(np.swapaxes(x, -1, -2)) + shape[-1] * np.eye(shape[-1])
    low = np.linalg.cholesky(a).astype(dtype)
    return (np.conj(np.swapaxes(low, -1, -2)) if upper else low), a


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse_reconstruct(dtype, upper):
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    f, a = _factor(dtype, 2, 4, 4, upper=upper)
    b = _rand(2, 4, 3, dtype=dtype, seed=1)
    x = torch.cholesky_solve(torch.tensor(b), torch.tensor(f), upper=upper)
    np.testing.assert_allclose(a @ _np(x), b, rtol=tol, atol=tol)
    inv = torch.cholesky_inverse(torch.tensor(f), upper=upper)
    np.testing.assert_allclose(a @ _np(inv), np.broadcast_to(np.eye(4), a.shape), atol=tol)


def test_cholesky_solve_broadcasts_batch_dims_of_different_ranks():
    f, a = _factor(np.float64, 3, 3, 3)
    b = _rand(2, 1, 3, 2, seed=2)
    x = torch.cholesky_solve(torch.tensor(b), torch.tensor(f))
    assert tuple(x.shape) == (2, 3, 3, 2)
    np.testing.assert_allclose(_np(x), np.linalg.solve(a, b), rtol=1e-10, atol=1e-12)
    # the Tensor method, and the factor broadcast against B's batch
    x = torch.tensor(b[0, 0]).cholesky_solve(torch.tensor(f))
    np.testing.assert_allclose(_np(x), np.linalg.solve(a, b[0, 0]), rtol=1e-10)


def test_cholesky_ops_read_one_triangle():
    f, _ = _factor(np.float64, 3, 3)
    noisy = f + np.triu(_rand(3, 3, seed=3), 1)  # the upper part is never read
    b = torch.tensor(_rand(3, 2, seed=4))
    np.testing.assert_allclose(
        _np(torch.cholesky_solve(b, torch.tensor(noisy))),
        _np(torch.cholesky_solve(b, torch.tensor(f))),
    )
    np.testing.assert_allclose(
        _np(torch.cholesky_inverse(torch.tensor(noisy))),
        _np(torch.cholesky_inverse(torch.tensor(f))),
    )


def test_cholesky_inverse_forward_ad_matches_finite_differences():
    # torch 2.15's own forward AD of cholesky_inverse is wrong (run_opdb_on_torch's
    # TORCH_GAPS); this pins the right tangent, -X dA X with dA = dL Lᴴ + L dLᴴ.
    import ferrograd.autograd.forward_ad as fwAD

    f, _ = _factor(np.float64, 3, 3, seed=5)
    t = np.tril(_rand(3, 3, seed=6))
    eps = 1e-6
    plus = _np(torch.cholesky_inverse(torch.tensor(f + eps * t)))
    minus = _np(torch.cholesky_inverse(torch.tensor(f - eps * t)))
    with fwAD.dual_level():
        dual = fwAD.make_dual(torch.tensor(f), torch.tensor(t))
        tangent = fwAD.unpack_dual(torch.cholesky_inverse(dual)).tangent
    np.testing.assert_allclose(_np(tangent), (plus - minus) / (2 * eps), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matrix_exp_of_a_symmetric_matrix_by_its_eigendecomposition(dtype):
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for scale in (0.1, 1.0, 5.0):
        x = _rand(2, 4, 4, seed=7) * scale
        s = (x + np.swapaxes(x, -1, -2)).astype(dtype)
        w, v = np.linalg.eigh(s.astype(np.float64))
        ref = (v * np.exp(w)[..., None, :]) @ np.swapaxes(v, -1, -2)
        got = _np(torch.linalg.matrix_exp(torch.tensor(s)))
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * np.abs(ref).max())


def test_matrix_exp_of_a_nilpotent_matrix_is_its_finite_series():
    n = np.triu(_rand(5, 5, seed=8) * 40, 1)  # large entries: scaled and squared back
    ref = sum(np.linalg.matrix_power(n, k) / math.factorial(k) for k in range(5))
    got = _np(torch.matrix_exp(torch.tensor(n)))
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_matrix_exp_of_a_diagonal_and_a_small_complex_matrix(dtype):
    tol = 1e-5 if dtype == np.complex64 else 1e-13
    d = _rand(3, dtype=dtype, seed=9)
    got = _np(torch.tensor(np.diag(d)).matrix_exp())
    np.testing.assert_allclose(got, np.diag(np.exp(d)), rtol=tol, atol=tol)
    a = _rand(3, 3, dtype=np.complex128, seed=10) * 0.05
    series = sum(np.linalg.matrix_power(a, k) / math.factorial(k) for k in range(20))
    got = _np(torch.linalg.matrix_exp(torch.tensor(a.astype(dtype))))
    np.testing.assert_allclose(got, series, rtol=tol, atol=tol)


def test_matrix_exp_identities():
    # exp(A) exp(-A) = I, and exp(A + B) = exp(A) exp(B) for commuting A, B = 2A
    a = torch.tensor(_rand(3, 3, seed=11) * 2)
    e, e_neg = torch.linalg.matrix_exp(a), torch.linalg.matrix_exp(-a)
    np.testing.assert_allclose(_np(e @ e_neg), np.eye(3), atol=1e-11)
    np.testing.assert_allclose(
        _np(torch.linalg.matrix_exp(3 * a)), _np(e @ torch.linalg.matrix_exp(2 * a)), rtol=1e-10
    )


def test_matrix_exp_half_precision_and_non_finite():
    # float16 is computed in float32 and rounded (torch 2.15's own float16 / bfloat16
    # matrix_exp overflows to inf even for this small matrix: not mirrored)
    a = _rand(3, 3, seed=12) * 0.5
    got = torch.linalg.matrix_exp(torch.tensor(a).to(torch.float16))
    assert got.dtype == torch.float16
    ref = _np(torch.linalg.matrix_exp(torch.tensor(a)))
    np.testing.assert_allclose(_np(got.to(torch.float64)), ref, rtol=1e-2, atol=1e-2)
    nan = torch.linalg.matrix_exp(torch.full((2, 2), float("nan")))
    assert bool(torch.isnan(nan).all())


def _lstsq_ref(a, b, rcond=None):
    """Minimum-norm solution, rank and singular values from numpy's SVD."""
    s = np.linalg.svd(a, compute_uv=False)
    rcond = np.finfo(np.abs(a).dtype).eps * max(a.shape[-2:]) if rcond is None else rcond
    return np.linalg.pinv(a, rcond=rcond) @ b, (s > rcond * s[..., :1]).sum(-1), s


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_lstsq_outputs_per_driver(dtype):
    a, b = _rand(2, 6, 4, dtype=dtype, seed=13), _rand(2, 6, 3, dtype=dtype, seed=14)
    x_ref, rank_ref, s_ref = _lstsq_ref(a, b)
    res_ref = (np.abs(a @ x_ref - b) ** 2).sum(-2)
    for driver in (None, "gelsy", "gels", "gelsd", "gelss"):
        out = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
        np.testing.assert_allclose(_np(out.solution), x_ref, rtol=1e-10, atol=1e-12)
        if driver in (None, "gelsy"):
            assert tuple(out.residuals.shape) == (0,)
        else:
            np.testing.assert_allclose(_np(out.residuals), res_ref, rtol=1e-10)
        if driver == "gels":
            assert tuple(out.rank.shape) == (0,)
        else:
            assert out.rank.tolist() == rank_ref.tolist()
        if driver in ("gelsd", "gelss"):
            np.testing.assert_allclose(_np(out.singular_values), s_ref, rtol=1e-10)
        else:
            assert tuple(out.singular_values.shape) == (0,)
        assert out.rank.dtype == torch.int64
        assert out.residuals.dtype == out.singular_values.dtype == F64


def test_lstsq_rank_deficient_and_wide():
    # rank 2 of 3: the minimum-norm solution, no residuals (not every matrix full rank)
    a = _rand(6, 2, seed=15) @ _rand(2, 3, seed=16)
    b = _rand(6, 2, seed=17)
    out = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), rcond=1e-10, driver="gelsd")
    x_ref, rank_ref, _ = _lstsq_ref(a, b, 1e-10)
    assert int(out.rank) == int(rank_ref) == 2
    np.testing.assert_allclose(_np(out.solution), x_ref, rtol=1e-8, atol=1e-10)
    assert tuple(out.residuals.shape) == (0,)
    # wide: the exact solution of least norm
    a, b = _rand(3, 5, seed=18), _rand(3, 2, seed=19)
    out = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver="gels")
    np.testing.assert_allclose(a @ _np(out.solution), b, atol=1e-12)
    np.testing.assert_allclose(_np(out.solution), np.linalg.pinv(a) @ b, atol=1e-12)


def test_lstsq_vector_b_and_its_gradients():
    a = torch.tensor(_rand(5, 3, seed=20)).requires_grad_()
    b = torch.tensor(_rand(5, seed=21)).requires_grad_()
    out = torch.linalg.lstsq(a, b, driver="gels")
    assert tuple(out.solution.shape) == (3,) and tuple(out.residuals.shape) == (1,)
    np.testing.assert_allclose(_np(out.solution), np.linalg.lstsq(_np(a), _np(b))[0])
    assert out.solution.grad_fn.name() == "LinalgLstsqBackward0"
    assert not out.singular_values.requires_grad
    assert torch.autograd.gradcheck(
        lambda a, b: tuple(torch.linalg.lstsq(a, b, driver="gels"))[:2], (a, b)
    )
    # batch of vectors: B (.., m) against A (.., m, n)
    a2 = torch.tensor(_rand(2, 5, 3, seed=22))
    b2 = torch.tensor(_rand(2, 5, seed=23))
    x = torch.linalg.lstsq(a2, b2).solution
    ref = np.linalg.pinv(_np(a2)) @ _np(b2)[..., None]
    np.testing.assert_allclose(_np(x), ref[..., 0], rtol=1e-10)


def test_lstsq_under_vmap_gives_empty_outputs_a_batch_dim():
    a, b = torch.tensor(_rand(3, 5, 2, seed=24)), torch.tensor(_rand(3, 5, 2, seed=25))
    out = torch.vmap(lambda a, b: tuple(torch.linalg.lstsq(a, b)))(a, b)
    assert [tuple(t.shape) for t in out] == [(3, 2, 2), (3, 0), (3,), (3, 0)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_eig_reconstructs_and_is_normalized_as_lapack(dtype):
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-11
    a = _rand(2, 5, 5, dtype=dtype, seed=26)
    w, v = torch.linalg.eig(torch.tensor(a))
    cplx = np.result_type(dtype, np.complex64)
    assert w.dtype == v.dtype == getattr(torch, np.dtype(cplx).name)
    w, v = _np(w), _np(v)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol * 10)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, rtol=tol)
    # the largest component of a complex eigenvector is real (positive for complex A)
    big = np.take_along_axis(v, np.abs(v).argmax(-2)[..., None, :], -2)[..., 0, :]
    complex_vector = (np.abs(w.imag) > 0) | (np.dtype(dtype).kind == "c")
    np.testing.assert_allclose(np.where(complex_vector, big.imag, 0), 0, atol=tol)
    if np.dtype(dtype).kind == "c":
        assert np.all(big.real > 0)
    # the eigenvalues as numpy's, as sets
    ref = np.linalg.eigvals(a.astype(np.complex128))
    key = lambda x: np.sort_complex(np.round(x, 3))  # noqa: E731
    np.testing.assert_allclose(key(w), key(ref), atol=2e-3)
    np.testing.assert_allclose(
        _np(torch.linalg.eigvals(torch.tensor(a))), w, rtol=tol, atol=tol
    )


def test_eig_of_a_real_matrix_pairs_conjugates():
    a = np.array([[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]])
    w, v = torch.linalg.eig(torch.tensor(a))
    w, v = _np(w), _np(v)
    np.testing.assert_allclose(np.sort_complex(w), [-2j, 2j, 3], atol=1e-12)
    # a real matrix's complex pairs come with conjugate eigenvectors (geev's pairing)
    a = _rand(6, 6, seed=30)
    w, v = (_np(t) for t in torch.linalg.eig(torch.tensor(a)))
    for j in np.flatnonzero(w.imag > 0):
        partner = np.flatnonzero(np.isclose(w, np.conj(w[j]), atol=1e-10))
        assert len(partner) == 1
        np.testing.assert_allclose(v[:, partner[0]], np.conj(v[:, j]), atol=1e-12)
    # gauge-invariant backward: the eigenvalues' sum is the trace
    x = torch.tensor(_rand(4, 4, seed=27)).requires_grad_()
    torch.linalg.eigvals(x).real.sum().backward()
    np.testing.assert_allclose(_np(x.grad), np.eye(4), atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_householder_product_of_lapack_reflectors_is_q(dtype):
    tol = 1e-5 if dtype in (np.float32, np.complex64) else 1e-12
    a = _rand(6, 4, dtype=np.complex128 if np.dtype(dtype).kind == "c" else np.float64,
              seed=28)
    h, tau = np.linalg.qr(a, mode="raw")  # geqrf's reflectors (transposed) and tau
    q = np.linalg.qr(a)[0]
    got = torch.linalg.householder_product(
        torch.tensor(h.T.astype(dtype)), torch.tensor(tau.astype(dtype))
    )
    np.testing.assert_allclose(_np(got), q, rtol=tol, atol=tol)
    np.testing.assert_allclose(_np(torch.orgqr(torch.tensor(h.T), torch.tensor(tau))), q.astype(
        np.complex128 if np.dtype(dtype).kind == "c" else np.float64), atol=1e-12)
    # only the part below the diagonal is read
    noisy = h.T + np.triu(_rand(6, 4, seed=29))
    np.testing.assert_allclose(
        _np(torch.tensor(noisy).orgqr(torch.tensor(tau))), _np(torch.orgqr(
            torch.tensor(h.T), torch.tensor(tau))), atol=1e-12)


def test_grad_fn_names():
    l = NAMES["l"].clone().requires_grad_()
    b = NAMES["b"].clone().requires_grad_()
    assert torch.cholesky_solve(b, l).grad_fn.name() == "CholeskySolveBackward0"
    assert torch.cholesky_inverse(l).grad_fn.name() == "CholeskyInverseBackward0"
    assert torch.linalg.matrix_exp(l).grad_fn.name() == "LinalgMatrixExpBackward0"
    assert torch.matrix_exp(l).grad_fn.name() == "LinalgMatrixExpBackward0"
    assert l.matrix_exp().grad_fn.name() == "LinalgMatrixExpBackward0"
    t = NAMES["t"].clone().requires_grad_()
    out = torch.linalg.lstsq(t, NAMES["c"], driver="gelsd")
    assert out.solution.grad_fn.name() == "LinalgLstsqBackward0"
    assert out.residuals.grad_fn.name() == "LinalgLstsqBackward0"
    assert not out.rank.requires_grad and not out.singular_values.requires_grad
    w, v = torch.linalg.eig(t[:3])
    assert w.grad_fn.name() == v.grad_fn.name() == "LinalgEigBackward0"
    assert torch.linalg.eigvals(t[:3]).grad_fn.name() == "LinalgEigBackward0"
    tau = torch.ones(2, dtype=F64)
    name = "LinalgHouseholderProductBackward0"
    assert torch.linalg.householder_product(t, tau).grad_fn.name() == name
    assert torch.orgqr(t, tau).grad_fn.name() == t.orgqr(tau).grad_fn.name() == name


if __name__ == "__main__":
    run_on_torch(torch, NAMES, CASES)
