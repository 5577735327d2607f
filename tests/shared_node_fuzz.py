"""Random graphs whose Python objects reach each other through the Rust side, for
test_leaks_shared_nodes.py (run in a fresh interpreter: a wrong answer to the collector
can crash it).

Each seed builds a small graph: products, sums, views of views, in-place writes through
views, ops saved under pack hooks that keep what they pack, tensor and node hooks and
``grad_fn.metadata`` holding other tensors of the graph, attributes pointing at others.
A few tensors are kept; everything else is left to the collector. The same seed is run
twice, with and without ``gc.collect()`` before calling backward on what was kept: the
hooks called, the errors raised and the gradient must be the same (nothing still
reachable was freed or cleared), and after dropping everything no tensor may be left.
"""

import gc
import random

import ferrograd as torch


def build(seed):
    """The graph of `seed`: (kept tensors, the list hooks append to, the leaf)."""
    rng = random.Random(seed)
    torch.manual_seed(seed)
    calls = []
    x = torch.randn(4, 4, requires_grad=True)
    ts = [x]

    def pick():
        return rng.choice(ts)

    for _ in range(rng.randint(2, 9)):
        ts.extend(random_op(rng, pick))
    for j, t in enumerate(ts):
        attach(rng, j, t, [pick() for _ in range(rng.randint(0, 2))], calls)
    return rng.sample(ts, rng.randint(0, min(3, len(ts)))), calls, x


def random_op(rng, pick):
    """One or two new 4x4 tensors made from earlier ones."""
    s = pick()
    kind = rng.randrange(7)
    if kind == 0:
        return [s * 2]
    if kind == 1:
        return [s + pick()]
    if kind == 2:
        return [s[:, :]]
    if kind == 3:
        return [s.view(16).view(4, 4)]
    if kind == 4:
        with torch.autograd.graph.saved_tensors_hooks(*pack_hooks(rng, pick)):
            return [s.exp() if rng.random() < 0.5 else s * pick()]
    if kind == 5:
        base = s * 1.0
        view = base[:, :] if rng.random() < 0.5 else base.view(16).view(4, 4)
        view.mul_(1.0)
        return [base, view]
    t = s * 1.0
    t.mul_(2.0)
    return [t]


def pack_hooks(rng, pick):
    """Identity hooks (the saved tensor keeps itself), or hooks that store what they pack
    in a list their closures share, along with unrelated tensors of the graph."""
    if rng.random() < 0.5:
        return (lambda t: t), (lambda t: t)
    store = [pick() for _ in range(rng.randint(0, 2))]

    def pack(t):
        store.append(t)
        return len(store) - 1

    def unpack(i):
        return store[i]

    return pack, unpack


def attach(rng, tag, t, captured, calls):
    """A hook, node hook or metadata entry on `t` that holds `captured`, or an attribute."""

    def touch():
        calls.append(tag)
        return [c.shape for c in captured]

    r = rng.random()
    if r < 0.35:
        t.register_hook(lambda g: (touch(), g)[1])
    elif r < 0.5 and t.grad_fn is not None:
        t.grad_fn.register_hook(lambda gi, go: (touch(), None)[1])
    elif r < 0.6 and t.grad_fn is not None:
        t.grad_fn.register_prehook(lambda go: (touch(), None)[1])
    elif r < 0.7 and t.grad_fn is not None:
        t.grad_fn.metadata["kept"] = captured
    elif r < 0.8:
        t.partner = captured


def run(seed, collect):
    kept, calls, x = build(seed)
    if collect:
        gc.collect()
        gc.collect()
    outcomes = []
    for k in kept:
        if k.grad_fn is None:
            continue
        try:
            k.sum().backward(retain_graph=True)
            outcomes.append("ok")
        except RuntimeError as e:
            outcomes.append(str(e)[:80])
    grad = None if x.grad is None else x.grad.tolist()
    return list(calls), outcomes, grad


def main(seeds):
    gc.disable()  # collections only where the test asks for them
    gc.collect()
    before = torch._C._live_tensor_count()
    for seed in seeds:
        plain = run(seed, collect=False)
        collected = run(seed, collect=True)
        assert plain == collected, (seed, plain, collected)
    gc.collect()
    gc.collect()
    left = torch._C._live_tensor_count() - before
    assert left == 0, f"{left} tensors left"
    print("fuzz ok")
