"""``ferrograd.autograd.graph``: inspecting the backward graph."""

import abc
import collections

from .. import _C

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "increment_version"]


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
    for t in tensor:
        if not t.is_inference():
            _C._increment_version(t)
