"""What one student's process costs, fork to reap, beside the floor, measured in one run.

Usage: python bench/child_cost.py [--runs 300]

  floor      a process that imported numpy and nothing else forks a child that exits,
             and reaps it
  sandboxed  the grader hands an empty notebook (one cell, `pass`, no function to call) to a
             worker inside bubblewrap: the job over the pipe, the child forked, its own PID,
             mount, IPC and UTS namespaces, /tmp, /dev/shm and /proc, capabilities dropped,
             the cell run, the answer back, the child reaped
  plain      the same on a worker without the sandbox (process limits only)

Prints the median wall-clock milliseconds per child of each and the ratio to the floor; then,
for the sandboxed and plain paths, where the CPU of one child goes: the grader's side (the
job out, the answer in), the worker's own (the fork itself, reading the child), and the
child's (everything it does, its namespaces and exit included, read from /proc as the
worker's reaped children), with the child's minor page faults (copy-on-write of the
worker's memory, most of them), beside the floor's children's.
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
import os, resource, sys, time
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
faults = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt / len(times)
print(times[len(times) // 2], faults)
"""


def floor(runs: int) -> tuple[float, float]:
    """Median seconds per child of a numpy-only process (a fresh interpreter of its own),
    and its children's minor page faults per child."""
    done = subprocess.run(
        [sys.executable, "-c", FLOOR, str(runs)], capture_output=True, text=True, check=True
    )
    seconds, faults = done.stdout.split()
    return float(seconds), float(faults)


def _stat(pid: int) -> list[int]:
    """/proc/PID/stat's fields as numbers, each at its number in proc(5) less 1: [10]
    cminflt, [13] utime, [14] stime, [15] cutime, [16] cstime (clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return [0, 0, *(int(f) if f.lstrip("-").isdigit() else 0 for f in fields)]


def _worker_pid(root: int) -> int:
    """The worker's interpreter: the deepest process under `root` (bubblewrap's, if any)."""
    pid = root
    while children := Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        pid = int(children[0])
    return pid


def _usage(worker: int) -> tuple[float, float, float]:
    """The worker's own CPU, its reaped children's, and their minor faults."""
    fields, tick = _stat(worker), os.sysconf("SC_CLK_TCK")
    return (fields[13] + fields[14]) / tick, (fields[15] + fields[16]) / tick, fields[10]


def through_workers(support: bwrap.Support, runs: int) -> tuple[float, list[float]]:
    """Median seconds per empty notebook on one worker, as the grader runs it; and per
    child, the grader's CPU, the worker's, the child's and the child's minor faults."""
    workers = Workers(1, support)
    cells = [CodeCell(1, "pass", "pass")]
    limits = TimeLimit()
    times = []
    worker = _worker_pid(workers.all[0].process.pid)
    try:
        before, mine = _usage(worker), time.process_time()
        for _ in range(runs):
            start = time.perf_counter()
            run = workers.run(cells, [], limits)
            times.append(time.perf_counter() - start)
            assert run.finished, run.exit_description
        after, mine = _usage(worker), time.process_time() - mine
    finally:
        workers.close()
    split = [mine, *(b - a for a, b in zip(before, after, strict=True))]
    return statistics.median(times), [value / runs for value in split]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    support = bwrap.support()
    if not support.sandboxed:
        raise SystemExit(f"no sandbox here: {support.reason}")
    least, floor_faults = floor(args.runs)
    sandboxed, sandboxed_cpu = through_workers(support, args.runs)
    plain, plain_cpu = through_workers(bwrap.Support(False, "bench"), args.runs)
    print(f"{os.cpu_count()} cores; median of {args.runs} children each")
    print(f"{'path':<10} {'ms/child':>9} {'x floor':>8}")
    for name, seconds in (("floor", least), ("sandboxed", sandboxed), ("plain", plain)):
        print(f"{name:<10} {seconds * 1000:>9.2f} {seconds / least:>8.2f}")
    print(f"CPU per child, ms: {'grader':>7} {'worker':>7} {'child':>7} {'faults':>7}")
    for name, (grader, worker, child, faults) in (
        ("sandboxed", sandboxed_cpu),
        ("plain", plain_cpu),
    ):
        print(
            f"{name:<18} {grader * 1000:>7.2f} {worker * 1000:>7.2f} {child * 1000:>7.2f} "
            f"{faults:>7.0f}"
        )
    print(f"{'floor':<42} {floor_faults:>7.0f}")


if __name__ == "__main__":
    main()
