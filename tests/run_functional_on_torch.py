"""Run the functional-API test files against real torch (not collected by pytest).

    /root/torchvenv/bin/python tests/run_functional_on_torch.py [--ours] [pytest args...]

`ferrograd` is mapped to torch in sys.modules before pytest imports the test files, so
they run with torch's tensors, grad engine and forward AD. Without `--ours` the functional
API is torch's own: this checks the tests' expectations. With `--ours` it is
ferrograd's `autograd/functional.py` run over torch: this checks our functional logic
(the forward-mode Jacobian and Hessian in particular) on torch's forward AD, before
ferrograd has its own. No conftest is loaded (it would import the real ferrograd).
Defaults to both test files.
"""

import importlib
import sys
import types
from pathlib import Path

import pytest
import torch
import torch.autograd.forward_ad
import torch._vmap_internals
import torch.autograd.functional

HERE = Path(__file__).resolve().parent
AUTOGRAD_DIR = HERE.parent / "python" / "ferrograd" / "autograd"
FILES = ["test_functional.py", "test_functional_forward_mode.py"]


def our_functional_over_torch():
    """ferrograd's functional.py (and its helper module) imported as a package of their
    own, so their `import ferrograd` finds torch."""
    pkg = types.ModuleType("_ferrograd_autograd_over_torch")
    pkg.__path__ = [str(AUTOGRAD_DIR)]
    sys.modules[pkg.__name__] = pkg
    # Forward-mode Jacobians vmap over forward AD, which only torch's legacy vmap allows.
    legacy = importlib.import_module(f"{pkg.__name__}._legacy_vmap")
    legacy.vmap = torch._vmap_internals._vmap
    return importlib.import_module(f"{pkg.__name__}.functional")


def main(argv):
    ours = "--ours" in argv
    args = [a for a in argv if a != "--ours"]
    sys.modules["ferrograd"] = torch
    sys.modules["ferrograd.autograd"] = torch.autograd
    sys.modules["ferrograd.autograd.forward_ad"] = torch.autograd.forward_ad
    functional = our_functional_over_torch() if ours else torch.autograd.functional
    sys.modules["ferrograd.autograd.functional"] = functional
    # `torch.autograd.functional` is what `import ferrograd.autograd.functional` binds.
    torch.autograd.functional = functional
    if not any(a.endswith(".py") or "::" in a for a in args):
        args += [str(HERE / f) for f in FILES]
    return pytest.main(["-q", "--noconftest", "-p", "no:cacheprovider", *args])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
