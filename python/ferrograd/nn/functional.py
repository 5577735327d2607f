"""``nn.functional``: only what ``nn.Linear``, ``nn.ReLU``, ``nn.Tanh`` and a loss need."""

import warnings

from .. import _C
from .._C import Tensor


def linear(input, weight, bias=None):  # noqa: A002 - torch's argument name
    """``input @ weight.T + bias`` (torch's ``F.linear``)."""
    for position, (name, value) in enumerate((("input", input), ("weight", weight)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"linear(): argument '{name}' (position {position}) must be Tensor, "
                f"not {type(value).__name__}"
            )
    if bias is not None and input.dim() == 2:
        return bias.addmm(input, weight.t())
    if bias is not None and input.dim() > 0 and input.is_contiguous() and (
        input.dim() == 3 or bias.dim() == 1
    ):
        # As torch: the leading dims folded into the rows of one addmm (AddmmBackward0
        # under an UnsafeViewBackward0), not a matmul plus an add.
        rows = 1
        for size in input.shape[:-1]:
            rows *= size
        out = bias.addmm(input.reshape(rows, input.shape[-1]), weight.t())
        return _C._unsafe_view(out, [*input.shape[:-1], out.shape[1]])
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


def relu(input, inplace=False):  # noqa: A002
    return input.relu_() if inplace else input.relu()


def tanh(input):  # noqa: A002
    return input.tanh()


def mse_loss(input, target, reduction="mean"):  # noqa: A002
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=2,
        )
    diff = input - target
    squared = diff * diff
    if reduction == "mean":
        return squared.mean()
    if reduction == "sum":
        return squared.sum()
    return squared


__all__ = ["linear", "relu", "tanh", "mse_loss"]
