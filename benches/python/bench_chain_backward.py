"""Backward over a long chain: N = 10,000 nodes of `y = y * 1.0001` on a 1-element tensor.

The graph is rebuilt before each run; only `y.backward()` is timed. Best of 5 (3 with
--quick); microseconds per node. Recording the forward chain is reported too.
"""

import time

from common import best_of, describe, load_ferrograd, load_torch, parse_args, print_table


def chain(lib, n):
    x = lib.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0001
    return x, y


def per_node_us(lib, n, repeat):
    forward, backward = [], []
    chain(lib, n)[1].backward()  # warm-up
    for _ in range(repeat):
        start = time.perf_counter_ns()
        _, y = chain(lib, n)
        mid = time.perf_counter_ns()
        y.backward()
        end = time.perf_counter_ns()
        forward.append(mid - start)
        backward.append(end - mid)
    return best_of(forward) / n / 1e3, best_of(backward) / n / 1e3


def main():
    args = parse_args(__doc__)
    n, repeat = 10_000, (3 if args.quick else 5)
    fg = load_ferrograd()
    torch = load_torch(args.no_torch)
    describe(fg, torch)
    ours = per_node_us(fg, n, repeat)
    theirs = per_node_us(torch, n, repeat) if torch is not None else (None, None)
    print_table(
        f"chain of {n} muls on 1 element (best of {repeat})",
        [
            ("backward, per node", ours[1], theirs[1]),
            ("forward recording, per node", ours[0], theirs[0]),
        ],
        "us/node",
    )


if __name__ == "__main__":
    main()
