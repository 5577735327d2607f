"""Unary float ops on f32/f64 go through the vectorized kernels (src/kernels/vmath): their
results stay within 4 ulp of the correctly rounded value (numpy's float64 result, rounded,
for float32), with libm's special values exact, for contiguous, strided and large inputs
(large ones are split over the thread pool)."""

import ferrograd as torch
import numpy as np
import pytest

OPS = {
    "exp": np.exp,
    "log": np.log,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "sqrt": np.sqrt,
    "reciprocal": lambda x: 1.0 / x,
}

SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-40, -1e-40, 88.0, -104.0]


def values(dtype):
    xs = np.concatenate([
        np.array(SPECIALS),
        np.linspace(-30.0, 30.0, 4001),
        np.geomspace(1e-30, 1e30, 601),
        np.arange(-200, 201) * (np.pi / 2),
    ])
    return xs.astype(dtype)


def ulps(got, want, dtype):
    """|got - want| in ulps of want, with NaN and infinities required to match exactly."""
    got = got.astype(np.float64)
    exact = ~np.isfinite(want) | (want == 0)
    spacing = np.spacing(np.abs(want).astype(dtype)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        err = np.where(exact, 0.0, np.abs(got - want) / np.where(exact, 1.0, spacing))
    same = (np.isnan(got) & np.isnan(want)) | (got == want)
    return np.where(exact & ~same, np.inf, err)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", sorted(OPS))
def test_within_4_ulp_contiguous_strided_and_large(op, dtype):
    xs = values(dtype)
    with np.errstate(all="ignore"):
        want = OPS[op](xs.astype(np.float64))
        if dtype == np.float32:
            # the float32 value libm's float64 result rounds to
            want = want.astype(np.float32).astype(np.float64)
    got = getattr(torch.tensor(xs), op)().numpy()
    # float64: numpy's libm is itself within an ulp, so allow 4 on top of it (5 in all)
    assert np.max(ulps(got, want, dtype)) <= (4.0 if dtype == np.float32 else 5.0)
    # zeros keep their sign where libm keeps it (sin, tanh, sqrt of -0 are -0)
    zero = (want == 0) & np.isfinite(want)
    assert np.array_equal(np.signbit(got[zero]), np.signbit(want[zero]))

    # a strided view gives the same elements
    wide = np.zeros(2 * len(xs), dtype=dtype)
    wide[::2] = xs
    strided = getattr(torch.tensor(wide)[::2], op)().numpy()
    assert np.array_equal(strided, got, equal_nan=True)

    # past the pool's grain, each element as on one thread
    reps = (1 << 18) // len(xs) + 1
    big = getattr(torch.tensor(np.tile(xs, reps)), op)().numpy()
    assert np.array_equal(big, np.tile(got, reps), equal_nan=True)
