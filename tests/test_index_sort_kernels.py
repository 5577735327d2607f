"""The sort-key and row-walk kernels behind sort/topk/kthvalue/median and
gather/scatter/index_select/index_add/nonzero, checked against plain-Python and numpy
references on the inputs their shortcuts are most likely to get wrong: ties, NaN, signed
zeros, infinities, integer extremes, non-contiguous inputs, middle dims, an index smaller
than the source, repeated indices, scalars and empty dims."""

import math

import numpy as np
import pytest

import ferrograd as torch
from conftest import IS_REAL_TORCH


def _order_key(v):
    """The order torch sorts by: NaN largest (all equal), -0 == +0."""
    return (1, 0.0) if isinstance(v, float) and math.isnan(v) else (0, v)


def _stable_order(values, descending=False):
    ks = range(len(values))
    if descending:
        # Stable: ties keep line order, so sort by (-key, position).
        return sorted(ks, key=lambda k: (_neg(_order_key(values[k])), k))
    return sorted(ks, key=lambda k: (_order_key(values[k]), k))


def _neg(key):
    return (-key[0], -key[1])


TRICKY = [
    [3.0, -0.0, 0.0, float("nan"), -1.5, 3.0, float("inf"), float("-inf"), 0.0, float("nan")],
    [1.0, 1.0, 1.0, 1.0],
    [float("nan"), 2.0, float("nan"), -2.0],
    [5e-324, -5e-324, 0.0, -0.0, 1e308, -1e308],
]


def _same(a, b):
    return all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b))


@pytest.mark.parametrize("values", TRICKY)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_sort_matches_a_stable_sort(values, descending, dtype):
    x = torch.tensor(values, dtype=dtype)
    v, i = x.sort(descending=descending, stable=True)
    as_float = [float(e) for e in x.tolist()]
    order = _stable_order(as_float, descending)
    assert i.tolist() == order
    assert _same(v.tolist(), [as_float[k] for k in order])


@pytest.mark.parametrize("values", TRICKY)
def test_topk_kthvalue_median_pick_what_the_stable_sort_does(values):
    # Among tied values ferrograd picks as a stable sort would; torch's selection is not
    # stable, so its tie indices can differ (the values agree).
    x = torch.tensor(values, dtype=torch.float64)
    n = len(values)
    desc, asc = _stable_order(values, True), _stable_order(values, False)
    for k in range(n + 1):
        assert x.topk(k).indices.tolist() == desc[:k]
        assert x.topk(k, largest=False).indices.tolist() == asc[:k]
    for k in range(1, n + 1):
        assert x.kthvalue(k).indices.item() == asc[k - 1]
    numbers = [k for k in asc if not math.isnan(values[k])]
    nans = [k for k in range(n) if math.isnan(values[k])]
    expected = nans[0] if nans else numbers[(len(numbers) - 1) // 2]
    assert x.median(0).indices.item() == expected
    expected_nan = numbers[(len(numbers) - 1) // 2] if numbers else 0
    assert x.nanmedian(0).indices.item() == expected_nan


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.int64])
def test_topk_of_a_few_from_a_long_line_picks_what_the_stable_sort_does(dtype):
    # k * 16 <= len takes the bounded-buffer path; ties, NaNs and signed zeros repeat
    # along the line so that the buffer's insertions and evictions meet all of them.
    rng = np.random.default_rng(7)
    values = [float(v) for v in rng.integers(-3, 4, 230)]
    if dtype != torch.int64:
        values[::9] = [float("nan")] * len(values[::9])
        values[5::11] = [-0.0] * len(values[5::11])
    x = torch.tensor(values, dtype=dtype)
    as_float = [float(e) for e in x.tolist()]
    desc, asc = _stable_order(as_float, True), _stable_order(as_float, False)
    for k in (1, 2, 5, 14):
        top, bottom = x.topk(k), x.topk(k, largest=False)
        assert top.indices.tolist() == desc[:k]
        assert bottom.indices.tolist() == asc[:k]
        assert _same([float(v) for v in top.values.tolist()], [as_float[j] for j in desc[:k]])
    # Along dim 0 of a transposed (non-contiguous) 2-D input: the same lines, strided.
    grid = x.reshape(23, 10).t().contiguous().t()
    ref = np.argsort(-np.array(grid.tolist(), dtype=float), axis=0, kind="stable")
    if dtype == torch.int64:
        assert grid.topk(1, 0).indices.tolist() == ref[:1].tolist()


def test_sort_integer_extremes_and_other_dims():
    lo, hi = -(2**63), 2**63 - 1
    x = torch.tensor([[hi, lo, 0, -1, hi], [1, 1, lo, 0, 2]], dtype=torch.int64)
    for dim in (0, 1):
        v, i = x.sort(dim)
        ref_i = np.argsort(np.array(x.tolist()), axis=dim, kind="stable")
        assert i.tolist() == ref_i.tolist()
        assert v.tolist() == np.take_along_axis(np.array(x.tolist()), ref_i, dim).tolist()
    # A middle dim of a non-contiguous input, and topk along it.
    torch.manual_seed(0)
    y = torch.randint(0, 4, (3, 5, 4)).transpose(0, 2)
    ref = np.array(y.tolist())
    assert y.sort(1).indices.tolist() == np.argsort(ref, 1, kind="stable").tolist()
    assert y.topk(2, 1, largest=False).indices.tolist() == (
        np.argsort(ref, 1, kind="stable")[:, :2].tolist()
    )


def test_gather_and_scatter_add_on_non_contiguous_middle_dim():
    torch.manual_seed(1)
    src = torch.randn(4, 6, 5, dtype=torch.float64).transpose(0, 2)  # (5, 6, 4)
    index = torch.randint(0, 6, (3, 2, 4)).transpose(1, 2)[:, :, :1]  # (3, 4, 1), strided
    out = src.gather(1, index)
    s, idx = np.array(src.tolist()), np.array(index.tolist())
    ref = np.empty(idx.shape)
    for a, b, c in np.ndindex(*idx.shape):
        ref[a, b, c] = s[a, idx[a, b, c], c]
    np.testing.assert_array_equal(np.array(out.tolist()), ref)
    # scatter_add with repeated indices adds every one of them.
    vals = torch.randn(3, 4, 1, dtype=torch.float64)
    base = torch.zeros(5, 6, 4, dtype=torch.float64)
    got = base.scatter_add(1, index, vals)
    ref = np.zeros((5, 6, 4))
    v = np.array(vals.tolist())
    for a, b, c in np.ndindex(*idx.shape):
        ref[a, idx[a, b, c], c] += v[a, b, c]
    np.testing.assert_allclose(np.array(got.tolist()), ref, rtol=0, atol=1e-15)


def test_gather_checks_every_index():
    x = torch.arange(6.0).reshape(2, 3)
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 1 with size 3"):
        x.gather(1, torch.tensor([[0, 3]]))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds"):
        x.gather(1, torch.tensor([[0], [-1]]))


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_index_select_and_index_add_rows(dim):
    torch.manual_seed(2)
    x = torch.randn(3, 4, 5, dtype=torch.float64).permute(2, 0, 1)  # (5, 3, 4), strided
    size = x.shape[dim]
    index = torch.tensor([size - 1, 0, size - 1, 1])
    got = x.index_select(dim, index)
    ref = np.take(np.array(x.tolist()), index.tolist(), axis=dim)
    np.testing.assert_array_equal(np.array(got.tolist()), ref)
    # index_add: repeated rows add up.
    shape = list(x.shape)
    shape[dim] = len(index)
    source = torch.randn(*shape, dtype=torch.float64)
    added = x.index_add(dim, index, source, alpha=2)
    ref = np.array(x.tolist())
    np.add.at(
        np.moveaxis(ref, dim, 0),
        index.tolist(),
        2 * np.moveaxis(np.array(source.tolist()), dim, 0),
    )
    np.testing.assert_allclose(np.array(added.tolist()), ref, rtol=1e-15, atol=1e-15)


def test_index_select_edges():
    s = torch.tensor(7.0)
    assert s.index_select(0, torch.tensor(0)).tolist() == 7.0
    scalar_msg = r"Index to scalar can have only 1 value, got 2 value\(s\)"
    with pytest.raises(RuntimeError, match=scalar_msg):
        s.index_select(0, torch.tensor([0, 0]))
    e = torch.zeros(2, 0, 3)
    assert e.index_select(0, torch.tensor([1, 1, 0])).shape == (3, 0, 3)
    assert torch.ones(2, 3).index_select(1, torch.tensor([], dtype=torch.int64)).shape == (2, 0)
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.ones(2, 3).index_select(1, torch.tensor([-1]))


def test_nonzero_walks_every_dim():
    torch.manual_seed(3)
    m = torch.rand(3, 4, 2) > 0.5
    assert m.nonzero().tolist() == np.argwhere(np.array(m.tolist())).tolist()
    assert m.transpose(0, 2).nonzero().tolist() == (
        np.argwhere(np.array(m.transpose(0, 2).tolist())).tolist()
    )
    assert torch.ones(2, 0, 3).nonzero().shape == (0, 3)
    assert torch.tensor(True).nonzero().shape == (1, 0)
    assert torch.tensor(False).nonzero().shape == (0, 0)


@pytest.mark.skipif(IS_REAL_TORCH, reason="torch's parallel scatter names any bad index")
def test_scatter_split_over_threads_reports_the_first_bad_index():
    # Big enough to be split over the pool by rows; ours names the first bad index in
    # index order, whichever thread meets it first.
    index = torch.zeros(600, 600, dtype=torch.int64)
    index[5, 3] = 900
    index[400, 1] = 700
    src = torch.ones(600, 600)
    message = "index 900 is out of bounds for dimension 1 with size 600"
    for op in (torch.zeros(600, 600).scatter_add, torch.zeros(600, 600).scatter):
        with pytest.raises(RuntimeError, match=message):
            op(1, index, src)


def test_scatter_split_over_threads_matches_a_serial_reference():
    rng = np.random.default_rng(3)
    index = rng.integers(0, 40, size=(700, 500))
    src = rng.standard_normal((700, 500))
    out = torch.zeros(700, 40, dtype=torch.float64).scatter_add(
        1, torch.from_numpy(index), torch.from_numpy(src)
    )
    expected = np.zeros((700, 40))
    for r in range(700):
        np.add.at(expected[r], index[r], src[r])
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)
    last = torch.zeros(700, 40, dtype=torch.float64).scatter(
        1, torch.from_numpy(index), torch.from_numpy(src)
    )
    for r in (0, 350, 699):
        want = np.zeros(40)
        for i, v in zip(index[r], src[r]):
            want[i] = v
        np.testing.assert_array_equal(last.numpy()[r], want)


def test_index_add_and_copy_split_over_threads_keep_index_order():
    # One slab of 1100 rows of 300 (big enough to split its rows over the pool), with
    # repeated indices: sums in index order, and the last copy wins.
    rng = np.random.default_rng(5)
    index = rng.integers(0, 1100, size=1100)
    src = rng.standard_normal((1100, 300))
    base = rng.standard_normal((1100, 300))
    got = torch.from_numpy(base).index_add(0, torch.from_numpy(index), torch.from_numpy(src))
    want = base.copy()
    for k, i in enumerate(index):
        want[i] += src[k]
    np.testing.assert_array_equal(got.numpy(), want)
    if IS_REAL_TORCH:
        return  # torch documents index_copy with repeated indices as nondeterministic
    copied = torch.from_numpy(base).index_copy(0, torch.from_numpy(index), torch.from_numpy(src))
    want = base.copy()
    for k, i in enumerate(index):
        want[i] = src[k]
    np.testing.assert_array_equal(copied.numpy(), want)


def _long_index(n, bad):
    idx = np.arange(n, dtype=np.int64)[::-1].copy()
    for at, value in bad.items():
        idx[at] = value
    return torch.from_numpy(idx)


N_LONG = 200_000  # long enough that the index checks run in blocks over threads


def test_long_indices_wrap_in_every_block():
    x = torch.arange(float(N_LONG))
    idx = _long_index(N_LONG, {150_000: -1, 70_001: -N_LONG, 3: -5})
    want = np.arange(float(N_LONG))[idx.numpy()]
    np.testing.assert_array_equal(x.take(idx).numpy(), want)
    np.testing.assert_array_equal(x[idx].numpy(), want)
    with pytest.raises(IndexError, match=r"out of range: tried to access index -?\d+ on a tensor"):
        x.take(_long_index(N_LONG, {150_000: N_LONG}))
    with pytest.raises(IndexError, match=f"index {N_LONG} is out of bounds for dimension 0"):
        x[_long_index(N_LONG, {150_000: N_LONG})]


def test_take_reads_strided_indices_in_their_order():
    # take selects through the flat tensor's index_select, then wraps negatives on refusal.
    a = np.arange(60.0).reshape(3, 4, 5)
    idx = np.array([[0, -1, 7], [59, -60, 3]])
    x = torch.from_numpy(a)
    for index in (torch.from_numpy(idx).t(), torch.from_numpy(idx)[:, ::2]):
        assert not index.is_contiguous()
        want = a.reshape(-1)[index.numpy()]
        np.testing.assert_array_equal(x.take(index).numpy(), want)
        assert x.take(index).shape == index.shape
    with pytest.raises(IndexError, match="tried to access index -61 on a tensor of 60"):
        x.take(torch.tensor([[1, -61]]).t())


@pytest.mark.skipif(IS_REAL_TORCH, reason="torch names any one of the bad indices (a race)")
def test_long_indices_report_the_first_bad_one_in_index_order():
    x = torch.arange(float(N_LONG))
    for bad in (
        {150_000: N_LONG + 7, 70_001: -(N_LONG + 3)},
        {70_001: N_LONG + 7, 150_000: -(N_LONG + 3)},
    ):
        first = bad[70_001]
        with pytest.raises(IndexError, match=f"tried to access index {first} on a tensor"):
            x.take(_long_index(N_LONG, bad))
        with pytest.raises(IndexError, match=f"index {first} is out of bounds for dimension 0"):
            x[_long_index(N_LONG, bad)]


@pytest.mark.parametrize("rows", [3, 700])  # one thread, and split over threads by rows
def test_scatter_along_the_last_dim_row_by_row(rows):
    # The index is narrower than src along the last dim (src's extra columns are
    # unread), and repeats within a row: scatter_add sums, scatter keeps the last write.
    rng = np.random.default_rng(5)
    index = rng.integers(0, 6, (rows, 9))
    src = rng.standard_normal((rows, 12))
    base = rng.standard_normal((rows, 6))
    added, copied = base.copy(), base.copy()
    for r in range(rows):
        for j in range(9):
            added[r, index[r, j]] += src[r, j]
            copied[r, index[r, j]] = src[r, j]
    t_index, t_src, t_base = (torch.from_numpy(a) for a in (index, src, base))
    np.testing.assert_allclose(t_base.scatter_add(1, t_index, t_src).numpy(), added, rtol=1e-12)
    np.testing.assert_array_equal(t_base.scatter(1, t_index, t_src).numpy(), copied)
    index[rows - 1, 4] = -1
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1 with size 6"):
        t_base.scatter_add(1, torch.from_numpy(index), t_src)
