"""A gradebook table for the terminal: one row per student, one column per target."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

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
class Counted:
    """A student's points where they differ from the grader's (as grades.csv has them):
    the functions set by hand, the total that counts, and what changed it."""

    points: Mapping[str, float]
    total: float
    late: bool = False  # a late penalty taken off (the cut-off's 0 included)
    overridden: bool = False  # points or the total set by hand (`grader override`)

    @property
    def marks(self) -> str:
        """The letters after the total: L late, O overridden."""
        return "L" * self.late + "O" * self.overridden


MARKS_LEGEND = (
    "L: late penalty taken off, O: set by hand (grader override); grades.csv and "
    "report.html say how"
)


@dataclass(frozen=True)
class Table:
    """A class's gradebook for the terminal: its rows and the assignment's target names;
    `counted`, by student, where what counts is not the grader's points, and `max_total`,
    the assignment's points (for a student given points by hand without a notebook)."""

    rows: Sequence[Row]
    targets: Sequence[str]
    counted: Mapping[str, Counted] = field(default_factory=dict)
    max_total: float = 0.0


def render(table: Table) -> str:
    """The table as text (see render_table)."""
    return render_table(table.rows, table.targets, table.counted, table.max_total)


def render_table(
    rows: Sequence[Row],
    targets: Sequence[str],
    counted: Mapping[str, Counted] | None = None,
    max_total: float = 0.0,
) -> str:
    """Rows are (student, report or None, problem); short column names keep it narrow.
    Names and problems are put on one printable line each (they come from file names), a
    tab as a space: a terminal would move it to its next tab stop, out of the column.
    A student in `counted` shows the points that count, marked (the legend says how)."""
    counted = counted or {}
    marked = False
    shown = [(_cell(student), student, report, _cell(problem)) for student, report, problem in rows]
    short = [_abbreviate(t) for t in targets]
    width = max([len("student"), *(display_width(s) for s, _, _, _ in shown)])
    cols = [max(len(s), 5) for s in short]
    header = "  ".join(
        [
            f"{'student':<{width}}",
            *(f"{s:>{c}}" for s, c in zip(short, cols, strict=True)),
            "  total",
        ]
    )
    lines = [header, "-" * len(header)]
    for student, key, report, problem in shown:
        count = counted.get(key)
        if report is None and count is None:
            lines.append(f"{_pad(student, width)}  not graded: {problem}")
            continue
        scores = {t.name: t.score for t in report.targets} if report is not None else {}
        if count is not None:
            scores.update(count.points)
        cells = []
        for name, col in zip(targets, cols, strict=True):
            score = scores.get(name)
            cells.append(f"{score:>{col}g}" if score is not None else f"{'-':>{col}}")
        if report is not None:
            total = f"{report.score:g}/{report.max_score:g}"
        if count is not None:
            total = f"{count.total:g}/{report.max_score if report else max_total:g}"
            marked = marked or bool(count.marks)
        line = "  ".join([_pad(student, width), *cells, f"{total:>7}"])
        lines.append(f"{line} {count.marks}" if count is not None and count.marks else line)
    legend = ", ".join(f"{s} = {t}" for s, t in zip(short, targets, strict=True) if s != t)
    if legend:
        lines.append(f"({legend})")
    if marked:
        lines.append(f"({MARKS_LEGEND})")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return one_line(text).replace("\t", " ")


def _abbreviate(name: str) -> str:
    if len(name) <= 14:
        return name
    return "".join(part[0] for part in name.split("_"))
