"""Memory and soundness: reference cycles through graph nodes that several Python tensors
share (issue 7, section 4; DESIGN.md "Errors and safety").

A node reachable from two Python tensor objects is owned by neither alone. The collector
hears about what such a node holds from the one tensor object that every path to it
passes through (``autograd::foreign``). Both sides are checked here: such cycles are
collected, in one collection; and nothing still reachable is freed early: what is kept
from outside survives, and its hooks still run after a collection.

Shapes where an early free would crash the interpreter run in a fresh one
(``run_isolated``), so a crash fails the test instead of the run.
"""

import gc
import weakref

import ferrograd as torch
import pytest
from test_leaks_hooks import IS_REAL_TORCH, survivors, torch_leaks

ferrograd_only = pytest.mark.skipif(IS_REAL_TORCH, reason="uses ferrograd's tensor counter")


def after_one_collection(make_one, n=100):
    """Like ``survivors``, but with a single ``gc.collect()``."""
    gc.collect()
    before = torch._C._live_tensor_count()
    refs = []
    for _ in range(n):
        refs.extend(make_one())
    gc.collect()
    alive = sum(r() is not None for r in refs)
    return alive + max(0, torch._C._live_tensor_count() - before)


# --------------------------------------------------------------------------- collected


def chain_of_three():
    x = torch.randn(3, requires_grad=True)
    a = x * 2
    b = a * 3
    c = b * 4  # c's graph runs through b's and a's nodes
    a.register_hook(lambda g: (b, g)[1])
    b.register_hook(lambda g: (c, g)[1])
    c.register_hook(lambda g: (a, g)[1])
    return [weakref.ref(t) for t in (x, a, b, c)]


def metadata_across_a_chain():
    x = torch.randn(3, requires_grad=True)
    a = x * 2
    b = a.exp()
    a.grad_fn.metadata["later"] = b
    b.grad_fn.metadata["earlier"] = a
    return [weakref.ref(t) for t in (x, a, b)]


def pack_hook_and_tensor_hook():
    x = torch.randn(3, requires_grad=True)
    kept = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: kept.append(t) or t, lambda t: t):
        a = x.exp()  # saves a itself: a's node keeps a
    b = a * 2
    a.register_hook(lambda g: (b, g)[1])
    return [weakref.ref(t) for t in (x, a, b)]


def function_ctx_holding_its_output_and_a_later_tensor():
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.randn(3, requires_grad=True)
    a = Double.apply(x)
    b = a * 3  # b's node holds a's node (the ctx) too
    a.grad_fn.kept = (a, b)
    return [weakref.ref(t) for t in (x, a, b)]


def long_chain_of_views_with_pack_hooks():
    x = torch.randn(48, 48, requires_grad=True)
    v = x * 2
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        for _ in range(40):
            v = v[1:].exp()[:, 1:]
    return [weakref.ref(x), weakref.ref(v)]


SHAPES = [
    chain_of_three,
    metadata_across_a_chain,
    pack_hook_and_tensor_hook,
    function_ctx_holding_its_output_and_a_later_tensor,
    long_chain_of_views_with_pack_hooks,
]


# torch: each of these cycles runs through C++ nodes the collector cannot see; all survive.
@torch_leaks
@pytest.mark.parametrize("make_one", SHAPES, ids=lambda f: f.__name__)
def test_cycle_through_shared_nodes_is_collected(make_one):
    assert survivors(make_one) == 0


@torch_leaks
@pytest.mark.parametrize("make_one", SHAPES, ids=lambda f: f.__name__)
def test_cycle_through_shared_nodes_needs_one_collection(make_one):
    assert after_one_collection(make_one) == 0


# --------------------------------------------------------------------------- kept alive


@pytest.mark.parametrize("kept", ["later", "earlier"])
def test_cycle_kept_from_outside_survives_and_its_hooks_still_run(kept):
    calls = []

    def make():
        x = torch.randn(3, requires_grad=True)
        a = x * 2
        b = a * 3
        a.register_hook(lambda g: (calls.append("a"), b, g)[2])
        b.register_hook(lambda g: (calls.append("b"), a, g)[2])
        # The other one is reachable only through the kept one's hook.
        return (x, b, weakref.ref(a)) if kept == "later" else (x, a, weakref.ref(b))

    x, one, other = make()
    gc.collect()
    gc.collect()
    assert other() is not None
    b = one if kept == "later" else other()
    b.sum().backward()
    assert calls == ["b", "a"]
    assert x.grad.tolist() == [6.0, 6.0, 6.0]


def test_hook_on_a_node_shared_with_a_live_tensor_runs_after_its_tensor_object_is_collected():
    calls = []

    def make():
        x = torch.randn(3, requires_grad=True)
        a = x * 2
        b = a * 3
        a.register_hook(lambda g: (calls.append("a"), g)[1])
        junk = [a]
        junk.append(junk)  # a's Python object is now only in a garbage cycle
        return x, b

    x, b = make()
    gc.collect()
    gc.collect()
    b.sum().backward()
    assert calls == ["a"]
    assert x.grad.tolist() == [6.0, 6.0, 6.0]


def test_hook_deep_under_a_live_graph_runs_after_its_tensor_object_is_collected(run_isolated):
    # a's node is also held from a live graph, but too deep for any walk from the live
    # tensor object to see: the garbage object of a alone must not answer for its hook
    # (an answer from both would only read as "held from outside" in a release build).
    proc = run_isolated(
        """
        import gc
        calls = []

        def make():
            x = torch.randn(3, requires_grad=True)
            a = x * 2
            a.register_hook(lambda g: (calls.append("a"), g)[1])
            junk = [a]
            junk.append(junk)  # a's Python object is now only in a garbage cycle
            c = a
            for _ in range(3000):
                c = c * 1.0
            return x, c

        x, c = make()
        gc.collect()
        gc.collect()
        c.sum().backward()
        assert calls == ["a"], calls
        print("ok")
        """
    )
    assert "ok" in proc.stdout


def test_kept_link_of_a_chain_of_views_keeps_its_history_and_unpack_hooks():
    unpacked = []

    def make():
        x = torch.randn(12, 12, requires_grad=True)
        v = x * 2
        links = []
        with torch.autograd.graph.saved_tensors_hooks(
            lambda t: t, lambda t: (unpacked.append(1), t)[1]
        ):
            for _ in range(10):
                v = v[1:].exp()[:, 1:]
                links.append(v)
        return x, links[4], weakref.ref(links[-1]._base)

    x, middle, last = make()
    gc.collect()
    gc.collect()
    assert last() is None  # the links after the kept one were garbage (each kept itself)
    middle.sum().backward()
    assert len(unpacked) == 5  # one saved exp output per link up to the kept one
    assert x.grad.shape == (12, 12)


# --------------------------------------------------------------------------- isolated


@pytest.mark.parametrize("ask_first", [False, True], ids=["", "after_get_referents"])
def test_finalizer_that_gives_a_garbage_graph_a_live_holder(run_isolated, ask_first):
    # The collector's second pass (after finalizers) must see the new holder: the hook
    # on b's node is reachable again and must not be cleared. With ask_first, answers
    # computed for Python code during the collection (gc.get_referents in a finalizer,
    # before the graph changes) must not be reused by that pass either.
    proc = run_isolated(
        f"""
        import gc
        live = []

        class Keeper:
            def __del__(self):
                if {ask_first}:
                    gc.get_referents(self.b)
                live.append(self.b * 1)

        def make():
            x = torch.randn(3, requires_grad=True)
            b = x * 2
            b.register_hook(lambda g: (b, g)[1] * 2)
            keeper = Keeper()
            keeper.b = b
            keeper.me = keeper

        for _ in range(20):
            make()
        gc.collect()
        for t in live:
            t.sum().backward()
        live.clear()
        gc.collect()
        gc.collect()
        print("ok")
        """
    )
    assert "ok" in proc.stdout


@ferrograd_only
def test_collecting_while_other_threads_run_backward_through_shared_nodes(run_isolated):
    proc = run_isolated(
        """
        import gc, threading
        stop = threading.Event()
        errors = []

        def one_round():  # leaves a garbage cycle through a's node
            x = torch.randn(8, requires_grad=True)
            a = x * 2
            b = a * 3
            a.register_hook(lambda g: (b, g)[1])
            b.register_hook(lambda g: (a, g)[1])
            with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                c = b.exp()[1:]
            c.sum().backward()
            assert x.grad is not None

        def worker():
            try:
                while not stop.is_set():
                    one_round()
            except Exception as e:
                errors.append(e)

        threads = [threading.Thread(target=worker) for _ in range(3)]
        for t in threads:
            t.start()
        for _ in range(300):
            gc.collect()
        stop.set()
        for t in threads:
            t.join()
        assert not errors, errors
        gc.collect()
        gc.collect()
        before = torch._C._live_tensor_count()
        one_round()
        gc.collect()
        assert torch._C._live_tensor_count() == before
        print("ok")
        """,
        timeout=240,
    )
    assert "ok" in proc.stdout


@ferrograd_only
def test_random_graphs_behave_the_same_with_and_without_a_collection(run_isolated):
    proc = run_isolated(
        """
        import shared_node_fuzz
        shared_node_fuzz.main(range(300))
        """,
        timeout=240,
    )
    assert "fuzz ok" in proc.stdout
