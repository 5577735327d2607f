"""Issue 11, quality bar: bad or extreme inputs to the indexing and repeat ops raise
torch's error (never an internal error), and scalars work as in torch."""

import ferrograd as torch
import pytest


def test_gather_and_scatter_of_a_scalar():
    x = torch.tensor(5.0, dtype=torch.float64, requires_grad=True)
    assert torch.gather(x, 0, torch.tensor([0])).tolist() == [5.0]
    assert torch.gather(x, 0, torch.tensor(0)).shape == ()
    out = x.scatter(0, torch.tensor([0]), torch.tensor([2.0], dtype=torch.float64))
    assert out.shape == () and out.item() == 2.0
    assert x.scatter_add(0, torch.tensor([0]), torch.ones(1, dtype=torch.float64)).item() == 6.0
    torch.gather(x, 0, torch.tensor([0])).sum().backward()
    assert x.grad.item() == 1.0


def test_repeat_with_an_overflowing_size_fails_before_allocating():
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        torch.zeros(3).repeat(2**62, 4)
    with pytest.raises(RuntimeError, match="negative dimension -3: \\[-3, 4\\]"):
        torch.zeros(3, 4).repeat(-1, 1)
