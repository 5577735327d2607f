"""Issue 11, matrix and shape ops (src/ops/matrix_ops.rs, diag.rs, roll.rs): bad inputs
raise torch's exception class with torch's message, in torch's order of checks.

Each case is checked on torch 2.15 by running this file with torch's Python
(`/root/torchvenv/bin/python tests/test_matops_errors.py`: `ferrograd` is torch there),
so the table cannot drift from torch. Names in the calls (float64 unless said): x (3, 4),
m (3, 2), b (2, 4), v (4,), v3 (3,), x3 (2, 3, 4), b1 (5, 3, 2), b2 (5, 2, 4), s 0-dim,
xf float32 (3, 4).
"""

import sys
import warnings

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
    "m": torch.ones(3, 2, dtype=F64),
    "b": torch.ones(2, 4, dtype=F64),
    "v": torch.ones(4, dtype=F64),
    "v3": torch.ones(3, dtype=F64),
    "x3": torch.ones(2, 3, 4, dtype=F64),
    "b1": torch.ones(5, 3, 2, dtype=F64),
    "b2": torch.ones(5, 2, 4, dtype=F64),
    "s": torch.tensor(1.5, dtype=F64),
    "xf": torch.ones(3, 4),
}

DIM2 = "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
EXPAND = "The expanded size of the tensor ({}) must match the existing size ({}) at "
SAME_DTYPE = "{} and mat2 must have the same dtype, but got {} and {}"

# (call, exception class, message); a message ending in "..." is compared as a prefix.
CASES = [
    # addmm: dtypes, then the factors' ranks and sizes, then self's broadcast
    (
        "torch.addmm(x, m, m)",
        RuntimeError,
        "addmm: mat1 and mat2 shapes cannot be multiplied (3x2 and 3x2)",
    ),
    ("torch.addmm(x, v, b)", RuntimeError, "addmm: self must be a matrix, got 1-D tensor"),
    ("torch.addmm(x, m, v)", RuntimeError, "addmm: mat2 must be a matrix, got 1-D tensor"),
    (
        "torch.addmm(v3, m, b)",
        RuntimeError,
        EXPAND.format(4, 3)
        + "non-singleton dimension 1.  Target sizes: [3, 4].  Tensor sizes: [3]",
    ),
    (
        "torch.addmm(v3, m, m)",
        RuntimeError,
        "addmm: mat1 and mat2 shapes cannot be multiplied (3x2 and 3x2)",
    ),
    ("torch.addmm(x, m.float(), b)", RuntimeError, SAME_DTYPE.format("mat1", "Float", "Double")),
    ("torch.addmm(xf, m, b)", RuntimeError, SAME_DTYPE.format("self", "Float", "Double")),
    ("torch.addmm(x, m, b.float())", RuntimeError, SAME_DTYPE.format("self", "Double", "Float")),
    ("torch.addmm(xf, v, b)", RuntimeError, SAME_DTYPE.format("self", "Float", "Double")),
    (
        "v.clone().addmm_(m, b)",
        RuntimeError,
        "Bad in-place call: input tensor size [4] and output tensor size [3, 4] should match",
    ),
    # addmv
    ("torch.addmv(v3, m, v)", RuntimeError, "size mismatch, got input (3), mat (3x2), vec (4)"),
    (
        "torch.addmv(torch.ones(2, dtype=torch.float64), x, v)",
        RuntimeError,
        "size mismatch, got input (2), mat (3x4), vec (4)",
    ),
    ("torch.addmv(v3, x3, v)", RuntimeError, "vector + matrix @ vector expected, got 1, 3, 1"),
    ("torch.addmv(x, x, v)", RuntimeError, "vector + matrix @ vector expected, got 2, 2, 1"),
    (
        "torch.addmv(v3, x, v.float())",
        RuntimeError,
        "addmv input tensors must have the same dtype, but got Double, Double, and Float",
    ),
    (
        "torch.addmv(v3.float(), x, v)",
        RuntimeError,
        "addmv input tensors must have the same dtype, but got Float, Double, and Double",
    ),
    # baddbmm: self's broadcast first, then dtypes, then bmm's checks
    (
        "torch.baddbmm(x, b1, b1)",
        RuntimeError,
        EXPAND.format(2, 4)
        + "non-singleton dimension 2.  Target sizes: [5, 3, 2].  Tensor sizes: [3, 4]",
    ),
    ("torch.baddbmm(x, b1, b)", IndexError, DIM2),
    (
        "torch.baddbmm(x, s, b2)",
        IndexError,
        "Dimension specified as 0 but tensor has no dimensions",
    ),
    ("torch.addbmm(x, s, b2)", IndexError, "Dimension specified as 1 but tensor has no dimensions"),
    (
        "torch.baddbmm(x, b1, torch.ones(4, 2, 4, dtype=torch.float64))",
        RuntimeError,
        "Expected size for first two dimensions of batch2 tensor to be: [5, 2] but got: [4, 2].",
    ),
    (
        "torch.baddbmm(xf, b1, b2)",
        RuntimeError,
        "Input dtypes must be the same, got: input float, batch1: double, batch2: double",
    ),
    (
        "torch.baddbmm(x, b1, b2.float())",
        RuntimeError,
        "expected scalar type Double but found Float",
    ),
    (
        "torch.baddbmm(xf, b1, b1)",
        RuntimeError,
        EXPAND.format(2, 4)
        + "non-singleton dimension 2.  Target sizes: [5, 3, 2].  Tensor sizes: [3, 4]",
    ),
    # addbmm
    (
        "torch.addbmm(x, b1, b1)",
        RuntimeError,
        EXPAND.format(2, 4)
        + "non-singleton dimension 1.  Target sizes: [3, 2].  Tensor sizes: [3, 4]",
    ),
    ("torch.addbmm(x, b1, b)", IndexError, DIM2),
    (
        "torch.addbmm(x, b1, torch.ones(4, 2, 4, dtype=torch.float64))",
        RuntimeError,
        "batch1 and batch2 must have same number of batches, got 5 and 4",
    ),
    ("torch.addbmm(xf, b1, b2)", RuntimeError, SAME_DTYPE.format("self", "Float", "Double")),
    ("torch.addbmm(x, b1.float(), b2)", RuntimeError, SAME_DTYPE.format("mat1", "Float", "Double")),
    # vdot
    (
        "torch.vdot(v, v3)",
        RuntimeError,
        "inconsistent tensor size, expected tensor [4] and src [3] to have the same number of "
        "elements, but got 4 and 3 elements respectively",
    ),
    ("torch.vdot(x, x)", RuntimeError, "1D tensors expected, but got 2D and 2D tensors"),
    ("torch.vdot(s, s)", RuntimeError, "1D tensors expected, but got 0D and 0D tensors"),
    (
        "torch.vdot(v, v.float())",
        RuntimeError,
        "dot : expected both vectors to have same dtype, but found Double and Float",
    ),
    # cross
    (
        "torch.linalg.cross(x, x)",
        RuntimeError,
        "linalg.cross: inputs dimension -1 must have length 3. Got 4 and 4",
    ),
    (
        "torch.linalg.cross(m, v3)",
        RuntimeError,
        "linalg.cross: inputs must have the same number of dimensions.",
    ),
    ("torch.linalg.cross(x, x, dim=2)", IndexError, DIM2),
    (
        "torch.linalg.cross(s, s)",
        IndexError,
        "Dimension specified as -1 but tensor has no dimensions",
    ),
    (
        "torch.linalg.cross(torch.ones(3, 3), torch.ones(3, 3, dtype=torch.float64))",
        RuntimeError,
        "expected scalar type Float but found Double",
    ),
    (
        "torch.linalg.cross(torch.ones(2, 3), torch.ones(4, 3))",
        RuntimeError,
        "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0",
    ),
    (
        "torch.cross(x, x, dim=1)",
        RuntimeError,
        "linalg.cross: inputs dimension 1 must have length 3. Got 4 and 4",
    ),
    (
        "torch.cross(torch.ones(3, 3), torch.ones(1, 3))",
        RuntimeError,
        "linalg.cross: inputs dimension 0 must have length 3. Got 3 and 1",
    ),
    (
        "torch.cross(torch.ones(2, 4), torch.ones(2, 4))",
        RuntimeError,
        "no dimension of size 3 in input",
    ),
    # trace
    ("torch.trace(v)", RuntimeError, "trace: expected a matrix, but got tensor with dim 1"),
    ("torch.trace(x3)", RuntimeError, "trace: expected a matrix, but got tensor with dim 3"),
    (
        "torch.trace(torch.ones(3, 3, dtype=torch.bool))",
        NotImplementedError,
        "\"trace\" not implemented for 'Bool'",
    ),
    # diag_embed, diag
    ("torch.diag_embed(x, 0, 0, 0)", RuntimeError, "diagonal dimensions cannot be identical 0, 0"),
    (
        "torch.diag_embed(x, 0, 0, 3)",
        IndexError,
        "Dimension out of range (expected to be in range of [-3, 2], but got 3)",
    ),
    (
        "torch.diag_embed(s)",
        IndexError,
        "Dimension out of range (expected to be in range of [-1, 0], but got -2)",
    ),
    ("torch.diag(x3)", RuntimeError, "diag(): Supports 1D or 2D tensors. Got 3D"),
    ("torch.diag(s)", RuntimeError, "diag(): Supports 1D or 2D tensors. Got 0D"),
    # roll
    ("torch.roll(x, 1, 2)", IndexError, DIM2),
    (
        "torch.roll(x, (1, 2), 0)",
        RuntimeError,
        "shifts and dimensions must align. shifts: 2, dims:1",
    ),
    ("torch.roll(x, (1, 2))", RuntimeError, "shifts and dimensions must align. shifts: 2, dims:0"),
    ("torch.roll(x, [], [])", RuntimeError, "`shifts` required"),
    ("torch.roll(s, 1, 0)", IndexError, "Dimension specified as 0 but tensor has no dimensions"),
    # rot90: the counts, then the dims' range, then whether they differ
    (
        "torch.rot90(x, 1, (0,))",
        RuntimeError,
        "expected total rotation dims == 2, but got dims = 1",
    ),
    ("torch.rot90(v)", RuntimeError, "expected total dims >= 2, but got total dims = 1"),
    (
        "torch.rot90(x, 1, (0, 0))",
        RuntimeError,
        "expected rotation dims to be different, but got dim0 = 0 and dim1 = 0",
    ),
    (
        "torch.rot90(x, 1, (0, -2))",
        RuntimeError,
        "expected rotation dims to be different, but got dim0 = 0 and dim1 = -2",
    ),
    ("torch.rot90(x, 1, (0, 2))", IndexError, DIM2),
    (
        "torch.rot90(x3, 1, (5, 6))",
        IndexError,
        "Dimension out of range (expected to be in range of [-3, 2], but got 5)",
    ),
    # narrow_copy
    (
        "torch.narrow_copy(x, 2, 0, 1)",
        RuntimeError,
        "Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  "
        "(Could this error message be improved?  If so, please report an enhancement request "
        "to PyTorch.)",
    ),
    (
        "torch.narrow_copy(x, -3, 0, 1)",
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got -3)",
    ),
    (
        "torch.narrow_copy(x, 0, 2, 2)",
        RuntimeError,
        "start (2) + length (2) exceeds dimension size (3).",
    ),
    (
        "torch.narrow_copy(x, 0, 4, 0)",
        IndexError,
        "start out of range (expected to be in range of [-3, 3], but got 4)",
    ),
    (
        "torch.narrow_copy(x, 0, 0, -1)",
        RuntimeError,
        "start (0) + length (-1) exceeds dimension size (3).",
    ),
    (
        "torch.narrow_copy(s, 0, 0, 1)",
        RuntimeError,
        "narrow() cannot be applied to a 0-dim tensor.",
    ),
]


@pytest.mark.parametrize("call, kind, message", CASES, ids=[c[0] for c in CASES])
def test_error(call, kind, message):
    check(NAMES, call, kind, message)


def test_cross_without_dim_warns_once_and_picks_the_first_size_3_dim():
    """torch.cross without a dim: the first dim of size 3 (a deprecation warning, once)."""
    a = torch.ones(4, 3, dtype=F64)
    with warnings.catch_warnings():  # torch warns once per process: not asserted here
        warnings.simplefilter("ignore")
        out = torch.cross(a, a)
    assert out.grad_fn is None and tuple(out.shape) == (4, 3)
    a = torch.ones(4, 3, dtype=F64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.cross(a, a).grad_fn._saved_dim == 1


if __name__ == "__main__":
    run_on_torch(torch, NAMES, CASES)
