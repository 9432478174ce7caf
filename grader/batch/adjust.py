"""`grader override` and `grader comment`: points set by hand and remarks, kept in the
gradebook of a graded class, and the outputs written again to show them.

An override sets one target's points (or, without a target, the assignment's total); it is
stored apart from the autograded results, so a regrade keeps it, and every output shows it
beside the autograded value.
"""

from __future__ import annotations

import math
import time
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from grader.batch.classreport import write_report
from grader.batch.gradebook import Gradebook
from grader.batch.records import (
    TOTAL,
    Comment,
    Override,
    add_comment,
    clear_override,
    set_override,
    stored_roster,
)
from grader.batch.standing import Standing, from_gradebook, write_grades
from grader.batch.submissions import entry_name
from grader.batch.tables import csv_rows
from grader.course.config import AssignmentSpec, Config
from grader.course.notebook import MAX_BYTES, Submission, load_submission
from grader.errors import UsageError
from grader.render.escape import folded, twins
from grader.render.feedback import write_feedback


def open_book(out: Path, database: str | None = None) -> Gradebook:
    """The gradebook `grader grade --out OUT` wrote (or the PostgreSQL `database` that
    `grader grade --db` recorded into); a usage error when there is none."""
    if database is not None:
        return Gradebook(database)
    path = out / "gradebook.sqlite"
    if not path.is_file():
        raise UsageError(f"{out}: no gradebook.sqlite here; run `grader grade … --out {out}`")
    return Gradebook(path)


# What `grader serve` keeps in its folder, whatever its database (grader/serve/server.py).
SERVICE_LOCK = "serve.lock"


def served(out: Path) -> bool:
    """Whether `out` is the folder of a `grader serve` (running or not)."""
    return (out / SERVICE_LOCK).exists()


def _student(book: Gradebook, student: str, out: Path | None = None) -> str:
    """The student meant, as the gradebook spells them: a student of the roster (with one),
    else one the gradebook has seen. An id in another case or Unicode form (`S001` for
    `s001`) is that student when it fits one alone, as the roster matches ids."""
    roster = stored_roster(book)
    known = (
        {s.id for s in roster}
        if roster is not None
        else {str(row[0]) for row in book.db.execute("SELECT name FROM students")}
        | {name for name, _ in book.problems()}
    )
    if student in known:
        return student
    alike = sorted(k for k in known if folded(k) == folded(student))
    if len(alike) == 1:
        return alike[0]
    where = "on the roster" if roster is not None else "in the gradebook"
    if alike:  # without a roster `Ada.ipynb` and `ada.ipynb` are two students
        raise UsageError(f"{student}: several students {where} ({', '.join(alike)}): give one")
    if out is not None and served(out):  # a service's class grows by its tokens
        raise UsageError(
            f"{student}: no such student on the service's roster (add them to the roster "
            f"CSV, then `grader serve tokens --roster ROSTER.csv --student {student} "
            f"--out {out}`)"
            if roster is not None
            else f"{student}: no upload of theirs has been graded by the service in {out}"
        )
    if roster is not None:  # a student added to roster.csv since the last batch, say
        raise UsageError(
            f"{student}: no such student on the roster the gradebook was last graded with "
            "(added to roster.csv since? `grader grade` into the same --out takes it)"
        )
    raise UsageError(f"{student}: no such student {where}")


def _check_target(spec: AssignmentSpec, target: str) -> None:
    names = [t.name for t in spec.targets]
    if target != TOTAL and target not in names:
        raise UsageError(
            f"{target}: not a function of {spec.id} (one of {', '.join(names)}, "
            "or none for the total)"
        )


def _importable(points: float) -> bool:
    """Points an LMS can import, as `grader serve` takes them: a finite number ≥ 0."""
    return math.isfinite(points) and points >= 0


def _check_points(points: float | None) -> None:
    if points is not None and not _importable(points):
        raise UsageError(f"points {points!r} is not a finite number ≥ 0")


def refuse_non_finite(rows: Iterable[Standing]) -> None:
    """A UsageError naming the first student whose total is not a finite number: each
    override is finite, but two of 1e308 points add up to inf, which no LMS imports."""
    for row in rows:
        if not math.isfinite(row.total):
            raise UsageError(
                f"{row.student}: the overrides make a total of {row.total!r} points, not a "
                "finite number; give the functions smaller points, or set the total"
            )


def check_totals(book: Gradebook, aid: str, changes: Sequence[Change]) -> None:
    """Refuse `changes` (before any is made) when they would leave a student a total that
    is not a finite number."""
    students = dict.fromkeys(c.student for c in changes)
    rows = [r for r in from_gradebook(book, aid, whole=False) if r.student in students]
    refuse_non_finite(replace(row, overrides=_after(row, aid, changes)) for row in rows)


def _after(row: Standing, aid: str, changes: Sequence[Change]) -> tuple[Override, ...]:
    """A student's overrides once `changes` are made (a later change of a target wins)."""
    kept = {o.target: o for o in row.overrides}
    for change in (c for c in changes if c.student == row.student):
        if change.points is None:
            kept.pop(change.target, None)
        else:
            points = change.points
            kept[change.target] = Override(row.student, aid, change.target, points, "", "", 0.0)
    return tuple(kept.values())


@dataclass(frozen=True)
class Change:
    """One override to set (points) or clear (points None)."""

    student: str
    target: str
    points: float | None
    comment: str = ""
    where: str = ""  # the CSV file and line it was read from (`r.csv line 3`), if any


@contextmanager
def _located(change: Change) -> Iterator[None]:
    """A UsageError about `change` prefixed with the CSV line it came from."""
    try:
        yield
    except UsageError as exc:
        if not change.where:
            raise
        raise UsageError(f"{change.where}: {exc}") from None


def _as_spelled(book: Gradebook, changes: Sequence[Change], out: Path) -> list[Change]:
    """The changes with each student as the gradebook spells them; two that name one
    student's one target (`S001` and `s001`) are refused, as the same line twice is."""
    spelled: list[Change] = []
    seen: dict[tuple[str, str], str] = {}
    for change in changes:
        with _located(change):
            student = _student(book, change.student, out)
            key = (student, change.target)
            if key in seen and seen[key] != change.student:
                what = f"`{change.target}`" if change.target else "total"
                raise UsageError(
                    f"{seen[key]} and {change.student} are one student ({student}), whose "
                    f"{what} is given twice: give it once"
                )
        seen[key] = change.student
        spelled.append(replace(change, student=student))
    return spelled


def apply(
    out: Path,
    config: Config,
    changes: Sequence[Change],
    author: str,
    assignment: str | None,
    database: str | None = None,
    not_there: list[Change] | None = None,
    above: list[str] | None = None,
) -> list[Path]:
    """Check every change first (none is made if one is wrong), make them, and write the
    outputs again (in `out`; the gradebook is `database` when given). Returns the files
    written; `not_there` gets each clearing of an override there was none of, `above` a
    line for each override above its maximum."""
    book = open_book(out, database)
    try:
        aid = book.assignment(assignment)
        spec = config.assignment(aid)
        changes = _as_spelled(book, changes, out)
        for change in changes:
            with _located(change):
                _check_target(spec, change.target)
                _check_points(change.points)
        check_totals(book, aid, changes)
        for change in changes:
            if change.points is None:
                gone = clear_override(book, change.student, aid, change.target)
                if not gone and not_there is not None:
                    not_there.append(change)
            else:
                at = time.time()
                override = Override(
                    change.student, aid, change.target, change.points, change.comment, author, at
                )
                set_override(book, override)
                if above is not None and (
                    said := above_maximum(spec, change.target, change.points)
                ):
                    above.append(f"{change.student}: {said}")
        return refresh(book, out, spec, {c.student for c in changes}, database)
    finally:
        book.close()


def comment(
    out: Path,
    config: Config,
    student: str,
    text: str,
    author: str,
    aid: str | None,
    database: str | None = None,
) -> list[Path]:
    """Add a remark for a student and write the outputs again (the gradebook is `database`
    when given)."""
    if not text.strip():  # an empty remark on a student's page says nothing
        raise UsageError("the comment is empty; give the remark's text")
    book = open_book(out, database)
    try:
        name = book.assignment(aid)
        student = _student(book, student, out)
        add_comment(book, Comment(student, name, text, author, time.time()))
        return refresh(book, out, config.assignment(name), {student}, database)
    finally:
        book.close()


def refresh(
    book: Gradebook,
    out: Path,
    spec: AssignmentSpec,
    students: set[str],
    database: str | None = None,
) -> list[Path]:
    """grades.csv and report.html from the gradebook (`book`, which is `database` when
    given), and the feedback pages of `students`; none in a `grader serve` folder, whose
    pages read the gradebook as they are shown (files written there would go stale)."""
    if served(out):
        return []
    rows = from_gradebook(book, spec.id)
    clashing = twins(book.names())
    written = [
        write_grades(rows, [t.name for t in spec.targets], spec_total(spec), out / "grades.csv")
    ]
    for row in rows:
        if row.student in students and (row.report is not None or row.adjusted() is not None):
            written.append(page(out, row, clashing, spec))
    written.append(write_report(out, spec.id, database))
    return written


def spec_total(spec: AssignmentSpec) -> float:
    """The assignment's maximum points."""
    return sum(t.points for t in spec.targets)


def above_maximum(spec: AssignmentSpec, target: str, points: float) -> str:
    """ "" for points within the target's maximum (the total's, target ""), else one line
    saying by how much: kept (extra credit is the instructor's to give), but a typed 1e9 for
    2 is then seen before it reaches an LMS."""
    most = (
        spec_total(spec)
        if target == TOTAL
        else next((t.points for t in spec.targets if t.name == target), math.inf)
    )
    if points <= most + 1e-9:
        return ""
    return f"{target or 'the total'} set to {points:g}, above its maximum of {most:g}"


def page(
    out: Path,
    row: Standing,
    clashing: frozenset[str] = frozenset(),
    spec: AssignmentSpec | None = None,
) -> Path:
    """A student's feedback page again, with their own code when the notebook is still there
    (`clashing`: the class's names one only in case, escape.twins); for a student without a
    graded notebook, its problem and the instructor's points and words (`spec` needed)."""
    if row.report is None:
        assert spec is not None
        return write_feedback(out, row.student, row.stand_in(spec), None, row.adjusted(), clashing)
    submission = _submission(Path(row.report.submission))
    return write_feedback(out, row.student, row.report, submission, row.adjusted(), clashing)


def _submission(path: Path) -> Submission | None:
    """The graded notebook, read again; one graded from a .zip (named `archive.zip/member`)
    is read from the archive while it is still there."""
    try:
        if not path.exists():
            archive = next((p for p in path.parents if p.suffix == ".zip" and p.is_file()), None)
            if archive is not None:
                with zipfile.ZipFile(archive) as bundle:
                    named = path.relative_to(archive).as_posix()
                    info = next(m for m in bundle.infolist() if entry_name(m) == named)
                    if info.file_size > MAX_BYTES:
                        return None
                    return load_submission(path, bundle.read(info))
        return load_submission(path)
    except Exception:  # gone, or unreadable now: the page is written without the code
        return None


def read_changes(path: Path) -> list[Change]:
    """Overrides from a CSV with the columns student, target, points, comment (target empty:
    the total; points empty: clear the override). One line with the line number per error."""
    reader = csv_rows(path, UsageError)
    reader.columns(("student", "points"), "needs the columns student, points (target, comment)")
    changes = []
    seen: dict[tuple[str, str], int] = {}  # which line set each student's target
    for row in reader:
        where = f"{path} line {reader.line_num}"
        student = (row.get("student") or "").strip()
        points = (row.get("points") or "").strip()
        if not student:
            raise UsageError(f"{where}: the student is empty")
        try:
            value = float(points) if points else None
        except ValueError:
            raise UsageError(f"{where}: points {points!r} is not a number") from None
        if value is not None and not _importable(value):
            raise UsageError(f"{where}: points {points!r} is not a finite number ≥ 0")
        target = (row.get("target") or "").strip()
        if (student, target) in seen:  # two TAs' files merged: which one counts is a guess
            what = f"`{target}`" if target else "total"
            raise UsageError(
                f"{where}: {student}'s {what} is already on line {seen[student, target]}: "
                "give each student's function (or total) once"
            )
        seen[student, target] = reader.line_num
        comment = (row.get("comment") or "").strip()
        changes.append(Change(student, target, value, comment, where))
    return changes
