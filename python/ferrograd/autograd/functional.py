"""``ferrograd.autograd.functional``: vjp, jvp, jacobian, hessian, vhp and hvp of a
user function, with torch's arguments, result structures and error texts.

Note: how each product is built
- ``vjp``: one backward pass with ``v`` as grad_outputs.
- ``jvp`` (and ``hvp``): the double-backward trick, as torch's functional API does. The
  backward ``u ↦ Jᵀu`` is linear in ``u``, so differentiating ``<Jᵀu, v>`` with respect
  to a dummy ``u`` gives ``J·v``. The dummy's value never enters the result; zeros keep it
  free of inf/nan.
- ``jacobian``, reverse mode: one backward per output element, or with ``vectorize=True``
  one ``autograd.grad(..., is_grads_batched=True)`` call whose batched grad_outputs are
  the identity; forward mode (``vectorize=True`` only): one forward-AD pass per input
  element, see ``_jvp_columns``.
- ``hessian``: the Jacobian (outer, either strategy) of the create_graph reverse-mode
  Jacobian. ``vhp``: the backward of the gradient.

Every call works whatever the ambient grad mode (it enables grad itself) and re-wraps its
inputs (see ``_functional_utils.preprocess``), so only tensors passed as ``inputs`` are
differentiated, never ones the function captures.
"""

import importlib

import ferrograd as _lib

from . import _functional_utils as _u
from . import _legacy_vmap

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

_OUTPUTS = "outputs of the user-provided function"


def _call(func, inputs, fn_name, strict):
    """Run ``func`` on the re-wrapped inputs; its outputs, tupled and (strict) checked."""
    is_outputs_tuple, outputs = _u.as_tuple(func(*inputs), _OUTPUTS, fn_name)
    _u.check_requires_grad(outputs, "outputs", strict)
    return is_outputs_tuple, outputs


def _finish(outputs, is_outputs_tuple, res, is_res_tuple, create_graph):
    """(func output, product) as the user gave them: detached unless create_graph."""
    outputs = _u.postprocess(outputs, create_graph)
    res = _u.postprocess(res, create_graph)
    return _u.untuple(outputs, is_outputs_tuple), _u.untuple(res, is_res_tuple)


def _grad_mode_for_result(create_graph):
    # The last backward builds a graph only when asked to, or when the caller's own grad
    # mode would record one anyway.
    return _lib.set_grad_enabled(create_graph or _lib.is_grad_enabled())


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), vᵀ·J)``; ``v`` has the output's shape(s), the product the inputs'."""
    with _lib.enable_grad():
        is_inputs_tuple, inputs = _u.as_tuple(inputs, "inputs", "vjp")
        inputs = _u.preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _call(func, inputs, "vjp", strict)
        v = _u.prepare_v(
            v,
            outputs,
            is_outputs_tuple,
            create_graph,
            "vjp",
            "The vector v can only be None if the user-provided function returns a single "
            "Tensor with a single element.",
        )
    with _grad_mode_for_result(create_graph):
        grads = _u.grad(outputs, inputs, v, create_graph=create_graph)
        res = _u.fill_in_zeros(grads, inputs, strict, create_graph, "back")
    return _finish(outputs, is_outputs_tuple, res, is_inputs_tuple, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J·v)`` by the double-backward trick (see the note at the top)."""
    with _lib.enable_grad():
        is_inputs_tuple, inputs = _u.as_tuple(inputs, "inputs", "jvp")
        inputs = _u.preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _u.prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp", _u.V_NONE_FOR_INPUT)
        is_outputs_tuple, outputs = _call(func, inputs, "jvp", strict)
        dummy = tuple(_lib.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _u.grad(outputs, inputs, dummy, create_graph=True)
        _u.check_requires_grad(grad_inputs, "grad_inputs", strict)
    with _grad_mode_for_result(create_graph):
        grads = _u.grad(grad_inputs, dummy, v, create_graph=create_graph)
        res = _u.fill_in_zeros(grads, outputs, strict, create_graph, "back_trick")
    return _finish(outputs, is_outputs_tuple, res, is_outputs_tuple, create_graph)


def _check_strategy(strategy, hint):
    if strategy in ("forward-mode", "reverse-mode"):
        return
    msg = 'Expected strategy to be either "forward-mode" or "reverse-mode".'
    if hint:
        msg += (
            ' Hint: If your function has more outputs than inputs, "forward-mode" tends to '
            'be more performant. Otherwise, prefer to use "reverse-mode".'
        )
    raise AssertionError(msg)


def jacobian(
    func,
    inputs,
    create_graph=False,
    strict=False,
    vectorize=False,
    strategy="reverse-mode",
):
    """The Jacobian blocks ``J[i][j]`` of shape ``out_i.shape + in_j.shape`` (a tensor, a
    tuple over inputs or outputs, or a tuple of tuples, as torch nests them)."""
    _check_strategy(strategy, hint=True)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.'
            )
        return _jacfwd(func, inputs, strict, vectorize)
    with _lib.enable_grad():
        is_inputs_tuple, inputs = _u.as_tuple(inputs, "inputs", "jacobian")
        inputs = _u.preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
                    "are not supported together. Please either set `strict=False` or "
                    "`vectorize=False`."
                )
            blocks = _jacrev_batched(outputs, inputs, create_graph)
        else:
            blocks = _jacrev_rows(outputs, inputs, create_graph, strict)
        blocks = _u.postprocess(blocks, create_graph)
        return _u.untuple(blocks, (is_outputs_tuple, is_inputs_tuple))


def _jacrev_rows(outputs, inputs, create_graph, strict):
    """One backward per output element; rows stacked into the blocks."""
    blocks = []
    for i, out in enumerate(outputs):
        rows = [[] for _ in inputs]
        flat = out.reshape(-1)
        for k in range(out.nelement()):
            vj = _u.grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
            for j, (g, inp) in enumerate(zip(vj, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(
                            f"Output {i} of the user-provided function is independent of "
                            f"input {j}. This is not allowed in strict mode."
                        )
                    g = _lib.zeros_like(inp)
                elif strict and create_graph and not g.requires_grad:
                    # torch names the output's index here, not the input's.
                    raise _u.constant_grad_error("jacobian", i)
                rows[j].append(g)
        blocks.append(
            tuple(_u.stack(r).view(out.shape + inp.shape) for r, inp in zip(rows, inputs))
        )
    return tuple(blocks)


def _jacrev_batched(outputs, inputs, create_graph):
    """All rows in one batched backward: the flattened outputs together have N elements,
    the grad_outputs are the N x N identity cut per output (row k selects element k), and
    the result per input is N rows, cut back per output."""
    numels = tuple(out.numel() for out in outputs)
    basis = _u.standard_basis(outputs, numels)
    flat = tuple(out.reshape(-1) for out in outputs)
    per_input = _u.grad(flat, inputs, basis, create_graph=create_graph, is_grads_batched=True)
    blocks = [[] for _ in outputs]
    for inp, rows in zip(inputs, per_input):
        if rows is None:
            rows = _lib.zeros_like(inp).expand((sum(numels),) + inp.shape)
        for block_row, part, out in zip(blocks, rows.split(numels, dim=0), outputs):
            block_row.append(part.view(out.shape + inp.shape))
    return tuple(tuple(row) for row in blocks)


def _jacfwd(func, inputs, strict, vectorize):
    """Forward-mode Jacobian: column blocks J·e_k for every input element k."""
    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either set '
            '`strict=False` or `strategy="reverse-mode"`.'
        )
    is_inputs_tuple, inputs = _u.as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        # (sic) torch's text lacks the space in "isonly".
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
            "implemented for `vectorize=True`."
        )
    numels = tuple(inp.numel() for inp in inputs)
    is_outputs_tuple, outputs, columns = _jvp_columns(func, inputs, numels)
    # torch hands this table back as lists (its result is not re-tupled in forward mode).
    blocks = []
    for out, cols in zip(outputs, columns):
        row = []
        for part, inp in zip(cols.split(numels, dim=0), inputs):
            # The stacking dim runs over input elements: move it behind the output dims.
            moved = part.permute(*range(1, part.ndim), 0)
            row.append(moved.reshape(out.shape + inp.shape))
        blocks.append(row)
    return _u.untuple(blocks, (is_outputs_tuple, is_inputs_tuple))


def _jvp_columns(func, inputs, numels):
    """Per output, the tangents J·e_k stacked over every basis vector e_k of the inputs:
    one forward-AD pass vmapped over the standard basis (as torch's ``_jacfwd``). Also
    returns whether func returned a tuple, and its (primal) outputs."""
    fwAD = importlib.import_module(f"{_lib.__name__}.autograd.forward_ad")
    info = []

    def jvp(*tangents):
        with fwAD.dual_level():
            duals = tuple(fwAD.make_dual(p, t.view_as(p)) for p, t in zip(inputs, tangents))
            # (sic) torch names no function in this message ("given to None").
            is_outputs_tuple, outs = _u.as_tuple(func(*duals), "outputs", None)
            primals, out_tangents = [], []
            for out in outs:
                primal, tangent = fwAD.unpack_dual(out)
                primals.append(primal)
                out_tangents.append(_lib.zeros_like(primal) if tangent is None else tangent)
        info.append((is_outputs_tuple, primals))
        return tuple(out_tangents)

    if sum(numels):
        columns = _legacy_vmap.vmap(jvp)(*_u.standard_basis(inputs, numels))
        is_outputs_tuple, primals = info[0]
        return is_outputs_tuple, primals, columns
    # No input element at all: nothing to map over; one pass with zero tangents finds
    # the outputs, and every column block is empty.
    jvp(*(_lib.zeros_like(inp) for inp in inputs))
    is_outputs_tuple, primals = info[0]
    empty = tuple(_lib.zeros(0, *p.shape, dtype=p.dtype, device=p.device) for p in primals)
    return is_outputs_tuple, primals, empty


def _check_single_element(is_outputs_tuple, out, fn_name):
    if is_outputs_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if out.nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a "
            "single element"
        )


def hessian(
    func,
    inputs,
    create_graph=False,
    strict=False,
    vectorize=False,
    outer_jacobian_strategy="reverse-mode",
):
    """``H[i][j]`` of shape ``in_i.shape + in_j.shape``: the Jacobian of the reverse-mode
    Jacobian, the outer one taken with ``outer_jacobian_strategy``."""
    is_inputs_tuple, inputs = _u.as_tuple(inputs, "inputs", "hessian")
    _check_strategy(outer_jacobian_strategy, hint=False)

    def scalar_func(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _u.as_tuple(out, _OUTPUTS, "hessian")
        _u.check_requires_grad(t_out, "outputs", strict)
        _check_single_element(is_out_tuple, out, "hessian")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            # The inner Jacobian re-wraps its inputs differentiably (keeping their
            # tangents) only when they require grad; otherwise it would detach them.
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar_func, inp, create_graph=True)
        _u.check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(
        jac_func,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _u.untuple(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_func_gradient(func, inputs, v, create_graph, strict, fn_name):
    """First half of vhp and hvp (grad must be enabled): the re-wrapped inputs, ``v``,
    the single one-element output and its create_graph gradient."""
    is_inputs_tuple, inputs = _u.as_tuple(inputs, "inputs", fn_name)
    inputs = _u.preprocess(inputs, create_graph=create_graph, need_graph=True)
    v = _u.prepare_v(v, inputs, is_inputs_tuple, create_graph, fn_name, _u.V_NONE_FOR_INPUT)
    is_outputs_tuple, outputs = _call(func, inputs, fn_name, strict)
    _check_single_element(is_outputs_tuple, outputs[0], fn_name)
    jac = _u.grad(outputs, inputs, create_graph=True)
    _u.check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, v, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), vᵀ·H)`` for a function returning one element."""
    with _lib.enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _scalar_func_gradient(
            func, inputs, v, create_graph, strict, "vhp"
        )
    with _grad_mode_for_result(create_graph):
        grads = _u.grad(jac, inputs, v, create_graph=create_graph)
        res = _u.fill_in_zeros(grads, inputs, strict, create_graph, "double_back")
    return _finish(outputs, False, res, is_inputs_tuple, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H·v)`` by the double-backward trick on the gradient; equal to
    ``vhp`` for a twice continuously differentiable function, and slower."""
    with _lib.enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _scalar_func_gradient(
            func, inputs, v, create_graph, strict, "hvp"
        )
        dummy = tuple(_lib.zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _u.grad(jac, inputs, dummy, create_graph=True)
    with _grad_mode_for_result(create_graph):
        grads = _u.grad(double_back, dummy, v, create_graph=create_graph)
        res = _u.fill_in_zeros(grads, inputs, strict, create_graph, "double_back_trick")
    return _finish(outputs, False, res, is_inputs_tuple, create_graph)
