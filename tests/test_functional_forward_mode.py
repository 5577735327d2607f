"""Forward-mode ``jacobian`` and forward-over-reverse ``hessian`` of
``autograd.functional`` (spec forward_and_functional.md B.3/B.4: C295, C302, C303, C305).

``tests/run_functional_on_torch.py`` runs this file over torch's own functional API, and
with ``--ours`` runs ferrograd's functional.py over torch's forward AD, so the
expectations are torch's. The argument errors that need no forward AD (C296-C298) are in
test_functional.py.
"""

import re

import ferrograd as torch
import numpy as np
import pytest
from ferrograd.autograd.functional import hessian, jacobian

F64 = torch.float64


def rand64(*shape):
    return torch.rand(*shape, dtype=F64)


def close(t, expected):
    np.testing.assert_allclose(t.detach().numpy(), expected, rtol=1e-10, atol=1e-12)


def jacfwd(f, inputs):
    return jacobian(f, inputs, vectorize=True, strategy="forward-mode")


def hessfwd(f, inputs, **kwargs):
    return hessian(f, inputs, vectorize=True, outer_jacobian_strategy="forward-mode",
                   **kwargs)


def test_C295_forward_mode_single_input_output():
    x = rand64(2, 2)
    jac = jacfwd(lambda a: a.exp().sum(1), x)
    assert jac.shape == (2, 2, 2)
    expected = np.zeros((2, 2, 2))
    for i in range(2):
        expected[i, i, :] = np.exp(x.numpy()[i])
    close(jac, expected)


def test_C295_forward_mode_dense_matches_reverse_and_hand_derivation():
    torch.manual_seed(0)
    W, x = torch.randn(6, 4, dtype=F64), rand64(4)
    f = lambda a: (W @ a).tanh()  # noqa: E731
    t = np.tanh(W.numpy() @ x.numpy())
    expected = (1 - t**2)[:, None] * W.numpy()
    close(jacfwd(f, x), expected)
    close(jacobian(f, x), expected)


def test_C294_forward_mode_structures_as_torch_returns_them():
    x, y = rand64(2), rand64(3)
    xn, yn = x.numpy(), y.numpy()

    j = jacfwd(lambda a, b: a.sum() * b, (x, y))  # one output, tuple of inputs: a list
    assert isinstance(j, list) and len(j) == 2
    close(j[0], np.outer(yn, np.ones(2)))
    close(j[1], np.eye(3) * xn.sum())

    j = jacfwd(lambda a: (a * a, a.sum()), x)  # tuple of outputs, one input: a tuple
    assert isinstance(j, tuple) and len(j) == 2
    close(j[0], np.diag(2 * xn))
    close(j[1], np.ones(2))

    j = jacfwd(lambda a, b: (a.sum() * b, a.sin()), (x, y))  # both: a list of lists
    assert isinstance(j, list) and all(isinstance(row, list) for row in j)
    assert [[b.shape for b in row] for row in j] == [[(3, 2), (3, 3)], [(2, 2), (2, 3)]]
    close(j[1][0], np.diag(np.cos(xn)))
    close(j[1][1], np.zeros((2, 3)))


def test_forward_mode_output_without_tangent_gives_zeros():
    x = rand64(3)
    j = jacfwd(lambda a: torch.ones(2, dtype=F64), x)
    assert j.shape == (2, 3)
    close(j, np.zeros((2, 3)))


def test_forward_mode_empty_input():
    j = jacfwd(lambda a: a * 2, torch.zeros(0, dtype=F64))
    assert j.shape == (0, 0)


def test_forward_mode_non_tensor_output():
    # (sic) torch's message names no function here.
    with pytest.raises(TypeError, match=re.escape(
            "The outputs given to None must be either a Tensor or a tuple of Tensors but the "
            "given outputs has type <class 'int'>.")):
        jacfwd(lambda a: 3, rand64(2))


def test_C302_forward_mode_block_dtype_follows_output():
    x = rand64(3)
    j = jacfwd(lambda a: a.float() * 2, x)
    assert j.dtype == torch.float32
    close(j, 2 * np.eye(3))


def test_C290_forward_mode_under_no_grad():
    x = rand64(3)
    with torch.no_grad():
        close(jacfwd(lambda a: a * a, x), np.diag(2 * x.numpy()))
        close(hessfwd(lambda a: (a**3).sum(), x), np.diag(6 * x.numpy()))


def test_C303_forward_over_reverse_hessian():
    x = rand64(2, 2)
    h = hessfwd(lambda a: a.pow(3).sum(), x)
    assert h.shape == (2, 2, 2, 2)
    close(h, np.diag(6 * x.numpy().reshape(-1)).reshape(2, 2, 2, 2))


def test_C303_forward_over_reverse_dense_matches_reverse():
    torch.manual_seed(1)
    W, x = torch.randn(5, 5, dtype=F64), rand64(5)
    f = lambda a: (W @ a).tanh().sum()  # noqa: E731
    t = np.tanh(W.numpy() @ x.numpy())
    expected = W.numpy().T @ ((-2 * t * (1 - t**2))[:, None] * W.numpy())
    close(hessfwd(f, x), expected)
    close(hessian(f, x), expected)


def test_C303_forward_over_reverse_tuple_inputs_give_lists():
    h = hessfwd(lambda a, b: (2 * a**2 + 3 * b**2).sum(), (rand64(2), rand64(2)))
    assert isinstance(h, list) and all(isinstance(row, list) for row in h)
    close(h[0][0], 4 * np.eye(2))
    close(h[0][1], np.zeros((2, 2)))
    close(h[1][1], 6 * np.eye(2))


def test_C305_forward_over_reverse_strict_is_refused():
    with pytest.raises(RuntimeError, match=re.escape(
            "torch.autograd.functional.jacobian: `strict=True` and "
            '`strategy="forward-mode"` are not supported together (yet).')):
        hessfwd(lambda a: (a**3).sum(), rand64(2), strict=True)


def test_forward_over_reverse_leaves_the_input_alone():
    x = rand64(3)
    hessfwd(lambda a: (a**3).sum(), x)
    assert not x.requires_grad


def test_C295_forward_mode_is_one_vmapped_pass():
    # torch vmaps one forward-AD pass over the standard basis: func runs once, whatever
    # the number of input elements.
    calls = []

    def f(a, b):
        calls.append(1)
        return a.sin() * b.sum()

    jac = jacfwd(f, (rand64(3), rand64(2, 2)))
    assert len(calls) == 1
    assert [tuple(j.shape) for j in jac] == [(3, 3), (3, 2, 2)]


def test_C295_forward_mode_refuses_random_ops_with_legacy_vmap_text():
    with pytest.raises(
        RuntimeError,
        match="vmap: We do not yet support calling random operations inside of vmap",
    ):
        jacfwd(lambda a: a * torch.rand(3, dtype=F64), rand64(3))
