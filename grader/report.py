"""The verdict as plain data: what every renderer reads and nothing more."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

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
        """The place as a student reads it: "cell C, line L" ("cell C" where no line is
        known: Python gives line 0 for a cell too deep to compile)."""
        return f"cell {self.cell}, line {self.line}" if self.line > 0 else f"cell {self.cell}"


FindingKind = Literal[
    "summary",  # how many cases passed or failed
    "case",  # the cases that failed one way, and how
    "missing",  # the target is not there, or not a function
    "not_implemented",  # still the stub
    "callee",  # a function it calls is the problem
    "mistake",  # a named mistake, explained (has `mistake`)
    "static",  # what the code shows, without a named mistake
    "relation",  # how the output relates to the expected one
    "scalar",  # a 0-d array the grader had to turn into a number
    "crash",  # the code that sets it raised: the error and its line
]
FINDING_KINDS: tuple[FindingKind, ...] = get_args(FindingKind)


@dataclass(frozen=True)
class Finding:
    """One thing said about a target, as data: its message is what the student reads."""

    kind: FindingKind
    message: str
    mistake: str | None = None  # the mistake's id, where one is named
    location: Location | None = None
    fix: str | None = None  # how to fix it, where the catalogue says
    # The explanation without this student's place or fix: what a class report says of all.
    general: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The finding as JSON-ready data."""
        return {
            "kind": self.kind,
            "mistake": self.mistake,
            "message": self.message,
            "location": _location(self.location),
            "fix": self.fix,
            "general": self.general,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        """The finding that `to_dict` wrote; ValueError on an unknown kind."""
        kind = data["kind"]
        if kind not in FINDING_KINDS:
            raise ValueError(f"unknown finding kind {kind!r}")
        return cls(
            kind=kind,
            message=str(data["message"]),
            mistake=data.get("mistake"),
            location=Location(**data["location"]) if data.get("location") else None,
            fix=data.get("fix"),
            general=data.get("general"),
        )


def _location(where: Location | None) -> dict[str, int] | None:
    return {"cell": where.cell, "line": where.line} if where else None


def messages_of(findings: Sequence[Finding]) -> tuple[str, ...]:
    """The messages a student reads, in order: one per finding."""
    return tuple(f.message for f in findings)


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
    findings: tuple[Finding, ...] = ()  # what `messages` says, as data (same order)
    # The first this many cases are public (`public_cases:`), the rest hidden until the
    # instructor's results are published; None when all are public.
    public_cases: int | None = None
    # Cases not graded here (a student's check() or bundle): graded when they submit.
    hidden_cases: int = 0
    # `partial_credit: false`: the points are the target's only when every case passed, so
    # a view of the public cases alone must not show what the hidden ones did to them.
    all_or_nothing: bool = False


def cases_line(targets: Sequence[TargetResult]) -> str | None:
    """ "public cases: k of n passed; m hidden cases are graded when you submit", when some
    cases were left out of this grading; None when every case was graded."""
    hidden = sum(t.hidden_cases for t in targets)
    if not hidden:
        return None
    passed = sum(t.cases_passed for t in targets)
    total = sum(t.cases_total for t in targets)
    return (
        f"public cases: {passed} of {total} passed; {hidden} hidden case"
        f"{'s are' if hidden > 1 else ' is'} graded when you submit"
    )


@dataclass(frozen=True)
class Report:
    """Everything known about one submission after grading."""

    assignment: str
    submission: str
    targets: tuple[TargetResult, ...]
    errors: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    seconds: float = 0.0
    # The error (one of `errors`) saying the notebook did not run to its end: its process
    # died, ran out of time or sent junk (not an ordinary cell error); None when it ran.
    did_not_run: str | None = None

    @property
    def score(self) -> float:
        """The points of all targets, rounded to 6 places."""
        return round(sum(t.score for t in self.targets), 6)

    @property
    def max_score(self) -> float:
        """The points all targets can give, rounded to 6 places."""
        return round(sum(t.max_score for t in self.targets), 6)

    @property
    def all_passed(self) -> bool:
        """True when every target passed."""
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
                findings=tuple(Finding.from_dict(f) for f in t.get("findings", ())),
                hidden_cases=int(t.get("hidden_cases", 0)),
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
            did_not_run=data.get("did_not_run"),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract of DESIGN.md (plus `notes`, `seconds`, `did_not_run` and each
        target's `findings`)."""
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
                    "location": _location(t.location),
                    "findings": [f.to_dict() for f in t.findings],
                    "hidden_cases": t.hidden_cases,
                }
                for t in self.targets
            ],
            "errors": list(self.errors),
            "notes": list(self.notes),
            "seconds": round(self.seconds, 4),
            "did_not_run": self.did_not_run,
        }


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
    # The gradebook's names that differ only in case: their pages carry a hash (escape.twins).
    clashing: frozenset[str] = field(default=frozenset())
    # The submissions the last batch gave no roster student (a line each: whose, and why).
    unmatched: tuple[str, ...] = field(default=())

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
            "unmatched": list(self.unmatched),
        }
