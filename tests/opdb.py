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
from dataclasses import dataclass, field, replace
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
    # vmap over the op: False where its output shape depends on the values (nonzero),
    # which vmap refuses; test_vmap_ops then skips it.
    supports_vmap: bool = True
    # Positions in `args` that gradcheck differentiates; None = every floating array.
    differentiable_args: tuple[int, ...] | None = None
    # Expected grad_fn names (checked against torch): a str pins the first sample's,
    # a dict {sample index: name} pins those samples'; a sample's own `grad_fn` wins.
    grad_fn_name: str | dict[int, str] | None = None
    # Forward tolerance overrides per dtype name, e.g. {"float32": (rtol, atol)}.
    tol: dict[str, tuple[float, float]] = field(default_factory=dict)
    # Names the op needs on the library under test (`torch.amax` or `Tensor.repeat`): an
    # entry written before its op lands stays out of OP_DB until the op exists.
    needs: tuple[str, ...] = ()

    def available(self) -> bool:
        return all(hasattr(torch, n) or hasattr(torch.Tensor, n) for n in self.needs)

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


def _without(desc, sample_inputs):
    """`sample_inputs` less the samples described as `desc`."""
    return lambda dtype: [s for s in sample_inputs(dtype) if s.desc != desc]


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


def _np_reduce(fn):
    """numpy's reduction `fn` called with torch's argument names (dim, keepdim, dtype)."""

    def ref(a, dim=None, keepdim=False, **kwargs):
        return fn(a, axis=dim, keepdims=keepdim, **kwargs)

    return ref


_np_sum = _np_reduce(np.sum)
_np_mean = _np_reduce(np.mean)


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


def _clamp_side_samples(side):
    """clamp_min / clamp_max: a number bound, and tensor bounds that broadcast, kept at
    least 0.2 away from the input (gradcheck must not step across a tie)."""

    def sample_inputs(dtype):
        make = Maker(dtype, "clamp_" + side)

        def near(bound, *shape):
            return bound + make(*shape, avoid=(0.0,), gap=0.2)

        b = make(4)
        bt = make(3, 4)
        return [
            SampleInput((make(3, 4, avoid=(0.25,)), 0.25), desc="number bound"),
            SampleInput((near(b, 3, 4), b), desc="tensor bound, broadcast"),
            SampleInput((transposed(near(bt, 3, 4)), bt), desc="transposed input"),
            SampleInput((make(3, 4, avoid=(-1,)), -1), desc="int bound"),
            SampleInput((make(0, 4), make(4)), desc="zero-size"),
        ]

    return sample_inputs


def _dist_samples(dtype):
    make = Maker(dtype, "dist")

    def apart(*shape):  # elements of a - b kept off 0 and without ties in |a - b|
        return make.distinct(*shape) + 0.1

    b = make(3, 4)
    return [
        SampleInput((apart(3, 4) + b, b), desc="p=2"),
        SampleInput((apart(3, 4) + b, b, 1), desc="p=1"),
        SampleInput((apart(3, 4) + b, b, 3), desc="p=3"),
        SampleInput((apart(3, 4) + b, b, float("inf")), desc="p=inf"),
        SampleInput((apart(3, 4) + b, b, 1.5), desc="p=1.5"),
        SampleInput((apart(3, 4) + b[0], b[0]), desc="broadcast"),
        SampleInput((transposed(apart(4, 3) + b.T), b.T), desc="transposed"),
        SampleInput((make(0, 3), make(3)), desc="zero-size"),
    ]


def _np_dist(a, b, p=2):
    d = np.ravel(np.asarray(a) - np.asarray(b))
    return np.asarray(np.linalg.norm(d, ord=p) if d.size else 0.0, d.dtype)


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


def _one_tensor(*cases, seed=None, distinct=False):
    """Samples of one tensor plus kwargs: each case is (shape, kwargs[, how, desc]),
    how in {None, "T", "step"}. `distinct` draws values without ties (Maker.distinct).
    The seed defaults to the cases' text; give one where kwargs hold a dtype, whose text
    names the library (torch.float64 or ferrograd.float64), or the values would differ."""

    def sample_inputs(dtype):
        mk = Maker(dtype, seed or f"view{cases}")
        make = mk.distinct if distinct else mk
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
    # a grad-requiring matrix @ a batch: one mm of the folded transposes, made contiguous
    7: "CloneBackward0",
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


BASE_DB: list[OpInfo] = [
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
    unary(
        "rsqrt",
        torch.rsqrt,
        lambda x: 1 / np.sqrt(x),
        "RsqrtBackward0",
        low=0.1,
        high=3.0,
        supports_complex=True,
    ),
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
    unary(
        "log10", torch.log10, np.log10, "Log10Backward0", low=0.1, high=3.0, supports_complex=True
    ),
    unary("abs", torch.abs, np.abs, "AbsBackward0", avoid=(0.0,), supports_complex=True),
    unary("clone", torch.clone, np.copy, "CloneBackward0"),
    unary(
        "reciprocal",
        torch.reciprocal,
        np.reciprocal,
        "ReciprocalBackward0",
        avoid=(0.0,),
        supports_complex=True,
    ),
    # Of a real tensor, conj is the tensor itself (no node of its own).
    unary("conj", torch.conj, np.conj, None, supports_complex=True),
    *[
        OpInfo(
            name,
            getattr(torch, name),
            getattr(np, np_name),
            _without("reflected scalar", binary_samples()),  # torch.eq(2, t) is a TypeError
            supports_grad=False,
            supports_gradgrad=False,
        )
        for name, np_name in (
            ("eq", "equal"),
            ("ne", "not_equal"),
            ("lt", "less"),
            ("le", "less_equal"),
            ("gt", "greater"),
            ("ge", "greater_equal"),
        )
    ],
    unary("contiguous", lambda x: x.contiguous(), np.copy, {3: "CloneBackward0"}),
    OpInfo(
        "clamp",
        torch.clamp,
        _np_clamp,
        _clamp_samples,
        grad_fn_name={0: "ClampBackward1", 1: "ClampBackward1"},
    ),
    OpInfo(
        "clamp_min",
        torch.clamp_min,
        np.maximum,
        _clamp_side_samples("min"),
        grad_fn_name={0: "ClampMinBackward0", 1: "ClampMinBackward1"},
        needs=("clamp_min",),
    ),
    OpInfo(
        "clamp_max",
        torch.clamp_max,
        np.minimum,
        _clamp_side_samples("max"),
        grad_fn_name={0: "ClampMaxBackward0", 1: "ClampMaxBackward1"},
        needs=("clamp_max",),
    ),
    OpInfo(
        "dist", torch.dist, _np_dist, _dist_samples, grad_fn_name="DistBackward0", needs=("dist",)
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


# =========================================================================== issue 11
# Entries written for issue 11's ops before the ops land. Each needs the library
# attribute of its own name (OpInfo.needs: `torch.amax`, or `Tensor.repeat`), so OP_DB
# takes it in as soon as the op exists, and calls the op late (`_late`), so this block
# imports without it. Helpers and sample sets first, then ISSUE11_DB, one entry per op
# (deleting an entry's lines removes it). Values, grad_fn names and gradients are
# checked against torch 2.15 by tests/run_opdb_on_torch.py; torch's errors for bad
# inputs: tests/ERRORS_issue11.md.
#
# Integer index arrays travel in kwargs (index=): the harness differentiates and vmaps
# only positional arrays, and test_vmap_ops scales those (an index must stay integral).


def _late(name):
    """torch.<name>, looked up when called."""
    return lambda *args, **kwargs: getattr(torch, name)(*args, **kwargs)


def _late_list(name):
    """torch.<name> of a list of the sample's tensors (stack, hstack ...)."""
    return lambda *tensors, **kwargs: getattr(torch, name)(list(tensors), **kwargs)


def _indexed(name, *tensor_names):
    """torch.<name>(x, ...): the positional tensors after x go by keyword (src=), the
    kwargs' arrays (index=) as int64 tensors."""

    def op(x, *tensors, **kwargs):
        kwargs = {k: to_tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        return getattr(torch, name)(x, **dict(zip(tensor_names, tensors)), **kwargs)

    return op


def _plus(*sample_fns):
    """The samples of each sample function in turn."""
    return lambda dtype: [s for fn in sample_fns for s in fn(dtype)]


def _scalar_as_1d(ref):
    """A numpy reference along a dim that also takes a 0-dim array, which torch treats
    as 1-D along dim 0 or -1 and numpy has no axis for."""

    def wrapped(a, *args, **kwargs):
        if a.ndim:
            return ref(a, *args, **kwargs)
        return np.reshape(ref(a.reshape(1), *args, **kwargs), ())

    return wrapped


def _index(*rows) -> np.ndarray:
    return np.array(rows, np.int64)


def _with_zeros(dtype, seed, *positions) -> np.ndarray:
    """A 3x4 sample with zeros at `positions` (prod and cumprod divide by nothing)."""
    a = Maker(dtype, seed)(3, 4)
    for p in positions:
        a[p] = 0
    return a


def late_op(name, ref, samples, grad_fn_name=None, **flags) -> OpInfo:
    """torch.<name>, called late."""
    return OpInfo(name, _late(name), ref, samples, grad_fn_name=grad_fn_name, **flags)


def late_one_tensor(name, ref, *cases, seed=None, distinct=False, **flags) -> OpInfo:
    """torch.<name> on one tensor plus kwargs (cases as for `_one_tensor`)."""
    return late_op(name, ref, _one_tensor(*cases, seed=seed or name, distinct=distinct), **flags)


# -- reductions

# dim int or tuple, keepdim both ways; without ties (distinct values).
AMAX_CASES = (
    ((3, 4), {}, None, "all"),
    ((3, 4), {"dim": 1}, None, "dim"),
    ((2, 3, 4), {"dim": -1, "keepdim": True}, None, "negative dim, keepdim"),
    ((2, 3, 4), {"dim": (0, 2)}, None, "dim tuple"),
    ((2, 3, 4), {"dim": (2, -3), "keepdim": True}, None, "dim tuple, keepdim"),
    ((), {}, None, "0-dim"),
    ((), {"dim": 0}, None, "0-dim, dim 0"),
    ((4, 3), {"dim": 0}, "T", "transposed"),
    ((3, 4), {"dim": -1}, "step", "stepped"),
    ((0, 3), {"dim": 1}, None, "zero-size"),
)
_np_amax = _scalar_as_1d(_np_reduce(np.amax))
_np_amin = _scalar_as_1d(_np_reduce(np.amin))

# dim None or int, keepdim both ways.
ARGMAX_CASES = (
    ((3, 4), {}, None, "all"),
    ((3, 4), {"dim": 1}, None, "dim"),
    ((2, 3, 4), {"dim": -2, "keepdim": True}, None, "negative dim, keepdim"),
    ((), {}, None, "0-dim"),
    ((), {"dim": 0}, None, "0-dim, dim 0"),
    ((4, 3), {"dim": 0}, "T", "transposed"),
    ((3, 4), {}, "step", "stepped, all"),
    ((0, 3), {"dim": 1}, None, "zero-size"),
)


def arg_reduction(name, ref) -> OpInfo:
    """argmax-like: int64 indices, no gradient."""
    return late_one_tensor(
        name,
        _scalar_as_1d(_np_reduce(ref)),
        *ARGMAX_CASES,
        distinct=True,
        supports_grad=False,
        supports_gradgrad=False,
    )


def _prod_samples(dtype):
    make = Maker(dtype, "prod")
    one_zero = _with_zeros(dtype, "prod0", (1, 2))
    two_zeros = _with_zeros(dtype, "prod00", (1, 0), (1, 3))
    return [
        SampleInput((make(3, 4),), desc="all"),
        SampleInput((make(3, 4),), {"dim": 1}, desc="dim"),
        SampleInput((make(2, 3, 4),), {"dim": -1, "keepdim": True}, desc="negative dim, keepdim"),
        SampleInput((one_zero,), desc="all, one zero"),
        SampleInput((one_zero,), {"dim": 1}, desc="one zero in a row"),
        SampleInput((two_zeros,), {"dim": 1}, desc="two zeros in a row"),
        SampleInput((two_zeros,), desc="all, two zeros"),
        SampleInput((make(3, 4),), {"dtype": torch.float64}, desc="dtype="),
        SampleInput((make(3, 4),), {"dim": 0, "dtype": torch.float64}, desc="dim, dtype="),
        SampleInput((make(),), desc="0-dim"),
        SampleInput((make(),), {"dim": 0}, desc="0-dim, dim 0"),
        SampleInput((transposed(make(4, 3)),), {"dim": 0}, desc="transposed"),
        SampleInput((stepped(make(3, 4)),), {"dim": -1, "keepdim": True}, desc="stepped"),
        SampleInput((make(0, 3),), {"dim": 1}, desc="zero-size"),
        SampleInput((make(3, 0),), {"dim": 1}, desc="empty rows: ones"),
    ]


def _np_logsumexp(a, dim, keepdim=False):
    m = np.max(a, axis=dim, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0)  # an empty or all -inf row: nothing to shift
    out = np.log(np.sum(np.exp(a - m), axis=dim, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=dim)


def _large_values(dim):
    """A sample around 500, where exp overflows without the max shift."""
    return lambda dtype: [
        SampleInput((Maker(dtype, "large")(3, 4, low=500, high=502),), {"dim": dim}, desc="large")
    ]


# dim int or tuple (required), keepdim both ways.
LOGSUMEXP_CASES = (
    ((3, 4), {"dim": 1}, None, "dim"),
    ((2, 3, 4), {"dim": -1, "keepdim": True}, None, "negative dim, keepdim"),
    ((2, 3, 4), {"dim": (0, 2)}, None, "dim tuple"),
    ((2, 3, 4), {"dim": (2, -3), "keepdim": True}, None, "dim tuple, keepdim"),
    ((), {"dim": 0}, None, "0-dim"),
    ((4, 3), {"dim": 0}, "T", "transposed"),
    ((3, 4), {"dim": -1}, "step", "stepped"),
    ((0, 3), {"dim": 1}, None, "zero-size"),
    ((2, 37), {"dim": 1}, None, "rows longer than a vector"),
)


def _np_softmax(log):
    def ref(a, dim, dtype=None):
        a = a.astype(dtype) if dtype is not None else a
        shifted = a - np.max(a, axis=dim, keepdims=True, initial=-np.inf)
        e = np.exp(shifted)
        total = np.sum(e, axis=dim, keepdims=True)
        return shifted - np.log(total) if log else e / total

    return _scalar_as_1d(ref)


def _softmax_samples(seed):
    cases = (
        ((3, 4), {"dim": 1}, None, "dim"),
        ((2, 3, 4), {"dim": -1}, None, "negative dim"),
        ((2, 3, 4), {"dim": 0}, None, "outer dim"),
        ((), {"dim": 0}, None, "0-dim"),
        ((4, 3), {"dim": 0}, "T", "transposed"),
        ((3, 4), {"dim": -1}, "step", "stepped"),
        ((0, 3), {"dim": 1}, None, "zero-size"),
        ((3, 0), {"dim": 1}, None, "empty dim"),
        # Whole SIMD vectors and a tail in each row, along the last and a leading dim.
        ((2, 37), {"dim": 1}, None, "rows longer than a vector"),
        ((37, 2), {"dim": 0}, None, "columns longer than a vector"),
    )

    def dtype_sample(dtype):  # float32 input: computes in float64
        x = Maker(dtype, seed)(3, 4)
        return [SampleInput((x,), {"dim": 1, "dtype": torch.float64}, desc="dtype=float64")]

    return _plus(_one_tensor(*cases, seed=seed), dtype_sample, _large_values(-1))


def _np_var_like(*stats):
    """torch.var's overloads over numpy stats(a, axis=, ddof=, keepdims=): dim, correction
    and keepdim by keyword, or the legacy unbiased (positional or keyword)."""

    def ref(a, unbiased=None, *, dim=None, correction=None, keepdim=False):
        ddof = int(unbiased) if unbiased is not None else 1 if correction is None else correction
        out = tuple(stat(a, axis=dim, ddof=ddof, keepdims=keepdim) for stat in stats)
        return out[0] if len(out) == 1 else out

    return ref


def _np_mean_ddof(a, ddof, **kwargs):
    return np.mean(a, **kwargs)


def _var_samples(zero_dim):
    """var/std(_mean) samples; std's are without the 0-dim one (std 0 has no gradient)."""

    def sample_inputs(dtype):
        make = Maker(dtype, "var")
        samples = [
            SampleInput((make(3, 4),), desc="all"),
            SampleInput((make(3, 4),), {"dim": 1}, desc="dim"),
            SampleInput((make(2, 3, 4),), {"dim": -1, "keepdim": True}, desc="neg. dim, keepdim"),
            SampleInput((make(2, 3, 4),), {"dim": (0, 2)}, desc="dim tuple"),
            SampleInput(
                (make(2, 3, 4),), {"dim": (2, 0), "correction": 0, "keepdim": True}, desc="tuple"
            ),
            SampleInput((make(3, 4),), {"dim": 1, "correction": 2}, desc="correction 2"),
            SampleInput((make(3, 4),), {"correction": 0}, desc="all, correction 0"),
            SampleInput((make(3, 4), False), desc="legacy positional unbiased=False"),
            SampleInput(
                (make(3, 4),), {"dim": 1, "unbiased": False, "keepdim": True}, desc="legacy kw"
            ),
            SampleInput((transposed(make(4, 3)),), {"dim": 0}, desc="transposed"),
            SampleInput((stepped(make(3, 4)),), {"dim": -1}, desc="stepped"),
            SampleInput((make(0, 3),), {"dim": 1}, desc="zero-size"),
        ]
        if zero_dim:
            samples.append(SampleInput((make(),), {"correction": 0}, desc="0-dim"))
        return samples

    return sample_inputs


# dim (required), 0-dim, the scanned dim strided or empty.
SCAN_CASES = (
    ((3, 4), {"dim": 1}, None, "dim"),
    ((2, 3, 4), {"dim": -1}, None, "negative dim"),
    ((2, 3, 4), {"dim": 0}, None, "outer dim"),
    ((), {"dim": 0}, None, "0-dim"),
    ((), {"dim": -1}, None, "0-dim, dim -1"),
    ((4, 3), {"dim": 1}, "T", "transposed, scanning the strided dim"),
    ((3, 4), {"dim": -1}, "step", "stepped"),
    ((0, 3), {"dim": 1}, None, "zero-size"),
    ((3, 0), {"dim": 1}, None, "empty dim"),
)


def _np_scan(fn):
    return _scalar_as_1d(lambda a, dim, dtype=None: fn(a, axis=dim, dtype=dtype))


def _cumsum_dtype_sample(dtype):
    x = Maker(dtype, "cumsum")(3, 4)
    return [SampleInput((x,), {"dim": 0, "dtype": torch.float64}, desc="dtype=")]


def _cumprod_zero_samples(dtype):
    return [
        SampleInput((_with_zeros(dtype, "cumprod0", (1, 2)),), {"dim": 1}, desc="one zero"),
        SampleInput((_with_zeros(dtype, "cumprod00", (1, 0), (1, 2)),), {"dim": 1}, desc="zeros"),
        SampleInput((_with_zeros(dtype, "cumprod0T", (0, 1)),), {"dim": 0}, desc="zero, dim 0"),
    ]


# -- elementwise

INTEGERS = (-2.0, -1.0, 0.0, 1.0, 2.0)  # kinks of floor, ceil, trunc, frac
HALVES = (-1.5, -0.5, 0.5, 1.5)  # kinks of round


def _round_decimals_samples(dtype):
    """Values a quarter step away from every kink of round(x, decimals)."""

    def grid(decimals, *shape):
        x = Maker(dtype, f"round{decimals}")(*shape, low=-50.0, high=50.0)
        return np.asarray((np.round(x * 10.0**decimals) + 0.25) / 10.0**decimals, dtype)

    return [
        SampleInput((grid(2, 3, 4),), {"decimals": 2}, desc="decimals=2"),
        SampleInput((transposed(grid(2, 4, 3)),), {"decimals": 2}, desc="decimals=2, transposed"),
        SampleInput((grid(2),), {"decimals": 2}, desc="decimals=2, 0-dim"),
        SampleInput((grid(-1, 3, 4),), {"decimals": -1}, desc="decimals=-1"),
    ]


def _np_sgn(a):
    return np.where(a == 0, 0, a / np.where(a == 0, 1, np.abs(a)))


def _pairwise_samples(with_nan=False):
    """maximum-like ops: tensors only (no Python scalars), broadcasting, no ties;
    `with_nan` adds NaNs in either operand (never both at one place: fmax skips them)."""

    def sample_inputs(dtype):
        make = Maker(dtype, "pairwise")
        samples = [
            SampleInput((make(3, 4), make(3, 4)), desc="same shape"),
            SampleInput((make(3, 1), make(1, 4)), desc="broadcast both"),
            SampleInput((make(2, 3, 4), make(4)), desc="broadcast rhs"),
            SampleInput((make(4), make(2, 3, 4)), desc="broadcast lhs"),
            SampleInput((make(3, 4), make()), desc="0-dim rhs"),
            SampleInput((make(), make()), desc="0-dim"),
            SampleInput((transposed(make(3, 4)), stepped(make(3, 4))), desc="non-contiguous"),
            SampleInput((make(0, 3), make(3)), desc="zero-size"),
        ]
        if with_nan:
            a, b = make(3, 4), make(3, 4)
            a[0, 1] = a[2, 3] = b[1, 2] = np.nan
            samples.append(SampleInput((a, b), desc="NaNs"))
        return samples

    return sample_inputs


SPECIAL_VALUES = (np.nan, np.inf, -np.inf, -0.0, 0.0)


def _special_samples(dtype):
    """Finite values mixed with NaN, +-inf and both zeros, for the predicates."""
    mk = Maker(dtype, "special")

    def make(*shape):
        a = mk(*shape)
        flat = a.reshape(-1)  # a view: a is fresh and contiguous
        where = mk.rng.permutation(flat.size)[: len(SPECIAL_VALUES)]
        flat[where] = SPECIAL_VALUES[: len(where)]
        return a

    return [
        SampleInput((make(3, 4),), desc="2-D"),
        SampleInput((make(2, 3, 4),), desc="3-D"),
        SampleInput((np.asarray(np.nan, dtype),), desc="0-dim NaN"),
        SampleInput((np.asarray(-np.inf, dtype),), desc="0-dim -inf"),
        SampleInput((transposed(make(4, 3)),), desc="transposed"),
        SampleInput((stepped(make(3, 4)),), desc="stepped"),
        SampleInput((make(0, 3),), desc="zero-size"),
    ]


def predicate(name, ref) -> OpInfo:
    """An elementwise test returning bool (no gradient)."""
    return OpInfo(
        name, _late(name), ref, _special_samples, supports_grad=False, supports_gradgrad=False
    )


# -- shape and indexing


def movedim(name) -> OpInfo:
    """movedim and its alias moveaxis: int and tuple source/destination."""
    return late_one_tensor(
        name,
        _scalar_as_1d(np.moveaxis),
        ((2, 3, 4), {"source": 0, "destination": 2}),
        ((2, 3, 4), {"source": -1, "destination": 0}, None, "negative dim"),
        ((2, 3, 4), {"source": (0, 1), "destination": (2, 0)}, None, "tuples"),
        ((2, 3, 4), {"source": (0, -1), "destination": (-1, 0)}, None, "tuples, negative"),
        ((3, 4), {"source": 1, "destination": 1}, None, "to itself"),
        ((), {"source": 0, "destination": 0}, None, "0-dim: an alias in torch"),
        ((4, 3), {"source": 0, "destination": 1}, "T", "transposed"),
        ((3, 4), {"source": (1,), "destination": (0,)}, "step", "stepped"),
        ((0, 3, 2), {"source": 0, "destination": -1}, None, "zero-size"),
        seed="movedim",
        grad_fn_name={0: "PermuteBackward0", 2: "PermuteBackward0", 5: "AliasBackward0"},
    )


def triangle(name, ref, grad_fn_name) -> OpInfo:
    """tril and triu: diagonals below, on and above, batched 3-D inputs."""
    return late_one_tensor(
        name,
        lambda a, diagonal=0: ref(a, diagonal),
        ((3, 4), {}),
        ((3, 4), {"diagonal": -1}),
        ((3, 4), {"diagonal": 2}),
        ((2, 3, 4), {"diagonal": 1}, None, "batched"),
        ((2, 4, 3), {"diagonal": -1}, "T", "batched, transposed"),
        ((3, 4), {}, "step", "stepped"),
        ((0, 3), {}, None, "zero-size"),
        ((2, 0, 3), {"diagonal": 1}, None, "zero-size, batched"),
        grad_fn_name=grad_fn_name,
    )


def _stack_samples(dtype):
    make = Maker(dtype, "stack")
    return [
        SampleInput((make(3, 4), make(3, 4)), {"dim": 0}, desc="two"),
        SampleInput((make(3, 4), make(3, 4), make(3, 4)), {"dim": 1}, desc="three, dim 1"),
        SampleInput((make(3, 4), make(3, 4)), {"dim": 2}, desc="new last dim"),
        SampleInput((make(2, 3), make(2, 3)), {"dim": -1}, desc="negative dim"),
        SampleInput((make(2, 3), make(2, 3), make(2, 3)), {"dim": -3}, desc="dim -3"),
        SampleInput((make(), make()), desc="0-dim, default dim"),
        SampleInput((transposed(make(3, 4)), stepped(make(3, 4))), {"dim": 1}, desc="non-contig."),
        SampleInput((make(0, 3), make(0, 3)), {"dim": 1}, desc="zero-size"),
    ]


def _concat_samples(*mixed_shapes):
    """hstack-like ops: pairs and a triple of equal shapes from 0-dim to 3-D, and pairs
    of the op's own `mixed_shapes` (which differ where the op concatenates)."""

    def sample_inputs(dtype):
        make = Maker(dtype, "concat")
        return [
            SampleInput((make(3, 4), make(3, 4)), desc="2-D"),
            SampleInput((make(4), make(4), make(4)), desc="three 1-D"),
            SampleInput((make(2, 3, 4), make(2, 3, 4)), desc="3-D"),
            SampleInput((make(), make()), desc="0-dim"),
            SampleInput((transposed(make(3, 4)), stepped(make(3, 4))), desc="non-contiguous"),
            SampleInput((make(0, 3), make(0, 3)), desc="zero-size"),
        ] + [SampleInput((make(*a), make(*b)), desc=f"{a} with {b}") for a, b in mixed_shapes]

    return sample_inputs


def concat(name, ref, *mixed_shapes) -> OpInfo:
    """hstack-like: torch.<name> of a list, numpy's `ref` of a sequence."""
    samples = _concat_samples(*mixed_shapes)
    return OpInfo(name, _late_list(name), lambda *a: ref(a), samples, grad_fn_name="CatBackward0")


def _np_gather(a, dim, index):
    if a.ndim == 0:
        return a.copy()  # index can only be 0
    # torch reads the index's extent of every other dim (it may be smaller than a's)
    a = a[tuple(slice(None) if d == dim % a.ndim else slice(n) for d, n in enumerate(index.shape))]
    return np.take_along_axis(a, index, axis=dim)


def _gather_samples(dtype):
    make = Maker(dtype, "gather")
    index3 = _index([[0, 2, 2, 1], [1, 0, 0, 2]], [[2, 2, 1, 0], [0, 1, 2, 1]])
    return [
        SampleInput((make(3, 4),), {"dim": 1, "index": _index([0, 3], [1, 1], [2, 0])}, desc="d1"),
        SampleInput((make(3, 4),), {"dim": 0, "index": _index([2, 0, 1, 2], [0, 0, 1, 1])}),
        SampleInput(
            (make(3, 4),), {"dim": -1, "index": _index([3, 2, 1], [0, 0, 0])}, desc="smaller"
        ),
        SampleInput((make(2, 3, 4),), {"dim": 1, "index": index3}, desc="3-D"),
        SampleInput((make(),), {"dim": 0, "index": np.array(0)}, desc="0-dim"),
        SampleInput(
            (transposed(make(4, 3)),), {"dim": 0, "index": _index([3, 0, 1], [1, 1, 3])}, desc="T"
        ),
        SampleInput((stepped(make(3, 4)),), {"dim": 1, "index": _index([2], [0], [3])}, desc="st"),
        SampleInput((make(3, 4),), {"dim": 1, "index": np.zeros((3, 0), np.int64)}, desc="empty"),
        SampleInput((make(0, 3),), {"dim": 1, "index": np.zeros((0, 2), np.int64)}, desc="zero"),
    ]


def _np_scatter(a, *src, dim, index, value=None, add=False):
    out, d = a.copy(), dim % max(a.ndim, 1)
    for p in np.ndindex(index.shape):
        q = p[:d] + (index[p],) + p[d + 1 :] if a.ndim else ()
        v = src[0][p] if src else value
        out[q] = out[q] + v if add else v
    return out


def _scatter_samples(seed, *indices):
    """scatter-like samples: `indices` for self (3, 4) along dims 0, 1 and -1, for self
    (2, 3, 4) along dim 1, and for self (4, 3) along dim 0. src has the index's shape:
    torch's backward gathers src's gradient at the index, which fails for a bigger src
    (forward allows it; see ERRORS_issue11.md)."""
    dim0, dim1, dim_neg, batched, transposed_index = (np.array(i, np.int64) for i in indices)

    def sample_inputs(dtype):
        make = Maker(dtype, seed)
        return [
            SampleInput((make(3, 4), make(*dim0.shape)), {"dim": 0, "index": dim0}),
            SampleInput((make(3, 4), make(*dim1.shape)), {"dim": 1, "index": dim1}),
            SampleInput(
                (make(3, 4), make(*dim_neg.shape)),
                {"dim": -1, "index": dim_neg},
                desc="negative dim, index smaller than self",
            ),
            SampleInput((make(2, 3, 4), make(*batched.shape)), {"dim": 1, "index": batched}),
            SampleInput((make(), make()), {"dim": 0, "index": np.array(0)}, desc="0-dim"),
            SampleInput(
                (transposed(make(4, 3)), stepped(make(*transposed_index.shape))),
                {"dim": 0, "index": transposed_index},
                desc="non-contiguous",
            ),
            SampleInput((make(3, 4), make(0, 4)), {"dim": 0, "index": np.zeros((0, 4), np.int64)}),
            SampleInput((make(0, 3), make(0, 2)), {"dim": 1, "index": np.zeros((0, 2), np.int64)}),
        ]

    return sample_inputs


def _scatter_value_samples(dtype):
    make = Maker(dtype, "scatter_value")
    return [
        SampleInput((make(3, 4),), {"dim": 1, "index": _index([3, 0], [1, 2]), "value": 1.5}),
        SampleInput(
            (transposed(make(4, 3)),),
            {"dim": 0, "index": _index([3, 0, 1], [0, 2, 3]), "value": -2},
            desc="int value, transposed",
        ),
    ]


def _index_select_samples(dtype):
    make = Maker(dtype, "index_select")
    return [
        SampleInput((make(3, 4),), {"dim": 0, "index": _index(0, 2, 0)}, desc="repeated index"),
        SampleInput((make(3, 4),), {"dim": 1, "index": _index(3, 1, 1, 0)}, desc="dim 1"),
        SampleInput((make(2, 3, 4),), {"dim": -1, "index": _index(2, 2)}, desc="negative dim"),
        SampleInput((make(3, 4),), {"dim": 1, "index": np.array(2)}, desc="0-dim index"),
        SampleInput((make(),), {"dim": 0, "index": _index(0)}, desc="0-dim"),
        SampleInput((transposed(make(4, 3)),), {"dim": 0, "index": _index(3, 0, 3)}, desc="T"),
        SampleInput((stepped(make(3, 4)),), {"dim": 1, "index": _index(1, 1)}, desc="stepped"),
        SampleInput((make(3, 4),), {"dim": 0, "index": np.zeros(0, np.int64)}, desc="empty"),
        SampleInput((make(0, 3),), {"dim": 1, "index": _index(2, 0)}, desc="zero-size"),
    ]


def _masked_fill_samples(dtype):
    make = Maker(dtype, "masked_fill")
    mask = np.array(
        [[True, False, True, False], [False, False, True, True], [True, True, False, False]]
    )
    return [
        SampleInput((make(3, 4), mask), {"value": 1.5}, desc="same shape"),
        SampleInput((make(3, 4), mask[:, :1]), {"value": -2}, desc="mask (3, 1), int value"),
        SampleInput((make(2, 3, 4), mask[0]), {"value": 0.5}, desc="mask (4,)"),
        SampleInput((make(3, 1), mask), {"value": 1.5}, desc="self broadcast to the mask"),
        SampleInput((make(3, 4), np.array(True)), {"value": 1.5}, desc="0-dim mask"),
        SampleInput((make(), np.array(False)), {"value": 1.5}, desc="0-dim"),
        SampleInput((transposed(make(4, 3)), mask.T), {"value": 1.5}, desc="transposed"),
        SampleInput((stepped(make(3, 4)), mask), {"value": 1.5}, desc="stepped"),
        SampleInput((make(0, 4), mask[0]), {"value": 1.5}, desc="zero-size"),
        SampleInput(
            (make(3, 4), mask, make()), grad_fn="MaskedFillBackward1", desc="0-dim tensor value"
        ),
        SampleInput(
            (make(3, 1), mask[0], make()),
            grad_fn="MaskedFillBackward1",
            desc="tensor value, self broadcast to the mask",
        ),
    ]


def _issue11(*entries) -> list[OpInfo]:
    """Each entry needing the library attribute of its own name."""
    return [replace(op, needs=(op.name,)) for op in entries]


def _bitwise_samples(shifts=False):
    """Integer and bool operands (whatever dtype is asked: these ops take no floats):
    int64 with negatives, broadcasting, uint8, int32 with int64, bool, a Python int,
    non-contiguous and zero-size. Shift amounts stay in [0, 70) (past the width too)."""

    def sample_inputs(_dtype):
        rng = np.random.default_rng(11)

        def ints(*shape, low=-50, high=50, dt=np.int64):
            return rng.integers(low, high, size=shape).astype(dt)

        rhs = (lambda *s, dt=np.int64: ints(*s, low=0, high=70, dt=dt)) if shifts else ints
        samples = [
            SampleInput((ints(3, 4), rhs(3, 4)), desc="int64"),
            SampleInput((ints(3, 1), rhs(4)), desc="broadcast"),
            SampleInput(
                (ints(3, 4, low=0, high=255, dt=np.uint8), rhs(4, dt=np.uint8)), desc="uint8"
            ),
            SampleInput((ints(3, 4, dt=np.int32), rhs(3, 4)), desc="int32 with int64"),
            SampleInput((transposed(ints(3, 4)), stepped(rhs(3, 4))), desc="non-contiguous"),
            SampleInput((ints(0, 3), rhs(3)), desc="zero-size"),
            SampleInput((ints(3, 4), 3), desc="python int"),
        ]
        if not shifts:
            samples.append(SampleInput((ints(3, 4) > 0, ints(4) > 0), desc="bool"))
        return samples

    return sample_inputs


def _logical_samples(_dtype):
    rng = np.random.default_rng(12)
    a = np.where(rng.random((3, 4)) < 0.3, 0.0, rng.standard_normal((3, 4)))
    b = np.where(rng.random(4) < 0.3, 0, rng.integers(-3, 3, size=4))
    return [
        SampleInput((a, b), desc="float with int, zeros"),
        SampleInput((a > 0, a < 0.5), desc="bool"),
        SampleInput((transposed(a), stepped(a)), desc="non-contiguous"),
        SampleInput((np.zeros((0, 2)), np.ones(2)), desc="zero-size"),
    ]


def _not_samples(_dtype):
    rng = np.random.default_rng(13)
    ints = rng.integers(-50, 50, size=(3, 4))
    return [
        SampleInput((ints,), desc="int64"),
        SampleInput((ints.astype(np.uint8),), desc="uint8"),
        SampleInput((ints > 0,), desc="bool"),
        SampleInput((transposed(ints.T.copy()),), desc="transposed"),
        SampleInput((stepped(ints),), desc="stepped"),
        SampleInput((np.zeros((0, 3), np.int64),), desc="zero-size"),
    ]


def _np_shift(fn):
    """numpy's shift of int arrays, with torch's result past the width (0, or the sign)."""

    def ref(a, b):
        a, b = np.asarray(a), np.asarray(b)
        dt = np.result_type(a, b) if b.ndim else a.dtype
        a = a.astype(dt)
        bits = 8 * np.dtype(dt).itemsize
        wide = np.asarray(b) >= bits
        out = fn(a, np.where(wide, 0, b).astype(dt))
        fill = 0 if fn is np.left_shift else np.where(a < 0, -1, 0).astype(dt)
        return np.where(wide, fill, out).astype(dt)

    return ref


def _no_grad_op(name, ref, samples) -> OpInfo:
    return late_op(name, ref, samples, supports_grad=False, supports_gradgrad=False)


def _outer_samples(dtype):
    make = Maker(dtype, "outer")
    return [
        SampleInput((make(3), make(4)), desc="vectors"),
        SampleInput((stepped(make(5)), make(2)), desc="stepped"),
        SampleInput((make(0), make(3)), desc="zero-size"),
    ]


def _broadcast_to_samples(dtype):
    make = Maker(dtype, "broadcast_to")
    return [
        SampleInput((make(3, 1), (2, 3, 4)), desc="new and size-1 dims"),
        SampleInput((make(4), (3, 4)), desc="new leading dim"),
        SampleInput((make(), (2, 2)), desc="0-dim"),
        SampleInput((transposed(make(3, 1)), (2, 3, 4)), desc="transposed"),
        SampleInput((make(0, 1), (0, 3)), desc="zero-size"),
    ]


def _broadcast_tensors_samples(dtype):
    make = Maker(dtype, "broadcast_tensors")
    return [
        SampleInput((make(3, 1), make(1, 4)), desc="both"),
        SampleInput((make(4), make(2, 3, 4), make()), desc="three, 0-dim"),
        SampleInput((stepped(make(3, 2)), make(2)), desc="stepped"),
        SampleInput((transposed(make(2, 3)), make(3)), desc="transposed"),
        SampleInput((make(0, 1), make(3)), desc="zero-size"),
    ]


def _isclose_samples(dtype):
    make = Maker(dtype, "isclose")
    a = make(3, 4)
    near = a + np.asarray(1e-6, dtype) * make(3, 4)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, 1.0, 1e-9], dtype=dtype)
    other = np.array([np.nan, np.inf, np.inf, 1e-9, 1.0001, 0.0], dtype=dtype)
    return [
        SampleInput((a, near), desc="near"),
        SampleInput((a, make(3, 4)), desc="far"),
        SampleInput((special, other), desc="nan, inf, tiny"),
        SampleInput((special, other), {"equal_nan": True}, desc="equal_nan"),
        SampleInput((a, near), {"rtol": 0.0, "atol": 1e-3}, desc="atol only"),
        SampleInput((a, make(4)), desc="broadcast"),
        SampleInput((transposed(make(4, 3)), stepped(make(4, 3))), desc="non-contiguous"),
        SampleInput((make(0, 3), make(3)), desc="zero-size"),
    ]


ISSUE11_DB: list[OpInfo] = _issue11(
    # -- reductions
    late_one_tensor("amax", _np_amax, *AMAX_CASES, distinct=True, grad_fn_name="AmaxBackward0"),
    late_one_tensor("amin", _np_amin, *AMAX_CASES, distinct=True, grad_fn_name="AminBackward0"),
    arg_reduction("argmax", np.argmax),
    arg_reduction("argmin", np.argmin),
    late_op(
        "prod",
        _scalar_as_1d(_np_reduce(np.prod)),
        _prod_samples,
        {
            0: "ProdBackward0",
            1: "ProdBackward1",
            7: "ProdBackward0",
            10: "ProdBackward1",
        },
    ),
    late_op(
        "logsumexp",
        _scalar_as_1d(_np_logsumexp),
        _plus(_one_tensor(*LOGSUMEXP_CASES, seed="logsumexp"), _large_values(1)),
        "LogsumexpBackward0",
    ),
    late_op(
        "softmax",
        _np_softmax(log=False),
        _softmax_samples("softmax"),
        {0: "SoftmaxBackward0", 8: "SoftmaxBackward0"},
    ),
    late_op(
        "log_softmax",
        _np_softmax(log=True),
        _softmax_samples("log_softmax"),
        {0: "LogSoftmaxBackward0", 8: "LogSoftmaxBackward0"},
    ),
    late_op(
        "var",
        _np_var_like(np.var),
        _var_samples(zero_dim=True),
        {0: "VarBackward0", 1: "VarBackward0", 7: "VarBackward0"},
    ),
    late_op(
        "std",
        _np_var_like(np.std),
        _var_samples(zero_dim=False),
        {0: "StdBackward0", 1: "StdBackward0", 7: "StdBackward0"},
    ),
    late_op(
        "var_mean",
        _np_var_like(np.var, _np_mean_ddof),
        _var_samples(zero_dim=True),
        {0: "VarMeanBackward0", 1: "VarMeanBackward0"},
    ),
    late_op(
        "std_mean",
        _np_var_like(np.std, _np_mean_ddof),
        _var_samples(zero_dim=False),
        {0: "StdMeanBackward0", 1: "StdMeanBackward0"},
    ),
    late_op(
        "cumsum",
        _np_scan(np.cumsum),
        _plus(_one_tensor(*SCAN_CASES, seed="cumsum"), _cumsum_dtype_sample),
        {0: "CumsumBackward0", 9: "CumsumBackward0"},
    ),
    late_op(
        "cumprod",
        _np_scan(np.cumprod),
        _plus(_one_tensor(*SCAN_CASES, seed="cumprod"), _cumprod_zero_samples),
        {0: "CumprodBackward0", 9: "CumprodBackward0"},
        supports_complex=True,
        # forward-over-reverse of the vjp disagrees with finite differences (issue 11, misc)
        supports_gradgrad=False,
    ),
    # -- elementwise
    unary("floor", _late("floor"), np.floor, "FloorBackward0", avoid=INTEGERS),
    unary("ceil", _late("ceil"), np.ceil, "CeilBackward0", avoid=INTEGERS),
    unary("trunc", _late("trunc"), np.trunc, "TruncBackward0", avoid=INTEGERS),
    unary("frac", _late("frac"), lambda a: a - np.trunc(a), "FracBackward0", avoid=INTEGERS),
    late_op(
        "round",
        lambda a, decimals=0: np.round(a, decimals),
        _plus(unary_samples(avoid=HALVES), _round_decimals_samples),
        {0: "RoundBackward0", 6: "RoundBackward1", 9: "RoundBackward1"},
    ),
    unary("square", _late("square"), np.square, "PowBackward0"),
    unary("sign", _late("sign"), np.sign, "SignBackward0", avoid=(0.0,)),
    unary("sgn", _late("sgn"), _np_sgn, "SgnBackward0", avoid=(0.0,), supports_complex=True),
    unary("deg2rad", _late("deg2rad"), np.deg2rad, "Deg2RadBackward0"),
    unary("rad2deg", _late("rad2deg"), np.rad2deg, "Rad2DegBackward0"),
    binary("maximum", _late("maximum"), np.maximum, "MaximumBackward0", _pairwise_samples()),
    binary("minimum", _late("minimum"), np.minimum, "MinimumBackward0", _pairwise_samples()),
    binary("fmax", _late("fmax"), np.fmax, "FmaxBackward0", _pairwise_samples(with_nan=True)),
    binary("fmin", _late("fmin"), np.fmin, "FminBackward0", _pairwise_samples(with_nan=True)),
    predicate("isnan", np.isnan),
    predicate("isinf", np.isinf),
    predicate("isfinite", np.isfinite),
    predicate("isposinf", np.isposinf),
    predicate("isneginf", np.isneginf),
    predicate("signbit", np.signbit),
    # -- shape and indexing
    OpInfo(
        "stack",
        _late_list("stack"),
        lambda *arrays, dim=0: np.stack(arrays, axis=dim),
        _stack_samples,
        grad_fn_name="StackBackward0",
    ),
    concat("hstack", np.hstack, ((3, 4), (3, 2)), ((4,), (2,))),
    concat("vstack", np.vstack, ((4,), (2, 4)), ((2, 3, 4), (1, 3, 4))),
    concat("dstack", np.dstack, ((3, 4), (3, 4, 2)), ((4,), (1, 4, 3))),
    concat("column_stack", np.column_stack, ((3,), (3, 2)), ((3, 2), (3,))),
    late_one_tensor(
        "flip",
        _scalar_as_1d(lambda a, dims: np.flip(a, axis=tuple(dims))),
        ((3, 4), {"dims": [0]}),
        ((3, 4), {"dims": [0, 1]}),
        ((2, 3, 4), {"dims": [-1, 0]}, None, "negative dim"),
        ((3, 4), {"dims": []}, None, "no dims"),
        ((), {"dims": [0]}, None, "0-dim"),
        ((4, 3), {"dims": [1]}, "T", "transposed"),
        ((3, 4), {"dims": [-1]}, "step", "stepped"),
        ((0, 3), {"dims": [0, 1]}, None, "zero-size"),
        grad_fn_name={0: "FlipBackward0", 3: "FlipBackward0"},
    ),
    late_one_tensor(
        "fliplr",
        np.fliplr,
        ((3, 4), {}),
        ((2, 3, 4), {}, None, "3-D"),
        ((4, 3), {}, "T", "transposed"),
        ((3, 4), {}, "step", "stepped"),
        ((0, 3), {}, None, "zero-size"),
        grad_fn_name="FlipBackward0",
    ),
    late_one_tensor(
        "flipud",
        np.flipud,
        ((3, 4), {}),
        ((4,), {}, None, "1-D"),
        ((4, 3), {}, "T", "transposed"),
        ((3, 4), {}, "step", "stepped"),
        ((0, 3), {}, None, "zero-size"),
        grad_fn_name="FlipBackward0",
    ),
    movedim("movedim"),
    movedim("moveaxis"),
    OpInfo(
        "swapaxes",
        # positional: ferrograd's swapaxes (before issue 11) does not take torch's keywords
        lambda x, axis0, axis1: torch.swapaxes(x, axis0, axis1),
        _scalar_as_1d(lambda a, axis0, axis1: np.swapaxes(a, axis0, axis1)),
        _one_tensor(
            ((3, 4), {"axis0": 0, "axis1": 1}),
            ((2, 3, 4), {"axis0": -1, "axis1": 0}, None, "negative dim"),
            ((), {"axis0": 0, "axis1": -1}, None, "0-dim"),
            ((4, 3), {"axis0": 1, "axis1": 0}, "T", "transposed"),
            ((3, 4), {"axis0": 1, "axis1": 1}, "step", "stepped, same dims"),
            ((0, 3), {"axis0": 0, "axis1": 1}, None, "zero-size"),
            seed="swapaxes",
        ),
        grad_fn_name="TransposeBackward0",
    ),
    OpInfo(
        "repeat",
        lambda x, repeats: x.repeat(*repeats),
        lambda a, repeats: np.tile(a, repeats),
        _one_tensor(
            ((3, 4), {"repeats": (2, 1)}),
            ((3, 4), {"repeats": (2, 1, 3)}, None, "more dims than the input"),
            ((2, 3, 4), {"repeats": (1, 2, 1)}, None, "3-D"),
            ((), {"repeats": (2, 3)}, None, "0-dim"),
            ((3, 4), {"repeats": (0, 2)}, None, "zero repeats"),
            ((4, 3), {"repeats": (1, 2)}, "T", "transposed"),
            ((3, 4), {"repeats": (2, 2)}, "step", "stepped"),
            ((0, 3), {"repeats": (2, 2)}, None, "zero-size"),
            seed="repeat",
        ),
        grad_fn_name="RepeatBackward0",
    ),
    late_one_tensor(
        "tile",
        lambda a, dims: np.tile(a, dims),
        ((3, 4), {"dims": (2,)}, None, "fewer dims than the input"),
        ((3, 4), {"dims": (2, 1, 2)}, None, "more dims"),
        ((3, 4), {"dims": (1, 1)}, None, "ones"),
        ((), {"dims": (2,)}, None, "0-dim"),
        ((4, 3), {"dims": (2, 1)}, "T", "transposed"),
        ((3, 4), {"dims": (1, 2)}, "step", "stepped"),
        ((0, 3), {"dims": (2, 2)}, None, "zero-size"),
        grad_fn_name="RepeatBackward0",
    ),
    triangle("tril", np.tril, "TrilBackward0"),
    triangle("triu", np.triu, "TriuBackward0"),
    OpInfo(
        "gather",
        _indexed("gather"),
        _np_gather,
        _gather_samples,
        grad_fn_name="GatherBackward0",
    ),
    OpInfo(
        "scatter",
        _indexed("scatter", "src"),
        _np_scatter,
        # no two writes to one place: which one wins is unspecified in torch
        _plus(
            _scatter_samples(
                "scatter",
                [[2, 0, 1, 2], [0, 1, 2, 1]],
                [[3, 0], [1, 2], [0, 3]],
                [[1, 0, 3], [2, 3, 0]],
                [[[0, 1, 2, 0], [2, 0, 1, 1]], [[1, 2, 0, 2], [0, 1, 2, 0]]],
                [[3, 0, 1], [0, 2, 3]],
            ),
            _scatter_value_samples,
        ),
        grad_fn_name={0: "ScatterBackward0", 8: "ScatterBackward1"},
    ),
    OpInfo(
        "scatter_add",
        _indexed("scatter_add", "src"),
        lambda a, src, **kwargs: _np_scatter(a, src, add=True, **kwargs),
        # indices that repeat: the writes add up
        _scatter_samples(
            "scatter_add",
            [[2, 0, 1, 2], [2, 0, 0, 1]],
            [[3, 3], [1, 1], [0, 3]],
            [[1, 1, 1], [2, 3, 2]],
            [[[0, 1, 2, 0], [0, 1, 1, 0]], [[1, 2, 0, 2], [1, 2, 0, 2]]],
            [[3, 0, 3], [3, 0, 3]],
        ),
        grad_fn_name="ScatterAddBackward0",
    ),
    OpInfo(
        "index_select",
        _indexed("index_select"),
        _scalar_as_1d(lambda a, dim, index: np.take(a, index.reshape(-1), axis=dim)),
        _index_select_samples,
        grad_fn_name="IndexSelectBackward0",
    ),
    late_op(
        "masked_fill",
        lambda a, mask, value: np.where(mask, value, a),
        _masked_fill_samples,
        "MaskedFillBackward0",
    ),
    late_op("outer", np.outer, _outer_samples, "MulBackward0"),
    _no_grad_op("bitwise_and", np.bitwise_and, _bitwise_samples()),
    _no_grad_op("bitwise_or", np.bitwise_or, _bitwise_samples()),
    _no_grad_op("bitwise_xor", np.bitwise_xor, _bitwise_samples()),
    _no_grad_op("bitwise_not", np.invert, _not_samples),
    _no_grad_op("bitwise_left_shift", _np_shift(np.left_shift), _bitwise_samples(shifts=True)),
    _no_grad_op("bitwise_right_shift", _np_shift(np.right_shift), _bitwise_samples(shifts=True)),
    _no_grad_op("logical_and", np.logical_and, _logical_samples),
    _no_grad_op("logical_or", np.logical_or, _logical_samples),
    _no_grad_op("logical_xor", np.logical_xor, _logical_samples),
    _no_grad_op("logical_not", np.logical_not, _not_samples),
    late_op("broadcast_to", np.broadcast_to, _broadcast_to_samples, "ExpandBackward0"),
    late_op(
        "broadcast_tensors",
        lambda *arrays: tuple(np.broadcast_arrays(*arrays)),
        _broadcast_tensors_samples,
        "ExpandBackward0",
    ),
    late_op(
        "isclose",
        np.isclose,
        _isclose_samples,
        supports_grad=False,
        supports_gradgrad=False,
    ),
)


# --- issue 11: composites ---
# Ops torch builds from other ops (CompositeImplicitAutograd; python/ferrograd/
# _composite.py, _einsum.py, linalg.py): their grad_fn names are their last
# constituent's, pinned from torch 2.15. torch.linalg's entries need `torch.linalg`.


def _take_along_dim_samples(dtype):
    make = Maker(dtype, "take_along_dim")
    return [
        SampleInput((make(3, 4),), {"indices": _index([0, 2, 1, 0], [2, 2, 0, 1]), "dim": 0}),
        SampleInput(
            (make(3, 4),), {"indices": _index([3, 0], [1, 1], [0, 2]), "dim": -1}, desc="neg dim"
        ),
        SampleInput(
            (make(1, 4),), {"indices": _index([0], [3], [1]), "dim": 1}, desc="broadcast both"
        ),
        SampleInput((make(3, 4),), {"indices": _index(11, 0, 5, 5)}, desc="dim None"),
        SampleInput((transposed(make(4, 3)),), {"indices": _index([3, 0, 1]), "dim": 0}, desc="T"),
        SampleInput(
            (stepped(make(3, 4)),), {"indices": _index([1], [3], [0]), "dim": 1}, desc="stepped"
        ),
        SampleInput(
            (make(0, 4),), {"indices": np.zeros((0, 2), np.int64), "dim": 1}, desc="zero-size"
        ),
    ]


def _np_take_along_dim(a, indices, dim=None):
    if dim is None:
        return np.take_along_axis(a.reshape(-1), indices.reshape(-1), 0)
    # each broadcast to the other's shape except along dim, as torch does
    a_shape, i_shape = list(a.shape), list(indices.shape)
    a_shape[dim], i_shape[dim] = indices.shape[dim], a.shape[dim]
    a = np.broadcast_to(a, np.broadcast_shapes(i_shape, a.shape))
    indices = np.broadcast_to(indices, np.broadcast_shapes(a_shape, indices.shape))
    return np.take_along_axis(a, indices, dim)


def _np_tensor_split(a, sections=None, indices=None, dim=0):
    return tuple(np.array_split(a, indices if sections is None else sections, axis=dim))


TENSOR_SPLIT_CASES = (
    ((5, 4), {"sections": 3}, None, "sections, uneven"),
    ((3, 4), {"indices": [1, 3], "dim": 1}, None, "indices"),
    ((2, 5), {"indices": [-2, 9, 1], "dim": -1}, None, "indices past the ends"),
    ((3, 4), {"sections": 5}, None, "more sections than elements"),
    ((4, 3), {"sections": 2, "dim": 0}, "T", "transposed"),
    ((3, 4), {"indices": [2], "dim": 1}, "step", "stepped"),
    ((0, 3), {"sections": 2}, None, "zero-size"),
)


def _meshgrid_samples(dtype):
    make = Maker(dtype, "meshgrid")
    return [
        SampleInput((make(3), make(4)), {"indexing": "ij"}, desc="ij"),
        SampleInput((make(3), make(4), make(2)), {"indexing": "xy"}, desc="xy, three"),
        SampleInput((make(), make(3)), {"indexing": "ij"}, desc="0-dim"),
        SampleInput((make(2),), {"indexing": "xy"}, desc="one"),
        SampleInput((stepped(make(3)), make(2)), {"indexing": "xy"}, desc="stepped"),
        SampleInput((make(0), make(2)), {"indexing": "ij"}, desc="zero-size"),
    ]


def _cartesian_prod_samples(dtype):
    make = Maker(dtype, "cartesian_prod")
    return [
        SampleInput((make(3), make(2)), desc="two"),
        SampleInput((make(2), stepped(make(3)), make(2)), desc="three, stepped"),
        SampleInput((make(0), make(2)), desc="zero-size"),
    ]


def _np_cartesian_prod(*arrays):
    if len(arrays) == 1:
        return arrays[0]
    grids = np.meshgrid(*arrays, indexing="ij")
    return np.stack([g.reshape(-1) for g in grids], axis=1)


def _kron_samples(dtype):
    make = Maker(dtype, "kron")
    return [
        SampleInput((make(2, 3), make(3, 2)), desc="matrices"),
        SampleInput((make(2, 3), make(4)), desc="2-D and 1-D"),
        SampleInput((make(), make(2, 2)), desc="0-dim"),
        SampleInput((make(2, 1, 2), make(3, 2)), desc="3-D and 2-D"),
        # (not transposed: torch 2.15's kron then fails in its final view)
        SampleInput((stepped(make(3, 2)), stepped(make(2, 2))), desc="non-contiguous"),
        SampleInput((make(0, 2), make(2, 3)), desc="zero-size"),
    ]


def _tensordot_samples(dtype):
    make = Maker(dtype, "tensordot")
    return [
        SampleInput((make(3, 4), make(4, 5)), {"dims": 1}, desc="dims 1"),
        SampleInput((make(2, 3, 4), make(3, 4, 2)), {"dims": 2}, desc="dims 2"),
        SampleInput((make(3, 4), make(2, 5)), {"dims": 0}, desc="outer"),
        SampleInput((make(2, 3, 4), make(4, 2, 3)), {"dims": ([1, 2], [2, 0])}, desc="lists"),
        SampleInput((transposed(make(4, 3)), stepped(make(3, 4))), {"dims": ([1], [0])}, desc="nc"),
        SampleInput((make(0, 3), make(3, 2)), {"dims": 1}, desc="zero-size free dim"),
        SampleInput((make(2, 0), make(0, 3)), {"dims": 1}, desc="zero-size contracted dim"),
    ]


def _np_tensordot(a, b, dims):
    return np.tensordot(a, b, axes=dims)


# (equation, operand shapes, layouts, grad_fn name or None, desc)
EINSUM_CASES = (
    ("ij,jk->ik", ((3, 4), (4, 5)), None, "ViewBackward0", "matmul"),
    ("ij->ji", ((3, 4),), None, "PermuteBackward0", "transpose"),
    ("ij->j", ((3, 4),), None, "SumBackward1", "sum"),
    ("ii->i", ((3, 3),), None, "PermuteBackward0", "diagonal"),
    ("ii", ((3, 3),), None, "SumBackward1", "trace, implicit"),
    ("ij,ij->ij", ((3, 4), (3, 4)), None, "MulBackward0", "elementwise"),
    ("i,j->ij", ((3,), (4,)), None, "MulBackward0", "outer"),
    ("bij,bjk->bik", ((2, 3, 4), (2, 4, 2)), None, "ViewBackward0", "batched matmul"),
    ("ij,j->i", ((3, 4), (4,)), None, None, "matrix-vector"),
    ("ba,ac", ((3, 4), (4, 2)), None, None, "implicit output"),
    ("...ij,...jk->...ik", ((2, 3, 4), (4, 2)), None, None, "ellipsis broadcast"),
    ("i...->...", ((3, 2, 2),), None, None, "ellipsis, summed label"),
    ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 2)), None, None, "three operands"),
    ("iij,jk->ik", ((3, 3, 4), (4, 2)), None, None, "diagonal and contraction"),
    ("ij,k->i", ((3, 4), (2,)), None, None, "sums in one operand only"),
    ("ij,jk->ik", ((3, 4), (4, 5)), ("T", "step"), None, "non-contiguous"),
    ("ij,jk->ik", ((0, 3), (3, 2)), None, None, "zero-size"),
    ("ij,jk->ik", ((2, 0), (0, 3)), None, None, "zero-size contracted"),
)


def _einsum_samples(dtype):
    make = Maker(dtype, "einsum")
    out = []
    for equation, shapes, layouts, name, desc in EINSUM_CASES:
        args = tuple(
            make(*s) if how is None else NonContig(make(*s), how)
            for s, how in zip(shapes, layouts or (None,) * len(shapes))
        )
        out.append(SampleInput(args, {"equation": equation}, grad_fn=name, desc=desc))
    return out


def _inner_samples(dtype):
    make = Maker(dtype, "inner")
    return [
        SampleInput((make(4), make(4)), desc="vectors"),
        SampleInput((make(3, 4), make(2, 4)), desc="matrices"),
        SampleInput((make(), make(2, 3)), desc="0-dim"),
        SampleInput((make(2, 3, 4), make(4)), desc="3-D and 1-D"),
        SampleInput((transposed(make(4, 3)), stepped(make(2, 3))), desc="non-contiguous"),
        SampleInput((make(0, 3), make(2, 3)), desc="zero-size"),
    ]


def _matrix_power_samples(dtype):
    make = Maker(dtype, "matrix_power")

    def mat(*shape, how=None):  # entries kept small, so powers stay in range
        a = make(*shape) / 2
        return a if how is None else NonContig(a, how)

    return [
        SampleInput((mat(3, 3),), {"n": 2}, desc="square"),
        SampleInput((mat(3, 3),), {"n": 5}, desc="odd power"),
        SampleInput((mat(3, 3),), {"n": 1}, desc="one: a copy"),
        SampleInput((mat(3, 3),), {"n": 0}, desc="zero: the identity"),
        SampleInput((mat(2, 3, 3),), {"n": 3}, desc="batched"),
        SampleInput((mat(3, 3, how="T"),), {"n": 3}, desc="transposed"),
        SampleInput((mat(2, 2, how="step"),), {"n": 2}, desc="stepped"),
        SampleInput((mat(0, 2, 2),), {"n": 2}, desc="zero-size"),
    ]


def _chain_samples(first_vector):
    def sample_inputs(dtype):
        make = Maker(dtype, "multi_dot")
        samples = [
            SampleInput((make(3, 4), make(4, 2)), desc="two"),
            SampleInput((make(2, 5), make(5, 3), make(3, 4), make(4, 2)), desc="four"),
            SampleInput((transposed(make(3, 4)), stepped(make(4, 2))), desc="non-contiguous"),
            SampleInput((make(0, 3), make(3, 2), make(2, 2)), desc="zero-size"),
        ]
        if first_vector:
            samples += [
                SampleInput((make(3), make(3, 4), make(4)), desc="vector ends"),
                SampleInput((make(3, 4), make(4)), desc="last a vector"),
            ]
        else:
            samples.append(SampleInput((make(3, 4),), desc="one: a copy"))
        return samples

    return sample_inputs


def _np_multi_dot(*arrays):
    return np.linalg.multi_dot(arrays) if len(arrays) > 1 else arrays[0].copy()


def _vecdot_samples(dtype):
    make = Maker(dtype, "vecdot")
    return [
        SampleInput((make(3, 4), make(3, 4)), desc="rows"),
        SampleInput((make(3, 4), make(4)), desc="broadcast"),
        SampleInput((make(3, 4), make(2, 3, 1)), {"dim": -2}, desc="dim -2, broadcast"),
        SampleInput((transposed(make(4, 3)), stepped(make(4, 3))), {"dim": 0}, desc="nc"),
        SampleInput((make(0, 3), make(3)), desc="zero-size"),
    ]


def _np_vecdot(x, y, dim=-1):
    return np.sum(np.conj(x) * y, axis=dim)


def _bool_reduction_samples(dtype):
    make = Maker(dtype, "bool_reduction")
    rows = make(3, 4)
    rows[1] = 0
    rows[2, 1] = 0
    return [
        SampleInput((rows,), desc="all"),
        SampleInput((rows,), {"dim": 1}, desc="dim"),
        SampleInput((rows,), {"dim": 0, "keepdim": True}, desc="dim, keepdim"),
        SampleInput((rows,), {"dim": (0, -1)}, desc="dim tuple"),
        SampleInput((np.array([[3, 0], [1, 2]], np.uint8),), {"dim": 1}, desc="uint8 kept"),
        SampleInput((rows > 0,), {"dim": 1}, desc="bool"),
        SampleInput((make(),), {"dim": 0}, desc="0-dim"),
        SampleInput((transposed(rows.T.copy()),), {"dim": 0}, desc="transposed"),
        SampleInput((stepped(rows),), {"dim": 1}, desc="stepped"),
        SampleInput((make(0, 3),), {"dim": 0}, desc="zero-size: empty rows"),
    ]


def _np_bool_reduction(fn):
    def ref(a, dim=None, keepdim=False):
        out = np.asarray(fn(a != 0, axis=dim, keepdims=keepdim))
        return out.astype(np.uint8) if a.dtype == np.uint8 else out

    return ref


def _count_nonzero_samples(dtype):
    return [s for s in _bool_reduction_samples(dtype) if "keepdim" not in s.kwargs]


def _np_count_nonzero(a, dim=None):
    return np.asarray(np.count_nonzero(a, axis=dim), np.int64)


def _conj_transpose_samples(batched):
    def sample_inputs(dtype):
        make = Maker(dtype, "conj_transpose")
        samples = [
            SampleInput((make(3, 4),), desc="matrix"),
            SampleInput((transposed(make(4, 3)),), desc="transposed"),
            SampleInput((stepped(make(3, 4)),), desc="stepped"),
            SampleInput((make(0, 3),), desc="zero-size"),
        ]
        if batched:
            samples.append(SampleInput((make(2, 3, 4),), desc="batch"))
        return samples

    return sample_inputs


def _np_conj_transpose(a):
    return np.conj(np.swapaxes(a, -1, -2))


def _linalg(name, op, ref, samples, grad_fn_name, **flags) -> OpInfo:
    """A torch.linalg op: needs `torch.linalg` (the name is not an attribute)."""
    return OpInfo(
        f"linalg.{name}", op, ref, samples, grad_fn_name=grad_fn_name, needs=("linalg",), **flags
    )


COMPOSITE_DB: list[OpInfo] = [
    *_issue11(
        OpInfo(
            "take_along_dim",
            _indexed("take_along_dim"),
            _np_take_along_dim,
            _take_along_dim_samples,
            grad_fn_name={0: "GatherBackward0", 3: "GatherBackward0"},
        ),
        late_one_tensor(
            "tensor_split",
            _np_tensor_split,
            *TENSOR_SPLIT_CASES,
            grad_fn_name="SliceBackward0",
        ),
        late_op("meshgrid", np.meshgrid, _meshgrid_samples, "ExpandBackward0"),
        late_op("cartesian_prod", _np_cartesian_prod, _cartesian_prod_samples, "StackBackward0"),
        late_op("kron", np.kron, _kron_samples, "UnsafeViewBackward0", supports_complex=True),
        late_op(
            "tensordot",
            _np_tensordot,
            _tensordot_samples,
            {0: "ViewBackward0", 3: "ViewBackward0"},
            supports_complex=True,
        ),
        OpInfo(
            "einsum",
            lambda *tensors, equation: torch.einsum(equation, *tensors),
            lambda *arrays, equation: np.einsum(equation, *arrays),
            _einsum_samples,
            supports_complex=True,
        ),
        late_op(
            "inner",
            np.inner,
            _inner_samples,
            {0: "ViewBackward0", 2: "MulBackward0"},
            supports_complex=True,
        ),
        late_op(
            "matrix_power",
            np.linalg.matrix_power,
            _matrix_power_samples,
            {0: "MmBackward0", 1: "MmBackward0", 2: "CloneBackward0"},
        ),
        OpInfo(
            "chain_matmul",
            _late("chain_matmul"),
            _np_multi_dot,
            _chain_samples(first_vector=False),
            grad_fn_name={0: "ViewBackward0", 1: "ViewBackward0", 4: "CloneBackward0"},
        ),
        _no_grad_op("all", _np_bool_reduction(np.all), _bool_reduction_samples),
        _no_grad_op("any", _np_bool_reduction(np.any), _bool_reduction_samples),
        _no_grad_op("count_nonzero", _np_count_nonzero, _count_nonzero_samples),
    ),
    _linalg(
        "multi_dot",
        lambda *tensors: torch.linalg.multi_dot(list(tensors)),
        _np_multi_dot,
        _chain_samples(first_vector=True),
        {0: "ViewBackward0", 1: "ViewBackward0", 4: "ViewBackward0"},
        supports_complex=True,
    ),
    _linalg(
        "vecdot",
        lambda x, y, **kwargs: torch.linalg.vecdot(x, y, **kwargs),
        _np_vecdot,
        _vecdot_samples,
        "SumBackward1",
        supports_complex=True,
    ),
    _linalg(
        "matmul",
        lambda x, y: torch.linalg.matmul(x, y),
        np.matmul,
        # not 1-D @ 2-D: torch's batched forward AD gets it wrong (TORCH_GAPS, matmul)
        lambda dtype: [s for i, s in enumerate(_matmul_samples(dtype)) if i != 3],
        "MmBackward0",
    ),
    OpInfo(
        "H",
        lambda x: x.H,
        _np_conj_transpose,
        _conj_transpose_samples(batched=False),
        grad_fn_name="TransposeBackward0",
        supports_complex=True,
        needs=("H",),
    ),
    OpInfo(
        "mH",
        lambda x: x.mH,
        _np_conj_transpose,
        _conj_transpose_samples(batched=True),
        grad_fn_name="TransposeBackward0",
        supports_complex=True,
        needs=("mH",),
    ),
]
ISSUE11_DB += COMPOSITE_DB

#: The composites' entries, which test_ops checks exist.
COMPOSITE_OPS = tuple(op.name for op in COMPOSITE_DB)


# --- issue 11: advanced indexing ---
# Tensor.__getitem__ with index tensors, lists and bool masks (IndexBackward0), and the
# ops behind advanced __setitem__: index_put(_) (IndexPutBackward0), index_fill
# (IndexFillBackward0), and nonzero/argwhere. Keys hold numpy arrays, which the op turns
# into tensors (int64 indices, bool masks); lists and numbers stay as they are. Keys are
# kwargs, so the harness never differentiates, scales or vmaps an index. numpy indexes by
# torch's rule wherever no int is separated from an index array by a slice (where torch
# selects the int first); tests/test_advanced_indexing.py covers those, the setitem paths,
# batched indices under vmap and the errors.


def _every(grad_fn_name, n_samples) -> dict[int, str]:
    """The same grad_fn name pinned for every sample."""
    return dict.fromkeys(range(n_samples), grad_fn_name)


def _key_tensors(key):
    """The key with its numpy arrays as tensors."""
    if isinstance(key, tuple):
        return tuple(_key_tensors(k) for k in key)
    return to_tensor(key) if isinstance(key, np.ndarray) else key


def _mask(*shape) -> np.ndarray:
    """A fixed bool mask with some True and some False in every row."""
    return np.arange(math.prod(shape)).reshape(shape) % 3 != 1


# (key, shape of x, layout, desc); x float of that shape.
ADVANCED_KEYS = (
    (_index(2, 0, 1), (3, 4, 5), None, "one index tensor"),
    ((slice(None), _index([0], [2]), _index(1, 4)), (3, 4, 5), None, "adjacent, broadcast"),
    ((_index(0, 2), slice(None), _index([1], [4])), (3, 4, 5), None, "apart: index dims first"),
    ((None, Ellipsis, _index(4, 0)), (3, 4, 5), None, "None and Ellipsis"),
    ((_index(1, 2), None, _index(0, 3)), (3, 4, 5), None, "apart by None"),
    ((slice(1, None), 1, _index(3, 0)), (3, 4, 5), None, "slice, int next to an index"),
    (_index(1, 1, 0, 1), (3, 4, 5), None, "duplicates: the gradient accumulates"),
    ((_index(-1, -3), slice(None, None, 2)), (3, 4, 5), None, "negative indices"),
    (_mask(3, 4), (3, 4, 5), None, "bool mask"),
    ((Ellipsis, _mask(5)), (3, 4, 5), None, "bool mask after Ellipsis"),
    ([0, 2, 2], (3, 4, 5), None, "list"),
    (True, (3, 4), None, "True"),
    (np.array(1), (3, 4), None, "0-dim index: a select"),
    (np.zeros(0, np.int64), (3, 4, 5), None, "zero-size index"),
    ((_index([3], [0]), _index(2, 1)), (4, 3), "T", "transposed"),
    ((slice(None), _index(1, 3, 1)), (3, 4), "step", "stepped"),
    ((slice(None), _index(3, 0)), (0, 4), None, "zero-size"),
)


def _advanced_getitem_samples(dtype):
    make = Maker(dtype, "advanced getitem")
    return [
        SampleInput((NonContig(make(*shape), how) if how else make(*shape),), {"key": key}, desc=d)
        for key, shape, how, d in ADVANCED_KEYS
    ]


def _np_index_put(a, values, *, indices, accumulate=False):
    out = a.copy()
    if accumulate:
        np.add.at(out, tuple(indices), values)  # unbuffered: duplicates add up
    else:
        out[tuple(indices)] = values
    return out


def _index_put_samples(dtype):
    make = Maker(dtype, "index_put")
    mask = _mask(3, 4)
    empty = np.zeros(0, np.int64)
    return [
        SampleInput((make(3, 4), make(2, 4)), {"indices": (_index(2, 0),)}, desc="rows"),
        SampleInput(
            (make(3, 4), make()), {"indices": (_index(1, 2), _index(3, 0))}, desc="0-dim values"
        ),
        SampleInput((make(3, 4), make(4)), {"indices": (_index(0, 2),)}, desc="values broadcast"),
        SampleInput(
            (make(3, 4), make(4, 4)),
            {"indices": (_index(0, 0, 2, 0),), "accumulate": True},
            desc="accumulate, duplicates",
        ),
        SampleInput(
            (make(3, 4), make(1)),
            {"indices": (_index(1, 1, 2), _index([3], [3], [0])), "accumulate": True},
            desc="accumulate, duplicates, broadcast indices and values",
        ),
        SampleInput((make(3, 4), make(int(mask.sum()))), {"indices": (mask,)}, desc="bool mask"),
        SampleInput(
            (transposed(make(4, 3)), stepped(make(2, 3))),
            {"indices": (_index(3, 1),), "accumulate": True},
            desc="non-contiguous",
        ),
        SampleInput((make(3, 4), make(0, 4)), {"indices": (empty,)}, desc="zero-size index"),
        SampleInput((make(0, 3), make(0, 3)), {"indices": (empty,)}, desc="zero-size"),
    ]


def _index_put(inplace):
    def op(x, values, *, indices, accumulate=False):
        indices = tuple(to_tensor(i) for i in indices)
        if inplace:
            return x.clone().index_put_(indices, values, accumulate=accumulate)
        return torch.index_put(x, indices, values, accumulate=accumulate)

    return op


def _index_put_entry(name, inplace) -> OpInfo:
    pins = _every("IndexPutBackward0", 9)
    return OpInfo(name, _index_put(inplace), _np_index_put, _index_put_samples, grad_fn_name=pins)


def _np_index_fill(a, *, dim, index, value):
    out = a.copy()
    key = [slice(None)] * a.ndim
    key[dim] = index.reshape(-1)
    out[tuple(key)] = value
    return out


def _index_fill_samples(dtype):
    make = Maker(dtype, "index_fill")
    return [
        SampleInput((make(3, 4),), {"dim": 0, "index": _index(2, 0), "value": 1.5}),
        SampleInput(
            (make(3, 4),), {"dim": 1, "index": _index(3, 1, 3), "value": -2}, desc="int, repeated"
        ),
        SampleInput((make(2, 3, 4),), {"dim": -1, "index": _index(0, 3), "value": 0.5}, desc="-1"),
        SampleInput((make(3, 4),), {"dim": 1, "index": np.array(2), "value": 1.5}, desc="0-dim"),
        SampleInput((make(3, 4),), {"dim": 0, "index": _index(-1), "value": 1.5}, desc="index -1"),
        SampleInput((transposed(make(4, 3)),), {"dim": 0, "index": _index(3, 0), "value": 1.5}),
        SampleInput((stepped(make(3, 4)),), {"dim": 1, "index": _index(1), "value": 1.5}),
        SampleInput((make(3, 4),), {"dim": 0, "index": np.zeros(0, np.int64), "value": 1.5}),
        SampleInput((make(0, 3),), {"dim": 1, "index": _index(2), "value": 1.5}, desc="zero"),
    ]


def _np_nonzero(a, as_tuple=False):
    if as_tuple:  # torch takes a 0-dim input as 1-D
        return tuple(np.asarray(i, np.int64) for i in np.nonzero(np.atleast_1d(a)))
    return np.asarray(np.argwhere(a), np.int64)


def _nonzero_samples(dtype):
    a = _with_zeros(dtype, "nonzero", (0, 1), (1, 2), (2, 0), (2, 3))
    return [
        SampleInput((a,), desc="2-D"),
        SampleInput((a,), {"as_tuple": True}, desc="as_tuple"),
        SampleInput((np.stack([a, a * 0, a]).reshape(2, 3, 6),), desc="3-D"),
        SampleInput((np.asarray(a[0, 0]),), desc="0-dim, nonzero"),
        SampleInput((np.asarray(a[0, 1]),), desc="0-dim, zero"),
        SampleInput((np.asarray(a[0, 0]),), {"as_tuple": True}, desc="0-dim, as_tuple"),
        SampleInput((a > 0,), desc="bool"),
        SampleInput((np.array([[0, 3], [-1, 0]], np.int64),), desc="int64"),
        SampleInput((transposed(a.T.copy()),), desc="transposed"),
        SampleInput((stepped(a),), {"as_tuple": True}, desc="stepped"),
        SampleInput((a[:0],), desc="zero-size"),
        SampleInput((a[:0],), {"as_tuple": True}, desc="zero-size, as_tuple"),
    ]


def _argwhere_samples(dtype):
    return [s for s in _nonzero_samples(dtype) if not s.kwargs]


# nonzero and argwhere have data-dependent output shapes, which vmap refuses (torch's
# aten::nonzero; argwhere: test_advanced_indexing.py).
INDEXING_DB: list[OpInfo] = [
    OpInfo(
        "getitem_advanced",
        lambda x, *, key: x[_key_tensors(key)],
        lambda a, *, key: a[key],
        _advanced_getitem_samples,
        grad_fn_name=_every("IndexBackward0", len(ADVANCED_KEYS)) | {12: "SelectBackward0"},
    ),
    *_issue11(
        _index_put_entry("index_put", inplace=False),
        _index_put_entry("index_put_", inplace=True),
        OpInfo(
            "index_fill",
            _indexed("index_fill"),
            _np_index_fill,
            _index_fill_samples,
            grad_fn_name=_every("IndexFillBackward0", 9),
        ),
        replace(_no_grad_op("nonzero", _np_nonzero, _nonzero_samples), supports_vmap=False),
        replace(_no_grad_op("argwhere", _np_nonzero, _argwhere_samples), supports_vmap=False),
    ),
]
ISSUE11_DB += INDEXING_DB

#: The advanced-indexing entries, which test_ops checks exist.
INDEXING_OPS = tuple(op.name for op in INDEXING_DB)


# --- issue 11: sort family ---
# sort, argsort, msort, topk, kthvalue, median and nanmedian (with and without a dim).
# Samples draw distinct values (Maker.distinct): a tie makes the indices and the gradient
# ambiguous, except the median-without-dim sample with ties, whose gradient torch shares
# evenly among the tied elements (which central differences agree with for two ties).
# The references hold no NaN rule: NaN ordering, stability with ties, integer and bool
# inputs, the return types and the errors are in tests/test_sort_ops.py.


def _along_dim(ref):
    """A numpy reference along a dim returning one array or a tuple, that also takes a
    0-dim array: torch treats it as 1-D and gives 0-dim outputs."""

    def wrapped(a, *args, **kwargs):
        if a.ndim:
            return ref(a, *args, **kwargs)
        out = ref(a.reshape(1), *args, **kwargs)
        if isinstance(out, tuple):
            return tuple(np.reshape(o, ()) for o in out)
        return np.reshape(out, ())

    return wrapped


def _np_sort_raw(a, dim=-1, descending=False, stable=False):
    # no ties in the samples, so -a gives the descending order (stable= changes nothing)
    indices = np.argsort(-a if descending else a, axis=dim, kind="stable")
    return np.take_along_axis(a, indices, dim), indices


def _np_topk_raw(a, k, dim=-1, largest=True, sorted=True):
    values, indices = _np_sort_raw(a, dim, descending=largest)
    keep = np.arange(k)
    return np.take(values, keep, axis=dim), np.take(indices, keep, axis=dim)


def _np_kthvalue_raw(a, k, dim=-1, keepdim=False):
    values, indices = _np_sort_raw(a, dim)
    pick = np.full([1 if d == dim % a.ndim else n for d, n in enumerate(a.shape)], k - 1)
    values, indices = np.take_along_axis(values, pick, dim), np.take_along_axis(indices, pick, dim)
    if not keepdim:
        values, indices = np.squeeze(values, dim), np.squeeze(indices, dim)
    return values, indices


def _np_median_raw(a, dim=None, keepdim=False):
    """torch's median: the lower of the two middle values (numpy's averages them)."""
    if dim is None:
        flat = np.sort(a.reshape(-1))
        return np.asarray(flat[(flat.size - 1) // 2] if flat.size else np.nan, a.dtype)
    return _np_kthvalue_raw(a, (a.shape[dim] - 1) // 2 + 1, dim, keepdim)


_np_sort = _along_dim(_np_sort_raw)
_np_topk = _along_dim(_np_topk_raw)
_np_kthvalue = _along_dim(_np_kthvalue_raw)
_np_median = _along_dim(_np_median_raw)


def _np_argsort(a, dim=-1, descending=False, stable=False):
    return _np_sort(a, dim, descending)[1]


def _np_msort(a):
    return _np_sort(a, 0)[0]


def _topk(x, k, dim=-1, largest=True, sorted=True):
    """torch.topk; with sorted=False, the result put in order afterwards: the order
    torch leaves it in is unspecified (a partial sort's), only the set of k is."""
    out = torch.topk(x, k, dim=dim, largest=largest, sorted=sorted)
    if sorted:
        return out
    order = out.values.argsort(dim=dim, descending=largest)
    return out.values.gather(dim, order), out.indices.gather(dim, order)


SORT_CASES = (
    ((3, 4), {}, None, "last dim"),
    ((3, 4), {"dim": 0}, None, "dim 0"),
    ((2, 3, 4), {"dim": -2, "descending": True}, None, "negative dim, descending"),
    ((3, 4), {"descending": True, "stable": True}, None, "descending, stable="),
    ((), {}, None, "0-dim"),
    ((), {"dim": 0, "descending": True}, None, "0-dim, dim 0"),
    ((4, 3), {"dim": 0}, "T", "transposed"),
    ((3, 4), {"dim": -1, "descending": True}, "step", "stepped"),
    ((0, 3), {"dim": 1}, None, "zero-size"),
    ((3, 0), {"dim": 1}, None, "zero-size dim"),
)

MSORT_CASES = (
    ((3, 4), {}, None, "2-D"),
    ((4, 2, 3), {}, None, "3-D"),
    ((5,), {}, None, "1-D"),
    ((), {}, None, "0-dim"),
    ((4, 3), {}, "T", "transposed"),
    ((3, 4), {}, "step", "stepped"),
    ((0, 3), {}, None, "zero-size"),
)

TOPK_CASES = (
    ((3, 4), {"k": 2}, None, "last dim"),
    ((3, 4), {"k": 3, "dim": 0, "largest": False}, None, "smallest, dim 0"),
    ((2, 3, 4), {"k": 1, "dim": -2}, None, "negative dim"),
    ((3, 4), {"k": 4, "largest": False, "sorted": True}, None, "all k, smallest"),
    ((3, 5), {"k": 3, "sorted": False}, None, "unsorted"),
    ((2, 5), {"k": 2, "dim": 1, "largest": False, "sorted": False}, None, "unsorted smallest"),
    ((3, 4), {"k": 0}, None, "k 0"),
    ((), {"k": 1}, None, "0-dim"),
    ((4, 3), {"k": 2, "dim": 0}, "T", "transposed"),
    ((3, 4), {"k": 2, "dim": -1}, "step", "stepped"),
    ((0, 3), {"k": 2, "dim": 1}, None, "zero-size"),
)

KTHVALUE_CASES = (
    ((3, 4), {"k": 2}, None, "last dim"),
    ((3, 4), {"k": 3, "dim": 0, "keepdim": True}, None, "dim 0, keepdim"),
    ((2, 3, 4), {"k": 4, "dim": -1, "keepdim": False}, None, "largest, keepdim=False"),
    ((2, 3, 4), {"k": 1, "dim": -3, "keepdim": True}, None, "smallest, negative dim, keepdim"),
    ((), {"k": 1}, None, "0-dim"),
    ((), {"k": 1, "dim": 0, "keepdim": True}, None, "0-dim, keepdim"),
    ((4, 3), {"k": 2, "dim": 0}, "T", "transposed"),
    ((3, 4), {"k": 4, "dim": 1}, "step", "stepped"),
    ((0, 3), {"k": 2, "dim": 1}, None, "zero-size"),
)

# Without a dim (the even sizes take the lower middle), then along a dim, keepdim both ways.
MEDIAN_CASES = (
    ((3, 4), {}, None, "all, even size"),
    ((3, 5), {}, None, "all, odd size"),
    ((3, 4), {"dim": 1}, None, "dim, even size"),
    ((3, 4), {"dim": 0, "keepdim": True}, None, "dim, odd size, keepdim"),
    ((2, 3, 4), {"dim": -1, "keepdim": False}, None, "negative dim"),
    ((), {}, None, "0-dim"),
    ((), {"dim": 0, "keepdim": True}, None, "0-dim, dim 0"),
    ((4, 3), {"dim": 0}, "T", "transposed"),
    ((3, 4), {}, "step", "stepped, all"),
    ((3, 4), {"dim": -1}, "step", "stepped"),
    ((0, 3), {"dim": 1}, None, "zero-size"),
)


def _median_ties_samples(dtype):
    """median() at a value held twice, where torch gives each tied element half the
    gradient (central differences agree: one side moves the median, the other not);
    and a zero-size sample along a dim (median() of nothing is nan, which torch's vmap
    and gradgradcheck refuse: test_sort_ops.py)."""
    a = np.array([[1.5, -0.5, 0.75], [0.75, 2.0, -1.25]], dtype)
    return [
        SampleInput((a,), desc="two ties at the median"),
        SampleInput((transposed(a.T),), desc="two ties, transposed"),
        SampleInput((Maker(dtype, "median ties")(0, 3),), {"dim": 1}, desc="zero-size"),
    ]


def _median_entry(name, backward) -> OpInfo:
    """median or nanmedian (the samples hold no NaN, where the two agree)."""
    pins = {0: f"{backward}0", 2: f"{backward}1", 3: f"{backward}1"}
    return late_one_tensor(name, _np_median, *MEDIAN_CASES, distinct=True, grad_fn_name=pins)


def _median_ties_entry(name, backward) -> OpInfo:
    """median or nanmedian on ties, where the gradient jumps: no gradgradcheck (its
    finite differences straddle the jump)."""
    return OpInfo(
        f"{name}_ties",
        _late(name),
        _np_median,
        _median_ties_samples,
        grad_fn_name=f"{backward}0",
        supports_gradgrad=False,
        needs=(name,),
    )


SORT_DB: list[OpInfo] = _issue11(
    late_one_tensor(
        "sort",
        _np_sort,
        *SORT_CASES,
        distinct=True,
        grad_fn_name={0: "SortBackward0", 2: "SortBackward0"},
    ),
    late_one_tensor(
        "argsort",
        _np_argsort,
        *SORT_CASES,
        seed="argsort",
        distinct=True,
        supports_grad=False,
        supports_gradgrad=False,
    ),
    late_one_tensor("msort", _np_msort, *MSORT_CASES, distinct=True, grad_fn_name="SortBackward0"),
    OpInfo(
        "topk",
        _topk,
        _np_topk,
        _one_tensor(*TOPK_CASES, seed="topk", distinct=True),
        grad_fn_name={0: "TopkBackward0", 1: "TopkBackward0"},
    ),
    late_one_tensor(
        "kthvalue",
        _np_kthvalue,
        *KTHVALUE_CASES,
        distinct=True,
        grad_fn_name={0: "KthvalueBackward0", 1: "KthvalueBackward0"},
    ),
    _median_entry("median", "MedianBackward"),
    _median_entry("nanmedian", "NanmedianBackward"),
) + [
    _median_ties_entry("median", "MedianBackward"),
    _median_ties_entry("nanmedian", "NanmedianBackward"),
]
ISSUE11_DB += SORT_DB

#: The sort family's entries, which test_ops checks exist.
SORT_OPS = tuple(op.name for op in SORT_DB)

# --- issue 11: index writes ---
# index_add and index_copy (a 1-d index along a dim; source differentiated), take (an
# index into the flattened input) and masked_select / masked_scatter (a bool mask, which
# broadcasts). Their errors and in-place forms: tests/test_index_write.py.


def _np_index_write(a, source, *, dim, index, alpha=1, add=True):
    out = a.copy()
    moved, src = np.moveaxis(out, dim, 0), np.moveaxis(source, dim, 0)
    for k, i in enumerate(index.reshape(-1)):
        moved[i] = moved[i] + alpha * src[k] if add else src[k]
    return out


def _index_write_samples(name, unique):
    def samples(dtype):
        make = Maker(dtype, name)
        repeat = _index(2, 0, 1) if unique else _index(2, 0, 2)
        return [
            SampleInput((make(3, 4), make(3, 4)), {"dim": 0, "index": repeat}),
            SampleInput((make(3, 4), make(3, 2)), {"dim": 1, "index": _index(3, 1)}),
            SampleInput((make(2, 3, 4), make(2, 3, 1)), {"dim": -1, "index": _index(3)}, desc="-1"),
            SampleInput((transposed(make(3, 4)), stepped(make(3, 4))), {"dim": 0, "index": repeat}),
            SampleInput((make(3, 4), make(0, 4)), {"dim": 0, "index": np.zeros(0, np.int64)}),
        ]

    return samples


def _np_take(a, *, index):
    return np.take(a.reshape(-1), index)


def _take_samples(dtype):
    make = Maker(dtype, "take")
    return [
        SampleInput((make(3, 4),), {"index": _index([0, 11], [5, 5])}, desc="repeated"),
        SampleInput((make(3, 4),), {"index": _index(-1, -12)}, desc="negative"),
        SampleInput((transposed(make(4, 3)),), {"index": _index(1, 4)}),
        SampleInput((make(5),), {"index": np.array(3)}, desc="0-dim index"),
        SampleInput((make(3, 4),), {"index": np.zeros(0, np.int64)}, desc="zero-size index"),
        SampleInput((make(0, 3),), {"index": np.zeros(0, np.int64)}, desc="zero-size"),
    ]


def _rows(*rows):
    return np.array(rows, bool)


def _np_masked_select(a, *, mask):
    a, mask = np.broadcast_arrays(a, mask)
    return a[mask]


def _masked_select_samples(dtype):
    make = Maker(dtype, "masked_select")
    return [
        SampleInput((make(3, 4),), {"mask": make(3, 4) > 0}),
        SampleInput((make(3, 1),), {"mask": _rows(True, False, True, True)}, desc="x broadcasts"),
        SampleInput((make(3, 4),), {"mask": _rows([True], [False], [True])}, desc="mask bcast"),
        SampleInput((stepped(make(3, 4)),), {"mask": _rows(False, True, True, False)}),
        SampleInput((make(0, 4),), {"mask": _rows(True, False, True, True)}, desc="zero-size"),
    ]


def _np_masked_scatter(a, source, *, mask):
    out, mask = (np.array(b) for b in np.broadcast_arrays(a, mask))
    out[mask] = source.reshape(-1)[: int(mask.sum())]
    return out


def _masked_scatter_samples(dtype):
    make = Maker(dtype, "masked_scatter")
    return [
        SampleInput((make(3, 4), make(12)), {"mask": make(3, 4) > 0}),
        SampleInput((make(3, 4), make(2, 5)), {"mask": _rows([True], [False], [True])}),
        SampleInput((transposed(make(3, 4)), make(7)), {"mask": _rows(False, True, False, True)}),
        SampleInput((make(0, 4), make(2)), {"mask": _rows(True, False, True, True)}, desc="zero"),
    ]


INDEX_WRITE_DB: list[OpInfo] = _issue11(
    OpInfo(
        "index_add",
        _indexed("index_add", "source"),
        _np_index_write,
        _index_write_samples("index_add", unique=False),
        grad_fn_name="IndexAddBackward0",
    ),
    OpInfo(
        "index_copy",
        _indexed("index_copy", "source"),
        lambda a, source, **kw: _np_index_write(a, source, add=False, **kw),
        _index_write_samples("index_copy", unique=True),
        grad_fn_name="IndexCopyBackward0",
    ),
    OpInfo("take", _indexed("take"), _np_take, _take_samples, grad_fn_name="TakeBackward0"),
    replace(
        OpInfo(
            "masked_select",
            _indexed("masked_select"),
            _np_masked_select,
            _masked_select_samples,
            grad_fn_name="MaskedSelectBackward0",
        ),
        supports_vmap=False,
    ),
    replace(
        OpInfo(
            "masked_scatter",
            _indexed("masked_scatter", "source"),
            _np_masked_scatter,
            _masked_scatter_samples,
            grad_fn_name="MaskedScatterBackward0",
        ),
        supports_vmap=False,
    ),
)
ISSUE11_DB += INDEX_WRITE_DB

#: The index-write entries, which test_ops checks exist.
INDEX_WRITE_OPS = tuple(op.name for op in INDEX_WRITE_DB)

# --- issue 11: special math (mathops) ---
# References in float64 from formulas independent of the kernels (math.erfc / lgamma,
# a Hurwitz-zeta sum for polygamma, bisection on math.erf for erfinv); domains keep
# samples off poles and kinks (lgamma/digamma at non-positive integers, logit at 0/1,
# atan2 at the origin, copysign at 0, remainder/fmod where other is near 0).


def _np_vec(f):
    return lambda x: np.vectorize(f, otypes=[x.dtype])(x)


def _py_zeta(s, q, n=200):
    """Hurwitz zeta by a direct sum and the Euler-Maclaurin tail (s > 1, q > 0)."""
    w = q + n
    head = sum((q + k) ** -s for k in range(n))
    return head + w ** (1 - s) / (s - 1) + 0.5 * w**-s + s * w ** (-s - 1) / 12


def _py_polygamma(n, x):
    if n == 0:  # digamma: recurrence up, then the asymptotic series
        acc = 0.0
        while x < 20:
            acc -= 1 / x
            x += 1
        z = 1 / (x * x)
        return acc + math.log(x) - 0.5 / x - z * (1 / 12 - z * (1 / 120 - z / 252))
    return (-1) ** (n + 1) * math.factorial(n) * _py_zeta(n + 1, x)


def _py_erfinv(y):
    lo, hi = -6.0, 6.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
    return 0.5 * (lo + hi)


def _np_logit(x, eps=None):
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    return np.log(x / (1 - x))


def _tensor_args_only(samples):
    """Binary samples without the Python-number ones (ops whose `other` is a Tensor)."""
    return _without("reflected scalar", _without("python scalar", samples))


def _logit_samples(dtype):
    return unary_samples(0.05, 0.95)(dtype) + [
        SampleInput(
            (Maker(dtype, "logit eps")(3, 4, low=0.01, high=0.99),), {"eps": 0.1}, desc="eps"
        ),
    ]


def _np_xlogy(a, b):
    dtype = (a if isinstance(a, np.ndarray) else b).dtype
    return np.asarray(np.where(np.equal(a, 0), 0.0, a * np.log(b)), dtype)


def _floor_divide(a, b):
    return torch.floor_divide(a, b)


def _div_mode(mode):
    return lambda a, b: torch.div(a, b, rounding_mode=mode)


MATHOPS_DB = (
    unary("erfc", _late("erfc"), _np_vec(math.erfc), "ErfcBackward0", needs=("erfc",)),
    unary(
        "erfinv",
        _late("erfinv"),
        _np_vec(_py_erfinv),
        "ErfinvBackward0",
        low=-0.9,
        high=0.9,
        needs=("erfinv",),
    ),
    unary(
        "lgamma",
        _late("lgamma"),
        _np_vec(math.lgamma),
        "LgammaBackward0",
        low=0.2,
        high=4.0,
        needs=("lgamma",),
    ),
    unary(
        "digamma",
        _late("digamma"),
        _np_vec(lambda v: _py_polygamma(0, v)),
        "DigammaBackward0",
        low=0.3,
        high=4.0,
        needs=("digamma",),
    ),
    unary(
        "polygamma",
        lambda x: torch.polygamma(1, x),
        _np_vec(lambda v: _py_polygamma(1, v)),
        "PolygammaBackward0",
        low=0.3,
        high=4.0,
        needs=("polygamma",),
    ),
    unary(
        "polygamma_2",
        lambda x: torch.polygamma(2, x),
        _np_vec(lambda v: _py_polygamma(2, v)),
        "PolygammaBackward0",
        low=0.3,
        high=4.0,
        needs=("polygamma",),
    ),
    OpInfo(
        "logit",
        _late("logit"),
        _np_logit,
        _logit_samples,
        grad_fn_name="LogitBackward0",
        needs=("logit",),
    ),
    unary("sinc", _late("sinc"), np.sinc, "SincBackward0", needs=("sinc",)),
    unary(
        "nan_to_num", _late("nan_to_num"), np.nan_to_num, "NanToNumBackward0", needs=("nan_to_num",)
    ),
    binary(
        "atan2",
        _late("atan2"),
        np.arctan2,
        "Atan2Backward0",
        _tensor_args_only(binary_samples(avoid_other=(0.0,))),
        needs=("atan2",),
    ),
    binary(
        "hypot",
        _late("hypot"),
        np.hypot,
        "HypotBackward0",
        _tensor_args_only(binary_samples(avoid_other=(0.0,))),
        needs=("hypot",),
    ),
    binary(
        "copysign",
        _late("copysign"),
        np.copysign,
        "CopysignBackward0",
        _without("reflected scalar", binary_samples(avoid_other=(0.0,))),
        needs=("copysign",),
    ),
    binary(
        "nextafter",
        _late("nextafter"),
        np.nextafter,
        "NextafterBackward0",
        _tensor_args_only(binary_samples()),
        supports_gradgrad=False,
        needs=("nextafter",),
    ),
    binary(
        "xlogy",
        _late("xlogy"),
        _np_xlogy,
        "XlogyBackward0",
        binary_samples(low=0.1, high=2.0),
        needs=("xlogy",),
    ),
    binary(
        "logaddexp",
        _late("logaddexp"),
        np.logaddexp,
        "LogaddexpBackward0",
        _tensor_args_only(binary_samples()),
        needs=("logaddexp",),
    ),
    binary(
        "logaddexp2",
        _late("logaddexp2"),
        np.logaddexp2,
        "Logaddexp2Backward0",
        _tensor_args_only(binary_samples()),
        needs=("logaddexp2",),
    ),
    binary(
        "remainder",
        _late("remainder"),
        np.remainder,
        "RemainderBackward1",
        _without("reflected scalar", binary_samples(avoid_other=(0.0,), scalar=0.7)),
        needs=("remainder",),
    ),
    binary(
        "fmod",
        _late("fmod"),
        np.fmod,
        "FmodBackward1",
        _without("reflected scalar", binary_samples(avoid_other=(0.0,), scalar=0.7)),
        needs=("fmod",),
    ),
    binary(
        "div_floor",
        _div_mode("floor"),
        np.floor_divide,
        "DivBackward2",
        _tensor_args_only(binary_samples(avoid_other=(0.0,))),
        needs=("floor_divide",),
    ),
    binary(
        "div_trunc",
        _div_mode("trunc"),
        lambda a, b: np.trunc(a / b),
        "DivBackward2",
        _tensor_args_only(binary_samples(avoid_other=(0.0,))),
        needs=("floor_divide",),
    ),
    OpInfo(
        "floor_divide",
        _late("floor_divide"),
        np.floor_divide,
        binary_samples(avoid_other=(0.0,)),
        supports_grad=False,
        supports_gradgrad=False,
        needs=("floor_divide",),
    ),
)

MATHOPS_OPS = tuple(op.name for op in MATHOPS_DB)


# --- issue 11: matrix and shape ops (matops) ---
# Ops with their own node in torch (src/ops/matrix_ops.rs, diag.rs, roll.rs): the fused
# add-products (self broadcast to the product), vdot, cross, trace, diag_embed and the
# diag / diagflat built on it, roll, rot90, narrow_copy. grad_fn names pinned from
# torch 2.15.


def _np_add_product(product):
    return lambda s, a, b, beta=1, alpha=1: beta * s + alpha * product(a, b)


def _addmm_samples(dtype):
    make = Maker(dtype, "addmm")
    return [
        SampleInput((make(3, 4), make(3, 2), make(2, 4))),
        SampleInput((make(3, 4), make(3, 2), make(2, 4)), {"beta": 0.5, "alpha": -2}, desc="beta"),
        SampleInput((make(4), make(3, 2), make(2, 4)), desc="self broadcast (4,)"),
        SampleInput((make(3, 1), make(3, 2), make(2, 4)), {"alpha": 1.5}, desc="self (3, 1)"),
        SampleInput((make(), make(3, 2), make(2, 4)), desc="0-dim self"),
        SampleInput((make(3, 4), make(3, 2), make(2, 4)), {"beta": 0}, desc="beta 0"),
        SampleInput(
            (transposed(make(3, 4)), transposed(make(3, 2)), stepped(make(2, 4))), desc="T"
        ),
        SampleInput((make(3, 4), make(3, 0), make(0, 4)), desc="zero inner size"),
        SampleInput((make(0, 4), make(0, 2), make(2, 4)), desc="zero-size"),
    ]


def _addmv_samples(dtype):
    make = Maker(dtype, "addmv")
    return [
        SampleInput((make(3), make(3, 4), make(4))),
        SampleInput((make(3), make(3, 4), make(4)), {"beta": -1.5, "alpha": 0.5}, desc="beta"),
        SampleInput((make(1), make(3, 4), make(4)), desc="self broadcast (1,)"),
        SampleInput((make(), make(3, 4), make(4)), desc="0-dim self"),
        SampleInput((stepped(make(3)), transposed(make(3, 4)), stepped(make(4))), desc="T"),
        SampleInput((make(3), make(3, 0), make(0)), desc="zero inner size"),
    ]


def _baddbmm_samples(dtype):
    make = Maker(dtype, "baddbmm")
    return [
        SampleInput((make(2, 3, 4), make(2, 3, 5), make(2, 5, 4))),
        SampleInput(
            (make(2, 3, 4), make(2, 3, 5), make(2, 5, 4)), {"beta": 2, "alpha": 0.5}, desc="beta"
        ),
        SampleInput((make(3, 4), make(2, 3, 5), make(2, 5, 4)), desc="self broadcast (3, 4)"),
        SampleInput((make(4), make(2, 3, 5), make(2, 5, 4)), desc="self broadcast (4,)"),
        SampleInput(
            (make(2, 3, 4), transposed(make(2, 3, 5)), stepped(make(2, 5, 4))), desc="non-contig"
        ),
        SampleInput((make(0, 3, 4), make(0, 3, 5), make(0, 5, 4)), desc="zero batch"),
    ]


def _addbmm_samples(dtype):
    make = Maker(dtype, "addbmm")
    return [
        SampleInput((make(3, 4), make(2, 3, 5), make(2, 5, 4))),
        SampleInput(
            (make(3, 4), make(2, 3, 5), make(2, 5, 4)), {"beta": 0.5, "alpha": 2}, desc="beta"
        ),
        SampleInput((make(4), make(2, 3, 5), make(2, 5, 4)), desc="self broadcast (4,)"),
        SampleInput(
            (transposed(make(3, 4)), transposed(make(2, 3, 5)), make(2, 5, 4)), desc="non-contig"
        ),
        SampleInput((make(3, 4), make(0, 3, 5), make(0, 5, 4)), desc="zero batch"),
    ]


def _vdot_samples(dtype):
    make = Maker(dtype, "vdot")
    return [
        SampleInput((make(4), make(4))),
        SampleInput((stepped(make(5)), make(5)), desc="stepped"),
        SampleInput((make(0), make(0)), desc="zero-size"),
    ]


def _cross_samples(dtype):
    make = Maker(dtype, "cross")
    return [
        SampleInput((make(4, 3), make(4, 3)), {"dim": 1}),
        SampleInput((make(3, 4), make(3, 4)), {"dim": 0}, desc="dim 0"),
        SampleInput((make(1, 3), make(4, 3)), {"dim": -1}, desc="broadcast"),
        SampleInput((make(2, 1, 3), make(1, 4, 3)), {"dim": 2}, desc="broadcast both"),
        SampleInput((transposed(make(4, 3)), stepped(make(4, 3))), {"dim": 1}, desc="non-contig"),
        SampleInput((make(0, 3), make(0, 3)), {"dim": 1}, desc="zero-size"),
    ]


def _np_cross(a, b, dim=-1):
    return np.cross(a, b, axis=dim)


def _trace_samples(dtype):
    make = Maker(dtype, "trace")
    return [
        SampleInput((make(3, 4),)),
        SampleInput((make(3, 3),), desc="square"),
        SampleInput((transposed(make(4, 3)),), desc="T"),
        SampleInput((make(0, 3),), desc="zero-size"),
    ]


def _np_diag_embed(a, offset=0, dim1=-2, dim2=-1):
    n = a.shape[-1] + abs(offset)
    out = np.zeros(a.shape[:-1] + (n, n), a.dtype)
    i = np.arange(a.shape[-1])
    rows, cols = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[..., rows, cols] = a
    rank = a.ndim + 1
    return np.moveaxis(out, (-2, -1), (dim1 % rank, dim2 % rank))


DIAG_EMBED_CASES = (
    ((3, 4), {}),
    ((3, 4), {"offset": 1}, None, "offset 1"),
    ((2, 3), {"offset": -2, "dim1": 0, "dim2": 2}, None, "offset -2, dims 0, 2"),
    ((2, 3), {"dim1": -1, "dim2": 0}, None, "dims reversed"),
    ((4,), {}, None, "1-D"),
    ((4, 3), {"offset": 1}, "T", "transposed"),
    ((0, 3), {}, None, "zero-size"),
)


def _diag_samples(dtype):
    make = Maker(dtype, "diag")
    return [
        SampleInput((make(4),), grad_fn="DiagEmbedBackward0"),
        SampleInput((make(3),), {"diagonal": 1}, desc="vector, above"),
        SampleInput((make(3),), {"diagonal": -2}, desc="vector, below"),
        SampleInput((make(3, 4),), grad_fn="DiagonalBackward0_copy", desc="matrix"),
        SampleInput((make(3, 4),), {"diagonal": 1}, desc="matrix, above"),
        SampleInput((make(3, 4),), {"diagonal": -2}, desc="matrix, below"),
        SampleInput((transposed(make(4, 3)),), {"diagonal": -1}, desc="T"),
        SampleInput((make(0),), desc="zero-size"),
    ]


def _np_diag(a, diagonal=0):
    return np.diag(a, diagonal)


def _diagflat_samples(dtype):
    make = Maker(dtype, "diagflat")
    return [
        SampleInput((make(2, 3),)),
        SampleInput((make(4),), {"offset": -1}, desc="1-D, below"),
        SampleInput((make(),), {"offset": 2}, desc="0-dim"),
        SampleInput((transposed(make(3, 2)),), desc="T"),
        SampleInput((make(0, 3),), desc="zero-size"),
    ]


def _np_diagflat(a, offset=0):
    return np.diagflat(a, offset)


ROLL_CASES = (
    ((3, 4), {"shifts": 1, "dims": 0}),
    ((3, 4), {"shifts": (1, -2), "dims": (0, 1)}, None, "two dims"),
    ((3, 4), {"shifts": 5}, None, "flattened"),
    ((3, 4), {"shifts": -7, "dims": 1}, None, "shift past the size"),
    ((2, 3, 4), {"shifts": 2, "dims": -2}, None, "negative dim"),
    ((4, 3), {"shifts": 1, "dims": 1}, "T", "transposed"),
    ((3, 4), {"shifts": 3}, "step", "stepped, flattened"),
    ((), {"shifts": 1}, None, "0-dim"),
    ((0, 3), {"shifts": 1, "dims": 0}, None, "zero-size"),
)


def _np_roll(a, shifts, dims=None):
    return np.roll(a, shifts, dims)


ROT90_CASES = (
    ((3, 4), {}),
    ((3, 4), {"k": 2}, None, "k 2"),
    ((3, 4), {"k": -1, "dims": (1, 0)}, None, "k -1, dims reversed"),
    ((2, 3, 4), {"k": 3, "dims": (0, 2)}, None, "k 3, 3-D"),
    ((3, 4), {"k": 4}, None, "k 4"),
    ((4, 3), {}, "T", "transposed"),
    ((0, 3), {}, None, "zero-size"),
)


def _np_rot90(a, k=1, dims=(0, 1)):
    return np.rot90(a, k, axes=dims)


NARROW_COPY_CASES = (
    ((3, 4), {"dim": 1, "start": 1, "length": 2}),
    # (no negative start: torch 2.15's NarrowCopyBackward0 fails on one)
    ((2, 3, 4), {"dim": -1, "start": 0, "length": 3}, None, "negative dim"),
    ((4, 3), {"dim": 0, "start": 1, "length": 2}, "T", "transposed"),
    ((3, 4), {"dim": 1, "start": 2, "length": 0}, None, "zero length"),
    ((0, 3), {"dim": 1, "start": 1, "length": 2}, None, "zero-size"),
)


def _np_narrow_copy(a, dim, start, length):
    start = start % a.shape[dim] if start < 0 else start
    return np.take(a, np.arange(start, start + length), axis=dim)


MATOPS_DB: list[OpInfo] = [
    *_issue11(
        late_op("addmm", _np_add_product(np.matmul), _addmm_samples, "AddmmBackward0",
                supports_complex=True),
        late_op("addmv", _np_add_product(np.matmul), _addmv_samples, "AddmvBackward0",
                supports_complex=True),
        late_op("baddbmm", _np_add_product(np.matmul), _baddbmm_samples, "BaddbmmBackward0",
                supports_complex=True),
        late_op(
            "addbmm",
            _np_add_product(lambda a, b: np.matmul(a, b).sum(0)),
            _addbmm_samples,
            "AddbmmBackward0",
            supports_complex=True,
        ),
        late_op("vdot", np.vdot, _vdot_samples, "VdotBackward0", supports_complex=True),
        late_op("cross", _np_cross, _cross_samples, "LinalgCrossBackward0", supports_complex=True),
        late_op("trace", np.trace, _trace_samples, "TraceBackward0", supports_complex=True),
        late_one_tensor(
            "diag_embed",
            _np_diag_embed,
            *DIAG_EMBED_CASES,
            grad_fn_name="DiagEmbedBackward0",
            supports_complex=True,
        ),
        late_op("diag", _np_diag, _diag_samples, supports_complex=True),
        late_op("diagflat", _np_diagflat, _diagflat_samples, "DiagEmbedBackward0",
                supports_complex=True),
        late_one_tensor("roll", _np_roll, *ROLL_CASES, grad_fn_name="RollBackward0",
                        supports_complex=True),
        late_one_tensor("rot90", _np_rot90, *ROT90_CASES, grad_fn_name="Rot90Backward0",
                        supports_complex=True),
        late_one_tensor(
            "narrow_copy",
            _np_narrow_copy,
            *NARROW_COPY_CASES,
            grad_fn_name="NarrowCopyBackward0",
            supports_complex=True,
        ),
    ),
    _linalg(
        "cross",
        lambda a, b, **kwargs: torch.linalg.cross(a, b, **kwargs),
        _np_cross,
        _cross_samples,
        "LinalgCrossBackward0",
        supports_complex=True,
    ),
]
ISSUE11_DB += MATOPS_DB

#: The matrix and shape ops' entries, which test_ops checks exist.
MATOPS_OPS = tuple(op.name for op in MATOPS_DB)


# --- issue 11: ternary, scans, nan-reductions ---
# lerp / addcmul / addcdiv broadcasting all three operands; cummax / cummin / logcumsumexp
# along a dim (cumprod's entry is above, with its zeros; its dtype= sample here);
# nansum / nanmean skipping NaN; aminmax. grad_fn names pinned from torch 2.15.


def _ternary_samples(seed, divisor=False, scalar_weight=False):
    """(x, a, b) broadcasting all three ways, a 0-dim third operand, non-contiguous and
    zero-size; `divisor` keeps the third operand off zero; `scalar_weight` adds lerp's
    Python-number weight on either side of 0.5."""

    def sample_inputs(dtype):
        mk = Maker(dtype, seed)

        def third(*shape):
            return mk(*shape, avoid=(0.0,), gap=0.5) if divisor else mk(*shape)

        samples = [
            SampleInput((mk(3, 4), mk(3, 4), third(3, 4)), desc="same shape"),
            SampleInput((mk(3, 4), mk(4), third(3, 1)), desc="broadcast all three"),
            SampleInput((mk(4), mk(2, 1, 4), third(3, 1)), desc="broadcast to the other two"),
            SampleInput((mk(2, 3), mk(2, 3), third()), desc="0-dim third"),
            SampleInput(
                (transposed(mk(3, 4)), stepped(mk(3, 4)), third(3, 4)), desc="non-contiguous"
            ),
            SampleInput((mk(0, 3), mk(3), third(0, 1)), desc="zero-size"),
        ]
        if scalar_weight:
            samples += [
                SampleInput((mk(3, 4), mk(4), 0.3), desc="scalar weight"),
                SampleInput((mk(3, 4), mk(3, 4), 1.5), desc="scalar weight above 0.5"),
                SampleInput((mk(0, 3), mk(3), 0.5), desc="scalar weight, zero-size"),
            ]
        else:
            samples.append(
                SampleInput((mk(3, 4), mk(4), third(3, 1)), {"value": -0.5}, desc="value=")
            )
        return samples

    return sample_inputs


def _np_lerp(start, end, weight):
    return start + weight * (end - start)


def _np_addcmul(x, a, b, value=1):
    return x + value * a * b


def _np_addcdiv(x, a, b, value=1):
    return x + value * a / b


def _np_cum_extreme(largest):
    """cummax / cummin as torch: a later equal value takes over (its index wins), and
    NaN, once seen, stays."""

    def ref(a, dim):
        if a.ndim == 0:
            return a.copy(), np.zeros((), np.int64)
        x = np.moveaxis(a, dim, -1)
        values, indices = x.copy(), np.zeros(x.shape, np.int64)
        for k in range(1, x.shape[-1]):
            best, new = values[..., k - 1], x[..., k]
            wins = new >= best if largest else new <= best
            take = np.isnan(new) | (~np.isnan(best) & wins)
            values[..., k] = np.where(take, new, best)
            indices[..., k] = np.where(take, k, indices[..., k - 1])
        return np.moveaxis(values, -1, dim), np.moveaxis(indices, -1, dim)

    return ref


def _np_logcumsumexp(a, dim):
    if a.ndim == 0:
        return a.copy()
    return np.logaddexp.accumulate(a, axis=dim)


def _cumprod_dtype_sample(dtype):
    mk = Maker(dtype, "cumprod dtype")
    kwargs = {"dim": 1, "dtype": torch.float64}
    return [
        SampleInput((mk(3, 4),), kwargs, desc="dtype="),
        SampleInput((stepped(mk(3, 4)),), kwargs, desc="dtype=, stepped"),
        SampleInput((mk(0, 3),), kwargs, desc="dtype=, zero-size"),
    ]


def _with_nans(dtype, seed, *shape):
    a = Maker(dtype, seed)(*shape)
    a.flat[::3] = np.nan
    return a


def _nan_reduction_samples(with_dtype):
    def sample_inputs(dtype):
        mk = Maker(dtype, "nan reduction")
        nans = _with_nans(dtype, "nans", 3, 4)
        samples = [
            SampleInput((nans,), desc="all"),
            SampleInput((nans,), {"dim": 1}, desc="dim"),
            SampleInput(
                (_with_nans(dtype, "nans3", 2, 3, 4),),
                {"dim": (0, 2), "keepdim": True},
                desc="dims, keepdim",
            ),
            SampleInput((mk(3, 4),), {"dim": 0}, desc="no NaN"),
            # no 0-dim sample: torch's batched gradient of a 0-dim nansum fails
            SampleInput((_with_nans(dtype, "nans1", 5),), desc="1-D"),
            SampleInput(
                (transposed(_with_nans(dtype, "nansT", 4, 3)),), {"dim": 1}, desc="transposed"
            ),
            SampleInput((stepped(_with_nans(dtype, "nansS", 3, 4)),), {"dim": -1}, desc="stepped"),
            SampleInput((mk(0, 3),), {"dim": 1}, desc="zero-size"),
        ]
        if with_dtype:
            samples.append(SampleInput((nans,), {"dim": 1, "dtype": torch.float64}, desc="dtype="))
        return samples

    return sample_inputs


def _np_nan_reduction(fn):
    def ref(a, dim=None, keepdim=False, dtype=None):
        return np.asarray(fn(a, axis=dim, keepdims=keepdim, dtype=dtype))

    return ref


# (keepdim without a dim is in test_misc_ops.py: torch's vmap of it is wrong)
AMINMAX_CASES = (
    ((3, 4), {}, None, "all"),
    ((3, 4), {"dim": 1}, None, "dim"),
    ((2, 3, 4), {"dim": 0, "keepdim": True}, None, "dim, keepdim"),
    ((), {}, None, "0-dim"),
    ((4, 3), {"dim": -1}, "T", "transposed"),
    ((3, 4), {"dim": 1}, "step", "stepped"),
    ((0, 3), {"dim": 1}, None, "zero-size"),
)


def _np_aminmax(a, dim=None, keepdim=False):
    return np.amin(a, axis=dim, keepdims=keepdim), np.amax(a, axis=dim, keepdims=keepdim)


MISC_DB: list[OpInfo] = _issue11(
    late_op(
        "lerp",
        _np_lerp,
        _ternary_samples("lerp", scalar_weight=True),
        {0: "LerpBackward1", 6: "LerpBackward0"},
        supports_complex=True,
    ),
    late_op(
        "addcmul",
        _np_addcmul,
        _ternary_samples("addcmul"),
        {0: "AddcmulBackward0", 6: "AddcmulBackward0"},
        supports_complex=True,
    ),
    late_op(
        "addcdiv",
        _np_addcdiv,
        _ternary_samples("addcdiv", divisor=True),
        {0: "AddcdivBackward0", 6: "AddcdivBackward0"},
        supports_complex=True,
    ),
    late_one_tensor(
        "cummax",
        _np_cum_extreme(True),
        *SCAN_CASES,
        distinct=True,
        grad_fn_name={0: "CummaxBackward0", 5: "CummaxBackward0"},
    ),
    late_one_tensor(
        "cummin",
        _np_cum_extreme(False),
        *SCAN_CASES,
        distinct=True,
        grad_fn_name={0: "CumminBackward0", 5: "CumminBackward0"},
    ),
    late_op(
        "logcumsumexp",
        _np_logcumsumexp,
        # no "empty dim" sample: torch's forward-mode rule takes a max over that dim
        _plus(
            _without("empty dim", _one_tensor(*SCAN_CASES, seed="logcumsumexp")), _large_values(1)
        ),
        {0: "LogcumsumexpBackward0", 8: "LogcumsumexpBackward0"},
        # forward-over-reverse of the vjp disagrees with finite differences (to fix)
        supports_gradgrad=False,
    ),
    late_op(
        "nansum",
        _np_nan_reduction(np.nansum),
        _nan_reduction_samples(True),
        {0: "NansumBackward0", 1: "NansumBackward0"},
    ),
    late_op(
        "nanmean",
        _np_nan_reduction(np.nanmean),
        _nan_reduction_samples(False),
        {0: "DivBackward0", 1: "DivBackward0"},
    ),
    late_one_tensor(
        "aminmax",
        _np_aminmax,
        *AMINMAX_CASES,
        distinct=True,
        grad_fn_name={0: "AminmaxBackward0", 1: "AminmaxBackward0"},
    ),
) + [
    replace(
        late_op(
            "cumprod",
            _np_scan(np.cumprod),
            _cumprod_dtype_sample,
            "CumprodBackward0",
            supports_gradgrad=False,
        ),
        name="cumprod_dtype",
        needs=("cumprod",),
    ),
]
ISSUE11_DB += MISC_DB

#: The ternary, scan and nan-reduction entries, which test_ops checks exist.
MISC_OPS = tuple(op.name for op in MISC_DB)


# --- issue 11: norms, scatter_reduce, unfold, unique ---
# linalg.vector_norm is one node (LinalgVectorNormBackward0, src/ops/norm.rs);
# matrix_norm's ±1 / ±inf are amax / amin of it, linalg.norm and torch.norm route
# between them (python/ferrograd/_norms.py); repeat_interleave is torch's composite
# (ViewBackward0 over clone/expand for an int, IndexSelectBackward0 for a tensor);
# unfold is a view (UnfoldBackward0); scatter_reduce has its own node
# (ScatterReduceBackward0, src/ops/scatter_reduce.rs); unique / unique_consecutive have
# no derivative (no gradient checks, no vmap). grad_fn names pinned from torch 2.15.


def _np_vector_norm(a, ord=2, dim=None, keepdim=False, dtype=None):
    a = np.abs(a if dtype is None else a.astype(dtype))
    if a.ndim == 0 or (isinstance(dim, (tuple, list)) and not dim):
        dim = None  # dim=[] is every dim; a 0-dim tensor's dim 0 is itself
    axis = tuple(dim) if isinstance(dim, (tuple, list)) else dim
    if ord == 0:
        out = np.sum(a != 0, axis=axis, keepdims=keepdim).astype(a.dtype)
    elif ord == math.inf:
        out = np.max(a, axis=axis, keepdims=keepdim)
    elif ord == -math.inf:
        out = np.min(a, axis=axis, keepdims=keepdim)
    else:
        out = np.sum(a**ord, axis=axis, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(out, a.dtype)


def _vector_norm_samples(dtype):
    make = Maker(dtype, "vector_norm")

    def away(*shape):  # |x| >= 0.3: orders below 1 have no kink there
        return Maker(dtype, f"vector_norm{shape}")(*shape, avoid=(0.0,), gap=0.3)

    return [
        SampleInput((make(3, 4),)),
        SampleInput((make(3, 4),), {"ord": 1, "dim": 1}, desc="ord 1, dim"),
        SampleInput((make(2, 3, 4),), {"ord": math.inf, "dim": (0, 2)}, desc="inf, dims"),
        SampleInput((make(3, 4),), {"ord": -math.inf, "dim": -1, "keepdim": True},
                    desc="-inf, keepdim"),
        # (ord 0: torch leaves the gradient undefined; tests/test_norm_ops.py)
        SampleInput((make(2, 3, 4),), {"ord": 3, "dim": -1, "keepdim": True}, desc="ord 3"),
        SampleInput((away(3, 4),), {"ord": 1.5}, desc="ord 1.5"),
        SampleInput((away(3, 4),), {"ord": 0.5, "dim": 1}, desc="ord 0.5"),
        SampleInput((away(3, 4),), {"ord": -1, "dim": 0}, desc="ord -1"),
        SampleInput((make(3, 4),), {"dim": [], "keepdim": True}, desc="dim [] is every dim"),
        SampleInput((make(),), {"ord": 3}, desc="0-dim"),
        SampleInput((make(),), {"dim": 0}, desc="0-dim, dim 0"),
        SampleInput((transposed(make(4, 3)),), {"dim": 0}, desc="transposed"),
        SampleInput((stepped(make(3, 4)),), {"ord": 1, "dim": -1}, desc="stepped"),
        SampleInput((make(0, 3),), {"dim": 1}, desc="zero-size"),
        SampleInput((make(0, 3),), desc="empty: 0"),
    ]


def _vector_norm_dtype_samples(dtype):
    """dtype= (complex inputs take a complex dtype: the norm is its real part's type)."""
    target = torch.complex128 if np.dtype(dtype).kind == "c" else torch.float64
    return [SampleInput((Maker(dtype, "vector_norm_dtype")(3, 4),), {"dtype": target},
                        desc="dtype=")]


def _np_matrix_norm(a, ord="fro", dim=(-2, -1), keepdim=False):
    return np.asarray(np.linalg.norm(a, ord, axis=tuple(dim), keepdims=keepdim), np.abs(a).dtype)


def _matrix_norm_samples(dtype):
    make = Maker(dtype, "matrix_norm")
    return [
        SampleInput((make(3, 4),)),
        SampleInput((make(3, 4),), {"ord": 1}, grad_fn="AmaxBackward0", desc="ord 1"),
        SampleInput((make(3, 4),), {"ord": -1}, grad_fn="AminBackward0", desc="ord -1"),
        SampleInput((make(3, 4),), {"ord": math.inf, "keepdim": True},
                    grad_fn="AmaxBackward0", desc="inf, keepdim"),
        SampleInput((make(2, 3, 4),), {"ord": -math.inf, "dim": (0, 2)},
                    grad_fn="AminBackward0", desc="-inf, dims (0, 2)"),
        SampleInput((make(2, 3, 4),), {"ord": 1, "dim": (-1, 0), "keepdim": True},
                    desc="1, dims reversed, keepdim"),
        SampleInput((make(2, 3, 4),), {"ord": "fro", "dim": (2, 1)}, desc="fro, dims"),
        SampleInput((transposed(make(4, 3)),), {"ord": math.inf}, desc="transposed"),
        SampleInput((stepped(make(3, 4)),), {"ord": -1}, desc="stepped"),
        SampleInput((make(3, 4),), {"ord": "nuc"}, grad_fn="SumBackward1", desc="nuc"),
        SampleInput((make(3, 4),), {"ord": 2}, grad_fn="AmaxBackward0", desc="ord 2"),
        SampleInput((make(2, 3, 4),), {"ord": -2, "dim": (0, 2)}, grad_fn="AminBackward0",
                    desc="-2, dims (0, 2)"),
        SampleInput((make(2, 3, 4),), {"ord": "nuc", "dim": (2, 0), "keepdim": True},
                    desc="nuc, dims reversed, keepdim"),
        SampleInput((make(0, 3),), desc="zero-size"),
        SampleInput((make(0, 3),), {"ord": 1}, desc="zero-size, ord 1"),
        SampleInput((make(0, 3),), {"ord": "nuc"}, desc="zero-size, nuc"),
    ]


def _np_linalg_norm(a, ord=None, dim=None, keepdim=False):
    axis = tuple(dim) if isinstance(dim, (tuple, list)) else dim
    if ord is None and axis is None:
        return np.asarray(np.linalg.norm(a.reshape(-1)), np.abs(a).dtype).reshape(
            (1,) * a.ndim if keepdim else ()
        )
    return np.asarray(np.linalg.norm(a, ord, axis=axis, keepdims=keepdim), np.abs(a).dtype)


def _linalg_norm_samples(dtype):
    make = Maker(dtype, "linalg_norm")
    return [
        SampleInput((make(2, 3, 4),)),
        SampleInput((make(4),), {"ord": 1}, desc="1-D, ord 1"),
        SampleInput((make(3, 4),), {"ord": math.inf}, grad_fn="AmaxBackward0", desc="2-D, inf"),
        SampleInput((make(3, 4),), {"ord": 3, "dim": 1}, desc="ord 3, dim"),
        SampleInput((make(2, 3, 4),), {"ord": "fro", "dim": (0, 2)}, desc="fro, dims"),
        SampleInput((make(2, 3, 4),), {"ord": -1, "dim": (1, 2), "keepdim": True},
                    grad_fn="AminBackward0", desc="-1, dims, keepdim"),
        SampleInput((transposed(make(4, 3)),), {"dim": (0,)}, desc="transposed"),
        SampleInput((make(0, 3),), {"dim": 1}, desc="zero-size"),
    ]


def _np_norm(a, p="fro", dim=None, keepdim=False, dtype=None):
    ord = 2 if p in ("fro", None) else p
    return _np_vector_norm(a, ord, dim, keepdim, dtype)


def _norm_samples(dtype):
    make = Maker(dtype, "norm")
    return [
        SampleInput((make(3, 4),)),
        SampleInput((make(3, 4),), {"p": 1, "dim": 1}, desc="p 1, dim"),
        SampleInput((make(2, 3, 4),), {"p": "fro", "dim": (0, 2)}, desc="fro, dims"),
        SampleInput((make(2, 3, 4),), {"p": 3, "dim": -1, "keepdim": True}, desc="p 3"),
        SampleInput((make(3, 4),), {"p": math.inf}, desc="inf"),
        SampleInput((stepped(make(3, 4)),), {"p": 2, "dim": 0}, desc="stepped"),
        SampleInput((make(0, 3),), {"dim": 1}, desc="zero-size"),
    ]


def _np_repeat_interleave(a, repeats, dim=None, output_size=None):
    return np.repeat(a, repeats, axis=dim)


def _repeat_interleave_samples(dtype):
    make = Maker(dtype, "repeat_interleave")
    index_select = "IndexSelectBackward0"
    return [
        SampleInput((make(3, 4),), {"repeats": 2, "dim": 0}, grad_fn="ViewBackward0"),
        SampleInput((make(3, 4),), {"repeats": 3}, grad_fn="ViewBackward0", desc="flattened"),
        SampleInput((make(2, 3, 4),), {"repeats": 2, "dim": -1, "output_size": 8},
                    desc="last dim, output_size="),
        SampleInput((make(3, 4),), {"repeats": _index(1, 0, 2), "dim": 0},
                    grad_fn=index_select, desc="tensor repeats"),
        SampleInput((make(3, 4),), {"repeats": np.array([2], np.int64), "dim": 1},
                    grad_fn=index_select, desc="one repeat for all"),
        SampleInput((make(2, 3),), {"repeats": _index(1, 2, 0, 1, 1, 3)}, grad_fn=index_select,
                    desc="tensor repeats, flattened"),
        SampleInput((make(3, 4),), {"repeats": 0, "dim": 1}, desc="repeats 0"),
        SampleInput((make(),), {"repeats": 2}, desc="0-dim"),
        SampleInput((transposed(make(4, 3)),), {"repeats": 2, "dim": 1}, desc="transposed"),
        SampleInput((make(0, 3),), {"repeats": 2, "dim": 1}, desc="zero-size"),
    ]


def _np_unfold(a, dimension, size, step):
    if a.ndim == 0:
        return a.reshape(1)[:size]
    windows = np.lib.stride_tricks.sliding_window_view(a, size, axis=dimension)
    every = [slice(None)] * a.ndim
    every[dimension] = slice(None, None, step)
    return np.ascontiguousarray(windows[tuple(every)])


UNFOLD_CASES = (
    ((3, 5), {"dimension": 1, "size": 2, "step": 1}),
    ((3, 5), {"dimension": 1, "size": 3, "step": 2}, None, "step 2"),
    ((4, 3), {"dimension": 0, "size": 2, "step": 3}, None, "step past the end"),
    ((2, 3, 4), {"dimension": -2, "size": 3, "step": 1}, None, "whole dim"),
    ((3, 4), {"dimension": 1, "size": 0, "step": 1}, None, "size 0"),
    # (no 0-dim sample: torch 2.15's UnfoldBackward0 fails on one)
    ((4, 3), {"dimension": 1, "size": 2, "step": 1}, "T", "transposed"),
    ((3, 4), {"dimension": -1, "size": 2, "step": 2}, "step", "stepped"),
    ((0, 4), {"dimension": 1, "size": 2, "step": 1}, None, "zero-size"),
)


def _np_scatter_reduce(a, src, dim, index, reduce, include_self=True):
    out = a.copy()
    values: dict = {}
    for pos in np.ndindex(index.shape):
        at = list(pos)
        at[dim] = index[pos]
        values.setdefault(tuple(at), []).append(src[pos])
    for at, vals in values.items():
        vals = ([a[at]] if include_self else []) + vals
        combine = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max,
                   "amin": np.min}[reduce]
        out[at] = combine(vals)
    return out


def _scatter_reduce_samples(reduces):
    def sample_inputs(dtype):
        make = Maker(dtype, "scatter_reduce")
        index = _index([0, 2, 1, 0], [0, 1, 1, 2])
        samples = []
        for reduce in reduces:
            for include_self in (True, False):
                kwargs = {"dim": 0, "index": index, "reduce": reduce,
                          "include_self": include_self}
                samples.append(SampleInput((make(3, 4), make(2, 4)), kwargs,
                                           desc=f"{reduce}, include_self={include_self}"))
        with_zero = make(3, 4)
        with_zero[1, 2] = 0
        zero_src = make(2, 4)
        zero_src[0, 1] = 0
        dim1 = {"dim": 1, "index": _index([3, 0, 3], [1, 1, 0]), "reduce": reduces[0]}
        return samples + [
            # (src no larger than index: torch 2.15's gradient for a larger src has
            # index's shape)
            SampleInput((make(3, 5), make(2, 3)), dim1, desc="dim 1"),
            SampleInput((with_zero, zero_src), {"dim": 0, "index": index, "reduce": "prod"},
                        desc="prod through zeros"),
            SampleInput((transposed(make(3, 4)), stepped(make(2, 4))),
                        {"dim": 0, "index": index, "reduce": reduces[-1]}, desc="non-contig"),
            SampleInput((make(3, 4), make(0, 4)),
                        {"dim": 0, "index": np.zeros((0, 4), np.int64), "reduce": "sum"},
                        desc="empty index"),
            SampleInput((make(0, 4), make(0, 4)),
                        {"dim": 1, "index": np.zeros((0, 4), np.int64), "reduce": "mean"},
                        desc="zero-size"),
        ]

    return sample_inputs


def _np_unique(a, sorted=True, return_inverse=False, return_counts=False, dim=None):
    values, inverse, counts = np.unique(
        a, return_inverse=True, return_counts=True, axis=dim, equal_nan=False
    )
    inverse = inverse.reshape(a.shape if dim is None else (a.shape[dim],))
    wanted = (values, *((inverse,) if return_inverse else ()),
              *((counts,) if return_counts else ()))
    return wanted if len(wanted) > 1 else values


def _np_unique_consecutive(a, return_inverse=False, return_counts=False, dim=None):
    rows = a.reshape(-1) if dim is None else np.moveaxis(a, dim, 0)
    starts = [i for i in range(len(rows)) if i == 0 or not np.array_equal(rows[i], rows[i - 1])]
    counts = np.diff(starts + [len(rows)]).astype(np.int64)
    values = rows[starts] if dim is None else np.moveaxis(rows[starts], 0, dim)
    inverse = np.repeat(np.arange(len(starts)), counts).reshape(
        a.shape if dim is None else (len(rows),)
    )
    wanted = (values, *((inverse,) if return_inverse else ()),
              *((counts,) if return_counts else ()))
    return wanted if len(wanted) > 1 else values


def _unique_samples(consecutive):
    def sample_inputs(dtype):
        rng = np.random.default_rng(11)

        def repeats(*shape):  # few distinct values, so groups form
            return rng.integers(-2, 3, size=shape).astype(dtype)

        both = {"return_inverse": True, "return_counts": True}
        runs = np.array([[1, 1, 2], [1, 1, 2], [0, 5, 5], [0, 5, 5], [1, 1, 2]], dtype)
        samples = [
            SampleInput((repeats(3, 4),)),
            SampleInput((repeats(3, 4),), both, desc="inverse, counts"),
            SampleInput((runs,), {**both, "dim": 0}, desc="rows"),
            SampleInput((runs,), {"return_counts": True, "dim": -1}, desc="columns"),
            SampleInput((np.array([2.0, np.nan, 2.0, np.nan]).astype(dtype),), both,
                        desc="NaN is its own group"),
            SampleInput((repeats(),), both, desc="0-dim"),
            SampleInput((transposed(repeats(4, 3)),), both, desc="transposed"),
            SampleInput((np.array([[3, 1], [3, 1]], np.int64),), both, desc="int64"),
            SampleInput((repeats(0, 3),), both, desc="zero-size"),
            SampleInput((repeats(0, 3),), {**both, "dim": 0}, desc="zero-size, its dim"),
        ]
        if not consecutive:
            samples.append(SampleInput((repeats(5),), {"sorted": False}, desc="sorted=False"))
        return samples

    return sample_inputs


def _linalg_late(name):
    """torch.linalg.<name>, looked up when called."""
    return lambda *args, **kwargs: getattr(torch.linalg, name)(*args, **kwargs)


NORMS_DB: list[OpInfo] = [
    _linalg(
        "vector_norm",
        _linalg_late("vector_norm"),
        _np_vector_norm,
        _plus(_vector_norm_samples, _vector_norm_dtype_samples),
        "LinalgVectorNormBackward0",
        supports_complex=True,
    ),
    _linalg(
        "matrix_norm",
        _linalg_late("matrix_norm"),
        _np_matrix_norm,
        _matrix_norm_samples,
        "LinalgVectorNormBackward0",
        supports_complex=True,
    ),
    _linalg(
        "norm",
        _linalg_late("norm"),
        _np_linalg_norm,
        _linalg_norm_samples,
        "LinalgVectorNormBackward0",
        supports_complex=True,
    ),
    *_issue11(
        late_op("norm", _np_norm, _norm_samples, "LinalgVectorNormBackward0",
                supports_complex=True),
        OpInfo("repeat_interleave", _indexed("repeat_interleave"), _np_repeat_interleave,
               _repeat_interleave_samples, supports_complex=True),
        OpInfo(
            "unfold",
            lambda x, **kwargs: x.unfold(**kwargs),
            _np_unfold,
            _one_tensor(*UNFOLD_CASES, seed="unfold"),
            grad_fn_name="UnfoldBackward0",
            supports_complex=True,
        ),
        OpInfo(
            "scatter_reduce",
            _indexed("scatter_reduce", "src"),
            _np_scatter_reduce,
            _scatter_reduce_samples(("sum", "prod", "mean", "amax", "amin")),
            grad_fn_name="ScatterReduceBackward0",
        ),
        OpInfo(
            "unique",
            _late("unique"),
            _np_unique,
            _unique_samples(consecutive=False),
            supports_grad=False,
            supports_gradgrad=False,
            supports_vmap=False,
        ),
        OpInfo(
            "unique_consecutive",
            _late("unique_consecutive"),
            _np_unique_consecutive,
            _unique_samples(consecutive=True),
            supports_grad=False,
            supports_gradgrad=False,
            supports_vmap=False,
        ),
    ),
]
ISSUE11_DB += NORMS_DB

#: The norms / scatter_reduce / unfold / unique entries, which test_ops checks exist.
NORMS_OPS = tuple(op.name for op in NORMS_DB)




# --- issue 11: complex views and ops ---
# view_as_real / view_as_complex are views reading the storage as the other side of a
# complex pair (src/ops/complex.rs, Note: real views of complex storage in
# src/storage.rs); real / imag are select(view_as_real(x), -1, 0 / 1), as in torch
# (SelectBackward0 over ViewAsRealBackward0). Entries of ops that take complex input
# run their float samples through a complex cast first, so the float64 / float32
# checks see the op too. complex / polar / view_as_complex take real tensors only.
# grad_fn names pinned from torch 2.15.


def _to_complex(x):
    """A real tensor as complex (complex tensors as they are)."""
    if x.is_complex():
        return x
    return x.to(torch.complex128 if x.dtype == torch.float64 else torch.complex64)


def _complex_view(name):
    """torch.<name> of the sample made complex."""
    return lambda x: getattr(torch, name)(_to_complex(x))


def _np_view_as_real(a):
    return np.stack([np.real(a), np.imag(a)], -1)


def _np_view_as_complex(a):
    return a[..., 0] + 1j * a[..., 1]


def _np_complex(re, im):
    return np.asarray(re + 1j * im)


def _np_polar(r, theta):
    return np.asarray(r * np.cos(theta) + 1j * r * np.sin(theta))


def _np_angle(a):
    if np.iscomplexobj(a):
        return np.angle(a)
    return np.where(np.isnan(a), a, np.where(a < 0, np.pi, 0.0)).astype(a.dtype)


def _pairs_samples(dtype):
    """Real arrays with a last dim of 2 (view_as_complex's input), in batches, 0-size."""
    make = Maker(dtype, "pairs")
    return [
        SampleInput((make(3, 2),), desc="2-D"),
        SampleInput((make(2, 3, 2),), desc="3-D"),
        SampleInput((make(2),), desc="1-D"),
        SampleInput((transposed(make(3, 2)),), desc="transposed (made contiguous)"),
        SampleInput((make(0, 2),), desc="zero-size"),
    ]


def _parts_samples(low=-2.0, high=2.0):
    """Two real tensors (complex's real and imag, polar's abs and angle), broadcast."""

    def sample_inputs(dtype):
        dtype = np.dtype(dtype)
        if dtype.kind == "c":
            dtype = np.real(np.zeros((), dtype)).dtype
        mk = Maker(dtype, "parts")

        def first(*shape):
            return mk(*shape, low=low, high=high)

        def second(*shape):
            return mk(*shape)

        return [
            SampleInput((first(3, 4), second(3, 4)), desc="same shape"),
            SampleInput((first(3, 1), second(1, 4)), desc="broadcast both"),
            SampleInput((first(2, 3, 4), second(4)), desc="broadcast second"),
            SampleInput((first(3, 4), second()), desc="0-dim second"),
            SampleInput((transposed(first(3, 4)), stepped(second(3, 4))), desc="non-contiguous"),
            SampleInput((first(0, 3), second(3)), desc="zero-size"),
        ]

    return sample_inputs


COMPLEX_DB: list[OpInfo] = _issue11(
    OpInfo("view_as_real", _complex_view("view_as_real"), _np_view_as_real,
           unary_samples(), grad_fn_name="ViewAsRealBackward0", supports_complex=True),
    OpInfo("view_as_complex", lambda x: torch.view_as_complex(x.contiguous()),
           _np_view_as_complex, _pairs_samples, grad_fn_name="ViewAsComplexBackward0"),
    OpInfo("real", _complex_view("real"), np.real, unary_samples(),
           grad_fn_name="SelectBackward0", supports_complex=True),
    OpInfo("imag", _complex_view("imag"), np.imag, unary_samples(),
           grad_fn_name="SelectBackward0", supports_complex=True),
    OpInfo("complex", _late("complex"), _np_complex, _parts_samples(),
           grad_fn_name="ComplexBackward0"),
    OpInfo("polar", _late("polar"), _np_polar, _parts_samples(low=0.2, high=2.0),
           grad_fn_name="PolarBackward0"),
    unary("angle", _late("angle"), _np_angle, "AngleBackward0", avoid=(0.0,),
          supports_complex=True),
    unary("conj_physical", _late("conj_physical"), np.conj, None, supports_complex=True),
)
ISSUE11_DB += COMPLEX_DB

# Ops torch runs (forward and autograd) on complex tensors whose entries came before
# their complex kernels and rules, or never said they had them: their complex128
# checks are on from here (each verified against torch with run_opdb_on_torch.py).
# Not here: logaddexp (complex: test_complex_views.py; numpy has none, and torch's
# branch is not the principal one), logaddexp2 (torch has no complex kernel),
# nan_to_num (no complex kernel here), cumsum and prod (dtype= samples cast to real).
_NOW_COMPLEX = (
    *("neg", "log", "cos", "tanh", "sigmoid", "sqrt", "expm1", "log1p"),
    *("asin", "acos", "atan", "asinh", "acosh", "atanh", "square"),
    *("sub", "pow", "clone", "where", "sinc", "sum", "mean"),
    *("view", "reshape", "permute", "transpose", "expand", "squeeze", "unsqueeze"),
    *("flatten", "select", "narrow", "diagonal", "flip", "stack", "t", "mT"),
    *("unbind", "split", "chunk", "matmul", "mm", "bmm", "outer"),
    *("gather", "index_select", "masked_fill", "tril", "triu", "repeat", "tile"),
)
for _op in (*BASE_DB, *ISSUE11_DB, *MATHOPS_DB):
    if _op.name in _NOW_COMPLEX:
        _op.supports_complex = True

#: The complex view / op entries, which test_ops checks exist.
COMPLEX_OPS = (*(op.name for op in COMPLEX_DB), *_NOW_COMPLEX)


# --- issue 11: linalg decompositions ---
# One node per torch node (src/ops/decomp/, faer kernels): linalg.inv / inv_ex / inverse
# (LinalgInvExBackward0), det (LinalgDetBackward0; its gradient at a singular matrix is
# the cofactor matrix, from the minors), slogdet (LinalgSlogdetBackward0), logdet
# (torch's composite: WhereBackward0 over slogdet), solve / solve_ex
# (LinalgSolveExBackward0), solve_triangular (LinalgSolveTriangularBackward0), cholesky /
# cholesky_ex (LinalgCholeskyExBackward0, sampled as a function of x through x xᴴ + nI,
# since the op reads one triangle only). numpy's LAPACK is the reference; grad_fn names
# pinned from torch 2.15.


def _well_conditioned(dtype, seed, *shape):
    """Random matrices plus n·I: far from singular, so float32 keeps its accuracy."""
    a = Maker(dtype, seed)(*shape)
    n = shape[-1]
    return a + n * np.eye(n, dtype=a.dtype)


def _square_samples(seed):
    """(det at a singular matrix: tests/test_linalg_decomp.py, since torch's own det
    fails the forward-AD, batched and complex checks there.)"""

    def samples(dtype):
        wc = lambda *s: _well_conditioned(dtype, f"{seed}{s}", *s)  # noqa: E731
        out = [
            SampleInput((wc(3, 3),)),
            SampleInput((wc(2, 3, 3),), desc="batched"),
            SampleInput((wc(1, 1),), desc="1x1"),
            SampleInput((transposed(wc(4, 4)),), desc="transposed"),
            SampleInput((np.zeros((0, 0), dtype),), desc="zero-size"),
            SampleInput((np.zeros((2, 0, 0), dtype),), desc="batch of 0x0"),
        ]
        return out

    return samples


def _info(a):
    return np.zeros(np.shape(a)[:-2], np.int32)


def _np_inv(a):
    return np.linalg.inv(a) if a.size else a.copy()


def _np_det(a):
    return np.asarray(np.linalg.det(a) if a.size else np.ones(a.shape[:-2]), a.dtype)


def _np_slogdet(a):
    if not a.size:
        return np.ones(a.shape[:-2], a.dtype), np.zeros(a.shape[:-2], np.abs(a).dtype)
    sign, logabs = np.linalg.slogdet(a)
    return np.asarray(sign, a.dtype), np.asarray(logabs, np.abs(a).dtype)


def _np_logdet(a):
    sign, logabs = _np_slogdet(a)
    if a.dtype.kind == "c":
        return np.asarray(np.log(sign) + logabs, a.dtype)
    return np.asarray(np.where(sign == -1, np.nan, logabs), a.dtype)


def _solve_samples(dtype, b_batched_only=True):
    """(torch's vmap of solve fails when A and B have batch dims of different ranks, and
    on a complex left=False result, a conjugate view, numpy() fails: those samples are
    left out; tests/test_linalg_decomp.py checks them.)"""
    wc = lambda *s: _well_conditioned(dtype, f"solve{s}", *s)  # noqa: E731
    make = Maker(dtype, "solve_rhs")
    samples = [
        SampleInput((wc(3, 3), make(3, 2))),
        SampleInput((wc(3, 3), make(3)), desc="vector B"),
        SampleInput((wc(2, 3, 3), make(2, 3)), desc="batch of vectors"),
        SampleInput((wc(1, 3, 3), make(2, 3, 2)), desc="broadcast batch"),
        SampleInput((transposed(wc(3, 3)), stepped(make(3, 2))), desc="non-contiguous"),
        SampleInput((np.zeros((0, 0), dtype), np.zeros((0, 2), dtype)), desc="zero-size"),
    ]
    if b_batched_only:  # solve_ex's info follows A: torch's vmap of it then differs
        samples.append(SampleInput((wc(3, 3), make(5, 3, 2)), desc="B batched only"))
    if dtype.kind != "c":
        samples.append(SampleInput((wc(3, 3), make(2, 3)), {"left": False}, desc="left=False"))
    return samples


def _np_solve(a, b, left=True):
    if not left:
        return np.swapaxes(_np_solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bm = b[..., None] if vector else b
    batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    bm = np.broadcast_to(bm, batch + bm.shape[-2:])
    x = np.linalg.solve(a, bm) if a.size and bm.size else np.zeros(bm.shape, a.dtype)
    return x[..., 0] if vector else x


def _triangular_samples(dtype):
    wc = lambda *s: _well_conditioned(dtype, f"tri{s}", *s)  # noqa: E731
    make = Maker(dtype, "tri_rhs")
    return [
        SampleInput((wc(3, 3), make(3, 2)), {"upper": True}),
        SampleInput((wc(3, 3), make(3, 2)), {"upper": False}, desc="lower"),
        SampleInput((wc(3, 3), make(2, 3)), {"upper": True, "left": False}, desc="right"),
        SampleInput((wc(3, 3), make(3, 2)), {"upper": False, "unitriangular": True},
                    desc="unitriangular"),
        SampleInput((wc(2, 1, 3, 3), make(4, 3, 2)), {"upper": True}, desc="broadcast batch"),
        SampleInput((transposed(wc(3, 3)), stepped(make(3, 2))), {"upper": False},
                    desc="non-contiguous"),
        SampleInput((np.zeros((0, 0), dtype), np.zeros((0, 2), dtype)), {"upper": True},
                    desc="zero-size"),
    ]


def _np_solve_triangular(a, b, upper, left=True, unitriangular=False):
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        idx = np.arange(a.shape[-1])
        t = t.copy()
        t[..., idx, idx] = 1
    return _np_solve(t, b, left)


def _spd(x):
    """x xᴴ + n I: Hermitian positive-definite, differentiable in x (a physical conjugate:
    torch's batched forward AD trips over the conjugate view of x.mH)."""
    n = x.shape[-1]
    conj = getattr(torch, "conj_physical", torch.conj)
    return x @ conj(x).transpose(-2, -1) + n * torch.eye(n, dtype=x.dtype)


def _np_spd(x):
    n = x.shape[-1]
    return x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n, dtype=x.dtype)


def _cholesky_samples(dtype):
    make = lambda *s: Maker(dtype, f"cholesky{s}")(*s)  # noqa: E731
    return [
        SampleInput((make(3, 3),)),
        SampleInput((make(3, 3),), {"upper": True}, desc="upper"),
        SampleInput((make(2, 3, 3),), desc="batched"),
        SampleInput((transposed(make(4, 4)),), desc="transposed"),
        SampleInput((np.zeros((0, 0), dtype),), desc="zero-size"),
        SampleInput((np.zeros((2, 0, 0), dtype),), desc="batch of 0x0"),
    ]


def _np_cholesky(x, upper=False):
    if not x.size:
        return np.zeros(x.shape, x.dtype)
    low = np.linalg.cholesky(_np_spd(x))
    return np.conj(np.swapaxes(low, -1, -2)) if upper else low


def _linalg_spd(name):
    return lambda x, **kwargs: getattr(torch.linalg, name)(_spd(x), **kwargs)


DECOMP_DB: list[OpInfo] = [
    _linalg("inv", _linalg_late("inv"), _np_inv, _square_samples("inv"),
            "LinalgInvExBackward0", supports_complex=True),
    _linalg("inv_ex", _linalg_late("inv_ex"), lambda a: (_np_inv(a), _info(a)),
            _square_samples("inv_ex"), "LinalgInvExBackward0", supports_complex=True),
    late_op("inverse", _np_inv, _square_samples("inverse"), "LinalgInvExBackward0",
            supports_complex=True, needs=("inverse",)),
    _linalg("det", _linalg_late("det"), _np_det, _square_samples("det"),
            "LinalgDetBackward0", supports_complex=True),
    late_op("det", _np_det, _square_samples("tdet"), "LinalgDetBackward0",
            supports_complex=True, needs=("det",)),
    _linalg("slogdet", _linalg_late("slogdet"), _np_slogdet, _square_samples("slogdet"),
            "LinalgSlogdetBackward0", supports_complex=True),
    late_op("slogdet", _np_slogdet, _square_samples("tslogdet"), "LinalgSlogdetBackward0",
            supports_complex=True, needs=("slogdet",)),
    late_op("logdet", _np_logdet, _square_samples("logdet"), "WhereBackward0",
            supports_complex=True, needs=("logdet",)),
    _linalg("solve", _linalg_late("solve"), _np_solve, _solve_samples,
            "LinalgSolveExBackward0", supports_complex=True),
    _linalg("solve_ex", _linalg_late("solve_ex"),
            lambda a, b, left=True: (_np_solve(a, b, left), _info(a)),
            lambda dtype: _solve_samples(dtype, b_batched_only=False),
            "LinalgSolveExBackward0", supports_complex=True),
    _linalg("solve_triangular", _linalg_late("solve_triangular"), _np_solve_triangular,
            _triangular_samples, "LinalgSolveTriangularBackward0", supports_complex=True),
    _linalg("cholesky", _linalg_spd("cholesky"), _np_cholesky, _cholesky_samples,
            "LinalgCholeskyExBackward0", supports_complex=True),
    _linalg("cholesky_ex", _linalg_spd("cholesky_ex"),
            lambda x, upper=False: (_np_cholesky(x, upper), _info(x)),
            _cholesky_samples, "LinalgCholeskyExBackward0", supports_complex=True),
]


# -- QR, eigh, SVD (numpy's LAPACK conventions: R's diagonal real, eigenvalues ascending,
# singular values descending). Eigen- and singular vectors are compared and
# differentiated through |V| (gauge-invariant); the backward errors (mode='r',
# mode='complete' with m > n, phase-dependent losses) are in tests/test_linalg_decomp.py.


def _qr_samples(dtype):
    make = lambda *s: Maker(dtype, f"qr{s}")(*s)  # noqa: E731
    return [
        SampleInput((make(4, 3),)),
        SampleInput((make(3, 4),), desc="wide"),
        SampleInput((make(3, 3),), {"mode": "complete"}, desc="complete, square"),
        SampleInput((make(3, 5),), {"mode": "complete"}, desc="complete, wide"),
        SampleInput((make(2, 4, 3),), desc="batched"),
        SampleInput((transposed(make(3, 4)),), desc="transposed"),
        SampleInput((np.zeros((0, 3), dtype),), desc="zero-size"),
        SampleInput((np.zeros((2, 3, 0), dtype),), desc="batch of 3x0"),
    ]


def _np_qr(a, mode="reduced"):
    m, n = a.shape[-2:]
    if a.size == 0:
        k = min(m, n)
        qc, rr = (m, m) if mode == "complete" else (k, k)
        q = np.broadcast_to(np.eye(m, qc, dtype=a.dtype), a.shape[:-2] + (m, qc)).copy()
        return q, np.zeros(a.shape[:-2] + (rr, n), a.dtype)
    return np.linalg.qr(a, mode)


def _hermitian(x):
    """x + xᴴ (a physical conjugate: torch's batched forward AD trips over x.mH)."""
    conj = getattr(torch, "conj_physical", torch.conj)
    return x + conj(x).transpose(-2, -1)


def _np_hermitian(x):
    return x + np.conj(np.swapaxes(x, -1, -2))


def _eigh_samples(dtype):
    make = lambda *s: Maker(dtype, f"eigh{s}")(*s)  # noqa: E731
    return [
        SampleInput((make(3, 3),)),
        SampleInput((make(3, 3),), {"UPLO": "U"}, desc="UPLO U"),
        SampleInput((make(2, 4, 4),), desc="batched"),
        SampleInput((transposed(make(3, 3)),), desc="transposed"),
        SampleInput((np.zeros((0, 0), dtype),), desc="zero-size"),
        SampleInput((np.zeros((2, 0, 0), dtype),), desc="batch of 0x0"),
    ]


def _np_eigh(x, UPLO="L"):
    h = _np_hermitian(x)
    if not h.size:
        return np.zeros(h.shape[:-1], np.abs(h).dtype), np.zeros(h.shape, np.abs(h).dtype)
    w, v = np.linalg.eigh(h, UPLO)
    return w.astype(np.abs(h).dtype), np.abs(v)


def _eigh_gauge_free(x, **kwargs):
    w, v = torch.linalg.eigh(_hermitian(x), **kwargs)
    return w, v.abs()


def _svd_samples(dtype):
    make = lambda *s: Maker(dtype, f"svd{s}")(*s)  # noqa: E731
    return [
        SampleInput((make(4, 3),), {"full_matrices": False}),
        SampleInput((make(3, 4),), {"full_matrices": False}, desc="wide"),
        SampleInput((make(3, 3),), desc="square, full_matrices"),
        SampleInput((make(2, 4, 3),), {"full_matrices": False}, desc="batched"),
        SampleInput((transposed(make(3, 4)),), {"full_matrices": False}, desc="transposed"),
        SampleInput((np.zeros((0, 3), dtype),), {"full_matrices": False}, desc="zero-size"),
    ]


def _np_svd(a, full_matrices=True):
    real = np.abs(a).dtype
    m, n = a.shape[-2:]
    if a.size == 0:
        k = min(m, n)
        uc, vr = (m, n) if full_matrices else (k, k)
        eye = lambda r, c: np.broadcast_to(np.eye(r, c, dtype=real), a.shape[:-2] + (r, c))  # noqa: E731
        return np.zeros(a.shape[:-2] + (k,), real), eye(m, uc), eye(vr, n)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return s.astype(real), np.abs(u), np.abs(vh)


def _svd_gauge_free(a, **kwargs):
    u, s, vh = torch.linalg.svd(a, **kwargs)
    return s, u.abs(), vh.abs()


def _svdvals_samples(dtype):
    make = lambda *s: Maker(dtype, f"svdvals{s}")(*s)  # noqa: E731
    return [
        SampleInput((make(4, 3),)),
        SampleInput((make(3, 5),), desc="wide"),
        SampleInput((make(2, 3, 3),), desc="batched"),
        SampleInput((transposed(make(3, 4)),), desc="transposed"),
        SampleInput((np.zeros((0, 3), dtype),), desc="zero-size"),
    ]


def _np_svdvals(a):
    return _np_svd(a, full_matrices=False)[0]


DECOMP_DB += [
    _linalg("qr", _linalg_late("qr"), _np_qr, _qr_samples, "LinalgQrBackward0",
            supports_complex=True),
    _linalg("eigh", _eigh_gauge_free, _np_eigh, _eigh_samples, "LinalgEighBackward0",
            supports_complex=True),
    _linalg("eigvalsh", lambda x, **kw: torch.linalg.eigvalsh(_hermitian(x), **kw),
            lambda x, UPLO="L": _np_eigh(x, UPLO)[0], _eigh_samples, "LinalgEighBackward0",
            supports_complex=True),
    _linalg("svd", _svd_gauge_free, _np_svd, _svd_samples, "LinalgSvdBackward0",
            supports_complex=True),
    _linalg("svdvals", _linalg_late("svdvals"), _np_svdvals, _svdvals_samples,
            "LinalgSvdBackward0", supports_complex=True),
]


def _pinv_samples(dtype):
    make = lambda *s: Maker(dtype, f"pinv{s}")(*s)  # noqa: E731
    return [
        SampleInput((make(3, 4),)),
        SampleInput((make(4, 3),), desc="tall"),
        SampleInput((make(2, 3, 3),), {"atol": 0.01}, desc="batched, atol"),
        SampleInput((make(3, 3),), {"hermitian": True}, desc="hermitian"),
        SampleInput((transposed(make(3, 4)),), {"rtol": 1e-3}, desc="transposed, rtol"),
        SampleInput((np.zeros((0, 3), dtype),), desc="zero-size"),
    ]


def _np_pinv(a, atol=None, rtol=None, hermitian=False):
    if hermitian:
        a = _np_hermitian(a)
    if a.size == 0:
        return np.zeros(a.shape[:-2] + a.shape[-2:][::-1], a.dtype)
    return np.linalg.pinv(a, hermitian=hermitian).astype(a.dtype)


def _pinv_op(x, hermitian=False, **kwargs):
    return torch.linalg.pinv(_hermitian(x) if hermitian else x, hermitian=hermitian, **kwargs)


DECOMP_DB.append(
    _linalg("pinv", _pinv_op, _np_pinv, _pinv_samples, "LinalgPinvBackward0",
            supports_complex=True)
)
ISSUE11_DB += DECOMP_DB

#: The linalg decomposition entries, which test_ops checks exist.
DECOMP_OPS = tuple(op.name for op in DECOMP_DB)


# --- issue 11: linalg 2 ---
# Solvers from a Cholesky factor and the matrix exponential (src/ops/decomp/
# cholesky_solve.rs, matrix_exp.rs): cholesky_solve (CholeskySolveBackward0) and
# cholesky_inverse (CholeskyInverseBackward0) read one triangle of the factor while
# torch's rules treat it as the full matrix, so they are sampled as functions of x:
# cholesky_solve through tril(x) / triu(x), cholesky_inverse through
# linalg.cholesky(x xᴴ + nI) (LAPACK's potri reads only the real part of a complex
# diagonal; a Cholesky factor's is real); linalg.matrix_exp / matrix_exp (LinalgMatrixExpBackward0)
# is compared against a float64 Taylor series with scaling and squaring. Errors and the
# exact references (eigendecomposition, nilpotent) are in tests/test_linalg_decomp2.py.


def _factor(x, upper):
    return x.triu() if upper else x.tril()


def _np_from_factor(x, upper):
    """L Lᴴ (lower) or Uᴴ U (upper) from the triangle that is read."""
    t = np.triu(x) if upper else np.tril(x)
    th = np.conj(np.swapaxes(t, -1, -2))
    return th @ t if upper else t @ th


def _cholesky_solve_samples(dtype):
    wc = lambda *s: _well_conditioned(dtype, f"csolve{s}", *s)  # noqa: E731
    make = Maker(dtype, "csolve_rhs")
    return [
        SampleInput((make(3, 2), wc(3, 3))),
        SampleInput((make(3, 2), wc(3, 3)), {"upper": True}, desc="upper"),
        SampleInput((make(2, 3, 1), wc(2, 3, 3)), desc="batched"),
        SampleInput((make(2, 1, 3, 2), wc(4, 3, 3)), desc="broadcast batch"),
        SampleInput((stepped(make(3, 2)), transposed(wc(3, 3))), desc="non-contiguous"),
        SampleInput((np.zeros((0, 2), dtype), np.zeros((0, 0), dtype)), desc="zero-size"),
        SampleInput((np.zeros((3, 0), dtype), wc(3, 3)), desc="no columns"),
    ]


def _np_cholesky_solve(b, x, upper=False):
    a = _np_from_factor(x, upper)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    if not (a.size and b.size):
        return np.zeros(b.shape, b.dtype)
    return np.linalg.solve(a, b).astype(b.dtype)


def _cholesky_inverse_samples(dtype):
    make = lambda *s: Maker(dtype, f"cinverse{s}")(*s)  # noqa: E731
    return [
        SampleInput((make(3, 3),)),
        SampleInput((make(3, 3),), {"upper": True}, desc="upper"),
        SampleInput((make(2, 3, 3),), desc="batched"),
        SampleInput((transposed(make(4, 4)),), {"upper": True}, desc="transposed"),
        SampleInput((np.zeros((0, 0), dtype),), desc="zero-size"),
        SampleInput((np.zeros((2, 0, 0), dtype),), desc="batch of 0x0"),
    ]


def _np_cholesky_inverse(x, upper=False):
    a = _np_spd(x)
    return (np.linalg.inv(a) if a.size else a.copy()).astype(x.dtype)


def _cholesky_inverse_op(x, upper=False):
    return torch.cholesky_inverse(torch.linalg.cholesky(_spd(x), upper=upper), upper=upper)


def _matrix_exp_samples(dtype):
    make = lambda *s: Maker(dtype, f"expm{s}")(*s)  # noqa: E731
    spread = make(3, 3, 3) * np.array([0.01, 1.0, 4.0], dtype)[:, None, None]
    return [
        SampleInput((make(3, 3),)),
        SampleInput((spread,), desc="batch of small, medium, large norms"),
        SampleInput((make(1, 1),), desc="1x1"),
        SampleInput((transposed(make(4, 4)),), desc="transposed"),
        SampleInput((make(2, 1, 2, 2) * 3,), desc="squared back"),
        SampleInput((np.zeros((0, 0), dtype),), desc="zero-size"),
        SampleInput((np.zeros((2, 0, 0), dtype),), desc="batch of 0x0"),
    ]


def _np_expm(a):
    """exp(A) by a 30-term Taylor series of A / 2^s (|A / 2^s|_1 <= 1/2), squared s times,
    in float64 / complex128."""
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    x = np.asarray(a, wide)
    if not x.size:
        return np.asarray(a).copy()
    norm = np.abs(x).sum(-2).max()
    s = max(0, int(np.ceil(np.log2(norm / 0.5)))) if norm > 0.5 else 0
    x = x / 2.0**s
    out = np.broadcast_to(np.eye(x.shape[-1], dtype=wide), x.shape).copy()
    term = out.copy()
    for k in range(1, 30):
        term = term @ x / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out.astype(a.dtype)


LINALG2_DB: list[OpInfo] = [
    OpInfo("cholesky_solve",
           lambda b, x, upper=False: torch.cholesky_solve(b, _factor(x, upper), upper=upper),
           _np_cholesky_solve, _cholesky_solve_samples,
           grad_fn_name="CholeskySolveBackward0", supports_complex=True,
           needs=("cholesky_solve",)),
    OpInfo("cholesky_inverse", _cholesky_inverse_op,
           _np_cholesky_inverse, _cholesky_inverse_samples,
           grad_fn_name="CholeskyInverseBackward0", supports_complex=True,
           needs=("cholesky_inverse",)),
    _linalg("matrix_exp", _linalg_late("matrix_exp"), _np_expm, _matrix_exp_samples,
            "LinalgMatrixExpBackward0", supports_complex=True),
    late_op("matrix_exp", _np_expm, _matrix_exp_samples, "LinalgMatrixExpBackward0",
            supports_complex=True, needs=("matrix_exp",)),
]
def _lstsq_samples(dtype):
    """(a vector B: tests/test_linalg_decomp2.py, since torch's vmap reads it as a
    matrix.)"""
    make = lambda *s: Maker(dtype, f"lstsq{s}")(*s)  # noqa: E731
    return [
        SampleInput((make(5, 3), make(5, 2))),
        SampleInput((make(5, 3), make(5, 2)), {"driver": "gels"}, desc="gels"),
        SampleInput((make(5, 3), make(5, 2)), {"driver": "gelsd"}, desc="gelsd"),
        SampleInput((make(3, 5), make(3, 2)), {"driver": "gelss"}, desc="wide, gelss"),
        SampleInput((make(2, 5, 3), make(2, 5, 2)), {"driver": "gelsd"}, desc="batched"),
        SampleInput((make(2, 4, 3), make(1, 4, 2)), {"driver": "gels"}, desc="broadcast batch"),
        SampleInput((transposed(make(5, 3)), stepped(make(5, 2))), {"rcond": 1e-3},
                    desc="non-contiguous, rcond"),
        SampleInput((np.zeros((0, 3), dtype), np.zeros((0, 2), dtype)), {"driver": "gelsd"},
                    desc="zero-size"),
    ]


def _np_lstsq(a, b, rcond=None, driver=None):
    """The minimum-norm solution and the outputs torch's CPU drivers fill."""
    driver = driver or "gelsy"
    real = np.abs(a).dtype
    m, n = a.shape[-2:]
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bm = b[..., None] if vector else b
    if rcond is None:
        rcond = np.finfo(real).eps * max(m, n)
    s = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(a.shape[:-2] + (0,), real)
    if a.size:
        keep = s > rcond * s[..., :1]
        rank = keep.sum(-1).astype(np.int64)
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        sinv = np.where(keep, 1 / np.where(keep, s, 1), 0).astype(a.dtype)
        uhb = np.conj(np.swapaxes(u, -1, -2)) @ bm
        x = np.conj(np.swapaxes(vh, -1, -2)) @ (sinv[..., None] * uhb)
    else:
        batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
        x, rank = np.zeros(batch + (n, bm.shape[-1]), a.dtype), np.zeros(a.shape[:-2], np.int64)
    res = np.zeros((0,), real)
    if m > n and driver != "gelsy" and (driver == "gels" or np.all(rank == n)):
        res = (np.abs(a @ x - bm) ** 2).sum(-2).astype(real)
    rank = np.zeros((0,), np.int64) if driver == "gels" else rank
    s = s.astype(real) if driver in ("gelsd", "gelss") else np.zeros((0,), real)
    return (x[..., 0] if vector else x).astype(a.dtype), res, rank, s


def _lstsq_differentiable(a, b, **kwargs):
    """(solution, residuals): rank and singular values are not differentiable (they are
    compared in tests/test_linalg_decomp2.py)."""
    return tuple(torch.linalg.lstsq(a, b, **kwargs))[:2]


LINALG2_DB.append(
    _linalg("lstsq", _lstsq_differentiable, lambda *a, **kw: _np_lstsq(*a, **kw)[:2],
            _lstsq_samples, "LinalgLstsqBackward0", supports_complex=True)
)

def _eig_samples(dtype):
    make = lambda *s: Maker(dtype, f"eig{s}")(*s)  # noqa: E731
    return [
        SampleInput((make(3, 3),)),
        SampleInput((make(2, 3, 3),), desc="batched"),
        SampleInput((make(1, 1),), desc="1x1"),
        SampleInput((transposed(make(4, 4)),), desc="transposed"),
        SampleInput((np.zeros((0, 0), dtype),), desc="zero-size"),
        SampleInput((np.zeros((2, 0, 0), dtype),), desc="batch of 0x0"),
    ]


def _eig_order(w):
    """An order of the eigenvalues that conjugate pairs do not tie in."""
    return np.argsort(w.real + 0.1 * w.imag, axis=-1)


def _np_eig(a):
    cplx = np.result_type(a.dtype, np.complex64)
    real = np.abs(np.zeros((), cplx)).dtype
    if not a.size:
        return np.zeros(a.shape[:-1], cplx), np.zeros(a.shape, real)
    w, v = np.linalg.eig(a)
    order = _eig_order(w)
    w = np.take_along_axis(w, order, -1)
    v = np.take_along_axis(np.abs(v), order[..., None, :], -1)
    return w.astype(cplx), v.astype(real)


def _eig_gauge_free(a):
    """(eigenvalues, |eigenvectors|), sorted as _eig_order sorts them (so the outputs'
    grad_fn is the sort's gather: tests/test_linalg_decomp2.py pins LinalgEigBackward0)."""
    w, v = torch.linalg.eig(a)
    order = (w.real + 0.1 * w.imag).argsort(dim=-1)
    index = order.unsqueeze(-2).expand(*v.shape)
    return w.gather(-1, order), v.abs().gather(-1, index)


LINALG2_DB += [
    _linalg("eig", _eig_gauge_free, _np_eig, _eig_samples, "GatherBackward0",
            supports_complex=True),
    _linalg("eigvals", lambda a: _eig_gauge_free(a)[0], lambda a: _np_eig(a)[0],
            _eig_samples, "GatherBackward0", supports_complex=True),
]
def _householder_samples(dtype):
    make = lambda *s: Maker(dtype, f"householder{s}")(*s)  # noqa: E731
    return [
        SampleInput((make(4, 3), make(2))),
        SampleInput((make(4, 3), make(3)), desc="k = n"),
        SampleInput((make(2, 4, 3), make(2, 3)), desc="batched"),
        SampleInput((make(3, 3), make(3)), desc="square"),
        SampleInput((transposed(make(5, 3)), stepped(make(3))), desc="non-contiguous"),
        SampleInput((make(4, 2), np.zeros((0,), dtype)), desc="no reflectors"),
        SampleInput((np.zeros((0, 0), dtype), np.zeros((0,), dtype)), desc="zero-size"),
    ]


def _np_householder(a, tau):
    """H_1 ⋯ H_k applied to the first n columns of the identity."""
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    v = np.tril(a, -1) + np.eye(m, n, dtype=a.dtype)
    q = np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape).copy()
    for i in reversed(range(k)):
        vi = v[..., :, i : i + 1]
        w = np.conj(np.swapaxes(vi, -1, -2)) @ q
        q = q - tau[..., i, None, None] * (vi @ w)
    return q


LINALG2_DB += [
    _linalg("householder_product", _linalg_late("householder_product"), _np_householder,
            _householder_samples, "LinalgHouseholderProductBackward0", supports_complex=True),
    late_op("orgqr", _np_householder, _householder_samples,
            "LinalgHouseholderProductBackward0", supports_complex=True, needs=("orgqr",)),
]
ISSUE11_DB += LINALG2_DB

#: The linalg 2 entries, which test_ops checks exist.
LINALG2_OPS = tuple(op.name for op in LINALG2_DB)


#: The ops of the foundation issue; test_ops checks each has an entry.
ISSUE_OPS = (
    *("add", "sub", "mul", "div", "pow", "neg", "exp", "log", "sin", "cos", "tanh", "sigmoid"),
    *("relu", "sqrt", "abs", "clamp", "clone", "contiguous", "where"),
    *("sum", "mean", "max", "min", "matmul", "__matmul__", "mm", "bmm"),
    *("view", "reshape", "permute", "transpose", "t", "T", "mT", "expand", "expand_as"),
    *("squeeze", "unsqueeze", "flatten", "unflatten", "narrow", "select", "unbind", "split"),
    *("chunk", "diagonal", "as_strided", "getitem"),
)

#: Issue 11's ops; test_ops checks each has an entry (landed or not).
ISSUE11_OPS = (
    *("amax", "amin", "argmax", "argmin", "prod", "logsumexp", "softmax", "log_softmax"),
    *("var", "std", "var_mean", "std_mean", "cumsum", "cumprod"),
    *("floor", "ceil", "trunc", "frac", "round", "square", "sign", "sgn", "deg2rad", "rad2deg"),
    *("maximum", "minimum", "fmax", "fmin"),
    *("isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit"),
    *("stack", "hstack", "vstack", "dstack", "column_stack", "flip", "fliplr", "flipud"),
    *("movedim", "moveaxis", "swapaxes", "repeat", "tile", "tril", "triu"),
    *("gather", "scatter", "scatter_add", "index_select", "masked_fill"),
    *("outer", "broadcast_to", "broadcast_tensors", "isclose"),
    *("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"),
    *("bitwise_left_shift", "bitwise_right_shift"),
    *("logical_and", "logical_or", "logical_xor", "logical_not"),
    *COMPOSITE_OPS,
    *INDEXING_OPS,
    *SORT_OPS,
    *INDEX_WRITE_OPS,
    *MATOPS_OPS,
    *MISC_OPS,
    *NORMS_OPS,
    *COMPLEX_OPS,
    *DECOMP_OPS,
    *LINALG2_OPS,
)

#: Every entry, whether or not the library under test has its op.
ALL_OPS: list[OpInfo] = [*BASE_DB, *ISSUE11_DB, *MATHOPS_DB]

#: The entries whose op the library under test has: the generated tests run over these.
OP_DB: list[OpInfo] = [op for op in ALL_OPS if op.available()]


# --------------------------------------------------------------------------- tensors


def to_tensor(value, requires_grad=False):
    """A sample argument as the op receives it: arrays become tensors (copies, via
    `torch.tensor`), NonContig arrays non-contiguous tensors, anything else as is."""
    if isinstance(value, NonContig):
        a = value.value
        if value.how == "T":
            t = torch.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).mT
        elif value.how == "step":
            junk = 1e3 if a.dtype.kind in "fc" else 7  # in between, in a's own dtype
            big = np.full(a.shape[:-1] + (2 * a.shape[-1],), junk, a.dtype)
            big[..., ::2] = a
            t = torch.tensor(big)[..., ::2]
        else:
            raise ValueError(value.how)
        return t.requires_grad_() if requires_grad else t
    if isinstance(value, np.generic):  # a 0-dim array after an operator (~mask) is a scalar
        value = np.asarray(value)
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
