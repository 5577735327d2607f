"""Run the torch.func test files against real torch (not collected by pytest).

    /root/torchvenv/bin/python tests/run_func_on_torch.py [pytest args...]

A stand-in package named ``ferrograd`` that re-exports torch (``ferrograd.func`` is
``torch.func``, ``ferrograd.utils._pytree`` torch's pytree) is put first in
``sys.modules`` before pytest imports the files: this checks the tests' expectations.
No conftest is loaded (it would import the real ferrograd). Defaults to all func files.
"""

import sys
from pathlib import Path

import pytest
import torch
import torch.autograd.forward_ad
import torch.autograd.graph
import torch.func
import torch.utils._pytree

HERE = Path(__file__).resolve().parent
FILES = [
    "test_func_grad.py",
    "test_func_vjp_jvp.py",
    "test_func_jac.py",
    "test_func_vmap.py",
    "test_pytree.py",
]


def main(argv):
    args = list(argv)
    for name, module in {
        "ferrograd": torch,
        "ferrograd.autograd": torch.autograd,
        "ferrograd.autograd.forward_ad": torch.autograd.forward_ad,
        "ferrograd.autograd.graph": torch.autograd.graph,
        "ferrograd.func": torch.func,
        "ferrograd.utils": torch.utils,
        "ferrograd.utils._pytree": torch.utils._pytree,
    }.items():
        sys.modules[name] = module
    if not any(a.endswith(".py") or "::" in a for a in args):
        args += [str(HERE / f) for f in FILES]
    return pytest.main(["-q", "--noconftest", "-p", "no:cacheprovider", *args])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
