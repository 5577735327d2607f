"""``ferrograd.random``: the CPU random generator's seed and state, and ``fork_rng``."""

import contextlib

from ._C import get_rng_state, initial_seed, manual_seed, set_rng_state

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]


def seed():
    """Seed the generator with a non-deterministic number and return it, as torch does."""
    import random as _random

    s = _random.SystemRandom().getrandbits(63)
    manual_seed(s)
    return s


@contextlib.contextmanager
def fork_rng(
    devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None
):
    """Run the block with a forked generator: its state is restored on exit, so random
    numbers drawn inside do not change the sequence outside. Only the CPU generator
    exists; ``devices`` and ``device_type`` name accelerator generators there are none of."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
