"""Issue 11, index writes: index_add, index_copy, take, masked_select and masked_scatter —
the errors (torch 2.15's class and text, run on torch), the in-place forms and the
gradients the op database cannot pin (tests/opdb.py, index-write block, has the rest)."""

import ferrograd as torch
import pytest

x = torch.zeros(3, 4)
s = torch.ones(2, 4)
L = torch.tensor

ERRORS = [
    (lambda: x.index_add(0, L([0, 5]), s), RuntimeError,
     "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda: x.index_add(0, L([0, 1]), torch.ones(3, 4)), RuntimeError,
     "index_add_(): Number of indices (2) should be equal to source.size(dim): (3), for dim: 0"),
    (lambda: x.index_add(0, L([0.0, 1]), s), RuntimeError,
     "index_add_(): Expected dtype int32/int64 for index but got: Float"),
    (lambda: x.index_add(0, L([[0, 1]]), s), IndexError,
     "index_add_(): Index is supposed to be a vector, but got dim: 2 with type: Long and "
     "size: [1, 2]"),
    (lambda: x.index_add(0, L([0, 1]), s.double()), RuntimeError,
     "index_add_(): self (Float) and source (Double) must have the same scalar type"),
    (lambda: x.index_copy(0, L([0, 5]), s), IndexError,
     "index_copy_(): index 5 is out of bounds for dimension 0 with size 3"),
    (lambda: x.index_copy(0, L([0, 1]), torch.ones(3, 4)), IndexError,
     "index_copy_(): Number of indices (2) should be equal to source.size(dim) (3)"),
    (lambda: x.index_copy(0, L([0, 1], dtype=torch.int32), s), RuntimeError,
     "index_copy_(): Expected a long tensor for index, but got Int"),
    (lambda: x.index_copy(0, L([0, 1]), s.double()), RuntimeError,
     "index_copy_(): self and source expected to have the same dtype, but got (self) Float "
     "and (source) Double"),
    (lambda: x.take(L([12])), IndexError,
     "out of range: tried to access index 12 on a tensor of 12 elements."),
    (lambda: x.take(L([-13])), IndexError,
     "out of range: tried to access index -13 on a tensor of 12 elements."),
    (lambda: x.take(L([1.0])), RuntimeError,
     "take(): Expected a long tensor for index, but got Float"),
    (lambda: x.masked_select(L([True, False])), RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 1"),
    (lambda: x.masked_select(L([1, 0, 1, 0])), RuntimeError,
     "masked_select: expected BoolTensor for mask"),
    (lambda: x.masked_scatter(L([True, False, True, True]), torch.ones(2)), RuntimeError,
     "Number of elements of source < number of ones in mask"),
    (lambda: x.masked_scatter(L([1, 0, 1, 0]), torch.ones(12)), RuntimeError,
     "masked_scatter_ only supports boolean masks, but got mask with dtype Long"),
    (lambda: x.masked_scatter(L([True, False, True, True]), torch.ones(12).double()), RuntimeError,
     "masked_scatter: expected self and source to have same dtypes but gotFloat and Double"),
]


@pytest.mark.parametrize("call, kind, message", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors(call, kind, message):
    with pytest.raises(kind) as info:
        call()
    assert str(info.value) == message


def test_index_add_alpha_and_int32_index():
    r = x.index_add(0, L([0, 1], dtype=torch.int32), s, alpha=2)
    assert r.tolist() == [[2.0] * 4, [2.0] * 4, [0.0] * 4]
    r = x.index_add(1, L([0, 0, 3]), torch.arange(9.0).reshape(3, 3), alpha=2.5)
    assert r.tolist() == [[2.5, 0, 0, 5], [17.5, 0, 0, 12.5], [32.5, 0, 0, 20]]
    one = torch.ones(1, dtype=torch.long)
    ints = torch.zeros(3, dtype=torch.long).index_add(0, L([0]), one, alpha=2)
    assert ints.tolist() == [2, 0, 0] and ints.dtype == torch.int64


def test_in_place_forms_write_into_self():
    y = torch.zeros(3, 4)
    assert y.index_add_(0, L([0, 0]), torch.ones(2, 4)) is y
    assert y.index_copy_(1, L([3]), torch.full((3, 1), 7.0)) is y
    assert y.masked_scatter_(L([True, False, False, False]), L([5.0, 6, 8])) is y
    assert y.tolist() == [[5, 2, 2, 7], [6, 0, 0, 7], [8, 0, 0, 7]]


def test_gradients_of_writes_and_reads():
    a = torch.arange(12.0, dtype=torch.float64).reshape(3, 4).requires_grad_()
    b = torch.arange(8.0, dtype=torch.float64).reshape(2, 4).requires_grad_()
    r = a.index_add(0, L([2, 2]), b, alpha=3)
    assert r.grad_fn.name() == "IndexAddBackward0"
    ga, gb = torch.autograd.grad((r * r).sum(), [a, b])
    assert ga.tolist() == [[0, 2, 4, 6], [8, 10, 12, 14], [40, 54, 68, 82]]
    assert gb.tolist() == [[120, 162, 204, 246], [120, 162, 204, 246]]
    r = a.index_copy(0, L([2, 0]), b)
    ga, gb = torch.autograd.grad((r * r).sum(), [a, b])
    assert ga.tolist() == [[0] * 4, [8, 10, 12, 14], [0] * 4]
    assert gb.tolist() == [[0, 2, 4, 6], [8, 10, 12, 14]]
    r = a.take(L([[1, 1], [11, 0]]))
    (ga,) = torch.autograd.grad(r.sum(), a)
    assert ga.tolist() == [[1, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]]
    r = a.masked_scatter(L([[True], [False], [True]]), b)
    assert r.grad_fn.name() == "MaskedScatterBackward0"
    ga, gb = torch.autograd.grad(r.sum(), [a, b])
    assert ga.tolist() == [[0] * 4, [1] * 4, [0] * 4]
    assert gb.tolist() == [[1] * 4, [1] * 4]


# ---------------------------------------------- the in-place forms write into their memory


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("n", [8, 600])  # one thread; rows split over threads
@pytest.mark.parametrize("alpha", [None, 1, -2.5])
def test_C26_index_add_in_place_keeps_its_memory(dim, n, alpha):
    import numpy as np

    rng = np.random.default_rng(dim * 100 + n)
    a = rng.standard_normal((n, n + 3)) if dim == 0 else rng.standard_normal((n + 3, n))
    index = rng.integers(0, n, size=n // 2 + 1)  # repeats add up in order
    source_shape = list(a.shape)
    source_shape[dim] = len(index)
    b = rng.standard_normal(source_shape)
    x = torch.from_numpy(a.copy())
    ptr, version = x.data_ptr(), x._version
    kwargs = {} if alpha is None else {"alpha": alpha}
    x.index_add_(dim, L(index), torch.from_numpy(b), **kwargs)
    expected = a.copy()
    scaled = b if alpha in (None, 1) else alpha * b
    for k, i in enumerate(index):
        if dim == 0:
            expected[i] += scaled[k]
        else:
            expected[:, i] += scaled[:, k]
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-14, atol=1e-14)
    assert x.data_ptr() == ptr and x._version == version + 1
    x.index_copy_(dim, L(index[:1]), torch.from_numpy(b).narrow(dim, 0, 1))
    if dim == 0:
        expected[index[0]] = b[0]
    else:
        expected[:, index[0]] = b[:, 0]
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-14, atol=1e-14)


def test_index_add_in_place_on_a_view_and_with_errors():
    base = torch.zeros(5, 2)
    view = base[1:4]  # contiguous, at an offset
    view.index_add_(0, L([2, 0, 2]), torch.ones(3, 2))
    assert base.tolist() == [[0, 0], [1, 1], [0, 0], [2, 2], [0, 0]]
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 0 with size 3"):
        view.index_add_(0, L([0, 5]), torch.ones(2, 2))
    base.zero_()
    strided = torch.zeros(2, 6)[:, ::2]  # not contiguous: computed, then copied in
    strided.index_add_(1, L([1]), torch.ones(2, 1))
    assert strided.tolist() == [[0, 1, 0], [0, 1, 0]]


OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor "
    "refer to a single memory location. Please clone() the tensor before performing the "
    "operation."
)


def test_index_writes_refuse_a_source_or_index_in_their_memory():
    import re

    x = torch.arange(6.0).reshape(3, 2)
    with pytest.raises(RuntimeError, match=re.escape(OVERLAP)):
        x.index_add_(0, L([0, 1, 2]), x)
    with pytest.raises(RuntimeError, match=re.escape(OVERLAP)):
        x.index_copy_(0, L([0]), x[1:2])
    ints = torch.tensor([0, 1, 2])
    with pytest.raises(RuntimeError, match=re.escape(OVERLAP)):
        ints.index_add_(0, ints, torch.ones(3, dtype=torch.int64))
    x.index_copy_(0, L([0, 1, 2]), x.clone().flip(0))
    assert x.tolist() == [[4, 5], [2, 3], [0, 1]]
