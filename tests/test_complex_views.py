"""issue 11: complex views (`real`, `imag`, `view_as_real`, `view_as_complex`) share
memory and the version counter with their base, in both directions, and in-place
writes through them reach the base's autograd history as torch's views do; their
errors are torch's. Values are checked against numpy; gradients against closed forms
or gradcheck (C59, C211 for complex gradients in general)."""

import ferrograd as torch
import numpy as np
import pytest
from conftest import IS_REAL_TORCH
from ferrograd.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(11)


def _complex(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _t(a, **kwargs):
    return torch.tensor(np.asarray(a), **kwargs)


# ----------------------------------------------------------------------------- aliasing


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_real_imag_are_views_of_the_components(dtype):
    a = _complex(3, 4).astype(dtype)
    z = _t(a)
    r, i = z.real, z.imag
    assert r.dtype == i.dtype == (torch.float32 if dtype == np.complex64 else torch.float64)
    np.testing.assert_array_equal(r.numpy(), a.real)
    np.testing.assert_array_equal(i.numpy(), a.imag)
    assert r.stride() == (8, 2) and i.stride() == (8, 2)
    assert (r.storage_offset(), i.storage_offset()) == (0, 1)
    assert r._base is z and i._base is z
    assert torch.real(z)._base is z and torch.imag(z)._base is z


def test_writes_through_real_and_imag_reach_the_base_and_back():
    a = _complex(2, 3)
    z = _t(a)
    r, i = z.real, z.imag
    r.mul_(2)
    i.add_(1)
    np.testing.assert_allclose(z.numpy(), 2 * a.real + 1j * (a.imag + 1))
    z.mul_(1j)  # the base written: both views see it
    want = (2 * a.real + 1j * (a.imag + 1)) * 1j
    np.testing.assert_allclose(r.numpy(), want.real)
    np.testing.assert_allclose(i.numpy(), want.imag)


def test_view_as_real_and_back_share_memory():
    a = _complex(4)
    z = _t(a)
    v = torch.view_as_real(z)
    assert v.shape == (4, 2) and v.stride() == (2, 1) and v._base is z
    np.testing.assert_array_equal(v.numpy(), np.stack([a.real, a.imag], -1))
    v[:, 1].zero_()
    np.testing.assert_array_equal(z.numpy(), a.real + 0j)
    c = torch.view_as_complex(v)
    assert c._base is z and c.dtype == torch.complex128
    c.add_(1j)
    np.testing.assert_array_equal(z.numpy(), a.real + 1j)


def test_view_as_complex_of_float_storage():
    a = RNG.standard_normal((3, 2))
    x = _t(a)
    c = torch.view_as_complex(x)
    assert c._base is x and c.shape == (3,) and c.stride() == (1,)
    np.testing.assert_array_equal(c.numpy(), a[:, 0] + 1j * a[:, 1])
    c.mul_(1j)  # (p + iq) i = -q + ip
    np.testing.assert_array_equal(x.numpy(), np.stack([-a[:, 1], a[:, 0]], -1))
    # The real part of a complex view of float storage reads that storage again.
    np.testing.assert_array_equal(c.real.numpy(), x.numpy()[:, 0])


def test_strided_and_offset_views():
    a = _complex(4, 3)
    z = _t(a)[1:, ::2]
    v = torch.view_as_real(z)
    assert v.stride() == (6, 4, 1) and v.storage_offset() == 6
    assert z.imag.storage_offset() == 7
    np.testing.assert_array_equal(v.numpy(), np.stack([a[1:, ::2].real, a[1:, ::2].imag], -1))
    np.testing.assert_array_equal(z.t().real.numpy(), a[1:, ::2].T.real)
    e = torch.zeros(0, 3, dtype=torch.complex128)
    assert torch.view_as_real(e).shape == (0, 3, 2)
    s = _t(np.complex128(1 + 2j))
    assert torch.view_as_real(s).shape == (2,) and s.imag.item() == 2.0


def test_version_counter_is_shared():
    z = _t(_complex(3))
    r = z.real
    v0 = z._version
    r.add_(1)
    assert z._version == r._version == v0 + 1
    z.imag.mul_(2)
    assert r._version == z._version == v0 + 2


def test_real_of_a_real_tensor_is_itself():
    x = _t(RNG.standard_normal(3))
    assert x.real is x and torch.real(x) is x


def test_setting_real_and_imag():
    z = _t(_complex(3))
    z.real = _t(np.arange(3.0))
    z.imag = 5.0
    np.testing.assert_array_equal(z.numpy(), np.arange(3.0) + 5j)


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_imag_and_view_as_real_of_real_tensors_raise(dtype):
    x = torch.zeros(2, dtype=dtype)
    with pytest.raises(
        TypeError, match=r"^imag is not implemented for tensors with non-complex dtypes\.$"
    ):
        _ = x.imag
    with pytest.raises(TypeError, match=r"^imag is not implemented for tensors with non-complex"):
        torch.imag(x)
    with pytest.raises(TypeError, match=r"^view_as_real is only supported for complex tensors$"):
        torch.view_as_real(x)


@pytest.mark.parametrize(
    "make, cls, message",
    [
        (lambda: torch.tensor(1.0), RuntimeError, "Input tensor must have one or more dimensions"),
        (lambda: torch.zeros(3, 3), RuntimeError, "Tensor must have a last dimension of size 2"),
        (
            lambda: torch.zeros(2, 3).t(),
            RuntimeError,
            "Tensor must have a last dimension with stride 1",
        ),
        (
            lambda: torch.zeros(3, 3)[:, :2],
            RuntimeError,
            "Tensor must have a stride divisible by 2 for all but last dimension",
        ),
        (
            lambda: torch.zeros(7)[1:].view(3, 2),
            RuntimeError,
            "Tensor must have a storage_offset divisible by 2",
        ),
        (
            lambda: torch.zeros(3, 2, dtype=torch.int64),
            NotImplementedError,
            "view_as_complex is only supported for half, float and double tensors, but got a "
            "tensor of scalar type: Long",
        ),
        (
            lambda: torch.zeros(3, 2, dtype=torch.complex64),
            TypeError,
            "view_as_complex is not supported for complex tensors",
        ),
    ],
)
def test_view_as_complex_errors(make, cls, message):
    with pytest.raises(cls) as info:
        torch.view_as_complex(make())
    assert str(info.value) == message


def test_complex_and_polar_errors():
    f32, f64 = torch.zeros(2), torch.zeros(2, dtype=torch.float64)
    for fn in (torch.complex, torch.polar):
        with pytest.raises(RuntimeError) as info:
            fn(f32, f64)
        assert str(info.value) == (
            "Expected object of scalar type Float but got scalar type Double for second argument"
        )
        ints = torch.zeros(2, dtype=torch.int64)
        with pytest.raises(NotImplementedError) as info:
            fn(ints, ints)
        assert str(info.value) == (
            "Expected both inputs to be Half, Float or Double tensors but got Long and Long"
        )
    with pytest.raises(RuntimeError, match="must match the size"):
        torch.complex(torch.zeros(2), torch.zeros(3))


@pytest.mark.parametrize("name", ["complex", "polar"])
def test_complex_and_polar_of_half(name):
    """torch makes a ComplexHalf (complex32) result from two float16 tensors; ferrograd has
    no complex32 dtype and refuses with NotImplementedError, after torch's own checks."""
    fn = getattr(torch, name)
    h = torch.ones(2, dtype=torch.float16)
    with pytest.raises(RuntimeError) as info:
        fn(h, torch.ones(2))
    assert str(info.value) == (
        "Expected object of scalar type Half but got scalar type Float for second argument"
    )
    b = h.to(torch.bfloat16)
    with pytest.raises(NotImplementedError) as info:
        fn(b, b)
    assert str(info.value) == (
        "Expected both inputs to be Half, Float or Double tensors but got BFloat16 and BFloat16"
    )
    if IS_REAL_TORCH:
        assert fn(h, h).dtype == torch.complex32
        return
    for args in ((h, h), (h.clone().requires_grad_(), h)):
        with pytest.raises(NotImplementedError) as info:
            fn(*args)
        assert str(info.value) == f"{name}: ComplexHalf (complex32) results are not supported"


# ----------------------------------------------------------------------------- autograd


def test_view_grad_fn_names():
    x = _t(_complex(3), requires_grad=True)
    y = x * 1
    assert y.real.grad_fn.name() == "SelectBackward0"
    assert y.real.grad_fn.next_functions[0][0].name() == "ViewAsRealBackward0"
    assert torch.view_as_real(y).grad_fn.name() == "ViewAsRealBackward0"
    a = _t(RNG.standard_normal((3, 2)), requires_grad=True) * 1
    assert torch.view_as_complex(a).grad_fn.name() == "ViewAsComplexBackward0"


def test_inplace_on_real_view_flows_to_the_base():
    a = _complex(4)
    x = _t(a, requires_grad=True)
    y = x * 1
    r = y.real
    r.mul_(2)
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    assert r.grad_fn.name() == "AsStridedBackward0"
    assert r.grad_fn.next_functions[0][0].name() == "ViewAsRealBackward0"
    (y.abs() ** 2).sum().backward()
    # |y|^2 = (2 Re x)^2 + (Im x)^2: d/dRe = 8 Re x, d/dIm = 2 Im x.
    np.testing.assert_allclose(x.grad.numpy(), 8 * a.real + 2j * a.imag)


def test_base_inplace_regenerates_the_views_grad_fn():
    x = _t(_complex(3), requires_grad=True)
    y = x * 1
    i = y.imag
    y.add_(1)
    assert i.grad_fn.name() == "AsStridedBackward0"
    assert i.grad_fn.next_functions[0][0].name() == "ViewAsRealBackward0"
    i.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 1j))


def test_inplace_through_view_as_complex_of_a_real_base():
    a = RNG.standard_normal((3, 2))
    x = _t(a, requires_grad=True)
    y = x * 1
    c = torch.view_as_complex(y)
    c.mul_(1j)  # y now holds (-q, p) per row
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    w = _t(RNG.standard_normal((3, 2)))
    (y * w).sum().backward()
    # d/dp of -q w0 + p w1 is w1; d/dq is -w0.
    np.testing.assert_allclose(x.grad.numpy(), np.stack([w.numpy()[:, 1], -w.numpy()[:, 0]], -1))


def _imag_tripled(x):
    y = x * 1
    y.imag.mul_(3)
    return y


def _real_plus_view(x):
    y = x.clone()
    torch.view_as_real(y)[..., 0].add_(torch.view_as_real(x)[..., 1])
    return y


@pytest.mark.parametrize("fn", [_imag_tripled, _real_plus_view])
def test_inplace_through_views_gradcheck(fn):
    x = _t(_complex(2, 3), requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_view_as_real_and_complex_gradients():
    a = _complex(3)
    x = _t(a, requires_grad=True)
    torch.view_as_real(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 1 + 1j))
    p = RNG.standard_normal((3, 2))
    y = _t(p, requires_grad=True)
    (torch.view_as_complex(y).abs() ** 2).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), 2 * p)


def test_forward_ad_through_complex_views():
    import ferrograd.autograd.forward_ad as fwAD

    a, t = _complex(3), _complex(3)
    with fwAD.dual_level():
        d = fwAD.make_dual(_t(a), _t(t))
        np.testing.assert_array_equal(fwAD.unpack_dual(d.real).tangent.numpy(), t.real)
        np.testing.assert_array_equal(fwAD.unpack_dual(d.imag).tangent.numpy(), t.imag)
        v = fwAD.unpack_dual(torch.view_as_real(d)).tangent
        np.testing.assert_array_equal(v.numpy(), np.stack([t.real, t.imag], -1))


def test_vmap_over_real_and_view_as_complex():
    a = _complex(4, 3)
    got = torch.func.vmap(lambda z: z.imag * 2)(_t(a))
    np.testing.assert_allclose(got.numpy(), 2 * a.imag)
    p = RNG.standard_normal((4, 3, 2))
    got = torch.func.vmap(torch.view_as_complex)(_t(p))
    np.testing.assert_array_equal(got.numpy(), p[..., 0] + 1j * p[..., 1])


# ----------------------------------------------------------------------------- ops


def test_angle_of_real_tensors():
    x = _t(np.array([np.nan, -1.0, -0.0, 0.0, 2.0, -np.inf]), requires_grad=True)
    out = torch.angle(x)
    np.testing.assert_array_equal(out.detach().numpy(), [np.nan, np.pi, 0, 0, 0, np.pi])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(6))
    assert torch.angle(torch.tensor([1, -1])).dtype == torch.float32


def test_angle_gradient_at_zero_is_zero():
    x = _t(np.array([0j, 1 + 1j]), requires_grad=True)
    torch.angle(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0, -0.5 + 0.5j])


def test_conj_physical():
    x = _t(RNG.standard_normal(3))
    assert torch.conj_physical(x) is x and x.conj_physical_() is x
    a = _complex(3)
    z = _t(a)
    np.testing.assert_array_equal(z.conj_physical().numpy(), np.conj(a))
    assert z.conj_physical_() is z
    np.testing.assert_array_equal(z.numpy(), np.conj(a))


@pytest.mark.parametrize("name", ["abs", "sgn", "angle"])
def test_complex_double_backward(name):
    x = _t(_complex(3) + 0.5, requires_grad=True)
    fn = getattr(torch, name)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("dtype, rtol", [(np.complex128, 1e-13), (np.complex64, 2e-6)])
def test_complex_expm1_log1p_keep_accuracy_near_zero(dtype, rtol):
    z = np.array([1e-9 + 1e-9j, -3e-7 + 2e-8j, 1e-5j], dtype)
    w = z.astype(np.complex128)
    # Taylor series to the third order: the rest is below the tolerance at these sizes.
    expm1 = w + w**2 / 2 + w**3 / 6
    log1p = w - w**2 / 2 + w**3 / 3
    np.testing.assert_allclose(torch.expm1(_t(z)).numpy(), expm1, rtol=rtol)
    np.testing.assert_allclose(torch.log1p(_t(z)).numpy(), log1p, rtol=rtol)


def test_complex_logaddexp():
    a, b = _complex(3, 4), _complex(4)
    got = torch.logaddexp(_t(a), _t(b)).numpy()
    # torch's formula (the operand with the larger real part taken out) may leave the
    # principal branch by whole turns of the imaginary part: compare exp(result).
    total = np.exp(a) + np.exp(b)
    np.testing.assert_allclose(np.exp(got), total, rtol=1e-12)
    np.testing.assert_allclose(got.real, np.log(np.abs(total)), rtol=1e-12)
    x, y = _t(a[:2], requires_grad=True), _t(b, requires_grad=True)
    assert gradcheck(torch.logaddexp, (x, y))
    assert gradgradcheck(torch.logaddexp, (x, y))
    nan = torch.logaddexp(_t(np.array([complex(np.nan, 0)])), _t(np.array([1 + 0j]))).numpy()
    assert np.isnan(nan.real).all() and np.isnan(nan.imag).all()
    # torch has no complex logaddexp2.
    with pytest.raises(NotImplementedError) as info:
        torch.logaddexp2(_t(a), _t(b))
    assert str(info.value) == "\"logaddexp2_cpu\" not implemented for 'ComplexDouble'"
