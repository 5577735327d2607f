"""Shared helpers for the Python-level benchmarks: timing, finding torch, printing a table.

Each bench script times ferrograd and, when the real PyTorch is importable in the same
environment, torch on the same case, and prints both with the ratio torch / ferrograd
(for times: above 1 means ferrograd is faster).
"""

import argparse
import os
import statistics
import sys
import time


def parse_args(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, for a smoke run")
    parser.add_argument(
        "--no-torch", action="store_true", help="do not time torch even when importable"
    )
    return parser.parse_args()


def load_ferrograd():
    import ferrograd

    return ferrograd


def load_torch(disabled=False):
    """The real PyTorch, or None: not installed, disabled, or `torch` is ferrograd's own shim."""
    if disabled or os.environ.get("FERROGRAD_BENCH_NO_TORCH"):
        return None
    try:
        import torch
    except ImportError:
        return None
    if is_ferrograd_shim(torch):
        return None
    return torch


def is_ferrograd_shim(module):
    """True when `import torch` found ferrograd (an alias or a re-exporting shim)."""
    if module.__name__.split(".")[0] == "ferrograd":
        return True
    if "ferrograd" in (getattr(module, "__file__", None) or ""):
        return True
    native = getattr(module, "_C", None)
    return native is None or getattr(native, "__name__", "") != "torch._C"


def measure_ns(fn, *, repeat=5, number=1, warmup=1, reduce="min"):
    """Nanoseconds per call of fn(): `repeat` runs of `number` calls, min (or median) of runs."""
    for _ in range(warmup):
        fn()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter_ns() - start) / number)
    return min(runs) if reduce == "min" else statistics.median(runs)


#: Pause before each block of calls, long enough for the other library's idle worker
#: threads to go to sleep: on a small machine, waiting threads of one library take cores
#: from the other. ferrograd's team stays awake 3 ms after a kernel; torch's libgomp
#: threads spun for 10 ms of CPU time after a parallel region (measured from their
#: schedstat on a 2-core AMD EPYC), and a 10 ms pause halved ferrograd's 2-thread speed in
#: the next block.
SETTLE_S = 0.015
#: Untimed calls at the start of each block, for at least this long: after the pause, a
#: sleeping worker thread took 3 to 10 ms to run again on a virtual machine (torch's
#: first call waits for it; ferrograd's caller starts alone and the member joins later),
#: so timing from the second call measured the wake-up, not the steady state of calls
#: back to back that a user's loop sees. Both libraries get the same warm-up.
WARM_S = 0.01
#: Blocks per library per case: load drift during a case hits both libraries alike.
BLOCKS = 5


def alternating_blocks_us(calls, rounds):
    """Median microseconds per call of each of `calls`, timed in alternating blocks: each
    library in turn gets a settle pause, `WARM_S` of untimed calls (one at least), then
    its share of `rounds` timed calls, `BLOCKS` times over. Alternating single calls
    instead would time each library while the other's thread pool is still spinning,
    which no user sees."""
    samples = [[] for _ in calls]
    blocks = min(BLOCKS, rounds)
    per_block = max(1, -(-rounds // blocks))
    for _ in range(blocks):
        for i, fn in enumerate(calls):
            time.sleep(SETTLE_S)
            warm_until = time.perf_counter() + WARM_S
            fn()
            while time.perf_counter() < warm_until:
                fn()
            for _ in range(per_block):
                start = time.perf_counter_ns()
                fn()
                samples[i].append((time.perf_counter_ns() - start) / 1e3)
    return [statistics.median(s) for s in samples]


def best_of(samples_ns, reduce="min"):
    return min(samples_ns) if reduce == "min" else statistics.median(samples_ns)


def fmt(value):
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


def print_table(title, rows, unit):
    """rows: (case, ferrograd value, torch value or None), all in `unit`, lower is better."""
    headers = ("case", f"ferrograd [{unit}]", f"torch [{unit}]", "torch/ferrograd")
    table = []
    for case, ours, theirs in rows:
        ratio = f"{theirs / ours:.2f}x" if theirs is not None and ours else "-"
        table.append((case, fmt(ours), fmt(theirs), ratio))
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(headers)]
    print(f"\n{title}")
    print(_line(headers, widths))
    print("  ".join("-" * w for w in widths))
    for row in table:
        print(_line(row, widths))
    sys.stdout.flush()


def _line(cells, widths):
    # first column left-aligned, figures right-aligned
    return "  ".join(
        c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
    )


def describe(ferrograd, torch):
    ours = getattr(ferrograd, "__version__", "?")
    theirs = f"torch {torch.__version__}" if torch is not None else "torch not importable"
    print(f"python {sys.version.split()[0]}, ferrograd {ours}, {theirs}")


def run_paired_cases(cases, ferrograd, torch, *, quick=False, width=40, only=None, skip=None):
    """Time `(name, build, rounds)` cases, `build(lib)` giving the call to time, ferrograd
    and torch in alternating blocks (`alternating_blocks_us`), and print the median
    milliseconds per call with the ratio ferrograd / torch (below 1: ferrograd is faster).
    `--quick` runs a fifth of the rounds; `only` keeps the cases whose name contains it;
    `skip(name)` returns why a case cannot run, or None."""
    headers = ("case", "ferrograd [ms]", "torch [ms]", "ferrograd/torch")
    print(f"{headers[0]:<{width}} {headers[1]:>15} {headers[2]:>11} {headers[3]:>16}")
    for name, build, rounds in cases:
        if only and only not in name:
            continue
        reason = skip(name) if skip else None
        if reason:
            print(f"{name:<{width}} skipped: {reason}", flush=True)
            continue
        rounds = max(3, rounds // 5) if quick else rounds
        calls = [build(ferrograd)] + ([build(torch)] if torch is not None else [])
        times = [t / 1e3 for t in alternating_blocks_us(calls, rounds)]
        theirs = times[1] if torch is not None else None
        ratio = f"{times[0] / theirs:.2f}" if theirs else "-"
        print(f"{name:<{width}} {fmt(times[0]):>15} {fmt(theirs):>11} {ratio:>16}", flush=True)


def paired_main(description, cases, *, width=40, after_describe=None):
    """The command line of a paired benchmark script: `--quick`, `--no-torch` and
    `--only TEXT`, then `run_paired_cases` (`after_describe(fg, torch)` prints more of
    the setup first). Returns the exit status."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="a fifth of the rounds")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--only", help="run only cases whose name contains this text")
    args = parser.parse_args()
    fg = load_ferrograd()
    torch = load_torch(args.no_torch)
    describe(fg, torch)
    if after_describe is not None:
        after_describe(fg, torch)
    run_paired_cases(cases, fg, torch, quick=args.quick, width=width, only=args.only)
    return 0
