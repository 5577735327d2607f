"""Counts of the op-database checks that pass, per check and dtype, for a closing note:

    python tools/opdb_counts.py [pytest args...]

Runs tests/test_ops.py and tests/test_vmap_ops.py (the checks the op database drives) in
this process and tallies each test's outcome by what it checks (forward values, gradcheck
with forward AD and batched gradients, gradgradcheck, float32 gradients, vmap) and by
dtype, then lists the batched checks dropped for a declared missing batching rule
(test_vmap_ops.NO_BATCHING_RULE). Exits with pytest's status.
"""

import collections
import pathlib
import sys

import pytest

TESTS = pathlib.Path(__file__).resolve().parent.parent / "tests"

# test function -> (what it checks, dtype, or None when the dtype is the id's last part)
CHECKS = {
    "test_forward": ("forward values", None),
    "test_forward_low_precision": ("forward values vs float32", None),
    "test_low_precision_refused_as_torch": ("refused as torch refuses", None),
    "test_gradcheck": ("gradcheck + forward AD + batched", "float64"),
    "test_gradcheck_complex": ("gradcheck + forward AD + batched", "complex128"),
    "test_gradgradcheck": ("gradgradcheck + fwd-over-rev + batched", "float64"),
    "test_gradgradcheck_complex": ("gradgradcheck + fwd-over-rev + batched", "complex128"),
    "test_grad_float32_matches_float64": ("float32 gradients vs float64", "float32"),
    "test_grad_fn_name": ("grad_fn name", "float64"),
    "test_vmap_matches_loop": ("vmap vs loop", "float64"),
}


class Tally:
    def __init__(self):
        self.counts = collections.Counter()
        self.entries = set()

    def pytest_runtest_logreport(self, report):
        if report.when != "call" and not (report.when == "setup" and report.skipped):
            return
        name, _, params = report.nodeid.split("::")[-1].partition("[")
        if name not in CHECKS:
            return
        check, dtype = CHECKS[name]
        if dtype is None:
            dtype = params.rstrip("]").rsplit("-", 1)[-1]
        self.counts[(check, dtype, report.outcome)] += 1
        self.entries.add(params.split("-sample")[0])


def main():
    tally = Tally()
    files = [str(TESTS / "test_ops.py"), str(TESTS / "test_vmap_ops.py")]
    status = pytest.main(["-q", "-p", "no:cacheprovider", *files, *sys.argv[1:]], plugins=[tally])
    import test_ops  # imported by the run above (tests/ is on its path)

    print(f"\nop-database entries with checks run: {len(tally.entries)}")
    print(f"{'check':<42} {'dtype':<11} {'passed':>7} {'failed':>7} {'skipped':>8}")
    keys = sorted({(c, d) for c, d, _ in tally.counts})
    for check, dtype in keys:
        row = [tally.counts[(check, dtype, o)] for o in ("passed", "failed", "skipped")]
        print(f"{check:<42} {dtype:<11} {row[0]:>7} {row[1]:>7} {row[2]:>8}")
    import test_vmap_ops

    no_vmap = sorted(op.name for op in test_ops.OP_DB if not op.supports_vmap)
    print(f"\nentries vmap refuses by design (data-dependent shapes): {len(no_vmap)}: {no_vmap}")
    declared = {k: sorted(v) for k, v in test_vmap_ops.NO_BATCHING_RULE.items()}
    print(f"entries with a declared missing batching rule: {len(declared)} {declared or ''}")
    dropped = collections.Counter(test_ops.DROPPED_BATCHED_CHECKS)
    print(f"\nbatched checks dropped for a declared missing batching rule: {sum(dropped.values())}")
    for (entry, check), n in sorted(dropped.items()):
        print(f"  {entry}: {check} x{n}")
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
