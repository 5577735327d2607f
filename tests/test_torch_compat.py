"""Places where ferrograd answered differently from torch (issue 7 §6), each pinned to
torch 2.x's observed behaviour (numbers, error classes and texts). Spec items touched:
C4, C5 (requires_grad on non-leaves), C53-C56 (backward(inputs=...)).

Every expectation here was taken from a run of real torch; the file also runs against
torch through the shim described in conftest.py.
"""

import copy
import pickle
import sys

import ferrograd as torch
import pytest

Function = torch.autograd.Function
MOD = torch.__name__

E_LEAF_FLAG = "you can only change requires_grad flags of leaf variables."
E_LEAF_FLAG_FALSE = (
    "you can only change requires_grad flags of leaf variables. If you want to use a "
    "computed variable in a subgraph that doesn't require differentiation use "
    "var_no_grad = var.detach()."
)
E_INF_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)
E_INF_SAVE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead "
    "of `torch.inference_mode()`."
)
E_INF_RG = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
E_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)
E_CUSTOM_VIEW = (
    "is a view and is being modified inplace. This view was created inside a custom "
    "Function (or because an input was returned as-is) and the autograd logic to handle "
    "view+inplace would override the custom backward associated with the custom Function, "
    "leading to incorrect gradients. This behavior is forbidden. You can fix this by "
    "cloning the output of the custom Function."
)
E_MULTI_VIEW = (
    "is a view and is being modified inplace. This view is the output of a function that "
    "returns multiple views. Such functions do not allow the output views to be modified "
    "inplace. You should replace the inplace operation by an out-of-place one."
)


def _inference_ones(*shape):
    with torch.inference_mode():
        return torch.ones(*shape)


# ------------------------------------------------- backward(inputs=[non-leaf]) (C53-C56)


def test_backward_inputs_nonleaf_sets_retains_grad():
    """issue 7 §6 / C53 area: a non-leaf passed as `inputs=` retains its grad, as torch."""
    x = torch.ones(3, requires_grad=True)
    h = x * 2
    (h * h).sum().backward(inputs=[h])
    assert h.retains_grad
    assert h.grad.tolist() == [4.0, 4.0, 4.0]
    assert x.grad is None


def test_backward_inputs_nonleaf_then_full_backward_accumulates():
    """Once retained, a later plain backward adds into h.grad too (torch: 4 + 4)."""
    x = torch.ones(3, requires_grad=True)
    h = x * 2
    y = (h * h).sum()
    y.backward(inputs=[h, x], retain_graph=True)
    assert (h.retains_grad, x.retains_grad) == (True, False)
    y.backward()
    assert h.grad.tolist() == [8.0, 8.0, 8.0]
    assert x.grad.tolist() == [16.0, 16.0, 16.0]


def test_backward_inputs_already_retaining_counts_once():
    x = torch.ones(3, requires_grad=True)
    h = x * 2
    h.retain_grad()
    (h * h).sum().backward(inputs=[h])
    assert h.grad.tolist() == [4.0, 4.0, 4.0]


def test_autograd_grad_inputs_does_not_retain():
    x = torch.ones(3, requires_grad=True)
    h = x * 2
    torch.autograd.grad((h * h).sum(), [h])
    assert not h.retains_grad


# ------------------------------------------------- retain_grad() then in-place


def test_retain_grad_follows_inplace_modification():
    """issue 7 §6: .grad is the gradient of the modified tensor (torch: 5, not 15)."""
    x = torch.ones(3, requires_grad=True)
    h = x * 2
    h.retain_grad()
    h.mul_(3)
    (h * 5).sum().backward()
    assert h.grad.tolist() == [5.0, 5.0, 5.0]
    assert x.grad.tolist() == [30.0, 30.0, 30.0]


def test_retain_grad_follows_several_inplace_ops():
    x = torch.ones(3, requires_grad=True)
    h = x * 2
    h.retain_grad()
    h.mul_(3)
    h.add_(1)
    (h * h).sum().backward()
    assert h.grad.tolist() == [14.0, 14.0, 14.0]
    assert x.grad.tolist() == [84.0, 84.0, 84.0]


def test_retain_grad_follows_inplace_through_a_view():
    x = torch.ones(3, requires_grad=True)
    h = x * 2
    h.retain_grad()
    h[0].mul_(3)
    (h * 5).sum().backward()
    assert h.grad.tolist() == [5.0, 5.0, 5.0]
    assert x.grad.tolist() == [30.0, 10.0, 10.0]


def test_retain_grad_moves_along_a_long_inplace_chain():
    """Deep structure: the retained slot moves node to node across 3000 rebases."""
    x = torch.ones(2, requires_grad=True)
    h = x * 1
    h.retain_grad()
    for _ in range(3000):
        h.add_(1)
    (h * 3).sum().backward()
    assert h.grad.tolist() == [3.0, 3.0]
    assert x.grad.tolist() == [3.0, 3.0]


def test_backward_inputs_nonleaf_in_threads():
    import threading

    results, errors = [], []

    def work():
        try:
            for _ in range(50):
                x = torch.ones(3, requires_grad=True)
                h = x * 2
                (h * h).sum().backward(inputs=[h])
                results.append((h.retains_grad, h.grad.tolist(), x.grad))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert results == [(True, [4.0, 4.0, 4.0], None)] * 200


def test_tensor_hook_registered_before_inplace_sees_old_gradient():
    """A plain hook stays with the value it was registered on (only retain_grad moves)."""
    x = torch.ones(3, requires_grad=True)
    h = x * 2
    seen = []
    h.register_hook(lambda g: seen.append(g.tolist()))
    h.mul_(3)
    (h * 5).sum().backward()
    assert seen == [[15.0, 15.0, 15.0]]


# ------------------------------------------------- requires_grad on non-leaves (C4, C5)


def test_setting_requires_grad_true_on_nonleaf_raises():
    """issue 7 §6, C4: the attribute setter refuses True too, with torch's short text."""
    h = torch.ones(3, requires_grad=True) * 2
    with pytest.raises(RuntimeError) as e:
        h.requires_grad = True
    assert str(e.value) == E_LEAF_FLAG


def test_setting_requires_grad_false_on_nonleaf_raises_with_hint():
    h = torch.ones(3, requires_grad=True) * 2
    with pytest.raises(RuntimeError) as e:
        h.requires_grad = False
    assert str(e.value) == E_LEAF_FLAG_FALSE
    with pytest.raises(RuntimeError) as e:
        h.requires_grad_(False)
    assert str(e.value) == E_LEAF_FLAG_FALSE


def test_requires_grad_method_true_on_nonleaf_is_silent():
    """C5: requires_grad_(True) on a non-leaf returns it unchanged."""
    h = torch.ones(3, requires_grad=True) * 2
    assert h.requires_grad_(True) is h
    assert h.requires_grad_() is h
    assert h.requires_grad and not h.is_leaf


# ------------------------------------------------- saved-tensor hooks


def test_disable_saved_tensors_hooks_inside_active_hooks_raises():
    """issue 7 §6: entering the disabled region while hooks are registered fails."""
    graph = torch.autograd.graph
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError) as e:
            with graph.disable_saved_tensors_hooks("no hooks here"):
                pass
        assert str(e.value) == "no hooks here"
        # The failed entry left the stack as it was: saving still uses the hooks.
        x = torch.ones(2, requires_grad=True)
        (x * x).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]
    with graph.disable_saved_tensors_hooks("outer"):
        with graph.disable_saved_tensors_hooks("inner"):
            pass
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass


def test_saved_tensors_hooks_inside_disabled_region_raises():
    graph = torch.autograd.graph
    with graph.disable_saved_tensors_hooks("nope"):
        with pytest.raises(RuntimeError, match="^nope$"):
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass


# ------------------------------------------------- gradgradcheck and once_differentiable


def _once_square():
    class OnceSquare(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    return OnceSquare


def test_gradgradcheck_once_differentiable_is_a_jacobian_mismatch():
    """issue 7 §6: the double-backward error node reaches no input, so gradgradcheck
    sees zero analytical second derivatives and reports a Jacobian mismatch."""
    fn = _once_square().apply
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    gradcheck_error = sys.modules[torch.autograd.gradcheck.__module__].GradcheckError
    with pytest.raises(gradcheck_error) as e:
        torch.autograd.gradgradcheck(fn, (x,))
    assert str(e.value).startswith("Jacobian mismatch for output 0 with respect to input 0,")
    assert torch.autograd.gradgradcheck(fn, (x,), raise_exception=False) is False


def test_gradcheck_fast_mode_message_shows_numbers():
    """torch formats the fast-mode quantities with f-strings of 0-dim tensors, which
    print as Python numbers (Tensor.__format__), not as tensor(...)."""
    import re

    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    gradcheck_error = sys.modules[torch.autograd.gradcheck.__module__].GradcheckError
    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    with pytest.raises(gradcheck_error) as e:
        torch.autograd.gradcheck(Wrong.apply, (x,), fast_mode=True)
    text = str(e.value)
    assert re.match(
        r"Jacobian mismatch for output 0 with respect to input 0,\nnumerical:-?[0-9.e-]+\n"
        r"analytical:-?[0-9.e-]+\n\nThe above quantities",
        text,
    ), text
    assert text.endswith("The max per-element difference (slow mode) is: 1.000000000053511.\n")


def test_once_differentiable_error_node_reaches_no_input():
    fn = _once_square().apply
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    go = torch.randn(3, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(fn(x), x, go, create_graph=True)
    assert g.requires_grad
    assert torch.autograd.grad(g.sum(), [x, go], allow_unused=True) == (None, None)
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that"):
        g.sum().backward()
    # With a grad_output that does not require grad there is nothing to wrap.
    (g2,) = torch.autograd.grad(fn(x).sum(), x, create_graph=True)
    assert not g2.requires_grad


# ------------------------------------------------- post-accumulate-grad hook order


def _sum_all(ws):
    class SumAll(Function):
        @staticmethod
        def forward(ctx, *xs):
            out = xs[0] * 1
            for x in xs[1:]:
                out = out + x
            return out

        @staticmethod
        def backward(ctx, g):
            return (g,) * len(ws)

    return SumAll.apply(*ws)


def _post_acc_order(build, n):
    log = []
    ws = [torch.ones(2, requires_grad=True) for _ in range(n)]
    for i, w in enumerate(ws):
        w.register_post_accumulate_grad_hook(lambda p, i=i: log.append(i))
    build(ws).sum().backward()
    return log


@pytest.mark.parametrize(
    "n, expected",
    [
        (3, [0, 1, 2]),
        (4, [0, 2, 1, 3]),
        (5, [0, 2, 4, 1, 3]),
        (6, [0, 2, 5, 4, 1, 3]),
        (9, [0, 2, 6, 8, 5, 7, 4, 1, 3]),
    ],
)
def test_post_accumulate_hooks_order_of_simultaneously_ready_leaves(n, expected):
    """issue 7 §6: leaves ready at once (one node's inputs) run in torch's ready-queue
    order (a binary heap, neither FIFO nor LIFO)."""
    assert _post_acc_order(_sum_all, n) == expected


def test_post_accumulate_hooks_order_along_chains():
    def chain(ws):
        s = ws[0]
        for w in ws[1:]:
            s = s * w
        return s

    assert _post_acc_order(chain, 5) == [4, 3, 2, 0, 1]
    assert _post_acc_order(lambda ws: ws[4] + ws[2] + ws[0] + ws[3] + ws[1], 5) == [
        1,
        3,
        0,
        4,
        2,
    ]
    assert _post_acc_order(lambda ws: sum(ws), 5) == [4, 3, 2, 1, 0]

    def tree(ws):
        return (ws[0] * ws[1]) * (ws[2] * ws[3]) + ws[4]

    assert _post_acc_order(tree, 5) == [4, 2, 3, 0, 1]

    def mixed(ws):
        return _sum_all([ws[0].exp(), ws[1], ws[2], ws[0] * ws[3]])

    assert _post_acc_order(mixed, 4) == [1, 2, 3, 0]


def test_post_accumulate_hooks_several_per_leaf_values():
    log = []
    a, b, c = (torch.ones(2, requires_grad=True) for _ in range(3))
    for name, t in (("a", a), ("b", b), ("c", c)):
        for i in range(2):

            def hook(p, name=name, i=i):
                log.append((name, i, p.grad.tolist()))
                p.grad.mul_(10)

            t.register_post_accumulate_grad_hook(hook)
    y = (a * 2 + b * 3) * c
    z = (a * b).sum() + y.sum()
    z.backward()
    assert log == [
        ("c", 0, [5.0, 5.0]),
        ("c", 1, [50.0, 50.0]),
        ("b", 0, [4.0, 4.0]),
        ("b", 1, [40.0, 40.0]),
        ("a", 0, [3.0, 3.0]),
        ("a", 1, [30.0, 30.0]),
    ]
    assert (a.grad.tolist(), b.grad.tolist(), c.grad.tolist()) == (
        [300.0, 300.0],
        [400.0, 400.0],
        [500.0, 500.0],
    )


# ------------------------------------------------- inference tensors


@pytest.mark.parametrize(
    "update, expected",
    [
        (lambda t: t.add_(1), [2.0, 2.0, 2.0]),
        (lambda t: t.zero_(), [0.0, 0.0, 0.0]),
        (lambda t: t.__setitem__(0, 5.0), [5.0, 1.0, 1.0]),
        (lambda t: t[1:].mul_(2), [1.0, 2.0, 2.0]),
        (lambda t: t.view(3).add_(1), [2.0, 2.0, 2.0]),
        (lambda t: t.mul_(torch.full((3,), 2.0, requires_grad=True)), [2.0, 2.0, 2.0]),
        (lambda t: t.copy_(torch.full((3,), 7.0)), [7.0, 7.0, 7.0]),
        (lambda t: t.clamp_(max=0.5), [0.5, 0.5, 0.5]),
    ],
    ids=["add_", "zero_", "setitem", "slice_mul_", "view_add_", "mul_rg", "copy_", "clamp_"],
)
@pytest.mark.parametrize("mode", ["plain", "no_grad", "inference_mode(False)"])
def test_inference_tensor_inplace_outside_inference_mode(update, mode, expected):
    """issue 7 §6: refused with torch's text under every non-inference mode. torch
    refuses at the version bump, after the kernel ran: the values did change."""
    x = _inference_ones(3)
    ctx = {
        "plain": torch.enable_grad,
        "no_grad": torch.no_grad,
        "inference_mode(False)": lambda: torch.inference_mode(False),
    }[mode]
    with ctx():
        with pytest.raises(RuntimeError) as e:
            update(x)
    assert str(e.value) == E_INF_INPLACE
    with torch.inference_mode():
        assert x.tolist() == expected
        x.fill_(2)
    assert x.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize(
    "op",
    [
        lambda x, w: x * w,
        lambda x, w: w * x,
        lambda x, w: w / x,
        lambda x, w: x / w,
        lambda x, w: torch.pow(w, x),
        lambda x, w: x.view(2, 2) @ w.view(2, 2),
        lambda x, w: (w * 2).mul_(x),
    ],
    ids=["mul", "rmul", "div_by", "div", "pow", "matmul", "inplace_mul"],
)
def test_inference_tensor_saved_for_backward_raises(op):
    x = _inference_ones(4)
    w = torch.ones(4, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        op(x, w)
    assert str(e.value) == E_INF_SAVE


def test_inference_tensor_in_graph_without_saving_is_fine():
    x = _inference_ones(3)
    w = torch.ones(3, requires_grad=True)
    (x + w).sum().backward()
    assert w.grad.tolist() == [1.0, 1.0, 1.0]
    # A normal tensor computed from an inference one may be saved.
    y = (w * x.exp()).sum()
    assert y.grad_fn.name() == "SumBackward0"
    assert not x.exp().is_inference()
    # Views of inference tensors are inference tensors; .sum() of one is not.
    assert x[1:].is_inference() and not x[1:].sum().is_inference()
    assert (w * x[0:2].sum()).grad_fn.name() == "MulBackward0"
    # Reading from an inference tensor into a normal one is allowed.
    y = torch.zeros(3)
    y.add_(x)
    assert not y.is_inference() and y.tolist() == [1.0, 1.0, 1.0]


def test_inference_tensor_requires_grad_and_version():
    x = _inference_ones(3)
    with pytest.raises(RuntimeError) as e:
        x.requires_grad_(True)
    assert str(e.value) == E_INF_RG
    with pytest.raises(RuntimeError) as e:
        x.requires_grad = True
    assert str(e.value) == E_INF_RG
    with pytest.raises(RuntimeError) as e:
        x[0:2].requires_grad_(True)
    assert str(e.value) == E_INF_RG
    with pytest.raises(RuntimeError, match="^Inference tensors do not track version counter.$"):
        _ = x._version
    with pytest.raises(RuntimeError, match="^Inference tensors do not track version counter.$"):
        _ = x.view(3)._version
    assert x.detach().is_inference() and not x.clone().is_inference()
    x.grad = torch.ones(3)
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("mode", ["plain", "no_grad"])
def test_view_made_in_inference_mode_modified_outside(requires_grad, mode):
    """A view made in inference mode of a normal tensor may be modified outside it,
    except when that would be recorded (grad mode on, base requiring grad)."""
    b = torch.ones(3, requires_grad=True).clone() if requires_grad else torch.ones(3)
    with torch.inference_mode():
        v = b[1:]
    ctx = torch.enable_grad if mode == "plain" else torch.no_grad
    if requires_grad and mode == "plain":
        with pytest.raises(RuntimeError, match="^A view was created in inference mode and is"):
            v.add_(1)
        assert b.tolist() == [1.0, 1.0, 1.0]
        return
    with ctx():
        v.add_(1)
    assert b.tolist() == [1.0, 2.0, 2.0]


def test_inference_mode_output_of_a_requires_grad_tensor():
    w = torch.ones(3, requires_grad=True)
    with torch.inference_mode():
        y = w * 2
    assert (y.requires_grad, y.is_inference()) == (False, True)
    with pytest.raises(RuntimeError) as e:
        y * w
    assert str(e.value) == E_INF_SAVE


# ------------------------------------------------- calling a node


def test_node_call_returns_one_value_per_forward_input():
    """issue 7 §6: y.grad_fn(g) applies the node's backward (a tuple when the node has
    several next edges, the value itself when it has one)."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    r = (x * w).grad_fn(torch.ones(2))
    assert isinstance(r, tuple) and len(r) == 2
    assert r[0].tolist() == [3.0, 4.0] and r[1].tolist() == [1.0, 2.0]
    # Grad mode is on, and the saved tensors require grad: the results have history.
    assert r[0].grad_fn.name() == "MulBackward0"
    r = (x * torch.tensor([3.0, 4.0])).grad_fn(torch.ones(2))
    assert r[0].tolist() == [3.0, 4.0] and r[1] is None
    s = x.sum().grad_fn(torch.tensor(2.0))
    assert isinstance(s, torch.Tensor) and s.tolist() == [2.0, 2.0]
    y = x * w
    with torch.no_grad():
        r = y.grad_fn(torch.ones(2))
    assert r[0].grad_fn is None


def test_node_call_none_and_errors():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    assert y.grad_fn(None) == (None, None)
    with pytest.raises(TypeError, match="^expected 1 arguments, got 2 instead$"):
        y.grad_fn(torch.ones(2), torch.ones(2))
    with pytest.raises(TypeError, match="^expected 1 arguments, got 0 instead$"):
        y.grad_fn()
    with pytest.raises(TypeError, match="^argument 0 is not a Variable$"):
        y.grad_fn(5)
    with pytest.raises(TypeError, match="^keyword arguments are not supported$"):
        y.grad_fn(grad=torch.ones(2))
    a, b = x.unbind()
    assert a.grad_fn(torch.tensor(1.0), None).tolist() == [1.0, 0.0]
    assert a.grad_fn(None, None) is None
    z = x * x
    z.sum().backward()
    with pytest.raises(RuntimeError) as e:
        z.grad_fn(torch.ones(2))
    assert str(e.value) == E_FREED


def test_node_call_runs_no_hooks_and_accumulate_grad_accumulates():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    seen = []
    y.grad_fn.register_hook(lambda gi, go: seen.append(1))
    y.grad_fn.register_prehook(lambda go: seen.append(2))
    y.grad_fn(torch.ones(2))
    assert seen == []
    acc = y.grad_fn.next_functions[0][0]
    assert acc(torch.ones(2)) == ()
    assert acc(torch.ones(2)) == ()
    assert x.grad.tolist() == [2.0, 2.0]


def test_node_repr_uses_the_class_name():
    x = torch.ones(3, requires_grad=True).clone()
    x[1:].mul_(2)
    assert repr(x.grad_fn).startswith("<CopySlices object at 0x")
    acc = x.grad_fn.next_functions[0][0].next_functions[0][0]
    assert repr(acc).startswith("<AccumulateGrad object at 0x")
    assert repr((x * 2).grad_fn).startswith("<MulBackward0 object at 0x")


def test_custom_function_node_is_not_callable():
    class Double(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    y = Double.apply(torch.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match="^'DoubleBackward' object is not callable$"):
        y.grad_fn(torch.ones(2))


# ------------------------------------------------- small APIs


def test_is_view():
    x = torch.ones(4, requires_grad=True)
    assert not x._is_view()
    assert x[1:]._is_view() and x.view(2, 2)._is_view() and x.view(2, 2)[0]._is_view()
    assert not (x * 1)._is_view() and not x.detach()._is_view()


def test_saved_tensor_class_exported():
    x = torch.ones(3, requires_grad=True)
    y = x * x
    raw = y.grad_fn._raw_saved_self
    assert isinstance(raw, torch.autograd.SavedTensor)
    assert type(raw).__name__ == "SavedTensor"
    with pytest.raises(RuntimeError) as e:
        torch.autograd.SavedTensor()
    assert str(e.value) == "Trying to create a SavedTensor object from Python is forbidden."


def test_register_hook_dict():
    """Node._register_hook_dict(t): the hooks in t._backward_hooks, read at backward
    time in order, act as one tensor hook (torch's legacy register_hook path)."""
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    log = []
    y._backward_hooks = {1: lambda g: log.append(("a", g.tolist())), 2: lambda g: g * 10}
    y.grad_fn._register_hook_dict(y)
    y._backward_hooks[3] = lambda g: log.append(("b", g.tolist()))
    y.sum().backward()
    assert log == [("a", [1.0, 1.0, 1.0]), ("b", [10.0, 10.0, 10.0])]
    assert x.grad.tolist() == [20.0, 20.0, 20.0]


def test_numpy_on_requires_grad_tensor():
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        x.numpy()
    assert str(e.value) == (
        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
    )
    with torch.no_grad():
        assert x.numpy().tolist() == [1.0, 1.0, 1.0]
    with torch.inference_mode():
        assert x.numpy().tolist() == [1.0, 1.0, 1.0]
    assert x.numpy(force=True).tolist() == [1.0, 1.0, 1.0]


def test_deepcopy_keeps_layout_grad_and_attributes():
    x = torch.arange(6.0, dtype=torch.float64).view(2, 3).t()
    x.requires_grad_()
    x.grad = torch.ones(3, 2, dtype=torch.float64)
    x.tag = {"k": [1]}
    y = copy.deepcopy(x)
    assert y.tolist() == x.tolist() and y.dtype == torch.float64
    assert y.stride() == (1, 3) and y.is_leaf and y.requires_grad
    assert y.grad.tolist() == x.grad.tolist() and y.grad is not x.grad
    assert y.tag == {"k": [1]} and y.tag is not x.tag
    assert y.data_ptr() != x.data_ptr()


def test_deepcopy_keeps_shared_memory_shared_and_offsets():
    x = torch.arange(6.0)
    v = x[2:4]
    a, b = copy.deepcopy([x, v])
    b.fill_(0)
    assert a.tolist() == [0.0, 1.0, 0.0, 0.0, 4.0, 5.0]
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert b._base is None and not b._is_view() and b.storage_offset() == 2
    w = copy.deepcopy(torch.ones(3)[1:])
    assert not w._is_view() and w.storage_offset() == 1


def test_deepcopy_of_nonleaf_raises():
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        copy.deepcopy(x * 2)
    assert str(e.value).startswith(
        "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
        "protocol at the moment.  If you were attempting to deepcopy a module"
    )


def test_pickle_roundtrip():
    x = torch.arange(6.0).view(2, 3).t()
    x.requires_grad_()
    x.grad = torch.ones(3, 2)
    x.tag = 5
    y = pickle.loads(pickle.dumps(x))
    assert y.tolist() == x.tolist() and y.stride() == (1, 3) and y.dtype == torch.float32
    assert y.requires_grad and y.is_leaf and y.grad is None and y.tag == 5
    v = pickle.loads(pickle.dumps(torch.arange(6.0)[2:4]))
    assert v.tolist() == [2.0, 3.0] and v.storage_offset() == 2
    ints = pickle.loads(pickle.dumps(torch.tensor([1, 2])))
    assert ints.dtype == torch.int64 and ints.tolist() == [1, 2]
    bools = pickle.loads(pickle.dumps(torch.tensor([True, False])))
    assert bools.tolist() == [True, False]
    bf = pickle.loads(pickle.dumps(torch.tensor([1.5, -2.0], dtype=torch.bfloat16)))
    assert bf.dtype == torch.bfloat16 and bf.tolist() == [1.5, -2.0]
    # Plain pickling does not keep memory shared between tensors.
    base = torch.arange(4.0)
    a, b = pickle.loads(pickle.dumps([base, base[1:3]]))
    b.fill_(0)
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_force_original_view_tracking():
    is_on = torch._C._is_view_replay_enabled
    with torch.autograd._force_original_view_tracking(True):
        assert is_on()
    assert not is_on()

    @torch.autograd._force_original_view_tracking(True)
    def inside():
        return is_on()

    assert inside() and not is_on()
    c = torch.autograd._force_original_view_tracking(True)
    assert is_on()  # applied at construction, like set_grad_enabled
    with c:
        pass
    assert not is_on()
    with torch.autograd._force_original_view_tracking(True):
        x = torch.ones(4, requires_grad=True).clone()
        v = x[1:]
        v.mul_(2)
        assert x.grad_fn.name() == "torch::autograd::CopySlices"


def test_force_original_view_tracking_is_thread_local():
    import threading

    seen = []
    with torch.autograd._force_original_view_tracking(True):
        t = threading.Thread(target=lambda: seen.append(torch._C._is_view_replay_enabled()))
        t.start()
        t.join()
        assert torch._C._is_view_replay_enabled()
    assert seen == [False]


def test_shallow_copy_shares_memory():
    x = torch.arange(6.0).view(2, 3).t()
    x.requires_grad_()
    x.grad = torch.ones(3, 2)
    x.tag = [1]
    y = copy.copy(x)
    assert y is not x and y.data_ptr() == x.data_ptr() and y.stride() == (1, 3)
    assert y.requires_grad and y.is_leaf and y.grad is None and y._base is None
    assert y.tag is x.tag
    with torch.no_grad():
        y.add_(1)
    assert x[0, 0].item() == 1.0 and x._version == 0
    z = copy.copy(x * 2)
    assert z.requires_grad and z.is_leaf and z.grad_fn is None


def test_warn_always_flag():
    assert torch.is_warn_always_enabled() is False
    try:
        torch.set_warn_always(True)
        assert torch.is_warn_always_enabled() is True
    finally:
        torch.set_warn_always(False)
    assert torch.is_warn_always_enabled() is False
    with pytest.raises(RuntimeError, match="^setWarnOnlyOnce expects a bool, but got int$"):
        torch.set_warn_always(1)


def test_warn_always_repeats_once_per_process_warnings():
    # issue 7 §6: set_warn_always(True) makes torch's warn-once warnings (here from_numpy
    # of a read-only array) warn every time.
    np = pytest.importorskip("numpy")
    a = np.ones(3)
    a.flags.writeable = False
    try:
        torch.set_warn_always(True)
        for _ in range(2):
            with pytest.warns(UserWarning, match="not writable"):
                torch.from_numpy(a)
    finally:
        torch.set_warn_always(False)


def test_increment_version():
    x = torch.ones(3)
    torch.autograd.graph.increment_version(x)
    torch.autograd.graph.increment_version([x, x])
    assert x._version == 3
    w = torch.ones(3, requires_grad=True)
    h = w * w
    torch.autograd.graph.increment_version(w)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        h.sum().backward()
    with pytest.raises(RuntimeError, match=r"^increment_version expect a Iterable\[Tensor\]"):
        torch.autograd.graph.increment_version(5)
    torch.autograd.graph.increment_version(_inference_ones(2))  # silently ignored


# ------------------------------------------------- custom Functions and views


class _InplaceArg(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 3


def test_function_inplace_on_leaf_and_views_of_leaf_raise():
    """issue 7 §6: a Function that modifies in place a view of a leaf (or a view of a
    view of one) raises torch's check_inplace error."""
    x = torch.ones(4, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        _InplaceArg.apply(x)
    assert str(e.value) == (
        "a leaf Variable that requires grad has been used in an in-place operation."
    )
    for v in (x[1:], x[1:][1:], x.view(2, 2)):
        with pytest.raises(RuntimeError) as e:
            _InplaceArg.apply(v)
        assert str(e.value) == (
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )


def test_function_inplace_on_view_of_intermediate_rebases_base():
    leaf = torch.ones(3, requires_grad=True)
    x = leaf.clone()
    r = _InplaceArg.apply(x[1:])
    assert r.tolist() == [2.0, 2.0] and x.tolist() == [1.0, 2.0, 2.0]
    assert r.grad_fn.name() == "AsStridedBackward0"
    assert x.grad_fn.name() == "torch::autograd::CopySlices"
    (r.sum() + x.sum() * 10).backward()
    assert leaf.grad.tolist() == [10.0, 33.0, 33.0]


def test_function_inplace_on_view_of_view_of_intermediate():
    leaf = torch.ones(4, requires_grad=True)
    x = leaf.clone()
    _InplaceArg.apply(x[1:][1:])
    assert x.tolist() == [1.0, 1.0, 2.0, 2.0]
    (x * torch.arange(4.0)).sum().backward()
    assert leaf.grad.tolist() == [0.0, 1.0, 6.0, 9.0]


def test_function_inplace_on_view_of_base_without_grad():
    class AddInto(Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g, g * 5

    base = torch.ones(4)
    w = torch.ones(3, requires_grad=True)
    AddInto.apply(base[1:], w)
    assert base.grad_fn.name() == "torch::autograd::CopySlices"
    (base * torch.arange(4.0)).sum().backward()
    assert w.grad.tolist() == [5.0, 10.0, 15.0]


def _view_out():
    class ViewOut(Function):
        @staticmethod
        def forward(ctx, x):
            v = x[1:]
            ctx.save_for_backward(v)
            return v

        @staticmethod
        def backward(ctx, g):
            (v,) = ctx.saved_tensors
            r = torch.zeros(3, dtype=g.dtype)
            r[1:] = g * v
            return r

    return ViewOut


def test_function_returning_a_view_is_a_view_with_the_custom_backward():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = _view_out().apply(x)
    assert y._is_view() and y._base is x and y.grad_fn.name() == "ViewOutBackward"
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 3.0]


@pytest.mark.parametrize("intermediate", [False, True])
def test_function_view_output_modified_inplace_raises(intermediate):
    """issue 7 §6: an in-place op on a view a Function returned would override its
    backward: refused (for views of inputs and of forward's own intermediates)."""
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    if intermediate:
        x = x.clone()
    y = _view_out().apply(x)
    with pytest.raises(RuntimeError) as e:
        y.mul_(2)
    assert str(e.value) == "Output 0 of ViewOut " + E_CUSTOM_VIEW


def test_function_view_of_forward_intermediate_modified_inplace_raises():
    class ViewOfTemp(Function):
        @staticmethod
        def forward(ctx, x):
            return (x * 2)[1:]

        @staticmethod
        def backward(ctx, g):
            r = torch.zeros(3, dtype=g.dtype)
            r[1:] = g * 2
            return r

    y = ViewOfTemp.apply(torch.ones(3, requires_grad=True))
    assert y._is_view()
    with pytest.raises(RuntimeError) as e:
        y.add_(1)
    assert str(e.value) == "Output 0 of ViewOfTemp " + E_CUSTOM_VIEW


def test_function_returning_input_as_is_modified_inplace_raises():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    for x in (
        torch.ones(3, requires_grad=True),
        torch.ones(3, requires_grad=True).clone(),
        torch.ones(3, requires_grad=True).view(3),
    ):
        y = Identity.apply(x)
        with pytest.raises(RuntimeError) as e:
            y.add_(1)
        assert str(e.value) == "Output 0 of Identity " + E_CUSTOM_VIEW


def test_function_returning_several_views_modified_inplace_raises():
    class TwoViews(Function):
        @staticmethod
        def forward(ctx, x):
            return x[:1], x[1:]

        @staticmethod
        def backward(ctx, a, b):
            return torch.cat([a, b])

    a, b = TwoViews.apply(torch.ones(3, requires_grad=True).clone())
    with pytest.raises(RuntimeError) as e:
        a.mul_(2)
    assert str(e.value) == "Output 0 of TwoViews " + E_MULTI_VIEW
    with pytest.raises(RuntimeError) as e:
        b.mul_(2)
    assert str(e.value) == "Output 1 of TwoViews " + E_MULTI_VIEW


def test_function_view_output_marked_non_differentiable():
    class ViewNoGrad(Function):
        @staticmethod
        def forward(ctx, x):
            v = x[1:]
            ctx.mark_non_differentiable(v)
            return v, x * 2

        @staticmethod
        def backward(ctx, gv, gy):
            return gy * 2

    x = torch.ones(3, requires_grad=True)
    v, y = ViewNoGrad.apply(x)
    assert v.grad_fn is None and v.is_leaf and v.requires_grad and v._is_view()
    assert y.grad_fn.name() == "ViewNoGradBackward"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_function_view_output_without_grad_can_be_modified():
    x = torch.tensor([1.0, 2.0, 3.0])
    y = _view_out().apply(x)
    y.mul_(2)
    assert y.tolist() == [4.0, 6.0] and x.tolist() == [1.0, 4.0, 6.0]
