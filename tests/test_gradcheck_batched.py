"""gradcheck's batched checks (spec autograd.md §12): ``check_batched_grad`` (vmap over
the vjp against a loop of vjps, per output), ``check_batched_forward_grad`` (the same over
the jvp, per input) and gradgradcheck's ``check_batched_grad`` (over the double backward).
Each failure kind is provoked with a custom Function: a vmap-incompatible formula (it
reads a value with ``float()``) and a formula that is wrong only on batched tensors (as
a wrong batching rule would be). The texts are torch's (torch/autograd/gradcheck.py)."""

import re

import ferrograd as torch
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck
from ferrograd.autograd.gradcheck import GradcheckError

F64 = torch.float64
BATCHED = "While computing batched gradients, got: "
NOTE = "gradcheck or gradgradcheck failed while testing batched gradient computation."
FWD_NOTE = "gradcheck failed while testing batched gradient computation with forward-mode AD."


def double(*shape):
    torch.manual_seed(0)
    return torch.randn(*shape, dtype=F64, requires_grad=True)


class ReadsValue(torch.autograd.Function):
    """x * 2; backward and jvp read a number out of their input (no vmap can)."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2 + 0 * float(g.sum())

    @staticmethod
    def jvp(ctx, t):
        return t * 2 + 0 * float(t.sum())


def _wrong_when_batched(t):
    # What a wrong batching rule would do: a different result only under vmap.
    return t * 3 if torch._C._batch_info(t) is not None else t * 2


class WrongWhenBatched(torch.autograd.Function):
    """x * 2 with backward and jvp right on plain tensors, wrong on batched ones
    (setup_context style with a generated vmap rule: it runs inside vmap, C256/C259)."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return _wrong_when_batched(g)

    @staticmethod
    def jvp(ctx, t):
        return _wrong_when_batched(t)


class DoubleBackwardReadsValue(torch.autograd.Function):
    """x ** 2 whose backward is built from ReadsValue: first derivatives batch fine,
    the second ones do not."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return ReadsValue.apply(g * x)


def test_C205_batched_grad_passes_for_composite_function():
    x, y = double(3, 2), double(2)
    assert gradcheck(lambda a, b: (a * b).sin().sum(0), (x, y), check_batched_grad=True)
    assert gradgradcheck(lambda a, b: (a * b).sin(), (x, y), check_batched_grad=True)


def test_C207_sin_passes_forward_ad_and_batched_grad():
    assert gradcheck(torch.sin, (double(3, 2),), check_forward_ad=True, check_batched_grad=True)
    assert gradcheck(
        torch.sin,
        (double(3, 2),),
        check_forward_ad=True,
        check_batched_grad=True,
        check_batched_forward_grad=True,
    )


def test_C206_batched_forward_grad_passes_for_composite_function():
    x, y = double(3, 2), double(2)
    assert gradcheck(
        lambda a, b: (a * b).exp(),
        (x, y),
        check_forward_ad=True,
        check_batched_forward_grad=True,
    )


def test_C205_vmap_incompatible_backward_is_caught():
    with pytest.raises(GradcheckError, match=re.escape(BATCHED)) as info:
        gradcheck(ReadsValue.apply, (double(3),), check_batched_grad=True)
    assert NOTE in str(info.value)
    assert gradcheck(ReadsValue.apply, (double(3),))


def test_C205_batched_grad_mismatch_names_output_and_input():
    # Output 1 is the wrong one; input 1 is the one it depends on.
    def f(a, b):
        return a * 3, WrongWhenBatched.apply(b)

    with pytest.raises(GradcheckError, match="^For output 1 and input 1:\n\n") as info:
        gradcheck(f, (double(2), double(3)), check_batched_grad=True)
    text = str(info.value)
    assert NOTE in text and "\n\nGot:\n" in text and "\n\nExpected:\n" in text
    assert gradcheck(f, (double(2), double(3)))
    assert (
        gradcheck(f, (double(2), double(3)), check_batched_grad=True, raise_exception=False)
        is False
    )


def test_C206_vmap_incompatible_jvp_is_caught():
    kwargs = {"check_forward_ad": True, "check_backward_ad": False}
    with pytest.raises(GradcheckError, match=re.escape(BATCHED)) as info:
        gradcheck(ReadsValue.apply, (double(3),), check_batched_forward_grad=True, **kwargs)
    assert FWD_NOTE in str(info.value)
    assert gradcheck(ReadsValue.apply, (double(3),), **kwargs)


def test_C206_batched_forward_grad_mismatch():
    kwargs = {"check_forward_ad": True, "check_backward_ad": False}
    with pytest.raises(GradcheckError, match="^For output 0 and input 0:\n\n") as info:
        gradcheck(WrongWhenBatched.apply, (double(3),), check_batched_forward_grad=True, **kwargs)
    assert FWD_NOTE in str(info.value)


def test_C208_gradgradcheck_batched_grad_checks_the_double_backward():
    assert gradgradcheck(DoubleBackwardReadsValue.apply, (double(3),))
    assert gradcheck(DoubleBackwardReadsValue.apply, (double(3),), check_batched_grad=True)
    with pytest.raises(GradcheckError, match=re.escape(BATCHED)) as info:
        gradgradcheck(DoubleBackwardReadsValue.apply, (double(3),), check_batched_grad=True)
    assert NOTE in str(info.value)
