"""Memory safety (issue 7 §1): layouts checked against their storage with checked
arithmetic and torch's texts, disjoint views written from several threads, numpy
buffers checked (writable, aligned, bool bytes), and panics that never print."""

import threading
import warnings

import ferrograd as torch
import numpy as np
import pytest
from conftest import IS_REAL_TORCH

OVERFLOW_62 = (
    "Storage size calculation overflowed with sizes=[5, 5] and strides=[4611686018427387904, 1]"
)


# ---------------------------------------------------------------- layout bounds


def test_as_strided_overflowing_extent_is_torchs_error():
    # issue 7 §1: this layout's extent wrapped around; `y @ y` read outside the tensor's
    # memory and `y.sum()` panicked.
    x = torch.ones(5)
    with pytest.raises(RuntimeError) as e:
        x.as_strided((5, 5), (2**62, 1))
    assert str(e.value) == OVERFLOW_62
    with pytest.raises(RuntimeError) as e:
        torch.as_strided(x, (5, 5), (2**62, 1))
    assert str(e.value) == OVERFLOW_62


@pytest.mark.parametrize(
    "dtype, size, stride, offset, text",
    [
        (
            "float32",
            (3,),
            (2,),
            4,
            "setStorage: sizes [3], strides [2], storage offset 4, and itemsize 4 requiring a "
            "storage size of 36 are out of bounds for storage of size 20",
        ),
        (
            "float32",
            (6,),
            (1,),
            0,
            "setStorage: sizes [6], strides [1], storage offset 0, and itemsize 4 requiring a "
            "storage size of 24 are out of bounds for storage of size 20",
        ),
        (
            "float32",
            (),
            (),
            5,
            "setStorage: sizes [], strides [], storage offset 5, and itemsize 4 requiring a "
            "storage size of 24 are out of bounds for storage of size 20",
        ),
        (
            "uint8",
            (2,),
            (2**62,),
            0,
            "setStorage: sizes [2], strides [4611686018427387904], storage offset 0, and "
            "itemsize 1 requiring a storage size of 4611686018427387905 are out of bounds for "
            "storage of size 5",
        ),
        (
            "float32",
            (2**40, 2**40),
            (1, 1),
            0,
            "setStorage: sizes [1099511627776, 1099511627776], strides [1, 1], storage offset 0, "
            "and itemsize 4 requiring a storage size of 8796093022204 are out of bounds for "
            "storage of size 20",
        ),
        (
            "uint8",
            (3,),
            (2**62,),
            0,
            "Storage size calculation overflowed with sizes=[3] and strides=[4611686018427387904]",
        ),
        (
            "float32",
            (3,),
            (2,),
            2**63 - 1,
            "Storage size calculation overflowed with sizes=[3] and strides=[2]",
        ),
        (
            "float32",
            (3, 3),
            (2**62, 2**62),
            0,
            "Storage size calculation overflowed with sizes=[3, 3] and strides="
            "[4611686018427387904, 4611686018427387904]",
        ),
        ("float32", (3,), (1, 2), 0, "mismatch in length of strides and shape"),
        (
            "float32",
            (3, 1),
            (1, -2),
            0,
            "as_strided: Negative strides are not supported at the moment, got strides: [1, -2]",
        ),
        ("float32", (1,), (1,), -1, "Tensor: invalid storage offset -1"),
        (
            "float32",
            (-3,),
            (1,),
            0,
            "Storage size calculation overflowed with sizes=[-3] and strides=[1]",
        ),
        ("float32", (-1, 2), (0, 1), 0, "numel: integer multiplication overflow"),
    ],
)
def test_as_strided_checks_in_torchs_order_and_words(dtype, size, stride, offset, text):
    # issue 7 §1: every as_strided layout is checked against the storage, in torch's order.
    x = torch.ones(5, dtype=getattr(torch, dtype))
    with pytest.raises(RuntimeError) as e:
        x.as_strided(size, stride, offset)
    assert str(e.value) == text


def test_as_strided_checks_the_whole_storage_not_the_view():
    # issue 7 §1: the bound is the storage; the default offset is the view's own.
    base = torch.arange(6.0)
    v = base[1:]
    assert v.as_strided((2,), (1,)).tolist() == [1.0, 2.0]
    assert v.as_strided((5,), (1,)).tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert v.as_strided((6,), (1,), 0).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    with pytest.raises(
        RuntimeError,
        match=r"storage offset 1, and itemsize 4 requiring a storage "
        r"size of 28 are out of bounds for storage of size 24",
    ):
        v.as_strided((6,), (1,))
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 24"):
        v[2:].as_strided((3,), (2,))


def test_empty_as_strided_may_point_anywhere():
    # issue 7 §1 (torch: a layout with a zero size needs no storage at all).
    x = torch.ones(5)
    y = x.as_strided((0, 5), (2**62, 1))
    assert y.shape == (0, 5) and y.sum().item() == 0.0
    z = x.as_strided((0,), (1,), 6)
    assert z.storage_offset() == 6 and z.tolist() == []
    assert (z + 1).tolist() == [] and z.clone().tolist() == []


def test_valid_strided_layouts_compute_through_every_kernel():
    # issue 7 §1: kernels read through the checked access type, overlapping layouts included.
    x = torch.arange(6.0)
    y = x.as_strided((3, 3), (1, 1))  # overlapping rows: [[0,1,2],[1,2,3],[2,3,4]]
    assert y.tolist() == [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]
    assert (y @ y).tolist() == [[5.0, 8.0, 11.0], [8.0, 14.0, 20.0], [11.0, 20.0, 29.0]]
    assert y.sum().item() == 18.0
    assert (y * 2).tolist()[2] == [4.0, 6.0, 8.0]
    assert torch.where(y > 2, y, -y).tolist()[1] == [-1.0, -2.0, 3.0]
    t = x.as_strided((2, 3), (1, 2))  # transposed reading
    assert t.contiguous().tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    b = torch.tensor([True, False, True, True]).as_strided((2, 2), (1, 2))
    assert b.tolist() == [[True, True], [False, True]]
    assert b.sum().item() == 3


def test_gradient_through_checked_as_strided():
    # issue 7 §1: the backward of a checked view still works.
    x = torch.arange(5.0, requires_grad=True)
    x.as_strided((2, 2), (1, 2), 1).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0]


# ---------------------------------------------------------------- threads


def test_two_threads_write_disjoint_views_of_one_tensor():
    # issue 7 §1: disjoint views of one tensor written from two threads (legal in torch;
    # Rust must never hold overlapping &mut for it). Big enough to use the thread pool.
    x = torch.zeros(512, 1024)
    views = [x[:, 0::2], x[:, 1::2]]
    rounds = 12
    errors = []

    def work(k):
        try:
            for _ in range(rounds):
                views[k].add_(k + 1)
                views[k].mul_(1.0)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert torch.equal(x[:, 0::2], torch.full((512, 512), float(rounds)))
    assert torch.equal(x[:, 1::2], torch.full((512, 512), float(2 * rounds)))


def test_threads_write_rows_of_one_tensor():
    # issue 7 §1: x[0] and x[1] (contiguous disjoint runs) from two threads.
    x = torch.zeros(2, 300_000)
    rows = [x[0], x[1]]

    def work(k):
        for i in range(10):
            rows[k].copy_(torch.full((300_000,), float(10 * k + i)))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert torch.equal(x[0], torch.full((300_000,), 9.0))
    assert torch.equal(x[1], torch.full((300_000,), 19.0))


# ---------------------------------------------------------------- numpy buffers


def test_from_numpy_non_writable_warns_once_with_torchs_text(run_isolated):
    # issue 7 §1: torch warns (once per process) that a read-only array is shared.
    proc = run_isolated(
        """
        import warnings
        import numpy as np
        a = np.arange(4.0)
        a.flags.writeable = False
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t = torch.from_numpy(a)
            torch.from_numpy(a)
            torch.as_tensor(a)
        print(len(w), w[0].category.__name__)
        print(str(w[0].message))
        print(t.tolist())
        """
    )
    head, message, values = proc.stdout.strip().split("\n")
    assert head == "1 UserWarning"
    assert message.startswith(
        "The given NumPy array is not writable, and PyTorch does not support non-writable "
        "tensors. This means writing to this tensor will result in undefined behavior. You may "
        "want to copy the array to protect its data or make it writable before converting it "
        "to a tensor. This type of warning will be suppressed for the rest of this program."
    )
    assert values == "[0.0, 1.0, 2.0, 3.0]"


def test_from_numpy_misaligned_array_gives_the_right_values():
    # issue 7 §1: torch shares a misaligned array; Rust may not read through a misaligned
    # pointer, so ferrograd copies it (and says so).
    buf = bytearray(4 * 4 + 1)
    a = np.frombuffer(buf, dtype=np.float32, offset=1, count=4)
    a[:] = [1.0, 2.0, 3.0, 4.0]
    assert not a.flags.aligned
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        t = torch.from_numpy(a)
        u = torch.as_tensor(a)
    assert t.tolist() == [1.0, 2.0, 3.0, 4.0] and u.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert (t * 2).tolist() == [2.0, 4.0, 6.0, 8.0]


@pytest.mark.skipif(IS_REAL_TORCH, reason="torch shares misaligned arrays without a word")
def test_from_numpy_misaligned_copy_is_announced(run_isolated):
    # issue 7 §1: the copy is not silent (writes would not reach the array).
    proc = run_isolated(
        """
        import warnings
        import numpy as np
        a = np.frombuffer(bytearray(17), dtype=np.float32, offset=1, count=4)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t = torch.from_numpy(a)
            torch.from_numpy(a)
        t.add_(1)
        print(len(w), w[0].category.__name__, float(a[0]), t.tolist())
        """
    )
    assert proc.stdout.split()[:3] == ["1", "UserWarning", "0.0"]


def test_from_numpy_bool_bytes_other_than_0_1_read_as_true():
    # issue 7 §1: a bool byte of 2 must never become an invalid Rust bool.
    raw = np.frombuffer(bytearray([0, 2, 1, 255]), dtype=np.uint8)
    t = torch.from_numpy(raw.view(np.bool_))
    assert t.tolist() == [False, True, True, True]
    assert t.int().tolist() == [0, 1, 1, 1]
    assert (t == True).tolist() == [False, True, True, True]  # noqa: E712
    assert t[1].item() is True and t[3].item() is True
    assert t.float().tolist() == [0.0, 1.0, 1.0, 1.0]
    assert torch.where(t, 1.0, -1.0).tolist() == [-1.0, 1.0, 1.0, 1.0]
    assert t.sum().item() == 3


def test_bool_memory_written_later_by_numpy_stays_valid():
    # issue 7 §1: the bool storage is shared, so numpy can write any byte into it later.
    t = torch.zeros(3, dtype=torch.bool)
    t.numpy().view(np.uint8)[:] = [7, 0, 1]
    assert t.tolist() == [True, False, True]
    assert t.long().tolist() == [1, 0, 1]
    raw = np.zeros(3, dtype=np.uint8)
    u = torch.from_numpy(raw.view(np.bool_))
    raw[0] = 42
    assert u.tolist() == [True, False, False]


@pytest.mark.parametrize(
    "make, exc, text",
    [
        (
            lambda: np.arange(6.0)[::-1],
            ValueError,
            "At least one stride in the given numpy array is negative",
        ),
        (
            lambda: np.lib.stride_tricks.as_strided(np.arange(6.0), (2,), (4,)),
            ValueError,
            "given numpy array strides not a multiple of the element byte size",
        ),
        (
            lambda: np.zeros(3, dtype=">f4"),
            ValueError,
            "given numpy array has byte order different from the native byte order",
        ),
    ],
)
def test_from_numpy_rejects_foreign_layouts_it_cannot_share(make, exc, text):
    # issue 7 §1: strides and byte order of foreign buffers are checked (torch's errors).
    with pytest.raises(exc, match=text):
        torch.from_numpy(make())


def test_from_numpy_only_takes_ndarrays():
    # issue 7 §1: an object that merely claims an __array_interface__ is not trusted.
    class Fake:
        __array_interface__ = {"shape": (3,), "typestr": "<f4", "data": (8, False), "version": 3}

    with pytest.raises(TypeError, match=r"expected np.ndarray \(got Fake\)"):
        torch.from_numpy(Fake())


def test_from_numpy_broadcast_and_empty_arrays():
    # issue 7 §1: stride-0 and zero-size arrays share memory within their extent.
    b = np.broadcast_to(np.arange(3.0), (4, 3))  # read-only: warns
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        t = torch.from_numpy(b)
    assert t.stride() == (0, 1) and t.sum().item() == 12.0
    e = torch.from_numpy(np.zeros((3, 0)))
    assert e.shape == (3, 0) and e.sum().item() == 0.0


# ---------------------------------------------------------------- panics


@pytest.mark.skipif(IS_REAL_TORCH, reason="ferrograd's test-only panic trigger")
@pytest.mark.parametrize("on_worker", [False, True])
def test_panic_is_a_runtime_error_and_prints_nothing(capfd, on_worker):
    # issue 7 §1: a panic (here forced by the test-only `_C._test_panic`) becomes a
    # RuntimeError and never prints to stderr, on the calling thread or a pool worker.
    from ferrograd import _C

    capfd.readouterr()
    with pytest.raises(RuntimeError) as e:
        _C._test_panic(on_worker)
    out, err = capfd.readouterr()
    assert err == "" and out == ""
    msg = str(e.value)
    assert msg.startswith("internal error in ferrograd: test panic")
    if not on_worker:
        assert "errors.rs:" in msg  # the hook kept the location
