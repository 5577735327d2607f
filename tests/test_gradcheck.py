"""gradcheck / gradgradcheck (spec autograd.md §12; checklist C197–C217).

Items that need a custom ``autograd.Function`` (C198–C200, C209, C211's wrong-backward
half, C212, C214, C410) or forward-mode AD (C217) arrive with those issues; the batched
checks (C205-C208 with vmap, C207) are in test_gradcheck_batched.py."""

import re

import pytest

import ferrograd as torch
from ferrograd.autograd import gradcheck, gradgradcheck
from ferrograd.autograd.gradcheck import GradcheckError


def double(*shape):
    torch.manual_seed(0)
    return torch.randn(*shape, dtype=torch.float64, requires_grad=True)


def test_C197_sin_passes_with_tuple_and_bare_tensor():
    x = double(3, 2)
    assert gradcheck(torch.sin, (x,)) is True
    assert gradcheck(torch.sin, x) is True


def test_C197_fast_mode_passes():
    assert gradcheck(torch.sin, (double(4),), fast_mode=True) is True


def test_C201_float32_input_warns():
    x = torch.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double"):
        gradcheck(torch.sin, (x,), atol=1e-2, rtol=1e-2, raise_exception=False)


def test_C202_no_input_requiring_grad_raises():
    with pytest.raises(
        ValueError,
        match=re.escape(
            "gradcheck expects at least one input tensor to require gradient, but none of them "
            "have requires_grad=True."
        ),
    ):
        gradcheck(torch.sin, (torch.randn(3, dtype=torch.float64),))


def test_C203_stride_zero_input_raises():
    x = torch.randn(1, dtype=torch.float64).expand(3).requires_grad_()
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(torch.sin, (x,))


def test_C204_no_mode_selected_raises():
    with pytest.raises(
        AssertionError,
        match="Expected at least one of check_forward_ad or check_backward_ad to be True",
    ):
        gradcheck(torch.sin, (double(2),), check_forward_ad=False, check_backward_ad=False)


def test_C205_batched_grad_requires_backward_ad():
    with pytest.raises(
        AssertionError,
        match="Setting check_batched_grad=True requires check_backward_ad to be True",
    ):
        gradcheck(
            torch.sin,
            (double(2),),
            check_batched_grad=True,
            check_backward_ad=False,
            check_forward_ad=True,
        )


def test_C206_batched_forward_grad_requires_forward_ad():
    with pytest.raises(
        AssertionError,
        match="Setting check_batched_forward_grad=True requires check_forward_ad to be True",
    ):
        gradcheck(torch.sin, (double(2),), check_batched_forward_grad=True)


def test_C208_nondifferentiable_output_with_nonzero_jacobian_raises():
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda x: x.detach() * 2, (double(3),))


def test_gradcheck_error_is_runtime_error():
    assert issubclass(GradcheckError, RuntimeError)


def test_C210_non_tensor_inputs_pass_through():
    assert gradcheck(lambda x, s: x * s, (double(3), 2.5)) is True


def test_C211_complex_inputs_pass_slow_and_fast():
    torch.manual_seed(1)
    z = torch.randn(3, dtype=torch.complex128, requires_grad=True)
    assert gradcheck(torch.sin, (z,)) is True
    assert gradcheck(torch.sin, (z,), fast_mode=True) is True


def test_C213_gradgradcheck_sin_passes_with_and_without_grad_outputs():
    x = double(3)
    assert gradgradcheck(torch.sin, (x,)) is True
    assert gradgradcheck(torch.sin, (x,), (torch.ones(3, dtype=torch.float64),)) is True


def test_C215_no_second_order_mode_raises():
    with pytest.raises(
        AssertionError,
        match="Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True",
    ):
        gradgradcheck(torch.sin, (double(2),), check_fwd_over_rev=False, check_rev_over_rev=False)


def test_C216_undefined_grad_check_requires_rev_over_rev():
    with pytest.raises(
        AssertionError,
        match="Setting check_undefined_grad=True requires check_rev_over_rev to be True",
    ):
        gradgradcheck(torch.sin, (double(2),), check_fwd_over_rev=True, check_rev_over_rev=False)


def test_wrong_rule_is_caught_by_jacobian_comparison():
    # A function whose "analytical" side differs from its numerical side: the detached
    # factor makes backward see d/dx (x * c) = c while the value is x * x.
    def f(x):
        return x * x.detach()

    assert gradcheck(f, (double(3),), raise_exception=False) is False
    mismatch = "Jacobian mismatch for output 0 with respect to input 0"
    with pytest.raises(GradcheckError, match=mismatch):
        gradcheck(f, (double(3),))


class _SquareWrongJvp(torch.autograd.Function):
    """x * x with a right backward and a jvp that forgets the factor 2x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g

    @staticmethod
    def jvp(ctx, t):
        return t


def test_forward_ad_check_compares_jvp_columns():
    # Issue 9: forward mode is checked against finite differences, so a wrong jvp fails
    # while the backward check alone passes.
    assert gradcheck(torch.sin, (double(2),), check_forward_ad=True)
    assert gradcheck(_SquareWrongJvp.apply, (double(3),))
    with pytest.raises(
        GradcheckError,
        match="Jacobian computed with forward mode mismatch for output 0 with respect to input 0",
    ):
        gradcheck(_SquareWrongJvp.apply, (double(3),), check_forward_ad=True)
    assert gradgradcheck(torch.sin, (double(2),), check_fwd_over_rev=True)
