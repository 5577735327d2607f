"""Issue 11 special math: torch's error class and text for bad inputs (each checked on
torch 2.15 first), integer division edge cases, and kernel accuracy at known values."""

import math

import pytest

import ferrograd as torch

I64_MIN = -(2**63)


@pytest.mark.parametrize(
    "call, cls, text",
    [
        (lambda: torch.tensor([7]) // torch.tensor([0]), RuntimeError, "ZeroDivisionError"),
        (lambda: torch.tensor([7]) % 0, RuntimeError, "ZeroDivisionError"),
        (
            lambda: torch.fmod(torch.tensor([7], dtype=torch.int32), 0),
            RuntimeError,
            "ZeroDivisionError",
        ),
        (
            lambda: torch.tensor([7]).div(torch.tensor([0]), rounding_mode="trunc"),
            RuntimeError,
            "ZeroDivisionError",
        ),
        (
            lambda: torch.tensor([True]) // torch.tensor([True]),
            NotImplementedError,
            "\"div_floor_cpu\" not implemented for 'Bool'",
        ),
        (
            lambda: torch.remainder(torch.tensor([1 + 1j]), torch.tensor([1 + 1j])),
            NotImplementedError,
            "\"remainder_cpu\" not implemented for 'ComplexFloat'",
        ),
        (
            lambda: torch.hypot(torch.tensor([1]), torch.tensor([2])),
            NotImplementedError,
            "\"hypot_cpu\" not implemented for 'Long'",
        ),
        (
            lambda: torch.nextafter(torch.tensor([True]), torch.tensor([True])),
            NotImplementedError,
            "\"nextafter_cpu\" not implemented for 'Bool'",
        ),
        (
            lambda: torch.atan2(torch.tensor([1j]), torch.tensor([1j])),
            NotImplementedError,
            "\"atan2_cpu\" not implemented for 'ComplexFloat'",
        ),
        (
            lambda: torch.erfc(torch.tensor([1j])),
            NotImplementedError,
            "\"erfc_vml_cpu\" not implemented for 'ComplexFloat'",
        ),
        (
            lambda: torch.lgamma(torch.tensor([1j])),
            NotImplementedError,
            "\"lgamma_vml_cpu\" not implemented for 'ComplexFloat'",
        ),
        (
            lambda: torch.digamma(torch.tensor([1j])),
            NotImplementedError,
            "\"digamma\" not implemented for 'ComplexFloat'",
        ),
        (
            lambda: torch.polygamma(1, torch.tensor([1j])),
            NotImplementedError,
            "\"trigamma\" not implemented for 'ComplexFloat'",
        ),
        (
            lambda: torch.polygamma(-1, torch.tensor([1.0])),
            RuntimeError,
            "polygamma(n, x) does not support negative n.",
        ),
        (
            lambda: torch.signbit(torch.tensor([1j])),
            NotImplementedError,
            "signbit is not implemented for complex tensors.",
        ),
        (
            lambda: torch.tensor([1.0]).div(torch.tensor([1.0]), rounding_mode="x"),
            RuntimeError,
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'x'",
        ),
        (
            lambda: torch.tensor([1.0]).atan2(2.0),
            TypeError,
            "atan2(): argument 'other' (position 1) must be Tensor, not float",
        ),
        (
            lambda: torch.tensor([1.0]).logaddexp(2.0),
            TypeError,
            "logaddexp(): argument 'other' (position 1) must be Tensor, not float",
        ),
    ],
)
def test_error(call, cls, text):
    with pytest.raises(cls) as e:
        call()
    assert str(e.value) == text


def test_no_derivative_errors():
    x = torch.tensor([0.3, 0.6], dtype=torch.float64, requires_grad=True)
    with pytest.raises(
        RuntimeError, match="^derivative for aten::floor_divide is not implemented$"
    ):
        (x // 2).sum().backward()
    with pytest.raises(RuntimeError, match="^derivative for aten::remainder is not implemented$"):
        (2 % x).sum().backward()


def test_integer_division_wraps_at_int64_min():
    m = torch.tensor([I64_MIN])
    assert (m // -1).tolist() == [I64_MIN]
    assert (m % -1).tolist() == [0]
    assert torch.fmod(m, -1).tolist() == [0]
    assert m.div(-1, rounding_mode="trunc").tolist() == [I64_MIN]


def test_integer_division_results():
    a, b = torch.tensor([7, -7, 5]), torch.tensor([2, 2, -3])
    assert (a // b).tolist() == [3, -4, -2]
    assert (a % b).tolist() == [1, 1, -1]
    assert torch.fmod(a, b).tolist() == [1, -1, 2]
    assert (7 % b).tolist() == [1, 1, -2]


# Accuracy against closed forms (float64). Measured against torch 2.15 over
# [-30.5, 30.3] and [1e-8, 316]: lgamma <= 1.1e-13 relative (near its zeros), digamma
# equal on x > 0, erfc <= 4.3e-16, erfinv <= 2.3e-16, polygamma(3) <= 7e-16; torch's
# trigamma is the less accurate one there (5e-10 off pi^2/6 at 1; ours 1e-16).
@pytest.mark.parametrize(
    "f, x, want, rtol",
    [
        (lambda t: t.lgamma(), 0.5, math.log(math.pi) / 2, 1e-15),
        (lambda t: t.lgamma(), 30.0, math.lgamma(30.0), 1e-15),
        (lambda t: t.digamma(), 1.0, -0.5772156649015329, 1e-15),
        (lambda t: t.digamma(), -0.5, 0.03648997397857652, 1e-13),
        (lambda t: t.polygamma(1), 1.0, math.pi**2 / 6, 1e-15),
        (lambda t: t.polygamma(2), 1.0, -2 * 1.2020569031595942, 1e-14),
        (lambda t: t.erfc(), 5.0, math.erfc(5.0), 1e-15),
        (lambda t: t.erfinv(), math.erf(0.7), 0.7, 1e-15),
        (lambda t: t.erfinv(), math.erf(3.0), 3.0, 1e-12),
        (lambda t: t.sinc(), 0.5, 2 / math.pi, 1e-15),
    ],
)
def test_accuracy(f, x, want, rtol):
    got = f(torch.tensor([x], dtype=torch.float64)).item()
    assert abs(got - want) <= rtol * abs(want)
