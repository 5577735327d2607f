"""Fixtures for the pending tests (not collected by the project's pytest run, which only
looks in ``tests/``). A small copy of ``tests/conftest.py``: the tests here move into
``tests/`` as their features land, where the real conftest takes over."""

import ferrograd as torch
import pytest

#: The name error messages use for the library's own types ("ferrograd" or "torch").
MOD = torch.__name__

#: True when the suite runs against real PyTorch through the shim.
IS_REAL_TORCH = MOD == "torch"


@pytest.fixture
def mod():
    """The module name error texts render (``ferrograd`` here, ``torch`` under the shim)."""
    return MOD


@pytest.fixture(autouse=True)
def _restore_grad_mode():
    """Leave grad mode enabled after every test, even one that failed half-way through
    a plain ``set_grad_enabled(False)`` call, so one failure cannot cascade."""
    yield
    set_enabled = getattr(torch, "set_grad_enabled", None)
    if set_enabled is not None:
        set_enabled(True)


@pytest.fixture(autouse=True)
def _restore_anomaly_mode():
    """Anomaly mode is process-global (spec autograd.md §8): turn it off after every test so
    a test that failed inside ``set_detect_anomaly(True)`` cannot leak it into the next."""
    yield
    set_anomaly = getattr(getattr(torch, "autograd", None), "set_detect_anomaly", None)
    if set_anomaly is not None:
        set_anomaly(False)
