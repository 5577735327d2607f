"""Unit tests of ferrograd._tensor_str.tensor_repr with a fake tensor (no extension needed).

The module is loaded from its file so these tests run before the Rust extension is built.
"""

import importlib.util
import pathlib

_PATH = pathlib.Path(__file__).resolve().parents[1] / "python" / "ferrograd" / "_tensor_str.py"
_spec = importlib.util.spec_from_file_location("_ferrograd_tensor_str_under_test", _PATH)
ts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ts)


class FakeDType:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "ferrograd." + self.name


class FakeNode:
    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


def _shape_of(data):
    shape = []
    while isinstance(data, list):
        shape.append(len(data))
        if not data:
            break
        data = data[0]
    return tuple(shape)


class FakeTensor:
    def __init__(self, data, dtype="float32", shape=None, requires_grad=False, grad_fn=None):
        self._data = data
        self.dtype = FakeDType(dtype)
        self.shape = tuple(shape) if shape is not None else _shape_of(data)
        self.requires_grad = requires_grad or grad_fn is not None
        self.grad_fn = FakeNode(grad_fn) if grad_fn else None
        self.is_leaf = grad_fn is None

    def tolist(self):
        return self._data

    def dim(self):
        return len(self.shape)

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n


def r(*args, **kwargs):
    return ts.tensor_repr(FakeTensor(*args, **kwargs))


def test_repr_float_vector_integer_valued():
    assert r([1.0, 2.0, 3.0]) == "tensor([1., 2., 3.])"


def test_repr_int_vector():
    assert r([1, 2], dtype="int64") == "tensor([1, 2])"


def test_repr_scalar_fixed_point():
    assert r(3.5) == "tensor(3.5000)"


def test_repr_matrix_requires_grad():
    expected = "tensor([[1., 2.],\n        [3., 4.]], requires_grad=True)"
    assert r([[1.0, 2.0], [3.0, 4.0]], requires_grad=True) == expected


def test_repr_grad_fn():
    assert r([2.0, 4.0], grad_fn="MulBackward0") == "tensor([2., 4.], grad_fn=<MulBackward0>)"


def test_repr_grad_fn_cpp_namespace_stripped():
    out = r([1.0], grad_fn="torch::autograd::CopySlices")
    assert out == "tensor([1.], grad_fn=<CopySlices>)"


def test_repr_empty():
    assert r([], shape=(0, 3)) == "tensor([], size=(0, 3))"
    assert r([]) == "tensor([])"
    assert r([], dtype="int64") == "tensor([], dtype=ferrograd.int64)"


def test_repr_scientific():
    assert r([1e-5, 1e5]) == "tensor([1.0000e-05, 1.0000e+05])"
    assert r([1e10]) == "tensor([1.0000e+10])"


def test_repr_fixed_point():
    assert r([0.1, 0.25]) == "tensor([0.1000, 0.2500])"
    assert r([-1.5, 22.125]) == "tensor([-1.5000, 22.1250])"


def test_repr_non_default_dtype():
    assert r(1.0, dtype="float64") == "tensor(1., dtype=ferrograd.float64)"
    assert r([1, 2], dtype="int32") == "tensor([1, 2], dtype=ferrograd.int32)"
    expected = "tensor([1., 2.], dtype=ferrograd.float64, requires_grad=True)"
    assert r([1.0, 2.0], dtype="float64", requires_grad=True) == expected


def test_repr_bool():
    assert r([True, False], dtype="bool") == "tensor([ True, False])"


def test_repr_complex():
    assert r([1 + 2j], dtype="complex64") == "tensor([1.+2.j])"
    assert r([1.5 - 2j, 0.25 + 1j], dtype="complex64") == "tensor([1.5000-2.j, 0.2500+1.j])"
    assert r(1j, dtype="complex128") == "tensor(0.+1.j, dtype=ferrograd.complex128)"


def test_repr_nonfinite():
    assert r([float("nan"), 1.0]) == "tensor([nan, 1.])"
    assert r([float("inf"), -float("inf"), 0.5]) == "tensor([   inf,   -inf, 0.5000])"
    assert r([0.0, 0.0]) == "tensor([0., 0.])"
    assert r([-0.0]) == "tensor([-0.])"


def test_repr_column_alignment():
    assert r([1.0, -10.0, 100.0]) == "tensor([  1., -10., 100.])"
    assert r([[1, 200], [30, 4]], dtype="int64") == "tensor([[  1, 200],\n        [ 30,   4]])"


def test_repr_line_wrapping():
    expected = (
        "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
        "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
        "        28., 29.])"
    )
    assert r([float(i) for i in range(30)]) == expected


def test_repr_3d():
    data = [[[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]]
    expected = "tensor([[[0., 0.],\n         [0., 0.]],\n\n        [[0., 0.],\n         [0., 0.]]])"
    assert r(data) == expected


def test_repr_summarized_vector():
    out = r(list(range(2000)), dtype="int64")
    assert out == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"


def test_repr_summarized_matrix():
    data = [[float(i * 100 + j) for j in range(100)] for i in range(100)]
    out = r(data)
    lines = out.split("\n")
    assert lines[0] == "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.7000e+01, 9.8000e+01,"
    assert lines[1] == "         9.9000e+01],"
    assert lines[6] == "        ...,"
    assert out.endswith("9.9990e+03]])")
    assert len(lines) == 13


def test_repr_suffix_wraps_past_linewidth():
    data = [float(i) + 0.5 for i in range(10)]
    out = r(data, dtype="float64", requires_grad=True)
    assert out == (
        "tensor([0.5000, 1.5000, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000, 7.5000, 8.5000,\n"
        "        9.5000], dtype=ferrograd.float64, requires_grad=True)"
    )


def test_repr_printoptions_context():
    with ts.printoptions(precision=2):
        assert r([0.125, 0.5]) == "tensor([0.12, 0.50])"
    assert r([0.125, 0.5]) == "tensor([0.1250, 0.5000])"


def test_repr_tangent_suffix(monkeypatch):
    import sys
    import types

    fake_fwd = types.ModuleType("ferrograd.autograd.forward_ad")
    tangents = {}
    fake_fwd.unpack_dual = lambda t: (t, tangents.get(id(t)))
    monkeypatch.setitem(sys.modules, "ferrograd.autograd.forward_ad", fake_fwd)
    t = FakeTensor([1.0, 2.0])
    tangents[id(t)] = "TANGENT"
    assert ts.tensor_repr(t) == "tensor([1., 2.], tangent='TANGENT')"
    assert r([1.0]) == "tensor([1.])"
