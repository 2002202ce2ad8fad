"""Is this checkout slower than another one? mini_autograd alone, paired, on the same workloads.

Usage: ``python -m benchmarks.compare OTHER [--rounds 3] [--runs 60] [WORKLOAD ...]``, OTHER a
checkout of the repository (e.g. ``git worktree add /tmp/before <commit>``). Each round runs
every workload once per checkout, in a fresh process, alternating; a workload's figure is the
fastest of its runs, over all rounds: the minimum is the figure a busy machine disturbs least.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

from .run import WORKLOADS

HERE = Path(__file__).resolve().parent.parent

# Run in a fresh process with the checkout first on sys.path; prints "key=milliseconds" pairs.
PROBE = """
import sys, time
sys.path.insert(0, sys.argv[1])
import benchmarks.run as run
import mini_autograd as ma
assert ma.__file__.startswith(sys.argv[1]), ma.__file__
for key in sys.argv[3:]:
    workload = run.WORKLOADS[key][1]()
    workload(ma)
    times = []
    for _ in range(int(sys.argv[2])):
        start = time.perf_counter()
        workload(ma)
        times.append(time.perf_counter() - start)
    print(f"{key}={min(times) * 1e3:.3f}")
"""


def fastest(checkout, keys, runs):
    """{workload: fastest time in ms} of one fresh process running the workloads in `checkout`."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    command = [sys.executable, "-c", PROBE, str(checkout), str(runs), *keys]
    out = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True, check=True)
    return {key: float(ms) for key, ms in (line.split("=") for line in out.stdout.split())}


def compare(other, keys, rounds=3, runs=60):
    """The table: each workload's fastest time in `other` and here, and the change in percent."""
    best = {checkout: dict.fromkeys(keys, float("inf")) for checkout in (other, HERE)}
    for _ in range(rounds):
        for checkout in (other, HERE):
            for key, ms in fastest(checkout, keys, runs).items():
                best[checkout][key] = min(best[checkout][key], ms)
    lines = [f"| workload | {other} | this checkout | change |", "|---|---|---|---|"]
    for key in keys:
        before, now = best[other][key], best[HERE][key]
        change = f"{(now / before - 1) * 100:+.1f} %"
        lines.append(f"| {WORKLOADS[key][0]} | {before:.2f} ms | {now:.2f} ms | {change} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="another checkout of this repository")
    parser.add_argument(
        "workloads", nargs="*", help=f"some of {', '.join(WORKLOADS)} (all by default)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    unknown = set(args.workloads) - set(WORKLOADS)
    if unknown:
        parser.error(
            f"unknown workload {', '.join(sorted(unknown))}: choose from {', '.join(WORKLOADS)}"
        )
    keys = args.workloads or list(WORKLOADS)
    print(compare(args.other.resolve(), keys, args.rounds, args.runs))


if __name__ == "__main__":
    main()
