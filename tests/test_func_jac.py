"""torch.func.jacrev / jacfwd / hessian (func.md §6-7; C339-C345, C368)."""

import re

import ferrograd as torch
import pytest
from ferrograd.func import hessian, jacfwd, jacrev, vmap

MOD = torch.__name__


def close(a, b):
    return torch.allclose(a, b, atol=1e-6)


def diag(v):
    return torch.eye(v.shape[0]) * v


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_jacobian_of_sin(jac):  # C339
    x = torch.randn(5)
    assert close(jac(torch.sin)(x), diag(x.cos()))


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_argnums_tuple_and_has_aux(jac):  # C340
    x, y = torch.randn(3), torch.randn(3)
    ja, jb = jac(lambda a, b: a * b, argnums=(0, 1))(x, y)
    assert close(ja, diag(y)) and close(jb, diag(x))
    j, aux = jac(lambda a: (a.sin(), a.cos()), has_aux=True)(x)
    assert close(j, diag(x.cos())) and close(aux, x.cos())


def test_jacrev_chunk_size():  # C341
    with pytest.raises(
        ValueError, match=re.escape("jacrev: `chunk_size` should be greater than 0.")
    ):
        jacrev(torch.sin, chunk_size=0)
    x = torch.randn(2, 3)
    full = jacrev(torch.sin)(x)
    for k in (1, 2, 4):
        assert close(jacrev(torch.sin, chunk_size=k)(x), full)


@pytest.mark.parametrize("name, jac", [("jacrev", jacrev), ("jacfwd", jacfwd)])
def test_complex_rejected(name, jac):  # C342
    z = torch.randn(3).to(torch.complex64)
    msg = (
        f"{name}: Expected all inputs to be real but received complex tensor at flattened "
        "input idx: 0"
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        jac(lambda a: a * 2)(z)


def test_complex_output_rejected():  # C342 (outputs)
    msg = (
        "jacrev: Expected all outputs to be real but received complex tensor at flattened "
        "input idx: 0"
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        jacrev(lambda a: a.to(torch.complex64))(torch.randn(3))


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_dict_output_and_block_shapes(jac):  # C343
    x = torch.randn(3)
    j = jac(lambda a: {"s": a.sin(), "d": a * 2})(x)
    assert list(j) == ["s", "d"]
    assert close(j["s"], diag(x.cos())) and close(j["d"], 2 * torch.eye(3))
    m = torch.randn(2, 3)
    assert jac(lambda t: t.sum(0))(m).shape == (3, 2, 3)


def test_dict_input():  # func.md §6: the block has the input's structure
    p = {"w": torch.randn(2), "b": torch.randn(())}
    j = jacrev(lambda p: p["w"] * 3 + p["b"])(p)
    assert close(j["w"], 3 * torch.eye(2)) and close(j["b"], torch.ones(2))


def test_jacfwd_randomness():  # C344
    x = torch.randn(3)
    with pytest.raises(
        RuntimeError, match="vmap: called random operation while in randomness error mode"
    ):
        jacfwd(lambda a: a * torch.rand(3))(x)
    assert jacfwd(lambda a: a * torch.rand(3), randomness="same")(x).shape == (3, 3)


def test_jacfwd_randomness_same_allowed():  # C344 (second half)
    x = torch.randn(3)
    assert jacfwd(lambda a: a * torch.rand(3), randomness="same")(x).shape == (3, 3)


def test_hessian():  # C345
    x = torch.randn(5)

    def f(a):
        return a.sin().sum()

    h = hessian(f)(x)
    assert close(h, diag(-x.sin()))
    assert close(jacrev(jacrev(f))(x), h)
    assert not h.requires_grad


def test_vmap_of_jacrev():  # C368
    x = torch.randn(4, 3)
    j = vmap(jacrev(torch.sin))(x)
    assert j.shape == (4, 3, 3)
    assert close(j[1], diag(x[1].cos()))
