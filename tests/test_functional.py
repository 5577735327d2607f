"""``torch.autograd.functional`` (spec forward_and_functional.md part B): checklist
C281-C309. Reverse mode only; the forward-mode Jacobian and Hessian live in
test_functional_forward_mode.py. Every expected text and structure was taken from a run of
torch 2.15; values are checked in float64 against Jacobians and Hessians worked out by hand
(numpy), not against the library itself.
"""

import re

import ferrograd as torch
import ferrograd.autograd.functional
import numpy as np
import pytest
from ferrograd.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp

MOD = torch.__name__
F64 = torch.float64

E_STRICT_HESSIAN_LINEAR = (
    "While computing the hessian, found that the jacobian of the user-provided function with "
    "respect to input 0 is independent of the input. This is not allowed in strict mode. "
    "You should ensure that your function is twice differentiable and that the jacobian "
    "depends on the inputs (this would be violated by a linear function for example)."
)
E_V_NONE_INPUT = (
    "The vector v can only be None if the input to the user-provided function is a single "
    "Tensor with a single element."
)


def raises(exc, text):
    return pytest.raises(exc, match="^" + re.escape(text) + "$")


def rand64(*shape):
    return torch.rand(*shape, dtype=F64)


def close(t, expected):
    np.testing.assert_allclose(t.detach().numpy(), expected, rtol=1e-10, atol=1e-12)


def tanh_layer(n, seed=0):
    """f(x) = tanh(W x) with its Jacobian diag(1 - tanh²) W and the Hessian of sum f,
    Wᵀ diag(-2 tanh (1 - tanh²)) W, by hand."""
    torch.manual_seed(seed)
    W = torch.randn(n, n, dtype=F64)
    x = torch.randn(n, dtype=F64)
    w, t = W.numpy(), np.tanh(W.numpy() @ x.numpy())
    jac = (1 - t**2)[:, None] * w
    hess = w.T @ ((-2 * t * (1 - t**2))[:, None] * w)
    return W, x, jac, hess


def test_module_importable_as_in_torch():
    assert torch.autograd.functional is ferrograd.autograd.functional
    assert torch.autograd.functional.jacobian is jacobian
    assert set(torch.autograd.functional.__all__) == {
        "vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"
    }


# ---- vjp ------------------------------------------------------------------------------


def test_C281_vjp_shapes_values_and_detached():
    x = rand64(4, 4)
    out, res = vjp(lambda a: a.exp().sum(1), x, torch.ones(4, dtype=F64))
    assert out.shape == (4,) and res.shape == (4, 4)
    assert not out.requires_grad and not res.requires_grad
    close(out, np.exp(x.numpy()).sum(1))
    close(res, np.exp(x.numpy()))


def test_C281_results_detached_even_for_inputs_requiring_grad():
    x = rand64(3).requires_grad_()
    out, res = vjp(lambda a: a * a, x, torch.ones(3, dtype=F64))
    assert out.grad_fn is None and res.grad_fn is None and not res.requires_grad


def test_C282_vjp_create_graph_is_differentiable():
    x = rand64(3).requires_grad_()
    out, res = vjp(lambda a: a**2, x, torch.ones(3, dtype=F64), create_graph=True)
    assert out.grad_fn is not None and res.grad_fn is not None
    (g,) = torch.autograd.grad(res.sum(), x)
    close(g, np.full(3, 2.0))


def test_C283_vjp_tuple_inputs():
    inputs = (rand64(2), rand64(2))
    out, res = vjp(lambda a, b: 2 * a + 3 * b, inputs, torch.ones(2, dtype=F64))
    assert isinstance(res, tuple) and len(res) == 2
    close(res[0], [2.0, 2.0])
    close(res[1], [3.0, 3.0])
    close(out, 2 * inputs[0].numpy() + 3 * inputs[1].numpy())


def test_C284_vjp_v_none():
    x = rand64(3)
    out, res = vjp(lambda a: (a * a).sum(), x)  # one element: v acts as 1
    close(res, 2 * x.numpy())
    with raises(
        RuntimeError,
        "The vector v can only be None if the user-provided function returns a single "
        "Tensor with a single element.",
    ):
        vjp(lambda a: a * 2, x)


def test_C285_v_validation():
    x = rand64(4)
    with raises(RuntimeError, f"v has invalid size: should be {MOD}.Size([4]) but got "
                f"{MOD}.Size([3])."):
        vjp(lambda a: a * 2, x, torch.ones(3, dtype=F64))
    with raises(RuntimeError, "v is a tuple of invalid length: should be 2 but got 1."):
        vjp(lambda a: (a, a * 2), x, (torch.ones(4, dtype=F64),))
    with raises(RuntimeError, "The given v should contain a single Tensor."):
        vjp(lambda a: a * 2, x, (torch.ones(4, dtype=F64), torch.ones(4, dtype=F64)))
    with raises(RuntimeError, f"Entry 1 in v has invalid size: should be {MOD}.Size([4]) but "
                f"got {MOD}.Size([2])."):
        jvp(lambda a, b: a + b, (x, x), (torch.ones(4, dtype=F64), torch.ones(2, dtype=F64)))


def test_C286_input_type_errors():
    x = rand64(3)
    for fn_name, fn in (("vjp", vjp), ("jvp", jvp), ("jacobian", jacobian),
                        ("hessian", hessian), ("vhp", vhp), ("hvp", hvp)):
        with raises(TypeError, f"The inputs given to {fn_name} must be either a Tensor or a "
                    "tuple of Tensors but the given inputs has type <class 'list'>."):
            fn(lambda a: a.sum(), [x])
    with raises(TypeError, "The inputs given to vjp must be either a Tensor or a tuple of "
                "Tensors but the value at index 1 has type <class 'int'>."):
        vjp(lambda a, b: a, (x, 3))


def test_C287_output_type_error():
    with raises(TypeError, "The outputs of the user-provided function given to vjp must be "
                "either a Tensor or a tuple of Tensors but the given outputs of the "
                "user-provided function has type <class 'int'>."):
        vjp(lambda a: 3, rand64(3), torch.ones(3, dtype=F64))


def test_C288_unused_input_zero_or_strict_error():
    x, y = rand64(2), rand64(2)
    _, (gx, gy) = vjp(lambda a, b: a * 2, (x, y), torch.ones(2, dtype=F64))
    close(gx, [2.0, 2.0])
    close(gy, [0.0, 0.0])
    with raises(RuntimeError, "The output of the user-provided function is independent of "
                "input 1. This is not allowed in strict mode."):
        vjp(lambda a, b: a * 2, (x, y), torch.ones(2, dtype=F64), strict=True)


def test_C289_strict_output_not_requiring_grad():
    x = rand64(3)
    _, res = vjp(lambda a: a.detach(), x, torch.ones(3, dtype=F64))
    close(res, np.zeros(3))
    with raises(RuntimeError, "Output 0 of the user-provided function does not require "
                "gradients. The outputs must be computed in a differentiable manner from the "
                "input when running in strict mode."):
        vjp(lambda a: a.detach(), x, torch.ones(3, dtype=F64), strict=True)


def test_inputs_are_rewrapped_closure_captures_are_constants():
    # Only the tensor passed as `inputs` is differentiated, even when the function also
    # captures that same tensor object.
    x = rand64(3).requires_grad_()
    jac = jacobian(lambda a: a * x, x)
    close(jac, np.diag(x.detach().numpy()))


# ---- C290: grad mode ------------------------------------------------------------------


def test_C290_every_function_works_under_no_grad():
    x = rand64(3)
    ones = torch.ones(3, dtype=F64)
    xn = x.numpy()
    cube = lambda a: (a**3).sum()  # noqa: E731
    with torch.no_grad():
        close(vjp(lambda a: a * a, x, ones)[1], 2 * xn)
        close(jvp(lambda a: a * a, x, ones)[1], 2 * xn)
        close(jacobian(lambda a: a * a, x), np.diag(2 * xn))
        close(jacobian(lambda a: a * a, x, vectorize=True), np.diag(2 * xn))
        close(hessian(cube, x), np.diag(6 * xn))
        close(vhp(cube, x, ones)[1], 6 * xn)
        close(hvp(cube, x, ones)[1], 6 * xn)
        assert not torch.is_grad_enabled()


def test_C290_create_graph_under_no_grad_still_builds_a_graph():
    x = rand64(3).requires_grad_()
    with torch.no_grad():
        _, res = vjp(lambda a: a * a, x, torch.ones(3, dtype=F64), create_graph=True)
    assert res.requires_grad
    (g,) = torch.autograd.grad(res.sum(), x)
    close(g, np.full(3, 2.0))


# ---- jvp ------------------------------------------------------------------------------


def test_C291_jvp_shapes_values_and_v_none():
    x = rand64(4, 4)
    out, res = jvp(lambda a: a.exp().sum(1), x, torch.ones(4, 4, dtype=F64))
    assert out.shape == (4,) and res.shape == (4,)
    assert not res.requires_grad
    close(res, np.exp(x.numpy()).sum(1))
    with raises(RuntimeError, E_V_NONE_INPUT):
        jvp(lambda a: a.exp().sum(1), x)
    s = rand64(1)
    close(jvp(lambda a: a * 3, s)[1], [3.0])


def test_C291_jvp_tuple_inputs_and_outputs():
    x, y = rand64(3), rand64(3)
    vx, vy = rand64(3), rand64(3)
    out, (jx, jy) = jvp(lambda a, b: (a * b, a.sin()), (x, y), (vx, vy))
    xn, yn, vxn, vyn = x.numpy(), y.numpy(), vx.numpy(), vy.numpy()
    close(jx, yn * vxn + xn * vyn)
    close(jy, np.cos(xn) * vxn)
    assert isinstance(out, tuple) and len(out) == 2


def test_C292_jvp_independent_output_gives_zeros():
    x = rand64(2)
    _, (j0, j1) = jvp(lambda a: (a * 2, torch.ones(2, dtype=F64)), x, torch.ones(2, dtype=F64))
    close(j0, [2.0, 2.0])
    close(j1, [0.0, 0.0])


def test_jvp_strict_errors():
    x = rand64(3)
    ones = torch.ones(3, dtype=F64)
    jvp(lambda a: a * 2, x, ones, strict=True)  # a linear function passes
    with raises(RuntimeError, "The output of the user-provided function is independent of "
                "input 1. This is not allowed in strict mode."):
        jvp(lambda a, b: a * 2, (x, x), (ones, ones), strict=True)
    # sign's backward ignores its grad: the double-backward trick cannot see through it.
    with raises(RuntimeError, "The gradient with respect to input 0 is independent of the "
                "inputs of the user-provided function. This is not allowed in strict mode."):
        jvp(lambda a: a.sign(), x, ones, strict=True)
    with raises(RuntimeError, "The gradient with respect to the input is independent of "
                "entry 1 in the grad_outputs when using the double backward trick to compute "
                "forward mode gradients. This is not allowed in strict mode."):
        jvp(lambda a: (a, a.sign()), x, ones, strict=True)
    _, (j0, j1) = jvp(lambda a: (a, a.sign()), x, ones)
    close(j1, np.zeros(3))


def test_jvp_create_graph_is_differentiable():
    x = rand64(3).requires_grad_()
    _, res = jvp(lambda a: a**3, x, torch.ones(3, dtype=F64), create_graph=True)
    (g,) = torch.autograd.grad(res.sum(), x)
    close(g, 6 * x.detach().numpy())


# ---- jacobian -------------------------------------------------------------------------


@pytest.mark.parametrize("vectorize", [False, True])
def test_C293_jacobian_shape_and_values(vectorize):
    x = rand64(2, 2)
    jac = jacobian(lambda a: a.exp().sum(1), x, vectorize=vectorize)
    assert jac.shape == (2, 2, 2)
    expected = np.zeros((2, 2, 2))
    for i in range(2):
        expected[i, i, :] = np.exp(x.numpy()[i])
    close(jac, expected)


@pytest.mark.parametrize("vectorize", [False, True])
def test_C294_jacobian_structures(vectorize):
    x, y = rand64(2), rand64(3)
    xn, yn = x.numpy(), y.numpy()

    def jac(f, inputs):
        return jacobian(f, inputs, vectorize=vectorize)

    j = jac(lambda a, b: a.sum() * b, (x, y))  # one output, tuple of inputs
    assert isinstance(j, tuple) and len(j) == 2
    assert j[0].shape == (3, 2) and j[1].shape == (3, 3)
    close(j[0], np.outer(yn, np.ones(2)))
    close(j[1], np.eye(3) * xn.sum())

    j = jac(lambda a: (a * a, a.sum()), x)  # tuple of outputs, one input
    assert isinstance(j, tuple) and len(j) == 2
    assert j[0].shape == (2, 2) and j[1].shape == (2,)
    close(j[0], np.diag(2 * xn))
    close(j[1], np.ones(2))

    j = jac(lambda a, b: (a.sum() * b, a.sin()), (x, y))  # both tuples: J[out][in]
    assert isinstance(j, tuple) and all(isinstance(row, tuple) for row in j)
    assert [[b.shape for b in row] for row in j] == [[(3, 2), (3, 3)], [(2, 2), (2, 3)]]
    close(j[1][0], np.diag(np.cos(xn)))
    close(j[1][1], np.zeros((2, 3)))


def test_C295_vectorize_matches_loop_on_a_dense_jacobian():
    W, x, expected, _ = tanh_layer(7)
    f = lambda a: (W @ a).tanh()  # noqa: E731
    loop = jacobian(f, x)
    batched = jacobian(f, x, vectorize=True)
    close(loop, expected)
    close(batched, expected)


def test_C295_vectorize_create_graph_matches_loop():
    x = rand64(3).requires_grad_()
    f = lambda a: a**3  # noqa: E731
    for vectorize in (False, True):
        jac = jacobian(f, x, create_graph=True, vectorize=vectorize)
        assert jac.requires_grad
        (g,) = torch.autograd.grad(jac.sum(), x)
        close(g, 6 * x.detach().numpy())


def test_C295_vectorize_fills_unused_inputs_with_zero_blocks():
    x, y = rand64(2), rand64(3)
    j = jacobian(lambda a, b: a * 2, (x, y), vectorize=True)
    close(j[0], 2 * np.eye(2))
    close(j[1], np.zeros((2, 3)))


def test_C296_C297_forward_mode_argument_errors():
    # These are raised before any forward AD runs.
    x = rand64(2)
    with raises(NotImplementedError, "Computing Jacobian using forward-AD or forward-over-"
                "reverse Hessian isonly implemented for `vectorize=True`."):
        jacobian(lambda a: a * 2, x, strategy="forward-mode")
    with raises(NotImplementedError, "torch.autograd.functional.jacobian: `create_graph=True` "
                'and `strategy="forward-mode"` are not supported together (yet). Please '
                'either set `create_graph=False` or `strategy="reverse-mode"`.'):
        jacobian(lambda a: a * 2, x, create_graph=True, strategy="forward-mode",
                 vectorize=True)
    with raises(RuntimeError, "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `strict=False` or `strategy="reverse-mode"`.'):
        jacobian(lambda a: a * 2, x, strict=True, strategy="forward-mode", vectorize=True)
    with raises(TypeError, "The inputs given to jacobian must be either a Tensor or a tuple "
                "of Tensors but the given inputs has type <class 'list'>."):
        jacobian(lambda a: a * 2, [x], strategy="forward-mode")


def test_C298_invalid_strategy():
    with raises(AssertionError, 'Expected strategy to be either "forward-mode" or '
                '"reverse-mode". Hint: If your function has more outputs than inputs, '
                '"forward-mode" tends to be more performant. Otherwise, prefer to use '
                '"reverse-mode".'):
        jacobian(lambda a: a * 2, rand64(2), strategy="backward")


def test_C299_vectorize_with_strict():
    with raises(RuntimeError, "torch.autograd.functional.jacobian: `strict=True` and "
                "`vectorized=True` are not supported together. Please either set "
                "`strict=False` or `vectorize=False`."):
        jacobian(lambda a: a * 2, rand64(2), strict=True, vectorize=True)


def test_C300_strict_unused_input():
    x, y = rand64(2), rand64(2)
    with raises(RuntimeError, "Output 0 of the user-provided function is independent of "
                "input 1. This is not allowed in strict mode."):
        jacobian(lambda a, b: a * a, (x, y), strict=True)
    j = jacobian(lambda a, b: a * a, (x, y))
    close(j[1], np.zeros((2, 2)))


def test_C301_strict_create_graph_linear():
    x = rand64(2)
    with raises(RuntimeError, "The jacobian of the user-provided function is independent of "
                "input 0. This is not allowed in strict mode when create_graph=True."):
        jacobian(lambda a: a * 2, x, strict=True, create_graph=True)
    # torch names the output's index in this message.
    with raises(RuntimeError, "The jacobian of the user-provided function is independent of "
                "input 1. This is not allowed in strict mode when create_graph=True."):
        jacobian(lambda a: (a * a, a * 2), x, strict=True, create_graph=True)
    j = jacobian(lambda a: a * a, x, strict=True, create_graph=True)
    assert j.requires_grad


@pytest.mark.parametrize("vectorize", [False, True])
def test_C302_reverse_mode_block_dtype_follows_input(vectorize):
    x = rand64(3)
    j = jacobian(lambda a: a.float() * 2, x, vectorize=vectorize)
    assert j.dtype == F64
    close(j, 2 * np.eye(3))


# ---- hessian --------------------------------------------------------------------------


@pytest.mark.parametrize("vectorize", [False, True])
def test_C303_hessian_shape_and_values(vectorize):
    x = rand64(2, 2)
    h = hessian(lambda a: a.pow(3).sum(), x, vectorize=vectorize)
    assert h.shape == (2, 2, 2, 2)
    close(h, np.diag(6 * x.numpy().reshape(-1)).reshape(2, 2, 2, 2))


@pytest.mark.parametrize("vectorize", [False, True])
def test_C303_hessian_tuple_inputs(vectorize):
    h = hessian(lambda a, b: (2 * a**2 + 3 * b**2).sum(), (rand64(2), rand64(2)),
                vectorize=vectorize)
    assert isinstance(h, tuple) and all(isinstance(row, tuple) for row in h)
    close(h[0][0], 4 * np.eye(2))
    close(h[0][1], np.zeros((2, 2)))
    close(h[1][0], np.zeros((2, 2)))
    close(h[1][1], 6 * np.eye(2))


def test_C303_hessian_dense_against_hand_derivation():
    W, x, _, expected = tanh_layer(6, seed=1)
    f = lambda a: (W @ a).tanh().sum()  # noqa: E731
    close(hessian(f, x), expected)
    close(hessian(f, x, vectorize=True), expected)


def test_C303_hessian_mixed_blocks_and_dtype_of_input_j():
    # torch's docstring (and the spec) say H[i][j] takes input i's dtype; a run of torch
    # shows input j's: the outer reverse-mode Jacobian is taken with respect to input j.
    x, y = rand64(2), torch.rand(3)
    h = hessian(lambda a, b: (a.sum() * b.double()).sum(), (x, y))
    assert [[b.shape for b in row] for row in h] == [[(2, 2), (2, 3)], [(3, 2), (3, 3)]]
    assert h[0][1].dtype == torch.float32 and h[1][0].dtype == F64
    close(h[0][1], np.ones((2, 3)))
    close(h[1][0], np.ones((3, 2)))


def test_hessian_create_graph_gives_third_derivatives():
    x = rand64(3).requires_grad_()
    h = hessian(lambda a: (a**4).sum(), x, create_graph=True)
    assert h.requires_grad
    (g,) = torch.autograd.grad(h.sum(), x)  # sum of diag(12 a²) → 24 a
    close(g, 24 * x.detach().numpy())


def test_C304_hessian_output_errors():
    x = rand64(2)
    with raises(RuntimeError, "The Tensor returned by the function given to hessian should "
                "contain a single element"):
        hessian(lambda a: a**3, x)
    with raises(RuntimeError, "The function given to hessian should return a single Tensor"):
        hessian(lambda a: ((a**3).sum(),), x)


def test_C305_outer_strategy_checks():
    x = rand64(2)
    with raises(AssertionError, 'Expected strategy to be either "forward-mode" or '
                '"reverse-mode".'):
        hessian(lambda a: (a**3).sum(), x, outer_jacobian_strategy="sideways")
    with raises(NotImplementedError, "Computing Jacobian using forward-AD or forward-over-"
                "reverse Hessian isonly implemented for `vectorize=True`."):
        hessian(lambda a: (a**3).sum(), x, outer_jacobian_strategy="forward-mode")
    with raises(NotImplementedError, "torch.autograd.functional.jacobian: `create_graph=True` "
                'and `strategy="forward-mode"` are not supported together (yet). Please '
                'either set `create_graph=False` or `strategy="reverse-mode"`.'):
        hessian(lambda a: (a**3).sum(), x, outer_jacobian_strategy="forward-mode",
                vectorize=True, create_graph=True)


def test_C306_strict_hessian_of_linear_function():
    x = rand64(2)
    with raises(RuntimeError, E_STRICT_HESSIAN_LINEAR):
        hessian(lambda a: a.sum() * 2, x, strict=True)
    # The inner check fires before the outer "strict with vectorize" one.
    with raises(RuntimeError, E_STRICT_HESSIAN_LINEAR):
        hessian(lambda a: a.sum() * 2, x, strict=True, vectorize=True)
    close(hessian(lambda a: a.sum() * 2, x), np.zeros((2, 2)))


# ---- vhp / hvp ------------------------------------------------------------------------


def test_C307_vhp_shapes_and_errors():
    x = rand64(2, 2)
    out, res = vhp(lambda a: a.pow(3).sum(), x, torch.ones(2, 2, dtype=F64))
    assert out.shape == () and res.shape == (2, 2)
    close(res, 6 * x.numpy())
    with raises(RuntimeError, "The Tensor returned by the function given to vhp should "
                "contain a single element"):
        vhp(lambda a: a**3, x, x)
    with raises(RuntimeError, "The function given to vhp should return a single Tensor"):
        vhp(lambda a: ((a**3).sum(),), x, x)
    with raises(RuntimeError, E_V_NONE_INPUT):
        vhp(lambda a: (a**3).sum(), x)


@pytest.mark.parametrize("fn", [vhp, hvp])
def test_C307_C308_dense_against_hand_derivation(fn):
    W, x, _, hess = tanh_layer(5, seed=2)
    v = rand64(5)
    out, res = fn(lambda a: (W @ a).tanh().sum(), x, v)
    close(res, hess @ v.numpy())  # H is symmetric: vᵀH = Hv
    close(out, np.tanh(W.numpy() @ x.numpy()).sum())


def test_C308_hvp_equals_vhp_and_errors():
    x, y = rand64(3), rand64(3)
    v = (rand64(3), rand64(3))
    f = lambda a, b: (a.sin() * b * b).sum()  # noqa: E731
    _, r1 = vhp(f, (x, y), v)
    _, r2 = hvp(f, (x, y), v)
    for a, b in zip(r1, r2):
        close(a, b.numpy())
    with raises(RuntimeError, "The function given to hvp should return a single Tensor"):
        hvp(lambda a: ((a**3).sum(),), x, x)
    with raises(RuntimeError, "The Tensor returned by the function given to hvp should "
                "contain a single element"):
        hvp(lambda a: a**3, x, x)


@pytest.mark.parametrize("fn", [vhp, hvp])
def test_C309_strict_linear_and_zeros(fn):
    x = rand64(3)
    with raises(RuntimeError, E_STRICT_HESSIAN_LINEAR):
        fn(lambda a: a.sum() * 2, x, x, strict=True)
    _, res = fn(lambda a: a.sum() * 2, x, x)
    close(res, np.zeros(3))


@pytest.mark.parametrize("fn", [vhp, hvp])
def test_vhp_hvp_create_graph_is_differentiable(fn):
    x = rand64(3).requires_grad_()
    out, res = fn(lambda a: (a**3).sum(), x, torch.ones(3, dtype=F64), create_graph=True)
    assert out.requires_grad and res.requires_grad
    (g,) = torch.autograd.grad(res.sum(), x)
    close(g, np.full(3, 6.0))


class _SkewProduct(torch.autograd.Function):
    """x * y with a deliberately asymmetric backward (grad·y, grad·2x): the "Hessian"
    d(backward)/d(inputs) is [[0, 1], [2, 0]], so vᵀH and Hv differ."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return grad * y, grad * 2 * x


def test_C308_hvp_is_H_times_v_and_vhp_is_v_times_H():
    x, y = rand64(1), rand64(1)
    v = (torch.ones(1, dtype=F64), torch.zeros(1, dtype=F64))
    f = lambda a, b: _SkewProduct.apply(a, b).sum()  # noqa: E731
    _, left = vhp(f, (x, y), v)
    _, right = hvp(f, (x, y), v)
    close(left[0], [0.0])
    close(left[1], [1.0])
    close(right[0], [0.0])
    close(right[1], [2.0])


def test_C303_hessian_of_a_one_element_non_scalar_output():
    # The one element is squeezed out: the result is input.shape + input.shape.
    x = rand64(3)
    h = hessian(lambda a: (a**3).sum().reshape(1, 1), x)
    assert h.shape == (3, 3)
    close(h, np.diag(6 * x.numpy()))


def test_C295_vectorize_is_one_batched_grad_call(monkeypatch):
    # vectorize=True must reach autograd.grad(is_grads_batched=True) once, so that the
    # vmap engine can replace the per-row loop underneath it.
    calls = []
    real_grad = torch.autograd.grad

    def recording_grad(*args, **kwargs):
        calls.append(kwargs.get("is_grads_batched", False))
        return real_grad(*args, **kwargs)

    monkeypatch.setattr(torch.autograd, "grad", recording_grad)
    x = rand64(4)
    jacobian(lambda a: (a.sin(), a.sum()), x, vectorize=True)
    assert calls == [True]
    calls.clear()
    jacobian(lambda a: (a.sin(), a.sum()), x)
    assert calls == [False] * 5
