"""Memory: Python objects that ferrograd holds on the Rust side (hooks, multi-grad hooks,
saved-tensor pack results, the graph behind a create_graph ``.grad``) are visible to
Python's cycle collector, so reference cycles through them are collected (DESIGN.md,
"Errors and safety"; spec autograd.md §10, §11).

Every test builds the same small cycle ``ITERATIONS`` times in a helper (so no local of the
loop outlives it), keeps only weak references to what it created, runs ``gc.collect()``
and expects no survivor.

Real torch leaks in several of these patterns: its C++ autograd nodes own the Python
hooks (and ``.grad`` owns the graph) through strong references the cycle collector cannot
see, so a cycle running through a node is never found. Those tests are skipped under the
shim (``torch leaks here; ferrograd must not``); each says what torch does. The leaf-hook
case is the exception: a leaf keeps its hooks on the Python tensor object, torch traverses
them, and the test runs against torch too.
"""

import gc
import weakref

import ferrograd as torch
import pytest

MOD = torch.__name__
IS_REAL_TORCH = MOD == "torch"

ITERATIONS = 200

torch_leaks = pytest.mark.skipif(IS_REAL_TORCH, reason="torch leaks here; ferrograd must not")
not_checked_against_torch = pytest.mark.skipif(IS_REAL_TORCH, reason="not checked against torch")


def live_tensor_count():
    """Tensors alive in the process, Python-visible or not (ferrograd only; None under
    the shim). A Python object can be freed while the tensor behind it leaks."""
    counter = getattr(getattr(torch, "_C", None), "_live_tensor_count", None)
    return None if counter is None else counter()


def survivors(make_one, n=ITERATIONS):
    """Call ``make_one()`` n times; each call returns weak references to what it created.
    Return how many of those objects are still alive after a full collection, plus (in
    ferrograd) how many more tensors are alive than before."""
    gc.collect()
    before = live_tensor_count()
    refs = []
    for _ in range(n):
        refs.extend(make_one())
    gc.collect()
    gc.collect()
    alive = sum(r() is not None for r in refs)
    after = live_tensor_count()
    return alive + (0 if before is None else max(0, after - before))


# --------------------------------------------------------------------------- tensor hooks


def test_leaf_hook_closing_over_its_leaf_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        x.register_hook(lambda g: g * x.sum())
        (x * 2).sum().backward()
        return [weakref.ref(x)]

    assert survivors(make_one) == 0


def test_leaf_hook_closing_over_its_leaf_without_backward_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        x.register_hook(lambda g: g * x.sum())
        y = (x * 2).sum()
        return [weakref.ref(x), weakref.ref(y)]

    assert survivors(make_one) == 0


# torch: non-leaf tensor hooks live on the C++ grad_fn (as a tensor pre-hook holding the
# Python dict); the tensor -> grad_fn -> hook -> closure -> tensor cycle is invisible to
# the collector, so all 200 survive.
@torch_leaks
def test_nonleaf_hook_closing_over_its_tensor_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g * y.sum())
        y.sum().backward()
        return [weakref.ref(x), weakref.ref(y)]

    assert survivors(make_one) == 0


@torch_leaks
def test_nonleaf_hook_closing_over_its_tensor_without_backward_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g * y.sum())
        return [weakref.ref(x), weakref.ref(y)]

    assert survivors(make_one) == 0


@torch_leaks
def test_nonleaf_hook_after_retain_graph_backward_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g * y.sum())
        y.sum().backward(retain_graph=True)
        return [weakref.ref(x), weakref.ref(y)]

    assert survivors(make_one) == 0


# torch: same as above, the post-accumulate hook is owned by C++ and not traversed.
@torch_leaks
def test_post_accumulate_hook_closing_over_its_leaf_is_collected():
    def make_one():
        w = torch.randn(3, requires_grad=True)

        def hook(p):
            w.grad = None

        w.register_post_accumulate_grad_hook(hook)
        (w * 2).sum().backward()
        return [weakref.ref(w)]

    assert survivors(make_one) == 0


# --------------------------------------------------------------------------- node hooks


# torch: the grad_fn owns the hook; y -> grad_fn -> hook -> closure -> y is not traversed.
@torch_leaks
def test_node_post_hook_closing_over_output_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        y = x * 2
        y.grad_fn.register_hook(lambda gI, gO: (y.sum(), None)[1])
        y.sum().backward()
        return [weakref.ref(x), weakref.ref(y)]

    assert survivors(make_one) == 0


@torch_leaks
def test_node_pre_hook_closing_over_output_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        y = x * 2
        y.grad_fn.register_prehook(lambda gO: (y.sum(), None)[1])
        return [weakref.ref(x), weakref.ref(y)]

    assert survivors(make_one) == 0


def test_accumulate_grad_hook_closing_over_its_leaf_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        y = x * 2
        y.grad_fn.next_functions[0][0].register_hook(lambda gI, gO: (x.sum(), None)[1])
        y.sum().backward()
        return [weakref.ref(x), weakref.ref(y)]

    assert survivors(make_one) == 0


# torch: built on tensor hooks of non-leaves, so it inherits their leak.
@torch_leaks
def test_multi_grad_hook_closing_over_its_tensors_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        y = x * 2
        torch.autograd.graph.register_multi_grad_hook((x, y), lambda gs: (x, y))
        (y * 3).sum().backward()
        return [weakref.ref(x), weakref.ref(y)]

    assert survivors(make_one) == 0


# --------------------------------------------------------------------------- saved tensors


# torch: the docs warn that a pack hook returning its argument creates a reference cycle
# (output -> grad_fn -> packed output); the C++ SavedVariable is not traversed.
@torch_leaks
def test_pack_hook_returning_its_argument_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x.exp()  # saves its own output
        return [weakref.ref(x), weakref.ref(y)]

    assert survivors(make_one) == 0


def test_pack_hook_closing_over_graph_tensor_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        y = x * 2
        with torch.autograd.graph.saved_tensors_hooks(lambda t: (y, t.detach())[1], lambda t: t):
            z = y.exp()
        return [weakref.ref(x), weakref.ref(y), weakref.ref(z)]

    assert survivors(make_one) == 0


# --------------------------------------------------------------------------- create_graph


# torch: backward(create_graph=True) stores a .grad whose graph reaches the parameter's
# AccumulateGrad node, which holds the parameter, which holds the .grad (torch's own warning:
# "will create a reference cycle between the parameter and its gradient which can cause a
# memory leak"). The cycle runs through C++, so all 200 parameters survive.
@torch_leaks
@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_create_graph_backward_grad_cycle_is_collected():
    def make_one():
        w = torch.randn(3, requires_grad=True)
        loss = (w * w).sum()
        loss.backward(create_graph=True)
        assert w.grad.grad_fn is not None  # .grad points into the graph
        return [weakref.ref(w), weakref.ref(w.grad)]

    assert survivors(make_one) == 0


@torch_leaks
@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_create_graph_backward_through_nonleaf_is_collected():
    def make_one():
        w = torch.randn(3, requires_grad=True)
        h = w.exp()
        loss = (h * w).sum()
        loss.backward(create_graph=True)
        return [weakref.ref(w), weakref.ref(h), weakref.ref(w.grad)]

    assert survivors(make_one) == 0


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_create_graph_cycle_broken_by_resetting_grad():
    # The spec's advice (reset .grad to None after use) works everywhere, torch included.
    def make_one():
        w = torch.randn(3, requires_grad=True)
        (w * w).sum().backward(create_graph=True)
        w.grad = None
        return [weakref.ref(w)]

    assert survivors(make_one) == 0


@torch_leaks
@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_create_graph_backward_through_saved_views_is_collected():
    # The .grad graph holds views of the parameter (w[0], w[1:]), which hold it as their base.
    def make_one():
        w = torch.randn(3, requires_grad=True)
        loss = (w[0] * w[1:]).sum()
        loss.backward(create_graph=True)
        return [weakref.ref(w)]

    assert survivors(make_one) == 0


@torch_leaks
def test_pack_hook_keeping_the_base_of_a_view_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            b = x.exp()  # keeps itself through the pack hook
        v = b[1:]
        return [weakref.ref(x), weakref.ref(v), weakref.ref(b)]

    assert survivors(make_one) == 0


# --------------------------------------------------------------------------- node state


@not_checked_against_torch
def test_function_ctx_attribute_holding_output_is_collected():
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    def make_one():
        x = torch.randn(3, requires_grad=True)
        y = Double.apply(x)
        y.grad_fn.output = y  # the ctx (y's grad_fn) holds y
        return [weakref.ref(x), weakref.ref(y)]

    assert survivors(make_one) == 0


@not_checked_against_torch
def test_node_metadata_holding_output_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        y = x * 2
        y.grad_fn.metadata["output"] = y
        return [weakref.ref(x), weakref.ref(y)]

    assert survivors(make_one) == 0


# --------------------------------------------------------------------------- issue 7, section 4


# torch: the pack closure's list holds the output, whose grad_fn (C++) holds the unpack
# hook, which closes over the list; the C++ SavedVariable is not traversed: all survive.
@torch_leaks
def test_pack_hook_closure_keeping_what_it_packs_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        kept = []

        def pack(t):
            kept.append(t)
            return len(kept) - 1

        def unpack(i):
            return kept[i]

        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.exp()  # saves its output: kept holds y
        return [weakref.ref(x), weakref.ref(y), weakref.ref(pack), weakref.ref(unpack)]

    assert survivors(make_one) == 0


@torch_leaks
def test_pack_hook_closure_keeping_inputs_and_outputs_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        kept = {}

        def pack(t):
            kept[id(t)] = t
            return id(t)

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda i: kept[i]):
            y = (x * 2).sigmoid() * 3
        return [weakref.ref(x), weakref.ref(y), weakref.ref(pack)]

    assert survivors(make_one) == 0


# torch: same (400 of 400 survive).
@torch_leaks
def test_unpack_hook_is_freed_with_its_graph():
    class Unpack:
        def __call__(self, t):
            return t

    def make_one():
        x = torch.randn(3, requires_grad=True)
        unpack = Unpack()
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            y = x.exp()
        return [weakref.ref(unpack), weakref.ref(y)]

    assert survivors(make_one) == 0


def test_unpack_hook_of_a_live_graph_still_runs():
    # Nothing may be freed early: a graph still reachable keeps its hooks working
    # through collections.
    calls = []

    def make_graph():
        x = torch.randn(3, requires_grad=True)
        kept = []

        def pack(t):
            kept.append(t)
            return len(kept) - 1

        def unpack(i):
            calls.append(i)
            return kept[i]

        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.exp()
        return x, y

    x, y = make_graph()
    gc.collect()
    gc.collect()
    y.sum().backward()
    assert calls == [0]
    assert torch.allclose(x.grad, x.exp())


# torch: non-leaf hooks live on C++ nodes; all 600 survive.
@torch_leaks
def test_cycle_through_a_node_shared_by_two_tensors_graphs_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        h = x * 2  # h's node is in both a's and b's graphs
        a = h + 1
        b = h - 1
        a.register_hook(lambda g: (b, g)[1])
        b.register_hook(lambda g: (a, g)[1])
        return [weakref.ref(x), weakref.ref(h), weakref.ref(a), weakref.ref(b)]

    assert survivors(make_one) == 0


# torch: all 600 survive.
@torch_leaks
def test_cycle_through_a_chain_of_views_of_views_is_collected():
    def make_one():
        x = torch.randn(4, 4, requires_grad=True)
        h = x * 2
        v = h
        for _ in range(10):
            v = v.view(16).view(4, 4)[:, :]
        v.register_hook(lambda g: (v, g)[1])
        return [weakref.ref(x), weakref.ref(h), weakref.ref(v)]

    assert survivors(make_one) == 0


@torch_leaks
def test_hook_on_a_base_closing_over_its_view_of_views_is_collected():
    def make_one():
        x = torch.randn(4, 4, requires_grad=True)
        h = x * 2
        v = h
        for _ in range(10):
            v = v[:, :]
        h.register_hook(lambda g: (v, g)[1])
        return [weakref.ref(x), weakref.ref(h), weakref.ref(v)]

    assert survivors(make_one) == 0


@torch_leaks
def test_cycle_between_two_tensors_of_one_chain_is_collected():
    def make_one():
        x = torch.randn(3, requires_grad=True)
        a = x * 2
        b = a * 3  # b's graph runs through a's node
        a.register_hook(lambda g: (b, g)[1])
        b.register_hook(lambda g: (a, g)[1])
        return [weakref.ref(x), weakref.ref(a), weakref.ref(b)]

    assert survivors(make_one) == 0


@torch_leaks
def test_pack_hooks_in_a_chain_of_views_of_views_are_collected():
    def make_one():
        x = torch.randn(4, 4, requires_grad=True)
        v = x * 2
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            for _ in range(10):
                v = v[1:].exp()[:, 1:]
        return [weakref.ref(x), weakref.ref(v)]

    assert survivors(make_one) == 0


@torch_leaks
def test_in_place_through_views_of_views_with_hook_is_collected():
    def make_one():
        x = torch.randn(4, 4, requires_grad=True)
        h = x * 2
        v = h
        for _ in range(10):
            v = v[:, :]
            v.mul_(1.0)
        v.register_hook(lambda g: (v, h, g)[2])
        return [weakref.ref(x), weakref.ref(h), weakref.ref(v)]

    assert survivors(make_one) == 0
