"""``torch.func`` (issue 10): ferrograd against torch in the same process.

Each case runs ferrograd and torch in alternating blocks of calls (common.py explains
why not single calls), so both see the same machine load, and reports the median
milliseconds per call and the ratio ferrograd / torch (below 1: ferrograd is faster; the
issue's target is "no slower"). Float32, inputs drawn once per library from the same
seed.

Cases:
- per-sample gradients: `vmap(grad(loss), in_dims=(None, 0, 0))` of a 2-layer MLP
  (128 -> 128 -> 1, tanh, squared error) over a batch of 64 examples, parameters as a dict
  through `functional_call`-free plain tensors;
- `func.hessian` of sum(tanh(W @ x)), n = 100 (forward-over-reverse: vmap over jvp of grad);
- `func.jacrev` of tanh(W @ x) * x, 256 -> 256 (vmap over vjp).
"""

import sys

from common import paired_main


def per_sample_grads(lib):
    lib.manual_seed(0)
    features, hidden, batch = 128, 128, 64
    params = {
        "w1": lib.randn(hidden, features) / features**0.5,
        "b1": lib.zeros(hidden),
        "w2": lib.randn(1, hidden) / hidden**0.5,
        "b2": lib.zeros(1),
    }
    x = lib.randn(batch, features)
    t = lib.randn(batch, 1)

    def loss(p, xi, ti):
        h = (p["w1"] @ xi + p["b1"]).tanh()
        y = p["w2"] @ h + p["b2"]
        return ((y - ti) ** 2).sum()

    f = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
    return lambda: f(params, x, t)


def hessian(lib):
    lib.manual_seed(0)
    n = 100
    W = lib.randn(n, n) / n**0.5
    x = lib.randn(n)
    h = lib.func.hessian(lambda a: (W @ a).tanh().sum())
    return lambda: h(x)


def jacrev(lib):
    lib.manual_seed(0)
    n = 256
    W = lib.randn(n, n) / n**0.5
    x = lib.randn(n)
    j = lib.func.jacrev(lambda a: (W @ a).tanh() * a)
    return lambda: j(x)


CASES = [
    ("per-sample grads, MLP 128-128-1, batch 64", per_sample_grads, 60),
    ("func.hessian sum(tanh(Wx)), n=100", hessian, 40),
    ("func.jacrev tanh(Wx)*x, 256->256", jacrev, 40),
]


def main():
    return paired_main(__doc__, CASES, width=45)


if __name__ == "__main__":
    sys.exit(main())
