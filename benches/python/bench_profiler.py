"""What the autograd profiler costs: `a + b` on 1-element float32 tensors (requires_grad)
outside any profiler, and inside `autograd.profiler.profile()` (recording one event per op),
for ferrograd and torch in the same run.

The loop alone is timed (not the profile's enter / exit or the processing of its events);
microseconds per op, best of 10 rounds in which every case runs one loop of 20,000 adds
(3 rounds of 4,000 with --quick). The profiler's cost per recorded event is the
difference of the two rows.
"""

import time

from bench_op_overhead import add_loop
from common import describe, load_ferrograd, load_torch, parse_args, print_table


def one_loop_ns(lib, loop, profiled):
    if not profiled:
        start = time.perf_counter_ns()
        loop()
        return time.perf_counter_ns() - start
    with lib.autograd.profiler.profile():
        start = time.perf_counter_ns()
        loop()
        return time.perf_counter_ns() - start


def us_per_op(libs, n, rounds):
    """Best microseconds per op of each (library, profiled) pair, the pairs taking turns
    in every round so that all see the same machine load."""
    cases = [(lib, profiled) for lib in libs for profiled in (False, True)]
    loops = [add_loop(lib, True, n) for lib, _ in cases]
    best = [float("inf")] * len(cases)
    for _ in range(rounds + 1):  # the first round warms up
        for i, ((lib, profiled), loop) in enumerate(zip(cases, loops)):
            best[i] = min(best[i], one_loop_ns(lib, loop, profiled) / n / 1e3)
    return best


def main():
    args = parse_args(__doc__)
    n, repeat = (4_000, 3) if args.quick else (20_000, 10)
    fg = load_ferrograd()
    torch = load_torch(args.no_torch)
    describe(fg, torch)
    libs = [fg] + ([torch] if torch is not None else [])
    best = us_per_op(libs, n, repeat)
    ours, theirs = best[:2], (best[2:] if torch is not None else [None, None])
    rows = [
        ("add, 1 element, requires_grad, no profiler", ours[0], theirs[0]),
        ("add, 1 element, requires_grad, inside profile()", ours[1], theirs[1]),
        (
            "profiler cost per recorded op",
            ours[1] - ours[0],
            None if torch is None else theirs[1] - theirs[0],
        ),
    ]
    print_table(f"autograd profiler overhead ({n} ops per loop, best of {repeat})", rows, "us/op")


if __name__ == "__main__":
    main()
