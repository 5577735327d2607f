"""Random numbers: Generator objects and the generator= argument, randperm, normal,
bernoulli, multinomial, randint_like and the in-place fills. Streams are ferrograd's own
(xoshiro256**), so values are checked by properties and statistics, and by replaying a
seed; grad_fn names, zero gradients and errors are torch's."""

import math

import pytest

import ferrograd as torch


def _draws(g):
    return [
        torch.rand(3, generator=g).tolist(),
        torch.randn(3, generator=g).tolist(),
        torch.randint(0, 100, (3,), generator=g).tolist(),
        torch.randperm(5, generator=g).tolist(),
        torch.normal(0.0, 1.0, (3,), generator=g).tolist(),
        torch.normal(torch.zeros(3), 2.0, generator=g).tolist(),
        torch.bernoulli(torch.full((4,), 0.5), generator=g).tolist(),
        torch.multinomial(torch.ones(6), 3, generator=g).tolist(),
        torch.zeros(3).uniform_(-1, 1, generator=g).tolist(),
    ]


def test_a_seeded_generator_replays_its_stream_and_leaves_the_global_one_alone():
    torch.manual_seed(5)
    expected_global = torch.rand(4).tolist()
    torch.manual_seed(5)
    a = _draws(torch.Generator().manual_seed(123))
    b = _draws(torch.Generator().manual_seed(123))
    assert a == b
    assert a != _draws(torch.Generator().manual_seed(124))
    # The draws above came from their own generators, not the global one.
    assert torch.rand(4).tolist() == expected_global


def test_generator_state_and_seed():
    g = torch.Generator()
    assert g.initial_seed() == 67280421310721
    assert str(g.device) == "cpu"
    assert g.manual_seed(7) is g and g.initial_seed() == 7
    state = g.get_state()
    assert state.dtype == torch.uint8
    first = torch.rand(5, generator=g).tolist()
    assert g.set_state(state) is g
    assert torch.rand(5, generator=g).tolist() == first
    assert g.manual_seed(-1).initial_seed() == 2**64 - 1
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        g.manual_seed(2**64)
    s = g.seed()
    assert g.initial_seed() == s
    # manual_seed returns the default generator, which draws the global stream.
    d = torch.manual_seed(3)
    assert isinstance(d, torch.Generator)
    x = torch.rand(2, generator=torch.default_generator).tolist()
    torch.manual_seed(3)
    assert torch.rand(2).tolist() == x


@pytest.mark.parametrize(
    "call",
    [
        lambda g: torch.rand(2, generator=g),
        lambda g: torch.randn(2, generator=g),
        lambda g: torch.randint(3, (2,), generator=g),
        lambda g: torch.randperm(3, generator=g),
        lambda g: torch.normal(0.0, 1.0, (2,), generator=g),
    ],
)
def test_generator_must_be_a_generator(call):
    # torch words this as its generic "invalid combination of arguments" TypeError.
    with pytest.raises(TypeError, match="generator"):
        call(3)


def test_randperm():
    p = torch.randperm(50)
    assert p.dtype == torch.int64 and sorted(p.tolist()) == list(range(50))
    assert torch.randperm(0).shape == (0,)
    assert torch.randperm(4, dtype=torch.float32).dtype == torch.float32
    assert sorted(torch.randperm(256, dtype=torch.uint8).tolist()) == list(range(256))
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        torch.randperm(-1)
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t"):
        torch.randperm(300, dtype=torch.uint8)
    with pytest.raises(RuntimeError, match="n cannot be greater than 2049 for Half type."):
        torch.randperm(3000, dtype=torch.float16)
    with pytest.raises(NotImplementedError, match="\"randperm\" not implemented for 'Bool'"):
        torch.randperm(3, dtype=torch.bool)


def _mean_std(values):
    m = sum(values) / len(values)
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / len(values))


def test_normal_overloads_statistics_and_zero_gradients():
    torch.manual_seed(0)
    m, s = _mean_std(torch.normal(2.0, 3.0, (20000,), dtype=torch.float64).tolist())
    assert abs(m - 2.0) < 0.1 and abs(s - 3.0) < 0.1
    mean = torch.full((20000,), -1.0, dtype=torch.float64, requires_grad=True)
    std = torch.full((20000,), 0.5, dtype=torch.float64, requires_grad=True)
    for out, name in [
        (torch.normal(mean, std), "NormalBackward3"),
        (torch.normal(mean, 0.5), "NormalBackward1"),
        (torch.normal(-1.0, std), "NormalBackward2"),
    ]:
        assert type(out.grad_fn).__name__ == name
        m, s = _mean_std(out.tolist())
        assert abs(m + 1.0) < 0.03 and abs(s - 0.5) < 0.03
    out = torch.normal(mean, std)
    out.sum().backward()
    assert mean.grad.abs().sum().item() == 0 and std.grad.abs().sum().item() == 0
    assert torch.normal(torch.zeros(2, 3), torch.ones(3)).shape == (2, 3)
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        torch.normal(0.0, -1.0, (2,))
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        torch.normal(torch.zeros(2), -torch.ones(2))


def test_bernoulli():
    torch.manual_seed(1)
    p = torch.full((20000,), 0.3, dtype=torch.float64, requires_grad=True)
    out = torch.bernoulli(p)
    assert type(out.grad_fn).__name__ == "BernoulliBackward0"
    values = out.tolist()
    assert set(values) <= {0.0, 1.0} and abs(sum(values) / len(values) - 0.3) < 0.02
    out.sum().backward()
    assert p.grad.abs().sum().item() == 0
    assert set(torch.bernoulli(torch.full((5,), 0.5), 0.0).tolist()) == {0.0}
    assert torch.ones(5).bernoulli(1.0).tolist() == [1.0] * 5
    with pytest.raises(RuntimeError, match="Expected p_in >= 0 && p_in <= 1 to be true"):
        torch.bernoulli(torch.full((2,), 1.5))
    with pytest.raises(
        NotImplementedError, match="\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'"
    ):
        torch.bernoulli(torch.zeros(2, dtype=torch.int64))


def test_multinomial():
    torch.manual_seed(2)
    probs = torch.tensor([1.0, 0.0, 3.0])
    drawn = torch.multinomial(probs, 20000, replacement=True).tolist()
    assert 1 not in drawn and abs(drawn.count(2) / len(drawn) - 0.75) < 0.02
    rows = torch.multinomial(torch.tensor([[1.0, 2.0, 3.0, 4.0]] * 3), 4)
    assert rows.shape == (3, 4) and all(sorted(r) == [0, 1, 2, 3] for r in rows.tolist())
    # Without replacement, zero-probability categories come last.
    assert sorted(torch.multinomial(torch.tensor([1.0, 0.0]), 2).tolist()) == [0, 1]
    assert torch.multinomial(torch.tensor([1.0, 0.0]), 1).tolist() == [0]
    assert torch.multinomial(torch.ones(0, 3), 2).shape == (0, 2)
    assert torch.tensor([1.0, 2.0]).multinomial(1).dtype == torch.int64
    for args, message in [
        ((torch.tensor([1.0, 2.0]), 3), "cannot sample n_sample > prob_dist.size"),
        ((torch.tensor([1.0, 0.0]), 0), "cannot sample n_sample <= 0 samples"),
        ((torch.tensor([1.0, -2.0]), 1), "probability tensor contains either `inf`, `nan`"),
        ((torch.tensor([1.0, math.nan]), 1), "probability tensor contains either `inf`, `nan`"),
        ((torch.tensor([0.0, 0.0]), 1), r"invalid multinomial distribution \(sum of probabilities"),
        (
            (torch.tensor([1, 2]), 1),
            "multinomial only supports floating-point dtypes for input, got: Long",
        ),
        ((torch.ones(2, 2, 2), 1), "prob_dist must be 1 or 2 dim"),
    ]:
        with pytest.raises(RuntimeError, match=message):
            torch.multinomial(*args)


def test_in_place_fills():
    torch.manual_seed(3)
    x = torch.zeros(20000, dtype=torch.float64)
    u = x.uniform_(2, 5)
    assert u is x and 2 <= min(x.tolist()) and max(x.tolist()) < 5
    m, s = _mean_std(x.normal_(1.0, 2.0).tolist())
    assert abs(m - 1.0) < 0.05 and abs(s - 2.0) < 0.05
    m, _ = _mean_std(x.exponential_(4.0).tolist())
    assert min(x.tolist()) >= 0 and abs(m - 0.25) < 0.01
    assert set(x.random_(3, 6).tolist()) == {3.0, 4.0, 5.0}
    assert set(x.random_(2).tolist()) == {0.0, 1.0}
    assert 0 <= min(x.random_().tolist()) and max(x.tolist()) <= 2**53
    assert set(x.bernoulli_(torch.full((20000,), 0.5)).tolist()) == {0.0, 1.0}
    b = torch.zeros(3, dtype=torch.int64).bernoulli_(1.0)
    assert b.tolist() == [1, 1, 1]


def test_in_place_fill_nodes_errors_and_leaves():
    base = torch.zeros(3, requires_grad=True)
    for fill, name in [
        (lambda y: y.normal_(), "NormalBackward0"),
        (lambda y: y.uniform_(), "UniformBackward0"),
        (lambda y: y.exponential_(), "ExponentialBackward0"),
        (lambda y: y.random_(1, 5), "RandomBackward0"),
        (lambda y: y.random_(5), "RandomBackward1"),
        (lambda y: y.random_(), "RandomBackward2"),
        (lambda y: y.bernoulli_(0.3), "BernoulliBackward2"),
        (lambda y: y.bernoulli_(torch.full((3,), 0.3)), "BernoulliBackward1"),
    ]:
        y = base.clone()
        fill(y)
        assert type(y.grad_fn).__name__ == name
        y.sum().backward()
        assert base.grad.tolist() == [0.0, 0.0, 0.0]
        base.grad = None
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        base.normal_()
    for fill, message in [
        (
            lambda: torch.zeros(3).uniform_(2, 1),
            "uniform_ expects to return a \\[from, to\\) range",
        ),
        (lambda: torch.zeros(3).exponential_(-1), "exponential_ expects lambda > 0.0"),
        (lambda: torch.zeros(3).random_(5, 2), "random_ expects 'from' to be less than 'to'"),
        (lambda: torch.zeros(3).bernoulli_(1.5), r"bernoulli_ expects p to be in \[0, 1\]"),
        (lambda: torch.zeros(3).normal_(0, -1), "normal expects std >= 0.0"),
    ]:
        with pytest.raises(RuntimeError, match=message):
            fill()
    with pytest.raises(
        NotImplementedError, match="\"normal_kernel_cpu\" not implemented for 'Long'"
    ):
        torch.zeros(2, dtype=torch.int64).normal_()


def test_randint_like():
    x = torch.zeros(2, 3)
    r = torch.randint_like(x, 5)
    assert r.shape == (2, 3) and r.dtype == torch.float32 and max(r.tolist()[0]) < 5
    r = torch.randint_like(torch.zeros(4, dtype=torch.int64), 2, 4, generator=torch.Generator())
    assert set(r.tolist()) <= {2, 3}
