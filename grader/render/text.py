"""`--format text`: a verdict readable in a terminal, summary first, then where, then how.

Every string of the report may hold student text: each is put on a line of its own with
one_line, so that none can start a CI workflow command or move the terminal's cursor.
"""

from __future__ import annotations

from grader.render.escape import one_line
from grader.render.verdict import shown_location
from grader.report import Report, TargetResult

SYMBOLS = {"passed": "✓", "failed": "✗", "error": "✗", "missing": "?", "timeout": "⏱"}


def _points(value: float) -> str:
    return f"{value:g}"


def _target_lines(result: TargetResult, width: int) -> list[str]:
    place = shown_location(result)
    where = f"  [{place}]" if place else ""
    head = (
        f"  {SYMBOLS[result.status]} {one_line(result.name):<{width}}  "
        f"{_points(result.score):>5} / {_points(result.max_score):<4} {result.status}{where}"
    )
    lines = [head]
    if result.mistakes:
        lines.append(f"      mistakes: {one_line(', '.join(result.mistakes))}")
    shown = result.messages if result.status != "passed" else result.messages[1:]
    lines.extend(f"      {one_line(message)}" for message in shown)
    return lines


def render(report: Report) -> str:
    """The report for a terminal or a CI log."""
    width = max((len(t.name) for t in report.targets), default=10)
    lines = [
        f"{one_line(report.submission)} — {one_line(report.assignment)}: "
        f"{_points(report.score)} / {_points(report.max_score)} points",
    ]
    for result in report.targets:
        lines.extend(_target_lines(result, width))
    if report.errors:
        lines.append("Problems while running the notebook:")
        lines.extend(f"  - {one_line(error)}" for error in report.errors)
    if report.notes:
        lines.append("Notes:")
        lines.extend(f"  - {one_line(note)}" for note in report.notes)
    return "\n".join(lines)
