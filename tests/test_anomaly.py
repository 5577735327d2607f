"""Anomaly detection: checklist C130–C141 (spec autograd.md §8).

The custom Functions some items need are built by factories inside the tests, so this file
still collects (and its flag tests still run) before ``torch.autograd.Function`` exists.
Anomaly mode is process-global; the ``_restore_anomaly_mode`` fixture in conftest.py turns
it off after every test.
"""

import inspect
import math
import re
import threading
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


# --------------------------------------------------------------------------- flags


def test_C130_anomaly_flags_default():
    assert flags() == (False, True)


def test_C131_detect_anomaly_construction_warns():
    with pytest.warns(UserWarning, match=re.escape(ENABLED_WARNING)):
        torch.autograd.detect_anomaly()


def test_C131_construction_alone_does_not_enable():
    torch.autograd.detect_anomaly()
    assert flags() == (False, True)


def test_C132_detect_anomaly_sets_both_flags():
    with torch.autograd.detect_anomaly():
        assert flags() == (True, True)
    assert flags() == (False, True)


def test_C132_detect_anomaly_restores_previous_pair():
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        with torch.autograd.detect_anomaly(check_nan=True):
            assert flags() == (True, True)
        assert flags() == (True, False)
    assert flags() == (False, True)


def test_C132_detect_anomaly_check_nan_false():
    with torch.autograd.detect_anomaly(check_nan=False):
        assert flags() == (True, False)
    assert flags() == (False, True)


def test_C133_set_detect_anomaly_as_context_manager():
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        assert flags() == (True, False)
    assert flags() == (False, True)


def test_C133_set_detect_anomaly_as_plain_call_stays_set():
    torch.autograd.set_detect_anomaly(True, check_nan=False)
    assert flags() == (True, False)
    torch.autograd.set_detect_anomaly(False)
    assert flags() == (False, True)


def test_C133_set_detect_anomaly_restores_on_exception():
    with pytest.raises(KeyError):
        with torch.autograd.set_detect_anomaly(True):
            raise KeyError("inside")
    assert flags() == (False, True)


def test_C134_detect_anomaly_is_not_a_decorator():
    with pytest.raises(TypeError, match=re.escape("'detect_anomaly' object is not callable")):
        torch.autograd.detect_anomaly()(lambda: None)


def test_C135_anomaly_flag_is_global_across_threads():
    seen = []
    with torch.autograd.set_detect_anomaly(True):
        t = threading.Thread(target=lambda: seen.append(torch.is_anomaly_enabled()))
        t.start()
        t.join(timeout=30)
    assert seen == [True]


def test_C135_thread_sees_flag_set_by_plain_call():
    torch.autograd.set_detect_anomaly(True)
    seen = []
    t = threading.Thread(target=lambda: seen.append(torch.is_anomaly_enabled()))
    t.start()
    t.join(timeout=30)
    assert seen == [True]


# --------------------------------------------------------------------------- NaN checks


def test_C136_nan_in_builtin_node_raises():
    a = torch.zeros(1, requires_grad=True)
    with torch.autograd.detect_anomaly():
        out = a / a
        with raises_rt("Function 'DivBackward0' returned nan values in its 1th output."):
            out.sum().backward()


def test_C136_nan_error_also_warns_error_detected():
    a = torch.zeros(1, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            out = a / a
            with pytest.raises(RuntimeError):
                out.sum().backward()
    assert any(
        m.startswith(
            "Error detected in DivBackward0. Traceback of forward call that caused the error:"
        )
        for m in messages(caught)
    )


def test_C136_nan_not_checked_without_anomaly_mode():
    a = torch.zeros(1, requires_grad=True)
    (a / a).sum().backward()
    assert math.isnan(a.grad.item())


def test_C136_infinity_is_not_an_anomaly():
    a = torch.zeros(1, requires_grad=True)
    with torch.autograd.detect_anomaly():
        (torch.ones(1) / a).sum().backward()  # d/da (1/a) = -1/a**2 = -inf at 0
    assert a.grad.item() == -math.inf


def test_C137_nan_in_custom_function_raises():
    MyFunc = nan_function()
    x = torch.ones(2, requires_grad=True)
    with torch.autograd.detect_anomaly():
        y = MyFunc.apply(x)
        with raises_rt("Function 'MyFuncBackward' returned nan values in its 0th output."):
            y.sum().backward()


def test_C138_error_warning_carries_forward_stack():
    MyFunc = nan_function()
    x = torch.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            apply_line = inspect.currentframe().f_lineno + 1
            y = MyFunc.apply(x)
            with pytest.raises(RuntimeError):
                y.sum().backward()
    found = [
        m
        for m in messages(caught)
        if m.startswith(
            "Error detected in MyFuncBackward. Traceback of forward call that caused the error:"
        )
    ]
    assert len(found) == 1
    frame = (
        f'File "{__file__}", line {apply_line}, in test_C138_error_warning_carries_forward_stack'
    )
    assert frame in found[0]


def test_C138_raising_backward_also_warns_error_detected():
    Boom = boom_function()
    x = torch.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            apply_line = inspect.currentframe().f_lineno + 1
            y = Boom.apply(x)
            with pytest.raises(ValueError):
                y.sum().backward()
    found = [m for m in messages(caught) if m.startswith("Error detected in BoomBackward.")]
    assert len(found) == 1
    assert f"line {apply_line}, in test_C138_raising_backward" in found[0]


def test_C138_no_error_warning_without_anomaly_mode():
    Boom = boom_function()
    x = torch.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = Boom.apply(x)
        with pytest.raises(ValueError):
            y.sum().backward()
    assert not any("Error detected in" in m for m in messages(caught))


def test_C139_check_nan_false_lets_nan_propagate():
    a = torch.zeros(1, requires_grad=True)
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        (a / a).sum().backward()
    assert math.isnan(a.grad.item())


def test_C139_detect_anomaly_check_nan_false_custom_function():
    MyFunc = nan_function()
    x = torch.ones(2, requires_grad=True)
    with torch.autograd.detect_anomaly(check_nan=False):
        MyFunc.apply(x).sum().backward()
    assert all(math.isnan(v) for v in x.grad.tolist())


# --------------------------------------------------------------------------- nested backward


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


def test_C140_outer_node_error_is_reported_too():
    # The failure propagates out of OuterBackward as well, which is reported in turn.
    Outer = outer_function()
    x = torch.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            y = Outer.apply(x)
            with pytest.raises(ValueError):
                y.sum().backward()
    assert any(m.startswith("Error detected in OuterBackward.") for m in messages(caught))


# --------------------------------------------------------------------------- propagation


@pytest.mark.parametrize("anomaly", [False, True], ids=["plain", "anomaly"])
def test_C141_custom_backward_exception_propagates_unchanged(anomaly):
    Boom = boom_function()
    x = torch.ones(2, requires_grad=True)
    with torch.autograd.set_detect_anomaly(anomaly):
        y = Boom.apply(x)
        with pytest.raises(ValueError) as info:
            y.sum().backward()
    assert info.type is ValueError
    assert str(info.value) == "boom in backward"


@pytest.mark.parametrize("anomaly", [False, True], ids=["plain", "anomaly"])
def test_C141_custom_exception_class_propagates(anomaly):
    class MyError(Exception):
        pass

    err = MyError("custom")

    def backward(ctx, g):
        raise err

    F = identity_function("Raiser", backward)
    x = torch.ones(2, requires_grad=True)
    with torch.autograd.set_detect_anomaly(anomaly):
        y = F.apply(x)
        with pytest.raises(MyError) as info:
            y.sum().backward()
    assert info.value is err


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
