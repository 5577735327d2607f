"""``ferrograd.autograd.graph.to_dot(tensor, show_saved=False)``: the backward graph of a
tensor as Graphviz DOT text. Beyond torch (which has no such function), so every test is
skipped under the shim.

What is pinned: the text is a ``digraph``; each node reachable from ``tensor.grad_fn`` is
drawn once, labelled with its ``name()`` (AccumulateGrad nodes may carry the
``torch::autograd::`` prefix or not); a leaf's node also shows the leaf's shape as a Python
tuple and its dtype; there is exactly one edge per non-None ``next_functions`` entry of
each drawn node (an input that needs no gradient, ``(None, 0)``, has no node to point to);
``show_saved=True`` adds the node's saved values by name.
"""

import re

import ferrograd as torch
import pytest

MOD = torch.__name__
IS_REAL_TORCH = MOD == "torch"

pytestmark = pytest.mark.skipif(IS_REAL_TORCH, reason="ferrograd-only API (torch has no to_dot)")


def to_dot(t, **kwargs):
    return torch.autograd.graph.to_dot(t, **kwargs)


def edges(dot):
    return [line for line in dot.splitlines() if "->" in line]


def reachable_nodes(t):
    seen, stack, out = set(), [t.grad_fn], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        stack.extend(n for n, _ in node.next_functions)
    return out


def expected_edge_count(t):
    return sum(n is not None for node in reachable_nodes(t) for n, _ in node.next_functions)


def mul_graph():
    a = torch.ones(2, 3, requires_grad=True)
    b = torch.ones(2, 3, requires_grad=True)
    return (a * b).sum()


def test_to_dot_returns_digraph_text():
    dot = to_dot(mul_graph())
    assert isinstance(dot, str)
    assert dot.lstrip().startswith("digraph")
    assert dot.rstrip().endswith("}")
    assert dot.count("{") == dot.count("}")


def test_to_dot_names_nodes_like_grad_fn():
    dot = to_dot(mul_graph())
    assert "SumBackward0" in dot
    assert "MulBackward0" in dot
    assert "AccumulateGrad" in dot


def test_to_dot_leaf_label_has_shape_and_dtype():
    dot = to_dot(mul_graph())
    assert "(2, 3)" in dot
    assert "float32" in dot


def test_to_dot_leaf_label_follows_leaf_dtype_and_shape():
    w = torch.ones(4, dtype=torch.float64, requires_grad=True)
    dot = to_dot((w * 2).sum())
    assert "(4,)" in dot
    assert "float64" in dot
    assert "float32" not in dot


def test_to_dot_one_edge_per_next_functions_entry():
    out = mul_graph()
    # Sum -> Mul, Mul -> Acc(a), Mul -> Acc(b)
    assert expected_edge_count(out) == 3
    assert len(edges(to_dot(out))) == 3


def test_to_dot_repeated_input_gives_one_edge_per_entry():
    # x * x: both next_functions entries of MulBackward0 point to the same AccumulateGrad.
    x = torch.ones(2, 3, requires_grad=True)
    out = (x * x).sum()
    dot = to_dot(out)
    assert len(edges(dot)) == expected_edge_count(out) == 3


def test_to_dot_shared_node_drawn_once():
    # h is used twice; its subgraph is drawn once (4 edges, not the 5 of a tree walk).
    x = torch.ones(2, 3, requires_grad=True)
    h = x.exp()
    out = (h * h).sum()
    assert expected_edge_count(out) == 4
    dot = to_dot(out)
    assert len(edges(dot)) == 4
    assert len(re.findall(r"ExpBackward0", dot)) == 1


def test_to_dot_constant_input_has_no_edge():
    x = torch.ones(2, 3, requires_grad=True)
    c = torch.ones(2, 3)
    out = (x * c).sum()
    assert (out.grad_fn.next_functions[0][0].next_functions[1]) == (None, 0)
    assert len(edges(to_dot(out))) == expected_edge_count(out) == 2


def test_to_dot_edges_of_a_deeper_graph():
    a = torch.ones(2, 3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    out = ((a * b).relu() + a.exp()).sum(0).mean()
    dot = to_dot(out)
    assert len(edges(dot)) == expected_edge_count(out)
    for node in reachable_nodes(out):
        name = node.name().replace("torch::autograd::", "")
        assert name in dot, name


def test_to_dot_saved_tensors_hidden_by_default():
    a = torch.ones(2, 3, requires_grad=True)
    dot = to_dot(a.exp().sum())
    assert "result" not in dot


def test_to_dot_show_saved_lists_saved_values():
    a = torch.ones(2, 3, requires_grad=True)
    b = torch.ones(2, 3, requires_grad=True)
    plain = to_dot((a * b).sum())
    saved = to_dot((a * b).sum(), show_saved=True)
    assert "self" in saved and "other" in saved
    assert "self" not in plain and "other" not in plain
    assert len(edges(saved)) == len(edges(plain))


def test_to_dot_show_saved_output():
    a = torch.ones(2, 3, requires_grad=True)
    dot = to_dot(a.exp().sum(), show_saved=True)
    assert "result" in dot
