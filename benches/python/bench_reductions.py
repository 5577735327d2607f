"""Issue 11's reductions, scans and indexing, ferrograd against torch in the same
process (alternating blocks of calls; median ms per call and the ratio ferrograd / torch, below 1:
ferrograd is faster). Inputs are float32; forward only, plus one case with backward.

Cases: amax / prod / logsumexp / var over the rows of 1024x1024, sum over the rows (of
x, of x.t() and of the slices x[:, ::2], x[::2], x[:, :512]), sum of all of x[:, ::2],
amax over the columns, norm and nansum of all, softmax and log_softmax along the last
dim of 1024x1024 (softmax along the first too), cumsum of 1024x1024 along each dim,
gather / scatter_add / index_select on 1024x1024, and softmax forward + backward.
"""

import sys

from common import paired_main

N = 1024


def _x(lib):
    lib.manual_seed(0)
    return lib.randn(N, N)


def reduction(expr):
    def build(lib):
        x = _x(lib)
        return lambda: expr(lib, x)

    return build


def _index(lib):
    return lib.randint(0, N, (N, N))


def gather_case(lib):
    x, idx = _x(lib), _index(lib)
    return lambda: x.gather(1, idx)


def scatter_add_case(lib):
    x, idx = _x(lib), _index(lib)
    base = lib.zeros(N, N)
    return lambda: base.scatter_add(1, idx, x)


def index_select_case(lib):
    x = _x(lib)
    idx = lib.randint(0, N, (N,))
    return lambda: x.index_select(0, idx)


def softmax_backward_case(lib):
    x = _x(lib).requires_grad_()

    def step():
        x.softmax(-1).sum().backward()
        x.grad = None

    return step


CASES = [
    ("amax(dim=1), 1024^2", reduction(lambda lib, x: x.amax(1)), 50),
    ("prod(dim=1), 1024^2", reduction(lambda lib, x: x.prod(1)), 50),
    ("sum(dim=1), 1024^2", reduction(lambda lib, x: x.sum(1)), 50),
    ("sum(dim=1) of x.t(), 1024^2", reduction(lambda lib, x: x.t().sum(1)), 50),
    ("sum(dim=1) of x[:, ::2], 1024^2", reduction(lambda lib, x: x[:, ::2].sum(1)), 50),
    ("sum(dim=1) of x[::2], 1024^2", reduction(lambda lib, x: x[::2].sum(1)), 50),
    ("sum(dim=1) of x[:, :512], 1024^2", reduction(lambda lib, x: x[:, :512].sum(1)), 50),
    ("sum() of x[:, ::2], 1024^2", reduction(lambda lib, x: x[:, ::2].sum()), 50),
    ("amax(dim=0), 1024^2", reduction(lambda lib, x: x.amax(0)), 50),
    ("norm(), 1024^2", reduction(lambda lib, x: x.norm()), 50),
    ("nansum(), 1024^2", reduction(lambda lib, x: x.nansum()), 50),
    ("logsumexp(dim=1), 1024^2", reduction(lambda lib, x: x.logsumexp(1)), 50),
    ("var(dim=1), 1024^2", reduction(lambda lib, x: x.var(1)), 50),
    ("softmax(dim=-1), 1024^2", reduction(lambda lib, x: x.softmax(-1)), 50),
    ("softmax(dim=0), 1024^2", reduction(lambda lib, x: x.softmax(0)), 30),
    ("log_softmax(dim=-1), 1024^2", reduction(lambda lib, x: x.log_softmax(-1)), 50),
    ("cumsum(dim=0), 1024^2", reduction(lambda lib, x: x.cumsum(0)), 50),
    ("cumsum(dim=1), 1024^2", reduction(lambda lib, x: x.cumsum(1)), 50),
    ("gather(dim=1), 1024^2", gather_case, 50),
    ("scatter_add(dim=1), 1024^2", scatter_add_case, 50),
    ("index_select(dim=0), 1024^2", index_select_case, 50),
    ("softmax fwd+bwd, 1024^2", softmax_backward_case, 30),
]


def main():
    return paired_main(__doc__, CASES)


if __name__ == "__main__":
    sys.exit(main())
