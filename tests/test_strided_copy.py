"""The one strided-copy kernel (see Note: strided copies in src/kernels/strided.rs):
contiguous copies of transposed, sliced, expanded and flipped layouts, cat, stack, roll,
repeat, tril/triu and diag_embed, checked bit for bit against numpy for every dtype,
small and above the threads' grain (2^15 elements), with 1 and 2 threads."""

import numpy as np
import pytest

import ferrograd as torch

NUMPY_DTYPES = [
    np.float32,
    np.float64,
    np.float16,
    np.complex64,
    np.complex128,
    np.int64,
    np.int32,
    np.uint8,
    np.bool_,
]


def values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-100, 100, size=shape)
    if dtype == np.bool_:
        return a > 0
    if np.issubdtype(dtype, np.complexfloating):
        return (a + 1j * rng.integers(-9, 9, size=shape)).astype(dtype)
    return a.astype(dtype)


def same(ours, expected):
    got = ours.numpy()
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.fixture(params=[1, 2])
def threads(request):
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)


# Odd sizes around the 16x16 blocks of the transposed path, and one above the grain.
TRANSPOSED = [(3, 5), (16, 16), (17, 33), (40, 15), (257, 131)]


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("shape", TRANSPOSED)
def test_transposed_copy(dtype, shape, threads):
    a = values(shape, dtype)
    same(torch.from_numpy(a).t().contiguous(), np.ascontiguousarray(a.T))
    # Batched, and from an offset inside a larger storage.
    b = values((3,) + shape, dtype, seed=1)
    same(
        torch.from_numpy(b).transpose(1, 2).contiguous(), np.ascontiguousarray(b.transpose(0, 2, 1))
    )
    same(
        torch.from_numpy(b)[1:, 1:, 2:].transpose(1, 2).contiguous(),
        np.ascontiguousarray(b[1:, 1:, 2:].transpose(0, 2, 1)),
    )


def test_transposed_copy_keeps_nan_bits():
    # A signalling NaN would be quieted by a cast through f64: copies move bits.
    bits = np.full((40, 24), 0x7FA00001, dtype=np.uint32)
    bits[::3] = 0xFFC12345
    a = bits.view(np.float32)
    got = torch.from_numpy(a).t().contiguous().numpy().view(np.uint32)
    np.testing.assert_array_equal(got, bits.T)
    got = torch.from_numpy(a).flip(1).numpy().view(np.uint32)
    np.testing.assert_array_equal(got, bits[:, ::-1])


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("shape", [(5, 7), (300, 260)])
def test_strided_and_expanded_copies(dtype, shape, threads):
    a = values(shape, dtype)
    x = torch.from_numpy(a)
    same(x[1:, ::2].contiguous(), np.ascontiguousarray(a[1:, ::2]))
    same(x[2:, 3:].clone(), a[2:, 3:].copy())
    same(
        x[:, None, :].expand(shape[0], 3, shape[1]).contiguous(),
        np.ascontiguousarray(np.broadcast_to(a[:, None, :], (shape[0], 3, shape[1]))),
    )
    same(x.repeat(2, 1, 3), np.tile(a, (2, 1, 3)))
    # A cast on the way (the run path casts per element, the block path too).
    to = np.complex128 if np.issubdtype(dtype, np.complexfloating) else np.float64
    same(x.t().to(torch.from_numpy(np.zeros(1, to)).dtype), np.ascontiguousarray(a.T).astype(to))
    same(x[:, 1::2].to(torch.from_numpy(np.zeros(1, to)).dtype), a[:, 1::2].astype(to))


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("shape", [(4, 5, 6), (70, 3, 200)])
def test_flip(dtype, shape, threads):
    a = values(shape, dtype)
    x = torch.from_numpy(a)
    for dims in [(0,), (1,), (2,), (0, 2), (2, 1, 0), ()]:
        same(x.flip(dims), np.flip(a, dims).copy() if dims else a.copy())
    # From a non-contiguous source: flipped dims walk its strides backwards.
    same(x.transpose(0, 2).flip(0), np.flip(a.transpose(2, 1, 0), 0).copy())
    same(x[1:, :, ::3].flip(2, 0), np.flip(a[1:, :, ::3], (2, 0)).copy())


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_cat_stack_roll(dtype, threads):
    a, b = values((300, 130), dtype), values((300, 70), dtype, seed=1)
    x, y = torch.from_numpy(a), torch.from_numpy(b)
    same(torch.cat([x, y], 1), np.concatenate([a, b], 1))
    same(torch.cat([x.t(), y.t()], 0), np.concatenate([a.T, b.T], 0))
    same(torch.cat([x[:, ::2], y.flip(1)], 1), np.concatenate([a[:, ::2], b[:, ::-1]], 1))
    same(torch.stack([x, x.flip(0)], 1), np.stack([a, a[::-1]], 1))
    same(x.roll(7, 1), np.roll(a, 7, 1))
    same(x.roll((-3, 5), (0, 1)), np.roll(a, (-3, 5), (0, 1)))
    same(x.t().roll(11), np.roll(a.T, 11))


def test_cat_promotes_and_skips_empty():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.linspace(0, 1, 3).reshape(1, 3)
    got = torch.cat([torch.from_numpy(a), torch.ones(0), torch.from_numpy(b)])
    same(got, np.concatenate([a.astype(np.float64), b]))
    same(torch.cat([torch.ones(0), torch.ones(0)]), np.ones(0, dtype=np.float32))
    same(torch.cat([torch.ones(2, 0), torch.ones(2, 0)], 1), np.ones((2, 0), dtype=np.float32))


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("diagonal", [0, 1, -2, 300, -300])
def test_tril_triu(dtype, diagonal, threads):
    a = values((3, 130, 270), dtype)
    x = torch.from_numpy(a)
    same(x.tril(diagonal), np.tril(a, diagonal))
    same(x.triu(diagonal), np.triu(a, diagonal))
    same(x.transpose(1, 2).tril(diagonal), np.tril(a.transpose(0, 2, 1), diagonal))
    same(torch.triu(x[:, :0], diagonal), np.zeros((3, 0, 270), dtype=dtype))


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_diag_embed(dtype, threads):
    a = values((40, 300), dtype)
    x = torch.from_numpy(a)
    expected = np.zeros((40, 300, 300), dtype=dtype)
    idx = np.arange(300)
    expected[:, idx, idx] = a
    same(torch.diag_embed(x), expected)
    for offset in [2, -3]:
        n = 300 + abs(offset)
        expected = np.zeros((40, n, n), dtype=dtype)
        rows, cols = (idx, idx + offset) if offset > 0 else (idx - offset, idx)
        expected[:, rows, cols] = a
        same(torch.diag_embed(x, offset), expected)
    # dims that place the diagonal across the batch dim.
    got = torch.diag_embed(x[:5, :4].t(), 0, 0, 2).numpy()
    want = np.zeros((5, 4, 5), dtype=dtype)
    for i in range(5):
        want[i, :, i] = a[i, :4]
    np.testing.assert_array_equal(got, want)


def test_bfloat16_copies():
    x = torch.arange(200.0).reshape(20, 10).to(torch.bfloat16)  # exact in bfloat16
    a = np.arange(200.0).reshape(20, 10)
    np.testing.assert_array_equal(x.t().contiguous().float().numpy(), a.T)
    np.testing.assert_array_equal(x.flip(0, 1).float().numpy(), a[::-1, ::-1])
    np.testing.assert_array_equal(torch.cat([x, x], 1).float().numpy(), np.concatenate([a, a], 1))
    np.testing.assert_array_equal(x.tril(3).float().numpy(), np.tril(a, 3))
