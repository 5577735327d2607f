"""``ferrograd.cuda``: ferrograd has no CUDA backend yet, so this module answers as
torch's does in a build without CUDA: nothing is available, seeding is accepted and
ignored, and anything that needs a device raises torch's
``AssertionError: Torch not compiled with CUDA enabled``.
"""

__all__ = [
    "is_available",
    "is_initialized",
    "device_count",
    "current_device",
    "set_device",
    "synchronize",
    "get_device_name",
    "get_device_capability",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "initial_seed",
    "get_rng_state",
    "get_rng_state_all",
    "set_rng_state",
    "set_rng_state_all",
    "empty_cache",
]


def _is_compiled():
    return False


def is_available():
    return False


def is_initialized():
    return False


def device_count():
    return 0


def _lazy_init():
    raise AssertionError("Torch not compiled with CUDA enabled")


def current_device():
    _lazy_init()


def set_device(device):
    _lazy_init()


def synchronize(device=None):
    _lazy_init()


def get_device_name(device=None):
    _lazy_init()


def get_device_capability(device=None):
    _lazy_init()


def initial_seed():
    _lazy_init()


def get_rng_state(device="cuda"):
    _lazy_init()


def get_rng_state_all():
    # torch loops over device_count() devices: none here.
    return []


# torch queues these until CUDA initialises, which never happens here: they are
# accepted and have no effect, so CPU-only programs that seed "everything" still run.
def manual_seed(seed):
    int(seed)


def manual_seed_all(seed):
    int(seed)


def seed():
    pass


def seed_all():
    pass


def set_rng_state(new_state, device="cuda"):
    pass


def set_rng_state_all(new_states):
    pass


def empty_cache():
    pass
