"""In-place operations: checklist C92–C104 (spec autograd.md §6).

Version counters and the saved-tensor check (E-INPLACE), in-place on leaves, views and
their base (CopySlices, regenerated view grad_fns, multi-output views, views created
under no_grad / inference mode).
"""

import re

import numpy as np

import ferrograd as torch
import pytest

MOD = torch.__name__

E_INPLACE_START = (
    "one of the variables needed for gradient computation has been modified by an inplace operation"
)
HINT = (
    "Hint: enable anomaly detection to find the operation that failed to compute its "
    "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
)


def raises_rt(text):
    return pytest.raises(RuntimeError, match=re.escape(text))


# --------------------------------------------------------------------------- §6.1


def test_C92_modified_saved_output_raises_e_inplace():
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)
    with raises_rt(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{MOD}.FloatTensor [3]], which is output 0 of Sigmoid, is at "
        "version 1; expected version 0 instead."
    ):
        y.sum().backward()


def test_C92_message_reports_current_version():
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    y = x.exp()
    y.add_(1)
    y.add_(1)
    with raises_rt(
        f"[{MOD}.DoubleTensor [2, 3]], which is output 0 of Exp, is at version 2; "
        "expected version 0 instead."
    ):
        y.sum().backward()


def test_C93_e_inplace_message_ends_with_hint():
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert str(info.value).rstrip().endswith(HINT)


def test_C94_modified_saved_input_names_inplace_node():
    x = torch.randn(3, requires_grad=True)
    y2 = x * 1
    z = y2 * y2
    y2.add_(1)
    with raises_rt(
        f"[{MOD}.FloatTensor [3]], which is output 0 of Add, is at version 1; "
        "expected version 0 instead."
    ):
        z.sum().backward()


def test_C94_inplace_replaces_grad_fn():
    x = torch.randn(3, requires_grad=True)
    b = x * 1
    assert b.grad_fn.name() == "MulBackward0"
    b.add_(1)
    assert b.grad_fn.name() == "AddBackward0"
    b.mul_(2)
    assert b.grad_fn.name() == "MulBackward0"


def test_C95_inplace_not_needed_by_backward_does_not_raise():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2  # saves only the scalar, not x or y
    y.add_(1)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_C95_inplace_chain_gives_correct_grads():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x + 0
    y.mul_(3)
    y.add_(x)  # y = 3x + x
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]


def test_C95_modifying_unsaved_input_of_exp_is_fine():
    # exp saves its result, not its input: changing the input afterwards is harmless.
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    a = x * 1
    y = a.exp()
    a.zero_()
    y.sum().backward()
    assert torch.allclose(x.grad, torch.tensor([0.0, 1.0]).exp())


def test_C96_increment_version_bumps_by_one():
    t = torch.zeros(3)
    torch.autograd.graph.increment_version(t)
    assert t._version == 1
    torch.autograd.graph.increment_version(t)
    assert t._version == 2


def test_C96_increment_version_accepts_iterable():
    a = torch.zeros(3)
    b = torch.zeros(2)
    torch.autograd.graph.increment_version([a, b])
    assert (a._version, b._version) == (1, 1)


def test_C96_increment_version_trips_saved_tensor_check():
    x = torch.randn(3, requires_grad=True)
    y = x.exp()
    torch.autograd.graph.increment_version(y)
    with raises_rt(E_INPLACE_START):
        y.sum().backward()


# --------------------------------------------------------------------------- §6.2


def test_C97_inplace_on_requires_grad_leaf_raises():
    leaf = torch.ones(3, requires_grad=True)
    with raises_rt("a leaf Variable that requires grad is being used in an in-place operation."):
        leaf.add_(1)
    assert leaf.tolist() == [1.0, 1.0, 1.0]


def test_C97_setitem_on_requires_grad_leaf_raises():
    leaf = torch.ones(3, requires_grad=True)
    with raises_rt("a leaf Variable that requires grad is being used in an in-place operation."):
        leaf[0] = 5.0


def test_C98_inplace_on_view_of_requires_grad_leaf_raises():
    leaf = torch.ones(4, requires_grad=True)
    with raises_rt(
        "a view of a leaf Variable that requires grad is being used in an in-place operation."
    ):
        leaf[:2].add_(1)


def test_C99_inplace_on_leaf_under_no_grad_succeeds():
    leaf = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        leaf.add_(1)
    assert leaf._version == 1
    assert leaf.tolist() == [2.0, 2.0, 2.0]
    assert leaf.requires_grad is True
    assert leaf.is_leaf is True
    assert leaf.grad_fn is None


def test_C99_inplace_on_view_of_leaf_under_no_grad_succeeds():
    leaf = torch.ones(4, requires_grad=True)
    with torch.no_grad():
        leaf[:2].mul_(3)
    assert leaf._version == 1
    assert leaf.tolist() == [3.0, 3.0, 1.0, 1.0]


# --------------------------------------------------------------------------- §6.3


def test_C100_inplace_on_view_makes_base_copyslices():
    x = torch.ones(4, requires_grad=True)
    base = x * 1
    view = base[:2]
    view.mul_(3)
    assert base.grad_fn.name() == "torch::autograd::CopySlices"


def test_C100_gradients_through_copyslices_are_correct():
    x = torch.ones(4, requires_grad=True)
    base = x * 1
    view = base[:2]
    view.mul_(3)
    assert base.tolist() == [3.0, 3.0, 1.0, 1.0]
    base.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 1.0, 1.0]


def test_C100_setitem_on_nonleaf_gradients():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.tensor([10.0], requires_grad=True)
    base = x * 2
    base[1:2] = y * 5
    assert base.grad_fn.name() == "torch::autograd::CopySlices"
    base.sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 2.0]
    assert y.grad.tolist() == [5.0]


def test_C101_view_grad_fn_regenerated_after_inplace_on_base():
    x = torch.ones(4, requires_grad=True)
    base = x * 1
    view = base[:2]
    assert view.grad_fn.name() == "SliceBackward0"
    base.mul_(2)
    assert view.grad_fn.name() == "AsStridedBackward0"


def test_C101_regenerated_view_backpropagates_through_base_inplace():
    x = torch.ones(4, requires_grad=True)
    base = x * 1
    view = base[:2]
    base.mul_(2)
    view.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 0.0, 0.0]


def test_C102_inplace_on_multi_output_view_raises():
    x = torch.randn(2, 3, requires_grad=True)
    with raises_rt(
        "Output 0 of Unbind is a view and is being modified inplace. This view is the "
        "output of a function that returns multiple views."
    ):
        (x * 1).unbind(0)[0].mul_(2)


def test_C102_inplace_on_unbind_of_leaf_raises():
    x = torch.randn(2, 3, requires_grad=True)
    with raises_rt(
        "Output 0 of Unbind is a view and is being modified inplace. This view is the "
        "output of a function that returns multiple views."
    ):
        x.unbind(0)[0].mul_(2)


def test_C103_view_created_under_no_grad_reports_requires_grad():
    x = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        v = x[:2]
    assert v.requires_grad is True


def test_C103_inplace_on_no_grad_view_with_grad_enabled_raises():
    x = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        v = x[:2]
    with raises_rt(
        "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
    ):
        v.mul_(2)


def test_C103_inplace_on_no_grad_view_of_nonleaf_raises():
    x = torch.ones(3, requires_grad=True)
    base = x * 1
    with torch.no_grad():
        v = base[:2]
    with raises_rt(
        "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
    ):
        v.mul_(2)


def test_C104_inference_mode_view_modified_outside_raises():
    # The check fires for a base that requires grad (torch does not raise when nothing
    # requires grad, since there is no history to rewrite).
    s = torch.ones(3, requires_grad=True)
    with torch.inference_mode():
        v = s[:2]
    with raises_rt(
        "A view was created in inference mode and is being modified inplace in normal mode."
    ):
        v.add_(1)


# ------------------------------------------- writes into contiguous memory, split over threads


@pytest.mark.parametrize("n", [1000, 300_001])  # one thread; chunks over threads
def test_contiguous_writes_fill_copy_and_update_every_element(n):
    # The direct (chunked) write paths of copy_/fill_/zero_ still bump the version (C26).
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(n), rng.standard_normal(n)
    x = torch.from_numpy(a.copy())
    x.copy_(torch.from_numpy(b))
    np.testing.assert_array_equal(x.numpy(), b)
    x.add_(torch.from_numpy(a))
    np.testing.assert_array_equal(x.numpy(), b + a)
    x.fill_(2.5)
    assert (x.numpy() == 2.5).all()
    x.zero_()
    assert not x.numpy().any()
    assert x._version == 4
    # An offset view of a bigger storage: only its own elements change.
    big = torch.from_numpy(np.arange(n + 10.0))
    big[5 : n + 5].copy_(torch.from_numpy(b))
    big[5 : n + 5].mul_(2)
    want = np.arange(n + 10.0)
    want[5 : n + 5] = 2 * b
    np.testing.assert_array_equal(big.numpy(), want)


def test_copy_from_an_overlapping_view_of_the_same_storage():
    x = torch.arange(400_000.0)
    x[1:].copy_(x[:-1].clone())
    assert x[:4].tolist() == [0.0, 0.0, 1.0, 2.0] and x[-1].item() == 399_998.0
    y = torch.arange(400_000.0)
    y.copy_(y.flip(0))
    np.testing.assert_array_equal(y.numpy(), np.arange(400_000.0)[::-1])
    z = torch.arange(10.0).repeat(40_000)
    z.copy_(torch.tensor(3.0))  # broadcast source
    assert (z.numpy() == 3.0).all()


# ------------------------------------------------ arithmetic written straight into memory


ARITH_INPLACE = {
    "add_": (lambda x, y: x.add_(y), np.add),
    "sub_": (lambda x, y: x.sub_(y), np.subtract),
    "mul_": (lambda x, y: x.mul_(y), np.multiply),
    "div_": (lambda x, y: x.div_(y), np.divide),
    "add_ alpha": (lambda x, y: x.add_(y, alpha=-0.25), lambda a, b: a + (-0.25 * b)),
    "sub_ alpha": (lambda x, y: x.sub_(y, alpha=3), lambda a, b: a - 3 * b),
}


@pytest.mark.parametrize("name", sorted(ARITH_INPLACE))
@pytest.mark.parametrize("n", [1000, 300_001])
@pytest.mark.parametrize("other", ["tensor", "0-dim", "number", "itself"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_C26_arithmetic_in_place_keeps_its_memory(name, n, other, dtype):
    ours, reference = ARITH_INPLACE[name]
    rng = np.random.default_rng(1)
    a = (rng.uniform(0.5, 2.0, n) + (1j * rng.uniform(0.5, 2.0, n) if "complex" in dtype else 0))
    a = a.astype(dtype)
    b = rng.uniform(0.5, 2.0, n).astype(dtype)
    x = torch.from_numpy(a.copy())
    ptr, version = x.data_ptr(), x._version
    operand = {
        "tensor": (torch.from_numpy(b), b),
        "0-dim": (torch.tensor(b[3]), b[3]),
        "number": (1.5, np.array(1.5, dtype=dtype)),
        "itself": (x, a),
    }[other]
    ours(x, operand[0])
    expected = reference(a, operand[1])
    if "alpha" in name:  # the product is rounded first, in the tensor's own type
        expected = reference(a, np.asarray(operand[1], dtype=dtype))
    tol = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(x.numpy(), expected, rtol=tol, atol=tol)
    assert x.data_ptr() == ptr and x._version == version + 1


def test_arithmetic_in_place_on_a_view_changes_only_its_elements():
    base = torch.arange(20.0)
    view = base[5:15]
    view.mul_(torch.full((10,), 2.0))
    view.add_(1)
    want = np.arange(20.0)
    want[5:15] = want[5:15] * 2 + 1
    np.testing.assert_array_equal(base.numpy(), want)
    strided = base[::2]  # not contiguous: computed, then copied in
    strided.sub_(torch.ones(10))
    want[::2] -= 1
    np.testing.assert_array_equal(base.numpy(), want)


def test_arithmetic_in_place_with_broadcast_and_promotion():
    x = torch.ones(3, 4)
    x.add_(torch.arange(4.0))  # a row: the general path
    np.testing.assert_array_equal(x.numpy(), np.ones((3, 4)) + np.arange(4.0))
    i = torch.arange(4)
    i.mul_(3)
    assert i.tolist() == [0, 3, 6, 9] and i.dtype == torch.int64
    with raises_rt("result type Float can't be cast to the desired output type Long"):
        i.mul_(0.5)
    d = torch.ones(3, dtype=torch.float64)
    d.add_(torch.ones(3, dtype=torch.float32))  # other promoted: the general path
    assert d.tolist() == [2.0, 2.0, 2.0]


PARTIAL = (
    "unsupported operation: some elements of the input tensor and the written-to tensor "
    "refer to a single memory location. Please clone() the tensor before performing the "
    "operation."
)


def test_arithmetic_in_place_refuses_partial_overlap():
    x = torch.arange(5.0)
    with raises_rt(PARTIAL):
        x[1:].add_(x[:-1])
    with raises_rt(PARTIAL):
        x.mul_(x[1])
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and x._version == 0
    x[:2].add_(x[2:4])  # disjoint parts of one storage
    assert x.tolist() == [2.0, 4.0, 2.0, 3.0, 4.0]
    x.sub_(x)  # the same memory exactly
    assert x.tolist() == [0.0] * 5


def test_arithmetic_in_place_gradients_and_saved_values():
    a = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([2.0, 3.0, 4.0], dtype=torch.float64, requires_grad=True)
    y = a * 1  # a non-leaf to write into
    y.mul_(w)  # w's gradient needs y's value from before the write
    y.add_(w, alpha=2.0)
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 3.0, 4.0])
    np.testing.assert_allclose(w.grad.numpy(), [1.0 + 2, 2.0 + 2, 3.0 + 2])
    assert type(y.grad_fn).__name__ == "AddBackward0"
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "MulBackward0"
