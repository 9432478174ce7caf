"""What a class got wrong, as numbers: the data behind report.html and `grader report`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .diagnose import STRUCTURAL
from .report import Report

SLOWEST = 10


@dataclass(frozen=True)
class MistakeRow:
    id: str
    count: int
    targets: tuple[str, ...]
    message: str
    students: tuple[str, ...]


@dataclass(frozen=True)
class TargetRow:
    name: str
    passed: int
    total: int
    mean_score: float
    max_score: float

    @property
    def pass_rate(self) -> float:
        return self.passed / self.total if self.total else 0.0


@dataclass(frozen=True)
class ClassSummary:
    assignment: str
    students: tuple[tuple[str, Report], ...]
    unreadable: tuple[tuple[str, str], ...]
    targets: tuple[TargetRow, ...]
    mistakes: tuple[MistakeRow, ...]
    slowest: tuple[tuple[str, float], ...]
    failing_to_run: tuple[tuple[str, str], ...]
    max_score: float = 0.0
    scores: tuple[float, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
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
        }


def _mistake_message(report: Report, mistake: str) -> str:
    """The sentence the diagnosis wrote for this mistake (they start with its id)."""
    for target in report.targets:
        for message in target.messages:
            if message.startswith(f"{mistake}: "):
                return message[len(mistake) + 2 :].split(" Fix:")[0]
    return STRUCTURAL.get(mistake, mistake)


def summarise(
    assignment: str, graded: Sequence[tuple[str, Report]], unreadable: Sequence[tuple[str, str]]
) -> ClassSummary:
    students = tuple(sorted(graded))
    names = [t.name for t in students[0][1].targets] if students else []
    targets = []
    for name in names:
        results = [t for _, r in students for t in r.targets if t.name == name]
        targets.append(
            TargetRow(
                name,
                sum(t.status == "passed" for t in results),
                len(results),
                sum(t.score for t in results) / len(results) if results else 0.0,
                results[0].max_score if results else 0.0,
            )
        )
    counts: Counter[str] = Counter()
    who: dict[str, list[str]] = {}
    where: dict[str, set[str]] = {}
    example: dict[str, str] = {}
    for student, report in students:
        for target in report.targets:
            for mistake in target.mistakes:
                counts[mistake] += 1
                who.setdefault(mistake, []).append(student)
                where.setdefault(mistake, set()).add(target.name)
                example.setdefault(mistake, _mistake_message(report, mistake))
    # Counted in students, not occurrences: "13 of you" is what a lecture can address.
    mistakes = tuple(
        MistakeRow(
            m, len(set(who[m])), tuple(sorted(where[m])), example[m], tuple(sorted(set(who[m])))
        )
        for m in sorted(counts, key=lambda m: (-len(set(who[m])), m))
    )
    slowest = tuple(sorted(((s, r.seconds) for s, r in students), key=lambda p: -p[1])[:SLOWEST])
    failing = [
        (s, next(e for e in r.errors if _did_not_run(e)))
        for s, r in students
        if any(_did_not_run(e) for e in r.errors)
    ]
    return ClassSummary(
        assignment=assignment,
        students=students,
        unreadable=tuple(sorted(unreadable)),
        targets=tuple(targets),
        mistakes=mistakes,
        slowest=slowest,
        failing_to_run=tuple(sorted(failing) + sorted(unreadable)),
        max_score=students[0][1].max_score if students else 0.0,
        scores=tuple(r.score for _, r in students),
    )


def _did_not_run(error: str) -> bool:
    """The notebook's process died, timed out or sent junk (not an ordinary cell error)."""
    return error.startswith("the notebook") or "time limit" in error
