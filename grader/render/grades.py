"""grades.csv (and an export in its columns): one row per student, points per target
(overrides applied), total (late penalty applied), and beside them the autograded total, the
overrides and comments, why there is no grade, the penalty and the lateness. Every text
cell is made safe for a spreadsheet."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from grader.render.escape import spreadsheet_row
from grader.report import Report


class Remark(Protocol):
    """An override or a comment of the instructor's, as it reads in a cell."""

    def describe(self) -> str:
        """One line: what was changed or said, by whom, when."""
        ...


class GradeRow(Protocol):
    """What grades.csv reads of a student's standing (the gradebook's `Standing`)."""

    @property
    def student(self) -> str:
        """The student's id."""
        ...

    @property
    def report(self) -> Report | None:
        """The graded report, None when there is none."""
        ...

    @property
    def problem(self) -> str:
        """Why there is no grade (empty when there is one)."""
        ...

    @property
    def shown_problem(self) -> str:
        """Why there is no grade, for a student's eyes: files by their names, no folders."""
        ...

    @property
    def name(self) -> str:
        """The roster's name (empty without a roster)."""
        ...

    @property
    def section(self) -> str:
        """The roster's section."""
        ...

    @property
    def email(self) -> str:
        """The roster's email address (an LMS's login)."""
        ...

    @property
    def lms_id(self) -> str:
        """The LMS's own id of the student (the roster's, from LTI)."""
        ...

    @property
    def overrides(self) -> Sequence[Remark]:
        """The instructor's overrides."""
        ...

    @property
    def comments(self) -> Sequence[Remark]:
        """The instructor's comments."""
        ...

    @property
    def autograded(self) -> float:
        """The points the grader gave."""
        ...

    @property
    def total(self) -> float:
        """The points that count: overrides and late penalty applied."""
        ...

    @property
    def penalty(self) -> float:
        """The late penalty in percent."""
        ...

    @property
    def lateness(self) -> str:
        """How late, in words (empty when on time)."""
        ...

    def points(self, target: str) -> float:
        """A target's points, its override applied."""
        ...


@dataclass(frozen=True)
class Grades:
    """The rows of grades.csv, the target columns, the total points of the assignment and its
    id (an LMS export's grade column)."""

    rows: Sequence[GradeRow]
    targets: Sequence[str]
    max_total: float
    assignment: str = ""


def render_grades(grades: Grades) -> str:
    """The table as CSV text (rows end in CRLF, as the csv module writes them)."""
    rows, targets = grades.rows, grades.targets
    roster = any(row.name for row in rows)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    head = ["student", *(["name", "section"] if roster else []), *targets]
    head += ["total", "max_total", "problem", "autograded", "overrides", "comments"]
    head += ["late_penalty", "lateness"]
    writer.writerow(spreadsheet_row(head))
    for row in rows:
        who = [row.name, row.section] if roster else []
        maximum = row.report.max_score if row.report is not None else grades.max_total
        writer.writerow(
            spreadsheet_row(
                [
                    row.student,
                    *who,
                    *(row.points(name) for name in targets),
                    row.total,
                    maximum,  # a not-graded row's too: total / max_total is never blank
                    row.problem,
                    row.autograded,
                    "; ".join(o.describe() for o in row.overrides),
                    "; ".join(c.describe() for c in row.comments),
                    row.penalty,
                    row.lateness,
                ]
            )
        )
    return buffer.getvalue()
