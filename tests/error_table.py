"""The shared harness of the error-table tests (test_*_errors.py): each table row is
(call, exception class, message), evaluated with the table's names; a message ending
in "..." is compared as a prefix. Run as a script under torch's Python, a table checks
itself against torch (`run_on_torch`)."""

import sys

import pytest


def check(names, call, kind, message):
    with pytest.raises(kind) as info:
        eval(call, dict(names))
    got = str(info.value)
    if message.endswith("..."):
        assert got.startswith(message[:-3]), got
    else:
        assert got == message, got


def run_on_torch(torch, names, cases):
    """Every case, reporting each failure and stopping at none; exits 1 on a failure."""
    failed = 0
    for call, kind, message in cases:
        try:
            check(names, call, kind, message)
        except BaseException as ex:  # report every case, stop at none
            failed += 1
            print(f"FAIL {call}: {type(ex).__name__}: {str(ex).splitlines()[0][:300]}")
    print(f"{len(cases)} cases on torch {torch.__version__}: {failed} failed")
    sys.exit(1 if failed else 0)
