"""The class report's formats: the page (`report.html`), and the aggregates as CSV and JSON
for `grader report --format`. Each takes a ClassSummary and returns text; the caller writes."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from urllib.parse import quote

from grader.render.charts import pass_rates, score_histogram
from grader.render.escape import json_text, safe_name, spreadsheet_row
from grader.report import ClassSummary

LIST_LIMIT = 50  # students named per table row; the rest are counted


def render_html(summary: ClassSummary) -> str:
    """The class report page for a summary: score histogram, pass rates, mistakes and links to each
    student's feedback page."""
    from grader.render.html import render_template  # Jinja only for the page

    scores = summary.scores
    return render_template(
        "report.html.j2",
        s=summary,
        mean=sum(scores) / len(scores) if scores else 0.0,
        full=sum(score == summary.max_score for score in scores),
        histogram=score_histogram(scores, summary.max_score),
        rates=pass_rates([t.name for t in summary.targets], [t.pass_rate for t in summary.targets]),
        links={
            s: f"feedback/{quote(safe_name(s, summary.clashing))}.html" for s, _ in summary.students
        },
        limit=LIST_LIMIT,
    )


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
    for student, note in summary.notes:
        yield ["note", student, "", note]
    for line in summary.unmatched:
        yield ["unmatched", "", "", line]


def render_json(summary: ClassSummary) -> str:
    """The aggregates as JSON; controls in student names are \\u escapes."""
    return json_text(json.dumps(summary.to_dict(), indent=2, ensure_ascii=False))
