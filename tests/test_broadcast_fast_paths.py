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
