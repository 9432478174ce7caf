"""How often the diagnosis names the root cause, over a corpus of student-style notebooks.

Each notebook under tests/notebooks/corpus/ carries, in its metadata (`grader_corpus`), the
targets it gets wrong and the mistake ids that name the root cause of each (`callee:NAME`:
the "fix NAME first" finding; `crash`: the error told with its line; `says:TEXT`: a finding
without an id that says it). None of them is a copy of a catalogue variant. Prints, per
notebook and in total: wrong targets, root causes named, misleading messages (a mistake
named that is not the cause, or "unfinished stub" said of a body that is not one), and
targets failing that the corpus says are right.

    python bench/diagnosis_coverage.py [--corpus DIR] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from grader.course.config import load_config
from grader.engine import grade_path
from grader.report import TargetResult

REPO = Path(__file__).resolve().parent.parent


def named(result: TargetResult, causes: list[str]) -> bool:
    """Whether the diagnosis names one of the root causes."""
    for cause in causes:
        if cause == "crash":  # told as the crash it is, with its line
            if any(" raised " in f.message and f.location for f in result.findings):
                return True
        elif cause.startswith("says:"):  # named by the code's own evidence, without an id
            if any(cause[5:] in f.message for f in result.findings):
                return True
        elif cause.startswith("callee:"):
            callee = cause.split(":", 1)[1]
            if any(f.kind == "callee" and f"`{callee}`" in f.message for f in result.findings):
                return True
        elif cause in result.mistakes:
            return True
    return False


def misleading(result: TargetResult, causes: list[str]) -> list[str]:
    """What the diagnosis says that is not so."""
    said = []
    wrong_ids = [m for m in result.mistakes if m not in causes]
    if wrong_ids and not named(result, causes):
        said.append(f"names {', '.join(wrong_ids)}")
    if any("stub" in f.message for f in result.findings) and "not_implemented" not in causes:
        said.append("calls it a stub")
    return said


def main() -> int:
    """Grade the corpus and print the shares."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "tests" / "notebooks" / "corpus")
    parser.add_argument("--verbose", action="store_true", help="print each wrong target's words")
    args = parser.parse_args()
    config = load_config(REPO / "config.yaml")
    paths = sorted(args.corpus.glob("*/*.ipynb"))
    if not paths:
        print(f"no notebooks under {args.corpus}", file=sys.stderr)
        return 2
    wrong = found = 0
    bad: list[str] = []
    surprises: list[str] = []
    for path in paths:
        meta = json.loads(path.read_text())["metadata"]["grader_corpus"]
        report = grade_path(path, config, meta["assignment"])
        for result in report.targets:
            causes = meta["wrong"].get(result.name)
            if causes is None:
                if result.status != "passed":
                    surprises.append(f"{path.stem}: {result.name} {result.status}")
                continue
            wrong += 1
            ok = result.status != "passed" and named(result, causes)
            found += ok
            said = misleading(result, causes) if result.status != "passed" else ["passes"]
            bad += [f"{path.stem}: {result.name} {s}" for s in said]
            mark = "named" if ok else "NOT NAMED"
            print(f"{meta['assignment']:<20} {path.stem:<30} {result.name:<34} {mark}")
            if args.verbose or not ok:
                for message in result.messages[:3]:
                    print(f"    {message[:160]}")
    share = found / wrong if wrong else 0.0
    print(f"\n{len(paths)} notebooks, {wrong} wrong targets")
    print(f"root cause named: {found} of {wrong} ({share:.0%})")
    print(f"misleading messages: {len(bad)}")
    for line in bad:
        print(f"    {line}")
    print(f"targets failing that the corpus says are right: {len(surprises)}")
    for line in surprises:
        print(f"    {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
