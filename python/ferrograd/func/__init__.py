"""``ferrograd.func``: composable function transforms, as ``torch.func``.

Reverse-mode transforms (``grad``, ``vjp``, ``jacrev``) run on the autograd engine,
forward-mode ones (``jvp``, ``linearize``, ``jacfwd``) on forward AD, ``vmap`` on batched
tensors. Imported on first use: ``import ferrograd`` does not load it.
"""

from ._forward import jvp, linearize
from ._functional_call import functional_call, stack_module_state
from ._jacobian import hessian, jacfwd, jacrev
from ._reverse import grad, grad_and_value, vjp
from ._vmap import vmap

__all__ = [
    "grad",
    "grad_and_value",
    "vjp",
    "jvp",
    "linearize",
    "jacrev",
    "jacfwd",
    "hessian",
    "vmap",
    "functional_call",
    "stack_module_state",
]
