"""The class list the service issues tokens for (`grader serve tokens --roster FILE`): the
batch's roster (grader/batch/roster.py), read the same way and with the same one-line errors,
and one check of the service's own on top."""

from __future__ import annotations

from pathlib import Path

from grader.batch.roster import Student, load_roster
from grader.errors import UsageError
from grader.serve.lookalike import described, look_alike

__all__ = ["Student", "read_roster"]


def read_roster(path: Path) -> list[Student]:
    """Students from a roster CSV file (`id` and `name` required; the batch's load_roster
    says what else it refuses, with the line), read as the batch reads a course's
    `roster.csv`: a UsageError (exit 2) for a bad file. Also refused: two ids the class page
    would show the same (grader/serve/lookalike.py), which would be two tokens for what
    looks like one person."""
    students = load_roster(path, UsageError)
    if not students:
        raise UsageError(f"{path}: the roster has no students")
    pair = look_alike(s.id for s in students)
    if pair is not None:
        raise UsageError(f"{path}: {described(pair)}")
    return students
