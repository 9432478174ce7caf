"""OUT/grades.csv for a graded batch, with what the gradebook in OUT adds to it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from grader.batch.entries import Entry
from grader.batch.gradebook import Gradebook
from grader.batch.lateness import stored_late
from grader.batch.records import comments, overrides
from grader.batch.roster import Student
from grader.batch.standing import Standing, book_results, standings, write_grades
from grader.course.config import AssignmentSpec


def class_standings(
    entries: Sequence[Entry],
    assignment: AssignmentSpec,
    out: Path | None,
    roster: Sequence[Student] | None = None,
    database: str | None = None,
) -> list[Standing]:
    """One standing per student (per roster student, with a roster): as this batch graded
    them, and everyone else as the gradebook in OUT (or `database`) holds them from earlier
    batches, with its overrides, comments and late penalties: a batch of one late student
    drops no one. Without a gradebook (no OUT), this batch's entries alone."""
    results = {e.student: (e.student, e.report, e.problem) for e in entries if not e.absent}
    overridden, commented, late = {}, {}, {}
    files: dict[str, str] = {}
    place: Path | str | None = database
    if place is None and out is not None and (out / "gradebook.sqlite").is_file():
        place = out / "gradebook.sqlite"
    if place is not None:
        book = Gradebook(place)
        try:
            earlier, files = book_results(book, assignment.id, whole=False)
            results = {**earlier, **results}
            overridden, commented = overrides(book, assignment.id), comments(book, assignment.id)
            late = stored_late(book, assignment.id)
        finally:
            book.close()
    return standings(results.values(), roster, overridden, commented, late, files)


def write_csv(
    entries: Sequence[Entry],
    assignment: AssignmentSpec,
    out: Path,
    roster: Sequence[Student] | None = None,
    database: str | None = None,
    rows: Sequence[Standing] | None = None,
) -> Path:
    """OUT/grades.csv after a batch: one row per student (`class_standings`, or the `rows`
    the caller has made of them). Names and problems come from file names: no cell may be a
    formula to a spreadsheet."""
    if rows is None:
        rows = class_standings(entries, assignment, out, roster, database)
    names = [t.name for t in assignment.targets]
    return write_grades(rows, names, sum(t.points for t in assignment.targets), out / "grades.csv")
