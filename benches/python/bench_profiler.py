"""What the autograd profiler costs: `a + b` on 1-element float32 tensors (requires_grad)
outside any profiler, and inside `autograd.profiler.profile()` (recording one event per op),
for ferrograd and torch in the same run.

The loop alone is timed (not the profile's enter / exit or the processing of its events);
microseconds per op, best of 5 loops of 20,000 adds (4,000 with --quick). The profiler's
cost per recorded event is the difference of the two rows.
"""

import time

from common import describe, load_ferrograd, load_torch, measure_ns, parse_args, print_table


def add_loop(lib, n):
    a = lib.tensor([1.0], requires_grad=True)
    b = lib.tensor([2.0])

    def loop():
        for _ in range(n):
            a + b

    return loop


def us_per_op(lib, n, repeat, profiled):
    loop = add_loop(lib, n)
    if not profiled:
        return measure_ns(loop, repeat=repeat) / n / 1e3
    runs = []
    for _ in range(repeat + 1):  # the first is a warm-up
        with lib.autograd.profiler.profile():
            start = time.perf_counter_ns()
            loop()
            runs.append(time.perf_counter_ns() - start)
    return min(runs[1:]) / n / 1e3


def main():
    args = parse_args(__doc__)
    n, repeat = (4_000, 3) if args.quick else (20_000, 5)
    fg = load_ferrograd()
    torch = load_torch(args.no_torch)
    describe(fg, torch)
    rows = []
    costs = []
    for profiled in (False, True):
        ours = us_per_op(fg, n, repeat, profiled)
        theirs = us_per_op(torch, n, repeat, profiled) if torch is not None else None
        costs.append((ours, theirs))
        label = "inside profile()" if profiled else "no profiler"
        rows.append((f"add, 1 element, requires_grad, {label}", ours, theirs))
    (off_ours, off_theirs), (on_ours, on_theirs) = costs
    rows.append(
        (
            "profiler cost per recorded op",
            on_ours - off_ours,
            None if off_theirs is None else on_theirs - off_theirs,
        )
    )
    print_table(f"autograd profiler overhead ({n} ops per loop, best of {repeat})", rows, "us/op")


if __name__ == "__main__":
    main()
