"""Run the profiler test files against real torch (not collected by pytest).

    /root/torchvenv/bin/python tests/run_profiler_on_torch.py [pytest args...]
    /root/torchvenv/bin/python tests/run_profiler_on_torch.py --write-goldens

A stand-in package named ``ferrograd`` that re-exports torch (``ferrograd.autograd
.profiler`` is ``torch.autograd.profiler``, ...) is put first in ``sys.modules`` before
the files are imported: this checks that the tests' expectations are torch's. No
conftest is loaded (it would import the real ferrograd).

``--write-goldens`` formats the hand-built event lists of test_profiler_format.py with
torch's own ``table`` and writes tests/profiler_expected_tables.txt, the texts that the
ferrograd tests compare against character for character (one ``#### case: <name>``
line before each table).
"""

import sys
from pathlib import Path

import pytest
import torch
import torch.autograd.profiler
import torch.autograd.profiler_util

HERE = Path(__file__).resolve().parent
FILES = ["test_profiler.py", "test_profiler_format.py"]


def install_torch_as_ferrograd():
    for name, module in {
        "ferrograd": torch,
        "ferrograd.autograd": torch.autograd,
        "ferrograd.autograd.profiler": torch.autograd.profiler,
        "ferrograd.autograd.profiler_util": torch.autograd.profiler_util,
    }.items():
        sys.modules[name] = module


def write_goldens():
    sys.path.insert(0, str(HERE))
    import test_profiler_format as cases

    parts = []
    for name, make in cases.TABLE_CASES.items():
        parts.append(f"{cases.GOLDEN_MARKER}{name}\n{make()}")
    (HERE / cases.GOLDEN_FILE).write_text("".join(parts))


def main(argv):
    install_torch_as_ferrograd()
    if argv[:1] == ["--write-goldens"]:
        write_goldens()
        return 0
    args = list(argv)
    if not any(a.endswith(".py") or "::" in a for a in args):
        args += [str(HERE / f) for f in FILES]
    return pytest.main(["-q", "--noconftest", "-p", "no:cacheprovider", *args])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
