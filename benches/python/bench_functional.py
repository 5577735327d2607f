"""``autograd.functional`` (issue 9): ferrograd against torch in the same process.

Each case runs ferrograd and torch in alternating blocks of calls (common.py explains
why not single calls), so both see the same machine load, and reports the median
milliseconds per call and the ratio ferrograd / torch (below 1: ferrograd is faster; the
issue's target is "no slower"). Float32, n = 100, W and x drawn once per library from
the same seed.

Cases:
- `hessian` of sum(tanh(W @ x)): reverse-over-reverse, looped (100 backward passes through
  the double-backward graph) and vectorized (one batched `grad` call);
- the same Hessian forward-over-reverse (`outer_jacobian_strategy="forward-mode"`), only
  once `ferrograd.autograd.forward_ad` exists (a note is printed otherwise);
- `jacobian` of tanh(W @ x), 100 -> 100: reverse mode looped and vectorized.
"""

import argparse
import importlib.util
import sys

from common import describe, load_ferrograd, load_torch, run_paired_cases

N = 100


def _problem(lib):
    lib.manual_seed(0)
    W = lib.randn(N, N) / N**0.5
    x = lib.randn(N)
    return W, x


def hessian_case(**kwargs):
    def build(lib):
        W, x = _problem(lib)
        hessian = lib.autograd.functional.hessian
        return lambda: hessian(lambda a: (W @ a).tanh().sum(), x, **kwargs)

    return build


def jacobian_case(**kwargs):
    def build(lib):
        W, x = _problem(lib)
        jacobian = lib.autograd.functional.jacobian
        return lambda: jacobian(lambda a: (W @ a).tanh(), x, **kwargs)

    return build


FORWARD_OVER_REVERSE = "hessian sum(tanh(Wx)), fwd-over-rev, vectorized"
CASES = [
    ("hessian sum(tanh(Wx)), rev-over-rev", hessian_case(), 20),
    ("hessian sum(tanh(Wx)), rev-over-rev, vectorized", hessian_case(vectorize=True), 20),
    (
        FORWARD_OVER_REVERSE,
        hessian_case(vectorize=True, outer_jacobian_strategy="forward-mode"),
        20,
    ),
    ("jacobian tanh(Wx) 100->100, reverse", jacobian_case(), 40),
    ("jacobian tanh(Wx) 100->100, reverse, vectorized", jacobian_case(vectorize=True), 40),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a fifth of the rounds")
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args()
    fg = load_ferrograd()
    torch = load_torch(args.no_torch)
    describe(fg, torch)
    has_forward_ad = importlib.util.find_spec("ferrograd.autograd.forward_ad") is not None

    def skip(name):
        if name == FORWARD_OVER_REVERSE and not has_forward_ad:
            return "ferrograd.autograd.forward_ad does not exist yet"
        return None

    run_paired_cases(CASES, fg, torch, quick=args.quick, width=50, skip=skip)
    return 0


if __name__ == "__main__":
    sys.exit(main())
