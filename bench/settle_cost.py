"""What settling a batch's one assignment up front (grader grade without --assignment) costs,
beside grading, measured in one run.

Usage: python bench/settle_cost.py [--copies 10]

Grades the demo class (demo/submissions, no notebook names its assignment, so each is
recognised by the names it defines: read and parsed once more) `copies` times over, without
--assignment, and times the batch's `_settle` step on the same notebooks. Prints the median
milliseconds per notebook of the step, the whole batch's seconds, and the step's share.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from grader.batch.entries import Batch
from grader.batch.grade import _settle, grade_batch
from grader.batch.pool import Job
from grader.batch.recorder import Recorder
from grader.course.config import load_config

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    """Time the settling step beside a whole batch on the same folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=10)
    args = parser.parse_args()
    config = load_config(REPO / "config.yaml")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "class"
        folder.mkdir()
        for k in range(args.copies):
            for notebook in sorted((REPO / "demo" / "submissions").glob("*.ipynb")):
                shutil.copy(notebook, folder / f"{notebook.stem}{k:03d}.ipynb")
        todo = [Job(path.stem, path) for path in sorted(folder.glob("*.ipynb"))]
        recorder = Recorder(Batch(), None, None, "", None)
        times = []
        for _ in range(5):
            started = time.perf_counter()
            settled = _settle(todo, recorder, config, folder)
            times.append(time.perf_counter() - started)
        step = statistics.median(times)
        started = time.perf_counter()
        grade_batch(folder, config, None)
        whole = time.perf_counter() - started
    print(f"{len(todo)} notebooks, settled as {settled}")
    print(f"settling: {step * 1000 / len(todo):.2f} ms per notebook (median of 5)")
    print(f"whole batch: {whole:.2f} s; settling is {step / whole:.1%} of it")


if __name__ == "__main__":
    main()
