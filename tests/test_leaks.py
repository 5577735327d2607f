"""Memory: training-style loops do not leak tensors or resident memory, and backward()
releases what the graph saved.

The live tensor count comes from ``torch._C._live_tensor_count()``, a ferrograd-only
counter of tensors alive in the process; the assertions that need it are skipped where it
does not exist (real torch). RSS is read from ``/proc/self/statm`` and skipped where
``/proc`` is missing.
"""

import gc
import os

import ferrograd as torch
import pytest

ITERATIONS = 10_000
WARMUP = 500
RSS_SLACK_BYTES = 1 << 20  # 1 MiB


def live_tensor_count():
    counter = getattr(getattr(torch, "_C", None), "_live_tensor_count", None)
    return None if counter is None else counter()


def rss_bytes():
    try:
        with open("/proc/self/statm") as f:
            resident_pages = int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return resident_pages * os.sysconf("SC_PAGE_SIZE")


def settle():
    gc.collect()
    gc.collect()


def make_mlp():
    torch.manual_seed(0)
    w1 = (torch.randn(8, 16) * 0.3).requires_grad_()
    b1 = torch.zeros(16, requires_grad=True)
    w2 = (torch.randn(16, 1) * 0.3).requires_grad_()
    x = torch.randn(32, 8)
    return x, [w1, b1, w2]


def train_step(x, params):
    w1, b1, w2 = params
    h = (x @ w1 + b1).relu()
    loss = (h @ w2).sum()
    loss.backward()
    with torch.no_grad():
        for p in params:
            p.sub_(p.grad * 1e-3)
    for p in params:
        p.grad = None


def test_mlp_loop_does_not_leak():
    x, params = make_mlp()
    w2_initial = params[2].detach().clone()
    for _ in range(WARMUP):
        train_step(x, params)
    settle()
    count0 = live_tensor_count()
    rss0 = rss_bytes()

    for _ in range(ITERATIONS):
        train_step(x, params)
    settle()

    if count0 is not None:
        assert live_tensor_count() == count0
    if rss0 is not None:
        grown = rss_bytes() - rss0
        assert grown <= RSS_SLACK_BYTES, f"RSS grew by {grown} bytes over {ITERATIONS} steps"
    # sanity: the loop really ran backward and updated the parameters
    assert not torch.allclose(params[2].detach(), w2_initial)


def test_mlp_loop_with_grad_accumulation_does_not_leak_tensors():
    # .grad kept between steps (accumulated in place), zeroed like an optimizer would.
    if live_tensor_count() is None:
        pytest.skip("no live tensor counter (ferrograd only)")
    x, params = make_mlp()
    w1, b1, w2 = params

    def step():
        loss = ((x @ w1 + b1).relu() @ w2).sum()
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.grad.zero_()

    for _ in range(50):
        step()
    settle()
    count0 = live_tensor_count()
    for _ in range(1000):
        step()
    settle()
    assert live_tensor_count() == count0


def test_backward_frees_graph_when_result_deleted():
    if live_tensor_count() is None:
        pytest.skip("no live tensor counter (ferrograd only)")
    x = torch.randn(100, requires_grad=True)
    x.grad = torch.zeros(100)  # accumulate in place: no new tensor for .grad
    settle()
    baseline = live_tensor_count()
    y = x.exp()
    y.sum().backward()
    del y
    settle()
    assert live_tensor_count() == baseline
    assert torch.allclose(x.grad, x.detach().exp())


def test_backward_releases_saved_tensors_while_node_alive():
    # The node stays reachable (we hold it), but after backward without retain_graph it
    # must no longer hold the tensors it saved.
    if live_tensor_count() is None:
        pytest.skip("no live tensor counter (ferrograd only)")
    x = torch.randn(100, requires_grad=True)
    x.grad = torch.zeros(100)
    settle()
    baseline = live_tensor_count()
    y = x.exp()
    node = y.grad_fn
    y.sum().backward()
    del y
    settle()
    assert live_tensor_count() == baseline
    assert node.name() == "ExpBackward0"


def test_grad_call_frees_graph():
    if live_tensor_count() is None:
        pytest.skip("no live tensor counter (ferrograd only)")
    x = torch.randn(50, requires_grad=True)
    settle()
    baseline = live_tensor_count()
    for _ in range(100):
        (g,) = torch.autograd.grad((x.sigmoid() * x).sum(), x)
        del g
    settle()
    assert live_tensor_count() == baseline


def test_retain_graph_then_release_frees_everything():
    if live_tensor_count() is None:
        pytest.skip("no live tensor counter (ferrograd only)")
    x = torch.randn(50, requires_grad=True)
    x.grad = torch.zeros(50)
    settle()
    baseline = live_tensor_count()
    out = (x.exp() * x.tanh()).sum()
    out.backward(retain_graph=True)
    out.backward()
    del out
    settle()
    assert live_tensor_count() == baseline


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_create_graph_cycle_broken_by_resetting_grad():
    # create_graph=True makes .grad hold a graph that refers back to the parameter
    # (the documented reference cycle); resetting .grad to None releases it.
    if live_tensor_count() is None:
        pytest.skip("no live tensor counter (ferrograd only)")
    x = torch.randn(20, requires_grad=True)
    settle()
    baseline = live_tensor_count()
    for _ in range(50):
        (x.sin() * x).sum().backward(create_graph=True)
        x.grad = None
    settle()
    assert live_tensor_count() == baseline
