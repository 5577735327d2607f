"""Copies between layouts (kernels/strided.rs), ferrograd against torch in the same
process (alternating blocks of calls; median ms per call and the ratio ferrograd / torch,
below 1: ferrograd is faster). Inputs are float32 1024x1024.

Cases: a transposed copy, a copy of every other column, flip and roll along the rows,
cat along each dim, stack, repeat, tril, and diag_embed of 16 rows (16x1024x1024 out).
"""

import sys

from common import paired_main

N = 1024


def on_xy(expr):
    def build(lib):
        lib.manual_seed(0)
        x, y = lib.randn(N, N), lib.randn(N, N)
        return lambda: expr(lib, x, y)

    return build


CASES = [
    ("x.t().contiguous()", on_xy(lambda lib, x, y: x.t().contiguous()), 50),
    ("x[:, ::2].contiguous()", on_xy(lambda lib, x, y: x[:, ::2].contiguous()), 50),
    ("flip(1)", on_xy(lambda lib, x, y: x.flip(1)), 50),
    ("roll(1, 1)", on_xy(lambda lib, x, y: x.roll(1, 1)), 50),
    ("cat([x, y], 0)", on_xy(lambda lib, x, y: lib.cat([x, y], 0)), 50),
    ("cat([x, y], 1)", on_xy(lambda lib, x, y: lib.cat([x, y], 1)), 50),
    ("stack([x, y])", on_xy(lambda lib, x, y: lib.stack([x, y])), 50),
    ("repeat(2, 1)", on_xy(lambda lib, x, y: x.repeat(2, 1)), 50),
    ("tril()", on_xy(lambda lib, x, y: x.tril()), 50),
    ("diag_embed(x[:16])", on_xy(lambda lib, x, y: lib.diag_embed(x[:16])), 10),
]


def main():
    return paired_main(__doc__, CASES)


if __name__ == "__main__":
    sys.exit(main())
