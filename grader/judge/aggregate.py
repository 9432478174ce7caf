"""What a class got wrong, as numbers: the data behind report.html and `grader report`."""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import lru_cache

from grader.judge.diagnose import STRUCTURAL
from grader.report import ClassSummary, MistakeRow, Points, Report, TargetResult, TargetRow

SLOWEST = 10


def _mistake_message(report: Report, mistake: str) -> str:
    """What the diagnosis said of this mistake, without the cell and line where this one
    student made it or the fix: the class report speaks of all."""
    for target in report.targets:
        for finding in target.findings:
            if finding.kind == "mistake" and finding.mistake == mistake and finding.general:
                return finding.general
    return STRUCTURAL.get(mistake, mistake)


def summarise(
    assignment: str,
    graded: Iterable[tuple[str, Report]],
    unreadable: Sequence[tuple[str, str]],
) -> ClassSummary:
    """One pass over the reports (a generator is fine): only each student's scores are kept,
    so a class of thousands is summarised in flat memory."""
    names: list[str] = []
    passed: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    points: dict[str, float] = {}
    top: dict[str, float] = {}
    who: dict[str, set[str]] = {}
    where: dict[str, set[str]] = {}
    example: dict[str, str] = {}
    slowest: list[tuple[float, str]] = []
    failing: list[tuple[str, str]] = []
    students: list[tuple[str, Points]] = []
    for student, report in graded:
        if not names:
            names = [t.name for t in report.targets]
        for target in report.targets:
            passed[target.name] += target.status == "passed"
            totals[target.name] += 1
            points[target.name] = points.get(target.name, 0.0) + target.score
            top.setdefault(target.name, target.max_score)
            for mistake in target.mistakes:
                who.setdefault(mistake, set()).add(student)
                where.setdefault(mistake, set()).add(target.name)
                if mistake not in example:
                    example[mistake] = _mistake_message(report, mistake)
        heapq.heappush(slowest, (report.seconds, student))
        if len(slowest) > SLOWEST:
            heapq.heappop(slowest)
        if report.did_not_run is not None:
            failing.append((student, report.did_not_run))
        students.append((student, Points(report.score, report.max_score)))
    students.sort(key=lambda pair: pair[0])
    targets = tuple(
        TargetRow(
            name,
            passed[name],
            totals[name],
            points.get(name, 0.0) / totals[name] if totals[name] else 0.0,
            top.get(name, 0.0),
        )
        for name in names
    )
    # Counted in students, not occurrences: "13 of you" is what a lecture can address.
    mistakes = tuple(
        MistakeRow(m, len(who[m]), tuple(sorted(where[m])), example[m], tuple(sorted(who[m])))
        for m in sorted(who, key=lambda m: (-len(who[m]), m))
    )
    return ClassSummary(
        assignment=assignment,
        students=tuple(students),
        unreadable=tuple(sorted(unreadable)),
        targets=targets,
        mistakes=mistakes,
        slowest=tuple((s, t) for t, s in sorted(slowest, key=lambda p: (-p[0], p[1]))),
        failing_to_run=tuple(sorted(failing) + sorted(unreadable)),
        max_score=students[0][1].max_score if students else 0.0,
        scores=tuple(r.score for _, r in students),
    )


def scores_only(report: Report) -> Report:
    """The report as a gradebook table needs it: points and statuses, no text. Equal
    targets are one shared object (most of a class's targets are alike), so thousands of
    these stay small."""
    targets = tuple(
        _shared(replace(t, messages=(), mistakes=(), location=None, case_outcomes=(), findings=()))
        for t in report.targets
    )
    return replace(report, targets=targets, errors=(), notes=(), did_not_run=None)


SHARED = 4096  # distinct text-free targets kept for sharing


def _shared(target: TargetResult) -> TargetResult:
    """An equal target seen before, else this one. The points' types are part of the key:
    1 and 1.0 (or 0.0 and -0.0) are equal but are not written alike."""
    return _share((repr(target.score), repr(target.max_score)), target)


@lru_cache(maxsize=SHARED)
def _share(points: tuple[str, str], target: TargetResult) -> TargetResult:
    return target
