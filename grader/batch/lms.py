"""`grader export`: the gradebook as a file an LMS imports as it is.

The columns are the importers' own (docs/instructor.md says where each fact comes from):
- Canvas (Grades > Import): `Student` ("Last, First"), `ID`, `SIS User ID`, `SIS Login ID`,
  `Section`, then one column per assignment; a student is found by one of the first three.
- Moodle (Grade administration > Import > CSV file): any header; the teacher maps a column
  to "Identify user by" (email address or ID number) and the grade column to a grade item,
  and may map a feedback column. We write `First name`, `Surname`, `ID number`,
  `Email address`, the assignment, `Feedback`.
- Blackboard (Grade Centre > Work Offline > Upload): the user name identifies a student;
  `Last Name`, `First Name`, `Username`, `Student ID`, then a column per item (a column without
  a column id becomes a new column); in a comma-delimited file every value is quoted.
- csv: grades.csv's columns, from the gradebook.
Every cell goes through spreadsheet_cell: nothing in an export is a formula.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Literal

from grader.batch.adjust import book_assignment, open_book, spec_total
from grader.batch.standing import Standing, from_gradebook, write_grades
from grader.course.config import AssignmentSpec, Config
from grader.render.escape import spreadsheet_row

Format = Literal["canvas", "moodle", "blackboard", "csv"]
FORMATS: tuple[Format, ...] = ("canvas", "moodle", "blackboard", "csv")

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_COLUMNS = ("First name", "Surname", "ID number", "Email address")
BLACKBOARD_COLUMNS = ("Last Name", "First Name", "Username", "Student ID")


def split_name(name: str) -> tuple[str, str]:
    """(first names, last name): the last word is the surname, as the LMSs' own exports
    split a single name field."""
    words = name.split()
    if len(words) < 2:
        return name, ""
    return " ".join(words[:-1]), words[-1]


def _score(row: Standing) -> float:
    return round(row.total, 4)


def _canvas(rows: Sequence[Standing], spec: AssignmentSpec) -> Iterator[list[object]]:
    yield [*CANVAS_COLUMNS, spec.id]
    for row in rows:
        first, last = split_name(row.name or row.student)
        student = f"{last}, {first}" if last else first
        yield [student, _lms_id(row), row.student, _login(row), row.section, _score(row)]


def _moodle(rows: Sequence[Standing], spec: AssignmentSpec) -> Iterator[list[object]]:
    yield [*MOODLE_COLUMNS, spec.id, "Feedback"]
    for row in rows:
        first, last = split_name(row.name or row.student)
        feedback = "; ".join(
            [*(o.describe() for o in row.overrides), row.problem, row.lateness]
        ).strip("; ")
        yield [first, last, row.student, _login(row), _score(row), feedback]


def _blackboard(rows: Sequence[Standing], spec: AssignmentSpec) -> Iterator[list[object]]:
    yield [*BLACKBOARD_COLUMNS, f"{spec.id} [Total Pts: {spec_total(spec):g} Score]"]
    for row in rows:
        first, last = split_name(row.name or row.student)
        yield [last, first, _lms_id(row) or row.student, row.student, _score(row)]


def _lms_id(row: Standing) -> str:
    return row.lms_id


def _login(row: Standing) -> str:
    return row.email


WRITERS: dict[str, Callable[[Sequence[Standing], AssignmentSpec], Iterator[list[object]]]] = {
    "canvas": _canvas,
    "moodle": _moodle,
    "blackboard": _blackboard,
}


def render(fmt: str, rows: Sequence[Standing], spec: AssignmentSpec) -> str:
    """The export as text (Blackboard's with every value quoted, as its uploader wants)."""
    buffer = io.StringIO()
    if fmt == "blackboard":
        writer = csv.writer(buffer, quoting=csv.QUOTE_ALL)
    else:
        writer = csv.writer(buffer)
    for line in WRITERS[fmt](rows, spec):
        writer.writerow(spreadsheet_row(line))
    return buffer.getvalue()


def export(
    out: Path,
    config: Config,
    fmt: Format,
    dest: Path,
    assignment: str | None,
    database: str | None = None,
) -> Path:
    """Write the gradebook in OUT (or the PostgreSQL `database`) as `fmt` to `dest`; one row
    per student (per roster student with a roster), totals with overrides applied."""
    book = open_book(out, database)
    try:
        spec = config.assignment(book_assignment(book, assignment))
        rows = from_gradebook(book, spec.id)
    finally:
        book.close()
    dest.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        return write_grades(rows, [t.name for t in spec.targets], spec_total(spec), dest)
    dest.write_text(render(fmt, rows, spec), encoding="utf-8", newline="")
    return dest
