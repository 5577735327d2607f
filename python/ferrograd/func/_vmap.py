"""``vmap``: the Python front-end (argument checks and texts, in_dims / out_dims over
pytrees, chunking, randomness). The batching itself is done by the core's batched
tensors (``_C._add_batch_dim`` ...), one vmap level per call.
"""

import functools

from .. import _C
from ..utils._pytree import _broadcast_to_and_flatten, tree_flatten, tree_unflatten
from . import _state

__all__ = ["vmap"]

_Tensor = _C.Tensor
_RANDOMNESS = ("error", "different", "same")


def _get_name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over the ``in_dims`` dimension of its inputs; the results carry
    the mapped dimension at ``out_dims``."""
    if randomness not in _RANDOMNESS:
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        batch_size, flat_in_dims, flat_args, spec = _process_inputs(func, in_dims, args)
        if chunk_size is None or chunk_size >= batch_size:
            return _flat_vmap(
                func, batch_size, flat_in_dims, flat_args, spec, out_dims, randomness, kwargs
            )
        return _chunked_vmap(
            func,
            batch_size,
            flat_in_dims,
            flat_args,
            spec,
            out_dims,
            randomness,
            chunk_size,
            kwargs,
        )

    return wrapped


def _check_out_dims(out_dims, func):
    if isinstance(out_dims, int):
        return
    for d in tree_flatten(out_dims)[0]:
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an "
                "int, None or a python collection of ints representing where in the outputs "
                "the vmapped dimension should appear."
            )


def _process_inputs(func, in_dims, args):
    """``(batch_size, flat_in_dims, flat_args, args_spec)`` after torch's checks."""
    where = f"vmap({_get_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching "
            f"the structure of inputs, got: {type(in_dims)}."
        )
    if not args:
        raise ValueError(
            f"vmap({_get_name(func)})(<inputs>): got no inputs. Maybe you forgot to add "
            "inputs, or you are trying to vmap over a function with no inputs. The latter is "
            "unsupported."
        )
    flat_args, spec = tree_flatten(args)
    flat_in_dims = _broadcast_to_and_flatten(in_dims, spec)
    if flat_in_dims is None:
        raise ValueError(
            f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has "
            f"structure {tree_flatten(in_dims)[1]} but inputs has structure {spec}."
        )
    for i, (arg, d) in enumerate(zip(flat_args, flat_in_dims)):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(
                f"{where}: Got in_dim={d} for an input but in_dim must be either an integer "
                "dimension or None."
            )
        if not isinstance(arg, _Tensor):
            raise ValueError(
                f"{where}: Got in_dim={d} for an input but the input is of type {type(arg)}. "
                "We cannot vmap over non-Tensor arguments, please use None as the respective "
                "in_dim"
            )
        ndim = arg.dim()
        if not -ndim <= d < ndim:
            raise ValueError(
                f"{where}: Got in_dim={d} for some input, but that input is a Tensor of "
                f"dimensionality {ndim} so expected in_dim to satisfy -{ndim} <= in_dim < "
                f"{ndim}."
            )
        flat_in_dims[i] = d % ndim
    sizes = [a.size(d) for a, d in zip(flat_args, flat_in_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    return sizes[0], flat_in_dims, flat_args, spec


def _flat_out_dims(outputs, out_dims, func):
    """``(flat_outputs, spec, flat_out_dims)``; a single tensor output takes an int,
    None or a 1-tuple."""
    flat, spec = tree_flatten(outputs)
    if isinstance(outputs, _Tensor):
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return flat, spec, list(out_dims)
        flat_dims = [out_dims] if out_dims is None or isinstance(out_dims, int) else None
    else:
        flat_dims = _broadcast_to_and_flatten(out_dims, spec)
    if flat_dims is None:
        raise ValueError(
            f"vmap({_get_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
            "compatible with the structure of `outputs`. out_dims has structure "
            f"{tree_flatten(out_dims)[1]} but outputs has structure {spec}."
        )
    return flat, spec, flat_dims


def _bad_output(func, kind):
    name = _get_name(func)
    if kind == "batched":
        return ValueError(
            f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
        )
    return ValueError(
        f"vmap({name}, ...): `{name}` must only return Tensors, got type {kind}. Did you "
        "mean to set out_dims= to None for output?"
    )


def _flat_vmap(func, batch_size, flat_in_dims, flat_args, spec, out_dims, randomness, kwargs):
    level = _C._vmap_increment_nesting(batch_size, randomness)
    try:
        with _state.running():
            args = tree_unflatten(
                [
                    a if d is None else _C._add_batch_dim(a, d, level)
                    for a, d in zip(flat_args, flat_in_dims)
                ],
                spec,
            )
            outputs = func(*args, **kwargs)
        flat, out_spec, flat_dims = _flat_out_dims(outputs, out_dims, func)
        result = []
        for o, d in zip(flat, flat_dims):
            if d is None:
                if isinstance(o, _Tensor) and _C._is_batched_at(o, level):
                    raise _bad_output(func, "batched")
                result.append(o)
            elif not isinstance(o, _Tensor):
                raise _bad_output(func, type(o))
            else:
                result.append(_C._remove_batch_dim(o, level, batch_size, d))
        return tree_unflatten(result, out_spec)
    finally:
        _C._vmap_decrement_nesting()


def _chunked_vmap(
    func, batch_size, flat_in_dims, flat_args, spec, out_dims, randomness, chunk_size, kwargs
):
    """``chunk_size`` batch elements per vmap call, outputs joined along out_dims. With
    randomness "same" every chunk starts from the same RNG state, so all draw alike."""
    rng = _C.get_rng_state() if randomness == "same" else None
    chunks = []
    for start in range(0, batch_size, chunk_size):
        size = min(chunk_size, batch_size - start)
        args = [
            a if d is None else a.narrow(d, start, size) for a, d in zip(flat_args, flat_in_dims)
        ]
        if rng is not None:
            _C.set_rng_state(rng)
        chunks.append(
            _flat_vmap(func, size, flat_in_dims, args, spec, out_dims, randomness, kwargs)
        )
    flat, out_spec, flat_dims = _flat_out_dims(chunks[0], out_dims, func)
    columns = zip(*(tree_flatten(c)[0] for c in chunks))
    result = [
        first if d is None else _C.cat(list(column), d)
        for first, column, d in zip(flat, columns, flat_dims)
    ]
    return tree_unflatten(result, out_spec)
