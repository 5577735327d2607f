"""vmap over every op of the op database (tests/opdb.py): for every entry and float64
sample, ``vmap(op)`` over a batch of 3 examples equals the loop of the op over them.

An example k of a sample scales its floating arrays by SCALES[k] (which keeps them in
the op's domain and keeps max/min free of ties) and flips every other boolean mask.
Three ways to map:

- "all":   every tensor argument batched at dim 0,
- "first": only the first tensor argument batched (the others shared, in_dims None),
- "last":  every tensor argument batched at dim -1 (a non-contiguous physical layout).

Ops whose batching rule is missing in the core raise NotImplementedError ("Batching rule
not implemented for <Node>"); NO_BATCHING_RULE declares them, and test_declared_missing
_rules_are_exact fails when it is out of date (add a rule = update it). test_ops.py runs
gradcheck's batched checks on every sample that does not hit a declared missing rule.
"""

from __future__ import annotations

import re

import ferrograd as torch
import numpy as np
import pytest
from opdb import OP_DB, NonContig, as_array, to_tensor

#: op name -> the graph nodes whose batching rule the core lacks (for some sample).
NO_BATCHING_RULE: dict[str, set[str]] = {
}

SCALES = (1.0, 1.25, 1.5)
VARIANTS = ("all", "first", "last")
# Batched matmuls may sum in another order than the per-example dot/mv/mm: an ulp.
RTOL, ATOL = 1e-12, 1e-14
_MISSING = re.compile(r"Batching rule not implemented for (\w+)")


def missing_rule(ex: BaseException | None) -> str | None:
    """The node named by a missing-batching-rule error, else None."""
    if isinstance(ex, NotImplementedError):
        m = _MISSING.match(str(ex))
        return m.group(1) if m else None
    return None


def _example(arg, k: int):
    a = as_array(arg)
    if not isinstance(a, np.ndarray):
        return arg
    if a.dtype == bool:
        a = a if k != 1 else ~a
    elif a.dtype.kind in "iu":  # integers stay integers (indices are kwargs, untouched)
        a = np.asarray(a * (k + 1), a.dtype)
    else:
        a = np.asarray(a * SCALES[k])
    return NonContig(a, arg.how) if isinstance(arg, NonContig) else a


def _flat(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def check_vmap_matches_loop(op, sample, variant: str) -> None:
    """Assert vmap(op) over 3 examples of `sample` equals the loop (see module doc)."""
    args = sample.args
    tensor_pos = [i for i, a in enumerate(args) if isinstance(as_array(a), np.ndarray)]
    mapped = tensor_pos[:1] if variant == "first" else tensor_pos
    examples = [[to_tensor(_example(a, k)) for a in args] for k in range(3)]

    in_dims, batched = [None] * len(args), list(examples[0])
    for i in mapped:
        stacked = torch.cat([ex[i].unsqueeze(0) for ex in examples], 0)
        if variant == "last":
            stacked = stacked.permute(*range(1, stacked.dim()), 0)
        in_dims[i], batched[i] = (-1 if variant == "last" else 0), stacked

    def call(*xs):
        return op.op(*xs, **sample.kwargs)

    got = _flat(torch.func.vmap(call, in_dims=tuple(in_dims))(*batched))
    loop = [
        _flat(call(*[ex[i] if i in mapped else examples[0][i] for i in range(len(args))]))
        for ex in examples
    ]
    assert len(got) == len(loop[0])
    for j, g in enumerate(got):
        want = np.stack([outs[j].numpy() for outs in loop])
        g = g.numpy()
        assert (g.shape, g.dtype) == (want.shape, want.dtype)
        np.testing.assert_allclose(g, want, rtol=RTOL, atol=ATOL)


VMAP_DB = [op for op in OP_DB if op.supports_vmap]

CASES = [
    pytest.param(op, sample, variant, id=f"{op.name}-sample{i}-{variant}")
    for op in VMAP_DB
    for i, sample in enumerate(op.samples("float64"))
    for variant in VARIANTS
]


@pytest.mark.parametrize("op, sample, variant", CASES)
def test_vmap_matches_loop(op, sample, variant):
    try:
        check_vmap_matches_loop(op, sample, variant)
    except NotImplementedError as ex:
        node = missing_rule(ex)
        if node is None or node not in NO_BATCHING_RULE.get(op.name, ()):
            raise


def test_declared_missing_rules_are_exact():
    found: dict[str, set[str]] = {}
    for op in VMAP_DB:
        for sample in op.samples("float64"):
            try:
                check_vmap_matches_loop(op, sample, "all")
            except NotImplementedError as ex:
                node = missing_rule(ex)
                if node is None:
                    raise
                found.setdefault(op.name, set()).add(node)
    with_rules = len(VMAP_DB) - len(found)
    print(f"vmap: {with_rules} of {len(VMAP_DB)} ops batch on every sample; missing: {found}")
    assert found == NO_BATCHING_RULE
