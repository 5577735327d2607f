"""Shared fixtures for the ferrograd test-suite.

Every test imports the library the way users do, ``import ferrograd as torch``, and is
written against the torch-compatible public API only, so the same files can be run
against real PyTorch through a shim package (a ``ferrograd/__init__.py`` that does
``sys.modules["ferrograd"] = torch``). Error texts that name torch's own types
(``torch.Size``, ``torch.FloatTensor``, ``torch.complex64``) are written with
``MOD = torch.__name__`` so they read ``ferrograd.Size([3])`` here and ``torch.Size([3])``
under the shim; graph node names (``MulBackward0``, ``torch::autograd::AccumulateGrad``)
are torch's in both.
"""

import os
import subprocess
import sys
import textwrap

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


@pytest.fixture
def run_isolated():
    """Run a snippet in a fresh interpreter and return its CompletedProcess.

    For behaviour that is "once per process" (warnings issued only the first time, such
    as the create_graph reference-cycle warning or the gradient layout contract warning),
    which an earlier test in the same process may already have consumed. The snippet
    starts with ``import ferrograd as torch`` already done and sees this process's
    ``sys.path`` (so the shim works too), and this process's environment updated with
    ``env`` (a value of None removes the variable). A non-zero exit shows its stderr."""

    def run(code, timeout=120, env=None):
        prelude = "import ferrograd as torch\n"
        overrides, env = env or {}, dict(os.environ)
        for name, value in overrides.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        proc = subprocess.run(
            [sys.executable, "-c", prelude + textwrap.dedent(code)],
            check=False,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
        assert proc.returncode == 0, (
            f"isolated snippet failed (rc={proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
        return proc

    return run


@pytest.fixture(autouse=True)
def _restore_anomaly_mode():
    """Anomaly mode is process-global (spec autograd.md §8): turn it off after every test so
    a test that failed inside ``set_detect_anomaly(True)`` cannot leak it into the next."""
    yield
    set_anomaly = getattr(getattr(torch, "autograd", None), "set_detect_anomaly", None)
    if set_anomaly is not None:
        set_anomaly(False)
