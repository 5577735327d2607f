"""Forward-mode AD (``autograd.forward_ad``): checklist C266–C280 (spec
forward_and_functional.md part A): levels, make_dual / unpack_dual and their checks,
propagation through ops, views and in-place ops, grad modes, and mixing with
reverse mode (forward-over-reverse, reverse-over-forward).
"""

import gc
import re
import weakref

import ferrograd as torch
import ferrograd.autograd.forward_ad as fwAD
import pytest

F64 = torch.float64


def raises_rt(text):
    return pytest.raises(RuntimeError, match=re.escape(text))


def vec(*values, dtype=F64):
    return torch.tensor(list(values), dtype=dtype)


def tangent_of(t):
    return fwAD.unpack_dual(t).tangent


def close(a, b):
    return torch.allclose(a, b, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------------- levels


def test_C268_first_level_is_zero_context_and_enter():
    with fwAD.dual_level() as lvl:
        assert lvl == 0
    assert fwAD.enter_dual_level() == 0
    fwAD.exit_dual_level()


def test_C272_nested_level_raises():
    with fwAD.dual_level():
        with raises_rt("Nested forward mode AD is not supported at the moment"):
            fwAD.enter_dual_level()
    # The failed attempt left no level behind: a fresh one is 0 again.
    with fwAD.dual_level() as lvl:
        assert lvl == 0


def test_C276_exit_checks():
    with raises_rt("Dual level must be a positive number."):
        fwAD.exit_dual_level()
    with fwAD.dual_level():
        with raises_rt(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        ):
            fwAD.exit_dual_level(level=5)


def test_C280_dual_level_as_decorator():
    seen = []

    @fwAD.dual_level()
    def f(x):
        seen.append(tangent_of(fwAD.make_dual(x, torch.ones_like(x))) is not None)
        return x

    f(vec(1.0))
    f(vec(2.0))  # entered and exited around each call
    assert seen == [True, True]
    with raises_rt("Dual level must be a positive number."):
        fwAD.exit_dual_level()


# ---------------------------------------------------------------------- make_dual


def test_C266_make_dual_without_level():
    with raises_rt(
        "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
        "enter_dual_level() first."
    ):
        fwAD.make_dual(vec(1.0), vec(1.0))


def test_C270_integer_primal_or_tangent(mod):
    with fwAD.dual_level():
        with pytest.raises(
            ValueError,
            match=re.escape(
                f"Expected primal to be floating point or complex, but got: {mod}.int64"
            ),
        ):
            fwAD.make_dual(torch.tensor([1, 2]), torch.ones(2))
        with pytest.raises(
            ValueError,
            match=re.escape(
                f"Expected tangent to be floating point or complex, but got: {mod}.int64"
            ),
        ):
            fwAD.make_dual(torch.ones(2), torch.tensor([1, 2]))


def test_C271_tangent_size_mismatch():
    with fwAD.dual_level():
        with raises_rt(
            "Trying to set a forward gradient that has a different size than that of the "
            "original Tensor, this is not supported. Tensor is of size [2] while the given "
            "forward gradient is of size [3]."
        ):
            fwAD.make_dual(torch.randn(2), torch.randn(3))


def test_C273_dual_of_dual_and_dual_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(vec(1.0, 2.0), vec(3.0, 4.0))
        with raises_rt(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at "
            "the same level 0 is not supported."
        ):
            fwAD.make_dual(d, vec(1.0, 1.0))
        with raises_rt(
            "Setting a forward grad that itself has a forward gradient at the same level0 "
            "is not supported."
        ):
            fwAD.make_dual(vec(1.0, 1.0), d)


def test_C274_layout_compatible_tangent_stored_as_is():
    x, v = torch.randn(2, 3, dtype=F64), torch.randn(2, 3, dtype=F64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        assert fwAD.unpack_dual(d).tangent is v
        assert d.data_ptr() == x.data_ptr()
        # A transposed tangent for a contiguous primal is copied into the primal's layout.
        vt = torch.randn(3, 2, dtype=F64).t()
        dn = fwAD.make_dual(torch.randn(2, 3, dtype=F64), vt)
        t = fwAD.unpack_dual(dn).tangent
        assert t is not vt and t.stride() == (3, 1) and torch.equal(t, vt)


def test_C274_other_float_dtype_tangent_accepted():
    with fwAD.dual_level():
        d = fwAD.make_dual(torch.ones(3), torch.ones(3, dtype=F64))
        assert tangent_of(d).dtype == F64


def test_C279_make_dual_is_backward_differentiable():
    x = torch.randn(3, dtype=F64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, torch.randn(3, dtype=F64))
        assert d.requires_grad and d.grad_fn.name() == "ViewBackward0"
        p, _ = fwAD.unpack_dual(d)
        (p * 2).sum().backward()
    assert torch.equal(x.grad, torch.full((3,), 2.0, dtype=F64))


# -------------------------------------------------------------------- unpack_dual


def test_C267_unpack_outside_level():
    x = vec(1.0)
    p, t = fwAD.unpack_dual(x)
    assert p is x and t is None


def test_C269_sin_jvp_and_fields():
    x, v = vec(0.3, -1.2, 2.0), vec(1.0, 0.5, -2.0)
    with fwAD.dual_level():
        out = fwAD.unpack_dual(fwAD.make_dual(x, v).sin())
        assert out._fields == ("primal", "tangent")
        assert type(out).__name__ == "UnpackedDualTensor"
        primal, tangent = out
        assert close(primal, x.sin()) and close(tangent, v * x.cos())


def test_C269_primal_is_a_view_without_tangent():
    x, v = vec(1.0, 2.0), vec(3.0, 4.0)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        p, t = fwAD.unpack_dual(d)
        assert p._base is x and p.data_ptr() == x.data_ptr()
        assert tangent_of(p) is None
        assert tangent_of(p * 2) is None
        plain = vec(5.0, 6.0)
        p2, t2 = fwAD.unpack_dual(plain)
        assert p2 is not plain and t2 is None


def test_C275_tangents_dropped_at_exit():
    x, v = vec(1.0, 2.0), vec(3.0, 4.0)
    with fwAD.dual_level():
        out = fwAD.make_dual(x, v).exp()
        t = tangent_of(out)
        ref = weakref.ref(t)
        assert t is not None
        del t
    assert tangent_of(out) is None
    with fwAD.dual_level():
        assert tangent_of(out) is None
    gc.collect()
    assert ref() is None


def test_level_keyword_validated():
    with fwAD.dual_level():
        with raises_rt("Invalid level given to _make_dual"):
            fwAD.make_dual(vec(1.0), vec(1.0), level=3)
        with raises_rt("Invalid level given to _fw_primal"):
            fwAD.unpack_dual(fwAD.make_dual(vec(1.0), vec(1.0)), level=3)


# ----------------------------------------------------------------- propagation (A.5)


def test_propagation_through_binary_unary_reduction():
    x, v = torch.randn(3, 4, dtype=F64), torch.randn(3, 4, dtype=F64)
    w = torch.randn(4, 2, dtype=F64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        out = ((d * d).exp() @ w).sum(0)
        expected = ((2 * x * v) * (x * x).exp() @ w).sum(0)
        assert close(tangent_of(out), expected)
        # An op with no dual input gives no tangent (None, not zeros).
        assert tangent_of(x * 2) is None


def test_integer_outputs_never_carry_tangents():
    with fwAD.dual_level():
        d = fwAD.make_dual(vec(1.0, -2.0, 3.0), vec(1.0, 1.0, 1.0))
        assert tangent_of(d > 0) is None
        values, indices = d.max(0)
        assert tangent_of(indices) is None and close(tangent_of(values), vec(1.0))


def test_C277_no_grad_does_not_stop_forward_ad_inference_mode_does():
    with fwAD.dual_level():
        d = fwAD.make_dual(vec(1.0, 2.0), vec(1.0, 1.0))
        with torch.no_grad():
            assert close(tangent_of(d * 2), vec(2.0, 2.0))
        with torch.inference_mode():
            assert tangent_of(d * 2) is None


def test_set_fwd_grad_enabled():
    with fwAD.dual_level():
        d = fwAD.make_dual(vec(1.0, 2.0), vec(1.0, 1.0))
        assert fwAD._is_fwd_grad_enabled()
        with fwAD._set_fwd_grad_enabled(False):
            assert not fwAD._is_fwd_grad_enabled()
            assert tangent_of(d * 2) is None
        assert fwAD._is_fwd_grad_enabled()
        assert tangent_of(d * 2) is not None


def test_detach_drops_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(vec(1.0, 2.0), vec(1.0, 1.0))
        assert tangent_of(d.detach()) is None
        e = d * 2
        e.detach_()
        assert tangent_of(e) is None


# -------------------------------------------------------------- views and in-place


def test_view_of_dual_has_view_of_tangent():
    x, v = torch.randn(4, 3, dtype=F64), torch.randn(4, 3, dtype=F64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v.clone())
        s = d[1:3].t()
        ts = tangent_of(s)
        assert torch.equal(ts, v[1:3].t())
        # It shares the tangent's memory: writing it in place is seen through d's.
        s.mul_(2)
        assert torch.equal(tangent_of(d)[1:3], 2 * v[1:3])
        assert torch.equal(tangent_of(d)[0], v[0])


def test_C278_inplace_updates_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(vec(1.0, 2.0), vec(1.0, -1.0))
        d.mul_(3)
        assert torch.equal(tangent_of(d), vec(3.0, -3.0))
        assert torch.equal(d, vec(3.0, 6.0))


def test_C278_inplace_makes_plain_tensor_dual():
    with fwAD.dual_level():
        plain = vec(2.0, 3.0)
        dual = fwAD.make_dual(vec(5.0, 7.0), vec(1.0, 10.0))
        version = plain._version
        plain.mul_(dual)
        assert plain._version == version + 1
        assert torch.equal(plain, vec(10.0, 21.0))
        assert torch.equal(tangent_of(plain), vec(2.0, 30.0))


def test_inplace_reads_self_before_and_other_after_the_write():
    # As torch: the rule's `self` is the value before the write, its `other` is read
    # after it, so d.mul_(d) at 3 with tangent 1 gives 1 * 9 + 1 * 3 = 12.
    with fwAD.dual_level():
        d = fwAD.make_dual(vec(3.0), vec(1.0))
        d.mul_(d)
        assert torch.equal(d, vec(9.0)) and torch.equal(tangent_of(d), vec(12.0))
        e = fwAD.make_dual(vec(3.0), vec(1.0))
        e.mul_(vec(2.0))
        assert torch.equal(tangent_of(e), vec(2.0))
        f = fwAD.make_dual(vec(3.0), vec(1.0))
        f.sin_()
        assert torch.equal(tangent_of(f), vec(3.0).cos())


def test_inplace_on_view_of_plain_base_gives_base_a_tangent():
    with fwAD.dual_level():
        base = torch.zeros(4, dtype=F64)
        view = base[:2]
        view.copy_(fwAD.make_dual(vec(1.0, 1.0), vec(5.0, 5.0)))
        assert torch.equal(tangent_of(base), vec(5.0, 5.0, 0.0, 0.0))
        assert torch.equal(tangent_of(view), vec(5.0, 5.0))


def test_view_made_before_base_became_dual_sees_its_tangent():
    with fwAD.dual_level():
        base = torch.randn(4, dtype=F64)
        view = base[1:3]
        base.mul_(fwAD.make_dual(torch.ones(4, dtype=F64), vec(1.0, 2.0, 3.0, 4.0)))
        assert torch.equal(tangent_of(view), base[1:3] / torch.ones(2, dtype=F64) * vec(2.0, 3.0))


def test_inplace_with_plain_source_zeroes_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(vec(1.0, 2.0), vec(1.0, 1.0))
        d.copy_(vec(5.0, 6.0))
        assert torch.equal(tangent_of(d), vec(0.0, 0.0))


# ----------------------------------------------------------- mixing with reverse mode


def test_forward_over_reverse_gives_hvp():
    # f(x) = sum(x^3): H = diag(6x), so the tangent of grad is 6 * x * v.
    x = vec(1.0, -2.0, 0.5)
    v = vec(1.0, 2.0, 3.0)
    with fwAD.dual_level():
        d = fwAD.make_dual(x.clone().requires_grad_(), v)
        (g,) = torch.autograd.grad((d**3).sum(), d, create_graph=True)
        assert close(fwAD.unpack_dual(g).primal, 3 * x * x)
        assert close(tangent_of(g), 6 * x * v)


def test_forward_over_reverse_through_saved_output():
    # exp saves its output; its tangent must survive in the saved copy.
    x, v = vec(0.1, 0.7), vec(1.0, -1.0)
    with fwAD.dual_level():
        d = fwAD.make_dual(x.clone().requires_grad_(), v)
        (g,) = torch.autograd.grad(d.exp().sum(), d, create_graph=True)
        assert close(tangent_of(g), x.exp() * v)


def test_reverse_over_forward():
    # d/dx of <jvp of sin at x along v, 1> = -sin(x) * v.
    x = vec(0.3, 1.1).requires_grad_()
    v = vec(2.0, -1.0)
    with fwAD.dual_level():
        out = fwAD.make_dual(x, v).sin()
        t = tangent_of(out)
        (gx,) = torch.autograd.grad(t.sum(), x)
    assert close(gx, -x.detach().sin() * v)


def test_reverse_through_tangent_input():
    # The jvp is linear in the tangent: d/dv <cos(x) * v, 1> = cos(x).
    x = vec(0.3, 1.1)
    v = vec(2.0, -1.0).requires_grad_()
    with fwAD.dual_level():
        t = tangent_of(fwAD.make_dual(x, v).sin())
        (gv,) = torch.autograd.grad(t.sum(), v)
    assert close(gv, x.cos())
