"""In-place forms of ops (issue 11: "in-place `_` forms where torch has them") and clamp
with tensor bounds (issue 11, elementwise unary list). Each in-place form must give the
out-of-place op's values, torch's node name and the out-of-place op's gradients."""

import pytest

import ferrograd as torch
from ferrograd.autograd import gradcheck, gradgradcheck

# (method, args, torch's node for the in-place call)
CASES = [
    ("floor", (), "FloorBackward0"),
    ("ceil", (), "CeilBackward0"),
    ("trunc", (), "TruncBackward0"),
    ("frac", (), "FracBackward0"),
    ("round", (), "RoundBackward0"),
    ("sign", (), "SignBackward0"),
    ("sgn", (), "SgnBackward0"),
    ("deg2rad", (), "Deg2RadBackward0"),
    ("rad2deg", (), "Rad2DegBackward0"),
    ("cumsum", (0,), "CumsumBackward0"),
    ("cumprod", (1,), "CumprodBackward0"),
    ("tril", (), "TrilBackward0"),
    ("triu", (1,), "TriuBackward0"),
]


@pytest.mark.parametrize("name,args,node", CASES, ids=[c[0] for c in CASES])
def test_inplace_form_matches_out_of_place(name, args, node):
    base = torch.randn(3, 4, dtype=torch.float64) * 3
    x = base.clone().requires_grad_()
    expected = getattr(x, name)(*args)
    (expected * torch.arange(12.0, dtype=torch.float64).reshape(3, 4)).sum().backward()
    want_grad = x.grad

    y = base.clone().requires_grad_()
    z = y * 1
    out = getattr(z, name + "_")(*args)
    assert out is z
    assert type(z.grad_fn).__name__ == node
    assert torch.equal(z.detach(), expected.detach())
    (z * torch.arange(12.0, dtype=torch.float64).reshape(3, 4)).sum().backward()
    assert torch.allclose(y.grad, want_grad)


def test_round_decimals_inplace():
    x = torch.tensor([1.2345, -2.5551], dtype=torch.float64)
    assert torch.equal(x.clone().round_(decimals=2), x.round(decimals=2))


def test_rounding_an_integer_tensor_in_place_keeps_it():
    x = torch.tensor([1, -2, 3])
    assert torch.equal(x.floor_(), torch.tensor([1, -2, 3]))


def test_inplace_on_a_leaf_requiring_grad_is_refused():
    """C97: the new in-place forms refuse a requires-grad leaf like add_."""
    x = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.floor_()


def test_sign_inplace_refuses_complex():
    with pytest.raises(NotImplementedError, match="Please use torch.sgn instead"):
        torch.randn(3, dtype=torch.complex128).sign_()


def test_ipow_with_a_tensor_exponent():
    base = torch.rand(4, dtype=torch.float64) + 0.5
    e = torch.randn(4, dtype=torch.float64, requires_grad=True)
    x = base.clone().requires_grad_()
    z = x * 1
    z **= e
    assert type(z.grad_fn).__name__ == "PowBackward1"
    z.sum().backward()
    assert torch.allclose(x.grad, e.detach() * base ** (e.detach() - 1))
    assert torch.allclose(e.grad, base ** e.detach() * base.log())


def test_scatter_inplace_forms():
    x = torch.zeros(3, 4, dtype=torch.float64)
    index = torch.tensor([[0, 1, 2, 0]])
    src = torch.arange(1.0, 5.0, dtype=torch.float64).reshape(1, 4)
    assert torch.equal(x.clone().scatter_(0, index, src), x.scatter(0, index, src))
    assert torch.equal(x.clone().scatter_(0, index, value=2.0), x.scatter(0, index, value=2.0))
    assert torch.equal(x.clone().scatter_add_(0, index, src), x.scatter_add(0, index, src))
    y = x.clone().requires_grad_()
    z = y * 1
    z.scatter_add_(0, index, src)
    assert type(z.grad_fn).__name__ == "ScatterAddBackward0"


# ---------------------------------------------------------------- clamp, tensor bounds


def test_clamp_tensor_bounds_values_and_nodes():
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    lo = torch.full((4,), -0.5, dtype=torch.float64)
    hi = torch.full((3, 1), 0.5, dtype=torch.float64)
    out = torch.clamp(x, min=lo, max=hi)
    assert torch.equal(out, torch.minimum(torch.maximum(x, lo), hi))
    assert type(out.grad_fn).__name__ == "ClampBackward0"
    assert type(x.clamp(min=lo).grad_fn).__name__ == "ClampBackward0"
    assert type(x.clip(max=hi).grad_fn).__name__ == "ClampBackward0"
    y = x.clone()
    y.clamp_(lo, hi)
    assert torch.equal(y, out)


def test_clamp_tensor_bounds_gradients():
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    lo = (torch.randn(4, dtype=torch.float64) * 0.1 - 0.5).requires_grad_()
    hi = (torch.randn(3, 1, dtype=torch.float64) * 0.1 + 0.5).requires_grad_()
    assert gradcheck(lambda a, b, c: torch.clamp(a, b, c), (x, lo, hi))
    assert gradgradcheck(lambda a, b, c: torch.clamp(a, b, c), (x, lo, hi))
    assert gradcheck(lambda a, b: torch.clamp(a, min=b), (x, lo))
    assert gradcheck(lambda a, c: torch.clamp(a, max=c), (x, hi))
    # Each gradient goes where its bound is active (torch's clamp_backward_min_max).
    torch.clamp(x, lo, hi).sum().backward()
    assert torch.equal(x.grad, ((x >= lo) & (x <= hi)).double())
    assert torch.equal(lo.grad, (x < lo).double().sum(0))
    assert torch.equal(hi.grad, (x > hi).double().sum(1, keepdim=True))


def test_clamp_tensor_bounds_promote_and_propagate_nan():
    out = torch.clamp(torch.arange(3), min=torch.tensor(0.5))
    assert out.dtype == torch.float32
    nan = float("nan")
    got = torch.clamp(torch.tensor([nan, 1.0]), min=torch.tensor([0.0, nan]))
    assert got.isnan().all()


def test_clamp_mixing_tensor_and_number_bounds_is_a_type_error():
    with pytest.raises(TypeError, match="received an invalid combination of arguments"):
        torch.clamp(torch.randn(3), min=torch.zeros(3), max=0.5)


def test_clamp_tensor_bounds_must_broadcast():
    with pytest.raises(RuntimeError, match="must match the size"):
        torch.clamp(torch.randn(3), min=torch.zeros(2))


def test_clamp_zero_dim_tensor_beside_a_number_reads_as_a_number():
    x = torch.randn(3, requires_grad=True)
    out = torch.clamp(x, min=torch.tensor(0.0), max=0.5)
    assert type(out.grad_fn).__name__ == "ClampBackward1"
    assert torch.equal(out, torch.clamp(x, 0.0, 0.5))
    with pytest.raises(TypeError, match="received an invalid combination of arguments"):
        torch.clamp(x, min=torch.tensor([0.0]), max=0.5)
