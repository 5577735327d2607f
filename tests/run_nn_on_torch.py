"""Run the nn / functional_call test files against real torch (not collected by pytest).

    /root/torchvenv/bin/python tests/run_nn_on_torch.py [pytest args...]

`ferrograd`, `ferrograd.nn`, `ferrograd.nn.functional` and `ferrograd.func` are mapped to
torch's modules in sys.modules before pytest imports the test files, so every
expectation in them is checked against torch's own behaviour. No conftest is loaded (it
would import the real ferrograd). Defaults to both test files.
"""

import sys
from pathlib import Path

import pytest
import torch
import torch.func
import torch.nn
import torch.nn.functional

HERE = Path(__file__).resolve().parent
FILES = ["test_nn_module.py", "test_functional_call.py"]


def main(args):
    sys.modules["ferrograd"] = torch
    sys.modules["ferrograd.nn"] = torch.nn
    sys.modules["ferrograd.nn.functional"] = torch.nn.functional
    sys.modules["ferrograd.func"] = torch.func
    if not any(a.endswith(".py") or "::" in a for a in args):
        args = [*args, *(str(HERE / f) for f in FILES)]
    return pytest.main(["-q", "--noconftest", "-p", "no:cacheprovider", *args])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
