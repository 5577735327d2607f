"""Issue 11, decomposition speed (src/kernels/cpu/decomp.rs, src/ops/decomp/lstsq.rs):
lstsq's gelsy / gels path through the column-pivoted QR (full column rank) and its
fallback to the SVD's minimum-norm solution (rank-deficient), against numpy's lstsq;
and a single large matrix, whose solves, Q and inverse are split over the intra-op
team, giving the same bits at one and at two threads (see Note: one large matrix on
several threads)."""

import ferrograd as torch
import numpy as np
import pytest
from test_linalg_decomp import _np, _rand


def _np_lstsq(a, b):
    """numpy's minimum-norm solutions, matrix by matrix, with the ranks."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    xs, ranks = [], []
    for i in np.ndindex(*batch):
        x, _, rank, _ = np.linalg.lstsq(a[i], b[i], rcond=None)
        xs.append(x)
        ranks.append(rank)
    shape = batch + (a.shape[-1], b.shape[-1])
    return np.array(xs).reshape(shape), np.array(ranks).reshape(batch)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("driver", [None, "gelsy", "gels"])
def test_lstsq_full_rank_through_qr(dtype, driver):
    a = _rand(3, 40, 12, dtype=dtype, seed=21)
    b = _rand(1, 40, 5, dtype=dtype, seed=22)
    x_ref, rank_ref = _np_lstsq(a, b)
    out = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    np.testing.assert_allclose(_np(out.solution), x_ref, rtol=1e-10, atol=1e-12)
    assert tuple(out.solution.shape) == (3, 12, 5)
    if driver == "gels":
        assert tuple(out.rank.shape) == (0,)
        res = (np.abs(a @ x_ref - b) ** 2).sum(-2)
        np.testing.assert_allclose(_np(out.residuals), res, rtol=1e-9)
    else:
        assert _np(out.rank).tolist() == rank_ref.tolist() == [12, 12, 12]
        assert tuple(out.residuals.shape) == (0,)
    assert tuple(out.singular_values.shape) == (0,)


def test_lstsq_float32_and_vector_through_qr():
    a = _rand(30, 8, dtype=np.float32, seed=23)
    b = _rand(30, dtype=np.float32, seed=24)
    x_ref = np.linalg.lstsq(a.astype(np.float64), b.astype(np.float64), rcond=None)[0]
    out = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b))
    assert out.solution.dtype == torch.float32
    np.testing.assert_allclose(_np(out.solution), x_ref, rtol=1e-4, atol=1e-5)
    assert int(out.rank) == 8


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_lstsq_rank_deficient_takes_min_norm(dtype):
    # Rank 3 of 6 columns (gelsy's complete orthogonal decomposition then gives the
    # minimum-norm solution, as the SVD does); batched with one matrix of full rank.
    low = _rand(10, 3, dtype=dtype, seed=25) @ _rand(3, 6, dtype=dtype, seed=26)
    a = np.stack([low, _rand(10, 6, dtype=dtype, seed=27)])
    b = _rand(2, 10, 2, dtype=dtype, seed=28)
    x_ref, rank_ref = _np_lstsq(a, b)
    out = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(_np(out.solution), x_ref, rtol=1e-9, atol=1e-11)
    assert _np(out.rank).tolist() == rank_ref.tolist() == [3, 6]


def test_lstsq_through_qr_backward():
    a = torch.tensor(_rand(7, 4, seed=29), requires_grad=True)
    b = torch.tensor(_rand(7, 2, seed=30), requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: torch.linalg.lstsq(a, b).solution, (a, b))


def _spd(n, seed):
    x = _rand(n, n, seed=seed)
    return x @ x.T / n + np.eye(n)


_LARGE = [
    ("inv", lambda a, b: [torch.linalg.inv(a)]),
    ("det", lambda a, b: [torch.linalg.det(a)]),
    ("slogdet", lambda a, b: list(torch.linalg.slogdet(a))),
    ("solve", lambda a, b: [torch.linalg.solve(a, b)]),
    ("solve_triangular", lambda a, b: [torch.linalg.solve_triangular(a, b, upper=True)]),
    ("cholesky", lambda a, b: [torch.linalg.cholesky(a)]),
    ("qr", lambda a, b: list(torch.linalg.qr(a))),
    ("eigh", lambda a, b: list(torch.linalg.eigh(a))),
    ("svd", lambda a, b: list(torch.linalg.svd(a))),
    ("lstsq", lambda a, b: [torch.linalg.lstsq(a[:, :200], b).solution]),
]


def _assert_same_bits_at_one_and_two_threads(name, fn, a, b):
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = [_np(t).copy() for t in fn(a, b)]
        torch.set_num_threads(2)
        two = [_np(t).copy() for t in fn(a, b)]
    finally:
        torch.set_num_threads(before)
    for x, y in zip(one, two):
        assert x.tobytes() == y.tobytes(), name


@pytest.mark.parametrize("name,fn", _LARGE, ids=[n for n, _ in _LARGE])
def test_single_large_matrix_same_bits_at_one_and_two_threads(name, fn):
    n = 256
    a = torch.tensor(_spd(n, 31))
    b = torch.tensor(_rand(n, 16, seed=32))
    _assert_same_bits_at_one_and_two_threads(name, fn, a, b)


def test_single_large_matrix_results():
    n = 256
    a_np = _spd(n, 33)
    b_np = _rand(n, 3, seed=34)
    a = torch.tensor(a_np)
    np.testing.assert_allclose(_np(torch.linalg.inv(a)) @ a_np, np.eye(n), atol=1e-10)
    np.testing.assert_allclose(
        _np(torch.linalg.solve(a, torch.tensor(b_np))), np.linalg.solve(a_np, b_np), rtol=1e-9
    )
    np.testing.assert_allclose(float(torch.linalg.slogdet(a)[1]),
                               np.linalg.slogdet(a_np)[1], rtol=1e-12)
    w, v = torch.linalg.eigh(a)
    np.testing.assert_allclose(_np(w), np.linalg.eigvalsh(a_np), rtol=1e-10)
    np.testing.assert_allclose(_np(v) @ np.diag(_np(w)) @ _np(v).T, a_np, atol=1e-10)
    q, r = torch.linalg.qr(a)
    np.testing.assert_allclose(_np(q) @ _np(r), a_np, atol=1e-10)
    s = torch.linalg.svdvals(a)
    np.testing.assert_allclose(_np(s), np.linalg.svd(a_np, compute_uv=False), rtol=1e-10)


# One large matrix's LU is blocked in panels over the team (src/kernels/cpu/decomp.rs,
# `blocked_lu`): 256 is a multiple of the panel, 300 is not; general matrices, so that
# rows are swapped in every panel.
_LU_OPS = [
    ("det", lambda a, b: [torch.linalg.det(a)]),
    ("slogdet", lambda a, b: list(torch.linalg.slogdet(a))),
    ("solve", lambda a, b: [torch.linalg.solve(a, b)]),
    ("inv", lambda a, b: [torch.linalg.inv(a)]),
]


def _general(n, dtype, seed):
    # Scaled so that |det| stays far from overflow at n = 300.
    return (_rand(n, n, dtype=dtype, seed=seed) / np.sqrt(n)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("n", [256, 300])
def test_blocked_lu_agrees_with_numpy(n, dtype):
    a_np = _general(n, dtype, 41)
    b_np = _rand(n, 5, dtype=dtype, seed=42)
    a, b = torch.tensor(a_np), torch.tensor(b_np)
    np.testing.assert_allclose(_np(torch.linalg.det(a)), np.linalg.det(a_np), rtol=1e-10)
    sign, logabs = torch.linalg.slogdet(a)
    sign_np, logabs_np = np.linalg.slogdet(a_np)
    np.testing.assert_allclose(_np(sign), sign_np, rtol=1e-10)
    np.testing.assert_allclose(float(logabs), logabs_np, rtol=1e-10)
    x_np = np.linalg.solve(a_np, b_np)
    np.testing.assert_allclose(_np(torch.linalg.solve(a, b)), x_np, rtol=1e-10,
                               atol=1e-10 * np.abs(x_np).max())
    inv_np = np.linalg.inv(a_np)
    np.testing.assert_allclose(_np(torch.linalg.inv(a)), inv_np, rtol=1e-10,
                               atol=1e-10 * np.abs(inv_np).max())


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32])
@pytest.mark.parametrize("n", [256, 300])
@pytest.mark.parametrize("name,fn", _LU_OPS, ids=[n for n, _ in _LU_OPS])
def test_blocked_lu_same_bits_at_one_and_two_threads(name, fn, n, dtype):
    a = torch.tensor(_general(n, dtype, 43))
    b = torch.tensor(_rand(n, 70, dtype=dtype, seed=44))
    _assert_same_bits_at_one_and_two_threads(name, fn, a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_blocked_lu_singular(dtype):
    # Row 150 is all zeros: its pivot column is exactly zero once every other row has
    # been used, whatever the rounding elsewhere. Rows 3 and 170 are equal as well.
    n = 200
    a_np = _general(n, dtype, 45)
    a_np[170] = a_np[3]
    a_np[150] = 0
    a = torch.tensor(a_np)
    assert _np(torch.linalg.det(a)) == 0
    sign, logabs = torch.linalg.slogdet(a)
    assert _np(sign) == 0 and float(logabs) == -np.inf
    _, info = torch.linalg.inv_ex(a)
    assert int(info) > 0
    _, info = torch.linalg.solve_ex(a, torch.tensor(_rand(n, 2, dtype=dtype, seed=46)))
    assert int(info) > 0
