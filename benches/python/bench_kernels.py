"""Kernel-bound cases of issue 8, ferrograd against torch in the same process.

Each case runs ferrograd and torch in alternating blocks of calls (common.py explains
why not single calls), so both see the same machine load, and reports the median time
per call and the ratio ferrograd / torch (below 1: ferrograd is faster; this is the
direction the targets in the issue are written in). Both libraries keep their default
thread counts.

Cases:
- `exp`, `sin`, `tanh` on 256x256 and on 16M float32 values with the outputs kept alive
  (the last few results are held, as a training step holds its activations, so a fresh
  buffer is needed every call);
- `x * 0.5` and `x + y` on 16M float32 values;
- an optimizer's in-place update `p.add_(g, alpha=-lr)` on 1024x1024;
- `sum` of 16M float32 values;
- matmul 1024x1024 @ 1024x1024 float32;
- the wide graph: 16 branches of 50 elementwise ops on 256x256, forward + backward;
- one MLP step 784-512-512-10 with tanh, batch 128, forward + backward.
"""

import collections
import sys

from bench_mlp import BATCH, SIZES, make_step
from common import paired_main

M16 = 1 << 24
UNARY = ("exp", "sin", "tanh")


def kept(fn, keep):
    """fn() whose last `keep` results stay referenced."""
    held = collections.deque(maxlen=keep)
    return lambda: held.append(fn())


def unary_case(op, n, keep):
    def build(lib):
        x = lib.rand(n, dtype=lib.float32) * 4.0 - 2.0
        if n == 256 * 256:
            x = x.reshape(256, 256)
        return kept(lambda: getattr(x, op)(), keep)

    return build


def mul_scalar_case(lib):
    x = lib.rand(M16)
    return kept(lambda: x * 0.5, 2)


def add_case(lib):
    x, y = lib.rand(M16), lib.rand(M16)
    return kept(lambda: x + y, 2)


def add_inplace_case(lib):
    """An optimizer's update: `p.add_(g, alpha=-lr)` on 1024x1024, in place."""
    p, g = lib.rand(1024, 1024), lib.rand(1024, 1024)
    return lambda: p.add_(g, alpha=-1e-3)


def sum_case(lib):
    x = lib.rand(M16)
    return lambda: x.sum()


def matmul_case(lib):
    a, b = lib.rand(1024, 1024), lib.rand(1024, 1024)
    return lambda: a @ b


def wide_graph_case(lib):
    xs = [lib.rand(256, 256, requires_grad=True) for _ in range(16)]

    def step():
        total = None
        for x in xs:
            h = x
            for k in range(50):
                h = h.sin() if k % 2 == 0 else h * 1.01
            s = h.sum()
            total = s if total is None else total + s
        total.backward()
        for x in xs:
            x.grad = None

    return step


def mlp_case(lib):
    return make_step(lib, activation="tanh")


def linear_mlp_case(lib):
    """The same network written with nn.Linear (weights stored [out, in], used
    transposed), gradients reset to None each step as `zero_grad()` does."""
    nn = lib.nn
    lib.manual_seed(0)
    layers = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        layers += [nn.Linear(fan_in, fan_out), nn.Tanh()]
    model = nn.Sequential(*layers[:-1])
    x, target = lib.randn(BATCH, SIZES[0]), lib.randn(BATCH, SIZES[-1])

    def step():
        nn.functional.mse_loss(model(x), target).backward()
        model.zero_grad()

    return step


CASES = [
    *[(f"{op}, 256x256, outputs kept", unary_case(op, 256 * 256, 50), 400) for op in UNARY],
    *[(f"{op}, 16M, outputs kept", unary_case(op, M16, 2), 20) for op in UNARY],
    ("x * 0.5, 16M", mul_scalar_case, 20),
    ("x + y, 16M", add_case, 20),
    ("p.add_(g, alpha), 1024^2, in place", add_inplace_case, 100),
    ("sum, 16M", sum_case, 30),
    ("matmul 1024^3", matmul_case, 20),
    ("wide graph 16x50 on 256x256, fwd+bwd", wide_graph_case, 10),
    ("MLP step 784-512-512-10 tanh, b128", mlp_case, 40),
    ("nn.Linear MLP step, same sizes", linear_mlp_case, 40),
]


def print_threads(fg, torch):
    print(f"threads: ferrograd {fg.get_num_threads()}", end="")
    print(f", torch {torch.get_num_threads()}" if torch is not None else "")


def main():
    return paired_main(__doc__, CASES, after_describe=print_threads)


if __name__ == "__main__":
    sys.exit(main())
