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


# --------------------------------------------------------------------------- registration


def test_C156_register_hook_without_requires_grad_raises():
    with raises_rt("cannot register a hook on a tensor that doesn't require gradient"):
        torch.randn(2).register_hook(lambda g: g)


def test_C156_post_accumulate_hook_without_requires_grad_raises():
    with raises_rt("cannot register a hook on a tensor that doesn't require gradient"):
        torch.randn(2).register_post_accumulate_grad_hook(lambda p: None)


def test_C157_post_accumulate_hook_on_non_leaf_raises():
    x = torch.randn(2, requires_grad=True)
    with raises_rt("post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda p: None)


def test_C158_hook_handles_are_removable_handles():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    handles = [
        x.register_hook(lambda g: None),
        x.register_post_accumulate_grad_hook(lambda p: None),
        y.grad_fn.register_hook(lambda gi, go: None),
        y.grad_fn.register_prehook(lambda go: None),
    ]
    for h in handles:
        assert type(h).__name__ == "RemovableHandle"
        assert callable(h.remove)


# --------------------------------------------------------------------------- tensor hooks


def test_C158_tensor_hook_replaces_gradient():
    v = torch.zeros(3, requires_grad=True)
    v.register_hook(lambda g: g * 2)
    v.backward(torch.tensor([1.0, 2.0, 3.0]))
    assert v.grad.tolist() == [2.0, 4.0, 6.0]


def test_C158_removed_tensor_hook_no_longer_applies():
    v = torch.zeros(3, requires_grad=True)
    h = v.register_hook(lambda g: g * 2)
    h.remove()
    v.backward(torch.tensor([1.0, 2.0, 3.0]))
    assert v.grad.tolist() == [1.0, 2.0, 3.0]


def test_C158_removing_twice_is_harmless():
    v = torch.zeros(3, requires_grad=True)
    h = v.register_hook(lambda g: g * 2)
    h.remove()
    h.remove()
    v.backward(torch.ones(3))
    assert v.grad.tolist() == [1.0, 1.0, 1.0]


def test_C159_hook_returning_none_keeps_gradient():
    seen = []
    v = torch.zeros(3, requires_grad=True)
    v.register_hook(lambda g: seen.append(g.tolist()))
    v.backward(torch.tensor([1.0, 2.0, 3.0]))
    assert seen == [[1.0, 2.0, 3.0]]
    assert v.grad.tolist() == [1.0, 2.0, 3.0]


def test_C160_hook_changing_size_raises():
    v = torch.zeros(3, requires_grad=True)
    v.register_hook(lambda g: torch.ones(5))
    with raises_rt("hook '<lambda>' has changed the size of value"):
        v.backward(torch.ones(3))


def test_C160_size_error_quotes_the_hook_name():
    def widen(g):
        return torch.ones(5)

    v = torch.zeros(3, requires_grad=True)
    v.register_hook(widen)
    with raises_rt("hook 'widen' has changed the size of value"):
        v.backward(torch.ones(3))


def test_C161_hook_returning_int_raises():
    v = torch.zeros(3, requires_grad=True)
    v.register_hook(lambda g: 1)
    with pytest.raises(TypeError, match=re.escape("expected Variable, but hook returned 'int'")):
        v.backward(torch.ones(3))


# --------------------------------------------------------------------------- node hooks


def test_C162_node_post_hook_replaces_grad_inputs():
    a = torch.ones(3, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_hook(lambda gI, gO: (gO[0] * 2,))
    b.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0, 2.0]


def test_C162_node_pre_hook_replaces_grad_outputs():
    a = torch.ones(3, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_prehook(lambda gO: (gO[0] * 2,))
    b.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0, 2.0]


def test_C162_node_hooks_receive_tuples():
    seen = []
    a = torch.ones(3, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_prehook(lambda gO: seen.append(("pre", type(gO), len(gO))))
    b.grad_fn.register_hook(lambda gI, gO: seen.append(("post", type(gI), len(gI), type(gO))))
    b.sum().backward()
    assert seen == [("pre", tuple, 1), ("post", tuple, 1, tuple)]


def test_C162_removed_node_hook_never_runs_again():
    calls = []
    a = torch.ones(3, requires_grad=True)
    b = a.clone()
    h = b.grad_fn.register_hook(lambda gI, gO: calls.append("post"))
    p = b.grad_fn.register_prehook(lambda gO: calls.append("pre"))
    b.sum().backward(retain_graph=True)
    h.remove()
    p.remove()
    b.sum().backward()
    assert calls == ["pre", "post"]


def test_C163_node_post_hook_wrong_count_raises():
    a = torch.ones(3, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_hook(lambda gI, gO: (gO[0] * 2, gO[0]))
    with raises_rt(
        "hook '<lambda>' has returned an incorrect number of values (got 2, but expected 1)"
    ):
        b.sum().backward()


def test_C163_node_pre_hook_wrong_count_raises():
    a = torch.ones(3, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_prehook(lambda gO: (gO[0], gO[0]))
    with raises_rt(
        "hook '<lambda>' has returned an incorrect number of values (got 2, but expected 1)"
    ):
        b.sum().backward()


def test_C164_node_pre_hook_returning_tensor_raises():
    a = torch.ones(3, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_prehook(lambda gO: gO[0])
    with pytest.raises(TypeError, match=re.escape("expected tuple, but hook returned 'Tensor'")):
        b.sum().backward()


def test_C164_node_post_hook_returning_tensor_raises():
    a = torch.ones(3, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_hook(lambda gI, gO: gI[0])
    with pytest.raises(TypeError, match=re.escape("expected tuple, but hook returned 'Tensor'")):
        b.sum().backward()


def test_C164_node_pre_hook_wrong_size_raises():
    a = torch.ones(3, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_prehook(lambda gO: (torch.ones(4),))
    with raises_rt("hook '<lambda>' has changed the size of value"):
        b.sum().backward()


def test_C164_node_post_hook_wrong_size_raises():
    a = torch.ones(3, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_hook(lambda gI, gO: (torch.ones(4),))
    with raises_rt("hook '<lambda>' has changed the size of value"):
        b.sum().backward()


def test_C167_post_hook_grad_inputs_none_for_non_differentiable_input():
    seen = []
    x = torch.ones(3, requires_grad=True)
    y = torch.ones(3)
    z = x * y
    z.grad_fn.register_hook(lambda gI, gO: seen.append((gI, gO)))
    z.sum().backward()
    ((grad_inputs, grad_outputs),) = seen
    assert len(grad_inputs) == 2
    assert grad_inputs[0].tolist() == [1.0, 1.0, 1.0]
    assert grad_inputs[1] is None
    assert len(grad_outputs) == 1 and grad_outputs[0].tolist() == [1.0, 1.0, 1.0]


# --------------------------------------------------------------------------- post-accumulate


def test_C165_post_accumulate_hook_returning_tensor_raises():
    p = torch.ones(3, requires_grad=True)
    p.register_post_accumulate_grad_hook(lambda t: t.grad)
    with raises_rt("Tensor post accumulate grad hooks should return None."):
        p.sum().backward()


def test_C166_post_accumulate_hook_sgd_step():
    lr = 0.5
    v = torch.zeros(3, requires_grad=True)
    v.register_post_accumulate_grad_hook(lambda p: p.add_(p.grad, alpha=-lr))
    (v * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert v.tolist() == [-0.5, -1.0, -1.5]
    assert v.grad.tolist() == [1.0, 2.0, 3.0]


def test_C166_post_accumulate_hook_receives_the_leaf_itself():
    seen = []
    v = torch.zeros(3, requires_grad=True)
    v.register_post_accumulate_grad_hook(lambda p: seen.append(p))
    (v * 2).sum().backward()
    assert len(seen) == 1 and seen[0] is v


def test_C166_post_accumulate_hook_may_reset_grad():
    v = torch.zeros(3, requires_grad=True)

    def consume(p):
        p.grad = None

    v.register_post_accumulate_grad_hook(consume)
    (v * 2).sum().backward()
    assert v.grad is None


def test_C166_removed_post_accumulate_hook_does_not_run():
    calls = []
    v = torch.zeros(3, requires_grad=True)
    h = v.register_post_accumulate_grad_hook(lambda p: calls.append(1))
    h.remove()
    (v * 2).sum().backward()
    assert calls == []


# --------------------------------------------------------------------------- when hooks fire


def test_C168_post_accumulate_hook_does_not_run_for_grad():
    calls = []
    x = torch.ones(3, requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda p: calls.append(1))
    torch.autograd.grad((x * 3).sum(), x)
    assert calls == []
    assert x.grad is None


def test_C168_tensor_hook_on_grad_input_changes_returned_gradient():
    x = torch.ones(3, requires_grad=True)
    x.register_hook(lambda g: g * 2)
    (g,) = torch.autograd.grad((x * 3).sum(), x)
    assert g.tolist() == [6.0, 6.0, 6.0]


def test_C168_tensor_hook_on_nonleaf_grad_input_changes_returned_gradient():
    x = torch.ones(3, requires_grad=True)
    h = x * 2
    h.register_hook(lambda g: g + 1)
    (g,) = torch.autograd.grad((h * 3).sum(), h)
    assert g.tolist() == [4.0, 4.0, 4.0]


def test_C168_hooks_outside_executed_subgraph_do_not_fire():
    fired = []
    a = torch.ones(3, requires_grad=True)
    c = torch.ones(3, requires_grad=True)
    u = c * 2
    u.register_hook(lambda g: fired.append("tensor"))
    u.grad_fn.register_hook(lambda gI, gO: fired.append("node"))
    c.register_post_accumulate_grad_hook(lambda p: fired.append("post"))
    (a * 2).sum().backward()
    assert fired == []


def test_C168_node_hook_not_run_when_node_is_not_needed_for_inputs():
    fired = []
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    ua = a * 2
    ub = b * 3
    ub.grad_fn.register_hook(lambda gI, gO: fired.append("ub"))
    (ua + ub).sum().backward(inputs=[a])
    assert fired == []
    assert a.grad.tolist() == [2.0, 2.0, 2.0] and b.grad is None


def grad_mode_log():
    """Register one hook of each kind on ``x -> y = x*x`` that records grad mode."""
    log = []
    x = torch.ones(3, requires_grad=True)
    y = x * x
    y.grad_fn.register_prehook(lambda gO: log.append(("node_pre", torch.is_grad_enabled())))
    y.grad_fn.register_hook(lambda gI, gO: log.append(("node_post", torch.is_grad_enabled())))
    x.register_hook(lambda g: log.append(("tensor", torch.is_grad_enabled())))
    x.register_post_accumulate_grad_hook(
        lambda p: log.append(("post_acc", torch.is_grad_enabled()))
    )
    return x, y, log


def test_C169_hooks_run_with_grad_disabled():
    x, y, log = grad_mode_log()
    y.sum().backward()
    assert sorted(log) == sorted(
        [("node_pre", False), ("node_post", False), ("tensor", False), ("post_acc", False)]
    )


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_C169_hooks_run_with_grad_enabled_under_create_graph():
    x, y, log = grad_mode_log()
    y.sum().backward(create_graph=True)
    assert sorted(log) == sorted(
        [("node_pre", True), ("node_post", True), ("tensor", True), ("post_acc", True)]
    )
    x.grad = None  # break the create_graph .grad cycle


def test_C169_hooks_run_with_grad_disabled_even_if_caller_enabled_it():
    seen = []
    x = torch.ones(3, requires_grad=True)
    x.register_hook(lambda g: seen.append(torch.is_grad_enabled()))
    with torch.enable_grad():
        torch.autograd.grad((x * 2).sum(), x)
    assert seen == [False]


# --------------------------------------------------------------------------- ordering


def test_C170_tensor_hooks_run_in_registration_order_and_chain():
    seen = []
    x = torch.ones(3, requires_grad=True)
    x.register_hook(lambda g: (seen.append(("first", g.tolist())), g + 1)[1])
    x.register_hook(lambda g: (seen.append(("second", g.tolist())), g * 10)[1])
    (x * 2).sum().backward()
    assert seen == [("first", [2.0, 2.0, 2.0]), ("second", [3.0, 3.0, 3.0])]
    assert x.grad.tolist() == [30.0, 30.0, 30.0]


def test_C171_retained_grad_reflects_hooks_registered_before_and_after():
    L = torch.ones(3, requires_grad=True)
    M = L * 2
    M.register_hook(lambda g: g * 3)
    M.retain_grad()
    M.register_hook(lambda g: g + 1)
    M.sum().backward()
    assert M.grad.tolist() == [4.0, 4.0, 4.0]
    assert L.grad.tolist() == [8.0, 8.0, 8.0]


def test_C171_retained_grad_reflects_hook_registered_after_retain_grad():
    L = torch.ones(3, requires_grad=True)
    M = L * 2
    M.retain_grad()
    M.register_hook(lambda g: g * 7)
    M.sum().backward()
    assert M.grad.tolist() == [7.0, 7.0, 7.0]


def test_C172_full_hook_order_for_one_node_and_its_leaf():
    order = []
    L = torch.ones(3, requires_grad=True)
    M = L * 2
    M.retain_grad()
    M.register_hook(lambda g: order.append("tensor_pre(M) #1"))
    M.register_hook(lambda g: order.append("tensor_pre(M) #2"))
    M.grad_fn.register_prehook(lambda gO: order.append("node_pre(MulBackward0)"))
    M.grad_fn.register_hook(lambda gI, gO: order.append("node_post(MulBackward0)"))
    L.register_hook(lambda g: order.append("tensor_pre(L)"))
    acc = M.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda gO: order.append("node_pre(AccumulateGrad)"))
    acc.register_hook(lambda gI, gO: order.append("node_post(AccumulateGrad)"))
    L.register_post_accumulate_grad_hook(
        lambda p: order.append(f"post_accumulate(L) grad={p.grad.tolist()}")
    )
    (M * M).sum().backward()
    assert order == [
        "tensor_pre(M) #1",
        "tensor_pre(M) #2",
        "node_pre(MulBackward0)",
        "node_post(MulBackward0)",
        "tensor_pre(L)",
        "node_pre(AccumulateGrad)",
        "post_accumulate(L) grad=[8.0, 8.0, 8.0]",  # .grad is already set
        "node_post(AccumulateGrad)",
    ]


def test_C172_retain_grad_captured_before_node_pre_hook():
    seen = []
    L = torch.ones(3, requires_grad=True)
    M = L * 2
    M.retain_grad()
    M.grad_fn.register_prehook(lambda gO: seen.append(M.grad.tolist()))
    (M * M).sum().backward()
    assert seen == [[4.0, 4.0, 4.0]]


def test_C172_accumulate_grad_hook_arguments():
    seen = []
    L = torch.ones(3, requires_grad=True)
    M = L * 2
    acc = M.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda gO: seen.append(("pre", [g.tolist() for g in gO])))
    acc.register_hook(lambda gI, gO: seen.append(("post", gI, [g.tolist() for g in gO])))
    M.sum().backward()
    assert seen == [("pre", [[2.0, 2.0, 2.0]]), ("post", (), [[2.0, 2.0, 2.0]])]


def test_C172_accumulate_grad_pre_hook_changes_accumulated_grad():
    L = torch.ones(3, requires_grad=True)
    M = L * 2
    M.grad_fn.next_functions[0][0].register_prehook(lambda gO: (gO[0] * 10,))
    M.sum().backward()
    assert L.grad.tolist() == [20.0, 20.0, 20.0]


def test_C173_hook_on_intermediate_scales_leaf_gradient():
    L = torch.ones(3, requires_grad=True)
    M = L * 2
    M.register_hook(lambda g: g * 5)
    M.sum().backward()
    assert L.grad.tolist() == [10.0, 10.0, 10.0]


def test_C173_leaf_hook_result_is_what_accumulates():
    L = torch.ones(3, requires_grad=True)
    L.register_hook(lambda g: g * 3)
    L.sum().backward()
    assert L.grad.tolist() == [3.0, 3.0, 3.0]


def test_C174_hooks_around_inplace_op():
    got = []
    a = torch.ones(3, requires_grad=True)
    b = a.clone()
    b.register_hook(lambda g: got.append(("before_inplace", g.tolist())))
    b.mul_(2)
    b.register_hook(lambda g: got.append(("after_inplace", g.tolist())))
    (b * 3).sum().backward()
    assert got == [("after_inplace", [3.0, 3.0, 3.0]), ("before_inplace", [6.0, 6.0, 6.0])]
    assert a.grad.tolist() == [6.0, 6.0, 6.0]


def test_C413_retained_grad_captured_before_node_pre_hook_rewrites():
    L = torch.ones(3, requires_grad=True)
    M = L * 1
    M.retain_grad()
    M.grad_fn.register_prehook(lambda g: (g[0] * 10,))
    M.sum().backward()
    assert M.grad.tolist() == [1.0, 1.0, 1.0]
    assert L.grad.tolist() == [10.0, 10.0, 10.0]


# --------------------------------------------------------------------------- multi-grad hooks


def presence_hook(tensors):
    calls = []
    handle = multi_grad_hook(tensors, lambda grads: calls.append([g is not None for g in grads]))
    return calls, handle


@pytest.mark.parametrize(
    "only_a, expected",
    [
        (False, [True, True, True, False]),  # C186: d is not in the graph
        (True, [True, False, True, False]),  # C187: inputs=(a,), so b is not needed
    ],
)
def test_C186_C187_multi_grad_hook_reports_relevant_tensors(only_a, expected):
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    c = a * b
    d = a * b
    calls, _ = presence_hook((a, b, c, d))
    c.sum().backward(retain_graph=True, inputs=(a,) if only_a else None)
    assert calls == [expected]


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


def test_C189_any_mode_called_once_per_call_over_many_calls():
    # More calls than the hook remembers (it forgets finished ones): still once each.
    got = []
    a = torch.ones(1, requires_grad=True)
    b = torch.ones(1, requires_grad=True)
    out = (a + b).sum()
    multi_grad_hook((a, b), lambda g: got.append(1), mode="any")
    for _ in range(3000):
        out.backward(retain_graph=True)
    assert len(got) == 3000


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


@pytest.mark.parametrize(
    "wrt, expected",
    [
        ("p", [[3.0, 3.0, 3.0], None]),  # q is not needed for grad w.r.t. p
        ("x", [[3.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),
    ],
)
def test_C191_multi_grad_hook_over_non_leaves_in_grad(wrt, expected):
    seen = []
    x = torch.ones(3, requires_grad=True)
    p = x * 2
    q = x * 3
    loss = (p * q).sum()
    multi_grad_hook((p, q), lambda gs: seen.append([None if g is None else g.tolist() for g in gs]))
    torch.autograd.grad(loss, {"p": p, "x": x}[wrt])
    assert seen == [expected]


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
