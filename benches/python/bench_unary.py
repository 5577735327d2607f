"""Unary float kernels: `x.exp()`, `x.sin()`, ... on a 256x256 tensor (float32, then
float64), ferrograd against torch, timed in alternating blocks of calls so both see
the same machine load; median microseconds per call, Python call included.

torch runs with one intra-op thread unless --torch-threads says otherwise: at 65,536
elements ferrograd stays on one thread (its pool takes over from 2^18).
"""

import argparse

from common import describe, alternating_blocks_us, load_ferrograd, load_torch, print_table

OPS = ("exp", "sin", "tanh", "cos", "log", "sigmoid", "sqrt")


def inputs(lib, dtype_name, op):
    x = lib.linspace(-5.0, 5.0, 256 * 256, dtype=getattr(lib, dtype_name)).reshape(256, 256)
    if op in ("log", "sqrt"):
        x = x.abs() + 0.01
    return x


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--torch-threads", type=int, default=1)
    args = parser.parse_args()
    rounds = 50 if args.quick else 400
    fg = load_ferrograd()
    torch = load_torch(args.no_torch)
    describe(fg, torch)
    if torch is not None:
        torch.set_num_threads(args.torch_threads)
    for dtype_name in ("float32", "float64"):
        rows = []
        for op in OPS:
            xs = [inputs(fg, dtype_name, op)]
            calls = [lambda x=xs[0], op=op: getattr(x, op)()]
            if torch is not None:
                xt = inputs(torch, dtype_name, op)
                calls.append(lambda x=xt, op=op: getattr(x, op)())
            times = alternating_blocks_us(calls, rounds)
            rows.append((f"{op}, 256x256 {dtype_name}", times[0], times[1] if torch else None))
        print_table(f"unary ops (median of {rounds} calls in alternating blocks)", rows, "us")


if __name__ == "__main__":
    main()
