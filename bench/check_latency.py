"""Wall time of one `grader check` against a bare `python -c "import numpy"`, same run.

Usage: python bench/check_latency.py [NOTEBOOK] [--repeat N]   (from the repository root)
Prints the median of N runs of each (taken in turns, so that a busy machine slows both
alike), their ratio against issue 19's target (<= 2), and the floor that any sandboxed
`grader check` meets: two interpreters that import numpy side by side (the trusted grader,
which judges, and the sandboxed worker, which runs the notebook), and the same with the
libraries the grader cannot start without (numpy, click; a config's YAML is read from its
memo) on its side. The grader's bytecode is compiled first, as installing the package does
(PYTHONDONTWRITEBYTECODE would otherwise make every run compile it). Last, the path no
sandboxed check can shorten: an interpreter's start, a sandboxed worker from its spawn to
ready (its interpreter, NumPy and the worker's modules), and the notebook's run on it. The
notebook is graded against this repository's course (`--course .`); a run that does not
grade (exit 2 or 3) stops the bench with the grader's message instead of timing an error.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


TARGET = 2.0  # issue 19: `grader check` against a bare numpy start, same run


def seconds(commands: list[list[str]], ok: tuple[int, ...] = (0,)) -> float:
    """Wall time of the commands run side by side; an exit code outside `ok` stops the bench."""
    started = time.perf_counter()
    running = [
        subprocess.Popen(c, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for c in commands
    ]
    for command, process in zip(commands, running, strict=True):
        _, err = process.communicate()
        if process.returncode not in ok:
            sys.exit(f"{' '.join(command)}: exit {process.returncode}\n{err.decode().strip()}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", nargs="?", default="demo/submissions/bruno.ipynb")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    grader = [sys.executable, "-m", "grader", "check", args.notebook, "--course", "."]
    grader += ["--format", "json"]
    numpy_only = [sys.executable, "-c", "import numpy"]
    compile_all = [sys.executable, "-m", "compileall", "-q", str(REPO / "grader")]
    subprocess.run(compile_all, check=True, capture_output=True)
    seconds([grader], ok=(0, 1))  # the course's references cached, as after any first run
    # What the grader itself cannot do without (NumPy, the config's YAML, the command line),
    # beside the sandboxed worker's NumPy: the floor of this design, before any work.
    # (A config's YAML is read from its memo on a warm start: no yaml.)
    libraries = [sys.executable, "-c", "import numpy, click"]
    checks, bares, floors, libs = [], [], [], []
    for _ in range(args.repeat):
        checks.append(seconds([grader], ok=(0, 1)))  # 1: the notebook fails checks
        bares.append(seconds([numpy_only]))
        floors.append(seconds([numpy_only, numpy_only]))
        libs.append(seconds([libraries, numpy_only]))
    check, bare, floor, lib = (statistics.median(t) for t in (checks, bares, floors, libs))
    spread = f"{min(checks) * 1000:.0f}-{max(checks) * 1000:.0f}"
    print(
        f"grader check {args.notebook}: {check * 1000:.0f} ms (median of {args.repeat}; {spread})"
    )
    print(f"python -c 'import numpy':      {bare * 1000:.0f} ms")
    print(f"two of them side by side:      {floor * 1000:.0f} ms ({floor / bare:.2f}x one)")
    print(
        f"numpy+click beside numpy:      {lib * 1000:.0f} ms ({lib / bare:.2f}x one): "
        "the grader's own libraries beside its worker, before any of the grader's code"
    )
    ratio = check / bare
    verdict = "target met" if ratio <= TARGET else "target not met"
    print(f"ratio check / bare numpy start: {ratio:.2f} (target <= {TARGET}): {verdict}")
    print(
        f"floor: a grader and a sandboxed worker that import numpy side by side take "
        f"{floor / bare:.2f}x a bare start before any notebook runs; check is "
        f"{check / floor:.2f}x that; with the libraries the grader needs, "
        f"{lib / bare:.2f}x, and check is {check / lib:.2f}x that"
    )
    worker = _worker_path(args.notebook, args.repeat)
    start = statistics.median(seconds([[sys.executable, "-c", "pass"]]) for _ in range(args.repeat))
    least = start + worker[0] + worker[1]
    print(
        f"this design's path: an interpreter's start {start * 1000:.0f} ms, then a sandboxed "
        f"worker from its spawn to ready {worker[0] * 1000:.0f} ms, then the notebook's run on "
        f"it {worker[1] * 1000:.0f} ms: {least * 1000:.0f} ms ({least / bare:.2f}x a bare "
        f"start) before any judging; check is {check / least:.2f}x that"
    )


# Times, in a process that has imported what it needs, a sandboxed worker's start (spawn to
# ready, as `grader check` starts its one) and the notebook's run on it: medians of N.
_WORKER = """
import statistics, sys, time
from pathlib import Path
from grader.course.config import load_config
from grader.course.notebook import load_submission
from grader.course.recognise import choose_assignment
from grader.course.cases import build_cases
from grader.run import bwrap
from grader.run.workers import Workers
config = load_config(Path("config.yaml"))
submission = load_submission(Path(sys.argv[1]))
spec, _ = choose_assignment(config, submission, None)
plan = build_cases(spec).plan(spec)
support = bwrap.support()
assert support.sandboxed, support.reason
starts, runs = [], []
for _ in range(int(sys.argv[2])):
    began = time.perf_counter()
    workers = Workers(1, support, files=spec.files, importable=spec.preload)
    ready = time.perf_counter()
    workers.run(submission.cells, plan, spec.time_limit, spec.files)
    runs.append(time.perf_counter() - ready)
    starts.append(ready - began)
    workers.close()
print(statistics.median(starts), statistics.median(runs))
"""


def _worker_path(notebook: str, repeat: int) -> tuple[float, float]:
    done = subprocess.run(
        [sys.executable, "-c", _WORKER, notebook, str(repeat)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    start, run = done.stdout.split()
    return float(start), float(run)


if __name__ == "__main__":
    main()
