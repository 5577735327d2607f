"""One training step of a 784-512-512-10 MLP with relu, batch 128, float32.

Forward, mean squared loss, backward into the weights' .grad (reset to None between steps,
like `zero_grad(set_to_none=True)`). Milliseconds per step: median of 5 runs of 10 steps
(3 runs of 3 steps with --quick), after 3 warm-up steps.
"""

from common import describe, load_ferrograd, load_torch, measure_ns, parse_args, print_table

SIZES = (784, 512, 512, 10)
BATCH = 128


def make_step(lib, activation="relu"):
    """One training step; `activation` names the Tensor method applied between layers."""
    lib.manual_seed(0)
    params = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        params.append(lib.randn(fan_in, fan_out, requires_grad=True))
        params.append(lib.zeros(fan_out, requires_grad=True))
    x = lib.randn(BATCH, SIZES[0])
    target = lib.randn(BATCH, SIZES[-1])

    def step():
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i] + params[i + 1]
            if i + 2 < len(params):
                h = getattr(h, activation)()
        loss = ((h - target) ** 2).mean()
        loss.backward()
        for p in params:
            p.grad = None

    return step


def ms_per_step(lib, steps, repeat):
    step = make_step(lib)
    return measure_ns(step, repeat=repeat, number=steps, warmup=3, reduce="median") / 1e6


def main():
    args = parse_args(__doc__)
    steps, repeat = (3, 3) if args.quick else (10, 5)
    fg = load_ferrograd()
    torch = load_torch(args.no_torch)
    describe(fg, torch)
    ours = ms_per_step(fg, steps, repeat)
    theirs = ms_per_step(torch, steps, repeat) if torch is not None else None
    name = "-".join(map(str, SIZES))
    print_table(
        f"MLP {name}, batch {BATCH}, float32: forward + loss + backward",
        [("training step", ours, theirs)],
        "ms/step",
    )


if __name__ == "__main__":
    main()
