"""What one student's process costs, fork to reap, beside the floor, measured in one run.

Usage: python bench/child_cost.py [--runs 300]

  floor      a process that imported numpy and nothing else forks a child that exits,
             and reaps it
  sandboxed  the grader hands an empty notebook (one cell, `pass`, no function to call) to a
             worker inside bubblewrap: the job over the pipe, the child forked, its own PID,
             mount, IPC and UTS namespaces, /tmp, /dev/shm and /proc, capabilities dropped,
             the cell run, the answer back, the child reaped
  plain      the same on a worker without the sandbox (process limits only)

Prints the median wall-clock milliseconds per child of each and the ratio to the floor.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.course.config import TimeLimit
from grader.course.notebook import CodeCell
from grader.run import bwrap
from grader.run.workers import Workers

FLOOR = """
import os, sys, time
import numpy
times = []
for _ in range(int(sys.argv[1])):
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    times.append(time.perf_counter() - start)
times.sort()
print(times[len(times) // 2])
"""


def floor(runs: int) -> float:
    """Median seconds per child of a numpy-only process (a fresh interpreter of its own)."""
    done = subprocess.run(
        [sys.executable, "-c", FLOOR, str(runs)], capture_output=True, text=True, check=True
    )
    return float(done.stdout)


def through_workers(support: bwrap.Support, runs: int) -> float:
    """Median seconds per empty notebook on one worker, as the grader runs it."""
    workers = Workers(1, support)
    cells = [CodeCell(1, "pass", "pass")]
    limits = TimeLimit()
    times = []
    try:
        for _ in range(runs):
            start = time.perf_counter()
            run = workers.run(cells, [], limits)
            times.append(time.perf_counter() - start)
            assert run.finished, run.exit_description
    finally:
        workers.close()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    support = bwrap.support()
    if not support.sandboxed:
        raise SystemExit(f"no sandbox here: {support.reason}")
    least = floor(args.runs)
    sandboxed = through_workers(support, args.runs)
    plain = through_workers(bwrap.Support(False, "bench"), args.runs)
    print(f"{os.cpu_count()} cores; median of {args.runs} children each")
    print(f"{'path':<10} {'ms/child':>9} {'x floor':>8}")
    for name, seconds in (("floor", least), ("sandboxed", sandboxed), ("plain", plain)):
        print(f"{name:<10} {seconds * 1000:>9.2f} {seconds / least:>8.2f}")


if __name__ == "__main__":
    main()
