"""Forward-mode AD overhead: `a + b` and `a * b` on 1-element float64 tensors, plain,
recording reverse mode (a requires grad), inside a dual level without tangents, and
with a tangent on `a` (forward mode). Issue 9's target: forward mode at most 1.5x the
reverse-mode recording cost.

Loops of 100,000 ops (10,000 with --quick), best of 5; microseconds per op, Python
loop included (the same loop for both libraries).
"""

from contextlib import nullcontext

from common import describe, load_ferrograd, load_torch, measure_ns, parse_args, print_table

MODES = ("plain", "reverse (requires_grad)", "dual level, no tangent", "forward (tangent)")


def loop(lib, mode, op, n):
    fw = lib.autograd.forward_ad
    a = lib.tensor([1.0], dtype=lib.float64, requires_grad=mode.startswith("reverse"))
    b = lib.tensor([2.0], dtype=lib.float64)

    def run():
        level = fw.dual_level() if mode.startswith(("dual", "forward")) else nullcontext()
        with level:
            x = fw.make_dual(a, lib.tensor([1.0], dtype=lib.float64)) if "tangent)" in mode else a
            for _ in range(n):
                op(x, b)

    return run


def us_per_op(lib, mode, op, n, repeat):
    return measure_ns(loop(lib, mode, op, n), repeat=repeat) / n / 1e3


def main():
    args = parse_args(__doc__)
    n, repeat = (10_000, 3) if args.quick else (100_000, 5)
    fg = load_ferrograd()
    torch = load_torch(args.no_torch)
    describe(fg, torch)
    rows = []
    for name, op in (("add", lambda x, y: x + y), ("mul", lambda x, y: x * y)):
        for mode in MODES:
            ours = us_per_op(fg, mode, op, n, repeat)
            theirs = us_per_op(torch, mode, op, n, repeat) if torch is not None else None
            rows.append((f"{name}, 1 element, {mode}", ours, theirs))
    print_table(f"forward-mode overhead ({n} ops per loop, best of {repeat})", rows, "us/op")


if __name__ == "__main__":
    main()
