"""Binary ops whose operands take a kernel fast path (issue 8 §4): a whole tensor with a
single value (`x * 0.5`), with a row repeated over its leading dims (`x + bias`), and two
whole tensors, in both operand orders, small and big enough to be split over threads.
Each result is checked element by element against numpy."""

import numpy as np
import pytest

import ferrograd as torch

OPS = {
    "sub": (lambda a, b: a - b, np.subtract),
    "div": (lambda a, b: a / b, np.divide),
    "pow": (lambda a, b: a**b, np.power),
}

SHAPES = [
    # (whole operand's shape, the other operand's shape)
    ((4, 5), (5,)),
    ((4, 5), (1, 5)),
    ((3, 4, 5), (4, 5)),
    ((3, 4, 5), (1, 1, 5)),
    ((2, 3), (1,)),
    ((2, 3), ()),
    ((2, 3), (2, 3)),
    ((600, 512), (512,)),  # above the threads' grain: split by rows
    ((1 << 18) + 3, ()),  # above the grain, scalar broadcast
]


def values(shape, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 2.0, size=shape)


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("whole_shape, other_shape", SHAPES)
@pytest.mark.parametrize("whole_first", [True, False])
def test_fast_paths_match_numpy(name, whole_shape, other_shape, whole_first):
    ours, reference = OPS[name]
    w, o = values(whole_shape, 0), values(other_shape, 1)
    a, b = (w, o) if whole_first else (o, w)
    got = ours(torch.tensor(a), torch.tensor(b))
    expected = reference(a, b)
    assert tuple(got.shape) == expected.shape
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=0)


def test_row_that_is_not_contiguous_takes_the_general_path():
    x = values((4, 6), 0)
    row = values((12,), 1)
    got = torch.tensor(x) - torch.tensor(row)[::2]
    np.testing.assert_allclose(got.numpy(), x - row[::2], rtol=1e-12, atol=0)


def test_row_with_promotion_and_integers():
    x = np.arange(12, dtype=np.int64).reshape(3, 4)
    row = np.array([1.5, -2.0, 0.25, 3.0], dtype=np.float32)
    got = torch.tensor(x) * torch.tensor(row)
    assert got.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), x * row, rtol=1e-6)
    ints = torch.tensor(x) - torch.tensor(np.array([1, 2, 3, 4]))
    assert ints.dtype == torch.int64
    assert (ints.numpy() == x - np.array([1, 2, 3, 4])).all()


def test_zero_size_whole_operand_with_a_row():
    got = torch.zeros(0, 5) + torch.ones(5)
    assert tuple(got.shape) == (0, 5)


def test_row_broadcast_gradients():
    x = torch.tensor(values((6, 3), 0), requires_grad=True)
    bias = torch.tensor(values((3,), 1), requires_grad=True)
    (x / bias).sum().backward()
    b = bias.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(1 / b, (6, 3)), rtol=1e-12)
    expected = -(x.detach().numpy() / b**2).sum(axis=0)
    np.testing.assert_allclose(bias.grad.numpy(), expected, rtol=1e-12)


# Column broadcasts: one operand holds one value per output row (`x + v[:, None]`, the
# outer product `v[:, None] * w`), the other a contiguous row per output row.
COLUMN_DTYPES = {
    "float32": np.float32,
    "float64": np.float64,
    "complex128": np.complex128,
    "int64": np.int64,
}

COLUMN_SHAPES = [
    # (column operand's shape, the other operand's shape)
    ((4, 1), (4, 5)),
    ((4, 1), (5,)),
    ((4, 1), (1, 5)),
    ((3, 4, 1), (3, 4, 5)),
    ((4, 1), (3, 4, 5)),  # the column repeats over a leading dim
    ((3, 4, 1), (5,)),
    ((300, 1), (300, 257)),  # above the threads' grain: split by rows
    ((1024, 1), (1024,)),
]


def typed(shape, seed, dtype):
    rng = np.random.default_rng(seed)
    if dtype == np.int64:
        return rng.integers(-50, 50, size=shape)
    v = rng.uniform(0.5, 2.0, size=shape)
    if dtype == np.complex128:
        v = v + 1j * rng.uniform(-1.0, 1.0, size=shape)
    return v.astype(dtype)


@pytest.mark.parametrize("dtype", sorted(COLUMN_DTYPES))
@pytest.mark.parametrize("col_shape, other_shape", COLUMN_SHAPES)
@pytest.mark.parametrize("col_first", [True, False])
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_column_broadcast_matches_numpy(dtype, col_shape, other_shape, col_first, op):
    dt = COLUMN_DTYPES[dtype]
    c, o = typed(col_shape, 0, dt), typed(other_shape, 1, dt)
    a, b = (c, o) if col_first else (o, c)
    f = {"add": lambda p, q: p + q, "sub": lambda p, q: p - q, "mul": lambda p, q: p * q}[op]
    got = f(torch.tensor(a), torch.tensor(b))
    expected = f(a, b)
    assert tuple(got.shape) == expected.shape
    assert_matches(got.numpy(), expected)


def assert_matches(got, expected):
    # Complex products round as num-complex's formula does, numpy's differs by an ulp.
    if got.dtype == np.complex128:
        np.testing.assert_allclose(got, expected, rtol=1e-15, atol=0)
    else:
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", sorted(COLUMN_DTYPES))
def test_outer_matches_numpy(dtype):
    dt = COLUMN_DTYPES[dtype]
    v, w = typed((37,), 0, dt), typed((1029,), 1, dt)
    got = torch.outer(torch.tensor(v), torch.tensor(w))
    assert_matches(got.numpy(), np.outer(v, w))


def test_column_broadcast_of_non_contiguous_operands():
    x = typed((64, 48), 0, np.float64)
    m = typed((64, 10), 1, np.float64)
    col = torch.tensor(m)[:, 3:4]  # a strided column
    np.testing.assert_array_equal((torch.tensor(x) + col).numpy(), x + m[:, 3:4])
    xt = torch.tensor(x.T.copy()).t()  # a transposed whole operand
    np.testing.assert_array_equal((xt * col).numpy(), x * m[:, 3:4])
    rows = torch.tensor(x)[::2]  # sliced rows
    np.testing.assert_array_equal((rows - col[::2]).numpy(), x[::2] - m[::2, 3:4])
    v = typed((128,), 2, np.float64)
    np.testing.assert_array_equal(
        (torch.tensor(v)[::2][:, None] * torch.tensor(v)[1::2]).numpy(),
        np.outer(v[::2], v[1::2]),
    )


def test_column_broadcast_zero_size():
    assert tuple((torch.zeros(0, 1) + torch.ones(5)).shape) == (0, 5)
    assert tuple((torch.zeros(3, 1) * torch.ones(3, 0)).shape) == (3, 0)
    assert tuple(torch.outer(torch.ones(0), torch.ones(4)).shape) == (0, 4)


def test_column_broadcast_is_the_same_at_one_and_two_threads():
    x = torch.tensor(typed((700, 515), 0, np.float32))
    v = torch.tensor(typed((700,), 1, np.float32))
    w = torch.tensor(typed((515,), 2, np.float32))
    before = torch.get_num_threads()
    try:
        results = []
        for n in (1, 2):
            torch.set_num_threads(n)
            results.append(((x / v[:, None]).numpy(), torch.outer(v, w).numpy()))
    finally:
        torch.set_num_threads(before)
    for one, two in zip(*results):
        assert one.tobytes() == two.tobytes()
