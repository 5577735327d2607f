"""Issue 11, norms, scatter_reduce, unfold, repeat_interleave and unique
(src/ops/norm.rs, scatter_reduce.rs, unique.rs, view.rs; python/ferrograd/_norms.py,
_repeat_unique.py): bad inputs raise torch's exception class with torch's message, in
torch's order of checks.

Each case is checked on torch 2.15 by running this file with torch's Python
(`/root/torchvenv/bin/python tests/test_norm_ops_errors.py`: `ferrograd` is torch there).
Names in the calls (float64 unless said): x (3, 4), x3 (2, 2, 2), v (3,), xl int64
(3, 4), xf float32 (3, 4), xc complex64 (3, 4), e (2, 0, 3) float32, idx int64 (2, 3)
and src (2, 3) for a (2, 3) self y.
"""

import sys

if __name__ == "__main__":
    import torch

    sys.modules["ferrograd"] = torch

import ferrograd as torch  # noqa: E402
import pytest  # noqa: E402
from error_table import check, run_on_torch  # noqa: E402

F64 = torch.float64
NAMES = {
    "torch": torch,
    "x": torch.ones(3, 4, dtype=F64),
    "x3": torch.ones(2, 2, 2, dtype=F64),
    "v": torch.ones(3, dtype=F64),
    "xl": torch.ones(3, 4, dtype=torch.int64),
    "xf": torch.ones(3, 4),
    "xc": torch.ones(3, 4, dtype=torch.complex64),
    "e": torch.zeros(2, 0, 3),
    "y": torch.ones(2, 3, dtype=F64),
    "idx": torch.tensor([[0, 1, 0], [1, 1, 0]]),
    "src": torch.ones(2, 3, dtype=F64),
    "inf": float("inf"),
}

VN = "linalg.vector_norm"
MN = "linalg.matrix_norm"
NO_IDENTITY = "because the operation does not have an identity"
DIM2 = "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
REDUCES = "reduce argument must be either sum, prod, mean, amax or amin, got "

# (call, exception class, message); a message ending in "..." is compared as a prefix.
CASES = [
    # vector_norm: the input's dtype, then dtype=, then dims, then empty slices
    (
        "torch.linalg.vector_norm(xl)",
        NotImplementedError,
        f"{VN}: Expected a floating point or complex tensor as input. Got Long",
    ),
    (
        "torch.linalg.vector_norm(xl, dtype=torch.float64)",
        NotImplementedError,
        f"{VN}: Expected a floating point or complex tensor as input. Got Long",
    ),
    (
        "torch.linalg.vector_norm(x, dtype=torch.float32)",
        RuntimeError,
        f"{VN}: the dtype of the input (Double) should be convertible without narrowing to "
        "the specified dtype (Float)",
    ),
    (
        "torch.linalg.vector_norm(x, dtype=torch.complex128)",
        RuntimeError,
        f"{VN}: dtype should be real for real inputs, but got ComplexDouble",
    ),
    (
        "torch.linalg.vector_norm(xc, dtype=torch.float64)",
        RuntimeError,
        f"{VN}: dtype should be complex for complex inputs, but got Double",
    ),
    ("torch.linalg.vector_norm(x, 2, dim=2)", IndexError, DIM2),
    (
        "torch.linalg.vector_norm(x, 2, dim=(0, 0))",
        RuntimeError,
        "dim 0 appears multiple times in the list of dims",
    ),
    (
        "torch.linalg.vector_norm(x, 'fro')",
        TypeError,
        "linalg_vector_norm(): argument 'ord' (position 2) must be Number, not str",
    ),
    (
        "torch.linalg.vector_norm(x, 2, dim=1.5)",
        TypeError,
        "linalg_vector_norm(): argument 'dim' must be tuple of ints, not float",
    ),
    (
        "torch.linalg.vector_norm(torch.zeros(0, 3), inf)",
        RuntimeError,
        f"{VN} cannot compute the inf norm on an empty tensor {NO_IDENTITY}",
    ),
    (
        "torch.linalg.vector_norm(torch.zeros(0), -2.5)",
        RuntimeError,
        f"{VN} cannot compute the -2.5 norm on an empty tensor {NO_IDENTITY}",
    ),
    (
        "torch.linalg.vector_norm(e, -inf, dim=-2)",
        RuntimeError,
        f"{VN} cannot compute the -inf norm on the dimension -2because this dimension is "
        f"empty and the operation does not have an identity",
    ),
    (
        "torch.linalg.vector_norm(e, -1, dim=(0, 1))",
        RuntimeError,
        f"{VN} cannot compute the -1 norm on the dimension 1because this dimension is empty "
        "and the operation does not have an identity",
    ),
    # matrix_norm: the order, the rank, the dtype, the dims (after wrapping), dtype=
    (
        "torch.linalg.matrix_norm(v)",
        RuntimeError,
        f"{MN}: The input tensor A must have at least 2 dimensions.",
    ),
    ("torch.linalg.matrix_norm(x, 3)", RuntimeError, f"{MN}: Order 3 not supported."),
    ("torch.linalg.matrix_norm(x, 'abc')", RuntimeError, f"{MN}: Order abc not supported."),
    ("torch.linalg.matrix_norm(x, dim=(0,))", RuntimeError, f"{MN}: dim must be a 2-tuple. Got 0"),
    (
        "torch.linalg.matrix_norm(x, dim=(1, -1))",
        RuntimeError,
        f"{MN}: dims must be different. Got (1, 1)",
    ),
    ("torch.linalg.matrix_norm(x, dim=(0, 2))", IndexError, DIM2),
    (
        "torch.linalg.matrix_norm(xl, 1)",
        NotImplementedError,
        f"{MN}: Expected a floating point or complex tensor as input. Got Long",
    ),
    (
        "torch.linalg.matrix_norm(x, 1, dtype=torch.float32)",
        RuntimeError,
        f"{MN}: the dtype of the input (Double) should be convertible without narrowing to "
        "the specified dtype (Float)",
    ),
    # linalg.norm and torch.norm route to the two
    (
        "torch.linalg.norm(x3, 1)",
        RuntimeError,
        "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.",
    ),
    ("torch.linalg.norm(x, 'fro', dim=1)", RuntimeError, f"{MN}: dim must be a 2-tuple. Got 1"),
    (
        "torch.linalg.norm(x, dim=(0, 1, 1))",
        RuntimeError,
        "linalg.norm: If dim is specified, it must be of length 1 or 2. Got [0, 1, 1]",
    ),
    ("torch.norm(x, 'abc')", RuntimeError, f"{MN}: Order abc not supported."),
    (
        "torch.norm(x3, 'fro', dim=(0, 1, 2))",
        RuntimeError,
        f"{MN}: dim must be a 2-tuple. Got 0 1 2",
    ),
    (
        "x.norm(p=float('inf'), dtype=torch.float32)",
        RuntimeError,
        f"{VN}: the dtype of the input (Double) should be convertible without narrowing to "
        "the specified dtype (Float)",
    ),
    # scatter_reduce: scatter's checks, then the reduction's name
    ("y.scatter_reduce(0, idx, src, 'foo')", RuntimeError, REDUCES + "foo"),
    (
        "y.scatter_reduce(0, idx, src.float(), 'foo')",
        RuntimeError,
        "scatter(): Expected self.dtype to be equal to src.dtype",
    ),
    (
        "y.scatter_reduce(0, idx, src.float(), 'sum')",
        RuntimeError,
        "scatter(): Expected self.dtype to be equal to src.dtype",
    ),
    (
        "y.scatter_reduce(0, idx.float(), src, 'sum')",
        RuntimeError,
        "scatter(): Expected dtype int32/int64 for index",
    ),
    ("y.scatter_reduce(2, idx, src, 'sum')", IndexError, DIM2),
    (
        "y.scatter_reduce(0, idx + 5, src, 'sum')",
        RuntimeError,
        "index 5 is out of bounds for dimension 0 with size 2",
    ),
    (
        "y.scatter_reduce(0, idx, src, 'sum', include_self=1)",
        TypeError,
        "scatter_reduce(): argument 'include_self' must be bool, not int",
    ),
    (
        "y.to(torch.complex128).scatter_reduce(0, idx, src.to(torch.complex128), 'amax')",
        NotImplementedError,
        "\"scatter_gather_tensor_cpu_reduce_amax\" not implemented for 'ComplexDouble'",
    ),
    # unfold
    (
        "x.unfold(1, 5, 1)",
        RuntimeError,
        "maximum size for tensor at dimension 1 is 4 but size is 5",
    ),
    ("x.unfold(1, 2, 0)", RuntimeError, "step is 0 but must be > 0"),
    ("x.unfold(1, -1, 1)", RuntimeError, "size is -1 but must be >= 0"),
    ("x.unfold(2, 2, 1)", IndexError, DIM2),
    (
        "torch.tensor(3.).unfold(0, 2, 1)",
        RuntimeError,
        "maximum size for tensor at dimension 0 is 1 but size is 2",
    ),
    # repeat_interleave
    ("x.repeat_interleave(-1)", RuntimeError, "Repeats must be non-negative"),
    ("x.repeat_interleave(2, dim=2)", IndexError, DIM2),
    (
        "x.repeat_interleave(torch.tensor([1, 2]), dim=1)",
        RuntimeError,
        "repeats must have the same size as input along dim, but got repeats.size(0) = 2 and "
        "input.size(1) = 4",
    ),
    (
        "x.repeat_interleave(torch.tensor([1, -2, 1]), dim=0)",
        RuntimeError,
        "repeats can not be negative",
    ),
    (
        "x.repeat_interleave(torch.tensor([[1, 2]]), dim=0)",
        RuntimeError,
        "repeats must be 0-dim or 1-dim tensor",
    ),
    (
        "x.repeat_interleave(torch.tensor([1., 2., 1.]), dim=0)",
        NotImplementedError,
        "\"repeat_interleave_cpu\" not implemented for 'Float'",
    ),
    (
        "x.repeat_interleave(2, dim=0, output_size=5)",
        RuntimeError,
        "repeat_interleave: Invalid output_size, expected 6 but got 5",
    ),
    (
        "x.repeat_interleave(torch.tensor([2, 1, 1]), dim=0, output_size=3)",
        RuntimeError,
        "allocated size does not match required size",
    ),
    (
        "torch.repeat_interleave(torch.tensor([[1, 0, 3]]))",
        RuntimeError,
        "repeat_interleave only accept 1D vector as repeat",
    ),
    # unique
    (
        "torch.unique(x3, dim=3)",
        IndexError,
        "Dimension out of range (expected to be in range of [-3, 2], but got 3)",
    ),
    (
        "torch.unique(torch.zeros(0, 3), dim=1)",
        RuntimeError,
        "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied",
    ),
    ("torch.unique(xc)", NotImplementedError, "\"unique\" not implemented for 'ComplexFloat'"),
]


@pytest.mark.parametrize("call, kind, message", CASES, ids=[c[0] for c in CASES])
def test_error(call, kind, message):
    check(NAMES, call, kind, message)


def test_matrix_norm_svd_orders():
    # ord='nuc' and ±2 go through linalg.svdvals (src/ops/decomp/spectral.rs), after
    # torch's checks.
    import numpy as np

    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    for ord in ("nuc", 2, -2):
        got = torch.linalg.matrix_norm(torch.tensor(a), ord)
        np.testing.assert_allclose(got.numpy(), np.linalg.norm(a, ord, axis=(-2, -1)))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        torch.linalg.matrix_norm(NAMES["v"], "nuc")


if __name__ == "__main__":
    run_on_torch(torch, NAMES, CASES)
