"""``ferrograd.autograd.graph``: inspecting the backward graph."""

import abc
import collections

from .. import _C
from ._multi_grad import register_multi_grad_hook
from ._saved_mutation import allow_mutation_on_saved_tensors

__all__ = [
    "Node",
    "GradientEdge",
    "get_gradient_edge",
    "increment_version",
    "register_multi_grad_hook",
    "to_dot",
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "allow_mutation_on_saved_tensors",
]


class Node(abc.ABC):
    """Base class of every backward node (``grad_fn``); the built-in nodes are
    ``ferrograd._C.CppNode`` objects registered as virtual subclasses."""

    @abc.abstractmethod
    def name(self): ...


Node.register(_C.CppNode)

GradientEdge = collections.namedtuple(
    "GradientEdge", ["node", "output_nr", "ownership_token"], defaults=(None,)
)
GradientEdge.__doc__ = "Where a gradient enters the graph: input `output_nr` of `node`."


def get_gradient_edge(tensor):
    """The edge the gradient of ``tensor`` flows into (its grad_fn, or its
    AccumulateGrad node for a leaf)."""
    node, nr = _C._gradient_edge(tensor)
    return GradientEdge(node, nr)


def increment_version(tensor):
    """Bump the version counter of a tensor (or of each tensor in an iterable)."""
    if isinstance(tensor, _C.Tensor):
        tensor = (tensor,)
    if not hasattr(tensor, "__iter__"):
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input")
    for t in tensor:
        if not t.is_inference():
            _C._increment_version(t)


def _register_hook_dict(tensor):
    """``grad_fn._register_hook_dict(tensor)``: the hooks in ``tensor._backward_hooks``
    (read at each backward, in insertion order, each result replacing the gradient)
    run as one tensor pre-hook of ``tensor``'s slot, as in torch."""
    hooks = getattr(tensor, "_backward_hooks", None)
    if hooks is None:
        raise RuntimeError("_register_hook_dict expects tensor._backward_hooks to be a dict")

    def run_hook_dict(grad):
        for hook in tuple(hooks.values()):
            result = hook(grad)
            if result is not None:
                grad = result
        return grad

    tensor.register_hook(run_hook_dict)


def _saved_names(node):
    return [n[len("_saved_") :] for n in dir(node) if n.startswith("_saved_")]


def _dot_escape(text):
    return str(text).replace("\\", "\\\\").replace('"', '\\"')


def to_dot(tensor, show_saved=False):
    """The backward graph reachable from ``tensor`` as Graphviz DOT text (beyond torch).

    Each node is drawn once, labelled with its ``name()``; a leaf's AccumulateGrad node
    also shows the leaf's shape and dtype. There is one edge per ``next_functions``
    entry that has a node. ``show_saved=True`` lists each node's saved values by name
    (shapes for tensors). Render with ``dot -Tsvg``.
    """
    root = tensor.grad_fn if isinstance(tensor, _C.Tensor) else tensor
    lines = ["digraph backward {", '  node [shape=box, fontname="monospace"];']
    if root is None:
        lines.append("}")
        return "\n".join(lines)
    ids, order, stack = {}, [], [root]
    while stack:
        node = stack.pop()
        if node is None or id(node) in ids:
            continue
        ids[id(node)] = f"n{len(ids)}"
        order.append(node)
        stack.extend(n for n, _ in reversed(node.next_functions))
    for node in order:
        label = [node.name()]
        variable = getattr(node, "variable", None) if "variable" in dir(node) else None
        if variable is not None:
            label.append(f"{tuple(variable.shape)} {str(variable.dtype).split('.')[-1]}")
        if show_saved:
            for name in _saved_names(node):
                try:
                    value = getattr(node, "_saved_" + name)
                except RuntimeError:
                    value = "<freed>"
                if isinstance(value, _C.Tensor):
                    value = f"tensor{tuple(value.shape)}"
                label.append(f"{name}: {value}")
        text = "\\n".join(_dot_escape(part) for part in label)
        lines.append(f'  {ids[id(node)]} [label="{text}"];')
    for node in order:
        for child, _ in node.next_functions:
            if child is not None:
                lines.append(f"  {ids[id(node)]} -> {ids[id(child)]};")
    lines.append("}")
    return "\n".join(lines)


class saved_tensors_hooks:  # noqa: N801 - torch's name
    """While active, every tensor saved for backward is replaced by ``pack_hook(tensor)``,
    and ``unpack_hook(packed)`` must give it back (a Tensor) when backward needs it.
    Applies to built-in ops and custom Functions alike; the innermost pair wins."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *args):
        _C._pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - torch's name
    """Keep saved tensors in CPU memory. Every tensor here already lives on the CPU, so
    packing is a copy; ``pin_memory`` is accepted for compatibility."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(tensor):
            return tensor.detach().clone()

        def unpack(packed):
            return packed

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:  # noqa: N801 - torch's name
    """Inside, registering saved-tensor hooks (or saving under outer ones) raises
    RuntimeError with ``error_message``."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        _C._push_saved_tensors_hooks_disabled(self.error_message)
        return self

    def __exit__(self, *args):
        _C._pop_saved_tensors_hooks()
