"""Wall time of one `grader check` against a bare `python -c "import numpy"`, same run.

Usage: python bench/check_latency.py [NOTEBOOK] [--repeat N]   (from the repository root)
Prints the median of N runs of each and their ratio. The notebook is graded against this
repository's course (`--course .`); a run that does not grade (exit 2 or 3) stops the bench
with the grader's message instead of timing an error.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def median_seconds(command: list[str], repeat: int, ok: tuple[int, ...] = (0,)) -> float:
    """The median wall time of `repeat` runs; an exit code outside `ok` stops the bench."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - started)
        if done.returncode not in ok:
            sys.exit(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr.strip()}")
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", nargs="?", default="demo/submissions/bruno.ipynb")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    grader = [sys.executable, "-m", "grader", "check", args.notebook, "--course", "."]
    grader += ["--format", "json"]
    numpy_only = [sys.executable, "-c", "import numpy"]
    check = median_seconds(grader, args.repeat, ok=(0, 1))  # 1: the notebook fails checks
    bare = median_seconds(numpy_only, args.repeat)
    print(f"grader check {args.notebook}: {check * 1000:.0f} ms (median of {args.repeat})")
    print(f"python -c 'import numpy':      {bare * 1000:.0f} ms")
    print(f"ratio check / bare numpy start: {check / bare:.2f}")


if __name__ == "__main__":
    main()
