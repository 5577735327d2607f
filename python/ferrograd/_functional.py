"""Module-level ops (``ferrograd.exp(x)``...). Most are the Tensor methods themselves
(C-level descriptors, no Python frame on the call); the few that accept a Python
number as their first argument dispatch on it."""

from ._C import Tensor as _T

__all__ = [
    "add",
    "sub",
    "subtract",
    "mul",
    "multiply",
    "div",
    "divide",
    "true_divide",
    "pow",
    "neg",
    "negative",
    "exp",
    "log",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "sqrt",
    "abs",
    "sign",
    "reciprocal",
    "conj",
    "clamp",
    "clip",
    "sum",
    "mean",
    "max",
    "min",
    "matmul",
    "mm",
    "bmm",
    "mv",
    "dot",
    "clone",
    "detach",
    "reshape",
    "permute",
    "transpose",
    "swapaxes",
    "t",
    "squeeze",
    "unsqueeze",
    "flatten",
    "unflatten",
    "narrow",
    "select",
    "unbind",
    "split",
    "chunk",
    "diagonal",
    "as_strided",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "numel",
    "is_floating_point",
    "is_complex",
    "is_inference",
]

exp = _T.exp
log = _T.log
sin = _T.sin
cos = _T.cos
tanh = _T.tanh
sigmoid = _T.sigmoid
relu = _T.relu
sqrt = _T.sqrt
abs = _T.abs  # noqa: A001
sign = _T.sign
reciprocal = _T.reciprocal
conj = _T.conj
neg = negative = _T.neg
clamp = _T.clamp
clip = _T.clip
sum = _T.sum  # noqa: A001
mean = _T.mean
max = _T.max  # noqa: A001
min = _T.min  # noqa: A001
matmul = _T.matmul
mm = _T.mm
bmm = _T.bmm
mv = _T.mv
dot = _T.dot
clone = _T.clone
detach = _T.detach
permute = _T.permute
transpose = swapaxes = _T.transpose
t = _T.t
squeeze = _T.squeeze
unsqueeze = _T.unsqueeze
flatten = _T.flatten
unflatten = _T.unflatten
narrow = _T.narrow
select = _T.select
unbind = _T.unbind
split = _T.split
chunk = _T.chunk
diagonal = _T.diagonal
as_strided = _T.as_strided
numel = _T.numel
is_floating_point = _T.is_floating_point
is_complex = _T.is_complex
is_inference = _T.is_inference


def reshape(input, shape):
    return input.reshape(shape)


def _number_first(method, reflected):
    """An op whose `input` may be a Python number (then `other` must be a tensor)."""

    def op(input, other, **kwargs):
        if isinstance(input, _T):
            return method(input, other, **kwargs)
        if isinstance(other, _T) and not kwargs:
            return reflected(other, input)
        raise TypeError(
            f"{method.__name__}(): argument 'input' must be Tensor, not {type(input).__name__}"
        )

    op.__name__ = method.__name__
    return op


add = _number_first(_T.add, _T.__radd__)
sub = subtract = _number_first(_T.sub, _T.__rsub__)
mul = multiply = _number_first(_T.mul, _T.__rmul__)
div = divide = true_divide = _number_first(_T.div, _T.__rtruediv__)
pow = _number_first(_T.pow, _T.__rpow__)  # noqa: A001
eq = _number_first(_T.eq, _T.__eq__)
ne = _number_first(_T.ne, _T.__ne__)
lt = _number_first(_T.lt, _T.__gt__)
le = _number_first(_T.le, _T.__ge__)
gt = _number_first(_T.gt, _T.__lt__)
ge = _number_first(_T.ge, _T.__le__)
