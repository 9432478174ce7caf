"""`--format markdown`: a report for a pull-request comment or a CI job summary.

Student text is escaped (markdown_text) or fenced (markdown_code): it renders as the words
it is, never as a link, an image or HTML in the comment.
"""

from __future__ import annotations

from grader.render.escape import markdown_cell, markdown_code, markdown_text
from grader.render.verdict import shown_location
from grader.report import Report

_ICONS = {"passed": "✅", "failed": "❌", "error": "💥", "missing": "❓", "timeout": "⏱️"}


def render(report: Report) -> str:
    """The report as GitHub-flavoured Markdown: a table, then what failed and why."""
    lines = [
        f"## {markdown_cell(report.assignment)}: {report.score:g} / {report.max_score:g} points",
        "",
        "| | function | status | points | where |",
        "|---|---|---|---|---|",
    ]
    for t in report.targets:
        where = shown_location(t)
        lines.append(
            f"| {_ICONS[t.status]} | {markdown_code(t.name)} | {t.status} | "
            f"{t.score:g} / {t.max_score:g} | {markdown_cell(where)} |"
        )
    for t in report.targets:
        if t.status == "passed":
            continue
        lines += ["", f"### {markdown_code(t.name)}"]
        if t.mistakes:
            lines.append(f"Mistakes: {', '.join(map(markdown_code, t.mistakes))}")
            lines.append("")
        lines += [f"- {markdown_text(m)}" for m in t.messages]
    if report.errors:
        lines += ["", "### Problems while running the notebook"]
        lines += [f"- {markdown_text(e)}" for e in report.errors]
    if report.notes:
        lines += ["", "<details><summary>Notes</summary>", ""]
        lines += [f"- {markdown_text(n)}" for n in report.notes]
        lines += ["", "</details>"]
    return "\n".join(lines)
