"""torch's thread API (issue 8 §5) and results that do not depend on the thread count
(issue 8 §4): set_num_threads / get_num_threads / set_num_interop_threads /
get_num_interop_threads with torch's errors and environment variables, and sums, matmuls
and whole backward passes that are bitwise identical under 1, 2 and 4 threads.

Settings that are fixed once per process (the environment at import, the inter-op count)
are tested in a fresh interpreter per setting.
"""

import hashlib
import math
import os

import numpy as np
import pytest

import ferrograd as torch
from conftest import IS_REAL_TORCH, MOD

ours_only = pytest.mark.skipif(
    IS_REAL_TORCH, reason="torch's sums depend on its thread count; its defaults on MKL"
)


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


# ---------------------------------------------------------------- the API and its errors


def test_set_num_threads_is_reported_back(restore_threads):
    for n in (1, 3, 2):
        torch.set_num_threads(n)
        assert torch.get_num_threads() == n
    torch.set_num_threads(np.int64(2))
    assert torch.get_num_threads() == 2


@pytest.mark.parametrize("name", ["set_num_threads", "set_num_interop_threads"])
@pytest.mark.parametrize(
    "value, exc, text",
    [
        (0, RuntimeError, "{name} expects a positive integer"),
        (-1, RuntimeError, "{name} expects a positive integer"),
        (-(2**31), RuntimeError, "{name} expects a positive integer"),
        (np.int32(0), RuntimeError, "{name} expects a positive integer"),
        (1.5, RuntimeError, "{name} expects an int, but got float"),
        (1.0, RuntimeError, "{name} expects an int, but got float"),
        ("2", RuntimeError, "{name} expects an int, but got str"),
        (True, RuntimeError, "{name} expects an int, but got bool"),
        (None, RuntimeError, "{name} expects an int, but got NoneType"),
        (np.float64(1), RuntimeError, "{name} expects an int, but got numpy.float64"),
        (2**31, ValueError, "Overflow when unpacking long"),
        (-(2**31) - 1, ValueError, "Overflow when unpacking long"),
        (np.int64(2**40), ValueError, "Overflow when unpacking long"),
        (2**63, ValueError, "Overflow when unpacking long long"),
    ],
)
def test_bad_counts_raise_torchs_errors(name, value, exc, text):
    # Texts checked against torch 2.15 (a failed check changes no setting).
    with pytest.raises(exc) as info:
        getattr(torch, name)(value)
    assert str(info.value) == text.format(name=name)


def test_tensor_is_not_a_count():
    with pytest.raises(RuntimeError) as info:
        torch.set_num_threads(torch.tensor(2))
    assert str(info.value) == "set_num_threads expects an int, but got Tensor"


@pytest.mark.parametrize("name", ["set_num_threads", "set_num_interop_threads"])
def test_setters_take_exactly_one_positional_argument(name):
    f = getattr(torch, name)
    with pytest.raises(TypeError) as info:
        f()
    assert str(info.value) == f"{MOD}.{name}() takes exactly one argument (0 given)"
    with pytest.raises(TypeError) as info:
        f(1, 2)
    assert str(info.value) == f"{MOD}.{name}() takes exactly one argument (2 given)"
    with pytest.raises(TypeError) as info:
        f(n=1)
    assert str(info.value) == f"{MOD}.{name}() takes no keyword arguments"


@pytest.mark.parametrize("name", ["get_num_threads", "get_num_interop_threads"])
def test_getters_take_no_arguments(name):
    f = getattr(torch, name)
    with pytest.raises(TypeError) as info:
        f(1)
    assert str(info.value) == f"{MOD}.{name}() takes no arguments (1 given)"
    with pytest.raises(TypeError) as info:
        f(x=1)
    assert str(info.value) == f"{MOD}.{name}() takes no keyword arguments"


INTEROP_ERROR = (
    "Error: cannot set number of interop threads after parallel work has started "
    "or set_num_interop_threads called"
)


def test_interop_count_is_set_once(run_isolated):
    out = run_isolated(
        """
        torch.set_num_interop_threads(3)
        print(torch.get_num_interop_threads())
        for n in (3, 2):
            try:
                torch.set_num_interop_threads(n)
            except RuntimeError as e:
                print(e)
        print(torch.get_num_interop_threads())
        """
    ).stdout.splitlines()
    assert out == ["3", INTEROP_ERROR, INTEROP_ERROR, "3"]


@ours_only
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: the engine runs serially")
def test_interop_count_is_fixed_once_backward_ran_in_parallel(run_isolated):
    # The engine's helper threads are our inter-op pool: once a backward has started them
    # (independent nodes above the engine's parallel size), the count is fixed, as torch's
    # is once its pool exists.
    out = run_isolated(
        """
        xs = [torch.ones(1 << 15, requires_grad=True) for _ in range(4)]
        sum((x.sin() * x).sum() for x in xs).backward()
        try:
            torch.set_num_interop_threads(2)
        except RuntimeError as e:
            print(e)
        """,
        env={"OMP_NUM_THREADS": "2"},
    ).stdout.splitlines()
    assert out == [INTEROP_ERROR]


# ---------------------------------------------------------------- environment at import


def _counts_at_import(run_isolated, **env):
    names = ("OMP_NUM_THREADS", "RAYON_NUM_THREADS", "MKL_NUM_THREADS")
    env = {name: env.get(name) for name in names}
    out = run_isolated(
        "import os\n"
        "print(torch.get_num_threads(), torch.get_num_interop_threads(), os.cpu_count())",
        env=env,
    ).stdout.split()
    return tuple(int(v) for v in out)


@ours_only
@pytest.mark.parametrize(
    "env, expected",
    [
        ({"OMP_NUM_THREADS": "3"}, 3),
        ({"RAYON_NUM_THREADS": "5"}, 5),
        ({"OMP_NUM_THREADS": "3", "RAYON_NUM_THREADS": "5"}, 3),
        ({"OMP_NUM_THREADS": "1,2"}, 1),  # OpenMP's per-level list: the first level
        ({"OMP_NUM_THREADS": "0", "RAYON_NUM_THREADS": "2"}, 2),
    ],
)
def test_environment_sets_the_intra_op_count(run_isolated, env, expected):
    # torch caps the count at the cores MKL sees; we take it as given.
    threads, _interop, _cpus = _counts_at_import(run_isolated, **env)
    assert threads == expected


@ours_only
@pytest.mark.parametrize("value", [None, "0", "abc", "-1", ""])
def test_unusable_environment_means_one_thread_per_cpu(run_isolated, value):
    threads, interop, cpus = _counts_at_import(run_isolated, OMP_NUM_THREADS=value)
    assert (threads, interop) == (cpus, cpus)


# ---------------------------------------------------------------- thread-count independence


def _order_sensitive(n, seed=0):
    """float32 values whose sum depends on the order of the additions."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * np.exp(rng.uniform(-8, 8, n))).astype(np.float32)


def _digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _reductions(x):
    """Sums and a mean over a big tensor, its rows and columns, narrow columns, halves."""
    m = x[: 3000 * 2000].reshape(3000, 2000)
    narrow = x[: 3 * 10**6].reshape(-1, 3)
    return [
        x.sum(),
        x.mean(),
        m.sum(0),
        m.sum(1),
        m.t().sum(1),
        narrow.sum(0),
        x.to(torch.float64).sum(),
        x[: 1 << 20].to(torch.float16).sum(),
        x[: 1 << 20].reshape(-1, 64).to(torch.bfloat16).sum(0),
        # Row kernels split over threads by rows or by slabs.
        (1 + m * 1e-4).prod(1),
        m.amax(1),
        # Column folds split over threads by blocks of columns.
        (1 + m * 1e-4).prod(0),
        m.amax(0),
        *m.reshape(30, 100, 2000).min(1),
        m.cumsum(1),
        m.cumsum(0),
        m.softmax(1),
        m.log_softmax(1),
        m.logsumexp(1),
        # Repeated indices add up in index order, whatever the split.
        torch.zeros(3000, 50).scatter_add(1, torch.from_numpy(_SCATTER_INDEX), m),
    ]


_SCATTER_INDEX = (np.arange(3000 * 2000) * 7 % 50).reshape(3000, 2000)


@ours_only
def test_reductions_do_not_depend_on_thread_count(restore_threads):
    x = torch.from_numpy(_order_sensitive(6_000_001))
    results = {}
    for n in (1, 2, 4, 3):
        torch.set_num_threads(n)
        results[n] = _digest(*(r.float().numpy() for r in _reductions(x)))
    assert len(set(results.values())) == 1, results
    # Not vacuous: splitting these values by thread count would change the bits.
    parts = [np.array_split(x.numpy(), n) for n in (1, 2, 3, 4)]
    assert len({sum(np.float32(p.sum(dtype=np.float32)) for p in split) for split in parts}) > 1


def test_sums_are_accurate():
    a = _order_sensitive(3_000_001, seed=1)
    x = torch.from_numpy(a)
    exact = a.astype(np.float64)
    scale = np.abs(exact).sum()
    assert abs(x.sum().item() - exact.sum()) <= 1e-6 * scale
    cols = x[:3_000_000].reshape(-1, 3).sum(0).numpy()
    assert np.all(np.abs(cols - exact[:3_000_000].reshape(-1, 3).sum(0)) <= 1e-6 * scale)


def test_float32_scans_accumulate_in_float64():
    # As torch's CPU scans: a float32 running sum would stop at 2^24.
    ones = torch.ones(2**24 + 10)
    assert ones.cumsum(0)[-1].item() == 2**24 + 10
    assert ones.reshape(1, -1).cumsum(1)[0, -1].item() == 2**24 + 10
    # -0.0 alone sums to +0.0 (the running sum starts from zero), as in torch.
    assert math.copysign(1.0, torch.tensor([-0.0]).cumsum(0).item()) == 1.0


def test_half_sums_accumulate_in_float32():
    # 2048 + 1 rounds back to 2048 in float16: torch sums halves in float32.
    for dtype in (torch.float16, torch.bfloat16):
        values = [2048.0] + [1.0] * 2048
        assert torch.tensor(values, dtype=dtype).sum().item() == 4096.0
        columns = torch.tensor([[v, v] for v in values], dtype=dtype)
        assert columns.sum(0).tolist() == [4096.0, 4096.0]
        assert columns.t().sum(1).tolist() == [4096.0, 4096.0]


WIDE_GRAPH = """
import hashlib
import numpy as np
if THREADS:
    torch.set_num_threads(THREADS)
    torch.set_num_interop_threads(THREADS)
rng = np.random.default_rng(0)
scales = 10 ** rng.uniform(-3, 3, 6)
leaves = [
    torch.from_numpy((rng.standard_normal((384, 640)) * s).astype(np.float32)).requires_grad_()
    for s in scales
]
w = torch.from_numpy(rng.standard_normal((640, 512)).astype(np.float32)).requires_grad_()
total = 0
for x in leaves:
    h = (x @ w).tanh() * x.sum(1, keepdim=True)
    total = total + h.sum(0).sum() + (x.sin() * x).mean() + h.t().sum(1).mean()
total.backward()
digest = hashlib.sha256()
for t in leaves + [w]:
    digest.update(t.grad.numpy().tobytes())
print(digest.hexdigest(), torch.get_num_threads(), torch.get_num_interop_threads())
"""


@ours_only
def test_gradients_do_not_depend_on_thread_count(run_isolated):
    # A wide graph (six big branches with matmuls and sums, one shared weight) backward
    # in a fresh process per setting: counts set through the environment (intra-op) and
    # through the API (both).
    runs = []
    for n in ("1", "2", "4"):
        by_env = run_isolated(f"THREADS = None\n{WIDE_GRAPH}", env={"OMP_NUM_THREADS": n})
        by_env = by_env.stdout.split()
        assert by_env[1] == n
        by_api = run_isolated(f"THREADS = {n}\n{WIDE_GRAPH}", env={"OMP_NUM_THREADS": None})
        by_api = by_api.stdout.split()
        assert by_api[1:] == [n, n]
        runs += [by_env[0], by_api[0]]
    assert len(set(runs)) == 1, runs


def test_big_ops_run_while_another_thread_changes_the_count(restore_threads):
    # A kernel keeps the pool it started on; set_num_threads swaps the pool for later ones.
    import threading

    x = torch.from_numpy(_order_sensitive(1 << 20))
    expected = x.sum().item()
    stop = threading.Event()

    def churn():
        n = 1
        while not stop.is_set():
            torch.set_num_threads(n % 3 + 1)
            n += 1

    t = threading.Thread(target=churn)
    t.start()
    try:
        sums = [x.sum().item() for _ in range(200)]
    finally:
        stop.set()
        t.join()
    assert sums == [expected] * 200


def test_environment_is_read_once(restore_threads, monkeypatch):
    # Changing the environment after the count was read does nothing (as in torch).
    before = torch.get_num_threads()
    monkeypatch.setenv("OMP_NUM_THREADS", str(before + 1))
    assert torch.get_num_threads() == before
