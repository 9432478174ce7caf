"""What the service's tables hold, as values: people, sessions, uploads and their views
(grader/batch/schema.py holds the tables)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

Role = Literal["student", "instructor"]
Status = Literal["queued", "running", "graded", "problem"]


@dataclass(frozen=True)
class Person:
    """Someone who may sign in."""

    id: str
    name: str
    role: Role


@dataclass(frozen=True)
class Session:
    """A browser's session: who signed in (None: nobody yet) and its CSRF token."""

    person: Person | None
    csrf: str


@dataclass(frozen=True)
class Upload:
    """One accepted upload and where it stands."""

    id: int
    student: str
    filename: str
    content_hash: str
    received_at: float
    status: Status
    score: float | None
    max_score: float | None
    problem: str | None
    recorded: int
    counts: bool = True  # uses an attempt: not when the service failed to grade it


@dataclass(frozen=True)
class View:
    """What a graded upload shows beside its whole page: its assignment, the page of its
    public cases (what a student reads before the hidden cases are released) and its
    lateness (the penalty in percent and one line saying why)."""

    assignment: str
    public_page: str
    public_score: float
    public_max: float
    late_percent: float = 0.0
    late_note: str = ""


UPLOAD_COLUMNS = (
    "id, student, filename, content_hash, received_at, status, score, max_score, problem, recorded,"
    " counts"
)


def upload_of(row: Sequence[Any]) -> Upload:
    """An upload from a row of UPLOAD_COLUMNS (`counts` is an integer in the database)."""
    values = [*row[:-1], bool(row[-1])]
    return Upload(*values)
