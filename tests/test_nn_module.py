"""``ferrograd.nn``: Module, Linear, Sequential, ReLU, Tanh and the small functional set.

Every expectation here is torch's behaviour: ``tests/run_nn_on_torch.py`` runs this file
against real torch. Error texts that name a tensor type use ``MOD`` (``ferrograd`` here,
``torch`` there).
"""

import re
import warnings
from collections import OrderedDict

import numpy as np
import ferrograd as torch
import ferrograd.nn.functional as F
import pytest
from ferrograd import nn
from nn_models import Tied

MOD = torch.__name__
IS_REAL_TORCH = MOD == "torch"


def nested():
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Sequential(nn.Tanh(), nn.Linear(4, 1)))


class WithBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.register_buffer("running", torch.zeros(2))
        self.register_buffer("scratch", torch.ones(2), persistent=False)

    def forward(self, x):
        return self.lin(x) + self.running


# -- repr ---------------------------------------------------------------------------------


def test_linear_repr_and_parameters():
    m = nn.Linear(3, 2)
    assert repr(m) == "Linear(in_features=3, out_features=2, bias=True)"
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == [
        ("weight", (2, 3)),
        ("bias", (2,)),
    ]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in m.parameters())
    no_bias = nn.Linear(3, 2, bias=False)
    assert repr(no_bias) == "Linear(in_features=3, out_features=2, bias=False)"
    assert no_bias.bias is None
    assert [n for n, _ in no_bias.named_parameters()] == ["weight"]
    assert list(no_bias.state_dict()) == ["weight"]


def test_linear_init_bounds_and_dtype():
    m = nn.Linear(16, 8)
    bound = 1 / 16**0.5
    assert m.weight.abs().max().item() <= bound
    assert m.bias.abs().max().item() <= bound
    # Not all one value: the init draws.
    assert m.weight.max().item() > m.weight.min().item()
    assert nn.Linear(3, 2, dtype=torch.float64).weight.dtype == torch.float64
    assert m.weight.is_leaf and m.weight.grad_fn is None


def test_nested_sequential_repr():
    assert repr(nested()) == (
        "Sequential(\n"
        "  (0): Linear(in_features=3, out_features=4, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Sequential(\n"
        "    (0): Tanh()\n"
        "    (1): Linear(in_features=4, out_features=1, bias=True)\n"
        "  )\n"
        ")"
    )
    assert repr(nn.Sequential()) == "Sequential()"
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"


def test_repr_of_custom_module_uses_extra_repr_and_child_repr():
    class Custom(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Tanh()

        def extra_repr(self):
            return "k=1\nm=2"

    class Printed(nn.Module):
        def __repr__(self):
            return "P!"

    c = Custom()
    c.p = Printed()
    assert repr(c) == "Custom(\n  k=1\n  m=2\n  (inner): Tanh()\n  (p): P!\n)"


# -- names and orders ---------------------------------------------------------------------


def test_named_modules_state_dict_and_parameter_orders():
    s = nested()
    assert [n for n, _ in s.named_modules()] == ["", "0", "1", "2", "2.0", "2.1"]
    assert [n for n, _ in s.named_modules(prefix="net")][:3] == ["net", "net.0", "net.1"]
    assert list(s.state_dict()) == ["0.weight", "0.bias", "2.1.weight", "2.1.bias"]
    assert [n for n, _ in s.named_parameters()] == list(s.state_dict())
    assert [n for n, _ in s.named_parameters(prefix="m")][0] == "m.0.weight"
    assert list(s.parameters(recurse=False)) == []
    assert [n for n, _ in s.named_children()] == ["0", "1", "2"]
    assert len(list(s.modules())) == 6 and next(s.modules()) is s


def test_buffers_persistent_and_not():
    m = WithBuffers()
    assert [n for n, _ in m.named_buffers()] == ["running", "scratch"]
    assert len(list(m.buffers())) == 2
    # A module's own entries come before its children's; a non-persistent buffer is
    # not saved.
    assert list(m.state_dict()) == ["running", "lin.weight", "lin.bias"]
    assert m.running is m._buffers["running"]


def test_tied_and_shared_names():
    t = Tied()
    assert [n for n, _ in t.named_parameters()] == ["a.weight", "a.bias", "b.bias"]
    assert [n for n, _ in t.named_parameters(remove_duplicate=False)] == [
        "a.weight",
        "a.bias",
        "b.weight",
        "b.bias",
    ]
    # state_dict keeps every name.
    assert list(t.state_dict()) == ["a.weight", "a.bias", "b.weight", "b.bias"]
    shared = nn.Tanh()
    s = nn.Sequential(shared, nn.Sequential(shared), shared)
    assert [n for n, _ in s.named_modules()] == ["", "0", "1"]
    assert len([n for n, _ in s.named_modules(remove_duplicate=False)]) == 5
    assert [n for n, _ in s.named_children()] == ["0", "1"]


# -- attribute routing and registration errors ---------------------------------------------


def test_setattr_routes_into_the_three_dicts():
    m = nn.Module()
    m.w = nn.Parameter(torch.zeros(2))
    m.sub = nn.Tanh()
    m.register_buffer("buf", torch.ones(1))
    m.plain = 3
    assert list(m._parameters) == ["w"] and list(m._modules) == ["sub"]
    assert list(m._buffers) == ["buf"] and "plain" in m.__dict__
    assert "w" not in m.__dict__ and "sub" not in m.__dict__
    m.buf = torch.full((1,), 5.0)
    assert m._buffers["buf"].item() == 5.0
    m.w = None
    assert m._parameters["w"] is None and m.w is None
    # Replacing a buffer name by a module moves it.
    m.buf = nn.ReLU()
    assert "buf" not in m._buffers and isinstance(m._modules["buf"], nn.ReLU)
    del m.sub
    assert "sub" not in m._modules
    with pytest.raises(AttributeError, match=r"^'Module' object has no attribute 'sub'$"):
        m.sub  # noqa: B018


def test_assignment_before_init():
    class Broken(nn.Module):
        def __init__(self):
            pass

    b = Broken()
    cases = [
        (lambda: setattr(b, "w", nn.Parameter(torch.zeros(1))), "parameters"),
        (lambda: setattr(b, "c", nn.Tanh()), "module"),
        (lambda: b.register_buffer("x", torch.zeros(1)), "buffer"),
        (lambda: b.register_parameter("x", None), "parameter"),
    ]
    for action, what in cases:
        with pytest.raises(AttributeError, match=rf"^cannot assign {what} before Module"):
            action()


def test_registration_errors():
    m = nn.Linear(3, 2)
    with pytest.raises(
        TypeError,
        match=rf"^cannot assign '{MOD}\.FloatTensor' as parameter 'weight' "
        r"\(torch\.nn\.Parameter or None expected\)$",
    ):
        m.weight = torch.zeros(2, 3)
    with pytest.raises(
        TypeError,
        match=rf"^cannot assign '{MOD}\.FloatTensor' object to parameter 'w2' "
        r"\(torch\.nn\.Parameter or None required\)$",
    ):
        m.register_parameter("w2", torch.zeros(1))
    with pytest.raises(KeyError, match=r'parameter name can.+t contain "\."'):
        m.register_parameter("a.b", None)
    with pytest.raises(KeyError, match=r"parameter name can.+t be empty string"):
        m.register_parameter("", None)
    with pytest.raises(TypeError, match=r"^parameter name should be a string. Got int$"):
        m.register_parameter(3, None)
    with pytest.raises(KeyError, match=r"attribute 'training' already exists"):
        m.register_parameter("training", None)
    with pytest.raises(KeyError, match=r"attribute 'weight' already exists"):
        m.register_buffer("weight", torch.zeros(1))
    with pytest.raises(
        TypeError,
        match=r"^cannot assign 'int' object to buffer 'q' \(torch Tensor or None required\)$",
    ):
        m.register_buffer("q", 3)
    with pytest.raises(KeyError, match=r'module name can.+t contain "\.", got: a\.b'):
        m.add_module("a.b", None)
    with pytest.raises(TypeError, match=r"^int is not a Module subclass$"):
        m.add_module("x", 3)
    m.register_buffer("state", None)
    with pytest.raises(TypeError, match=r"^cannot assign 'int' as buffer 'state' \("):
        m.state = 3
    m.register_module("child", nn.Tanh())
    with pytest.raises(TypeError, match=r"^cannot assign 'int' as child module 'child' \("):
        m.child = 3


def test_forward_missing():
    with pytest.raises(
        NotImplementedError, match=r'^Module \[Module\] is missing the required "forward"'
    ):
        nn.Module()(1)


# -- Sequential -----------------------------------------------------------------------------


def test_sequential_indexing_and_append():
    a, b, c = nn.ReLU(), nn.Tanh(), nn.ReLU()
    s = nn.Sequential(a, b, c)
    assert len(s) == 3 and list(s) == [a, b, c]
    assert s[0] is a and s[-1] is c
    tail = s[1:]
    assert isinstance(tail, nn.Sequential) and list(tail._modules) == ["1", "2"]
    with pytest.raises(IndexError, match=r"^index 5 is out of range$"):
        s[5]  # noqa: B018
    with pytest.raises(IndexError, match=r"^index -4 is out of range$"):
        s[-4]  # noqa: B018
    assert s.append(nn.Tanh()) is s and list(s._modules) == ["0", "1", "2", "3"]
    named = nn.Sequential(OrderedDict([("first", nn.ReLU()), ("second", nn.Tanh())]))
    assert repr(named) == "Sequential(\n  (first): ReLU()\n  (second): Tanh()\n)"


def test_sequential_forward_matches_composition():
    s = nested()
    x = torch.randn(5, 3)
    lin0, lin1 = s[0], s[2][1]
    expected = (x @ lin0.weight.T + lin0.bias).relu().tanh() @ lin1.weight.T + lin1.bias
    assert torch.allclose(s(x), expected)
    assert s(x).shape == (5, 1)


# -- modes and gradients ---------------------------------------------------------------------


def test_train_eval_propagate():
    s = nested()
    assert s.training and s.eval() is s
    assert not any(m.training for m in s.modules())
    assert s.train() is s and all(m.training for m in s.modules())
    with pytest.raises(ValueError, match=r"^training mode is expected to be boolean$"):
        s.train("yes")


def test_linear_backward_gradients():
    m = nn.Linear(3, 2)
    x = torch.randn(4, 3)
    out = m(x)
    assert out.shape == (4, 2)
    # Gradients of sum(x W^T + b): dW = ones(4,2)^T @ x, db = 4 * ones(2).
    out.sum().backward()
    assert torch.allclose(m.weight.grad, torch.ones(4, 2).T @ x)
    assert torch.allclose(m.bias.grad, torch.full((2,), 4.0))
    no_bias = nn.Linear(3, 2, bias=False)
    assert type(no_bias(x).grad_fn).__name__ == "MmBackward0"
    one = m(torch.randn(3))
    assert one.shape == (2,)


def test_zero_grad_and_requires_grad_():
    m = nn.Linear(3, 2)
    m(torch.randn(2, 3)).sum().backward()
    g = m.weight.grad
    m.zero_grad(set_to_none=False)
    assert m.weight.grad is g and g.abs().sum().item() == 0
    m.zero_grad()
    assert m.weight.grad is None and m.bias.grad is None
    assert m.requires_grad_(False) is m
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    assert all(p.requires_grad for p in m.parameters())


def test_apply_is_post_order():
    s = nested()
    seen = []
    assert s.apply(lambda mod: seen.append(type(mod).__name__)) is s
    assert seen == ["Linear", "ReLU", "Tanh", "Linear", "Sequential", "Sequential"]


def test_to_dtype_keeps_parameter_identity():
    m = WithBuffers()
    w = m.lin.weight
    assert m.to(torch.float64) is m
    assert m.lin.weight is w and w.dtype == torch.float64
    assert isinstance(m.lin.weight, nn.Parameter)
    assert m.running.dtype == torch.float64
    m.to("cpu")
    m.to(device="cpu", dtype=torch.float32)
    assert w.dtype == torch.float32
    with pytest.raises(
        TypeError,
        match=rf"^nn\.Module\.to only accepts floating point or complex dtypes, but got "
        rf"desired dtype={MOD}\.int64$",
    ):
        m.to(torch.int64)


# -- state_dict ------------------------------------------------------------------------------


def test_state_dict_values_are_detached():
    m = nn.Linear(3, 2)
    sd = m.state_dict()
    assert isinstance(sd, OrderedDict)
    assert not sd["weight"].requires_grad and torch.equal(sd["weight"], m.weight)
    kept = m.state_dict(keep_vars=True)
    assert kept["weight"] is m.weight


def test_load_state_dict_copies_in_place():
    m, src = nn.Linear(3, 2), nn.Linear(3, 2)
    w = m.weight
    result = m.load_state_dict(src.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert m.weight is w and torch.equal(m.weight, src.weight)
    assert m.weight.requires_grad and m.weight.is_leaf
    partial = m.load_state_dict({"bias": torch.zeros(2)}, strict=False)
    assert partial.missing_keys == ["weight"] and partial.unexpected_keys == []
    assert partial == (["weight"], [])
    assert repr(partial) == "_IncompatibleKeys(missing_keys=['weight'], unexpected_keys=[])"
    assert m.bias.abs().sum().item() == 0


def test_load_state_dict_errors():
    m = nn.Linear(3, 2)
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict({})
    assert str(info.value) == (
        'Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: "weight", '
        '"bias". '
    )
    full = {"weight": torch.zeros(2, 3), "bias": torch.zeros(2)}
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict({**full, "extra": torch.zeros(1), "x.y": 1})
    assert str(info.value) == (
        "Error(s) in loading state_dict for Linear:\n\t"
        'Unexpected key(s) in state_dict: "extra", "x.y". '
    )
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict({"weight": torch.zeros(3, 3)})
    assert str(info.value) == (
        "Error(s) in loading state_dict for Linear:\n\t"
        'Missing key(s) in state_dict: "bias". \n\t'
        "size mismatch for weight: copying a param with shape "
        f"{MOD}.Size([3, 3]) from checkpoint, the shape in current model is "
        f"{MOD}.Size([2, 3])."
    )
    with pytest.raises(
        TypeError, match=r"^Expected state_dict to be dict-like, got <class 'list'>"
    ):
        m.load_state_dict([1])
    s = nested()
    with pytest.raises(RuntimeError, match=re.escape('"2.1.weight", "2.1.bias". ')):
        s.load_state_dict({"2.3.weight": torch.zeros(1)})
    result = s.load_state_dict({"2.1.nope": torch.zeros(1), "7.w": torch.zeros(1)}, strict=False)
    assert result.unexpected_keys == ["7.w", "2.1.nope"]


# -- functional ---------------------------------------------------------------------------


def test_functional_set():
    x = torch.tensor([[-1.0, 2.0]])
    w = torch.tensor([[1.0, 1.0], [2.0, 0.0]])
    assert F.linear(x, w).tolist() == [[1.0, -2.0]]
    assert F.linear(x, w, torch.tensor([1.0, 1.0])).tolist() == [[2.0, -1.0]]
    assert F.relu(x).tolist() == [[0.0, 2.0]]
    assert torch.allclose(F.tanh(x), x.tanh())
    with pytest.raises(
        TypeError, match=r"^linear\(\): argument 'input' \(position 1\) must be Tensor, not list$"
    ):
        F.linear([1.0], w)
    inp, target = torch.tensor([1.0, 2.0, 4.0]), torch.tensor([1.0, 0.0, 0.0])
    assert F.mse_loss(inp, target).item() == pytest.approx(20 / 3)
    assert F.mse_loss(inp, target, reduction="sum").item() == 20.0
    assert F.mse_loss(inp, target, reduction="none").tolist() == [0.0, 4.0, 16.0]
    with pytest.raises(ValueError, match=r"^avg is not a valid value for reduction$"):
        F.mse_loss(inp, target, reduction="avg")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.mse_loss(inp, torch.zeros(1))
    assert any("Using a target size" in str(w.message) for w in caught)
    relu = nn.ReLU(inplace=True)
    y = torch.tensor([-1.0, 1.0])
    assert relu(y) is y and y.tolist() == [0.0, 1.0]


# -- structure size ----------------------------------------------------------------------


@pytest.mark.skipif(IS_REAL_TORCH, reason="torch walks module trees recursively")
def test_deeply_nested_modules_do_not_recurse():
    depth = 5000
    root = nn.Sequential(nn.Linear(1, 1))
    for _ in range(depth):
        root = nn.Sequential(root)
    assert len(list(root.modules())) == depth + 2
    keys = list(root.state_dict())
    assert len(keys) == 2 and keys[0].endswith("0.0.weight")
    root.eval()
    assert not any(m.training for m in root.modules())
    count = []
    root.apply(lambda m: count.append(1))
    assert len(count) == depth + 2
    text = repr(root)
    assert text.count("Sequential(") == depth + 1
    root.load_state_dict(root.state_dict())


def _graph(fn, depth=0, out=None):
    """Names of the graph below `fn`, depth first, indented by depth (None: no input)."""
    out = [] if out is None else out
    out.append("  " * depth + (fn.name() if fn is not None else "None"))
    if fn is not None:
        for child, _ in fn.next_functions:
            _graph(child, depth + 1, out)
    return out


@pytest.mark.parametrize(
    "shape, contiguous, top",
    [
        # torch's F.linear: one addmm for a matrix; the leading dims of a contiguous input
        # folded into its rows (under an _unsafe_view); a matmul and an add otherwise.
        ((2, 3), True, ["AddmmBackward0", "  AccumulateGrad", "  AccumulateGrad",
                        "  TBackward0", "    AccumulateGrad"]),
        ((3,), True, ["UnsafeViewBackward0", "  AddmmBackward0", "    AccumulateGrad",
                      "    ViewBackward0"]),
        ((5, 2, 3), True, ["UnsafeViewBackward0", "  AddmmBackward0", "    AccumulateGrad",
                           "    ViewBackward0"]),
        ((6, 5, 2, 3), True, ["UnsafeViewBackward0", "  AddmmBackward0"]),
        ((5, 2, 3), False, ["AddBackward0", "  UnsafeViewBackward0", "    MmBackward0"]),
    ],
)  # fmt: skip
def test_linear_records_torchs_graph(shape, contiguous, top):
    torch.manual_seed(0)
    w = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, requires_grad=True)
    if contiguous:
        x = torch.randn(*shape, dtype=torch.float64)
    else:
        x = torch.randn(*shape[:-2], shape[-1], shape[-2], dtype=torch.float64).mT
    x.requires_grad_()
    out = nn.functional.linear(x, w, b)
    names = [n.replace("torch::autograd::", "") for n in _graph(out.grad_fn)]
    assert names[: len(top)] == top
    expected = x.detach().numpy() @ w.detach().numpy().T + b.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)
    assert torch.autograd.gradcheck(lambda x, w, b: nn.functional.linear(x, w, b), (x, w, b))
