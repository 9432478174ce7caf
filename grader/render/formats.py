"""Every output format, by name: what it renders, the function that renders it, and the file
a batch writes it to. A format is one module plus one line here; `grader check --format`,
`grader report --format`, `grader grade --out` and the service all look formats up here.

A renderer takes data and returns text; the caller writes files (the file name is here so
that every caller names it alike).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from grader.render import (
    class_report,
    classroom,
    github,
    grades,
    gradescope,
    junit,
    lms,
    markdown,
)
from grader.render import json as json_format
from grader.render import table as table_format
from grader.render import text as text_format
from grader.report import ClassSummary, Report

T = TypeVar("T")
Subject = Literal["report", "class", "grades", "table"]


@dataclass(frozen=True)
class Format(Generic[T]):
    """One output format: its name, what it is for, its renderer, and the file it is written
    to when a caller writes it as a file (None: printed)."""

    name: str
    summary: str
    render: Callable[[T], str]
    file: str | None = None


def _by_name(*formats: Format[T]) -> dict[str, Format[T]]:
    return {f.name: f for f in formats}


# One graded notebook (`grader check --format`, check(), the service).
REPORT_FORMATS: dict[str, Format[Report]] = _by_name(
    Format("text", "a terminal or a CI log", text_format.render),
    Format("json", "the one-object contract of DESIGN.md", json_format.render),
    Format("junit", "JUnit XML, one test case per target", junit.render),
    Format("github", "workflow annotations and a job summary", github.render),
    Format("gradescope", "Gradescope's results.json", gradescope.render, "results.json"),
    Format("markdown", "a pull-request comment", markdown.render),
    Format("classroom", "GitHub Classroom's autograding result", classroom.render),
)
# A graded class's aggregates (`grader report --format`, `grader grade --out`).
CLASS_FORMATS: dict[str, Format[ClassSummary]] = _by_name(
    Format("html", "the class report page", class_report.render_html, "report.html"),
    Format("csv", "the aggregates as CSV", class_report.render_csv),
    Format("json", "the aggregates as JSON", class_report.render_json),
)
# A class's gradebook, one row per student (`grader grade --out`, overrides, `grader export`).
GRADES_FORMATS: dict[str, Format[grades.Grades]] = _by_name(
    Format("csv", "grades.csv", grades.render_grades, "grades.csv"),
    Format("canvas", "Canvas's grade import", lms.render_canvas),
    Format("moodle", "Moodle's CSV grade import", lms.render_moodle),
    Format("blackboard", "Blackboard's offline grade upload", lms.render_blackboard),
)
# A class's points at a glance on the terminal (`grader grade`).
TABLE_FORMATS: dict[str, Format[table_format.Table]] = _by_name(
    Format("text", "the gradebook table", table_format.render),
)

FORMATS: Mapping[Subject, Mapping[str, Format[Any]]] = {
    "report": REPORT_FORMATS,
    "class": CLASS_FORMATS,
    "grades": GRADES_FORMATS,
    "table": TABLE_FORMATS,
}
