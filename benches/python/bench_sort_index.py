"""Issue 11's sort family and index writes, ferrograd against torch in the same process
(alternating blocks of calls; median ms per call and the ratio ferrograd / torch, below 1:
ferrograd is faster). Inputs are float32 1024x1024 unless the case says otherwise;
forward only, plus advanced indexing with backward.

Cases: sort / argsort / topk / kthvalue / median along the rows, sort of 1M flat values,
index_add and index_copy of 1024 rows (and index_add_ in place), index_put with
accumulate, advanced indexing by an integer tensor and by a bool mask, masked_select,
take, and x[idx] forward + backward.
"""

import sys

from common import paired_main

N = 1024


def _x(lib):
    lib.manual_seed(0)
    return lib.randn(N, N)


def on_x(expr):
    def build(lib):
        x = _x(lib)
        return lambda: expr(x)

    return build


def _rows(lib):
    return lib.randint(0, N, (N,))


def flat_sort_case(lib):
    x = _x(lib).reshape(-1)
    return lambda: x.sort()


def index_add_case(lib):
    x, idx = _x(lib), _rows(lib)
    base = lib.zeros(N, N)
    return lambda: base.index_add(0, idx, x)


def index_add_inplace_case(lib):
    x, idx = _x(lib), _rows(lib)
    base = lib.zeros(N, N)
    return lambda: base.index_add_(0, idx, x)


def index_copy_case(lib):
    x = _x(lib)
    idx = lib.randperm(N) if hasattr(lib, "randperm") else lib.arange(N - 1, -1, -1)
    base = lib.zeros(N, N)
    return lambda: base.index_copy(0, idx, x)


def index_put_accumulate_case(lib):
    x, rows, cols = _x(lib), _rows(lib), _rows(lib)
    values = x[0]
    return lambda: x.index_put((rows, cols), values, accumulate=True)


def getitem_rows_case(lib):
    x, idx = _x(lib), _rows(lib)
    return lambda: x[idx]


def getitem_mask_case(lib):
    x = _x(lib)
    mask = x > 0
    return lambda: x[mask]


def masked_select_case(lib):
    x = _x(lib)
    mask = x > 0
    return lambda: x.masked_select(mask)


def take_case(lib):
    x = _x(lib)
    idx = lib.randint(0, N * N, (N * N,))
    return lambda: x.take(idx)


def getitem_backward_case(lib):
    x, idx = _x(lib).requires_grad_(), _rows(lib)

    def step():
        x[idx].sum().backward()
        x.grad = None

    return step


CASES = [
    ("sort(dim=1), 1024^2", on_x(lambda x: x.sort(1)), 20),
    ("argsort(dim=1), 1024^2", on_x(lambda x: x.argsort(1)), 20),
    ("sort, 1M flat", flat_sort_case, 20),
    ("topk(10, dim=1), 1024^2", on_x(lambda x: x.topk(10, 1)), 30),
    ("kthvalue(512, dim=1), 1024^2", on_x(lambda x: x.kthvalue(512, 1)), 30),
    ("median(dim=1), 1024^2", on_x(lambda x: x.median(1)), 30),
    ("index_add(0), 1024 rows of 1024", index_add_case, 50),
    ("index_add_(0) in place, 1024 rows", index_add_inplace_case, 50),
    ("index_copy(0), 1024 rows of 1024", index_copy_case, 50),
    ("index_put(accumulate), 1024 pts", index_put_accumulate_case, 50),
    ("x[int rows], 1024^2", getitem_rows_case, 50),
    ("x[bool mask], 1024^2", getitem_mask_case, 30),
    ("masked_select, 1024^2", masked_select_case, 30),
    ("take, 1M indices", take_case, 30),
    ("x[int rows] fwd+bwd, 1024^2", getitem_backward_case, 30),
]


def main():
    return paired_main(__doc__, CASES)


if __name__ == "__main__":
    sys.exit(main())
