"""Deep structures (issue 7, section 3; DESIGN.md "Errors and safety", "Deep structures"):
freeing a long graph, a chain of views or deeply nested input data never recurses per
node, so it cannot overflow the stack. torch frees chains of 150,000+ nodes.

Each chain is built and freed in a fresh interpreter (``run_isolated``), so a crash fails
the test instead of killing the test run.
"""

import ferrograd as torch
import pytest

N = 200_000

# Each snippet builds a chain `y` of about N nodes from `x` and leaves it in `y`.
CHAINS = {
    "mul_by_scalar": "for _ in range(N): y = y * 1.0001",
    "exp_saves_output": "for _ in range(N): y = y.exp()",
    "sin_saves_input": "for _ in range(N): y = y.sin()",
    "views_of_views": "for _ in range(N): y = y.view(-1)",
    "indexing_views": "for _ in range(N): y = y[...]",
    "in_place": "for _ in range(N): y.mul_(1.0001)",
    "in_place_on_views": "for _ in range(N // 2): y[:2].mul_(1.0)",
    "retained_grads": "for _ in range(N // 2):\n    y = y * 1.0\n    y.retain_grad()",
}


@pytest.mark.parametrize("how", ["del", "gc"])
@pytest.mark.parametrize("kind", sorted(CHAINS))
def test_freeing_a_long_chain_does_not_recurse(run_isolated, kind, how):
    # "gc": the chain is only reachable from a reference cycle, so the collector frees it.
    free = "holder = [y]; holder.append(holder); del y, holder" if how == "gc" else "del y"
    code = "\n".join(
        [
            "import gc",
            f"N = {N}",
            "x = torch.randn(3, requires_grad=True)",
            "y = x * 1",
            CHAINS[kind],
            free,
            "gc.collect()",
            'print("freed")',
        ]
    )
    proc = run_isolated(code, timeout=120)
    assert "freed" in proc.stdout


def test_freeing_a_long_chain_after_backward_with_retain_graph(run_isolated):
    proc = run_isolated(
        """
        x = torch.randn(3, requires_grad=True)
        y = x
        for _ in range(200_000):
            y = y * 1.0
        y.sum().backward(retain_graph=True)
        assert x.grad.tolist() == [1.0, 1.0, 1.0]
        del y
        print("freed")
        """
    )
    assert "freed" in proc.stdout


def test_freeing_a_long_chain_of_custom_functions(run_isolated):
    proc = run_isolated(
        """
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                ctx.kept = a  # a Python attribute holding the previous link too
                return a * 1.0001

            @staticmethod
            def backward(ctx, g):
                return g * 1.0001

        x = torch.randn(3, requires_grad=True)
        y = x * 1
        for _ in range(50_000):
            y = Scale.apply(y)
        del y
        print("freed")
        """,
        timeout=120,
    )
    assert "freed" in proc.stdout


def test_freeing_a_long_chain_saved_through_pack_hooks(run_isolated):
    proc = run_isolated(
        """
        import gc
        gc.disable()  # keep the build fast: this test is about freeing
        x = torch.randn(3, requires_grad=True)
        y = x * 1
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            for _ in range(50_000):
                y = y * y
        del y
        print("freed")
        """,
        timeout=120,
    )
    assert "freed" in proc.stdout


# --------------------------------------------------------------------------- nested data


def nested(depth, leaf=1.0, container=list):
    data = leaf
    for _ in range(depth):
        data = container([data])
    return data


@pytest.mark.parametrize("container", [list, tuple])
def test_tensor_from_data_nested_too_deep_raises_like_torch(run_isolated, container):
    # torch: ValueError "too many dimensions 'list'" (MAX_DIMS = 128); ferrograd crashed.
    proc = run_isolated(
        f"""
        data = 1.0
        for _ in range(100_000):
            data = {container.__name__}([data])
        try:
            torch.tensor(data)
        except ValueError as e:
            print("error:", e)
        """
    )
    assert f"error: too many dimensions '{container.__name__}'" in proc.stdout


def test_tensor_from_data_dimension_limit_is_torchs():
    assert torch.tensor(nested(128)).dim() == 128
    with pytest.raises(ValueError, match="too many dimensions 'list'"):
        torch.tensor(nested(129))
    with pytest.raises(ValueError, match="too many dimensions 'list'"):
        torch.tensor([[nested(127)]])


@pytest.mark.skipif(torch.__name__ == "torch", reason="torch crashes on this (stack overflow)")
def test_tolist_of_a_tensor_with_many_dims(run_isolated):
    proc = run_isolated(
        """
        t = torch.zeros([1] * 20_000)
        out = t.tolist()
        depth = 0
        while isinstance(out, list):
            assert len(out) == 1
            out, depth = out[0], depth + 1
        print(depth, out)
        """
    )
    assert proc.stdout.split() == ["20000", "0.0"]


def test_tolist_shapes():
    assert torch.zeros(2, 0, 3).tolist() == [[], []]
    assert torch.zeros(0, 2).tolist() == []
    assert torch.tensor(3.0).tolist() == 3.0
    assert torch.arange(6).reshape(2, 3).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert torch.arange(8).reshape(2, 2, 2).tolist() == [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
