"""Issue 11's decompositions, ferrograd against torch in the same process (alternating
blocks of calls; median ms per call and the ratio ferrograd / torch, below 1: ferrograd is faster).
Float64 matrices, well conditioned (A Aᵀ / n + I), one 256x256 and a batch of 64 16x16;
forward only, plus inv and det with backward; and matrix_exp and eig of a 128x128 (eig
of a general square one, its eigenvalues complex), lstsq of a 256x128 with 16
right-hand sides.

ferrograd's kernels are faer's (sequential per matrix, rayon over a batch); torch's are
LAPACK's (MKL or OpenBLAS, depending on the wheel).
"""

import sys

from common import paired_main

N = 256


def _spd(lib, *shape):
    lib.manual_seed(0)
    a = lib.randn(*shape, dtype=lib.float64)
    n = shape[-1]
    return a @ a.mT / n + lib.eye(n, dtype=lib.float64)


def on(expr, *shape):
    def build(lib):
        a = _spd(lib, *shape)
        return lambda: expr(lib, a)

    return build


def solve_case(lib):
    a = _spd(lib, N, N)
    b = lib.randn(N, N, dtype=lib.float64)
    return lambda: lib.linalg.solve(a, b)


def _general(lib, *shape):
    lib.manual_seed(0)
    return lib.randn(*shape, dtype=lib.float64)


def lstsq_case(lib):
    a = _general(lib, 256, 128)
    b = lib.randn(256, 16, dtype=lib.float64)
    return lambda: lib.linalg.lstsq(a, b)


def eig_case(lib):
    a = _general(lib, 128, 128)
    return lambda: lib.linalg.eig(a)


def backward_case(fn):
    def build(lib):
        a = _spd(lib, N, N).requires_grad_()

        def step():
            fn(lib, a).sum().backward()
            a.grad = None

        return step

    return build


CASES = [
    ("linalg.inv, 256^2", on(lambda lib, a: lib.linalg.inv(a), N, N), 20),
    ("linalg.det, 256^2", on(lambda lib, a: lib.linalg.det(a), N, N), 20),
    ("linalg.solve, 256^2 x 256", solve_case, 20),
    ("linalg.cholesky, 256^2", on(lambda lib, a: lib.linalg.cholesky(a), N, N), 20),
    ("linalg.qr, 256^2", on(lambda lib, a: lib.linalg.qr(a), N, N), 10),
    ("linalg.eigh, 256^2", on(lambda lib, a: lib.linalg.eigh(a), N, N), 10),
    ("linalg.svd, 256^2", on(lambda lib, a: lib.linalg.svd(a), N, N), 10),
    ("linalg.inv, 64 x 16^2", on(lambda lib, a: lib.linalg.inv(a), 64, 16, 16), 50),
    ("linalg.eigh, 64 x 16^2", on(lambda lib, a: lib.linalg.eigh(a), 64, 16, 16), 50),
    ("inv fwd+bwd, 256^2", backward_case(lambda lib, a: lib.linalg.inv(a)), 10),
    ("det fwd+bwd, 256^2", backward_case(lambda lib, a: lib.linalg.det(a)), 10),
    ("linalg.matrix_exp, 128^2", on(lambda lib, a: lib.linalg.matrix_exp(a), 128, 128), 20),
    ("linalg.lstsq, 256x128 x 256x16", lstsq_case, 20),
    ("linalg.eig, 128^2", eig_case, 10),
]


def main():
    return paired_main(__doc__, CASES)


if __name__ == "__main__":
    sys.exit(main())
