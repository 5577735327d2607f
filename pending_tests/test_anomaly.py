"""Anomaly detection: checklist C130–C141 (spec autograd.md §8).

The custom Functions some items need are built by factories inside the tests, so this file
still collects (and its flag tests still run) before ``torch.autograd.Function`` exists.
Anomaly mode is process-global; the ``_restore_anomaly_mode`` fixture in conftest.py turns
it off after every test.
"""

import inspect
import re
import warnings

import ferrograd as torch
import pytest

ENABLED_WARNING = (
    "Anomaly Detection has been enabled. This mode will increase the runtime and should only "
    "be enabled for debugging."
)

# The tests that pin a warning record it themselves (catch_warnings + "always" overrides
# these filters); elsewhere the anomaly warnings are noise.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled"),
    pytest.mark.filterwarnings("ignore:Error detected in"),
    pytest.mark.filterwarnings("ignore:\\s*Previous calculation was induced"),
]


def raises_rt(text):
    return pytest.raises(RuntimeError, match=re.escape(text))


def flags():
    return torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()


def messages(caught):
    return [str(w.message) for w in caught]


def identity_function(name, backward):
    """A one-input Function named ``name`` whose forward clones and whose backward is
    ``backward(ctx, grad)``."""

    def forward(ctx, x):
        return x.clone()

    return type(
        name,
        (torch.autograd.Function,),
        {"forward": staticmethod(forward), "backward": staticmethod(backward)},
    )


def nan_function():
    return identity_function("MyFunc", lambda ctx, g: g * float("nan"))


def boom_function():
    def backward(ctx, g):
        raise ValueError("boom in backward")

    return identity_function("Boom", backward)


def outer_function():
    """``Outer``'s backward builds a small graph through ``Boom`` and differentiates it, so
    Boom's failure happens in a backward nested inside OuterBackward."""
    Boom = boom_function()

    class Outer(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            with torch.enable_grad():
                xd = x.detach().requires_grad_()
                (gx,) = torch.autograd.grad(Boom.apply(xd).sum(), xd)
            return g * gx

    return Outer


def test_C140_nested_backward_error_names_inducing_node():
    Outer = outer_function()
    x = torch.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            apply_line = inspect.currentframe().f_lineno + 1
            y = Outer.apply(x)
            with pytest.raises(ValueError, match="boom in backward"):
                y.sum().backward()
    msgs = messages(caught)
    induced = [
        m
        for m in msgs
        if "Previous calculation was induced by OuterBackward. Traceback of forward call that "
        "induced the previous calculation:" in m
    ]
    assert len(induced) == 1
    assert (
        f"line {apply_line}, in test_C140_nested_backward_error_names_inducing_node" in induced[0]
    )
    assert any(m.startswith("Error detected in BoomBackward.") for m in msgs)
