"""Check the op database (tests/opdb.py) against real torch (not collected by pytest).

    /root/torchvenv/bin/python tests/run_opdb_on_torch.py [-v] [entry name ...]

`ferrograd` is torch here (put in sys.modules before opdb is imported), so every entry,
including those whose op the library lacks (opdb.ALL_OPS), runs on torch itself through
the very checks test_ops.py and test_vmap_ops.py run on ferrograd:

- the value and dtype against the entry's numpy `ref` (float64, float32, and complex128
  where the entry says it supports it),
- the pinned grad_fn names,
- gradcheck in float64 (complex128 where supported) on the differentiable args, with
  forward mode and the batched checks; gradgradcheck where the entry supports it;
  float32 gradients against float64 ones,
- vmap against the loop, and the sample coverage rules.

A failure is the database's fault (a wrong reference, name, flag or sample): fix the
entry. Except TORCH_GAPS, where torch itself is wrong or lacks a rule and ferrograd is
held to the loop; a gap that stops failing is reported too. Prints each failing check
and a summary; exits 1 on any failure. `-v` prints the tracebacks.
"""

from __future__ import annotations

import sys
import traceback
import warnings
from pathlib import Path

import torch

sys.modules["ferrograd"] = torch  # opdb's `import ferrograd as torch` gets torch
sys.path.insert(0, str(Path(__file__).resolve().parent))

import opdb  # noqa: E402
import test_ops  # noqa: E402
import test_vmap_ops  # noqa: E402

# (entry, check) -> (sample indices, why): torch 2.15's vmap disagrees with its own loop
# there, or has no batching rule.
TORCH_GAPS = {
    ("matmul", "gradcheck"): ({3}, "batched forward AD of 1-D @ 2-D keeps a unit dim"),
    ("__matmul__", "gradcheck"): ({3}, "batched forward AD of 1-D @ 2-D keeps a unit dim"),
    ("argmax", "vmap"): ({3}, "argmax(keepdim=True) without a dim drops a dim under vmap"),
    ("argmin", "vmap"): ({3}, "argmin(keepdim=True) without a dim drops a dim under vmap"),
    ("index_select", "vmap"): ({3}, "a 0-dim index selects along the wrong dim under vmap"),
    ("flip", "vmap"): ({4}, "flip of 0-dim examples does not wrap its dims under vmap"),
    ("column_stack", "vmap"): (set(range(8)), "no batching rule for column_stack"),
    ("moveaxis", "vmap"): ({0, 1, 4, 5, 6, 8}, "no batching rule for moveaxis.int"),
    # torch's conj is a lazy view (the conjugate bit): numpy() refuses it, and batched
    # forward AD trips an internal assert on it.
    ("conj", "forward complex128"): (set(range(6)), "numpy() of a conjugate-bit tensor"),
    ("conj", "gradcheck complex128"): (set(range(6)), "batched forward AD of conj asserts"),
    ("H", "forward complex128"): (set(range(4)), "numpy() of a conjugate-bit tensor"),
    ("H", "gradcheck complex128"): (set(range(4)), "batched forward AD of conj asserts"),
    ("mH", "forward complex128"): (set(range(5)), "numpy() of a conjugate-bit tensor"),
    ("mH", "gradcheck complex128"): (set(range(5)), "batched forward AD of conj asserts"),
    ("linalg.vecdot", "gradcheck complex128"): (set(range(5)), "batched forward AD of conj"),
    ("chain_matmul", "vmap"): (set(range(5)), "no batching rule for chain_matmul"),
    ("roll", "vmap"): ({7}, "the flattened roll of 0-dim examples rolls across the batch"),
    # scatter_reduce(reduce="prod"): torch gives no forward-AD tangent (a silent zero).
    ("scatter_reduce", "gradcheck"): ({2, 3, 11}, "no forward AD for reduce='prod'"),
    ("scatter_reduce", "gradgradcheck"): ({2, 3, 11}, "no forward AD for reduce='prod'"),
    # view_as_real's backward views an empty gradient (0 strides kept by contiguous()).
    ("view_as_real", "float32"): ({5}, "backward of an empty view_as_real"),
    # Decompositions: svd_backward's phase check (at::allclose) has no batching rule, so
    # torch's batched double backward of complex svd fails; the double backward of a
    # zero-size decomposition calls as_strided under vmap.
    ("linalg.svd", "gradcheck complex128"): (set(range(6)), "vmap of at::allclose"),
    ("linalg.svd", "gradgradcheck complex128"): (set(range(6)), "vmap of at::allclose"),
    ("linalg.svd", "gradgradcheck float64"): ({5}, "as_strided under vmap (zero-size)"),
    ("linalg.svdvals", "gradgradcheck complex128"): (set(range(5)), "vmap of at::allclose"),
    ("linalg.matrix_norm", "gradgradcheck complex128"): (
        {9, 10, 11, 12, 15}, "vmap of at::allclose (svdvals)"),
    ("linalg.qr", "gradgradcheck float64"): ({7}, "as_strided under vmap (zero-size)"),
    ("linalg.qr", "gradgradcheck complex128"): ({6, 7}, "as_strided under vmap (zero-size)"),
    ("linalg.eigh", "gradgradcheck"): ({4, 5}, "as_strided under vmap (zero-size)"),
    # linalg 2: torch's cholesky_inverse_jvp disagrees with finite differences (its
    # reverse mode is right; ferrograd's jvp is -X dA X with dA = dL Lᴴ + L dLᴴ).
    ("cholesky_inverse", "gradcheck"): ({0, 1, 2, 3}, "wrong forward AD (cholesky_inverse_jvp)"),
    ("cholesky_inverse", "gradgradcheck"): (
        {0, 1, 2, 3}, "wrong forward AD (cholesky_inverse_jvp)"),
    ("linalg.matrix_exp", "gradgradcheck"): ({5, 6}, "as_strided under vmap (zero-size)"),
    ("matrix_exp", "gradgradcheck"): ({5, 6}, "as_strided under vmap (zero-size)"),
    ("linalg.eig", "gradgradcheck"): ({4, 5}, "as_strided under vmap (zero-size)"),
    # with no reflectors, torch's backward leaves A and tau out of the graph
    ("linalg.householder_product", "float32"): ({5, 6}, "no gradient without reflectors"),
    ("orgqr", "float32"): ({5, 6}, "no gradient without reflectors"),
}


def _sample_checks(op):
    """(check, dtype, fn(sample, index)) for every per-sample check `op` takes."""
    t = test_ops
    checks = [
        ("forward", "float64", lambda s, i: t.test_forward(op, s, "float64")),
        ("forward", "float32", lambda s, i: t.test_forward(op, s, "float32")),
    ]
    if op.supports_complex:
        checks.append(("forward", "complex128", lambda s, i: t.test_forward(op, s, "complex128")))
    if op.supports_grad:
        checks += [
            ("grad_fn", "float64", lambda s, i: s.grad_fn and t.test_grad_fn_name(op, s)),
            ("gradcheck", "float64", lambda s, i: t.test_gradcheck(op, s)),
            ("float32 grads", "float64", lambda s, i: t.test_grad_float32_matches_float64(op, i)),
        ]
        if op.supports_complex:
            checks.append(("gradcheck", "complex128", lambda s, i: t.test_gradcheck_complex(op, s)))
    if op.supports_gradgrad:
        checks.append(("gradgradcheck", "float64", lambda s, i: t.test_gradgradcheck(op, s)))
        if op.supports_complex:
            checks.append(
                ("gradgradcheck", "complex128", lambda s, i: t.test_gradgradcheck_complex(op, s))
            )
    for variant in test_vmap_ops.VARIANTS if op.supports_vmap else ():
        checks.append(
            (
                f"vmap {variant}",
                "float64",
                lambda s, i, v=variant: test_vmap_ops.check_vmap_matches_loop(op, s, v),
            )
        )
    return checks


def _failure(fn, verbose) -> str | None:
    """None if fn() passes, else the first line of its error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's own (var's zero degrees of freedom ...)
            fn()
    except Exception as ex:  # every failure is reported, none stops the run
        if verbose:
            traceback.print_exc()
        first = (str(ex).strip().splitlines() or [""])[0]
        return f"{type(ex).__name__}: {first[:300]}"
    return None


def main(argv) -> int:
    verbose = "-v" in argv
    names = [a for a in argv if a != "-v"]
    unknown = sorted(set(names) - {op.name for op in opdb.ALL_OPS})
    if unknown:
        print(f"no such entries: {unknown}")
        return 2
    ops = [op for op in opdb.ALL_OPS if not names or op.name in names]
    failures: list[str] = []
    n_samples = n_checks = n_gaps = 0

    def check(label, fn, gap=None):
        nonlocal n_checks, n_gaps
        n_checks += 1
        error = _failure(fn, verbose)
        if gap is not None:
            n_gaps += error is not None
            error = None if error else f"passes on torch now: drop TORCH_GAPS ({gap})"
        if error:
            failures.append(f"{label}: {error}")
            print(f"FAIL {failures[-1]}")

    for op in ops:
        check(f"{op.name} coverage", lambda op=op: test_ops.test_samples_cover_layouts(op))
        for name, dtype, fn in _sample_checks(op):
            samples = op.samples(dtype)
            n_samples += len(samples) if (name, dtype) == ("forward", "float64") else 0
            # A gap names its check, or its check and dtype ("gradcheck complex128").
            check_name = name.split()[0]
            gap = TORCH_GAPS.get((op.name, check_name), ((), None))
            gap_samples, why = TORCH_GAPS.get((op.name, f"{check_name} {dtype}"), gap)
            for i, sample in enumerate(samples):
                check(
                    f"{op.name} sample{i} ({sample.desc}) {name} {dtype}",
                    lambda fn=fn, s=sample, i=i: fn(s, i),
                    why if i in gap_samples else None,
                )
    print(
        f"{len(ops)} entries, {n_samples} samples, {n_checks} checks on torch "
        f"{torch.__version__}: {len(failures)} failed, {n_gaps} known torch gaps (TORCH_GAPS)"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
