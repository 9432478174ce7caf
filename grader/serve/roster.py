"""The class list the service issues tokens for. One small function, so that the batch's own
roster reader can take its place once there is one."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from grader.batch.tables import unclosed_quote
from grader.errors import UsageError
from grader.render.escape import folded
from grader.serve.lookalike import described, look_alike


@dataclass(frozen=True)
class Student:
    """One student of the roster: the id they sign in as, and the name shown to them."""

    id: str
    name: str


def read_roster(path: Path) -> list[Student]:
    """Students from a CSV file with at least the columns `id` and `name` (others ignored);
    a missing file or column, a row that is not CSV (a quote never closed, which would read
    every later student into one name), an empty or repeated id (case and Unicode form aside)
    or two ids that look alike (grader/serve/lookalike.py) is a UsageError (exit 2)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
        unclosed = unclosed_quote(text)
        if unclosed is not None:
            raise csv.Error(f"a quote opened on line {unclosed[0]} is never closed")
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        columns = set(rows[0]) if rows else set()
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UsageError(f"{path}: the roster cannot be read ({exc})") from None
    if not rows or not {"id", "name"} <= columns:
        raise UsageError(f"{path}: a roster needs the columns id and name, and a row per student")
    students = [Student((r["id"] or "").strip(), (r["name"] or "").strip()) for r in rows]
    # Ids that differ in case or Unicode form only are one student, as the batch's roster
    # and the gradebook's exports match them: two tokens for them would be two people.
    ids = [folded(s.id) for s in students]
    if "" in ids or len(set(ids)) != len(ids):
        raise UsageError(f"{path}: every row needs an id of its own")
    # Two ids the class page would show the same (grader/serve/lookalike.py): two people.
    pair = look_alike(s.id for s in students)
    if pair is not None:
        raise UsageError(f"{path}: {described(pair)}")
    return students
