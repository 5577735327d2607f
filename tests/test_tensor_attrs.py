"""Tensor-level autograd attributes: checklist C1–C32 and C412 (spec autograd.md §1).

requires_grad / requires_grad_, is_leaf, grad_fn, .grad (read, assign, retain_grad),
detach / detach_, .data, _version, _base, output_nr, legacy Variable, deepcopy.
"""

import copy
import re

import ferrograd as torch
import pytest

MOD = torch.__name__

DIFFERENTIABLE_DTYPES = [
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex64,
    torch.complex128,
]


def raises_rt(text):
    return pytest.raises(RuntimeError, match=re.escape(text))


# --------------------------------------------------------------------------- C1–C7


@pytest.mark.parametrize("dtype", [torch.long, torch.int64, torch.bool])
def test_C1_factory_requires_grad_on_integer_or_bool_raises(dtype):
    with raises_rt("Only Tensors of floating point and complex dtype can require gradients"):
        torch.ones(2, dtype=dtype, requires_grad=True)


@pytest.mark.parametrize("dtype", [torch.long, torch.bool])
def test_C1_attribute_requires_grad_on_integer_or_bool_raises(dtype):
    # §1.1 gives the factory's wording for the attribute setter; torch 2.15 spells it
    # with a lower-case "only". Either capitalisation is accepted.
    t = torch.ones(2, dtype=dtype)
    with pytest.raises(
        RuntimeError,
        match="[Oo]nly Tensors of floating point and complex dtype can require gradients",
    ):
        t.requires_grad = True
    assert t.requires_grad is False


def test_C2_requires_grad_method_on_long_raises():
    t = torch.ones(2, dtype=torch.long)
    with raises_rt("only Tensors of floating point dtype can require gradients"):
        t.requires_grad_()
    assert t.requires_grad is False


@pytest.mark.parametrize("dtype", DIFFERENTIABLE_DTYPES, ids=str)
def test_C3_differentiable_dtypes_can_require_grad(dtype):
    t = torch.zeros(2, dtype=dtype, requires_grad=True)
    assert t.requires_grad is True
    assert t.dtype == dtype
    assert t.is_leaf is True


def test_C4_setting_requires_grad_false_on_nonleaf_attribute_raises():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    with raises_rt("you can only change requires_grad flags of leaf variables."):
        y.requires_grad = False
    assert y.requires_grad is True


def test_C4_requires_grad_false_method_on_nonleaf_raises():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    with raises_rt(
        "you can only change requires_grad flags of leaf variables. If you want to use a "
        "computed variable in a subgraph that doesn't require differentiation use "
        "var_no_grad = var.detach()."
    ):
        y.requires_grad_(False)
    assert y.requires_grad is True


def test_C5_requires_grad_true_on_nonleaf_is_noop():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    fn = y.grad_fn
    assert y.requires_grad_(True) is y
    assert y.requires_grad is True
    assert y.grad_fn is fn
    assert y.is_leaf is False


def test_C6_requires_grad_method_returns_self():
    t = torch.zeros(3)
    assert t.requires_grad_() is t
    assert t.requires_grad is True


def test_C6_requires_grad_method_works_inside_no_grad():
    t = torch.zeros(3)
    with torch.no_grad():
        r = t.requires_grad_()
    assert r is t
    assert t.requires_grad is True
    assert t.is_leaf is True


def test_C6_requires_grad_false_on_leaf_turns_it_off():
    t = torch.zeros(3, requires_grad=True)
    assert t.requires_grad_(False) is t
    assert t.requires_grad is False


def test_C7_earlier_result_not_changed_by_later_requires_grad():
    x = torch.ones(3)
    y = x * 2
    x.requires_grad_()
    assert x.requires_grad is True
    assert y.requires_grad is False
    assert y.grad_fn is None


# --------------------------------------------------------------------------- C8–C11


def test_C8_tensor_not_requiring_grad_is_leaf():
    t = torch.randn(3)
    assert t.requires_grad is False
    assert t.is_leaf is True
    # also a computed one: no grad required anywhere
    assert (t * 2).is_leaf is True


def test_C8_user_created_requires_grad_tensor_is_leaf():
    x = torch.randn(3, requires_grad=True)
    assert x.is_leaf is True


def test_C8_op_result_is_not_leaf():
    x = torch.randn(3, requires_grad=True)
    assert (x * 2).is_leaf is False


def test_C8_detached_result_is_leaf():
    x = torch.randn(3, requires_grad=True)
    d = (x * 2).detach()
    assert d.is_leaf is True
    assert d.requires_grad is False


def test_C9_no_grad_result_is_leaf_not_requiring_grad():
    x = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        y = x * 2
    assert y.is_leaf is True
    assert y.requires_grad is False
    assert y.grad_fn is None


def test_C10_grad_fn_name_mul():
    x = torch.randn(3, requires_grad=True)
    y = torch.randn(3, requires_grad=True)
    assert (x * y).grad_fn.name() == "MulBackward0"


def test_C10_repr_shows_grad_fn():
    x = torch.randn(3, requires_grad=True)
    y = torch.randn(3, requires_grad=True)
    assert "grad_fn=<MulBackward0>" in repr(x * y)


def test_C11_leaf_has_no_grad_fn():
    x = torch.randn(3, requires_grad=True)
    assert x.grad_fn is None


# --------------------------------------------------------------------------- C12–C16


def test_C12_leaf_grad_none_before_backward():
    x = torch.randn(3, requires_grad=True)
    assert x.grad is None


def test_C12_leaf_grad_is_tensor_after_backward():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    assert isinstance(x.grad, torch.Tensor)
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_C13_nonleaf_grad_access_warns_and_returns_none():
    x = torch.randn(3, requires_grad=True)
    y = x * 2
    with pytest.warns(
        UserWarning,
        match=re.escape(
            "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed."
        ),
    ):
        g = y.grad
    assert g is None


def test_C13_warning_suggests_retain_grad():
    x = torch.randn(3, requires_grad=True)
    y = x * 2
    with pytest.warns(UserWarning) as record:
        _ = y.grad
    text = " ".join(str(w.message) for w in record)
    assert (
        "Its .grad attribute won't be populated during autograd.backward(). If you indeed "
        "want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on "
        "the non-leaf Tensor."
    ) in text


def test_C14_assign_grad_of_wrong_size_raises():
    x = torch.zeros(3, requires_grad=True)
    with raises_rt("attempting to assign a gradient of size '[4]' to a tensor of size '[3]'"):
        x.grad = torch.zeros(4)
    assert x.grad is None


def test_C14_assign_grad_of_right_size_works():
    x = torch.zeros(3, requires_grad=True)
    g = torch.tensor([1.0, 2.0, 3.0])
    x.grad = g
    assert x.grad.tolist() == [1.0, 2.0, 3.0]
    x.grad = None
    assert x.grad is None


def test_C15_assign_grad_of_other_dtype_raises():
    x = torch.zeros(3, requires_grad=True)
    with raises_rt(
        "attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'"
    ):
        x.grad = torch.zeros(3, dtype=torch.float64)
    assert x.grad is None


def test_C16_assign_non_tensor_grad_raises_type_error():
    x = torch.zeros(3, requires_grad=True)
    with pytest.raises(
        TypeError,
        match=re.escape("assigned grad expected to be a Tensor or None but got grad of type int"),
    ):
        x.grad = 3


# --------------------------------------------------------------------------- C17–C20


def test_C17_retain_grad_on_nonleaf_populates_grad():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    assert y.retains_grad is False
    y.retain_grad()
    assert y.retains_grad is True
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 8.0, 12.0]  # d(y²)/dy = 2y
    assert x.grad.tolist() == [8.0, 16.0, 24.0]


def test_C18_retain_grad_on_leaf_is_noop():
    x = torch.ones(3, requires_grad=True)
    assert x.retain_grad() is None
    assert x.retains_grad is False
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert x.retains_grad is False


def test_C19_retain_grad_without_requires_grad_raises():
    with raises_rt("can't retain_grad on Tensor that has requires_grad=False"):
        torch.randn(2).retain_grad()


def test_C20_retained_grad_accumulates_over_two_backwards():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    out = (y * y).sum()
    out.backward(retain_graph=True)
    assert y.grad.tolist() == [6.0, 12.0]
    out.backward(retain_graph=True)
    assert y.grad.tolist() == [12.0, 24.0]


# --------------------------------------------------------------------------- C21–C25


def test_C21_detach_properties():
    x = torch.randn(3, requires_grad=True)
    d = x.detach()
    assert d.requires_grad is False
    assert d.grad_fn is None
    assert d.is_leaf is True
    assert d.data_ptr() == x.data_ptr()
    assert d is not x


def test_C21_detach_of_nonleaf_shares_storage():
    x = torch.randn(3, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert d.data_ptr() == y.data_ptr()
    assert d.requires_grad is False
    assert torch.allclose(d, y)


def test_C22_inplace_on_detached_bumps_shared_version():
    x = torch.ones(3, requires_grad=True)
    d = x.detach()
    assert x._version == 0
    d.add_(1)
    assert x._version == 1
    assert d._version == 1
    assert x.tolist() == [2.0, 2.0, 2.0]  # storage is shared


def test_C23_zeroing_detached_alias_of_saved_tensor_breaks_backward():
    x = torch.randn(3, requires_grad=True)
    y = x.exp()  # saves its result
    y.detach().zero_()
    with raises_rt(
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation"
    ):
        y.sum().backward()


def test_C24_detach_inplace_returns_self_as_leaf():
    x = torch.randn(3, requires_grad=True)
    y = x.exp()
    r = y.detach_()
    assert r is y
    assert y.is_leaf is True
    assert y.requires_grad is False
    assert y.grad_fn is None


def test_C25_detach_inplace_on_view_raises():
    x = torch.randn(4, requires_grad=True)
    base = x * 1
    with raises_rt("Can't detach views in-place. Use detach() instead."):
        base[:2].detach_()


# --------------------------------------------------------------------------- C26–C29


def test_C26_version_starts_at_zero():
    assert torch.zeros(3)._version == 0
    assert torch.randn(3, requires_grad=True)._version == 0


def test_C26_add_inplace_bumps_version_by_one():
    t = torch.zeros(3)
    t.add_(1)
    assert t._version == 1
    t.add_(1)
    assert t._version == 2


def test_C26_setitem_bumps_version_by_one():
    t = torch.zeros(3)
    t[0] = 5
    assert t._version == 1
    assert t.tolist() == [5.0, 0.0, 0.0]


def test_C26_inplace_under_no_grad_bumps_version():
    t = torch.zeros(3, requires_grad=True)
    with torch.no_grad():
        t.mul_(2)
    assert t._version == 1


def test_C27_inplace_on_view_bumps_base_and_view_version():
    base = torch.zeros(4)
    v = base[:2]
    v.add_(1)
    assert base._version == 1
    assert v._version == 1
    assert base.tolist() == [1.0, 1.0, 0.0, 0.0]


def test_C27_inplace_on_base_bumps_existing_view_version():
    base = torch.zeros(4)
    v = base[1:]
    base.add_(1)
    assert v._version == base._version == 1


def test_C28_inplace_on_data_does_not_bump_version():
    t = torch.ones(3, requires_grad=True)
    t.data.add_(1)
    assert t._version == 0
    assert t.tolist() == [2.0, 2.0, 2.0]


def test_C28_data_is_detached_alias():
    t = torch.ones(3, requires_grad=True)
    d = t.data
    assert d.requires_grad is False
    assert d.data_ptr() == t.data_ptr()


def test_C29_split_pieces_output_nr():
    x = torch.randn(4, requires_grad=True)
    a, b = x.split(2)
    assert a.output_nr == 0
    assert b.output_nr == 1
    assert a.grad_fn.name() == "SplitBackward0"


def test_C29_view_base_is_set():
    x = torch.randn(4)
    v = x[:2]
    assert v._base is x
    assert x._base is None


def test_C29_view_of_view_base_is_root():
    x = torch.randn(4, 2)
    v = x[1:]
    w = v[0]
    assert w._base is x


def test_C29_non_view_result_has_no_base():
    x = torch.randn(4, requires_grad=True)
    assert (x * 2)._base is None


# --------------------------------------------------------------------------- C30–C32


def test_C30_variable_returns_tensor_requiring_grad():
    v = torch.autograd.Variable(torch.ones(2), requires_grad=True)
    assert type(v) is torch.Tensor
    assert v.requires_grad is True
    assert v.tolist() == [1.0, 1.0]


def test_C30_any_tensor_is_instance_of_variable():
    assert isinstance(torch.ones(1), torch.autograd.Variable)


def test_C31_lowercase_variable_raises():
    with raises_rt("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead"):
        torch.autograd.variable(1)


def test_C32_deepcopy_of_nonleaf_raises():
    x = torch.randn(3, requires_grad=True)
    with raises_rt(
        "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
        "protocol at the moment."
    ):
        copy.deepcopy(x * 2)


def test_C32_deepcopy_of_leaf_works():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    c = copy.deepcopy(x)
    assert c is not x
    assert c.requires_grad is True
    assert c.is_leaf is True
    assert c.tolist() == [1.0, 2.0]
    assert c.data_ptr() != x.data_ptr()


# --------------------------------------------------------------------------- C412


def test_C412_grad_recreated_after_reset_to_none():
    x = torch.ones(3, requires_grad=True)
    (x * 5).sum().backward()
    old = x.grad
    x.grad = None
    (x * 2).sum().backward()
    g = x.grad
    assert g is not None
    assert g is not old
    assert g.tolist() == [2.0, 2.0, 2.0]
    assert g.requires_grad is False
    assert g.grad_fn is None
    assert old.tolist() == [5.0, 5.0, 5.0]  # the old tensor was not written into
