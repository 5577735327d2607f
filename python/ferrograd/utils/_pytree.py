"""Pytrees as ``torch.utils._pytree``: nested tuples, lists, dicts, namedtuples,
OrderedDicts (and registered types) whose non-container values are *leaves*.

``tree_flatten`` gives the leaves in order plus a ``TreeSpec`` describing the containers;
``tree_unflatten`` rebuilds. As torch 2.15, ``None`` is a leaf and dicts keep their
insertion order. Every walk uses an explicit stack: user structures can be deeper than
Python's recursion limit.
"""

import collections

__all__ = [
    "LeafSpec",
    "TreeSpec",
    "register_pytree_node",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_structure",
    "tree_unflatten",
    "treespec_pprint",
]

# type -> (flatten_fn(node) -> (children, context), unflatten_fn(children, context) -> node)
_NODES = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, **_ignored):
    """Make instances of ``cls`` containers: ``flatten_fn(node) -> (children, context)``
    and ``unflatten_fn(children, context) -> node``."""
    if cls in _NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _NODES[cls] = (flatten_fn, unflatten_fn)


def _namedtuple(children, cls):
    return cls._make(children)


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _ordered_unflatten(children, keys):
    return collections.OrderedDict(zip(keys, children))


register_pytree_node(tuple, lambda t: (list(t), None), lambda c, _: tuple(c))
register_pytree_node(list, lambda t: (list(t), None), lambda c, _: list(c))
register_pytree_node(dict, _dict_flatten, lambda c, keys: dict(zip(keys, c)))
register_pytree_node(collections.OrderedDict, _dict_flatten, _ordered_unflatten)
# Keyed by the factory, as torch does (its type prints as `namedtuple`).
_NAMEDTUPLE = collections.namedtuple
_NODES[_NAMEDTUPLE] = (lambda t: (list(t), type(t)), _namedtuple)


def _node_type(node):
    """The registry key of ``node``, or None for a leaf (exact types, as torch)."""
    cls = type(node)
    if cls in _NODES:
        return cls
    if isinstance(node, tuple) and hasattr(cls, "_fields"):
        return _NAMEDTUPLE
    return None


class TreeSpec:
    """The container structure of a pytree: node type, context (dict keys, namedtuple
    class...) and one child spec per child."""

    __slots__ = ("type", "context", "children_specs", "num_leaves")

    def __init__(self, type, context, children_specs):  # noqa: A002 - torch's name
        self.type = type
        self.context = context
        self.children_specs = list(children_specs)
        self.num_leaves = sum(c.num_leaves for c in self.children_specs)

    @property
    def num_children(self):
        return len(self.children_specs)

    def is_leaf(self):
        return False

    def children(self):
        return list(self.children_specs)

    def child(self, index):
        return self.children_specs[index]

    def _preorder(self):
        stack = [self]
        while stack:
            spec = stack.pop()
            yield spec
            stack.extend(reversed(spec.children_specs))

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, TreeSpec):
            return NotImplemented
        a, b = list(self._preorder()), list(other._preorder())
        return len(a) == len(b) and all(
            x.type is y.type and x.context == y.context and x.num_children == y.num_children
            for x, y in zip(a, b)
        )

    __hash__ = None

    def __repr__(self):
        # torch's layout: children separated by ",\n" plus two spaces per depth.
        out = []
        stack = [(self, 0)]
        while stack:
            item, indent = stack.pop()
            if isinstance(item, str):
                out.append(item)
                continue
            if item.is_leaf():
                out.append("*")
                continue
            out.append(f"TreeSpec({item.type.__name__}, {item.context}, [")
            indent += 2
            seq = []
            for k, child in enumerate(item.children_specs):
                if k:
                    seq.append((",\n" + " " * indent, indent))
                seq.append((child, indent))
            seq.append(("])", indent))
            stack.extend(reversed(seq))
        return "".join(out)

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)


class LeafSpec(TreeSpec):
    """The spec of a leaf (printed ``*``)."""

    __slots__ = ()

    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves = 1

    def is_leaf(self):
        return True


_LEAF = LeafSpec()


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves of ``tree`` in order and its structure."""
    leaves = []

    def frame(node):
        typ = _node_type(node)
        if typ is None:
            leaves.append(node)
            return None
        children, context = _NODES[typ][0](node)
        return [typ, context, children, 0, []]

    top = frame(tree)
    if top is None:
        return leaves, _LEAF
    stack = [top]
    while True:
        f = stack[-1]
        if f[3] < len(f[2]):
            child = f[2][f[3]]
            f[3] += 1
            sub = frame(child)
            if sub is None:
                f[4].append(_LEAF)
            else:
                stack.append(sub)
            continue
        stack.pop()
        spec = TreeSpec(f[0], f[1], f[4])
        if not stack:
            return leaves, spec
        stack[-1][4].append(spec)


def tree_unflatten(leaves, treespec):
    """Rebuild the pytree of structure ``treespec`` from ``leaves``."""
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(
            f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
            f"refers to a pytree that holds {treespec.num_leaves} items ({treespec})."
        )
    if treespec.is_leaf():
        return leaves[0]
    it = iter(leaves)
    stack = [[treespec, 0, []]]
    while True:
        f = stack[-1]
        spec = f[0]
        if f[1] < spec.num_children:
            child = spec.children_specs[f[1]]
            f[1] += 1
            if child.is_leaf():
                f[2].append(next(it))
            else:
                stack.append([child, 0, []])
            continue
        stack.pop()
        node = _NODES[spec.type][1](f[2], spec.context)
        if not stack:
            return node
        stack[-1][2].append(node)


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_structure(tree):
    return tree_flatten(tree)[1]


def tree_map(fn, tree, *rests):
    """``fn`` applied to every leaf (with the matching leaves of ``rests``), same
    structure."""
    leaves, spec = tree_flatten(tree)
    others = [_flatten_as(r, spec) for r in rests]
    return tree_unflatten([fn(*xs) for xs in zip(leaves, *others)], spec)


def _flatten_as(tree, spec):
    leaves, other = tree_flatten(tree)
    if other != spec:
        raise ValueError(f"Tree structure mismatch: expected {spec}, got {other}.")
    return leaves


def _broadcast_to_and_flatten(prefix, spec):
    """The leaves of ``prefix`` (a tree whose structure is a prefix of ``spec``), each
    repeated over the leaves of the subtree it covers; None when not a prefix."""
    out = []
    stack = [(prefix, spec)]
    while stack:
        node, sub = stack.pop()
        typ = _node_type(node)
        if typ is None:
            out.extend([node] * sub.num_leaves)
            continue
        if sub.is_leaf() or typ is not sub.type:
            return None
        children, context = _NODES[typ][0](node)
        if len(children) != sub.num_children or context != sub.context:
            return None
        stack.extend(reversed(list(zip(children, sub.children_specs))))
    return out


class _Asterisk(str):
    def __repr__(self):
        return "*"


def treespec_pprint(treespec):
    """The structure written as the container itself with ``*`` leaves:
    ``{'a': *, 'b': *}``."""
    return repr(tree_unflatten([_Asterisk("*")] * treespec.num_leaves, treespec))
