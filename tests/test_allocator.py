"""The caching allocator (issue 8 §4): freed tensor buffers are reused by size class, the
cache is bounded, ``ferrograd.empty_cache()`` releases it, and a training loop's memory
stays flat. ferrograd-only: torch's CPU allocator has no cache to inspect."""

import resource

import ferrograd as torch
import pytest

from conftest import IS_REAL_TORCH

pytestmark = pytest.mark.skipif(IS_REAL_TORCH, reason="ferrograd's allocator")


def stats():
    kept, hits, misses = torch._C._cache_stats()
    return kept, hits, misses


def test_outputs_reuse_freed_buffers_without_new_page_faults():
    x = torch.ones(256, 256)
    outs = [x * 0.5 for _ in range(20)]  # warm: 20 blocks of this class exist
    del outs
    _, hits0, misses0 = stats()
    faults0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        outs = [x * 0.5 for _ in range(20)]
        del outs
    _, hits1, misses1 = stats()
    faults1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    assert hits1 - hits0 >= 100
    assert misses1 - misses0 <= 5
    # 100 fresh 256 KiB outputs would fault in 6,400 pages.
    assert faults1 - faults0 < 1000


def test_reused_zeros_are_zero():
    x = torch.full((300, 300), 7.0)
    del x
    z = torch.zeros(300, 300)
    assert z.abs().sum().item() == 0.0


def test_empty_cache_returns_every_block():
    outs = [torch.ones(512, 512) for _ in range(4)]
    del outs
    assert stats()[0] > 0
    torch.empty_cache()
    assert stats()[0] == 0


def test_training_loop_memory_is_flat():
    w1 = torch.randn(256, 512, requires_grad=True)
    w2 = torch.randn(512, 64, requires_grad=True)
    x = torch.randn(128, 256)

    def step():
        loss = (x @ w1).tanh().matmul(w2).pow(2).mean()
        loss.backward()
        with torch.no_grad():
            w1.sub_(0.01 * w1.grad)
            w2.sub_(0.01 * w2.grad)
        w1.grad = None
        w2.grad = None

    for _ in range(3):
        step()
    kept0, _, misses0 = stats()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(30):
        step()
    kept1, _, misses1 = stats()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Every step's buffers come from what the previous step freed.
    assert misses1 - misses0 <= 3, (misses0, misses1)
    assert kept1 <= kept0 + (4 << 20)
    assert rss1 - rss0 < 16 << 10  # KiB: the peak did not grow
