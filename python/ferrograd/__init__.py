"""ferrograd: PyTorch's autograd (``torch.autograd``) on a tensor core written in Rust.

``import ferrograd as torch`` gives the same numbers, ``grad_fn`` names and errors for
autograd code. This module only re-exports: ops and factories live in the Rust
extension ``ferrograd._C``; autograd's Python-side API lives in ``ferrograd.autograd``.
"""

import gc as _gc

from . import _C

# Tells the core when a collection starts and ends (see src/bindings/gc.rs).
_gc.callbacks.append(_C._gc_callback)
from ._C import (
    Tensor,
    allclose,
    arange,
    as_tensor,
    cat,
    empty,
    empty_like,
    equal,
    eye,
    from_numpy,
    full,
    full_like,
    get_num_interop_threads,
    get_num_threads,
    get_rng_state,
    initial_seed,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    linspace,
    manual_seed,
    ones,
    ones_like,
    promote_types,
    Generator,
    default_generator,
    randperm,
    normal,
    bernoulli,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    set_num_interop_threads,
    set_num_threads,
    set_rng_state,
    stack,
    tensor,
    where,
    zeros,
    zeros_like,
)
from ._C import device, dtype, get_default_device
from ._C import cat as concat, cat as concatenate
from ._C import (  # noqa: A004 - torch's namespace shadows builtins on purpose
    bfloat16,
    bool,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int32,
    int64,
    uint8,
)
# issue 11: complex views and ops (src/bindings/complex_methods.rs)
from ._C import complex, imag, polar, real, view_as_complex, view_as_real  # noqa: A004
from ._functional import *  # noqa: F403
from ._functional import __all__ as _functional_all
from ._composite import *  # noqa: F403
from ._composite import __all__ as _composite_all
from ._random_ops import *  # noqa: F403
from ._random_ops import __all__ as _random_all
from ._norms import *  # noqa: F403
from ._norms import __all__ as _norms_all
from ._repeat_unique import *  # noqa: F403
from ._repeat_unique import __all__ as _repeat_unique_all
from ._shape_ops import *  # noqa: F403
from ._shape_ops import __all__ as _shape_ops_all
from ._tensor_methods import *  # noqa: F403
from ._tensor_methods import __all__ as _tensor_methods_all
from ._aliases import *  # noqa: F403
from ._aliases import __all__ as _aliases_all
from ._size import Size
from ._tensor_py import get_default_dtype, is_tensor, return_types
from ._tensor_py import is_warn_always_enabled, set_warn_always
from . import autograd
from .autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from . import nn
from . import cuda
from . import random
from . import linalg
from .linalg import _det as det
from .linalg import _inverse as inverse
from .linalg import _logdet as logdet
from .linalg import _slogdet as slogdet
from .linalg import _cholesky_inverse as cholesky_inverse
from .linalg import _cholesky_solve as cholesky_solve
from .linalg import _matrix_exp as matrix_exp
from .linalg import _orgqr as orgqr
from . import special
from . import utils

__version__ = "0.1.0"


def __getattr__(name):
    # `func` (and `vmap`, which is `func.vmap`) load on first use: most programs never
    # transform functions, and `import ferrograd` stays fast.
    if name in ("func", "vmap"):
        import importlib

        func = importlib.import_module(".func", __name__)
        return func if name == "func" else func.vmap
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def empty_cache():
    """Return the memory ferrograd keeps for reusing freed tensor buffers to the system
    (as ``torch.cuda.empty_cache()`` does for its caching allocator). Tensors alive are
    not affected; the cache refills as tensors are freed again."""
    _C._empty_cache()


# torch's constants.
pi = 3.141592653589793
e = 2.718281828459045
inf = float("inf")
nan = float("nan")
newaxis = None

# torch's aliases for dtypes.
half = float16
float = float32  # noqa: A001
double = float64
int = int32  # noqa: A001
long = int64
cfloat = complex64
cdouble = complex128

__all__ = [
    "Tensor",
    "Size",
    "empty_cache",
    "dtype",
    "device",
    "get_default_device",
    "cuda",
    "autograd",
    "nn",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "tensor",
    "as_tensor",
    "from_numpy",
    "zeros",
    "ones",
    "empty",
    "full",
    "arange",
    "linspace",
    "eye",
    "rand",
    "randn",
    "randint",
    "randperm",
    "normal",
    "bernoulli",
    "Generator",
    "default_generator",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "rand_like",
    "randn_like",
    "manual_seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "get_num_threads",
    "set_num_threads",
    "get_num_interop_threads",
    "set_num_interop_threads",
    "random",
    "utils",
    "where",
    "allclose",
    "equal",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "promote_types",
    "get_default_dtype",
    "is_tensor",
    "return_types",
    "set_warn_always",
    "is_warn_always_enabled",
    "linalg",
    "det",
    "inverse",
    "logdet",
    "slogdet",
    "cholesky_inverse",
    "cholesky_solve",
    "matrix_exp",
    "orgqr",
    *_functional_all,
    *_composite_all,
    *_random_all,
    *_norms_all,
    *_repeat_unique_all,
    *_shape_ops_all,
    *_tensor_methods_all,
    *_aliases_all,
    *("complex", "imag", "polar", "real", "view_as_complex", "view_as_real"),
]
