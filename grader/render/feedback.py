"""One HTML page per student: each function's verdict, and their own code around the line."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from grader.course.notebook import Submission
from grader.render.escape import folded, safe_name
from grader.render.html import render_template
from grader.render.whole_file import ends_with, write_bytes
from grader.report import Report, TargetResult

CONTEXT_LINES = 3


@dataclass(frozen=True)
class Item:
    """One target on a feedback page: its result and the excerpt of the student's code around it."""

    target: TargetResult
    excerpt: list[tuple[int, str, bool]]


def excerpt(submission: Submission | None, target: TargetResult) -> list[tuple[int, str, bool]]:
    """(line number, text, is the line) for the lines around a failing target's location."""
    where = target.location
    if submission is None or where is None or target.status == "passed":
        return []
    cell = submission.cell(where.cell)
    if cell is None:
        return []
    lines = cell.lines()
    low = max(where.line - 1 - CONTEXT_LINES, 0)
    high = min(where.line + CONTEXT_LINES, len(lines))
    return [(n + 1, lines[n], n + 1 == where.line) for n in range(low, high)]


@dataclass(frozen=True)
class Adjusted:
    """What the instructor changed by hand: the total, the targets whose points were set
    (shown beside the autograded points), and one line per override and comment."""

    total: float
    points: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    late: str = ""  # when it was handed in and the late penalty, if any


def feedback_page(
    student: str,
    report: Report,
    submission: Submission | None,
    adjusted: Adjusted | None = None,
) -> str:
    """A student's feedback page as HTML: what `write_feedback` writes and `grader serve`
    shows, the same content both ways, with the instructor's overrides and comments when
    there are any."""
    items = [Item(t, excerpt(submission, t)) for t in report.targets]
    return render_template(
        "feedback.html.j2",
        student=student,
        report=report,
        filename=Path(report.submission).name,
        items=items,
        adjusted=adjusted,
    )


def write_feedback(
    out: Path,
    student: str,
    report: Report,
    submission: Submission | None,
    adjusted: Adjusted | None = None,
    clashing: Collection[str] = frozenset(),
) -> Path:
    """OUT/feedback/<student>.html: the verdicts, the student's own code around each line
    pointed at, and the instructor's overrides and comments when there are any. `clashing`:
    the class's names that differ only in case (see escape.twins); the page a student among
    them had under the plain name, before the other spelling came, is removed (else the
    folder would hand out last run's page beside the new one)."""
    data = feedback_page(student, report, submission, adjusted).encode("utf-8")
    path = out / "feedback" / f"{safe_name(student, clashing)}.html"
    try:
        write_bytes(path, data)
    except FileNotFoundError:  # the first page: make the folder
        os.makedirs(path.parent, exist_ok=True)
        write_bytes(path, data)
    plain = path.with_name(f"{safe_name(student)}.html")
    if plain != path:  # nobody's page now: every spelling of a clashing name is hashed
        with contextlib.suppress(OSError):
            plain.unlink(missing_ok=True)
    return path


def remove_feedback(out: Path, student: str) -> None:
    """Remove a name's page, plain or hashed (a student the roster now names otherwise: the
    page under the old name would stay beside the new one, and go stale)."""
    for clashing in (frozenset(), frozenset({folded(student)})):
        with contextlib.suppress(OSError):
            (out / "feedback" / f"{safe_name(student, clashing)}.html").unlink(missing_ok=True)


PAGE_END = b"</html>"  # how every page `feedback_page` renders ends


def page_is_whole(path: Path) -> bool:
    """Whether the page at `path` is there and ends as every page ends. Pages are written
    whole (grader/render/whole_file.py), but one cut off by a grader killed mid-write before
    they were may be there: a rerun rewrites it, though its student is kept (missing or
    unreadable: False, and writing it again says why)."""
    return ends_with(path, PAGE_END)
