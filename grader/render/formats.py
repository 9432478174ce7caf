"""Every output format, by name: what it renders, the function that renders it, and the file
a batch writes it to. A format is one module plus one line here; `grader check --format`,
`grader report --format`, `grader grade --out` and the service all look formats up here.

A renderer takes data and returns text; the caller writes files (the file name is here so
that every caller names it alike).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from grader.report import ClassSummary, Report

if TYPE_CHECKING:
    from grader.render.grades import Grades
    from grader.render.table import Table

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


@dataclass(frozen=True)
class Renderer:
    """The renderer `name` of grader/render/`module`.py, its module imported on the first
    call: a command imports only the format it prints."""

    module: str
    name: str = "render"

    def resolve(self) -> Callable[[Any], str]:
        """The renderer itself (its module imported)."""
        found: Callable[[Any], str] = getattr(
            importlib.import_module(f"grader.render.{self.module}"), self.name
        )
        return found

    def __call__(self, data: Any) -> str:
        """Render `data` with the renderer."""
        return self.resolve()(data)


def _by_name(*formats: Format[T]) -> dict[str, Format[T]]:
    return {f.name: f for f in formats}


# One graded notebook (`grader check --format`, check(), the service).
REPORT_FORMATS: dict[str, Format[Report]] = _by_name(
    Format("text", "a terminal or a CI log", Renderer("text")),
    Format("json", "the one-object contract of DESIGN.md", Renderer("json")),
    Format("junit", "JUnit XML, one test case per target", Renderer("junit")),
    Format("github", "workflow annotations and a job summary", Renderer("github")),
    Format("gradescope", "Gradescope's results.json", Renderer("gradescope"), "results.json"),
    Format("markdown", "a pull-request comment", Renderer("markdown")),
    Format("classroom", "GitHub Classroom's autograding result", Renderer("classroom")),
)
# A graded class's aggregates (`grader report --format`, `grader grade --out`).
CLASS_FORMATS: dict[str, Format[ClassSummary]] = _by_name(
    Format("html", "the class report page", Renderer("class_report", "render_html"), "report.html"),
    Format("csv", "the aggregates as CSV", Renderer("class_report", "render_csv")),
    Format("json", "the aggregates as JSON", Renderer("class_report", "render_json")),
)
# A class's gradebook, one row per student (`grader grade --out`, overrides, `grader export`).
GRADES_FORMATS: dict[str, Format[Grades]] = _by_name(
    Format("csv", "grades.csv", Renderer("grades", "render_grades"), "grades.csv"),
    Format("canvas", "Canvas's grade import", Renderer("lms", "render_canvas")),
    Format("moodle", "Moodle's CSV grade import", Renderer("lms", "render_moodle")),
    Format("blackboard", "Blackboard's offline grade upload", Renderer("lms", "render_blackboard")),
)
# A class's points at a glance on the terminal (`grader grade`).
TABLE_FORMATS: dict[str, Format[Table]] = _by_name(
    Format("text", "the gradebook table", Renderer("table")),
)

FORMATS: Mapping[Subject, Mapping[str, Format[Any]]] = {
    "report": REPORT_FORMATS,
    "class": CLASS_FORMATS,
    "grades": GRADES_FORMATS,
    "table": TABLE_FORMATS,
}
