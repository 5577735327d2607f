"""torch's other names for ops ferrograd has under one name: the numpy-style aliases
(`arcsin`, `absolute`, `greater`, ...), their in-place forms (`negative_`, `clip_`,
`multiply_`, ...) and the module-level in-place functions (`torch.exp_(x)`). An alias is
the same function as its target, so it records the target's node, as torch's do
(`x.arcsin()` records AsinBackward0).

The aliases the op table already generates (`negative`, `subtract`, `clip`, `fix`,
`arctan2`, `not_equal`, ...) are not repeated here.
"""

from . import _C
from ._C import Tensor as _T

# alias -> the method it stands for (methods and their in-place forms).
_METHOD_ALIASES = {
    "absolute": "abs",
    "absolute_": "abs_",
    "arccos": "acos",
    "arccos_": "acos_",
    "arccosh": "acosh",
    "arccosh_": "acosh_",
    "arcsin": "asin",
    "arcsin_": "asin_",
    "arcsinh": "asinh",
    "arcsinh_": "asinh_",
    "arctan": "atan",
    "arctan_": "atan_",
    "arctanh": "atanh",
    "arctanh_": "atanh_",
    "arctan2_": "atan2_",
    "negative_": "neg_",
    "fix_": "trunc_",
    "clip_": "clamp_",
    "multiply_": "mul_",
    "divide_": "div_",
    "true_divide_": "div_",
    "subtract_": "sub_",
    "greater_": "gt_",
    "greater_equal_": "ge_",
    "less_": "lt_",
    "less_equal_": "le_",
    "not_equal_": "ne_",
    "ndimension": "dim",
}

# Module functions under a second name (the method aliases above that torch also has
# as functions).
_FUNCTION_ALIASES = {
    "absolute": "abs",
    "arccos": "acos",
    "arccosh": "acosh",
    "arcsin": "asin",
    "arcsinh": "asinh",
    "arctan": "atan",
    "arctanh": "atanh",
}

# torch's module-level in-place functions: `torch.exp_(x)` is `x.exp_()`.
_MODULE_INPLACE = (
    "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ "
    "atan_ atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ erf_ "
    "erfc_ exp2_ exp_ expm1_ fix_ floor_ frac_ log10_ log1p_ log2_ log_ logit_ neg_ "
    "negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ sqrt_ "
    "square_ tan_ tanh_ trunc_ xlogy_ nan_to_num_ fill_ zero_ detach_ conj_physical_ "
    "index_put_ addmv_"
).split()


def _square_(self):
    """`x.square_()`: torch's is `x.pow_(2)` (PowBackward0)."""
    return self.pow_(2)


def _module_inplace(name):
    def function(input, *args, **kwargs):
        if not isinstance(input, _T):
            raise TypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, not "
                f"{type(input).__name__}"
            )
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"`ferrograd.{name}(input, ...)` is `input.{name}(...)`."
    return function


if not hasattr(_T, "square_"):
    _T.square_ = _square_
for _alias, _target in _METHOD_ALIASES.items():
    if not hasattr(_T, _alias):
        setattr(_T, _alias, getattr(_T, _target))

__all__ = []
for _alias, _target in _FUNCTION_ALIASES.items():
    globals()[_alias] = getattr(_C, _target)
    __all__.append(_alias)
for _name in _MODULE_INPLACE:
    if hasattr(_T, _name):
        globals()[_name] = _module_inplace(_name)
        __all__.append(_name)
