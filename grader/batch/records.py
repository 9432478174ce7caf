"""What the instructor adds to a gradebook besides grades: the roster, overrides, comments.

All of it lives in the gradebook's own tables (`roster`, `overrides`, `comments`), apart from
the graded submissions, so a regrade never touches it: an override made in week 3 still
stands after the config changes in week 5.
"""

from __future__ import annotations

import getpass
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.batch.gradebook import Gradebook
from grader.batch.roster import COLUMNS, Student, course_roster
from grader.errors import GraderError
from grader.render.escape import folded

TOTAL = ""  # the target of an override of the whole assignment


@dataclass(frozen=True)
class Override:
    """Points set by hand for one target (or the whole assignment when `target` is "")."""

    student: str
    assignment: str
    target: str
    points: float
    comment: str
    author: str
    at: float

    def describe(self) -> str:
        """One line: what was set, by whom, when, and why."""
        what = self.target or "total"
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.at))
        why = f": {self.comment}" if self.comment else ""
        return f"{what} set to {self.points:g} by {self.author} on {when}{why}"


@dataclass(frozen=True)
class Comment:
    """A remark for one student on one assignment."""

    student: str
    assignment: str
    text: str
    author: str
    at: float

    def describe(self) -> str:
        """One line: the remark, by whom, when."""
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.at))
        return f"{self.text} ({self.author}, {when})"


def author() -> str:
    """Who is making a change: $USER, as the system knows it."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def save_roster(book: Gradebook, roster: Sequence[Student]) -> None:
    """Replace the roster the gradebook holds (the report and exports cover it)."""
    book.flush()
    with book.db.transaction() as db:
        db.execute("DELETE FROM roster")
        db.executemany(
            f"INSERT INTO roster ({', '.join(COLUMNS)}, position) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(*(getattr(s, c) for c in COLUMNS), n) for n, s in enumerate(roster, 1)],
        )


def stored_roster(book: Gradebook) -> list[Student] | None:
    """The roster of the last batch graded with one, in its order; None without one."""
    rows = book.db.execute(f"SELECT {', '.join(COLUMNS)} FROM roster ORDER BY position").fetchall()
    return [Student(*map(str, row)) for row in rows] or None


MOST_NAMED = 5


def roster_drift(course: Path, stored: Sequence[Student] | None) -> str:
    """A line when the course's roster.csv names students the roster the gradebook was
    last graded with does not (or has none): what is made from the gradebook covers the
    stored one, and `grader grade` again takes the new one. "" when nothing differs so, or
    the course has no roster."""
    try:
        current = course_roster(course)
    except GraderError as exc:  # the export reads the stored roster: it is still made
        return f"{exc} (the roster the gradebook was last graded with is used)"
    if current is None:
        return ""
    held = {folded(s.id) for s in stored or ()}
    new = [s.id for s in current if folded(s.id) not in held]
    if not new:
        return ""
    shown = ", ".join(new[:MOST_NAMED]) + (
        f" and {len(new) - MOST_NAMED} more" if len(new) > MOST_NAMED else ""
    )
    return (
        f"the course's roster.csv has {len(new)} student(s) the gradebook was not last graded "
        f"with ({shown}); they are not here: `grader grade` into the same --out takes the "
        "new roster"
    )


def set_override(book: Gradebook, override: Override) -> None:
    """Set (or replace) the override of one student's target."""
    with book.db.transaction() as db:
        db.execute(
            "INSERT INTO overrides VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (student, assignment, target) DO UPDATE SET points=excluded.points,"
            " comment=excluded.comment, author=excluded.author, at=excluded.at",
            (
                override.student,
                override.assignment,
                override.target,
                override.points,
                override.comment,
                override.author,
                override.at,
            ),
        )


def carry_records(book: Gradebook, names: Sequence[tuple[str, str]]) -> None:
    """Give each roster id the overrides and comments recorded under the name its submission
    had before the course had a roster (`names`: (that name, the id)), so that adding a
    roster loses none of them. An override the id already has for a target is kept."""
    with book.db.transaction() as db:
        for name, student in names:
            db.execute(
                "UPDATE overrides SET student=? WHERE student=? AND NOT EXISTS (SELECT 1 FROM"
                " overrides AS o WHERE o.student=? AND o.assignment=overrides.assignment"
                " AND o.target=overrides.target)",
                (student, name, student),
            )
            db.execute("DELETE FROM overrides WHERE student=?", (name,))
            db.execute("UPDATE comments SET student=? WHERE student=?", (student, name))


def recorded_students(book: Gradebook) -> set[str]:
    """Every name the gradebook records anything under: a graded student, an override, a
    comment, a lateness (a roster id spelled in another case by an earlier roster, say)."""
    book.flush()
    rows = book.db.execute(
        "SELECT name FROM students UNION SELECT student FROM overrides"
        " UNION SELECT student FROM comments UNION SELECT student FROM late"
    )
    return {str(row[0]) for row in rows}


def clear_override(book: Gradebook, student: str, assignment: str, target: str) -> bool:
    """Remove an override; whether there was one."""
    with book.db.transaction() as db:
        cursor = db.execute(
            "DELETE FROM overrides WHERE student=? AND assignment=? AND target=?",
            (student, assignment, target),
        )
    return cursor.rowcount > 0


def add_comment(book: Gradebook, comment: Comment) -> None:
    """Add a remark for a student (remarks accumulate; none replaces another)."""
    with book.db.transaction() as db:
        db.execute(
            "INSERT INTO comments(student, assignment, comment, author, at) VALUES (?, ?, ?, ?, ?)",
            (comment.student, comment.assignment, comment.text, comment.author, comment.at),
        )


def overrides(book: Gradebook, assignment: str) -> dict[str, list[Override]]:
    """Each student's overrides of an assignment, by target."""
    found: dict[str, list[Override]] = {}
    rows = book.db.execute(
        "SELECT * FROM overrides WHERE assignment=? ORDER BY student, target", (assignment,)
    )
    for row in rows:
        found.setdefault(row[0], []).append(Override(*row))
    return found


def comments(book: Gradebook, assignment: str) -> dict[str, list[Comment]]:
    """Each student's comments on an assignment, oldest first."""
    found: dict[str, list[Comment]] = {}
    rows = book.db.execute(
        "SELECT student, assignment, comment, author, at FROM comments WHERE assignment=?"
        " ORDER BY at, id",
        (assignment,),
    )
    for row in rows:
        found.setdefault(row[0], []).append(Comment(*row))
    return found
