"""``torch.autograd.grad`` and gradient edges: checklist C60–C82 (spec autograd.md §3, §9.5,
§9.6).

C77/C78 (``is_grads_batched``): one engine pass on grad_outputs batched at a vmap level,
as torch's ``_vmap(vjp)`` does (a custom backward runs once, on the whole batch).
"""

import re

import ferrograd as torch
import pytest

MOD = torch.__name__
IS_REAL_TORCH = MOD == "torch"

E_FREED_START = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed)."
)


def raises_rt(text):
    return pytest.raises(RuntimeError, match=re.escape(text))


def test_C60_single_input_returns_tuple_of_one():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = (x * x).sum()
    res = torch.autograd.grad(out, x)
    assert isinstance(res, tuple)
    assert len(res) == 1
    assert res[0].tolist() == [2.0, 4.0, 6.0]


def test_C60_list_inputs_return_tuple_in_order():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 4.0], requires_grad=True)
    gx, gy = torch.autograd.grad((x * y).sum(), [x, y])
    assert gx.tolist() == [3.0, 4.0]
    assert gy.tolist() == [1.0, 2.0]


def test_C61_dict_inputs_return_dict():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    out = (w * 3).sum()
    res = torch.autograd.grad(out, {"w": w})
    assert isinstance(res, dict)
    assert list(res.keys()) == ["w"]
    assert res["w"].tolist() == [3.0, 3.0]


def test_C62_empty_inputs_raises():
    x = torch.ones(3, requires_grad=True)
    with raises_rt("`inputs` argument to `grad()` cannot be empty."):
        torch.autograd.grad((x * 2).sum(), [])


def test_C63_grad_does_not_touch_dot_grad():
    x = torch.ones(3, requires_grad=True)
    torch.autograd.grad((x * 2).sum(), x)
    assert x.grad is None


def test_C63_grad_does_not_modify_existing_dot_grad():
    x = torch.ones(3, requires_grad=True)
    (x * 5).sum().backward()
    torch.autograd.grad((x * 2).sum(), x)
    assert x.grad.tolist() == [5.0, 5.0, 5.0]


def test_C63_grad_does_not_populate_other_leaves():
    x = torch.ones(3, requires_grad=True)
    y = torch.ones(3, requires_grad=True)
    torch.autograd.grad((x * y).sum(), x)
    assert y.grad is None


def test_C64_unused_input_raises():
    x = torch.ones(3, requires_grad=True)
    unused = torch.ones(2, requires_grad=True)
    with raises_rt(
        "The differentiated Tensor at index 1 appears to not have been used in the graph. "
        "Set allow_unused=True if this is the desired behavior."
    ):
        torch.autograd.grad((x * 2).sum(), [x, unused])


def test_C65_allow_unused_returns_none():
    x = torch.ones(3, requires_grad=True)
    unused = torch.ones(2, requires_grad=True)
    gx, gu = torch.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert gx.tolist() == [2.0, 2.0, 2.0]
    assert gu is None


def test_C66_materialize_grads_returns_zeros():
    x = torch.ones(3, requires_grad=True)
    unused = torch.ones(2, requires_grad=True)
    gx, gu = torch.autograd.grad((x * 2).sum(), [x, unused], materialize_grads=True)
    assert gx.tolist() == [2.0, 2.0, 2.0]
    assert gu is not None
    assert gu.tolist() == [0.0, 0.0]
    assert gu.shape == unused.shape


def test_C67_materialize_grads_with_allow_unused_false_raises():
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        ),
    ):
        torch.autograd.grad((x * 2).sum(), [x], materialize_grads=True, allow_unused=False)


def test_C68_input_not_requiring_grad_raises():
    x = torch.ones(3, requires_grad=True)
    c = torch.ones(3)
    with raises_rt("One of the differentiated Tensors does not require grad"):
        torch.autograd.grad((x * c).sum(), [x, c])


def test_C69_output_not_requiring_grad_raises():
    x = torch.ones(3, requires_grad=True)
    with raises_rt("element 0 of tensors does not require grad and does not have a grad_fn"):
        torch.autograd.grad(torch.ones(3).sum(), x)


def test_C70_only_inputs_false_warns():
    x = torch.ones(3, requires_grad=True)
    with pytest.warns(
        FutureWarning,
        match=re.escape(
            "only_inputs argument is deprecated and is ignored now (defaults to True)."
        ),
    ):
        (g,) = torch.autograd.grad((x * 2).sum(), x, only_inputs=False)
    assert g.tolist() == [2.0, 2.0, 2.0]


def test_C71_grad_of_tensor_wrt_itself_returns_grad_output():
    x = torch.ones(3, requires_grad=True)
    g = torch.tensor([1.0, 2.0, 3.0])
    res = torch.autograd.grad(x, x, g)
    assert isinstance(res, tuple) and len(res) == 1
    assert res[0].tolist() == [1.0, 2.0, 3.0]


def test_C72_grad_wrt_nonleaf_intermediate():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    out = (h * h).sum()
    (gh,) = torch.autograd.grad(out, h)
    assert gh.tolist() == [6.0, 12.0]  # 2h
    assert x.grad is None


def test_C73_create_graph_result_requires_grad():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
    assert g.requires_grad is True
    assert g.tolist() == [3.0, 12.0, 27.0]


def test_C73_second_order_grad():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert torch.allclose(gg, 6 * x.detach())


def test_C73_third_order_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x, create_graph=True)
    (ggg,) = torch.autograd.grad(gg.sum(), x)
    assert ggg.tolist() == [6.0, 6.0]


def test_C74_create_graph_retains_original_graph_by_default():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = (x.exp() * x).sum()
    (g1,) = torch.autograd.grad(out, x, create_graph=True)
    (g2,) = torch.autograd.grad(out, x)
    assert torch.allclose(g1.detach(), g2)


def test_C75_create_graph_with_retain_graph_false_frees_original():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = (x.exp() * x).sum()
    (g,) = torch.autograd.grad(out, x, create_graph=True, retain_graph=False)
    assert g.requires_grad is True
    with raises_rt(E_FREED_START):
        torch.autograd.grad(out, x)


def test_C75_new_derivative_graph_still_usable():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = (x**3).sum()
    (g,) = torch.autograd.grad(out, x, create_graph=True, retain_graph=False)
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert gg.tolist() == [6.0, 12.0]


def test_C76_create_graph_under_no_grad_requires_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = (x**3).sum()
    with torch.no_grad():
        (g,) = torch.autograd.grad(out, x, create_graph=True)
    assert g.requires_grad is True
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert gg.tolist() == [6.0, 12.0]


def test_C76_grad_without_create_graph_does_not_require_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (g,) = torch.autograd.grad((x**3).sum(), x)
    assert g.requires_grad is False


def test_C77_is_grads_batched_returns_jacobian_rows():
    w = torch.ones(3, requires_grad=True)
    out = w * torch.tensor([0.0, 1.0, 2.0])
    (jac,) = torch.autograd.grad(out, w, torch.eye(3), is_grads_batched=True)
    assert jac.shape == (3, 3)
    assert torch.allclose(
        jac,
        torch.tensor([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]),
    )


def test_C78_is_grads_batched_shape_mismatch_raises():
    w = torch.ones(3, requires_grad=True)
    out = w * torch.tensor([0.0, 1.0, 2.0])
    with raises_rt(
        "If `is_grads_batched=True`, we interpret the first dimension of each grad_output "
        "as the batch dimension."
    ):
        torch.autograd.grad(out, w, torch.ones(3), is_grads_batched=True)


def test_C77_is_grads_batched_runs_each_backward_once():
    # One batched pass: the custom backward sees the per-example shape, once (torch too).
    calls = []

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls.append(tuple(g.shape))
            return g * 2

    w = torch.ones(3, requires_grad=True)
    (jac,) = torch.autograd.grad(Double.apply(w), w, torch.eye(3), is_grads_batched=True)
    assert calls == [(3,)]
    assert torch.equal(jac, torch.eye(3) * 2)


def test_C77_is_grads_batched_hessian_keeps_graph_and_unused_inputs():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    unused = torch.ones(2, requires_grad=True)
    (g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
    h, none = torch.autograd.grad(
        g, (x, unused), torch.eye(3), is_grads_batched=True, create_graph=True, allow_unused=True
    )
    assert none is None
    assert torch.equal(h, torch.eye(3) * torch.tensor([6.0, 12.0, 18.0]))
    assert h.requires_grad
    # materialize_grads fills in zeros shaped like the input, unbatched (as torch does).
    _, zero = torch.autograd.grad(
        g, (x, unused), torch.eye(3), is_grads_batched=True, materialize_grads=True
    )
    assert zero.shape == (2,)


def test_C77_is_grads_batched_batch_sizes_must_agree():
    w = torch.ones(3, requires_grad=True)
    with pytest.raises(
        ValueError,
        match=re.escape("got sizes [2, 4] for the mapped dimension"),
    ):
        torch.autograd.grad(
            (w * 2, w * 3), w, (torch.ones(2, 3), torch.ones(4, 3)), is_grads_batched=True
        )
    # An implicit grad_output (a scalar output) has no batch dim.
    with pytest.raises(ValueError, match="expected in_dim to satisfy 0 <= in_dim < 0"):
        torch.autograd.grad((w * 2, w.sum()), w, (torch.ones(2, 3), None), is_grads_batched=True)


def test_C77_is_grads_batched_refuses_random_ops_in_backward():
    class Noisy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * torch.rand(3)

    w = torch.ones(3, requires_grad=True)
    with raises_rt("vmap: We do not yet support calling random operations inside of vmap"):
        torch.autograd.grad(Noisy.apply(w), w, torch.eye(3), is_grads_batched=True)


def test_C79_none_grad_output_for_scalar_output_uses_ones():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = (x * x).sum()
    b = x * 10
    (g,) = torch.autograd.grad([a, b], [x], grad_outputs=[None, torch.ones(3)])
    assert g.tolist() == [12.0, 14.0, 16.0]  # 2x + 10


def test_C79_grad_outputs_length_mismatch_raises():
    x = torch.ones(3, requires_grad=True)
    with raises_rt("got 2 tensors and 1 gradients"):
        torch.autograd.grad([(x * 2).sum(), (x * 3).sum()], [x], grad_outputs=[None])


def test_C80_grad_wrt_gradient_edge_equals_grad_wrt_tensor():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (x.exp() * x).sum()
    (by_tensor,) = torch.autograd.grad(loss, x, retain_graph=True)
    (by_edge,) = torch.autograd.grad(loss, torch.autograd.graph.get_gradient_edge(x))
    assert torch.allclose(by_edge, by_tensor)


def test_C80_gradient_edge_of_nonleaf():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    loss = (h * h).sum()
    edge = torch.autograd.graph.get_gradient_edge(h)
    assert edge.node is h.grad_fn
    (gh,) = torch.autograd.grad(loss, edge)
    assert gh.tolist() == [4.0, 8.0]  # 2h


def test_C81_gradient_edge_of_tensor_not_requiring_grad_raises():
    with raises_rt(
        "It is not possible to get the gradient edge for a Tensor that does not require gradients"
    ):
        torch.autograd.graph.get_gradient_edge(torch.randn(2))


def test_C82_gradient_edge_of_leaf_is_accumulate_grad():
    leaf = torch.randn(2, requires_grad=True)
    edge = torch.autograd.graph.get_gradient_edge(leaf)
    assert edge.node.name() == "torch::autograd::AccumulateGrad"
    assert edge.output_nr == 0
    assert edge[0] is edge.node and edge[1] == 0  # a named tuple


def test_C82_accumulate_grad_variable_is_the_leaf():
    # §9.5: reached through next_functions of the first op; .variable is the leaf itself.
    leaf = torch.randn(2, requires_grad=True)
    y = leaf * 2
    acc, nr = y.grad_fn.next_functions[0]
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert nr == 0
    assert acc.variable is leaf
    assert acc.next_functions == ()
