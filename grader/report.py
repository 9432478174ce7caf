"""The verdict as plain data: what every renderer reads and nothing more."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["passed", "failed", "error", "missing", "timeout"]
STATUSES: tuple[Status, ...] = ("passed", "failed", "error", "missing", "timeout")


@dataclass(frozen=True)
class Location:
    """A place in the student's notebook: 1-based cell index and 1-based line in that cell."""

    cell: int
    line: int
    # The same place as a line of the submission file, where known; not part of equality.
    file_line: int | None = field(default=None, compare=False)

    def describe(self) -> str:
        return f"cell {self.cell}, line {self.line}"


@dataclass(frozen=True)
class TargetResult:
    """The verdict on one graded function or variable."""

    name: str
    status: Status
    score: float
    max_score: float
    messages: tuple[str, ...] = ()
    mistakes: tuple[str, ...] = ()
    location: Location | None = None
    cases_passed: int = 0
    cases_total: int = 0
    case_outcomes: tuple[str, ...] = ()  # per case: passed | failed | error | timeout | …


@dataclass(frozen=True)
class Report:
    """Everything known about one submission after grading."""

    assignment: str
    submission: str
    targets: tuple[TargetResult, ...]
    errors: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    seconds: float = 0.0

    @property
    def score(self) -> float:
        return round(sum(t.score for t in self.targets), 6)

    @property
    def max_score(self) -> float:
        return round(sum(t.max_score for t in self.targets), 6)

    @property
    def all_passed(self) -> bool:
        return all(t.status == "passed" for t in self.targets)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        """The inverse of to_dict, for reports read back from the gradebook."""
        targets = tuple(
            TargetResult(
                name=t["name"],
                status=t["status"],
                score=float(t["score"]),
                max_score=float(t["max_score"]),
                messages=tuple(t["messages"]),
                mistakes=tuple(t["mistakes"]),
                location=Location(**t["location"]) if t.get("location") else None,
                cases_passed=int(t.get("cases_passed", 0)),
                cases_total=int(t.get("cases_total", 0)),
                case_outcomes=tuple(t.get("case_outcomes", ())),
            )
            for t in data["targets"]
        )
        return cls(
            assignment=data["assignment"],
            submission=data["submission"],
            targets=targets,
            errors=tuple(data.get("errors", ())),
            notes=tuple(data.get("notes", ())),
            seconds=float(data.get("seconds", 0.0)),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract of DESIGN.md (plus `notes` and `seconds`)."""
        return {
            "assignment": self.assignment,
            "submission": self.submission,
            "score": self.score,
            "max_score": self.max_score,
            "targets": [
                {
                    "name": t.name,
                    "status": t.status,
                    "score": t.score,
                    "max_score": t.max_score,
                    "mistakes": list(t.mistakes),
                    "messages": list(t.messages),
                    "location": (
                        {"cell": t.location.cell, "line": t.location.line} if t.location else None
                    ),
                }
                for t in self.targets
            ],
            "errors": list(self.errors),
            "notes": list(self.notes),
            "seconds": round(self.seconds, 4),
        }
