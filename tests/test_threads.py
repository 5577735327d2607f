"""Concurrent backward from Python threads (spec autograd.md §13.2).

Eight threads run forward+backward at once, each on its own graph and into one shared
leaf, and must neither crash nor hang; gradients stay exact.

Duration of the time-based soak: ``FERROGRAD_THREAD_TEST_SECONDS`` if set, otherwise the
issue's 20 s (set it lower for quick local runs). The count-based checks (each thread does
exactly K backward passes into the shared leaf, so its ``.grad`` must be 8*K times the
single-thread value) do not depend on the duration. All values are small integers in
float64 so every sum is exact whatever the order in which concurrent accumulations land.
"""

import os
import threading
import time

import ferrograd as torch

N_THREADS = 8


def soak_seconds():
    env = os.environ.get("FERROGRAD_THREAD_TEST_SECONDS")
    if env:
        return float(env)
    return 20.0


def run_threads(target, n=N_THREADS, join_timeout=60.0):
    """Start n threads running target(index), wait for them, and re-raise the first error.
    A thread still alive after join_timeout counts as a hang."""
    errors = []

    def wrapper(i):
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported to the main thread
            errors.append((i, e))

    threads = [threading.Thread(target=wrapper, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + join_timeout
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()))
    alive = [t.name for t in threads if t.is_alive()]
    assert not alive, f"threads still running after {join_timeout}s (hang?): {alive}"
    if errors:
        i, e = errors[0]
        raise AssertionError(f"thread {i} failed: {e!r}") from e


def inputs(i):
    """Small-integer inputs, distinct per thread."""
    base = [[-2, -1, 0], [1, 2, -2], [-1, 0, 1], [2, -2, -1]]
    return torch.tensor([[v + i % 3 for v in row] for row in base], dtype=torch.float64)


def own_graph_step(i):
    """Forward+backward on a graph private to the calling thread; returns the grad."""
    w = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)
    x = inputs(i)
    h = (x @ w).relu()
    loss = (h * h).sum() + (x @ w).sum()
    loss.backward()
    return w.grad


def shared_loss(x, w):
    return ((x @ w).relu() * 2).sum() + (x * 3).sum() * w.sum()


def shared_single_grad(x):
    w = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)
    shared_loss(x, w).backward()
    return w.grad.clone()


def test_threads_soak_separate_graphs_and_shared_leaf():
    seconds = soak_seconds()
    expected_own = [own_graph_step(i).clone() for i in range(N_THREADS)]
    shared = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)
    x_shared = inputs(0)
    single = shared_single_grad(x_shared)
    counts = [0] * N_THREADS
    barrier = threading.Barrier(N_THREADS)

    def work(i):
        barrier.wait(timeout=30)
        stop = time.monotonic() + seconds
        while time.monotonic() < stop:
            g = own_graph_step(i)
            assert g.tolist() == expected_own[i].tolist(), (g.tolist(), expected_own[i].tolist())
            shared_loss(x_shared, shared).backward()
            counts[i] += 1

    run_threads(work, join_timeout=seconds + 120)
    total = sum(counts)
    assert all(c > 0 for c in counts), counts
    assert shared.grad.tolist() == (single * total).tolist(), (shared.grad.tolist(), total)


def test_threads_exact_count_into_shared_leaf():
    k = 50
    shared = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)
    x = inputs(1)
    single = shared_single_grad(x)
    barrier = threading.Barrier(N_THREADS)

    def work(_):
        barrier.wait(timeout=30)
        for _ in range(k):
            shared_loss(x, shared).backward()

    run_threads(work)
    assert shared.grad.tolist() == (single * (N_THREADS * k)).tolist(), shared.grad.tolist()


def test_threads_one_backward_each_into_shared_leaf():
    shared = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)
    x = inputs(2)
    single = shared_single_grad(x)
    barrier = threading.Barrier(N_THREADS)

    def work(_):
        barrier.wait(timeout=30)
        shared_loss(x, shared).backward()

    run_threads(work)
    assert shared.grad.tolist() == (single * N_THREADS).tolist(), shared.grad.tolist()


def test_threads_concurrent_grad_on_shared_retained_graph():
    # One graph built once, differentiated by every thread at the same time.
    w = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)
    x = inputs(0)
    out = shared_loss(x, w)
    (expected,) = torch.autograd.grad(out, w, retain_graph=True)
    barrier = threading.Barrier(N_THREADS)

    def work(_):
        barrier.wait(timeout=30)
        for _ in range(20):
            (g,) = torch.autograd.grad(out, w, retain_graph=True)
            assert g.tolist() == expected.tolist()

    run_threads(work)
    assert w.grad is None


def test_threads_backward_results_independent_of_multithreading_flag():
    x = inputs(1)
    w1 = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)
    shared_loss(x, w1).backward()
    w2 = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)
    with torch.autograd.set_multithreading_enabled(False):
        shared_loss(x, w2).backward()
    assert w1.grad.tolist() == w2.grad.tolist()
