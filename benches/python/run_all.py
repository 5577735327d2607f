"""Run every Python-level benchmark: `python benches/python/run_all.py [--quick] [--no-torch]`.

Each script runs in its own process, so import-time and allocator state do not leak from
one case into the next. Exits non-zero if any script failed.
"""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = (
    "bench_import.py",
    "bench_op_overhead.py",
    "bench_forward_ad.py",
    "bench_chain_backward.py",
    "bench_mlp.py",
    "bench_unary.py",
    "bench_kernels.py",
    "bench_functional.py",
    "bench_func.py",
    "bench_profiler.py",
    "bench_reductions.py",
    "bench_sort_index.py",
    "bench_layout.py",
    "bench_linalg.py",
)


def main():
    passthrough = [a for a in sys.argv[1:] if a in ("--quick", "--no-torch")]
    failed = []
    for script in SCRIPTS:
        print(f"\n##### {script}", flush=True)
        rc = subprocess.call([sys.executable, str(HERE / script), *passthrough], cwd=HERE)
        if rc != 0:
            failed.append(script)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
