"""The fused softmax / log_softmax / logsumexp row kernels and softmax's backward op
(torch's _softmax_backward_data): values against numpy on rows that fill whole SIMD
vectors and leave a tail, along every dim and through non-contiguous layouts, NaN and
infinities, half types; and the backward op's own node (the double-backward graph torch
builds), checked by gradcheck/gradgradcheck with forward AD and through vmap."""

import numpy as np
import pytest

import ferrograd as torch
from conftest import IS_REAL_TORCH

SHAPES_AND_DIMS = [((5, 37), 1), ((37, 5), 0), ((3, 17, 4), 1), ((2, 3, 100), -1), ((1, 1), 1)]


def _np_softmax(a, dim, log):
    shifted = a - a.max(axis=dim, keepdims=True)
    e = np.exp(shifted)
    total = e.sum(axis=dim, keepdims=True)
    return shifted - np.log(total) if log else e / total


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape,dim", SHAPES_AND_DIMS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_softmax_matches_numpy(log, shape, dim, dtype):
    rng = np.random.default_rng(len(shape) + dim)
    a = rng.standard_normal(shape) * 5
    x = torch.tensor(a, dtype=dtype)
    got = (x.log_softmax(dim) if log else x.softmax(dim)).double().numpy()
    tol = 1e-12 if dtype == torch.float64 else 2e-6
    np.testing.assert_allclose(got, _np_softmax(a, dim, log), rtol=tol, atol=tol)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_of_non_contiguous_input(log):
    a = np.random.default_rng(0).standard_normal((40, 30))
    x = torch.tensor(a).t()[::2]  # (15, 40), strided both ways
    got = x.log_softmax(1) if log else x.softmax(1)
    assert got.is_contiguous()
    np.testing.assert_allclose(got.numpy(), _np_softmax(a.T[::2], 1, log), rtol=1e-12, atol=1e-12)


def test_nan_and_infinity_reach_the_whole_row_as_in_torch():
    nan, inf = float("nan"), float("inf")
    rows = [[nan] + [1.0] * 20, [-inf] * 21, [inf] + [1.0] * 20, [0.0] + [-inf] * 20]
    x = torch.tensor(rows)
    s, ls = x.softmax(1), x.log_softmax(1)
    for r in range(3):
        assert torch.isnan(s[r]).all() and torch.isnan(ls[r]).all()
    assert s[3, 0].item() == 1.0 and (s[3, 1:] == 0).all()
    assert ls[3, 0].item() == 0.0 and torch.isinf(ls[3, 1:]).all()
    lse = x.logsumexp(1)
    assert torch.isnan(lse[0]) and lse[1].item() == -inf and lse[2].item() == inf
    assert lse[3].item() == 0.0


@pytest.mark.parametrize("shape,dims", [((5, 37), (1,)), ((37, 5), (0,)), ((3, 17, 4), (0, 2))])
def test_logsumexp_matches_numpy(shape, dims):
    a = np.random.default_rng(1).standard_normal(shape) * 30
    m = a.max(axis=dims, keepdims=True)
    want = np.log(np.exp(a - m).sum(axis=dims)) + m.squeeze(dims)
    np.testing.assert_allclose(torch.tensor(a).logsumexp(dims).numpy(), want, rtol=1e-12)
    got32 = torch.tensor(a, dtype=torch.float32).logsumexp(dims).double().numpy()
    np.testing.assert_allclose(got32, want, rtol=2e-6)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_types_compute_in_float32(dtype):
    x = torch.randn(4, 40).to(dtype)
    wide = x.float()
    # Within a unit of the narrow type of the float32 result (torch's half kernels round
    # some steps narrow).
    tol = 8e-3 if dtype == torch.bfloat16 else 1e-3
    for f in (lambda t: t.softmax(1), lambda t: t.log_softmax(0), lambda t: t.logsumexp(1)):
        got = f(x)
        assert got.dtype == dtype
        np.testing.assert_allclose(got.float().numpy(), f(wide).numpy(), rtol=tol, atol=tol)


# ---------------------------------------------------------------- the backward op


@pytest.mark.parametrize(
    "log,name", [(False, "SoftmaxBackwardDataBackward0"), (True, "LogSoftmaxBackwardDataBackward0")]
)
def test_double_backward_graph_is_torchs(log, name):
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    v = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    y = x.log_softmax(1) if log else x.softmax(1)
    (g,) = torch.autograd.grad(y, x, v, create_graph=True)
    node = g.grad_fn
    assert node.name() == name
    nexts = [type(n).__name__ if n is not None else None for n, _ in node.next_functions]
    assert nexts[0] == "AccumulateGrad"
    forward = "LogSoftmaxBackward0" if log else "SoftmaxBackward0"
    assert node.next_functions[1][0].name() == forward
    assert node._saved_dim == 1
    assert torch.equal(node._saved_grad_output, v)
    assert torch.equal(node._saved_output, y)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape,dim", [((3, 19), 1), ((19, 3), 0)])
def test_backward_op_gradcheck_and_forward_ad(log, shape, dim):
    def backward_of(x, v):
        _, pull = torch.func.vjp(lambda t: t.log_softmax(dim) if log else t.softmax(dim), x)
        return pull(v)[0]

    x = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    v = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(backward_of, (x, v), check_forward_ad=True)
    assert torch.autograd.gradgradcheck(backward_of, (x, v))


@pytest.mark.parametrize("log", [False, True])
def test_hessian_through_vmap_matches_forward_over_reverse(log):
    def f(x):
        y = x.log_softmax(0) if log else x.softmax(0)
        return (y * torch.arange(1.0, 6.0, dtype=torch.float64)).sum()

    x = torch.randn(5, dtype=torch.float64)
    rev_rev = torch.func.jacrev(torch.func.jacrev(f))(x)
    fwd_rev = torch.func.jacfwd(torch.func.jacrev(f))(x)
    np.testing.assert_allclose(rev_rev.numpy(), fwd_rev.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(rev_rev.numpy(), rev_rev.numpy().T, rtol=1e-10, atol=1e-12)


@pytest.mark.skipif(IS_REAL_TORCH, reason="numbers of our own kernels")
def test_backward_matches_the_composite_formula():
    x = torch.randn(6, 37, dtype=torch.float64, requires_grad=True)
    v = torch.randn(6, 37, dtype=torch.float64)
    for log in (False, True):
        y = x.log_softmax(1) if log else x.softmax(1)
        (g,) = torch.autograd.grad(y, x, v)
        yd = y.detach()
        if log:
            want = v - yd.exp() * v.sum(1, keepdim=True)
        else:
            want = yd * (v - (v * yd).sum(1, keepdim=True))
        np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
