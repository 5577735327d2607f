"""Backward hooks: tensor hooks, post-accumulate-grad hooks, node hooks and pre-hooks,
their order, and multi-grad hooks — checklist C156–C174, C186–C192, C413 (spec
autograd.md §1.10, §10, §11.4).
"""

import re

import ferrograd as torch
import pytest


def raises_rt(text):
    return pytest.raises(RuntimeError, match=re.escape(text))


def multi_grad_hook(*args, **kwargs):
    return torch.autograd.graph.register_multi_grad_hook(*args, **kwargs)


def presence_hook(tensors):
    calls = []
    handle = multi_grad_hook(tensors, lambda grads: calls.append([g is not None for g in grads]))
    return calls, handle


def test_C186_multi_grad_hook_reports_relevant_tensors():
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    c = a * b
    d = a * b
    calls, _ = presence_hook((a, b, c, d))
    c.sum().backward(retain_graph=True)
    assert calls == [[True, True, True, False]]


def test_C186_multi_grad_hook_receives_the_gradients():
    seen = []
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    c = a * b
    multi_grad_hook((a, b, c), lambda grads: seen.append([g.tolist() for g in grads]))
    c.sum().backward()
    assert seen == [[[3.0, 4.0], [1.0, 2.0], [1.0, 1.0]]]


def test_C186_multi_grad_hook_sees_hook_modified_gradients():
    seen = []
    a = torch.ones(2, requires_grad=True)
    a.register_hook(lambda g: g * 2)  # registered first: runs before the multi-grad hook
    multi_grad_hook((a,), lambda grads: seen.append(grads[0].tolist()))
    (a * 3).sum().backward()
    assert seen == [[6.0, 6.0]]


def test_C187_multi_grad_hook_with_backward_inputs():
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    c = a * b
    d = a * b
    calls, _ = presence_hook((a, b, c, d))
    c.sum().backward(inputs=(a,), retain_graph=True)
    assert calls == [[True, False, True, False]]


def test_C188_multi_grad_hook_called_once_per_backward():
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    c = a * b
    calls, _ = presence_hook((a, b, c))
    c.sum().backward(retain_graph=True)
    c.sum().backward(retain_graph=True)
    assert calls == [[True, True, True], [True, True, True]]


def test_C188_removed_multi_grad_hook_never_called():
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    c = a * b
    calls, handle = presence_hook((a, b, c))
    c.sum().backward(retain_graph=True)
    handle.remove()
    c.sum().backward()
    assert len(calls) == 1


def test_C188_multi_grad_hook_return_value_ignored():
    a = torch.ones(3, requires_grad=True)
    multi_grad_hook((a,), lambda grads: [torch.zeros(3)])
    (a * 2).sum().backward()
    assert a.grad.tolist() == [2.0, 2.0, 2.0]


def test_C188_multi_grad_hook_rejects_tensor_without_grad_fn():
    a = torch.ones(3, requires_grad=True)
    with pytest.raises(AssertionError, match=re.escape("Expected gradient function to be set")):
        multi_grad_hook((a, torch.ones(3)), lambda grads: None)


def test_C189_any_mode_called_once_with_one_gradient():
    got = []
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    multi_grad_hook((a, b), lambda g: got.append(g), mode="any")
    (a * 2 + b * 3).sum().backward()
    assert len(got) == 1
    assert isinstance(got[0], torch.Tensor)
    assert got[0].tolist() in ([2.0, 2.0, 2.0], [3.0, 3.0, 3.0])


def test_C189_any_mode_triggers_again_on_next_call():
    got = []
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    out = (a * 2 + b * 3).sum()
    multi_grad_hook((a, b), lambda g: got.append(g), mode="any")
    out.backward(retain_graph=True)
    out.backward()
    assert len(got) == 2


def test_C189_any_mode_skips_tensors_not_requiring_grad():
    got = []
    a = torch.ones(3, requires_grad=True)
    multi_grad_hook((a, torch.ones(3)), lambda g: got.append(g.tolist()), mode="any")
    (a * 2).sum().backward()
    assert got == [[2.0, 2.0, 2.0]]


def test_C189_any_mode_handle_remove():
    got = []
    a = torch.ones(3, requires_grad=True)
    handle = multi_grad_hook((a,), lambda g: got.append(g), mode="any")
    handle.remove()
    (a * 2).sum().backward()
    assert got == []


def test_C190_invalid_mode_raises():
    a = torch.ones(3, requires_grad=True)
    with pytest.raises(
        ValueError, match=re.escape("Expects mode to be one of ('all', 'any') but got some")
    ):
        multi_grad_hook((a,), lambda g: None, mode="some")


def test_C191_multi_grad_hook_over_non_leaves_in_grad():
    seen = []
    x = torch.ones(3, requires_grad=True)
    p = x * 2
    q = x * 3
    loss = (p * q).sum()
    multi_grad_hook((p, q), lambda gs: seen.append([None if g is None else g.tolist() for g in gs]))
    torch.autograd.grad(loss, p, retain_graph=True)
    assert seen == [[[3.0, 3.0, 3.0], None]]


def test_C191_multi_grad_hook_over_non_leaves_all_needed():
    seen = []
    x = torch.ones(3, requires_grad=True)
    p = x * 2
    q = x * 3
    loss = (p * q).sum()
    multi_grad_hook((p, q), lambda gs: seen.append([None if g is None else g.tolist() for g in gs]))
    torch.autograd.grad(loss, x)
    assert seen == [[[3.0, 3.0, 3.0], [2.0, 2.0, 2.0]]]


def test_C192_multi_grad_hook_with_leaf_in_grad_raises():
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    c = a * b
    multi_grad_hook((a, c), lambda gs: None)
    with raises_rt(
        "A leaf node was passed to _will_engine_execute_node but we are currently running "
        "autograd.grad(). This is currently not supported."
    ):
        torch.autograd.grad(c.sum(), a)
