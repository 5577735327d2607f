"""torch.vmap / torch.func.vmap (func.md §8, §11; C346-C367)."""

import functools
import re

import ferrograd as torch
import pytest
from ferrograd import func
from ferrograd.func import grad, vmap

MOD = torch.__name__


def close(a, b):
    return torch.allclose(a, b, atol=1e-6)


def test_dot_in_dims_out_dims():  # C346
    x, y = torch.randn(2, 5), torch.randn(2, 5)
    r = vmap(torch.dot)(x, y)
    assert r.shape == (2,) and close(r[1], torch.dot(x[1], y[1]))
    xt, v = torch.randn(5, 2), torch.randn(5)
    r = vmap(torch.dot, in_dims=(1, None))(xt, v)
    assert close(r[0], torch.dot(xt[:, 0], v))
    m = torch.randn(2, 3)
    assert vmap(lambda a: a * 2, out_dims=1)(m).shape == (3, 2)
    assert close(vmap(lambda a: a * 2, out_dims=1)(m), (m * 2).t())


def test_nested_vmap():  # C347
    x, y = torch.randn(2, 3, 4), torch.randn(2, 3, 4)
    r = vmap(vmap(torch.dot))(x, y)
    assert r.shape == (2, 3) and close(r[1, 2], torch.dot(x[1, 2], y[1, 2]))


def test_dict_inputs_with_per_key_in_dims():  # C348
    d = {"a": torch.randn(3, 2), "b": torch.randn(2)}
    r = vmap(lambda p: p["a"] + p["b"], in_dims=({"a": 0, "b": None},))(d)
    assert r.shape == (3, 2) and close(r[2], d["a"][2] + d["b"])


def test_out_dims_per_output():  # C349
    x = torch.randn(2, 3)
    a, b = vmap(lambda t: (t * 2, t + 1), out_dims=(1, 0))(x)
    assert a.shape == (3, 2) and b.shape == (2, 3)
    t, five = vmap(lambda t: (t, 5), out_dims=(0, None))(x)
    assert five == 5 and torch.equal(t, x)


def test_kwargs_not_batched():  # C350
    x = torch.randn(2, 3)
    r = vmap(lambda t, *, scale: t * scale)(x, scale=torch.ones(3) * 2)
    assert torch.equal(r, x * 2)


def test_no_inputs():  # C351
    msg = (
        "vmap(<lambda>)(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
        "trying to vmap over a function with no inputs. The latter is unsupported."
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        vmap(lambda: torch.ones(2))()


def test_batch_size_mismatch():  # C352
    msg = (
        "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
        "[2, 3] for the mapped dimension"
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        vmap(lambda a, b: a)(torch.randn(2, 3), torch.randn(3))
    with pytest.raises(ValueError, match="vmap: Expected at least one Tensor to vmap over"):
        vmap(lambda a: a, in_dims=(None,))(torch.randn(2))


def test_in_dim_out_of_range():  # C353
    msg = (
        "vmap(<lambda>, in_dims=2, ...)(<inputs>): Got in_dim=2 for some input, but that "
        "input is a Tensor of dimensionality 2 so expected in_dim to satisfy -2 <= in_dim < 2."
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        vmap(lambda a: a, in_dims=2)(torch.randn(2, 3))


def test_in_dim_for_non_tensor():  # C354
    msg = (
        "vmap(<lambda>, in_dims=(0, 0), ...)(<inputs>): Got in_dim=0 for an input but the "
        "input is of type <class 'int'>. We cannot vmap over non-Tensor arguments, please use "
        "None as the respective in_dim"
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        vmap(lambda a, b: a, in_dims=(0, 0))(torch.randn(2), 1)


def test_in_dims_validation():  # C355
    x = torch.randn(2, 3)
    msg = (
        "vmap(<lambda>, in_dims=(0,), ...)(<inputs>): in_dims is not compatible with the "
        "structure of `inputs`. in_dims has structure TreeSpec(tuple, None, [*]) but inputs "
        "has structure TreeSpec(tuple, None, [*,\n  *])."
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        vmap(lambda a, b: a, in_dims=(0,))(x, x)
    msg = (
        "vmap(<lambda>, in_dims=[0], ...)(<inputs>): expected `in_dims` to be int or a "
        "(potentially nested) tuple matching the structure of inputs, got: <class 'list'>."
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        vmap(lambda a: a, in_dims=[0])(x)
    msg = (
        "vmap(<lambda>, in_dims=(0.5,), ...)(<inputs>): Got in_dim=0.5 for an input but "
        "in_dim must be either an integer dimension or None."
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        vmap(lambda a: a, in_dims=(0.5,))(x)


def test_function_names_in_errors():  # func.md §8 (<name> rendering)
    x = torch.randn(2)
    with pytest.raises(
        ValueError, match=re.escape("vmap(functools.partial(add, ...), in_dims=[0]")
    ):
        vmap(functools.partial(torch.add, alpha=2), in_dims=[0])(x, x)
    with pytest.raises(ValueError, match=re.escape("vmap(add, in_dims=[0]")):
        vmap(torch.add, in_dims=[0])(x, x)


def test_non_tensor_output():  # C356
    msg = (
        "vmap(<lambda>, ...): `<lambda>` must only return Tensors, got type <class 'int'>. "
        "Did you mean to set out_dims= to None for output?"
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        vmap(lambda a: 5)(torch.randn(2))
    assert vmap(lambda a: 5, out_dims=None)(torch.randn(2)) == 5


def test_batched_output_with_out_dim_none():  # C357
    msg = "vmap(<lambda>, ...): `<lambda>` can not return a BatchedTensor when out_dim is None"
    with pytest.raises(ValueError, match=re.escape(msg)):
        vmap(lambda a: a * 2, out_dims=None)(torch.randn(2))
    c = torch.randn(3)
    assert vmap(lambda a: c, out_dims=None)(torch.randn(2)) is c


def test_out_dims_validation():  # C358
    x = torch.randn(2, 3)
    msg = (
        "vmap(<lambda>, ..., out_dims=(0, 0, 0))(<inputs>): out_dims is not compatible with "
        "the structure of `outputs`. out_dims has structure TreeSpec(tuple, None, [*,\n  *,\n"
        "  *]) but outputs has structure TreeSpec(tuple, None, [*,\n  *])."
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        vmap(lambda a: (a, a), out_dims=(0, 0, 0))(x)
    msg = (
        "vmap(<lambda>, ..., out_dims=x): `out_dims` must be an int, None or a python "
        "collection of ints representing where in the outputs the vmapped dimension should "
        "appear."
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        vmap(lambda a: (a, a), out_dims="x")(x)
    assert vmap(lambda a: a, out_dims=(0,))(x).shape == (2, 3)  # 1-tuple for one tensor


def test_randomness_validation():  # C359
    msg = "Only allowed values for randomness are 'error', 'different', or 'same'. Got foo"
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        vmap(lambda a: a, randomness="foo")


def test_random_op_in_error_mode():  # C360
    with pytest.raises(
        RuntimeError, match="vmap: called random operation while in randomness error mode"
    ):
        vmap(lambda a: a + torch.rand(3))(torch.randn(2, 3))


def test_randomness_same_and_different():  # C361
    x = torch.zeros(4, 3)
    same = vmap(lambda a: a + torch.rand(3), randomness="same")(x)
    assert all(torch.equal(same[i], same[0]) for i in range(4))
    diff = vmap(lambda a: a + torch.rand(3), randomness="different")(x)
    assert not torch.equal(diff[0], diff[1])


def test_randomness_same_with_chunks():  # C361 (chunks restart from the same RNG state)
    x = torch.zeros(4, 3)
    r = vmap(lambda a: a + torch.rand(()), randomness="same", chunk_size=1)(x)
    assert all(torch.equal(r[i], r[0]) for i in range(4))


def test_chunk_size():  # C362
    msg = "vmap: chunk_size should be None or greater than 0. (got 0)"
    with pytest.raises(ValueError, match=re.escape(msg)):
        vmap(lambda a: a, chunk_size=0)
    x, y = torch.randn(5, 3), torch.randn(3, 5)
    full = vmap(lambda a, b: (a * b, a.sum()), in_dims=(0, 1), out_dims=(1, 0))(x, y)
    for k in (1, 2, 3):
        part = vmap(lambda a, b: (a * b, a.sum()), in_dims=(0, 1), out_dims=(1, 0), chunk_size=k)(
            x, y
        )
        assert close(part[0], full[0]) and close(part[1], full[1])


def test_item_and_control_flow():  # C363
    with pytest.raises(
        RuntimeError, match=re.escape("vmap: It looks like you're calling .item() on a Tensor.")
    ):
        vmap(lambda a: a.sum().item())(torch.randn(2, 3))
    msg = (
        "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow."
    )

    def f(a):
        if a.sum() > 0:
            return a
        return -a

    with pytest.raises(RuntimeError, match=re.escape(msg)):
        vmap(f)(torch.randn(2, 3))


def test_negative_in_dims_and_alias():  # C364
    x = torch.randn(3, 2)
    assert close(vmap(lambda a: a * 2, in_dims=-1)(x), (x * 2).t())
    assert torch.vmap is func.vmap


def test_nested_output_structure():  # C365
    x = torch.randn(2, 3)
    out = vmap(lambda a: {"l": [a, (a * 2, a.sum())]})(x)
    assert list(out) == ["l"] and isinstance(out["l"], list) and isinstance(out["l"][1], tuple)
    assert out["l"][1][0].shape == (2, 3) and out["l"][1][1].shape == (2,)


def test_per_sample_gradients():  # C366
    w = torch.randn(5, requires_grad=True)
    X, t = torch.randn(3, 5), torch.randn(3)

    def loss(w, x, target):
        assert x.dim() == 1
        return ((torch.relu(torch.dot(x, w)) - target) ** 2).mean()

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(w, X, t)
    assert per_sample.shape == (3, 5)
    for i in range(3):
        expected = torch.autograd.grad(loss(w, X[i], t[i]), w)[0]
        assert close(per_sample[i], expected)


def test_grad_of_vmap():  # C367
    w, examples = torch.randn(3), torch.randn(4, 3)
    g = grad(lambda w: vmap(lambda e: (e * w).sum())(examples).sum())(w)
    assert close(g, examples.sum(0))


def test_empty_batch_of_huge_examples_allocates_nothing():
    # 0 examples of 2**40 elements: the wrappers (and their detached aliases) must not
    # allocate an example's worth of memory.
    x = torch.zeros(0, 2**40)
    out = vmap(lambda v: (v.detach() * 2).sum())(x)
    assert tuple(out.shape) == (0,)
