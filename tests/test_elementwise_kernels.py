"""Elementwise kernels with their own fast paths (issue 8 §4): pow by a Python number as
torch computes it (multiplications, sqrt / rsqrt / reciprocal, else the vector pow),
tensor ** tensor, bool operands read from their bytes, `where` with whole or single-value
operands, clamp and the comparisons. Each is checked against numpy, small and above the
threads' grain (2^15 elements), contiguous and not; all of it also runs on torch."""

import numpy as np
import pytest

import ferrograd as torch

BIG = (1 << 16) + 5  # above the grain: split over the threads
SIZES = [7, BIG]


def floats(n, dtype, seed=0, low=-3.0, high=3.0):
    rng = np.random.default_rng(seed)
    values = rng.uniform(low, high, size=n).astype(dtype)
    values[:4] = [0.0, -0.0, np.inf, np.nan] if n >= 4 else values[:4]
    return values


def tensor(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def same_bits(ours, expected):
    np.testing.assert_array_equal(ours.numpy(), expected)


# ------------------------------------------------------------------------ pow by a number


SPECIAL_EXPONENTS = {
    # exponent: (torch's formula in the tensor's own type, whether torch's result is that
    # formula bit for bit; ours always is, torch's vector sqrt path is within an ulp)
    0: (lambda x: np.ones_like(x), True),
    1: (lambda x: x.copy(), True),
    2: (lambda x: x * x, True),
    3: (lambda x: x * x * x, True),
    -2: (lambda x: 1 / (x * x), True),
    0.5: (np.sqrt, False),
    -0.5: (lambda x: 1 / np.sqrt(x), False),
    -1: (lambda x: 1 / x, False),
}
ULP = {np.float32: 1.2e-7, np.float64: 2.3e-16}


def within_an_ulp(ours, expected, dtype):
    np.testing.assert_allclose(ours.numpy(), expected, rtol=ULP[dtype], atol=0, equal_nan=True)


@pytest.mark.parametrize("exponent", sorted(SPECIAL_EXPONENTS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_pow_by_special_numbers_takes_torchs_formula(exponent, dtype, n):
    formula, exact = SPECIAL_EXPONENTS[exponent]
    x = floats(n, dtype)
    with np.errstate(all="ignore"):
        expected = formula(x).astype(dtype)
    for ours in (tensor(x) ** exponent, torch.pow(tensor(x), exponent)):
        if exact:
            same_bits(ours, expected)
        else:
            within_an_ulp(ours, expected, dtype)


def test_pow_exponent_rounded_to_the_tensors_type():
    # 2 + 1e-9 is not 2, so not the product; but it is 2.0 in float32, the exponent
    # torch's vector loop raises to: no NaN for negative bases. (torch's scalar tail,
    # past the last whole vector, raises to the double; 1024 elements leave no tail.)
    x = floats(1024, np.float32)
    ours = tensor(x) ** (2 + 1e-9)
    within_an_ulp(ours, x * x, np.float32)


@pytest.mark.parametrize("exponent", [2.5, -1.5, 7.0, 1 / 3, -3.0, 0.25, 100.0])
@pytest.mark.parametrize("n", SIZES)
def test_pow_float32_by_other_numbers_is_correctly_rounded(exponent, n):
    x = floats(n, np.float32, low=-4.0, high=4.0)
    with np.errstate(all="ignore"):
        expected = np.power(x.astype(np.float64), exponent).astype(np.float32)
    ours = (tensor(x) ** exponent).numpy()
    # Computed in float64 lanes: at most one rounding step from the exact result (torch's
    # subnormal results are less exact: the absolute tolerance is the smallest normal).
    tiny = np.finfo(np.float32).tiny
    close = np.isclose(ours, expected, rtol=2e-7, atol=tiny, equal_nan=True)
    assert close.all(), (x[~close][:5], ours[~close][:5], expected[~close][:5])
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(expected))


@pytest.mark.parametrize("exponent", [2.5, -1.5, 1 / 3])
def test_pow_float64_by_other_numbers(exponent):
    x = floats(1000, np.float64, low=0.0, high=5.0)
    with np.errstate(all="ignore"):
        within_an_ulp(tensor(x) ** exponent, np.power(x, exponent), np.float64)


def test_pow_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1.0, -2.0], dtype=np.float32)
    for exponent in (0, 1, 2, 3, -2, 0.5, -0.5, -1, 2.5, -3.0, 1 / 3):
        with np.errstate(all="ignore"):
            expected = np.power(x.astype(np.float64), exponent).astype(np.float32)
        if exponent == -0.5:
            with np.errstate(all="ignore"):
                expected = (1 / np.sqrt(x)).astype(np.float32)
        ours = (tensor(x) ** exponent).numpy()
        np.testing.assert_array_equal(ours, expected, err_msg=f"exponent {exponent}")


def test_pow_of_a_non_contiguous_tensor():
    x = floats(200, np.float32).reshape(20, 10)
    t = tensor(x).t()
    same_bits(t**2, (x * x).T)
    with np.errstate(all="ignore"):
        within_an_ulp(t**0.5, np.sqrt(x).T, np.float32)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pow_tensor_by_tensor(n, dtype):
    base = floats(n, dtype, seed=1, low=0.0, high=4.0)
    exponent = floats(n, dtype, seed=2, low=-3.0, high=3.0)
    with np.errstate(all="ignore"):
        expected = np.power(base.astype(np.float64), exponent.astype(np.float64)).astype(dtype)
    ours = (tensor(base) ** tensor(exponent)).numpy()
    np.testing.assert_allclose(ours, expected, rtol=4e-7 if dtype == np.float32 else 1e-15)


def test_pow_tensor_by_broadcast_and_strided_tensors():
    base = floats(60, np.float32, low=0.5, high=3.0).reshape(6, 10)
    exponent = floats(10, np.float32, seed=3, low=-2.0, high=2.0)
    expected = np.power(base.astype(np.float64), exponent.astype(np.float64))
    np.testing.assert_allclose((tensor(base) ** tensor(exponent)).numpy(), expected, rtol=4e-7)
    np.testing.assert_allclose(
        (tensor(base).t() ** tensor(base).t()).numpy(),
        np.power(base.T.astype(np.float64), base.T.astype(np.float64)),
        rtol=4e-7,
    )


def test_pow_gradients_through_the_special_exponents():
    for exponent in (2, 3, -2, 0.5, -0.5, -1, 2.5):
        x = torch.rand(5, dtype=torch.float64) + 0.5
        x.requires_grad_()
        assert torch.autograd.gradcheck(lambda t, e=exponent: t**e, (x,))


# ----------------------------------------------------------------- bools read as bytes


def bools_with_odd_bytes(n, seed=0):
    """A bool array whose true bytes are not all 1 (numpy lets memory say so; a bool is
    its byte != 0)."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 4, size=n).astype(np.uint8) * 85  # 0, 85, 170, 255
    return raw, raw.view(np.bool_)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.uint8])
def test_bool_cast_reads_any_nonzero_byte_as_one(n, dtype):
    raw, mask = bools_with_odd_bytes(n)
    ours = torch.from_numpy(mask).to(dtype).numpy()
    np.testing.assert_array_equal(ours, (raw != 0).astype(ours.dtype))


@pytest.mark.parametrize("n", SIZES)
def test_float_times_bool_mask(n):
    raw, mask = bools_with_odd_bytes(n, seed=1)
    g = floats(n, np.float32, seed=2)
    same_bits(tensor(g) * torch.from_numpy(mask), g * (raw != 0).astype(np.float32))


def test_strided_bool_cast():
    raw, mask = bools_with_odd_bytes(60, seed=3)
    t = torch.from_numpy(mask).reshape(6, 10).t()
    np.testing.assert_array_equal(t.float().numpy(), (raw != 0).reshape(6, 10).T.astype(np.float32))
    np.testing.assert_array_equal(t[::2].long().numpy(), (raw != 0).reshape(6, 10).T[::2])


# --------------------------------------------------------------------------------- where


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", ["tt", "ts", "st", "ss"])
def test_where_with_whole_and_single_value_operands(n, kind):
    raw, mask = bools_with_odd_bytes(n, seed=4)
    a, b = floats(n, np.float32, seed=5), floats(n, np.float32, seed=6)
    x = tensor(a) if kind[0] == "t" else 1.5
    y = tensor(b) if kind[1] == "t" else -2.0
    ours = torch.where(torch.from_numpy(mask), x, y)
    expected = np.where(raw != 0, a if kind[0] == "t" else 1.5, b if kind[1] == "t" else -2.0)
    same_bits(ours, expected.astype(np.float32))


def test_where_with_broadcast_and_strided_operands():
    raw, mask = bools_with_odd_bytes(24, seed=7)
    cond = torch.from_numpy(mask).reshape(4, 6)
    a = floats(6, np.float64, seed=8)
    b = floats(24, np.float64, seed=9).reshape(6, 4)
    ours = torch.where(cond, tensor(a), tensor(b).t())
    same_bits(ours, np.where(raw.reshape(4, 6) != 0, a, b.T))
    ours = torch.where(cond.t(), 0.0, tensor(b))
    same_bits(ours, np.where(raw.reshape(4, 6).T != 0, 0.0, b))


def test_where_gradient_through_the_fast_path():
    cond = torch.tensor([True, False, True])
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    torch.where(cond, x, 0.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 1.0])


# ------------------------------------------------------------------ clamp and comparisons


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (-1.0, None), (None, 1.0), (2.0, -2.0)])
def test_clamp_lets_nan_through(n, bounds):
    lo, hi = bounds
    x = floats(n, np.float32, seed=10)
    expected = x.copy()
    if lo is not None:
        expected = np.where(expected < lo, np.float32(lo), expected)
    if hi is not None:
        expected = np.where(expected > hi, np.float32(hi), expected)
    same_bits(tensor(x).clamp(min=lo, max=hi), expected)


def test_clamp_integers():
    x = np.arange(-5, 6, dtype=np.int64)
    same_bits(tensor(x).clamp(min=-2, max=3), np.clip(x, -2, 3))
    same_bits(tensor(x).clamp(max=0), np.minimum(x, 0))


COMPARISONS = {
    "eq": (lambda a, b: a == b, np.equal),
    "ne": (lambda a, b: a != b, np.not_equal),
    "lt": (lambda a, b: a < b, np.less),
    "le": (lambda a, b: a <= b, np.less_equal),
    "gt": (lambda a, b: a > b, np.greater),
    "ge": (lambda a, b: a >= b, np.greater_equal),
}


@pytest.mark.parametrize("name", sorted(COMPARISONS))
@pytest.mark.parametrize("n", SIZES)
def test_comparisons_with_nan(name, n):
    ours, reference = COMPARISONS[name]
    a = floats(n, np.float32, seed=11)
    b = floats(n, np.float32, seed=12)
    b[::3] = a[::3]  # some equal pairs
    same_bits(ours(tensor(a), tensor(b)), reference(a, b))
    same_bits(ours(tensor(a), 0.5), reference(a, np.float32(0.5)))
    ints = np.arange(-3, 4)
    same_bits(ours(tensor(ints), 1), reference(ints, 1))


def test_relu_gradient_passes_where_the_result_is_nan():
    # torch's threshold_backward: zero where the result is <= 0, the gradient elsewhere.
    x = torch.tensor([float("nan"), -1.0, 0.0, 2.0], requires_grad=True)
    y = x.relu()
    y.backward(torch.ones(4))
    assert x.grad.tolist() == [1.0, 0.0, 0.0, 1.0]
    import ferrograd.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        dual = fwAD.make_dual(x.detach(), torch.ones(4))
        assert fwAD.unpack_dual(dual.relu()).tangent.tolist() == [1.0, 0.0, 0.0, 1.0]
