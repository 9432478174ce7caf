"""How long each author's command takes to refuse a solution whose top-level code never ends,
as a multiple of the cell time limit it breaks (same run, one course).

Usage: python bench/endless_solution.py [--cell SECONDS]   (from the repository root)
Makes a course with `grader init` in a temporary folder, appends `while True: pass` to its
solution, sets `time_limit.cell`, and times `grader selftest`, `grader check` (on the
exercise) and `grader release`: each should refuse after about one limit (1×), not two.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def endless_course(folder: Path, cell: float) -> Path:
    """A `grader init` course whose solution ends in a cell that never ends."""
    course = folder / "course"
    subprocess.run([sys.executable, "-m", "grader", "init", str(course)], check=True,
                   capture_output=True)  # fmt: skip
    config = course / "config.yaml"
    limits = "time_limit: {submission: 20, cell: 5, call: 2}"
    config.write_text(
        config.read_text().replace(limits, f"time_limit: {{submission: 60, cell: {cell}, call: 2}}")
    )
    solution = course / "solutions" / "standardize.ipynb"
    notebook = json.loads(solution.read_text())
    endless = {"cell_type": "code", "execution_count": None, "id": "endless", "outputs": []}
    tagged = {"tags": ["solution-only"]}  # the exercise, written again, is left without it
    notebook["cells"].append({**endless, "metadata": tagged, "source": "while True:\n    pass\n"})
    solution.write_text(json.dumps(notebook))
    subprocess.run([sys.executable, "-m", "grader", "assign", "--course", str(course)],
                   check=True, capture_output=True)  # fmt: skip
    return course


def refused_after(args: list[str], where: Path) -> float:
    """Seconds until the command exits 2 (any other exit stops the bench)."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "grader", *args], cwd=where, capture_output=True,
                          text=True)  # fmt: skip
    took = time.monotonic() - started
    if done.returncode != 2:
        sys.exit(f"{args[0]}: exit {done.returncode}, not 2: {done.stderr.strip()}")
    return took


def main() -> None:
    """Time each command's refusal and print it against the limit."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cell", type=float, default=2.0, help="time_limit.cell, seconds")
    cell = parser.parse_args().cell
    with tempfile.TemporaryDirectory() as tmp:
        course = endless_course(Path(tmp), cell)
        exercise = course / "exercises" / "standardize.ipynb"
        for args in (
            ["selftest", "--course", str(course)],
            ["check", str(exercise), "--course", str(course)],
            ["release", "--course", str(course), "--out", str(Path(tmp) / "handout")],
        ):
            took = refused_after(args, Path(tmp))
            print(f"grader {args[0]:<8} refused after {took:5.2f} s = {took / cell:.2f}× the limit")


if __name__ == "__main__":
    main()
