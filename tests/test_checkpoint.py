"""Issue 7 §6, ``ferrograd.utils.checkpoint``: activation checkpointing with both variants
(re-entrant and saved-tensor-hook based), RNG preservation, ``checkpoint_sequential``,
and torch's warnings and errors for misuse."""

import re

import ferrograd as torch
import pytest
from ferrograd.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

BOTH = pytest.mark.parametrize("use_reentrant", [True, False])


class Counted:
    """A function that counts how often it runs."""

    def __init__(self, fn):
        self.fn = fn
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fn(*args, **kwargs)


def block(x, w):
    return (x * w).sin().exp().sum(0) * x.tanh().sum()


def leaves(seed=0, n=4):
    torch.manual_seed(seed)
    return torch.randn(n, 3, requires_grad=True), torch.randn(n, 3, requires_grad=True)


def reference_grads(fn, *args):
    out = fn(*args)
    return torch.autograd.grad(out.sum(), args)


@BOTH
def test_gradients_match_and_forward_reruns_once(use_reentrant):
    x, w = leaves()
    gx, gw = reference_grads(block, x, w)
    f = Counted(block)
    out = checkpoint(f, x, w, use_reentrant=use_reentrant)
    assert f.calls == 1
    assert torch.allclose(out, block(x, w))
    out.sum().backward()
    assert f.calls == 2
    assert torch.allclose(x.grad, gx) and torch.allclose(w.grad, gw)


@BOTH
def test_checkpoint_graph_shape(use_reentrant):
    # Re-entrant: one node for the whole function; otherwise the function's own graph.
    x, w = leaves()
    out = checkpoint(block, x, w, use_reentrant=use_reentrant)
    if use_reentrant:
        assert type(out.grad_fn).__name__ == "CheckpointFunctionBackward"
    else:
        assert type(out.grad_fn).__name__ == "MulBackward0"


@BOTH
def test_rng_state_preserved_for_dropout_like_use(use_reentrant):
    def dropout_block(x):
        mask = (torch.rand(x.shape) > 0.5).to(x.dtype)
        return (x * mask * 2).exp()

    torch.manual_seed(3)
    x = torch.randn(64, requires_grad=True)
    state = torch.get_rng_state()
    expected = torch.autograd.grad(dropout_block(x).sum(), x)[0]
    after_reference = torch.rand(1)
    torch.set_rng_state(state)
    out = checkpoint(dropout_block, x, use_reentrant=use_reentrant)
    out.sum().backward()
    assert torch.equal(x.grad, expected)
    # The rerun in backward does not move the caller's random sequence.
    assert torch.equal(torch.rand(1), after_reference)


@BOTH
def test_without_preserved_rng_the_rerun_draws_new_numbers(use_reentrant):
    draws = []

    def noisy(x):
        r = torch.rand(8)
        draws.append(r)
        return x * r

    x = torch.ones(8, requires_grad=True)
    checkpoint(noisy, x, use_reentrant=use_reentrant, preserve_rng_state=False).sum().backward()
    assert not torch.equal(draws[0], draws[1])
    assert torch.equal(x.grad, draws[1])


@BOTH
def test_non_tensor_arguments(use_reentrant):
    def fn(x, power, label):
        assert label == "tag"
        return x.pow(power) if power is not None else x

    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    checkpoint(fn, x, 3, "tag", use_reentrant=use_reentrant).sum().backward()
    assert x.grad.tolist() == [3.0, 12.0, 27.0]


def test_keyword_arguments_non_reentrant():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = checkpoint(lambda x, scale: (x * x) * scale, x, scale=3.0, use_reentrant=False)
    out.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


def test_keyword_arguments_reentrant_refused():
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"^Unexpected keyword arguments: scale,bias$"):
        checkpoint(lambda x, scale, bias: x, x, scale=1, bias=2, use_reentrant=True)


@BOTH
def test_multiple_outputs_and_partial_use(use_reentrant):
    def two(x, w):
        return x * w, (x + w).exp()

    x, w = leaves()
    a, b = checkpoint(two, x, w, use_reentrant=use_reentrant)
    (a.sum() * 2).backward()
    assert torch.allclose(x.grad, 2 * w) and torch.allclose(w.grad, 2 * x)


@BOTH
@pytest.mark.filterwarnings("ignore:None of the inputs have requires_grad")
def test_nested_checkpoint(use_reentrant):
    inner = Counted(lambda x: (x * x).sin())
    outer = Counted(lambda x: checkpoint(inner, x.exp(), use_reentrant=use_reentrant).cos())
    x = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
    expected = torch.autograd.grad((x.exp() * x.exp()).sin().cos().sum(), x)[0]
    checkpoint(outer, x, use_reentrant=use_reentrant).sum().backward()
    assert torch.allclose(x.grad, expected)
    assert outer.calls == 2


def test_non_reentrant_supports_autograd_grad_and_inputs():
    x, w = leaves()
    gx, gw = reference_grads(block, x, w)
    out = checkpoint(block, x, w, use_reentrant=False)
    got = torch.autograd.grad(out.sum(), (x, w))
    assert torch.allclose(got[0], gx) and torch.allclose(got[1], gw)
    out = checkpoint(block, x, w, use_reentrant=False)
    out.sum().backward(inputs=[w])
    assert x.grad is None and torch.allclose(w.grad, gw)


def test_non_reentrant_retain_graph_second_backward_reruns():
    f = Counted(block)
    x, w = leaves()
    gx, _ = reference_grads(block, x, w)
    out = checkpoint(f, x, w, use_reentrant=False)
    out.sum().backward(retain_graph=True)
    out.sum().backward()
    assert f.calls == 3
    assert torch.allclose(x.grad, 2 * gx)


REENTRANT_GRAD = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing"
    " an `inputs` parameter to .backward(). To resolve this error, you can either set"
    " use_reentrant=False, or call .backward() without passing the `inputs` argument."
)


def test_reentrant_refuses_autograd_grad_and_inputs():
    x, w = leaves()
    out = checkpoint(block, x, w, use_reentrant=True)
    with pytest.raises(RuntimeError, match="^" + re.escape(REENTRANT_GRAD) + "$"):
        torch.autograd.grad(out.sum(), (x, w))
    out = checkpoint(block, x, w, use_reentrant=True)
    with pytest.raises(RuntimeError, match="^" + re.escape(REENTRANT_GRAD) + "$"):
        out.sum().backward(inputs=[x])


def test_use_reentrant_must_be_passed_explicitly():
    x = torch.ones(2, requires_grad=True)
    with pytest.warns(
        UserWarning,
        match=r"^torch\.utils\.checkpoint: the use_reentrant parameter should be passed"
        r" explicitly\. In a future release, calling checkpoint without use_reentrant will"
        r" raise an exception\.",
    ):
        out = checkpoint(lambda x: x * 2, x)
    out.sum().backward()  # the default is still the re-entrant variant
    assert x.grad.tolist() == [2.0, 2.0]


def test_reentrant_warns_when_no_input_requires_grad():
    with pytest.warns(
        UserWarning, match=r"^None of the inputs have requires_grad=True\. Gradients will be None$"
    ):
        out = checkpoint(lambda x: x * 2, torch.ones(2), use_reentrant=True)
    assert not out.requires_grad


def test_reentrant_refuses_non_reentrant_options():
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(
        ValueError,
        match=r"^Passing `context_fn`, `debug`, or `respect_saved_tensors_hooks` is only supported"
        r" when use_reentrant=False\.$",
    ):
        checkpoint(lambda x: x, x, use_reentrant=True, debug=True)


def test_determinism_check_values():
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(
        ValueError,
        match=r"^determinism_check should be one of \['default', 'none'\], but got bogus$",
    ):
        checkpoint(lambda x: x, x, use_reentrant=False, determinism_check="bogus")


def test_rerun_that_saves_differently_is_an_error():
    state = {"first": True}

    def unstable(x):
        if state["first"]:
            state["first"] = False
            return (x * x).exp()
        return x.exp()

    x = torch.ones(2, requires_grad=True)
    out = checkpoint(unstable, x, use_reentrant=False)
    with pytest.raises(
        CheckpointError,
        match=re.escape(
            "torch.utils.checkpoint: A different number of tensors was saved during the original"
            " forward and recomputation.\nNumber of tensors saved during forward: 3\n"
            "Number of tensors saved during recomputation: 1."
        ),
    ):
        out.sum().backward()
    assert issubclass(CheckpointError, RuntimeError)


def test_context_fn_runs_around_forward_and_recompute():
    import contextlib

    seen = []

    @contextlib.contextmanager
    def tag(name):
        seen.append(name)
        yield

    x = torch.ones(2, requires_grad=True)
    out = checkpoint(
        lambda x: (x * x).sum(),
        x,
        use_reentrant=False,
        context_fn=lambda: (tag("fwd"), tag("recompute")),
    )
    out.backward()
    assert seen == ["fwd", "recompute"]


def test_decorator_form():
    f = Counted(lambda x: (x * x).sum())
    wrapped = checkpoint(use_reentrant=False)(f)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    wrapped(x).backward()
    assert f.calls == 2 and x.grad.tolist() == [2.0, 4.0]


@BOTH
def test_checkpoint_sequential_list_of_callables(use_reentrant):
    functions = [Counted(f) for f in (torch.sin, torch.exp, torch.tanh, lambda t: t * 3, torch.cos)]
    x = torch.tensor([0.1, 0.2], requires_grad=True)
    ref = x
    for f in functions:
        ref = f.fn(ref)
    expected = torch.autograd.grad(ref.sum(), x)[0]
    out = checkpoint_sequential(functions, 2, x, use_reentrant=use_reentrant)
    assert torch.allclose(out, ref)
    out.sum().backward()
    assert torch.allclose(x.grad, expected)
    # 5 functions in 2 segments: the first two are checkpointed (rerun), the rest are not.
    assert [f.calls for f in functions] == [2, 2, 1, 1, 1]


def test_checkpoint_sequential_errors_and_warning():
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"^Unexpected keyword arguments: foo$"):
        checkpoint_sequential([torch.sin], 1, x, use_reentrant=False, foo=1)
    with pytest.warns(
        UserWarning,
        match=r"^torch\.utils\.checkpoint\.checkpoint_sequential: the use_reentrant parameter"
        r" should be passed explicitly\.",
    ):
        checkpoint_sequential([torch.sin, torch.cos], 2, x)


def test_rng_state_functions():
    s = torch.get_rng_state()
    assert s.dtype == torch.uint8 and s.dim() == 1
    a = torch.rand(5)
    torch.set_rng_state(s)
    assert torch.equal(torch.rand(5), a)
    with torch.random.fork_rng():
        torch.rand(100)
    assert not torch.equal(torch.rand(5), a)  # the fork restored the state after `a`
    with pytest.raises(TypeError, match=f"^RNG state must be a {torch.__name__}.ByteTensor$"):
        torch.set_rng_state(torch.zeros(s.numel()))
    with pytest.raises(
        RuntimeError,
        match=r"^Expected a CPUGeneratorImplState of size \d+ but found the input RNG state size"
        r" to be 3$",
    ):
        torch.set_rng_state(torch.zeros(3, dtype=torch.uint8))
