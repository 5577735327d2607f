"""Issue 11, composites: what the op database cannot hold (creation ops, warnings,
tensor-valued arguments, the sublist form of einsum, Tensor methods). Values from numpy
or pinned from torch 2.15; the op database (tests/opdb.py) covers the rest."""

import warnings

import ferrograd as torch
import numpy as np
import pytest


def test_logspace_matches_torch():
    np.testing.assert_allclose(torch.logspace(0, 2, 5).numpy(), np.logspace(0, 2, 5), rtol=1e-6)
    assert torch.logspace(0.0, 2.0, 5).dtype == torch.float32
    got = torch.logspace(-1, 3, 7, base=2.0, dtype=torch.float64).numpy()
    np.testing.assert_allclose(got, np.logspace(-1, 3, 7, base=2.0), rtol=1e-15)
    # integer results truncate (torch 2.15: [1, 3, 10, 31, 100])
    assert torch.logspace(0, 2, 5, dtype=torch.int64).tolist() == [1, 3, 10, 31, 100]
    assert torch.logspace(torch.tensor(0), 2, 1).tolist() == [1.0]
    assert torch.logspace(0, 2, 0).shape == (0,)
    assert torch.logspace(0, 1, 3, requires_grad=True).requires_grad


@pytest.mark.parametrize(
    "row, col, offset",
    [(3, 3, 0), (3, 4, -1), (4, 3, 1), (0, 4, 0), (3, 5, 10), (3, 5, -10), (5, 1, 0)],
)
def test_triangle_indices_match_numpy(row, col, offset):
    for ours, ref in ((torch.tril_indices, np.tril_indices), (torch.triu_indices, np.triu_indices)):
        got = ours(row, col, offset)
        assert got.dtype == torch.int64 and got.shape[0] == 2
        np.testing.assert_array_equal(got.numpy(), np.stack(ref(row, offset, col)))
    assert torch.tril_indices(3, 3, dtype=torch.int32).dtype == torch.int32


def test_meshgrid_warns_once_without_indexing():
    """torch's TORCH_WARN_ONCE: given once per process, every time with set_warn_always."""
    v = torch.ones(3)
    torch.set_warn_always(True)
    try:
        with pytest.warns(UserWarning, match="it will be required to pass the indexing arg"):
            a, b = torch.meshgrid(v, torch.ones(2))
    finally:
        torch.set_warn_always(False)
    assert a.shape == b.shape == (3, 2)  # "ij"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.meshgrid(v, v)  # once given, not again
        torch.meshgrid(v, v, indexing="xy")


def test_chain_matmul_warns_deprecated():
    torch.set_warn_always(True)
    try:
        with pytest.warns(UserWarning, match="torch.chain_matmul is deprecated"):
            torch.chain_matmul(torch.ones(2, 3), torch.ones(3, 2))
    finally:
        torch.set_warn_always(False)


def test_tensor_valued_arguments():
    x = torch.arange(12.0).reshape(3, 4)
    parts = torch.tensor_split(x, torch.tensor([1, 3]), dim=1)
    assert [tuple(p.shape) for p in parts] == [(3, 1), (3, 2), (3, 1)]
    assert [tuple(p.shape) for p in torch.tensor_split(x, torch.tensor(2))] == [(2, 4), (1, 4)]
    assert [tuple(p.shape) for p in x.tensor_split(sections=3, dim=1)] == [(3, 2), (3, 1), (3, 1)]
    y = torch.ones(4, 5)
    assert torch.tensordot(x, y, dims=torch.tensor(1)).shape == (3, 5)
    assert torch.tensordot(x, y, dims=torch.tensor([[1], [0]])).shape == (3, 5)


def test_einsum_forms():
    a = torch.arange(6.0).reshape(2, 3)
    b = torch.arange(12.0).reshape(3, 4)
    want = (a @ b).numpy()
    np.testing.assert_array_equal(torch.einsum("ij,jk->ik", [a, b]).numpy(), want)
    np.testing.assert_array_equal(torch.einsum(a, [0, 1], b, [1, 2], [0, 2]).numpy(), want)
    np.testing.assert_array_equal(torch.einsum("ij, jk -> ik", a, b).numpy(), want)
    # implicit output: ASCII order, uppercase first (torch: 'Ba' keeps B first)
    assert torch.einsum("Ba", a).shape == (2, 3)
    assert torch.einsum("ba", a).shape == (3, 2)
    assert torch.einsum("...", a).shape == (2, 3)


def test_methods_and_properties():
    x = torch.ones(3, 4, dtype=torch.complex128)
    assert x.H.shape == (4, 3) and torch.ones(2, 3, 4).mH.shape == (2, 4, 3)
    with pytest.warns(UserWarning, match="Tensor.H is deprecated on 0-D tensors"):
        assert torch.tensor(2.0).H.shape == ()
    y = torch.tensor([[1.0, 0.0], [2.0, 3.0]])
    assert y.all().item() is False and y.any(1).tolist() == [True, True]
    assert y.count_nonzero(0).tolist() == [2, 1]
    assert torch.all(torch.zeros(0, 3)).item() is True  # empty: vacuously true
    assert torch.any(torch.zeros(0, 3), 0).tolist() == [False] * 3
    assert torch.all(torch.tensor([1, 0], dtype=torch.uint8)).dtype == torch.uint8
    assert y.kron(y).shape == (4, 4) and y.inner(y).shape == (2, 2)
    assert y.matrix_power(3).tolist() == (y @ y @ y).tolist()
    assert y.take_along_dim(torch.tensor([[1], [0]]), 1).tolist() == [[0.0], [2.0]]
    assert torch.numel(y) == 4
    assert torch.allclose(torch.matrix_power(y, -1), torch.linalg.inv(y))
    assert torch.cartesian_prod(torch.ones(3)).shape == (3,)


def test_matrix_power_zero_gradient():
    """n == 0 is the identity whatever A is: its gradient is zero (torch's graph)."""
    a = torch.ones(2, 2, dtype=torch.float64, requires_grad=True)
    out = torch.matrix_power(a, 0)
    assert out.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    out.sum().backward()
    assert a.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def _chain(y, depth=4):
    """The first nodes of y's graph, following each node's first input."""
    names, node = [], y.grad_fn
    while node is not None and len(names) < depth:
        names.append(node.name())
        node = node.next_functions[0][0] if node.next_functions else None
    return names


def _grad(x):
    return x.detach().clone().requires_grad_()


@pytest.mark.parametrize(
    "a, b, chain",
    [
        # kron: the broadcast product of the interleaved dims, merged by _unsafe_view
        ("kron", (2, 3), ["UnsafeViewBackward0", "MulBackward0"]),
        # a grad-requiring matrix @ a batch: b's batch folded into one mm, transposed back
        ((3, 4), (2, 4, 2), ["CloneBackward0", "TransposeBackward0", "UnsafeViewBackward0",
                             "MmBackward0"]),
        ((3, 4), (2, 2, 4, 2), ["CloneBackward0", "TransposeBackward0", "UnsafeViewBackward0",
                                "MmBackward0"]),
        ((4,), (2, 4, 2), ["UnsafeViewBackward0", "MvBackward0"]),
        ((1, 4), (2, 4, 3), ["TransposeBackward0", "UnsafeViewBackward0", "MmBackward0"]),
        # a grad-requiring batch of one is dropped, not expanded
        ((1, 3, 4), (2, 4, 2), ["CloneBackward0", "TransposeBackward0", "UnsafeViewBackward0",
                                "MmBackward0"]),
        ((2, 3, 4), (4, 2), ["UnsafeViewBackward0", "MmBackward0"]),
        # vector @ matrix: torch's matmul squeezes its product in place
        ((4,), (4, 3), ["SqueezeBackward4", "MmBackward0", "UnsqueezeBackward0"]),
    ],
)  # fmt: skip
def test_graphs_that_end_in_unsafe_view(a, b, chain):
    rng = np.random.default_rng(0)
    if a == "kron":
        x, y = rng.standard_normal(b), rng.standard_normal((2, 2))
        left = _grad(torch.tensor(x))
        out = torch.kron(left, torch.tensor(y))
        ref, fn = np.kron(x, y), lambda t: torch.kron(t, torch.tensor(y))
        assert out.grad_fn._saved_self_sym_sizes == (2, 2, 3, 2)
    else:
        x, y = rng.standard_normal(a), rng.standard_normal(b)
        left = _grad(torch.tensor(x))
        out = left @ torch.tensor(y)
        ref, fn = np.matmul(x, y), lambda t: t @ torch.tensor(y)
    assert _chain(out, len(chain)) == chain
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-12, atol=1e-12)
    assert torch.autograd.gradcheck(fn, (left,))


def test_matmul_shape_errors_follow_the_path_taken():
    a, b = torch.ones(3, 4, dtype=torch.float64), torch.ones(2, 5, 2, dtype=torch.float64)
    with pytest.raises(RuntimeError, match=r"^mm: mat1 and mat2 shapes cannot be multiplied "
                       r"\(4x5 and 4x3\)$"):
        _grad(a) @ b
    with pytest.raises(RuntimeError, match=r"^mm: mat1 and mat2 shapes cannot be multiplied "
                       r"\(8x5 and 4x3\)$"):
        torch.ones(2, 4, 5) @ torch.ones(4, 3)
    with pytest.raises(RuntimeError, match=r"^mm: mat1 and mat2 shapes cannot be multiplied "
                       r"\(4x5 and 4x3\)$"):
        torch.mm(torch.ones(4, 5), torch.ones(4, 3))
    with pytest.raises(RuntimeError, match=r"^Expected size for first two dimensions of "
                       r"batch2 tensor to be: \[2, 4\] but got: \[2, 5\]\.$"):
        a @ b
