"""A batch with attacks in it, against the same batch without them.

Usage: python bench/attack_batch.py [--size 200] [--attacks 20]
Builds `size` honest submissions of mixed quality; then replaces `attacks` of them with the
hostile notebooks of tests/test_attacks.py (cycled). Grades both batches with `grader grade`
(the repository's config and time limits) and prints both times and their ratio, and whether
every honest grade came out the same.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from batch_throughput import generate  # noqa: E402
from test_attacks import ATTACKS, WRONG  # noqa: E402

from conftest import write_notebook  # noqa: E402


def grade(folder: Path, out: Path) -> tuple[float, dict[str, str]]:
    command = [sys.executable, "-m", "grader", "grade", str(folder), "--out", str(out)]
    command += ["--assignment", "self_attention"]
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    with (out / "grades.csv").open() as handle:
        return seconds, {row["student"]: row["total"] for row in csv.DictReader(handle)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--attacks", type=int, default=20)
    args = parser.parse_args()
    names = sorted(ATTACKS)
    with tempfile.TemporaryDirectory() as scratch:
        clean, hostile = Path(scratch) / "clean", Path(scratch) / "hostile"
        generate(clean, args.size)
        generate(hostile, args.size)
        replaced = sorted(hostile.iterdir())[: args.attacks]
        for i, path in enumerate(replaced):
            write_notebook(path, [WRONG, ATTACKS[names[i % len(names)]]])
        clean_time, clean_grades = grade(clean, Path(scratch) / "out-clean")
        hostile_time, hostile_grades = grade(hostile, Path(scratch) / "out-hostile")
    attacked = {p.stem for p in replaced}
    honest_same = all(hostile_grades[s] == g for s, g in clean_grades.items() if s not in attacked)
    attack_points = sum(float(hostile_grades[s] or 0) for s in attacked)
    print(f"{args.size} submissions without attacks: {clean_time:.2f} s")
    print(f"{args.size} submissions, {args.attacks} of them attacks: {hostile_time:.2f} s")
    print(
        f"ratio: {hostile_time / clean_time:.1f}×; honest grades identical: {honest_same}; "
        f"points earned by the attacks: {attack_points:g}"
    )


if __name__ == "__main__":
    main()
