"""Per-op overhead: `a + b` on 1-element float32 tensors, with and without requires_grad.

Loops of 100,000 adds (10,000 with --quick), best of 5; microseconds per op, Python loop
included (the same loop for both libraries).
"""

from common import describe, load_ferrograd, load_torch, measure_ns, parse_args, print_table


def add_loop(lib, requires_grad, n):
    a = lib.tensor([1.0], requires_grad=requires_grad)
    b = lib.tensor([2.0])

    def run():
        for _ in range(n):
            a + b

    return run


def us_per_op(lib, requires_grad, n, repeat):
    return measure_ns(add_loop(lib, requires_grad, n), repeat=repeat) / n / 1e3


def main():
    args = parse_args(__doc__)
    n, repeat = (10_000, 3) if args.quick else (100_000, 5)
    fg = load_ferrograd()
    torch = load_torch(args.no_torch)
    describe(fg, torch)
    rows = []
    for requires_grad in (False, True):
        ours = us_per_op(fg, requires_grad, n, repeat)
        theirs = us_per_op(torch, requires_grad, n, repeat) if torch is not None else None
        rows.append((f"add, 1 element, requires_grad={requires_grad}", ours, theirs))
    print_table(f"per-op overhead ({n} ops per loop, best of {repeat})", rows, "us/op")


if __name__ == "__main__":
    main()
