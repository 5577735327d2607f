"""Tests generated from the op database (tests/opdb.py): for every entry and sample,

- the forward result equals numpy's (float64, float32, complex128 where supported),
- gradcheck passes in float64 (and complex128 where supported), in reverse mode and in
  forward mode (jvp columns against finite differences; issue 9), with the batched
  checks (vmap over the vjp / jvp against a loop) on every sample that does not hit a
  batching rule the core lacks (declared in test_vmap_ops.NO_BATCHING_RULE),
- gradgradcheck passes in float64 (and complex128 where supported) where the entry
  supports it, reverse-over-reverse (batched too) and forward-over-reverse,
- float32 gradients agree with float64 ones,
- the output's grad_fn has torch's name where the database pins one.

Adding an op adds one entry to opdb.OP_DB, never a test here.
"""

from __future__ import annotations

import ferrograd as torch
import numpy as np
import pytest
from opdb import (
    ALL_OPS,
    ISSUE11_OPS,
    ISSUE_OPS,
    OP_DB,
    NonContig,
    as_array,
    is_float_array,
    ref_kwargs,
    to_tensor,
)
from test_vmap_ops import NO_BATCHING_RULE, missing_rule

# (rtol, atol) of the forward comparison. The reference runs in float64 on the same
# (rounded) numbers, so float32 results only carry their own rounding.
FORWARD_TOL = {"float64": (1e-7, 1e-7), "float32": (1e-5, 1e-5), "complex128": (1e-7, 1e-7)}
GRAD32_TOL = (1e-4, 1e-4)  # float32 gradients vs float64 gradients
FLOAT_DTYPES = (torch.float32, torch.float64, torch.complex64, torch.complex128)


def _cases(dtype, want=lambda op: True):
    """pytest params (op, sample) for every sample of every entry selected by `want`."""
    return [
        pytest.param(op, sample, id=f"{op.name}-sample{i}")
        for op in OP_DB
        if want(op)
        for i, sample in enumerate(op.samples(dtype))
    ]


def _flat(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _upcast(value):
    a = as_array(value)
    if isinstance(a, np.ndarray) and a.dtype.kind in "fc":
        return a.astype(np.promote_types(a.dtype, np.float64))
    return a


def _differentiable_positions(op, sample) -> tuple[int, ...]:
    if op.differentiable_args is not None:
        return op.differentiable_args
    return tuple(i for i, a in enumerate(sample.args) if is_float_array(a))


def _as_function(op, sample):
    """The op as a function of its differentiable inputs only (the other arguments are
    closed over), returning its floating outputs only (max's indices are dropped);
    and those inputs, as fresh tensors requiring grad."""
    positions = _differentiable_positions(op, sample)
    args = [to_tensor(a) for a in sample.args]
    inputs = tuple(to_tensor(sample.args[i], requires_grad=True) for i in positions)

    def fn(*xs):
        full = list(args)
        for i, x in zip(positions, xs):
            full[i] = x
        outs = [o for o in _flat(op.op(*full, **sample.kwargs)) if o.dtype in FLOAT_DTYPES]
        return outs[0] if len(outs) == 1 else tuple(outs)

    return fn, inputs


# ----------------------------------------------------------------------------- forward

FORWARD_CASES = [
    pytest.param(*p.values, dtype, id=f"{p.id}-{dtype}")
    for dtype in ("float64", "float32")
    for p in _cases(dtype)
] + [
    pytest.param(*p.values, "complex128", id=f"{p.id}-complex128")
    for p in _cases("complex128", lambda op: op.supports_complex)
]


@pytest.mark.parametrize("op, sample, dtype", FORWARD_CASES)
def test_forward(op, sample, dtype):
    got = _flat(op.op(*[to_tensor(a) for a in sample.args], **sample.kwargs))
    kwargs = ref_kwargs(sample.kwargs)
    want = _flat(op.ref(*[as_array(a) for a in sample.args], **kwargs))  # for the dtype
    exact = _flat(op.ref(*[_upcast(a) for a in sample.args], **kwargs))  # for the values
    assert len(got) == len(want)
    rtol, atol = op.tol.get(dtype, FORWARD_TOL[dtype])
    for g, w, e in zip(got, want, exact):
        g, w = g.detach().numpy(), np.asarray(w)
        assert g.shape == w.shape
        assert g.dtype == w.dtype
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, w)


# ----------------------------------------------------------------------------- float16, bfloat16

# Entries torch does not compute in float16 / bfloat16 on the CPU: the decompositions and
# what is built on them. Both libraries raise (NotImplementedError or RuntimeError).
NO_LOW_PRECISION = {
    "linalg.inv", "linalg.inv_ex", "inverse", "linalg.det", "det", "linalg.slogdet",
    "slogdet", "logdet", "linalg.solve", "linalg.solve_ex", "linalg.solve_triangular",
    "linalg.cholesky", "linalg.cholesky_ex", "linalg.qr", "linalg.eigh", "linalg.eigvalsh",
    "linalg.svd", "linalg.svdvals", "linalg.pinv", "cholesky_solve", "cholesky_inverse",
    "linalg.lstsq", "linalg.eig", "linalg.eigvals", "linalg.householder_product", "orgqr",
}
# Matrix norms through the singular values (torch's SVD has no float16 / bfloat16 either).
SVD_ORDS = (2, -2, "nuc")
# Results torch gives as complex32 (ComplexHalf), a dtype ferrograd does not have: ferrograd
# raises NotImplementedError for float16 inputs (torch itself has no bfloat16 complex).
COMPLEX32_RESULTS = {"view_as_complex", "complex", "polar"}
# Entries that make their input complex64 first (opdb._complex_view), so their results
# are float32 whatever the input's width.
WIDENED_FIRST = {"real", "imag", "view_as_real"}
LOW_PRECISION_DTYPES = ("float16", "bfloat16")
# rtol per dtype: a few units of its rounding (2^-11, 2^-8), as the inputs agree exactly
# and the results differ only by the narrow type's roundings (torch computes in float32
# and stores narrow, as ferrograd does).
LOW_PRECISION_RTOL = {"float16": 4e-3, "bfloat16": 3e-2}


def _narrowed(sample, dtype):
    """The sample's float32 tensors as `dtype` tensors, and as the float32 tensors of
    those same (rounded) values."""
    narrow = [to_tensor(a) for a in sample.args]
    narrow = [a.to(dtype) if _is_tensor_of(a, torch.float32) else a for a in narrow]
    wide = [a.float() if _is_tensor_of(a, dtype) else a for a in narrow]
    return narrow, wide


def _is_tensor_of(a, dtype) -> bool:
    return isinstance(a, torch.Tensor) and a.dtype == dtype


def _low_precision_refused(op, sample) -> bool:
    """Whether the op refuses float16 / bfloat16 inputs for this sample, as torch's does
    (or, for COMPLEX32_RESULTS, for want of complex32)."""
    return (
        op.name in NO_LOW_PRECISION
        or (op.name == "linalg.matrix_norm" and sample.kwargs.get("ord") in SVD_ORDS)
        or op.name in COMPLEX32_RESULTS
    )


def _low_precision_cases(refused: bool):
    return [
        pytest.param(*p.values, dtype, id=f"{p.id}-{dtype}")
        for dtype in LOW_PRECISION_DTYPES
        for p in _cases("float32")
        if _low_precision_refused(*p.values) == refused
        and any(_is_tensor_of(to_tensor(a), torch.float32) for a in p.values[1].args)
    ]


@pytest.mark.parametrize("op, sample, dtype", _low_precision_cases(refused=False))
def test_forward_low_precision(op, sample, dtype):
    """float16 / bfloat16 results (dtypes autograd takes, C3) agree with float32's on the
    same values (issue 11)."""
    narrow_dtype = getattr(torch, dtype)
    narrow, wide = _narrowed(sample, narrow_dtype)
    got = _flat(op.op(*narrow, **sample.kwargs))
    want = _flat(op.op(*wide, **sample.kwargs))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        if w.dtype == torch.float32:
            assert g.dtype == (torch.float32 if op.name in WIDENED_FIRST else narrow_dtype)
            rtol = LOW_PRECISION_RTOL[dtype]
            np.testing.assert_allclose(
                g.detach().float().numpy(), w.detach().numpy(), rtol=rtol, atol=rtol
            )
        else:
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g.detach().numpy(), w.detach().numpy())


@pytest.mark.parametrize("op, sample, dtype", _low_precision_cases(refused=True))
def test_low_precision_refused_as_torch(op, sample, dtype):
    narrow, _ = _narrowed(sample, getattr(torch, dtype))
    refusals = (NotImplementedError, RuntimeError)
    with pytest.raises(NotImplementedError if op.name in COMPLEX32_RESULTS else refusals):
        op.op(*narrow, **sample.kwargs)


# ----------------------------------------------------------------------------- gradients


# Batching rules the gradient checks may hit: only the ops' own missing ones
# (NO_BATCHING_RULE; gather and scatter, which max/min along a dim use, have theirs).
BATCHED_GRAD_MISSING = NO_BATCHING_RULE


# The batched checks `_checked` dropped, as (entry name, check): tools/opdb_counts.py
# reports them.
DROPPED_BATCHED_CHECKS: list[tuple[str, str]] = []


def _checked(check, op, fn, inputs, **kwargs):
    """`check` (gradcheck or gradgradcheck) with its batched checks. One that hits a
    missing batching rule declared for the op (BATCHED_GRAD_MISSING) is dropped, the
    forward-mode one first, and the rest are run again."""
    batched = ["check_batched_grad"]
    if check is torch.autograd.gradcheck:
        batched.insert(0, "check_batched_forward_grad")
    while True:
        try:
            return check(fn, inputs, **kwargs, **dict.fromkeys(batched, True))
        except RuntimeError as ex:  # GradcheckError (torch.autograd has no such name in torch)
            missing = missing_rule(ex.__cause__)
            if not batched or missing not in BATCHED_GRAD_MISSING.get(op.name, ()):
                raise
        DROPPED_BATCHED_CHECKS.append((op.name, batched.pop(0)))


@pytest.mark.parametrize("op, sample", _cases("float64", lambda op: op.supports_grad))
def test_gradcheck(op, sample):
    fn, inputs = _as_function(op, sample)
    assert _checked(torch.autograd.gradcheck, op, fn, inputs, check_forward_ad=True)


@pytest.mark.parametrize(
    "op, sample", _cases("complex128", lambda op: op.supports_complex and op.supports_grad)
)
def test_gradcheck_complex(op, sample):
    fn, inputs = _as_function(op, sample)
    assert _checked(torch.autograd.gradcheck, op, fn, inputs, check_forward_ad=True)


def _known_failures(cases, known: dict[str, str], raises):
    """`cases` with those in `known` ({entry name or case id: reason}) marked as strict
    xfails raising `raises`: a fix makes them XPASS, which fails, so `known` stays exact."""
    out = []
    for case in cases:
        reason = known.get(case.values[0].name, known.get(case.id))
        if reason is not None:
            mark = pytest.mark.xfail(raises=raises, strict=True, reason=reason)
            case = pytest.param(*case.values, id=case.id, marks=mark)
        out.append(case)
    return out


# Second derivatives the library gets wrong, by case id: expected to fail until fixed,
# and to start passing (strict) when they are. (prod's, through two zeros of one slice
# (samples 5 and 6), is exact now: its rule takes torch's exclusive cumprods there.)
GRADGRAD_WRONG: dict[str, str] = {}


@pytest.mark.parametrize(
    "op, sample",
    _known_failures(
        _cases("float64", lambda op: op.supports_gradgrad),
        GRADGRAD_WRONG,
        RuntimeError,
    ),
)
def test_gradgradcheck(op, sample):
    fn, inputs = _as_function(op, sample)
    assert _checked(torch.autograd.gradgradcheck, op, fn, inputs, check_fwd_over_rev=True)


@pytest.mark.parametrize(
    "op, sample", _cases("complex128", lambda op: op.supports_complex and op.supports_gradgrad)
)
def test_gradgradcheck_complex(op, sample):
    fn, inputs = _as_function(op, sample)
    assert _checked(torch.autograd.gradgradcheck, op, fn, inputs, check_fwd_over_rev=True)


def _grads(op, sample):
    """Gradients of <op(inputs), cotangent> with a fixed random cotangent, as arrays."""
    fn, inputs = _as_function(op, sample)
    outs = _flat(fn(*inputs))
    rng = np.random.default_rng(0)
    cotangents = [
        torch.tensor(rng.standard_normal(tuple(o.shape)).astype(o.detach().numpy().dtype))
        for o in outs
    ]
    grads = torch.autograd.grad(outs, inputs, cotangents)
    return [g.numpy(force=True) for g in grads]  # force: torch's sgn grad is a ZeroTensor


@pytest.mark.parametrize(
    "op, index",
    [
        pytest.param(op, i, id=f"{op.name}-sample{i}")
        for op in OP_DB
        if op.supports_grad
        for i in range(len(op.samples("float64")))
    ],
)
def test_grad_float32_matches_float64(op, index):
    g64 = _grads(op, op.samples("float64")[index])
    g32 = _grads(op, op.samples("float32")[index])
    assert len(g32) == len(g64)
    for a, b in zip(g32, g64):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=GRAD32_TOL[0], atol=GRAD32_TOL[1])


# ----------------------------------------------------------------------------- graph names


# grad_fn names the library records wrong (torch's name is the entry's).
GRAD_FN_NAME_WRONG: dict[str, str] = {}


@pytest.mark.parametrize(
    "op, sample",
    _known_failures(
        [p for p in _cases("float64", lambda op: op.supports_grad) if p.values[1].grad_fn],
        GRAD_FN_NAME_WRONG,
        AssertionError,
    ),
)
def test_grad_fn_name(op, sample):
    fn, inputs = _as_function(op, sample)
    out = _flat(fn(*inputs))[0]
    assert out.grad_fn.name() == sample.grad_fn


# ----------------------------------------------------------------------------- the database itself


def test_db_covers_issue_ops():
    names = [op.name for op in ALL_OPS]
    tested = {op.name for op in OP_DB}
    skipped = [n for n in names if n not in tested]
    print(
        f"op database: {len(ALL_OPS)} entries, {len(OP_DB)} tested, {len(skipped)} skipped "
        f"(the library lacks their op): {skipped}"
    )
    assert len(set(names)) == len(names), "duplicate entry names"
    assert [n for n in (*ISSUE_OPS, *ISSUE11_OPS) if n not in names] == []
    # Only entries that say what they need may be skipped; the foundation's never are.
    assert [n for n in ISSUE_OPS if n in skipped] == []


# Op-table lines whose op has no entry yet, and why (kept exact by the test below).
TABLE_WITHOUT_ENTRY: dict[str, str] = {}


def test_every_op_table_line_has_an_entry():
    """issue 11: every op the op table generates is checked by the database."""
    names = {op.name for op in ALL_OPS}
    lines = [name for name, _kind, _arg, _inplace, _aliases in torch._C._op_table()]
    missing = {n for n in lines if n not in names}
    assert missing == set(TABLE_WITHOUT_ENTRY), sorted(missing)


# Ops whose samples cannot hold such an input, and why.
NO_NONCONTIG = {"as_strided": "reads the storage directly, so its input must be a fresh tensor"}


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in OP_DB])
def test_samples_cover_layouts(op):
    samples = op.samples("float64")
    arrays = [a for s in samples for a in s.args if isinstance(as_array(a), np.ndarray)]
    assert any(as_array(a).size == 0 for a in arrays), "no zero-size sample"
    if op.name not in NO_NONCONTIG:
        assert any(isinstance(a, NonContig) for a in arrays), "no non-contiguous sample"
