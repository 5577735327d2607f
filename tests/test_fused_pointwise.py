"""Elementwise kernels of issue 8's speed pass: lerp / addcmul / addcdiv as one fused
kernel each with torch's CPU formulas (FMA included) bit for bit, the vector atan2 (within
4 ulp, libm's special values exactly), abs clearing the sign bit (abs(-0.0) = +0.0), the
parallel broadcast / strided elementwise paths (column broadcast, outer, a transposed or
strided operand) and the fast casts. Each is checked against numpy, small and above the
threads' grain (2^15 elements), contiguous and not."""

from fractions import Fraction

import numpy as np
import pytest

import ferrograd as torch

BIG = (1 << 16) + 5  # above the grain: split over the threads
SIZES = [7, BIG]


def floats(n, dtype, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * scale).astype(dtype)


def tensor(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def same_bits(ours, expected):
    """Equal bit for bit (NaNs of any payload count as equal)."""
    ours = ours.numpy() if hasattr(ours, "numpy") else ours
    expected = np.asarray(expected, dtype=ours.dtype)
    nan = np.isnan(ours) & np.isnan(expected)
    np.testing.assert_array_equal(np.where(nan, 0, bits(ours)), np.where(nan, 0, bits(expected)))


def fma32(a, b, c):
    """float32 a * b + c rounded once (the float64 product is exact; the sum's double
    rounding never matters for the values these tests draw)."""
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(
        np.float32
    )


def fma64(a, b, c):
    """float64 a * b + c rounded once, exactly (fractions)."""
    out = np.empty(np.broadcast(a, b, c).shape)
    for i, (x, y, z) in enumerate(np.broadcast(a, b, c)):
        if not all(np.isfinite([x, y, z])):
            out.flat[i] = x * y + z
        else:
            out.flat[i] = float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
    return out


def lerp_formula(start, end, weight, fma):
    """torch's lerp (ATen/native/Lerp.h as compiled: contracted to an FMA)."""
    step = end - start
    small = np.abs(weight) < 0.5
    one = np.asarray(1, dtype=start.dtype)
    return np.where(small, fma(weight, step, start), fma(weight - one, step, end))


# ------------------------------------------------------------------------------ lerp


@pytest.mark.parametrize("weight", [0.3, 0.7, -0.2, 0.5, 1.5, -0.5])
@pytest.mark.parametrize("n", SIZES)
def test_lerp_scalar_weight_is_torchs_fma_formula(weight, n):
    s, e = floats(n, np.float32, 1), floats(n, np.float32, 2)
    w = np.float32(weight)
    out = torch.lerp(tensor(s), tensor(e), weight)
    same_bits(out, lerp_formula(s, e, np.full(n, w), fma32))
    assert torch.lerp(tensor(s), tensor(e), weight).dtype == torch.float32


@pytest.mark.parametrize("n", SIZES)
def test_lerp_tensor_weight_is_torchs_fma_formula(n):
    s, e = floats(n, np.float32, 1), floats(n, np.float32, 2)
    w = floats(n, np.float32, 3, scale=0.7)
    same_bits(torch.lerp(tensor(s), tensor(e), tensor(w)), lerp_formula(s, e, w, fma32))


def test_lerp_float64_rounds_once():
    s, e, w = floats(300, np.float64, 1), floats(300, np.float64, 2), floats(300, np.float64, 3)
    same_bits(torch.lerp(tensor(s), tensor(e), tensor(w)), lerp_formula(s, e, w, fma64))
    same_bits(torch.lerp(tensor(s), tensor(e), 0.7), lerp_formula(s, e, np.full(300, 0.7), fma64))


def test_lerp_special_values():
    s = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 1e38, -1e38], np.float32)
    e = np.array([-0.0, 0.0, np.inf, np.inf, 1.0, np.nan, -1e38, 1e38], np.float32)
    for w in (0.0, 0.25, 0.5, 1.0, -3.0, np.inf, np.nan):
        with np.errstate(all="ignore"):
            expected = lerp_formula(s, e, np.full(len(s), np.float32(w)), fma32)
        same_bits(torch.lerp(tensor(s), tensor(e), float(w)), expected)


def test_lerp_broadcast_and_strided_operands():
    s = floats(64 * 48, np.float32, 1).reshape(64, 48)
    e = floats(48, np.float32, 2)
    w = floats(64, np.float32, 3).reshape(64, 1) * np.float32(0.4)
    expected = lerp_formula(s, np.broadcast_to(e, s.shape), np.broadcast_to(w, s.shape), fma32)
    same_bits(torch.lerp(tensor(s), tensor(e), tensor(w)), expected)
    # A transposed start and a strided end, above the grain.
    big = floats(512 * 256, np.float32, 4).reshape(512, 256)
    end = floats(256 * 1024, np.float32, 5).reshape(256, 1024)
    out = torch.lerp(tensor(big).t(), tensor(end)[:, ::2], 0.8)
    same_bits(out, lerp_formula(big.T, end[:, ::2], np.full((256, 512), np.float32(0.8)), fma32))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_lerp_half_types_compute_in_float32(dtype):
    d = getattr(torch, dtype)
    s = tensor(floats(1000, np.float32, 1)).to(d)
    e = tensor(floats(1000, np.float32, 2)).to(d)
    w = tensor(floats(1000, np.float32, 3, scale=0.6)).to(d)
    for weight, wf in ((0.3, np.full(1000, np.float32(0.3))), (w, w.float().numpy())):
        out = torch.lerp(s, e, weight)
        assert out.dtype == d
        wide = lerp_formula(s.float().numpy(), e.float().numpy(), wf, fma32)
        same_bits(out.float(), tensor(wide).to(d).float().numpy())


def test_lerp_complex():
    s = np.array([1 + 2j, -3 + 0.5j, 0j], np.complex128)
    e = np.array([4 - 1j, 2 + 2j, 1j], np.complex128)
    for w in (0.25, 0.75, 0.1 + 0.6j):
        small = abs(w) < 0.5
        expected = s + w * (e - s) if small else e - (e - s) * (1 - w)
        np.testing.assert_allclose(torch.lerp(tensor(s), tensor(e), w).numpy(), expected)


def test_lerp_grad_fn_and_gradients():
    s = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    e = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    w = torch.rand(5, 3, dtype=torch.float64, requires_grad=True)
    assert torch.lerp(s, e, 0.7).grad_fn.name() == "LerpBackward0"
    assert torch.lerp(s, e, w).grad_fn.name() == "LerpBackward1"
    assert torch.autograd.gradcheck(lambda a, b, c: torch.lerp(a, b, c), (s, e, w))
    assert torch.autograd.gradcheck(lambda a, b: torch.lerp(a, b, 0.7), (s, e))


def test_lerp_in_place():
    s, e = floats(BIG, np.float32, 1), floats(BIG, np.float32, 2)
    t = tensor(s.copy())
    t.lerp_(tensor(e), 0.6)
    same_bits(t, lerp_formula(s, e, np.full(BIG, np.float32(0.6)), fma32))


# --------------------------------------------------------------------- addcmul / addcdiv


@pytest.mark.parametrize("value", [0.5, 1, -3.25])
@pytest.mark.parametrize("n", SIZES)
def test_addcmul_is_fma_of_value_times_t1(value, n):
    a, b, c = floats(n, np.float32, 1), floats(n, np.float32, 2), floats(n, np.float32, 3)
    out = torch.addcmul(tensor(a), tensor(b), tensor(c), value=value)
    same_bits(out, fma32(np.float32(value) * b, c, a))


@pytest.mark.parametrize("n", SIZES)
def test_addcdiv_multiplies_before_dividing(n):
    a, b, c = floats(n, np.float32, 1), floats(n, np.float32, 2), floats(n, np.float32, 3)
    out = torch.addcdiv(tensor(a), tensor(b), tensor(c), value=0.3)
    same_bits(out, a + np.float32(0.3) * b / c)


def test_addcmul_float64_and_broadcast():
    a = floats(40 * 30, np.float64, 1).reshape(40, 30)
    b, c = floats(30, np.float64, 2), floats(40, np.float64, 3).reshape(40, 1)
    out = torch.addcmul(tensor(a), tensor(b), tensor(c), value=0.7)
    same_bits(out, fma64(0.7 * np.broadcast_to(b, a.shape), np.broadcast_to(c, a.shape), a))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_addcmul_half_types_round_once(dtype):
    d = getattr(torch, dtype)
    a, b, c = (tensor(floats(1000, np.float32, k)).to(d) for k in (1, 2, 3))
    out = torch.addcmul(a, b, c, value=0.3)
    wide = fma32(np.float32(0.3) * b.float().numpy(), c.float().numpy(), a.float().numpy())
    same_bits(out.float(), tensor(wide).to(d).float().numpy())


def test_addcmul_integers_wrap_and_truncate_the_value():
    a = np.array([1, -7, 2**31 - 1, 5], np.int32)
    b = np.array([3, 4, 2, -6], np.int32)
    c = np.array([5, -2, 1, 7], np.int32)
    out = torch.addcmul(tensor(a), tensor(b), tensor(c), value=2)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out.numpy(), a + 2 * b * c)
    assert torch.addcmul(tensor(a), tensor(b), tensor(c), value=2).dtype == torch.int32
    u = torch.tensor([250, 3], dtype=torch.uint8)
    assert torch.addcmul(u, u, u).tolist() == [(250 + 250 * 250) % 256, 12]


def test_addcmul_promotes_and_takes_complex():
    a = torch.tensor([1, 2], dtype=torch.int64)
    b = torch.tensor([0.5, 1.5])
    out = torch.addcmul(a, b, b, value=2)
    assert out.dtype == torch.float32 and out.tolist() == [1.5, 6.5]
    z = torch.tensor([1 + 1j, 2 - 1j])
    np.testing.assert_allclose(torch.addcmul(z, z, z, value=0.5).numpy(),
                               z.numpy() + 0.5 * z.numpy() * z.numpy(), rtol=1e-6)


def test_addc_grad_fns_and_gradients():
    a, b, c = (torch.randn(4, 3, dtype=torch.float64, requires_grad=True) for _ in range(3))
    assert torch.addcmul(a, b, c).grad_fn.name() == "AddcmulBackward0"
    assert torch.addcdiv(a, b, c).grad_fn.name() == "AddcdivBackward0"
    assert torch.autograd.gradcheck(lambda x, y, z: torch.addcmul(x, y, z, value=0.3), (a, b, c))
    assert torch.autograd.gradcheck(lambda x, y, z: torch.addcdiv(x, y, z, value=0.3), (a, b, c))


def test_addc_zero_size_and_errors():
    e = torch.zeros(0, 3)
    assert torch.addcmul(e, e, torch.zeros(3)).shape == (0, 3)
    assert torch.lerp(e, e, 0.5).shape == (0, 3)
    with pytest.raises(RuntimeError):
        torch.addcmul(torch.zeros(2), torch.zeros(3), torch.zeros(2))
    with pytest.raises(RuntimeError):
        torch.addcmul(*(torch.zeros(2, dtype=torch.bool),) * 3)


# ------------------------------------------------------------------------------ atan2


def ulps32(ours, exact):
    """Error in ulps of the float32 nearest `exact` (float64)."""
    want = exact.astype(np.float32)
    e = np.floor(np.log2(np.maximum(np.abs(want), np.finfo(np.float32).tiny).astype(np.float64)))
    return np.abs(ours.astype(np.float64) - exact) / 2.0 ** (e - 23)


SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, -2.5, 1e-40, -1e-40, 1e30, -1e30]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_atan2_special_values_as_libm(dtype):
    y, x = (np.array(v, dtype) for v in zip(*[(a, b) for a in SPECIAL for b in SPECIAL]))
    ours = torch.atan2(tensor(y), tensor(x)).numpy()
    expected = np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(dtype)
    exact = ~np.isfinite(expected) | (expected == 0) | (np.abs(y) == np.inf) | (y == 0) | (x == 0)
    same_bits(ours[exact], expected[exact])
    near = np.abs(ours - expected) <= 4 * np.spacing(np.abs(expected).astype(dtype))
    assert np.all(near | np.isnan(expected) & np.isnan(ours))


@pytest.mark.parametrize("n", SIZES)
def test_atan2_float32_within_4_ulp(n):
    rng = np.random.default_rng(7)
    y = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    ours = torch.atan2(tensor(y), tensor(x)).numpy()
    exact = np.arctan2(y.astype(np.float64), x.astype(np.float64))
    assert ulps32(ours, exact).max() <= 4


def test_atan2_float64_within_4_ulp():
    rng = np.random.default_rng(8)
    y, x = rng.standard_normal(BIG) * 1e3, rng.standard_normal(BIG)
    ours = torch.atan2(tensor(y), tensor(x)).numpy()
    expected = np.arctan2(y, x)
    assert np.all(np.abs(ours - expected) <= 4 * np.spacing(np.abs(expected)))


def test_atan2_same_results_for_every_layout():
    y = floats(300 * 200, np.float32, 1).reshape(300, 200)
    x = floats(200, np.float32, 2)
    whole = torch.atan2(tensor(y), tensor(np.broadcast_to(x, y.shape)))
    same_bits(torch.atan2(tensor(y), tensor(x)), whole.numpy())
    same_bits(torch.atan2(tensor(y.T.copy()).t(), tensor(x)), whole.numpy())
    yh, xh = tensor(y).half(), tensor(x).half()
    h = torch.atan2(yh, xh)
    assert h.dtype == torch.float16
    same_bits(h, torch.atan2(yh.float(), xh.float()).half().numpy())


# -------------------------------------------------------------------------------- abs


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_abs_clears_the_sign_bit(dtype):
    x = torch.tensor([-0.0, 0.0, -1.5, 2.0, float("-inf"), float("nan")]).to(getattr(torch, dtype))
    x = torch.cat([x, -x])
    out = torch.abs(x)
    signs = torch.signbit(out).tolist()
    assert not any(signs), signs
    assert out.float().tolist()[2:5] == [1.5, 2.0, float("inf")]


def test_abs_integers_wrap_at_the_minimum():
    assert torch.abs(torch.tensor([-(2**31), -3, 4], dtype=torch.int32)).tolist() == [
        -(2**31), 3, 4]
    assert torch.abs(torch.tensor([-(2**63), -3], dtype=torch.int64)).tolist() == [-(2**63), 3]
    assert torch.abs(torch.tensor([200], dtype=torch.uint8)).tolist() == [200]


@pytest.mark.parametrize("n", SIZES)
def test_abs_of_strided_input(n):
    x = floats(2 * n, np.float32)
    x[:8] = -0.0
    same_bits(torch.abs(tensor(x)[::2]), np.abs(x[::2]))


# ------------------------------------------------------- broadcast and strided operands


def test_column_broadcast_and_outer():
    x = floats(1024 * 256, np.float32, 1).reshape(1024, 256)
    v, w = floats(1024, np.float32, 2), floats(256, np.float32, 3)
    same_bits(tensor(x) + tensor(v)[:, None], x + v[:, None])
    same_bits(tensor(v)[:, None] - tensor(x), v[:, None] - x)
    same_bits(torch.outer(tensor(v), tensor(w)), np.outer(v, w))
    same_bits(torch.outer(tensor(v[:5]), tensor(w[:3])), np.outer(v[:5], w[:3]))


@pytest.mark.parametrize("shape", [(300, 400), (3, 70, 500), (70000, 2)])
def test_transposed_and_strided_operands(shape):
    x = floats(int(np.prod(shape)), np.float32, 1).reshape(shape)
    y = floats(int(np.prod(shape)), np.float32, 2).reshape(shape[::-1])
    same_bits(tensor(x).permute(*range(len(shape))[::-1]) * tensor(y), x.T * y)
    same_bits(tensor(y)[..., ::2] - 1.5, y[..., ::2] - np.float32(1.5))
    same_bits(tensor(x)[::2] * 2, x[::2] * np.float32(2))
    same_bits(torch.maximum(tensor(x).T, tensor(y)), np.maximum(x.T, y))


def test_strided_bool_and_integer_operands():
    m = np.random.default_rng(0).random((600, 300)) > 0.5
    a = np.arange(600 * 300, dtype=np.int64).reshape(600, 300)
    np.testing.assert_array_equal((tensor(m).t() & tensor(m.T.copy())).numpy(), m.T)
    np.testing.assert_array_equal((tensor(a).t() + tensor(a.T.copy())).numpy(), 2 * a.T)
    np.testing.assert_array_equal((-tensor(a)[:, ::3]).numpy(), -a[:, ::3])


@pytest.mark.parametrize("n", SIZES)
def test_fast_casts(n):
    x = floats(n, np.float32)
    x[:3] = [np.nan, -0.0, np.inf]
    same_bits(tensor(x).double(), x.astype(np.float64))
    same_bits(tensor(x).double().float(), x)
    same_bits(tensor(x)[::2].double(), x[::2].astype(np.float64))
    i = (x[3:] * 1000).astype(np.int64)
    np.testing.assert_array_equal(tensor(x[3:] * 1000).long().numpy(), i)
    np.testing.assert_array_equal(tensor(i).float().numpy(), i.astype(np.float32))
    np.testing.assert_array_equal(tensor(i).int().numpy(), i.astype(np.int32))
    m = floats(64 * 512, np.float32).reshape(64, 512)
    same_bits(tensor(m).t().double(), m.T.astype(np.float64))
