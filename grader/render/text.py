"""`--format text`: a verdict readable in a terminal, summary first, then where, then how."""

from __future__ import annotations

from ..report import Report, TargetResult

SYMBOLS = {"passed": "✓", "failed": "✗", "error": "✗", "missing": "?", "timeout": "⏱"}


def _points(value: float) -> str:
    return f"{value:g}"


def _target_lines(result: TargetResult, width: int) -> list[str]:
    where = (
        f"  [{result.location.describe()}]" if result.location and result.status != "passed" else ""
    )
    head = (
        f"  {SYMBOLS[result.status]} {result.name:<{width}}  "
        f"{_points(result.score):>5} / {_points(result.max_score):<4} {result.status}{where}"
    )
    lines = [head]
    if result.mistakes:
        lines.append(f"      mistakes: {', '.join(result.mistakes)}")
    shown = result.messages if result.status != "passed" else result.messages[1:]
    lines.extend(f"      {message}" for message in shown)
    return lines


def render(report: Report) -> str:
    width = max((len(t.name) for t in report.targets), default=10)
    lines = [
        f"{report.submission} — {report.assignment}: "
        f"{_points(report.score)} / {_points(report.max_score)} points",
    ]
    for result in report.targets:
        lines.extend(_target_lines(result, width))
    if report.errors:
        lines.append("Problems while running the notebook:")
        lines.extend(f"  - {error}" for error in report.errors)
    if report.notes:
        lines.append("Notes:")
        lines.extend(f"  - {note}" for note in report.notes)
    return "\n".join(lines)
