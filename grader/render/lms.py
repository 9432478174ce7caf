"""The gradebook as each LMS's grade import reads it: Canvas, Moodle, Blackboard.

The columns are the importers' own (docs/instructor.md says where each fact comes from):
- Canvas (Grades > Import): `Student` ("Last, First"), `ID`, `SIS User ID`, `SIS Login ID`,
  `Section`, then one column per assignment; a student is found by one of the first three.
  The second row is `    Points Possible` with the assignment's maximum, as in Canvas's
  own gradebook export.
- Moodle (Grade administration > Import > CSV file): any header; the teacher maps a column
  to "Identify user by" (email address or ID number) and the grade column to a grade item,
  and may map a feedback column. We write `First name`, `Surname`, `ID number`,
  `Email address`, the assignment, `Feedback` (overrides, comments, a problem, lateness).
- Blackboard (Grade Centre > Work Offline > Upload): the user name identifies a student;
  `Last Name`, `First Name`, `Username`, `Student ID`, then a column per item (a column without
  a column id becomes a new column); in a comma-delimited file every value is quoted.
Every cell goes through spreadsheet_row: nothing in an export is a formula.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator

from grader.render.escape import spreadsheet_row
from grader.render.grades import GradeRow, Grades

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_POINTS_ROW = "    Points Possible"  # as Canvas writes it, four spaces first
MOODLE_COLUMNS = ("First name", "Surname", "ID number", "Email address")
BLACKBOARD_COLUMNS = ("Last Name", "First Name", "Username", "Student ID")

Lines = Iterator[list[object]]


def split_name(name: str) -> tuple[str, str]:
    """(first names, last name): "Last, First" (a roster copied from an LMS's export) at
    its comma, else the last word is the surname, as the LMSs' own exports split a single
    name field."""
    last, comma, first = name.partition(",")
    if comma and last.strip() and first.strip():
        return " ".join(first.split()), " ".join(last.split())
    words = name.split()
    if len(words) < 2:
        return name, ""
    return " ".join(words[:-1]), words[-1]


def _score(row: GradeRow) -> float:
    return round(row.total, 4)


def _canvas(grades: Grades) -> Lines:
    yield [*CANVAS_COLUMNS, grades.assignment]
    # The row Canvas's own export has under its header: an assignment the import creates
    # gets these points possible, not none (where every score read as extra credit)
    yield [CANVAS_POINTS_ROW, "", "", "", "", f"{grades.max_total:g}"]
    for row in grades.rows:
        first, last = split_name(row.name or row.student)
        student = f"{last}, {first}" if last else first
        yield [student, row.lms_id, row.student, row.email, row.section, _score(row)]


def _moodle(grades: Grades) -> Lines:
    yield [*MOODLE_COLUMNS, grades.assignment, "Feedback"]
    for row in grades.rows:
        first, last = split_name(row.name or row.student)
        parts = [
            *(o.describe() for o in row.overrides),
            *(c.describe() for c in row.comments),  # `grader comment`: words for the student
            row.shown_problem,
            row.lateness,
        ]
        feedback = "; ".join(part for part in parts if part)
        yield [first, last, row.student, row.email, _score(row), feedback]


def _blackboard(grades: Grades) -> Lines:
    yield [*BLACKBOARD_COLUMNS, f"{grades.assignment} [Total Pts: {grades.max_total:g} Score]"]
    for row in grades.rows:
        first, last = split_name(row.name or row.student)
        yield [last, first, row.lms_id or row.student, row.student, _score(row)]


def _csv(lines: Callable[[Grades], Lines], quote_all: bool = False) -> Callable[[Grades], str]:
    def render(grades: Grades) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, quoting=csv.QUOTE_ALL) if quote_all else csv.writer(buffer)
        for line in lines(grades):
            writer.writerow(spreadsheet_row(line))
        return buffer.getvalue()

    return render


render_canvas = _csv(_canvas)
render_moodle = _csv(_moodle)
render_blackboard = _csv(_blackboard, quote_all=True)  # as Blackboard's uploader wants
