"""Anomaly detection (spec autograd.md §8): with it on, every node records the stack of
its forward call, an error in backward is preceded by a warning showing that stack, and
(with ``check_nan``) a NaN in any backward result is an error naming the node. The mode
is process-global, like torch's."""

import warnings

from .. import _C

__all__ = ["detect_anomaly", "set_detect_anomaly"]


class detect_anomaly:  # noqa: N801 - torch's name
    """Context manager that turns anomaly detection on (not a decorator)."""

    def __init__(self, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self):
        _C._set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args):
        _C._set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:  # noqa: N801 - torch's name
    """Set anomaly detection on or off now; as a context manager, restore on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        _C._set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        _C._set_anomaly_enabled(self.prev, self.prev_check_nan)
