"""Custom autograd.Functions under torch.func transforms and vmap (function.md §8,
C256-C260)."""

import pytest

import ferrograd as torch
from ferrograd.func import grad, vmap


class OldStyle(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def _sin_function(generate, rule=None):
    class MySin(torch.autograd.Function):
        generate_vmap_rule = generate

        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.cos()

    if rule is not None:
        MySin.vmap = staticmethod(rule)
    return MySin


@pytest.mark.parametrize("transform", ["vmap", "grad"])
def test_c256_old_style_refused_under_transforms(transform):
    x = torch.ones(3)
    f = vmap(OldStyle.apply) if transform == "vmap" else grad(lambda v: OldStyle.apply(v).sum())
    with pytest.raises(RuntimeError, match="it must override the setup_context staticmethod"):
        f(x)
    # Outside transforms the old style still works.
    assert OldStyle.apply(x).tolist() == [2.0, 2.0, 2.0]


def test_c257_no_vmap_support():
    NoVmap = _sin_function(False)
    NoVmap.__name__ = "NoVmap"
    with pytest.raises(RuntimeError, match="You tried to vmap over NoVmap, but it does not have"):
        vmap(NoVmap.apply)(torch.ones(2, 3))


def test_c258_both_rules_refused():
    Both = _sin_function(True, rule=lambda info, in_dims, x: (x, 0))
    with pytest.raises(RuntimeError, match="it has both generate_vmap_rule=True and an overridden"):
        vmap(Both.apply)(torch.ones(2, 3))


def test_c259_generated_rule_and_grad():
    MySin = _sin_function(True)
    xb = torch.randn(4, 3, dtype=torch.float64)
    assert torch.allclose(vmap(MySin.apply)(xb), xb.sin())
    x = torch.tensor(0.7, dtype=torch.float64)
    assert torch.allclose(grad(MySin.apply)(x), x.cos())
    # Per-example gradients through the Function's own backward.
    g = vmap(grad(lambda v: MySin.apply(v).sum()))(xb)
    assert torch.allclose(g, xb.cos())


def test_c260_custom_rule_sees_info_and_in_dims():
    seen = {}

    class F(torch.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def vmap(info, in_dims, x, y):
            seen.update(batch_size=info.batch_size, randomness=info.randomness, in_dims=in_dims)
            return x * 2, in_dims[0]

    out = vmap(F.apply, in_dims=(1, None))(torch.ones(3, 4), 2.0)
    assert seen == {"batch_size": 4, "randomness": "error", "in_dims": (1, None)}
    assert tuple(out.shape) == (4, 3)
    assert out.tolist() == [[2.0] * 3] * 4
