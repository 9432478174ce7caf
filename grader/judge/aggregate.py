"""What a class got wrong, as numbers: the data behind report.html and `grader report`."""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from grader.judge.diagnose import STRUCTURAL
from grader.report import Report

SLOWEST = 10


@dataclass(frozen=True)
class MistakeRow:
    """One mistake across the class: how many made it, in which targets, its general message and who
    made it."""

    id: str
    count: int
    targets: tuple[str, ...]
    message: str
    students: tuple[str, ...]


@dataclass(frozen=True)
class TargetRow:
    """One target across the class: how many passed of how many, and its mean and maximum score."""

    name: str
    passed: int
    total: int
    mean_score: float
    max_score: float

    @property
    def pass_rate(self) -> float:
        """The fraction of students who passed, 0 when nobody was graded."""
        return self.passed / self.total if self.total else 0.0


@dataclass(frozen=True)
class Points:
    """A student's total, all the class summary keeps of each report."""

    score: float
    max_score: float


@dataclass(frozen=True)
class ClassSummary:
    """What the class report shows of one assignment: scores, unreadable submissions, targets,
    common mistakes, the slowest and failing notebooks and the instructor's notes."""

    assignment: str
    students: tuple[tuple[str, Points], ...]
    unreadable: tuple[tuple[str, str], ...]
    targets: tuple[TargetRow, ...]
    mistakes: tuple[MistakeRow, ...]
    slowest: tuple[tuple[str, float], ...]
    failing_to_run: tuple[tuple[str, str], ...]
    max_score: float = 0.0
    scores: tuple[float, ...] = field(default=())
    # (student, line) for each override and comment of the instructor's
    notes: tuple[tuple[str, str], ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON-ready data (rates and means rounded to 4 places)."""
        return {
            "assignment": self.assignment,
            "students": len(self.students),
            "max_score": self.max_score,
            "scores": {name: report.score for name, report in self.students},
            "targets": [
                {
                    "name": t.name,
                    "passed": t.passed,
                    "total": t.total,
                    "pass_rate": round(t.pass_rate, 4),
                    "mean_score": round(t.mean_score, 4),
                    "max_score": t.max_score,
                }
                for t in self.targets
            ],
            "mistakes": [
                {
                    "id": m.id,
                    "count": m.count,
                    "targets": list(m.targets),
                    "message": m.message,
                    "students": list(m.students),
                }
                for m in self.mistakes
            ],
            "slowest": [{"student": s, "seconds": round(t, 4)} for s, t in self.slowest],
            "failing_to_run": [{"student": s, "problem": p} for s, p in self.failing_to_run],
            "notes": [{"student": s, "note": n} for s, n in self.notes],
        }


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
    """The report as a gradebook table needs it: points and statuses, no text."""
    targets = tuple(
        replace(t, messages=(), mistakes=(), location=None, case_outcomes=(), findings=())
        for t in report.targets
    )
    return replace(report, targets=targets, errors=(), notes=(), did_not_run=None)
