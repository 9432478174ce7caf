"""`grader export`: the gradebook as a file an LMS imports as it is.

The formats are the `grades` formats of grader/render/formats.py: `canvas`, `moodle` and
`blackboard` (grader/render/lms.py, where each importer's columns are described) and `csv`
(grades.csv's columns). This module reads the gradebook and writes the chosen one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from grader.batch.adjust import open_book, refuse_non_finite, spec_total
from grader.batch.records import roster_drift, stored_roster
from grader.batch.standing import Standing, from_gradebook
from grader.course.config import AssignmentSpec, Config
from grader.render.formats import GRADES_FORMATS
from grader.render.grades import Grades
from grader.render.lms import split_name
from grader.render.whole_file import write_text

__all__ = ["FORMATS", "capped_by_moodle", "export", "exported", "render", "split_name"]

FORMATS: tuple[str, ...] = tuple(GRADES_FORMATS)


def render(fmt: str, rows: Sequence[Standing], spec: AssignmentSpec) -> str:
    """The export in format `fmt` as text: one row per standing, totals as they count."""
    grades = Grades(rows, [t.name for t in spec.targets], spec_total(spec), spec.id)
    return GRADES_FORMATS[fmt].render(grades)


def capped_by_moodle(rows: Sequence[Standing], spec: AssignmentSpec) -> str:
    """One line for the students whose total (an override's, say) is above the assignment's
    maximum, which Moodle's import caps at the grade item's maximum without a word, unless
    the site allows grades above it; "" when there are none."""
    top = spec_total(spec)
    above = [row.student for row in rows if round(row.total, 4) > top]
    if not above:
        return ""
    shown = ", ".join(above[:5]) + (f" and {len(above) - 5} more" if len(above) > 5 else "")
    return (
        f"{len(above)} total(s) above the maximum of {top:g} ({shown}): exported as they are; "
        "Moodle's import caps a grade at its grade item's maximum unless the site allows "
        "more (Site administration > Grades > General settings > Unlimited grades)"
    )


def exported(
    out: Path,
    config: Config,
    fmt: str,
    assignment: str | None,
    database: str | None = None,
    notes: list[str] | None = None,
) -> str:
    """The gradebook in OUT (or the PostgreSQL `database`) as `fmt`; one row per student
    (per roster student with a roster), totals with overrides applied; a total that is not
    a finite number is refused (UsageError), never exported. `notes` gets the lines to show
    the instructor (a Moodle total its import would cap, students of the course's roster.csv
    the gradebook was not graded with)."""
    book = open_book(out, database)
    try:
        spec = config.assignment(book.assignment(assignment))
        rows = from_gradebook(book, spec.id)
        drift = roster_drift(config.path.parent, stored_roster(book))
    finally:
        book.close()
    refuse_non_finite(rows)
    if notes is not None and drift:
        notes.append(drift)
    if fmt == "moodle" and notes is not None and (line := capped_by_moodle(rows, spec)):
        notes.append(line)
    return render(fmt, rows, spec)


def export(
    out: Path,
    config: Config,
    fmt: str,
    dest: Path,
    assignment: str | None,
    database: str | None = None,
    notes: list[str] | None = None,
) -> Path:
    """Write the gradebook in OUT (or `database`) as `fmt` to `dest` (see `exported`)."""
    text = exported(out, config, fmt, assignment, database, notes)
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_text(dest, text, newline="")
    return dest
