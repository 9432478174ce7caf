"""A batch with every hostile notebook in it, on an idle machine and with every core busy.

Usage: python bench/attack_batch.py [--size 200] [--jobs N]
Builds `size` honest submissions of mixed quality, then the same class plus every probe of the
suite (tests/test_attacks.py's ATTACKS and the red team's, tests/test_redteam.py), and grades
them with `grader grade --course .` from the repository's root (its config and time limits).
Prints each batch's time beside the sum of its submissions' time limits, the ratio of the
hostile batch to the honest one, whether every honest grade equals the same notebook's grade
alone (`grade_path`), and the points the probes earned beyond their honest work.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from test_acceptance_batch import honest_work  # noqa: E402
from test_attacks import ATTACKS, WRONG  # noqa: E402
from test_redteam import red_team  # noqa: E402

from grader.course.config import load_config  # noqa: E402
from grader.engine import grade_path  # noqa: E402

from conftest import write_notebook  # noqa: E402
from students import write_class  # noqa: E402

ASSIGNMENT = "self_attention"


def grade(folder: Path, out: Path, jobs: int | None) -> tuple[float, int, dict[str, float]]:
    """`grader grade` from the repository's root: seconds, exit code, each student's total."""
    command = [sys.executable, "-m", "grader", "grade", str(folder), "--course", "."]
    command += ["--assignment", ASSIGNMENT, "--out", str(out), "--sandbox", "required"]
    command += ["--jobs", str(jobs)] if jobs else []
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, check=False)
    seconds = time.perf_counter() - started
    totals: dict[str, float] = {}
    if (out / "grades.csv").is_file():  # else every grade reads as missing below
        with (out / "grades.csv").open(encoding="utf-8") as handle:
            totals = {row["student"]: float(row["total"]) for row in csv.DictReader(handle)}
    return seconds, done.returncode, totals


def busy() -> list[subprocess.Popen[bytes]]:
    """One spinning process per core this process may use."""
    spin = [sys.executable, "-c", "while True: pass"]
    return [subprocess.Popen(spin) for _ in os.sched_getaffinity(0)]


def probes(scratch: Path) -> dict[str, list[str]]:
    """Every hostile notebook of the suite, as code cells."""
    forbidden = [str(scratch), *(str(REPO / p) for p in ("solutions", "tests", "config.yaml"))]
    return {**{n: [WRONG, code] for n, code in ATTACKS.items()}, **red_team(forbidden)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()
    config = load_config(REPO / "config.yaml")
    limit = config.assignment(ASSIGNMENT).time_limit.submission
    with tempfile.TemporaryDirectory() as name:
        scratch = Path(name)
        clean, hostile = scratch / "clean", scratch / "hostile"
        honest = [p.stem for p in write_class(clean, args.size)]
        write_class(hostile, args.size)
        hostile_ones = probes(scratch)
        for probe, cells in hostile_ones.items():
            write_notebook(hostile / f"{probe}.ipynb", cells)
        solo = {s: grade_path(hostile / f"{s}.ipynb", config, ASSIGNMENT) for s in honest}
        work = honest_work(scratch, config, hostile_ones)
        runs = {}
        for label, folder in (("honest only", clean), ("with probes", hostile)):
            for load in ("idle", "busy"):
                spinning = busy() if load == "busy" else []
                try:
                    out = scratch / f"out-{folder.name}-{load}"
                    runs[label, load] = grade(folder, out, args.jobs)
                finally:
                    for process in spinning:
                        process.kill()
                        process.wait()
    print(f"{args.size} honest notebooks, {len(hostile_ones)} probes; time limit {limit:g} s each")
    print(
        f"{'batch':<18} {'load':<5} {'exit':>4} {'seconds':>8} {'limits':>8} {'ratio':>7}  honest"
    )
    for (label, load), (seconds, code, totals) in runs.items():
        count = args.size + (len(hostile_ones) if label == "with probes" else 0)
        differ = [s for s in honest if totals.get(s) != solo[s].score]
        same = not differ
        print(
            f"{label:<18} {load:<5} {code:>4} {seconds:>8.2f} {count * limit:>8.0f} "
            f"{seconds / (count * limit):>7.2%}  {'= solo' if same else 'DIFFER from solo'}"
        )
        for student in differ[:5]:
            alone = solo[student]
            print(
                f"{'':<18} {load:<5} {student}: {totals.get(student)} in the batch, "
                f"{alone.score:g} alone {alone.errors[:1]}"
            )
        if label == "with probes":
            beyond = sum(max(totals.get(p, 0) - work[p], 0) for p in hostile_ones)
            print(f"{'':<18} {load:<5} points earned by the probes beyond honest work: {beyond:g}")
    for load in ("idle", "busy"):
        ratio = runs["with probes", load][0] / runs["honest only", load][0]
        print(f"with probes / honest only, {load}: {ratio:.1f}×")


if __name__ == "__main__":
    main()
