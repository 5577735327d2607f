"""Pytrees (func.md §0): flatten / unflatten, specs and their printed forms."""

import collections

import ferrograd as torch
import pytest
from ferrograd.utils import _pytree as pytree

IS_REAL_TORCH = torch.__name__ == "torch"

Point = collections.namedtuple("Point", ["x", "y"])


def test_flatten_roundtrip_and_order():
    tree = {"b": [1, (2, 3)], "a": Point(4, None), "c": collections.OrderedDict(z=5)}
    leaves, spec = pytree.tree_flatten(tree)
    assert leaves == [1, 2, 3, 4, None, 5]  # None is a leaf; dict keys keep their order
    back = pytree.tree_unflatten(leaves, spec)
    assert back == tree and list(back) == ["b", "a", "c"] and type(back["a"]) is Point
    assert type(back["c"]) is collections.OrderedDict


def test_spec_repr():
    assert repr(pytree.tree_structure((1, 2))) == "TreeSpec(tuple, None, [*,\n  *])"
    assert repr(pytree.tree_structure([1, (2, 3)])) == (
        "TreeSpec(list, None, [*,\n  TreeSpec(tuple, None, [*,\n    *])])"
    )
    assert repr(pytree.tree_structure({"b": 1, "a": 2})) == "TreeSpec(dict, ['b', 'a'], [*,\n  *])"
    assert repr(pytree.tree_structure(7)) == "*"
    assert repr(pytree.tree_structure(())) == "TreeSpec(tuple, None, [])"


def test_pprint_and_equality():
    spec = pytree.tree_structure({"a": 1, "b": (2, 3)})
    assert pytree.treespec_pprint(spec) == "{'a': *, 'b': (*, *)}"
    assert spec == pytree.tree_structure({"a": 0, "b": (0, 0)})
    assert spec != pytree.tree_structure({"b": (0, 0), "a": 0})
    assert pytree.tree_structure((1,)) != pytree.tree_structure([1])


def test_tree_map_and_leaves():
    assert pytree.tree_map(lambda v: v * 2, (1, [2, {"a": 3}])) == (2, [4, {"a": 6}])
    assert pytree.tree_leaves([1, [2, [3]]]) == [1, 2, 3]


def test_unflatten_wrong_count():
    _, spec = pytree.tree_flatten({"b": 1, "a": 2})
    with pytest.raises(
        ValueError, match="`leaves` has length 1 but the spec refers to a pytree that holds 2 items"
    ):
        pytree.tree_unflatten([1], spec)


@pytest.mark.skipif(IS_REAL_TORCH, reason="torch's pytree recurses (COMMON rule: ours must not)")
def test_deep_structures_do_not_recurse():
    tree = 0
    for _ in range(5000):
        tree = [tree]
    leaves, spec = pytree.tree_flatten(tree)
    assert leaves == [0]
    back = pytree.tree_unflatten([1], spec)
    for _ in range(5000):
        back = back[0]
    assert back == 1
    assert spec == pytree.tree_structure(tree)
    assert repr(spec).count("TreeSpec") == 5000
