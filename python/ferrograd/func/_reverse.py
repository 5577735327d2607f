"""``grad``, ``grad_and_value`` and ``vjp``: reverse mode on the autograd engine.

Each differentiated input leaf is replaced by an *alias* that requires grad: a view of
the input when the input requires grad (so the result stays connected to the caller's
graph), else a fresh detached leaf. ``func`` runs with grad mode on (a transform ignores
an outer ``no_grad``), then ``autograd.grad`` goes back to the aliases only, so an inner
transform never differentiates through an outer one's alias (no perturbation confusion).
"""

import functools

from .. import _C
from ..autograd import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import disable_saved_tensors_hooks
from ..utils._pytree import tree_flatten, tree_unflatten, treespec_pprint
from . import _state

__all__ = ["grad", "grad_and_value", "vjp"]

_Tensor = _C.Tensor

_HOOKS_MESSAGE = (
    "torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks. "
    "Please open an issue with your use case."
)


class _tracing:
    """Around running ``func`` and differentiating it: grad mode on, the transform
    counted (backward() refused), saved-tensor hooks refused (C376)."""

    def __enter__(self):
        self._grad = enable_grad()
        self._count = _state.running("reverse")
        self._hooks = disable_saved_tensors_hooks(_HOOKS_MESSAGE)
        self._grad.__enter__()
        self._count.__enter__()
        self._hooks.__enter__()

    def __exit__(self, *exc):
        self._hooks.__exit__(*exc)
        self._count.__exit__(*exc)
        self._grad.__exit__(*exc)


def _normalize_argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if -num_args <= argnum < num_args:
        return argnum % num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _normalize_argnums(argnums, num_args):
    """``argnums`` as an int or a tuple of non-negative ints, validated as torch."""
    if isinstance(argnums, int):
        return _normalize_argnum(argnums, num_args)
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        norm = tuple(_normalize_argnum(a, num_args) for a in argnums)
        if len(set(norm)) != len(norm):
            raise RuntimeError(f"argnums elements must be unique, got {norm}")
        return norm
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _slice_argnums(args, argnums):
    """The selected positional argument (int argnums) or tuple of them."""
    if isinstance(argnums, int):
        return args[argnums]
    return tuple(args[i] for i in argnums)


def _replace_argnums(args, argnums, new):
    args = list(args)
    if isinstance(argnums, int):
        args[argnums] = new
    else:
        for i, value in zip(argnums, new):
            args[i] = value
    return tuple(args)


def _make_aliases(flat):
    """One alias per input leaf (call before entering the transform), and whether results must stay
    connected to the caller's graph: grad mode was on at entry and something outside
    can differentiate them (an input requiring grad, or an enclosing transform)."""
    for x in flat:
        if not isinstance(x, _Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    connect = _state.keeps_graph(flat)
    # Grad mode on but nothing known outside: func may still use captured tensors that
    # require grad; `_captures_graph` looks once the output exists.
    probe = not connect and _C.is_grad_enabled()
    return [_alias(x) for x in flat], connect, probe


def _captures_graph(outputs, aliases):
    """Whether the graph of ``outputs`` reaches a leaf other than ``aliases`` (a
    captured tensor requiring grad: the results must stay connected to it)."""
    own = {id(a) for a in aliases}
    stack = [o.grad_fn for o in outputs if isinstance(o, _Tensor) and o.grad_fn is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)
        if variable is not None and id(variable) not in own:
            return True
        stack.extend(n for n, _ in node.next_functions)
    return False


def _alias(x):
    # A view made under no_grad is a new leaf that keeps x's forward-AD tangents (detach
    # would drop them: forward-over-reverse, e.g. hessian, needs them).
    if x.requires_grad:
        with enable_grad():
            return x.view_as(x)
    with no_grad():
        view = x.view_as(x)
    return view.requires_grad_()


def _unwrap(tree, connect):
    """Results handed to the caller: tensors only (aux rule), detached unless they must
    stay connected to the caller's graph."""
    flat, spec = tree_flatten(tree)
    for x in flat:
        if not isinstance(x, _Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    if connect:
        return tree
    return tree_unflatten([x.detach() for x in flat], spec)


def _vjp_grads(outputs, inputs, cotangents, retain_graph, create_graph):
    """d(outputs · cotangents)/d(inputs); outputs that do not require grad contribute
    nothing and unused inputs get zeros."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        return tuple(_C.zeros_like(x) for x in inputs)
    outs, cots = zip(*pairs)
    return _autograd_grad(
        outs,
        inputs,
        cots,
        retain_graph=retain_graph,
        create_graph=create_graph,
        allow_unused=True,
        materialize_grads=True,
    )


def _split_aux(output, api):
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(
            f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True"
        )
    return output


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning ``(gradient of func w.r.t. argnums, func's value)``
    (``(grads, (value, aux))`` with ``has_aux``)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value(func, argnums, has_aux, args, kwargs)

    return wrapper


def _grad_and_value(func, argnums, has_aux, args, kwargs):
    api = "grad_and_value(f)(*args)"
    argnums = _normalize_argnums(argnums, len(args))
    flat, spec = tree_flatten(_slice_argnums(args, argnums))
    aliases, connect, probe = _make_aliases(flat)  # before _tracing: the caller's state
    with _tracing():
        args = _replace_argnums(args, argnums, tree_unflatten(aliases, spec))
        output = func(*args, **kwargs)
        if probe:
            connect = _captures_graph(tree_flatten(output)[0], aliases)
        aux = None
        if has_aux:
            output, aux = _split_aux(output, api)
            aux = _unwrap(aux, connect)
        if not isinstance(output, _Tensor):
            raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(output)}")
        if output.dim() != 0:
            raise RuntimeError(
                f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with "
                f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
            )
        grads = _vjp_grads((output,), aliases, (_C.ones_like(output),), connect, connect)
    grads = _unwrap(tree_unflatten(list(grads), spec), connect)
    value = _unwrap(output, connect)
    if has_aux:
        return grads, (value, aux)
    return grads, value


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of the scalar ``func`` w.r.t. argnums
    (``(grads, aux)`` with ``has_aux``)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = _grad_and_value(func, argnums, has_aux, args, kwargs)
        if has_aux:
            return grads, value[1]
        return grads

    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)`` (plus ``aux``); ``vjp_fn(cotangents)`` gives the
    vector-Jacobian products, one per primal, as a tuple."""
    api = "vjp(f, *primals)"
    flat, spec = tree_flatten(primals)
    aliases, connect, probe = _make_aliases(flat)
    with _tracing():
        output = func(*tree_unflatten(aliases, spec))
        if probe:
            connect = _captures_graph(tree_flatten(output)[0], aliases)
        aux = None
        if has_aux:
            output, aux = _split_aux(output, api)
            aux = _unwrap(aux, connect)
        flat_out, out_spec = tree_flatten(output)
        _check_vjp_outputs(flat_out, output, api)
    result = _unwrap(output, connect)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = _C.is_grad_enabled()
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function. cotangents: {treespec_pprint(ct_spec)}, "
                f"primal output: {treespec_pprint(out_spec)}"
            )
        keep = create_graph and connect
        with enable_grad():
            grads = _vjp_grads(flat_out, aliases, flat_ct, retain_graph, keep)
        return tree_unflatten(list(grads), spec)

    if has_aux:
        return result, vjp_fn, aux
    return result, vjp_fn


def _check_vjp_outputs(flat_out, output, api):
    if not flat_out:
        raise RuntimeError(
            f"{api}: Expected f to be a function that has non-empty output (got output = {output})"
        )
    for o in flat_out:
        if not isinstance(o, _Tensor):
            raise RuntimeError(
                f"{api}: expected f(*primals) to return only tensors, got unsupported type "
                f"{type(o)}"
            )
    for o in flat_out:
        if not (o.is_floating_point() or o.is_complex()):
            raise RuntimeError(
                "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, "
                f"got Tensor with dtype {o.dtype}"
            )
