"""Grad modes: checklist C105–C129 (spec autograd.md §7).

no_grad / enable_grad / set_grad_enabled (context managers, decorators, plain call,
generators, classes, threads, exceptions), inference mode and inference tensors, and the
multithreading flag.
"""

import re
import threading

import ferrograd as torch
import pytest

MOD = torch.__name__


def raises_rt(text):
    return pytest.raises(RuntimeError, match=re.escape(text))


# --------------------------------------------------------------------------- §7.1


def test_C105_no_grad_disables_grad_and_recording():
    x = torch.ones(3, requires_grad=True)
    assert torch.is_grad_enabled() is True
    with torch.no_grad():
        assert torch.is_grad_enabled() is False
        y = x * 2
    assert y.requires_grad is False
    assert torch.is_grad_enabled() is True


def test_C105_no_grad_is_exported_from_autograd_grad_mode():
    assert torch.autograd.grad_mode.no_grad is torch.no_grad
    assert torch.autograd.grad_mode.enable_grad is torch.enable_grad
    assert torch.autograd.grad_mode.set_grad_enabled is torch.set_grad_enabled
    assert torch.autograd.no_grad is torch.no_grad


def test_C106_factory_requires_grad_inside_no_grad():
    with torch.no_grad():
        t = torch.ones(2, requires_grad=True)
    assert t.requires_grad is True
    assert t.is_leaf is True


def test_C106_parameter_requires_grad_inside_no_grad():
    nn = getattr(torch, "nn", None)
    if nn is None or not hasattr(nn, "Parameter"):
        pytest.skip("torch.nn.Parameter not available yet")
    with torch.no_grad():
        p = nn.Parameter(torch.ones(2))
    assert p.requires_grad is True


def test_C107_no_grad_decorator_without_parens():
    @torch.no_grad
    def f(x):
        assert torch.is_grad_enabled() is False
        return x * 2

    x = torch.ones(2, requires_grad=True)
    y = f(x)
    assert y.requires_grad is False
    assert torch.is_grad_enabled() is True


def test_C107_no_grad_decorator_with_parens():
    @torch.no_grad()
    def f(x):
        assert torch.is_grad_enabled() is False
        return x * 2

    x = torch.ones(2, requires_grad=True)
    y = f(x)
    assert y.requires_grad is False
    assert torch.is_grad_enabled() is True


def test_C107_decorated_function_keeps_name_and_return():
    @torch.no_grad()
    def my_func(a, b=3):
        return a + b

    assert my_func.__name__ == "my_func"
    assert my_func(1) == 4


def test_C108_enable_grad_decorator_inside_no_grad():
    @torch.enable_grad
    def f(x):
        assert torch.is_grad_enabled() is True
        return x * 2

    @torch.enable_grad()
    def g(x):
        return x * 3

    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        y = f(x)
        z = g(x)
        assert torch.is_grad_enabled() is False
    assert y.requires_grad is True
    assert y.grad_fn.name() == "MulBackward0"
    assert z.requires_grad is True


def test_C109_enable_grad_nested_in_no_grad():
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        with torch.enable_grad():
            assert torch.is_grad_enabled() is True
            y = x * 2
        assert torch.is_grad_enabled() is False
        z = x * 2
    assert torch.is_grad_enabled() is True
    assert y.requires_grad is True
    assert z.requires_grad is False


def test_C109_no_grad_nested_in_enable_grad_innermost_wins():
    with torch.enable_grad():
        with torch.no_grad():
            assert torch.is_grad_enabled() is False
        assert torch.is_grad_enabled() is True


def test_C110_set_grad_enabled_plain_call():
    x = torch.ones(2, requires_grad=True)
    torch.set_grad_enabled(False)
    try:
        assert torch.is_grad_enabled() is False
        y = x * 2
        assert y.requires_grad is False
    finally:
        torch.set_grad_enabled(True)
    assert torch.is_grad_enabled() is True
    assert (x * 2).requires_grad is True


def test_C111_set_grad_enabled_context_manager_restores():
    with torch.set_grad_enabled(False):
        assert torch.is_grad_enabled() is False
    assert torch.is_grad_enabled() is True


def test_C111_set_grad_enabled_context_restores_previous_false():
    with torch.no_grad():
        with torch.set_grad_enabled(True):
            assert torch.is_grad_enabled() is True
        assert torch.is_grad_enabled() is False


def test_C112_set_grad_enabled_decorator():
    seen = []

    @torch.set_grad_enabled(False)
    def f(x):
        seen.append(torch.is_grad_enabled())
        return x * 2

    # decoration did not change the mode
    assert torch.is_grad_enabled() is True
    x = torch.ones(2, requires_grad=True)
    y = f(x)
    assert seen == [False]
    assert y.requires_grad is False
    assert torch.is_grad_enabled() is True


def test_C113_set_grad_enabled_repr():
    assert (
        repr(torch.set_grad_enabled(True))
        == f"{MOD}.autograd.grad_mode.set_grad_enabled(mode=True)"
    )
    assert torch.is_grad_enabled() is True


def test_C114_no_grad_generator():
    @torch.no_grad()
    def gen():
        for i in range(3):
            yield i, torch.is_grad_enabled()

    outside = []
    inside = []
    for _, enabled in gen():
        inside.append(enabled)
        outside.append(torch.is_grad_enabled())
    assert inside == [False, False, False]
    assert outside == [True, True, True]


def test_C114_no_grad_generator_results_do_not_require_grad():
    x = torch.ones(2, requires_grad=True)

    @torch.no_grad()
    def gen():
        yield x * 2
        yield x * 3

    results = list(gen())
    assert [r.requires_grad for r in results] == [False, False]
    assert (x * 2).requires_grad is True


def test_C115_decorating_class_warns():
    with pytest.warns(
        FutureWarning,
        match=re.escape(
            "Decorating classes is deprecated and will be disabled in future versions."
        ),
    ):

        @torch.no_grad()
        class A:
            pass


def test_C116_grad_mode_is_thread_local():
    seen = []

    def worker():
        seen.append(torch.is_grad_enabled())
        x = torch.ones(2, requires_grad=True)
        seen.append((x * 2).requires_grad)

    with torch.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join(timeout=30)
        assert torch.is_grad_enabled() is False
    assert not t.is_alive()
    assert seen == [True, True]


def test_C116_no_grad_in_thread_does_not_leak_to_caller():
    inside = []
    ready = threading.Event()
    release = threading.Event()

    def worker():
        with torch.no_grad():
            inside.append(torch.is_grad_enabled())
            ready.set()
            release.wait(timeout=30)

    t = threading.Thread(target=worker)
    t.start()
    assert ready.wait(timeout=30)
    try:
        assert torch.is_grad_enabled() is True
    finally:
        release.set()
        t.join(timeout=30)
    assert not t.is_alive()
    assert inside == [False]


def test_C117_grad_mode_restored_after_exception():
    with pytest.raises(ValueError), torch.no_grad():
        assert torch.is_grad_enabled() is False
        raise ValueError("boom")
    assert torch.is_grad_enabled() is True


def test_C117_grad_mode_restored_after_exception_in_decorated_function():
    @torch.no_grad()
    def f():
        raise KeyError("boom")

    with pytest.raises(KeyError):
        f()
    assert torch.is_grad_enabled() is True


# --------------------------------------------------------------------------- §7.2


def test_C118_inference_mode_flags_and_new_tensors():
    assert torch.is_inference_mode_enabled() is False
    with torch.inference_mode():
        assert torch.is_inference_mode_enabled() is True
        assert torch.is_grad_enabled() is False
        t = torch.ones(3)
        assert t.is_inference() is True
    assert torch.is_inference_mode_enabled() is False
    assert torch.is_grad_enabled() is True
    assert torch.ones(3).is_inference() is False


def test_C119_results_in_inference_mode_are_inference_tensors():
    x = torch.ones(3, requires_grad=True)
    with torch.inference_mode():
        y = x * 2
    assert y.is_inference() is True
    assert y.requires_grad is False
    assert y.grad_fn is None
    assert y.tolist() == [2.0, 2.0, 2.0]


def test_C120_inplace_on_normal_tensor_in_inference_mode_bumps_version():
    t = torch.zeros(3)
    with torch.inference_mode():
        t.add_(1)
    assert t._version == 1
    assert t.is_inference() is False
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_C121_enable_grad_inside_inference_mode():
    x = torch.ones(3, requires_grad=True)
    with torch.inference_mode(), torch.enable_grad():
        assert torch.is_grad_enabled() is True
        y = x * 2
    assert y.requires_grad is False
    assert y.is_inference() is True


def test_C122_inference_mode_false_nested():
    with torch.inference_mode():
        with torch.inference_mode(False):
            assert torch.is_inference_mode_enabled() is False
            assert torch.is_grad_enabled() is True
            t = torch.ones(3)
        assert torch.is_inference_mode_enabled() is True
    assert t.is_inference() is False


def test_C123_inference_mode_decorator_without_parens():
    @torch.inference_mode
    def f():
        assert torch.is_inference_mode_enabled() is True
        return torch.ones(2)

    assert f().is_inference() is True
    assert torch.is_inference_mode_enabled() is False


def test_C123_inference_mode_decorator_with_parens():
    @torch.inference_mode()
    def f(x):
        return x * 2

    y = f(torch.ones(2, requires_grad=True))
    assert y.is_inference() is True
    assert y.requires_grad is False


def test_C123_inference_mode_false_decorator_makes_normal_tensors():
    @torch.inference_mode(mode=False)
    def f():
        assert torch.is_inference_mode_enabled() is False
        return torch.ones(2)

    with torch.inference_mode():
        t = f()
    assert t.is_inference() is False


# --------------------------------------------------------------------------- §7.3


def make_inference_tensor():
    with torch.inference_mode():
        return torch.ones(3)


def test_C124_inplace_on_inference_tensor_outside_raises():
    t = make_inference_tensor()
    with raises_rt("Inplace update to inference tensor outside InferenceMode is not allowed."):
        t.add_(1)


def test_C124_inplace_on_inference_tensor_inside_is_allowed():
    t = make_inference_tensor()
    with torch.inference_mode():
        t.add_(1)
    assert t.tolist() == [2.0, 2.0, 2.0]


def test_C125_inference_tensor_version_raises():
    t = make_inference_tensor()
    with raises_rt("Inference tensors do not track version counter."):
        _ = t._version


def test_C126_inference_tensor_cannot_be_saved_for_backward():
    x = torch.ones(3, requires_grad=True)
    inf = make_inference_tensor()
    with raises_rt("Inference tensors cannot be saved for backward."):
        _ = x * inf


def test_C126_functional_op_not_saving_inference_tensor_is_allowed():
    x = torch.ones(3, requires_grad=True)
    inf = make_inference_tensor()
    y = x + inf  # add saves nothing
    assert y.requires_grad is True
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_C127_requires_grad_on_inference_tensor_outside_raises():
    t = make_inference_tensor()
    with raises_rt(
        "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
    ):
        t.requires_grad_()


def test_C128_view_of_inference_tensor_is_inference():
    t = make_inference_tensor()
    v = t[:2]
    assert v.is_inference() is True


def test_C128_clone_of_inference_tensor_is_normal():
    t = make_inference_tensor()
    c = t.clone()
    assert c.is_inference() is False
    v0 = c._version  # a normal tensor: version tracked, in-place allowed
    c.add_(1)
    assert c._version == v0 + 1
    assert c.tolist() == [2.0, 2.0, 2.0]


# --------------------------------------------------------------------------- §7.4


def test_C129_multithreading_enabled_by_default():
    assert torch.autograd.is_multithreading_enabled() is True


def test_C129_set_multithreading_enabled_context_manager():
    with torch.autograd.set_multithreading_enabled(False):
        assert torch.autograd.is_multithreading_enabled() is False
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        assert x.grad.tolist() == [2.0, 4.0]
    assert torch.autograd.is_multithreading_enabled() is True
