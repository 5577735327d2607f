"""``nn.Linear``: ``y = x @ weight.T + bias``."""

import math

from ... import _C
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import Parameter
from .module import Module


def _uniform(shape, bound, dtype):
    # U(-bound, bound) from ferrograd's U(0, 1) generator.
    with no_grad():
        return _C.rand(*shape, dtype=dtype) * (2 * bound) - bound


class Linear(Module):
    """Applies ``y = x A^T + b``. Parameters are initialised as torch's
    (``kaiming_uniform_(a=sqrt(5))`` for the weight, which is U(-1/sqrt(in), 1/sqrt(in)),
    and the same bound for the bias); the drawn numbers differ from torch's RNG."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        if device is not None and _C.device(device).type != "cpu":
            raise RuntimeError(f"ferrograd nn.Linear supports only the cpu device, got {device}")
        self.in_features = in_features
        self.out_features = out_features
        bound = 1 / math.sqrt(in_features) if in_features > 0 else 0.0
        self.weight = Parameter(_uniform((out_features, in_features), bound, dtype))
        if bias:
            self.bias = Parameter(_uniform((out_features,), bound, dtype))
        else:
            self.register_parameter("bias", None)

    def forward(self, input):  # noqa: A002 - torch's argument name (kwargs use it)
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )
