"""torch.func.grad / grad_and_value (func.md §1-2; C310-C326, C376)."""

import re

import ferrograd as torch
import pytest
from ferrograd.func import grad, grad_and_value


def close(a, b):
    return torch.allclose(a, b, atol=1e-6)


def test_grad_sin_and_second_order():  # C310
    x = torch.tensor(0.7)
    assert close(grad(torch.sin)(x), x.cos())
    assert close(grad(grad(torch.sin))(x), -x.sin())


@pytest.mark.parametrize("shape", [(3,), (1,)])
def test_non_scalar_output(shape):  # C311
    msg = (
        "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
        "with 1 dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        grad(lambda x: x * 2)(torch.randn(shape))


def test_float_output():  # C312
    msg = "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got <class 'float'>"
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        grad(lambda x: 1.0)(torch.tensor(1.0))


def test_has_aux_needs_tuple():  # C313
    msg = (
        "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) "
        "if has_aux is True"
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        grad(lambda x: x.sin(), has_aux=True)(torch.tensor(1.0))


def test_aux_must_be_tensors():  # C314
    with pytest.raises(RuntimeError, match="Expected tensors, got unsupported type <class 'str'>"):
        grad(lambda x: (x.sin(), "a"), has_aux=True)(torch.tensor(1.0))


def test_has_aux_tuple_argnums_seed():  # C315
    def loss_fn(y, y_pred):
        per_sample = (0.5 * y_pred - y) ** 2
        return per_sample.mean(), (y_pred, per_sample)

    y, y_pred = torch.randn(4), torch.randn(4)
    (g_y, g_p), (aux_pred, aux_loss) = grad(loss_fn, argnums=(0, 1), has_aux=True)(y, y_pred)
    d = 0.5 * y_pred - y
    assert close(g_y, -2 * d / 4) and close(g_p, d / 4)
    assert torch.equal(aux_pred, y_pred) and close(aux_loss, d**2)
    assert not aux_pred.requires_grad and not g_y.requires_grad


def test_dict_argument():  # C316
    p = {"w": torch.tensor(2.0), "b": torch.tensor(3.0)}
    g = grad(lambda p, x: p["w"] * x + p["b"])(p, torch.tensor(5.0))
    assert isinstance(g, dict) and list(g) == ["w", "b"]
    assert g["w"].item() == 5.0 and g["b"].item() == 1.0


def test_kwargs_not_differentiated():  # C317
    g = grad(lambda x, *, k: x * k)(torch.tensor(2.0), k=torch.tensor(7.0))
    assert g.item() == 7.0


def test_grad_and_value():  # C318
    x = torch.tensor(0.5)
    g, v = grad_and_value(torch.sin)(x)
    assert close(g, x.cos()) and close(v, x.sin())
    g, (v, aux) = grad_and_value(lambda x: (x.sin(), x.cos()), has_aux=True)(x)
    assert close(g, x.cos()) and close(v, x.sin()) and close(aux, x.cos())


@pytest.mark.parametrize(
    "argnums, msg",
    [
        (1, "Got argnum=1, but only 1 positional inputs"),
        ((0, 0), "argnums elements must be unique, got (0, 0)"),
        ((0, -1), "argnums elements must be unique, got (0, 0)"),
        ((), "argnums must be non-empty"),
        ([0], "argnums must be int or Tuple[int, ...], got: <class 'list'>"),
        ((0.5,), "argnum must be int, got: <class 'float'>"),
    ],
)
def test_argnums_errors(argnums, msg):  # C319
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        grad(lambda x: x * 1, argnums=argnums)(torch.tensor(1.0))


def test_negative_argnums():  # C320
    g = grad(lambda a, b: a * b**2, argnums=-1)(torch.tensor(2.0), torch.tensor(3.0))
    assert g.item() == 12.0


def test_non_tensor_argument():  # C321
    with pytest.raises(
        ValueError, match="Thing passed to transform API must be Tensor, got <class 'float'>"
    ):
        grad(lambda x: x * 2)(3.0)
    with pytest.raises(
        RuntimeError, match="only Tensors of floating point dtype can require gradients"
    ):
        grad(lambda x: x * 2)(torch.tensor(3))


def f_no_grad_inside(x):
    with torch.no_grad():
        c = x**2
    return x - c


def test_no_grad_inside():  # C322
    assert grad(f_no_grad_inside)(torch.tensor(3.0)).item() == 1.0


def test_outer_no_grad_ignored():  # C323
    with torch.no_grad():
        assert grad(f_no_grad_inside)(torch.tensor(3.0)).item() == 1.0
        assert grad(lambda x: x**2)(torch.tensor(3.0)).item() == 6.0


def test_no_grad_between_nested_transforms():  # C324
    def outer(x):
        with torch.no_grad():
            return grad(lambda y: y**2 * x)(x)

    assert grad(outer)(torch.tensor(3.0)).item() == 0.0


def test_no_perturbation_confusion():  # C325
    assert grad(lambda x: grad(lambda y: x * y)(x))(torch.tensor(3.0)).item() == 1.0


def test_connected_to_regular_graph():  # C326
    xr = torch.tensor([1.0, 2.0], requires_grad=True)
    g = grad(lambda x: (x**3).sum())(xr)
    assert g.requires_grad
    g.sum().backward()
    assert torch.equal(xr.grad, 6 * xr.detach())
    assert xr.grad is not None
    plain = grad(lambda x: (x**3).sum())(torch.tensor([1.0, 2.0]))
    assert not plain.requires_grad


def test_unused_input_gets_zero():  # func.md §2
    g = grad(lambda a, b: a * 2, argnums=(0, 1))(torch.tensor(1.0), torch.randn(3))
    assert torch.equal(g[1], torch.zeros(3))


def test_backward_inside_transform_raises():  # func.md §1, autograd.md §2 step 1
    w = torch.tensor(1.0, requires_grad=True)

    def f(x):
        (w * 2).backward()
        return x.sin()

    msg = "backward() called inside a functorch transform. This is not supported"
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        grad(f)(torch.tensor(1.0))
    (w * 2).backward()  # fine again outside
    assert w.grad.item() == 2.0


def test_saved_tensor_hooks_refused():  # C376
    msg = (
        "torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks. "
        "Please open an issue with your use case."
    )

    def f(x):
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            return (x * x).sum()

    with pytest.raises(RuntimeError, match=re.escape(msg)):
        grad(f)(torch.randn(3))


def test_captured_tensor_stays_differentiable():  # func.md §1 (closures; gradient penalty)
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    x = torch.tensor([3.0, 4.0])
    g = grad(lambda y: (w * y**2).sum())(x)  # 2 * w * x
    assert g.requires_grad
    g.sum().backward()
    assert torch.equal(w.grad, 2 * x)
    assert not grad(lambda y: (w.detach() * y**2).sum())(x).requires_grad
