"""Issue 7 §5, devices: ``ferrograd.device`` parses torch's spellings with torch's errors,
tensors report their device, and asking for a device this build cannot use (CUDA and
every other non-CPU backend) raises torch's error instead of quietly giving a CPU tensor.

ferrograd has no CUDA backend, so it answers as torch's CPU-only build does:
``AssertionError: Torch not compiled with CUDA enabled`` (torch/cuda/__init__.py,
``_lazy_init``). A CUDA build of torch without a GPU says "Found no NVIDIA driver"
instead, so those tests are not run against torch.
"""

import copy
import pickle
import re

import ferrograd as torch
import pytest

MOD = torch.__name__
IS_REAL_TORCH = MOD == "torch"
cpu_only_answer = pytest.mark.skipif(
    IS_REAL_TORCH, reason="torch's answer depends on its build (CUDA or CPU-only)"
)

NO_CUDA = "Torch not compiled with CUDA enabled"
TYPES = (
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
    "vulkan, mps, meta, hpu, mtia, privateuseone"
)


def exact(text):
    return "^" + re.escape(text) + "$"


# ----- the device type


@pytest.mark.parametrize(
    "spec, rep, text, typ, index",
    [
        ("cpu", "device(type='cpu')", "cpu", "cpu", None),
        ("cuda", "device(type='cuda')", "cuda", "cuda", None),
        ("cuda:1", "device(type='cuda', index=1)", "cuda:1", "cuda", 1),
        ("cpu:0", "device(type='cpu', index=0)", "cpu:0", "cpu", 0),
        ("mps", "device(type='mps')", "mps", "mps", None),
        ("meta", "device(type='meta')", "meta", "meta", None),
        ("xla", "device(type='xla')", "xla", "xla", None),
    ],
)
def test_device_from_string(spec, rep, text, typ, index):
    d = torch.device(spec)
    assert (repr(d), str(d), d.type, d.index) == (rep, text, typ, index)


def test_device_constructor_forms():
    assert torch.device("cuda", 1) == torch.device("cuda:1")
    assert torch.device(type="cuda", index=0) == torch.device("cuda:0")
    assert torch.device("cpu", None) == torch.device("cpu")
    assert torch.device(0) == torch.device("cuda:0")
    assert torch.device(torch.device("cuda:2")) == torch.device("cuda", 2)
    assert torch.device("cpu") != torch.device("cpu", 0)
    assert torch.device("cuda:0") != "cuda:0"
    assert type(torch.device("cpu")).__name__ == "device"


def test_device_hash_and_pickle():
    a, b = torch.device("cuda", 1), torch.device("cuda:1")
    assert hash(a) == hash(b)
    assert len({a, b, torch.device("cpu")}) == 2
    assert pickle.loads(pickle.dumps(a)) == a
    assert copy.deepcopy(torch.device("cpu")) == torch.device("cpu")
    with pytest.raises(AttributeError):
        a.type = "cpu"


@pytest.mark.parametrize(
    "spec, text",
    [
        ("cuda:-1", "Invalid device string: 'cuda:-1'"),
        ("cuda:01", "Invalid device string: 'cuda:01'"),
        ("cuda: 1", "Invalid device string: 'cuda: 1'"),
        ("cuda:", "Invalid device string: 'cuda:'"),
        ("cuda:x", "Invalid device string: 'cuda:x'"),
        ("cuda:1a", "Invalid device string: 'cuda:1a'"),
        ("cpu:0:1", "Invalid device string: 'cpu:0:1'"),
        (" cpu", "Invalid device string: ' cpu'"),
        ("", "Device string must not be empty"),
        ("CUDA", f"Expected one of {TYPES} device type at start of device string: CUDA"),
        ("foo", f"Expected one of {TYPES} device type at start of device string: foo"),
    ],
)
def test_device_string_errors(spec, text):
    with pytest.raises(RuntimeError, match=exact(text)):
        torch.device(spec)


def test_device_argument_errors():
    with pytest.raises(RuntimeError, match=exact("Device index must not be negative")):
        torch.device(-1)
    with pytest.raises(RuntimeError, match=exact("Device index must not be negative")):
        torch.device("cpu", -1)
    with pytest.raises(
        RuntimeError,
        match=exact(
            "type (string) must not include an index because index was passed explicitly: cuda:1"
        ),
    ):
        torch.device("cuda:1", 1)
    with pytest.raises(
        TypeError, match=exact("device(): argument 'index' (position 2) must be int, not str")
    ):
        torch.device("cuda", "1")
    with pytest.raises(
        TypeError,
        match=exact(f"device(): argument 'type' (position 1) must be str, not {MOD}.device"),
    ):
        torch.device(torch.device("cuda"), 1)
    with pytest.raises(TypeError) as e:
        torch.device(None)
    assert str(e.value) == (
        "device() received an invalid combination of arguments - got (NoneType), but expected"
        f" one of:\n * ({MOD}.device device)\n      didn't match because some of the arguments"
        " have invalid types: (!NoneType!)\n * (str type, int index = -1)\n"
    )
    with pytest.raises(TypeError) as e:
        torch.device()
    assert str(e.value) == (
        "device() received an invalid combination of arguments - got (), but expected one of:\n"
        f" * ({MOD}.device device)\n * (str type, int index = -1)\n"
    )


def test_device_context_manager_sets_factory_default():
    with torch.device("cpu") as d:
        assert d == torch.device("cpu")
        assert torch.ones(2).device == torch.device("cpu")


@cpu_only_answer
def test_device_context_manager_unavailable_device():
    x = torch.ones(1)
    with torch.device("cuda"):
        with pytest.raises(AssertionError, match=exact(NO_CUDA)):
            torch.zeros(2)
        with pytest.raises(AssertionError, match=exact(NO_CUDA)):
            torch.tensor([1.0])
        # torch's device context leaves the *_like factories alone.
        assert torch.zeros_like(x).device.type == "cpu"
    assert torch.zeros(2).device.type == "cpu"


def test_get_default_device():
    assert torch.get_default_device() == torch.device("cpu")


# ----- tensors and the cuda module


def test_tensor_device():
    t = torch.ones(2)
    assert t.device == torch.device("cpu")
    assert repr(t.device) == "device(type='cpu')"
    assert (t.is_cuda, t.is_cpu) == (False, True)


def test_cuda_module():
    assert torch.cuda.is_available() is False
    assert torch.cuda.device_count() == 0
    torch.cuda.manual_seed_all(0)  # accepted, as in torch without a GPU


@cpu_only_answer
def test_cuda_module_needs_a_device():
    assert torch.cuda.is_initialized() is False
    with pytest.raises(AssertionError, match=exact(NO_CUDA)):
        torch.cuda.current_device()


FACTORIES = {
    "zeros": lambda d: torch.zeros(2, device=d),
    "ones": lambda d: torch.ones(2, 3, device=d),
    "empty": lambda d: torch.empty(2, device=d),
    "full": lambda d: torch.full((2,), 1.0, device=d),
    "rand": lambda d: torch.rand(2, device=d),
    "randn": lambda d: torch.randn(2, device=d),
    "randint": lambda d: torch.randint(3, (2,), device=d),
    "arange": lambda d: torch.arange(3, device=d),
    "linspace": lambda d: torch.linspace(0, 1, 3, device=d),
    "eye": lambda d: torch.eye(2, device=d),
    "zeros_like": lambda d: torch.zeros_like(torch.ones(2), device=d),
    "ones_like": lambda d: torch.ones_like(torch.ones(2), device=d),
    "empty_like": lambda d: torch.empty_like(torch.ones(2), device=d),
    "full_like": lambda d: torch.full_like(torch.ones(2), 3.0, device=d),
    "rand_like": lambda d: torch.rand_like(torch.ones(2), device=d),
    "randn_like": lambda d: torch.randn_like(torch.ones(2), device=d),
    "tensor": lambda d: torch.tensor([1.0], device=d),
    "as_tensor": lambda d: torch.as_tensor([1.0], device=d),
    "as_tensor(tensor)": lambda d: torch.as_tensor(torch.ones(2), device=d),
}


@pytest.mark.parametrize("name", list(FACTORIES))
@pytest.mark.parametrize("dev", ["cpu", "cpu:0", torch.device("cpu"), None])
def test_factories_accept_cpu(name, dev):
    assert FACTORIES[name](dev).device.type == "cpu"


@cpu_only_answer
@pytest.mark.parametrize("name", list(FACTORIES))
@pytest.mark.parametrize("dev", ["cuda", "cuda:1", 0, torch.device("cuda")])
def test_factories_refuse_cuda(name, dev):
    with pytest.raises(AssertionError, match=exact(NO_CUDA)):
        FACTORIES[name](dev)


@pytest.mark.parametrize("name", ["zeros", "rand", "arange", "eye", "full", "randint"])
def test_factories_refuse_other_backends(name):
    # torch's dispatcher error for a backend that is not built in.
    with pytest.raises(
        NotImplementedError,
        match=r"^Could not run 'aten::empty.memory_format' with arguments from the 'MPS' backend",
    ):
        FACTORIES[name]("mps")


@pytest.mark.parametrize("name", ["tensor", "as_tensor"])
def test_tensor_refuses_other_backends(name):
    with pytest.raises(
        RuntimeError, match=exact("PyTorch is not linked with support for xla devices")
    ):
        FACTORIES[name]("xla")


def test_factory_device_argument_errors():
    with pytest.raises(
        TypeError, match=exact(f"ones(): argument 'device' must be {MOD}.device, not float")
    ):
        torch.ones(2, device=1.5)
    with pytest.raises(
        RuntimeError,
        match=exact(f"Expected one of {TYPES} device type at start of device string: foo"),
    ):
        torch.zeros(2, device="foo")


# ----- .to / .cuda / .cpu


@cpu_only_answer
@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.to("cuda"),
        lambda t: t.to("cuda:1"),
        lambda t: t.to(0),
        lambda t: t.to(torch.device("cuda")),
        lambda t: t.to("cuda", torch.float64),
        lambda t: t.to(device="cuda", dtype=torch.float64, copy=True),
        lambda t: t.cuda(),
        lambda t: t.cuda(1),
        lambda t: t.cuda("cuda:0"),
        lambda t: t.cuda(device=torch.device("cuda"), non_blocking=True),
    ],
)
def test_to_cuda_refused(call):
    with pytest.raises(AssertionError, match=exact(NO_CUDA)):
        call(torch.ones(2))


def test_to_other_backends_refused():
    t = torch.ones(2)
    with pytest.raises(
        RuntimeError, match=exact("PyTorch is not linked with support for mps devices")
    ):
        t.to("mps")
    with pytest.raises(RuntimeError, match=exact("Invalid device, must be cuda device")):
        t.cuda("cpu")
    with pytest.raises(RuntimeError, match=exact("Device index must not be negative")):
        t.cuda(-1)


def test_to_forms():
    t = torch.ones(2, requires_grad=True)
    assert t.to("cpu") is t
    assert t.to(torch.float32) is t
    assert t.to(t) is t
    assert t.to() is t
    assert t.to(None, None) is t
    assert t.cpu() is t
    assert t.to("cpu", torch.float64).dtype == torch.float64
    assert t.to(torch.float64, True, True).dtype == torch.float64
    assert t.to(torch.ones(1, dtype=torch.int32)).dtype == torch.int32
    assert t.to(device="cpu", dtype=torch.int32).dtype == torch.int32
    c = t.to("cpu", copy=True)
    assert c is not t and type(c.grad_fn).__name__ == "ToCopyBackward0"
    c.sum().backward()
    assert t.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    "args, kwargs, got",
    [
        (("cpu", "cpu"), {}, "str, str"),
        (("F64", True, True, True), {}, "DT, bool, bool, bool"),
        ((), {"foo": 1}, "foo=int, "),
        (("F64",), {"device": "cpu"}, "DT, device=str"),
        (("T", "F64"), {}, "Tensor, DT"),
        (([1],), {}, "list"),
    ],
)
def test_to_invalid_combination(args, kwargs, got):
    t = torch.ones(2)
    args = tuple(torch.float64 if a == "F64" else t if a == "T" else a for a in args)
    got = got.replace("DT", f"{MOD}.dtype")
    with pytest.raises(TypeError) as e:
        t.to(*args, **kwargs)
    assert str(e.value) == (
        f"to() received an invalid combination of arguments - got ({got}), but expected one of:\n"
        f" * ({MOD}.device device = None, {MOD}.dtype dtype = None, bool non_blocking = False,"
        f" bool copy = False, *, {MOD}.memory_format memory_format = None)\n"
        f" * ({MOD}.dtype dtype, bool non_blocking = False, bool copy = False,"
        f" *, {MOD}.memory_format memory_format = None)\n"
        " * (Tensor tensor, bool non_blocking = False, bool copy = False,"
        f" *, {MOD}.memory_format memory_format = None)\n"
    )


def test_cuda_argument_type_error():
    with pytest.raises(
        TypeError,
        match=exact(f"cuda(): argument 'device' (position 1) must be {MOD}.device, not float"),
    ):
        torch.ones(2).cuda(1.5)
