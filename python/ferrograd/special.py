"""``ferrograd.special``: torch.special's names for the special functions (the same
ops as the top-level ones; xlog1py exists only here, as in torch)."""

from . import _C
from ._C import Tensor as _T
from ._functional import polygamma

erf = _C.erf
erfc = _C.erfc
erfinv = _C.erfinv
digamma = _C.digamma
psi = _C.digamma
gammaln = _C.lgamma
sinc = _C.sinc
xlogy = _C.xlogy
exp2 = _C.exp2
expm1 = _C.expm1
log1p = _C.log1p
expit = _C.sigmoid
logit = _T.logit
round = _T.round  # noqa: A001


def xlog1py(input, other):
    """input * log1p(other), 0 where input is 0 (SpecialXlog1PyBackward0/1/2)."""
    return _C._special_xlog1py(input, other)


__all__ = [
    "erf",
    "erfc",
    "erfinv",
    "digamma",
    "psi",
    "gammaln",
    "polygamma",
    "sinc",
    "xlogy",
    "xlog1py",
    "exp2",
    "expm1",
    "log1p",
    "expit",
    "logit",
    "round",
]
