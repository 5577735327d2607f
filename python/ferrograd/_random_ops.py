"""Random ops built from the generator-aware draws in ``_C`` (rand, randint): multinomial
and randint_like. Their results carry no gradient, as torch's."""

from . import _C
from ._C import Tensor as _T

__all__ = ["multinomial", "randint_like"]


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Category indices drawn with the (unnormalized) probabilities in each row of a 1-d
    or 2-d ``input``; without replacement, each row's categories at most once."""
    if out is not None:
        raise TypeError("multinomial(): out= is not supported")
    if not (input.dtype.is_floating_point):
        name = repr(input.dtype).split(".")[-1]
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: "
            f"{_C_SCALAR_NAMES.get(name, name)}"
        )
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    n = input.shape[-1]
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > n:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if n > 2**24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    # Detached: the draws carry no gradient.
    p = input.detach().to(_C.float64).reshape(-1, n)
    bad = (~p.isfinite()) | (p < 0)
    if bad.any().item():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    total = p.sum(-1, keepdim=True)
    if p.shape[0] and (total <= 0).any().item():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rows = p.shape[0]
    if replacement:
        # The first category whose cumulative probability exceeds a uniform draw.
        cdf = (p / total).cumsum(-1)
        u = _C.rand(rows, num_samples, 1, dtype=_C.float64, generator=generator)
        picked = (cdf.unsqueeze(1) <= u).sum(-1)
        # Rounding can leave the last cumulative value just below a draw: take the
        # last category that has any probability then.
        last = (p > 0).to(_C.int64).cumsum(-1).argmax(-1, keepdim=True)
        picked = _C.minimum(picked, last)
    else:
        # Exponential race: the categories with the largest p / E, E ~ Exp(1), are a
        # draw without replacement (zero-probability ones come last, as torch's).
        e = -(-_C.rand(rows, n, dtype=_C.float64, generator=generator)).log1p()
        picked = (p / e).topk(num_samples, -1).indices
    return picked.reshape(*input.shape[:-1], num_samples)


_C_SCALAR_NAMES = {"int64": "Long", "int32": "Int", "uint8": "Byte", "bool": "Bool"}


def randint_like(
    input,
    low=0,
    high=None,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    generator=None,
    memory_format=None,
):
    """Integers on [low, high) shaped like ``input`` (``randint_like(input, high)`` with one
    bound), in input's dtype unless ``dtype`` is given."""
    if high is None:
        low, high = 0, low
    return _C.randint(
        low,
        high,
        tuple(input.shape),
        dtype=dtype or input.dtype,
        device=device,
        requires_grad=requires_grad,
        generator=generator,
    )


if not hasattr(_T, "multinomial"):
    _T.multinomial = multinomial
