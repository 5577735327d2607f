"""Gradients of mm keep the layout of a column-major factor (torch's mm_mat1_backward /
mm_mat2_backward), and the gradients of permuting views are views of the incoming
gradient: a Linear layer's `x @ weight.t()` gives `weight.grad` row-major without any
strided copy."""

import itertools

import pytest

import ferrograd as torch
from ferrograd.autograd import gradcheck, gradgradcheck
from ferrograd.autograd.profiler import profile


def factor(rows, cols, col_major, dtype):
    """A (rows, cols) leaf, stored row-major or as the transpose of a row-major matrix."""
    if col_major:
        return torch.randn(cols, rows, dtype=dtype).t().detach().requires_grad_()
    return torch.randn(rows, cols, dtype=dtype, requires_grad=True)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("a_col, b_col", list(itertools.product([False, True], repeat=2)))
def test_mm_gradients_for_every_factor_layout(a_col, b_col, dtype):
    a, b = factor(3, 4, a_col, dtype), factor(4, 5, b_col, dtype)
    assert gradcheck(torch.mm, (a, b), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(torch.mm, (a, b))


@pytest.mark.parametrize("a_col, b_col", list(itertools.product([False, True], repeat=2)))
def test_mm_gradient_comes_out_in_the_factor_layout(a_col, b_col):
    a, b = factor(3, 4, a_col, torch.float64), factor(4, 5, b_col, torch.float64)
    g = torch.randn(3, 5, dtype=torch.float64)
    ga, gb = torch.autograd.grad(torch.mm(a, b), (a, b), g)
    assert ga.stride() == a.stride() and gb.stride() == b.stride()
    assert torch.allclose(ga, g @ b.detach().t()) and torch.allclose(gb, a.detach().t() @ g)


def test_linear_weight_grad_is_row_major_and_needs_no_strided_copy():
    weight = torch.randn(6, 8, requires_grad=True)
    x = torch.randn(16, 8)
    with profile(profile_memory=True) as prof:
        (x @ weight.t()).sum().backward()
    assert weight.grad.is_contiguous()
    assert torch.allclose(weight.grad, torch.ones(16, 6).t() @ x)
    names = [e.name for e in prof.function_events]
    assert "TBackward0" in names
    # The transpose's gradient is the transposed gradient (a view), not a scatter ...
    assert "aten::as_strided_scatter" not in names
    # ... and the weight's .grad takes its buffer over: AccumulateGrad allocates nothing.
    (acc,) = [e for e in prof.function_events if e.name == "torch::autograd::AccumulateGrad"]
    assert acc.cpu_memory_usage == 0
    mm_backward = [e for e in prof.function_events if e.name == "MmBackward0"]
    assert mm_backward and mm_backward[0].cpu_memory_usage == 6 * 8 * 4


@pytest.mark.parametrize(
    "view",
    [
        lambda x: x.permute(2, 0, 1),
        lambda x: x.permute(-1, -3, -2),
        lambda x: x.transpose(0, 2),
        lambda x: x.t() if x.dim() == 2 else x.reshape(6, 4).t(),
        lambda x: x.unsqueeze(1),
        lambda x: x.reshape(4, 6).unsqueeze(0).squeeze(0),
        lambda x: x.view(24),
    ],
)
def test_inverse_view_gradients(view):
    x = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    assert gradcheck(view, (x,), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(view, (x,))


@pytest.mark.parametrize("dims", [(2, 0, 1), (1, 2, 0), (0, 2, 1)])
def test_inverse_permute_gradient_of_a_non_contiguous_input(dims):
    x = torch.randn(4, 3, 2, dtype=torch.float64).permute(2, 1, 0).detach().requires_grad_()
    assert gradcheck(lambda t: t.permute(*dims) * 2, (x,), check_forward_ad=True)
    assert gradgradcheck(lambda t: t.permute(*dims) * 2, (x,))
