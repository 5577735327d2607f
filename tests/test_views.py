"""View semantics: a view shares its base's storage (data_ptr, storage_offset, stride
say where each element lives), its version counter and `_base`; indexing with ints,
slices with steps, None and Ellipsis gives numpy's results as views; `Size` prints as
torch's does; shapes too big to allocate fail at once with torch's error.

Every expected stride, offset and flag here was read off PyTorch (the same file runs
against it through the shim described in conftest.py).
"""

import ferrograd as torch
import numpy as np
import pytest

ITEM = 8  # bytes per float64 element: every tensor here is float64


def fresh(*shape):
    """A float64 tensor that is not a view (no `_base`), holding 0, 1, 2, ..."""
    return torch.tensor(np.arange(float(np.prod(shape))).reshape(shape))


def assert_view_of(v, base):
    """`v` is a view of `base`, and its (stride, storage_offset) address its elements
    inside base's storage (checked against numpy's as_strided over base's values)."""
    assert v._base is base
    if v.numel() > 0:  # an empty tensor's data_ptr is unspecified
        assert v.data_ptr() == base.data_ptr() + v.storage_offset() * ITEM
    flat = base.numpy().reshape(-1)[v.storage_offset() :]
    want = np.lib.stride_tricks.as_strided(
        flat, tuple(v.shape), [s * ITEM for s in v.stride()], writeable=False
    )
    np.testing.assert_array_equal(v.numpy(), want)


# (expression on x = fresh(3, 4), shape, stride, storage_offset, is_contiguous)
VIEWS = [
    ("x[1]", (4,), (1,), 4, True),
    ("x[:, 1:3]", (3, 2), (4, 1), 1, False),
    ("x[:, ::2]", (3, 2), (4, 2), 0, False),
    ("x[1:, 1::2]", (2, 2), (4, 2), 5, False),
    ("x[-1, -2]", (), (), 10, True),
    ("x[None, ..., -1]", (1, 3), (12, 4), 3, False),
    ("x[:, None]", (3, 1, 4), (4, 4, 1), 0, True),
    ("x[...]", (3, 4), (4, 1), 0, True),
    ("x[1:][::2]", (1, 4), (8, 1), 4, True),
    ("x.t()", (4, 3), (1, 4), 0, False),
    ("x.T", (4, 3), (1, 4), 0, False),
    ("x.mT", (4, 3), (1, 4), 0, False),
    ("x.t()[1:]", (3, 3), (1, 4), 1, False),
    ("x.view(2, 6)", (2, 6), (6, 1), 0, True),
    ("x.view(-1)", (12,), (1,), 0, True),
    ("x.reshape(2, 6)", (2, 6), (6, 1), 0, True),
    ("x.flatten()", (12,), (1,), 0, True),
    ("x.unflatten(1, (2, 2))", (3, 2, 2), (4, 2, 1), 0, True),
    ("x.permute(1, 0)", (4, 3), (1, 4), 0, False),
    ("x.transpose(0, 1)", (4, 3), (1, 4), 0, False),
    ("x.expand(2, 3, 4)", (2, 3, 4), (0, 4, 1), 0, False),
    ("x[:, :1].expand(3, 5)", (3, 5), (4, 0), 0, False),
    ("x.unsqueeze(1)", (3, 1, 4), (4, 4, 1), 0, True),
    ("x[:, None].squeeze(1)", (3, 4), (4, 1), 0, True),
    ("x.narrow(0, 1, 2)", (2, 4), (4, 1), 4, True),
    ("x.select(1, 2)", (3,), (4,), 2, False),
    ("x.unbind(1)[2]", (3,), (4,), 2, False),
    ("x.split(3, 1)[1]", (3, 1), (4, 1), 3, False),
    ("x.chunk(2, 0)[1]", (1, 4), (4, 1), 8, True),
    ("x.diagonal()", (3,), (5,), 0, False),
    ("x.diagonal(1)", (3,), (5,), 1, False),
    ("x.as_strided((2, 2), (1, 4), 1)", (2, 2), (1, 4), 1, False),
]


@pytest.mark.parametrize(
    "expr, shape, stride, offset, contiguous", VIEWS, ids=[v[0] for v in VIEWS]
)
def test_view_layout(expr, shape, stride, offset, contiguous):
    x = fresh(3, 4)
    v = eval(expr, {"x": x})
    assert tuple(v.shape) == shape
    assert v.stride() == stride
    assert v.storage_offset() == offset
    assert v.is_contiguous() is contiguous
    assert_view_of(v, x)


def test_view_of_a_view_has_the_root_as_base():
    x = fresh(3, 4)
    assert x[1:][::2]._base is x
    assert x.t().t()._base is x
    assert x.view(12).view(2, 6)._base is x
    assert x._base is None


def test_copies_are_not_views():
    x = fresh(3, 4)
    for y in (x.clone(), x.t().contiguous(), x.t().reshape(12), x.t().flatten()):
        assert y._base is None
        assert y.is_contiguous()
        assert y.data_ptr() != x.data_ptr()


def test_version_counter_is_shared():
    x = fresh(3, 4)
    row = x[1]
    every_other = row[::2]
    assert x._version == row._version == every_other._version == 0
    row.add_(100.0)
    assert x._version == row._version == every_other._version == 1
    np.testing.assert_array_equal(x.numpy()[1], [104.0, 105.0, 106.0, 107.0])
    np.testing.assert_array_equal(every_other.numpy(), [104.0, 106.0])
    assert x.clone()._version == 0


def test_writes_through_a_view_reach_the_base():
    x = fresh(3, 4)
    x.t()[1].add_(1.0)  # column 1 of x
    np.testing.assert_array_equal(x.numpy()[:, 1], [2.0, 6.0, 10.0])


def test_contiguous():
    x = fresh(3, 4)
    assert x.contiguous() is x
    t = x.t()
    c = t.contiguous()
    assert c is not t
    assert c.is_contiguous()
    assert c.stride() == (3, 1)
    assert c.data_ptr() != x.data_ptr()
    np.testing.assert_array_equal(c.numpy(), x.numpy().T)


@pytest.mark.parametrize(
    "make, stride, contiguous",
    [
        (lambda: torch.empty(0, 3), (3, 1), True),
        (lambda: torch.empty(2, 0, 3), (3, 3, 1), True),
        (lambda: torch.empty(0, 3).t(), (1, 3), True),  # no elements: always contiguous
        (lambda: torch.empty(3, 1).t(), (1, 1), True),  # size-1 dims' strides do not matter
        (lambda: fresh(3, 4)[:1], (4, 1), True),
        (lambda: fresh(3, 4)[:, :1], (4, 1), False),
        (lambda: fresh(3, 4)[::2], (8, 1), False),
        (lambda: torch.tensor(5.0), (), True),
    ],
    ids=[
        "empty(0,3)",
        "empty(2,0,3)",
        "empty(0,3).t()",
        "empty(3,1).t()",
        "x[:1]",
        "x[:,:1]",
        "x[::2]",
        "0-dim",
    ],
)
def test_is_contiguous(make, stride, contiguous):
    t = make()
    assert t.stride() == stride
    assert t.is_contiguous() is contiguous


def test_reshape_views_when_it_can_and_copies_when_it_must():
    x = fresh(3, 4)
    assert x.reshape(4, 3)._base is x
    assert x[:, ::2].reshape(6)._base is x  # uniform stride 2: still a view
    y = x.t().reshape(12)
    assert y._base is None
    np.testing.assert_array_equal(y.numpy(), x.numpy().T.reshape(12))


# ----------------------------------------------------------------------------- indexing

INDEX_KEYS = [
    0,
    -1,
    2,
    slice(1, None),
    slice(None, None, 2),
    slice(-2, None),
    slice(None, -1, 3),
    slice(5, 10),
    slice(-100, 100),
    slice(2, 1),
    (1, 2),
    (-1, -2, -3),
    (slice(None), 1),
    (Ellipsis, 1),
    (1, Ellipsis),
    (None,),
    (None, 1),
    (Ellipsis, None),
    (slice(None), None, slice(None), None),
    (0, Ellipsis, None, slice(1, 4, 2)),
    (None, Ellipsis, None),
    Ellipsis,
    (),
    (slice(None, None, 3), None, -1, slice(None, None, 4)),
    (slice(1, 2), slice(3, None, 2)),
]


@pytest.mark.parametrize("key", INDEX_KEYS, ids=[repr(k) for k in INDEX_KEYS])
def test_basic_indexing_matches_numpy(key):
    x = fresh(3, 4, 5)
    v = x[key]
    want = x.numpy()[key]
    assert tuple(v.shape) == want.shape
    np.testing.assert_array_equal(v.numpy(), want)
    assert_view_of(v, x)


@pytest.mark.parametrize(
    "key, exc, message",
    [
        (5, IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
        ((slice(None), -5), IndexError, "index -5 is out of bounds for dimension 1 with size 4"),
        (slice(None, None, -1), ValueError, "step must be greater than zero"),
        ((1, 2, 3), IndexError, "too many indices for tensor of dimension 2"),
    ],
)
def test_indexing_errors(key, exc, message):
    with pytest.raises(exc) as info:
        fresh(3, 4)[key]
    assert str(info.value) == message


@pytest.mark.parametrize(
    "expr, exc, message",
    [
        (
            "x.t().view(-1)",
            RuntimeError,
            (
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            ),
        ),
        ("x.view(5)", RuntimeError, "shape '[5]' is invalid for input of size 12"),
        ("x.reshape(5)", RuntimeError, "shape '[5]' is invalid for input of size 12"),
        (
            "x.expand(2, 3)",
            RuntimeError,
            (
                "The expanded size of the tensor (3) must match the existing size (4) at "
                "non-singleton dimension 1.  Target sizes: [2, 3].  Tensor sizes: [3, 4]"
            ),
        ),
        (
            "x.transpose(0, 2)",
            IndexError,
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        ),
        ("x.narrow(1, 3, 2)", RuntimeError, "start (3) + length (2) exceeds dimension size (4)."),
        (
            "x.select(0, 3)",
            IndexError,
            "select(): index 3 out of range for tensor of size [3, 4] at dimension 0",
        ),
        (
            "x.unflatten(1, (3, 2))",
            RuntimeError,
            (
                "unflatten: Provided sizes [3, 2] don't multiply up to the size of dim 1 (4) in "
                "the input tensor"
            ),
        ),
    ],
    ids=lambda v: v if isinstance(v, str) and v.startswith("x.") else "",
)
def test_view_errors(expr, exc, message):
    with pytest.raises(exc) as info:
        eval(expr, {"x": fresh(3, 4)})
    assert str(info.value) == message


# ----------------------------------------------------------------------------- Size


def test_size():
    x = fresh(2, 3)
    mod = torch.__name__
    assert repr(x.shape) == f"{mod}.Size([2, 3])"
    assert str(x.shape) == f"{mod}.Size([2, 3])"
    assert repr(torch.Size([])) == f"{mod}.Size([])"
    assert isinstance(x.shape, torch.Size)
    assert isinstance(x.shape, tuple)
    assert x.shape == (2, 3)
    assert x.size() == x.shape
    assert x.size(-1) == 3
    assert x.shape[1:] == (3,)
    assert isinstance(x.shape[1:], torch.Size)
    assert x.shape.numel() == 6


# ----------------------------------------------------------------------------- huge shapes


@pytest.mark.parametrize("factory", ["empty", "zeros"])
def test_size_overflow_raises_before_allocating(factory):
    with pytest.raises(RuntimeError) as info:
        getattr(torch, factory)(2**62, 8)
    assert (
        str(info.value) == "Storage size calculation overflowed with sizes=[4611686018427387904, 8]"
    )


def test_negative_size_raises():
    with pytest.raises(RuntimeError) as info:
        torch.empty(-1)
    assert str(info.value) == "Trying to create tensor with negative dimension -1: [-1]"


def test_expand_to_an_overflowing_numel_raises():
    with pytest.raises(RuntimeError, match="overflow"):
        torch.zeros(1).expand(2**62, 8)


def test_allocation_beyond_memory_raises(run_isolated):
    # 4 PiB of float32: no machine has it. Run apart, so an allocator that aborts instead of
    # raising fails this test rather than the whole session.
    run_isolated(
        """
        try:
            torch.empty(2**50)
        except RuntimeError as e:
            assert "allocate" in str(e), str(e)
        else:
            raise AssertionError("no error")
        """
    )
