"""What the derived mistakes (mutants and carried mistakes) cost: start-up and per submission.

Start-up: building one assignment's expected values (references, catalogue, derived) with the
derived mistakes off, with them on and a cold disk cache, and with a warm one; the workers are
warm in all three. Per submission: grading the corpus of wrong notebooks (every one of them
diagnosed) with the derived fingerprints and without. All measured in this run.

    python bench/derived_cost.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from grader.course.cases import CaseSet, build_cases
from grader.course.config import AssignmentSpec, load_config
from grader.engine import grade_path, require
from grader.judge import expected
from grader.run.workers import Workers, shared_workers

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "notebooks" / "corpus"


def timed(action: Callable[[], object], rounds: int) -> float:
    """The median seconds of `rounds` runs of `action`."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _build(assignment: AssignmentSpec, cases: CaseSet, workers: Workers) -> object:
    expected._EXPECTED.clear()
    return expected.build_expected(assignment, cases, workers)


def main() -> None:
    """Print start-up seconds and the per-submission ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    config = load_config(REPO / "config.yaml")
    real = expected.derived_fingerprints
    off = lambda a, c, cat, known, refs, w: {t.name: [] for t in a.targets}  # noqa: E731
    with tempfile.TemporaryDirectory() as cache:
        os.environ["GRADER_CACHE_DIR"] = cache
        print("start-up (warm workers), seconds:  off   cold cache   warm cache   warm − off")
        for assignment in config.assignments.values():
            cases = build_cases(assignment)
            workers = shared_workers(require("auto"), assignment.files)

            build = functools.partial(_build, assignment, cases, workers)
            build()  # warm the worker
            expected.derived_fingerprints = off  # type: ignore[assignment]
            without = timed(build, args.rounds)
            expected.derived_fingerprints = real
            for stale in Path(cache).glob("*"):
                stale.unlink()
            cold = timed(build, 1)
            warm = timed(build, args.rounds)
            gap = warm - without
            print(f"  {assignment.id:<22} {without:8.3f} {cold:12.3f} {warm:12.3f} {gap:+12.3f}")
        paths = sorted(CORPUS.glob("*/*.ipynb"))
        chosen = [
            (p, json.loads(p.read_text())["metadata"]["grader_corpus"]["assignment"]) for p in paths
        ]

        def grade_all() -> object:
            return [grade_path(p, config, a) for p, a in chosen]

        # Both ways kept warm side by side and timed in turn, the fastest of each counted:
        # the machine is shared, and turns cancel out drift that would favour one side.
        expected.derived_fingerprints = off  # type: ignore[assignment]
        expected._EXPECTED.clear()
        grade_all()
        built_off = dict(expected._EXPECTED)
        expected.derived_fingerprints = real
        expected._EXPECTED.clear()
        grade_all()  # the pairs a diagnosis needs are read here, once per batch
        built_on = dict(expected._EXPECTED)
        times: dict[str, list[float]] = {"off": [], "on": []}
        for _ in range(args.rounds):
            for side, built in (("off", built_off), ("on", built_on)):
                expected._EXPECTED.clear()
                expected._EXPECTED.update(built)
                times[side].append(timed(grade_all, 1) / len(chosen))
        without, with_derived = min(times["off"]), min(times["on"])
    print(f"\nper wrong submission ({len(chosen)} notebooks, every one diagnosed, fastest of "
          f"{args.rounds} turns each):")  # fmt: skip
    print(f"  without derived {without * 1000:.1f} ms, with {with_derived * 1000:.1f} ms, "
          f"ratio {with_derived / without:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
