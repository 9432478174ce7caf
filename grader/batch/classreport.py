"""`OUT/report.html` and `grader report`: the class at a glance, from the gradebook."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

from grader.batch.gradebook import Gradebook
from grader.batch.records import stored_roster
from grader.batch.standing import NO_SUBMISSION, Standing, from_gradebook
from grader.errors import UsageError
from grader.judge.aggregate import ClassSummary, Points, summarise
from grader.render.charts import pass_rates, score_histogram
from grader.render.escape import json_text, safe_name, spreadsheet_row
from grader.render.html import render_template
from grader.report import Report

LIST_LIMIT = 50  # students named per table row; the rest are counted


def load_summary(
    out: Path, assignment: str | None = None, database: str | None = None
) -> ClassSummary:
    """The class summary from `out/gradebook.sqlite` (or the PostgreSQL `database`): each
    student's latest report (over the roster when one is stored), unreadable submissions and
    standings; UsageError when there is no gradebook or it holds several assignments and none
    is named."""
    path = out / "gradebook.sqlite"
    if database is None and not path.is_file():
        raise UsageError(f"{out}: no gradebook.sqlite here; run `grader grade … --out {out}`")
    book = Gradebook(database or path)
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

        roster = stored_roster(book)
        ids = None if roster is None else {s.id for s in roster}
        summary = summarise(assignment or "", on_roster(graded(), ids), problems)
        name = assignment or (next(iter(seen)) if seen else "nothing graded")
        summary = with_standings(summary, from_gradebook(book, name), ids is not None)
    finally:
        book.close()
    return replace(summary, assignment=name)


def on_roster(
    graded: Iterable[tuple[str, Report]], ids: set[str] | None
) -> Iterator[tuple[str, Report]]:
    """The graded submissions of roster students (all of them without a roster)."""
    return (pair for pair in graded if ids is None or pair[0] in ids)


def with_standings(summary: ClassSummary, rows: list[Standing], roster: bool) -> ClassSummary:
    """The summary with each student's total as the gradebook has it (overrides applied),
    the overrides and comments listed, and, with a roster, exactly the roster: students with
    no submission among those that did not run, no one else."""
    by_id = {row.student: row for row in rows}
    students = tuple(
        (s, Points(by_id[s].total, p.max_score) if s in by_id else p) for s, p in summary.students
    )
    notes = tuple(
        (row.student, line)
        for row in rows
        for line in [
            *(o.describe() for o in row.overrides),
            *(c.describe() for c in row.comments),
            *([f"late: {row.lateness}"] if row.lateness else []),
        ]
    )
    failing = summary.failing_to_run
    unreadable = summary.unreadable
    if roster:
        unreadable = tuple(pair for pair in unreadable if pair[0] in by_id)
        absent = tuple((r.student, r.problem) for r in rows if r.problem == NO_SUBMISSION)
        failing = tuple(pair for pair in failing if pair[0] in by_id) + absent
    return replace(
        summary,
        students=students,
        scores=tuple(p.score for _, p in students),
        notes=notes,
        unreadable=unreadable,
        failing_to_run=failing,
    )


def render_html(summary: ClassSummary) -> str:
    """The class report page for a summary: score histogram, pass rates, mistakes and links to each
    student's feedback page."""
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


def write_report(out: Path, assignment: str | None = None, database: str | None = None) -> Path:
    """Write `out/report.html` from the gradebook in `out` (or `database`) and return its
    path."""
    path = out / "report.html"
    path.write_text(render_html(load_summary(out, assignment, database)), encoding="utf-8")
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
    for student, note in summary.notes:
        yield ["note", student, "", note]


def render_json(summary: ClassSummary) -> str:
    """The aggregates as JSON; controls in student names are \\u escapes."""
    return json_text(json.dumps(summary.to_dict(), indent=2, ensure_ascii=False))
