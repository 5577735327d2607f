"""Argument plumbing shared by the six ``autograd.functional`` entry points.

Everything here is about torch's calling convention, not about differentiation: tupling
inputs and outputs (and undoing it on the way out), checking ``v``, re-wrapping inputs,
turning missing gradients into zeros or strict-mode errors, with torch's exact texts.

The library is reached through ``_lib`` (the ``ferrograd`` package), looked up at call
time only, so this module can be imported while the package itself is still initializing,
and so ``tests/check_functional_forward_mode_on_torch.py`` can run the same code over torch.
"""

import ferrograd as _lib


def as_tuple(inp, arg_name, fn_name):
    """(was it a tuple, the tuple): only Tensors may appear; a list is refused (TypeError)."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, _lib.Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but the {where} has type {type(el)}."
            )
    return is_tuple, items


def untuple(res, to_unpack):
    """Undo ``as_tuple`` on a result. ``to_unpack`` is one flag (a flat result) or a pair
    (outer, inner) for a result indexed [output][input]; the container type is kept as
    given (the forward-mode Jacobian hands lists back, as torch's does)."""
    if isinstance(to_unpack, tuple):
        outer, inner = to_unpack
        if not inner:
            res = tuple(el[0] for el in res)
        if not outer:
            res = res[0]
        return res
    return res if to_unpack else res[0]


def preprocess(inputs, create_graph, need_graph):
    """A fresh tensor object per input, so that tensors the function captures by closure
    are told apart from its inputs. With create_graph and an input that requires grad the
    alias stays differentiable (``view_as``); otherwise it is a detached leaf."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def postprocess(results, create_graph):
    """Detach results unless the caller asked for a graph. ``results`` is a tuple of
    tensors or a tuple of tuples of tensors (a Jacobian block table)."""
    if create_graph:
        return results
    if isinstance(results[0], _lib.Tensor):
        return tuple(r.detach() for r in results)
    return tuple(tuple(r.detach() for r in row) for row in results)


def validate_v(v, other, is_other_tuple):
    """``v`` must match ``other`` (both tuples) in count and in every size."""
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prefix = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prefix}v has invalid size: should be {el_other.size()} but got {el_v.size()}."
            )


def prepare_v(v, refs, is_refs_tuple, create_graph, fn_name, v_none_msg):
    """Tuple, re-wrap and check ``v`` against ``refs``; ``None`` is allowed only for one
    one-element ref, and then ``grad`` builds the implicit ``1`` itself."""
    if v is None:
        if len(refs) != 1 or refs[0].nelement() != 1:
            raise RuntimeError(v_none_msg)
        return None
    _, v = as_tuple(v, "v", fn_name)
    v = preprocess(v, create_graph=create_graph, need_graph=False)
    validate_v(v, refs, is_refs_tuple)
    return v


V_NONE_FOR_INPUT = (
    "The vector v can only be None if the input to the user-provided function is a single "
    "Tensor with a single element."
)

_NOT_TWICE_DIFFERENTIABLE = (
    "While computing the hessian, found that the jacobian of the user-provided function with "
    "respect to input {i} is independent of the input. This is not allowed in strict mode. "
    "You should ensure that your function is twice differentiable and that the jacobian "
    "depends on the inputs (this would be violated by a linear function for example)."
)


def check_requires_grad(tensors, kind, strict):
    """Strict mode: every tensor of ``tensors`` must exist and require grad.
    ``kind`` picks torch's wording: "outputs", "grad_inputs", "jacobian" or "hessian"."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            # Only a gradient can be missing.
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode."
            )
        if t.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs."
            )
        if kind == "jacobian":
            raise RuntimeError(_NOT_TWICE_DIFFERENTIABLE.format(i=i))
        if kind == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode."
            )
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The "
            "outputs must be computed in a differentiable manner from the input when running "
            "in strict mode."
        )


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    create_graph=False,
    retain_graph=None,
    is_grads_batched=False,
):
    """``autograd.grad`` that skips outputs that are None or do not require grad, and
    answers None for every input when nothing is left to differentiate."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return _lib.autograd.grad(
        tuple(o for o, _ in kept),
        inputs,
        tuple(g for _, g in kept),
        allow_unused=True,
        create_graph=create_graph,
        retain_graph=retain_graph,
        is_grads_batched=is_grads_batched,
    )


# Strict-mode texts for a gradient that is None, by the backward pass that produced it.
_MISSING_GRAD = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
    "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in "
    "the grad_outputs when using the double backward trick to compute forward mode "
    "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
    "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
    "{i} in the grad_jacobian. This is not allowed in strict mode as it prevents from using "
    "the double backward trick to replace forward mode AD.",
}


def constant_grad_error(what, i):
    """Strict mode with create_graph: a gradient exists but has no history to follow."""
    return RuntimeError(
        f"The {what} of the user-provided function is independent of input {i}. This is not "
        "allowed in strict mode when create_graph=True."
    )


def fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Missing gradients become zeros shaped like ``refs`` (the mathematically right
    value); in strict mode they, and with create_graph constant gradients, are errors."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING_GRAD[stage].format(i=i))
            g = _lib.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            raise constant_grad_error("hessian" if "double" in stage else "jacobian", i)
        res.append(g)
    return tuple(res)


def standard_basis(tensors, numels):
    """The N x N identity (N = sum of numels) cut into column blocks, one per tensor, each
    with that tensor's dtype and device: row k is basis vector k split across tensors."""
    total = sum(numels)
    chunks = []
    offset = 0
    for t, n in zip(tensors, numels):
        chunk = _lib.zeros(total, n, dtype=t.dtype, device=t.device)
        # Rows offset .. offset+n-1 hold this tensor's identity block.
        chunk.diagonal(-offset).fill_(1)
        chunks.append(chunk)
        offset += n
    return tuple(chunks)


def stack(parts):
    """Stack same-shaped tensors along a new leading dim, differentiably. Built on ``cat``
    (which has a batching rule), so a Jacobian stacked here can itself be differentiated
    with batched grad_outputs (a vectorized Hessian)."""
    if not parts:
        raise RuntimeError("stack expects a non-empty TensorList")
    return _lib.cat([p.unsqueeze(0) for p in parts], 0)
