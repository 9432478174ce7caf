"""`grader selftest`: prove that the checks pass the solution and catch every known mistake.

For each catalogued variant, the solution notebook is graded with the target function
replaced by the variant's own source, through the same engine a student goes through.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import numpy as np

from grader.author.selftest_derived import derived_counts
from grader.author.selftest_reference import random_references, unmatchable_outputs
from grader.course.cases import build_cases
from grader.course.config import AssignmentSpec
from grader.course.mistakes import Mistake
from grader.course.notebook import Submission, load_submission
from grader.engine import grade_submission, require
from grader.judge.compare import stack
from grader.judge.expected import Expected, build_expected
from grader.judge.fingerprints import catalogue_for
from grader.judge.static import find_function
from grader.report import Report
from grader.run.wire import Seq
from grader.run.workers import shared_workers

MIN_MARGIN = 10.0  # a variant must miss the tolerance by at least this factor somewhere


@dataclass
class SelftestResult:
    """What a selftest of one assignment found: lines to show, problems (none when it passed) and
    the smallest margin of a caught variant over the tolerance."""

    assignment: str
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    smallest_margin: tuple[float, str] = (float("inf"), "")

    @property
    def ok(self) -> bool:
        """True when the selftest found no problem."""
        return not self.problems


def _variant_source(mistake: Mistake, target: str) -> str:
    """The variant's `def`, renamed to the target (its decorator left out)."""
    lines = mistake.source.split("\n")
    lines[0] = re.sub(r"def\s+\w+", f"def {target}", lines[0], count=1)
    return "\n".join(lines)


def _leaves(value: object) -> list[np.ndarray] | None:
    """The arrays of a value, in order; None when it is not made of numbers."""
    if isinstance(value, Seq):
        parts = [_leaves(item) for item in value.items]
        return None if any(p is None for p in parts) else [a for p in parts for a in p or []]
    array = stack(value) if not isinstance(value, Exception) else None  # type: ignore[arg-type]
    return None if array is None else [array]


def _expected(assignment: AssignmentSpec) -> Expected:
    """What grading the assignment expects, from the course's code (kept in this process)."""
    workers = shared_workers(require("auto"), assignment.files, assignment.preload)
    return build_expected(assignment, build_cases(assignment), workers)


def _margin(assignment: AssignmentSpec, mistake: Mistake) -> float:
    """How far, in units of the tolerance, the variant lands from the reference at best."""
    if mistake.id == "mutates_input":
        return float("inf")  # told apart by the mutation check, not by its output
    expected = _expected(assignment)
    spec = assignment.target(mistake.target)
    prints = [
        f
        for f in expected.fingerprints[mistake.target]
        if f.via is None and f.mistake.id == mistake.id
    ]
    best = 0.0
    outputs = zip(prints[0].outputs, expected.references[mistake.target].outputs, strict=True)
    for got, want in outputs:
        left, right = _leaves(got), _leaves(want)
        if left is None or right is None or [a.shape for a in left] != [b.shape for b in right]:
            return float("inf")  # a different structure is told apart without any tolerance
        for a, b in zip(left, right, strict=True):
            with np.errstate(all="ignore"):
                ratio = np.abs(a - b) / (spec.tolerance.atol + spec.tolerance.rtol * np.abs(b))
            same = (a == b) | (np.isnan(a) & np.isnan(b))  # equal infinities are no difference
            ratio = np.where(same, 0.0, np.nan_to_num(ratio, nan=np.inf, posinf=np.inf))
            best = max(best, float(ratio.max()))
    return best


def run_selftest(assignment: AssignmentSpec) -> SelftestResult:
    """Check one assignment: the solution must pass, the untouched exercise score 0, and every
    catalogued mistake of its targets be caught and diagnosed."""
    result = SelftestResult(assignment.id)
    solution = load_submission(assignment.solution)
    # The course's own run first: graded as a submission, the solution's run would hold the
    # worker while this one queued behind it, so one that never ends took two time limits.
    expected = _expected(assignment)
    result.problems += random_references(assignment, solution)
    result.problems += unmatchable_outputs(assignment, expected.references, _leaves)
    report = grade_submission(solution, assignment)
    if not report.all_passed:
        result.problems += [f"the reference solution fails: {why}" for why in _failures(report)]
    result.lines.append(f"reference solution: {report.score:g} / {report.max_score:g}")
    if assignment.exercise is not None and assignment.exercise.exists():
        stub = grade_submission(load_submission(assignment.exercise), assignment)
        result.lines.append(f"untouched exercise: {stub.score:g} / {stub.max_score:g}")
        if stub.score != 0:
            result.problems.append(f"the untouched exercise scores {stub.score:g}, not 0")
    elif assignment.exercise is not None:  # it was left out without a word
        result.lines.append(
            f"untouched exercise: not checked, {assignment.exercise} is not written yet "
            "(grader assign)"
        )
    names = {t.name for t in assignment.targets}
    checked = [
        _check_variant(assignment, solution, mistake, result)
        for mistake in catalogue_for(assignment).mistakes
        if mistake.target in names  # a catalogue may serve several assignments
    ]
    result.lines.append(
        f"catalogue variants: {sum(c for c, _ in checked)} of {len(checked)} caught, "
        f"{sum(n for _, n in checked)} named exactly"
    )
    derived = derived_counts(assignment)
    result.lines.append(derived.line())
    result.problems += [f"derived mistake {m}" for m in derived.misnamed]
    return result


def _failures(report: Report) -> list[str]:
    """Why the reference solution fails, one line per failing target (its first finding past
    the count of cases), or the reason it did not run at all."""
    if report.did_not_run is not None:
        return [report.did_not_run]
    failing = []
    for target in report.targets:
        if target.status != "passed":
            said = [f.message for f in target.findings if f.kind != "summary"]
            said = said or list(target.messages)
            failing.append(f"{target.name}: {said[0]}" if said else target.name)
    return failing or list(report.errors)


def _check_variant(
    assignment: AssignmentSpec, solution: Submission, mistake: Mistake, result: SelftestResult
) -> tuple[bool, bool]:
    """Grade the solution with one variant in place: (caught, named exactly as itself)."""
    label = f"{mistake.target} / {mistake.id}"
    function = find_function(solution, mistake.target)
    if function is None:
        result.problems.append(f"{label}: the solution does not define {mistake.target}")
        return False, False
    cell = function.cell
    lines = cell.source.split("\n")
    start, end = function.node.lineno - 1, function.node.end_lineno or function.node.lineno
    variant = _variant_source(mistake, mistake.target).split("\n")
    lines[start:end] = variant
    source = "\n".join(lines)
    cells = tuple(
        replace(c, source=source, original=source) if c.index == cell.index else c
        for c in solution.cells
    )
    report = grade_submission(replace(solution, cells=cells), assignment)
    verdict = next(t for t in report.targets if t.name == mistake.target)
    others = [t for t in report.targets if t.name != mistake.target and t.mistakes]
    margin = _margin(assignment, mistake)
    if margin < result.smallest_margin[0]:
        result.smallest_margin = (margin, label)
    status = "caught" if verdict.status != "passed" else "NOT CAUGHT"
    named = ", ".join(verdict.mistakes) or "nothing"
    result.lines.append(f"{label:<55} {status}, diagnosed as {named}; margin {margin:.3g}×")
    raised = [m for m in verdict.messages if "raised " in m] if verdict.status == "error" else []
    raised = [_in_catalogue(m, assignment, mistake, cell.index, range(start + 1, start + 1 +
              len(variant))) for m in raised]  # fmt: skip
    if verdict.status == "passed":
        result.problems.append(f"{label}: the variant passes the checks")
    elif raised and verdict.mistakes != (mistake.id,):  # a typo in the catalogue, most likely
        result.problems.append(
            f"{label}: the variant itself fails to run ({raised[0]}); a catalogued mistake "
            "must return the wrong value it stands for"
        )
    elif verdict.mistakes != (mistake.id,):
        result.problems.append(f"{label}: diagnosed as {named}, not exactly {mistake.id}")
    for other in others:
        result.problems.append(
            f"{label}: {other.name} is also diagnosed ({', '.join(other.mistakes)})"
        )
    if margin < MIN_MARGIN:
        result.problems.append(
            f"{label}: the cases separate it from the reference by only {margin:.3g}× the "
            f"tolerance (need {MIN_MARGIN:g}×): add cases that tell it apart"
        )
    return verdict.status != "passed", verdict.mistakes == (mistake.id,)


def _in_catalogue(
    message: str, assignment: AssignmentSpec, mistake: Mistake, cell: int, pasted: range
) -> str:
    """A variant's error placed in its catalogue file, where the author wrote it, instead of in
    the solution's cell the variant was pasted into (lines `pasted` of cell `cell`)."""

    def place(found: re.Match[str]) -> str:
        line = int(found[2])
        if int(found[1]) != cell or line not in pasted or not mistake.line:
            return found[0]
        return f"{assignment.mistakes}, line {mistake.line + line - pasted.start}"

    return re.sub(r"cell (\d+), line (\d+)", place, message)


def render_selftest(result: SelftestResult) -> str:
    """A selftest's result as the text the CLI prints: its lines, the smallest margin, then FAILED
    with each problem or ok."""
    lines = [f"selftest {result.assignment}", *(f"  {line}" for line in result.lines)]
    margin, label = result.smallest_margin
    if label:
        lines.append(f"  smallest margin: {margin:.3g}× the tolerance ({label})")
    if result.problems:
        lines.append("  FAILED:")
        lines.extend(f"    - {p}" for p in result.problems)
    else:
        lines.append("  ok: every variant caught and diagnosed exactly")
    return "\n".join(lines)
