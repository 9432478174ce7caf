"""`OUT/report.html` and `grader report`: the class at a glance, from the gradebook."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

from grader.batch.gradebook import Gradebook
from grader.errors import UsageError
from grader.judge.aggregate import ClassSummary, summarise
from grader.render.charts import pass_rates, score_histogram
from grader.render.escape import json_text, safe_name, spreadsheet_row
from grader.render.html import render_template
from grader.report import Report

LIST_LIMIT = 50  # students named per table row; the rest are counted


def load_summary(out: Path, assignment: str | None = None) -> ClassSummary:
    path = out / "gradebook.sqlite"
    if not path.is_file():
        raise UsageError(f"{out}: no gradebook.sqlite here; run `grader grade … --out {out}`")
    book = Gradebook(path)
    try:
        problems = book.problems()
        seen: set[str] = set()

        def graded() -> Iterator[tuple[str, Report]]:
            for student, report in book.each_latest(assignment):
                seen.add(report.assignment)
                if len(seen) > 1:
                    raise UsageError(
                        f"{out}: the gradebook holds several assignments "
                        f"({', '.join(sorted(seen))}); pass --assignment"
                    )
                yield student, report

        summary = summarise(assignment or "", graded(), problems)
    finally:
        book.close()
    name = assignment or (next(iter(seen)) if seen else "nothing graded")
    return replace(summary, assignment=name)


def render_html(summary: ClassSummary) -> str:
    scores = summary.scores
    return render_template(
        "report.html.j2",
        s=summary,
        mean=sum(scores) / len(scores) if scores else 0.0,
        full=sum(score == summary.max_score for score in scores),
        histogram=score_histogram(scores, summary.max_score),
        rates=pass_rates([t.name for t in summary.targets], [t.pass_rate for t in summary.targets]),
        links={s: f"feedback/{quote(safe_name(s))}.html" for s, _ in summary.students},
        limit=LIST_LIMIT,
    )


def write_report(out: Path, assignment: str | None = None) -> Path:
    path = out / "report.html"
    path.write_text(render_html(load_summary(out, assignment)), encoding="utf-8")
    return path


def render_csv(summary: ClassSummary) -> str:
    """The aggregates as CSV; student names and problems made safe for a spreadsheet."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in _csv_rows(summary):
        writer.writerow(spreadsheet_row(row))
    return buffer.getvalue()


def _csv_rows(summary: ClassSummary) -> Iterator[list[object]]:
    yield ["section", "name", "value", "detail"]
    for t in summary.targets:
        yield ["pass_rate", t.name, f"{t.pass_rate:.4f}", f"{t.passed}/{t.total}"]
    for m in summary.mistakes:
        yield ["mistake", m.id, m.count, ";".join(m.students)]
    for student, report in summary.students:
        yield ["score", student, f"{report.score:g}", f"{report.max_score:g}"]
    for student, problem in summary.failing_to_run:
        yield ["did_not_run", student, "", problem]


def render_json(summary: ClassSummary) -> str:
    """The aggregates as JSON; controls in student names are \\u escapes."""
    return json_text(json.dumps(summary.to_dict(), indent=2, ensure_ascii=False))
