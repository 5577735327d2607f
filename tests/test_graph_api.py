"""The graph API: ``Node`` (name, next_functions, metadata, _sequence_nr, _saved_* and
_raw_saved_*), AccumulateGrad, SavedTensor hooks, plus the GradientEdge /
increment_version cases not already in tests/ (C80–C82, C96) — checklist C142–C155
(spec autograd.md §9).
"""

import re

import ferrograd as torch
import pytest

E_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)
E_INPLACE_START = (
    "one of the variables needed for gradient computation has been modified by an inplace operation"
)


def raises_rt(text):
    return pytest.raises(RuntimeError, match=re.escape(text))


def Node():
    return torch.autograd.graph.Node


def leaf(*values):
    return torch.tensor(list(values) if values else [1.0, 2.0, 3.0], requires_grad=True)


# --------------------------------------------------------------------------- Node class


def test_C142_builtin_node_is_a_node():
    assert isinstance(leaf().exp().grad_fn, Node())


def test_C142_accumulate_grad_is_a_node():
    acc = leaf().exp().grad_fn.next_functions[0][0]
    assert isinstance(acc, Node())


def test_C142_copy_slices_is_a_node():
    b = leaf().clone()
    b[:1].mul_(2)
    assert b.grad_fn.name() == "torch::autograd::CopySlices"
    assert isinstance(b.grad_fn, Node())


def test_C142_custom_function_node_is_a_node():
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    assert isinstance(Twice.apply(leaf()).grad_fn, Node())


def test_C142_node_is_not_a_tensor_or_plain_object():
    assert not isinstance(leaf(), Node())
    assert not isinstance(object(), Node())


# --------------------------------------------------------------------------- names and dir


def test_C143_exp_node_name_and_members():
    b = leaf().exp()
    assert b.grad_fn.name() == "ExpBackward0"
    members = set(dir(b.grad_fn))
    for name in [
        "_saved_result",
        "_raw_saved_result",
        "metadata",
        "name",
        "next_functions",
        "register_hook",
        "register_prehook",
        "requires_grad",
    ]:
        assert name in members, name


def test_C143_builtin_node_requires_grad_attribute():
    assert leaf().exp().grad_fn.requires_grad is True


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda x: x.sum(), "SumBackward0"),
        (lambda x: x.reshape(3, 1).sum(0), "SumBackward1"),
        (lambda x: x.view(3), "ViewBackward0"),
        (lambda x: x[1:], "SliceBackward0"),
        (lambda x: x.unsqueeze(0), "UnsqueezeBackward0"),
        (lambda x: x.clone(), "CloneBackward0"),
        (lambda x: x.pow(2), "PowBackward0"),
        (lambda x: x**2, "PowBackward0"),
        (lambda x: x + 1, "AddBackward0"),
        (lambda x: x.split(1)[0], "SplitBackward0"),
        (lambda x: x * 2, "MulBackward0"),
        (lambda x: 2 * x, "MulBackward0"),
        (lambda x: x.exp(), "ExpBackward0"),
        (lambda x: x.double(), "ToCopyBackward0"),
        (lambda x: x.mean(), "MeanBackward0"),
        (lambda x: x.relu(), "ReluBackward0"),
        (lambda x: x.reshape(3, 1).t(), "TBackward0"),
        (lambda x: x.reshape(3, 1).expand(3, 2), "ExpandBackward0"),
    ],
)
def test_C147_node_names(make, name):
    assert make(leaf()).grad_fn.name() == name


# --------------------------------------------------------------------------- saved values


def test_C144_saved_result_matches_output_but_is_another_object():
    b = leaf().exp()
    saved = b.grad_fn._saved_result
    assert torch.allclose(saved, b)
    assert saved is not b


def test_C145_saved_inputs_are_the_input_objects():
    x = leaf()
    y = leaf(4.0, 5.0, 6.0)
    node = (x * y).grad_fn
    assert node._saved_self is x
    assert node._saved_other is y


def test_C145_unneeded_saved_input_is_none():
    # self is only needed for other's gradient; other is a constant here.
    x = leaf()
    y = torch.tensor([4.0, 5.0, 6.0])
    node = (x * y).grad_fn
    assert getattr(node, "_saved_self", None) is None
    assert node._saved_other is y


def test_C145_scalar_operand_saved_as_wrapped_tensor():
    node = (leaf() * 2).grad_fn
    assert node.name() == "MulBackward0"
    other = node._saved_other
    assert isinstance(other, torch.Tensor)
    assert other.shape == () and other.item() == 2


def test_C146_non_tensor_saved_values_are_python_values():
    x = leaf()
    assert (x + x).grad_fn._saved_alpha == 1
    assert x.sum().grad_fn._saved_self_sym_sizes == (3,)


def test_C146_pow_saves_exponent_and_self():
    x = leaf()
    node = (x**2).grad_fn
    assert node._saved_exponent == 2
    assert node._saved_self is x


def test_C153_saved_result_after_backward_raises_freed():
    b = leaf().exp()
    b.sum().backward()
    with raises_rt(E_FREED):
        _ = b.grad_fn._saved_result


def test_C153_saved_input_after_backward_raises_freed():
    x = leaf()
    y = leaf(4.0, 5.0, 6.0)
    z = x * y
    z.sum().backward()
    with raises_rt(E_FREED):
        _ = z.grad_fn._saved_self


def test_C153_saved_values_survive_retain_graph():
    b = leaf().exp()
    b.sum().backward(retain_graph=True)
    assert torch.allclose(b.grad_fn._saved_result, b)


def test_C153_saved_input_after_version_bump_raises_inplace_error():
    x = leaf()
    y = leaf(4.0, 5.0, 6.0)
    node = (x * y).grad_fn
    torch.autograd.graph.increment_version(x)
    with raises_rt(E_INPLACE_START):
        _ = node._saved_self


# --------------------------------------------------------------------------- next_functions


def test_C148_next_functions_of_unary_op_on_leaf():
    a = leaf()
    nf = a.exp().grad_fn.next_functions
    assert isinstance(nf, tuple) and len(nf) == 1
    node, nr = nf[0]
    assert node.name() == "torch::autograd::AccumulateGrad"
    assert nr == 0


def test_C148_next_functions_points_to_producer_node():
    a = leaf()
    b = a.exp()
    c = b.sin()
    ((node, nr),) = c.grad_fn.next_functions
    assert node is b.grad_fn
    assert nr == 0


def test_C148_next_functions_int_is_output_nr():
    parts = leaf().split(1)
    ((node, nr),) = parts[2].exp().grad_fn.next_functions
    assert node is parts[0].grad_fn
    assert node.name() == "SplitBackward0"
    assert nr == 2


def test_C148_same_leaf_twice_gives_same_accumulate_grad():
    x = leaf()
    (n0, i0), (n1, i1) = (x * x).grad_fn.next_functions
    assert n0 is n1
    assert (i0, i1) == (0, 0)


def test_C149_constant_input_gives_none_entry():
    x = leaf()
    y = torch.tensor([4.0, 5.0, 6.0])
    nf = (x * y).grad_fn.next_functions
    assert nf[0][0].name() == "torch::autograd::AccumulateGrad"
    assert nf[1] == (None, 0)


def test_C149_python_scalar_operand_gives_none_entry():
    nf = (leaf() * 2).grad_fn.next_functions
    assert len(nf) == 2
    assert nf[1] == (None, 0)


def test_C150_leaf_has_one_accumulate_grad_node():
    a = leaf()
    acc1 = a.exp().grad_fn.next_functions[0][0]
    acc2 = (a * 2).grad_fn.next_functions[0][0]
    assert acc1 is acc2


# --------------------------------------------------------------------------- metadata


def test_C151_metadata_initially_empty_dict():
    md = leaf().exp().grad_fn.metadata
    assert type(md) is dict
    assert md == {}


def test_C151_metadata_persists_user_keys():
    b = leaf().exp()
    b.grad_fn.metadata["tag"] = "layer1"
    assert b.grad_fn.metadata is b.grad_fn.metadata
    assert b.grad_fn.metadata == {"tag": "layer1"}


def test_C151_metadata_reachable_through_next_functions():
    a = leaf()
    b = a.exp()
    b.grad_fn.metadata["k"] = 1
    ((node, _),) = b.sin().grad_fn.next_functions
    assert node.metadata == {"k": 1}


def test_C151_metadata_is_per_node():
    a = leaf()
    b = a.exp()
    c = a.exp()
    b.grad_fn.metadata["k"] = 1
    assert c.grad_fn.metadata == {}


def test_C151_accumulate_grad_metadata():
    acc = leaf().exp().grad_fn.next_functions[0][0]
    acc.metadata["param"] = "w"
    assert acc.metadata == {"param": "w"}


# --------------------------------------------------------------------------- sequence numbers


def test_C152_sequence_nr_increases():
    x = leaf()
    n1 = (x * 2).grad_fn
    n2 = (x * 3).grad_fn
    n3 = (x + 1).grad_fn
    assert n1._sequence_nr() < n2._sequence_nr() < n3._sequence_nr()


def test_C152_sequence_nr_is_an_int():
    assert isinstance(leaf().exp().grad_fn._sequence_nr(), int)


# --------------------------------------------------------------------------- SavedTensor


# --------------------------------------------------------------------------- GradientEdge


def test_S9_6_gradient_edge_fields():
    assert torch.autograd.graph.GradientEdge._fields == ("node", "output_nr", "ownership_token")


def test_S9_6_gradient_edge_of_later_output():
    parts = leaf().split(1)
    edge = torch.autograd.graph.get_gradient_edge(parts[2])
    assert edge.node is parts[0].grad_fn
    assert edge.output_nr == 2


def test_S9_6_gradient_edge_input_fires_tensor_hook_of_nonleaf():
    seen = []
    x = leaf()
    h = x * 2
    h.register_hook(lambda g: seen.append(g.tolist()))
    torch.autograd.grad((h * 3).sum(), torch.autograd.graph.get_gradient_edge(h))
    assert seen == [[3.0, 3.0, 3.0]]


def test_C154_raw_saved_tensor_type():
    raw = leaf().exp().grad_fn._raw_saved_result
    assert type(raw).__name__ == "SavedTensor"


def test_C154_register_hooks_pack_now_unpack_in_backward():
    log = []
    x = leaf()
    w = leaf(4.0, 5.0, 6.0)
    q = x * w

    def pack(t):
        log.append("pack")
        return t.detach()

    def unpack(t):
        log.append("unpack")
        return t

    q.grad_fn._raw_saved_self.register_hooks(pack, unpack)
    assert log == ["pack"]
    q.sum().backward()
    assert log == ["pack", "unpack"]
    assert w.grad.tolist() == [1.0, 2.0, 3.0]
    assert x.grad.tolist() == [4.0, 5.0, 6.0]


def test_C154_unpack_hook_result_is_used():
    x = leaf()
    w = leaf(4.0, 5.0, 6.0)
    q = x * w
    # The saved self feeds w's gradient: unpack returning 10*x makes it 10x.
    q.grad_fn._raw_saved_self.register_hooks(lambda t: t.detach(), lambda t: t * 10)
    q.sum().backward()
    assert w.grad.tolist() == [10.0, 20.0, 30.0]


def test_C154_saved_attribute_access_goes_through_unpack():
    log = []
    b = leaf().exp()
    b.grad_fn._raw_saved_result.register_hooks(
        lambda t: t.detach(), lambda t: (log.append("unpack"), t)[1]
    )
    _ = b.grad_fn._saved_result
    assert log == ["unpack"]


def test_C155_register_hooks_twice_raises():
    x = leaf()
    w = leaf(4.0, 5.0, 6.0)
    raw = (x * w).grad_fn._raw_saved_self
    raw.register_hooks(lambda t: t, lambda t: t)
    with raises_rt(
        "Calling register_hooks on a saved tensor whose hooks have already been set. "
        "Hint: only one pair of hooks is allowed at a time."
    ):
        raw.register_hooks(lambda t: t, lambda t: t)


def test_S9_6_gradient_edge_as_root_of_grad():
    x = leaf()
    h = x * 2
    edge = torch.autograd.graph.get_gradient_edge(h)
    (g,) = torch.autograd.grad(edge, x, grad_outputs=torch.ones(3))
    assert g.tolist() == [2.0, 2.0, 2.0]


def test_S9_6_gradient_edge_as_root_of_backward():
    x = leaf()
    h = x * 2
    edge = torch.autograd.graph.get_gradient_edge(h)
    torch.autograd.backward(edge, grad_tensors=torch.ones(3), inputs=[x])
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_C143_builtin_node_type_name_is_its_name():
    b = leaf().exp()
    assert type(b.grad_fn).__name__ == "ExpBackward0"


def test_C150_accumulate_grad_node():
    a = leaf()
    acc = a.exp().grad_fn.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert type(acc).__name__ == "AccumulateGrad"
    assert acc.variable is a
    assert acc.next_functions == ()
