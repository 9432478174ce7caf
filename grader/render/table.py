"""A gradebook table for the terminal: one row per student, one column per target."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from grader.render.escape import one_line
from grader.report import Report


def display_width(text: str) -> int:
    """Columns a terminal gives `text`: wide (CJK) characters take two, combining marks none."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


Row = tuple[str, Report | None, str]  # student, report or None, why there is none


@dataclass(frozen=True)
class Table:
    """A class's gradebook for the terminal: its rows and the assignment's target names."""

    rows: Sequence[Row]
    targets: Sequence[str]


def render(table: Table) -> str:
    """The table as text (see render_table)."""
    return render_table(table.rows, table.targets)


def render_table(rows: Sequence[Row], targets: Sequence[str]) -> str:
    """Rows are (student, report or None, problem); short column names keep it narrow.
    Names and problems are put on one printable line each (they come from file names), a
    tab as a space: a terminal would move it to its next tab stop, out of the column."""
    rows = [(_cell(student), report, _cell(problem)) for student, report, problem in rows]
    short = [_abbreviate(t) for t in targets]
    width = max([len("student"), *(display_width(s) for s, _, _ in rows)])
    cols = [max(len(s), 5) for s in short]
    header = "  ".join(
        [
            f"{'student':<{width}}",
            *(f"{s:>{c}}" for s, c in zip(short, cols, strict=True)),
            "  total",
        ]
    )
    lines = [header, "-" * len(header)]
    for student, report, problem in rows:
        if report is None:
            lines.append(f"{_pad(student, width)}  not graded: {problem}")
            continue
        scores = {t.name: t for t in report.targets}
        cells = []
        for name, col in zip(targets, cols, strict=True):
            result = scores.get(name)
            cells.append(f"{result.score:>{col}g}" if result else f"{'-':>{col}}")
        total = f"{report.score:g}/{report.max_score:g}"
        lines.append("  ".join([_pad(student, width), *cells, f"{total:>7}"]))
    legend = ", ".join(f"{s} = {t}" for s, t in zip(short, targets, strict=True) if s != t)
    if legend:
        lines.append(f"({legend})")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return one_line(text).replace("\t", " ")


def _abbreviate(name: str) -> str:
    if len(name) <= 14:
        return name
    return "".join(part[0] for part in name.split("_"))
