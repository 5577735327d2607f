"""`cat` (added for vmap's chunks and jacrev's blocks): values, torch's errors, all three
rules (gradcheck with forward AD and batched gradients, vmap against a loop)."""

import pytest

import ferrograd as torch
from ferrograd.func import vmap


def f64(*shape):
    return torch.randn(*shape, dtype=torch.float64, requires_grad=True)


def test_values_dims_and_grad_fn():
    a, b = torch.arange(6.0).reshape(2, 3), torch.arange(3.0).reshape(1, 3)
    assert torch.cat([a, b]).tolist() == a.tolist() + b.tolist()
    assert torch.cat((a, a), dim=-1).tolist() == [r + r for r in a.tolist()]
    assert torch.concat([a, b]).shape == (3, 3) and torch.concatenate([a, b]).shape == (3, 3)
    assert torch.cat([f64(2), f64(3)]).grad_fn.name() == "CatBackward0"
    # torch skips 1-d empty tensors and promotes dtypes.
    assert torch.cat([a, torch.ones(0)]).shape == (2, 3)
    assert torch.cat([a.double(), b]).dtype == torch.float64


@pytest.mark.parametrize(
    "args, kind, text",
    [
        (([],), ValueError, "torch.cat(): expected a non-empty list of Tensors"),
        (
            ([torch.ones(2, 2), torch.ones(3, 3)],),
            RuntimeError,
            "Sizes of tensors must match except in dimension 0. Expected size 2 but got size 3 "
            "for tensor number 1 in the list.",
        ),
        (
            ([torch.ones(2, 2), torch.ones(3)],),
            RuntimeError,
            "Tensors must have same number of dimensions: got 2 and 1",
        ),
        (
            ([torch.ones(()), torch.ones(())],),
            RuntimeError,
            "zero-dimensional tensor (at position 0) cannot be concatenated",
        ),
        ((torch.ones(2),), TypeError, "must be tuple of Tensors, not Tensor"),
        (([torch.ones(2), 3],), TypeError, "expected Tensor as element 1 in argument 0"),
    ],
)
def test_errors(args, kind, text):
    with pytest.raises(kind) as info:
        torch.cat(*args)
    assert text in str(info.value)


def test_gradients_all_modes():
    a, b = f64(2, 3), f64(4, 3)
    fn = lambda x, y: torch.cat([x, y * 2])  # noqa: E731
    assert torch.autograd.gradcheck(
        fn, (a, b), check_forward_ad=True, check_batched_grad=True, check_batched_forward_grad=True
    )
    assert torch.autograd.gradgradcheck(fn, (a, b), check_fwd_over_rev=True)


@pytest.mark.parametrize("second", ["batched", "unbatched", "batched_at_1"])
def test_vmap_matches_loop(second):
    a = torch.randn(3, 2, 4, dtype=torch.float64)
    b = torch.randn(3, 5, 4, dtype=torch.float64)
    y_arg, y_dim = {
        "batched": (b, 0),
        "unbatched": (b[0], None),
        "batched_at_1": (b.permute(1, 0, 2), 1),
    }[second]
    out = vmap(lambda x, y: torch.cat([x, y]), in_dims=(0, y_dim))(a, y_arg)
    for i in range(3):
        y = b[0] if y_dim is None else b[i]
        assert torch.equal(out[i], torch.cat([a[i], y]))
