"""torch's argument-parser errors for sort / argsort calls that neither overload takes.

torch has two overloads of each: `(*, bool stable, int dim=-1, bool descending=False)`,
whose dim and descending are keyword-only, and `(int dim=-1, bool descending=False)`,
which takes no `stable`. So `t.sort(0, True, stable=True)` matches neither and torch's
parser raises a TypeError (src/bindings/sort_methods.rs takes `stable` beside positional
args and sorts stably whatever it says, so the refusals are checked here, by argument
count and names; argument types are left to the binding). The parser's rules, as torch
2.15 applies them:

- the overloads whose argument count range holds the number of arguments given are the
  plausible ones; with exactly one, that overload's own error is raised ("takes from 1 to
  0 positional arguments but 2 were given");
- else the "received an invalid combination of arguments" error lists every overload,
  and under each one whose printed argument count equals the number given, the keywords
  it did not match: it names an overload's arguments by the last word of each printed
  argument (so `int dim = -1` is named "-1" and never matches), and looks for a keyword
  only among the last len(kwargs) of them;
- keywords are listed in the iteration order of the std::unordered_map they are copied
  into (libstdc++'s, reproduced by `_map_order`), not in the order they were given.
"""

from math import floor

from ._C import Tensor as _T
from ._C import device as _device
from ._C import dtype as _dtype

# Each overload as torch lists them, the stable one first: its printed signature, its
# parameter names, how many of them may come positionally, and the required ones.
_STABLE = ("stable", "dim", "descending")
_PLAIN = ("dim", "descending")
_METHOD = (
    ("(*, bool stable, int dim = -1, bool descending = False)", _STABLE, 0, ("stable",)),
    ("(int dim = -1, bool descending = False)", _PLAIN, 2, ()),
)
_FUNCTION = {
    "sort": (
        (
            "(Tensor input, *, bool stable, int dim = -1, bool descending = False, "
            "tuple of Tensors out = None)",
            ("input", *_STABLE, "out"),
            1,
            ("input", "stable"),
        ),
        (
            "(Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None)",
            ("input", *_PLAIN, "out"),
            3,
            ("input",),
        ),
    ),
    "argsort": (
        (
            "(Tensor input, *, bool stable, int dim = -1, bool descending = False, "
            "Tensor out = None)",
            ("input", *_STABLE, "out"),
            1,
            ("input", "stable"),
        ),
        (
            "(Tensor input, int dim = -1, bool descending = False)",
            ("input", *_PLAIN),
            3,
            ("input",),
        ),
    ),
}

# ---------------------------------------------------------------- libstdc++'s map order

_MASK = (1 << 64) - 1
_MUL = 0xC6A4A7935BD1E995
_FAST_BUCKETS = (2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13)


def _shift_mix(v):
    return v ^ (v >> 47)


def _hash(key):
    """std::hash<std::string> of libstdc++ on 64-bit (_Hash_bytes, seed 0xc70f6907)."""
    b = key.encode()
    n = len(b)
    aligned = n & ~7
    h = (0xC70F6907 ^ (n * _MUL)) & _MASK
    for i in range(0, aligned, 8):
        word = int.from_bytes(b[i : i + 8], "little")
        h ^= (_shift_mix((word * _MUL) & _MASK) * _MUL) & _MASK
        h = (h * _MUL) & _MASK
    if n & 7:
        h ^= int.from_bytes(b[aligned:], "little")
        h = (h * _MUL) & _MASK
    return _shift_mix((_shift_mix(h) * _MUL) & _MASK)


def _next_buckets(n):
    """_Prime_rehash_policy::_M_next_bkt: the bucket count for at least n."""
    if n < len(_FAST_BUCKETS):
        return _FAST_BUCKETS[n] if n else 1
    while any(n % k == 0 for k in range(2, int(n**0.5) + 1)):
        n += 1
    return n


def _insert(order, key, buckets):
    """A new node goes first in its bucket's run of the list, or first of all."""
    bucket = _hash(key) % buckets
    for i, other in enumerate(order):
        if _hash(other) % buckets == bucket:
            order.insert(i, key)
            return
    order.insert(0, key)


def _map_order(keys):
    """The iteration order of a std::unordered_map<std::string, ...> filled with `keys`
    (distinct) in this order (libstdc++ 11+: 13 buckets at the first insert, max load 1)."""
    order, buckets, next_resize = [], 1, 0
    for key in keys:
        count = len(order) + 1
        if count > next_resize:
            wanted = max(count, 0 if next_resize else 11)
            if wanted >= buckets:
                buckets = _next_buckets(max(floor(wanted) + 1, buckets * 2))
                next_resize = buckets
                old, order = order, []
                for k in old:
                    _insert(order, k, buckets)
            else:
                next_resize = buckets
        _insert(order, key, buckets)
    return order


# ---------------------------------------------------------------- the errors


def _type_name(value):
    if isinstance(value, _T):
        return "Tensor"
    if isinstance(value, _dtype):
        return "ferrograd.dtype"
    if isinstance(value, _device):
        return "ferrograd.device"
    return type(value).__name__


def _invalid_combination(name, overloads, args, kwargs):
    keys = _map_order(list(kwargs))
    given = [_type_name(a) for a in args] + [f"{k}={_type_name(kwargs[k])}" for k in keys]
    got = ", ".join(given) + (", " if keys and not args else "")
    lines = [f"{name}() received an invalid combination of arguments - got ({got}), but "]
    lines[0] += "expected one of:"
    for printed, *_ in overloads:
        lines.append(f" * {printed}")
        names = [part.split()[-1] for part in printed[1:-1].split(", ")]
        if len(names) != len(args) + len(kwargs):
            continue
        tail = names[max(len(names) - len(kwargs), 0) :]
        unmatched = [k for k in keys if k not in tail]
        lines.append(
            "      didn't match because some of the keywords were incorrect: "
            + ", ".join(unmatched)
        )
    return TypeError("\n".join(lines) + "\n")


def _parses(overload, args, kwargs):
    """Whether torch's parser takes the call under `overload`, by count and names (the
    argument types are left to the binding)."""
    _, params, positional, required = overload
    if len(args) > positional or any(k not in params for k in kwargs):
        return False
    if any(p in kwargs for p in params[: len(args)]):
        return False
    return all(params.index(p) < len(args) or p in kwargs for p in required)


def _overload_error(name, overload, args, kwargs):
    """The error torch's parser raises for the one plausible overload."""
    _, params, positional, required = overload
    if len(args) > positional:
        return TypeError(
            f"{name}() takes from {len(required)} to {positional} positional arguments but "
            f"{len(args)} were given"
        )
    for i, p in enumerate(params):
        if i >= len(args) and p in required and p not in kwargs:
            missing = [q for q in params[i:] if q in required]
            # torch's plural is reversed ("1 required positional arguments").
            plural = "s" if len(missing) == 1 else ""
            quoted = ", ".join(f'"{q}"' for q in missing)
            return TypeError(
                f"{name}() missing {len(missing)} required positional argument{plural}: {quoted}"
            )
    for k in kwargs:
        if k not in params:
            return TypeError(f"{name}() got an unexpected keyword argument '{k}'")
        if params.index(k) < len(args):
            return TypeError(f"{name}() got multiple values for argument '{k}'")
    return TypeError("invalid keyword arguments")


def check(name, args, kwargs, method):
    """Raise torch's TypeError when neither overload takes the call (args: the positional
    args after `self`, or all of them for the module function)."""
    overloads = _METHOD if method else _FUNCTION[name]
    if any(_parses(o, args, kwargs) for o in overloads):
        return
    count = len(args) + len(kwargs)
    plausible = [o for o in overloads if len(o[3]) <= count <= len(o[1])]
    if len(plausible) == 1:
        raise _overload_error(name, plausible[0], args, kwargs)
    raise _invalid_combination(name, overloads, args, kwargs)
