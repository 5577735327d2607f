"""Issue 11, norms / scatter_reduce / unique: behaviour the op database cannot check
(gradients at ties and zeros, where gradcheck does not apply; nodes without a
derivative). The expected numbers are torch 2.15's, printed by the same calls there;
checked by running this file with `ferrograd` bound to torch (sys.modules['ferrograd']
= torch, pytest --noconftest)."""

import ferrograd as torch
import pytest

F64 = torch.float64
X = [[1.0, 5.0, 3.0], [2.0, 0.0, 6.0]]
INDEX = [[0, 1, 0], [1, 1, 0]]
SRC = [[1.0, 5.0, 0.0], [2.0, 5.0, 6.0]]  # ties with X and each other, and a zero

# reduce, include_self -> (result, x's gradient, src's gradient) for the gradient
# [[1, 2, 3], [4, 5, 6]]: amax / amin share it evenly among tied values (counting x's
# own value even when include_self=False, as torch does); prod is exact through zeros.
TORCH_SCATTER_REDUCE = {
    ("amax", True): (
        [[1.0, 5.0, 6.0], [2.0, 5.0, 6.0]],
        [[0.5, 2.0, 0.0], [2.0, 0.0, 6.0]],
        [[0.5, 2.5, 0.0], [2.0, 2.5, 3.0]],
    ),
    ("amax", False): (
        [[1.0, 5.0, 6.0], [2.0, 5.0, 6.0]],
        [[0.0, 2.0, 0.0], [0.0, 0.0, 6.0]],
        [[0.5, 2.5, 0.0], [2.0, 2.5, 3.0]],
    ),
    ("amin", True): (
        [[1.0, 5.0, 0.0], [2.0, 0.0, 6.0]],
        [[0.5, 2.0, 0.0], [2.0, 5.0, 6.0]],
        [[0.5, 0.0, 3.0], [2.0, 0.0, 0.0]],
    ),
    ("amin", False): (
        [[1.0, 5.0, 0.0], [2.0, 5.0, 6.0]],
        [[0.0, 2.0, 0.0], [0.0, 0.0, 6.0]],
        [[0.5, 2.5, 3.0], [2.0, 2.5, 0.0]],
    ),
    ("prod", True): (
        [[1.0, 5.0, 0.0], [4.0, 0.0, 6.0]],
        [[1.0, 2.0, 0.0], [8.0, 125.0, 6.0]],
        [[1.0, 0.0, 54.0], [8.0, 0.0, 0.0]],
    ),
    ("prod", False): (
        [[1.0, 5.0, 0.0], [2.0, 25.0, 6.0]],
        [[0.0, 2.0, 0.0], [0.0, 0.0, 6.0]],
        [[1.0, 25.0, 18.0], [4.0, 25.0, 0.0]],
    ),
    ("mean", True): (
        [[1.0, 5.0, 3.0], [2.0, 10 / 3, 6.0]],
        [[0.5, 2.0, 1.0], [2.0, 5 / 3, 6.0]],
        [[0.5, 5 / 3, 1.0], [2.0, 5 / 3, 1.0]],
    ),
    ("mean", False): (
        [[1.0, 5.0, 3.0], [2.0, 5.0, 6.0]],
        [[0.0, 2.0, 0.0], [0.0, 0.0, 6.0]],
        [[1.0, 2.5, 1.5], [4.0, 2.5, 1.5]],
    ),
}


def _close(got, want):
    assert got == pytest.approx(want, rel=1e-12), (got, want)


@pytest.mark.parametrize("reduce, include_self", list(TORCH_SCATTER_REDUCE))
def test_scatter_reduce_ties_and_zeros_as_torch(reduce, include_self):
    x = torch.tensor(X, dtype=F64, requires_grad=True)
    src = torch.tensor(SRC, dtype=F64, requires_grad=True)
    y = x.scatter_reduce(0, torch.tensor(INDEX), src, reduce, include_self=include_self)
    y.backward(torch.arange(1.0, 7.0, dtype=F64).view(2, 3))
    result, gx, gsrc = TORCH_SCATTER_REDUCE[(reduce, include_self)]
    for got, want in ((y, result), (x.grad, gx), (src.grad, gsrc)):
        for g, w in zip(got.tolist(), want):
            _close(g, w)


def test_scatter_reduce_prod_two_zeros_in_one_place():
    x = torch.tensor([1.0, 2.0], dtype=F64, requires_grad=True)
    src = torch.tensor([0.0, 0.0, 3.0], dtype=F64, requires_grad=True)
    x.scatter_reduce(0, torch.tensor([0, 0, 1]), src, "prod").sum().backward()
    assert x.grad.tolist() == [0.0, 3.0]
    assert src.grad.tolist() == [0.0, 0.0, 2.0]


def test_scatter_reduce_in_place_records_the_node():
    x = torch.tensor(X, dtype=F64, requires_grad=True)
    y = x * 1
    out = y.scatter_reduce_(0, torch.tensor(INDEX), torch.tensor(SRC, dtype=F64), "sum")
    assert out is y
    assert y.grad_fn.name() == "ScatterReduceBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 2


@pytest.mark.parametrize("ord", [2, 1, float("inf"), -float("inf"), 3, 1.5, 0.5, -1])
def test_vector_norm_gradient_at_a_zero_slice_is_zero(ord):
    # torch: [[0, 0], [1, -1]] along dim 1; the zero row's gradient is 0 for every order
    x = torch.tensor([[0.0, 0.0], [1.0, -1.0]], dtype=F64, requires_grad=True)
    torch.linalg.vector_norm(x, ord, dim=1).sum().backward()
    want = {2: 2**-0.5, 1: 1.0, 3: 2 ** (-2 / 3), 1.5: 2 ** (-1 / 3), 0.5: 2.0, -1: 0.25}
    w = want.get(ord, 0.5)
    _close(x.grad.view(-1).tolist(), [0.0, 0.0, w, -w])


def test_vector_norm_ord_0_has_no_gradient():
    x = torch.tensor([1.0, 0.0, 2.0], dtype=F64, requires_grad=True)
    y = torch.linalg.vector_norm(x, 0)
    assert y.item() == 2.0
    assert y.grad_fn.name() == "LinalgVectorNormBackward0"
    y.backward()
    assert x.grad is None


def test_norm_method_and_saved_values():
    x = torch.tensor([[3.0, 4.0], [0.0, 1.0]], dtype=F64, requires_grad=True)
    y = x.norm(p=3, dim=1, keepdim=True)
    node = y.grad_fn
    assert node.name() == "LinalgVectorNormBackward0"
    assert node._saved_ord == 3.0
    assert node._saved_keepdim is True
    assert node._saved_dim == (1,)
    assert node._saved_result.tolist() == y.tolist()


@pytest.mark.parametrize(
    "call, node, derivative",
    [
        (lambda x: torch.unique(x), "Unique2Backward0", "_unique2"),
        (lambda x: torch.unique(x, return_counts=True)[0], "Unique2Backward0", "_unique2"),
        (lambda x: torch.unique(x.view(3, 1), dim=0), "UniqueDimBackward0", "unique_dim"),
        (lambda x: torch.unique_consecutive(x), "UniqueConsecutiveBackward0", "unique_consecutive"),
    ],
)
def test_unique_records_a_node_without_derivative(call, node, derivative):
    x = torch.tensor([3.0, 1.0, 3.0], requires_grad=True)
    y = call(x)
    assert y.requires_grad and y.grad_fn.name() == node
    with pytest.raises(NotImplementedError) as info:
        y.sum().backward()
    assert str(info.value) == f"the derivative for '{derivative}' is not implemented."


def test_unique_inverse_and_counts_need_no_grad():
    x = torch.tensor([3.0, 1.0, 3.0], requires_grad=True)
    values, inverse, counts = torch.unique(x, return_inverse=True, return_counts=True)
    assert values.tolist() == [1.0, 3.0]
    assert inverse.tolist() == [1, 0, 1] and counts.tolist() == [1, 2]
    assert not inverse.requires_grad and not counts.requires_grad
