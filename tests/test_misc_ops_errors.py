"""Issue 11, ternary ops, scans and nan-reductions (src/ops/ternary.rs, cumulative.rs,
nan_reduce.rs): bad inputs raise torch's exception class with torch's message.

Each case is checked on torch 2.15 by running this file with torch's Python
(`/root/torchvenv/bin/python tests/test_misc_ops_errors.py`: `ferrograd` is torch there),
so the table cannot drift from torch. Names in the calls (float64 unless said): x (3, 4),
x3 (2, 3, 4), v (4,), v5 (5,), s 0-dim, xf float32 (3, 4), i int64 (3, 4),
c complex128 (3, 4), e (0, 3), bo bool (3,).
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
    "x3": torch.ones(2, 3, 4, dtype=F64),
    "v": torch.ones(4, dtype=F64),
    "v5": torch.ones(5, dtype=F64),
    "s": torch.tensor(1.5, dtype=F64),
    "xf": torch.ones(3, 4),
    "i": torch.ones(3, 4, dtype=torch.int64),
    "c": torch.ones(3, 4, dtype=torch.complex128),
    "e": torch.ones(0, 3, dtype=F64),
    "bo": torch.ones(3, dtype=torch.bool),
}

DIM2 = "Dimension out of range (expected to be in range of [-2, 1], but got {})"
SIZE_4_5 = (
    "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1"
)
ADDCDIV_INT = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
    "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes."
)
CAST_LONG = "result type Double can't be cast to the desired output type Long"

# (call, exception class, message); a message ending in "..." is compared as a prefix.
CASES = [
    # lerp: end (and a weight with dims) in input's dtype, a floating dtype, broadcasting
    ("torch.lerp(x, xf, 0.5)", RuntimeError, "expected dtype double for `end` but got dtype float"),
    (
        "torch.lerp(x, x, xf)",
        RuntimeError,
        "expected dtype double for `weight` but got dtype float",
    ),
    (
        "torch.lerp(x, s.float(), 0.5)",
        RuntimeError,
        "expected dtype double for `end` but got dtype float",
    ),
    (
        "torch.lerp(i, i, 0.5)",
        NotImplementedError,
        "\"lerp_kernel_scalar\" not implemented for 'Long'",
    ),
    (
        "torch.lerp(i, i, i)",
        NotImplementedError,
        "\"lerp_kernel_tensor\" not implemented for 'Long'",
    ),
    ("torch.lerp(x, v5, 0.5)", RuntimeError, SIZE_4_5),
    ("torch.lerp(x, x, v5)", RuntimeError, SIZE_4_5),
    (
        "x.lerp(1.0, 0.5)",
        TypeError,
        "lerp() received an invalid combination of arguments - got (float, float), but "
        "expected one of:...",
    ),
    (
        "x.lerp_(x3, 0.5)",
        RuntimeError,
        "output with shape [3, 4] doesn't match the broadcast shape [2, 3, 4]",
    ),
    # addcmul / addcdiv
    ("torch.addcmul(x, v5, v)", RuntimeError, SIZE_4_5),
    (
        "x.addcmul(x, 2.0)",
        TypeError,
        "addcmul(): argument 'tensor2' (position 2) must be Tensor, not float",
    ),
    (
        "x.addcdiv(2.0, x)",
        TypeError,
        "addcdiv(): argument 'tensor1' (position 1) must be Tensor, not float",
    ),
    (
        "torch.addcmul(bo, bo, bo)",
        NotImplementedError,
        "\"addcmul_cpu_out\" not implemented for 'Bool'",
    ),
    (
        "torch.addcmul(x, x, x, value='a')",
        TypeError,
        "addcmul(): argument 'value' must be Number, not str",
    ),
    ("i.addcmul_(x, x)", RuntimeError, CAST_LONG),
    ("torch.addcdiv(i, i, i)", RuntimeError, ADDCDIV_INT),
    ("torch.addcdiv(x, i, bo)", RuntimeError, ADDCDIV_INT),
    ("torch.addcdiv(x, v5, v)", RuntimeError, SIZE_4_5),
    ("i.addcdiv_(x, x)", RuntimeError, CAST_LONG),
    # scans
    ("torch.cumprod(x, 2)", IndexError, DIM2.format(2)),
    (
        "torch.cumprod(s, 1)",
        IndexError,
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
    ),
    ("torch.cummax(x, 2)", IndexError, DIM2.format(2)),
    ("torch.cummin(x, -3)", IndexError, DIM2.format(-3)),
    (
        "torch.cummax(c, 0)",
        NotImplementedError,
        "\"cummax_cpu\" not implemented for 'ComplexDouble'",
    ),
    (
        "torch.cummin(c, 0)",
        NotImplementedError,
        "\"cummin_cpu\" not implemented for 'ComplexDouble'",
    ),
    (
        "torch.logcumsumexp(i, 0)",
        NotImplementedError,
        "\"logcumsumexp_out_cpu\" not implemented for 'Long'",
    ),
    ("torch.logcumsumexp(x, -3)", IndexError, DIM2.format(-3)),
    # nan-reductions
    ("torch.nansum(c)", NotImplementedError, "nansum on CPU does not support complex inputs"),
    ("torch.nansum(x, 2)", IndexError, DIM2.format(2)),
    (
        "torch.nanmean(i)",
        NotImplementedError,
        "nanmean(): expected input to have floating point or complex dtype but got Long",
    ),
    ("torch.nanmean(c)", NotImplementedError, "nansum on CPU does not support complex inputs"),
    ("torch.nanmean(x, 2)", IndexError, DIM2.format(2)),
    # aminmax
    ("torch.aminmax(c)", TypeError, "aminmax not implemented for ComplexDouble"),
    (
        "torch.aminmax(e)",
        RuntimeError,
        "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
        "identity.",
    ),
    (
        "torch.aminmax(e, dim=0)",
        IndexError,
        "aminmax: Expected reduction dim 0 to have non-zero size.",
    ),
    ("torch.aminmax(x, dim=2)", IndexError, DIM2.format(2)),
    # the methods over the module functions
    ("x.allclose(xf)", RuntimeError, "Double did not match Float"),
    ("x.isclose(xf)", RuntimeError, "Double did not match Float"),
]


PARAMS = [pytest.param(*c, id=c[0]) for c in CASES]


@pytest.mark.parametrize("call, kind, message", PARAMS)
def test_error(call, kind, message):
    check(NAMES, call, kind, message)


if __name__ == "__main__":
    run_on_torch(torch, NAMES, CASES)
