"""Saved-tensor hooks and related context managers: saved_tensors_hooks, save_on_cpu,
disable_saved_tensors_hooks, allow_mutation_on_saved_tensors — checklist C175–C185,
C193–C196 (spec autograd.md §11.1–§11.3, §11.5); plus the two Function class attributes
that govern saved tensors and gradient lists, C264 and C265 (function.md §10).

Multi-grad hooks (C186–C192, §11.4) are in test_hooks.py.
"""

import re

import ferrograd as torch
import pytest


def raises_rt(text):
    return pytest.raises(RuntimeError, match=re.escape(text))


def graph():
    return torch.autograd.graph


def identity_hooks():
    return graph().saved_tensors_hooks(lambda t: t, lambda t: t)


class Log:
    """pack/unpack that record their calls; pack stores a detached tensor."""

    def __init__(self):
        self.calls = []

    def pack(self, t):
        self.calls.append(("pack", t.requires_grad))
        return t.detach()

    def unpack(self, t):
        self.calls.append("unpack")
        return t

    def hooks(self):
        return graph().saved_tensors_hooks(self.pack, self.unpack)


def operands():
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
    return a, b


def test_C193_mutation_of_saved_tensor_allowed():
    with graph().allow_mutation_on_saved_tensors():
        a = torch.ones(2, 3, requires_grad=True)
        b = a.clone()
        out = (b**2).sum()
        b.sin_()
        out.backward()
    assert a.grad.tolist() == [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]
    assert b.grad_fn.name() == "SinBackward0"
    assert all(abs(v - 0.8415) < 1e-4 for row in b.tolist() for v in row)


def test_C193_mutation_by_mul_uses_pre_mutation_value():
    with graph().allow_mutation_on_saved_tensors():
        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a.clone()
        out = (b * b).sum()
        b.mul_(3)
        out.backward()
    assert a.grad.tolist() == [2.0, 4.0, 6.0]
    assert b.tolist() == [3.0, 6.0, 9.0]


def test_C193_without_context_the_same_code_raises():
    a = torch.ones(2, 3, requires_grad=True)
    b = a.clone()
    out = (b**2).sum()
    b.mul_(3)
    with raises_rt(
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation"
    ):
        out.backward()


def test_C194_nesting_raises():
    with graph().allow_mutation_on_saved_tensors():
        with raises_rt("allow_mutation_on_saved_tensors contexts cannot be nested"):
            with graph().allow_mutation_on_saved_tensors():
                pass


def test_C195_backward_outside_context_raises():
    with graph().allow_mutation_on_saved_tensors():
        a = torch.ones(2, 3, requires_grad=True)
        b = a.clone()
        out = (b**2).sum()
        b.mul_(3)
    with pytest.raises(
        AssertionError,
        match=re.escape(
            "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
        ),
    ):
        out.backward()


def test_C195_full_message_keeps_torch_typo():
    with graph().allow_mutation_on_saved_tensors():
        a = torch.ones(2, requires_grad=True)
        b = a.clone()
        out = (b**2).sum()
        b.mul_(3)
    with pytest.raises(AssertionError) as info:
        out.backward()
    assert str(info.value) == (
        "Trying to backward outside of the 'allow_mutation_on_saved_tensors' contextin which "
        "the graph was originally recorded."
    )


def test_C196_context_yields_allow_mutation_object():
    with graph().allow_mutation_on_saved_tensors() as ctx:
        assert type(ctx).__name__ == "_AllowMutationOnSavedContext"
