"""Custom ``torch.autograd.Function``: checklist C218–C255 (spec function.md §1–§7),
C264–C265 (§10), the gradcheck items that need a Function (C198–C200, C209, C211's
wrong-backward half, C214, C410; autograd.md §12) and the no-anomaly half of C141.

Skipped here: C137/C138 and the anomaly half of C141 (anomaly mode, another file), C212
and C256–C263 (forward-mode AD / torch.func / vmap, later issues).

Tests named ``test_FN<section>_...`` pin spec statements that have no checklist line.

Every Function class is defined inside its test: node names are ``<ClassName>Backward``,
so the class names below (``Exp``, ``Wrong``, ``Wrong3`` ...) are part of the expected
texts.
"""

import re
import sys
import warnings

import ferrograd as torch
import pytest

MOD = torch.__name__

Function = torch.autograd.Function

E_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


def e_inplace(size, op):
    """E-INPLACE (autograd.md conventions) for a float32 tensor saved at version 0."""
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{MOD}.FloatTensor [{size}]], which is output 0 of {op}, is at "
        "version 1; expected version 0 instead. Hint: enable anomaly detection to find the "
        "operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False)."
    )


def raises_rt(text):
    return pytest.raises(RuntimeError, match=re.escape(text))


def gradcheck_error():
    """GradcheckError without importing a submodule by name (torch does not re-export it
    from torch.autograd; it lives in the module that defines gradcheck)."""
    return sys.modules[torch.autograd.gradcheck.__module__].GradcheckError


def double(*shape, seed=0):
    torch.manual_seed(seed)
    return torch.randn(*shape, dtype=torch.float64, requires_grad=True)


def make_exp():
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            result = x.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, g):
            (result,) = ctx.saved_tensors
            return g * result

    return Exp


def make_cube():
    class Cube(Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t**3

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return 3 * t**2 * g

    return Cube


# =========================================================================== §1 apply


def test_C218_exp_node_name_and_gradient():
    Exp = make_exp()
    x = torch.tensor([0.5, 1.0, -2.0], requires_grad=True)
    y = Exp.apply(x)
    assert y.requires_grad
    assert y.grad_fn.name() == "ExpBackward"
    assert type(y.grad_fn).__name__ == "ExpBackward"
    assert "grad_fn=<ExpBackward>" in repr(y)
    assert y.tolist() == x.detach().exp().tolist()
    y.sum().backward()
    assert x.grad.tolist() == x.detach().exp().tolist()


def test_C218_backward_class_is_shared_and_each_call_gets_a_new_node():
    Exp = make_exp()
    x = torch.ones(2, requires_grad=True)
    a, b = Exp.apply(x), Exp.apply(x)
    assert type(a.grad_fn) is type(b.grad_fn)
    assert a.grad_fn is not b.grad_fn


def test_C218_custom_node_is_a_graph_node_linked_to_its_inputs():
    Exp = make_exp()
    x = torch.ones(2, requires_grad=True)
    y = Exp.apply(x * 2)
    ((prev, nr),) = y.grad_fn.next_functions
    assert prev.name() == "MulBackward0"
    assert nr == 0


def test_C219_forward_runs_with_grad_disabled_and_records_nothing():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen["enabled"] = torch.is_grad_enabled()
            seen["input_rg"] = x.requires_grad
            seen["input"] = x
            inner = x * 2
            seen["inner_grad_fn"] = inner.grad_fn
            seen["inner_rg"] = inner.requires_grad
            return inner

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.ones(3, requires_grad=True)
    out = Probe.apply(x)
    assert seen["enabled"] is False
    assert seen["input"] is x  # the caller's object, still requiring grad
    assert seen["input_rg"] is True
    assert seen["inner_grad_fn"] is None
    assert seen["inner_rg"] is False
    assert torch.is_grad_enabled()  # restored after apply
    assert out.grad_fn.name() == "ProbeBackward"


def test_C220_apply_accepts_keyword_and_non_tensor_arguments():
    seen = {}

    class Kw(Function):
        @staticmethod
        def forward(ctx, x, scale=1.0, name="n", obj=None):
            seen["args"] = (scale, name, obj)
            return x * scale

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None, None

    x = torch.ones(3, requires_grad=True)
    marker = object()
    out = Kw.apply(x, 5.0, name="hi", obj=marker)
    assert seen["args"] == (5.0, "hi", marker)
    assert seen["args"][2] is marker
    assert out.tolist() == [5.0, 5.0, 5.0]
    assert out.grad_fn.name() == "KwBackward"
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_C220_defaults_are_used_when_arguments_are_omitted():
    class Kw(Function):
        @staticmethod
        def forward(ctx, x, scale=3.0):
            return x * scale

        @staticmethod
        def backward(ctx, g):
            return g, None

    assert Kw.apply(torch.ones(2, requires_grad=True)).tolist() == [3.0, 3.0]


def test_C221_tensors_inside_a_list_argument_are_not_tracked():
    class FromList(Function):
        @staticmethod
        def forward(ctx, items):
            return items[0] * 2

        @staticmethod
        def backward(ctx, g):
            return None

    x = torch.ones(3, requires_grad=True)
    out = FromList.apply([x])
    assert out.requires_grad is False
    assert out.grad_fn is None
    assert out.tolist() == [2.0, 2.0, 2.0]


def test_C222_non_tensor_outputs_pass_through_and_get_none_grads():
    seen = {}

    class Mixed(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, 5, "s"

        @staticmethod
        def backward(ctx, g, g_int, g_str):
            seen["extra"] = (g_int, g_str)
            return g * 2

    x = torch.ones(3, requires_grad=True)
    out = Mixed.apply(x)
    assert isinstance(out, tuple) and len(out) == 3
    t, five, s = out
    assert t.grad_fn.name() == "MixedBackward"
    assert five == 5 and s == "s"
    t.sum().backward()
    assert seen["extra"] == (None, None)
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_FN1_3_list_return_value_is_not_connected_to_the_graph():
    class ListOut(Function):
        @staticmethod
        def forward(ctx, x):
            return [x * 2, x * 3]

        @staticmethod
        def backward(ctx, g):
            return g

    out = ListOut.apply(torch.ones(2, requires_grad=True))
    assert type(out) is list
    assert [t.grad_fn for t in out] == [None, None]
    assert [t.requires_grad for t in out] == [False, False]


def test_FN1_3_nested_tuple_output_is_passed_through_untracked():
    class Nested(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, (x * 3, x * 4)

        @staticmethod
        def backward(ctx, g, g_inner):
            return g

    first, inner = Nested.apply(torch.ones(2, requires_grad=True))
    assert first.grad_fn.name() == "NestedBackward"
    assert type(inner) is tuple
    assert inner[0].grad_fn is None and inner[0].requires_grad is False


def test_C223_no_input_requiring_grad_gives_outputs_without_history():
    Exp = make_exp()
    out = Exp.apply(torch.ones(2))
    assert out.requires_grad is False
    assert out.grad_fn is None


def test_C223_under_no_grad_outputs_have_no_history():
    Exp = make_exp()
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        out = Exp.apply(x)
    assert out.requires_grad is False
    assert out.grad_fn is None


def test_C224_returning_the_input_unchanged_gives_a_view_of_it():
    class Ident(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = torch.ones(3, requires_grad=True)
    out = Ident.apply(x)
    assert out is not x
    assert out._base is x
    assert out.grad_fn.name() == "IdentBackward"
    assert x.grad_fn is None and x.is_leaf  # the input itself is untouched
    out.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]


# =========================================================================== §1.4 misuse


def test_C225_instantiating_warns_deprecation():
    Exp = make_exp()
    text = (
        f"{Exp!r} should not be instantiated. Methods on autograd functions are all static, "
        "so you should invoke them on the class itself. Instantiating an autograd function "
        "will raise an error in a future version of PyTorch."
    )
    with pytest.warns(DeprecationWarning, match=re.escape(text)):
        Exp()


def test_C226_calling_an_instance_raises_legacy_error():
    Exp = make_exp()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        instance = Exp()
    with raises_rt(
        "Legacy autograd function with non-static forward method is deprecated. Please use "
        "new-style autograd function with static forward method. (Example: "
        "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
    ):
        instance(torch.ones(2, requires_grad=True))


def test_C227_missing_forward_raises_at_apply():
    class NoForward(Function):
        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(
        NotImplementedError,
        match=re.escape("You must implement the forward function for custom autograd.Function."),
    ):
        NoForward.apply(torch.ones(2, requires_grad=True))


def test_C228_missing_backward_raises_on_backward_only():
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    x = torch.ones(2, requires_grad=True)
    out = NoBackward.apply(x)  # apply itself is fine
    assert out.grad_fn.name() == "NoBackwardBackward"
    with pytest.raises(
        NotImplementedError,
        match=re.escape(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        ),
    ):
        out.sum().backward()


def test_C229_overriding_backward_and_vjp_raises_on_backward():
    class Both(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def vjp(ctx, g):
            return g

    out = Both.apply(torch.ones(2, requires_grad=True))
    with raises_rt(
        "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
        "should only implement one of them."
    ):
        out.sum().backward()


def test_C230_overriding_only_vjp_works_as_backward():
    class OnlyVjp(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 5

    x = torch.ones(2, requires_grad=True)
    OnlyVjp.apply(x).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


# =========================================================================== §1.2 setup_context


def make_my_mul(seen):
    class MyMul(Function):
        @staticmethod
        def forward(x, k=2.0):
            seen["forward_args"] = (x, k)
            seen["forward_grad_enabled"] = torch.is_grad_enabled()
            out = x * k
            seen["forward_out"] = out
            return out

        @staticmethod
        def setup_context(ctx, inputs, output):
            seen["inputs"] = inputs
            seen["output"] = output
            x, k = inputs
            ctx.k = k
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            seen["saved"] = x
            return g * ctx.k, None

    return MyMul


def test_C231_setup_context_gets_inputs_with_defaults_and_the_output():
    seen = {}
    MyMul = make_my_mul(seen)
    x = torch.ones(3, requires_grad=True)
    out = MyMul.apply(x)
    assert type(seen["inputs"]) is tuple
    assert len(seen["inputs"]) == 2
    assert seen["inputs"][0] is x
    assert seen["inputs"][1] == 2.0
    assert seen["output"] is seen["forward_out"]
    assert seen["forward_grad_enabled"] is False
    assert out.grad_fn.name() == "MyMulBackward"
    out.sum().backward()
    assert seen["saved"] is x
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_C231_keyword_arguments_become_positional_inputs():
    seen = {}
    MyMul = make_my_mul(seen)
    x = torch.ones(3, requires_grad=True)
    out = MyMul.apply(x, k=3.0)
    assert seen["forward_args"][1] == 3.0
    assert len(seen["inputs"]) == 2
    assert seen["inputs"][0] is x and seen["inputs"][1] == 3.0
    out.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]


def test_FN1_2_base_setup_context_raises():
    with pytest.raises(NotImplementedError, match=re.escape("setup_context is not implemented.")):
        Function.setup_context(None, (), None)


# =========================================================================== §2 ctx


def test_C232_needs_input_grad_in_forward_and_backward():
    seen = {}

    class NIG(Function):
        @staticmethod
        def forward(ctx, a, b, n):
            seen["forward"] = ctx.needs_input_grad
            return a * b * n

        @staticmethod
        def backward(ctx, g):
            seen["backward"] = ctx.needs_input_grad
            return g, None, None

    a = torch.ones(2, requires_grad=True)
    NIG.apply(a, torch.ones(2), 3).sum().backward()
    assert seen["forward"] == (True, False, False)
    assert seen["backward"] == (True, False, False)
    assert type(seen["forward"]) is tuple


def test_C232_needs_input_grad_in_setup_context():
    seen = {}

    class NIG(Function):
        @staticmethod
        def forward(a, b, n):
            return a * b * n

        @staticmethod
        def setup_context(ctx, inputs, output):
            seen["setup"] = ctx.needs_input_grad

        @staticmethod
        def backward(ctx, g):
            seen["backward"] = ctx.needs_input_grad
            return g, None, None

    a = torch.ones(2, requires_grad=True)
    NIG.apply(a, torch.ones(2), 3).sum().backward()
    assert seen["setup"] == (True, False, False)
    assert seen["backward"] == (True, False, False)


def test_C233_save_for_backward_rejects_non_tensors():
    class SaveInt(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(
        TypeError,
        match=re.escape("save_for_backward can only save variables, but argument 1 is of type int"),
    ):
        SaveInt.apply(torch.ones(2, requires_grad=True))


def test_C234_save_for_backward_keeps_none_entries():
    seen = {}

    class SaveNone(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            seen["saved"] = ctx.saved_tensors
            return g * 2

    x = torch.ones(2, requires_grad=True)
    SaveNone.apply(x).sum().backward()
    saved = seen["saved"]
    assert type(saved) is tuple and len(saved) == 2
    assert saved[0] is x
    assert saved[1] is None


def test_C235_saved_tensors_visible_on_grad_fn_before_backward():
    Cube = make_cube()
    x = torch.ones(2, requires_grad=True)
    out = Cube.apply(x)
    saved = out.grad_fn.saved_tensors
    assert type(saved) is tuple and len(saved) == 1
    assert saved[0] is x


def test_C235_grad_fn_saved_tensors_after_backward_raises_freed():
    Cube = make_cube()
    out = Cube.apply(torch.ones(2, requires_grad=True))
    out.sum().backward()
    with raises_rt(E_FREED):
        _ = out.grad_fn.saved_tensors


def test_C235_second_backward_raises_freed_unless_retained():
    Cube = make_cube()
    x = torch.ones(2, requires_grad=True)
    out = Cube.apply(x).sum()
    out.backward(retain_graph=True)
    out.backward()
    assert x.grad.tolist() == [6.0, 6.0]
    with raises_rt(E_FREED):
        out.backward()


def test_C236_saved_input_modified_in_place_makes_backward_raise():
    Cube = make_cube()
    a = torch.ones(2, requires_grad=True)
    c = a.clone()
    out = Cube.apply(c)
    c.mul_(2)
    with raises_rt(e_inplace(2, "Mul")):
        out.sum().backward()


def test_C236_saved_tensors_access_after_in_place_raises():
    Cube = make_cube()
    c = torch.ones(2, requires_grad=True).clone()
    out = Cube.apply(c)
    c.mul_(2)
    with raises_rt(e_inplace(2, "Mul")):
        _ = out.grad_fn.saved_tensors


def test_C237_save_for_forward_rejects_non_tensors():
    class SaveFwdInt(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(3)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(
        AssertionError,
        match=re.escape(
            "save_for_forward expects all arguments to be tensors; you should save non-tensors "
            "as attributes on ctx."
        ),
    ):
        SaveFwdInt.apply(torch.ones(2, requires_grad=True))


def test_FN2_mark_shared_storage_warns_future_warning():
    class Shared(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_shared_storage((x, x))
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.warns(
        FutureWarning,
        match=re.escape(
            "`mark_shared_storage` is deprecated. Tensors with shared storages are automatically "
            "tracked. Note that calls to `set_()` are not tracked"
        ),
    ):
        out = Shared.apply(torch.ones(2, requires_grad=True))
    assert out.tolist() == [2.0, 2.0]


def test_FN2_ctx_attributes_carry_non_tensor_state():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            ctx.label = "scale"
            return x * k

        @staticmethod
        def backward(ctx, g):
            assert ctx.label == "scale"
            return g * ctx.k, None

    x = torch.ones(2, requires_grad=True)
    Scale.apply(x, 4.0).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


# =========================================================================== §3 backward


def test_C238_too_few_gradients_raise():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    a = torch.ones(2, requires_grad=True)
    with raises_rt(
        "function WrongBackward returned an incorrect number of gradients (expected 2, got 1)"
    ):
        Wrong.apply(a, a).sum().backward()


def test_C239_too_many_gradients_raise():
    class Wrong2(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g, g

    with raises_rt(
        "function Wrong2Backward returned an incorrect number of gradients (expected 1, got 3)"
    ):
        Wrong2.apply(torch.ones(2, requires_grad=True)).sum().backward()


def test_C239_surplus_trailing_nones_are_dropped():
    class Extra(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    x = torch.ones(2, requires_grad=True)
    Extra.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_C239_surplus_with_a_non_none_still_raises():
    class Wrong2c(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, None, g

    with raises_rt(
        "function Wrong2cBackward returned an incorrect number of gradients (expected 1, got 3)"
    ):
        Wrong2c.apply(torch.ones(2, requires_grad=True)).sum().backward()


def test_C240_int_gradient_raises():
    class Wrong4(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return 1

    with raises_rt("expected Variable or None (got int)"):
        Wrong4.apply(torch.ones(2, requires_grad=True)).sum().backward()


def test_C240_float_gradient_in_tuple_raises():
    class Wrong5(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return (1.5,)

    with raises_rt("expected Variable or None (got float)"):
        Wrong5.apply(torch.ones(2, requires_grad=True)).sum().backward()


def test_C241_gradient_for_non_tensor_input_raises():
    class Wrong6(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    with raises_rt(
        "function Wrong6Backward returned a gradient different than None at position 2, but "
        "the corresponding forward input was not a Variable"
    ):
        Wrong6.apply(torch.ones(2, requires_grad=True), 2.0).sum().backward()


def test_C242_wrong_shaped_gradient_raises():
    class Wrong3(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return torch.ones(5)

    with raises_rt(
        "Function Wrong3Backward returned an invalid gradient at index 0 - got [5] but "
        "expected shape compatible with [2]"
    ):
        Wrong3.apply(torch.ones(2, requires_grad=True)).sum().backward()


def test_C243_smaller_broadcastable_gradient_also_raises():
    class Wrong3b(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return torch.ones(1)

    with raises_rt(
        "Function Wrong3bBackward returned an invalid gradient at index 0 - got [1] but "
        "expected shape compatible with [2]"
    ):
        Wrong3b.apply(torch.ones(2, requires_grad=True)).sum().backward()


def test_C244_larger_expandable_gradient_is_sum_reduced():
    class Big(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return torch.ones(3, 2)

    x = torch.ones(2, requires_grad=True)
    Big.apply(x).sum().backward()
    assert x.grad.shape == (2,)
    assert x.grad.tolist() == [3.0, 3.0]


def test_C245_float64_gradient_is_cast_to_float32_input():
    class ToDouble(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.double() * 2

    x = torch.ones(2, requires_grad=True)
    ToDouble.apply(x).sum().backward()
    assert x.grad.dtype == torch.float32
    assert x.grad.tolist() == [2.0, 2.0]


def test_C246_gradient_for_input_not_requiring_grad_is_ignored():
    class Two(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g * 7, g * 100

    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2)
    Two.apply(a, b).sum().backward()
    assert a.grad.tolist() == [7.0, 7.0]
    assert b.grad is None


def test_C247_backward_runs_with_grad_disabled():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            seen["enabled"] = torch.is_grad_enabled()
            return g * 2

    Probe.apply(torch.ones(2, requires_grad=True)).sum().backward()
    assert seen["enabled"] is False


def test_FN3_create_graph_enables_grad_in_backward_and_double_backward_works():
    seen = {}

    class Cube(Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t**3

        @staticmethod
        def backward(ctx, g):
            seen["enabled"] = torch.is_grad_enabled()
            (t,) = ctx.saved_tensors
            return 3 * t**2 * g

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (gx,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    assert seen["enabled"] is True
    assert gx.tolist() == [3.0, 12.0]
    assert gx.requires_grad
    (ggx,) = torch.autograd.grad(gx.sum(), x)
    assert ggx.tolist() == [6.0, 12.0]


# =========================================================================== §4 mark_dirty


def make_inplace():
    class Inplace(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Inplace


def test_C248_mark_dirty_returns_the_input_object_with_the_custom_node():
    Inplace = make_inplace()
    a = torch.ones(3, requires_grad=True)
    c = a.clone()
    version_before = c._version
    out = Inplace.apply(c)
    assert out is c
    assert c.grad_fn.name() == "InplaceBackward"
    assert c._version > version_before
    assert c.tolist() == [2.0, 2.0, 2.0]
    out.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0, 2.0]


def test_C249_mark_dirty_on_a_leaf_requiring_grad_raises():
    Inplace = make_inplace()
    with raises_rt("a leaf Variable that requires grad has been used in an in-place operation."):
        Inplace.apply(torch.ones(3, requires_grad=True))


def test_C250_marking_dirty_without_returning_raises():
    class NotReturned(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    with raises_rt(
        "Some elements marked as dirty during the forward method were not returned as output. "
        "The inputs that are modified inplace must all be outputs of the Function."
    ):
        NotReturned.apply(torch.ones(3, requires_grad=True).clone())


def test_FN4_unmarked_in_place_change_invalidates_earlier_saved_copies():
    class Stealth(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)  # no mark_dirty
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    c = torch.ones(3, requires_grad=True).clone()
    y = c * c  # MulBackward0 saves c at version 0
    Stealth.apply(c)
    assert c.grad_fn.name() == "CloneBackward0"  # not rebased onto the custom node
    with raises_rt(e_inplace(3, "Clone")):
        y.sum().backward()


# =========================================================================== §5 / §6


def test_C251_mark_non_differentiable_output():
    seen = {}

    class Sort(Function):
        @staticmethod
        def forward(ctx, x):
            # Like sort(): values plus integer indices (sort itself is not in scope yet).
            values, idx = x * 1, torch.tensor([1, 2, 0])
            ctx.mark_non_differentiable(idx)
            return values, idx

        @staticmethod
        def backward(ctx, g_values, g_idx):
            seen["g_idx"] = g_idx
            return g_values * 0 + 1

    x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, idx = Sort.apply(x)
    assert values.requires_grad is True
    assert values.grad_fn.name() == "SortBackward"
    assert idx.requires_grad is False
    assert idx.grad_fn is None
    assert idx.tolist() == [1, 2, 0]
    values.sum().backward()  # values = x * 1, so d(sum)/dx would be 1 anyway
    assert seen["g_idx"].dtype == torch.int64
    assert seen["g_idx"].tolist() == [0, 0, 0]
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def make_two_outputs(seen, materialize):
    class TwoOut(Function):
        @staticmethod
        def forward(ctx, x):
            if not materialize:
                ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen["g2"] = g2
            return g1 * 2 if g2 is None else g1 * 2 + g2 * 3

    return TwoOut


def test_C252_unused_output_gradient_is_materialized_as_zeros():
    seen = {}
    TwoOut = make_two_outputs(seen, materialize=True)
    x = torch.ones(3, requires_grad=True)
    first, _second = TwoOut.apply(x)
    first.sum().backward()
    assert seen["g2"] is not None
    assert seen["g2"].shape == (3,)
    assert seen["g2"].dtype == torch.float32
    assert seen["g2"].tolist() == [0.0, 0.0, 0.0]
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_C253_set_materialize_grads_false_passes_none():
    seen = {}
    TwoOut = make_two_outputs(seen, materialize=False)
    x = torch.ones(3, requires_grad=True)
    first, _second = TwoOut.apply(x)
    first.sum().backward()
    assert "g2" in seen
    assert seen["g2"] is None
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


# =========================================================================== §7 once_differentiable


def make_once_diff(seen):
    once_differentiable = torch.autograd.function.once_differentiable

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            seen["enabled"] = torch.is_grad_enabled()
            (x,) = ctx.saved_tensors
            return 2 * x * g

    return Square


def test_C254_once_differentiable_backward_runs_under_no_grad():
    seen = {}
    Square = make_once_diff(seen)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (gx,) = torch.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    assert seen["enabled"] is False
    assert gx.tolist() == [2.0, 4.0]
    # grad_outputs are constants here: the result carries no history
    assert gx.requires_grad is False
    assert gx.grad_fn is None


def test_C254_double_backward_through_once_differentiable_raises():
    seen = {}
    Square = make_once_diff(seen)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    go = torch.ones(2, requires_grad=True)
    (gx,) = torch.autograd.grad(Square.apply(x), x, go, create_graph=True)
    assert seen["enabled"] is False
    assert gx.tolist() == [2.0, 4.0]
    assert gx.requires_grad is True
    assert gx.grad_fn.name() == "torch::autograd::Error"
    with raises_rt(
        "trying to differentiate twice a function that was marked with @once_differentiable"
    ):
        gx.sum().backward()


def test_C254_once_differentiable_plain_backward_works():
    seen = {}
    Square = make_once_diff(seen)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    Square.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_C255_once_differentiable_lives_in_autograd_function_only():
    assert callable(torch.autograd.function.once_differentiable)
    assert not hasattr(torch.autograd, "once_differentiable")
    # `from <mod>.autograd import once_differentiable` fails with ImportError. Spelled via
    # the already-imported module object: importing the submodule by its dotted name under
    # the torch shim would load torch.autograd a second time.
    key = f"{MOD}.autograd"
    had_key = key in sys.modules
    sys.modules.setdefault(key, torch.autograd)
    try:
        with pytest.raises(ImportError):
            exec(f"from {MOD}.autograd import once_differentiable", {})
    finally:
        if not had_key:
            del sys.modules[key]


# =========================================================================== §10 class attributes


def test_C264_clear_saved_tensors_on_access_allows_one_access():
    seen = {}

    class Once(Function):
        clear_saved_tensors_on_access = True

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            seen["first"] = x
            try:
                _ = ctx.saved_tensors
            except RuntimeError as e:
                seen["error"] = str(e)
            return g * 2

    x = torch.ones(2, requires_grad=True)
    Once.apply(x).sum().backward()
    assert seen["first"] is x
    assert seen["error"] == (
        "saved_tensors can only be accessed once when clear_saved_tensors_on_access=True is "
        "set on the autograd.Function. Either access saved_tensors only once, or set "
        "clear_saved_tensors_on_access=False."
    )
    assert x.grad.tolist() == [2.0, 2.0]


def test_C264_default_allows_repeated_saved_tensors_access():
    seen = {}

    class Many(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            seen["a"] = ctx.saved_tensors
            seen["b"] = ctx.saved_tensors
            return g * 2

    x = torch.ones(2, requires_grad=True)
    Many.apply(x).sum().backward()
    assert seen["a"][0] is x and seen["b"][0] is x


def test_C265_boxed_grads_call_passes_one_list():
    seen = {}

    class Boxed(Function):
        boxed_grads_call = True

        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, grads):
            seen["type"] = type(grads)
            seen["len"] = len(grads)
            g1, g2 = grads
            grads.clear()
            return g1 * 2 + g2 * 3

    x = torch.ones(2, requires_grad=True)
    a, b = Boxed.apply(x)
    (a + b).sum().backward()
    assert seen["type"] is list
    assert seen["len"] == 2
    assert x.grad.tolist() == [5.0, 5.0]


# =========================================================================== C141 (no anomaly)


def test_C141_exception_from_custom_backward_propagates_unchanged():
    class MyError(Exception):
        pass

    raised = {}

    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raised["error"] = MyError("custom failure 42")
            raise raised["error"]

    x = torch.ones(2, requires_grad=True)
    with pytest.raises(MyError, match=re.escape("custom failure 42")) as info:
        Boom.apply(x).sum().backward()
    assert type(info.value) is MyError
    assert info.value.args == ("custom failure 42",)
    assert x.grad is None


def test_C141_builtin_exception_type_is_kept_through_autograd_grad():
    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise KeyError("k")

    x = torch.ones(2, requires_grad=True)
    with pytest.raises(KeyError) as info:
        torch.autograd.grad(Boom.apply(x).sum(), x)
    assert type(info.value) is KeyError
    assert info.value.args == ("k",)


# =========================================================================== gradcheck (§12)


def make_bad_sin():
    class BadSin(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return BadSin


def test_FN11_correct_exp_function_passes_gradcheck():
    Exp = make_exp()
    x = double(3)
    assert torch.autograd.gradcheck(Exp.apply, (x,)) is True
    assert torch.autograd.gradcheck(Exp.apply, (x,), fast_mode=True) is True
    assert torch.autograd.gradgradcheck(Exp.apply, (x,)) is True


def test_C198_wrong_backward_fails_gradcheck():
    BadSin = make_bad_sin()
    with pytest.raises(gradcheck_error()) as info:
        torch.autograd.gradcheck(BadSin.apply, (double(3),))
    assert isinstance(info.value, RuntimeError)
    assert str(info.value).startswith(
        "Jacobian mismatch for output 0 with respect to input 0,\nnumerical:"
    )
    assert "\nanalytical:" in str(info.value)


def test_C199_wrong_backward_returns_false_without_raise():
    BadSin = make_bad_sin()
    assert torch.autograd.gradcheck(BadSin.apply, (double(3),), raise_exception=False) is False


def test_C200_fast_mode_failure_message():
    BadSin = make_bad_sin()
    with pytest.raises(gradcheck_error()) as info:
        torch.autograd.gradcheck(BadSin.apply, (double(3),), fast_mode=True)
    msg = str(info.value)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0,")
    fast = msg.index("in fast mode")
    numerical = msg.index("Numerical:", fast)
    analytical = msg.index("Analytical:", numerical)
    assert fast < numerical < analytical


def make_nondeterministic():
    calls = [0]

    class NonDet(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            # a tiny per-call drift: Jacobians still match, repeated backward differs
            calls[0] += 1
            return g * (2.0 + 1e-9 * calls[0])

    return NonDet


def test_C209_nondeterministic_backward_is_not_reentrant():
    NonDet = make_nondeterministic()
    with pytest.raises(gradcheck_error()) as info:
        torch.autograd.gradcheck(NonDet.apply, (double(3),))
    assert str(info.value).startswith(
        "Backward is not reentrant, i.e., running backward with same input and grad_output "
        "multiple times gives different values, although analytical gradient matches "
        "numerical gradient.The tolerance for nondeterminism was 0.0."
    )


def test_C209_nondet_tol_accepts_small_drift():
    NonDet = make_nondeterministic()
    assert torch.autograd.gradcheck(NonDet.apply, (double(3),), nondet_tol=1e-6) is True


def make_complex_sin(conj):
    class CSin(Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z.sin()

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            d = z.cos()
            return g * (d.conj() if conj else d)

    return CSin


def complex_input():
    torch.manual_seed(1)
    return torch.randn(3, dtype=torch.complex128, requires_grad=True)


def test_C211_correct_complex_function_passes_slow_and_fast():
    CSin = make_complex_sin(conj=True)
    assert torch.autograd.gradcheck(CSin.apply, (complex_input(),)) is True
    assert torch.autograd.gradcheck(CSin.apply, (complex_input(),), fast_mode=True) is True


@pytest.mark.parametrize("fast_mode", [False, True])
def test_C211_wrong_complex_backward_reports_imaginary_part(fast_mode):
    CSin = make_complex_sin(conj=False)  # missing conj: only the imaginary part is off
    with pytest.raises(gradcheck_error()) as info:
        torch.autograd.gradcheck(CSin.apply, (complex_input(),), fast_mode=fast_mode)
    assert str(info.value).startswith(
        "While considering the imaginary part of complex outputs only, Jacobian mismatch for "
        "output 0 with respect to input 0,\n"
    )


def make_detached_square():
    class DetSquare(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x.detach() * g

    return DetSquare


def test_C214_detached_backward_passes_gradcheck_but_fails_gradgradcheck():
    DetSquare = make_detached_square()
    x = double(3)
    assert torch.autograd.gradcheck(DetSquare.apply, (x,)) is True
    with pytest.raises(gradcheck_error()) as info:
        torch.autograd.gradgradcheck(DetSquare.apply, (x,))
    assert str(info.value).startswith(
        "Jacobian mismatch for output 0 with respect to input 0,\nnumerical:"
    )


def test_C214_detached_backward_gradgradcheck_returns_false():
    DetSquare = make_detached_square()
    assert (
        torch.autograd.gradgradcheck(DetSquare.apply, (double(3),), raise_exception=False) is False
    )


def make_none_intolerant():
    class NoneBad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            if g is None:
                raise RuntimeError("got a None grad")
            return g * 2

    return NoneBad


def test_C410_backward_failing_on_undefined_grad_fails_gradcheck():
    NoneBad = make_none_intolerant()
    with pytest.warns(
        UserWarning,
        match=re.escape(
            "Backwards compatibility: New undefined gradient support checking feature is enabled "
            "by default, but it may break existing callers of this function."
        ),
    ):
        with pytest.raises(
            gradcheck_error(),
            match=re.escape(
                "Expected backward function to handle undefined output grads. Please look at "
                '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
            ),
        ) as info:
            torch.autograd.gradcheck(NoneBad.apply, (double(3),))
    cause = info.value.__cause__
    assert isinstance(cause, RuntimeError)
    assert str(cause) == "got a None grad"


def test_C410_check_undefined_grad_false_passes():
    NoneBad = make_none_intolerant()
    assert torch.autograd.gradcheck(NoneBad.apply, (double(3),), check_undefined_grad=False) is True
