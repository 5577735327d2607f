"""The op table (src/bindings/op_table.rs, issue 8 §3): each line makes the op's method,
its aliases, its in-place method and its module function, all parsing arguments alike."""

import pytest

import ferrograd as torch
from ferrograd import _C

TABLE = _C._op_table()


def test_table_holds_the_elementwise_ops_and_reductions():
    names = {line[0] for line in TABLE}
    assert {"add", "sub", "mul", "div", "pow", "exp", "neg", "eq", "sum", "mean", "clamp"} <= names


@pytest.mark.parametrize("line", TABLE, ids=lambda line: line[0])
def test_each_line_makes_methods_and_module_functions(line):
    name, _kind, _arg, inplace, aliases = line
    for n in (name, *aliases):
        assert callable(getattr(torch.Tensor, n))
        assert getattr(torch, n) is getattr(_C, n)
    if inplace is not None:
        assert callable(getattr(torch.Tensor, inplace))


def test_module_functions_take_torchs_keyword_names():
    x = torch.tensor([1.0, 2.0])
    assert torch.exp(input=x).tolist() == x.exp().tolist()
    assert torch.add(input=x, other=x, alpha=2).tolist() == [3.0, 6.0]
    assert torch.pow(x, exponent=2).tolist() == [1.0, 4.0]
    assert torch.sum(input=x, dim=0, keepdim=True).tolist() == [3.0]
    assert torch.clamp(x, max=1.5).tolist() == [1.0, 1.5]
    assert x.add(other=1, alpha=2).tolist() == [3.0, 4.0]


@pytest.mark.parametrize(
    "call, text",
    [
        (lambda: torch.exp(3), "exp(): argument 'input' (position 1) must be Tensor, not int"),
        (lambda: torch.sum([1]), "sum(): argument 'input' (position 1) must be Tensor, not list"),
        (
            lambda: torch.add("a", torch.ones(1)),
            "add(): argument 'input' (position 1) must be Tensor, not str",
        ),
    ],
)
def test_module_function_rejects_a_non_tensor_input_in_torchs_words(call, text):
    with pytest.raises(TypeError) as info:
        call()
    assert str(info.value) == text


def test_number_first_module_functions():
    x = torch.tensor([1.0, 3.0], requires_grad=True)
    assert torch.sub(5, x).tolist() == [4.0, 2.0]
    assert torch.pow(2, x).tolist() == [2.0, 8.0]
    y = torch.div(3, x)
    assert y.tolist() == [3.0, 1.0]
    assert y.grad_fn.name() == "MulBackward0"
    assert torch.lt(2, x).tolist() == [False, True]


def test_aliases_are_the_same_op():
    x = torch.tensor([2.0, 4.0])
    assert x.subtract(1).tolist() == [1.0, 3.0]
    assert x.multiply(2).tolist() == [4.0, 8.0]
    assert x.true_divide(2).tolist() == x.divide(2).tolist() == [1.0, 2.0]
    assert x.negative().tolist() == [-2.0, -4.0]
    assert torch.clip(x, 3, 3).tolist() == [3.0, 3.0]


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("other", [torch.tensor([2.0, 0.5]), 2, 0.5])
def test_every_arithmetic_kind_in_place_matches_out_of_place(name, other):
    x = torch.tensor([3.0, -1.5])
    expected = getattr(x, name)(other).tolist()
    y = x.clone()
    assert getattr(y, name + "_")(other) is y
    assert y.tolist() == expected


def test_in_place_error_names_the_method():
    with pytest.raises(TypeError) as info:
        torch.ones(1).mul_("a")
    assert str(info.value) == "mul_(): argument 'other' must be Tensor or Number, not str"
