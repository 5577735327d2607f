"""Reductions over leading and middle dims (kernels/reduce.rs `reduce_columns`): a
contiguous input reduced over dims that kept dims follow is folded down whole rows of
columns instead of being gathered into rows first. Checked against numpy and against the
row kernels (the same reduction of a transposed copy), for max/min with and without
indices, prod, all and any: below and above the size where work is split over threads,
with NaN, ties, narrow and odd widths, and the layouts that must fall back to rows."""

import numpy as np
import pytest

import ferrograd as torch

# (shape, dims): leading dims, middle dims, several dims, narrow (falls back), odd widths
CASES = [
    ((300, 40), (0,)),
    ((1024, 1024), (0,)),  # above the grain: split over threads by column blocks
    ((3, 700, 1100), (1,)),  # one slab per task, several blocks per slab
    ((64, 50, 300), (1,)),  # several slabs per task
    ((6, 5, 4, 30), (1, 2)),
    ((20, 7, 5), (0, 1)),
    ((500, 4), (0,)),  # inner < 8: the row kernels
    ((1, 9, 16), (1,)),
    ((9, 1, 16), (1,)),
]


def _np_reduce(name, a, dims):
    fn = {"amax": np.max, "amin": np.min, "prod": np.prod, "all": np.all, "any": np.any}[name]
    return fn(a, axis=dims)


def _values(seed, shape, dtype):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.97
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-3, 4, shape).astype(dtype)
    return (1 + rng.standard_normal(shape) * 1e-3).astype(dtype)


@pytest.mark.parametrize(
    "name, shape, dims",
    # prod takes one dim, as torch's
    [(n, s, d) for n in ("amax", "amin", "prod") for s, d in CASES if n != "prod" or len(d) == 1],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_values_match_numpy(name, dtype, shape, dims):
    a = _values(1, shape, dtype)
    got = getattr(torch.from_numpy(a), name)(dims if len(dims) > 1 else dims[0])
    want = _np_reduce(name, a, dims)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got.numpy(), want, rtol=rtol)


@pytest.mark.parametrize("shape, dims", CASES)
@pytest.mark.parametrize("name", ["all", "any"])
def test_bool_values_match_numpy(name, shape, dims):
    a = _values(2, shape, np.bool_)
    got = getattr(torch.from_numpy(a), name)(dims) if len(dims) == 1 else None
    if got is None:  # all/any take one dim; reduce the others one at a time
        t = torch.from_numpy(a)
        for d in sorted(dims, reverse=True):
            t = getattr(t, name)(d)
        got = t
    np.testing.assert_array_equal(got.numpy(), _np_reduce(name, a, dims))


def _transposed_rows(t, dim):
    """The same reduction through the row kernels: dim moved last, made contiguous."""
    return t.movedim(dim, -1).contiguous()


@pytest.mark.parametrize("shape", [(1024, 1024), (3, 700, 1100), (300, 40)])
@pytest.mark.parametrize("op", ["max", "min"])
def test_values_and_indices_match_the_row_kernels(op, shape):
    rng = np.random.default_rng(3)
    # Few distinct values: many ties, whose first position both kernels pick.
    a = rng.integers(0, 5, shape).astype(np.float32)
    t = torch.from_numpy(a)
    values, indices = getattr(t, op)(dim=len(shape) - 2)
    ref_values, ref_indices = getattr(_transposed_rows(t, len(shape) - 2), op)(dim=-1)
    assert torch.equal(values, ref_values)
    assert torch.equal(indices, ref_indices)
    np_arg = np.argmax if op == "max" else np.argmin
    np.testing.assert_array_equal(indices.numpy(), np_arg(a, axis=len(shape) - 2))


@pytest.mark.parametrize("shape", [(1024, 1024), (300, 40)])
def test_nan_wins_and_its_first_position_is_reported(shape):
    a = np.ones(shape, np.float32)
    a[7, 3] = np.nan
    a[9, 3] = np.nan
    a[5, 11] = -np.inf
    a[shape[0] - 1, 12] = np.nan
    t = torch.from_numpy(a)
    for op in ("max", "min"):
        values, indices = getattr(t, op)(0)
        assert np.isnan(values[3].item()) and indices[3].item() == 7
        assert np.isnan(values[12].item()) and indices[12].item() == shape[0] - 1
        reduced = getattr(t, "a" + op)(0).numpy()
        assert np.isnan(reduced[3]) and np.isnan(reduced[12])
        assert np.isnan(values.numpy()).sum() == 2
    assert t.amin(0)[11].item() == -np.inf
    assert np.isnan(t.prod(0)[3].item())


def test_half_and_non_contiguous_inputs():
    a = _values(4, (600, 520), np.float32)
    t = torch.from_numpy(a)
    half = t.half()
    np.testing.assert_array_equal(half.amax(0).numpy(), a.astype(np.float16).max(0))
    # A transposed view is not contiguous: the row kernels serve it.
    np.testing.assert_array_equal(t.t().amax(1).numpy(), a.max(0))
    np.testing.assert_allclose(t[:, ::2].prod(0).numpy(), a[:, ::2].prod(0), rtol=1e-5)


def test_gradients_through_the_column_kernels():
    # amax splits the gradient evenly among ties; max(dim) sends it to the reported index.
    a = np.array([[1.0, 2.0, 5.0] * 4, [3.0, 2.0, 5.0] * 4, [3.0, 0.0, 1.0] * 4])
    t = torch.tensor(a, requires_grad=True)
    t.amax(0).sum().backward()
    ties = a == a.max(0)
    np.testing.assert_array_equal(t.grad.numpy(), ties / ties.sum(0))
    t.grad = None
    t.max(0).values.sum().backward()
    first = np.zeros_like(a)
    first[a.argmax(0), np.arange(a.shape[1])] = 1
    np.testing.assert_array_equal(t.grad.numpy(), first)


# Permuted layouts (kernels/reduce.rs `in_memory_order`): a transposed or permuted input is
# reduced in memory order, without a gathered copy, when its kept dims stay in order.
PERMUTED = [
    ((300, 200), (1, 0), (1,)),  # x.t().sum(1): column sums of the memory
    ((300, 200), (1, 0), (0,)),
    ((8, 30, 50), (2, 0, 1), (0,)),  # kept dims stay in order
    ((8, 30, 50), (1, 2, 0), (1, 2)),
    ((8, 30, 50), (2, 1, 0), (1,)),  # kept dims reversed in memory: the gathered rows
    ((1, 40, 64), (2, 0, 1), (1,)),  # a size-1 dim
]


@pytest.mark.parametrize("shape, perm, dims", PERMUTED)
@pytest.mark.parametrize("name", ["sum", "amax", "amin", "prod", "logsumexp"])
def test_permuted_inputs_reduce_as_their_copies(name, shape, perm, dims):
    a = _values(3, shape, np.float64)
    x = torch.from_numpy(a).permute(*perm)
    want = np.transpose(a, perm)
    if name == "logsumexp":
        got = x.logsumexp(dims)
        m = want.max(axis=dims, keepdims=True)
        expect = (np.log(np.exp(want - m).sum(axis=dims, keepdims=True)) + m).squeeze(dims)
    elif name in ("sum", "amax", "amin"):
        got = getattr(x, name)(dims)
        expect = {"sum": np.sum, "amax": np.max, "amin": np.min}[name](want, axis=dims)
    else:
        if len(dims) > 1:
            pytest.skip("prod takes one dim")
        got = x.prod(dims[0])
        expect = np.prod(want, axis=dims)
    np.testing.assert_allclose(got.numpy(), expect, rtol=1e-12)
    # The same reduction of a contiguous copy, within rounding.
    copy = getattr(x.contiguous(), name)(*([dims[0]] if name == "prod" else [dims]))
    np.testing.assert_allclose(got.numpy(), copy.numpy(), rtol=1e-12)


@pytest.mark.parametrize("shape, perm, dim", [((300, 200), (1, 0), 1), ((8, 30, 50), (2, 0, 1), 1)])
@pytest.mark.parametrize("op", ["max", "min", "argmax"])
def test_permuted_inputs_give_torch_positions(op, shape, perm, dim):
    rng = np.random.default_rng(4)
    a = rng.integers(-5, 5, shape).astype(np.float32)  # many ties: the first one counts
    x = torch.from_numpy(a).permute(*perm)
    want = np.transpose(a, perm)
    if op == "argmax":
        np.testing.assert_array_equal(x.argmax(dim).numpy(), want.argmax(axis=dim))
        # over all dims, positions count in x's own (logical) order
        assert x.argmax().item() == want.argmax()
        return
    values, idx = getattr(x, op)(dim)
    expect = (want.max if op == "max" else want.min)(axis=dim)
    pick = want.argmax(axis=dim) if op == "max" else want.argmin(axis=dim)
    np.testing.assert_array_equal(values.numpy(), expect)
    np.testing.assert_array_equal(idx.numpy(), pick)


# nansum and the real 2-norm add their terms inside the sum's loops (kernels/sum.rs
# `Term`): every layout the sum takes (rows, columns, all, permuted, strided).
FUSED_LAYOUTS = [
    ((700, 300), None, None),
    ((700, 300), 1, None),
    ((700, 300), 0, None),
    ((40, 3000), 1, None),  # rows longer than a leaf
    ((300, 200), 1, "t"),
    ((300, 200), 1, "step"),
    ((5, 6, 7), (0, 2), None),
]


def _layout(a, how):
    x = torch.from_numpy(a)
    if how == "t":
        return x.t(), a.T
    if how == "step":
        return x[:, ::2], a[:, ::2]
    return x, a


@pytest.mark.parametrize("shape, dim, how", FUSED_LAYOUTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nansum_and_norm_match_numpy(shape, dim, how, dtype):
    rng = np.random.default_rng(5)
    a = rng.standard_normal(shape).astype(dtype)
    a[rng.random(shape) < 0.1] = np.nan
    x, want = _layout(a, how)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    got = x.nansum() if dim is None else x.nansum(dim)
    expect = np.nansum(want.astype(np.float64), axis=dim)  # f32 sums: within rounding
    np.testing.assert_allclose(got.numpy(), expect, rtol=rtol, atol=1e-4 if rtol > 1e-6 else 0)
    clean = np.nan_to_num(want)
    x = torch.from_numpy(np.ascontiguousarray(clean))
    got = x.norm() if dim is None else x.norm(dim=dim)
    expect = np.sqrt((clean.astype(np.float64) ** 2).sum(axis=dim))
    np.testing.assert_allclose(got.numpy(), expect, rtol=rtol)


def test_nansum_keeps_integers_and_norm_propagates_nan():
    assert torch.tensor([1, 2, 3]).nansum().item() == 6
    assert np.isnan(torch.tensor([3.0, float("nan")]).norm().item())
    assert torch.tensor([float("inf"), 1.0]).norm().item() == float("inf")
    assert torch.tensor([-3.0, 4.0], dtype=torch.float16).norm().item() == 5.0


# Strided (sliced) inputs (kernels/reduce.rs): rows read in place when each is one run
# (`x[::2]` over its last dim), gathered a task's rows at a time otherwise (`x[:, ::2]`),
# and copied in their own order first when a kept dim follows a reduced one (column
# sums of a slice). Each path gives the bits of the same reduction of a contiguous copy.
def _expand(x, shape):
    return np.broadcast_to(x, shape) if isinstance(x, np.ndarray) else x.expand(*shape)


SLICED = [
    ((1200, 900), lambda x: x[:, ::2], (1,)),  # pieces, over threads
    ((1200, 900), lambda x: x[::2], (1,)),  # rows in place
    ((1200, 900), lambda x: x[::3, 10:800], (1,)),  # rows in place, offset
    ((1200, 900), lambda x: x[:, ::2], (0,)),  # own-order copy, then columns
    ((1200, 900), lambda x: x[::2, ::3], (0,)),
    ((1200, 40), lambda x: x[:, 1:33], (1,)),  # short rows: pieces
    ((60, 70, 80), lambda x: x[:, ::2, 1:], (1, 2)),
    ((60, 70, 80), lambda x: x[::2, :, ::3], (1,)),  # a middle dim
    ((60, 70, 80), lambda x: x[:, 5:60], (0, 2)),
    ((30, 1, 900), lambda x: _expand(x, (30, 40, 900))[:, :, ::2], (2,)),  # stride 0
    ((300, 200), lambda x: x[::2, ::2], (0, 1)),  # everything: one row
    ((1200, 900), lambda x: x[::2, 1::2], (0, 1)),  # one long row, gathered in chunks
    ((40, 5000), lambda x: x[:, 100:4600], (1,)),  # rows longer than a leaf, in place
    ((202, 300), lambda x: x[:, ::3], (1,)),  # stepped gathers (steps 3 and 4)
    ((203, 300), lambda x: x[1:, ::4], (1,)),
    ((50, 300), lambda x: x[:, 7:47], (1,)),  # rows too short to read in place
]

_NP = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min, "prod": np.prod}


def _reduce(name, x, dims):
    if name in ("prod", "max", "argmax"):
        if len(dims) > 1:
            return None
        out = getattr(x, name)(dims[0])
        return list(out) if name == "max" else [out]
    if name == "logsumexp":
        return [x.logsumexp(dims)]
    return [getattr(x, name)(dims)]


@pytest.mark.parametrize("case", range(len(SLICED)))
@pytest.mark.parametrize(
    "name", ["sum", "mean", "amax", "amin", "prod", "logsumexp", "max", "argmax"]
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sliced_inputs_reduce_as_their_contiguous_copies(case, name, dtype):
    shape, view, dims = SLICED[case]
    a = _values(6, shape, dtype)
    x = view(torch.from_numpy(a))
    assert not x.is_contiguous()
    got = _reduce(name, x, dims)
    if got is None:
        pytest.skip(f"{name} takes one dim")
    copy = _reduce(name, x.contiguous(), dims)
    for g, c in zip(got, copy):
        assert g.numpy().tobytes() == c.numpy().tobytes()
    want = view(a)
    if name in _NP:
        expect = _NP[name](want.astype(np.float64), axis=dims)
        rtol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got[0].numpy(), expect, rtol=rtol)
    elif name == "argmax":
        np.testing.assert_array_equal(got[0].numpy(), want.argmax(axis=dims[0]))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = [t.numpy().tobytes() for t in _reduce(name, x, dims)]
    finally:
        torch.set_num_threads(before)
    assert one == [t.numpy().tobytes() for t in got]


@pytest.mark.parametrize("case", [0, 1, 3, 6])
@pytest.mark.parametrize("name", ["all", "any", "count_nonzero"])
def test_sliced_bool_inputs_match_numpy(case, name):
    shape, view, dims = SLICED[case]
    a = _values(7, shape, np.bool_)
    x, want = view(torch.from_numpy(a)), view(a)
    if name == "count_nonzero":
        got, expect = torch.count_nonzero(x, dim=dims), np.count_nonzero(want, axis=dims)
    else:
        got = getattr(x, name)(dims[0]) if len(dims) == 1 else getattr(x, name)(dims)
        expect = getattr(np, name)(want, axis=dims)
    np.testing.assert_array_equal(got.numpy(), expect)
