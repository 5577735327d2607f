"""Issue 11, ternary ops, scans and nan-reductions: what the op database cannot hold
(values pinned from torch 2.15): ties and NaN in cummax / cummin, -inf in logcumsumexp,
cumprod's gradients through zeros (first and second order), the in-place forms, aminmax's
named pair, and the Tensor methods over module functions (isclose, allclose, equal, where).

Checked on torch too: with FERROGRAD_IS_TORCH=1 the module swaps torch in (run a copy
outside tests/, whose conftest imports ferrograd, under /root/torchvenv/bin/python -m pytest)."""

import math
import os
import sys

import numpy as np
import pytest

if os.environ.get("FERROGRAD_IS_TORCH"):
    import torch

    sys.modules["ferrograd"] = torch

import ferrograd as torch  # noqa: E402

F64 = torch.float64
NAN, INF = math.nan, math.inf


def _list(t):
    return t.detach().tolist()


def _same(got, want):
    """Equal lists of floats, NaN equal to NaN."""
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want):
        assert (math.isnan(g) and math.isnan(w)) or g == w, (got, want)


def test_cummax_ties_take_the_later_index():
    values, indices = torch.cummax(torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0]), 0)
    assert _list(values) == [1.0, 3.0, 3.0, 3.0, 3.0]
    assert _list(indices) == [0, 1, 2, 2, 4]
    values, indices = torch.tensor([[2, 1, 1, 3]]).cummin(1)
    assert _list(values) == [[2, 1, 1, 1]] and _list(indices) == [[0, 1, 2, 2]]


def test_cummin_nan_propagates_from_where_it_appears():
    values, indices = torch.cummin(torch.tensor([2.0, 1.0, 1.0, NAN, 0.0, NAN]), 0)
    _same(_list(values), [2.0, 1.0, 1.0, NAN, NAN, NAN])
    assert _list(indices) == [0, 1, 2, 3, 3, 5]


def test_cummax_integer_and_bool_and_named_pair():
    out = torch.cummax(torch.tensor([1, 3, 2]), 0)
    assert _list(out.values) == [1, 3, 3] and _list(out.indices) == [0, 1, 1]
    assert out.values.dtype == torch.int64
    b = torch.cummax(torch.tensor([True, False]), 0)
    assert _list(b.values) == [True, True] and _list(b.indices) == [0, 0]


def _running_extreme(a, axis, is_max):
    """torch's cummax / cummin rule, step by step along `axis`: the new element takes
    over when it is NaN or at least as extreme as the running value."""
    a = np.moveaxis(a, axis, 0)
    vals, ids = a.copy(), np.zeros(a.shape, dtype=np.int64)
    for k in range(1, a.shape[0]):
        new, best = a[k], vals[k - 1]
        with np.errstate(invalid="ignore"):
            wins = (new >= best) if is_max else (new <= best)
        if a.dtype.kind == "f":
            wins |= np.isnan(new)
        vals[k] = np.where(wins, new, best)
        ids[k] = np.where(wins, k, ids[k - 1])
    return np.moveaxis(vals, 0, axis), np.moveaxis(ids, 0, axis)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "uint8", "bool"])
@pytest.mark.parametrize(
    "shape, dim", [((1030, 67), 1), ((3, 40000), 1), ((600, 130), 0), ((9, 70, 60), 1)]
)
@pytest.mark.parametrize("threads", [1, 2])
def test_cummax_cummin_large_against_the_rule(dtype, shape, dim, threads):
    # Rows go four at a time with a remainder (1030 rows), lines are split over the team
    # in blocks, columns run side by side: each path against the rule, with ties and NaN.
    rng = np.random.default_rng(7)
    a = rng.integers(0, 9, size=shape).astype(dtype)
    if dtype.startswith("float"):
        a.flat[::89] = np.nan
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for name, is_max in (("cummax", True), ("cummin", False)):
            values, indices = getattr(torch.tensor(a), name)(dim)
            want_v, want_i = _running_extreme(a, dim, is_max)
            np.testing.assert_array_equal(np.asarray(values.tolist(), dtype=dtype), want_v)
            np.testing.assert_array_equal(np.asarray(indices.tolist()), want_i)
    finally:
        torch.set_num_threads(before)


def test_cummax_gradient_goes_to_the_source_index():
    x = torch.tensor([1.0, 3.0, 3.0, 2.0], dtype=F64, requires_grad=True)
    torch.cummax(x, 0).values.backward(torch.tensor([1.0, 2.0, 4.0, 8.0], dtype=F64))
    assert _list(x.grad) == [1.0, 2.0, 12.0, 0.0]


def test_logcumsumexp_leading_minus_inf_stays_finite_later():
    x = torch.tensor([-INF, -INF, 1.0, 2.0], dtype=F64, requires_grad=True)
    y = torch.logcumsumexp(x, 0)
    got = _list(y)
    assert got[:3] == [-INF, -INF, 1.0] and abs(got[3] - (2.0 + math.log1p(math.exp(-1.0)))) < 1e-12
    y.backward(torch.tensor([1.0, -2.0, 3.0, 0.5], dtype=F64))
    # torch's formula gives NaN at the -inf inputs (exp(-inf - -inf)); the rest is exact.
    g = _list(x.grad)
    assert math.isnan(g[0]) and math.isnan(g[1])
    assert abs(g[2] - 3.1345) < 1e-4 and abs(g[3] - 0.3655) < 1e-4


def test_logcumsumexp_large_values_do_not_overflow():
    y = torch.logcumsumexp(torch.tensor([1000.0, 1000.0]), 0)
    assert abs(_list(y)[1] - (1000.0 + math.log(2.0))) < 1e-3


def test_cumprod_gradient_through_zeros_first_and_second_order():
    rows = [[2.0, 0.0, 3.0, 4.0], [0.0, 5.0, 0.0, 2.0], [1.5, 2.0, 0.5, 3.0]]
    x = torch.tensor(rows, dtype=F64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: torch.cumprod(t, 1), (x,))
    assert torch.autograd.gradgradcheck(lambda t: torch.cumprod(t, 1), (x,))
    g = torch.autograd.grad(torch.cumprod(x, 1).sum(), x)[0]
    # d/dx of sum(cumprod): row 0 at the zero: 2 + 2*3 + 2*3*4 = 32; after it 0.
    assert _list(g)[0] == [1.0, 32.0, 0.0, 0.0]
    assert _list(g)[1] == [6.0, 0.0, 0.0, 0.0]


def test_cumprod_rules_that_record_a_graph_are_the_same_derivatives():
    """With a graph to record (create_graph, or forward AD of an input that requires grad)
    cumprod's rules take their every-order form, the Jacobian contracted with the
    cotangent (over the outputs) or the tangent (over the inputs): the same numbers as
    the first-order forms, not the transposed contraction."""
    rows = [[2.0, 0.0, 3.0, 4.0], [0.0, 5.0, 0.0, 2.0], [1.5, 2.0, 0.5, 3.0]]
    x = torch.tensor(rows, dtype=F64, requires_grad=True)
    v = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.5, -1.0, 2.0, 0.0]] * 2, dtype=F64)[:3]
    plain = torch.autograd.grad(torch.cumprod(x, 1), x, v)[0]
    graphed = torch.autograd.grad(torch.cumprod(x, 1), x, v, create_graph=True)[0]
    assert _list(graphed) == _list(plain)
    # Only y_0 = x_0 of row 0 has a cotangent: its gradient is e_0.
    assert _list(plain)[0] == [1.0, 0.0, 0.0, 0.0]
    fwAD = torch.autograd.forward_ad
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, v)
        tangent = fwAD.unpack_dual(torch.cumprod(dual, 1)).tangent
    step = 1e-6
    with torch.no_grad():
        ahead, behind = torch.cumprod(x + step * v, 1), torch.cumprod(x - step * v, 1)
    numerical = _list((ahead - behind) / (2 * step))
    for got, want in zip(_list(tangent), numerical):
        assert all(abs(a - b) < 1e-6 for a, b in zip(got, want)), (got, want)


def test_cumprod_dtype_and_integers():
    assert torch.cumprod(torch.tensor([1, 2, 3]), 0).dtype == torch.int64
    assert _list(torch.tensor([True, False]).cumprod(0)) == [1, 0]
    out = torch.cumprod(torch.tensor([1, 2, 3]), 0, dtype=torch.float32)
    assert out.dtype == torch.float32 and _list(out) == [1.0, 2.0, 6.0]


def test_inplace_forms_match_and_record_their_nodes():
    base = torch.tensor([1.0, 2.0, 3.0], dtype=F64, requires_grad=True)
    end = torch.tensor([3.0, 2.0, 1.0], dtype=F64)
    w = torch.tensor([0.25, 0.5, 0.75], dtype=F64)
    for name, args, node in (
        ("lerp", (end, 0.5), "LerpBackward0"),
        ("lerp", (end, w), "LerpBackward1"),
        ("addcmul", (end, w), "AddcmulBackward0"),
        ("addcdiv", (end, w), "AddcdivBackward0"),
    ):
        want = getattr(base, name)(*args)
        x = base.clone()
        out = getattr(x, name + "_")(*args)
        assert out is x and _list(x) == _list(want) and x.grad_fn.name() == node
    x = base.clone()
    x.addcmul_(end, w, value=2)
    assert _list(x) == _list(base + 2 * end * w)


def test_lerp_and_addc_type_promotion():
    f32, f64 = torch.ones(2), torch.ones(2, dtype=F64)
    assert torch.lerp(f32, f32, torch.tensor(0.5, dtype=F64)).dtype == torch.float32
    assert torch.addcmul(torch.ones(2, dtype=torch.int64), f32, f32).dtype == torch.float32
    assert torch.addcdiv(f32, f64, f32).dtype == torch.float64
    ints = torch.ones(2, dtype=torch.int64)
    assert _list(torch.addcmul(ints, ints, ints, value=2)) == [3, 3]


def test_aminmax_pair_keepdim_and_ties():
    x = torch.tensor([[1.0, 3.0, 3.0], [0.0, 0.0, 1.0]], requires_grad=True)
    out = torch.aminmax(x, dim=1, keepdim=True)
    assert tuple(out.min.shape) == (2, 1) and out.max.grad_fn.name() == "AminmaxBackward0"
    assert repr(out).startswith(
        "ferrograd.return_types.aminmax(\nmin=".replace("ferrograd", torch.__name__)
    )
    (out.min * 2 + out.max).sum().backward()
    assert _list(x.grad) == [[2.0, 0.5, 0.5], [1.0, 1.0, 1.0]]
    assert tuple(torch.aminmax(torch.ones(2, 3), keepdim=True).min.shape) == (1, 1)
    mn, mx = torch.ones(0, 3).aminmax(dim=1)
    assert tuple(mn.shape) == (0,) and tuple(mx.shape) == (0,)


def test_nansum_nanmean_values_and_gradients():
    x = torch.tensor([1.0, NAN, 3.0], dtype=F64, requires_grad=True)
    assert _list(torch.nansum(x)) == 4.0 and _list(x.nanmean()) == 2.0
    torch.nanmean(x).backward()
    assert _list(x.grad) == [0.5, 0.0, 0.5]
    assert torch.nanmean(x).grad_fn.name() == "DivBackward0"
    assert torch.nansum(torch.tensor([1, 2], dtype=torch.int32)).dtype == torch.int64


def test_methods_over_module_functions():
    a = torch.tensor([1.0, 2.0, NAN])
    b = torch.tensor([1.0, 2.0 + 1e-7, NAN])
    assert _list(a.isclose(b)) == [True, True, False]
    assert _list(a.isclose(b, equal_nan=True)) == [True, True, True]
    assert not a.allclose(b) and a.allclose(b, equal_nan=True)
    assert a[:2].equal(torch.tensor([1.0, 2.0])) and not a.equal(b)
    x = torch.tensor([1.0, -2.0, 3.0])
    assert _list(x.where(x > 0, torch.zeros(3))) == [1.0, 0.0, 3.0]
    assert _list(x.where(x > 0, 7.0)) == [1.0, 7.0, 3.0]
