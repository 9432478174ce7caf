"""`--format markdown`: a report for a pull-request comment or a CI job summary."""

from __future__ import annotations

from ..report import Report
from .escape import markdown_cell, markdown_text

_ICONS = {"passed": "✅", "failed": "❌", "error": "💥", "missing": "❓", "timeout": "⏱️"}


def render(report: Report) -> str:
    lines = [
        f"## {markdown_cell(report.assignment)}: {report.score:g} / {report.max_score:g} points",
        "",
        "| | function | status | points | where |",
        "|---|---|---|---|---|",
    ]
    for t in report.targets:
        where = t.location.describe() if t.location and t.status != "passed" else ""
        lines.append(
            f"| {_ICONS[t.status]} | `{markdown_cell(t.name)}` | {t.status} | "
            f"{t.score:g} / {t.max_score:g} | {where} |"
        )
    for t in report.targets:
        if t.status == "passed":
            continue
        lines += ["", f"### `{markdown_cell(t.name)}`"]
        if t.mistakes:
            lines.append(f"Mistakes: {', '.join(f'`{m}`' for m in t.mistakes)}")
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
