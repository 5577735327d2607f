"""Issue 11, composites (python/ferrograd/_composite.py, _einsum.py, linalg.py): bad
inputs raise torch's exception class with torch's message.

Each case is checked on torch 2.15 by running this file with torch's Python
(`/root/torchvenv/bin/python tests/test_composite_errors.py`: `ferrograd` is torch
there), so the table cannot drift from torch. Names in the calls: x float64 (3, 4),
m float64 (2, 4), b float64 (4, 5), v float64 (4,), sq float64 (3, 3), s float64 0-dim, x3 float64
(2, 3, 4).
"""

import sys

if __name__ == "__main__":
    import torch

    sys.modules["ferrograd"] = torch

import ferrograd as torch  # noqa: E402
import pytest  # noqa: E402
from error_table import check, run_on_torch  # noqa: E402

NAMES = {
    "torch": torch,
    "x": torch.ones(3, 4, dtype=torch.float64),
    "m": torch.ones(2, 4, dtype=torch.float64),
    "b": torch.ones(4, 5, dtype=torch.float64),
    "v": torch.ones(4, dtype=torch.float64),
    "sq": torch.ones(3, 3, dtype=torch.float64),
    "s": torch.tensor(1.5, dtype=torch.float64),
    "x3": torch.ones(2, 3, 4, dtype=torch.float64),
}

DIM2 = "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
PARSER = "einsum(): must specify the equation string and at least one operand, or at least "
MULTI_DOT_DTYPE = "multi_dot(): all tensors must have be the same dtype but tensor 0 is double "

# (call, exception class, message); a message ending in "..." is compared as a prefix.
CASES = [
    # take_along_dim
    (
        "torch.take_along_dim(x, torch.zeros(2, 2), 0)",
        RuntimeError,
        "torch.take_along_dim(): dtype of indices should be Long but got Float",
    ),
    ("torch.take_along_dim(x, torch.tensor([[0]]), 2)", IndexError, DIM2),
    (
        "torch.take_along_dim(x, torch.tensor([0]), 0)",
        RuntimeError,
        "torch.take_along_dim(): input and indices should have the same number of dimensions, "
        "but got 2 dimensions for input, and 1 dimensions for indices",
    ),
    (
        "torch.take_along_dim(x, torch.zeros(2, 5, dtype=torch.int64), 0)",
        RuntimeError,
        "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1",
    ),
    # tensor_split
    ("torch.tensor_split(x, 0)", RuntimeError, "number of sections must be larger than 0, got 0"),
    ("torch.tensor_split(x, 2, 2)", IndexError, DIM2),
    (
        "torch.tensor_split(s, 2)",
        RuntimeError,
        "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims",
    ),
    (
        "torch.tensor_split(x, torch.tensor([[1]]))",
        RuntimeError,
        "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
        "one-dimensional tensor, but got a tensor with 2 dims",
    ),
    (
        "torch.tensor_split(x, torch.tensor([1.0]))",
        RuntimeError,
        "tensor_split expected tensor_indices_or_sections to have dtype of long, but got Float",
    ),
    # meshgrid, cartesian_prod
    ("torch.meshgrid(indexing='ij')", RuntimeError, "meshgrid expects a non-empty TensorList"),
    (
        "torch.meshgrid(x, v, indexing='ij')",
        RuntimeError,
        "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: ...",
    ),
    (
        "torch.meshgrid(v, v, indexing='foo')",
        RuntimeError,
        'torch.meshgrid: indexing must be one of "xy" or "ij", but received: foo',
    ),
    (
        "torch.meshgrid(v, v.float(), indexing='ij')",
        RuntimeError,
        "meshgrid expects all tensors to have the same dtype",
    ),
    ("torch.cartesian_prod(x)", RuntimeError, "Expect a 1D vector, but got shape [3, 4]"),
    (
        "torch.cartesian_prod(v, v.float())",
        RuntimeError,
        "meshgrid expects all tensors to have the same dtype",
    ),
    ("torch.cartesian_prod()", RuntimeError, "meshgrid expects a non-empty TensorList"),
    # tensordot, inner
    (
        "torch.tensordot(x, b, dims=-1)",
        RuntimeError,
        "tensordot expects dims >= 0, but got dims=-1",
    ),
    (
        "torch.tensordot(x, v, dims=2)",
        RuntimeError,
        "tensordot expects dims < ndim_a or ndim_b, but got dims=2",
    ),
    (
        "torch.tensordot(x, b, dims=([0], [0]))",
        RuntimeError,
        "contracted dimensions need to match, but first has size 3 in dim 0 and second has size 4 "
        "in dim 0",
    ),
    (
        "torch.tensordot(x, b, dims=([1], [0, 1]))",
        RuntimeError,
        "both dimension lists should have same length",
    ),
    ("torch.tensordot(x, b.float(), dims=1)", RuntimeError, "both inputs should have same dtype"),
    ("torch.tensordot(x, b, dims=([2], [0]))", IndexError, DIM2),
    (
        "torch.tensordot(x, b, dims=(1, 0))",
        TypeError,
        "tensordot(): argument 'dims_self' (position 3) must be tuple of ints, not int",
    ),
    (
        "torch.tensordot(x, b, dims=1.5)",
        RuntimeError,
        "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
        "containing two lists, but got dims=1.5",
    ),
    (
        "torch.inner(x, b)",
        RuntimeError,
        "inner() the last dimension must match on both input tensors but got shapes [3, 4] and "
        "[4, 5]",
    ),
    ("torch.inner(x, x.float())", RuntimeError, "both inputs should have same dtype"),
    # einsum
    (
        "torch.einsum('ij,jk', x)",
        RuntimeError,
        "einsum(): fewer operands were provided than specified in the equation",
    ),
    (
        "torch.einsum('ij', x, x)",
        RuntimeError,
        "einsum(): more operands were provided than specified in the equation",
    ),
    (
        "torch.einsum('ij,jk->ik', x, x)",
        RuntimeError,
        "einsum(): subscript j has size 3 for operand 1 which does not broadcast with previously "
        "seen size 4",
    ),
    (
        "torch.einsum('ij->ik', x)",
        RuntimeError,
        "einsum(): output subscript k does not appear in the equation for any input operand",
    ),
    (
        "torch.einsum('i->i', x)",
        RuntimeError,
        "einsum(): the number of subscripts in the equation (1) does not match the number of "
        "dimensions (2) for operand 0 and no ellipsis was given",
    ),
    (
        "torch.einsum('ijk...->i', x)",
        RuntimeError,
        "einsum(): the number of subscripts in the equation (3) is more than the number of "
        "dimensions (2) for operand 0",
    ),
    (
        "torch.einsum('ij->jj', x)",
        RuntimeError,
        "einsum(): output subscript j appears more than once in the output",
    ),
    (
        "torch.einsum('i1->i', x)",
        RuntimeError,
        "einsum(): invalid subscript given at index 1 in the equation string, subscripts must be "
        "in [a-zA-Z]",
    ),
    (
        "torch.einsum('ij->i2', x)",
        RuntimeError,
        "einsum(): invalid subscript given at index 5 in the equation string, subscripts must be "
        "in [a-zA-Z]",
    ),
    (
        "torch.einsum('ii->i', x)",
        RuntimeError,
        "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 4 != 3",
    ),
    (
        "torch.einsum('....ij', x)",
        RuntimeError,
        "einsum(): found '.' for operand 0 for which an ellipsis was already found",
    ),
    (
        "torch.einsum('ij..->ij', x)",
        RuntimeError,
        "einsum(): found '.' for operand 0 that is not part of any ellipsis",
    ),
    (
        "torch.einsum('ij->j.', x)",
        RuntimeError,
        "einsum(): found '.' for output that is not part of any ellipsis (...)",
    ),
    ("torch.einsum('ij->')", ValueError, PARSER + "one operand and its subscripts list"),
    (
        "torch.einsum('ij,jk->ik', x, b.float())",
        RuntimeError,
        "expected scalar type Double but found Float",
    ),
    (
        "torch.einsum('...i,...i->...', m, x3)",
        RuntimeError,
        "einsum(): dimension 1 covered by ellipsis in operand 1has size 3 which does not "
        "broadcast with previously seen ellipsis with size 2 for the respective dimension",
    ),
    # matrix_power, chain_matmul, linalg
    (
        "torch.matrix_power(x, 2)",
        RuntimeError,
        "linalg.matrix_power: A must be batches of square matrices, but they are 3 by 4 matrices",
    ),
    (
        "torch.matrix_power(v, 2)",
        RuntimeError,
        "linalg.matrix_power: The input tensor A must have at least 2 dimensions.",
    ),
    (
        "torch.matrix_power(sq, 2.0)",
        TypeError,
        "matrix_power(): argument 'n' (position 2) must be int, not float",
    ),
    ("torch.chain_matmul()", RuntimeError, "chain_matmul(): Expected one or more matrices"),
    ("torch.chain_matmul(x, v)", RuntimeError, "Tensor dimension is 1, expected 2 instead."),
    (
        "torch.chain_matmul(x, x)",
        RuntimeError,
        "multi_dot(): tensors 0 and 1 with shapes [3, 4] and [3, 4] cannot be multiplied",
    ),
    (
        "torch.linalg.multi_dot([x])",
        RuntimeError,
        "multi_dot(): expected at least 2 tensors but got 1",
    ),
    (
        "torch.linalg.multi_dot([])",
        RuntimeError,
        "multi_dot(): expected at least 2 tensors but got 0",
    ),
    (
        "torch.linalg.multi_dot([x3, v])",
        RuntimeError,
        "multi_dot(): the first tensor must be 1D or 2D but got 3D",
    ),
    (
        "torch.linalg.multi_dot([x, x3])",
        RuntimeError,
        "multi_dot(): the last tensor must be 1D or 2D but got 3D",
    ),
    (
        "torch.linalg.multi_dot([x, x3, v])",
        RuntimeError,
        "multi_dot(): tensor 1 must be 2D but got 3D",
    ),
    (
        "torch.linalg.multi_dot([x, b.float()])",
        RuntimeError,
        MULTI_DOT_DTYPE + "and tensor 1 float",
    ),
    (
        "torch.linalg.multi_dot([x, b.long()])",
        RuntimeError,
        MULTI_DOT_DTYPE + "and tensor 1 long int",
    ),
    (
        "torch.linalg.multi_dot([v, sq])",
        RuntimeError,
        "multi_dot(): tensors 0 and 1 with shapes [4] and [3, 3] cannot be multiplied",
    ),
    (
        "torch.linalg.vecdot(x, b)",
        RuntimeError,
        "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1",
    ),
    (
        "torch.linalg.vecdot(x, x.float())",
        RuntimeError,
        "linalg.vecdot: Expected x and y to have the same dtype, but found x of type Double and y "
        "of type Float instead",
    ),
    ("torch.linalg.vecdot(x, x, dim=2)", IndexError, DIM2),
    (
        "torch.linalg.vecdot(x.long(), x.long())",
        NotImplementedError,
        "linalg.vecdot: Expected a floating point or complex tensor as input. Got Long",
    ),
    # all, any, count_nonzero
    ("torch.all(x, 2)", IndexError, DIM2),
    ("torch.any(x, (0, 0))", RuntimeError, "dim 0 appears multiple times in the list of dims"),
    ("torch.count_nonzero(x, 2)", IndexError, DIM2),
    (
        "torch.count_nonzero(x, (0, -2))",
        RuntimeError,
        "dim 0 appears multiple times in the list of dims",
    ),
    # creation
    ("torch.logspace(0, 1, -1)", RuntimeError, "number of steps must be non-negative"),
    (
        "torch.logspace(x, 1, 2)",
        RuntimeError,
        "logspace only supports 0-dimensional start and end tensors, but got start with 2 "
        "dimension(s).",
    ),
    ("torch.tril_indices(-1, 3)", RuntimeError, "row must be non-negative, got-1"),
    ("torch.triu_indices(3, -1)", RuntimeError, "col must be non-negative, got-1"),
    (
        "torch.tril_indices(3, 3, dtype=torch.float32)",
        NotImplementedError,
        "\"tril_indices\" not implemented for 'Float'",
    ),
    (
        "torch.triu_indices(3, 3, dtype=torch.uint8)",
        NotImplementedError,
        "\"triu_indices\" not implemented for 'Byte'",
    ),
    # Tensor.H, Tensor.mH
    (
        "x3.H",
        RuntimeError,
        "tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor. For batches of "
        "matrices, consider using tensor.mH",
    ),
    ("v.H", RuntimeError, "tensor.H is only supported on matrices (2-D tensors). Got 1-D tensor."),
    (
        "v.mH",
        RuntimeError,
        "tensor.mH is only supported on matrices or batches of matrices. Got 1-D tensor.",
    ),
]


@pytest.mark.parametrize("call, kind, message", CASES, ids=[c[0] for c in CASES])
def test_error(call, kind, message):
    check(NAMES, call, kind, message)


if __name__ == "__main__":
    run_on_torch(torch, NAMES, CASES)
