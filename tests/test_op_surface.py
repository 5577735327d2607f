"""Issue 11's remaining surface: Tensor.pow_, clamp_min / clamp_max, the in-place
comparisons, logical and bitwise in-place forms, the in-place views (t_, transpose_,
squeeze_, unsqueeze_), torch's aliases, the new_* constructors and flag queries, and the
composites (hsplit/vsplit/dsplit, atleast_*, broadcast_shapes, diff, float_power,
pinverse, linalg.matrix_power / diagonal / matrix_rank / cond / vander / tensorinv /
tensorsolve). Node names are torch 2.15's."""

import warnings

import pytest

import ferrograd as torch
from ferrograd.autograd import gradcheck, gradgradcheck
import ferrograd.autograd.forward_ad as fwAD


def node(t):
    return type(t.grad_fn).__name__


def f64(*shape, requires_grad=False):
    torch.manual_seed(sum(shape) + len(shape))
    return torch.randn(*shape, dtype=torch.float64, requires_grad=requires_grad)


# ----------------------------------------------------------------------------- pow_


def test_pow_method_in_place_matches_pow():
    x = f64(3, 4).abs() + 0.5
    e = f64(4)
    for exponent, name in ((2, "PowBackward0"), (e, "PowBackward1")):
        leaf = x.clone().requires_grad_()
        z = leaf * 1
        assert z.pow_(exponent) is z
        assert node(z) == name
        assert torch.allclose(z, x.pow(exponent))
        z.sum().backward()
        ref = x.clone().requires_grad_()
        ref.pow(exponent).sum().backward()
        assert torch.allclose(leaf.grad, ref.grad)


def test_square_in_place_is_pow_2():
    z = f64(3, requires_grad=True) * 1
    want = z.detach() ** 2
    z.square_()
    assert node(z) == "PowBackward0"
    assert torch.equal(z.detach(), want)


# ----------------------------------------------------------------------------- clamp_min / max


def test_clamp_min_max_nodes_and_values():
    x = f64(3, 4, requires_grad=True)
    b = f64(4)
    assert node(x.clamp_min(0)) == "ClampMinBackward0"
    assert node(x.clamp_min(b)) == "ClampMinBackward1"
    assert node(x.clamp_max(0)) == "ClampMaxBackward0"
    assert node(torch.clamp_max(x, b)) == "ClampMaxBackward1"
    # A 0-dim tensor is the tensor overload here (clamp_min has no number beside it).
    assert node(x.clamp_min(torch.tensor(0.0, dtype=torch.float64))) == "ClampMinBackward1"
    assert torch.equal(x.clamp_min(b), torch.maximum(x, b.expand(3, 4)))
    assert torch.equal(x.clamp_max(0.5), x.clamp(max=0.5))


def test_clamp_min_max_in_place():
    base = f64(3, 4)
    z = base.clone().requires_grad_() * 1
    z.clamp_min_(0.1)
    assert node(z) == "ClampMinBackward0"
    assert torch.equal(z.detach(), base.clamp(min=0.1))
    z = base.clone()
    z.clamp_max_(torch.zeros(4, dtype=torch.float64))
    assert torch.equal(z, base.clamp(max=0.0))


def test_clamp_min_tensor_gradients():
    x = f64(3, 4)
    b = (x[0] + 0.3).detach()
    x.requires_grad_()
    b.requires_grad_()
    for f in (torch.clamp_min, torch.clamp_max):
        assert gradcheck(f, (x, b))
        assert gradgradcheck(f, (x, b))
        assert gradcheck(f, (x, b), check_forward_ad=True, check_batched_grad=True)


def test_clamp_min_tangent_at_a_tie_is_the_inputs():
    """torch's clamp_min jvp: where(x >= min, x_t, min_t) (clamp's gives min_t there)."""
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    m = torch.tensor([1.0, 3.0], dtype=torch.float64)
    with fwAD.dual_level():
        dx = fwAD.make_dual(x, torch.tensor([10.0, 10.0], dtype=torch.float64))
        dm = fwAD.make_dual(m, torch.tensor([1.0, 1.0], dtype=torch.float64))
        t_min = fwAD.unpack_dual(torch.clamp_min(dx, dm)).tangent
        t_clamp = fwAD.unpack_dual(torch.clamp(dx, min=dm)).tangent
    assert t_min.tolist() == [10.0, 1.0]
    assert t_clamp.tolist() == [1.0, 1.0]


def test_clamp_min_bad_bound_is_torchs_type_error():
    x = torch.ones(3)
    with pytest.raises(TypeError, match=r"clamp_min\(\) received an invalid combination"):
        x.clamp_min(None)
    with pytest.raises(TypeError, match=r"\(!str!\)"):
        x.clamp_max_("a")


# ----------------------------------------------------------------------------- comparisons


CMP = [("eq", "Eq"), ("ne", "Ne"), ("lt", "Lt"), ("le", "Le"), ("gt", "Gt"), ("ge", "Ge")]


@pytest.mark.parametrize("name,node_name", CMP, ids=[c[0] for c in CMP])
def test_comparison_in_place(name, node_name):
    base = torch.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]], dtype=torch.float64)
    other = torch.tensor([1.0, 1.0, 1.0], dtype=torch.float64)
    leaf = base.clone().requires_grad_()
    z = leaf * 1
    assert getattr(z, name + "_")(1.0) is z
    assert node(z) == node_name + "Backward0"
    assert z.dtype == torch.float64
    assert torch.equal(z.detach(), getattr(base, name)(1.0).to(torch.float64))
    z.sum().backward()
    assert torch.equal(leaf.grad, torch.zeros_like(base))

    z = base.clone().requires_grad_() * 1
    getattr(z, name + "_")(other)
    assert node(z) == node_name + "Backward1"
    assert torch.equal(z.detach(), getattr(base, name)(other).to(torch.float64))


def test_comparison_aliases():
    x = torch.tensor([0.0, 1.0, 2.0])
    assert torch.equal(x.greater(1), x > 1)
    assert torch.equal(torch.greater_equal(x, 1), x >= 1)
    assert torch.equal(x.less(1), x < 1)
    assert torch.equal(torch.less_equal(x, 1), x <= 1)
    assert torch.equal(x.not_equal(1), x != 1)
    z = x.clone()
    z.greater_(1)
    assert z.tolist() == [0.0, 0.0, 1.0]


def test_comparison_in_place_errors():
    """The leaf refusal is C97's, as for add_."""
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match"):
        torch.ones(3).eq_(torch.ones(2, 3))
    with pytest.raises(TypeError, match=r"eq_\(\) received an invalid combination"):
        torch.ones(3).eq_("a")
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        torch.ones(3, requires_grad=True).eq_(0)


def test_comparison_in_place_tangent_is_zero():
    with fwAD.dual_level():
        d = fwAD.make_dual(torch.randn(3), torch.ones(3)) * 1
        d.eq_(0.0)
        assert torch.equal(fwAD.unpack_dual(d).tangent, torch.zeros(3))


def test_comparison_in_place_under_vmap():
    out = torch.func.vmap(lambda a: a.clone().eq_(0.0))(torch.zeros(2, 3))
    assert torch.equal(out, torch.ones(2, 3))


# ----------------------------------------------------------------------------- logical / bitwise


def test_logical_in_place_writes_without_recording():
    """torch records nothing for these: the tensor keeps its history (and a leaf that
    requires grad is not refused, unlike C97); the version moves on (C26)."""
    x = torch.tensor([1.0, 0.0, 2.0], requires_grad=True)
    z = x * 1
    before = z._version
    assert z.logical_and_(torch.tensor([1.0, 1.0, 0.0])) is z
    assert node(z) == "MulBackward0"
    assert z.tolist() == [1.0, 0.0, 0.0]
    assert z._version == before + 1
    z = x * 1
    z.logical_not_()
    assert z.tolist() == [0.0, 1.0, 0.0]
    b = torch.tensor([True, False])
    b.logical_xor_(torch.tensor([True, True]))
    assert b.tolist() == [False, True]
    b.logical_or_(torch.tensor([True, False]))
    assert b.tolist() == [True, True]


def test_bitwise_in_place_and_operators():
    i = torch.tensor([1, 2, 3])
    i.bitwise_and_(2)
    assert i.tolist() == [0, 2, 2]
    i.bitwise_or_(torch.tensor([1, 1, 1]))
    assert i.tolist() == [1, 3, 3]
    i.bitwise_xor_(1)
    assert i.tolist() == [0, 2, 2]
    i.bitwise_left_shift_(2)
    assert i.tolist() == [0, 8, 8]
    i.bitwise_right_shift_(1)
    assert i.tolist() == [0, 4, 4]
    i.bitwise_not_()
    assert i.tolist() == [-1, -5, -5]
    j = torch.tensor([6, 5])
    alias = j
    j &= 3
    j |= torch.tensor([8, 8])
    j ^= 1
    j <<= 1
    j >>= 2
    assert alias is j
    assert j.tolist() == [(((6 & 3) | 8) ^ 1) << 1 >> 2, (((5 & 3) | 8) ^ 1) << 1 >> 2]


def test_bitwise_in_place_errors():
    cast = "result type {} can't be cast to the desired output type {}"
    with pytest.raises(RuntimeError, match=cast.format("Long", "Bool")):
        torch.ones(3, dtype=torch.bool).bitwise_or_(torch.ones(3, dtype=torch.int64))
    with pytest.raises(RuntimeError, match=cast.format("Float", "Long")):
        torch.ones(3, dtype=torch.int64).bitwise_or_(torch.ones(3))
    with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
        torch.ones(3).bitwise_and_(2)


# ----------------------------------------------------------------------------- in-place views


VIEWS = [
    ("t_", (), "TBackward1", lambda a: a.t()),
    ("transpose_", (0, 1), "TransposeBackward1", lambda a: a.transpose(0, 1)),
    ("swapaxes_", (0, 1), "TransposeBackward1", lambda a: a.transpose(0, 1)),
    ("swapdims_", (1, 0), "TransposeBackward1", lambda a: a.transpose(0, 1)),
    ("unsqueeze_", (1,), "UnsqueezeBackward1", lambda a: a.unsqueeze(1)),
]


@pytest.mark.parametrize("name,args,node_name,ref", VIEWS, ids=[v[0] for v in VIEWS])
def test_in_place_view(name, args, node_name, ref):
    """An in-place view bumps the version as any in-place op does (C26)."""
    base = f64(3, 4)
    leaf = base.clone().requires_grad_()
    z = leaf * 1
    version = z._version
    assert getattr(z, name)(*args) is z
    assert node(z) == node_name
    assert z._version == version + 1
    want = ref(base)
    assert z.shape == want.shape and torch.equal(z.detach(), want)
    weights = torch.arange(float(z.numel()), dtype=torch.float64).reshape(z.shape)
    (z * weights).sum().backward()
    expected = base.clone().requires_grad_()
    (ref(expected) * weights).sum().backward()
    assert torch.equal(leaf.grad, expected.grad)


def test_squeeze_in_place_nodes():
    x = f64(1, 3, 1, requires_grad=True)
    for args, name, shape in (
        ((), "SqueezeBackward3", (3,)),
        ((0,), "SqueezeBackward4", (3, 1)),
        ((1,), "SqueezeBackward4", (1, 3, 1)),
        (((0, 2),), "SqueezeBackward5", (3,)),
    ):
        z = x * 1
        z.squeeze_(*args)
        assert node(z) == name
        assert tuple(z.shape) == shape


def test_in_place_view_of_a_view_keeps_its_base():
    base = f64(2, 3, 4, requires_grad=True) * 1
    v = base[0]
    v.t_()
    assert v._base is base
    assert node(v) == "TBackward1"
    assert torch.equal(v, base[0].t())
    v.mul_(2)  # written through to the base's memory
    assert torch.equal(base[0].t(), v)
    assert type(base.grad_fn).__name__ == "CopySlices"


def test_in_place_view_errors():
    """The leaf refusal is C97's."""
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        torch.ones(2, 3, requires_grad=True).t_()
    with pytest.raises(RuntimeError, match=r"t_\(\) expects a tensor with <= 2 dimensions"):
        torch.ones(2, 3, 4).t_()
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.ones(2, 3).unsqueeze_(5)


def test_in_place_view_after_save_is_refused_in_backward():
    """C92: a value saved before the in-place view is refused in backward."""
    x = f64(1, 3, 1, requires_grad=True)
    w = f64(1, 3, 1, requires_grad=True)
    z = x * 1
    y = z * w
    z.transpose_(0, 1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_in_place_view_carries_the_tangent():
    with fwAD.dual_level():
        tangent = torch.arange(6.0).reshape(2, 3)
        d = fwAD.make_dual(torch.zeros(2, 3), tangent) * 1
        d.t_()
        assert torch.equal(fwAD.unpack_dual(d).tangent, tangent.t())


# ----------------------------------------------------------------------------- aliases


ALIASES = [
    ("absolute", "abs", "AbsBackward0"),
    ("arccos", "acos", "AcosBackward0"),
    ("arcsin", "asin", "AsinBackward0"),
    ("arctan", "atan", "AtanBackward0"),
    ("arcsinh", "asinh", "AsinhBackward0"),
    ("arctanh", "atanh", "AtanhBackward0"),
]


@pytest.mark.parametrize("alias,target,node_name", ALIASES, ids=[a[0] for a in ALIASES])
def test_alias_is_its_target(alias, target, node_name):
    x = (torch.rand(5, dtype=torch.float64) * 0.8 + 0.1).requires_grad_()
    out = getattr(x, alias)()
    assert node(out) == node_name
    assert torch.equal(out, getattr(x, target)())
    assert torch.equal(getattr(torch, alias)(x), out)
    z = x * 1
    getattr(z, alias + "_")()
    assert node(z) == node_name
    assert torch.equal(z, out)


def test_arccosh_alias():
    x = torch.tensor([1.5, 2.0], dtype=torch.float64)
    assert torch.equal(x.arccosh(), x.acosh())
    assert torch.equal(x.clone().arccosh_(), x.acosh())


def test_in_place_aliases_of_binary_ops():
    base = torch.tensor([4.0, -6.0])
    assert torch.equal(base.clone().multiply_(2), base * 2)
    assert torch.equal(base.clone().divide_(4, rounding_mode="floor"), (base / 4).floor())
    assert torch.equal(base.clone().true_divide_(4), base / 4)
    assert torch.equal(base.clone().subtract_(1, alpha=2), base - 2)
    assert torch.equal(base.clone().negative_(), -base)
    assert torch.equal(base.clone().fix_(), base.trunc())
    assert torch.equal(base.clone().clip_(-1, 1), base.clamp(-1, 1))
    y = torch.tensor([1.0, 1.0])
    assert torch.equal(base.clone().arctan2_(y), base.atan2(y))
    z = base.clone().requires_grad_() * 1
    z.divide_(2, rounding_mode="floor")
    assert node(z) == "DivBackward2"


def test_module_in_place_functions():
    x = torch.tensor([0.5, 1.0])
    y = x.clone()
    assert torch.exp_(y) is y
    assert torch.equal(y, x.exp())
    y = x.clone()
    torch.clamp_min_(y, 0.75)
    assert y.tolist() == [0.75, 1.0]
    with pytest.raises(TypeError, match=r"exp_\(\): argument 'input'"):
        torch.exp_(1.0)


def test_constants():
    import math

    assert torch.pi == math.pi and torch.e == math.e
    assert torch.inf == math.inf and math.isnan(torch.nan)
    assert torch.newaxis is None


# ----------------------------------------------------------------------------- new_* and queries


def test_new_constructors():
    x = torch.randn(2, requires_grad=True, dtype=torch.float64)
    for make in (x.new_zeros, x.new_ones, x.new_empty):
        for size in ((2, 3), ([2, 3],), (torch.Size([2, 3]),)):
            t = make(*size)
            assert t.shape == (2, 3) and t.dtype == torch.float64 and not t.requires_grad
    assert x.new_zeros(2).sum().item() == 0 and x.new_ones(2).sum().item() == 2
    assert x.new_zeros(()).shape == ()
    assert x.new_ones(2, dtype=torch.int64).dtype == torch.int64
    assert x.new_empty(2, requires_grad=True).requires_grad
    full = x.new_full((2,), 7)
    assert full.dtype == torch.float64 and full.tolist() == [7.0, 7.0]
    assert x.new_full((1,), 7.5, dtype=torch.int64).tolist() == [7]
    i = torch.ones(2, dtype=torch.int64)
    assert i.new_tensor([1.5]).dtype == torch.int64
    assert x.new_tensor([1, 2]).dtype == torch.float64


def test_new_tensor_from_a_tensor_warns_and_detaches():
    x = torch.randn(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = x.new_tensor(x)
    assert any("sourceTensor.detach().clone()" in str(w.message) for w in caught)
    assert not y.requires_grad and y.grad_fn is None
    assert torch.equal(y, x.detach())


def test_type_as():
    x = torch.randn(2, requires_grad=True)
    assert x.type_as(x) is x
    y = x.type_as(torch.zeros(1, dtype=torch.float64))
    assert y.dtype == torch.float64 and node(y) == "ToCopyBackward0"


def test_flag_queries():
    x = torch.randn(3, 4)
    assert x.nbytes == 48 and x[:, :2].nbytes == 24
    assert x.is_signed() and not torch.ones(2, dtype=torch.uint8).is_signed()
    assert not torch.ones(2, dtype=torch.bool).is_signed()
    assert torch.is_signed(x)
    assert not x.is_conj() and not x.is_neg()
    assert x.resolve_conj() is x and torch.resolve_neg(x) is x
    assert x.is_same_size(torch.zeros(3, 4)) and not x.is_same_size(torch.zeros(4, 3))
    assert x.get_device() == -1
    assert x.ndimension() == 2
    assert x.byte().dtype == torch.uint8
    assert x.positive() is x


def test_is_nonzero():
    assert torch.tensor([2.0]).is_nonzero()
    assert not torch.tensor(0).is_nonzero()
    with pytest.raises(RuntimeError, match="with no values is ambiguous"):
        torch.ones(0).is_nonzero()
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        torch.ones(2).is_nonzero()


def test_positive_of_bool_is_refused():
    with pytest.raises(NotImplementedError, match="on a bool tensor is not supported"):
        torch.ones(2, dtype=torch.bool).positive()


# ----------------------------------------------------------------------------- composites


def test_numpy_splits():
    x = torch.arange(24.0).reshape(2, 3, 4).requires_grad_()
    parts = x.hsplit(3)
    assert [tuple(p.shape) for p in parts] == [(2, 1, 4)] * 3
    parts = torch.vsplit(x, [1])
    assert [tuple(p.shape) for p in parts] == [(1, 3, 4), (1, 3, 4)]
    assert node(torch.dsplit(x, [1, 3])[1]) == "SliceBackward0"
    assert torch.equal(torch.cat(x.dsplit(2), 2), x)
    assert [tuple(p.shape) for p in torch.hsplit(torch.arange(6), 2)] == [(3,), (3,)]


def test_numpy_split_errors():
    with pytest.raises(RuntimeError, match=r"torch.vsplit requires a tensor with at least 2"):
        torch.ones(3).vsplit(1)
    with pytest.raises(RuntimeError, match=r"torch.hsplit requires a tensor with at least 1"):
        torch.ones(()).hsplit(1)
    with pytest.raises(RuntimeError, match="not divisible by the split_size 3!"):
        torch.ones(3, 4).hsplit(3)


def test_split_with_sizes():
    x = torch.arange(8.0, requires_grad=True)
    parts = x.split_with_sizes([3, 5])
    assert node(parts[0]) == "SplitWithSizesBackward0"
    assert [p.numel() for p in torch.split_with_sizes(x, (2, 6))] == [2, 6]


def test_atleast():
    s = torch.tensor(1.0, requires_grad=True)
    assert tuple(torch.atleast_1d(s).shape) == (1,)
    assert tuple(torch.atleast_2d(torch.ones(3)).shape) == (1, 3)
    assert tuple(torch.atleast_3d(torch.ones(3)).shape) == (1, 3, 1)
    assert tuple(torch.atleast_3d(torch.ones(2, 3)).shape) == (2, 3, 1)
    assert node(torch.atleast_2d(s)) == "ViewBackward0"
    v = torch.ones(2)
    assert torch.atleast_1d(v) is v
    pair = torch.atleast_1d([torch.ones(()), torch.ones(2)])
    assert isinstance(pair, tuple) and [tuple(p.shape) for p in pair] == [(1,), (2,)]
    with pytest.raises(TypeError, match=r"atleast_1d\(\) received an invalid combination"):
        torch.atleast_1d(1)


def test_broadcast_shapes():
    assert torch.broadcast_shapes((2, 1), (3,)) == torch.Size([2, 3])
    assert torch.broadcast_shapes(2, (3, 1)) == (3, 2)
    assert torch.broadcast_shapes() == ()
    assert isinstance(torch.broadcast_shapes((1,)), torch.Size)
    with pytest.raises(RuntimeError, match="Attempting to broadcast a dimension of length 3"):
        torch.broadcast_shapes((2,), (3,))


def test_ravel():
    x = torch.arange(6.0).reshape(2, 3).requires_grad_()
    assert node(x.ravel()) == "ViewBackward0"
    r = torch.ravel(x.t())
    assert r.is_contiguous() and r.tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]


def test_sum_to_size():
    x = f64(2, 3, 4, requires_grad=True)
    for size, name in (((3, 1), "ViewBackward0"), ((1, 4), "ViewBackward0"),
                       ((4,), "ViewBackward0"), ((1, 1, 1), "SumBackward1")):
        y = x.sum_to_size(*size)
        assert tuple(y.shape) == size and node(y) == name
    assert torch.allclose(x.sum_to_size(3, 1), x.sum((0, 2)).reshape(3, 1))
    assert torch.allclose(x.sum_to_size((1, 4)), x.sum((0, 1)).reshape(1, 4))
    assert x.sum_to_size(2, 3, 4) is x
    assert gradcheck(lambda t: t.sum_to_size(3, 1), (x,))
    with pytest.raises(RuntimeError, match=r"size \{\[5\]\} is not expandable to size"):
        x.sum_to_size(5)
    with pytest.raises(RuntimeError, match="is not expandable"):
        x.sum_to_size(1, 2, 3, 4)


def test_diff():
    a = f64(10, requires_grad=True)
    d2 = torch.diff(a, n=2)
    assert node(d2) == "SubBackward0"
    want = (a[2:] - a[1:-1]) - (a[1:-1] - a[:-2])
    assert torch.allclose(d2, want)
    pre, app = f64(2), f64(1)
    joined = torch.cat([pre, a, app])
    assert torch.allclose(a.diff(prepend=pre, append=app), joined[1:] - joined[:-1])
    m = f64(3, 4)
    assert torch.allclose(m.diff(dim=0), m[1:] - m[:-1])
    assert torch.diff(a, n=20).shape == (0,)
    assert torch.equal(torch.diff(torch.tensor([True, False, True])), torch.tensor([True, True]))
    assert gradcheck(lambda t: torch.diff(t, n=2), (a,))
    assert gradgradcheck(lambda t: torch.diff(t), (a,))


def test_diff_errors():
    with pytest.raises(RuntimeError, match="order must be non-negative but got -1"):
        torch.diff(torch.ones(3), n=-1)
    with pytest.raises(RuntimeError, match="at least one-dimensional"):
        torch.diff(torch.tensor(1.0))
    with pytest.raises(RuntimeError, match="prepend or append to be the same dimension"):
        torch.diff(torch.ones(3), prepend=torch.ones(2, 2))


def test_float_power():
    x = torch.tensor([2, 3])
    out = torch.float_power(x, 2)
    assert out.dtype == torch.float64 and out.tolist() == [4.0, 9.0]
    assert torch.float_power(2, torch.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]
    assert torch.float_power(torch.tensor([1j]), 2).dtype == torch.complex128
    f = torch.randn(3, requires_grad=True)
    y = f.float_power(2)
    assert node(y) == "PowBackward0" and y.dtype == torch.float64
    assert node(f.float_power(torch.ones(3))) == "PowBackward1"
    z = torch.tensor([2.0, 3.0], dtype=torch.float64)
    z.float_power_(torch.tensor([2.0, 1.0]))
    assert z.tolist() == [4.0, 3.0]
    with pytest.raises(RuntimeError, match="has dtype Float but the operation's result requires"):
        torch.ones(2).float_power_(2)


def test_pinverse_and_ger():
    a = f64(4, 3, requires_grad=True)
    p = a.pinverse()
    assert node(p) == "LinalgPinvBackward0"
    assert torch.allclose(p, torch.linalg.pinv(a))
    assert torch.allclose(torch.pinverse(a), p)
    u, v = f64(3), f64(4)
    assert torch.equal(torch.ger(u, v), torch.outer(u, v))
    assert torch.equal(u.ger(v), u.outer(v))
    assert torch.equal(u.broadcast_to((2, 3)), torch.broadcast_to(u, (2, 3)))


# ----------------------------------------------------------------------------- linalg


def test_linalg_matrix_power():
    a = f64(3, 3, requires_grad=True)
    assert torch.allclose(torch.linalg.matrix_power(a, 3), a @ a @ a)
    inv = torch.linalg.inv(a)
    assert node(torch.linalg.matrix_power(a, -1)) == node(inv)
    assert torch.allclose(torch.linalg.matrix_power(a, -2), inv @ inv)
    assert gradcheck(lambda m: torch.linalg.matrix_power(m, -2), (a,))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
        torch.linalg.matrix_power(torch.ones(2, 3), 2)


def test_linalg_diagonal():
    a = f64(2, 3, 4)
    assert torch.equal(torch.linalg.diagonal(a, offset=1), a.diagonal(1, -2, -1))


def test_linalg_matrix_rank():
    u = f64(5, 2)
    low = u @ f64(2, 4)
    assert torch.linalg.matrix_rank(low).item() == 2
    assert torch.linalg.matrix_rank(f64(4, 4)).item() == 4
    assert torch.linalg.matrix_rank(torch.ones(3, 3), hermitian=True).item() == 1
    assert torch.linalg.matrix_rank(torch.ones(0, 3)).item() == 0
    assert torch.linalg.matrix_rank(low, atol=1e30).item() == 0
    batch = torch.stack([low[:4], f64(4, 4)])
    assert torch.linalg.matrix_rank(batch).tolist() == [2, 4]


def test_linalg_cond():
    a = f64(4, 4, requires_grad=True)
    s = torch.linalg.svdvals(a)
    assert torch.allclose(torch.linalg.cond(a), s[0] / s[-1])
    assert torch.allclose(torch.linalg.cond(a, -2), s[-1] / s[0])
    fro = torch.linalg.matrix_norm(a) * torch.linalg.matrix_norm(torch.linalg.inv(a))
    assert torch.allclose(torch.linalg.cond(a, "fro"), fro)
    assert gradcheck(torch.linalg.cond, (a,))
    with pytest.raises(RuntimeError, match=r"linalg.cond\(ord=fro\): A must be batches"):
        torch.linalg.cond(f64(4, 6), "fro")


def test_linalg_vander():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    v = torch.linalg.vander(x)
    assert v.tolist() == [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    assert torch.linalg.vander(x, N=4).shape == (3, 4)
    assert torch.linalg.vander(torch.tensor([1, 2])).dtype == torch.int64
    assert gradcheck(lambda t: torch.linalg.vander(t, N=4), (x,))
    with pytest.raises(RuntimeError, match="N must be greater than 1."):
        torch.linalg.vander(x, N=0)


def test_linalg_tensorinv_and_tensorsolve():
    a = f64(4, 6)
    sq = f64(6, 6) + 3 * torch.eye(6, dtype=torch.float64)
    t = sq.reshape(6, 2, 3)
    ti = torch.linalg.tensorinv(t, ind=1)
    assert ti.shape == (2, 3, 6)
    assert torch.allclose(torch.tensordot(t, ti, 2), torch.eye(6, dtype=torch.float64))
    b = f64(6)
    x = torch.linalg.tensorsolve(t, b)
    assert x.shape == (2, 3)
    assert torch.allclose(torch.tensordot(t, x, 2), b)
    m, b2 = sq.reshape(6, 2, 3), f64(2, 3)
    moved = torch.linalg.tensorsolve(m, b2, dims=(0,))
    assert moved.shape == (6,)
    assert torch.allclose(torch.tensordot(m.permute(1, 2, 0), moved, 1), b2)
    with pytest.raises(RuntimeError, match="strictly positive integer for 'ind'"):
        torch.linalg.tensorinv(a, ind=0)
    with pytest.raises(RuntimeError, match=r"prod\(self.shape\[ind:\]\) == prod"):
        torch.linalg.tensorinv(a, ind=1)
    with pytest.raises(RuntimeError, match=r"prod\(self.shape\[other.ndim:\]\)"):
        torch.linalg.tensorsolve(f64(2, 3, 5), f64(2, 3))
