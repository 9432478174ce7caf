"""What the service shows of the semester beside the feedback: the deadline and the late
penalty of each upload (the assignment's `due:` and `late:`, the student's extension), the
instructor's overrides and comments (kept in the served class's gradebook, as `grader
override` and `grader comment` keep them), and the hidden cases only once released.

Before the release a student reads the page of their public cases only: the score and the
diagnosis those cases show, and a line saying the hidden cases are graded later. The
instructor always sees the whole page.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

from grader.batch import lateness
from grader.batch.adjust import Change, above_maximum, check_totals
from grader.batch.gradebook import Gradebook, locked_out
from grader.batch.lateness import (
    EXTENSIONS_FILE,
    Handed,
    late_of,
    load_extensions,
    matched_hours,
    save_late,
)
from grader.batch.records import (
    Comment,
    Override,
    add_comment,
    clear_override,
    comments,
    overrides,
    set_override,
)
from grader.batch.roster import ROSTER_FILE
from grader.batch.standing import Standing, one_standing
from grader.course.config import AssignmentSpec, Config
from grader.course.deadline import Late, LatePolicy
from grader.course.notebook import Submission
from grader.errors import GraderError
from grader.judge.score import status_of
from grader.render.feedback import Adjusted, feedback_page
from grader.render.html import render_template
from grader.report import Finding, Report, Status, TargetResult, messages_of
from grader.serve.store import View

T = TypeVar("T")

# Where an upload's time comes from, as its late note says ("…; time from <this>").
UPLOADED = "the moment grader serve received the upload"
HIDDEN_LATER = (
    "Your hidden cases are graded later: their feedback is shown once your instructor releases it."
)


def public_target(target: TargetResult) -> TargetResult:
    """A target as its public cases alone show it: their share of the points, their
    outcomes, and the diagnosis only when one of them failed (as the Gradescope export's
    visible test)."""
    public, total = target.public_cases, target.cases_total
    if public is None or public >= total or total == 0:
        return target
    share = target.max_score / total
    outcomes = target.case_outcomes[:public]
    passed = sum(o == "passed" for o in outcomes)
    ok = passed == public
    status = _public_status(target, outcomes)
    said = not ok
    # The per-case lines and the count of all cases would show the hidden cases' sizes and
    # expected values: only the diagnosis is kept, with a count of the public cases.
    kept = tuple(f for f in target.findings if f.kind not in ("case", "summary")) if said else ()
    if status != "timeout":  # a hidden case's run out of time: not said before the release
        kept = tuple(f for f in kept if not (f.kind == "callee" and _RAN_OUT in f.message))
    if said:
        counted = f"{public - passed} of {public} public case{'s' * (public > 1)} failed"
        kept = (Finding("summary", counted), *kept)
    # all or nothing: what the public cases alone would earn, whatever the hidden ones did
    # (the share of the points the target got would tell a hidden failure)
    score = (share * public if ok else 0.0) if target.all_or_nothing else target.score
    return replace(
        target,
        status=status,
        score=min(share * passed, score),
        max_score=share * public,
        cases_passed=passed,
        cases_total=public,
        case_outcomes=outcomes,
        messages=messages_of(kept),
        mistakes=target.mistakes if said else (),
        findings=kept,
    )


_RAN_OUT = "never finished"  # timeouts.py's words of a callee that ran out of time


def _public_status(target: TargetResult, outcomes: tuple[str, ...]) -> Status:
    """The status the public cases alone give (as score.target_status gives it from all):
    a hidden case that ran out of time or raised must not show through the word, where a
    student could probe a hidden input one upload at a time (r48 F1)."""
    if target.status == "missing" or not outcomes:
        return target.status
    return status_of(set(outcomes))


def public_report(report: Report) -> Report:
    """The report of the public cases only, with the line that says the rest comes later."""
    targets = tuple(public_target(t) for t in report.targets)
    if targets == report.targets:
        return report
    return replace(report, targets=targets, notes=(*report.notes, HIDDEN_LATER))


def describe_policy(policy: LatePolicy, extension_hours: float = 0.0) -> str:
    """An assignment's deadline and late policy in one line, as the student's page shows it:
    with a student's extension, their own due date and cut-off (as their uploads are charged)."""
    extra = timedelta(hours=extension_hours)
    said = [f"due {(policy.due + extra).isoformat(sep=' ', timespec='minutes')}"]
    if extension_hours:
        said[0] += f" (with your extension of {extension_hours:g} h)"
    if policy.grace_minutes:
        said.append(f"{policy.grace_minutes:g} min of grace")
    if policy.percent:
        said.append(f"then {policy.percent:g}% off per {policy.per} late, at most {policy.cap:g}%")
    if policy.cutoff is not None:
        said.append(f"0 after {(policy.cutoff + extra).isoformat(sep=' ', timespec='minutes')}")
    return "; ".join(said)


def kept_rule(keep: str) -> str:
    """Which of a student's uploads of an assignment counts, as their page says it."""
    return "your best upload counts" if keep == "best" else "your latest upload counts"


def now_rule(spec: AssignmentSpec, extension_hours: float, now: datetime) -> str:
    """What an upload of this assignment made `now` is charged, once that is more than
    nothing ("" before the due date and within its grace): said beside the form, before
    the student spends an attempt on it; under `keep: latest` it replaces what they had."""
    if spec.late is None:
        return ""
    late = late_of(spec.late, Handed(now, UPLOADED), extension_hours)
    if late.percent <= 0:
        return ""
    kept = spec.keep == "best"
    if late.percent >= 100:
        then = "your best upload still counts" if kept else "it replaces your grade"
        return f"the cut-off has passed: an upload now scores 0 ({then})"
    then = "your best upload still counts" if kept else "as your latest, it is the one that counts"
    return f"past the due date: an upload now loses {late.percent:g}% ({then})"


@dataclass(frozen=True)
class Extensions:
    """The course's extensions as read once for one upload: hours by student, and what the
    class page says while they cannot be read ("" when they can; the hours are then none)."""

    hours: Mapping[str, float]
    problem: str = ""


def read_extensions(course: Path) -> Extensions:
    """The course's extensions, read from the course folder now (at each upload, so a new
    one counts without a restart); an unreadable file is said, never raised."""
    try:
        return Extensions(load_extensions(course))
    except GraderError as exc:
        return Extensions(
            {},
            f"the extensions cannot be read ({exc}): uploads graded meanwhile count no "
            "extension; fix the file, then Regrade",
        )


def extension_files(course: Path) -> tuple[tuple[str, int, int], ...]:
    """What tells whether the extensions may have changed without reading them: the
    modification time and size of the roster and of `extensions.csv` (absent: -1)."""
    found = []
    for name in (ROSTER_FILE, EXTENSIONS_FILE):
        try:
            stat = (course / name).stat()
            found.append((name, stat.st_mtime_ns, stat.st_size))
        except OSError:
            found.append((name, -1, -1))
    return tuple(found)


def hours_now(course: Path) -> dict[str, float]:
    """The course's extensions in hours by student, for the service's watch on them; none
    while they cannot be read, as the uploads graded meanwhile count none."""
    try:
        return lateness.read_course_extensions(course).hours
    except GraderError:
        return {}


def upload_late(
    course: Path,
    spec: AssignmentSpec,
    student: str,
    received_at: float,
    extensions: Extensions | None = None,
) -> Late | None:
    """What handing in when the service received the upload costs (None: no `due:`), with
    the student's extension from `extensions` (read from the course folder when not given).
    An unreadable extensions.csv counts no extension: the class page says so."""
    if spec.late is None:
        return None
    extensions = extensions or read_extensions(course)
    extension = matched_hours(extensions.hours, [student]).get(student, 0.0)
    when = datetime.fromtimestamp(received_at, UTC)
    return late_of(spec.late, Handed(when, UPLOADED), extension)


def graded_view(
    course: Path,
    student: str,
    spec: AssignmentSpec,
    report: Report,
    submission: Submission | None,
    received_at: float,
    extensions: Extensions | None = None,
) -> tuple[str, View]:
    """The whole feedback page and what the service keeps beside it: the public cases'
    page and the lateness, both pages showing the deadline's penalty (`extensions`: as
    read for this upload, else read now)."""
    late = upload_late(course, spec, student, received_at, extensions)
    public = public_report(report)

    def adjusted(shown: Report) -> Adjusted | None:
        if late is None or late.minutes <= 0:
            return None
        return Adjusted(late.apply(shown.score), {}, (), late.note)

    page = feedback_page(student, report, submission, adjusted(report))
    public_page = feedback_page(student, public, submission, adjusted(public))
    percent, note = (late.percent, late.note) if late else (0.0, "")
    return page, View(spec.id, public_page, public.score, public.max_score, percent, note)


def record_late(
    book: Gradebook,
    course: Path,
    student: str,
    spec: AssignmentSpec,
    received_at: float,
    extensions: Extensions | None = None,
) -> None:
    """The upload's lateness in the gradebook too: `grader report` and the exports apply it
    (`extensions`: as read for this upload, else read now)."""
    late = upload_late(course, spec, student, received_at, extensions)
    if late is not None:
        when = datetime.fromtimestamp(received_at, UTC)
        save_late(book, student, spec.id, Handed(when, UPLOADED), late)


def instructor_notes(
    gradebook: Path | str, student: str, assignment: str, total: bool = True
) -> list[str]:
    """The overrides and comments on a student's assignment, one line each, from the served
    class's gradebook (`Store.gradebook`: OUT's SQLite file, or the PostgreSQL database).
    `total`: with the line of the total that counts (not before the hidden cases' release,
    where it would show what the hidden cases gave: r48 F2)."""

    def read(book: Gradebook) -> list[str]:
        mine = overrides(book, assignment).get(student, [])
        found = [o.describe() for o in mine]
        if found and total:  # the points below are the grader's: say what counts
            found.insert(0, _stands_at(one_standing(book, student, assignment, mine)))
        return found + [c.describe() for c in comments(book, assignment).get(student, [])]

    return _notes(gradebook, read)


def _notes(gradebook: Path | str, read: Callable[[Gradebook], list[str]]) -> list[str]:
    """What `read` finds in the served class's gradebook: nothing when it has none yet, and
    NOTES_BUSY when another program holds it locked (the page is shown without them)."""
    return _guarded(gradebook, read, [], [NOTES_BUSY])


def _guarded(gradebook: Path | str, read: Callable[[Gradebook], T], none: T, busy: T) -> T:
    """What `read` finds in the served class's gradebook; `none` when it has none yet, `busy`
    when another program holds it locked."""
    if isinstance(gradebook, Path) and not gradebook.is_file():
        return none
    try:
        book = Gradebook(gradebook)
        try:
            return read(book)
        finally:
            book.close()
    except Exception as exc:
        if not locked_out(exc):
            raise
        return busy


def overridden_totals(gradebook: Path | str, latest: Mapping[str, str]) -> dict[str, float]:
    """The total that counts, for each student with an override on the assignment of their
    latest upload (`latest`: student -> that assignment), as `grader report` counts it: the
    class page showed the autograded points beside an instructor's change."""

    def read(book: Gradebook) -> dict[str, float]:
        totals = {}
        for aid in set(latest.values()):
            for student, mine in overrides(book, aid).items():
                if latest.get(student) == aid and mine:
                    totals[student] = one_standing(book, student, aid, mine).total
        return totals

    return _guarded(gradebook, read, {}, {})


def _stands_at(row: Standing) -> str:
    """The line that puts an overridden total above a page of autograded points."""
    of = f" of {row.report.max_score:g}" if row.report is not None else ""
    return (
        f"Your grade for this assignment is now {row.total:g}{of} points, "
        "with your instructor's changes below; the points further down are the grader's own."
    )


NOTES_BUSY = "(your instructor's notes cannot be read just now: reload this page in a minute)"


def notes_html(lines: list[str]) -> str:
    """The block the student's feedback page shows the instructor's notes in."""
    return render_template("serve/notes.html.j2", notes=lines) if lines else ""


def adjust(
    gradebook: Path | str,
    student: str,
    assignment: str,
    target: str,
    points: float | None,
    text: str,
    by: str,
) -> None:
    """Set an override (points given; target "" is the total) or add a comment, in the
    served class's gradebook (`Store.gradebook`), where `grader report` and the exports read
    it."""
    book = Gradebook(gradebook)
    try:
        if points is None:
            add_comment(book, Comment(student, assignment, text, by, time.time()))
        else:
            # Finite points that add up to no finite total are refused (the form takes up to
            # nine digits; a caller of this function may pass any float), as
            # `grader override` refuses them: no export carries inf (UsageError).
            check_totals(book, assignment, [Change(student, target, points)])
            override = Override(student, assignment, target, points, text, by, time.time())
            set_override(book, override)
    finally:
        book.close()


def in_force(
    gradebook: Path | str, student: str, assignments: list[str], config: Config | None = None
) -> list[str]:
    """The overrides and comments in force for a student, one line each with its
    assignment, for the instructor's page of that student (what the form may clear); an
    override above its maximum says so (`config`: the course, where the maxima are)."""

    def read(book: Gradebook) -> list[str]:
        lines = []
        for aid in assignments:
            spec = config.assignments.get(aid) if config is not None else None
            for o in overrides(book, aid).get(student, []):
                above = above_maximum(spec, o.target, o.points) if spec is not None else ""
                lines.append(f"{aid}: {o.describe()}" + (f" (note: {above})" if above else ""))
            lines += [f"{aid}: {c.describe()}" for c in comments(book, aid).get(student, [])]
        return lines

    return _notes(gradebook, read)


def clear(gradebook: Path | str, student: str, assignment: str, target: str) -> bool:
    """Remove the override of `target` ("" the total): whether there was one."""
    book = Gradebook(gradebook)
    try:
        return clear_override(book, student, assignment, target)
    finally:
        book.close()
