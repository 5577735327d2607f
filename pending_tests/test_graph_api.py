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
