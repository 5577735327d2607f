"""Import time: `python -c "import ferrograd"` in a fresh process, minus `python -c "pass"`.

Best of 10 runs each (best of 3 with --quick); torch the same way when importable.
"""

import subprocess
import sys
import time

from common import load_torch, parse_args, print_table


def best_run_ns(code, runs):
    best = None
    for _ in range(runs):
        start = time.perf_counter_ns()
        subprocess.run([sys.executable, "-c", code], check=True)
        elapsed = time.perf_counter_ns() - start
        best = elapsed if best is None else min(best, elapsed)
    return best


def import_ms(module, baseline_ns, runs):
    return max(best_run_ns(f"import {module}", runs) - baseline_ns, 0) / 1e6


def main():
    args = parse_args(__doc__)
    runs = 3 if args.quick else 10
    torch = load_torch(args.no_torch)
    baseline = best_run_ns("pass", runs)
    ours = import_ms("ferrograd", baseline, runs)
    theirs = import_ms("torch", baseline, runs) if torch is not None else None
    print_table(
        f"import time (fresh process, best of {runs}, interpreter start "
        f"{baseline / 1e6:.1f} ms subtracted)",
        [("import", ours, theirs)],
        "ms",
    )


if __name__ == "__main__":
    main()
