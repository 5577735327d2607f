"""Python callbacks in backward from several threads (spec autograd.md §10, §13.2; DESIGN.md
"The backward engine": a node whose rule or hook is Python re-attaches to the interpreter
on whatever thread runs it).

Four threads run backward passes whose graphs contain a Python ``autograd.Function`` and
every kind of Python hook, 1,000 passes in all, while the main thread holds a
``threading.Lock`` the callbacks never touch. Nothing may deadlock (threads are joined with
a timeout; a thread still alive counts as a hang) and every gradient is exact: all values
are small integers in float64, so sums are exact whatever order concurrent accumulations
land in.
"""

import gc
import threading
import time

import ferrograd as torch

N_THREADS = 4
TOTAL_PASSES = 1_000
JOIN_TIMEOUT_S = 120.0

BASE = [1.0, -2.0, 3.0]
SHARED = [1.0, 2.0, -1.0]


def square_function():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    return Square


def run_threads(target, n, join_timeout=JOIN_TIMEOUT_S):
    """Start n threads running target(index), join them, re-raise the first error. A thread
    still alive after join_timeout counts as a hang."""
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
    assert not alive, f"threads still running after {join_timeout}s (deadlock?): {alive}"
    if errors:
        i, e = errors[0]
        raise AssertionError(f"thread {i} failed: {e!r}") from e


def x_values(k):
    return [v + k % 3 for v in BASE]


def one_pass(k, Square, shared, calls):
    """Forward+backward through Square with a tensor hook, node pre/post hooks and a
    post-accumulate hook; checks its own leaf's gradient and counts the hook calls in
    ``calls`` (a dict private to the calling thread)."""
    x = torch.tensor(x_values(k), dtype=torch.float64, requires_grad=True)
    y = Square.apply(x)

    def tensor_hook(g):
        calls["tensor"] += 1
        return g * 2

    def node_pre(grad_outputs):
        calls["node_pre"] += 1

    def node_post(grad_inputs, grad_outputs):
        calls["node_post"] += 1

    def post_accumulate(p):
        calls["post_acc"] += 1

    y.register_hook(tensor_hook)
    y.grad_fn.register_prehook(node_pre)
    y.grad_fn.register_hook(node_post)
    x.register_post_accumulate_grad_hook(post_accumulate)
    (y * shared).sum().backward()
    # d/dx sum(2 * x**2 * s) via the hook's doubling: 4 * x * s
    expected = [4 * xv * sv for xv, sv in zip(x_values(k), SHARED)]
    assert x.grad.tolist() == expected, (k, x.grad.tolist(), expected)


def expected_shared_grad(n_passes_by_worker):
    total = [0.0, 0.0, 0.0]
    for n in n_passes_by_worker:
        for k in range(n):
            for j, xv in enumerate(x_values(k)):
                total[j] += xv * xv  # y = x**2 multiplies shared
    return total


def test_python_function_and_hooks_from_four_threads_while_main_holds_lock():
    Square = square_function()
    shared = torch.tensor(SHARED, dtype=torch.float64, requires_grad=True)
    per_thread = TOTAL_PASSES // N_THREADS
    counts = [
        dict.fromkeys(("tensor", "node_pre", "node_post", "post_acc"), 0) for _ in range(N_THREADS)
    ]
    main_lock = threading.Lock()

    def worker(i):
        for k in range(per_thread):
            one_pass(k, Square, shared, counts[i])

    with main_lock:
        run_threads(worker, N_THREADS)
        assert main_lock.locked()

    for c in counts:
        assert c == {
            "tensor": per_thread,
            "node_pre": per_thread,
            "node_post": per_thread,
            "post_acc": per_thread,
        }
    assert shared.grad.tolist() == expected_shared_grad([per_thread] * N_THREADS)


def test_main_thread_runs_hooked_backward_while_holding_lock():
    # Same work, split 4 workers + the main thread (200 passes each, 1,000 in all); the
    # main thread runs its share while holding the lock and while the workers run theirs.
    Square = square_function()
    shared = torch.tensor(SHARED, dtype=torch.float64, requires_grad=True)
    n_workers = N_THREADS
    share = TOTAL_PASSES // (n_workers + 1)
    counts = [
        dict.fromkeys(("tensor", "node_pre", "node_post", "post_acc"), 0)
        for _ in range(n_workers + 1)
    ]
    main_lock = threading.Lock()
    errors = []

    def worker(i):
        try:
            for k in range(share):
                one_pass(k, Square, shared, counts[i])
        except BaseException as e:  # noqa: BLE001 - reported to the main thread
            errors.append((i, e))

    with main_lock:
        threads = [
            threading.Thread(target=worker, args=(i,), daemon=True) for i in range(n_workers)
        ]
        for t in threads:
            t.start()
        for k in range(share):
            one_pass(k, Square, shared, counts[n_workers])
        deadline = time.monotonic() + JOIN_TIMEOUT_S
        for t in threads:
            t.join(timeout=max(0.0, deadline - time.monotonic()))
        assert not [t for t in threads if t.is_alive()], "deadlock: workers still running"
    assert not errors, errors[0]
    for c in counts:
        assert set(c.values()) == {share}
    assert shared.grad.tolist() == expected_shared_grad([share] * (n_workers + 1))


def test_hook_running_nested_grad_from_four_threads():
    # A tensor hook that itself calls autograd.grad (a backward inside a backward), from
    # four threads at once, 1,000 outer passes in all.
    Square = square_function()
    per_thread = TOTAL_PASSES // N_THREADS
    main_lock = threading.Lock()

    def worker(i):
        for k in range(per_thread):
            x = torch.tensor(x_values(k), dtype=torch.float64, requires_grad=True)
            y = Square.apply(x)

            def hook(g):
                with torch.enable_grad():
                    t = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
                    (gt,) = torch.autograd.grad(Square.apply(t).sum(), t)  # 2t
                return g * gt

            y.register_hook(hook)
            (gx,) = torch.autograd.grad(y.sum(), x)
            expected = [2 * xv * tv for xv, tv in zip(x_values(k), [2.0, 4.0, 6.0])]
            assert gx.tolist() == expected, (i, k, gx.tolist(), expected)

    with main_lock:
        run_threads(worker, N_THREADS)


def test_node_hooks_on_shared_graph_from_four_threads():
    # One retained graph with Python node hooks, differentiated by four threads at once
    # (250 passes each): the hooks run concurrently on one node.
    Square = square_function()
    x = torch.tensor(BASE, dtype=torch.float64, requires_grad=True)
    y = Square.apply(x)
    out = (y * 3).sum()
    lock = threading.Lock()  # the hooks' own counter lock, not the main thread's
    hook_calls = [0]

    def node_post(grad_inputs, grad_outputs):
        with lock:
            hook_calls[0] += 1

    y.grad_fn.register_hook(node_post)
    per_thread = TOTAL_PASSES // N_THREADS
    main_lock = threading.Lock()

    def worker(i):
        for _ in range(per_thread):
            (gx,) = torch.autograd.grad(out, x, retain_graph=True)
            assert gx.tolist() == [6 * v for v in BASE]

    with main_lock:
        run_threads(worker, N_THREADS)
    assert hook_calls[0] == TOTAL_PASSES


def test_collector_runs_while_threads_run_hooked_backward():
    # The cycle collector walks what tensors own on the Rust side (bindings/gc.rs) while
    # engine threads change it. Four threads run passes whose hooks close over their own
    # tensors (cycles through Rust-held hooks), and a shared leaf carries a hook that
    # closes over itself; the main thread collects all the while. Every hook must still
    # run (a hook the collector wrongly cleared fails with NameError) and every gradient
    # must be exact.
    Square = square_function()
    shared = torch.tensor(SHARED, dtype=torch.float64, requires_grad=True)
    shared_calls = []
    shared.register_hook(lambda g: shared_calls.append(shared.shape) or g)
    per_thread = TOTAL_PASSES // N_THREADS
    done = threading.Event()

    def hooked_pass(i, k):
        x = torch.tensor(x_values(k), dtype=torch.float64, requires_grad=True)
        y = Square.apply(x)
        y.register_hook(lambda g: g + 0 * y.detach())  # closes over y: a cycle
        x.register_hook(lambda g: g + 0 * x.detach())  # closes over x
        (y * shared).sum().backward()
        expected = [2 * xv * sv for xv, sv in zip(x_values(k), SHARED)]
        assert x.grad.tolist() == expected, (i, k, x.grad.tolist(), expected)

    def worker(i):
        for k in range(per_thread):
            hooked_pass(i, k)

    def collect():
        # Young generations: that is where the passes' tensors are, and a full collection
        # of a large heap (real torch's) would starve the workers of the GIL.
        while not done.is_set():
            gc.collect(1)
            done.wait(0.0005)

    collector = threading.Thread(target=collect, daemon=True)
    collector.start()
    try:
        run_threads(worker, N_THREADS)
    finally:
        done.set()
        collector.join(timeout=JOIN_TIMEOUT_S)
    assert len(shared_calls) == per_thread * N_THREADS
    assert shared.grad.tolist() == expected_shared_grad([per_thread] * N_THREADS)
