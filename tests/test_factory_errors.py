"""Issue 7 §5: the factories refuse bad arguments with torch's exception class and text
(``ferrograd.`` where torch names its own types). Each case was checked against torch 2.15.
"""

import math

import ferrograd as torch
import pytest

MOD = torch.__name__
nan, inf = math.nan, math.inf
UNPACK = (
    "{}(): argument 'size' failed to unpack the object at pos 2 with error"
    ' "type must be tuple of ints,but got {}"'
)

CASES = [
    # arange: bounds, step
    ("arange(0, nan)", lambda: torch.arange(0, nan), RuntimeError, "unsupported range: 0 -> nan"),
    ("arange(nan)", lambda: torch.arange(nan), RuntimeError, "unsupported range: 0 -> nan"),
    (
        "arange(1.5, nan)",
        lambda: torch.arange(1.5, nan),
        RuntimeError,
        "unsupported range: 1.5 -> nan",
    ),
    ("arange(0, inf)", lambda: torch.arange(0, inf), RuntimeError, "unsupported range: 0 -> inf"),
    (
        "arange(-inf, 0)",
        lambda: torch.arange(-inf, 0),
        RuntimeError,
        "unsupported range: -inf -> 0",
    ),
    (
        "arange(1e20, inf)",
        lambda: torch.arange(1e20, inf),
        RuntimeError,
        "unsupported range: 1e+20 -> inf",
    ),
    (
        "arange(0.1234567, inf)",
        lambda: torch.arange(0.1234567, inf),
        RuntimeError,
        "unsupported range: 0.123457 -> inf",
    ),
    (
        "arange(0, 1, nan)",
        lambda: torch.arange(0, 1, nan),
        RuntimeError,
        "step must be finite but got nan",
    ),
    (
        "arange(0, 1, inf)",
        lambda: torch.arange(0, 1, inf),
        RuntimeError,
        "step must be finite but got inf",
    ),
    ("arange(0, 10, 0)", lambda: torch.arange(0, 10, 0), RuntimeError, "step must be nonzero"),
    ("arange(0, 10, 0.0)", lambda: torch.arange(0, 10, 0.0), RuntimeError, "step must be nonzero"),
    (
        "arange(0, 10, -1)",
        lambda: torch.arange(0, 10, -1),
        RuntimeError,
        "upper bound and lower bound inconsistent with step sign",
    ),
    (
        "arange(10, 0)",
        lambda: torch.arange(10, 0),
        RuntimeError,
        "upper bound and lower bound inconsistent with step sign",
    ),
    (
        "arange(0, 1e20)",
        lambda: torch.arange(0, 1e20),
        RuntimeError,
        "invalid size, possible overflow?",
    ),
    (
        "arange(0, 1e300, 1e-300)",
        lambda: torch.arange(0, 1e300, 1e-300),
        RuntimeError,
        "invalid size, possible overflow?",
    ),
    (
        "arange(2**63)",
        lambda: torch.arange(2**63),
        RuntimeError,
        "value cannot be converted to type int64_t without overflow",
    ),
    (
        "arange('a')",
        lambda: torch.arange("a"),
        TypeError,
        "arange(): argument 'end' (position 1) must be Number, not str",
    ),
    (
        "arange(1+2j)",
        lambda: torch.arange(1 + 2j),
        RuntimeError,
        "value cannot be converted to type double without overflow",
    ),
    (
        "arange bool",
        lambda: torch.arange(3, dtype=torch.bool),
        NotImplementedError,
        "\"arange_cpu\" not implemented for 'Bool'",
    ),
    (
        "arange complex64",
        lambda: torch.arange(3, dtype=torch.complex64),
        NotImplementedError,
        "\"arange_cpu\" not implemented for 'ComplexFloat'",
    ),
    # linspace
    (
        "linspace steps < 0",
        lambda: torch.linspace(0, 1, -1),
        RuntimeError,
        "number of steps must be non-negative",
    ),
    (
        "linspace bool",
        lambda: torch.linspace(0, 1, 3, dtype=torch.bool),
        NotImplementedError,
        "\"linspace_cpu\" not implemented for 'Bool'",
    ),
    # sizes
    (
        "zeros(-1)",
        lambda: torch.zeros(-1),
        RuntimeError,
        "zeros: Dimension size must be non-negative.",
    ),
    (
        "zeros((2, -3))",
        lambda: torch.zeros((2, -3)),
        RuntimeError,
        "zeros: Dimension size must be non-negative.",
    ),
    (
        "ones(-1)",
        lambda: torch.ones(-1),
        RuntimeError,
        "Trying to create tensor with negative dimension -1: [-1]",
    ),
    (
        "empty(2, -1)",
        lambda: torch.empty(2, -1),
        RuntimeError,
        "Trying to create tensor with negative dimension -1: [2, -1]",
    ),
    (
        "rand(-1)",
        lambda: torch.rand(-1),
        RuntimeError,
        "Trying to create tensor with negative dimension -1: [-1]",
    ),
    (
        "randn(-1)",
        lambda: torch.randn(-1),
        RuntimeError,
        "Trying to create tensor with negative dimension -1: [-1]",
    ),
    (
        "zeros(2.5)",
        lambda: torch.zeros(2.5),
        TypeError,
        "zeros(): argument 'size' (position 1) must be tuple of ints, not float",
    ),
    (
        "zeros('a')",
        lambda: torch.zeros("a"),
        TypeError,
        "zeros(): argument 'size' (position 1) must be tuple of ints, not str",
    ),
    (
        "zeros(None)",
        lambda: torch.zeros(None),
        TypeError,
        "zeros(): argument 'size' (position 1) must be tuple of ints, not NoneType",
    ),
    (
        "ones(True)",
        lambda: torch.ones(True),
        TypeError,
        "ones(): argument 'size' (position 1) must be tuple of ints, not bool",
    ),
    (
        "zeros([2, None])",
        lambda: torch.zeros([2, None]),
        TypeError,
        UNPACK.format("zeros", "NoneType"),
    ),
    (
        "ones(2, 2.0)",
        lambda: torch.ones(2, 2.0),
        TypeError,
        UNPACK.format("ones", "float"),
    ),
    (
        "zeros(2, 'a')",
        lambda: torch.zeros(2, "a"),
        TypeError,
        UNPACK.format("zeros", "str"),
    ),
    # dtypes
    (
        "zeros dtype str",
        lambda: torch.zeros(2, dtype="float"),
        TypeError,
        f"zeros(): argument 'dtype' must be {MOD}.dtype, not str",
    ),
    (
        "ones dtype int",
        lambda: torch.ones(2, dtype=1),
        TypeError,
        f"ones(): argument 'dtype' must be {MOD}.dtype, not int",
    ),
    (
        "rand int64",
        lambda: torch.rand(2, dtype=torch.int64),
        NotImplementedError,
        "\"check_uniform_bounds\" not implemented for 'Long'",
    ),
    (
        "randn int64",
        lambda: torch.randn(2, dtype=torch.int64),
        NotImplementedError,
        "\"normal_kernel_cpu\" not implemented for 'Long'",
    ),
    (
        "rand bool",
        lambda: torch.rand(2, dtype=torch.bool),
        NotImplementedError,
        "\"check_uniform_bounds\" not implemented for 'Bool'",
    ),
    (
        "rand_like int64",
        lambda: torch.rand_like(torch.ones(2, dtype=torch.int64)),
        NotImplementedError,
        "\"check_uniform_bounds\" not implemented for 'Long'",
    ),
    (
        "zeros int requires_grad",
        lambda: torch.zeros(2, dtype=torch.int64, requires_grad=True),
        RuntimeError,
        "Only Tensors of floating point and complex dtype can require gradients",
    ),
    # randint
    (
        "randint(5, 3)",
        lambda: torch.randint(5, 3, (2,)),
        RuntimeError,
        "random_ expects 'from' to be less than 'to', but got from=5 >= to=3",
    ),
    (
        "randint(3, 3)",
        lambda: torch.randint(3, 3, (2,)),
        RuntimeError,
        "random_ expects 'from' to be less than 'to', but got from=3 >= to=3",
    ),
    (
        "randint(0, size)",
        lambda: torch.randint(0, (2,)),
        RuntimeError,
        "random_ expects 'from' to be less than 'to', but got from=0 >= to=0",
    ),
    (
        "randint negative size",
        lambda: torch.randint(3, (-2,)),
        RuntimeError,
        "Trying to create tensor with negative dimension -2: [-2]",
    ),
    (
        "randint(3, 2)",
        lambda: torch.randint(3, 2),
        TypeError,
        "randint(): argument 'size' (position 2) must be tuple of ints, not int",
    ),
    (
        "randint(3.5, size)",
        lambda: torch.randint(3.5, (2,)),
        TypeError,
        "randint(): argument 'high' (position 1) must be int, not float",
    ),
    (
        "randint uint8 high",
        lambda: torch.randint(0, 300, (2,), dtype=torch.uint8),
        RuntimeError,
        "to - 1 is out of bounds for unsigned char",
    ),
    (
        "randint uint8 low",
        lambda: torch.randint(-1, 3, (2,), dtype=torch.uint8),
        RuntimeError,
        "from is out of bounds for unsigned char",
    ),
    (
        "randint bool",
        lambda: torch.randint(0, 3, (2,), dtype=torch.bool),
        RuntimeError,
        "to - 1 is out of bounds for bool",
    ),
    (
        "randint half",
        lambda: torch.randint(0, 2**30, (2,), dtype=torch.float16),
        RuntimeError,
        "to - 1 is out of bounds for c10::Half",
    ),
    (
        "randint complex",
        lambda: torch.randint(0, 3, (2,), dtype=torch.complex64),
        RuntimeError,
        "check_random_bounds handles only integral, floating-point and boolean types",
    ),
    (
        "randint requires_grad",
        lambda: torch.randint(3, (2,), requires_grad=True),
        RuntimeError,
        "Only Tensors of floating point and complex dtype can require gradients",
    ),
    # eye
    ("eye(-1)", lambda: torch.eye(-1), RuntimeError, "n must be greater or equal to 0, got -1"),
    (
        "eye(2, -1)",
        lambda: torch.eye(2, -1),
        RuntimeError,
        "m must be greater or equal to 0, got -1",
    ),
    (
        "eye(-2, -1)",
        lambda: torch.eye(-2, -1),
        RuntimeError,
        "n must be greater or equal to 0, got -2",
    ),
    (
        "eye(2.5)",
        lambda: torch.eye(2.5),
        TypeError,
        "eye(): argument 'n' (position 1) must be int, not float",
    ),
    # full: fill values
    (
        "full str",
        lambda: torch.full((2,), "a"),
        TypeError,
        "full(): argument 'fill_value' (position 2) must be Number, not str",
    ),
    (
        "full None",
        lambda: torch.full((2,), None),
        TypeError,
        "full(): argument 'fill_value' (position 2) must be Number, not NoneType",
    ),
    (
        "full 2-element tensor",
        lambda: torch.full((2,), torch.tensor([1.5, 2])),
        TypeError,
        "full(): argument 'fill_value' (position 2) must be Number, not Tensor",
    ),
    (
        "full int size",
        lambda: torch.full(2, 1.0),
        TypeError,
        "full(): argument 'size' (position 1) must be tuple of ints, not int",
    ),
    (
        "full negative size",
        lambda: torch.full((-2,), 1.0),
        RuntimeError,
        "Trying to create tensor with negative dimension -2: [-2]",
    ),
    (
        "full 300 uint8",
        lambda: torch.full((2,), 300, dtype=torch.uint8),
        RuntimeError,
        "value cannot be converted to type uint8_t without overflow",
    ),
    (
        "full nan int64",
        lambda: torch.full((2,), nan, dtype=torch.int64),
        RuntimeError,
        "value cannot be converted to type int64_t without overflow",
    ),
    (
        "full 2**40 int32",
        lambda: torch.full((2,), 2**40, dtype=torch.int32),
        RuntimeError,
        "value cannot be converted to type int without overflow",
    ),
    (
        "full 1e300 float32",
        lambda: torch.full((2,), 1e300, dtype=torch.float32),
        RuntimeError,
        "value cannot be converted to type float without overflow",
    ),
    (
        "full 1j float32",
        lambda: torch.full((2,), 1j, dtype=torch.float32),
        RuntimeError,
        "value cannot be converted to type float without overflow",
    ),
    (
        "full 1j float64",
        lambda: torch.full((2,), 1j, dtype=torch.float64),
        RuntimeError,
        "value cannot be converted to type double without overflow",
    ),
    (
        "full 1e300 complex64",
        lambda: torch.full((2,), 1e300, dtype=torch.complex64),
        RuntimeError,
        "value cannot be converted to type c10::complex<float> without overflow",
    ),
    (
        "full_like str",
        lambda: torch.full_like(torch.ones(2), "a"),
        TypeError,
        "full_like(): argument 'fill_value' (position 2) must be Number, not str",
    ),
    (
        "full_like nan int",
        lambda: torch.full_like(torch.ones(2, dtype=torch.int64), nan),
        RuntimeError,
        "value cannot be converted to type int64_t without overflow",
    ),
    (
        "zeros_like(3)",
        lambda: torch.zeros_like(3),
        TypeError,
        "zeros_like(): argument 'input' (position 1) must be Tensor, not int",
    ),
    (
        "ones_like([1])",
        lambda: torch.ones_like([1]),
        TypeError,
        "ones_like(): argument 'input' (position 1) must be Tensor, not list",
    ),
    # tensor(): data that is not numbers
    ("tensor('a')", lambda: torch.tensor("a"), TypeError, "new(): invalid data type 'str'"),
    ("tensor(['a'])", lambda: torch.tensor(["a"]), ValueError, "too many dimensions 'str'"),
    (
        "tensor([1, 'a'])",
        lambda: torch.tensor([1, "a"]),
        TypeError,
        "new(): invalid data type 'str'",
    ),
    ("tensor(b'ab')", lambda: torch.tensor(b"ab"), TypeError, "new(): invalid data type 'bytes'"),
    ("tensor(None)", lambda: torch.tensor(None), RuntimeError, "Could not infer dtype of NoneType"),
    (
        "tensor([1, None])",
        lambda: torch.tensor([1, None]),
        RuntimeError,
        "Could not infer dtype of NoneType",
    ),
    ("tensor({})", lambda: torch.tensor({}), RuntimeError, "Could not infer dtype of dict"),
    (
        "tensor(object())",
        lambda: torch.tensor(object()),
        RuntimeError,
        "Could not infer dtype of object",
    ),
    ("tensor(2**64)", lambda: torch.tensor(2**64), ValueError, "Overflow when unpacking long long"),
    (
        "tensor([-2**63 - 1])",
        lambda: torch.tensor([-(2**63) - 1]),
        ValueError,
        "Overflow when unpacking long long",
    ),
    (
        "tensor([t2, t2])",
        lambda: torch.tensor([torch.ones(2), torch.ones(2)]),
        ValueError,
        "only one element tensors can be converted to Python scalars",
    ),
    (
        "tensor([[1], [2, 3]])",
        lambda: torch.tensor([[1], [2, 3]]),
        ValueError,
        "expected sequence of length 1 at dim 1 (got 2)",
    ),
    ("as_tensor('a')", lambda: torch.as_tensor("a"), TypeError, "new(): invalid data type 'str'"),
    (
        "tensor int requires_grad",
        lambda: torch.tensor([1], requires_grad=True),
        RuntimeError,
        "Only Tensors of floating point and complex dtype can require gradients",
    ),
]


@pytest.mark.parametrize("label, call, cls, text", CASES, ids=[c[0] for c in CASES])
def test_factory_error(label, call, cls, text):
    with pytest.raises(cls) as e:
        call()
    assert type(e.value) is cls
    assert str(e.value) == text


@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda: torch.arange(0, 0), []),
        (lambda: torch.arange(10, 0, -3), [10, 7, 4, 1]),
        (lambda: torch.linspace(0, 1, 1), [0.0]),
        (lambda: torch.linspace(0, 1, 0), []),
        (lambda: torch.full((2,), -1, dtype=torch.uint8), [255, 255]),
        (lambda: torch.full((2,), torch.tensor(1.5)), [1.5, 1.5]),
        (lambda: torch.full((1,), 1e300, dtype=torch.float16), [inf]),
        (lambda: torch.ones([2, True]).shape, (2, 1)),
        (lambda: torch.randint(0, 2, (3,), dtype=torch.bool).dtype, torch.bool),
        (lambda: torch.eye(2, dtype=torch.bool).tolist(), [[True, False], [False, True]]),
        (lambda: torch.tensor([[], []]).shape, (2, 0)),
    ],
)
def test_factory_edge_values(call, expected):
    out = call()
    if hasattr(out, "tolist"):
        out = out.tolist()
    assert out == expected if not isinstance(expected, tuple) else tuple(out) == expected


@pytest.mark.parametrize(
    "dtype, name",
    [("float32", "FloatTensor"), ("float64", "DoubleTensor"), ("int64", "LongTensor")],
)
def test_expand_error_names_the_tensor_type(dtype, name):
    # Issue 7 §5: messages name ferrograd's types, for the tensor's actual dtype.
    t = torch.ones(2, 3, dtype=getattr(torch, dtype))
    with pytest.raises(RuntimeError) as e:
        t.expand(3)
    assert str(e.value) == (
        f"expand({MOD}.{name}{{[2, 3]}}, size=[3]): the number of sizes provided (1) must be"
        " greater or equal to the number of dimensions in the tensor (2)"
    )


@pytest.mark.parametrize(
    "value, dtype, cls, text",
    [
        (300, "uint8", RuntimeError, "value cannot be converted to type uint8 without overflow"),
        (-300, "uint8", RuntimeError, "value cannot be converted to type uint8 without overflow"),
        (nan, "uint8", RuntimeError, "value cannot be converted to type uint8 without overflow"),
        (2**40, "int32", RuntimeError, "value cannot be converted to type int32 without overflow"),
        (1e300, "int64", RuntimeError, "value cannot be converted to type int64 without overflow"),
        (nan, "int64", RuntimeError, "value cannot be converted to type int64 without overflow"),
        (1j, "int64", TypeError, "'complex' object cannot be interpreted as an integer"),
        (1j, "float32", TypeError, "must be real number, not complex"),
    ],
)
def test_tensor_data_that_does_not_fit_the_dtype(value, dtype, cls, text):
    with pytest.raises(cls) as e:
        torch.tensor([value], dtype=getattr(torch, dtype))
    assert type(e.value) is cls and str(e.value) == text


@pytest.mark.parametrize(
    "value, dtype, expected",
    [
        (-1, "uint8", [255]),
        (1e300, "float32", [inf]),
        (2.5, "bool", [True]),
        (1j, "complex64", [1j]),
    ],
)
def test_tensor_data_that_fits_the_dtype(value, dtype, expected):
    assert torch.tensor([value], dtype=getattr(torch, dtype)).tolist() == expected


def test_complex_linspace_has_a_real_value_per_step():
    # The steps are real values cast to complex (the factory used to pair them up as
    # (re, im) like a random fill, and failed on the element count); torch 2.15 gives
    # [0, 0.5, 1] with zero imaginary parts.
    x = torch.linspace(0, 1, 3, dtype=torch.complex64)
    assert x.dtype == torch.complex64 and x.tolist() == [0j, 0.5 + 0j, 1 + 0j]
