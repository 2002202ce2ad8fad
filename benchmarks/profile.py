"""Where mini_autograd spends its time: one benchmark workload under cProfile.

Usage: ``python -m benchmarks.profile [WORKLOAD] [--repeats N] [--top N]``, WORKLOAD one of the
keys of ``benchmarks.run.WORKLOADS`` (default ``chain1``, the tiny-op chain on one element).
The workload runs once to warm up, then ``--repeats`` times under cProfile with the garbage
collector off (so that its pauses land on no function); it prints the ``--top`` functions by
own time (tottime) and by cumulative time.
"""

import argparse
import cProfile
import gc
import io
import pstats

# mini_autograd comes from run, which sets the thread counts before numpy loads.
from .run import WORKLOADS, ma


def profile(key, repeats=20):
    """cProfile statistics of `repeats` runs of mini_autograd on the workload `key`."""
    run = WORKLOADS[key][1]()
    run(ma)  # warm up
    profiler = cProfile.Profile()
    gc.disable()
    try:
        profiler.enable()
        for _ in range(repeats):
            run(ma)
        profiler.disable()
    finally:
        gc.enable()
    return pstats.Stats(profiler)


def report(stats, top=25):
    """The `top` functions by tottime, then by cumulative time, as text."""
    out = io.StringIO()
    stats.stream = out
    stats.strip_dirs()
    for order in ("tottime", "cumulative"):
        out.write(f"--- top {top} by {order} ---\n")
        stats.sort_stats(order).print_stats(top)
    return out.getvalue()


def main(argv=None):
    """Command-line entry point: profile one workload and print the two tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", nargs="?", default="chain1", choices=WORKLOADS)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    print(f"{WORKLOADS[args.workload][0]}: {args.repeats} runs, mini_autograd, gc off")
    print(report(profile(args.workload, args.repeats), args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
