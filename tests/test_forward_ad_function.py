"""Custom ``autograd.Function`` in forward mode (spec function.md, forward-mode parts):
``jvp`` with the old ctx style and with ``setup_context``, ``ctx.save_for_forward``,
``mark_dirty`` and views, the errors torch raises, and ``once_differentiable``.
"""

import re

import ferrograd as torch
import ferrograd.autograd.forward_ad as fwAD
import pytest

F64 = torch.float64


def vec(*values):
    return torch.tensor(list(values), dtype=F64)


def tangent_of(t):
    return fwAD.unpack_dual(t).tangent


def raises(cls, text):
    return pytest.raises(cls, match=re.escape(text))


class ScaledMul(torch.autograd.Function):
    """x * y * k, old ctx style; jvp reads what save_for_forward kept."""

    seen = []

    @staticmethod
    def forward(ctx, x, y, k):
        ctx.save_for_forward(x, y)
        ctx.k = k
        return x * y * k

    @staticmethod
    def backward(ctx, g):
        return g, g, None

    @staticmethod
    def jvp(ctx, tx, ty, tk):
        ScaledMul.seen.append((tx, ty, tk))
        x, y = ctx.saved_tensors
        return (tx * y + x * ty) * ctx.k


class Exp(torch.autograd.Function):
    """setup_context style, saving the output for the jvp."""

    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(output)
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out

    @staticmethod
    def jvp(ctx, t):
        (out,) = ctx.saved_tensors
        return t * out


class NoJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_jvp_gets_zeros_for_tensor_inputs_without_tangent_and_none_otherwise():
    ScaledMul.seen.clear()
    with fwAD.dual_level():
        x = fwAD.make_dual(vec(1.0, 2.0), vec(1.0, 1.0))
        out = ScaledMul.apply(x, vec(3.0, 4.0), 2.0)
        assert torch.equal(tangent_of(out), vec(6.0, 8.0))
    ((tx, ty, tk),) = ScaledMul.seen
    assert torch.equal(tx, vec(1.0, 1.0)) and torch.equal(ty, vec(0.0, 0.0)) and tk is None


def test_setup_context_style_and_saved_output():
    x = vec(0.5, -1.0)
    with fwAD.dual_level():
        out = Exp.apply(fwAD.make_dual(x, vec(2.0, 3.0)))
        assert torch.allclose(tangent_of(out), vec(2.0, 3.0) * x.exp())


def test_no_dual_input_calls_no_jvp():
    with fwAD.dual_level():
        assert tangent_of(NoJvp.apply(vec(1.0))) is None


def test_function_without_jvp_in_forward_mode_raises():
    with fwAD.dual_level():
        with raises(
            NotImplementedError,
            "You must implement the jvp function for custom autograd.Function to use it "
            "with forward mode AD.",
        ):
            NoJvp.apply(fwAD.make_dual(vec(1.0), vec(1.0)))


def test_forward_ops_give_no_tangent_of_their_own():
    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def jvp(ctx, t):
            return t * 5

    with fwAD.dual_level():
        out = Wrong.apply(fwAD.make_dual(vec(1.0), vec(1.0)))
        assert torch.equal(tangent_of(out), vec(5.0))


class Double_(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_mark_dirty_jvp_must_update_tangent_in_place():
    class OutOfPlace(Double_):
        @staticmethod
        def jvp(ctx, t):
            return t * 2

    class InPlace(Double_):
        @staticmethod
        def jvp(ctx, t):
            t.mul_(2)
            return t

    with fwAD.dual_level():
        with raises(
            RuntimeError,
            "An inplace custom Function is not modifying the forward mode gradients "
            "inplace. If the forward is modifying an input inplace, then the jvp function "
            "must modify the corresponding gradient inplace.",
        ):
            OutOfPlace.apply(fwAD.make_dual(vec(1.0, 2.0), vec(1.0, 1.0)))
        v = vec(1.0, 1.0)
        out = InPlace.apply(fwAD.make_dual(vec(1.0, 2.0), v))
        assert torch.equal(out, vec(2.0, 4.0))
        assert tangent_of(out) is v and torch.equal(v, vec(2.0, 2.0))


def test_view_output_needs_view_tangent():
    class View(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:2]

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def jvp(ctx, t):
            return t[:2]

    class NotView(View):
        @staticmethod
        def jvp(ctx, t):
            return t[:2].clone()

    with fwAD.dual_level():
        x = fwAD.make_dual(vec(1.0, 2.0, 3.0), vec(4.0, 5.0, 6.0))
        assert torch.equal(tangent_of(View.apply(x)), vec(4.0, 5.0))
        with raises(
            RuntimeError,
            "A custom Function's forward is returning a view (or an input as-is) but the "
            "jvp is not returning a view.",
        ):
            NotView.apply(x)


def test_jvp_result_count_checked():
    class Two(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g, h):
            return g

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    with fwAD.dual_level():
        with raises(
            RuntimeError,
            "Function's jvp returned an invalid number of forward gradients (expected 2 but got 1)",
        ):
            Two.apply(fwAD.make_dual(vec(1.0), vec(1.0)))


def test_once_differentiable_backward_does_not_affect_jvp():
    class Once(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    with fwAD.dual_level():
        out = Once.apply(fwAD.make_dual(vec(1.0, 2.0), vec(1.0, 3.0)))
        assert torch.equal(tangent_of(out), vec(2.0, 6.0))


def test_jvp_is_recorded_for_reverse_mode():
    # t = v * out, and out's gradient flows through Exp's own backward.
    x = vec(1.0, 2.0).requires_grad_()
    with fwAD.dual_level():
        out = Exp.apply(fwAD.make_dual(x, vec(1.0, 1.0)))
        t = tangent_of(out)
        assert t.requires_grad
        (g,) = torch.autograd.grad(t.sum(), x)
    assert torch.allclose(g, x.detach().exp())
