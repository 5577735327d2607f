"""torch.func.vjp / jvp / linearize (func.md §3-5; C327-C338)."""

import re

import ferrograd as torch
import pytest
from ferrograd.func import jvp, linearize, vjp

MOD = torch.__name__


def close(a, b):
    return torch.allclose(a, b, atol=1e-6)


def test_vjp_basic_and_reuse():  # C327
    x = torch.randn(3)
    out, vjp_fn = vjp(torch.sin, x)
    assert close(out, x.sin())
    first = vjp_fn(torch.ones(3))
    assert isinstance(first, tuple) and len(first) == 1
    assert close(first[0], x.cos())
    assert close(vjp_fn(2 * torch.ones(3))[0], 2 * x.cos())


def test_vjp_several_primals_and_unused():  # func.md §3
    x, y = torch.randn(3), torch.randn(2)
    _, vjp_fn = vjp(lambda a, b: a * 2, x, y)
    ga, gb = vjp_fn(torch.ones(3))
    assert torch.equal(ga, 2 * torch.ones(3)) and torch.equal(gb, torch.zeros(2))


def test_cotangent_structure_mismatch():  # C328
    x = torch.randn(3)
    _, vjp_fn = vjp(lambda a: {"a": a, "b": a}, x)
    msg = (
        "Expected pytree structure of cotangents to be the same as pytree structure of "
        "outputs to the function. cotangents: *, primal output: {'a': *, 'b': *}"
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        vjp_fn(x)


def test_vjp_int_output():  # C329
    msg = (
        f"vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor "
        f"with dtype {MOD}.int64"
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        vjp(lambda a: torch.tensor([1, 2]), torch.randn(2))


def test_vjp_non_tensor_output():  # C330
    msg = (
        "vjp(f, *primals): expected f(*primals) to return only tensors, got unsupported "
        "type <class 'int'>"
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        vjp(lambda a: 1, torch.randn(2))


def test_vjp_has_aux():  # C331
    x = torch.randn(3)
    res = vjp(lambda a: (a.sin(), a.cos()), x, has_aux=True)
    assert len(res) == 3 and close(res[2], x.cos()) and not res[2].requires_grad
    with pytest.raises(RuntimeError, match="Expected tensors, got unsupported type <class 'int'>"):
        vjp(lambda a: (a.sin(), 1), x, has_aux=True)
    msg = (
        "vjp(f, *primals): output of function f should be a tuple: (output, aux) if has_aux is True"
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        vjp(lambda a: a.sin(), x, has_aux=True)


def test_vjp_non_tensor_primal():  # func.md §3
    with pytest.raises(
        ValueError, match="Thing passed to transform API must be Tensor, got <class 'float'>"
    ):
        vjp(torch.sin, 1.0)


def test_jvp_basic():  # C332
    x = torch.randn(4)
    out, t = jvp(torch.sin, (x,), (torch.ones(4),))
    assert close(out, x.sin()) and close(t, x.cos())
    msg = (
        "jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid "
        "to call f(*primals)."
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        jvp(torch.sin, x, (torch.ones(4),))


def test_jvp_structure_mismatch():  # C333
    x = torch.randn(2)
    msg = (
        "jvp(f, primals, tangents): Expected primals and tangents to have the same python "
        "structure. For example, if primals is a tuple of 3 tensors, tangents also must be. "
        "Got primals with structure TreeSpec(tuple, None, [*]) and tangents with structure "
        "TreeSpec(list, None, [*])"
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        jvp(torch.sin, (x,), [x])


def test_jvp_strict_and_independent_output():  # C334
    x, c = torch.randn(3), torch.randn(3)
    _, t = jvp(lambda a: c * 2, (x,), (torch.ones(3),))
    assert torch.equal(t, torch.zeros(3))
    msg = (
        "jvp(f, primals, tangents, strict=True): The output of f is independent of the "
        "inputs. This is not allowed with strict=True."
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        jvp(lambda a: c * 2, (x,), (torch.ones(3),), strict=True)


def test_jvp_primal_checks():  # C335
    msg = "jvp(f, primals, tangents): Expected primals to contain at least one Tensor."
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        jvp(torch.sin, (), ())
    msg = "jvp(f, primals, tangents): Expected primals to only contain Tensors, got <class 'float'>"
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        jvp(torch.sin, (1.0,), (1.0,))


def test_jvp_has_aux_and_shape_check():  # func.md §4
    x = torch.randn(3)
    out, t, aux = jvp(lambda a: (a * 3, a.cos()), (x,), (torch.ones(3),), has_aux=True)
    assert torch.equal(t, 3 * torch.ones(3)) and close(aux, x.cos())
    with pytest.raises(RuntimeError, match="output of function f should be a tuple"):
        jvp(torch.sin, (x,), (torch.ones(3),), has_aux=True)
    with pytest.raises(
        RuntimeError, match="Trying to set a forward gradient that has a different size"
    ):
        jvp(torch.sin, (x,), (torch.ones(4),))


def test_jvp_under_no_grad():  # C336 (first half)
    x = torch.randn(3)
    with torch.no_grad():
        _, t = jvp(torch.sin, (x,), (torch.ones(3),))
    assert close(t, x.cos())


def test_nested_jvp():  # C336
    def h(x):
        return jvp(lambda y: x * y, (x,), (torch.tensor(1.0),))[1]

    out, t = jvp(h, (torch.tensor(3.0),), (torch.tensor(1.0),))
    assert out.item() == 3.0 and t.item() == 1.0


def test_linearize():  # C337
    x = torch.randn(3)
    out, jvp_fn = linearize(torch.sin, x)
    assert close(out, x.sin())
    assert close(jvp_fn(torch.ones(3)), x.cos())
    assert close(jvp_fn(2 * torch.ones(3)), 2 * x.cos())


def test_linearize_checks():  # C338
    x = torch.randn(3)
    _, jvp_fn = linearize(torch.sin, x)
    msg = (
        f"tangent:0 with shape {MOD}.Size([4]) in flattened pytree doesn't match the shape "
        f"{MOD}.Size([3]) of the corresponding primal."
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        jvp_fn(torch.ones(4))
    msg = (
        f"tangent:0 with dtype {MOD}.float64 in flattened pytree doesn't match the dtype "
        f"{MOD}.float32 of the corresponding primal."
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        jvp_fn(torch.ones(3, dtype=torch.float64))
    msg = (
        "Expected the tangents TreeSpec(tuple, None, [*,\n  *]) to have the same argspec as "
        "the primals TreeSpec(tuple, None, [*])"
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        jvp_fn(x, x)
