"""What torch's legacy ``torch._vmap_internals._vmap`` shows to autograd's batched paths
(``grad(is_grads_batched=True)``, the forward-mode ``functional.jacobian``): its batch
size checks and its refusal of random ops, with its texts. The batching itself is the
core's (one vmap level, randomness "error")."""

import contextlib

import ferrograd as _lib

# The core's text for a random op at a randomness="error" level, and the legacy one.
_RANDOM_IN_ERROR_MODE = "vmap: called random operation while in randomness error mode"
_LEGACY_RANDOM = (
    "vmap: We do not yet support calling random operations inside of vmap. Please perform "
    "random operations outside of vmap as a workaround"
)


@contextlib.contextmanager
def legacy_random_error():
    """Random ops inside the block fail with the legacy vmap's text."""
    try:
        yield
    except RuntimeError as ex:
        if str(ex).startswith(_RANDOM_IN_ERROR_MODE):
            raise RuntimeError(_LEGACY_RANDOM) from None
        raise


def vmap(func):
    """torch's ``_vmap(func)`` (in_dims 0, out_dims 0) on the core's vmap.
    ``tests/run_functional_on_torch.py --ours`` swaps in torch's own ``_vmap`` here."""
    mapped = _lib.func.vmap(func)
    from ..func import _state

    def run(*args):
        with legacy_random_error(), _state.legacy():
            return mapped(*args)

    return run


def batch_size(tensors, fn_name):
    """The common size of dim 0 of the tensors (None entries are not mapped), with the
    legacy vmap's texts; ``fn_name`` is the mapped function's name in them."""
    sizes = []
    for t in tensors:
        if t is None:
            continue
        if t.dim() == 0:
            raise ValueError(
                f"vmap({fn_name}, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but "
                "that input is a Tensor of dimensionality 0 so expected in_dim to satisfy "
                "0 <= in_dim < 0."
            )
        sizes.append(t.shape[0])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    return sizes[0]
