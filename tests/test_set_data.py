"""``x.data = y`` (torch's ``set_data``): x takes y's elements (storage, shape, strides,
dtype) and keeps its own identity, version counter, autograd flags, history and grad
(issue 7 §6; spec autograd.md §1.8, C28 for the getter's side). Each expectation was
read off torch 2.15; the file runs against torch through the shim too."""

import subprocess
import sys
import textwrap

import ferrograd as torch
import pytest

from conftest import IS_REAL_TORCH


def test_takes_the_other_tensors_storage_shape_and_dtype():
    x = torch.ones(3, requires_grad=True)
    y = torch.full((2, 2), 5.0, dtype=torch.float64)
    ident = id(x)
    x.data = y
    assert id(x) == ident
    assert x.shape == (2, 2) and x.dtype == torch.float64
    assert x.data_ptr() == y.data_ptr()
    y.add_(1)  # shared memory: x sees the write
    assert x.tolist() == [[6.0, 6.0], [6.0, 6.0]]
    assert x.requires_grad and x.is_leaf


def test_keeps_its_own_version_counter():
    x = torch.ones(3)
    view = x[:2]
    y = torch.zeros(3)
    y.add_(1)
    y.add_(1)
    x.data = y
    assert x._version == 0 and y._version == 2
    x.add_(1)
    # The counter is x's own, still shared with views made before ...
    assert x._version == 1 and view._version == 1 and y._version == 2
    # ... while those views keep the old memory.
    assert view.tolist() == [1.0, 1.0]
    assert x.tolist() == [3.0, 3.0, 3.0]


def test_saved_references_see_the_new_data_at_backward():
    w = torch.tensor([2.0, 3.0], requires_grad=True)
    loss = (w * w).sum()
    w.data = torch.tensor([10.0, 20.0])
    loss.backward()
    assert w.grad.tolist() == [20.0, 40.0]


def test_a_non_leaf_keeps_its_history():
    a = torch.ones(2, requires_grad=True)
    b = a * 2
    b.data = torch.zeros(2)
    assert type(b.grad_fn).__name__ == "MulBackward0"
    assert b.tolist() == [0.0, 0.0]
    b.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0]


def test_dtype_change_gives_gradients_of_the_new_dtype():
    z = torch.ones(2, requires_grad=True)
    (z * 2).sum().backward()  # the old accumulator existed and is gone with its graph
    z.grad = None
    z.data = torch.ones(2, dtype=torch.float64)
    (z * 2).sum().backward()
    assert z.grad.dtype == torch.float64 and z.grad.tolist() == [2.0, 2.0]


def test_the_grad_stays_and_a_new_shape_meets_it_at_accumulation():
    g = torch.ones(3, requires_grad=True)
    (g * 2).sum().backward()
    g.data = torch.ones(4)
    assert g.grad.tolist() == [2.0, 2.0, 2.0]
    mismatch = r"The size of tensor a \(3\) must match the size of tensor b \(4\)"
    with pytest.raises(RuntimeError, match=mismatch):
        (g * 2).sum().backward()


def test_data_of_a_tensor_that_requires_grad_must_be_differentiable():
    q = torch.ones(2, requires_grad=True)
    refusal = "data set to a tensor that requires gradients must be floating point or complex"
    with pytest.raises(RuntimeError, match=refusal):
        q.data = torch.ones(2, dtype=torch.int64)
    assert q.dtype == torch.float32  # unchanged after the refusal


def test_non_tensor_is_a_type_error():
    w = torch.ones(2)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
        w.data = 3
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        w.data = [1.0, 2.0]


def test_the_flag_is_not_taken_from_the_other_tensor():
    p = torch.ones(2)
    p.data = torch.ones(2, requires_grad=True)
    assert not p.requires_grad


def test_a_strided_view_as_data_keeps_its_layout():
    base = torch.arange(12.0).reshape(3, 4)
    x = torch.zeros(1)
    x.data = base.t()[1:]
    assert x.shape == (3, 3) and x.stride() == (1, 4)
    assert x.tolist() == [[1.0, 5.0, 9.0], [2.0, 6.0, 10.0], [3.0, 7.0, 11.0]]
    assert x.storage_offset() == 1


def test_the_optimizer_idiom_updates_the_parameter():
    # `p.data = p.data - lr * p.grad`, as old training loops write it.
    p = torch.ones(1000, requires_grad=True)
    for _ in range(5):
        (p * p).sum().backward()
        p.data = p.data - 0.1 * p.grad
        p.grad = None
    assert abs(p[0].item() - 0.8**5) < 1e-6
    assert p.requires_grad and p.is_leaf and p._version == 0


@pytest.mark.skipif(IS_REAL_TORCH, reason="torch's set_data is not thread-safe")
def test_setting_while_other_threads_read_is_safe():
    # Readers running ops on x while another thread swaps x's data: every read sees
    # one whole tensor (old or new), never freed memory. Run in a subprocess so a
    # crash fails the test instead of the run.
    code = textwrap.dedent(
        """
        import threading
        import ferrograd as torch

        x = torch.ones(1 << 16)
        stop = False
        seen = set()

        def reader():
            while not stop:
                s = (x * 2).sum().item()
                seen.add(s)

        threads = [threading.Thread(target=reader) for _ in range(3)]
        for t in threads:
            t.start()
        for i in range(300):
            x.data = torch.full((1 << 16,) if i % 2 else (1 << 10,), float(i % 3))
        stop = True
        for t in threads:
            t.join()
        allowed = {2.0 * n * v for n in (1 << 16, 1 << 10) for v in (0.0, 1.0, 2.0)}
        print(seen <= allowed)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "True"
