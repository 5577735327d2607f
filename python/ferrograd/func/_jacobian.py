"""``jacrev`` (vmap over vjp), ``jacfwd`` (vmap over jvp) and ``hessian``.

Both push the rows of an identity through the transform: ``jacrev`` one basis
cotangent per output element, ``jacfwd`` one basis tangent per input element. The
block for output ``o`` and input ``i`` has shape ``o.shape + i.shape``.
"""

import functools

from .. import _C
from ..utils._pytree import tree_flatten, tree_unflatten
from ._forward import jvp
from ._reverse import _normalize_argnums, _replace_argnums, _slice_argnums, vjp
from ._vmap import vmap

__all__ = ["jacrev", "jacfwd", "hessian"]


def _error_if_complex(api, flat, is_input):
    for idx, x in enumerate(flat):
        if isinstance(x, _C.Tensor) and x.is_complex():
            what = "inputs" if is_input else "outputs"
            # torch says "input idx" for outputs too.
            raise RuntimeError(
                f"{api}: Expected all {what} to be real but received complex tensor at "
                f"flattened input idx: {idx}"
            )


def _diff_call(func, args, kwargs, argnums):
    """``(primals, f)``: the differentiated arguments and func as a function of them."""
    argnums = _normalize_argnums(argnums, len(args))
    primals = _slice_argnums(args, argnums)

    def f(*diff):
        new = diff if isinstance(argnums, tuple) else diff[0]
        return func(*_replace_argnums(args, argnums, new), **kwargs)

    return (primals if isinstance(argnums, tuple) else (primals,)), f, argnums


def _regroup(blocks, out_spec, in_spec):
    """``blocks[j][i]`` (output leaf j, input leaf i) into the output structure of the
    input structure."""
    return tree_unflatten([tree_unflatten(row, in_spec) for row in blocks], out_spec)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` w.r.t. argnums, by reverse mode."""
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        primals, f, argnums_n = _diff_call(func, args, kwargs, argnums)
        _error_if_complex("jacrev", tree_flatten(primals)[0], True)
        res = vjp(f, *primals, has_aux=has_aux)
        output, vjp_fn = res[0], res[1]
        flat_out, out_spec = tree_flatten(output)
        _error_if_complex("jacrev", flat_out, False)
        total = sum(o.numel() for o in flat_out)
        rows = _C.eye(total, dtype=flat_out[0].dtype, device=flat_out[0].device)
        step = total if chunk_size is None else chunk_size
        chunks = []
        for start in range(0, total, step):
            n = min(step, total - start)
            basis = _split_rows(rows.narrow(0, start, n), flat_out, n)
            if chunk_size == 1:  # a plain loop: vmap's constraints do not apply
                grads = vjp_fn(tree_unflatten([b[0] for b in basis], out_spec))
                chunks.append([g.unsqueeze(0) for g in tree_flatten(grads)[0]])
            else:
                chunks.append(tree_flatten(vmap(vjp_fn)(tree_unflatten(basis, out_spec)))[0])
        per_input = [_C.cat(list(col), 0) for col in zip(*chunks)]
        flat_in, in_spec = tree_flatten(primals if isinstance(argnums_n, tuple) else primals[0])
        blocks, start = [], 0
        for o in flat_out:
            blocks.append(
                [
                    g.narrow(0, start, o.numel()).reshape([*o.shape, *x.shape])
                    for g, x in zip(per_input, flat_in)
                ]
            )
            start += o.numel()
        jac = _regroup(blocks, out_spec, in_spec)
        if has_aux:
            return jac, res[2]
        return jac

    return wrapper


def _split_rows(rows, like, n_rows):
    """The columns of ``rows`` split per tensor of ``like``, shaped ``(n_rows,
    *t.shape)``."""
    parts, start = [], 0
    for t in like:
        parts.append(rows.narrow(1, start, t.numel()).reshape([n_rows, *t.shape]))
        start += t.numel()
    return parts


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` w.r.t. argnums, by forward mode."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        primals, f, argnums_n = _diff_call(func, args, kwargs, argnums)
        flat_in, p_spec = tree_flatten(primals)
        _error_if_complex("jacfwd", flat_in, True)
        total = sum(x.numel() for x in flat_in)
        eye = _C.eye(total, dtype=flat_in[0].dtype, device=flat_in[0].device)
        basis = tree_unflatten(_split_rows(eye, flat_in, total), p_spec)

        def push(tangents):
            res = jvp(f, primals, tangents, has_aux=has_aux)
            if has_aux:
                return res[1], res[2]
            return res[1]

        pushed = vmap(push, out_dims=(-1, 0) if has_aux else -1, randomness=randomness)(basis)
        tangents_out = pushed[0] if has_aux else pushed
        flat_t, out_spec = tree_flatten(tangents_out)
        _error_if_complex("jacfwd", flat_t, False)
        in_spec = tree_flatten(primals if isinstance(argnums_n, tuple) else primals[0])[1]
        blocks = []
        for t in flat_t:
            row, start = [], 0
            for x in flat_in:
                shape = [*t.shape[:-1], *x.shape]
                row.append(t.narrow(-1, start, x.numel()).reshape(shape))
                start += x.numel()
            blocks.append(row)
        jac = _regroup(blocks, out_spec, in_spec)
        if has_aux:
            flat_aux, aux_spec = tree_flatten(pushed[1])
            return jac, tree_unflatten([a.select(0, 0) for a in flat_aux], aux_spec)
        return jac

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of the scalar ``func`` w.r.t. argnums (forward over reverse)."""
    return jacfwd(jacrev(func, argnums), argnums)
