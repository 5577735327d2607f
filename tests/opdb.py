"""The op database: one entry per op drives every generated test in test_ops.py.

Modelled on PyTorch's OpInfo (torch/testing/_internal/opinfo/core.py), cut down to what
our tests use. An entry names the op, calls it (`op`), says what numpy computes for the
same numbers (`ref`), and makes its samples (`sample_inputs(dtype)`).

Samples hold numpy arrays, never tensors: the test harness turns them into tensors
(`to_tensor`), so the reference sees exactly the numbers the op sees. An array wrapped
in `NonContig` becomes a tensor with the same values but a non-contiguous layout (a
transposed `.mT` view, or a stepped `[..., ::2]` slice of a bigger tensor).

Adding an op = adding one entry to `OP_DB`. Samples should cover broadcasting,
non-contiguous inputs and zero-size inputs wherever the op allows them, and stay away
from points where the op is not differentiable (kinks, ties), since gradcheck runs on
every sample.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import ferrograd as torch
import numpy as np

# --------------------------------------------------------------------------- samples


@dataclass(frozen=True)
class NonContig:
    """`value` delivered as a non-contiguous tensor: how="T" is a `.mT` view of the
    transposed copy, how="step" takes every other element of the last dim of a bigger
    tensor (whose other elements are junk, so a wrong stride shows)."""

    value: np.ndarray
    how: str


def transposed(a: np.ndarray) -> NonContig:
    return NonContig(a, "T")


def stepped(a: np.ndarray) -> NonContig:
    return NonContig(a, "step")


@dataclass
class SampleInput:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    # Expected `grad_fn.name()` of the (first) output, where pinned for this sample.
    grad_fn: str | None = None
    # What the sample exercises, for reading test failures.
    desc: str = ""


@dataclass
class OpInfo:
    name: str
    op: Callable[..., Any]
    ref: Callable[..., Any]
    sample_inputs: Callable[[Any], list[SampleInput]]
    supports_grad: bool = True
    supports_gradgrad: bool = True
    # complex128 samples (the same sample function called with np.complex128) pass gradcheck.
    supports_complex: bool = False
    # Positions in `args` that gradcheck differentiates; None = every floating array.
    differentiable_args: tuple[int, ...] | None = None
    # Expected grad_fn names (checked against torch): a str pins the first sample's,
    # a dict {sample index: name} pins those samples'; a sample's own `grad_fn` wins.
    grad_fn_name: str | dict[int, str] | None = None
    # Forward tolerance overrides per dtype name, e.g. {"float32": (rtol, atol)}.
    tol: dict[str, tuple[float, float]] = field(default_factory=dict)

    def samples(self, dtype) -> list[SampleInput]:
        samples = self.sample_inputs(np.dtype(dtype))
        names = self.grad_fn_name
        for i, name in ({0: names} if isinstance(names, str) else names or {}).items():
            samples[i].grad_fn = samples[i].grad_fn or name
        return samples


class Maker:
    """Deterministic sample arrays. Draws are made in float64 and then cast, so the
    float32 samples are the float64 ones rounded (the float32-vs-float64 gradient test
    relies on that); complex dtypes draw an imaginary part too."""

    def __init__(self, dtype, seed: str):
        self.dtype = np.dtype(dtype)
        self.rng = np.random.default_rng(zlib.crc32(seed.encode()))

    def __call__(self, *shape, low=-2.0, high=2.0, avoid=(), gap=0.1) -> np.ndarray:
        x = self.rng.uniform(low, high, size=shape)
        for p in avoid:  # push values off a kink or pole, keeping the sign of x - p
            near = np.abs(x - p) < gap
            x = np.where(near, p + np.where(x >= p, gap, -gap), x)
        if self.dtype.kind == "c":
            x = x + 1j * self.rng.uniform(low, high, size=shape)
        return np.asarray(x, self.dtype)  # asarray: 0-dim stays an array, not a scalar

    def distinct(self, *shape) -> np.ndarray:
        """Values without ties, at least 0.25 apart (for max/min and their indices)."""
        n = math.prod(shape)
        x = (self.rng.permutation(n) + self.rng.uniform(0.0, 0.5, size=n)) * 0.5 - n / 4
        return x.reshape(shape).astype(self.dtype)


def unary_samples(low=-2.0, high=2.0, avoid=()):
    """Samples for an elementwise unary op whose domain is (low, high) minus `avoid`:
    2-D, 3-D, 0-dim, transposed, stepped and zero-size inputs."""

    def sample_inputs(dtype):
        def make(*shape):
            return Maker(dtype, f"unary{shape}")(*shape, low=low, high=high, avoid=avoid)

        return [
            SampleInput((make(3, 4),), desc="2-D"),
            SampleInput((make(2, 3, 4),), desc="3-D"),
            SampleInput((make(),), desc="0-dim"),
            SampleInput((transposed(make(4, 3)),), desc="transposed"),
            SampleInput((stepped(make(3, 4)),), desc="stepped slice"),
            SampleInput((make(0, 3),), desc="zero-size"),
        ]

    return sample_inputs


def binary_samples(low=-2.0, high=2.0, avoid_other=(), scalar=1.5, extra=None):
    """Samples for a broadcasting binary op: tensor with tensor (same shape, broadcast
    both ways, 0-dim, non-contiguous, zero-size), tensor with Python scalar and the
    reflected form (`scalar - x`). The second operand avoids `avoid_other` (e.g. 0 for
    the divisor). `extra(make, other)` returns more samples."""

    def sample_inputs(dtype):
        mk = Maker(dtype, "binary")

        def make(*shape):
            return mk(*shape, low=low, high=high)

        def other(*shape):
            return mk(*shape, low=low, high=high, avoid=avoid_other)

        samples = [
            SampleInput((make(3, 4), other(3, 4)), desc="same shape"),
            SampleInput((make(3, 1), other(1, 4)), desc="broadcast both"),
            SampleInput((make(2, 3, 4), other(4)), desc="broadcast rhs"),
            SampleInput((make(4), other(2, 3, 4)), desc="broadcast lhs"),
            SampleInput((make(3, 4), other()), desc="0-dim rhs"),
            SampleInput((transposed(make(3, 4)), stepped(other(3, 4))), desc="non-contiguous"),
            SampleInput((make(0, 3), other(3)), desc="zero-size"),
            SampleInput((make(3, 4), scalar), desc="python scalar"),
            SampleInput((scalar, other(3, 4)), desc="reflected scalar"),
        ]
        return samples + (extra(make, other) if extra else [])

    return sample_inputs


def alpha_samples(make, other):
    return [SampleInput((make(3, 4), other(4)), {"alpha": 2}, desc="alpha=")]


# --------------------------------------------------------------------------- refs


def ref_dtype(d):
    """A torch dtype in a sample's kwargs, as numpy's dtype (by name: float64 ...)."""
    return np.dtype(str(d).rsplit(".", 1)[-1])


def _np_sum(a, dim=None, keepdim=False, dtype=None):
    return np.sum(a, axis=dim, keepdims=keepdim, dtype=dtype)


def _np_mean(a, dim=None, keepdim=False, dtype=None):
    return np.mean(a, axis=dim, keepdims=keepdim, dtype=dtype)


def _np_reduce_with_index(fn, argfn):
    def ref(a, dim=None, keepdim=False):
        if dim is None:
            return fn(a)
        return fn(a, axis=dim, keepdims=keepdim), argfn(a, axis=dim, keepdims=keepdim)

    return ref


def _np_split(a, sizes, dim):
    return tuple(np.split(a, np.cumsum(sizes)[:-1], axis=dim))


def _split_sizes(length, split_size_or_sections):
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        return [min(s, length - i) for i in range(0, length, s)] or [0]
    return list(split_size_or_sections)


def _chunk_sizes(length, chunks):
    return _split_sizes(length, max(1, -(-length // chunks)))


def _np_squeeze(a, dim=None):
    if dim is None:
        return np.squeeze(a)
    return np.squeeze(a, dim) if a.shape[dim] == 1 else a


def _np_unflatten(a, dim, sizes):
    dim = dim % a.ndim
    sizes = list(sizes)
    if -1 in sizes:
        sizes[sizes.index(-1)] = a.shape[dim] // -math.prod(sizes)
    return a.reshape(a.shape[:dim] + tuple(sizes) + a.shape[dim + 1 :])


def _np_flatten(a, start_dim=0, end_dim=-1):
    if a.ndim == 0:
        return a.reshape(1)
    s, e = start_dim % a.ndim, end_dim % a.ndim
    return a.reshape(a.shape[:s] + (math.prod(a.shape[s : e + 1]),) + a.shape[e + 1 :])


def _np_as_strided(a, size, stride, storage_offset=0):
    flat = np.ascontiguousarray(a).reshape(-1)[storage_offset:]
    return np.lib.stride_tricks.as_strided(flat, size, [s * flat.itemsize for s in stride]).copy()


def _np_clamp(a, min=None, max=None):
    return np.clip(a, min, max)


def _np_sigmoid(a):
    return 1 / (1 + np.exp(-a))


def _np_relu(a):
    return np.maximum(a, 0).astype(a.dtype)


# --------------------------------------------------------------------------- sample sets


def _sum_mean_samples(dtype):
    make = Maker(dtype, "reduce")
    return [
        SampleInput((make(3, 4),), desc="all"),
        SampleInput((make(3, 4),), {"dim": 1}, desc="dim int"),
        SampleInput((make(2, 3, 4),), {"dim": -1, "keepdim": True}, desc="negative dim, keepdim"),
        SampleInput((make(2, 3, 4),), {"dim": (0, 2)}, desc="dim tuple"),
        SampleInput((make(2, 3, 4),), {"dim": (2, 0), "keepdim": True}, desc="dim tuple keepdim"),
        SampleInput((make(3, 4),), {"dtype": torch.float64}, desc="dtype="),
        SampleInput((make(),), desc="0-dim"),
        SampleInput((transposed(make(4, 3)),), {"dim": 0}, desc="transposed"),
        SampleInput((stepped(make(3, 4)),), desc="stepped"),
        SampleInput((make(0, 3),), {"dim": 1}, desc="zero-size"),
    ]


def _max_min_samples(dtype):
    make = Maker(dtype, "maxmin").distinct
    return [
        SampleInput((make(3, 4),), desc="full reduction"),
        SampleInput((make(3, 4),), {"dim": 1}, desc="dim"),
        SampleInput((make(2, 3, 4),), {"dim": -2, "keepdim": True}, desc="negative dim, keepdim"),
        SampleInput((transposed(make(4, 3)),), {"dim": 0}, desc="transposed"),
        SampleInput((stepped(make(3, 4)),), desc="stepped, full"),
        SampleInput((make(0, 3),), {"dim": 1}, desc="zero-size along kept dim"),
    ]


def _clamp_samples(dtype):
    make = Maker(dtype, "clamp")
    return [
        SampleInput((make(3, 4, avoid=(-0.5, 0.5)),), {"min": -0.5, "max": 0.5}, desc="both"),
        SampleInput((make(3, 4, avoid=(0.25,)),), {"min": 0.25}, desc="min"),
        SampleInput((make(3, 4, avoid=(-0.25,)),), {"max": -0.25}, desc="max"),
        SampleInput(
            (transposed(make(4, 3, avoid=(-1, 1))),),
            {"min": -1, "max": 1},
            desc="transposed, int bounds",
        ),
        SampleInput((make(0, 3),), {"min": 0.0}, desc="zero-size"),
    ]


def _pow_samples(dtype):
    make = Maker(dtype, "pow")

    def base(*shape):
        return make(*shape, low=0.5, high=2.0)

    return [
        SampleInput((make(3, 4), 2), desc="int exponent"),
        SampleInput((make(3, 4), 3), desc="odd int exponent, negative bases"),
        SampleInput((base(3, 4), 0.5), desc="float exponent"),
        SampleInput((base(3, 4), -1.5), desc="negative exponent"),
        SampleInput((base(3, 4), make(3, 4)), desc="tensor exponent"),
        SampleInput((base(3, 1), make(4)), desc="tensor exponent, broadcast"),
        SampleInput((transposed(base(3, 4)), stepped(make(3, 4))), desc="non-contiguous"),
        SampleInput((2.0, make(3, 4)), desc="reflected scalar base"),
        SampleInput((base(0, 3), 2), desc="zero-size"),
    ]


def _matmul_samples(dtype):
    make = Maker(dtype, "matmul")
    return [
        SampleInput((make(3, 4), make(4, 2)), desc="2-D @ 2-D"),
        SampleInput((make(4), make(4)), desc="1-D @ 1-D"),
        SampleInput((make(3, 4), make(4)), desc="2-D @ 1-D"),
        SampleInput((make(4), make(4, 2)), desc="1-D @ 2-D"),
        SampleInput((make(2, 3, 4), make(4, 2)), desc="batched @ 2-D"),
        SampleInput((make(2, 3, 4), make(4)), desc="batched @ 1-D"),
        SampleInput((make(4), make(2, 4, 3)), desc="1-D @ batched"),
        SampleInput((make(3, 4), make(2, 4, 2)), desc="2-D @ batched"),
        SampleInput((make(2, 3, 4), make(2, 4, 2)), desc="batched @ batched"),
        SampleInput((make(2, 1, 3, 4), make(5, 4, 2)), desc="batch broadcast"),
        SampleInput((transposed(make(3, 4)), stepped(make(4, 2))), desc="non-contiguous"),
        SampleInput((make(0, 3), make(3, 2)), desc="zero rows"),
        SampleInput((make(2, 0), make(0, 3)), desc="zero inner dim"),
    ]


def _mm_samples(dtype):
    make = Maker(dtype, "mm")
    return [
        SampleInput((make(3, 4), make(4, 2))),
        SampleInput((transposed(make(3, 4)), transposed(make(4, 2))), desc="transposed"),
        SampleInput((stepped(make(3, 4)), make(4, 2)), desc="stepped"),
        SampleInput((make(0, 4), make(4, 2)), desc="zero rows"),
        SampleInput((make(3, 0), make(0, 2)), desc="zero inner dim"),
    ]


def _bmm_samples(dtype):
    make = Maker(dtype, "bmm")
    return [
        SampleInput((make(2, 3, 4), make(2, 4, 2))),
        SampleInput((transposed(make(2, 3, 4)), stepped(make(2, 4, 2))), desc="non-contiguous"),
        SampleInput((make(0, 3, 4), make(0, 4, 2)), desc="zero batch"),
    ]


def _where_samples(dtype):
    make = Maker(dtype, "where")
    mask = np.array(
        [[True, False, True, True], [False, False, True, False], [True, True, False, False]]
    )
    return [
        SampleInput((mask, make(3, 4), make(3, 4)), desc="same shape"),
        SampleInput((mask[:, :1], make(1, 4), make(3, 4)), desc="broadcast"),
        SampleInput((mask, make(3, 4), 0.0), desc="scalar other"),
        SampleInput((mask, transposed(make(3, 4)), stepped(make(3, 4))), desc="non-contiguous"),
        SampleInput((np.zeros((0, 4), bool), make(0, 4), make(4)), desc="zero-size"),
    ]


def _one_tensor(*cases):
    """Samples of one tensor plus kwargs: each case is (shape, kwargs[, how, desc]),
    how in {None, "T", "step"}."""

    def sample_inputs(dtype):
        make = Maker(dtype, f"view{cases}")
        out = []
        for shape, kwargs, *rest in cases:
            how = rest[0] if rest else None
            desc = rest[1] if len(rest) > 1 else ""
            a = make(*shape)
            arg = a if how is None else NonContig(a, how)
            out.append(SampleInput((arg,), kwargs, desc=desc))
        return out

    return sample_inputs


def _expand_as_samples(dtype):
    make = Maker(dtype, "expand_as")
    return [
        SampleInput((make(3, 1), make(2, 3, 4))),
        SampleInput((stepped(make(3, 1, 4)), make(2, 3, 2, 4)), desc="stepped"),
        SampleInput((make(1), make(0, 3)), desc="zero-size"),
    ]


INDEX_KEYS = [
    1,
    -1,
    (slice(None), 2),
    (slice(1, None), slice(None, None, 2)),
    (None, Ellipsis, -1),
    (Ellipsis, None),
    (0, slice(None), None, slice(1, 3)),
    (slice(-100, 100, 3),),
    (slice(2, 1),),
    Ellipsis,
]


def _getitem_samples(dtype):
    make = Maker(dtype, "getitem")
    x = make(3, 4, 5)
    return [SampleInput((x,), {"key": key}, desc=repr(key)) for key in INDEX_KEYS] + [
        SampleInput((stepped(make(3, 4)),), {"key": (slice(None, None, 2), -1)}, desc="stepped"),
        SampleInput((make(0, 3),), {"key": (Ellipsis, 1)}, desc="zero-size"),
    ]


# --------------------------------------------------------------------------- entries

# torch.matmul decomposes into dot / mv / mm, or mm/bmm on reshaped operands with an
# _unsafe_view of the result; by sample index of _matmul_samples.
MATMUL_GRAD_FNS = {
    0: "MmBackward0",
    1: "DotBackward0",
    2: "MvBackward0",
    4: "UnsafeViewBackward0",
    5: "UnsafeViewBackward0",
    6: "UnsafeViewBackward0",
    8: "UnsafeViewBackward0",
    9: "UnsafeViewBackward0",
}


def _np_erf(x):
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def unary(name, fn, ref, grad_fn_name, low=-2.0, high=2.0, avoid=(), **flags) -> OpInfo:
    """An elementwise unary op whose domain is (low, high) minus the points `avoid`."""
    return OpInfo(
        name, fn, ref, unary_samples(low, high, avoid), grad_fn_name=grad_fn_name, **flags
    )


def binary(name, fn, ref, grad_fn_name, samples=None, **flags) -> OpInfo:
    """A broadcasting binary op; default samples from `binary_samples()`."""
    return OpInfo(name, fn, ref, samples or binary_samples(), grad_fn_name=grad_fn_name, **flags)


def _with_kwargs(fn, operator):
    """The Python operator for plain samples (covers `2 - x`), `fn` when kwargs are given."""
    return lambda a, b, **kw: fn(a, b, **kw) if kw else operator(a, b)


def view_op(name, op, ref, *cases, **flags) -> OpInfo:
    return OpInfo(name, op, ref, _one_tensor(*cases), **flags)


OP_DB: list[OpInfo] = [
    # -- elementwise binary (broadcasting, Python scalars, reflected operators)
    binary(
        "add",
        _with_kwargs(torch.add, lambda a, b: a + b),
        lambda a, b, alpha=1: a + alpha * b,
        "AddBackward0",
        binary_samples(extra=alpha_samples),
        supports_complex=True,
    ),
    binary(
        "sub",
        _with_kwargs(torch.sub, lambda a, b: a - b),
        lambda a, b, alpha=1: a - alpha * b,
        {0: "SubBackward0", 7: "SubBackward0", 8: "RsubBackward1"},
        binary_samples(extra=alpha_samples),
    ),
    binary("mul", lambda a, b: a * b, np.multiply, "MulBackward0", supports_complex=True),
    binary(
        "div",
        lambda a, b: a / b,
        np.divide,
        {
            0: "DivBackward0",
            7: "DivBackward0",
            8: "MulBackward0",
        },  # 2.5 / x is 2.5 * x.reciprocal()
        binary_samples(avoid_other=(0.0,), scalar=2.5),
        supports_complex=True,
    ),
    OpInfo(
        "pow",
        lambda a, b: a**b,
        np.power,
        _pow_samples,
        grad_fn_name={0: "PowBackward0", 4: "PowBackward1", 7: "PowBackward2"},
    ),
    # -- elementwise unary
    unary("neg", lambda x: -x, np.negative, "NegBackward0"),
    unary("exp", torch.exp, np.exp, "ExpBackward0", supports_complex=True),
    unary("log", torch.log, np.log, "LogBackward0", low=0.1, high=3.0),
    unary("sin", torch.sin, np.sin, "SinBackward0", supports_complex=True),
    unary("cos", torch.cos, np.cos, "CosBackward0"),
    unary("tanh", torch.tanh, np.tanh, "TanhBackward0"),
    unary("sigmoid", torch.sigmoid, _np_sigmoid, "SigmoidBackward0"),
    unary("relu", torch.relu, _np_relu, "ReluBackward0", avoid=(0.0,)),
    unary("sqrt", torch.sqrt, np.sqrt, "SqrtBackward0", low=0.1, high=3.0),
    unary("rsqrt", torch.rsqrt, lambda x: 1 / np.sqrt(x), "RsqrtBackward0", low=0.1, high=3.0,
          supports_complex=True),
    unary("tan", torch.tan, np.tan, "TanBackward0", low=-1.2, high=1.2, supports_complex=True),
    unary("expm1", torch.expm1, np.expm1, "Expm1Backward0"),
    unary("log1p", torch.log1p, np.log1p, "Log1PBackward0", low=-0.9, high=3.0),
    unary("erf", torch.erf, _np_erf, "ErfBackward0"),
    unary("asin", torch.asin, np.arcsin, "AsinBackward0", low=-0.9, high=0.9),
    unary("acos", torch.acos, np.arccos, "AcosBackward0", low=-0.9, high=0.9),
    unary("atan", torch.atan, np.arctan, "AtanBackward0"),
    unary("sinh", torch.sinh, np.sinh, "SinhBackward0", supports_complex=True),
    unary("cosh", torch.cosh, np.cosh, "CoshBackward0", supports_complex=True),
    unary("asinh", torch.asinh, np.arcsinh, "AsinhBackward0"),
    unary("acosh", torch.acosh, np.arccosh, "AcoshBackward0", low=1.1, high=3.0),
    unary("atanh", torch.atanh, np.arctanh, "AtanhBackward0", low=-0.9, high=0.9),
    unary("exp2", torch.exp2, np.exp2, "Exp2Backward0", supports_complex=True),
    unary("log2", torch.log2, np.log2, "Log2Backward0", low=0.1, high=3.0, supports_complex=True),
    unary("log10", torch.log10, np.log10, "Log10Backward0", low=0.1, high=3.0,
          supports_complex=True),
    unary("abs", torch.abs, np.abs, "AbsBackward0", avoid=(0.0,), supports_complex=True),
    unary("clone", torch.clone, np.copy, "CloneBackward0"),
    unary("contiguous", lambda x: x.contiguous(), np.copy, {3: "CloneBackward0"}),
    OpInfo(
        "clamp",
        torch.clamp,
        _np_clamp,
        _clamp_samples,
        grad_fn_name={0: "ClampBackward1", 1: "ClampBackward1"},
    ),
    OpInfo("where", torch.where, np.where, _where_samples, grad_fn_name="WhereBackward0"),
    # -- reductions
    OpInfo(
        "sum",
        torch.sum,
        _np_sum,
        _sum_mean_samples,
        grad_fn_name={0: "SumBackward0", 1: "SumBackward1"},
    ),
    OpInfo(
        "mean",
        torch.mean,
        _np_mean,
        _sum_mean_samples,
        grad_fn_name={0: "MeanBackward0", 1: "MeanBackward1"},
    ),
    OpInfo(
        "max",
        torch.max,
        _np_reduce_with_index(np.max, np.argmax),
        _max_min_samples,
        grad_fn_name={0: "MaxBackward1", 1: "MaxBackward0"},
    ),
    OpInfo(
        "min",
        torch.min,
        _np_reduce_with_index(np.min, np.argmin),
        _max_min_samples,
        grad_fn_name={0: "MinBackward1", 1: "MinBackward0"},
    ),
    # -- matrix products
    OpInfo("matmul", torch.matmul, np.matmul, _matmul_samples, grad_fn_name=MATMUL_GRAD_FNS),
    OpInfo(
        "__matmul__", lambda a, b: a @ b, np.matmul, _matmul_samples, grad_fn_name=MATMUL_GRAD_FNS
    ),
    OpInfo("mm", torch.mm, np.matmul, _mm_samples, grad_fn_name="MmBackward0"),
    OpInfo("bmm", torch.bmm, np.matmul, _bmm_samples, grad_fn_name="BmmBackward0"),
    # -- views and shape ops
    view_op(
        "view",
        lambda x, shape: x.view(shape),
        lambda a, shape: a.reshape(shape),
        ((3, 4), {"shape": (2, 6)}),
        ((3, 4), {"shape": (-1,)}),
        ((2, 3, 4), {"shape": (6, -1)}),
        ((4, 3), {"shape": (2, 2, 3)}, "step", "stepped, split leading dim"),
        ((), {"shape": (1, 1)}, None, "0-dim"),
        ((0, 3), {"shape": (3, 0)}, None, "zero-size"),
        grad_fn_name="ViewBackward0",
    ),
    view_op(
        "reshape",
        lambda x, shape: x.reshape(shape),
        lambda a, shape: a.reshape(shape),
        ((3, 4), {"shape": (4, 3)}),
        ((2, 3, 4), {"shape": (-1, 2)}),
        ((4, 3), {"shape": (-1,)}, "T", "transposed (copies)"),
        ((3, 4), {"shape": (2, 6)}, "step", "stepped (still a view)"),
        ((0, 3), {"shape": (-1, 3)}, None, "zero-size"),
        grad_fn_name={0: "ViewBackward0", 2: "UnsafeViewBackward0"},
    ),
    view_op(
        "permute",
        lambda x, dims: x.permute(dims),
        lambda a, dims: np.transpose(a, dims),
        ((2, 3, 4), {"dims": (2, 0, 1)}),
        ((2, 3, 4), {"dims": (-1, 1, 0)}),
        ((3, 4), {"dims": (1, 0)}, "step", "stepped"),
        ((0, 3), {"dims": (1, 0)}, None, "zero-size"),
        grad_fn_name="PermuteBackward0",
    ),
    view_op(
        "transpose",
        lambda x, dim0, dim1: x.transpose(dim0, dim1),
        lambda a, dim0, dim1: np.swapaxes(a, dim0, dim1),
        ((3, 4), {"dim0": 0, "dim1": 1}),
        ((2, 3, 4), {"dim0": -1, "dim1": 0}),
        ((4, 3), {"dim0": 0, "dim1": 1}, "T", "transposed"),
        ((0, 3), {"dim0": 1, "dim1": 0}, None, "zero-size"),
        grad_fn_name="TransposeBackward0",
    ),
    view_op(
        "t",
        lambda x: x.t(),
        lambda a: a.T,
        ((3, 4), {}),
        ((4,), {}, None, "1-D"),
        ((3, 4), {}, "step", "stepped"),
        ((0, 3), {}, None, "zero-size"),
        grad_fn_name="TBackward0",
    ),
    view_op(
        "T",
        lambda x: x.T,
        lambda a: a.T,
        ((3, 4), {}),
        ((3, 4), {}, "T", "transposed"),
        ((0, 3), {}),
        grad_fn_name="PermuteBackward0",
    ),
    view_op(
        "mT",
        lambda x: x.mT,
        lambda a: np.swapaxes(a, -1, -2),
        ((2, 3, 4), {}),
        ((3, 4), {}, "step", "stepped"),
        ((2, 0, 3), {}, None, "zero-size"),
        grad_fn_name="TransposeBackward0",
    ),
    view_op(
        "expand",
        lambda x, size: x.expand(size),
        lambda a, size: np.broadcast_to(
            a, [a.shape[i - len(size) + a.ndim] if s == -1 else s for i, s in enumerate(size)]
        ),
        ((3, 1), {"size": (3, 4)}),
        ((3, 1), {"size": (2, -1, 4)}),
        ((), {"size": (2, 3)}, None, "0-dim"),
        ((3, 1, 2), {"size": (3, 4, 2)}, "step", "stepped"),
        ((1,), {"size": (0, 3)}, None, "to zero-size"),
        ((0, 1), {"size": (0, 3)}, None, "zero-size"),
        grad_fn_name="ExpandBackward0",
    ),
    OpInfo(
        "expand_as",
        lambda x, other: x.expand_as(other),
        lambda a, b: np.broadcast_to(a, b.shape),
        _expand_as_samples,
        differentiable_args=(0,),
        grad_fn_name="ExpandBackward0",
    ),
    view_op(
        "squeeze",
        lambda x, dim=None: x.squeeze() if dim is None else x.squeeze(dim),
        _np_squeeze,
        ((3, 1, 4, 1), {}),
        ((3, 1, 4), {"dim": 1}),
        ((3, 1, 4), {"dim": -1}, None, "not size 1: no-op"),
        ((1, 4), {"dim": 0}, "step", "stepped"),
        ((0, 1), {}, None, "zero-size"),
        grad_fn_name={0: "SqueezeBackward0", 1: "SqueezeBackward1"},
    ),
    view_op(
        "unsqueeze",
        lambda x, dim: x.unsqueeze(dim),
        lambda a, dim: np.expand_dims(a, dim),
        ((3, 4), {"dim": 1}),
        ((3, 4), {"dim": -1}),
        ((), {"dim": 0}, None, "0-dim"),
        ((4, 3), {"dim": 0}, "T", "transposed"),
        ((0, 3), {"dim": 2}, None, "zero-size"),
        grad_fn_name="UnsqueezeBackward0",
    ),
    view_op(
        "flatten",
        lambda x, **kw: x.flatten(**kw),
        _np_flatten,
        ((2, 3, 4), {}),
        ((2, 3, 4), {"start_dim": 1}),
        ((2, 3, 4, 2), {"start_dim": 1, "end_dim": -2}),
        ((4, 3), {}, "T", "transposed (copies)"),
        ((), {}, None, "0-dim"),
        ((0, 3), {}, None, "zero-size"),
        grad_fn_name={0: "ViewBackward0", 3: "UnsafeViewBackward0"},
    ),
    view_op(
        "unflatten",
        lambda x, dim, sizes: x.unflatten(dim, sizes),
        _np_unflatten,
        ((3, 4), {"dim": 1, "sizes": (2, 2)}),
        ((6, 4), {"dim": 0, "sizes": (3, -1)}),
        ((3, 6), {"dim": -1, "sizes": (3, 2)}, "step", "stepped"),
        ((0, 6), {"dim": 1, "sizes": (2, 3)}, None, "zero-size"),
        grad_fn_name="ViewBackward0",
    ),
    view_op(
        "narrow",
        lambda x, dim, start, length: x.narrow(dim, start, length),
        lambda a, dim, start, length: np.take(
            a, range(start % a.shape[dim], start % a.shape[dim] + length), axis=dim
        ),
        ((3, 4), {"dim": 1, "start": 1, "length": 2}),
        ((3, 4), {"dim": 0, "start": -2, "length": 2}),
        ((4, 3), {"dim": 1, "start": 0, "length": 0}, "T", "transposed, empty"),
        ((0, 4), {"dim": 1, "start": 2, "length": 2}, None, "zero-size"),
        grad_fn_name="SliceBackward0",
    ),
    view_op(
        "select",
        lambda x, dim, index: x.select(dim, index),
        lambda a, dim, index: np.take(a, index, axis=dim),
        ((3, 4), {"dim": 1, "index": 2}),
        ((2, 3, 4), {"dim": -2, "index": -1}),
        ((4, 3), {"dim": 0, "index": 0}, "T", "transposed"),
        ((0, 3), {"dim": 1, "index": 1}, None, "zero-size"),
        grad_fn_name="SelectBackward0",
    ),
    view_op(
        "unbind",
        lambda x, dim=0: x.unbind(dim),
        lambda a, dim=0: tuple(np.moveaxis(a, dim, 0)),
        ((3, 4), {}),
        ((2, 3, 4), {"dim": -1}),
        ((4, 3), {"dim": 1}, "T", "transposed"),
        ((2, 0), {}, None, "zero-size"),
        grad_fn_name="UnbindBackward0",
    ),
    view_op(
        "split",
        lambda x, split_size_or_sections, dim=0: x.split(split_size_or_sections, dim),
        lambda a, split_size_or_sections, dim=0: _np_split(
            a, _split_sizes(a.shape[dim], split_size_or_sections), dim
        ),
        ((5, 3), {"split_size_or_sections": 2}),
        ((3, 5), {"split_size_or_sections": [1, 3, 1], "dim": 1}),
        ((4, 3), {"split_size_or_sections": 3, "dim": -1}, "T", "transposed"),
        ((0, 3), {"split_size_or_sections": 2, "dim": 1}, None, "zero-size"),
        grad_fn_name={0: "SplitBackward0", 1: "SplitWithSizesBackward0"},
    ),
    view_op(
        "chunk",
        lambda x, chunks, dim=0: x.chunk(chunks, dim),
        lambda a, chunks, dim=0: _np_split(a, _chunk_sizes(a.shape[dim], chunks), dim),
        ((5, 3), {"chunks": 2}),
        ((3, 6), {"chunks": 4, "dim": 1}),
        ((3, 4), {"chunks": 3, "dim": -1}, "step", "stepped"),
        ((0, 3), {"chunks": 2, "dim": 1}, None, "zero-size"),
        grad_fn_name="SplitBackward0",
    ),
    view_op(
        "diagonal",
        lambda x, **kw: x.diagonal(**kw),
        lambda a, offset=0, dim1=0, dim2=1: np.diagonal(a, offset, dim1, dim2),
        ((3, 4), {}),
        ((3, 4), {"offset": 1}),
        ((4, 3), {"offset": -1}, "T", "transposed"),
        ((2, 3, 3), {"dim1": 1, "dim2": -1}),
        ((0, 3), {}, None, "zero-size"),
        grad_fn_name="DiagonalBackward0",
    ),
    view_op(
        "as_strided",
        lambda x, size, stride, storage_offset=0: x.as_strided(size, stride, storage_offset),
        _np_as_strided,
        ((3, 4), {"size": (2, 2), "stride": (4, 2)}),
        ((3, 4), {"size": (4, 3), "stride": (1, 4), "storage_offset": 0}),
        ((12,), {"size": (3, 3), "stride": (3, 1), "storage_offset": 2}),
        ((3, 4), {"size": (3, 3), "stride": (2, 1)}, None, "overlapping windows"),
        ((3, 4), {"size": (0, 2), "stride": (2, 1)}, None, "to zero-size"),
        ((0, 3), {"size": (0, 2), "stride": (1, 1)}, None, "zero-size"),
        grad_fn_name="AsStridedBackward0",
    ),
    OpInfo(
        "getitem",
        lambda x, key: x[key],
        lambda a, key: a[key],
        _getitem_samples,
        grad_fn_name={0: "SelectBackward0", 3: "SliceBackward0", 5: "UnsqueezeBackward0"},
    ),
]


#: The ops of the foundation issue; test_ops checks each has an entry.
ISSUE_OPS = (
    *("add", "sub", "mul", "div", "pow", "neg", "exp", "log", "sin", "cos", "tanh", "sigmoid"),
    *("relu", "sqrt", "abs", "clamp", "clone", "contiguous", "where"),
    *("sum", "mean", "max", "min", "matmul", "__matmul__", "mm", "bmm"),
    *("view", "reshape", "permute", "transpose", "t", "T", "mT", "expand", "expand_as"),
    *("squeeze", "unsqueeze", "flatten", "unflatten", "narrow", "select", "unbind", "split"),
    *("chunk", "diagonal", "as_strided", "getitem"),
)


# --------------------------------------------------------------------------- tensors


def to_tensor(value, requires_grad=False):
    """A sample argument as the op receives it: arrays become tensors (copies, via
    `torch.tensor`), NonContig arrays non-contiguous tensors, anything else as is."""
    if isinstance(value, NonContig):
        a = value.value
        if value.how == "T":
            t = torch.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).mT
        elif value.how == "step":
            big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype) + 1e3  # junk in between
            big[..., ::2] = a
            t = torch.tensor(big)[..., ::2]
        else:
            raise ValueError(value.how)
        return t.requires_grad_() if requires_grad else t
    if isinstance(value, np.ndarray):
        # torch.tensor keeps numpy's 0 strides of an empty array, which gradcheck rejects.
        t = (
            torch.tensor(value)
            if value.size
            else torch.zeros(value.shape, dtype=getattr(torch, value.dtype.name))
        )
        return t.requires_grad_() if requires_grad else t
    return value


def as_array(value):
    return value.value if isinstance(value, NonContig) else value


def is_float_array(value) -> bool:
    return isinstance(as_array(value), np.ndarray) and as_array(value).dtype.kind in "fc"


def ref_kwargs(kwargs: dict) -> dict:
    """kwargs for the numpy reference: torch dtypes become numpy ones."""
    return {k: ref_dtype(v) if isinstance(v, type(torch.float64)) else v for k, v in kwargs.items()}
