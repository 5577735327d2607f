"""``jvp`` and ``linearize``: forward mode on forward AD.

Each call enters its own dual level (nested levels allowed, unlike
``forward_ad.dual_level``), so a jvp inside a jvp keeps the two tangents apart. Forward
AD does not look at grad mode: these work under ``no_grad``.
"""

import functools

from .. import _C
from ..autograd import forward_ad
from ..utils._pytree import tree_flatten, tree_unflatten
from . import _state

__all__ = ["jvp", "linearize"]

_Tensor = _C.Tensor
_API = "jvp(f, primals, tangents)"


def _enter_level():
    """A new dual level that may sit inside another one."""
    return _C._enter_dual_level(True)


def _check_tensors(flat, argname):
    if not flat:
        raise RuntimeError(f"{_API}: Expected {argname} to contain at least one Tensor.")
    for x in flat:
        if not isinstance(x, _Tensor):
            raise RuntimeError(f"{_API}: Expected {argname} to only contain Tensors, got {type(x)}")


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J·tangents)`` (plus ``aux``)."""
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{_API}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    flat_p, spec_p = tree_flatten(primals)
    flat_t, spec_t = tree_flatten(tangents)
    if spec_p != spec_t:
        raise RuntimeError(
            f"{_API}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {spec_p} and tangents with structure {spec_t}"
        )
    _check_tensors(flat_p, "primals")
    _check_tensors(flat_t, "tangents")
    keep = _state.keeps_graph(flat_p + flat_t)
    level = _enter_level()
    try:
        with _state.running("forward"):
            duals = [forward_ad.make_dual(p, t, level=level) for p, t in zip(flat_p, flat_t)]
            output = func(*tree_unflatten(duals, spec_p))
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError(
                        f"{_API}: output of function f should be a tuple: (output, aux) if "
                        "has_aux is True"
                    )
                output, aux = output
            flat_out, spec_out = tree_flatten(output)
            pairs = [_unpack(o, level, strict) for o in flat_out]
            if has_aux:
                flat_aux, spec_aux = tree_flatten(aux)
                aux = tree_unflatten([_primal(a, level) for a in flat_aux], spec_aux)
    finally:
        _C._exit_dual_level(level=level)
    if not keep:  # graphs built inside (e.g. by a nested grad) stay inside
        pairs = [(p.detach(), t.detach()) for p, t in pairs]
    primals_out = tree_unflatten([p for p, _ in pairs], spec_out)
    tangents_out = tree_unflatten([t for _, t in pairs], spec_out)
    if has_aux:
        return primals_out, tangents_out, aux
    return primals_out, tangents_out


def _unpack(out, level, strict):
    if not isinstance(out, _Tensor):
        raise RuntimeError(
            f"{_API}: expected f(*args) to return only tensors, got unsupported type {type(out)}"
        )
    primal, tangent = forward_ad.unpack_dual(out, level=level)
    if tangent is None:
        if strict:
            raise RuntimeError(
                "jvp(f, primals, tangents, strict=True): The output of f is independent of "
                "the inputs. This is not allowed with strict=True."
            )
        tangent = _C.zeros_like(primal)
    return primal, tangent


def _primal(x, level):
    if isinstance(x, _Tensor):
        return forward_ad.unpack_dual(x, level=level).primal
    return x


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``; ``jvp_fn(*tangents)`` gives ``J·tangents`` at
    ``primals`` (re-running forward AD per call)."""
    output = func(*primals)
    flat_p, spec_p = tree_flatten(primals)

    @functools.wraps(func)
    def jvp_fn(*tangents):
        flat_t, spec_t = tree_flatten(tangents)
        if spec_t != spec_p:
            raise RuntimeError(
                f"Expected the tangents {spec_t} to have the same argspec as the primals {spec_p}"
            )
        for idx, (t, p) in enumerate(zip(flat_t, flat_p)):
            for what in ("shape", "device", "dtype"):
                if getattr(t, what) != getattr(p, what):
                    raise RuntimeError(
                        f"tangent:{idx} with {what} {getattr(t, what)} in flattened pytree "
                        f"doesn't match the {what} {getattr(p, what)} of the corresponding "
                        "primal."
                    )
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn
