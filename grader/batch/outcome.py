"""What a graded class comes to: the one assignment it is reported on, each entry as that
assignment, and the files and exit status that follow. The policy `grader grade` applies,
callable from any front end (the CLI, the service, a script).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from grader.batch.classreport import write_report
from grader.batch.database import shown
from grader.batch.entries import Batch, Entry
from grader.batch.grades_csv import class_standings, write_csv
from grader.batch.standing import Standing
from grader.course.config import AssignmentSpec, Config
from grader.errors import NothingGraded, UsageError
from grader.render.table import Counted, Table
from grader.render.whole_file import sweep


@dataclass(frozen=True)
class ClassOutcome:
    """A batch seen as one assignment: its spec, every entry as that assignment (those graded
    as another turned into problems), and the students whose notebook looked like another."""

    spec: AssignmentSpec
    entries: list[Entry]
    others: list[str]

    @property
    def graded(self) -> int:
        """How many submissions were graded in this run as this assignment."""
        return sum(e.report is not None and not e.skipped for e in self.entries)


def class_assignment(entries: Sequence[Entry]) -> str | None:
    """The assignment most of the class's notebooks were graded as (ties: by name): what
    a batch without --assignment reports on. Never one notebook's choice: a single notebook
    of another assignment (its metadata, or its function names) must not decide it."""
    counts = Counter(e.report.assignment for e in entries if e.report is not None)
    return min(counts, key=lambda a: (-counts[a], a)) if counts else None


def as_assignment(entries: Sequence[Entry], assignment: str) -> list[Entry]:
    """The entries, with those graded as another assignment turned into problems: their points
    do not count for this one (a notebook may not pick the assignment it is marked on)."""
    return [
        e
        if e.report is None or e.report.assignment == assignment
        else replace(
            e,
            report=None,
            problem=f"graded as {e.report.assignment}, not {assignment}: its notebook looks "
            f"like that assignment (grade the class with --assignment {assignment})",
        )
        for e in entries
    ]


def class_outcome(
    batch: Batch, config: Config, assignment: str | None, source: Path
) -> ClassOutcome:
    """The batch as the assignment named, else the one most notebooks were graded as;
    NothingGraded when nothing could be graded (no assignment to report on): UsageError
    when there was no submission at all."""
    aid = assignment or class_assignment(batch.entries)
    if aid is None:
        if not batch.entries:
            raise UsageError(f"{source}: nothing to grade")
        raise NothingGraded(f"{source}: nothing could be graded (each problem is listed above)")
    others = [e.student for e in batch.entries if e.report and e.report.assignment != aid]
    return ClassOutcome(config.assignment(aid), as_assignment(batch.entries, aid), others)


def class_rows(
    outcome: ClassOutcome, out: Path | None, batch: Batch, database: str | None = None
) -> list[Standing]:
    """Each student's standing: this batch's entries, and with a gradebook (OUT or
    `database`) everyone it holds, its overrides and late penalties applied."""
    return class_standings(outcome.entries, outcome.spec, out, batch.roster, database)


def class_table(rows: Sequence[Standing], spec: AssignmentSpec) -> Table:
    """The terminal's table of the standings: the points that count, as grades.csv's."""
    counted = {}
    for row in rows:
        late, overridden = row.penalty > 0, bool(row.overrides)
        if late or overridden:
            points = {o.target: o.points for o in row.overrides if o.target}
            counted[row.student] = Counted(points, row.total, late, overridden)
    names = [t.name for t in spec.targets]
    table_rows = [(r.student, r.report, r.problem) for r in rows]
    return Table(table_rows, names, counted, sum(t.points for t in spec.targets))


def write_outputs(
    outcome: ClassOutcome,
    out: Path,
    batch: Batch,
    database: str | None = None,
    rows: Sequence[Standing] | None = None,
) -> list[Path | str]:
    """OUT/grades.csv and OUT/report.html for the outcome (the gradebook and feedback pages
    are written while grading); what was written, the gradebook included (`database`, a
    PostgreSQL URL, shown without its password). `rows`: its standings (`class_rows`), when
    the caller has read them."""
    grades = write_csv(outcome.entries, outcome.spec, out, batch.roster, database, rows)
    gradebook = shown(database) if database else out / "gradebook.sqlite"
    keep_unmatched(out, outcome.spec.id, batch.unmatched, database)
    for folder in (out, out / "feedback"):  # what a grader killed mid-write left there
        sweep(folder)
    return [grades, gradebook, write_report(out, outcome.spec.id, database)]


def keep_unmatched(out: Path, aid: str, lines: Sequence[str], database: str | None) -> None:
    """Keep in the gradebook what this batch gave no roster student, for report.html (and a
    later `grader report`): the lines printed on stderr, which no other output holds."""
    from grader.batch.gradebook import Gradebook

    book = Gradebook(database or out / "gradebook.sqlite")
    try:
        book.set_unmatched(aid, str(out.resolve()) if database else "", lines)
    finally:
        book.close()


def also_held(out: Path, aid: str, database: str | None = None) -> list[str]:
    """The other assignments the gradebook in OUT (or `database`) holds graded submissions
    of: their grades.csv, report.html and feedback pages were just replaced by `aid`'s."""
    from grader.batch.gradebook import Gradebook

    if database is None and not (out / "gradebook.sqlite").is_file():
        return []
    book = Gradebook(database or out / "gradebook.sqlite")
    try:
        return [a for a in book.assignments() if a != aid]
    finally:
        book.close()


def exit_status(batch: Batch, allow_ungraded: bool) -> int:
    """0 every submission graded · 1 some could not be, or matched no roster student (0 with
    `allow_ungraded`) · 3 a worker was lost or the grader hit a fault of its own."""
    if batch.lost or batch.faults:
        return 3
    if (batch.ungraded or batch.unmatched) and not allow_ungraded:
        return 1
    return 0
