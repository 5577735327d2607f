"""``func.functional_call`` and ``func.stack_module_state`` (spec func.md §9-§11,
checklist C369-C375).

``tests/run_nn_on_torch.py`` runs this file against real torch. C370 and C374 need
``func.grad`` / ``func.vmap``; they are skipped only while those are missing.
"""

import re

import ferrograd as torch
import ferrograd.func
import ferrograd.nn.functional as F
import pytest
from ferrograd import nn
from nn_models import Tied

try:
    from ferrograd.func import functional_call, stack_module_state
except ImportError:  # func/__init__.py not merged yet: the implementation module itself
    from ferrograd.func._functional_call import functional_call, stack_module_state

func_grad = getattr(ferrograd.func, "grad", None)
func_vmap = getattr(ferrograd.func, "vmap", None)


class Counter(nn.Module):
    """A Linear child plus a buffer the forward updates in place."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)
        self.register_buffer("count", torch.zeros(()))
        self.seen = []

    def forward(self, x):
        # What the forward sees: the swapped-in values, not Parameters.
        self.seen.append((type(self.lin.weight), self.lin.weight, self.count))
        self.count.add_(1)
        return self.lin(x)


def fixed_params():
    return {"weight": torch.ones(2, 3), "bias": torch.tensor([1.0, -1.0])}


def test_c369_matches_module_call_and_leaves_module_unchanged():
    # C369: functional_call(m, params, (x,)) equals m(x) with those params.
    m = nn.Linear(3, 2)
    x = torch.randn(4, 3)
    params = {k: v.detach().clone() for k, v in m.named_parameters()}
    assert torch.allclose(functional_call(m, params, (x,)), m(x))
    before = {k: v.detach().clone() for k, v in m.named_parameters()}
    p = fixed_params()
    out = functional_call(m, p, (x,))
    assert torch.allclose(out, x.sum(1, keepdim=True) + p["bias"])
    # A non-tuple args value is one argument.
    assert torch.equal(functional_call(m, p, x), out)
    # The module's own parameters are back and unchanged.
    assert all(isinstance(v, nn.Parameter) for v in m.parameters())
    for name, value in m.named_parameters():
        assert torch.equal(value, before[name])
    assert torch.allclose(m(x), x @ before["weight"].T + before["bias"])


def test_swapped_values_are_plain_and_inplace_updates_land_in_them():
    m = Counter()
    weight, count = torch.ones(2, 3), torch.zeros(())
    functional_call(m, {"lin.weight": weight, "count": count}, (torch.randn(1, 3),))
    seen_type, seen_weight, seen_count = m.seen[0]
    assert seen_type is type(weight) and seen_weight is weight and seen_count is count
    # The forward's count.add_(1) went to the passed buffer, not the module's.
    assert count.item() == 1.0 and m.count.item() == 0.0
    assert isinstance(m.lin.weight, nn.Parameter) and m.lin.weight is not weight


def test_reassigned_buffer_is_written_back_to_the_callers_dict():
    class Reassigns(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", torch.zeros(()))

        def forward(self, x):
            self.count = self.count + 1
            return x

    m = Reassigns()
    given = torch.zeros(())
    values = {"count": given}
    functional_call(m, values, (1,))
    assert values["count"] is not given and values["count"].item() == 1.0
    assert m.count.item() == 0.0 and given.item() == 0.0


def test_originals_restored_when_forward_raises():
    class Fails(nn.Linear):
        def forward(self, x):
            raise ValueError("boom")

    m = Fails(3, 2)
    weight = m.weight
    with pytest.raises(ValueError, match="boom"):
        functional_call(m, fixed_params(), (torch.zeros(3),))
    assert m.weight is weight and isinstance(m._parameters["bias"], nn.Parameter)


def test_originals_restored_when_a_swap_fails():
    m = Counter()
    weight = m.lin.weight
    with pytest.raises(TypeError, match=r"^3 is not an instance of torch\.Tensor$"):
        functional_call(m, {"lin.weight": torch.ones(2, 3), "lin.bias": 3}, (torch.zeros(3),))
    assert m.lin.weight is weight and m.seen == []
    with pytest.raises(AttributeError, match=r"^Counter has no attribute `nope`$"):
        functional_call(m, {"lin.weight": torch.ones(2, 3), "nope.x": torch.ones(1)}, ())
    assert m.lin.weight is weight


def test_non_strict_unknown_name_is_a_temporary_attribute():
    m = nn.Linear(3, 2)
    extra = torch.ones(1)
    functional_call(m, {"weight": torch.ones(2, 3), "foo": extra}, (torch.zeros(3),))
    assert not hasattr(m, "foo")


def test_c371_strict_missing_and_unexpected_keys():
    # C371: strict reports missing keys; non-strict with a partial dict works.
    m = nn.Linear(3, 2)
    x = torch.randn(4, 3)
    with pytest.raises(RuntimeError) as info:
        functional_call(m, {"weight": torch.ones(2, 3)}, (x,), strict=True)
    assert str(info.value) == "Error(s) in reparametrizing for Linear:\n\tMissing key(s): 'bias'."
    with pytest.raises(RuntimeError) as info:
        extra = {"foo": torch.zeros(1), "bar.baz": torch.zeros(1)}
        functional_call(m, {"weight": torch.ones(2, 3), **extra}, (x,), strict=True)
    assert str(info.value) == (
        "Error(s) in reparametrizing for Linear:\n\tUnexpected key(s): 'bar.baz', 'foo'.\n\t"
        "Missing key(s): 'bias'."
    )
    out = functional_call(m, {"weight": torch.ones(2, 3)}, (x,))
    assert torch.allclose(out, x.sum(1, keepdim=True) + m.bias)
    strict_out = functional_call(m, fixed_params(), (x,), strict=True)
    assert torch.allclose(strict_out, x.sum(1, keepdim=True) + torch.tensor([1.0, -1.0]))


def test_c372_dict_argument_errors():
    m = nn.Linear(3, 2)
    x = torch.randn(4, 3)
    w = torch.ones(2, 3)
    with pytest.raises(
        ValueError,
        match=re.escape(
            "['weight'] appeared in multiple dictionaries; behavior of functional call is ambiguous"
        ),
    ):
        functional_call(m, [{"weight": w}, {"weight": w, "bias": torch.zeros(2)}], (x,))
    with pytest.raises(
        ValueError,
        match=r"^Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, "
        r"but got <class 'int'>$",
    ):
        functional_call(m, 3, (x,))
    with pytest.raises(
        ValueError,
        match=r"^Expected all elements of parameter_and_buffer_dicts to be dictionaries$",
    ):
        functional_call(m, [3], (x,))
    # Disjoint dicts (parameters, buffers) are merged.
    split = functional_call(m, ({"weight": w}, {"bias": torch.zeros(2)}), x)
    assert torch.allclose(split, x.sum(1, keepdim=True).expand(4, 2))


def test_c373_kwargs():
    m = nn.Linear(3, 2)
    x = torch.randn(4, 3)
    p = fixed_params()
    assert torch.equal(
        functional_call(m, p, args=(), kwargs={"input": x}), functional_call(m, p, x)
    )


def test_tied_weights():
    t = Tied()
    x = torch.randn(2, 3)
    w1, w2 = torch.ones(3, 3), torch.zeros(3, 3)
    a_bias, b_bias = t.a.bias.detach(), t.b.bias.detach()
    # tie_weights=True: a.weight's value is used for b.weight too.
    out = functional_call(t, {"a.weight": w1}, (x,))
    assert torch.allclose(out, (x @ w1.T + a_bias) @ w1.T + b_bias)
    assert torch.equal(functional_call(t, {"b.weight": w1}, (x,)), out)
    assert torch.equal(functional_call(t, {"a.weight": w1, "b.weight": w1}, (x,)), out)
    with pytest.raises(
        ValueError,
        match=re.escape(
            "functional_call got multiple values for keys ['a.weight', 'b.weight'], which "
            "are tied. Consider using tie_weights=False"
        ),
    ):
        functional_call(t, {"a.weight": w1, "b.weight": w2}, (x,))
    # Tied names count as given for strict.
    full = {"a.weight": w1, "a.bias": a_bias, "b.bias": b_bias}
    assert torch.equal(functional_call(t, full, (x,), strict=True), out)
    with pytest.raises(RuntimeError, match=r"Missing key\(s\): 'b\.weight'\.$"):
        functional_call(t, full, (x,), strict=True, tie_weights=False)
    # tie_weights=False: b keeps the module's own (shared) weight.
    own = t.a.weight.detach()
    untied = functional_call(t, {"a.weight": w1}, (x,), tie_weights=False)
    assert torch.allclose(untied, (x @ w1.T + a_bias) @ own.T + b_bias)
    both = functional_call(t, {"a.weight": w1, "b.weight": w2}, (x,), tie_weights=False)
    assert torch.allclose(both, b_bias.expand(2, 3))
    assert t.b.weight is t.a.weight


def test_gradients_flow_to_the_passed_tensors():
    m = nn.Linear(3, 2)
    x = torch.randn(4, 3)
    w = torch.ones(2, 3, requires_grad=True)
    functional_call(m, {"weight": w}, (x,)).sum().backward()
    assert torch.allclose(w.grad, torch.ones(4, 2).T @ x)
    assert m.weight.grad is None and m.bias.grad is not None


@pytest.mark.skipif(func_grad is None, reason="ferrograd.func.grad is not merged yet")
def test_c370_grad_through_functional_call():
    m = nn.Linear(3, 2)
    x, t = torch.randn(4, 3), torch.randn(4, 2)
    params = {k: v.detach() for k, v in m.named_parameters()}

    def loss(p, x, t):
        return F.mse_loss(functional_call(m, p, (x,)), t)

    grads = func_grad(loss)(params, x, t)
    assert set(grads) == {"weight", "bias"}
    assert grads["weight"].shape == (2, 3) and grads["bias"].shape == (2,)
    leaves = {k: v.clone().requires_grad_() for k, v in params.items()}
    expected = torch.autograd.grad(loss(leaves, x, t), [leaves["weight"], leaves["bias"]])
    assert torch.allclose(grads["weight"], expected[0])
    assert torch.allclose(grads["bias"], expected[1])


@pytest.mark.skipif(
    func_grad is None or func_vmap is None, reason="ferrograd.func.grad/vmap are not merged yet"
)
def test_c374_per_sample_gradients():
    m = nn.Linear(3, 2)
    x, t = torch.randn(4, 3), torch.randn(4, 2)
    params = {k: v.detach() for k, v in m.named_parameters()}

    def loss1(p, xi, ti):
        return F.mse_loss(functional_call(m, p, (xi.unsqueeze(0),)), ti.unsqueeze(0))

    per_sample = func_vmap(func_grad(loss1), in_dims=(None, 0, 0))(params, x, t)
    assert per_sample["weight"].shape == (4, 2, 3)
    assert per_sample["bias"].shape == (4, 2)
    for i in range(4):
        row = func_grad(loss1)(params, x[i], t[i])
        assert torch.allclose(per_sample["weight"][i], row["weight"], atol=1e-6)
        assert torch.allclose(per_sample["bias"][i], row["bias"], atol=1e-6)


def test_c375_stack_module_state():
    models = [nn.Linear(3, 3) for _ in range(5)]
    params, buffers = stack_module_state(models)
    assert list(params) == ["weight", "bias"] and buffers == {}
    weight = params["weight"]
    assert weight.shape == (5, 3, 3) and params["bias"].shape == (5, 3)
    assert weight.is_leaf and weight.requires_grad and weight.grad_fn is None
    for i, m in enumerate(models):
        assert torch.equal(weight[i], m.weight) and torch.equal(params["bias"][i], m.bias)
    # New leaves: not views of the models' parameters.
    with torch.no_grad():
        weight.zero_()
    assert models[0].weight.abs().sum().item() > 0
    for m in models:
        m.requires_grad_(False)
    frozen, _ = stack_module_state(models)
    assert not frozen["weight"].requires_grad


def test_stack_module_state_buffers_and_errors():
    counters = [Counter(), Counter()]
    counters[1].count.fill_(3)
    params, buffers = stack_module_state(counters)
    assert list(params) == ["lin.weight", "lin.bias"]
    assert buffers["count"].tolist() == [0.0, 3.0] and not buffers["count"].requires_grad
    with pytest.raises(
        RuntimeError, match=r"^stack_module_state: Expected at least one model, got 0\.$"
    ):
        stack_module_state([])
    with pytest.raises(
        RuntimeError, match=r"^stack_module_state: Expected all models to be of the same class\.$"
    ):
        stack_module_state([nn.Linear(3, 3), nn.ReLU()])
    with pytest.raises(
        RuntimeError,
        match=r"^stack_module_state: Expected all models to have the same training/eval mode\.$",
    ):
        stack_module_state([nn.Linear(3, 3), nn.Linear(3, 3).eval()])
    mixed = [nn.Linear(3, 3), nn.Linear(3, 3)]
    mixed[1].bias.requires_grad_(False)
    with pytest.raises(
        RuntimeError, match=r"^Expected bias from each model to have the same \.requires_grad$"
    ):
        stack_module_state(mixed)
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "stack expects each tensor to be equal size, but got [3, 3] at entry 0 and [4, 3] "
            "at entry 1"
        ),
    ):
        stack_module_state([nn.Linear(3, 3), nn.Linear(3, 4)])
    with pytest.raises(KeyError, match="bias"):
        stack_module_state([nn.Linear(3, 3), nn.Linear(3, 3, bias=False)])


@pytest.mark.skipif(func_vmap is None, reason="ferrograd.func.vmap is not merged yet")
def test_stack_module_state_ensemble_with_vmap():
    models = [nn.Linear(3, 2) for _ in range(5)]
    params, buffers = stack_module_state(models)
    data = torch.randn(4, 3)

    def wrapper(p, b, x):
        return functional_call(models[0], (p, b), (x,))

    out = func_vmap(wrapper, in_dims=(0, 0, None))(params, buffers, data)
    assert out.shape == (5, 4, 2)
    for i, m in enumerate(models):
        assert torch.allclose(out[i], m(data), atol=1e-6)
