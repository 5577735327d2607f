"""Layout of ``.grad`` and in-place accumulation: checklist C83–C91 (spec autograd.md §5).

Rules: a fresh ``.grad`` copies the strides of a non-overlapping-and-dense param and is
row-major contiguous otherwise; with create_graph=False later gradients are added in
place into the existing ``.grad``; with create_graph=True it is replaced by ``old + new``.
"""

import ferrograd as torch
import pytest

ignore_create_graph_warning = pytest.mark.filterwarnings(
    "ignore:Using backward\\(\\) with create_graph=True"
)
ignore_layout_warning = pytest.mark.filterwarnings(
    "ignore:grad and param do not obey the gradient layout contract"
)


def transposed_leaf():
    """A (4, 3) leaf with strides (1, 4): non-overlapping and dense, not row-major."""
    x = torch.randn(3, 4).t().requires_grad_()
    assert x.shape == (4, 3)
    assert x.stride() == (1, 4)
    assert x.is_leaf
    return x


def test_C83_dense_permuted_param_gets_same_strides():
    x = transposed_leaf()
    (x * 2).sum().backward()
    assert x.grad.shape == (4, 3)
    assert x.grad.stride() == (1, 4)
    assert torch.allclose(x.grad, torch.full((4, 3), 2.0))


def test_C84_param_with_gaps_gets_row_major_grad():
    base = torch.randn(3, 6)
    x = base[:, ::2].requires_grad_()
    assert x.stride() == (6, 2)
    (x * 3).sum().backward()
    assert x.grad.shape == (3, 3)
    assert x.grad.stride() == (3, 1)
    assert torch.allclose(x.grad, torch.full((3, 3), 3.0))


def test_C85_expanded_param_gets_row_major_grad():
    x = torch.randn(1, 3).expand(2, 3).requires_grad_()
    assert x.stride() == (0, 1)
    (x * 4).sum().backward()
    assert x.grad.shape == (2, 3)
    assert x.grad.stride() == (3, 1)
    assert torch.allclose(x.grad, torch.full((2, 3), 4.0))


def test_C86_second_backward_accumulates_in_place():
    x = transposed_leaf()
    (x * 2).sum().backward()
    g = x.grad
    ptr = g.data_ptr()
    (x * 5).sum().backward()
    assert x.grad is g
    assert x.grad.data_ptr() == ptr
    assert x.grad.stride() == (1, 4)
    assert torch.allclose(x.grad, torch.full((4, 3), 7.0))


def test_C86_accumulation_bumps_grad_version_not_replacing_it():
    x = torch.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    v0 = g._version
    (x * 2).sum().backward()
    assert x.grad is g
    assert g._version > v0
    assert g.tolist() == [4.0, 4.0, 4.0]


@ignore_create_graph_warning
def test_C87_create_graph_replaces_existing_grad():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * 2).sum().backward()
    old = x.grad
    old_ptr = old.data_ptr()
    (x * x).sum().backward(create_graph=True)
    assert x.grad is not old
    assert x.grad.data_ptr() != old_ptr
    assert x.grad.requires_grad is True
    assert x.grad.grad_fn.name() == "AddBackward0"
    assert x.grad.tolist() == [4.0, 6.0, 8.0]
    assert old.tolist() == [2.0, 2.0, 2.0]  # not written into


@ignore_layout_warning
def test_C88_manually_assigned_grad_strides_are_kept():
    param = torch.randn(3, 4).requires_grad_()
    assert param.stride() == (4, 1)
    manual = torch.zeros(4, 3).t()
    assert manual.shape == (3, 4) and manual.stride() == (1, 3)
    param.grad = manual
    (param * 2).sum().backward()
    assert param.grad.stride() == (1, 3)
    assert torch.allclose(param.grad, torch.full((3, 4), 2.0))


def test_C89_layout_contract_violation_warns(run_isolated):
    # The warning may be issued only once per process: check it in a fresh one.
    proc = run_isolated(
        """
        import warnings
        param = torch.randn(3, 4).requires_grad_()
        param.grad = torch.zeros(4, 3).t()
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            (param * 2).sum().backward()
        msgs = [str(w.message) for w in rec if issubclass(w.category, UserWarning)]
        assert any(
            "grad and param do not obey the gradient layout contract. This is not an "
            "error, but may impair performance." in m for m in msgs
        ), msgs
        text = next(m for m in msgs if "layout contract" in m)
        assert "grad.sizes() = [3, 4], strides() = [1, 3]" in text, text
        assert "param.sizes() = [3, 4], strides() = [4, 1]" in text, text
        print("OK")
        """
    )
    assert proc.stdout.strip().endswith("OK")


def test_C89_contract_obeying_grad_does_not_warn(run_isolated):
    proc = run_isolated(
        """
        import warnings
        param = torch.randn(3, 4).requires_grad_()
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            (param * 2).sum().backward()
            (param * 2).sum().backward()
        msgs = [str(w.message) for w in rec]
        assert not any("layout contract" in m for m in msgs), msgs
        print("OK")
        """
    )
    assert proc.stdout.strip().endswith("OK")


@ignore_layout_warning
def test_C90_grad_reset_to_none_recreated_by_rules():
    x = transposed_leaf()
    x.grad = torch.zeros(4, 3)  # row-major: does not follow rule 1 for this param
    (x * 2).sum().backward()
    assert x.grad.stride() == (3, 1)
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.stride() == (1, 4)
    assert torch.allclose(x.grad, torch.full((4, 3), 3.0))  # not accumulated


def test_C91_two_backwards_accumulate():
    acc = torch.tensor([1.0, 2.0], requires_grad=True)
    (acc * 3).sum().backward()
    (acc * 3).sum().backward()
    assert acc.grad.tolist() == [6.0, 6.0]
