"""`OUT/report.html` and `grader report`: the class at a glance, from the gradebook."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from grader.batch.gradebook import Gradebook
from grader.batch.records import stored_roster
from grader.batch.standing import NO_SUBMISSION, Standing, from_gradebook
from grader.errors import UsageError
from grader.judge.aggregate import scores_only, summarise
from grader.render.escape import twins
from grader.render.formats import CLASS_FORMATS
from grader.render.whole_file import write_text
from grader.report import ClassSummary, Points, Report


def load_summary(
    out: Path, assignment: str | None = None, database: str | None = None, held: bool = False
) -> ClassSummary:
    """The class summary from `out/gradebook.sqlite` (or the PostgreSQL `database`): each
    student's latest report (over the roster when one is stored), unreadable submissions and
    standings; UsageError when there is no gradebook or it holds several assignments and none
    is named (`held`: or the one named is none it holds, as `grader report -a` asks)."""
    path = out / "gradebook.sqlite"
    if database is None and not path.is_file():
        raise UsageError(f"{out}: no gradebook.sqlite here; run `grader grade … --out {out}`")
    book = Gradebook(database or path)
    try:
        if held and assignment is not None:
            book.assignment(assignment)  # one it holds, or a UsageError (not an empty page)
        kinds = book.assignments()
        problems = book.problems(assignment or (kinds[0] if len(kinds) == 1 else None))
        seen: set[str] = set()
        # Each report is read and decoded once: the summary takes it whole, the standings
        # its points and statuses (what `from_gradebook` would read again, of the one
        # assignment every report is of).
        scores: list[tuple[str, Report]] = []

        def graded() -> Iterator[tuple[str, Report]]:
            for student, report in book.each_latest(assignment):
                seen.add(report.assignment)
                if len(seen) > 1:
                    raise UsageError(
                        f"{out}: the gradebook holds several assignments "
                        f"({', '.join(sorted(seen))}); pass --assignment"
                    )
                scores.append((student, scores_only(report)))
                yield student, report

        roster = stored_roster(book)
        ids = None if roster is None else {s.id for s in roster}
        summary = summarise(assignment or "", on_roster(graded(), ids), problems)
        name = assignment or (next(iter(seen)) if seen else "nothing graded")
        # `scores` are points and statuses already (scores_only): taken whole, not reduced
        # a second time.
        rows = from_gradebook(book, name, whole=True, latest=scores)
        summary = with_standings(summary, rows, ids is not None)
        summary = replace(
            summary, clashing=twins(book.names()), unmatched=tuple(book.unmatched(name))
        )
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
    # a student who handed in nothing but was given points by hand is graded, by the
    # instructor: counted in the scores as the exports count them, not listed as absent
    listed = {s for s, _ in students}
    by_hand = [r for r in rows if r.problem == NO_SUBMISSION and r.overrides]
    students += tuple(
        (r.student, Points(r.total, summary.max_score)) for r in by_hand if r.student not in listed
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
        absent = tuple(
            (r.student, r.problem) for r in rows if r.problem == NO_SUBMISSION and not r.overrides
        )
        failing = tuple(pair for pair in failing if pair[0] in by_id) + absent
    return replace(
        summary,
        students=students,
        scores=tuple(p.score for _, p in students),
        notes=notes,
        unreadable=unreadable,
        failing_to_run=failing,
    )


def write_report(
    out: Path, assignment: str | None = None, database: str | None = None, held: bool = False
) -> Path:
    """Write `out/report.html` from the gradebook in `out` (or `database`) and return its
    path (`held`: see `load_summary`)."""
    path = out / "report.html"
    page = CLASS_FORMATS["html"].render(load_summary(out, assignment, database, held))
    write_text(path, page)
    return path
