"""Issue 11, advanced indexing: what the op database (tests/opdb.py, entries getitem_advanced,
index_put(_), index_fill, nonzero, argwhere) cannot express: the __setitem__ paths and
their graph nodes, torch's errors, batched index tensors under vmap, in-place writes under
vmap, and second derivatives through x[idx].

Every expected value, shape, name and message is torch 2.15's (run it). The file runs on
torch through the shim (conftest.py); the places where ferrograd still differs from torch
are strict xfails on ferrograd only (KNOWN), each with a one-line repro as its reason.
"""

import re
import warnings

import ferrograd as torch
import numpy as np
import pytest
from conftest import IS_REAL_TORCH

D = torch.float64


def known(reason, raises=AssertionError):
    """A strict xfail on ferrograd (torch passes): fixing it makes the test XPASS, which fails."""
    return pytest.mark.xfail(not IS_REAL_TORCH, reason=reason, raises=raises, strict=True)


def raises(kind, message):
    return pytest.raises(kind, match=f"^{re.escape(message)}$")


def cube():
    return torch.arange(60.0, dtype=D).reshape(3, 4, 5)


def grid():
    return torch.arange(12.0, dtype=D).reshape(3, 4)


# ------------------------------------------------------------------------- getitem


@pytest.mark.parametrize(
    "key, shape",
    [
        # torch selects an int first, so these index dims stay in place (numpy would put
        # them in front: (2, 4) for the first)
        ((0, slice(None), [0, 1]), (4, 2)),
        (([0, 1], slice(None), 0), (2, 4)),
        ((0, slice(None), [[0], [1]]), (4, 2, 1)),
        # index tensors apart (by a slice or None): their dims go in front
        (([0, 1], slice(None), [[1], [2]]), (2, 2, 4)),
        (([0, 1], None, [0, 1]), (2, 1, 5)),
        ((slice(None), [0, 1], [[1], [2]]), (3, 2, 2)),
        ((None, Ellipsis, [4, 0]), (1, 3, 4, 2)),
        ((torch.zeros(0, dtype=torch.int64), slice(None)), (0, 4, 5)),
    ],
)
def test_where_the_index_dims_land(key, shape):
    x = cube()
    key = tuple(torch.tensor(k) if isinstance(k, list) else k for k in key)
    out = x[key]
    assert tuple(out.shape) == shape
    assert out.grad_fn is None  # nothing requires grad: no graph


def test_int_then_index_reads_the_selected_slice():
    x = cube().requires_grad_()
    out = x[0, :, [0, 1]]
    assert out.tolist() == x[0].detach()[:, torch.tensor([0, 1])].tolist()
    assert out.grad_fn.name() == "IndexBackward0"


def test_numpy_arrays_and_int32_indices():
    x = grid()
    assert x[np.array([2, 0])].tolist() == [x[2].tolist(), x[0].tolist()]
    assert x[np.array([[True, False, True, False]] * 3)].tolist() == [0, 2, 4, 6, 8, 10]
    assert x[torch.tensor([1], dtype=torch.int32)].tolist() == [[4.0, 5.0, 6.0, 7.0]]
    assert x[np.array(1)].grad_fn is None and x[np.array(1)].tolist() == x[1].tolist()


@pytest.mark.parametrize(
    "key, shape", [([[0, 1]], (2, 4)), ([[0], [1]], (1,)), ([0, slice(None)], (4,))]
)
def test_a_list_of_sequences_is_a_tuple_key(key, shape):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = grid()[key]
    assert tuple(out.shape) == shape
    assert [str(w.message)[:50] for w in caught] == [
        "Using a non-tuple sequence for multidimensional in"
    ]


def test_mask_gradient_and_double_backward():
    a = torch.arange(6.0, dtype=D).reshape(2, 3).requires_grad_()
    y = a[a > 1]
    assert (y.tolist(), y.grad_fn.name()) == ([2.0, 3.0, 4.0, 5.0], "IndexBackward0")
    (g,) = torch.autograd.grad((y * y).sum(), a)
    assert g.tolist() == [[0.0, 0.0, 4.0], [6.0, 8.0, 10.0]]


def _cubed_duplicates():
    a = torch.tensor([1.0, 2.0, 3.0], dtype=D, requires_grad=True)
    (g,) = torch.autograd.grad((a[[0, 0, 2]] ** 3).sum(), a, create_graph=True)
    return a, g


def test_double_backward_through_duplicate_indices():
    a, g = _cubed_duplicates()
    assert g.tolist() == [6.0, 0.0, 27.0]  # 2 * 3a^2 at a=1: the duplicate accumulates
    (gg,) = torch.autograd.grad((g * torch.tensor([1.0, 10.0, 100.0], dtype=D)).sum(), a)
    assert gg.tolist() == [12.0, 0.0, 1800.0]


def test_gradient_of_index_has_torchs_node():
    _, g = _cubed_duplicates()
    assert g.grad_fn.name() == "IndexPutImplBackward0"


# ------------------------------------------------------------------------- setitem

# (key, value, grad_fn name): torch picks masked_fill_ for a lone bool mask and a number
# (or 0-dim tensor: not a number, so index_put_), index_fill_ for one int64 index along
# one dim and a number, index_put_ otherwise; a basic view first makes CopySlices.
SETITEM_PATHS = [
    ("[[0, 2]]", "torch.ones(4, dtype=D)", "IndexPutBackward0"),
    ("[y == 0]", "2.0", "MaskedFillBackward0"),
    ("[torch.tensor([True, False, True])]", "4.0", "MaskedFillBackward0"),
    ("[y > 1]", "torch.tensor(3.0, dtype=D)", "IndexPutBackward0"),
    ("[torch.tensor([0, 2])]", "2.0", "IndexFillBackward0"),
    ("[[0, 2]]", "2.0", "IndexFillBackward0"),
    ("[:, [1, 2]]", "5.0", "IndexFillBackward0"),
    ("[[0, 1], [1, 2]]", "7.0", "IndexPutBackward0"),
    ("[0, [1, 2]]", "5.0", "torch::autograd::CopySlices"),
    ("[1:, [1, 2]]", "5.0", "torch::autograd::CopySlices"),
]


@pytest.mark.parametrize("key, value, name", SETITEM_PATHS)
def test_setitem_path(key, value, name):
    base = torch.zeros(3, 4, dtype=D, requires_grad=True)
    y = base.clone()
    exec(f"y{key} = {value}", {"torch": torch, "D": D, "y": y})
    assert y.grad_fn.name() == name
    assert y._version == 1  # C26: one in-place write, one version


def _weights():
    return torch.arange(12.0, dtype=D).reshape(3, 4)


def test_setitem_gradients():
    base = torch.zeros(3, 4, dtype=D, requires_grad=True)
    # masked_fill_ and index_fill_ overwrite: no gradient reaches the written rows
    for key in (torch.tensor([True, False, True]), torch.tensor([0, 2])):
        y = base.clone()
        y[key] = 4.0
        (g,) = torch.autograd.grad((y * _weights()).sum(), base)
        assert g.tolist() == [[0.0] * 4, [4.0, 5.0, 6.0, 7.0], [0.0] * 4]
    # index_put_ of a tensor: the value gets the sum over the places it went
    y = base.clone()
    v = torch.tensor(3.0, dtype=D, requires_grad=True)
    y[[0, 1], [1, 2]] = v
    gb, gv = torch.autograd.grad((y * _weights()).sum(), [base, v])
    assert gb.tolist() == [[0.0, 0.0, 2.0, 3.0], [4.0, 5.0, 0.0, 7.0], [8.0, 9.0, 10.0, 11.0]]
    assert gv.item() == 7.0


@pytest.mark.parametrize("key", [[0], "mask", ([0], [1]), (slice(None), [1])])
def test_setitem_on_a_leaf_requiring_grad(key):
    # C97
    leaf = torch.zeros(3, 4, dtype=D, requires_grad=True)
    key = leaf > 0 if key == "mask" else key
    with raises(
        RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation."
    ):
        leaf[key] = torch.ones(1, dtype=D)


@pytest.mark.parametrize("source, name", [(torch.float32, "Float"), (torch.int64, "Long")])
def test_index_put_dtype_mismatch(source, name):
    message = (
        "Index put requires the source and destination dtypes match, got Double for "
        f"the destination and {name} for the source."
    )
    y = torch.zeros(3, 4, dtype=D)
    with raises(RuntimeError, message):
        y[[0, 1]] = torch.ones(4, dtype=source)
    with raises(RuntimeError, message):
        y.index_put((torch.tensor([0]),), torch.ones(4, dtype=source))
    assert y.tolist() == [[0.0] * 4] * 3


@pytest.mark.parametrize(
    "call, message",
    [
        (
            "y[[0, 1], [0, 1]] = torch.ones(2, 2, dtype=D)",
            "shape mismatch: value tensor of shape [2, 2] cannot be broadcast to indexing result "
            "of shape [2]",
        ),
        (
            "y[[0, 1]] = torch.ones(3, dtype=D)",
            "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of "
            "shape [2, 4]",
        ),
        (
            "y.index_put_((torch.tensor([0]),), torch.ones(3, dtype=D))",
            "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of "
            "shape [1, 4]",
        ),
    ],
)
def test_value_shape_mismatch(call, message):
    with raises(RuntimeError, message):
        exec(call, {"torch": torch, "D": D, "y": torch.zeros(3, 4, dtype=D)})


# ------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "key, message",
    [
        (5, "index 5 is out of bounds for dimension 0 with size 3"),
        ([5], "index 5 is out of bounds for dimension 0 with size 3"),
        ([-4], "index -4 is out of bounds for dimension 0 with size 3"),
        # "dimension" counts the index tensors, not the tensor's dims
        ((slice(None), [5]), "index 5 is out of bounds for dimension 0 with size 4"),
        (([0], [7]), "index 7 is out of bounds for dimension 1 with size 4"),
        (([0, 1], [0, 9]), "index 9 is out of bounds for dimension 1 with size 4"),
        ("float", "tensors used as indices must be long, int, byte or bool tensors"),
        (([0], [0], [0]), "too many indices for tensor of dimension 2"),
        ((0, 0, 0), "too many indices for tensor of dimension 2"),
        ("mask (3, 4, 2)", "too many indices for tensor of dimension 2"),
        (
            "mask (2,)",
            "The shape of the mask [2] at index 0 does not match the shape of the "
            "indexed tensor [3, 4] at index 0",
        ),
        (
            "mask (1, 4)",
            "The shape of the mask [1, 4] at index 0 does not match the shape of "
            "the indexed tensor [3, 4] at index 0",
        ),
        (
            "uint8 (2,)",
            "The shape of the mask [2] at index 0 does not match the shape of the "
            "indexed tensor [3, 4] at index 0",
        ),
    ],
)
def test_getitem_errors(key, message):
    keys = {
        "float": torch.tensor([1.0]),
        "mask (3, 4, 2)": torch.ones(3, 4, 2, dtype=torch.bool),
        "mask (2,)": torch.tensor([True, False]),
        "mask (1, 4)": torch.tensor([[True, False, True, False]]),
        "uint8 (2,)": torch.tensor([0, 1], dtype=torch.uint8),  # a (legacy) byte mask
    }
    with raises(IndexError, message):
        grid()[keys.get(key, key) if isinstance(key, str) else key]


def test_mask_shape_error_names_the_masks_dim():
    with raises(
        IndexError,
        "The shape of the mask [3] at index 0 does not match the shape of "
        "the indexed tensor [3, 4] at index 1",
    ):
        grid()[:, torch.tensor([True, False, True])]


@pytest.mark.parametrize(
    "call, kind, message",
    [
        (
            "y.index_put_((torch.tensor([0.0]),), torch.ones(4, dtype=D))",
            IndexError,
            "tensors used as indices must be long, int, byte or bool tensors",
        ),
        (
            "y.index_put_((torch.tensor([9]),), torch.ones(4, dtype=D))",
            IndexError,
            "index 9 is out of bounds for dimension 0 with size 3",
        ),
        (
            "y.index_put_((torch.tensor([0, 1]), torch.tensor([0, 1, 2])), torch.tensor(1.0, "
            "dtype=D))",
            IndexError,
            "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]",
        ),
        (
            "y.index_fill(0, torch.tensor([5]), 1.0)",
            IndexError,
            "index 5 is out of bounds for dimension 0 with size 3",
        ),
        (
            "y.index_fill(2, torch.tensor([0]), 1.0)",
            IndexError,
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        ),
        (
            "y.index_fill(0, torch.tensor([[0]]), 1.0)",
            RuntimeError,
            "Index has to be a vector/scalar",
        ),
        (
            "y.index_fill(0, torch.tensor([0.0]), 1.0)",
            IndexError,
            "index_fill_(): Expected dtype int64 for index.",
        ),
    ],
)
def test_index_put_and_index_fill_errors(call, kind, message):
    with raises(kind, message):
        eval(call, {"torch": torch, "D": D, "y": torch.zeros(3, 4, dtype=D)})


def test_index_put_too_many_indices():
    index = torch.tensor([0])
    with raises(IndexError, "too many indices for tensor of dimension 2 (got 3)"):
        torch.zeros(3, 4, dtype=D).index_put_((index,) * 3, torch.ones(1, dtype=D))


def test_masked_fill_shape_error():
    # In place, torch expands the mask to self (self is tensor a); out of place it
    # broadcasts mask against self (the mask is tensor a).
    mask = torch.tensor([True, False])
    with raises(
        RuntimeError,
        "The size of tensor a (4) must match the size of tensor b (2) at non-singleton dimension 1",
    ):
        torch.zeros(3, 4, dtype=D).masked_fill_(mask, 1.0)
    with raises(
        RuntimeError,
        "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 1",
    ):
        torch.zeros(3, 4, dtype=D).masked_fill(mask, 1.0)
    with raises(RuntimeError, "output with shape [4] doesn't match the broadcast shape [3, 4]"):
        torch.zeros(4, dtype=D).masked_fill_(torch.ones(3, 4, dtype=torch.bool), 1.0)


def test_index_fill_with_a_tensor_value():
    value = torch.tensor(2.0, dtype=D, requires_grad=True)
    out = torch.zeros(2, 2, dtype=D).index_fill(0, torch.tensor([0]), value)
    assert out.tolist() == [[2.0, 2.0], [0.0, 0.0]]
    assert out.grad_fn.name() == "IndexFillBackward1"


def test_index_fill_tensor_value_gradients_count_a_repeated_index_once():
    x = torch.zeros(2, 3, dtype=D, requires_grad=True)
    value = torch.tensor(2.0, dtype=D, requires_grad=True)
    out = x.index_fill(1, torch.tensor([0, 0, 2]), value)
    g = np.arange(6.0).reshape(2, 3)
    out.backward(torch.tensor(g, dtype=D))
    filled = np.zeros((2, 3), dtype=bool)
    filled[:, [0, 2]] = True
    assert x.grad.tolist() == np.where(filled, 0.0, g).tolist()
    assert value.grad.item() == g[filled].sum()
    fill = lambda a, v: a.index_fill(1, torch.tensor([2, 0, 2]), v)  # noqa: E731
    assert torch.autograd.gradcheck(fill, (x.detach().requires_grad_(), value))
    # In place, with the value cast to self's dtype; a value of more than 0 dims refused.
    y = torch.zeros(2, 3, dtype=torch.int64)
    y.index_fill_(1, torch.tensor([1]), torch.tensor(1.5))
    assert y.tolist() == [[0, 1, 0], [0, 1, 0]]
    with raises(
        RuntimeError,
        "index_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
        "dimension(s).",
    ):
        x.index_fill(1, torch.tensor([0]), torch.tensor([1.0], dtype=D))


def test_index_fill_of_a_scalar():
    x = torch.zeros((), dtype=D, requires_grad=True)
    out = torch.index_fill(x, 0, torch.tensor(-1), 1.0)
    assert (out.item(), out.grad_fn.name()) == (1.0, "IndexFillBackward0")
    assert torch.index_fill(x, -1, torch.tensor([], dtype=torch.int64), 1.0).item() == 0.0
    out_of_range = "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
    with raises(IndexError, out_of_range):
        torch.index_fill(x, 1, torch.tensor([0]), 1.0)
    with raises(IndexError, "index 1 is out of bounds for dimension 0 with size 1"):
        torch.index_fill(x, 0, torch.tensor([1]), 1.0)
    # Under vmap each example is a scalar.
    filled = vmap(lambda e: e.index_fill(0, torch.tensor([0]), 5.0))(torch.zeros(3, dtype=D))
    assert filled.tolist() == [5.0] * 3


# ------------------------------------------------------------------------- index_put_ accumulate


@pytest.mark.parametrize(
    "shape, indices, values, want",
    [
        ((4,), ([0, 0, 3, 0],), [1.0, 2.0, 3.0, 4.0], [7.0, 0.0, 0.0, 3.0]),
        ((2, 3), ([1, 1], [2, 2]), 1.5, [[0.0, 0.0, 0.0], [0.0, 0.0, 3.0]]),
        ((2, 3), ([1, 1],), [1.0, 2.0, 3.0], [[0.0, 0.0, 0.0], [2.0, 4.0, 6.0]]),
    ],
)
def test_index_put_accumulates_duplicates(shape, indices, values, want):
    out = torch.zeros(*shape, dtype=D)
    result = out.index_put_(
        tuple(torch.tensor(i) for i in indices), torch.tensor(values, dtype=D), accumulate=True
    )
    assert result is out and out.tolist() == want
    plain = torch.zeros(3, dtype=torch.int64)
    plain.index_put_((torch.tensor([0, 0]),), torch.tensor(5), accumulate=True)
    assert plain.tolist() == [10, 0, 0]


# ------------------------------------------------------------------------- nonzero, argwhere


def test_nonzero_and_argwhere():
    m = torch.tensor([[1, 0, 2], [0, 0, 3]])
    for out in (torch.nonzero(m), m.nonzero(), torch.argwhere(m), m.argwhere()):
        assert (out.dtype, out.tolist()) == (torch.int64, [[0, 0], [0, 2], [1, 2]])
    rows, cols = torch.nonzero(m, as_tuple=True)
    assert (rows.tolist(), cols.tolist()) == ([0, 0, 1], [0, 2, 2])
    assert torch.nonzero(m.t()).tolist() == [[0, 0], [2, 0], [2, 1]]
    assert torch.nonzero(torch.tensor([float("nan"), -0.0, 0.0])).tolist() == [[0]]


@pytest.mark.parametrize("fn", ["nonzero", "argwhere"])
def test_nonzero_of_a_scalar(fn):
    assert tuple(getattr(torch, fn)(torch.tensor(3.0)).shape) == (1, 0)
    assert tuple(getattr(torch, fn)(torch.tensor(False)).shape) == (0, 0)


def test_nonzero_as_tuple_of_a_scalar_and_of_empty():
    (one,) = torch.nonzero(torch.tensor(3.0), as_tuple=True)  # a 0-dim input reads as 1-D
    (none,) = torch.nonzero(torch.tensor(0.0), as_tuple=True)
    assert (one.tolist(), none.tolist(), none.dtype) == ([0], [], torch.int64)
    assert tuple(torch.nonzero(torch.zeros(2, 0)).shape) == (0, 2)
    assert [t.shape[0] for t in torch.nonzero(torch.zeros(2, 0), as_tuple=True)] == [0, 0]


# ------------------------------------------------------------------------- vmap

vmap = torch.func.vmap


def _batch():
    return torch.arange(15.0, dtype=D).reshape(5, 3), torch.tensor([[0], [1], [2], [0], [1]])


def test_vmap_getitem_batched_self_index_or_both():
    bx, bi = _batch()
    assert vmap(lambda q: q[[0, 2]])(bx).tolist() == [[3 * k, 3 * k + 2] for k in range(5)]
    assert vmap(lambda q, i: q[i])(bx, bi).tolist() == [[0.0], [4.0], [8.0], [9.0], [13.0]]
    assert vmap(lambda i: bx[0][i])(bi).tolist() == [[0.0], [1.0], [2.0], [0.0], [1.0]]
    assert tuple(vmap(lambda i: bx[:, i])(bi).shape) == (5, 5, 1)
    cube3 = torch.arange(30.0, dtype=D).reshape(5, 2, 3)
    assert vmap(lambda q, i: q[:, i])(cube3, bi).tolist() == [
        [[0.0], [3.0]],
        [[7.0], [10.0]],
        [[14.0], [17.0]],
        [[18.0], [21.0]],
        [[25.0], [28.0]],
    ]


def test_vmap_with_an_unbatched_mask():
    out = vmap(lambda q: q[:, torch.tensor([True, False, True])])(torch.ones(5, 2, 3))
    assert tuple(out.shape) == (5, 2, 2)
    assert tuple(vmap(lambda q: q[True])(torch.ones(5, 3)).shape) == (5, 1, 3)


BOOL_MASK_UNDER_VMAP = (
    "vmap: We do not support batching operators that can support dynamic "
    "shape. Attempting to batch over indexing with a boolean mask."
)


def test_vmap_refuses_a_batched_bool_mask():
    bx, _ = _batch()
    with raises(RuntimeError, BOOL_MASK_UNDER_VMAP):
        vmap(lambda q: q[q > 2])(bx)
    with raises(RuntimeError, BOOL_MASK_UNDER_VMAP):
        vmap(lambda m: bx[0][m])(bx > 2)


def test_vmap_refuses_nonzero():
    with raises(
        RuntimeError,
        "vmap: We do not support batching operators that can output "
        "dynamic shape. Attempted to vmap over aten::nonzero. Please file an issue at "
        "https://github.com/pytorch/pytorch/issues if you need this feature.",
    ):
        vmap(torch.nonzero)(_batch()[0])


def test_vmap_argwhere_falls_back_to_a_loop():
    out = vmap(torch.argwhere)(_batch()[0] + 1)
    assert out.tolist() == [[[0], [1], [2]]] * 5


ARGWHERE_FALLBACK = (
    "There is a performance drop because we have not yet implemented the batching rule "
    "for aten::argwhere. Please file us an issue on GitHub so that we can prioritize its "
    "implementation."
)


def test_vmap_argwhere_loop_stacks_equal_shapes_only():
    bx, _ = _batch()
    with pytest.warns(UserWarning, match=re.escape(ARGWHERE_FALLBACK)):
        out = vmap(torch.argwhere)(bx % 3 == 1)
    assert out.tolist() == [[[1]]] * 5
    with raises(
        RuntimeError,
        "stack expects each tensor to be equal size, but got [3, 1] at entry 0 and [2, 1] "
        "at entry 1",
    ):
        vmap(torch.argwhere)(bx - 4)
    # Over dim 1, out_dims 1, nested: each example's coordinates.
    grid = torch.ones(2, 3, 4, dtype=D)
    assert vmap(torch.argwhere, in_dims=1)(grid).shape == (3, 8, 2)
    assert vmap(torch.argwhere, out_dims=1)(grid).shape == (12, 2, 2)
    assert vmap(vmap(torch.argwhere))(grid).shape == (2, 3, 4, 1)
    assert vmap(torch.argwhere)(torch.zeros(5, 3)).shape == (5, 0, 1)
    with raises(
        RuntimeError,
        "Batching rule not implemented for aten::argwhere. The fallback path does not "
        "support vmap over dims of size 0.",
    ):
        vmap(torch.argwhere)(torch.zeros(0, 3))


def test_vmap_setitem_into_a_batched_clone():
    def write(q, v):
        q = q.clone()
        q[[0, 0]] = v
        return q

    out = vmap(write, in_dims=(0, None))(torch.zeros(2, 2, 3, dtype=D), torch.ones(3, dtype=D))
    assert out.tolist() == [[[1.0] * 3, [0.0] * 3]] * 2
    batched_v = torch.arange(6.0, dtype=D).reshape(2, 3)
    out = vmap(write)(torch.zeros(2, 2, 3, dtype=D), batched_v)
    assert out.tolist() == [[[0.0, 1.0, 2.0], [0.0] * 3], [[3.0, 4.0, 5.0], [0.0] * 3]]
    summed = vmap(
        lambda q: q.index_put((torch.tensor([0, 0]),), torch.ones((), dtype=D), accumulate=True)
    )(torch.zeros(2, 3, dtype=D))
    assert summed.tolist() == [[2.0, 0.0, 0.0]] * 2


def test_vmap_setitem_of_a_batched_value_into_an_unbatched_tensor():
    def write(v):
        q = torch.zeros(2, 3, dtype=D)
        q[[0]] = v
        return q

    with raises(
        RuntimeError,
        "vmap: index_put_(self, *extra_args) is not possible because "
        "there exists a Tensor `other` in extra_args that has more elements than "
        "`self`. This happened due to `other` being vmapped over but `self` not being "
        "vmapped over in a vmap. Please try to use out-of-place operators instead of "
        "index_put_. If said operator is being called inside the PyTorch framework, "
        "please file a bug report instead.",
    ):
        vmap(write)(torch.arange(15.0, dtype=D).reshape(5, 3))


def _unbatched_self(op):
    return (
        f"vmap: {op}(self, *extra_args) is not possible because there exists a Tensor `other` "
        "in extra_args that has more elements than `self`. This happened due to `other` being "
        "vmapped over but `self` not being vmapped over in a vmap. Please try to use "
        f"out-of-place operators instead of {op}. If said operator is being called inside "
        "the PyTorch framework, please file a bug report instead."
    )


def _into_zeros(write):
    def f(v):
        q = torch.zeros(2, 3, dtype=D)
        write(q, v)
        return q

    return f


@pytest.mark.parametrize(
    "op, write, values",
    [
        ("index_put_", lambda q, v: q.__setitem__(q > 5, v[0]), None),
        ("index_put_", lambda q, v: q.index_put_((torch.tensor([0]),), v, True), None),
        ("index_put_", lambda q, v: q.__setitem__((0, [1]), v[0]), None),
        ("inplace arithmetic", lambda q, v: q.__setitem__(0, v), None),
        ("inplace arithmetic", lambda q, v: q.copy_(v), None),
        ("index_fill_", lambda q, i: q.index_fill_(0, i, 1.0), torch.tensor([[0], [1]])),
        ("index_fill_", lambda q, v: q.index_fill_(0, torch.tensor([0]), v), torch.ones(5)),
    ],
)
def test_vmap_in_place_writes_into_an_unbatched_self(op, write, values):
    if values is None:
        values = torch.arange(15.0, dtype=D).reshape(5, 3)
    with raises(RuntimeError, _unbatched_self(op)):
        vmap(_into_zeros(write))(values)


def test_vmap_in_place_writes_into_a_batched_self():
    rows = torch.arange(15.0, dtype=D).reshape(5, 3)

    def write(q, v):
        q = q.clone()
        q[0] = v
        q.index_fill_(0, torch.tensor([1]), 7.0)
        return q

    out = vmap(write)(torch.zeros(5, 2, 3, dtype=D), rows)
    assert out.tolist() == [[r, [7.0] * 3] for r in rows.tolist()]
